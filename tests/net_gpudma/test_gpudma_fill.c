/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * net_gpudma's copy routine (gpudma_fill.h), the one source the kernels
 * and the fake CUDA's stand-in run, on the CPU: every length from 0 to
 * 200 bytes and 4096 + 0..17 at every source and destination offset of a
 * 16-byte line, copied chunk by chunk, loads of a run before its stores
 * as the persistent kernel does and in order as the launched one does,
 * must equal memcpy and write nothing outside the destination.
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gpudma_fill.h"
#include "check.h"

#define ROOM 8192u
#define GUARD 64u

static uint8_t src[ROOM + 2 * GUARD] __attribute__((aligned(64)));
static uint8_t dst[ROOM + 2 * GUARD] __attribute__((aligned(64)));

/* The chunks of d, all loaded first then all stored (the persistent
 * kernel's order, a run at a time), or chunk by chunk. */
static void
copy(const struct gpudma_scatter_desc *d, bool batched)
{
	static gpudma_v16 held[ROOM / GPUDMA_CHUNK + 1];
	const uint8_t *s = (const uint8_t *)(uintptr_t)d->src;
	uint8_t *t = (uint8_t *)(uintptr_t)d->dst;
	uint32_t k, n = gpudma_desc_chunks(d->len);

	if (!batched) {
		gpudma_copy_desc(d, 0, 1);
		return;
	}
	for (k = 0; k < n; k++)
		gpudma_chunk_load(s, t, d->len, k, &held[k]);
	for (k = 0; k < n; k++)
		gpudma_chunk_store(s, t, d->len, k, &held[k]);
}

static void
copy_exact(void)
{
	unsigned int so, to, len, i, bad = 0, cases = 0;
	int batched;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 37u + 11u);
	for (batched = 0; batched < 2; batched++)
	for (len = 0; len < 4096 + 18; len = len == 200 ? 4096 : len + 1)
	for (so = 0; so < 16; so++)
	for (to = 0; to < 16; to++) {
		struct gpudma_scatter_desc d = {
			.dst = (uintptr_t)(dst + GUARD + to),
			.src = (uintptr_t)(src + GUARD + so),
			.len = len,
		};

		const unsigned int span = 2 * GUARD + 16 + len;

		memset(dst, 0xa5, span);
		copy(&d, batched != 0);
		cases++;
		for (i = 0; i < span; i++) {
			uint8_t want = i >= GUARD + to && i < GUARD + to + len ?
				src[GUARD + so + (i - GUARD - to)] : 0xa5;

			if (dst[i] != want) {
				if (bad++ < 5)
					printf("len %u src+%u dst+%u %s: byte %u is %#x, not %#x\n",
						len, so, to, batched ? "batched" : "in order",
						i, dst[i], want);
				break;
			}
		}
	}
	CHECK(bad == 0, "%u of %u copies wrong", bad, cases);
}

int
main(void)
{
	CHECK_CASE(copy_exact);
	return check_finish("gpudma_fill");
}
