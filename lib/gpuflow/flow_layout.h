/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table's memory: the slot states and the record word, one
 * record's sums and times, a slot (struct gpurx_flow_entry) and the
 * table's header, laid out so the table is one flat block that copies
 * between host and GPU memory as is. The protocol over these words:
 * doc/flow-table.md.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_LAYOUT_H
#define GPURX_FLOW_LAYOUT_H

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

/* struct gpurx_flow_entry.ttl: buffer b's half, and a TTL as a half. */
#define GPURX_FLOW_TTL_SHIFT(b) (16 * (b))
#define GPURX_FLOW_TTL_HALF(w, b) \
	((uint32_t)((w) >> GPURX_FLOW_TTL_SHIFT(b)) & 0xffffu)
#define GPURX_FLOW_TTL_ENC(t) ((uint32_t)(t) | (255u - (uint32_t)(t)) << 8)
#define GPURX_FLOW_TTL_MAX(h) ((uint8_t)((h) & 0xffu))
#define GPURX_FLOW_TTL_MIN(h) ((uint8_t)(255u - ((h) >> 8)))

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
	/*
	 * Per buffer b, bits 16b..16b+15: its packets' TTLs, the largest in
	 * the low byte, 255 - the smallest in the high byte
	 * (GPURX_FLOW_TTL_*): both merge by a maximum, an empty buffer is
	 * 0, and one 32-bit CAS moves them, only when a packet widens the
	 * range (a flow's TTL rarely changes: a load and no store). They
	 * are a record's like its sums: added by the buffer's holders
	 * before they let go, read and cleared by its writer. In the space
	 * the entry had spare: its 160 bytes, five 32-byte sectors, stay.
	 */
	uint32_t ttl;
	/* The inserting packet's (set before READY, never changed while the
	 * key lives: read without atomics like the key). */
	struct gpurx_flow_attr attr;
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
	/* Set before the table is used: the port index (flow_ring.h's key)
	 * of RX queue q in bits 4q..4q+3 (gpurx_flow_queue_port()); 0:
	 * every queue's is 0, one port. */
	uint64_t queue_ports;
	uint64_t reserved1[3];
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
	/* When a GPU thread last began to read the consumer's tail over
	 * PCIe, and the read whose result ring_tail_seen has (the GPU's
	 * global timer, ns): gpurx_flow_ring_tail_fresh(). */
	uint64_t ring_tail_read_ns;
	uint64_t ring_tail_done_ns;
	uint64_t reserved2[2];
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
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, ttl) % 4 == 0,
	"the TTL word is CASed as 32 bits");
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, reach) == 22,
	"the reach in the state's 32-byte sector");
GPURX_STATIC_ASSERT(offsetof(struct gpurx_flow_entry, acc[0].first_seen) % 16 ==
	0 && offsetof(struct gpurx_flow_entry, acc[1].first_seen) % 16 == 0 &&
	offsetof(struct gpurx_flow_acc, last_seen) ==
	offsetof(struct gpurx_flow_acc, first_seen) + 8,
	"a buffer's times are one 16-byte word (gpurx_flow_plan_in_turn())");

/*
 * The port index a packet of RX queue `queue` puts in its key: a shift of
 * a word the table's header holds, read-only, once a packet (no division
 * by the queues a port has, no per-queue table to load).
 */
#define GPURX_FLOW_QUEUE_PORT_BITS 4
GPURX_STATIC_ASSERT(GPURX_FLOW_KEY_PORTS == 1u << GPURX_FLOW_QUEUE_PORT_BITS &&
	GPURX_FLOW_KEY_PORTS * GPURX_FLOW_QUEUE_PORT_BITS == 64,
	"queue_ports holds a port index for each of 16 queues");

GPURX_FN uint32_t
gpurx_flow_queue_port(const struct gpurx_flow_table *ft, uint32_t queue)
{
	return queue < GPURX_FLOW_KEY_PORTS ?
		(uint32_t)(ft->queue_ports >>
			(GPURX_FLOW_QUEUE_PORT_BITS * queue)) &
			(GPURX_FLOW_KEY_PORTS - 1) : 0;
}

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

#endif /* GPURX_FLOW_LAYOUT_H */
