/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A group of one flow's packets into its records: plan (step 2, in the
 * flow's order), commit (step 3, a CAS of the record word), finish
 * (step 4: sums in, holders let go, closed buffers written out), and
 * the per-packet update built on them.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_RECORD_H
#define GPURX_FLOW_RECORD_H

#include "flow_slot.h"

/* Packets of a group that go into one record. */
struct gpurx_flow_seg {
	uint64_t packets;
	uint64_t bytes;
	uint64_t first;
	uint64_t last;
	uint32_t flags;
	uint32_t ttl;		/* their TTLs (GPURX_FLOW_TTL_ENC merged) */
};

/* What a group of one flow's packets does to it (steps 2 to 4). */
struct gpurx_flow_plan {
	uint64_t seen;		/* the record word as the plan read it */
	uint64_t first, last;	/* the live record's times as read */
	struct gpurx_flow_seg s0;	/* into the live record (its times
					 * and flags with the record's) */
	struct gpurx_flow_seg sk;	/* the new live record (ends != 0) */
	uint32_t ends;		/* records the group ends: ring positions */
	uint32_t why0;		/* why the live record ends */
	uint32_t held;		/* committed: bit b, buffer b held */
	uint16_t queue;
};

/*
 * The group's packets pk[j], j the set bits of mask in increasing order
 * (their arrival order), through the timeouts from the live record as
 * the plan read it; noend: nothing ends (no ring room). e NULL: fill
 * the plan's segments and ends (step 2). e set (the pinned flow): write
 * the records that start and end within the group, the 2nd to the
 * ends-th, to ring positions pos + 1, ... (step 4: the walk is the same,
 * so are they).
 */
GPURX_FN void
gpurx_flow_walk(struct gpurx_flow_table *ft, struct gpurx_flow_plan *pl,
		const struct gpurx_flow_pkt *pk, uint32_t mask, int noend,
		const struct gpurx_flow_entry *e, uint64_t pos)
{
	const uint32_t b = GPURX_FLOW_REC_B(pl->seen);
	int live = (pl->seen & GPURX_FLOW_REC_LIVE) != 0;
	struct gpurx_flow_seg seg;
	uint32_t k = 0;

	seg.packets = 0;
	seg.bytes = 0;
	seg.first = pl->first;
	seg.last = pl->last;
	seg.flags = GPURX_FLOW_REC_FLAGS(pl->seen, b);
	seg.ttl = 0;
	while (mask != 0) {
		const struct gpurx_flow_pkt *p = &pk[gpurx_flow_ctz(mask)];
		uint32_t why = GPURX_FLOW_END_NONE;

		mask &= mask - 1;
		/* A live record whose times have not landed (another thread
		 * started it at once) is not due. */
		if (!noend && live && gpurx_flow_times_landed(seg.first,
				seg.last))
			why = gpurx_flow_due(ft, seg.first, seg.last, seg.flags,
				p->ts);
		if (why != GPURX_FLOW_END_NONE) {
			if (k == 0 && e == NULL) {
				pl->s0 = seg;
				pl->why0 = why;
			} else if (k != 0 && e != NULL) {
				gpurx_flow_put(ft, pos + k,
					(const void *)&e->key, seg.packets,
					seg.bytes, seg.first, seg.last,
					seg.flags, pl->queue, why, seg.ttl,
					&e->attr);
			}
			k++;
			seg.packets = 0;
			seg.bytes = 0;
			seg.first = UINT64_MAX;
			seg.last = 0;
			seg.flags = 0;
			seg.ttl = 0;
		}
		live = 1;
		seg.packets++;
		seg.bytes += p->bytes;
		seg.first = p->ts < seg.first ? p->ts : seg.first;
		seg.last = p->ts > seg.last ? p->ts : seg.last;
		seg.flags |= p->tcp_flags;
		seg.ttl = gpurx_flow_ttl_merge(seg.ttl,
			GPURX_FLOW_TTL_ENC(p->ttl));
	}
	if (e != NULL)
		return;
	if (k == 0)
		pl->s0 = seg;
	else
		pl->sk = seg;
	pl->ends = k;
}

/* The plan of the group's packets from the record word r and the live
 * record's times as read (first, last). */
GPURX_FN void
gpurx_flow_plan_from(struct gpurx_flow_table *ft, uint64_t r, uint64_t first,
		uint64_t last, const struct gpurx_flow_pkt *pk, uint32_t mask,
		int noend, uint16_t queue, struct gpurx_flow_plan *pl)
{
	const struct gpurx_flow_seg none = { 0, 0, UINT64_MAX, 0, 0, 0 };

	pl->seen = r;
	pl->first = first;
	pl->last = last;
	pl->s0 = none;
	pl->sk = none;
	pl->ends = 0;
	pl->why0 = GPURX_FLOW_END_NONE;
	pl->held = 0;
	pl->queue = queue;
	gpurx_flow_walk(ft, pl, pk, mask, noend, NULL, 0);
}

/*
 * Step 2, plan (ORDERED): what the group's packets (pk[j], j in mask, in
 * arrival order, on RX queue `queue`) do to the pinned flow e.
 */
GPURX_FN void
gpurx_flow_plan(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		const struct gpurx_flow_pkt *pk, uint32_t mask, int noend,
		uint16_t queue, struct gpurx_flow_plan *pl)
{
	/* Acquire: a buffer this word makes live was emptied, and started
	 * by the commit that switched to it, before (their releases). The
	 * times that commit and later ones added come after their CAS: one
	 * thread's order (the turn, or one thread per queue) shows them;
	 * racing threads may read them late (then a record may end a packet
	 * later or earlier than in arrival order, never lose one). */
	const uint64_t r = gpurx_atomic_load_u64(&e->rec, GPURX_ACQUIRE);
	uint64_t first, last;

	/* Both times in one request (one 16-byte word). */
	gpurx_atomic_load_x2_u64(&e->acc[GPURX_FLOW_REC_B(r)].first_seen,
		&first, &last, GPURX_RELAXED);
	gpurx_flow_plan_from(ft, r, first, last, pk, mask, noend, queue, pl);
}

/*
 * The same from the record word r its pin read (gpurx_flow_pin_rec()),
 * which spares the plan a round trip for the word: ordered by the pin,
 * alone on the slot, after every earlier commit (gpurx_flow_probe()
 * says why); a word since changed fails the commit, and the next plan
 * reads it. GPURX_FLOW_REC_UNKNOWN: gpurx_flow_plan().
 */
GPURX_FN void
gpurx_flow_plan_rec(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t r, const struct gpurx_flow_pkt *pk, uint32_t mask,
		int noend, uint16_t queue, struct gpurx_flow_plan *pl)
{
	uint64_t first, last;

	if (r == GPURX_FLOW_REC_UNKNOWN) {
		gpurx_flow_plan(ft, e, pk, mask, noend, queue, pl);
		return;
	}
	gpurx_atomic_load_x2_u64(&e->acc[GPURX_FLOW_REC_B(r)].first_seen,
		&first, &last, GPURX_RELAXED);
	gpurx_flow_plan_from(ft, r, first, last, pk, mask, noend, queue, pl);
}

/*
 * The same by a warp in its queue's order (gpu_body.cuh): the record
 * word and both buffers' times in one round trip, three 16-byte loads at
 * once, rather than the word and then its live buffer's times (the order
 * is the queue's critical path). Relaxed: the order's acquires, before,
 * ordered every earlier commit of this queue and, through each one's
 * acquire, the emptying of a buffer it made live. A buffer another
 * queue's commit switched to may be read with the times it held before
 * it was emptied: that record's boundary may move, as for any threads
 * racing on one flow without an order; no packet is lost.
 */
GPURX_FN void
gpurx_flow_plan_in_turn(struct gpurx_flow_table *ft,
		struct gpurx_flow_entry *e, const struct gpurx_flow_pkt *pk,
		uint32_t mask, int noend, uint16_t queue,
		struct gpurx_flow_plan *pl)
{
	uint64_t s, r, f0, l0, f1, l1;

	gpurx_atomic_load_x2_u64(&e->state, &s, &r, GPURX_RELAXED);
	gpurx_atomic_load_x2_u64(&e->acc[0].first_seen, &f0, &l0,
		GPURX_RELAXED);
	gpurx_atomic_load_x2_u64(&e->acc[1].first_seen, &f1, &l1,
		GPURX_RELAXED);
	(void)s;
	if (GPURX_FLOW_REC_B(r) != 0)
		gpurx_flow_plan_from(ft, r, f1, l1, pk, mask, noend, queue, pl);
	else
		gpurx_flow_plan_from(ft, r, f0, l0, pk, mask, noend, queue, pl);
}

/*
 * Step 2 by a group that may find itself alone on its flow, before its
 * queue's order (gpu_body.cuh): the plan as gpurx_flow_plan() makes it,
 * and whether the slot's pins are the group's `pins` alone. Alone, no
 * other packet of any queue is between its pin and its unpin on the
 * flow, so every packet before the group's (in every queue) has let go,
 * and the plan made now is the plan made in arrival order: the state's
 * acquire reads the last unpin, a release after that packet's commit and
 * times, and the times are read after it. The record word beside the
 * state is read without that order: if it is not the word the commit
 * finds, the CAS fails and the group plans again; if it is, the plan
 * made from it is the same.
 */
GPURX_FN int
gpurx_flow_plan_alone(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		const struct gpurx_flow_pkt *pk, uint32_t mask, int noend,
		uint16_t queue, uint32_t pins, struct gpurx_flow_plan *pl)
{
	uint64_t s, r, first, last;

	gpurx_atomic_load_x2_u64(&e->state, &s, &r, GPURX_ACQUIRE);
	gpurx_atomic_load_x2_u64(&e->acc[GPURX_FLOW_REC_B(r)].first_seen,
		&first, &last, GPURX_RELAXED);
	gpurx_flow_plan_from(ft, r, first, last, pk, mask, noend, queue, pl);
	return GPURX_FLOW_REFS(s) == pins;
}

/* The plan ends the live record but the other buffer still holds the
 * record ended before (its holders not all gone, or not written out):
 * plan again before reserving anything. */
GPURX_FN int
gpurx_flow_plan_blocked(const struct gpurx_flow_plan *pl)
{
	const uint32_t o = GPURX_FLOW_REC_B(pl->seen) ^ 1u;

	return pl->ends != 0 && ((pl->seen & GPURX_FLOW_REC_CLOSED) ||
		GPURX_FLOW_REC_HOLDERS(pl->seen, o) != 0);
}

/*
 * Step 3, commit (ORDERED), with the plan's ring positions pos ...
 * reserved when it ends records. Returns 1 committed (finish next), 0
 * the record word changed since the plan read it, -1 the plan ends the
 * live record but the other buffer is not emptied yet: plan again
 * (positions published empty by the caller).
 */
GPURX_FN int
gpurx_flow_commit(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		struct gpurx_flow_plan *pl, uint64_t pos)
{
	const uint64_t d = pl->seen;
	const uint32_t b = GPURX_FLOW_REC_B(d), o = b ^ 1u;
	uint64_t nd = d;
	uint32_t started = 0;

	pl->held = 0;
	if (pl->s0.packets != 0 || pl->ends != 0) {
		/* A holder on the live buffer: its packets' counts, or
		 * (ending it) the ring position stored below. */
		nd += GPURX_FLOW_REC_HOLD(b);
		nd |= (uint64_t)pl->s0.flags << GPURX_FLOW_REC_FLAGS_SHIFT(b);
		if (pl->s0.packets != 0 && !(d & GPURX_FLOW_REC_LIVE)) {
			nd |= GPURX_FLOW_REC_LIVE;
			started = 1;
		}
		pl->held |= 1u << b;
	}
	if (pl->ends != 0) {
		if ((d & GPURX_FLOW_REC_CLOSED) ||
				GPURX_FLOW_REC_HOLDERS(d, o) != 0)
			return -1;
		nd ^= GPURX_FLOW_REC_CUR;
		nd |= GPURX_FLOW_REC_CLOSED |
			(uint64_t)pl->why0 << GPURX_FLOW_REC_WHY_SHIFT |
			(uint64_t)pl->sk.flags << GPURX_FLOW_REC_FLAGS_SHIFT(o);
		nd += GPURX_FLOW_REC_HOLD(o);
		pl->held |= 1u << o;
		started += pl->ends;
	}
	/* Acquire: the other buffer's emptying (its writer's release);
	 * release: the next plan that reads this word reads what this one
	 * read before it. */
	if (gpurx_atomic_cas_ord_u64(&e->rec, d, nd, GPURX_ACQ_REL) != d)
		return 0;
	if (pl->ends != 0) {
		/* Only the switcher writes these, under its holds. */
		gpurx_atomic_store_relaxed_u64(&e->end_pos, pos);
		gpurx_atomic_store_relaxed_u16(&e->queue[o], pl->queue);
		gpurx_flow_acc_add(&e->acc[o], 0, 0, pl->sk.first,
			pl->sk.last);
	}
	/* The times the next plan reads; the sums wait for finish. */
	if (pl->s0.packets != 0)
		gpurx_flow_acc_add(&e->acc[b], 0, 0, pl->s0.first,
			pl->s0.last);
	if (started != 0)
		gpurx_atomic_add_u64(&ft->n_flows, started);
	return 1;
}

/*
 * The CLOSED buffer x's holders are gone (r: the record word after the
 * last let go, read by its acquire): write its record out at end_pos,
 * empty it, clear CLOSED.
 */
GPURX_FN void
gpurx_flow_write_out(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint32_t x, uint64_t r)
{
	struct gpurx_flow_acc *a = &e->acc[x];
	const uint32_t why = GPURX_FLOW_REC_WHY(r);
	const uint32_t flags = GPURX_FLOW_REC_FLAGS(r, x);

	gpurx_flow_put(ft, gpurx_atomic_load_u64(&e->end_pos, GPURX_RELAXED),
		(const void *)&e->key,
		gpurx_atomic_load_u64(&a->packets, GPURX_RELAXED),
		gpurx_atomic_load_u64(&a->bytes, GPURX_RELAXED),
		gpurx_atomic_load_u64(&a->first_seen, GPURX_RELAXED),
		gpurx_atomic_load_u64(&a->last_seen, GPURX_RELAXED), flags,
		gpurx_atomic_load_relaxed_u16(&e->queue[x]), why,
		gpurx_flow_ttl_of(e, x), &e->attr);
	gpurx_flow_acc_empty(a);
	gpurx_flow_ttl_update(e, x, 0, 0);
	/* Release: read out and emptied before the next switch to x (its
	 * CAS acquires). Nobody else changes these bits while CLOSED. */
	gpurx_atomic_fetch_add_ord_u64(&e->rec, (uint64_t)0 -
		(GPURX_FLOW_REC_CLOSED |
		 (uint64_t)why << GPURX_FLOW_REC_WHY_SHIFT |
		 (uint64_t)flags << GPURX_FLOW_REC_FLAGS_SHIFT(x)),
		GPURX_RELEASE);
}

/* A holder of buffer x lets go; the last one of a CLOSED buffer writes
 * its record out. */
GPURX_FN void
gpurx_flow_let_go(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint32_t x)
{
	/* Release: this holder's counts (and, for the switcher, end_pos)
	 * before; acquire: the other holders' releases, for the write-out. */
	const uint64_t r = gpurx_atomic_fetch_add_ord_u64(&e->rec,
		(uint64_t)0 - GPURX_FLOW_REC_HOLD(x), GPURX_ACQ_REL) -
		GPURX_FLOW_REC_HOLD(x);

	if (GPURX_FLOW_REC_HOLDERS(r, x) == 0 && (r & GPURX_FLOW_REC_CLOSED) &&
			GPURX_FLOW_REC_B(r) != x)
		gpurx_flow_write_out(ft, e, x, r);
}

/*
 * Step 4, finish (not ordered) a committed plan: the records within the
 * group written out, the sums added, the buffers let go, then the
 * group's `pins` pins of e.
 */
GPURX_FN void
gpurx_flow_finish(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		struct gpurx_flow_plan *pl, const struct gpurx_flow_pkt *pk,
		uint32_t mask, uint64_t pos, uint32_t pins)
{
	const uint32_t b = GPURX_FLOW_REC_B(pl->seen), o = b ^ 1u;

	if (pl->ends > 1)
		gpurx_flow_walk(ft, pl, pk, mask, 0, e, pos);
	gpurx_flow_acc_add(&e->acc[b], pl->s0.packets, pl->s0.bytes,
		UINT64_MAX, 0);
	gpurx_flow_ttl_update(e, b, pl->s0.ttl, 1);
	if (pl->ends != 0) {
		gpurx_flow_acc_add(&e->acc[o], pl->sk.packets, pl->sk.bytes,
			UINT64_MAX, 0);
		gpurx_flow_ttl_update(e, o, pl->sk.ttl, 1);
	}
	if (pl->held & (1u << b))
		gpurx_flow_let_go(ft, e, b);
	if (pl->held & (1u << o))
		gpurx_flow_let_go(ft, e, o);
	/* Release: everything above before the slot may end. */
	gpurx_atomic_fetch_add_ord_u64(&e->state,
		(uint64_t)0 - (uint64_t)pins * GPURX_FLOW_REF, GPURX_RELEASE);
}

/* Ring positions of a plan that did not commit, published empty. */
GPURX_FN void
gpurx_flow_skip_n(struct gpurx_flow_table *ft, uint64_t pos, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		gpurx_flow_ring_skip(ft, pos + i);
}

/*
 * Steps 2 to 4 by one thread for a group of packets of the pinned flow
 * e (the CPU's; the GPU runs them around its turn, gpu_body.cuh). The
 * group's `pins` pins are let go. rec: the record word as the pin read
 * it (gpurx_flow_pin_rec()), or GPURX_FLOW_REC_UNKNOWN.
 */
GPURX_FN void
gpurx_flow_account(struct gpurx_flow_table *ft,
		struct gpurx_flow_entry *e, const struct gpurx_flow_pkt *pk,
		uint32_t mask, uint16_t queue, uint32_t pins, uint64_t rec)
{
	struct gpurx_flow_plan pl;
	uint32_t spins = 0;
	uint64_t pos = 0;
	int noend = 0;

	for (;;) {
		int rc;

		/* The pin's word for the first plan only: a plan made again
		 * follows a word that changed. */
		gpurx_flow_plan_rec(ft, e, rec, pk, mask, noend, queue, &pl);
		rec = GPURX_FLOW_REC_UNKNOWN;
		if (gpurx_flow_plan_blocked(&pl)) {
			if (++spins > GPURX_FLOW_SPIN_MAX) {
				/* Put off like a full ring, and counted so. */
				gpurx_atomic_add_u64(&ft->ring_full, pl.ends);
				noend = 1;
			}
			gpurx_cpu_relax();
			continue;
		}
		if (pl.ends != 0) {
			uint32_t got = gpurx_flow_ring_reserve(ft, pl.ends, &pos);

			if (got < pl.ends) {
				/* Ring full (counted): the record stays live. */
				gpurx_flow_skip_n(ft, pos, got);
				noend = 1;
				continue;
			}
		}
		rc = gpurx_flow_commit(ft, e, &pl, pos);
		if (rc > 0)
			break;
		/* Somebody committed or let go since the plan read the word
		 * (or it became blocked): plan again. */
		gpurx_flow_skip_n(ft, pos, pl.ends);
	}
	gpurx_flow_finish(ft, e, &pl, pk, mask, pos, pins);
}

/*
 * gpurx_flow_update_pkt() for a key whose gpurx_flow_hash() the caller
 * has already, with the packet's TTL and attributes (NULL: zeros) too.
 */
GPURX_FN int
gpurx_flow_update_pkt_attr(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint32_t hash, uint64_t bytes,
		uint64_t ts, uint8_t tcp_flags, uint8_t ttl,
		const struct gpurx_flow_attr *attr, uint16_t queue)
{
	struct gpurx_flow_pkt p;
	struct gpurx_flow_entry *home, *e;
	uint64_t s;

	p.bytes = bytes;
	p.ts = ts;
	p.hash = hash;
	p.tcp_flags = tcp_flags;
	p.ttl = ttl;
	p.queue = queue;
	if (ft->ring != NULL) {
		if ((e = gpurx_flow_pin_rec(ft, key, &p, attr,
				GPURX_FLOW_PIN_LIVE, &s)) == NULL)
			return -1;
		gpurx_flow_account(ft, e, &p, 1u, queue, 1, s);
		return 0;
	}
	/* Flows never end: count where the key is, else insert it. */
	if ((e = gpurx_flow_find_rec(ft, key, hash, 0, &s)) != NULL) {
		gpurx_flow_count_rec(e, &p, s);
		return 0;
	}
	home = &gpurx_flow_entries(ft)[hash & (ft->capacity - 1)];
	if (!gpurx_flow_home_lock(home)) {
		gpurx_flow_overflow(ft, bytes);
		return -1;
	}
	if ((e = gpurx_flow_find(ft, key, hash, 0)) != NULL)
		gpurx_flow_count(e, &p);
	else if ((e = gpurx_flow_claim(ft, hash & (ft->capacity - 1),
			&s)) != NULL)
		gpurx_flow_fill(ft, e, s, key, &p, attr, 0);
	gpurx_atomic_unlock_u16(&home->lock);
	if (e != NULL)
		return 0;
	gpurx_flow_overflow(ft, bytes);
	return -1;
}

/* The same without TTL and attributes. */
GPURX_FN int
gpurx_flow_update_pkt_hashed(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint32_t hash, uint64_t bytes,
		uint64_t ts, uint8_t tcp_flags, uint16_t queue)
{
	return gpurx_flow_update_pkt_attr(ft, key, hash, bytes, ts, tcp_flags,
		0, NULL, queue);
}

/*
 * Account one packet of `bytes` bytes seen at `ts` (with these TCP flags,
 * on RX queue `queue`) to its flow. Returns 0, or -1 when it went to the
 * overflow counters.
 */
GPURX_FN int
gpurx_flow_update_pkt(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint64_t bytes, uint64_t ts,
		uint8_t tcp_flags, uint16_t queue)
{
	return gpurx_flow_update_pkt_hashed(ft, key, gpurx_flow_hash(key),
		bytes, ts, tcp_flags, queue);
}

/* The same without TCP flags, on queue 0. */
GPURX_FN int
gpurx_flow_update(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		uint64_t bytes, uint64_t ts)
{
	return gpurx_flow_update_pkt(ft, key, bytes, ts, 0, 0);
}

#endif /* GPURX_FLOW_RECORD_H */
