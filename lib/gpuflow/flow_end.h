/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ending records into the export ring: ring positions reserved (one
 * fetch_add within a slack), records written and published, skipped
 * positions, and a whole slot's live flow ended at once.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_END_H
#define GPURX_FLOW_END_H

#include "flow_due.h"
#include "flow_key.h"
#ifdef __CUDACC__
#include "gpucomm_dev.cuh"
#endif

/*
 * On the GPU, at most one read of the consumer's tail over PCIe every
 * this many ns; the other threads that find the ring full meanwhile
 * wait (at most GPURX_FLOW_TAIL_WAIT_NS) for that read's result and take
 * it. Every reserving thread reading it once the ring filled (a PCIe
 * round trip each, thousands at once) made the scans take seconds and
 * the packet kernel's inserts a quarter as fast: the exporter collapsed
 * to a fifth of its capacity just past it (H200,
 * doc/perf/flow-export-udp-1m/). Taking the cached tail without waiting
 * put ends off while the ring had room: at a scan's start the cache is a
 * tick old.
 */
#define GPURX_FLOW_TAIL_REREAD_NS 2000
#define GPURX_FLOW_TAIL_WAIT_NS 20000

/* The consumer's tail, in host memory: read only when the cached copy
 * says full (over PCIe from the GPU). Acquire: its reads of the old
 * records are done. On the GPU, another thread's read instead when one
 * began within GPURX_FLOW_TAIL_REREAD_NS: never newer than the tail, so
 * never more room than there is. */
GPURX_FN uint64_t
gpurx_flow_ring_tail_fresh(struct gpurx_flow_table *ft)
{
	uint64_t t;

#ifdef __CUDA_ARCH__
	uint64_t now = gpucomm_gpu_ns(), claim, seen;

	claim = gpurx_atomic_load_u64(&ft->ring_tail_read_ns, GPURX_RELAXED);
	if ((int64_t)(now - claim) >= GPURX_FLOW_TAIL_REREAD_NS) {
		seen = gpurx_atomic_cas_ord_u64(&ft->ring_tail_read_ns, claim,
			now, GPURX_RELAXED);
		if (seen == claim) {
			t = gpurx_atomic_load_acquire_sys_u64(&ft->ring->tail);
			gpurx_atomic_max_u64(&ft->ring_tail_seen, t);
			/* Release: ring_tail_seen has t before a waiter
			 * sees this read done. */
			gpurx_atomic_store_release_sys_u64(
				&ft->ring_tail_done_ns, now);
			return t;
		}
		claim = seen;	/* another thread's, newer */
	}
	/* Read by the thread that claimed it at claim: its result, once
	 * done (acquire: with ring_tail_seen as that thread left it). */
	for (const uint64_t start = now;;) {
		uint64_t done = gpurx_atomic_load_u64(&ft->ring_tail_done_ns,
			GPURX_ACQUIRE);

		if ((int64_t)(done - claim) >= 0)
			break;
		if (gpucomm_gpu_ns() - start > GPURX_FLOW_TAIL_WAIT_NS)
			break;
	}
	return gpurx_atomic_load_u64(&ft->ring_tail_seen, GPURX_RELAXED);
#else
	t = gpurx_atomic_load_acquire_sys_u64(&ft->ring->tail);
	gpurx_atomic_max_u64(&ft->ring_tail_seen, t);
	return t;
#endif
}

/*
 * Reserve n consecutive ring positions from *pos. Returns how many it
 * got: n, or fewer (0 when the ring is full). Nothing is counted: for a
 * reservation ahead of need (gpu_body.cuh reserves before its turn what
 * it expects to end), whose shortfall puts off no end yet.
 *
 * With a slack (gpurx_flow_table_set_ring_slack()), one fetch_add: a CAS
 * loop costs a round trip per contender and retry, and thousands of the
 * GPU's warps ending flows at once (the scan, at a million flows a
 * second) made one scan take half a second on the H100. Each reserver
 * checks the room under ring_limit, on a head and tail it read, then
 * adds; others add meanwhile, so the head can pass tail + limit, by at
 * most the slack: take the largest head h any check read before some
 * add; every add after h comes from a reserver whose check read at most
 * h (else its check read more), one add per reserver (a second one's
 * check reads its first add's result, past h), so the head is at most
 * h + (what reservers in progress at once take) <= tail + limit + slack
 * <= tail + size: never a record not yet read overwritten. Without a
 * slack, a CAS loop, exact to the ring's size.
 */
GPURX_FN uint32_t
gpurx_flow_ring_try_reserve(struct gpurx_flow_table *ft, uint32_t n,
		uint64_t *pos)
{
	const uint64_t size = ft->ring_size;
	uint64_t h = gpurx_atomic_load_u64(&ft->ring_head, GPURX_RELAXED);

	if (ft->ring_slack != 0) {
		const uint64_t limit = ft->ring_limit;
		uint64_t t = gpurx_atomic_load_u64(&ft->ring_tail_seen,
			GPURX_RELAXED);
		uint64_t got;

		/* h may be older than t (the consumer passed it since). */
		if ((h > t ? h - t : 0) + n > limit)
			t = gpurx_flow_ring_tail_fresh(ft);
		got = h > t ? h - t : 0;
		got = got >= limit ? 0 : limit - got;
		got = got < n ? got : n;
		if (got != 0)
			*pos = gpurx_atomic_fetch_add_ord_u64(&ft->ring_head,
				got, GPURX_RELAXED);
		return (uint32_t)got;
	}
	for (;;) {
		uint64_t t = gpurx_atomic_load_u64(&ft->ring_tail_seen,
			GPURX_RELAXED);
		uint64_t room = size - (h - t), got, seen;

		if (room < n) {
			t = gpurx_flow_ring_tail_fresh(ft);
			room = size - (h - t);
		}
		got = room < n ? room : n;
		if (got == 0)
			return 0;
		seen = gpurx_atomic_cas_ord_u64(&ft->ring_head, h, h + got,
			GPURX_RELAXED);
		if (seen == h) {
			*pos = h;
			return (uint32_t)got;
		}
		h = seen;
	}
}

/*
 * The same for ends decided now: each position short is an end put off,
 * counted in ring_full.
 */
GPURX_FN uint32_t
gpurx_flow_ring_reserve(struct gpurx_flow_table *ft, uint32_t n, uint64_t *pos)
{
	const uint32_t got = gpurx_flow_ring_try_reserve(ft, n, pos);

	if (got < n)
		gpurx_atomic_add_u64(&ft->ring_full, n - got);
	return got;
}

/* A reserved position left without a record. */
GPURX_FN void
gpurx_flow_ring_skip(struct gpurx_flow_table *ft, uint64_t pos)
{
	struct gpurx_flow_rec *rec =
		&ft->ring_recs[pos & (ft->ring_size - 1)];

	rec->reason = GPURX_FLOW_END_NONE;
	gpurx_flow_ring_publish(ft->ring_recs, ft->ring_size, pos,
		ft->ring_dev);
}

/* Move the tag of a slot this thread owns (BUSY or CLOSING) from `from`
 * to `to`, keeping the generation and the updaters' transient counts. */
GPURX_FN void
gpurx_flow_retag(struct gpurx_flow_entry *e, uint32_t from, uint32_t to)
{
	gpurx_atomic_fetch_add_ord_u64(&e->state,
		(uint64_t)to - (uint64_t)from, GPURX_RELEASE);
}

/* The lowest set bit of a non-zero mask. */
GPURX_FN uint32_t
gpurx_flow_ctz(uint32_t m)
{
#if GPURX_ON_DEVICE
	return (uint32_t)(__ffs(m) - 1);
#else
	return (uint32_t)__builtin_ctz(m);
#endif
}

/* Empty a record buffer nobody else writes now. Relaxed stores: the
 * release that hands the buffer on orders them. */
GPURX_FN void
gpurx_flow_acc_empty(struct gpurx_flow_acc *a)
{
	gpurx_atomic_store_relaxed_u64(&a->packets, 0);
	gpurx_atomic_store_relaxed_u64(&a->bytes, 0);
	gpurx_atomic_store_relaxed_u64(&a->first_seen, UINT64_MAX);
	gpurx_atomic_store_relaxed_u64(&a->last_seen, 0);
}

/* Two TTL halves (GPURX_FLOW_TTL_ENC) as one: each byte's maximum. */
GPURX_FN uint32_t
gpurx_flow_ttl_merge(uint32_t a, uint32_t b)
{
	const uint32_t lo = (a & 0xffu) > (b & 0xffu) ? a & 0xffu : b & 0xffu;
	const uint32_t hi = (a & 0xff00u) > (b & 0xff00u) ?
		a & 0xff00u : b & 0xff00u;

	return hi | lo;
}

/* Buffer x's TTL half set to f(half): merged with h (set), or cleared
 * (!set). Relaxed: ordered like the buffer's sums, by the holders'
 * releases and its writer's. */
GPURX_FN void
gpurx_flow_ttl_update(struct gpurx_flow_entry *e, uint32_t x, uint32_t h,
		int set)
{
	const uint32_t sh = GPURX_FLOW_TTL_SHIFT(x);
	uint32_t cur = gpurx_atomic_load_relaxed_u32(&e->ttl);

	for (;;) {
		const uint32_t half = set ? gpurx_flow_ttl_merge(
			GPURX_FLOW_TTL_HALF(cur, x), h) : 0;
		const uint32_t want = (cur & ~(0xffffu << sh)) | half << sh;
		uint32_t seen;

		if (want == cur)
			return;
		seen = gpurx_atomic_cas_u32(&e->ttl, cur, want);
		if (seen == cur)
			return;
		cur = seen;
	}
}

/* Buffer x's TTL half, read like its sums. */
GPURX_FN uint32_t
gpurx_flow_ttl_of(const struct gpurx_flow_entry *e, uint32_t x)
{
	return GPURX_FLOW_TTL_HALF(gpurx_atomic_load_relaxed_u32(&e->ttl), x);
}

/*
 * Write a record into the reserved ring position pos and publish it (an
 * empty record, no packets, is published as a skipped position). ttl:
 * its packets' TTL half (GPURX_FLOW_TTL_ENC); attr: its flow's.
 */
GPURX_FN void
gpurx_flow_put(struct gpurx_flow_table *ft, uint64_t pos, const void *key,
		uint64_t packets, uint64_t bytes, uint64_t first, uint64_t last,
		uint32_t tcp_flags, uint16_t queue, uint32_t why, uint32_t ttl,
		const struct gpurx_flow_attr *attr)
{
	struct gpurx_flow_rec *rec = &ft->ring_recs[pos & (ft->ring_size - 1)];

	if (packets == 0) {
		gpurx_flow_ring_skip(ft, pos);
		return;
	}
	memcpy(&rec->key, key, sizeof(rec->key));
	rec->packets = packets;
	rec->bytes = bytes;
	rec->first_ns = first;
	rec->last_ns = last;
	rec->queue = queue;
	rec->tcp_flags = (uint8_t)tcp_flags;
	rec->reason = (uint8_t)why;
	rec->ttl_min = GPURX_FLOW_TTL_MIN(ttl);
	rec->ttl_max = GPURX_FLOW_TTL_MAX(ttl);
	memcpy(&rec->attr, attr, sizeof(rec->attr));
	gpurx_flow_ring_publish(ft->ring_recs, ft->ring_size, pos,
		ft->ring_dev);
	gpurx_atomic_add_u64(&ft->ended[why & 7], 1);
}

/*
 * End the live flow in e as a whole, into the reserved ring position pos:
 * only when its state is still `seen` (READY, that generation) with
 * nobody pinning it. The slot is left tagged `next` (FREE, or BUSY for an
 * evicting inserter). Returns 1 ended, 0 not (pos then published empty).
 * why: PRESSURE ends it whatever its times; any other reason is the
 * scan's, decided on fields read before the CAS, and is decided again at
 * `now` once the slot is CLOSING: a packet may have pinned, updated and
 * let go of the slot in between (its state back to `seen`, the CAS
 * cannot tell), and the record it left may not be due. Then the slot is
 * reopened, READY as it was; lookups of the key wait while it is CLOSING
 * (gpurx_flow_find), so nobody inserted the key elsewhere meanwhile.
 */
GPURX_FN int
gpurx_flow_end_at(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t seen, uint32_t why, uint32_t next, uint64_t pos,
		uint64_t now)
{
	const uint64_t expect = seen & 0xffffffffull;
	const struct gpurx_flow_acc *a;
	uint64_t r;
	uint32_t b;

	if (GPURX_FLOW_TAG(seen) != GPURX_FLOW_READY ||
			gpurx_atomic_cas_ord_u64(&e->state, expect,
				(expect & ~0xffull) | GPURX_FLOW_CLOSING,
				GPURX_ACQ_REL) != expect) {
		gpurx_flow_ring_skip(ft, pos);
		return 0;
	}
	/* CLOSING: nobody else writes the slot; the acquire above read the
	 * last unpin's release, so every holder's counts are seen and no
	 * buffer is CLOSED (its writer pinned the slot). */
	if (why != GPURX_FLOW_END_PRESSURE &&
			(why = gpurx_flow_entry_due(ft, e, now)) ==
			GPURX_FLOW_END_NONE) {
		gpurx_flow_ring_skip(ft, pos);
		/* Release: nothing was written; pairs with the lookups'
		 * acquire like any other retag. */
		gpurx_flow_retag(e, GPURX_FLOW_CLOSING, GPURX_FLOW_READY);
		return 0;
	}
	r = gpurx_atomic_load_u64(&e->rec, GPURX_RELAXED);
	b = GPURX_FLOW_REC_B(r);
	a = &e->acc[b];
	gpurx_flow_put(ft, pos, (const void *)&e->key,
		r & GPURX_FLOW_REC_LIVE ?
			gpurx_atomic_load_u64(&a->packets, GPURX_RELAXED) : 0,
		gpurx_atomic_load_u64(&a->bytes, GPURX_RELAXED),
		gpurx_atomic_load_u64(&a->first_seen, GPURX_RELAXED),
		gpurx_atomic_load_u64(&a->last_seen, GPURX_RELAXED),
		GPURX_FLOW_REC_FLAGS(r, b), e->queue[b], why,
		gpurx_flow_ttl_of(e, b), &e->attr);
	/* Release: the record was read out of the slot before its reuse. */
	gpurx_flow_retag(e, GPURX_FLOW_CLOSING, next);
	return 1;
}

/* The same, reserving its own ring position (none: 0, counted). */
GPURX_FN int
gpurx_flow_end(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t seen, uint32_t why, uint32_t next, uint64_t now)
{
	uint64_t pos;

	/* Somebody pins it: not now, and no position spent on it. */
	if (GPURX_FLOW_REFS(seen) != 0 ||
			gpurx_flow_ring_reserve(ft, 1, &pos) != 1)
		return 0;
	return gpurx_flow_end_at(ft, e, seen, why, next, pos, now);
}

#endif /* GPURX_FLOW_END_H */
