/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The RX fill's kernels. gpudma_scatter (fill=launch): one burst's copies
 * as one launch, a warp a descriptor. gpudma_fill_persistent
 * (fill=persistent): one block a queue for the queue's life, serving the
 * bursts the CPU posts into its ring (gpudma_fill.h) with no launch and
 * no CUDA call a burst. Both copy with gpudma_fill.h's chunk routines,
 * reading the port's pinned frame store (or staging ring) over PCIe.
 */

#include <stdint.h>

#include "gpudma_fill.h"

extern "C" __global__ void
gpudma_scatter(const struct gpudma_scatter_desc *d, unsigned int n)
{
	const unsigned int lane = threadIdx.x & 31u;
	const unsigned int nwarps = gridDim.x * blockDim.x / 32u;
	unsigned int i;

	for (i = (blockIdx.x * blockDim.x + threadIdx.x) / 32u; i < n;
			i += nwarps)
		gpudma_copy_desc(&d[i], lane, 32u);
}

/* Descriptors per thread in the tile's prefix sum. */
#define PER_THREAD (GPUDMA_FILL_TILE / GPUDMA_FILL_THREADS)
/* 16-byte words of a whole tile of descriptors. */
#define TILE_WORDS (GPUDMA_FILL_TILE * sizeof(struct gpudma_scatter_desc) / 16)

/*
 * One tile of a fill: its descriptors read once into shared memory (one
 * PCIe read a 16-byte word, every thread's in flight together: a host
 * line read by several warps is served once a warp, one round trip after
 * another), then its chunks numbered across the whole tile, thread t
 * taking chunks t, t + 256, ... so that a warp reads consecutive bytes of
 * consecutive frames (the frame store holds a queue's frames one after
 * another), GPUDMA_FILL_UNROLL of them loaded before any is stored.
 */
static __device__ void
fill_tile(const struct gpudma_scatter_desc *descs, uint32_t nt,
		struct gpudma_scatter_desc *d, uint32_t *pre, uint32_t *sums)
{
	const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid / 32u;
	const uint32_t nw = (nt * (uint32_t)sizeof(*d) + 15u) / 16u;
	uint32_t i, f0, c[PER_THREAD], sum = 0, x;
	uint4 w[TILE_WORDS / GPUDMA_FILL_THREADS];

	/* The descriptor arrays are page-aligned and page-rounded: a last
	 * word half past n is still inside them. */
#pragma unroll
	for (i = 0; i < TILE_WORDS / GPUDMA_FILL_THREADS; i++)
		if (tid + i * GPUDMA_FILL_THREADS < nw)
			w[i] = ((const uint4 *)descs)[tid + i * GPUDMA_FILL_THREADS];
#pragma unroll
	for (i = 0; i < TILE_WORDS / GPUDMA_FILL_THREADS; i++)
		if (tid + i * GPUDMA_FILL_THREADS < nw)
			((uint4 *)d)[tid + i * GPUDMA_FILL_THREADS] = w[i];
	__syncthreads();

	/* Exclusive prefix sum of the descriptors' chunk counts: a thread
	 * PER_THREAD consecutive descriptors, warps by shuffles, the block
	 * through sums[]. */
#pragma unroll
	for (i = 0; i < PER_THREAD; i++) {
		uint32_t j = tid * PER_THREAD + i;

		c[i] = j < nt ? gpudma_desc_chunks(d[j].len) : 0;
		sum += c[i];
	}
	x = sum;
	for (i = 1; i < 32; i *= 2) {
		uint32_t y = __shfl_up_sync(0xffffffffu, x, i);

		if (lane >= i)
			x += y;
	}
	if (lane == 31)
		sums[warp] = x;
	__syncthreads();
	if (tid == 0) {
		uint32_t acc = 0;

		for (i = 0; i < GPUDMA_FILL_THREADS / 32; i++) {
			uint32_t s = sums[i];

			sums[i] = acc;
			acc += s;
		}
		sums[GPUDMA_FILL_THREADS / 32] = acc;
	}
	__syncthreads();
	x += sums[warp] - sum;
#pragma unroll
	for (i = 0; i < PER_THREAD; i++) {
		pre[tid * PER_THREAD + i] = x;
		x += c[i];
	}
	__syncthreads();

	const uint32_t total = sums[GPUDMA_FILL_THREADS / 32];

	for (f0 = 0; f0 < total; f0 += GPUDMA_FILL_UNROLL * GPUDMA_FILL_THREADS) {
		gpudma_v16 v[GPUDMA_FILL_UNROLL];
		uint32_t di[GPUDMA_FILL_UNROLL];

#pragma unroll
		for (i = 0; i < GPUDMA_FILL_UNROLL; i++) {
			uint32_t f = f0 + i * GPUDMA_FILL_THREADS + tid;

			if (f < total) {
				di[i] = gpurx_range_find(pre, nt, f);
				gpudma_chunk_load((const uint8_t *)d[di[i]].src,
					(uint8_t *)d[di[i]].dst, d[di[i]].len,
					f - pre[di[i]], &v[i]);
			}
		}
#pragma unroll
		for (i = 0; i < GPUDMA_FILL_UNROLL; i++) {
			uint32_t f = f0 + i * GPUDMA_FILL_THREADS + tid;

			if (f < total)
				gpudma_chunk_store((const uint8_t *)d[di[i]].src,
					(uint8_t *)d[di[i]].dst, d[di[i]].len,
					f - pre[di[i]], &v[i]);
		}
	}
	/* The next tile overwrites d and pre. */
	__syncthreads();
}

/*
 * The persistent fill: fills seq, seq + 1, ... of the ring r, in order,
 * until QUIT, or until it parks (idle for idle_ns, or running for
 * GPUDMA_FILL_LIFE_NS: gpudma_fill.h says why). Thread 0 polls READY (one
 * PCIe read at a time: several warps polling one host line would be served
 * one after another), the barrier after it hands the slot to the block,
 * the barrier at the end of the fill orders every thread's writes before
 * thread 0's release of DONE (gpudma_fill_finish). One block a queue:
 * launch bounds of one block an SM give it the registers to keep its loads
 * in flight without spilling.
 */
extern "C" __global__ void __launch_bounds__(GPUDMA_FILL_THREADS, 1)
gpudma_fill_persistent(struct gpudma_fill_ring *r, uint32_t seq,
		uint64_t idle_ns)
{
	/* Filled and read as 16-byte words (fill_tile). */
	__shared__ __align__(16) struct gpudma_scatter_desc d[GPUDMA_FILL_TILE];
	__shared__ uint32_t pre[GPUDMA_FILL_TILE];
	__shared__ uint32_t sums[GPUDMA_FILL_THREADS / 32 + 1];
	__shared__ uint64_t slot_descs[GPUDMA_FILL_SLOTS];
	__shared__ uint32_t n_ready;
	const uint64_t deadline = gpudma_fill_now_ns() + GPUDMA_FILL_LIFE_NS;
	uint32_t n, base;

	/* Written before the launch, never again. */
	if (threadIdx.x < GPUDMA_FILL_SLOTS)
		slot_descs[threadIdx.x] = r->descs[threadIdx.x];
	for (;; seq++) {
		if (threadIdx.x == 0)
			n_ready = gpudma_fill_wait(r, seq, idle_ns, deadline);
		__syncthreads();
		n = n_ready;
		if (n == GPUDMA_FILL_QUIT || n == GPUDMA_FILL_PARK) {
			/* After the last fill's DONE (same thread). */
			if (n == GPUDMA_FILL_PARK && threadIdx.x == 0)
				gpudma_fill_park(r);
			break;
		}
		for (base = 0; base < n; base += GPUDMA_FILL_TILE)
			fill_tile((const struct gpudma_scatter_desc *)
				slot_descs[seq % GPUDMA_FILL_SLOTS] + base,
				min(n - base, GPUDMA_FILL_TILE), d, pre, sums);
		/* No tile, no barrier: one before n_ready is written again. */
		if (n == 0)
			__syncthreads();
		/* fill_tile's last barrier: every thread's writes precede
		 * this, and thread 0 read n_ready before anyone rewrites it. */
		if (threadIdx.x == 0)
			gpudma_fill_finish(r, seq);
	}
}
