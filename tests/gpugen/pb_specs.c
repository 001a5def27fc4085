/* SPDX-License-Identifier: BSD-3-Clause */
/* Specs for the packet builder's tests, CPU and GPU alike. */
#include <string.h>

#include "pb_specs.h"

static uint64_t pb_rng = 12345;

void
pb_seed(uint64_t seed)
{
	pb_rng = seed;
}

/* splitmix64: seedable, so a failure reproduces. */
uint64_t
pb_rnd64(void)
{
	uint64_t z = (pb_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t
pb_rnd(uint32_t n)
{
	return n ? (uint32_t)(pb_rnd64() % n) : 0;
}

void
pb_base_spec(struct gpugen_pkt_spec *s, int ipv, int vlans, uint8_t proto)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	s->n_vlans = vlans;
	if (vlans == 2)
		s->tpid[0] = GPURX_ETHERTYPE_QINQ;
	for (int i = 0; i < vlans; i++) {
		s->vid[i] = (uint16_t)(100 + 10 * i);
		s->pcp[i] = (uint8_t)(3 + i);
	}
	s->ip_version = ipv;
	if (ipv == 4) {
		gpurx_put_be32(s->src, 0x0a000001);
		gpurx_put_be32(s->dst, 0xc0a80102);
	} else {
		memcpy(s->src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s->dst, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	s->ttl = 33;
	s->tos = 0xb8;
	s->ip_id = 0x1234;
	s->proto = proto;
	s->sport = 40000;
	s->dport = 443;
	s->tcp_flags = 0x18;
	s->tcp_seq = 0x01020304;
	s->tcp_ack = 0xa0b0c0d0;
	s->icmp_type = 8;
	s->payload_byte = 0x5a;
}

/* A random valid spec: every kind the builder makes. */
void
pb_random_spec(struct gpugen_pkt_spec *s)
{
	/* A fragment header only last: after it, a non-first fragment
	 * carries data, not headers the parser could follow. */
	static const uint8_t exts[] = {GPURX_IPPROTO_HOPOPTS,
		GPURX_IPPROTO_ROUTING, GPURX_IPPROTO_DSTOPTS, GPURX_IPPROTO_AH};
	uint32_t r;

	memset(s, 0, sizeof(*s));
	for (int k = 0; k < 6; k++) {
		s->eth_dst[k] = (uint8_t)pb_rnd(256);
		s->eth_src[k] = (uint8_t)pb_rnd(256);
	}
	s->n_vlans = (int)pb_rnd(GPURX_MAX_VLANS + 1);
	for (int k = 0; k < s->n_vlans; k++) {
		static const uint16_t tp[] = {0, GPURX_ETHERTYPE_QINQ,
			GPURX_ETHERTYPE_QINQ_OLD};

		s->tpid[k] = tp[pb_rnd(3)];
		s->vid[k] = (uint16_t)pb_rnd(4096);
		s->pcp[k] = (uint8_t)pb_rnd(8);
	}
	s->payload_len = pb_rnd(4) == 0 ? pb_rnd(1400) : pb_rnd(100);
	s->payload_byte = (uint8_t)pb_rnd(256);
	s->payload_pattern = (uint8_t)pb_rnd(2);
	if (pb_rnd(20) == 0) {
		s->ethertype = (uint16_t)(0x0600 + pb_rnd(0x1000));
		if (s->ethertype == GPURX_ETHERTYPE_IPV4 ||
				s->ethertype == GPURX_ETHERTYPE_VLAN)
			s->ethertype = 0x0806;
		s->l2_body_len = pb_rnd(100);
		return;
	}
	s->ip_version = pb_rnd(2) ? 4 : 6;
	for (int k = 0; k < 16; k++) {
		s->src[k] = (uint8_t)pb_rnd(256);
		s->dst[k] = (uint8_t)pb_rnd(256);
	}
	s->ttl = (uint8_t)pb_rnd(256);
	s->tos = (uint8_t)pb_rnd(256);
	s->ip_id = (uint16_t)pb_rnd(65536);
	s->dont_frag = (int)pb_rnd(2);
	if (s->ip_version == 4 && pb_rnd(4) == 0)
		s->ip_opt_len = (uint8_t)(4 * pb_rnd(11));
	if (s->ip_version == 6 && pb_rnd(3) == 0) {
		s->n_ext = 1 + (int)pb_rnd(4);
		for (int k = 0; k < s->n_ext; k++) {
			s->ext[k] = exts[pb_rnd(4)];
			s->ext_len[k] = s->ext[k] == GPURX_IPPROTO_AH ?
				(uint8_t)(1 + 2 * pb_rnd(3)) : (uint8_t)pb_rnd(3);
		}
	}
	if (pb_rnd(10) == 0) {
		s->more_frags = (int)pb_rnd(2);
		s->frag_off = (uint16_t)(pb_rnd(2) ? 0 : 1 + pb_rnd(1000));
		if (s->ip_version == 6 && s->n_ext < GPURX_MAX_EXT_HDRS) {
			s->ext[s->n_ext] = GPURX_IPPROTO_FRAGMENT;
			s->n_ext++;
		}
	}
	r = pb_rnd(100);
	if (r < 35)
		s->proto = GPURX_IPPROTO_TCP;
	else if (r < 70)
		s->proto = GPURX_IPPROTO_UDP;
	else if (r < 85)
		s->proto = s->ip_version == 4 ? GPURX_IPPROTO_ICMP :
			GPURX_IPPROTO_ICMPV6;
	else if (r < 92)
		s->proto = GPURX_IPPROTO_SCTP;
	else
		s->proto = 47;
	s->sport = (uint16_t)pb_rnd(65536);
	s->dport = (uint16_t)pb_rnd(65536);
	s->tcp_flags = (uint8_t)pb_rnd(256);
	s->tcp_opt_len = (uint8_t)(4 * pb_rnd(11));
	s->tcp_seq = (uint32_t)pb_rnd64();
	s->tcp_ack = (uint32_t)pb_rnd64();
	s->icmp_type = (uint8_t)pb_rnd(256);
	s->icmp_code = (uint8_t)pb_rnd(256);
}
