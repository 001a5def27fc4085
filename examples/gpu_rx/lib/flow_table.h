/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fixed-capacity flow table for GPU memory, updated by many threads at
 * once (and by host threads with the same code), with flow expiry: a
 * flow record ends on an idle timeout, an active timeout, a TCP FIN or
 * RST after a linger, or table pressure; the ended record goes to the
 * export ring (flow_ring.h) and its slot is reused, while packets keep
 * updating the table. Without a ring (no export configured) flows never
 * end: the table only grows and overflows, as a top-N table.
 *
 * Open addressing with linear probing within a window of max_probe slots
 * from the key's home slot (hash & mask). The table is one flat block
 * (header then entries, no pointers but the ring's: its header in host
 * memory the GPU reaches at the same address, its records in GPU memory
 * in GPU modes) so it can be copied between host and device memory as
 * is.
 *
 * Concurrency protocol. Each slot has a 64-bit state word:
 *   bits 0-7   tag: EMPTY (never used: ends every probe), BUSY (an
 *              inserter fills it), READY (a live flow), CLOSING (being
 *              exported), FREE (exported: reusable, does not end a probe)
 *   bits 8-31  generation, +1 each time the slot becomes READY
 *   bits 32-63 updaters inside the slot
 * - Update (the packet path): load the state (acquire), compare hash and
 *   key of a READY slot, then enter: fetch_add of one updater (acquire).
 *   If the tag and generation it returns are not those compared, the
 *   slot was ended and reused meanwhile: leave and probe on. Inside, the
 *   counters move by relaxed atomics; leave with fetch_sub (release).
 * - End (the timeouts, by the packet that finds its flow due or by the
 *   scan; pressure, by an inserter): reserve a ring position first, then
 *   CAS READY with no updater inside -> CLOSING (acquire and release: the
 *   acquire reads the last leave's release, so every counter update is
 *   seen). Nobody writes the slot while CLOSING: copy the record into the
 *   ring and publish it (release, flow_ring.h), then move
 *   the tag on to FREE, or to BUSY for the evicting inserter (fetch_add
 *   of the tag difference, release: updaters' transient increments are
 *   kept). A failed CAS (an updater inside) publishes the position empty
 *   and leaves the flow live: the next packet or scan tries again. A
 *   full ring ends nothing (counted): the flow stays live, no record is
 *   lost, and the packet path never waits for the exporter.
 * - Insert: keys are inserted under a lock word in their home slot
 *   (acquire/release), after probing the window again under it, so one
 *   key is never live in two slots: a second inserter of the key waits
 *   for the lock and then finds the first one's slot. The inserter
 *   claims the first EMPTY or FREE slot of the window with no updater
 *   inside (CAS -> BUSY), fills key and counters with plain stores and
 *   publishes READY with a new generation (fetch_add, release). When the
 *   window holds no such slot, the flow seen longest ago in it is ended
 *   (PRESSURE) and its slot taken; only when that fails either does the
 *   packet go to the overflow counters.
 * Lookups never wait: BUSY slots (never the key sought, outside the
 * lock: its inserter holds it) and CLOSING slots are passed over. On the
 * GPU every atomic here acts at device scope: only the GPU touches the
 * table while its kernels run.
 */
#ifndef GPURX_FLOW_TABLE_H
#define GPURX_FLOW_TABLE_H

#include <string.h>

#include "gpurx_portable.h"
#include "gpurx_atomic.h"
#include "flow_ring.h"

#define GPURX_FLOW_EMPTY 0u
#define GPURX_FLOW_BUSY 1u
#define GPURX_FLOW_READY 2u
#define GPURX_FLOW_CLOSING 3u
#define GPURX_FLOW_FREE 4u

#define GPURX_FLOW_TAG(s) ((uint32_t)((s) & 0xffu))
#define GPURX_FLOW_GEN_MASK 0xffffff00ull
#define GPURX_FLOW_REF (1ull << 32)
#define GPURX_FLOW_REFS(s) ((uint32_t)((s) >> 32))

/* TCP flags that end a flow (after the linger). */
#define GPURX_TCP_FIN 0x01u
#define GPURX_TCP_RST 0x04u

/* Bounded so a stuck lock holder cannot hang a kernel; counted as overflow. */
#define GPURX_FLOW_SPIN_MAX (1u << 20)

struct gpurx_flow_entry {
	uint64_t state;		/* tag | generation << 8 | updaters << 32 */
	uint32_t hash;
	uint32_t lock;		/* insert lock of the keys whose home this is */
	struct gpurx_flow_key key;
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_seen;	/* ns */
	uint64_t last_seen;	/* ns */
	uint32_t tcp_flags;	/* union over the packets */
	uint16_t queue;		/* RX queue of the first packet */
	/*
	 * As a home slot: the farthest from it (0: itself) that a key
	 * whose home it is was ever placed; GPURX_FLOW_REACH_ALL: as far
	 * as max_probe. Lookups stop there. Ended flows leave FREE slots,
	 * which a lookup must pass (its key may lie beyond); with churn no
	 * window keeps an EMPTY slot, and every lookup of a new flow walked
	 * all max_probe slots, one dependent load each (on the H100 about
	 * 120 us a 32-packet item where flows ended: 7x the item's time).
	 * Raised only under the home's insert lock, never lowered.
	 */
	uint16_t reach;
};

#define GPURX_FLOW_REACH_ALL 0xffffu

struct gpurx_flow_table {
	/* Set before the table is used, read-only afterwards. */
	uint32_t capacity;	/* power of two */
	uint32_t max_probe;
	uint64_t idle_ns;	/* 0: no idle timeout */
	uint64_t active_ns;	/* 0: no active timeout */
	uint64_t linger_ns;	/* after a FIN or RST */
	struct gpurx_flow_ring *ring;	/* NULL: flows never end */
	uint64_t ring_size;	/* records */
	/* The ring's records and whether they are in GPU memory (its
	 * GPURX_FLOW_RING_DEV): kept here, with the table, so that the GPU's
	 * producers never read the ring's header in host memory for them. */
	struct gpurx_flow_rec *ring_recs;
	uint32_t ring_dev;
	uint32_t reserved0;
	/* Counters, moved by atomics. */
	uint64_t n_flows;	/* flow records started (slots filled) */
	uint64_t overflow_pkts;	/* packets that found no slot */
	uint64_t overflow_bytes;
	uint64_t ring_full;	/* ends put off: the export ring was full */
	uint64_t reserved1[4];
	uint64_t ended[8];	/* records ended, by enum gpurx_flow_end */
	/* The ring's producer side: reserved positions, and the consumer's
	 * tail as producers last read it. */
	uint64_t ring_head;
	uint64_t ring_tail_seen;
	uint64_t reserved2[6];
};

GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_entry) == 96, "flow entry layout");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_table) == 256, "flow table header");

GPURX_FN size_t
gpurx_flow_table_bytes(uint32_t capacity)
{
	return sizeof(struct gpurx_flow_table) +
		(size_t)capacity * sizeof(struct gpurx_flow_entry);
}

GPURX_FN struct gpurx_flow_entry *
gpurx_flow_entries(struct gpurx_flow_table *ft)
{
	return (struct gpurx_flow_entry *)(ft + 1);
}

GPURX_FN const struct gpurx_flow_entry *
gpurx_flow_entries_const(const struct gpurx_flow_table *ft)
{
	return (const struct gpurx_flow_entry *)(ft + 1);
}

/*
 * Lay out a table in mem (gpurx_flow_table_bytes(capacity) bytes, host
 * memory; copy it to the device afterwards). capacity must be a power of
 * two; max_probe is clamped to it. Flows never end until
 * gpurx_flow_table_set_expiry(). Returns NULL on bad arguments.
 */
static inline struct gpurx_flow_table *
gpurx_flow_table_init(void *mem, uint32_t capacity, uint32_t max_probe)
{
	struct gpurx_flow_table *ft = (struct gpurx_flow_table *)mem;

	if (mem == NULL || capacity == 0 || (capacity & (capacity - 1)) != 0)
		return NULL;
	memset(mem, 0, gpurx_flow_table_bytes(capacity));
	ft->capacity = capacity;
	ft->max_probe = max_probe == 0 || max_probe > capacity ?
		capacity : max_probe;
	return ft;
}

/*
 * Flows end, into ring (laid out by gpurx_flow_ring_init): after idle_ns
 * without a packet, active_ns after their first packet (0: never), and
 * linger_ns after their last packet once a FIN or RST was seen. Before
 * any update.
 */
static inline void
gpurx_flow_table_set_expiry(struct gpurx_flow_table *ft,
		struct gpurx_flow_ring *ring, uint64_t idle_ns,
		uint64_t active_ns, uint64_t linger_ns)
{
	ft->ring = ring;
	ft->ring_size = ring != NULL ? ring->size : 0;
	ft->ring_recs = ring != NULL ? ring->recs : NULL;
	ft->ring_dev = ring != NULL ? ring->flags & GPURX_FLOW_RING_DEV : 0;
	ft->idle_ns = idle_ns;
	ft->active_ns = active_ns;
	ft->linger_ns = linger_ns;
}

GPURX_FN uint32_t
gpurx_flow_rotl32(uint32_t v, int r)
{
	return (v << r) | (v >> (32 - r));
}

GPURX_FN uint32_t
gpurx_flow_hash(const struct gpurx_flow_key *key)
{
	const uint8_t *p = (const uint8_t *)key;
	uint32_t h = 0x2f1b6e3du;

	for (int i = 0; i < (int)sizeof(*key); i += 4) {
		uint32_t w = (uint32_t)p[i] | ((uint32_t)p[i + 1] << 8) |
			((uint32_t)p[i + 2] << 16) | ((uint32_t)p[i + 3] << 24);

		w *= 0xcc9e2d51u;
		w = gpurx_flow_rotl32(w, 15);
		h ^= w * 0x1b873593u;
		h = gpurx_flow_rotl32(h, 13) * 5 + 0xe6546b64u;
	}
	/* Final avalanche: low bits pick the slot, so they must mix well. */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * Key comparison word by word, each word read once from memory another
 * thread may be writing (a slot ended and refilled after its state was
 * read: the generation check after entering catches that): on the device
 * volatile (L2, never a stale L1 line), on the host relaxed atomics.
 */
GPURX_FN int
gpurx_flow_key_equal(const struct gpurx_flow_entry *e,
		const struct gpurx_flow_key *key)
{
	const uint32_t *a = (const uint32_t *)&e->key;
	uint32_t b[sizeof(*key) / 4];

	memcpy(b, key, sizeof(b));
	for (int i = 0; i < (int)(sizeof(*key) / 4); i++)
		if (gpurx_atomic_load_relaxed_u32(&a[i]) != b[i])
			return 0;
	return 1;
}

/*
 * Whether a flow with these first and last packet times and TCP flags is
 * due to end at time now, and why (0: not due). It ends at the earliest
 * of its deadlines, so the reason depends only on the record, never on
 * when the check ran (ties: FIN/RST, then idle, then active).
 */
GPURX_FN uint32_t
gpurx_flow_due(const struct gpurx_flow_table *ft, uint64_t first,
		uint64_t last, uint32_t tcp_flags, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	uint32_t why = GPURX_FLOW_END_NONE;

	if (tcp_flags & (GPURX_TCP_FIN | GPURX_TCP_RST)) {
		deadline = last + ft->linger_ns;
		why = GPURX_FLOW_END_EOF;
	}
	if (ft->idle_ns != 0 && last + ft->idle_ns < deadline) {
		deadline = last + ft->idle_ns;
		why = GPURX_FLOW_END_IDLE;
	}
	if (ft->active_ns != 0 && first + ft->active_ns < deadline) {
		deadline = first + ft->active_ns;
		why = GPURX_FLOW_END_ACTIVE;
	}
	return now >= deadline ? why : (uint32_t)GPURX_FLOW_END_NONE;
}

/* The same for a live entry, its fields read as they are. */
GPURX_FN uint32_t
gpurx_flow_entry_due(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *e, uint64_t now)
{
	return gpurx_flow_due(ft,
		gpurx_atomic_load_u64(&e->first_seen, GPURX_RELAXED),
		gpurx_atomic_load_u64(&e->last_seen, GPURX_RELAXED),
		gpurx_atomic_load_relaxed_u32(&e->tcp_flags), now);
}

/*
 * Reserve n consecutive ring positions from *pos. Returns how many it
 * got: n, or fewer (then 0 when the ring is full; each position short is
 * counted in ring_full).
 */
GPURX_FN uint32_t
gpurx_flow_ring_reserve(struct gpurx_flow_table *ft, uint32_t n, uint64_t *pos)
{
	const uint64_t size = ft->ring_size;
	uint64_t h = gpurx_atomic_load_u64(&ft->ring_head, GPURX_RELAXED);

	for (;;) {
		uint64_t t = gpurx_atomic_load_u64(&ft->ring_tail_seen,
			GPURX_RELAXED);
		uint64_t room = size - (h - t), got, seen;

		if (room < n) {
			/* The consumer's tail, in host memory: read only when
			 * the cached copy says full (over PCIe from the GPU).
			 * Acquire: its reads of the old records are done. */
			t = gpurx_atomic_load_acquire_sys_u64(&ft->ring->tail);
			gpurx_atomic_max_u64(&ft->ring_tail_seen, t);
			room = size - (h - t);
		}
		got = room < n ? room : n;
		if (got == 0) {
			gpurx_atomic_add_u64(&ft->ring_full, n);
			return 0;
		}
		seen = gpurx_atomic_cas_ord_u64(&ft->ring_head, h, h + got,
			GPURX_RELAXED);
		if (seen == h) {
			if (got < n)
				gpurx_atomic_add_u64(&ft->ring_full, n - got);
			*pos = h;
			return (uint32_t)got;
		}
		h = seen;
	}
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

/*
 * End the live flow in e, into the reserved ring position pos: only when
 * its state is still `seen` (READY, that generation) with nobody inside.
 * The slot is left tagged `next` (FREE, or BUSY for an evicting
 * inserter). Returns 1 ended, 0 not (pos then published empty).
 */
GPURX_FN int
gpurx_flow_end_at(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t seen, uint32_t why, uint32_t next, uint64_t pos)
{
	const uint64_t expect = seen & 0xffffffffull;
	struct gpurx_flow_rec *rec;

	if (GPURX_FLOW_TAG(seen) != GPURX_FLOW_READY ||
			gpurx_atomic_cas_ord_u64(&e->state, expect,
				(expect & ~0xffull) | GPURX_FLOW_CLOSING,
				GPURX_ACQ_REL) != expect) {
		gpurx_flow_ring_skip(ft, pos);
		return 0;
	}
	/* CLOSING: nobody else writes the slot; the acquire above made
	 * every updater's counts visible. */
	rec = &ft->ring_recs[pos & (ft->ring_size - 1)];
	memcpy(&rec->key, (const void *)&e->key, sizeof(rec->key));
	rec->packets = gpurx_atomic_load_u64(&e->packets, GPURX_RELAXED);
	rec->bytes = gpurx_atomic_load_u64(&e->bytes, GPURX_RELAXED);
	rec->first_ns = gpurx_atomic_load_u64(&e->first_seen, GPURX_RELAXED);
	rec->last_ns = gpurx_atomic_load_u64(&e->last_seen, GPURX_RELAXED);
	rec->queue = e->queue;
	rec->tcp_flags = (uint8_t)gpurx_atomic_load_relaxed_u32(&e->tcp_flags);
	rec->reason = (uint8_t)why;
	gpurx_flow_ring_publish(ft->ring_recs, ft->ring_size, pos,
		ft->ring_dev);
	gpurx_atomic_add_u64(&ft->ended[why & 7], 1);
	/* Release: the record was read out of the slot before its reuse. */
	gpurx_flow_retag(e, GPURX_FLOW_CLOSING, next);
	return 1;
}

/* The same, reserving its own ring position (none: 0, counted). */
GPURX_FN int
gpurx_flow_end(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t seen, uint32_t why, uint32_t next)
{
	uint64_t pos;

	/* Somebody inside: not now, and no position spent on it. */
	if (GPURX_FLOW_REFS(seen) != 0 ||
			gpurx_flow_ring_reserve(ft, 1, &pos) != 1)
		return 0;
	return gpurx_flow_end_at(ft, e, seen, why, next, pos);
}

/* A packet's worth of flow update. */
struct gpurx_flow_pkt {
	uint64_t bytes;
	uint64_t ts;
	uint32_t hash;
	uint8_t tcp_flags;
	uint16_t queue;
};

GPURX_FN void
gpurx_flow_count(struct gpurx_flow_entry *e, const struct gpurx_flow_pkt *p)
{
	gpurx_atomic_add_u64(&e->packets, 1);
	gpurx_atomic_add_u64(&e->bytes, p->bytes);
	gpurx_atomic_min_u64(&e->first_seen, p->ts);
	gpurx_atomic_max_u64(&e->last_seen, p->ts);
	if (p->tcp_flags & ~gpurx_atomic_load_relaxed_u32(&e->tcp_flags))
		gpurx_atomic_or_u32(&e->tcp_flags, p->tcp_flags);
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
 * Look for the key's live record in its window and count the packet in
 * it. A record the packet finds due ends first (then the key has no live
 * record). Returns 1 counted, 0 not found.
 */
GPURX_FN int
gpurx_flow_lookup(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	const uint32_t mask = ft->capacity - 1;
	const int expiring = ft->ring != NULL;
	uint32_t idx = p->hash & mask;
	const uint32_t probe = gpurx_flow_probe_len(ft, &ents[idx]);

	for (uint32_t i = 0; i < probe; i++, idx = (idx + 1) & mask) {
		struct gpurx_flow_entry *e = &ents[idx];
		uint64_t s = gpurx_atomic_load_u64(&e->state, GPURX_ACQUIRE), old;
		uint32_t why;

		if (GPURX_FLOW_TAG(s) == GPURX_FLOW_EMPTY)
			return 0;
		if (GPURX_FLOW_TAG(s) != GPURX_FLOW_READY ||
				gpurx_atomic_load_relaxed_u32(&e->hash) != p->hash ||
				!gpurx_flow_key_equal(e, key))
			continue;
		if (!expiring) {
			/* Slots never end: a READY key never changes. */
			gpurx_flow_count(e, p);
			return 1;
		}
		why = gpurx_flow_entry_due(ft, e, p->ts);
		if (why != GPURX_FLOW_END_NONE &&
				gpurx_flow_end(ft, e, s, why, GPURX_FLOW_FREE))
			continue;
		old = gpurx_atomic_fetch_add_ord_u64(&e->state, GPURX_FLOW_REF,
			GPURX_ACQUIRE);
		if ((old & 0xffffffffull) == (s & 0xffffffffull)) {
			gpurx_flow_count(e, p);
			gpurx_atomic_fetch_add_ord_u64(&e->state,
				(uint64_t)0 - GPURX_FLOW_REF, GPURX_RELEASE);
			return 1;
		}
		/* Ended and reused since it was compared. */
		gpurx_atomic_fetch_add_ord_u64(&e->state,
			(uint64_t)0 - GPURX_FLOW_REF, GPURX_RELEASE);
	}
	return 0;
}

/* Fill a slot this thread holds BUSY (state s) and publish it READY. */
GPURX_FN void
gpurx_flow_fill(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t s, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p)
{
	const uint64_t low = s & 0xffffffffull;
	const uint64_t gen = ((low >> 8) + 1) & 0xffffffull;

	e->hash = p->hash;
	memcpy((void *)&e->key, key, sizeof(*key));
	e->packets = 1;
	e->bytes = p->bytes;
	e->first_seen = p->ts;
	e->last_seen = p->ts;
	e->tcp_flags = p->tcp_flags;
	e->queue = p->queue;
	/* BUSY -> READY with the next generation (wrapping inside its 24
	 * bits), the updaters' count untouched; release: the fields above
	 * are visible to whoever acquires READY. */
	gpurx_atomic_fetch_add_ord_u64(&e->state,
		((gen << 8) | GPURX_FLOW_READY) - low, GPURX_RELEASE);
	gpurx_atomic_add_u64(&ft->n_flows, 1);
}

/*
 * Under the key's insert lock: a slot for a new record of the key, BUSY
 * and ours (its state in *s), or NULL when the window has none.
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
			uint64_t last = gpurx_atomic_load_u64(&e->last_seen,
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
				GPURX_FLOW_END_PRESSURE, GPURX_FLOW_BUSY)) {
		*s = ((victim_s & 0xffffffffull) & ~0xffull) | GPURX_FLOW_BUSY;
		gpurx_flow_reach_at_least(&ents[home], victim_d);
		return victim;
	}
	return NULL;
}

/*
 * gpurx_flow_update_pkt() for a key whose gpurx_flow_hash() the caller
 * has already (the GPU's ordered accounting groups lanes by it).
 */
GPURX_FN int
gpurx_flow_update_pkt_hashed(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint32_t hash, uint64_t bytes,
		uint64_t ts, uint8_t tcp_flags, uint16_t queue)
{
	struct gpurx_flow_pkt p;
	struct gpurx_flow_entry *home, *e;
	uint32_t spins = 0;
	uint64_t s;
	int rc = -1;

	p.bytes = bytes;
	p.ts = ts;
	p.hash = hash;
	p.tcp_flags = tcp_flags;
	p.queue = queue;
	if (gpurx_flow_lookup(ft, key, &p))
		return 0;
	/* Not there: insert under the home slot's lock, after looking again
	 * (another inserter of the key may have been first). */
	home = &gpurx_flow_entries(ft)[p.hash & (ft->capacity - 1)];
	while (!gpurx_atomic_trylock_u32(&home->lock)) {
		if (++spins > GPURX_FLOW_SPIN_MAX)
			goto overflow;
		gpurx_cpu_relax();
	}
	if (gpurx_flow_lookup(ft, key, &p)) {
		rc = 0;
	} else if ((e = gpurx_flow_claim(ft, p.hash & (ft->capacity - 1),
			&s)) != NULL) {
		gpurx_flow_fill(ft, e, s, key, &p);
		rc = 0;
	}
	gpurx_atomic_unlock_u32(&home->lock);
	if (rc == 0)
		return 0;
overflow:
	gpurx_atomic_add_u64(&ft->overflow_pkts, 1);
	gpurx_atomic_add_u64(&ft->overflow_bytes, bytes);
	return -1;
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

/*
 * The scan: end the flows of slots [from, to) that are due at `now` (the
 * time up to which every packet is accounted). Returns how many ended.
 * Concurrent with updates and other scans of other ranges.
 */
GPURX_FN uint32_t
gpurx_flow_scan(struct gpurx_flow_table *ft, uint32_t from, uint32_t to,
		uint64_t now)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	uint32_t ended = 0;

	if (ft->ring == NULL)
		return 0;
	for (uint32_t i = from; i < to && i < ft->capacity; i++) {
		struct gpurx_flow_entry *e = &ents[i];
		uint64_t s = gpurx_atomic_load_u64(&e->state, GPURX_ACQUIRE);
		uint32_t why;

		if (GPURX_FLOW_TAG(s) != GPURX_FLOW_READY)
			continue;
		why = gpurx_flow_entry_due(ft, e, now);
		if (why != GPURX_FLOW_END_NONE)
			ended += (uint32_t)gpurx_flow_end(ft, e, s, why,
				GPURX_FLOW_FREE);
	}
	return ended;
}

/*
 * Host helpers below assume no concurrent writers (table copied back
 * from the device, or all updating threads joined).
 */

/* Why a flow still live when the program ends, ends: what is due at
 * `now`, else a FIN or RST seen, else forced. */
static inline uint32_t
gpurx_flow_final_reason(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *e, uint64_t now)
{
	uint32_t why = ft->ring != NULL ?
		gpurx_flow_due(ft, e->first_seen, e->last_seen, e->tcp_flags,
			now) : (uint32_t)GPURX_FLOW_END_NONE;

	if (why != GPURX_FLOW_END_NONE)
		return why;
	return e->tcp_flags & (GPURX_TCP_FIN | GPURX_TCP_RST) ?
		(uint32_t)GPURX_FLOW_END_EOF : (uint32_t)GPURX_FLOW_END_FORCED;
}

/* Lookup for checking; NULL if absent. */
static inline const struct gpurx_flow_entry *
gpurx_flow_table_find(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key)
{
	const struct gpurx_flow_entry *ents = gpurx_flow_entries_const(ft);
	uint32_t mask = ft->capacity - 1;
	uint32_t idx = gpurx_flow_hash(key) & mask;
	const uint32_t probe = gpurx_flow_probe_len(ft, &ents[idx]);

	for (uint32_t i = 0; i < probe; i++, idx = (idx + 1) & mask) {
		const struct gpurx_flow_entry *e = &ents[idx];

		if (GPURX_FLOW_TAG(e->state) == GPURX_FLOW_EMPTY)
			return NULL;
		if (GPURX_FLOW_TAG(e->state) == GPURX_FLOW_READY &&
				memcmp(&e->key, key, sizeof(*key)) == 0)
			return e;
	}
	return NULL;
}

/* Iterate: start with *pos = 0; returns NULL after the last entry. */
static inline const struct gpurx_flow_entry *
gpurx_flow_table_next(const struct gpurx_flow_table *ft, uint32_t *pos)
{
	const struct gpurx_flow_entry *ents = gpurx_flow_entries_const(ft);

	while (*pos < ft->capacity) {
		const struct gpurx_flow_entry *e = &ents[(*pos)++];

		if (GPURX_FLOW_TAG(e->state) == GPURX_FLOW_READY)
			return e;
	}
	return NULL;
}

/* Order for top-N: more bytes first, then more packets, then key bytes. */
static inline int
gpurx_flow_heavier(const struct gpurx_flow_entry *a,
		const struct gpurx_flow_entry *b)
{
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes;
	if (a->packets != b->packets)
		return a->packets > b->packets;
	return memcmp(&a->key, &b->key, sizeof(a->key)) < 0;
}

/*
 * Fill out[0..n) with the n heaviest flows by bytes, heaviest first.
 * Returns how many were written (fewer if the table holds fewer flows).
 * Insertion into a sorted window: n is small (a "top 10" report).
 */
static inline uint32_t
gpurx_flow_table_top_bytes(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry **out, uint32_t n)
{
	const struct gpurx_flow_entry *e;
	uint32_t pos = 0, cnt = 0;

	if (n == 0)
		return 0;
	while ((e = gpurx_flow_table_next(ft, &pos)) != NULL) {
		uint32_t j;

		if (cnt == n && !gpurx_flow_heavier(e, out[n - 1]))
			continue;
		j = cnt < n ? cnt++ : n - 1;
		while (j > 0 && gpurx_flow_heavier(e, out[j - 1])) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = e;
	}
	return cnt;
}

#endif /* GPURX_FLOW_TABLE_H */
