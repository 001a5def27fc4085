/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow export ring: flow records that ended (flow_table.h), written
 * by the threads that end them (GPU threads, or RX lcores and the
 * exporter's scan on the CPU) and read in order by one consumer, the
 * exporter thread (examples/gpu_rx/app/flow_export.c). Its header (the
 * consumer's tail) is host memory, the GPU reads it in GPU modes; its
 * records are host memory on the CPU (--cpu), GPU memory in GPU modes:
 * the GPU's producers then order their stores at GPU scope only, and the
 * consumer brings the records over in bulk (gpurx_flow_ring_pull_plan()).
 *
 * Producers reserve a position with a counter kept next to the table
 * (struct gpurx_flow_table.ring_head, in GPU memory in GPU modes: atomics
 * on host memory over PCIe are not guaranteed), write the record, then
 * store its seq = position + 1 with release (at system scope for records
 * in host memory: the CPU that reads that seq with acquire reads the
 * whole record; at GPU scope for records in GPU memory, see the pull).
 * The consumer takes records strictly in position order and publishes
 * how far it got in `tail` (release); a producer reserves only positions
 * below tail + size (it reads tail, acquire at system scope, when its
 * cached copy says the ring is full), so it never overwrites a record
 * not yet read. A reserved position that ends up with nothing to say is
 * published with reason NONE and skipped.
 */
#ifndef GPURX_FLOW_RING_H
#define GPURX_FLOW_RING_H

#include <string.h>

#include "gpurx_portable.h"
#include "gpurx_atomic.h"

/* Why a flow record ended: the values of IPFIX flowEndReason (IANA IE 136). */
enum gpurx_flow_end {
	GPURX_FLOW_END_NONE = 0,	/* an empty ring slot, skipped */
	GPURX_FLOW_END_IDLE = 1,	/* idle timeout */
	GPURX_FLOW_END_ACTIVE = 2,	/* active timeout: the flow goes on */
	GPURX_FLOW_END_EOF = 3,		/* TCP FIN or RST, after the linger */
	GPURX_FLOW_END_FORCED = 4,	/* still live at exit */
	GPURX_FLOW_END_PRESSURE = 5,	/* table full: evicted (lackOfResources) */
	GPURX_FLOW_END_KINDS = 6,
};

struct gpurx_flow_key {
	uint8_t src[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t dst[16];
	uint16_t sport;
	/* ICMP and ICMPv6: type << 8 | code, as nfdump (and NetFlow v5)
	 * keep it: an echo stream and each kind of error are flows apart. */
	uint16_t dport;
	/*
	 * The outer VLAN id (bits 0-11) and the index of the run's port the
	 * flow came in on (bits 12-15, GPURX_FLOW_KEY_PORT_SHIFT): the same
	 * 5-tuple on two ports (two taps) is two flows, in a key that did
	 * not grow (a VLAN id has 12 bits). Port index 0 leaves the bytes
	 * of a one-port run's key as they were. Read it with
	 * gpurx_flow_key_vlan() and gpurx_flow_key_port().
	 */
	uint16_t vlan_port;
	uint8_t proto;
	uint8_t ip_version;
};

#define GPURX_FLOW_KEY_VLAN_MASK 0x0fffu
#define GPURX_FLOW_KEY_PORT_SHIFT 12
/* Ports a key can tell apart: a run has at most 16 RX queues. */
#define GPURX_FLOW_KEY_PORTS 16u

GPURX_FN uint16_t
gpurx_flow_key_vlan(const struct gpurx_flow_key *k)
{
	return (uint16_t)(k->vlan_port & GPURX_FLOW_KEY_VLAN_MASK);
}

/* The index of the flow's port among the run's ports (0 with one). */
GPURX_FN uint16_t
gpurx_flow_key_port(const struct gpurx_flow_key *k)
{
	return (uint16_t)(k->vlan_port >> GPURX_FLOW_KEY_PORT_SHIFT);
}

/* The key's port index (< GPURX_FLOW_KEY_PORTS), its VLAN id kept. */
GPURX_FN void
gpurx_flow_key_set_port(struct gpurx_flow_key *k, uint32_t port)
{
	k->vlan_port = (uint16_t)((k->vlan_port & GPURX_FLOW_KEY_VLAN_MASK) |
		(port << GPURX_FLOW_KEY_PORT_SHIFT));
}

/*
 * What a flow's slot keeps of the packet that inserted its key: fields
 * outside the key that a flow's packets share, MACs and TOS (they change
 * only when the path does). Per slot, not per record: a record's first
 * packet's would need room for two sets (the entry has 20 spare bytes).
 * The packet that inserted the key is the flow's first, or the first
 * after a timeout scan ended it; on the GPU, whose inserts are not
 * ordered, any of the first item's packets of a new flow.
 */
struct gpurx_flow_attr {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t tos;		/* IPv4 TOS or IPv6 traffic class */
	uint8_t pad[3];
};

/* One ended flow record: what the exporter turns into IPFIX. */
struct gpurx_flow_rec {
	struct gpurx_flow_key key;
	uint64_t packets;
	uint64_t bytes;		/* wire bytes */
	uint64_t first_ns;	/* packet timestamps */
	uint64_t last_ns;
	uint16_t queue;		/* RX queue of its first packet */
	uint8_t tcp_flags;	/* union over its packets */
	uint8_t reason;		/* enum gpurx_flow_end */
	uint8_t ttl_min;	/* over its packets: IPv4 TTL, IPv6 hop limit */
	uint8_t ttl_max;
	uint16_t pad;
	struct gpurx_flow_attr attr;	/* the flow's first packet's */
	uint64_t seq;		/* ring position + 1, stored last */
	uint64_t pad2[3];
};

/* Where a ring's records are (gpurx_flow_ring.flags). */
#define GPURX_FLOW_RING_DEV 1u	/* GPU memory: producers are GPU threads */

/*
 * The ring's header, in host memory (the GPU reads tail). The records
 * are elsewhere: right after the header (the CPU's ring, and a ring of
 * host memory the GPU writes), or in GPU memory, where GPU producers
 * publish with device-scope ordering only and the consumer takes them
 * through copies (gpurx_flow_ring_pull_plan()).
 */
struct gpurx_flow_ring {
	uint64_t size;		/* records, a power of two */
	struct gpurx_flow_rec *recs;	/* where producers write them */
	/* GPURX_FLOW_RING_DEV: the consumer's host copies of positions
	 * [copy_from, copy_from + copy_n): `seen` the first, only its seqs
	 * read, `copy` the second, what is read; head_copy: a copy of the
	 * producers' ring_head. */
	struct gpurx_flow_rec *seen;
	struct gpurx_flow_rec *copy;
	uint64_t *head_copy;
	uint64_t copy_from;
	uint32_t copy_n, copy_cap;
	uint32_t flags;		/* GPURX_FLOW_RING_* */
	uint32_t pad0;
	uint64_t tail;		/* records consumed; written by the consumer */
	uint64_t pad1[7];
};

/* Hashing and comparing walk the key as bytes: no padding allowed. */
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_key) == 40, "flow key has padding");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_attr) == 16, "flow attributes");
/* 128: a whole number of 32-byte sectors for the GPU's stores and the
 * pull's copies (96 held no room for the MACs). */
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_rec) == 128, "flow record layout");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_ring) == 128, "flow ring header");

/* A ring with its records after its header. */
GPURX_FN size_t
gpurx_flow_ring_bytes(uint64_t size)
{
	return sizeof(struct gpurx_flow_ring) +
		(size_t)size * sizeof(struct gpurx_flow_rec);
}

/* Lay out a ring of size records (a power of two) in mem, records after
 * the header. */
static inline struct gpurx_flow_ring *
gpurx_flow_ring_init(void *mem, uint64_t size)
{
	struct gpurx_flow_ring *r = (struct gpurx_flow_ring *)mem;

	if (mem == NULL || size == 0 || (size & (size - 1)) != 0)
		return NULL;
	memset(mem, 0, gpurx_flow_ring_bytes(size));
	r->size = size;
	r->recs = (struct gpurx_flow_rec *)(r + 1);
	return r;
}

/* Host memory a ring with records in GPU memory needs for copies of up
 * to cap records a pull (gpurx_flow_ring_init_dev()'s mirror). */
static inline size_t
gpurx_flow_ring_mirror_bytes(uint32_t cap)
{
	return 64 + 2 * (size_t)cap * sizeof(struct gpurx_flow_rec);
}

/*
 * Lay out in hdr (sizeof(struct gpurx_flow_ring) bytes of host memory the
 * GPU reads) a ring of size records whose records are d_recs, GPU memory
 * zeroed by the caller (a seq of 0 is no position's). mirror:
 * gpurx_flow_ring_mirror_bytes(cap) bytes of host memory the copies
 * write (pinned: copied into asynchronously); cap <= size. NULL on bad
 * arguments.
 */
static inline struct gpurx_flow_ring *
gpurx_flow_ring_init_dev(void *hdr, struct gpurx_flow_rec *d_recs,
		uint64_t size, void *mirror, uint32_t cap)
{
	struct gpurx_flow_ring *r = (struct gpurx_flow_ring *)hdr;

	if (hdr == NULL || d_recs == NULL || mirror == NULL || size == 0 ||
			(size & (size - 1)) != 0 || cap == 0 || cap > size)
		return NULL;
	memset(hdr, 0, sizeof(*r));
	memset(mirror, 0, gpurx_flow_ring_mirror_bytes(cap));
	r->size = size;
	r->recs = d_recs;
	r->flags = GPURX_FLOW_RING_DEV;
	r->head_copy = (uint64_t *)mirror;
	r->seen = (struct gpurx_flow_rec *)((char *)mirror + 64);
	r->copy = r->seen + cap;
	r->copy_cap = cap;
	return r;
}

/*
 * Producer: record pos of recs (size records) is written; the consumer
 * may take it. dev: the records are in GPU memory (GPURX_FLOW_RING_DEV).
 */
GPURX_FN void
gpurx_flow_ring_publish(struct gpurx_flow_rec *recs, uint64_t size,
		uint64_t pos, uint32_t dev)
{
	struct gpurx_flow_rec *rec = &recs[pos & (size - 1)];

#if GPURX_ON_DEVICE
	if (dev) {
		/*
		 * Records in GPU memory: release at GPU scope. The fields are
		 * performed in L2, where every reader of GPU memory (the copy
		 * engine included) reads them, before the seq is: what the
		 * consumer's two copies rely on (gpurx_flow_ring_pull_plan()).
		 * A GPU-scope fence does not wait for this thread's traffic
		 * to host memory, as a system-scope one does (about 1 us on
		 * the H100, behind the reads of host-mapped packets).
		 */
		cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(
			rec->seq).store(pos + 1, cuda::memory_order_release);
		return;
	}
#else
	(void)dev;
#endif
	/* Release at system scope: the record's fields reach the CPU first. */
	gpurx_atomic_store_release_sys_u64(&rec->seq, pos + 1);
}

/*
 * Consumer (one thread): the record at position pos once written, else
 * NULL. Read it, then gpurx_flow_ring_consumed(). Records in GPU memory:
 * from the last pull's copies; NULL past them (pull again).
 */
static inline const struct gpurx_flow_rec *
gpurx_flow_ring_peek(struct gpurx_flow_ring *r, uint64_t pos)
{
	const struct gpurx_flow_rec *rec;

	if (r->flags & GPURX_FLOW_RING_DEV) {
		const uint64_t i = pos - r->copy_from;

		/*
		 * Taken only if published before the first copy began (its
		 * seq in that copy): then the second copy, which the stream
		 * started after the first one completed, read fields the
		 * producer wrote before that seq (gpurx_flow_ring_pull_plan()
		 * says why). Its seq there is the same: the slot is not
		 * reused before tail passes pos.
		 */
		if (i >= r->copy_n || r->seen[i].seq != pos + 1 ||
				r->copy[i].seq != pos + 1)
			return NULL;
		return &r->copy[i];
	}
	rec = &r->recs[pos & (r->size - 1)];
	/* Acquire: pairs with the producer's release of seq. */
	if (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != pos + 1)
		return NULL;
	return rec;
}

/* Consumer: every record below pos is read; producers may reuse them. */
static inline void
gpurx_flow_ring_consumed(struct gpurx_flow_ring *r, uint64_t pos)
{
	/* Release: the reads of those records (of the host copies, whose
	 * copy engine reads of GPU memory completed before the consumer
	 * waited for them) happen before the producers' reuse, which
	 * follows their system-scope acquire of tail. */
	__atomic_store_n(&r->tail, pos, __ATOMIC_RELEASE);
}

/* One contiguous piece of a pull: ring slots [slot, slot + n) to the
 * copies' index at. */
struct gpurx_flow_ring_seg {
	uint64_t slot;
	uint32_t at, n;
};

/*
 * Consumer of a ring in GPU memory, before copying: the positions from
 * tail that producers reserved (head: *head_copy, as copied from the
 * table's ring_head), at most copy_cap, as up to two pieces of the ring
 * (it wraps). Returns how many pieces; the copies are invalid until
 * gpurx_flow_ring_pulled().
 *
 * The copier must copy every piece into r->seen, THEN (ordered after
 * those copies completed: the same stream) every piece into r->copy, and
 * wait for both. Why two copies: a copy is not atomic, and the copy
 * engine may read a record's seq after the producer's release and its
 * fields before the producer's stores, within the one copy. A record
 * whose seq the FIRST copy read as pos + 1 was published (its fields in
 * L2 before its seq: the producer's GPU-scope release) before the second
 * copy began, so the second copy reads its fields as published; the
 * producer does not write the slot again before tail passes pos. A
 * record published meanwhile (seq new only in the second copy) is not
 * taken: the consumer stops there and pulls from it next time. head only
 * sizes the copy: a stale or torn value costs a record's wait or a
 * longer copy, never a wrong record.
 */
static inline uint32_t
gpurx_flow_ring_pull_plan(struct gpurx_flow_ring *r, uint64_t tail,
		uint64_t head, struct gpurx_flow_ring_seg seg[2])
{
	uint64_t n = head - tail, slot = tail & (r->size - 1);
	uint32_t k = 0;

	r->copy_from = tail;
	r->copy_n = 0;
	/* Never more than reserved can be published, nor than the copies
	 * hold (a head below tail is stale or torn: as much as they hold). */
	if (n > r->copy_cap)
		n = r->copy_cap;
	while (n != 0) {
		uint64_t run = r->size - slot < n ? r->size - slot : n;

		seg[k].slot = slot;
		seg[k].at = k == 0 ? 0 : seg[0].n;
		seg[k].n = (uint32_t)run;
		k++;
		n -= run;
		slot = 0;
	}
	return k;
}

/* The copies of gpurx_flow_ring_pull_plan()'s pieces (n records in all
 * from tail) are complete: peek() reads them. */
static inline void
gpurx_flow_ring_pulled(struct gpurx_flow_ring *r, uint64_t tail, uint32_t n)
{
	r->copy_from = tail;
	r->copy_n = n;
}

#endif /* GPURX_FLOW_RING_H */
