/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lcore side of the GPU communication ring: a gpudev communication
 * list used as a ring between one lcore and a GPU kernel
 * (gpucomm_persistent.cuh, or a kernel launched per item).
 *
 *   next     the item at the head, FREE, if the ring has room
 *   (fill)   the caller writes its packet entries (pkt_list[i].addr and
 *            .size, mbufs[i]) and whatever side data the kernel reads
 *   publish  count, write barriers, READY (the ordering below); head on
 *   collect  the item at the tail, once DONE: its results may be read
 *   release  that item back to FREE; tail on
 *
 * Items are collected in ring order: output keeps the order of input
 * even though the kernel finishes items out of order. One lcore per ring,
 * no locks; every function here is inline and costs a few stores and at
 * most one gpudev call per item, none per packet: it is on the per-burst
 * path of lcores running at tens of Mpps.
 *
 * Publish ordering (what rte_gpu_comm_populate_list_pkts does, without
 * its walk over the mbufs):
 *   1. entries, side data and num_pkts: plain stores;
 *   2. rte_wmb(): they are globally visible before any later store (on
 *      x86 it also drains streaming stores, e.g. of a memcpy into a bounce
 *      buffer, and the write-combining buffers of GPU memory mapped
 *      through GDRCopy; on weakly ordered CPUs it is the store barrier the
 *      GPU's system-scope acquire pairs with);
 *   3. rte_gpu_wmb(), only with GPUCOMM_RING_GPU_WMB (packets a NIC wrote
 *      into GPU memory with GPUDirect RDMA): those writes are made
 *      visible to the GPU's kernels before the READY that follows, which
 *      a CPU barrier cannot do (the NIC's writes never pass through it);
 *   4. the READY store, then, when the status word is GPU memory mapped
 *      write-combined for the CPU, rte_wmb() again: not for ordering but
 *      so that READY leaves the write-combining buffer now rather than
 *      whenever the buffer is next flushed.
 * Collect ordering: DONE read, then rte_rmb(): the results are read after
 * it (pairs with the kernel's system-scope release of DONE).
 *
 * Lap tags (GPUCOMM_RING_TAGS, gpucomm_layout.h): each entry's size word
 * carries the item's lap, stored with its address, and entry 0's the
 * item's count: gpucomm_ring_fill_mbufs() stores entry 0 last, with the
 * count; for entries stored one by one (gpucomm_ring_set_pkt) publish
 * stores entry 0's size word again with the count. A worker that polls
 * for READY loads the first GPUCOMM_TAG_WINDOW entries at the same time
 * and keeps them once they prove themselves current: no PCIe read after
 * READY for an item of up to that many packets. An entry is written at
 * most once a lap: once the count is stored (fill_mbufs returned 0), the
 * item is final for the lap: publish it with that count (publish refuses
 * another), after a failed publish publish it again, or initialise the
 * ring again. A fill that fails part way stores no count that lap: the
 * item is then loaded after READY.
 */
#ifndef GPUCOMM_RING_H
#define GPUCOMM_RING_H

#include <errno.h>
#include <stdint.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#ifdef RTE_ARCH_X86_64
#include <emmintrin.h>
#endif

#include "gpucomm_kernel.h"
#include "gpucomm_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rte_gpu_wmb() before READY: packets in GPU memory written by a NIC. */
#define GPUCOMM_RING_GPU_WMB 1u
/* Lap tags for the kernel's prefetch (above): every item's packet list
 * holds at least GPUCOMM_TAG_WINDOW entries, filled by
 * gpucomm_ring_set_pkt() or gpucomm_ring_fill_mbufs(). */
#define GPUCOMM_RING_TAGS 2u
/* With GPUCOMM_RING_TAGS: side records (gpucomm_layout.h), written by
 * gpucomm_ring_set_side(); items of at most GPUCOMM_SIDE_PKTS_MAX
 * packets. */
#define GPUCOMM_RING_SIDE 4u

struct gpucomm_ring {
	struct rte_gpu_comm_list *list;
	uint32_t n_items;
	uint32_t head;		/* next item to fill */
	uint32_t tail;		/* oldest item in flight */
	int16_t dev_id;
	uint8_t gpu_wmb;	/* GPUCOMM_RING_GPU_WMB given */
	uint8_t wc_status;	/* status words outside EAL memory: GPU
				 * memory mapped for the CPU */
	uint8_t tail_done;	/* collect saw the tail item DONE */
	uint8_t tags;		/* GPUCOMM_RING_TAGS given */
	uint8_t side;		/* GPUCOMM_RING_SIDE given */
	uint8_t tag_burnt;	/* a fill of the head item failed this lap:
				 * no count stored for it (its entries may
				 * have been written twice) */
	uint32_t lap;		/* the head item's lap: head wraps counted */
	uint32_t tag_n;		/* the count fill_mbufs stored in the head
				 * item's entry 0, or 0 */
	/* In-flight accounting: items and packets published and not yet
	 * released, and how many items ever were (published is the next
	 * item's sequence number, the kernel's seq). */
	uint32_t inflight;
	uint64_t inflight_pkts;
	uint64_t published;
	uint64_t released;
};

/*
 * Use n_items items of list (from rte_gpu_comm_create_list(dev_id, ...))
 * as a ring. Every item is set FREE with no packets, made visible and
 * read back: rte_gpu_comm_create_list() of DPDK 22.11 leaves item 0's
 * status as it found it when the statuses are in GPU memory, and GPU
 * memory is not cleared, so a READY left by an earlier user would put a
 * kernel a lap ahead. Without a CPU mapping of GPU memory (GDRCopy), the
 * same function leaks one GPU page per list until the device closes
 * (doc/gpu_cuda.md): create lists once, not per run of a loop.
 * flags: GPUCOMM_RING_*.
 * 0; -EINVAL (bad argument, said why), a negative errno from gpudev, or
 * -EIO when a status reads back other than FREE.
 */
int gpucomm_ring_init(struct gpucomm_ring *r, int16_t dev_id,
		struct rte_gpu_comm_list *list, uint32_t n_items, unsigned int flags);

static inline uint32_t
gpucomm_ring_inflight(const struct gpucomm_ring *r)
{
	return r->inflight;
}

/* The head item, FREE, when the ring has room; else NULL (ring full). */
static inline struct rte_gpu_comm_list *
gpucomm_ring_next(const struct gpucomm_ring *r)
{
	if (unlikely(r->inflight == r->n_items))
		return NULL;
	return &r->list[r->head];
}

/* The head item is in flight with n_pkts packets: head on. */
static inline void
gpucomm_ring_advance(struct gpucomm_ring *r, uint32_t n_pkts)
{
	if (++r->head == r->n_items) {
		r->head = 0;
		r->lap++;
	}
	r->tag_n = 0;
	r->tag_burnt = 0;
	r->inflight++;
	r->inflight_pkts += n_pkts;
	r->published++;
}

/*
 * One entry, address and size word, as one 16-byte store on x86: a
 * worker that loads the entry with one 16-byte load and finds its tag
 * current finds its address current too. An aligned 16-byte SSE store
 * lies in one cache line and leaves the store buffer at once (CPUs with
 * AVX document it atomic), and x86 makes stores visible in program
 * order, so no barrier between entries; one store rather than two lets
 * the compiler keep the loop free of barriers (rte_io_wmb(), a compiler
 * barrier on x86, would reload the ring's fields every entry). Elsewhere
 * the address, a store barrier, then the size word.
 */
static inline void
gpucomm_ring_store_pkt(struct rte_gpu_comm_pkt *e, uintptr_t addr,
		uint64_t size_word)
{
#ifdef RTE_ARCH_X86_64
	_mm_storeu_si128((__m128i *)(void *)e,
		_mm_set_epi64x((long long)size_word, (long long)addr));
#else
	e->addr = addr;
	rte_io_wmb();
	e->size = size_word;
#endif
}

/* The high half of the head item's size words: the lap tag with
 * GPUCOMM_RING_TAGS (count: entry 0's), else 0. */
static inline uint64_t
gpucomm_ring_tag_word(const struct gpucomm_ring *r, uint32_t count)
{
	return r->tags ? gpucomm_tag_size(0, r->lap, count) : 0;
}

/*
 * Entry e of the head item, tag its gpucomm_ring_tag_word(r, 0) (taken
 * once by a caller that fills many, whose stores through packet pointers
 * would otherwise have the ring's lap loaded again each entry): on a
 * tagged ring address and tagged size in one store, which a worker's
 * prefetch reads as one; untagged the two plain stores.
 */
static __rte_always_inline void
gpucomm_ring_put_pkt(struct rte_gpu_comm_pkt *e, uintptr_t addr, uint32_t size,
		uint64_t tag)
{
	if (tag != 0) {
		gpucomm_ring_store_pkt(e, addr, tag | size);
	} else {
		e->addr = addr;
		e->size = size;
	}
}

/*
 * Entry e of the head item: the packet's address and its size, with the
 * head's lap tag on a tagged ring (gpucomm_layout.h); entry 0's count is
 * then stored by publish. With GPUCOMM_RING_TAGS an entry is written
 * once a lap.
 */
static inline void
gpucomm_ring_set_pkt(const struct gpucomm_ring *r, struct rte_gpu_comm_pkt *e,
		uintptr_t addr, uint32_t size)
{
	gpucomm_ring_put_pkt(e, addr, size, gpucomm_ring_tag_word(r, 0));
}

/* Every GPUCOMM_TAG_REFRESH laps (lap 0 included) the window's entries
 * past the item's count are tagged with no count, which bounds how old
 * a stale entry's lap can be (the wrap-around argument in
 * gpucomm_layout.h). */
static inline void
gpucomm_ring_refresh_tags(const struct gpucomm_ring *r,
		struct rte_gpu_comm_pkt *e, uint32_t n_pkts)
{
	if (unlikely((r->lap & (GPUCOMM_TAG_REFRESH - 1)) == 0))
		for (uint32_t i = n_pkts; i < GPUCOMM_TAG_WINDOW; i++)
			e[i].size = gpucomm_tag_size((uint32_t)e[i].size,
				r->lap, 0);
}

/*
 * A tagged ring's item filled entry by entry (gpucomm_ring_set_pkt): at
 * publish, entry 0's size word again, now with the count, after every
 * entry, and the refresh. No barrier: entry 0's address was stored
 * before, and the count is a hint the worker checks itself; READY's
 * ordering is publish's. Nothing on an untagged ring, for an item whose
 * count fill_mbufs stored, or after a failed fill (tag_burnt).
 */
static inline void
gpucomm_ring_commit_tags(const struct gpucomm_ring *r,
		struct rte_gpu_comm_list *it, uint32_t n_pkts)
{
	struct rte_gpu_comm_pkt *e = it->pkt_list;

	if (likely(!r->tags || r->tag_n == n_pkts) || r->tag_burnt)
		return;
	gpucomm_ring_refresh_tags(r, e, n_pkts);
	e[0].size = gpucomm_tag_size((uint32_t)e[0].size, r->lap, n_pkts);
}

/* A fill of the head item by gpucomm_ring_set_pkt() that stopped part
 * way (its entries written this lap may be written again with other
 * values): publish stores no count this lap, and the worker loads the
 * item after READY. */
static inline void
gpucomm_ring_tag_abandon(struct gpucomm_ring *r)
{
	r->tag_burnt = 1;
}

/* Publish of n_pkts on a tagged ring whose fill_mbufs stored another
 * count (the item is final for the lap, gpucomm_layout.h), or of more
 * packets than a ring with side records has entries for: -EINVAL. A
 * count fill_mbufs stored was checked then. */
static inline int
gpucomm_ring_tag_check(const struct gpucomm_ring *r, uint32_t n_pkts)
{
	if (likely(!r->tags || r->tag_n == n_pkts))
		return 0;
	return r->tag_n != 0 ||
		(r->side && n_pkts > GPUCOMM_SIDE_PKTS_MAX) ? -EINVAL : 0;
}

/*
 * Side slot k (< GPUCOMM_SIDE_MAX) of the head item of a ring with
 * GPUCOMM_RING_SIDE: `word` with the head's lap tag, one 16-byte store
 * (gpucomm_layout.h). Before publish, once a lap, and every slot the
 * kernel reads at every publish: a worker takes a slot current by its
 * tag, loaded before READY. READY's ordering (publish's rte_wmb) covers
 * it as the entries. 0, or -EINVAL (no side records, k out of range).
 */
static inline int
gpucomm_ring_set_side(const struct gpucomm_ring *r, uint32_t k, uint64_t word)
{
	if (unlikely(!r->side || k >= GPUCOMM_SIDE_MAX))
		return -EINVAL;
	gpucomm_ring_store_pkt(&r->list[r->head].pkt_list[GPUCOMM_SIDE_ENTRY(k)],
		(uintptr_t)word, gpucomm_tag_size(0, r->lap, 0));
	return 0;
}

/*
 * Steps 1 to 3 of the publish ordering for the head item, READY left to
 * the caller: 0 with *item set, or publish's errors (nothing published).
 */
static inline int
gpucomm_ring_prepare(struct gpucomm_ring *r, uint32_t n_pkts,
		struct rte_gpu_comm_list **item)
{
	struct rte_gpu_comm_list *it;
	int rc;

	if (unlikely(r->inflight == r->n_items))
		return -ENOSPC;
	if (unlikely(n_pkts == 0 || n_pkts > RTE_GPU_COMM_LIST_PKTS_MAX))
		return -EINVAL;
	it = &r->list[r->head];
	RTE_GPU_VOLATILE(it->num_pkts) = n_pkts;
	/* Entries, side data and count globally visible before READY. */
	rte_wmb();
	if (r->gpu_wmb) {
		/* The NIC's writes to GPU memory visible to the GPU before
		 * READY. */
		rc = rte_gpu_wmb(r->dev_id);
		if (unlikely(rc != 0))
			return rc;
	}
	*item = it;
	return 0;
}

/*
 * Publishes the head item with n_pkts packets (entries 0 .. n_pkts - 1
 * filled by the caller): the ordering described at the top, head on.
 * 0; -ENOSPC when the ring is full, -EINVAL for 0 or more than
 * RTE_GPU_COMM_LIST_PKTS_MAX packets (nothing published: the caller still
 * holds its packets), or rte_gpu_wmb()'s or the status store's error
 * (nothing published either).
 */
static inline int
gpucomm_ring_publish(struct gpucomm_ring *r, uint32_t n_pkts)
{
	struct rte_gpu_comm_list *it;
	int rc;

	if (unlikely(gpucomm_ring_tag_check(r, n_pkts) != 0))
		return -EINVAL;
	rc = gpucomm_ring_prepare(r, n_pkts, &it);
	if (unlikely(rc != 0))
		return rc;
	/* Filled entry by entry: the count now. */
	gpucomm_ring_commit_tags(r, it, n_pkts);
	rc = rte_gpu_comm_set_status(it, RTE_GPU_COMM_LIST_READY);
	if (unlikely(rc != 0))
		return rc;
	if (r->wc_status)
		rte_wmb();	/* READY out of the write-combining buffer now */
	gpucomm_ring_advance(r, n_pkts);
	return 0;
}

/*
 * gpucomm_ring_publish with READY stored by a CUDA stream after the work
 * already queued on it (gpucomm_cuda_queue_ready), rather than by this
 * lcore: for an item whose packets a copy on that stream is still moving
 * into GPU memory. The lcore does not wait for the copy; the kernel sees
 * READY only once the copy is done. The entries, side data and count are
 * plain stores made visible by rte_wmb before the stream's store is
 * queued, and a NIC's writes into GPU memory by rte_gpu_wmb (with
 * GPUCOMM_RING_GPU_WMB: the copy may move only some of the item's
 * packets); the copy engine's writes are ordered by the stream. No
 * write-combining flush: the CPU stores no status.
 * 0; publish's errors; -EIO when the store could
 * not be queued (nothing published: the caller still holds its packets,
 * and the copy's target must not be reused before the stream is idle).
 */
static inline int
gpucomm_ring_publish_on_stream(struct gpucomm_ring *r, uint32_t n_pkts,
		void *stream)
{
	struct rte_gpu_comm_list *it;
	int rc;

	if (unlikely(gpucomm_ring_tag_check(r, n_pkts) != 0))
		return -EINVAL;
	rc = gpucomm_ring_prepare(r, n_pkts, &it);
	if (unlikely(rc != 0))
		return rc;
	if (unlikely(gpucomm_cuda_queue_ready(stream,
			(uint32_t *)it->status_d) != 0))
		return -EIO;
	/* Filled entry by entry: the count after the queueing, which can
	 * fail (the stream's READY may come first, and the worker then
	 * loads the item after READY). */
	gpucomm_ring_commit_tags(r, it, n_pkts);
	gpucomm_ring_advance(r, n_pkts);
	return 0;
}

/*
 * The tail item once DONE. 1 with *item set (its results may be read
 * until gpucomm_ring_release), 0 when nothing is in flight or the tail
 * item is not DONE yet (a later item's DONE waits for it: ring order),
 * -EIO when the kernel marked it ERROR, or gpudev's error.
 */
static inline int
gpucomm_ring_collect(struct gpucomm_ring *r, struct rte_gpu_comm_list **item)
{
	struct rte_gpu_comm_list *it;
	enum rte_gpu_comm_list_status st;
	int rc;

	if (r->inflight == 0)
		return 0;
	it = &r->list[r->tail];
	if (!r->tail_done) {
		rc = rte_gpu_comm_get_status(it, &st);
		if (unlikely(rc != 0))
			return rc;
		if (st != RTE_GPU_COMM_LIST_DONE)
			return unlikely(st == RTE_GPU_COMM_LIST_ERROR) ? -EIO : 0;
		/* Pairs with the kernel's release of DONE: the results are
		 * read after it. */
		rte_rmb();
		r->tail_done = 1;
	}
	*item = it;
	return 1;
}

/*
 * The collected tail item back to FREE with no packets; tail on. Not
 * rte_gpu_comm_cleanup_list(): it also zeroes every entry (three stores
 * per packet and a full barrier), which nothing needs (the next fill
 * overwrites what the kernel reads, num_pkts of them), and frees the
 * mbufs, which the caller does its own way. The kernel never acts on
 * FREE, so no barrier: the next publish's orders this before READY.
 * 0; -EINVAL when collect has not returned the tail item; gpudev's error.
 */
static inline int
gpucomm_ring_release(struct gpucomm_ring *r)
{
	struct rte_gpu_comm_list *it;
	int rc;

	if (unlikely(!r->tail_done))
		return -EINVAL;
	it = &r->list[r->tail];
	r->inflight_pkts -= it->num_pkts;
	RTE_GPU_VOLATILE(it->num_pkts) = 0;
	rc = rte_gpu_comm_set_status(it, RTE_GPU_COMM_LIST_FREE);
	if (unlikely(rc != 0))
		return rc;
	r->tail_done = 0;
	r->tail = r->tail + 1 == r->n_items ? 0 : r->tail + 1;
	r->inflight--;
	r->released++;
	return 0;
}

/* The k-th oldest item in flight (k < inflight), e.g. to free the mbufs
 * of items that will never come back. */
static inline struct rte_gpu_comm_list *
gpucomm_ring_inflight_item(const struct gpucomm_ring *r, uint32_t k)
{
	uint32_t i = r->tail + k;

	return &r->list[i >= r->n_items ? i - r->n_items : i];
}

/*
 * Forget every item in flight (the kernel died or never answered: they
 * will not come back). Returns how many there were; the caller freed their
 * packets (gpucomm_ring_inflight_item). Their statuses stay as they are:
 * gpucomm_ring_init() again before the ring is used with a new kernel.
 */
static inline uint32_t
gpucomm_ring_abandon(struct gpucomm_ring *r)
{
	uint32_t n = r->inflight;

	r->tail = r->head;
	r->inflight = 0;
	r->inflight_pkts = 0;
	r->tail_done = 0;
	return n;
}

/*
 * One round of the flag echo (gpucomm_echo_start*) from the CPU: stores
 * ask into the flag (host: the CPU's pointer; wc: a write-combined
 * mapping, GDRCopy) and spins until it reads want or the TSC passes
 * deadline. Returns the flag's last value: want, or what it held then.
 * Relaxed accesses: the flag carries nothing but itself, as the echo
 * reads it. The one place both the benchmarks' floor and a program's
 * same-run floor (gpugen_fill_floor) ask.
 */
static inline uint32_t
gpucomm_echo_ask(volatile uint32_t *host, int wc, uint32_t ask,
		uint32_t want, uint64_t deadline)
{
	unsigned int spins = 0;
	uint32_t v;

	__atomic_store_n(host, ask, __ATOMIC_RELAXED);
	if (wc)
		rte_wmb(); /* out of the write-combining buffer now */
	do {
		v = __atomic_load_n(host, __ATOMIC_RELAXED);
		if ((++spins & 1023) == 0 && rte_rdtsc() > deadline)
			break;
	} while (v != want);
	return v;
}

/*
 * gpucomm_ring_fill_mbufs() on a tagged ring: one pass, an entry a
 * 16-byte store as each mbuf is checked, entry 0 last with the count in
 * its tag: a worker keeps the entries only once entry 0 has it
 * (gpucomm_layout.h). A fill that fails part way has tagged some
 * entries of this lap, which a second fill would tag again with other
 * values: the item then gets no count this lap (tag_burnt), and the
 * worker loads it after READY.
 */
static inline int
gpucomm_ring_fill_tagged(struct gpucomm_ring *r, struct rte_gpu_comm_list *it,
		struct rte_mbuf **mbufs, uint32_t n)
{
	const uint64_t tag = gpucomm_tag_size(0, r->lap, 0);
	const uint64_t tag0 = gpucomm_tag_size(0, r->lap,
		r->tag_burnt ? 0 : n);
	/* In locals: the entries' stores may alias the item as far as the
	 * compiler knows, which would reload them every entry. */
	struct rte_gpu_comm_pkt *e = it->pkt_list;
	struct rte_mbuf **keep = it->mbufs;
	struct rte_mbuf *m0 = mbufs[0];

	if (unlikely(r->tag_n != 0))
		return -EALREADY;
	/* The side slots' entries are not the packets'. */
	if (unlikely(r->side && n > GPUCOMM_SIDE_PKTS_MAX))
		return -EINVAL;
	if (unlikely(m0 == NULL || m0->nb_segs != 1))
		goto bad;
	for (uint32_t i = 1; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];

		if (unlikely(m == NULL || m->nb_segs != 1))
			goto bad;
		gpucomm_ring_store_pkt(&e[i], rte_pktmbuf_mtod(m, uintptr_t),
			tag | m->data_len);
		keep[i] = m;
	}
	gpucomm_ring_refresh_tags(r, e, n);
	gpucomm_ring_store_pkt(&e[0], rte_pktmbuf_mtod(m0, uintptr_t),
		tag0 | m0->data_len);
	keep[0] = m0;
	if (!r->tag_burnt)
		r->tag_n = n;
	return 0;
bad:
	r->tag_burnt = 1;
	return -EINVAL;
}

/*
 * Fills the head item's entries from n single-segment mbufs whose bytes
 * the GPU reads where they are (addr = data, size = data_len; mbufs
 * kept in the item), for programs that need no more than
 * rte_gpu_comm_populate_list_pkts; then gpucomm_ring_publish(r, n).
 * 0, -ENOSPC (ring full), -EINVAL (n out of range, a NULL or chained
 * mbuf: the entries before it written, the item's count not; more than
 * GPUCOMM_SIDE_PKTS_MAX with side records: nothing written), -EALREADY
 * (a tagged ring's head item already filled: it is final for the lap).
 *
 * Untagged, the entry's two plain stores as each mbuf is checked: the
 * fill of a ring without tags, no slower for them being there
 * (bench/ring-fill-ab.sh).
 */
static inline int
gpucomm_ring_fill_mbufs(struct gpucomm_ring *r, struct rte_mbuf **mbufs,
		uint32_t n)
{
	struct rte_gpu_comm_list *it = gpucomm_ring_next(r);
	struct rte_gpu_comm_pkt *e;

	if (unlikely(it == NULL))
		return -ENOSPC;
	if (unlikely(n == 0 || n > RTE_GPU_COMM_LIST_PKTS_MAX))
		return -EINVAL;
	if (r->tags)
		return gpucomm_ring_fill_tagged(r, it, mbufs, n);
	e = it->pkt_list;
	for (uint32_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = mbufs[i];

		if (unlikely(m == NULL || m->nb_segs != 1))
			return -EINVAL;
		e[i].addr = rte_pktmbuf_mtod(m, uintptr_t);
		e[i].size = m->data_len;
		it->mbufs[i] = mbufs[i];
	}
	return 0;
}

/*
 * The persistent kernel's GPU-side setup for n_rings rings of n_items
 * items each (lists[r]): its quit flag (rte_gpu_comm_flag in host
 * memory) and its dispatch state (GPU memory from rte_gpu_mem_alloc),
 * and kp filled to point at them with bpq workers wanted per ring and the
 * default poll back-off. The state itself is set by the first launch
 * (gpucomm_launch_persistent), or by gpucomm_cuda_state_init for kernels
 * launched per item.
 */
struct gpucomm_kernel {
	int16_t dev_id;
	struct rte_gpu_comm_flag quit;
	int quit_ok;
	void *state;			/* GPU memory */
	size_t state_bytes;
	struct gpucomm_kparams kp;
};

/*
 * 0; -EINVAL (bad argument, said why), or gpudev's error (said what
 * failed); on error nothing is kept.
 */
int gpucomm_kernel_setup(struct gpucomm_kernel *k, int16_t dev_id,
		struct rte_gpu_comm_list *const *lists, uint32_t n_rings,
		uint32_t n_items, uint32_t bpq);

/* Raises the quit flag: once every item published came back. 0 or
 * gpudev's error. */
int gpucomm_kernel_quit(struct gpucomm_kernel *k);

/*
 * After the kernel quit and ended: the quit flag down again, so that the
 * kernel can be launched anew on the same setup (which sets its dispatch
 * state afresh: initialise the rings again too). 0 or gpudev's error.
 */
int gpucomm_kernel_rearm(struct gpucomm_kernel *k);

/* Frees what setup took. Only once no kernel runs on it. */
void gpucomm_kernel_teardown(struct gpucomm_kernel *k);

#ifdef __cplusplus
}
#endif

#endif /* GPUCOMM_RING_H */
