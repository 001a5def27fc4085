/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet stream of the flow-expiry stress tests, one definition for
 * the CPU threads (test_flow_expiry.c) and the GPU threads
 * (flow_stress_gpu.cu): packet i belongs to a key drawn from a window of
 * `window` keys that slides by one key every `churn` packets, so keys are
 * born, stay hot for a while and go idle, and the table sees pressure
 * when the window outgrows it. Each key has a fixed packet size and a
 * fixed set of TCP flags it may show, so a record that mixes two keys'
 * counts, or holds a count from another incarnation of its slot, shows.
 */
#ifndef GPURX_FLOW_STRESS_H
#define GPURX_FLOW_STRESS_H

#include "gpurx_portable.h"
#include "flow_table.h"

GPURX_FN uint64_t
flow_stress_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Wire bytes of every packet of key id. */
GPURX_FN uint32_t
flow_stress_bytes(uint32_t id)
{
	return 60 + id % 1400;
}

/* Flags key id's packets may carry: none (UDP), ACK|PSH with the odd
 * FIN, ACK with the odd RST. */
GPURX_FN uint8_t
flow_stress_allowed_flags(uint32_t id)
{
	return id % 3 == 0 ? 0 : id % 3 == 1 ? 0x19 : 0x14;
}

GPURX_FN void
flow_stress_pkt(uint64_t i, uint32_t churn, uint32_t window, uint32_t *id,
		uint8_t *flags)
{
	uint64_t h = flow_stress_mix(i + 1);

	*id = (uint32_t)(i / churn) + (uint32_t)(h % window);
	switch (*id % 3) {
	case 0:
		*flags = 0;
		break;
	case 1:
		*flags = (h >> 40) % 61 == 0 ? 0x11 : 0x18;
		break;
	default:
		*flags = (h >> 40) % 89 == 0 ? 0x04 : 0x10;
		break;
	}
}

GPURX_FN void
flow_stress_key(uint32_t id, struct gpurx_flow_key *k)
{
	struct gpurx_flow_key zero = GPURX_ZERO_INIT;

	*k = zero;
	k->ip_version = id % 5 == 0 ? 6 : 4;
	if (k->ip_version == 4) {
		k->src[10] = k->src[11] = 0xff;
		k->dst[10] = k->dst[11] = 0xff;
	} else {
		k->src[0] = 0x20;
		k->dst[0] = 0x20;
	}
	k->src[12] = 10;
	k->src[13] = (uint8_t)(id >> 16);
	k->src[14] = (uint8_t)(id >> 8);
	k->src[15] = (uint8_t)id;
	k->dst[12] = 192;
	k->dst[15] = (uint8_t)(id >> 24);
	k->sport = (uint16_t)(1024 + id % 50000);
	k->dport = id % 3 == 0 ? 53 : 443;
	k->proto = id % 3 == 0 ? 17 : 6;
	k->vlan_port = (uint16_t)(id % 7);
}

/* The key id flow_stress_key() made k from. */
GPURX_FN uint32_t
flow_stress_key_id(const struct gpurx_flow_key *k)
{
	return ((uint32_t)k->dst[15] << 24) | ((uint32_t)k->src[13] << 16) |
		((uint32_t)k->src[14] << 8) | k->src[15];
}

/*
 * Host check of an ended record of the stream: a key of it below `keys`,
 * its count and bytes of that key alone, its flags among the key's, a
 * reason a running table gives. Returns the key id, or -1.
 */
static inline int64_t
flow_stress_rec_check(const struct gpurx_flow_rec *r, uint32_t keys)
{
	uint32_t id = flow_stress_key_id(&r->key);
	struct gpurx_flow_key k;

	flow_stress_key(id, &k);
	if (id >= keys || memcmp(&k, &r->key, sizeof(k)) != 0 ||
			r->packets == 0 ||
			r->bytes != r->packets * flow_stress_bytes(id) ||
			r->first_ns > r->last_ns ||
			(r->tcp_flags & ~flow_stress_allowed_flags(id)) != 0 ||
			r->reason == GPURX_FLOW_END_NONE ||
			r->reason == GPURX_FLOW_END_FORCED ||
			r->reason >= GPURX_FLOW_END_KINDS)
		return -1;
	return id;
}

#endif /* GPURX_FLOW_STRESS_H */
