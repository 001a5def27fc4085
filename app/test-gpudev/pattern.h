/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_PATTERN_H
#define TG_PATTERN_H

/*
 * Pseudo-random byte pattern shared by the host code and the kernels.
 * Every byte depends on (seed, index), so a buffer that was left
 * untouched, zeroed, shifted or filled by another user never matches.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TG_HOST_DEVICE __host__ __device__
#else
#define TG_HOST_DEVICE
#endif

static inline TG_HOST_DEVICE uint64_t
tg_pattern_word(uint64_t seed, uint64_t word_idx)
{
	/* splitmix64 finaliser: cheap, and neighbouring words look unrelated */
	uint64_t z = seed + (word_idx + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Byte i is byte (i % 8) of word (i / 8), little-endian. */
static inline TG_HOST_DEVICE uint8_t
tg_pattern_byte(uint64_t seed, uint64_t idx)
{
	return (uint8_t)(tg_pattern_word(seed, idx >> 3) >> ((idx & 7) * 8));
}

#ifndef __CUDACC__
/* Host side helpers, in pattern.c. */
void tg_pattern_fill(void *buf, size_t len, uint64_t seed);
/* Number of wrong bytes; *first gets the index of the first one. */
size_t tg_pattern_check(const void *buf, size_t len, uint64_t seed,
		size_t *first);
/* Next value of a per-caller xorshift generator (state must be non-zero). */
uint64_t tg_rand(uint64_t *state);
#endif

#endif /* TG_PATTERN_H */
