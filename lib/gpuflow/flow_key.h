/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A flow's key hashed to its home slot, and the check that a slot holds
 * a key, read with the loads that bound a lookup (16 bytes at a time).
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_KEY_H
#define GPURX_FLOW_KEY_H

#include "flow_layout.h"

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

#endif /* GPURX_FLOW_KEY_H */
