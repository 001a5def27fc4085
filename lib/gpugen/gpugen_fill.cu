/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's persistent fill: the ring library's kernel
 * (gpucomm_persistent.cuh) with a body that builds an item's packets into
 * the data buffers of the mbufs its TX lcore posted. A worker block takes
 * an item, loads its count, buffer addresses, first packet number and
 * stamp times (one round trip), and builds: staged in its threads' shared
 * memory slots when frames fit them (GPUGEN_FILL_SMEM_SLOT says why), else
 * in place when the buffers are GPU memory, or staged through scratch
 * slots in GPU memory when they are host memory; staged frames are copied
 * out by all the block's warps, a warp a frame (gpugen_dev.cuh says why).
 */
#include <stddef.h>

#include <cuda_runtime.h>

#include "gpucomm_persistent.cuh"
#include "gpugen_core.h"
#include "gpugen_cuda.h"
#include "gpugen_dev.cuh"

static_assert(sizeof(struct gpugen_fill_side) == 3 * sizeof(uint64_t) &&
	offsetof(struct gpugen_fill_side, tx_ns) == 8 &&
	offsetof(struct gpugen_fill_side, tx_gap_ns) == 16,
	"the side words load as three 64-bit words");
static_assert(GPUGEN_FILL_THREADS % GPUGEN_WARP == 0 &&
	GPUGEN_FILL_THREADS >= 64, "whole warps, and one to load the count");

/* Descriptors a worker loads with an item's count at least: bursts
 * that vary a little below this (a paced burst sent in parts) need no
 * second round trip. */
#define GPUGEN_FILL_PRE_MIN 64u

struct gpugen_fill_body {
	static constexpr unsigned int threads = GPUGEN_FILL_THREADS;
	/* Launched with kp.lap_tags (conf lap_tags: rings with side
	 * records), the workers load a burst's count, first descriptors and
	 * its three side words while they poll for READY
	 * (gpucomm_persistent.cuh); gpucomm_load_item_side takes them. */
	static constexpr bool prefetch = true;
	static constexpr uint32_t side_n = 3;
	struct gpugen_fill_kargs a;
	uint32_t n_items;

	struct worker : gpucomm_worker_base<gpugen_fill_body> {
		/* The block's staging slots (shared memory or the
		 * scratch), thread k's at k * slot bytes, or NULL: built
		 * in place. */
		uint8_t *stage;
		/* The stream table: its copy in shared memory when it
		 * fits (GPUGEN_FILL_SMEM_TABLE says why), else b.a.table. */
		const struct gpugen_table *table;
		/*
		 * Descriptors loaded with the count, before it is known (a
		 * second round trip loads the rest): the last item's count,
		 * the same in every thread, at most the warps that do not
		 * load the count (as before). Loading more than an item has
		 * costs PCIe reads the round trip waits out: a 32-packet
		 * burst waits for 8 lines of descriptors, not 28 (READY seen
		 * -> descriptors held 1.76 -> 1.60 us on an H200).
		 */
		uint32_t pre;
		/* With b.a.times, thread 0's: the item's GPU times until
		 * item_done records them. */
		unsigned long long t_seen, t_loaded, t_built;

		__device__
		worker(const gpugen_fill_body &body, uint32_t ring, uint32_t slot)
			: gpucomm_worker_base<gpugen_fill_body>(body, ring, slot),
			stage(NULL), table((const struct gpugen_table *)
			body.a.table), pre(threads - GPUGEN_WARP), t_seen(0),
			t_loaded(0), t_built(0)
		{
			/* Static, so every block has them, used or not (the
			 * launch asks for no dynamic shared memory): 31 KiB
			 * of slots and 4.5 KiB of table, which leave 4 blocks
			 * an SM, as the registers do. */
			__shared__ __align__(16) uint8_t
				s_stage[GPUGEN_FILL_THREADS * GPUGEN_FILL_SMEM_SLOT];
			__shared__ __align__(16) uint8_t
				s_table[GPUGEN_FILL_SMEM_TABLE];

			/* A kernel argument: the whole block takes one way,
			 * and meets the copy's barrier. */
			if (body.a.table_smem != 0) {
				gpugen_block_table_compact(s_table, table,
					body.a.table_smem);
				table = (const struct gpugen_table *)s_table;
			}
			if (body.a.smem)
				stage = s_stage;
			else if (body.a.scratch != NULL)
				stage = body.a.scratch + (size_t)(ring *
					body.a.workers + slot) * threads *
					body.a.slot;
		}

		__device__ void
		item(const struct gpucomm_item_ctx &c)
		{
			__shared__ uintptr_t addr[GPUCOMM_PKTS_MAX];
			__shared__ uint32_t size[GPUCOMM_PKTS_MAX];
			/* struct gpugen_fill_side's words: first, tx_ns,
			 * tx_gap_ns. */
			__shared__ unsigned long long s_side[3];
			const struct gpugen_table *t = table;
			/* A kernel argument: the whole block takes one way. */
			const bool timed = b.a.times != NULL;
			uint32_t n, s;
			unsigned long long first, tx_ns, gap;

			/* Launched per burst there is no READY poll: the item
			 * kernel's start stands for it. */
			if (timed && threadIdx.x == 0)
				t_seen = c.ready_ns != 0 ? c.ready_ns :
					gpucomm_gpu_ns();
			/*
			 * The side words were written by the CPU before READY:
			 * the worker loop's acquire of READY (the dispatcher's
			 * fence, or thread 0's own) orders their loads after
			 * them. They travel with the count, in its load
			 * instruction: one round trip for all the item's inputs;
			 * none when the worker's poll brought them (lap tags).
			 * Synchronizes the block.
			 */
			n = gpucomm_load_item_side(c, pre, addr, size,
				(const unsigned long long *)&b.a.side[
				(size_t)c.ring * b.n_items + c.idx], 3, s_side);
			/* The next burst is most likely this one's size. */
			pre = n < GPUGEN_FILL_PRE_MIN ? GPUGEN_FILL_PRE_MIN :
				n > threads - GPUGEN_WARP ?
				threads - GPUGEN_WARP : n;
			/* After load_item's barrier: every thread holds them. */
			if (timed && threadIdx.x == 0)
				t_loaded = gpucomm_gpu_ns();
			first = s_side[0];
			tx_ns = s_side[1];
			gap = s_side[2];
			if (stage == NULL) {
				for (uint32_t i = threadIdx.x; i < n; i += threads)
					(void)gpugen_make_n(t, first + i,
						tx_ns + i * gap,
						(uint8_t *)addr[i], &s);
			} else {
				/* size[] becomes the frames' built lengths. */
				for (uint32_t i = 0; i < n; i += threads) {
					const uint32_t m = n - i < threads ?
						n - i : threads;

					/* A kernel argument: the block takes
					 * one way. */
					if (b.a.smem)
						gpugen_block_build_in<4>(t,
							addr + i, size + i, m,
							first + i,
							tx_ns + i * gap, gap,
							stage, b.a.slot);
					else
						gpugen_block_build_in<16>(t,
							addr + i, size + i, m,
							first + i,
							tx_ns + i * gap, gap,
							stage, b.a.slot);
				}
			}
			/* Timed only: a barrier of its own, so that the time is
			 * the block's last frame issued, not thread 0's. */
			if (timed) {
				__syncthreads();
				if (threadIdx.x == 0)
					t_built = gpucomm_gpu_ns();
			}
		}

		/*
		 * Thread 0 comes here straight from its release of DONE: the
		 * time read now is DONE's store issued, after its fence
		 * drained the frames' writes. Plain stores to GPU memory, off
		 * the item's critical path; the host reads them once the
		 * kernel has ended (gpugen_fill_times), which orders them.
		 */
		__device__ void
		item_done(const struct gpucomm_item_ctx &c)
		{
			unsigned long long t_done, *w;

			if (b.a.times == NULL || threadIdx.x != 0)
				return;
			t_done = gpucomm_gpu_ns();
			w = b.a.times + ((size_t)c.ring * b.a.n_times +
				c.seq % b.a.n_times) * GPUGEN_FILL_TIME_WORDS;
			w[1] = t_seen;
			w[2] = t_loaded;
			w[3] = t_built;
			w[4] = t_done;
			w[0] = c.seq + 1;
		}
	};
};

extern "C" int
gpugen_fill_cuda_launch(struct gpucomm_kparams *kp,
		const struct gpugen_fill_kargs *a, void *s)
{
	if (a->scratch != NULL && kp->bpq > a->workers)
		return (int)cudaErrorInvalidValue;
	return gpucomm_launch_persistent(kp, gpugen_fill_body{ *a, kp->n_items },
		(cudaStream_t)s);
}

extern "C" int
gpugen_fill_cuda_launch_item(const struct gpucomm_kparams *kp,
		const struct gpugen_fill_kargs *a, uint32_t ring, uint32_t idx,
		unsigned long long seq, void *s)
{
	return gpucomm_launch_item(kp, gpugen_fill_body{ *a, kp->n_items },
		ring, idx, seq, (cudaStream_t)s);
}
