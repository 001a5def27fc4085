/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The few atomic operations the flow table needs, as CUDA atomics on the
 * device and GCC __atomic builtins on the host, so the host build of the
 * same table is thread-safe too and can be stress-tested with pthreads.
 */
#ifndef GPURX_ATOMIC_H
#define GPURX_ATOMIC_H

#include "gpurx_portable.h"

/* Returns the value seen before the operation, like atomicCAS(). */
GPURX_FN uint32_t
gpurx_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
#if GPURX_ON_DEVICE
	return atomicCAS((unsigned int *)p, expected, desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, 0,
		__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return expected;
#endif
}

GPURX_FN uint32_t
gpurx_atomic_load_acquire_u32(const uint32_t *p)
{
#if GPURX_ON_DEVICE
	/* volatile bypasses the non-coherent L1; the fence orders what follows. */
	uint32_t v = *(const volatile uint32_t *)p;

	__threadfence();
	return v;
#else
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

GPURX_FN void
gpurx_atomic_store_release_u32(uint32_t *p, uint32_t v)
{
#if GPURX_ON_DEVICE
	__threadfence();
	atomicExch((unsigned int *)p, v);
#else
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

GPURX_FN void
gpurx_atomic_add_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

GPURX_FN void
gpurx_atomic_min_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	atomicMin((unsigned long long *)p, (unsigned long long)v);
#else
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#endif
}

GPURX_FN void
gpurx_atomic_max_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	atomicMax((unsigned long long *)p, (unsigned long long)v);
#else
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#endif
}

/* Give the slot owner time to publish without hammering the cache line. */
GPURX_FN void
gpurx_cpu_relax(void)
{
#if GPURX_ON_DEVICE
#if __CUDA_ARCH__ >= 700
	__nanosleep(64);
#endif
#elif defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#endif /* GPURX_ATOMIC_H */
