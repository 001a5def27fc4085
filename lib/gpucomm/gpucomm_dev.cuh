/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device side of the GPU communication ring: the memory operations a
 * kernel uses on memory the CPU writes while it runs (gpudev comm lists
 * and flags in registered host memory, or in GPU memory the CPU maps),
 * the project's one set of them.
 *
 * Scopes: .sys where the other party is the CPU (or a NIC through the
 * CPU's ordering), .gpu between blocks of one kernel. A relaxed
 * system-scope load is the cheap way to poll: several may be in flight
 * at once, and a fence after the one that says "go" is the acquire
 * (a relaxed load followed by fence.acq_rel is an acquire pattern in the
 * PTX memory model); a release is cumulative, so one thread's release
 * after a block barrier publishes every thread's earlier writes.
 *
 * Host memory is read by the GPU one PCIe round trip (~1 us) per
 * request, and uncached loads of one host line by several warps are
 * served one after another (bench-sysmem-probe): load what you need of a
 * host line once per block, by one warp, in one request.
 */
#ifndef GPUCOMM_DEV_CUH
#define GPUCOMM_DEV_CUH

#include <stdint.h>

#include "gpucomm_layout.h"

/* GPU wall clock in nanoseconds (%globaltimer): comparable across SMs
 * and independent of the SM clock. */
static __device__ __forceinline__ uint64_t
gpucomm_gpu_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* A word the CPU writes, read at system scope with no ordering of what
 * follows: for polling (follow a hit with gpucomm_fence_acq_rel_sys). */
static __device__ __forceinline__ uint32_t
gpucomm_ld_relaxed_sys_u32(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/* A word the CPU reads, stored with no ordering of what came before: a
 * flag that carries no other data. */
static __device__ __forceinline__ void
gpucomm_st_relaxed_sys_u32(uint32_t *p, uint32_t v)
{
	asm volatile("st.relaxed.sys.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

/* Acquire at system scope: what the CPU wrote before it released this
 * word is visible to this thread's later loads. */
static __device__ __forceinline__ uint32_t
gpucomm_ld_acquire_sys_u32(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/* Release at system scope: this thread's earlier writes, and those it
 * observed (the block's, after a barrier), are visible to the CPU before
 * it can see v. */
static __device__ __forceinline__ void
gpucomm_st_release_sys_u32(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.sys.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

/* fence.acq_rel.sys: acquire for the relaxed loads before it, release
 * for the stores after it (each a pattern of the PTX memory model). */
static __device__ __forceinline__ void
gpucomm_fence_acq_rel_sys(void)
{
	asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/* The same between blocks of the GPU (device scope): much cheaper, and
 * enough where both sides run on this GPU. */
static __device__ __forceinline__ void
gpucomm_fence_acq_rel_gpu(void)
{
	asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

static __device__ __forceinline__ unsigned long long
gpucomm_ld_relaxed_gpu_u64(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

/* Acquire at device scope: pairs with another block's release. */
static __device__ __forceinline__ unsigned long long
gpucomm_ld_acquire_gpu_u64(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void
gpucomm_st_relaxed_gpu_u64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.relaxed.gpu.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/* Release at device scope: this thread's earlier writes (and what it
 * observed, cumulatively) before v, for a block that acquires v. */
static __device__ __forceinline__ void
gpucomm_st_release_gpu_u64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/*
 * A packet descriptor (the 16 bytes of struct gpucomm_pkt: addr, then
 * size) in one volatile load: one request to its host line, not two.
 * Volatile: the CPU rewrites descriptors for every lap of the ring, and
 * no cached copy of an earlier lap may answer.
 */
static __device__ __forceinline__ void
gpucomm_ld_pkt(const struct gpucomm_pkt *desc, unsigned long long *addr,
		unsigned long long *size)
{
	asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
		: "=l"(*addr), "=l"(*size) : "l"(desc) : "memory");
}

/*
 * An item's packet count, written by the CPU before READY. A load from
 * host memory: issue it from a warp that issues no other host load at
 * the same time (in one warp the second load waits for the first, a
 * round trip each: 2.5 us instead of 1.6 us for count + descriptors in
 * bench-handoff), and before the other loads of the item, so that they
 * all travel together.
 */
static __device__ __forceinline__ uint32_t
gpucomm_ld_num_pkts(const struct gpucomm_item *item)
{
	return *(const volatile uint32_t *)&item->num_pkts;
}

#endif /* GPUCOMM_DEV_CUH */
