/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host side: a table laid out and configured (expiry, ring slack,
 * the ring's size), and, on a quiescent table (copied back from the GPU
 * or every updater joined), the live records, the last records at exit,
 * lookup, iteration and top-N.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_HOST_H
#define GPURX_FLOW_HOST_H

#include "flow_expiry.h"

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
 * The port index (below GPURX_FLOW_KEY_PORTS) of each of n RX queues
 * (port[q]), put in the keys of their packets' flows: with several ports
 * the same 5-tuple on two of them is two flows. Before any update; a
 * table never told has every queue's 0. -EINVAL (n or an index out of
 * range) changes nothing.
 */
static inline int
gpurx_flow_table_set_queue_ports(struct gpurx_flow_table *ft,
		const uint16_t *port, uint32_t n)
{
	uint64_t w = 0;

	if (n > GPURX_FLOW_KEY_PORTS)
		return -EINVAL;
	for (uint32_t q = 0; q < n; q++) {
		if (port[q] >= GPURX_FLOW_KEY_PORTS)
			return -EINVAL;
		w |= (uint64_t)port[q] << (GPURX_FLOW_QUEUE_PORT_BITS * q);
	}
	ft->queue_ports = w;
	return 0;
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
	r->ttl_min = GPURX_FLOW_TTL_MIN(GPURX_FLOW_TTL_HALF(e->ttl,
		GPURX_FLOW_REC_B(e->rec)));
	r->ttl_max = GPURX_FLOW_TTL_MAX(GPURX_FLOW_TTL_HALF(e->ttl,
		GPURX_FLOW_REC_B(e->rec)));
	r->attr = e->attr;
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

#endif /* GPURX_FLOW_HOST_H */
