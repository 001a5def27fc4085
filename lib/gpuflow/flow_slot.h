/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet's slot: the probe from the key's home within its reach, the
 * wait for a CLOSING slot of the key, the insert under the home's lock,
 * the pin (step 1), and the count into a table whose flows never end.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_SLOT_H
#define GPURX_FLOW_SLOT_H

#include "flow_end.h"

/* A packet's worth of flow update. */
struct gpurx_flow_pkt {
	uint64_t bytes;
	uint64_t ts;
	uint32_t hash;
	uint8_t tcp_flags;
	uint8_t ttl;		/* in the padding: the struct stays 24 bytes */
	uint16_t queue;
};

/* Sums and times into a record buffer, relaxed: the ordering is the
 * caller's (a holder's release, or a table whose flows never end). */
GPURX_FN void
gpurx_flow_acc_add(struct gpurx_flow_acc *a, uint64_t packets,
		uint64_t bytes, uint64_t first, uint64_t last)
{
	if (packets != 0) {
		gpurx_atomic_add_u64(&a->packets, packets);
		gpurx_atomic_add_u64(&a->bytes, bytes);
	}
	if (first != UINT64_MAX)
		gpurx_atomic_min_u64(&a->first_seen, first);
	if (last != 0)
		gpurx_atomic_max_u64(&a->last_seen, last);
}

/*
 * A packet into the live record of a table whose flows never end (one
 * buffer, never switched); rec: the slot's record word, as read with
 * its state or later (its flags only grow: an older value shows fewer,
 * and costs an OR more; the OR itself follows the state's acquire, so
 * it lands after the inserter's first value). Only flags the word lacks
 * are ORed: the build that ORed for every TCP packet (a reduction, no
 * wait for it) was not faster on the H100 (git show
 * 405aef3:doc/performance.md, "Seventh session").
 */
GPURX_FN void
gpurx_flow_count_rec(struct gpurx_flow_entry *e,
		const struct gpurx_flow_pkt *p, uint64_t rec)
{
	const uint64_t fl = (uint64_t)p->tcp_flags <<
		GPURX_FLOW_REC_FLAGS_SHIFT(0);

	gpurx_atomic_add_u64(&e->acc[0].packets, 1);
	gpurx_atomic_add_u64(&e->acc[0].bytes, p->bytes);
	gpurx_atomic_min_u64(&e->acc[0].first_seen, p->ts);
	gpurx_atomic_max_u64(&e->acc[0].last_seen, p->ts);
	gpurx_flow_ttl_update(e, 0, GPURX_FLOW_TTL_ENC(p->ttl), 1);
	if (fl & ~rec)
		gpurx_atomic_or_u64(&e->rec, fl);
}

/* The same, loading the record word only for a packet with flags. */
GPURX_FN void
gpurx_flow_count(struct gpurx_flow_entry *e, const struct gpurx_flow_pkt *p)
{
	gpurx_flow_count_rec(e, p, p->tcp_flags == 0 ? 0 :
		gpurx_atomic_load_u64(&e->rec, GPURX_RELAXED));
}

/*
 * How many slots from home a lookup probes: up to the home's reach (a
 * relaxed read: a lookup that misses a key placed farther meanwhile goes
 * on to insert, and looks again under the home's lock, whose acquire
 * shows the reach its last holder left).
 */
GPURX_FN uint32_t
gpurx_flow_probe_len(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *home)
{
	const uint32_t r = gpurx_atomic_load_relaxed_u16(&home->reach);

	return r == GPURX_FLOW_REACH_ALL || r >= ft->max_probe ?
		ft->max_probe : r + 1;
}

/* Under home's insert lock: a key of home is placed d slots from it. */
GPURX_FN void
gpurx_flow_reach_at_least(struct gpurx_flow_entry *home, uint32_t d)
{
	const uint16_t want = d >= GPURX_FLOW_REACH_ALL ?
		(uint16_t)GPURX_FLOW_REACH_ALL : (uint16_t)d;

	/* Before the key's slot is published READY (release) and the lock
	 * released: whoever finds the key or takes the lock sees it. */
	if (gpurx_atomic_load_relaxed_u16(&home->reach) < want)
		gpurx_atomic_store_relaxed_u16(&home->reach, want);
}
/*
 * A slot holding the sought key is CLOSING: its closer may reopen it
 * (gpurx_flow_end_at), and a lookup that passed over it would insert the
 * key a second time. The closer waits for nothing while CLOSING (a copy
 * into a reserved ring position), so this wait is short; bounded all the
 * same, so a kernel never hangs on it. Returns the state after it.
 */
GPURX_FN uint64_t
gpurx_flow_closing_wait(struct gpurx_flow_entry *e)
{
	uint64_t s;
	uint32_t spins = 0;

	while (GPURX_FLOW_TAG(s = gpurx_atomic_load_u64(&e->state,
			GPURX_ACQUIRE)) == GPURX_FLOW_CLOSING &&
			++spins < GPURX_FLOW_SPIN_MAX)
		gpurx_cpu_relax();
	return s;
}

/*
 * How a lookup pins the key's slot (the pin argument of
 * gpurx_flow_find_rec() and its callers; 0: not at all).
 * PIN_BOTH prefetches both record buffers, for a plan that loads both
 * (gpurx_flow_plan_in_turn()). PIN_LIVE prefetches only the live one
 * (the record word read beside the state says which) and hands that word
 * to the plan when the pin was alone on the slot
 * (gpurx_flow_plan_rec()): the per-packet update reads only the live
 * buffer, and the other one's sector, fetched into L2 for every packet,
 * crowded out the live flows' sectors at a million flows.
 */
#define GPURX_FLOW_PIN_BOTH 1
#define GPURX_FLOW_PIN_LIVE 2

/* A record word no slot holds (bit 63 is never set): a pin that was not
 * alone on its slot, whose plan reads the word itself. */
#define GPURX_FLOW_REC_UNKNOWN UINT64_MAX

/* What gpurx_flow_probe found at one slot. */
#define GPURX_FLOW_PROBE_ON 0	/* not the key: look at the next slot */
#define GPURX_FLOW_PROBE_HIT 1	/* the key's READY slot (pinned if asked) */
#define GPURX_FLOW_PROBE_END 2	/* EMPTY: the key is in no later slot */

/*
 * One slot of gpurx_flow_find's walk. A pin that finds the state moved
 * on since it was read looks at the slot again: the slot may have been
 * ended (then the key is not here), or a scan may be closing it, or have
 * reopened it (CLOSING -> READY), with the key still in it. Going on to
 * the next slot then inserted the key a second time beside its reopened
 * slot (the GPU flow test under load: one key live twice, 1 run in ~6).
 */
GPURX_FN int
gpurx_flow_probe(struct gpurx_flow_entry *e, const struct gpurx_flow_key *key,
		uint32_t hash, int pin, uint64_t *rec)
{
	for (uint32_t tries = 0; tries < GPURX_FLOW_SPIN_MAX; tries++) {
		uint64_t s, old;

		/* The record word comes with the state, in the same request:
		 * a table whose flows never end counts with it (an older
		 * value than the state's shows fewer flags: an OR more). */
		gpurx_atomic_load_x2_u64(&e->state, &s, rec, GPURX_ACQUIRE);

		if (GPURX_FLOW_TAG(s) == GPURX_FLOW_CLOSING &&
				gpurx_flow_slot_holds(e, key, hash))
			s = gpurx_flow_closing_wait(e);
		if (GPURX_FLOW_TAG(s) == GPURX_FLOW_EMPTY)
			return GPURX_FLOW_PROBE_END;
		if (GPURX_FLOW_TAG(s) != GPURX_FLOW_READY ||
				!gpurx_flow_slot_holds(e, key, hash))
			return GPURX_FLOW_PROBE_ON;
		if (!pin)
			return GPURX_FLOW_PROBE_HIT;
		/* The plan reads the record buffers next. */
		if (pin == GPURX_FLOW_PIN_LIVE) {
			gpurx_prefetch(&e->acc[GPURX_FLOW_REC_B(*rec)]);
		} else {
			gpurx_prefetch(&e->acc[0]);
			gpurx_prefetch(&e->acc[1]);
		}
		old = gpurx_atomic_fetch_add_ord_u64(&e->state, GPURX_FLOW_REF,
			GPURX_ACQUIRE);
		if ((old & 0xffffffffull) == (s & 0xffffffffull)) {
			/*
			 * Alone (no pin before this one): every earlier
			 * pinner let go, each with a release on the state
			 * after its commit, and this acquire read the last
			 * of them, so a plan from *rec reads the times of
			 * those commits. *rec itself, read before the pin,
			 * may be older than the word: then the commit's CAS
			 * fails and the plan is made again from a fresh
			 * read. Not alone, another holder may commit after
			 * *rec was read with nothing ordering its times
			 * before the plan's reads: the plan reads the word.
			 */
			if (GPURX_FLOW_REFS(old) != 0)
				*rec = GPURX_FLOW_REC_UNKNOWN;
			return GPURX_FLOW_PROBE_HIT;
		}
		/* Moved on since it was compared: not pinned; look again. */
		gpurx_atomic_fetch_add_ord_u64(&e->state,
			(uint64_t)0 - GPURX_FLOW_REF, GPURX_RELEASE);
	}
	return GPURX_FLOW_PROBE_ON;
}

/*
 * The key's READY slot in its window, or NULL. pin: hold it (tables
 * whose flows end: their slots are ended and reused), GPURX_FLOW_PIN_*.
 * Without, slots never end: a READY key never changes. *rec: the slot's
 * record word, read with its state (gpurx_flow_count_rec(); with
 * GPURX_FLOW_PIN_LIVE, gpurx_flow_plan_rec()'s).
 *
 * Measured on the H100 and not kept (issue 18, git show
 * 405aef3:doc/performance.md, "Seventh session"): the home slot probed outside the loop, and a
 * lookup that missed there loading the next slots' hashes at once
 * (from the entries, or packed after them). Nsight Compute showed fewer
 * stalls and fewer lanes idle, but the packet rate did not rise: the
 * packed hashes of a small table put every lookup on a few L2 slices.
 */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_find_rec(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint32_t hash, int pin,
		uint64_t *rec)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	const uint32_t mask = ft->capacity - 1;
	uint32_t idx = hash & mask;
	/* At least 1: the home's state is loaded beside its reach, not
	 * after it. */
	const uint32_t probe = gpurx_flow_probe_len(ft, &ents[idx]);
	uint32_t i = 0;

	do {
		const int r = gpurx_flow_probe(&ents[idx], key, hash, pin, rec);

		if (r != GPURX_FLOW_PROBE_ON)
			return r == GPURX_FLOW_PROBE_HIT ? &ents[idx] : NULL;
		idx = (idx + 1) & mask;
	} while (++i < probe);
	return NULL;
}

/* The same without the record word. */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_find(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		uint32_t hash, int pin)
{
	uint64_t rec;

	return gpurx_flow_find_rec(ft, key, hash, pin, &rec);
}

/*
 * Fill a slot this thread holds BUSY (state s) with the key and the
 * packet's attributes (NULL: none, zeros) and publish it READY: pinned
 * by this thread with both buffers empty (pinned), or with the packet
 * counted (a table whose flows never end).
 */
GPURX_FN void
gpurx_flow_fill(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t s, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p, const struct gpurx_flow_attr *attr,
		int pinned)
{
	const uint64_t low = s & 0xffffffffull;
	const uint64_t gen = ((low >> 8) + 1) & 0xffffffull;

	e->hash = p->hash;
	memcpy((void *)&e->key, key, sizeof(*key));
	if (attr != NULL)
		memcpy((void *)&e->attr, attr, sizeof(*attr));
	else
		memset((void *)&e->attr, 0, sizeof(e->attr));
	e->ttl = pinned ? 0 : GPURX_FLOW_TTL_ENC(p->ttl);
	gpurx_flow_acc_empty(&e->acc[0]);
	gpurx_flow_acc_empty(&e->acc[1]);
	e->queue[0] = p->queue;
	e->queue[1] = p->queue;
	gpurx_atomic_store_relaxed_u64(&e->end_pos, 0);
	if (pinned) {
		gpurx_atomic_store_relaxed_u64(&e->rec, 0);
	} else {
		gpurx_atomic_store_relaxed_u64(&e->acc[0].packets, 1);
		gpurx_atomic_store_relaxed_u64(&e->acc[0].bytes, p->bytes);
		gpurx_atomic_store_relaxed_u64(&e->acc[0].first_seen, p->ts);
		gpurx_atomic_store_relaxed_u64(&e->acc[0].last_seen, p->ts);
		gpurx_atomic_store_relaxed_u64(&e->rec, GPURX_FLOW_REC_LIVE |
			(uint64_t)p->tcp_flags << GPURX_FLOW_REC_FLAGS_SHIFT(0));
		gpurx_atomic_add_u64(&ft->n_flows, 1);
	}
	/* BUSY -> READY with the next generation (wrapping inside its 24
	 * bits), the pins' count untouched but for this thread's own;
	 * release: the fields above are visible to whoever acquires READY. */
	gpurx_atomic_fetch_add_ord_u64(&e->state,
		((gen << 8) | GPURX_FLOW_READY) - low +
		(pinned ? GPURX_FLOW_REF : 0), GPURX_RELEASE);
}

/*
 * Under the key's insert lock: a slot for the key, BUSY and ours (its
 * state in *s), or NULL when the window has none.
 */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_claim(struct gpurx_flow_table *ft, uint32_t home, uint64_t *s)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	struct gpurx_flow_entry *victim = NULL;
	const uint32_t mask = ft->capacity - 1;
	uint64_t victim_s = 0, victim_last = UINT64_MAX;
	uint32_t victim_d = 0;
	uint32_t idx = home;

	for (uint32_t i = 0; i < ft->max_probe; i++, idx = (idx + 1) & mask) {
		struct gpurx_flow_entry *e = &ents[idx];
		uint64_t st = gpurx_atomic_load_u64(&e->state, GPURX_ACQUIRE);
		uint32_t tag = GPURX_FLOW_TAG(st);

		if ((tag == GPURX_FLOW_EMPTY || tag == GPURX_FLOW_FREE) &&
				GPURX_FLOW_REFS(st) == 0 &&
				gpurx_atomic_cas_ord_u64(&e->state, st,
					(st & ~0xffull) | GPURX_FLOW_BUSY,
					GPURX_ACQ_REL) == st) {
			*s = (st & ~0xffull) | GPURX_FLOW_BUSY;
			gpurx_flow_reach_at_least(&ents[home], i);
			return e;
		}
		if (tag == GPURX_FLOW_READY && GPURX_FLOW_REFS(st) == 0) {
			const uint64_t r = gpurx_atomic_load_u64(&e->rec,
				GPURX_RELAXED);
			uint64_t last = gpurx_atomic_load_u64(
				&e->acc[GPURX_FLOW_REC_B(r)].last_seen,
				GPURX_RELAXED);

			if (last < victim_last) {
				victim = e;
				victim_s = st;
				victim_d = i;
				victim_last = last;
			}
		}
	}
	/* Table pressure: the flow seen longest ago in the window ends. */
	if (ft->ring != NULL && victim != NULL &&
			gpurx_flow_end(ft, victim, victim_s,
				GPURX_FLOW_END_PRESSURE, GPURX_FLOW_BUSY, 0)) {
		*s = ((victim_s & 0xffffffffull) & ~0xffull) | GPURX_FLOW_BUSY;
		gpurx_flow_reach_at_least(&ents[home], victim_d);
		return victim;
	}
	return NULL;
}

/* Take the key's home lock; 0 when it stays held too long (overflow). */
GPURX_FN int
gpurx_flow_home_lock(struct gpurx_flow_entry *home)
{
	uint32_t spins = 0;

	while (!gpurx_atomic_trylock_u16(&home->lock)) {
		if (++spins > GPURX_FLOW_SPIN_MAX)
			return 0;
		gpurx_cpu_relax();
	}
	return 1;
}

GPURX_FN void
gpurx_flow_overflow(struct gpurx_flow_table *ft, uint64_t bytes)
{
	gpurx_atomic_add_u64(&ft->overflow_pkts, 1);
	gpurx_atomic_add_u64(&ft->overflow_bytes, bytes);
}

/*
 * Step 1, pin (not ordered; a table whose flows end): the slot of the
 * packet's key, inserted if absent (with attr, may be NULL), pinned by
 * this packet (pin: GPURX_FLOW_PIN_*); NULL when the window has no room
 * for it (the packet went to the overflow counters). *rec: for
 * gpurx_flow_plan_rec() (GPURX_FLOW_REC_UNKNOWN but for a key found by
 * a GPURX_FLOW_PIN_LIVE pin alone on its slot).
 */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_pin_rec(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, const struct gpurx_flow_pkt *p,
		const struct gpurx_flow_attr *attr, int pin, uint64_t *rec)
{
	struct gpurx_flow_entry *home, *e;
	uint64_t s;

	if ((e = gpurx_flow_find_rec(ft, key, p->hash, pin, rec)) != NULL) {
		if (pin != GPURX_FLOW_PIN_LIVE)
			*rec = GPURX_FLOW_REC_UNKNOWN;
		return e;
	}
	*rec = GPURX_FLOW_REC_UNKNOWN;
	/* Not there: insert under the home slot's lock, after looking again
	 * (another inserter of the key may have been first). */
	home = &gpurx_flow_entries(ft)[p->hash & (ft->capacity - 1)];
	if (!gpurx_flow_home_lock(home)) {
		gpurx_flow_overflow(ft, p->bytes);
		return NULL;
	}
	e = gpurx_flow_find(ft, key, p->hash, pin);
	if (e == NULL && (e = gpurx_flow_claim(ft,
			p->hash & (ft->capacity - 1), &s)) != NULL)
		gpurx_flow_fill(ft, e, s, key, p, attr, 1);
	gpurx_atomic_unlock_u16(&home->lock);
	if (e == NULL)
		gpurx_flow_overflow(ft, p->bytes);
	return e;
}

/* The same, both buffers prefetched, for a plan that reads the word
 * itself. */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_pin_attr(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, const struct gpurx_flow_pkt *p,
		const struct gpurx_flow_attr *attr)
{
	uint64_t rec;

	return gpurx_flow_pin_rec(ft, key, p, attr, GPURX_FLOW_PIN_BOTH, &rec);
}

/* The same without attributes. */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_pin(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p)
{
	return gpurx_flow_pin_attr(ft, key, p, NULL);
}

#endif /* GPURX_FLOW_SLOT_H */
