/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent kernel of the GPU communication ring, a template over the
 * program's per-item code (the "body"); nvcc only, included by the
 * program's .cu that defines the body and instantiates the launches.
 *
 * Per ring one dispatcher warp and kp.bpq worker blocks:
 *
 *   dispatcher  the only PCIe poller of the ring: each lane reads the
 *               status of one of the next 32 items, all in one coalesced
 *               request (gpudev keeps a list's statuses in one array),
 *               takes the READY run from the ring's next item on, and hands
 *               each item to its worker through GPU memory (the slot's
 *               ready_seq). Items whose previous lap a worker has not
 *               finished are not looked at (an old READY is never taken
 *               for a new one). Backs off from poll_ns_min to poll_ns_max
 *               while nothing is READY; ends on the quit flag.
 *   worker j    takes items j, j + bpq, ... in order: waits for the
 *               hand-over, runs the body's item() on the whole block, then
 *               thread 0 releases DONE at system scope and tells the
 *               dispatcher the slot is free for its next lap.
 *
 * The body (a class, passed by value as a kernel parameter):
 *
 *   struct my_body {
 *       static constexpr unsigned int threads = 128;   // block size
 *       // optional: blocks an SM must hold at once (ptxas budgets the
 *       // registers for it; default 1, the registers the body wants)
 *       static constexpr unsigned int min_blocks = 4;
 *       ...parameters (trivially copyable)...
 *       struct worker {
 *           // every thread of a worker block, once: per-block state
 *           // (may use __shared__ memory and synchronize the block)
 *           __device__ worker(const my_body &b, uint32_t ring, uint32_t slot);
 *           // every thread: one item's work; every result the CPU reads
 *           // stored before it returns (the skeleton's barrier and
 *           // release of DONE publish them)
 *           __device__ void item(const struct gpucomm_item_ctx &c);
 *           // every thread, after DONE: statistics off the item's
 *           // critical path (DONE's release does not wait for them)
 *           __device__ void item_done(const struct gpucomm_item_ctx &c);
 *       };
 *   };
 *
 * Why a template and not a device function pointer: the body is compiled
 * into the kernel and inlined, so its loads are scheduled with the
 * skeleton's, its __shared__ arrays and registers are sized for this
 * kernel, and __launch_bounds__(Body::threads) gives ptxas the block size
 * to budget registers for. An indirect call cannot be inlined: it costs
 * the call ABI (arguments and callee-saved registers through local
 * memory, which a per-packet body with its staging arrays would spill),
 * needs relocatable device code when the body lives in another file, and
 * hides the body's register needs from the launch configuration. The
 * price of the template is one instantiation per body, in the program's
 * own .cu, which is where its per-item code is anyway. *
 * A second template argument, the hook, is for tests alone: what a fault
 * or a kernel that never quits would do, injected at compile time. The
 * shipped kernels take the default, gpucomm_no_hook, whose calls compile
 * to nothing: no test branch in them and no kernel parameter for one.
 */
#ifndef GPUCOMM_PERSISTENT_CUH
#define GPUCOMM_PERSISTENT_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "gpucomm_dev.cuh"
#include "gpucomm_kernel.h"

/* What a worker is handed with each item. */
struct gpucomm_item_ctx {
	const struct gpucomm_item *item;	/* in host memory: read the count
						 * with gpucomm_ld_num_pkts() */
	const struct gpucomm_pkt *pkts;		/* its packet list */
	unsigned long long seq;		/* the ring's item number: 0, 1, ... */
	unsigned long long ready_ns;	/* %globaltimer when the dispatcher saw
					 * it READY; 0 when launched per item */
	uint32_t ring;
	uint32_t idx;			/* item index in the ring: seq % items */
	uint32_t slot;			/* worker block of the ring */
	/* Body::prefetch: the item's count when the worker loaded it, with
	 * its first min(count, GPUCOMM_TAG_WINDOW) descriptors, while it
	 * polled for READY (pre_addr[], pre_size[]: shared memory, valid
	 * during item()); else 0, and gpucomm_load_item() loads them after
	 * READY. */
	uint32_t pre_n;
	const unsigned long long *pre_addr;
	const uint32_t *pre_size;
	/* Body::side_n: the item's side slots (gpucomm_layout.h, shared
	 * memory), each current by its lap tag when the worker loaded it
	 * with its poll; else NULL, and the body loads its words after
	 * READY. Independent of pre_n. */
	const unsigned long long *pre_side;
};

/*
 * The skeleton's test seams (a hook type; its state, if any, travels in
 * the body, which a test derives from the program's own):
 *   hold(body)      the dispatchers' view of the quit flag: true, they
 *                   never see it (a kernel that does not end);
 *   taken(body, c)  every thread of a worker block once item c is handed
 *                   over, before the body's item() (a worker that dies
 *                   holding its item).
 * This one, the shipped kernels', does nothing.
 */
struct gpucomm_no_hook {
	template <class Body>
	static __device__ __forceinline__ bool
	hold(const Body &body)
	{
		(void)body;
		return false;
	}

	template <class Body>
	static __device__ __forceinline__ void
	taken(const Body &body, const struct gpucomm_item_ctx &c)
	{
		(void)body;
		(void)c;
	}
};

/*
 * A body's worker with no per-block state and nothing to do after DONE:
 * derive from it and write item() alone,
 *   struct worker : gpucomm_worker_base<my_body> {
 *       using gpucomm_worker_base<my_body>::gpucomm_worker_base;
 *       __device__ void item(const struct gpucomm_item_ctx &c);
 *   };
 * (b: the body's parameters).
 */
template <class Body>
struct gpucomm_worker_base {
	const Body &b;

	__device__
	gpucomm_worker_base(const Body &body, uint32_t ring, uint32_t slot)
		: b(body)
	{
		(void)ring;
		(void)slot;
	}

	__device__ void
	item_done(const struct gpucomm_item_ctx &c)
	{
		(void)c;
	}
};

/*
 * The item's packet count and descriptors into addr[] and size[] (shared
 * memory, GPUCOMM_PKTS_MAX entries), by every thread of the block; returns
 * the count (at most GPUCOMM_PKTS_MAX). The count and the first `pre`
 * descriptors are loaded in one round trip: descriptor i by thread
 * i (and i + blockDim.x, ...), the count by lane 0 of the block's last
 * warp, which has no descriptor to load while pre <= blockDim.x - 32 (in
 * one warp the second host load waits for the first: 2.5 us instead of
 * 1.6 us for both in bench-handoff). Descriptors past the count are stale
 * and unused (the list has room for GPUCOMM_PKTS_MAX); those from pre to
 * the count, if any, take a second round trip. Synchronizes the block.
 *
 * side[0..n_side) (n_side <= 31), 64-bit words the CPU wrote for the item
 * before READY, come into side_out[] (shared memory) in the same round
 * trip: lanes 1..n_side of the count's warp load them in the count's own
 * load instruction. Loaded by the body before this call, from a warp that
 * also loads descriptors, each word would be one more round trip before
 * the descriptors' (the build breakdown's "loaded" part).
 */
static __device__ uint32_t
gpucomm_load_item_side(const struct gpucomm_item_ctx &c, uint32_t pre,
		uintptr_t *addr, uint32_t *size, const unsigned long long *side,
		uint32_t n_side, unsigned long long *side_out)
{
	/* The count is read as the low half of an aligned 64-bit word (the
	 * padding after it is the item's own bytes), so that one load
	 * instruction serves the count's lane and the side words' lanes. */
	static_assert(offsetof(struct gpucomm_item, num_pkts) % 8 == 0 &&
		offsetof(struct gpucomm_item, num_pkts) + 8 <=
		sizeof(struct gpucomm_item), "num_pkts in an aligned 8-byte word");
	__shared__ uint32_t s_n;
	const uint32_t w0 = blockDim.x - 32;
	uint32_t n;

	if (c.pre_n != 0 && (n_side == 0 || c.pre_side != NULL)) {
		/* Loaded with READY's poll, each entry and side slot current
		 * by its lap tag: only entries past the window are read now,
		 * after READY (the worker's acquire). The side words are the
		 * slots' (the caller's ring keeps them there: n_side at most
		 * its Body::side_n). */
		const uint32_t w = c.pre_n < GPUCOMM_TAG_WINDOW ? c.pre_n :
			GPUCOMM_TAG_WINDOW;

		if (threadIdx.x < n_side)
			side_out[threadIdx.x] = c.pre_side[threadIdx.x];

		n = c.pre_n < GPUCOMM_PKTS_MAX ? c.pre_n : GPUCOMM_PKTS_MAX;
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			unsigned long long a, z;

			if (i < w) {
				a = c.pre_addr[i];
				z = c.pre_size[i];
			} else {
				gpucomm_ld_pkt(&c.pkts[i], &a, &z);
			}
			addr[i] = (uintptr_t)a;
			size[i] = (uint32_t)z;
		}
		__syncthreads();
		return n;
	}
	if (pre > GPUCOMM_PKTS_MAX)
		pre = GPUCOMM_PKTS_MAX;
	if (threadIdx.x >= w0 && threadIdx.x - w0 <= n_side) {
		const uint32_t l = threadIdx.x - w0;
		const unsigned long long *p = l == 0 ?
			(const unsigned long long *)&c.item->num_pkts :
			&side[l - 1];
		unsigned long long v;

		/* Volatile: the CPU rewrites these words every lap. */
		asm volatile("ld.volatile.global.u64 %0, [%1];"
			: "=l"(v) : "l"(p) : "memory");
		if (l == 0)
			s_n = (uint32_t)v;	/* little-endian: the low half */
		else
			side_out[l - 1] = v;
	}
	for (uint32_t i = threadIdx.x; i < pre; i += blockDim.x) {
		unsigned long long a, z;

		gpucomm_ld_pkt(&c.pkts[i], &a, &z);
		addr[i] = (uintptr_t)a;
		size[i] = (uint32_t)z;
	}
	__syncthreads();
	n = s_n < GPUCOMM_PKTS_MAX ? s_n : GPUCOMM_PKTS_MAX;
	if (n > pre) {
		for (uint32_t i = pre + threadIdx.x; i < n; i += blockDim.x) {
			unsigned long long a, z;

			gpucomm_ld_pkt(&c.pkts[i], &a, &z);
			addr[i] = (uintptr_t)a;
			size[i] = (uint32_t)z;
		}
		__syncthreads();
	}
	return n;
}

/* gpucomm_load_item_side() with no side words: with Body::prefetch, no
 * PCIe read after READY for an item of up to GPUCOMM_TAG_WINDOW packets
 * on a ring with lap tags (GPUCOMM_RING_TAGS). */
static __device__ uint32_t
gpucomm_load_item(const struct gpucomm_item_ctx &c, uint32_t pre,
		uintptr_t *addr, uint32_t *size)
{
	return gpucomm_load_item_side(c, pre, addr, size, NULL, 0, NULL);
}

/* The ring's dispatcher: warp 0 of the ring's last block. */
template <class Body, class Hook>
static __device__ void
gpucomm_dispatch(const struct gpucomm_kparams &kp, const Body &body,
		uint32_t ring)
{
	const unsigned int lane = threadIdx.x;
	const uint32_t n = kp.n_items;
	const size_t base = (size_t)ring * n;
	unsigned long long *ready = kp.st.ready_seq + base;
	const unsigned long long *done = kp.st.done_seq + base;
	unsigned long long *ready_ns = kp.st.ready_ns + base;
	uint32_t *const *status = kp.st.status + base;
	uint32_t *const status0 = status[0];
	unsigned long long seq = 0;
	uint32_t ns = kp.poll_ns_min, contiguous = 1;

	/* gpudev allocates a list's status words as one array: then one
	 * coalesced request reads 32 of them. */
	for (uint32_t i = lane; i < n; i += 32)
		if (status[i] != status0 + i)
			contiguous = 0;
	contiguous = __all_sync(0xffffffffu, contiguous);
	for (;;) {
		const unsigned long long s = seq + lane;
		const uint32_t idx = (uint32_t)(s % n);
		/* Lanes past the ring's size would look at an item twice. */
		bool ok = lane < n && (contiguous || lane == 0);
		unsigned int mask, k;

		bool taken = false;

		/*
		 * Previous lap of this slot not finished: not yet. Acquire at
		 * device scope, pairing with the worker's release after its
		 * DONE: the status load below cannot see the old READY. An
		 * item whose worker saw it READY first (the idle ring's head,
		 * gpucomm_worker_loop) is done or being done: passed over,
		 * its status perhaps DONE or FREE already.
		 */
		if (ok) {
			const unsigned long long d =
				gpucomm_ld_acquire_gpu_u64(&done[idx]);

			if (s >= n && d < s - n + 1)
				ok = false;
			else
				taken = d >= s + 1;
		}
		/* Relaxed: the lanes' loads travel together; the fence below,
		 * once READY items are found, is the acquire. */
		if (ok && !taken)
			ok = gpucomm_ld_relaxed_sys_u32(contiguous ? status0 + idx :
				status[idx]) == GPUCOMM_STATUS_READY;
		mask = __ballot_sync(0xffffffffu, ok);
		/* Items are taken in order: the READY run from seq on. */
		k = mask == 0xffffffffu ? 32 : __ffs(~mask) - 1;
		if (k > 0) {
			if (lane < k && !taken)
				ready_ns[idx] = gpucomm_gpu_ns();
			/*
			 * One fence per lane, both ways: acquire for its own
			 * READY load (what the CPU wrote before READY: count,
			 * descriptors, side data and, after rte_gpu_wmb, packet
			 * bytes) and release for its own hand-over store below
			 * (and the stamp above), which the worker acquires: by
			 * cumulativity the worker sees the CPU's writes with no
			 * system-scope fence of its own.
			 */
			gpucomm_fence_acq_rel_sys();
			if (lane < k && !taken)
				gpucomm_st_relaxed_gpu_u64(&ready[idx], s + 1);
			seq += k;
			ns = kp.poll_ns_min;
			continue;
		}
		/*
		 * The CPU raises quit only after every item it published came
		 * back DONE: quitting here loses nothing, and the flag carries
		 * no data (relaxed).
		 */
		if (__shfl_sync(0xffffffffu, lane == 0 && !Hook::hold(body) ?
				gpucomm_ld_relaxed_sys_u32(kp.quit) : 0, 0) != 0) {
			for (uint32_t i = lane; i < n; i += 32)
				gpucomm_st_relaxed_gpu_u64(&ready[i], GPUCOMM_SEQ_QUIT);
			return;
		}
		if (ns != 0)
			__nanosleep(ns);
		ns = ns * 2 < kp.poll_ns_max ? ns * 2 : kp.poll_ns_max;
	}
}

/* Body::prefetch where the body gives it, else false. */
template <class Body, class = void>
struct gpucomm_body_prefetch {
	static constexpr bool value = false;
};
template <class Body>
struct gpucomm_body_prefetch<Body, decltype((void)Body::prefetch)> {
	static constexpr bool value = Body::prefetch;
};

/* Body::side_n (side slots the prefetch loads, its rings made with
 * GPUCOMM_RING_SIDE) where the body gives it, else 0. */
template <class Body, class = void>
struct gpucomm_body_side_n {
	static constexpr uint32_t value = 0;
};
template <class Body>
struct gpucomm_body_side_n<Body, decltype((void)Body::side_n)> {
	static constexpr uint32_t value = Body::side_n;
};

/* The item's context a worker's poller hands its block (pre_n: the
 * caller's). */
static __device__ __forceinline__ void
gpucomm_worker_ctx(struct gpucomm_item_ctx &c, const struct gpucomm_kparams &kp,
		const struct gpucomm_pkt *pkts, uint32_t ring, uint32_t idx,
		uint32_t slot, unsigned long long seq, unsigned long long ready_ns)
{
	c.item = kp.items[ring] + idx;
	c.pkts = pkts;
	c.seq = seq;
	c.ready_ns = ready_ns;
	c.ring = ring;
	c.idx = idx;
	c.slot = slot;
}

/*
 * A worker's item, READY taken (s_go set by the poller, before the
 * barrier): the body, then DONE.
 */
template <class Body, class Hook>
static __device__ __forceinline__ bool
gpucomm_worker_item(const struct gpucomm_kparams &kp, const Body &body,
		typename Body::worker &w, struct gpucomm_item_ctx &s_ctx,
		uint32_t *const &s_status, const int &s_go, size_t base,
		uint32_t idx, unsigned long long seq)
{
	/* The barrier carries the poller's acquire to the block. */
	__syncthreads();
	if (!s_go)
		return false;
	Hook::taken(body, s_ctx);
	{
		const struct gpucomm_item_ctx c = s_ctx;

		w.item(c);
		/*
		 * Every thread's results are stored before this barrier;
		 * thread 0's release after it orders them all before
		 * DONE (cumulativity). One release per item: a fence in
		 * every thread measured 4 us per 32-packet item (the
		 * fences of a block are served one by one), and a fence
		 * before the release would only repeat it.
		 */
		__syncthreads();
		if (threadIdx.x == 0) {
			gpucomm_st_release_sys_u32(s_status, GPUCOMM_STATUS_DONE);
			/* Ordered after DONE: once the dispatcher sees it,
			 * the slot's status no longer reads the old READY. */
			gpucomm_st_release_gpu_u64(&kp.st.done_seq[base + idx],
				seq + 1);
		}
		w.item_done(c);
	}
	return true;
}

/*
 * Worker block `slot` of ring `ring` with the prefetch (Body::prefetch, a
 * body that reads its items with gpucomm_load_item, and kp.lap_tags:
 * rings with lap tags, whose packet lists hold at least
 * GPUCOMM_TAG_WINDOW entries). Warp 0 polls as thread 0 does in
 * gpucomm_worker_loop (the whole warp, lane 0's values deciding: the
 * same words for every lane, one request each); warp 1, in the same
 * iterations, loads the item's first GPUCOMM_TAG_WINDOW entries (a lane
 * each, one 16-byte load) whenever it finds the latency path open and
 * has not yet seen them all current. The two warps meet at a barrier of
 * their own after every poll, so the poll that sees READY, the very
 * first open one included, had its entries loaded in the same round
 * trip: then no dependent PCIe read follows READY for an item of up to
 * GPUCOMM_TAG_WINDOW packets. Two warps, not one: the host loads of one
 * warp went out one round trip after another (gpucomm_ld_num_pkts).
 *
 * Why an entry loaded before READY (before the acquire) is never a stale
 * or half-written one kept: the tags decide, not the poll's state. Each
 * entry is read with its tag by one 16-byte load; the CPU stores it with
 * one 16-byte store (gpucomm_ring_store_pkt), and an entry holds one
 * tagged value a lap (a fill that fails part way stores no count). The
 * entries are kept only if entry 0 carries a count of this lap and every
 * entry below it this lap's tag. The CPU cannot be writing a later lap
 * (lap L + 1 of the item follows this worker's DONE of lap L), and this
 * worker took READY of item seq - bpq >= seq - n (acquire, then the
 * block's barrier), which the CPU published after filling lap L - 1 of
 * this item: every window entry loaded now was written at lap L - 1 or
 * later, or by the refresh of the GPUCOMM_TAG_REFRESH laps before, or
 * cleared by gpucomm_ring_init (gpucomm_layout.h), so a stale tag differs
 * from L's mod 2^16.
 *
 * The cost: while the ring is open and idle, each poll reads 512 B of
 * entries besides the status word from host memory, one PCIe round trip
 * (about 1 us) apart: about 0.5 GB/s of PCIe reads per idle ring; none
 * while the ring is off the latency path (the dispatcher polls then), and
 * only the status once the entries were seen current. An item the
 * dispatcher hands over in a poll whose entries warp 1 already loads
 * starts when they are back.
 *
 * Body::side_n (rings with GPUCOMM_RING_SIDE): warp 2 too, its lanes
 * 0 .. side_n - 1 loading the item's side slots in the same polls (a
 * third warp for the same reason as the second), kept once each
 * carries the item's lap: the same argument, the slots being written
 * every lap (gpucomm_layout.h). Then the body's side words need no PCIe
 * read after READY either (ctx.pre_side); 16 bytes more a poll.
 */
template <class Body, class Hook>
static __device__ void
gpucomm_worker_loop_prefetch(const struct gpucomm_kparams &kp,
		const Body &body, uint32_t ring, uint32_t slot)
{
	__shared__ struct gpucomm_item_ctx s_ctx;
	__shared__ int s_go;
	__shared__ int s_poll;
	/* The item's status, thread 0's alone (it polls it and stores DONE):
	 * a register, not shared memory, which the generator's fill has no
	 * 8 bytes of to spare. */
	uint32_t *t0_status = NULL;
	__shared__ unsigned long long s_pre_addr[GPUCOMM_TAG_WINDOW];
	__shared__ uint32_t s_pre_size[GPUCOMM_TAG_WINDOW];
	constexpr uint32_t side_n = gpucomm_body_side_n<Body>::value;
	/* The polling warps: status, entries and the side slots. */
	constexpr unsigned int n_warps = side_n != 0 ? 3 : 2;
	static_assert(side_n <= GPUCOMM_SIDE_MAX &&
		Body::threads >= 32 * n_warps, "side slots: a third warp");
	__shared__ unsigned long long s_pre_side[side_n != 0 ? side_n : 1];
	typename Body::worker w(body, ring, slot);
	const uint32_t n = kp.n_items;
	const size_t base = (size_t)ring * n;
	const unsigned int lane = threadIdx.x % 32;
	const unsigned int warp = threadIdx.x / 32;

	for (unsigned long long seq = slot;; seq += kp.bpq) {
		const uint32_t idx = (uint32_t)(seq % n);

		if (warp < n_warps) {
			/* Fixed for the list's life, in GPU memory. */
			const struct gpucomm_pkt *pkts = kp.st.pkt_list[base + idx];
			uint32_t *status = kp.st.status[base + idx];
			const unsigned long long *done_prev = seq == 0 ? NULL :
				&kp.st.done_seq[base + (uint32_t)((seq - 1) % n)];
			const unsigned long long lap = seq / n;
			unsigned long long ready_ns = 0, pa = 0, pz = 0;
			uint32_t pre_n = 0;
			bool side_ok = false;
			int got = 0;

			/* Read by warp 1 only after the first barrier below,
			 * itself after the block's barriers of the last item. */
			if (threadIdx.x == 0)
				s_poll = 0;
			for (;;) {
				/* Both warps: thread 0's tests in
				 * gpucomm_worker_loop, lane 0's values. */
				const unsigned long long v = __shfl_sync(0xffffffffu,
					gpucomm_ld_relaxed_gpu_u64(
					&kp.st.ready_seq[base + idx]), 0);
				const bool handed = v == seq + 1 ||
					v == GPUCOMM_SEQ_QUIT;
				/* The lap check is an acquire (as the
				 * dispatcher's): the status load after it
				 * cannot return the old lap's READY. */
				const bool open = !handed && __shfl_sync(0xffffffffu,
					(done_prev == NULL ||
					gpucomm_ld_relaxed_gpu_u64(done_prev) >= seq) &&
					(seq < n || gpucomm_ld_acquire_gpu_u64(
					&kp.st.done_seq[base + idx]) >= seq - n + 1), 0);

				if (warp == 0 && handed) {
					got = v == seq + 1 ? 1 : 2;
					/* Lane 0's acquire; the block's barrier
					 * carries it (a fence a lane would be
					 * served one by one). */
					if (lane == 0) {
						gpucomm_fence_acq_rel_gpu();
						ready_ns = kp.st.ready_ns[base + idx];
					}
				} else if (warp == 0 && open) {
					if (__shfl_sync(0xffffffffu,
							gpucomm_ld_relaxed_sys_u32(status),
							0) == GPUCOMM_STATUS_READY) {
						got = 1;
						/* Acquires what the CPU wrote
						 * before READY: lane 0's, as
						 * above. */
						if (lane == 0) {
							gpucomm_fence_acq_rel_sys();
							ready_ns = gpucomm_gpu_ns();
						}
					}
				} else if (warp == 1 && open && pre_n == 0) {
					uint32_t cnt;

					gpucomm_ld_pkt(&pkts[lane], &pa, &pz);
					cnt = __shfl_sync(0xffffffffu,
						gpucomm_tag_count(pz, lap), 0);
					if (cnt != 0 && __all_sync(0xffffffffu,
							lane >= cnt ||
							gpucomm_tag_current(pz, lap)))
						pre_n = cnt;
				} else if (warp == 2 && open && !side_ok) {
					/* Warp 2 polls only with side_n. */
					if constexpr (side_n != 0) {
						/* pa: the slot's word, pz its
						 * tag. */
						if (lane < side_n)
							gpucomm_ld_pkt(&pkts[
								GPUCOMM_SIDE_ENTRY(lane)],
								&pa, &pz);
						side_ok = __all_sync(0xffffffffu,
							lane >= side_n ||
							gpucomm_tag_current(pz, lap));
					}
				}
				if (threadIdx.x == 0 && got != 0)
					s_poll = got;
				/* The polling warps only (the others wait at
				 * the block's barrier): this poll's entries
				 * and slots are back before the item is
				 * taken. */
				asm volatile("bar.sync 1, %0;" :: "r"(n_warps * 32)
					: "memory");
				got = s_poll;
				if (got != 0)
					break;
			}
			if (warp == 1 && pre_n != 0) {
				s_pre_addr[lane] = pa;
				s_pre_size[lane] = (uint32_t)pz;
			}
			if (warp == 1 && lane == 0) {
				s_ctx.pre_n = pre_n;
				s_ctx.pre_addr = s_pre_addr;
				s_ctx.pre_size = s_pre_size;
				if (side_n == 0)
					s_ctx.pre_side = NULL;
			}
			if constexpr (side_n != 0) {
				if (warp == 2 && side_ok && lane < side_n)
					s_pre_side[lane] = pa;
				if (warp == 2 && lane == 0)
					s_ctx.pre_side = side_ok ? s_pre_side :
						NULL;
			}
			if (threadIdx.x == 0) {
				s_go = got == 1;
				t0_status = status;
				gpucomm_worker_ctx(s_ctx, kp, pkts, ring, idx, slot,
					seq, ready_ns);
			}
		}
		if (!gpucomm_worker_item<Body, Hook>(kp, body, w, s_ctx, t0_status,
				s_go, base, idx, seq))
			return;
	}
}

/* Worker block `slot` of ring `ring`: its items in ring order. */
template <class Body, class Hook>
static __device__ void
gpucomm_worker_loop(const struct gpucomm_kparams &kp, const Body &body,
		uint32_t ring, uint32_t slot)
{
	__shared__ struct gpucomm_item_ctx s_ctx;
	__shared__ uint32_t *s_status;
	__shared__ int s_go;
	typename Body::worker w(body, ring, slot);
	const uint32_t n = kp.n_items;
	const size_t base = (size_t)ring * n;

	/* No prefetch here: gpucomm_load_item loads the entries after
	 * READY. Carried to the block by the loop's first barrier. */
	if (threadIdx.x == 0) {
		s_ctx.pre_n = 0;
		s_ctx.pre_side = NULL;
	}
	for (unsigned long long seq = slot;; seq += kp.bpq) {
		const uint32_t idx = (uint32_t)(seq % n);

		if (threadIdx.x == 0) {
			/* Fixed for the list's life, in GPU memory: loaded
			 * while waiting, not after. */
			const struct gpucomm_pkt *pkts = kp.st.pkt_list[base + idx];
			uint32_t *status = kp.st.status[base + idx];
			const unsigned long long *done_prev = seq == 0 ? NULL :
				&kp.st.done_seq[base + (uint32_t)((seq - 1) % n)];
			unsigned long long v, ready_ns = 0;

			/*
			 * Relaxed polls, then the fence: an acquire pattern
			 * pairing with the dispatcher's release (a fence per
			 * poll would only slow the polls).
			 *
			 * The latency path: while every earlier item of the
			 * ring is done (the ring idle up to this one: one
			 * worker of the ring at a time) and this slot's
			 * previous lap too (its READY cannot be the old one),
			 * the worker also polls its item's status itself and,
			 * seeing READY, takes it with the dispatcher's own
			 * system-scope acquire: the dispatcher's hand-over
			 * hop (polled back-off, a store, this poll) is off an
			 * isolated burst's critical path. The dispatcher
			 * passes such an item over by its done_seq.
			 */
			for (;;) {
				v = gpucomm_ld_relaxed_gpu_u64(&kp.st.ready_seq[base + idx]);
				if (v == seq + 1 || v == GPUCOMM_SEQ_QUIT) {
					gpucomm_fence_acq_rel_gpu();
					ready_ns = kp.st.ready_ns[base + idx];
					break;
				}
				if ((done_prev == NULL ||
						gpucomm_ld_relaxed_gpu_u64(done_prev) >= seq) &&
						(seq < n || gpucomm_ld_acquire_gpu_u64(
						&kp.st.done_seq[base + idx]) >= seq - n + 1) &&
						gpucomm_ld_relaxed_sys_u32(status) ==
						GPUCOMM_STATUS_READY) {
					/* The lap check is an acquire (as
					 * the dispatcher's): the status load
					 * after it cannot return the old
					 * lap's READY. This fence acquires
					 * what the CPU wrote before READY. */
					gpucomm_fence_acq_rel_sys();
					ready_ns = gpucomm_gpu_ns();
					v = seq + 1;
					break;
				}
			}
			s_go = v == seq + 1;
			s_status = status;
			gpucomm_worker_ctx(s_ctx, kp, pkts, ring, idx, slot, seq,
				ready_ns);
		}
		if (!gpucomm_worker_item<Body, Hook>(kp, body, w, s_ctx, s_status,
				s_go, base, idx, seq))
			return;
	}
}

/* Body::min_blocks where the body gives it, else 1. */
template <class Body, class = void>
struct gpucomm_body_min_blocks {
	static constexpr unsigned int value = 1;
};
template <class Body>
struct gpucomm_body_min_blocks<Body, decltype((void)Body::min_blocks)> {
	static constexpr unsigned int value = Body::min_blocks;
};

/* Whether the body's workers can take the prefetch path: the kernel
 * for rings with lap tags (kp.lap_tags) is then a kernel of its own. */
template <class Body>
struct gpucomm_body_tagged {
	static constexpr bool value = gpucomm_body_prefetch<Body>::value &&
		Body::threads >= 64;
};

/*
 * The persistent kernel: kp.n_rings x (kp.bpq workers + 1 dispatcher)
 * blocks of Body::threads threads, all resident (gpucomm_launch_persistent).
 * Tagged (kp.lap_tags, a body with the prefetch): its workers run the
 * prefetch loop. Two kernels rather than a branch on kp.lap_tags, so
 * that each holds one worker loop's shared memory and registers: the
 * untagged one is the kernel it was before the tags.
 */
template <class Body, class Hook = gpucomm_no_hook, bool Tagged = false>
__global__ void __launch_bounds__(Body::threads,
	gpucomm_body_min_blocks<Body>::value)
gpucomm_persistent_kernel(const struct gpucomm_kparams kp, const Body body)
{
	static_assert(Body::threads >= 32 && Body::threads % 32 == 0,
		"whole warps: the dispatcher is one");
	const uint32_t ring = blockIdx.x / (kp.bpq + 1);
	const uint32_t slot = blockIdx.x % (kp.bpq + 1);

	if (ring >= kp.n_rings)
		return;
	if (slot == kp.bpq) {
		if (threadIdx.x < 32)
			gpucomm_dispatch<Body, Hook>(kp, body, ring);
		return;
	}
	if constexpr (Tagged) {
		static_assert(gpucomm_body_tagged<Body>::value,
			"the prefetch needs Body::prefetch and two warps");
		gpucomm_worker_loop_prefetch<Body, Hook>(kp, body, ring, slot);
	} else {
		gpucomm_worker_loop<Body, Hook>(kp, body, ring, slot);
	}
}

/*
 * One item, launched after the CPU published it (launch per burst): the
 * launch is the acquire (stream order after the CPU's writes). The same
 * body, as worker slot 0 with ready_ns 0.
 */
template <class Body>
__global__ void __launch_bounds__(Body::threads,
	gpucomm_body_min_blocks<Body>::value)
gpucomm_item_kernel(const struct gpucomm_kparams kp, const Body body,
		uint32_t ring, uint32_t idx, unsigned long long seq)
{
	__shared__ struct gpucomm_item_ctx s_ctx;
	__shared__ uint32_t *s_status;
	typename Body::worker w(body, ring, 0);

	if (threadIdx.x == 0) {
		const struct gpucomm_item *item = kp.items[ring] + idx;
		const size_t i = (size_t)ring * kp.n_items + idx;

		/* From the dispatch state when there is one (GPU memory), else
		 * once from the item in host memory, by one thread. */
		if (kp.st.pkt_list != NULL) {
			s_ctx.pkts = kp.st.pkt_list[i];
			s_status = kp.st.status[i];
		} else {
			const volatile struct gpucomm_item *v = item;

			s_ctx.pkts = v->pkt_list;
			s_status = v->status_d;
		}
		s_ctx.item = item;
		s_ctx.seq = seq;
		s_ctx.ready_ns = 0;
		s_ctx.pre_n = 0;
		s_ctx.pre_addr = NULL;
		s_ctx.pre_size = NULL;
		s_ctx.pre_side = NULL;
		s_ctx.ring = ring;
		s_ctx.idx = idx;
		s_ctx.slot = 0;
	}
	__syncthreads();
	{
		const struct gpucomm_item_ctx c = s_ctx;

		w.item(c);
		__syncthreads();
		/* As in the persistent kernel: one release after the barrier. */
		if (threadIdx.x == 0)
			gpucomm_st_release_sys_u32(s_status, GPUCOMM_STATUS_DONE);
		w.item_done(c);
	}
}

/*
 * Launches the persistent kernel on stream s after setting up the
 * dispatch state (gpucomm_cuda_state_init). kp->bpq is lowered to what
 * fits (gpucomm_fit_workers) and the kernel launched cooperatively: its
 * blocks are all resident together or the launch fails
 * (cudaErrorCooperativeLaunchTooLarge, e.g. when other contexts or MPS
 * clients hold the SMs), never a ring left without its dispatcher or
 * workers because their blocks wait for others that never end.
 * Returns 0 or a cudaError_t value.
 */
template <class Body, class Hook = gpucomm_no_hook>
static inline int
gpucomm_launch_persistent(struct gpucomm_kparams *kp, const Body &body,
		cudaStream_t s)
{
	void *args[] = { kp, const_cast<Body *>(&body) };
	const void *kern = (const void *)gpucomm_persistent_kernel<Body, Hook,
		false>;
	int dev, sms, per_sm;
	uint32_t bpq;
	cudaError_t e;

	if (kp->n_rings == 0 || kp->n_rings > GPUCOMM_MAX_RINGS ||
			kp->n_items == 0 || kp->quit == NULL ||
			kp->st.ready_seq == NULL)
		return (int)cudaErrorInvalidValue;
	if constexpr (gpucomm_body_tagged<Body>::value) {
		if (kp->lap_tags != 0)
			kern = (const void *)gpucomm_persistent_kernel<Body, Hook,
				true>;
	}
	for (uint32_t r = 0; r < kp->n_rings; r++)
		if (kp->items[r] == NULL)
			return (int)cudaErrorInvalidValue;
	e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern,
			Body::threads, 0);
	if (e != cudaSuccess)
		return (int)e;
	bpq = gpucomm_fit_workers(kp->n_rings, kp->n_items, kp->bpq,
		gpucomm_kernel_share(kp->n_rings, (uint32_t)sms * (uint32_t)per_sm));
	if (bpq == 0)
		return (int)(kp->bpq == 0 ? cudaErrorInvalidValue :
			cudaErrorCooperativeLaunchTooLarge);
	kp->bpq = bpq;
	e = (cudaError_t)gpucomm_cuda_state_init(kp, s);
	if (e != cudaSuccess)
		return (int)e;
	/* args[] point at *kp and body, copied as the parameters here. */
	return (int)cudaLaunchCooperativeKernel(kern, dim3(kp->n_rings * (bpq + 1)), dim3(Body::threads), args, 0, s);
}

/* Launches the item kernel for item idx (sequence number seq) of ring
 * ring on stream s. 0 or a cudaError_t value. */
template <class Body>
static inline int
gpucomm_launch_item(const struct gpucomm_kparams *kp, const Body &body,
		uint32_t ring, uint32_t idx, unsigned long long seq, cudaStream_t s)
{
	if (ring >= kp->n_rings || idx >= kp->n_items || kp->items[ring] == NULL)
		return (int)cudaErrorInvalidValue;
	gpucomm_item_kernel<Body><<<1, Body::threads, 0, s>>>(*kp, body, ring,
		idx, seq);
	return (int)cudaGetLastError();
}

#endif /* GPUCOMM_PERSISTENT_CUH */
