/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The few atomic operations the flow table needs, as CUDA atomics on the
 * device and GCC __atomic builtins on the host, so the host build of the
 * same table is thread-safe too and can be stress-tested with pthreads.
 */
#ifndef GPURX_ATOMIC_H
#define GPURX_ATOMIC_H

#include "gpurx_portable.h"

#ifdef __CUDACC__
#include <cuda/atomic>
#endif

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

/*
 * Explicitly ordered atomics for the flow table's slot protocol
 * (flow_table.h). On the device they act at device scope (.gpu): the
 * table lives in GPU memory and only the GPU touches it while kernels
 * run; the CPU reads it after they ended, through a copy ordered by the
 * stream. On the host they are C11 atomics with the same orders.
 */
#if GPURX_ON_DEVICE
#define GPURX_DEV_REF(T, p) \
	cuda::atomic_ref<T, cuda::thread_scope_device>(*(p))
#endif

/* The memory order of an operation below (constants: the calls inline
 * to the one instruction they name). */
#define GPURX_RELAXED 0
#define GPURX_ACQUIRE 1
#define GPURX_RELEASE 2
#define GPURX_ACQ_REL 3

#if GPURX_ON_DEVICE
static __device__ __forceinline__ cuda::memory_order
gpurx_ord(int o)
{
	return o == GPURX_ACQUIRE ? cuda::memory_order_acquire :
		o == GPURX_RELEASE ? cuda::memory_order_release :
		o == GPURX_ACQ_REL ? cuda::memory_order_acq_rel :
		cuda::memory_order_relaxed;
}
#else
static inline int
gpurx_ord(int o)
{
	return o == GPURX_ACQUIRE ? __ATOMIC_ACQUIRE :
		o == GPURX_RELEASE ? __ATOMIC_RELEASE :
		o == GPURX_ACQ_REL ? __ATOMIC_ACQ_REL : __ATOMIC_RELAXED;
}
#endif

/* A word other threads change with atomics; relaxed: no ordering, and on
 * the device read from L2 (volatile), never a stale L1 line. */
GPURX_FN uint64_t
gpurx_atomic_load_u64(const uint64_t *p, int ord)
{
#if GPURX_ON_DEVICE
	if (ord == GPURX_RELAXED)
		return *(const volatile uint64_t *)p;
	return GPURX_DEV_REF(uint64_t, (uint64_t *)p).load(gpurx_ord(ord));
#else
	return __atomic_load_n(p, gpurx_ord(ord));
#endif
}

/*
 * Two words other threads may be writing, p 16-byte aligned, the first
 * with ord (GPURX_RELAXED or GPURX_ACQUIRE: what follows is ordered after
 * it), the second beside it, relaxed, not ordered with the first: not an
 * atomic read of both. On the device one 16-byte request (from L2, never
 * a stale L1 line); on the host two loads.
 */
GPURX_FN void
gpurx_atomic_load_x2_u64(const uint64_t *p, uint64_t *a, uint64_t *b, int ord)
{
#if GPURX_ON_DEVICE
	unsigned long long x, y;

	if (ord == GPURX_ACQUIRE)
		asm volatile("ld.acquire.gpu.global.v2.u64 {%0, %1}, [%2];"
			: "=l"(x), "=l"(y) : "l"(p) : "memory");
	else
		asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
			: "=l"(x), "=l"(y) : "l"(p) : "memory");
	*a = x;
	*b = y;
#else
	*b = __atomic_load_n(p + 1, __ATOMIC_RELAXED);
	*a = __atomic_load_n(p, gpurx_ord(ord));
#endif
}

GPURX_FN uint16_t
gpurx_atomic_load_relaxed_u16(const uint16_t *p)
{
#if GPURX_ON_DEVICE
	return *(const volatile uint16_t *)p;
#else
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

GPURX_FN void
gpurx_atomic_store_relaxed_u16(uint16_t *p, uint16_t v)
{
#if GPURX_ON_DEVICE
	*(volatile uint16_t *)p = v;
#else
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/* Returns the value before the addition (v may be a negative delta in
 * two's complement). */
GPURX_FN uint64_t
gpurx_atomic_fetch_add_ord_u64(uint64_t *p, uint64_t v, int ord)
{
#if GPURX_ON_DEVICE
	return GPURX_DEV_REF(uint64_t, p).fetch_add(v, gpurx_ord(ord));
#else
	return __atomic_fetch_add(p, v, gpurx_ord(ord));
#endif
}

/* Compare-and-swap, ord on success (relaxed on failure); returns the
 * value seen, like atomicCAS(): expected when it swapped. */
GPURX_FN uint64_t
gpurx_atomic_cas_ord_u64(uint64_t *p, uint64_t expected, uint64_t desired,
		int ord)
{
#if GPURX_ON_DEVICE
	GPURX_DEV_REF(uint64_t, p).compare_exchange_strong(expected, desired,
		gpurx_ord(ord), cuda::memory_order_relaxed);
#else
	__atomic_compare_exchange_n(p, &expected, desired, 0, gpurx_ord(ord),
		__ATOMIC_RELAXED);
#endif
	return expected;
}

GPURX_FN void
gpurx_atomic_or_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	atomicOr((unsigned long long *)p, (unsigned long long)v);
#else
	__atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

/* A 32-bit word other threads change with atomics, relaxed (on the
 * device from L2, never a stale L1 line). */
GPURX_FN uint32_t
gpurx_atomic_load_relaxed_u32(const uint32_t *p)
{
#if GPURX_ON_DEVICE
	return *(const volatile uint32_t *)p;
#else
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/* Compare-and-swap, relaxed; returns the value seen, like atomicCAS():
 * expected when it swapped. */
GPURX_FN uint32_t
gpurx_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
#if GPURX_ON_DEVICE
	return atomicCAS((unsigned int *)p, expected, desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED,
		__ATOMIC_RELAXED);
	return expected;
#endif
}

/* A word others read with atomics; relaxed: no ordering (on the device
 * a volatile store: performed in L2, never held in L1). */
GPURX_FN void
gpurx_atomic_store_relaxed_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	*(volatile uint64_t *)p = v;
#else
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/* A hint, no ordering: bring the line at p towards this thread (on the
 * device into L2) while it does something else. */
GPURX_FN void
gpurx_prefetch(const void *p)
{
#if GPURX_ON_DEVICE
	asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
#else
	__builtin_prefetch(p);
#endif
}

/*
 * A 16-bit lock word: 0 free, 1 held. Acquire on taking, release on
 * giving. On the device libcu++ takes it with a 32-bit CAS of the word
 * around it, which succeeds only with the neighbouring 16 bits as they
 * were: a neighbour written meanwhile (the flow table's reach, written
 * by the lock's holder) is never overwritten.
 */
GPURX_FN int
gpurx_atomic_trylock_u16(uint16_t *p)
{
	uint16_t expected = 0;

#if GPURX_ON_DEVICE
	return GPURX_DEV_REF(uint16_t, p).compare_exchange_strong(expected,
		(uint16_t)1, cuda::memory_order_acquire,
		cuda::memory_order_relaxed);
#else
	return __atomic_compare_exchange_n(p, &expected, (uint16_t)1, 0,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
#endif
}

GPURX_FN void
gpurx_atomic_unlock_u16(uint16_t *p)
{
#if GPURX_ON_DEVICE
	GPURX_DEV_REF(uint16_t, p).store((uint16_t)0, cuda::memory_order_release);
#else
	__atomic_store_n(p, (uint16_t)0, __ATOMIC_RELEASE);
#endif
}

/*
 * Words shared between the GPU and the CPU in host memory (the flow
 * export ring): system scope on the device, so the CPU sees the stores
 * before it in order, and the GPU sees what the CPU stored before.
 */
GPURX_FN uint64_t
gpurx_atomic_load_acquire_sys_u64(const uint64_t *p)
{
#if GPURX_ON_DEVICE
	return cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(
		*(uint64_t *)p).load(cuda::memory_order_acquire);
#else
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

GPURX_FN void
gpurx_atomic_store_release_sys_u64(uint64_t *p, uint64_t v)
{
#if GPURX_ON_DEVICE
	cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*p).store(v,
		cuda::memory_order_release);
#else
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
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
