/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the generator's replay path (pcap=FILE and
 * pcap=FILE,all): a capture file of arbitrary frames (lengths, bytes,
 * truncated records) with stamps and variables or not. Any file is
 * refused with a message and adds nothing, or is accepted and then builds,
 * packet after packet, frames of the file's lengths in its order, inside
 * the data room; without variables or stamps packet n and packet n + N
 * (N frames) are the same bytes. ASan and UBSan watch the reader, the
 * per-frame program compiles and the CPU build (the reference the GPU
 * build is compared against).
 *
 * Input: byte 0 picks the options (bit 0: all; bits 1-3: a suffix below;
 * bit 4: each record claims one byte more than it holds); then frames,
 * each a length byte (under 240: that many bytes; 240 and up: 1400 plus
 * 50 a step, the last two over the data room) and that many bytes, zeros
 * where the input ends.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_add.h"

#define MAX_FRAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const suffix[8] = {
	"",
	",stamp=on",
	",stamp=off",
	",var=ipv4.src:inc:10.0.0.1-10.0.0.9",
	",var=udp.sport:random:1-100,stamp=on",
	",var=ipv6.dst:random:0-0xffff",
	",tuple=ipv4.dst:udp.dport:10.9.0.1-10.9.0.3:80-82",
	",var=tcp.sport:dec:1000-2000:step=7:burst",
};

static void
put32(FILE *f, uint32_t v)
{
	fwrite(&v, sizeof(v), 1, f);
}

/* The frames as a pcap file in memory, named by /proc/self/fd: its
 * descriptor, or -1. lens[] gets each frame's length, *n their count. */
static int
write_pcap(const uint8_t *data, size_t size, int claim_more, uint32_t *lens,
		unsigned int *n)
{
	int fd = memfd_create("fuzz-replay", 0);
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(dup(fd), "w");
	if (f == NULL) {
		close(fd);
		return -1;
	}
	put32(f, 0xa1b2c3d4);
	put32(f, 2 | 4u << 16);	/* version 2.4 */
	put32(f, 0);
	put32(f, 0);
	put32(f, 65535);	/* snaplen */
	put32(f, 1);		/* LINKTYPE_ETHERNET */
	*n = 0;
	while (size >= 1 && *n < MAX_FRAMES) {
		/* Short frames byte by byte; 240 and up long ones, the last
		 * two over the data room. */
		uint32_t len = data[0] < 240 ? data[0] :
			1400 + (uint32_t)(data[0] - 240) * 50;
		uint32_t have = len < size - 1 ? len : (uint32_t)(size - 1);
		static const uint8_t zero[ROOM + 128];

		data++;
		size--;
		put32(f, *n);	/* ts seconds */
		put32(f, 0);
		put32(f, len);
		put32(f, len + (claim_more != 0));
		/* What the input does not hold is zeros: a short input still
		 * makes long frames. */
		fwrite(data, 1, have, f);
		fwrite(zero, 1, len - have, f);
		lens[(*n)++] = len;
		data += have;
		size -= have;
	}
	if (fclose(f) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[ROOM], first[MAX_FRAMES][ROOM];
	uint32_t lens[MAX_FRAMES];
	char spec[256];
	unsigned int n_frames;
	struct gpugen *g;
	int fd, rc, all, plain;

	if (size < 1)
		return 0;
	all = data[0] & 1;
	plain = (data[0] >> 1 & 7) == 0 || (data[0] >> 1 & 7) == 2;
	fd = write_pcap(data + 1, size - 1, data[0] >> 4 & 1, lens, &n_frames);
	if (fd < 0)
		FAIL();
	snprintf(spec, sizeof(spec), "pcap=/proc/self/fd/%d%s%s", fd,
		all ? ",all" : "", suffix[data[0] >> 1 & 7]);
	g = fuzz_add(spec, &rc);
	if (rc >= 0) {
		/* One stream either way: the first frame, or the replay. */
		const unsigned int k = all ? n_frames : 1;

		if (rc != 1 || k == 0)
			FAIL();
		for (uint64_t p = 0; p < 2 * (uint64_t)k + 3; p++) {
			uint32_t want = gpugen_len(g, p);
			uint32_t len = gpugen_build_cpu(g, p, p, buf, ROOM, NULL,
				NULL);
			uint32_t i = (uint32_t)(p % k);

			if (len != want || len > ROOM)
				FAIL();
			/* Frames under 60 bytes are padded to the minimum. */
			if (len != (lens[i] < 60 ? 60 : lens[i]) && len != lens[i])
				FAIL();
			if (p < k)
				memcpy(first[i], buf, len);
			else if (plain && memcmp(first[i], buf, len) != 0)
				FAIL();
		}
	}
	gpugen_free(g);
	close(fd);
	return 0;
}
