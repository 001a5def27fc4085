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
 * A slot holds a key and, in two record buffers, its live record and the
 * one that last ended: a packet that ends its flow's record (idle,
 * active, FIN) starts the next one in the other buffer of the same slot,
 * and the ended record is written out later, by whichever thread lets go
 * of it last. Exact records need each flow's packets decided in arrival
 * order (does the packet count into the live record, or end it and start
 * a new one: it depends on the packets before it); the GPU keeps that
 * order per RX queue only where an item in flight shares a flow with
 * another (gpu_kernels.cu, account_decide: a group whose pins are the
 * slot's only ones decides at once, gpurx_flow_plan_alone()), and wants
 * the ordered part short, so a packet's accounting is split in four
 * steps:
 *
 *   pin       not ordered: find the key's slot, or insert it (an empty
 *             slot, no record yet), and hold it: nobody ends or reuses a
 *             slot while a packet holds it.
 *   plan      ORDERED: read the slot's record word and the live record's
 *             times; walk the packets of the flow (a group, in arrival
 *             order: one on the CPU, a warp's lanes of the flow on the
 *             GPU) through the timeouts: which go into the live record,
 *             whether and why it ends, what the new live record starts
 *             with, records started and ended within the group.
 *   commit    ORDERED: publish the plan with one CAS of the record word
 *             (the live record's flags, the switch of buffers) and the
 *             times (min/max atomics), so that the next packet's plan
 *             sees them; a ring position for each ended record was
 *             reserved before.
 *   finish    not ordered: packets and bytes, records ended within the
 *             group written out, the hold on the buffers let go (the last
 *             one out of an ended buffer writes its record out and
 *             empties it), the slot let go.
 *
 * Per slot, the state word (64 bits):
 *   bits 0-7   tag: EMPTY (never used: ends every probe), BUSY (an
 *              inserter fills it), READY (a live key), CLOSING (being
 *              ended as a whole), FREE (reusable; does not end a probe)
 *   bits 8-31  generation, +1 each time the slot becomes READY
 *   bits 32-63 pins: packets holding the slot (pin to finish)
 * and the record word (GPURX_FLOW_REC_*, 64 bits): per buffer the count
 * of holders (commit to finish) and its TCP flags; which buffer is live
 * (CUR); whether the live one has a record (LIVE); whether the other one
 * holds an ended record not yet written out (CLOSED), and why it ended.
 *
 * - Pin: load the state (acquire), compare hash and key of a READY slot,
 *   then pin: fetch_add of one pin (acquire). If the tag and generation
 *   it returns are not those compared, the slot was ended and reused
 *   meanwhile: unpin and probe on. Unpin with fetch_sub (release), after
 *   everything the packet wrote into the slot.
 * - Insert: keys are inserted under a lock word in their home slot
 *   (acquire/release), after probing the window again under it, so one
 *   key is never live in two slots: a second inserter of the key waits
 *   for the lock and then finds the first one's slot. The inserter
 *   claims the first EMPTY or FREE slot of the window with nobody pinning
 *   it (CAS -> BUSY), fills the key, empties both buffers with plain
 *   stores and publishes READY with a new generation and its own pin
 *   (one fetch_add, release). When the window holds no such slot, the
 *   flow seen longest ago in it is ended (PRESSURE) and its slot taken;
 *   only when that fails either does the packet go to the overflow
 *   counters. A pinned slot keeps its key: two packets of one key that
 *   hold pins at once hold the same slot.
 * - Commit (CAS of the record word, acquire and release): the group's
 *   packets before any end go into the live buffer (its flags ORed in,
 *   one holder more); an end switches CUR to the other buffer, which
 *   must be empty (not CLOSED, no holder: else the plan waits for it,
 *   see finish), marks the old one CLOSED with the reason, gives the new
 *   one the flags of the packets after the last end and one holder, and
 *   keeps a holder on the old one until its ring position is stored
 *   (end_pos, only the switcher writes it). The CAS fails when anybody
 *   committed since the plan read the word: plan again. After the CAS,
 *   the times and counts go into the held buffers by relaxed atomics
 *   (min first, max last, add packets and bytes).
 * - Finish: a holder lets go with fetch_sub (acquire and release). The
 *   one that takes the CLOSED buffer's holders to zero has seen every
 *   holder's counts (each let go with release after them) and writes the
 *   record out at end_pos, empties the buffer, then clears CLOSED
 *   (fetch_add of the bits' negation, release: the next switch, whose
 *   CAS acquires, finds it empty). A buffer waits for its writer only
 *   for the holders that committed before the switch, which are past the
 *   ordered steps and wait for nothing: a plan that waits for the other
 *   buffer always sees it emptied (bounded: GPURX_FLOW_SPIN_MAX, then the
 *   end is put off and counted in ring_full, like a full ring).
 * - End of a whole slot (the scan's idle/active/FIN ends at `now`, an
 *   inserter's PRESSURE eviction, both when no packet touches the flow):
 *   reserve a ring position first, then CAS the state READY with no pin
 *   -> CLOSING (acquire and release). No pin means no holder and no
 *   CLOSED buffer (holders and writers pin), and the acquire reads the
 *   last unpin's release, so every count is seen. Nobody writes the slot
 *   while CLOSING: copy the live record into the ring and publish it
 *   (release, flow_ring.h), then move the tag on to FREE, or to BUSY for
 *   the evicting inserter (fetch_add of the tag difference, release:
 *   pins' transient increments are kept). A failed CAS (somebody pinned
 *   it) publishes the position empty and leaves the flow live. The
 *   scan's reason is decided again once CLOSING, on the stable record: a
 *   packet that pinned and let go between the scan's reads and its CAS
 *   leaves the state as it was (pins back to 0) but maybe a record not
 *   due; then the slot is reopened (CLOSING -> READY). A lookup that
 *   meets its own key CLOSING waits for the outcome, so the key is never
 *   inserted twice.
 * - A full ring ends nothing (counted in ring_full): the record stays
 *   live and takes the packet, no record is lost, and the packet path
 *   never waits for the exporter.
 *
 * Why records stay exact: a record's boundaries are decided by plans,
 * one flow's plans made one after the other in arrival order (the CPU's
 * one thread per queue; the GPU's order), each seeing the previous one's
 * commit; everything else in a record commutes (sums, min, max, OR) and
 * lands, before the record is written out, in the buffer its plan chose:
 * the buffer cannot be written out or reused while a holder is in it,
 * nor the slot ended while a packet pins it. Threads that race on one
 * flow without an order (several queues, the stress tests) still put
 * every packet in exactly one record, the CAS choosing an order.
 * Lookups wait only for a CLOSING slot of their own key (a copy into
 * the ring), and a pin whose fetch_add finds the state moved on looks
 * at the same slot again rather than passing it; BUSY slots (never the
 * key sought, outside the lock: its inserter holds it) and other
 * CLOSING slots are passed over. On the
 * GPU every atomic here acts at device scope: only the GPU touches the
 * table while its kernels run.
 */
#ifndef GPURX_FLOW_TABLE_H
#define GPURX_FLOW_TABLE_H

#include <errno.h>
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

/* The record word (struct gpurx_flow_entry.rec); b: a buffer, 0 or 1. */
#define GPURX_FLOW_REC_HOLD(b) (1ull << (16 * (b)))	/* one holder */
#define GPURX_FLOW_REC_HOLDERS(r, b) ((uint32_t)((r) >> (16 * (b))) & 0xffffu)
#define GPURX_FLOW_REC_CUR (1ull << 32)		/* buffer 1 is live */
#define GPURX_FLOW_REC_CLOSED (1ull << 33)	/* the other holds an ended record */
#define GPURX_FLOW_REC_LIVE (1ull << 34)	/* the live buffer has a record */
#define GPURX_FLOW_REC_WHY_SHIFT 35		/* 3 bits: why CLOSED ended */
#define GPURX_FLOW_REC_FLAGS_SHIFT(b) (40 + 8 * (b))	/* its TCP flags */
#define GPURX_FLOW_REC_B(r) ((uint32_t)((r) >> 32) & 1u)
#define GPURX_FLOW_REC_WHY(r) ((uint32_t)((r) >> GPURX_FLOW_REC_WHY_SHIFT) & 7u)
#define GPURX_FLOW_REC_FLAGS(r, b) \
	((uint32_t)((r) >> GPURX_FLOW_REC_FLAGS_SHIFT(b)) & 0xffu)

/* TCP flags that end a flow (after the linger). */
#define GPURX_TCP_FIN 0x01u
#define GPURX_TCP_RST 0x04u

/* Bounded so a stuck lock holder cannot hang a kernel; counted as overflow. */
#define GPURX_FLOW_SPIN_MAX (1u << 20)

/* One record's sums and times. Empty: 0, 0, UINT64_MAX, 0. */
struct gpurx_flow_acc {
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_seen;	/* ns */
	uint64_t last_seen;	/* ns */
};

struct gpurx_flow_entry {
	uint64_t state;		/* tag | generation << 8 | pins << 32 */
	uint64_t rec;		/* the record word: GPURX_FLOW_REC_* */
	uint32_t hash;
	uint16_t lock;		/* insert lock of the keys whose home this is */
	/*
	 * As a home slot: the farthest from it (0: itself) that a key
	 * whose home it is was ever placed; GPURX_FLOW_REACH_ALL: as far
	 * as max_probe. Lookups stop there. Ended flows leave FREE slots,
	 * which a lookup must pass (its key may lie beyond); with churn no
	 * window keeps an EMPTY slot, and every lookup of a new flow walked
	 * all max_probe slots, one dependent load each (on the H100 about
	 * 120 us a 32-packet item where flows ended: 7x the item's time).
	 * Raised only under the home's insert lock, never lowered. In the
	 * state's 32-byte sector: a lookup's first loads touch one sector of
	 * the home, not two.
	 */
	uint16_t reach;
	struct gpurx_flow_key key;
	struct gpurx_flow_acc acc[2];	/* the record buffers */
	uint64_t end_pos;	/* ring position of the CLOSED buffer's record */
	uint16_t queue[2];	/* per buffer: RX queue of its first packet */
	uint32_t reserved0;
	uint64_t reserved1[2];
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
	uint64_t n_flows;	/* flow records started */
	uint64_t overflow_pkts;	/* packets that found no slot */
	uint64_t overflow_bytes;
	uint64_t ring_full;	/* ends put off: the export ring was full */
	uint64_t reserved1[4];
	uint64_t ended[8];	/* records ended, by enum gpurx_flow_end */
	/* The ring's producer side: reserved positions, and the consumer's
	 * tail as producers last read it. */
	uint64_t ring_head;
	uint64_t ring_tail_seen;
	/* Records that may wait in the ring for the consumer, and, when
	 * not 0, how far concurrent reservations may overrun that
	 * (gpurx_flow_table_set_ring_slack()): reservations then take
	 * positions with one fetch_add, not a CAS loop. */
	uint64_t ring_limit;
	uint64_t ring_slack;
	uint64_t reserved2[4];
};

GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_entry) == 160, "flow entry layout");
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, state) == 0 &&
	offsetof(struct gpurx_flow_entry, rec) == 8,
	"state and record word are one 16-byte word of every entry");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_table) == 256, "flow table header");
/* gpurx_flow_slot_holds() reads hash, lock, reach and key as 16-byte
 * words. */
#define GPURX_FLOW_HKEY_WORDS 6
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, hash) == 16 &&
	offsetof(struct gpurx_flow_entry, key) == 24 &&
	sizeof(struct gpurx_flow_key) == 8 * (GPURX_FLOW_HKEY_WORDS - 1) &&
	sizeof(struct gpurx_flow_entry) % 16 == 0 &&
	sizeof(struct gpurx_flow_table) % 16 == 0,
	"hash, lock, reach and key are 16-byte words of every entry");
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, reach) == 22,
	"the reach in the state's 32-byte sector");
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, acc[0].first_seen) % 16 ==
	0 && offsetof(struct gpurx_flow_entry, acc[1].first_seen) % 16 == 0 &&
	offsetof(struct gpurx_flow_acc, last_seen) ==
	offsetof(struct gpurx_flow_acc, first_seen) + 8,
	"a buffer's times are one 16-byte word (gpurx_flow_plan_in_turn())");

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
	ft->ring_limit = ft->ring_size;
	ft->ring_slack = 0;
	ft->ring_recs = ring != NULL ? ring->recs : NULL;
	ft->ring_dev = ring != NULL ? ring->flags & GPURX_FLOW_RING_DEV : 0;
	ft->idle_ns = idle_ns;
	ft->active_ns = active_ns;
	ft->linger_ns = linger_ns;
}

/*
 * Reservations by fetch_add (gpurx_flow_ring_try_reserve()): at most
 * limit records wait in the ring, and slack is the most positions that
 * reservations in progress at once can take together (on the GPU: every
 * reserving warp takes at most 32, so the threads the GPU can hold at
 * once). limit + slack <= the ring's size. After set_expiry. Returns 0,
 * or -EINVAL (no ring, or they do not fit) and changes nothing.
 */
static inline int
gpurx_flow_table_set_ring_slack(struct gpurx_flow_table *ft, uint64_t limit,
		uint64_t slack)
{
	if (ft->ring == NULL || limit == 0 || slack == 0 ||
			limit > ft->ring_size || slack > ft->ring_size - limit)
		return -EINVAL;
	ft->ring_limit = limit;
	ft->ring_slack = slack;
	return 0;
}

/* The records a ring needs for limit waiting and a slack beyond: the
 * smallest power of two that holds both. */
static inline uint64_t
gpurx_flow_ring_size_for(uint64_t limit, uint64_t slack)
{
	uint64_t size = 1;

	while (size < limit + slack)
		size <<= 1;
	return size;
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
 * Whether slot e holds this hash and key, read from memory another thread
 * may be writing (a slot ended and refilled after its state was read:
 * the generation check after pinning catches that): on the device
 * volatile (L2, never a stale L1 line), on the host relaxed atomics.
 * Every word is loaded before any is compared: with an exit at the first
 * word that differs, no load was issued before the compare before it (a
 * volatile load is never speculated), so a key found cost eleven
 * dependent round trips to L2 instead of one.
 */
GPURX_FN int
gpurx_flow_slot_holds(const struct gpurx_flow_entry *e,
		const struct gpurx_flow_key *key, uint32_t hash)
{
	/* Hash, lock, reach and key: entry bytes 16..63, three 16-byte
	 * loads (a request each, where a load a word took six). */
	const uint64_t *a = (const uint64_t *)&e->hash;
	uint64_t b[sizeof(*key) / 8], w[GPURX_FLOW_HKEY_WORDS], diff;

	for (int i = 0; i < GPURX_FLOW_HKEY_WORDS; i += 2)
		gpurx_atomic_load_x2_u64(&a[i], &w[i], &w[i + 1],
			GPURX_RELAXED);
	memcpy(b, key, sizeof(b));
	/* Word 0: the hash (its low half: both sides are little-endian),
	 * then lock and reach, not compared. */
	diff = (uint32_t)w[0] ^ hash;
	for (int i = 0; i < (int)(sizeof(*key) / 8); i++)
		diff |= w[i + 1] ^ b[i];
	return diff == 0;
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

/* The live record of e (a quiescent table: copied back, or every
 * updating thread joined): its sums and times, TCP flags, RX queue. */
static inline const struct gpurx_flow_acc *
gpurx_flow_live(const struct gpurx_flow_entry *e)
{
	return &e->acc[GPURX_FLOW_REC_B(e->rec)];
}

static inline uint8_t
gpurx_flow_live_flags(const struct gpurx_flow_entry *e)
{
	return (uint8_t)GPURX_FLOW_REC_FLAGS(e->rec, GPURX_FLOW_REC_B(e->rec));
}

static inline uint16_t
gpurx_flow_live_queue(const struct gpurx_flow_entry *e)
{
	return e->queue[GPURX_FLOW_REC_B(e->rec)];
}

/*
 * Whether a record's times, read while other threads may be adding to
 * them, can decide an end: both landed. A commit adds its first (min)
 * and last (max) times with two relaxed atomics, so a reader between
 * them sees the first time and the emptied buffer's last, 0: read as
 * such, the record would look idle since time 0 and end on the next
 * packet (3 threads starting one record at once did that in about one
 * round in 150). Once both landed last >= first: every last is the max
 * of times whose min is first. Relaxed reads may still see an older
 * last, as any racing reader may; an ordered reader (the next plan in
 * the queue's turn, or one thread per queue) sees both.
 */
GPURX_FN int
gpurx_flow_times_landed(uint64_t first, uint64_t last)
{
	return first != UINT64_MAX && last >= first;
}

/* The same for a live entry, its fields read as they are (not due while
 * it has no record, or its times have not landed). */
GPURX_FN uint32_t
gpurx_flow_entry_due(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *e, uint64_t now)
{
	const uint64_t r = gpurx_atomic_load_u64(&e->rec, GPURX_RELAXED);
	const struct gpurx_flow_acc *a = &e->acc[GPURX_FLOW_REC_B(r)];
	uint64_t first, last;

	if (!(r & GPURX_FLOW_REC_LIVE))
		return GPURX_FLOW_END_NONE;
	first = gpurx_atomic_load_u64(&a->first_seen, GPURX_RELAXED);
	last = gpurx_atomic_load_u64(&a->last_seen, GPURX_RELAXED);
	if (!gpurx_flow_times_landed(first, last))
		return GPURX_FLOW_END_NONE;
	return gpurx_flow_due(ft, first, last,
		GPURX_FLOW_REC_FLAGS(r, GPURX_FLOW_REC_B(r)), now);
}

/* The consumer's tail, in host memory: read only when the cached copy
 * says full (over PCIe from the GPU). Acquire: its reads of the old
 * records are done. */
GPURX_FN uint64_t
gpurx_flow_ring_tail_fresh(struct gpurx_flow_table *ft)
{
	const uint64_t t = gpurx_atomic_load_acquire_sys_u64(&ft->ring->tail);

	gpurx_atomic_max_u64(&ft->ring_tail_seen, t);
	return t;
}

/*
 * Reserve n consecutive ring positions from *pos. Returns how many it
 * got: n, or fewer (0 when the ring is full). Nothing is counted: for a
 * reservation ahead of need (gpu_kernels.cu reserves before its turn what
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

/* Write a record into the reserved ring position pos and publish it (an
 * empty record, no packets, is published as a skipped position). */
GPURX_FN void
gpurx_flow_put(struct gpurx_flow_table *ft, uint64_t pos, const void *key,
		uint64_t packets, uint64_t bytes, uint64_t first, uint64_t last,
		uint32_t tcp_flags, uint16_t queue, uint32_t why)
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
		GPURX_FLOW_REC_FLAGS(r, b), e->queue[b], why);
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

/* A packet's worth of flow update. */
struct gpurx_flow_pkt {
	uint64_t bytes;
	uint64_t ts;
	uint32_t hash;
	uint8_t tcp_flags;
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
 * wait for it) was not faster on the H100 (doc/performance.md, "Seventh
 * session").
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
		old = gpurx_atomic_fetch_add_ord_u64(&e->state, GPURX_FLOW_REF,
			GPURX_ACQUIRE);
		if ((old & 0xffffffffull) == (s & 0xffffffffull)) {
			/* The plan reads the record buffers next. */
			gpurx_prefetch(&e->acc[0]);
			gpurx_prefetch(&e->acc[1]);
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
 * whose flows end: their slots are ended and reused). Without, slots
 * never end: a READY key never changes. *rec: the slot's record word,
 * read with its state (gpurx_flow_count_rec()).
 *
 * Measured on the H100 and not kept (issue 18, doc/performance.md
 * "Seventh session"): the home slot probed outside the loop, and a
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
 * Fill a slot this thread holds BUSY (state s) with the key and publish
 * it READY: pinned by this thread with both buffers empty (pinned), or
 * with the packet counted (a table whose flows never end).
 */
GPURX_FN void
gpurx_flow_fill(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		uint64_t s, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p, int pinned)
{
	const uint64_t low = s & 0xffffffffull;
	const uint64_t gen = ((low >> 8) + 1) & 0xffffffull;

	e->hash = p->hash;
	memcpy((void *)&e->key, key, sizeof(*key));
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
 * packet's key, inserted if absent, pinned by this packet; NULL when the
 * window has no room for it (the packet went to the overflow counters).
 */
GPURX_FN struct gpurx_flow_entry *
gpurx_flow_pin(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		const struct gpurx_flow_pkt *p)
{
	struct gpurx_flow_entry *home, *e;
	uint64_t s;

	if ((e = gpurx_flow_find(ft, key, p->hash, 1)) != NULL)
		return e;
	/* Not there: insert under the home slot's lock, after looking again
	 * (another inserter of the key may have been first). */
	home = &gpurx_flow_entries(ft)[p->hash & (ft->capacity - 1)];
	if (!gpurx_flow_home_lock(home)) {
		gpurx_flow_overflow(ft, p->bytes);
		return NULL;
	}
	e = gpurx_flow_find(ft, key, p->hash, 1);
	if (e == NULL && (e = gpurx_flow_claim(ft,
			p->hash & (ft->capacity - 1), &s)) != NULL)
		gpurx_flow_fill(ft, e, s, key, p, 1);
	gpurx_atomic_unlock_u16(&home->lock);
	if (e == NULL)
		gpurx_flow_overflow(ft, p->bytes);
	return e;
}

/* Packets of a group that go into one record. */
struct gpurx_flow_seg {
	uint64_t packets;
	uint64_t bytes;
	uint64_t first;
	uint64_t last;
	uint32_t flags;
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
 * the plan read it; noend: nothing ends (no ring room). key NULL: fill
 * the plan's segments and ends (step 2). key set: write the records that
 * start and end within the group, the 2nd to the ends-th, to ring
 * positions pos + 1, ... (step 4: the walk is the same, so are they).
 */
GPURX_FN void
gpurx_flow_walk(struct gpurx_flow_table *ft, struct gpurx_flow_plan *pl,
		const struct gpurx_flow_pkt *pk, uint32_t mask, int noend,
		const struct gpurx_flow_key *key, uint64_t pos)
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
			if (k == 0 && key == NULL) {
				pl->s0 = seg;
				pl->why0 = why;
			} else if (k != 0 && key != NULL) {
				gpurx_flow_put(ft, pos + k, key, seg.packets,
					seg.bytes, seg.first, seg.last,
					seg.flags, pl->queue, why);
			}
			k++;
			seg.packets = 0;
			seg.bytes = 0;
			seg.first = UINT64_MAX;
			seg.last = 0;
			seg.flags = 0;
		}
		live = 1;
		seg.packets++;
		seg.bytes += p->bytes;
		seg.first = p->ts < seg.first ? p->ts : seg.first;
		seg.last = p->ts > seg.last ? p->ts : seg.last;
		seg.flags |= p->tcp_flags;
	}
	if (key != NULL)
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
	const struct gpurx_flow_seg none = { 0, 0, UINT64_MAX, 0, 0 };

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
	const struct gpurx_flow_acc *a = &e->acc[GPURX_FLOW_REC_B(r)];

	gpurx_flow_plan_from(ft, r, gpurx_atomic_load_u64(&a->first_seen,
		GPURX_RELAXED), gpurx_atomic_load_u64(&a->last_seen,
		GPURX_RELAXED), pk, mask, noend, queue, pl);
}

/*
 * The same by a warp in its queue's order (gpu_kernels.cu): the record
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
 * queue's order (gpu_kernels.cu): the plan as gpurx_flow_plan() makes it,
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
		gpurx_atomic_load_relaxed_u16(&e->queue[x]), why);
	gpurx_flow_acc_empty(a);
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
		gpurx_flow_walk(ft, pl, pk, mask, 0,
			(const struct gpurx_flow_key *)&e->key, pos);
	gpurx_flow_acc_add(&e->acc[b], pl->s0.packets, pl->s0.bytes,
		UINT64_MAX, 0);
	if (pl->ends != 0)
		gpurx_flow_acc_add(&e->acc[o], pl->sk.packets, pl->sk.bytes,
			UINT64_MAX, 0);
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
 * e (the CPU's; the GPU runs them around its turn, gpu_kernels.cu). The
 * group's `pins` pins are let go.
 */
GPURX_FN void
gpurx_flow_account(struct gpurx_flow_table *ft, struct gpurx_flow_entry *e,
		const struct gpurx_flow_pkt *pk, uint32_t mask, uint16_t queue,
		uint32_t pins)
{
	struct gpurx_flow_plan pl;
	uint32_t spins = 0;
	uint64_t pos = 0;
	int noend = 0;

	for (;;) {
		int rc;

		gpurx_flow_plan(ft, e, pk, mask, noend, queue, &pl);
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
 * has already.
 */
GPURX_FN int
gpurx_flow_update_pkt_hashed(struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key, uint32_t hash, uint64_t bytes,
		uint64_t ts, uint8_t tcp_flags, uint16_t queue)
{
	struct gpurx_flow_pkt p;
	struct gpurx_flow_entry *home, *e;
	uint64_t s;

	p.bytes = bytes;
	p.ts = ts;
	p.hash = hash;
	p.tcp_flags = tcp_flags;
	p.queue = queue;
	if (ft->ring != NULL) {
		if ((e = gpurx_flow_pin(ft, key, &p)) == NULL)
			return -1;
		gpurx_flow_account(ft, e, &p, 1u, queue, 1);
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
		gpurx_flow_fill(ft, e, s, key, &p, 0);
	gpurx_atomic_unlock_u16(&home->lock);
	if (e != NULL)
		return 0;
	gpurx_flow_overflow(ft, bytes);
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
				GPURX_FLOW_FREE, now);
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
	const struct gpurx_flow_acc *a = gpurx_flow_live(e);
	const uint32_t flags = gpurx_flow_live_flags(e);
	uint32_t why = ft->ring != NULL ?
		gpurx_flow_due(ft, a->first_seen, a->last_seen, flags, now) :
		(uint32_t)GPURX_FLOW_END_NONE;

	if (why != GPURX_FLOW_END_NONE)
		return why;
	return flags & (GPURX_TCP_FIN | GPURX_TCP_RST) ?
		(uint32_t)GPURX_FLOW_END_EOF : (uint32_t)GPURX_FLOW_END_FORCED;
}

/* The record of a flow still live when the program ends, at `now`. */
static inline void
gpurx_flow_final_rec(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *e, uint64_t now,
		struct gpurx_flow_rec *r)
{
	const struct gpurx_flow_acc *a = gpurx_flow_live(e);

	memset(r, 0, sizeof(*r));
	r->key = e->key;
	r->packets = a->packets;
	r->bytes = a->bytes;
	r->first_ns = a->first_seen;
	r->last_ns = a->last_seen;
	r->queue = gpurx_flow_live_queue(e);
	r->tcp_flags = gpurx_flow_live_flags(e);
	r->reason = (uint8_t)gpurx_flow_final_reason(ft, e, now);
}

/* A slot with a live record (a key inserted for a packet that went no
 * further has none). */
static inline int
gpurx_flow_has_live(const struct gpurx_flow_entry *e)
{
	return GPURX_FLOW_TAG(e->state) == GPURX_FLOW_READY &&
		(e->rec & GPURX_FLOW_REC_LIVE) != 0;
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
		if (gpurx_flow_has_live(e) &&
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

		if (gpurx_flow_has_live(e))
			return e;
	}
	return NULL;
}

/* Order for top-N: more bytes first, then more packets, then key bytes. */
static inline int
gpurx_flow_heavier(const struct gpurx_flow_entry *a,
		const struct gpurx_flow_entry *b)
{
	const struct gpurx_flow_acc *x = gpurx_flow_live(a);
	const struct gpurx_flow_acc *y = gpurx_flow_live(b);

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes;
	if (x->packets != y->packets)
		return x->packets > y->packets;
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
