/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parser unit tests: exact fields of hand-built frames, the malformed
 * kind of every broken variant, and the generator's predicted kinds over
 * many random frames, each parsed from a buffer of exactly caplen bytes
 * so the sanitizer build catches any read past the capture.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkt_parse.h"
#include "pktgen.h"
#include "check.h"

static struct gpurx_pkt_info
parse_exact(const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	struct gpurx_pkt_info pi;
	uint8_t *copy = malloc(caplen ? caplen : 1);

	memcpy(copy, data, caplen);
	gpurx_pkt_parse(copy, caplen, wirelen, &pi);
	free(copy);
	return pi;
}

static void
v4(uint8_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	a[0] = b0; a[1] = b1; a[2] = b2; a[3] = b3;
}

static void
base_v4_tcp(struct gpugen_pkt_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->ip_version = 4;
	v4(s->src, 10, 0, 0, 1);
	v4(s->dst, 192, 168, 1, 2);
	s->proto = GPURX_IPPROTO_TCP;
	s->sport = 40000;
	s->dport = 443;
	s->tcp_flags = 0x12;
	s->payload_len = 100;
}

static void
base_v6(struct gpugen_pkt_spec *s, uint8_t proto)
{
	memset(s, 0, sizeof(*s));
	s->ip_version = 6;
	s->src[0] = 0x20; s->src[1] = 0x01; s->src[15] = 1;
	s->dst[0] = 0xfe; s->dst[1] = 0x80; s->dst[15] = 2;
	s->proto = proto;
	s->sport = 5353;
	s->dport = 53;
	s->payload_len = 30;
}

static const uint8_t mapped_10_0_0_1[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 };

static void
test_fields(void)
{
	struct gpugen_pkt_spec s;
	struct gpugen_pkt_layout lay;
	struct gpurx_pkt_info pi;
	uint8_t buf[PKTGEN_MAX_LEN];
	uint32_t len;

	/* Plain IPv4/TCP. */
	base_v4_tcp(&s);
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.l3_off, 14);
	CHECK_EQ(pi.l4_off, 34);
	CHECK_EQ(pi.payload_off, 54);
	CHECK_EQ(pi.ip_end, 14 + 20 + 20 + 100);
	CHECK_EQ(pi.ip_version, 4);
	CHECK_EQ(pi.l4_proto, 6);
	CHECK_EQ(pi.sport, 40000);
	CHECK_EQ(pi.dport, 443);
	CHECK_EQ(pi.tcp_flags, 0x12);
	CHECK_EQ(pi.ttl, 64);
	CHECK_EQ(pi.vlan_count, 0);
	CHECK_EQ(pi.flags, GPURX_PF_IPV4 | GPURX_PF_L4 | GPURX_PF_L4_PORTS);
	CHECK(memcmp(pi.src, mapped_10_0_0_1, 16) == 0, "v4-mapped src");
	CHECK_EQ(pi.dst[12], 192);
	CHECK_EQ(pi.dst[15], 2);

	/* The MACs as on the wire; TOS, and IPv6's traffic class, which
	 * straddles its first two bytes. */
	memcpy(s.eth_dst, "\x02\x11\x22\x33\x44\x55", 6);
	memcpy(s.eth_src, "\x02\x66\x77\x88\x99\xaa", 6);
	s.tos = 0xb9;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK(memcmp(pi.dst_mac, "\x02\x11\x22\x33\x44\x55", 6) == 0 &&
		memcmp(pi.src_mac, "\x02\x66\x77\x88\x99\xaa", 6) == 0,
		"MACs");
	CHECK_EQ(pi.tos, 0xb9);
	base_v6(&s, GPURX_IPPROTO_UDP);
	s.tos = 0xa7;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.tos, 0xa7);
	base_v4_tcp(&s);

	/* TCP options move the payload, not the ports. */
	s.tcp_opt_len = 12;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.payload_off, 34 + 32);

	/* IPv4 options. */
	base_v4_tcp(&s);
	s.ip_opt_len = 12;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.l4_off, 14 + 32);
	CHECK(pi.flags & GPURX_PF_IP_OPTIONS, "options flag");
	CHECK_EQ(pi.dport, 443);

	/* 802.1Q single tag. */
	base_v4_tcp(&s);
	s.n_vlans = 1;
	s.vid[0] = 100;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.vlan_count, 1);
	CHECK_EQ(pi.vlan_id, 100);
	CHECK_EQ(pi.l3_off, 18);
	CHECK_EQ(pi.l4_off, 38);
	CHECK(pi.flags & GPURX_PF_VLAN, "vlan flag");

	/* QinQ 0x88a8 outer, 0x8100 inner, IPv6/UDP. */
	base_v6(&s, GPURX_IPPROTO_UDP);
	s.n_vlans = 2;
	s.tpid[0] = GPURX_ETHERTYPE_QINQ;
	s.vid[0] = 300;
	s.vid[1] = 42;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.vlan_count, 2);
	CHECK_EQ(pi.vlan_id, 300);
	CHECK_EQ(pi.inner_vlan_id, 42);
	CHECK_EQ(pi.ethertype, GPURX_ETHERTYPE_IPV6);
	CHECK_EQ(pi.l3_off, 22);
	CHECK_EQ(pi.l4_off, 62);
	CHECK_EQ(pi.payload_off, 70);
	CHECK_EQ(pi.ip_version, 6);
	CHECK_EQ(pi.sport, 5353);
	CHECK_EQ(pi.dport, 53);
	CHECK_EQ(pi.src[0], 0x20);
	CHECK_EQ(pi.dst[15], 2);

	/* Old-style 0x9100 outer tag. */
	s.tpid[0] = GPURX_ETHERTYPE_QINQ_OLD;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.vlan_id, 300);
	CHECK_EQ(pi.vlan_count, 2);

	/* IPv4 first fragment keeps ports; a later one has none. */
	base_v4_tcp(&s);
	s.more_frags = 1;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK(pi.flags & GPURX_PF_FRAGMENT, "first frag flag");
	CHECK(!(pi.flags & GPURX_PF_FRAG_LATER), "first frag not later");
	CHECK_EQ(pi.dport, 443);
	s.frag_off = 185;
	s.more_frags = 0;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK(pi.flags & GPURX_PF_FRAG_LATER, "later frag flag");
	CHECK(!(pi.flags & GPURX_PF_L4), "later frag has no L4");
	CHECK_EQ(pi.frag_offset, 185);
	CHECK_EQ(pi.sport, 0);
	CHECK_EQ(pi.l4_proto, 6);

	/* IPv6 extension chain: hop-by-hop, routing, dest-opts, AH, TCP. */
	base_v6(&s, GPURX_IPPROTO_TCP);
	s.n_ext = 4;
	s.ext[0] = GPURX_IPPROTO_HOPOPTS; s.ext_len[0] = 0;
	s.ext[1] = GPURX_IPPROTO_ROUTING; s.ext_len[1] = 2;
	s.ext[2] = GPURX_IPPROTO_DSTOPTS; s.ext_len[2] = 1;
	s.ext[3] = GPURX_IPPROTO_AH; s.ext_len[3] = 4;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.ext_hdr_count, 4);
	CHECK_EQ(pi.l4_off, 14 + 40 + 8 + 24 + 16 + 24);
	CHECK_EQ(pi.l4_off, lay.l4_off);
	CHECK_EQ(pi.l4_proto, 6);
	CHECK_EQ(pi.dport, 53);
	CHECK(pi.flags & GPURX_PF_IPV6_EXT, "ext flag");

	/* IPv6 fragment header: first keeps L4, later does not. */
	base_v6(&s, GPURX_IPPROTO_UDP);
	s.n_ext = 1;
	s.ext[0] = GPURX_IPPROTO_FRAGMENT;
	s.more_frags = 1;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK(pi.flags & GPURX_PF_FRAGMENT, "v6 frag flag");
	CHECK_EQ(pi.dport, 53);
	s.frag_off = 100;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK(pi.flags & GPURX_PF_FRAG_LATER, "v6 later frag");
	CHECK_EQ(pi.l4_proto, GPURX_IPPROTO_UDP);
	CHECK_EQ(pi.frag_offset, 100);
	CHECK_EQ(pi.sport, 0);

	/* ICMP, ICMPv6, SCTP. */
	base_v4_tcp(&s);
	s.proto = GPURX_IPPROTO_ICMP;
	s.icmp_type = 8;
	s.icmp_code = 0;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.l4_proto, 1);
	CHECK_EQ(pi.icmp_type, 8);
	CHECK(!(pi.flags & GPURX_PF_L4_PORTS), "icmp has no ports");
	base_v6(&s, GPURX_IPPROTO_ICMPV6);
	s.icmp_type = 135;
	s.icmp_code = 3;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.icmp_type, 135);
	CHECK_EQ(pi.icmp_code, 3);
	base_v4_tcp(&s);
	s.proto = GPURX_IPPROTO_SCTP;
	s.sport = 2905;
	s.dport = 2944;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.sport, 2905);
	CHECK_EQ(pi.dport, 2944);
	CHECK_EQ(pi.payload_off, 34 + 12);

	/* Ethernet padding after a short datagram is not payload. */
	base_v4_tcp(&s);
	s.proto = GPURX_IPPROTO_UDP;
	s.payload_len = 2;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(len, 60);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.ip_end, 14 + 20 + 8 + 2);

	/* Non-IP: ARP and an 802.3 length frame. */
	memset(&s, 0, sizeof(s));
	s.ethertype = 0x0806;
	s.l2_body_len = 28;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(pi.ethertype, 0x0806);
	CHECK_EQ(pi.ip_version, 0);
	s.ethertype = 0x0030;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK(pi.flags & GPURX_PF_LLC, "llc flag");

	/* A snapshot that cuts TCP options still yields the ports. */
	base_v4_tcp(&s);
	s.tcp_opt_len = 20;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	pi = parse_exact(buf, 34 + 24, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_TRUNCATED_L4);
	CHECK_EQ(pi.dport, 443);
	CHECK(pi.flags & GPURX_PF_L4, "ports kept");
}

/* One hand-made case per malformed kind. */
static void
test_malformed(void)
{
	struct gpugen_pkt_spec s;
	struct gpugen_pkt_layout lay;
	struct gpurx_pkt_info pi;
	uint8_t buf[PKTGEN_MAX_LEN];
	uint32_t len;

	base_v4_tcp(&s);
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, 13, len).malformed, GPURX_MAL_TRUNCATED_L2);
	CHECK_EQ(parse_exact(buf, 0, 0).malformed, GPURX_MAL_TRUNCATED_L2);
	CHECK_EQ(parse_exact(buf, 33, len).malformed, GPURX_MAL_TRUNCATED_L3);
	CHECK_EQ(parse_exact(buf, 14, len).malformed, GPURX_MAL_TRUNCATED_L3);
	CHECK_EQ(parse_exact(buf, 40, len).malformed, GPURX_MAL_TRUNCATED_L4);

	buf[14] = 0x55;	/* version 5 */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_IP_VERSION);
	buf[14] = 0x44;	/* IHL 16 bytes */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_IHL);
	buf[14] = 0x45;
	buf[16] = 0x10;	/* total length 4096 > frame */
	pi = parse_exact(buf, len, len);
	CHECK_EQ(pi.malformed, GPURX_MAL_BAD_IP_LEN);
	CHECK_EQ(pi.ip_version, 4);	/* addresses are still reported */
	CHECK_EQ(pi.src[12], 10);
	buf[16] = 0;
	buf[17] = 19;	/* shorter than the header */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_IP_LEN);
	buf[17] = 30;	/* TCP header does not fit the datagram */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_L4_LEN);

	base_v4_tcp(&s);
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	buf[lay.l4_off + 12] = 0x40;	/* data offset 4 */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_TCP_OFFSET);
	buf[lay.l4_off + 12] = 0xf0;	/* 60 bytes: fits (100 payload) */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_NONE);
	s.payload_len = 10;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	buf[lay.l4_off + 12] = 0xf0;	/* 60 bytes > 30 left */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_TCP_OFFSET);

	/* UDP length field below its own header. */
	base_v4_tcp(&s);
	s.proto = GPURX_IPPROTO_UDP;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	buf[lay.l4_off + 4] = 0;
	buf[lay.l4_off + 5] = 7;
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_L4_LEN);

	/* VLAN: tag cut, and more tags than the bound. */
	base_v4_tcp(&s);
	s.n_vlans = 2;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, 16, len).malformed, GPURX_MAL_TRUNCATED_VLAN);
	CHECK_EQ(parse_exact(buf, 20, len).malformed, GPURX_MAL_TRUNCATED_VLAN);
	CHECK_EQ(parse_exact(buf, 22, len).malformed, GPURX_MAL_TRUNCATED_L3);
	s.n_vlans = GPURX_MAX_VLANS + 1;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_TOO_MANY_VLANS);
	s.n_vlans = GPURX_MAX_VLANS;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_NONE);

	/* IPv6: wrong version, short header, bad payload length. */
	base_v6(&s, GPURX_IPPROTO_UDP);
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, 53, len).malformed, GPURX_MAL_TRUNCATED_L3);
	CHECK_EQ(parse_exact(buf, 58, len).malformed, GPURX_MAL_TRUNCATED_L4);
	buf[18] = 0x10;	/* payload length 4096+ */
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_IP_LEN);
	buf[18] = 0;
	buf[14] = 0x40;
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_BAD_IP_VERSION);

	/* IPv6 extension headers: cut, lying length, too many. */
	base_v6(&s, GPURX_IPPROTO_TCP);
	s.n_ext = 2;
	s.ext[0] = GPURX_IPPROTO_HOPOPTS;
	s.ext[1] = GPURX_IPPROTO_DSTOPTS;
	s.ext_len[1] = 3;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_NONE);
	CHECK_EQ(parse_exact(buf, lay.ext_off[1] + 1, len).malformed,
		GPURX_MAL_TRUNCATED_EXT_HDR);
	CHECK_EQ(parse_exact(buf, lay.ext_off[1] + 20, len).malformed,
		GPURX_MAL_TRUNCATED_EXT_HDR);
	buf[lay.ext_off[1] + 1] = 200;
	CHECK_EQ(parse_exact(buf, len, len).malformed,
		GPURX_MAL_BAD_EXT_HDR_LEN);
	s.n_ext = GPURX_MAX_EXT_HDRS + 1;
	for (int i = 0; i < s.n_ext; i++) {
		s.ext[i] = GPURX_IPPROTO_DSTOPTS;
		s.ext_len[i] = 0;
	}
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, len, len).malformed,
		GPURX_MAL_TOO_MANY_EXT_HDRS);
	s.n_ext = GPURX_MAX_EXT_HDRS;
	len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
	CHECK_EQ(parse_exact(buf, len, len).malformed, GPURX_MAL_NONE);

	for (int k = 0; k < GPURX_MAL_COUNT; k++)
		CHECK(strcmp(gpurx_malformed_str(k), "UNKNOWN") != 0,
			"kind %d has a name", k);
	CHECK(strcmp(gpurx_malformed_str(GPURX_MAL_BAD_IHL), "BAD_IHL") == 0,
		"name");
}

/* The generator predicts the kind of every mutation it makes. */
static void
test_generated(void)
{
	static struct pktgen_pkt p;
	struct pktgen g;
	unsigned int seen[GPURX_MAL_COUNT] = {0};
	unsigned int n = 50000;

	pktgen_init(&g, 12345);
	for (unsigned int i = 0; i < n; i++) {
		struct gpurx_pkt_info pi;

		pktgen_next(&g, &p);
		pi = parse_exact(p.data, p.caplen, p.wirelen);
		CHECK(pi.l3_off <= p.caplen || pi.malformed != GPURX_MAL_NONE,
			"l3 inside capture");
		CHECK(pi.malformed < GPURX_MAL_COUNT, "kind in range");
		if (p.expect_malformed < 0)
			continue;
		CHECK(pi.malformed == p.expect_malformed,
			"packet %u (%s): got %s, expected %s", i, p.what,
			gpurx_malformed_str(pi.malformed),
			gpurx_malformed_str(p.expect_malformed));
		seen[p.expect_malformed]++;
	}
	for (int k = 0; k < GPURX_MAL_COUNT; k++)
		CHECK(seen[k] > 0, "generator never produced %s",
			gpurx_malformed_str(k));
}

int
main(void)
{
	test_fields();
	test_malformed();
	test_generated();
	return check_finish("test_parse");
}
