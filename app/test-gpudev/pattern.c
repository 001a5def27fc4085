/* SPDX-License-Identifier: BSD-3-Clause */

#include <string.h>

#include "pattern.h"

void
tg_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	size_t off;

	/* memcpy keeps this valid for unaligned and write-combined buffers */
	for (off = 0; off < len; off += 8) {
		uint64_t w = tg_pattern_word(seed, off >> 3);
		size_t n = len - off < 8 ? len - off : 8;

		memcpy(p + off, &w, n);
	}
}

size_t
tg_pattern_check(const void *buf, size_t len, uint64_t seed, size_t *first)
{
	const uint8_t *p = buf;
	size_t off, k, bad = 0;

	*first = len;
	for (off = 0; off < len; off += 8) {
		uint64_t w = tg_pattern_word(seed, off >> 3);
		size_t n = len - off < 8 ? len - off : 8;

		if (memcmp(p + off, &w, n) == 0)
			continue;
		for (k = 0; k < n; k++) {
			if (p[off + k] != (uint8_t)(w >> (8 * k))) {
				if (bad == 0)
					*first = off + k;
				bad++;
			}
		}
	}
	return bad;
}

uint64_t
tg_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}
