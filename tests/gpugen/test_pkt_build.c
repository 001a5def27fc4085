/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet builder, checksums, field engine and stamps (gpugen_build.h,
 * gpugen_fe.h, gpugen_stamp.h), CPU build: frames of every kind parsed back by
 * pkt_parse.h and matched by libpcap's filters, checksums checked by an
 * independent sum, incremental updates against full recomputation, the
 * engine's sequences and named fields, and a randomized round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "gpugen_build.h"
#include "gpugen_fe.h"
#include "pkt_parse.h"
#include "gpugen_stamp.h"
#include "pb_specs.h"
#include "check.h"

#define BUFSZ 4096

/*
 * The one's complement sum done differently from gpugen_build.h: the
 * pseudo-header laid out as bytes in front of a copy of the segment.
 * Returns 1 when the checksums that the layout names verify.
 */
static uint16_t
ref_sum(const uint8_t *p, size_t n)
{
	uint64_t s = 0;

	for (size_t k = 0; k < n; k++)
		s += (k & 1) ? p[k] : (uint64_t)p[k] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static int
csums_ok(const uint8_t *f, const struct gpugen_pkt_layout *l)
{
	static uint8_t tmp[65536 + 64];
	size_t n = 0, seg;

	if (l->ip4_csum_off != 0 && ref_sum(f + l->l3_off, l->l3_hlen) != 0xffff)
		return 0;
	if (l->l4_csum_off == 0)
		return 1;
	seg = l->ip_end - l->l4_off;
	if (l->l4_proto != GPURX_IPPROTO_ICMP) {
		if (l->ip_version == 4) {
			memcpy(tmp, f + l->l3_off + 12, 8);
			n = 8;
			tmp[n++] = 0;
			tmp[n++] = l->l4_proto;
			tmp[n++] = (uint8_t)(seg >> 8);
			tmp[n++] = (uint8_t)seg;
		} else {
			memcpy(tmp, f + l->l3_off + 8, 32);
			n = 32;
			tmp[n++] = (uint8_t)(seg >> 24);
			tmp[n++] = (uint8_t)(seg >> 16);
			tmp[n++] = (uint8_t)(seg >> 8);
			tmp[n++] = (uint8_t)seg;
			tmp[n++] = 0;
			tmp[n++] = 0;
			tmp[n++] = 0;
			tmp[n++] = l->l4_proto;
		}
	}
	memcpy(tmp + n, f + l->l4_off, seg);
	if (l->l4_proto == GPURX_IPPROTO_UDP &&
			gpurx_be16(f + l->l4_csum_off) == 0)
		return 0;	/* the builder always sends one */
	return ref_sum(tmp, n + seg) == 0xffff;
}

/* ---- Spec → frame → parse --------------------------------------------- */

static int
has_later_frag(const struct gpugen_pkt_spec *s)
{
	if (s->ip_version == 4)
		return s->frag_off != 0;
	for (int i = 0; i < s->n_ext; i++)
		if (s->ext[i] == GPURX_IPPROTO_FRAGMENT)
			return s->frag_off != 0;
	return 0;
}

/* Every field of the parse against the spec; returns failures. */
static int
check_round_trip(const struct gpugen_pkt_spec *s, const char *what)
{
	static uint8_t buf[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct gpurx_pkt_info pi;
	uint32_t len, pay;
	unsigned int before = check_failures();
	int later = has_later_frag(s);
	uint8_t want[16];

	len = gpugen_pkt_build(s, buf, sizeof(buf), &lay);
	CHECK(len != 0, "%s: not built", what);
	if (len == 0)
		return 1;
	CHECK_EQ(len, lay.len);
	CHECK(len >= 60, "%s: %u bytes", what, len);
	gpurx_pkt_parse(buf, len, len, &pi);
	CHECK(pi.malformed == GPURX_MAL_NONE, "%s: %s", what,
		gpurx_malformed_str(pi.malformed));
	CHECK_EQ(pi.l3_off, lay.l3_off);
	CHECK_EQ(pi.vlan_count, (uint32_t)s->n_vlans);
	if (s->n_vlans > 0) {
		CHECK_EQ(lay.vlan_off, 12);
		CHECK_EQ(pi.vlan_id, s->vid[0] & 0xfff);
	}
	if (s->n_vlans > 1)
		CHECK_EQ(pi.inner_vlan_id, s->vid[1] & 0xfff);
	if (s->ip_version == 0) {
		CHECK_EQ(pi.ethertype, s->ethertype);
		CHECK_EQ(lay.ip_end, lay.l3_off + s->l2_body_len);
		return (int)(check_failures() - before);
	}
	CHECK_EQ(pi.payload_off + (lay.l4_off && (s->proto == GPURX_IPPROTO_ICMP ||
		s->proto == GPURX_IPPROTO_ICMPV6) ? 4 : 0), lay.payload_off);
	/* IPv6 payload length 0 reads as a jumbogram: the frame ends it. */
	if (s->ip_version == 4 || lay.ip_end > lay.l3_off + 40)
		CHECK_EQ(pi.ip_end, lay.ip_end);
	CHECK_EQ(pi.ethertype, s->ip_version == 4 ? GPURX_ETHERTYPE_IPV4 :
		GPURX_ETHERTYPE_IPV6);
	CHECK_EQ(pi.ip_version, (uint32_t)s->ip_version);
	CHECK_EQ(pi.l4_proto, s->proto);
	CHECK_EQ(pi.ttl, s->ttl ? s->ttl : 64);
	if (s->ip_version == 4) {
		gpurx_addr_from_v4(want, gpurx_view_linear(s->src), 0);
		CHECK(memcmp(pi.src, want, 16) == 0, "%s: src", what);
		gpurx_addr_from_v4(want, gpurx_view_linear(s->dst), 0);
		CHECK(memcmp(pi.dst, want, 16) == 0, "%s: dst", what);
		CHECK_EQ(buf[lay.l3_off + 1], s->tos);
		CHECK_EQ(gpurx_be16(buf + lay.l3_off + 4), s->ip_id);
		CHECK_EQ(!!(pi.flags & GPURX_PF_IP_OPTIONS), s->ip_opt_len != 0);
	} else {
		CHECK(memcmp(pi.src, s->src, 16) == 0, "%s: src", what);
		CHECK(memcmp(pi.dst, s->dst, 16) == 0, "%s: dst", what);
		CHECK_EQ((gpurx_be16(buf + lay.l3_off) >> 4) & 0xff, s->tos);
		if (!later)
			CHECK_EQ(pi.ext_hdr_count, (uint32_t)s->n_ext);
	}
	CHECK_EQ(!!(pi.flags & GPURX_PF_FRAG_LATER), later);
	if (later) {
		CHECK_EQ(lay.l4_off, 0);
		CHECK_EQ(lay.l4_csum_off, 0);
	} else if (lay.l4_off != 0) {
		CHECK_EQ(pi.l4_off, lay.l4_off);
		CHECK(pi.flags & GPURX_PF_L4, "%s: no L4", what);
	}
	if (!later && (s->proto == GPURX_IPPROTO_TCP ||
			s->proto == GPURX_IPPROTO_UDP ||
			s->proto == GPURX_IPPROTO_SCTP)) {
		CHECK_EQ(pi.sport, s->sport);
		CHECK_EQ(pi.dport, s->dport);
	}
	if (!later && s->proto == GPURX_IPPROTO_TCP) {
		CHECK_EQ(pi.tcp_flags, s->tcp_flags);
		CHECK_EQ(gpurx_be32(buf + lay.l4_off + 4), s->tcp_seq);
		CHECK_EQ(gpurx_be32(buf + lay.l4_off + 8), s->tcp_ack);
		CHECK_EQ(lay.l4_hlen, 20u + s->tcp_opt_len);
	}
	if (!later && (s->proto == GPURX_IPPROTO_ICMP ||
			s->proto == GPURX_IPPROTO_ICMPV6)) {
		CHECK_EQ(pi.icmp_type, s->icmp_type);
		CHECK_EQ(pi.icmp_code, s->icmp_code);
	}
	/* Checksums: present exactly where computable, and right. */
	CHECK_EQ(lay.ip4_csum_off != 0, s->ip_version == 4);
	CHECK_EQ(lay.l4_csum_off != 0, !lay.frag && lay.l4_off != 0 &&
		s->proto != GPURX_IPPROTO_SCTP);
	CHECK(csums_ok(buf, &lay), "%s: bad checksum", what);
	pay = lay.ip_end - lay.payload_off;
	CHECK_EQ(pay, s->payload_len);
	for (uint32_t k = 0; k < pay; k++) {
		uint8_t b = s->payload_pattern == GPUGEN_PB_PAY_INC ?
			(uint8_t)(s->payload_byte + k) : s->payload_byte;

		if (buf[lay.payload_off + k] != b) {
			CHECK(0, "%s: payload byte %u", what, k);
			break;
		}
	}
	for (uint32_t k = lay.ip_end; k < len; k++)
		CHECK(buf[k] == 0, "%s: padding byte %u", what, k);
	return (int)(check_failures() - before);
}

/* libpcap's compiled filter must accept the frame. */
static void
check_bpf(const struct gpugen_pkt_spec *s, const char *expr, const char *what)
{
	static uint8_t buf[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct bpf_program bp;
	struct pcap_pkthdr h;
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	uint32_t len = gpugen_pkt_build(s, buf, sizeof(buf), &lay);

	CHECK(p != NULL, "pcap_open_dead");
	if (p == NULL)
		return;
	if (pcap_compile(p, &bp, expr, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		CHECK(0, "%s: pcap_compile(%s): %s", what, expr, pcap_geterr(p));
		pcap_close(p);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.caplen = h.len = len;
	CHECK(pcap_offline_filter(&bp, &h, buf) != 0, "%s: '%s' rejects it",
		what, expr);
	pcap_freecode(&bp);
	pcap_close(p);
}

static void
test_every_kind(void)
{
	static const uint32_t pays[] = {0, 1, 7, 24, 100, 1457};
	static const uint8_t protos4[] = {GPURX_IPPROTO_TCP, GPURX_IPPROTO_UDP,
		GPURX_IPPROTO_ICMP, GPURX_IPPROTO_SCTP, 47};
	static const uint8_t protos6[] = {GPURX_IPPROTO_TCP, GPURX_IPPROTO_UDP,
		GPURX_IPPROTO_ICMPV6, GPURX_IPPROTO_SCTP, GPURX_IPPROTO_ESP};
	static const char *const pnames[] = {"tcp", "udp", "icmp", "sctp", ""};
	struct gpugen_pkt_spec s;
	char what[128], expr[256];
	int built = 0;

	for (int ipv = 4; ipv <= 6; ipv += 2)
	for (int vl = 0; vl <= 2; vl++)
	for (int pi = 0; pi < 5; pi++)
	for (int opt = 0; opt < 2; opt++)
	for (size_t k = 0; k < sizeof(pays) / sizeof(pays[0]); k++) {
		uint8_t proto = ipv == 4 ? protos4[pi] : protos6[pi];
		const char *vp = vl == 0 ? "" : vl == 1 ? "vlan and " :
			"vlan and vlan and ";

		pb_base_spec(&s, ipv, vl, proto);
		s.payload_len = pays[k];
		s.payload_pattern = (uint8_t)(k & 1);
		if (opt && ipv == 4)
			s.ip_opt_len = 8;
		if (opt && ipv == 6) {
			s.n_ext = 2;
			s.ext[0] = GPURX_IPPROTO_HOPOPTS;
			s.ext[1] = GPURX_IPPROTO_DSTOPTS;
			s.ext_len[1] = 1;
		}
		if (opt && proto == GPURX_IPPROTO_TCP)
			s.tcp_opt_len = 12;
		snprintf(what, sizeof(what), "v%d vlans %d proto %u opt %d pay %u",
			ipv, vl, proto, opt, pays[k]);
		if (check_round_trip(&s, what) == 0)
			built++;
		if (ipv == 4 && pnames[pi][0])
			snprintf(expr, sizeof(expr), "%sip and %s and src host "
				"10.0.0.1 and dst host 192.168.1.2%s", vp,
				pnames[pi], pi < 2 ? " and src port 40000 and "
				"dst port 443" : "");
		else if (ipv == 4)
			snprintf(expr, sizeof(expr), "%sip proto 47 and ip[8] = 33",
				vp);
		else if (!opt && pnames[pi][0])
			snprintf(expr, sizeof(expr), "%sip6 and %s and src host "
				"2001:db8::1%s", vp, pi == 2 ? "icmp6" : pnames[pi],
				pi < 2 ? " and dst port 443" : "");
		else
			snprintf(expr, sizeof(expr), "%sip6 and dst host 2001:db8::2",
				vp);
		check_bpf(&s, expr, what);
	}
	CHECK_EQ(built, 2 * 3 * 5 * 2 * 6);

	/* Non-IP: ARP. */
	pb_base_spec(&s, 0, 1, 0);
	s.ethertype = 0x0806;
	s.l2_body_len = 28;
	check_round_trip(&s, "arp");
	check_bpf(&s, "vlan and arp", "arp");

	/* Fragments: a first one (L4, no L4 checksum) and a later one. */
	pb_base_spec(&s, 4, 0, GPURX_IPPROTO_UDP);
	s.payload_len = 64;
	s.more_frags = 1;
	check_round_trip(&s, "v4 first fragment");
	check_bpf(&s, "ip[6:2] & 0x2000 != 0 and udp port 443", "v4 frag");
	s.frag_off = 100;
	check_round_trip(&s, "v4 later fragment");
	check_bpf(&s, "ip[6:2] & 0x1fff = 100", "v4 later frag");
	pb_base_spec(&s, 6, 0, GPURX_IPPROTO_TCP);
	s.n_ext = 1;
	s.ext[0] = GPURX_IPPROTO_FRAGMENT;
	s.frag_off = 7;
	s.payload_len = 80;
	check_round_trip(&s, "v6 later fragment");
	check_bpf(&s, "ip6 and ip6[6] = 44", "v6 frag");

	/* Refusals: too big for the buffer, for IP, bad option lengths. */
	{
		static uint8_t buf[BUFSZ];
		struct gpugen_pkt_layout lay;

		pb_base_spec(&s, 4, 0, GPURX_IPPROTO_UDP);
		s.payload_len = BUFSZ;
		CHECK_EQ(gpugen_pkt_build(&s, buf, sizeof(buf), &lay), 0);
		s.payload_len = 20;
		CHECK_EQ(gpugen_pkt_build(&s, buf, 59, &lay), 0);
		s.ip_opt_len = 6;
		CHECK_EQ(gpugen_pkt_build(&s, buf, sizeof(buf), &lay), 0);
		s.ip_opt_len = 0;
		s.ip_version = 5;
		CHECK_EQ(gpugen_pkt_build(&s, buf, sizeof(buf), &lay), 0);
		s.ip_version = 4;
		s.n_vlans = GPUGEN_PB_MAX_VLANS + 1;
		CHECK_EQ(gpugen_pkt_build(&s, buf, sizeof(buf), &lay), 0);
		s.n_vlans = 0;
		s.payload_len = 65535 - 28 + 1;
		{
			uint8_t *big = malloc(70000);

			CHECK_EQ(gpugen_pkt_build(&s, big, 70000, &lay), 0);
			s.payload_len--;
			CHECK(gpugen_pkt_build(&s, big, 70000, &lay) != 0,
				"largest datagram");
			CHECK(csums_ok(big, &lay), "largest datagram checksum");
			free(big);
		}
	}
}

static void
test_fuzz_round_trip(void)
{
	struct gpugen_pkt_spec s;
	char what[64];
	int bad = 0;

	for (int n = 0; n < 20000 && bad < 5; n++) {
		pb_random_spec(&s);
		snprintf(what, sizeof(what), "random #%d", n);
		bad += check_round_trip(&s, what) != 0;
	}
}

/* ---- Incremental checksums ------------------------------------------- */

static void
test_incremental(void)
{
	static uint8_t buf[BUFSZ], ref[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	struct gpugen_fe_prog p;
	int tried = 0;

	for (int n = 0; n < 20000; n++) {
		uint32_t m[2], m2[2], off, len, lo;

		pb_random_spec(&s);
		if (gpugen_pkt_build(&s, buf, sizeof(buf), &lay) == 0 ||
				(lay.ip4_csum_off == 0 && lay.l4_csum_off == 0))
			continue;
		CHECK_EQ(gpugen_fe_init(&p, &lay, 1, 0, 1), 0);
		/* A few bytes anywhere in IP but the fields the engine keeps. */
		lo = lay.l3_off;
		len = 1 + pb_rnd(8);
		if (lay.ip_end - lo < len)
			continue;
		off = lo + pb_rnd(lay.ip_end - lo - len + 1);
		if (gpugen_fe_protected(&p, off, len))
			continue;
		gpugen_fe_sums(&p, buf, off, len, m);
		for (uint32_t k = 0; k < len; k++)
			buf[off + k] = pb_rnd(4) ? (uint8_t)pb_rnd(256) : 0;
		gpugen_fe_sums(&p, buf, off, len, m2);
		gpugen_fe_fix(&p, buf, m, m2);
		memcpy(ref, buf, lay.len);
		gpugen_pkt_csum_fill(ref, &lay);
		CHECK(memcmp(ref, buf, lay.len) == 0,
			"#%d: incremental != full (off %u len %u, ip4 %04x/%04x, "
			"l4 %04x/%04x)", n, off, len,
			lay.ip4_csum_off ? gpurx_be16(buf + lay.ip4_csum_off) : 0,
			lay.ip4_csum_off ? gpurx_be16(ref + lay.ip4_csum_off) : 0,
			lay.l4_csum_off ? gpurx_be16(buf + lay.l4_csum_off) : 0,
			lay.l4_csum_off ? gpurx_be16(ref + lay.l4_csum_off) : 0);
		CHECK(csums_ok(buf, &lay), "#%d: checksum after update", n);
		tried++;
	}
	CHECK(tried > 10000, "only %d incremental cases", tried);

	/* RFC 1624's own example: 0xdd2f with 0x5555 changed to 0x3285. */
	CHECK_EQ(gpugen_csum_adjust(0xdd2f, 0x5555, 0x3285), 0x0000);
}

/* ---- Field engine ---------------------------------------------------- */

static uint32_t
make_tmpl(struct gpugen_pkt_spec *s, uint8_t *buf, struct gpugen_pkt_layout *lay)
{
	uint32_t len = gpugen_pkt_build(s, buf, BUFSZ, lay);

	CHECK(len != 0, "template not built");
	return len;
}

static void
test_fe_sequences(void)
{
	static uint8_t t[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	struct gpugen_fe_prog p, q;
	int a, b, c, d, e, f, g, tu;

	pb_base_spec(&s, 4, 0, GPURX_IPPROTO_UDP);
	s.payload_len = 40;
	make_tmpl(&s, t, &lay);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 7, 3, 4), 0);
	a = gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 10, 13, 11, 1, 0);
	b = gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 10, 13, 11, 3, 0);
	c = gpugen_fe_add_var(&p, 2, GPUGEN_FE_DEC, 100, 104, 101, 1, 0);
	d = gpugen_fe_add_var(&p, 4, GPUGEN_FE_RANDOM, 1000, 1009, 1000, 1, 0);
	e = gpugen_fe_add_var(&p, 8, GPUGEN_FE_INC, 0, ~0ull, ~0ull - 1, 1, 0);
	f = gpugen_fe_add_var(&p, 2, GPUGEN_FE_INC, 0, 65535, 0, 1, 1);
	g = gpugen_fe_add_var(&p, 8, GPUGEN_FE_INC, 5, (1ull << 62) + 5, 5,
		(1ull << 61) + 3, 0);
	tu = gpugen_fe_add_tuple(&p, 0x0a000001, 0x0a000003, 1000, 1001, 0, 0);
	CHECK(a == 0 && b == 1 && c == 2 && d == 3 && e == 4 && f == 5 &&
		g == 6 && tu == 7, "var indexes %d %d %d %d %d %d %d %d",
		a, b, c, d, e, f, g, tu);
	{
		static const uint64_t inc1[] = {11, 12, 13, 10, 11, 12};
		static const uint64_t inc3[] = {11, 10, 13, 12, 11, 10};
		static const uint64_t dec1[] = {101, 100, 104, 103, 102, 101, 100};

		for (uint64_t i = 0; i < 6; i++) {
			CHECK_EQ(gpugen_fe_value(&p, a, i), inc1[i]);
			CHECK_EQ(gpugen_fe_value(&p, b, i), inc3[i]);
		}
		for (uint64_t i = 0; i < 7; i++)
			CHECK_EQ(gpugen_fe_value(&p, c, i), dec1[i]);
	}
	/* 8 bytes over the full range: wraps past 2^64 - 1 to 0. */
	CHECK_EQ(gpugen_fe_value(&p, e, 0), ~0ull - 1);
	CHECK_EQ(gpugen_fe_value(&p, e, 1), ~0ull);
	CHECK_EQ(gpugen_fe_value(&p, e, 2), 0);
	/* Per burst of 4: one value per burst. */
	for (uint64_t i = 0; i < 16; i++)
		CHECK_EQ(gpugen_fe_value(&p, f, i), i / 4);
	/* Large range and step: against 128-bit arithmetic. */
	for (uint64_t i = 0; i < 1000; i++) {
		unsigned __int128 r = (1ull << 62) + 1;
		uint64_t idx = i * 0x9e3779b97f4a7c1ull + 13;

		CHECK_EQ(gpugen_fe_value(&p, g, idx),
			5 + (uint64_t)(((unsigned __int128)idx *
			((1ull << 61) + 3)) % r));
	}
	/* Tuple: addresses fastest, then ports, then around. */
	{
		static const uint32_t ips[] = {1, 2, 3, 1, 2, 3, 1};
		static const uint16_t ports[] = {1000, 1000, 1000, 1001, 1001,
			1001, 1000};

		for (uint64_t i = 0; i < 7; i++) {
			uint64_t v = gpugen_fe_value(&p, tu, i);

			CHECK_EQ(v >> 16, 0x0a000000u + ips[i]);
			CHECK_EQ(v & 0xffff, ports[i]);
		}
		CHECK_EQ(gpugen_fe_add_tuple(&p, 1, 10, 5, 9, 4, 0), 8);
		CHECK_EQ(gpugen_fe_value(&p, 8, 4) >> 16, 1);	/* limit 4 */
	}
	/* Random: in range, repeatable by seed, different with another. */
	{
		int hist[10] = {0}, same = 0;

		q = p;
		q.seed = 8;
		for (uint64_t i = 0; i < 10000; i++) {
			uint64_t v = gpugen_fe_value(&p, d, i);

			CHECK(v >= 1000 && v <= 1009, "random %llu",
				(unsigned long long)v);
			if (v >= 1000 && v <= 1009)
				hist[v - 1000]++;
			CHECK_EQ(gpugen_fe_value(&p, d, i), v);
			same += gpugen_fe_value(&q, d, i) == v;
		}
		for (int k = 0; k < 10; k++)
			CHECK(hist[k] > 800 && hist[k] < 1200, "random bucket %d: %d",
				k, hist[k]);
		CHECK(same < 1500, "seeds 7 and 8 agree %d times in 10000", same);
		q.seed = 7;
		q.stream = 4;
		same = 0;
		for (uint64_t i = 0; i < 1000; i++)
			same += gpugen_fe_value(&q, d, i) == gpugen_fe_value(&p, d, i);
		CHECK(same < 200, "streams 3 and 4 agree %d times in 1000", same);
	}
	/* Refusals. */
	CHECK_EQ(gpugen_fe_add_var(&p, 3, GPUGEN_FE_INC, 0, 1, 0, 1, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 0, 256, 0, 1, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_add_var(&p, 2, GPUGEN_FE_INC, 5, 4, 5, 1, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_add_var(&p, 2, GPUGEN_FE_INC, 5, 9, 10, 1, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_add_var(&p, 2, 9, 5, 9, 5, 1, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_add_tuple(&p, 2, 1, 0, 0, 0, 0), -EINVAL);
	while (p.n_vars < GPUGEN_FE_MAX_VARS)
		gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 0, 1, 0, 1, 0);
	CHECK_EQ(gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 0, 1, 0, 1, 0), -ENOSPC);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 1, 0, 0), -EINVAL);
}

/* Build packets 0..n-1; each parsed back and checked by check(). */
static void
test_fe_fields(void)
{
	static uint8_t t[BUFSZ], pkt[BUFSZ], again[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	struct gpugen_fe_prog p;
	struct gpurx_pkt_info pi;
	struct gpugen_stamp st;
	int src, port, vid, ttl, tu, tos, tos4;

	/* IPv4 UDP in two VLANs: addresses, ports, VLAN id, TTL, stamp. */
	pb_base_spec(&s, 4, 2, GPURX_IPPROTO_UDP);
	s.payload_len = 64;
	make_tmpl(&s, t, &lay);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 99, 5, 8), 0);
	src = gpugen_fe_add_var(&p, 4, GPUGEN_FE_INC, 0x0a000001, 0x0a0000ff,
		0x0a000001, 1, 0);
	port = gpugen_fe_add_var(&p, 2, GPUGEN_FE_RANDOM, 1024, 65535, 1024, 1, 0);
	vid = gpugen_fe_add_var(&p, 2, GPUGEN_FE_DEC, 1, 4094, 4094, 1, 1);
	ttl = gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 1, 255, 64, 1, 0);
	tos4 = gpugen_fe_add_var(&p, 1, GPUGEN_FE_RANDOM, 0, 255, 0, 1, 0);
	CHECK(gpugen_fe_write_field(&p, "ipv4.src", src, 0, 0) >= 0, "ipv4.src");
	CHECK(gpugen_fe_write_field(&p, "ipv4.tos", tos4, 0, 0) >= 0, "ipv4.tos");
	CHECK(gpugen_fe_write_field(&p, "udp.sport", port, 0, 0) >= 0, "sport");
	CHECK(gpugen_fe_write_field(&p, "udp.dport", port, 0, 1) >= 0, "dport");
	CHECK(gpugen_fe_write_field(&p, "vlan.inner.id", vid, 0, 0) >= 0, "vid");
	CHECK(gpugen_fe_write_field(&p, "ip.ttl", ttl, 0, 0) >= 0, "ip.ttl");
	CHECK(gpugen_fe_write_field(&p, "eth.src", src, 0, 0) >= 0, "eth.src");
	CHECK_EQ(gpugen_fe_set_stamp(&p), 0);
	for (uint64_t i = 0; i < 300; i++) {
		uint64_t sp = gpugen_fe_value(&p, port, i);

		gpugen_fe_make(&p, t, pkt, i, 1000 + i);
		gpurx_pkt_parse(pkt, lay.len, lay.len, &pi);
		CHECK(pi.malformed == GPURX_MAL_NONE, "#%llu %s",
			(unsigned long long)i, gpurx_malformed_str(pi.malformed));
		CHECK_EQ(gpurx_be32(pi.src + 12), 0x0a000001 + i % 255);
		CHECK_EQ(gpurx_be32(pkt + 8), 0x0a000001 + i % 255);
		CHECK_EQ(pkt[6], 0x02);	/* eth.src high bytes untouched */
		CHECK_EQ(pi.sport, sp);
		CHECK_EQ(pi.dport, (sp + 1) & 0xffff);
		CHECK_EQ(pi.vlan_id, 100);
		CHECK_EQ(pi.inner_vlan_id, 4094 - i / 8);
		CHECK_EQ(pkt[18] >> 5, 4);	/* PCP kept by the mask */
		CHECK_EQ(pi.ttl, 64 + i > 255 ? 64 + i - 255 : 64 + i);
		CHECK_EQ(pkt[lay.l3_off + 1], gpugen_fe_value(&p, tos4, i));
		/* Its neighbours are the engine's. */
		CHECK_EQ(pkt[lay.l3_off], 0x45);
		CHECK_EQ(gpurx_be16(pkt + lay.l3_off + 2), lay.len - lay.l3_off);
		CHECK(csums_ok(pkt, &lay), "#%llu: checksum",
			(unsigned long long)i);
		CHECK_EQ(gpugen_stamp_find(pkt, lay.len, &pi, &st), 0);
		CHECK_EQ(st.stream, 5);
		CHECK_EQ(st.seq, i);
		CHECK_EQ(st.tx_ns, 1000 + i);
		/* Pure function of i: the same bytes built again later. */
		if (i % 37 == 0) {
			gpugen_fe_make(&p, t, again, i, 1000 + i);
			CHECK(memcmp(again, pkt, lay.len) == 0, "#%llu rebuilt",
				(unsigned long long)i);
		}
	}
	/* The template itself has no stamp. */
	gpurx_pkt_parse(t, lay.len, lay.len, &pi);
	CHECK_EQ(gpugen_stamp_find(t, lay.len, &pi, &st), -1);
	CHECK_EQ(gpugen_stamp_find(pkt, lay.payload_off + 23, &pi, &st), -1);

	/* Refusals on this template. */
	CHECK_EQ(gpugen_fe_write_field(&p, "tcp.sport", port, 0, 0), -ENXIO);
	CHECK_EQ(gpugen_fe_write_field(&p, "ipv6.src", src, 0, 0), -ENXIO);
	CHECK_EQ(gpugen_fe_write_field(&p, "udp.nope", port, 0, 0), -ENOENT);
	CHECK_EQ(gpugen_fe_write_field(&p, "udp.sport", src, 0, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_write_field(&p, "udp.sport", 99, 0, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l4_off + 6, port, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off + 9, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off + 1, port, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off + 3, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off + 10, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l4_off + 4, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.payload_off + 3, ttl, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.len - 1, port, 0, 0), -ERANGE);
	{
		int nw = (int)p.n_writes;

		CHECK_EQ(gpugen_fe_write_off(&p, lay.len - 1, ttl, 0, 0), nw);
	}

	/* IPv6 with extension headers, TCP: named offsets follow them. */
	pb_base_spec(&s, 6, 1, GPURX_IPPROTO_TCP);
	s.n_ext = 2;
	s.ext[0] = GPURX_IPPROTO_HOPOPTS;
	s.ext[1] = GPURX_IPPROTO_ROUTING;
	s.ext_len[1] = 2;
	s.tcp_opt_len = 8;
	s.payload_len = 30;
	make_tmpl(&s, t, &lay);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 1, 9, 1), 0);
	tu = gpugen_fe_add_tuple(&p, 0xc0000201, 0xc0000210, 5000, 5003, 0, 0);
	tos = gpugen_fe_add_var(&p, 1, GPUGEN_FE_INC, 0, 255, 0, 5, 0);
	vid = gpugen_fe_add_var(&p, 2, GPUGEN_FE_INC, 7, 9, 7, 1, 0);
	CHECK(gpugen_fe_write_field(&p, "ipv6.dst", tu, GPUGEN_FE_PART_IP, 0) >= 0,
		"ipv6.dst");
	CHECK(gpugen_fe_write_field(&p, "tcp.dport", tu, GPUGEN_FE_PART_PORT, 0) >= 0,
		"tcp.dport");
	CHECK(gpugen_fe_write_field(&p, "ip.tos", tos, 0, 0) >= 0, "ip.tos");
	CHECK(gpugen_fe_write_field(&p, "vlan.id", vid, 0, 0) >= 0, "vlan.id");
	CHECK_EQ(gpugen_fe_write_field(&p, "tcp.dport", tu, 0, 0), -EINVAL);
	CHECK_EQ(gpugen_fe_write_field(&p, "vlan.inner.id", vid, 0, 0), -ENXIO);
	CHECK_EQ(gpugen_fe_write_off(&p, lay.l3_off + 4, vid, 0, 0), -EPERM);
	CHECK_EQ(gpugen_fe_set_stamp(&p), 0);
	for (uint64_t i = 0; i < 200; i++) {
		gpugen_fe_make(&p, t, pkt, i, 5);
		gpurx_pkt_parse(pkt, lay.len, lay.len, &pi);
		CHECK(pi.malformed == GPURX_MAL_NONE, "v6 #%llu",
			(unsigned long long)i);
		CHECK_EQ(pi.ext_hdr_count, 2);
		CHECK_EQ(pi.l4_off, lay.l4_off);
		CHECK_EQ(gpurx_be32(pi.dst + 12), 0xc0000201 + i % 16);
		CHECK_EQ(pi.dst[0], 0x20);	/* prefix untouched */
		CHECK_EQ(pi.dport, 5000 + (i / 16) % 4);
		CHECK_EQ(pi.sport, 40000);
		CHECK_EQ((gpurx_be16(pkt + lay.l3_off) >> 4) & 0xff, (i * 5) & 0xff);
		CHECK_EQ(pkt[lay.l3_off] >> 4, 6);	/* version kept */
		CHECK_EQ(pi.vlan_id, 7 + i % 3);
		CHECK(csums_ok(pkt, &lay), "v6 #%llu checksum",
			(unsigned long long)i);
		CHECK_EQ(gpugen_stamp_find(pkt, lay.len, &pi, &st), 0);
		CHECK_EQ(st.seq, i);
		CHECK_EQ(st.stream, 9);
	}

	/* ICMP echo: the stamp follows identifier and sequence. */
	pb_base_spec(&s, 4, 0, GPURX_IPPROTO_ICMP);
	s.payload_len = 32;
	make_tmpl(&s, t, &lay);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 1, 2, 1), 0);
	vid = gpugen_fe_add_var(&p, 2, GPUGEN_FE_INC, 0, 65535, 0, 1, 0);
	CHECK(gpugen_fe_write_field(&p, "icmp.seq", vid, 0, 0) >= 0, "icmp.seq");
	CHECK_EQ(gpugen_fe_set_stamp(&p), 0);
	gpugen_fe_make(&p, t, pkt, 77, 1);
	gpurx_pkt_parse(pkt, lay.len, lay.len, &pi);
	CHECK_EQ(gpurx_be16(pkt + lay.l4_off + 6), 77);
	CHECK(csums_ok(pkt, &lay), "icmp checksum");
	CHECK_EQ(gpugen_stamp_find(pkt, lay.len, &pi, &st), 0);
	CHECK_EQ(st.seq, 77);
	/* The same frame in two buffers (RX buffer split), cut at every
	 * byte up to the stamp's end: the same stamp, even where it
	 * straddles them. */
	for (uint32_t cut = 1; cut < lay.payload_off + 4 + GPUGEN_STAMP_LEN;
			cut++) {
		struct gpugen_stamp sv;
		uint8_t tail[256];

		memcpy(tail, pkt + cut, lay.len - cut);
		memset(&sv, 0, sizeof(sv));
		CHECK_EQ(gpugen_stamp_find_view(gpurx_view_split(pkt, cut, tail),
			lay.len, &pi, &sv), 0);
		CHECK(sv.stream == st.stream && sv.seq == 77 &&
			sv.tx_ns == st.tx_ns, "split at %u", cut);
	}

	/* A payload too short for a stamp. */
	pb_base_spec(&s, 4, 0, GPURX_IPPROTO_UDP);
	s.payload_len = 23;
	make_tmpl(&s, t, &lay);
	CHECK_EQ(gpugen_fe_init(&p, &lay, 1, 2, 1), 0);
	CHECK_EQ(gpugen_fe_set_stamp(&p), -EMSGSIZE);
}

/*
 * The sums the field engine takes from values (gpugen_csum_span_val())
 * against summing the bytes (gpugen_csum_span()): one value of 1 to 8
 * bytes or three of 8 (a stamp), every parity of region and span, spans
 * at and away from the region's edges, zero bytes among the others.
 */
static void
test_csum_span_val(void)
{
	static uint8_t f[64];
	int inside = 0, odd = 0;

	for (int n = 0; n < 200000; n++) {
		uint32_t nv = pb_rnd(3) ? 1 : 3;
		uint32_t w = nv == 3 ? 8 : 1 + pb_rnd(8), len = nv * w;
		uint32_t rs = pb_rnd(24), re = rs + pb_rnd(40);
		uint32_t off = pb_rnd(64 - len + 1);
		uint64_t v[3];

		for (uint32_t k = 0; k < sizeof(f); k++)
			f[k] = pb_rnd(3) ? (uint8_t)pb_rnd(256) : 0;
		for (uint32_t k = 0; k < nv; k++) {
			v[k] = pb_rnd(4) ? pb_rnd64() : 0;
			gpurx_put_ben(f + off + k * w, w, v[k]);
		}
		if (!(off + len <= rs || off >= re ||
				(rs <= off && off + len <= re)))
			continue;
		CHECK_EQ(gpugen_csum_span_val(f, rs, re, off, len, v, nv, w),
			gpugen_csum_span(f, rs, re, off, len));
		if (off >= rs && off + len <= re) {
			inside++;
			odd += (off - rs) & 1;
		}
	}
	CHECK(inside > 40000 && odd > 15000,
		"only %d spans inside their region, %d at odd offsets", inside,
		odd);
}

/* Random programs over random templates: checksums stay right. */
static void
test_fe_random_programs(void)
{
	static const char *const names[] = {"eth.dst", "eth.src", "vlan.id",
		"vlan.pcp", "ip.src", "ip.dst", "ip.ttl", "ip.tos", "ipv4.id",
		"ipv6.flow", "udp.sport", "udp.dport", "tcp.sport", "tcp.dport",
		"tcp.seq", "icmp.id"};
	static uint8_t t[BUFSZ], pkt[BUFSZ], ref[BUFSZ];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	struct gpugen_fe_prog p;
	int progs = 0;

	for (int n = 0; n < 2000; n++) {
		pb_random_spec(&s);
		if (gpugen_pkt_build(&s, t, sizeof(t), &lay) == 0)
			continue;
		CHECK_EQ(gpugen_fe_init(&p, &lay, pb_rnd64(), pb_rnd(4), 1 + pb_rnd(8)), 0);
		if (pb_rnd(2))
			gpugen_fe_set_stamp(&p);
		for (int v = 0; v < 6; v++) {
			static const uint8_t sizes[] = {1, 2, 4, 8};
			uint8_t sz = sizes[pb_rnd(4)];
			uint64_t lim = sz == 8 ? ~0ull : (1ull << (8 * sz)) - 1;
			uint64_t lo = pb_rnd64() & lim, hi = pb_rnd64() & lim;

			if (lo > hi) {
				uint64_t x = lo;

				lo = hi;
				hi = x;
			}
			gpugen_fe_add_var(&p, sz, (uint8_t)pb_rnd(3), lo, hi, lo,
				pb_rnd64() & lim, (int)pb_rnd(2));
		}
		gpugen_fe_add_tuple(&p, (uint32_t)pb_rnd64(), 0xffffffffu, 1, 9, 0, 0);
		for (int w = 0; w < 10; w++) {
			int var = (int)pb_rnd(7);
			uint8_t part = var == 6 ? (uint8_t)(1 + pb_rnd(2)) : 0;

			if (pb_rnd(2))
				gpugen_fe_write_field(&p, names[pb_rnd(16)], var, part,
					pb_rnd64());
			else
				gpugen_fe_write_off(&p, pb_rnd(lay.len), var, part,
					pb_rnd64());
		}
		if (p.n_writes == 0)
			continue;
		progs++;
		for (uint64_t i = 0; i < 20; i++) {
			uint64_t idx = pb_rnd64() >> pb_rnd(64);

			gpugen_fe_make(&p, t, pkt, idx, pb_rnd64());
			memcpy(ref, pkt, lay.len);
			gpugen_pkt_csum_fill(ref, &lay);
			CHECK(memcmp(ref, pkt, lay.len) == 0,
				"program %d packet %llu: incremental != full", n,
				(unsigned long long)idx);
			CHECK(csums_ok(pkt, &lay), "program %d: checksum", n);
		}
	}
	CHECK(progs > 1000, "only %d random programs", progs);
}

int
main(void)
{
	test_every_kind();
	test_fuzz_round_trip();
	test_incremental();
	test_fe_sequences();
	test_fe_fields();
	test_csum_span_val();
	test_fe_random_programs();
	return check_finish("gpurx-test-pkt-build");
}
