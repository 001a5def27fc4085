/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow export ring: flow records that ended (flow_table.h), written
 * by the threads that end them (GPU threads, or RX lcores and the
 * exporter's scan on the CPU) and read in order by one consumer, the
 * exporter thread (examples/gpu_rx/app/flow_export.c). It lives in host
 * memory the GPU can write (registered with gpudev in GPU modes).
 *
 * Producers reserve a position with a counter kept next to the table
 * (struct gpurx_flow_table.ring_head, in GPU memory in GPU modes: atomics
 * on host memory over PCIe are not guaranteed), write the record, then
 * store its seq = position + 1 with release at system scope: the CPU that
 * reads that seq with acquire reads the whole record. The consumer takes
 * records strictly in position order and publishes how far it got in
 * `tail` (release); a producer reserves only positions below tail + size
 * (it reads tail, acquire, when its cached copy says the ring is full),
 * so it never overwrites a record not yet read. A reserved position that
 * ends up with nothing to say is published with reason NONE and skipped.
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
	uint16_t dport;
	uint16_t vlan_id;
	uint8_t proto;
	uint8_t ip_version;
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
	uint32_t pad;
	uint64_t seq;		/* ring position + 1, stored last */
	uint64_t pad2;
};

struct gpurx_flow_ring {
	uint64_t size;		/* records, a power of two */
	uint64_t pad0[7];
	uint64_t tail;		/* records consumed; written by the consumer */
	uint64_t pad1[7];
};

/* Hashing and comparing walk the key as bytes: no padding allowed. */
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_key) == 40, "flow key has padding");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_rec) == 96, "flow record layout");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_ring) == 128, "flow ring header");

GPURX_FN size_t
gpurx_flow_ring_bytes(uint64_t size)
{
	return sizeof(struct gpurx_flow_ring) +
		(size_t)size * sizeof(struct gpurx_flow_rec);
}

GPURX_FN struct gpurx_flow_rec *
gpurx_flow_ring_recs(struct gpurx_flow_ring *r)
{
	return (struct gpurx_flow_rec *)(r + 1);
}

/* Lay out a ring of size records (a power of two) in mem. */
static inline struct gpurx_flow_ring *
gpurx_flow_ring_init(void *mem, uint64_t size)
{
	struct gpurx_flow_ring *r = (struct gpurx_flow_ring *)mem;

	if (mem == NULL || size == 0 || (size & (size - 1)) != 0)
		return NULL;
	memset(mem, 0, gpurx_flow_ring_bytes(size));
	r->size = size;
	return r;
}

/* Producer: record pos is written; the consumer may take it. */
GPURX_FN void
gpurx_flow_ring_publish(struct gpurx_flow_ring *r, uint64_t size, uint64_t pos)
{
	struct gpurx_flow_rec *rec = &gpurx_flow_ring_recs(r)[pos & (size - 1)];

	/* Release at system scope: the record's fields reach the CPU first. */
	gpurx_atomic_store_release_sys_u64(&rec->seq, pos + 1);
}

/*
 * Consumer (one thread): the record at position pos once written, else
 * NULL. Read it, then gpurx_flow_ring_consumed().
 */
static inline const struct gpurx_flow_rec *
gpurx_flow_ring_peek(struct gpurx_flow_ring *r, uint64_t pos)
{
	const struct gpurx_flow_rec *rec =
		&gpurx_flow_ring_recs(r)[pos & (r->size - 1)];

	/* Acquire: pairs with the producer's release of seq. */
	if (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != pos + 1)
		return NULL;
	return rec;
}

/* Consumer: every record below pos is read; producers may reuse them. */
static inline void
gpurx_flow_ring_consumed(struct gpurx_flow_ring *r, uint64_t pos)
{
	/* Release: the reads of those records happen before their reuse. */
	__atomic_store_n(&r->tail, pos, __ATOMIC_RELEASE);
}

#endif /* GPURX_FLOW_RING_H */
