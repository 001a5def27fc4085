/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One spelling for functions that must compile both as host C11 (gcc,
 * clang) and as CUDA C++ device code, so the packet-processing core is
 * written once and the CPU results can be checked against the GPU's.
 */
#ifndef GPURX_PORTABLE_H
#define GPURX_PORTABLE_H

#include <stdint.h>
#include <stddef.h>

#ifdef __CUDACC__
#define GPURX_FN __host__ __device__ __forceinline__
#define GPURX_RESTRICT __restrict__
#else
#define GPURX_FN static inline
#define GPURX_RESTRICT restrict
#endif

#if defined(__CUDA_ARCH__)
#define GPURX_ON_DEVICE 1
#else
#define GPURX_ON_DEVICE 0
#endif

#ifdef __cplusplus
#define GPURX_STATIC_ASSERT(c, m) static_assert(c, m)
#define GPURX_ZERO_INIT {}	/* C++ warns about {0} on structs */
#else
#define GPURX_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define GPURX_ZERO_INIT {0}
#endif

/* Network byte order loads; packets are byte arrays with no alignment. */
GPURX_FN uint16_t
gpurx_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

GPURX_FN uint32_t
gpurx_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
		((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* Network byte order stores, for the packet generators of the tests and
 * benchmarks. */
GPURX_FN void
gpurx_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

GPURX_FN void
gpurx_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Network byte order, 64 bits. */
GPURX_FN uint64_t
gpurx_be64(const uint8_t *p)
{
	return ((uint64_t)gpurx_be32(p) << 32) | gpurx_be32(p + 4);
}

GPURX_FN void
gpurx_put_be64(uint8_t *p, uint64_t v)
{
	gpurx_put_be32(p, (uint32_t)(v >> 32));
	gpurx_put_be32(p + 4, (uint32_t)v);
}

/* Big-endian field of 1 to 8 bytes. */
GPURX_FN uint64_t
gpurx_get_ben(const uint8_t *p, uint32_t n)
{
	uint64_t v = 0;

	for (uint32_t k = 0; k < n; k++)
		v = (v << 8) | p[k];
	return v;
}

GPURX_FN void
gpurx_put_ben(uint8_t *p, uint32_t n, uint64_t v)
{
	for (uint32_t k = n; k > 0; k--) {
		p[k - 1] = (uint8_t)v;
		v >>= 8;
	}
}

/*
 * Ranges laid end to end, range i starting at start[i] (ascending, start[0]
 * at or before off): the last of the first n ranges that starts at or
 * before off, i.e. the one holding off if any does. Binary search: the
 * threads of a block find their bytes' packets in shared memory so.
 */
GPURX_FN uint32_t
gpurx_range_find(const uint32_t *start, uint32_t n, uint32_t off)
{
	uint32_t lo = 0, hi = n;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (start[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#endif /* GPURX_PORTABLE_H */
