/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TEST_SUPPORT_RAND64_H
#define TEST_SUPPORT_RAND64_H

/*
 * Deterministic random numbers (xorshift64*) for the benchmarks: their
 * traffic mix (pktgen_generate()) draws from it, and so do their own
 * shuffles and fills, so one seed fixes a whole run. Not for the tests'
 * packet stream, which has its own generator (pktgen_rand()): its
 * sequences are what the tests' expectations were written against.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t
rand64_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* A seed never 0 (xorshift would stay at 0). */
static inline uint64_t
rand64_seed(uint64_t s)
{
	return s != 0 ? s : 0x9E3779B97F4A7C15ULL;
}

/* Fills buf with random bytes (so no benchmark ever reads all zeros). */
static inline void
rand64_fill(void *buf, size_t len, uint64_t *rng)
{
	unsigned char *p = buf;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t r = rand64_next(rng);

		memcpy(p + i, &r, 8);
	}
	if (i < len) {
		uint64_t r = rand64_next(rng);

		memcpy(p + i, &r, len - i);
	}
}

#endif /* TEST_SUPPORT_RAND64_H */
