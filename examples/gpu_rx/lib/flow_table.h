/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fixed-capacity flow table for GPU memory, updated by many threads at
 * once (and by host threads with the same code).
 *
 * Open addressing with linear probing bounded by max_probe. A slot is
 * claimed by moving its state EMPTY -> BUSY with compare-and-swap; the
 * owner fills in the key and first counters, then publishes READY. Other
 * threads that meet a BUSY slot wait for READY before comparing keys, so
 * a key is never read half-written. Slots are never freed, so a READY
 * key never changes and counters only move through atomics. When no slot
 * is found within the probe bound the packet goes to the overflow
 * counters instead: entries are never overwritten.
 *
 * The table is one flat block (header then entries, no pointers) so it
 * can be copied between host and device memory as is.
 */
#ifndef GPURX_FLOW_TABLE_H
#define GPURX_FLOW_TABLE_H

#include <string.h>

#include "gpurx_portable.h"
#include "gpurx_atomic.h"

#define GPURX_FLOW_EMPTY 0u
#define GPURX_FLOW_BUSY 1u
#define GPURX_FLOW_READY 2u

/* Bounded so a stuck owner cannot hang a kernel; counted as overflow. */
#define GPURX_FLOW_SPIN_MAX (1u << 20)

struct gpurx_flow_key {
	uint8_t src[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint16_t vlan_id;
	uint8_t proto;
	uint8_t ip_version;
};

struct gpurx_flow_entry {
	uint32_t state;
	uint32_t hash;
	struct gpurx_flow_key key;
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_seen;	/* ns */
	uint64_t last_seen;	/* ns */
};

struct gpurx_flow_table {
	uint32_t capacity;	/* power of two */
	uint32_t max_probe;
	uint64_t n_flows;	/* slots claimed */
	uint64_t overflow_pkts;	/* packets that found no slot */
	uint64_t overflow_bytes;
	uint64_t reserved[4];	/* keeps entries 64-byte aligned */
};

/* Hashing and comparing walk the key as bytes: no padding allowed. */
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_key) == 40, "flow key has padding");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_entry) == 80, "flow entry layout");
GPURX_STATIC_ASSERT(sizeof(struct gpurx_flow_table) == 64, "flow table header");

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
 * two; max_probe is clamped to it. Returns NULL on bad arguments.
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

GPURX_FN int
gpurx_flow_key_equal(const struct gpurx_flow_entry *e,
		const struct gpurx_flow_key *key)
{
#if GPURX_ON_DEVICE
	/* Another SM wrote the key: read it from L2, not a stale L1 line. */
	const volatile uint8_t *a = (const volatile uint8_t *)&e->key;
	const uint8_t *b = (const uint8_t *)key;

	for (int i = 0; i < (int)sizeof(*key); i++)
		if (a[i] != b[i])
			return 0;
	return 1;
#else
	return memcmp(&e->key, key, sizeof(*key)) == 0;
#endif
}

/*
 * Account one packet of `bytes` bytes seen at `ts` to its flow.
 * Returns 0, or -1 when it went to the overflow counters.
 */
GPURX_FN int
gpurx_flow_update(struct gpurx_flow_table *ft, const struct gpurx_flow_key *key,
		uint64_t bytes, uint64_t ts)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	uint32_t mask = ft->capacity - 1;
	uint32_t hash = gpurx_flow_hash(key);
	uint32_t idx = hash & mask;

	for (uint32_t i = 0; i < ft->max_probe; i++, idx = (idx + 1) & mask) {
		struct gpurx_flow_entry *e = &ents[idx];
		uint32_t st = gpurx_atomic_load_acquire_u32(&e->state);

		if (st == GPURX_FLOW_EMPTY) {
			st = gpurx_atomic_cas_u32(&e->state, GPURX_FLOW_EMPTY,
				GPURX_FLOW_BUSY);
			if (st == GPURX_FLOW_EMPTY) {
				/* Ours alone until READY is published. */
				e->hash = hash;
				e->key = *key;
				e->packets = 1;
				e->bytes = bytes;
				e->first_seen = ts;
				e->last_seen = ts;
				gpurx_atomic_store_release_u32(&e->state,
					GPURX_FLOW_READY);
				gpurx_atomic_add_u64(&ft->n_flows, 1);
				return 0;
			}
		}
		if (st == GPURX_FLOW_BUSY) {
			uint32_t spins = 0;

			do {
				if (++spins > GPURX_FLOW_SPIN_MAX)
					goto overflow;
				gpurx_cpu_relax();
				st = gpurx_atomic_load_acquire_u32(&e->state);
			} while (st == GPURX_FLOW_BUSY);
		}
		if (st != GPURX_FLOW_READY)
			goto overflow;	/* corrupted state word: do not touch */
		if (gpurx_atomic_load_acquire_u32(&e->hash) == hash &&
				gpurx_flow_key_equal(e, key)) {
			gpurx_atomic_add_u64(&e->packets, 1);
			gpurx_atomic_add_u64(&e->bytes, bytes);
			gpurx_atomic_min_u64(&e->first_seen, ts);
			gpurx_atomic_max_u64(&e->last_seen, ts);
			return 0;
		}
	}
overflow:
	gpurx_atomic_add_u64(&ft->overflow_pkts, 1);
	gpurx_atomic_add_u64(&ft->overflow_bytes, bytes);
	return -1;
}

/*
 * Host helpers below assume no concurrent writers (table copied back
 * from the device, or all updating threads joined).
 */

/* Lookup for checking; NULL if absent. */
static inline const struct gpurx_flow_entry *
gpurx_flow_table_find(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_key *key)
{
	const struct gpurx_flow_entry *ents = gpurx_flow_entries_const(ft);
	uint32_t mask = ft->capacity - 1;
	uint32_t idx = gpurx_flow_hash(key) & mask;

	for (uint32_t i = 0; i < ft->max_probe; i++, idx = (idx + 1) & mask) {
		const struct gpurx_flow_entry *e = &ents[idx];

		if (e->state == GPURX_FLOW_EMPTY)
			return NULL;
		if (e->state == GPURX_FLOW_READY &&
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

		if (e->state == GPURX_FLOW_READY)
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
