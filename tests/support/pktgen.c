/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pkt_parse.h"
#include "pktgen.h"
#include "rand64.h"

/* --- The tests' stream ----------------------------------------------------- */

/* splitmix64: tiny, seedable, good enough for test variety. */
uint64_t
pktgen_rand(struct pktgen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
pktgen_init(struct pktgen *g, uint64_t seed)
{
	g->rng = seed;
	g->ts = 1000000000ull;
}

static uint32_t
rnd(struct pktgen *g, uint32_t n)
{
	return n ? (uint32_t)(pktgen_rand(g) % n) : 0;
}

static const uint8_t macs[4][6] = {
	{0x00, 0x11, 0x22, 0x33, 0x44, 0x55},
	{0x02, 0x00, 0x00, 0x00, 0x00, 0x01},
	{0x3c, 0xfd, 0xfe, 0x00, 0xaa, 0xbb},
	{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
};

/* Small pools so filters hit and flows repeat. */
static void
pick_v4(struct pktgen *g, uint8_t *a)
{
	static const uint8_t pre[6][3] = {
		{10, 0, 0}, {10, 1, 2}, {192, 168, 1}, {172, 16, 5},
		{8, 8, 8}, {1, 1, 1},
	};
	uint32_t i = rnd(g, 6);

	memcpy(a, pre[i], 3);
	a[3] = (uint8_t)(1 + rnd(g, 8));
}

static void
pick_v6(struct pktgen *g, uint8_t *a)
{
	memset(a, 0, 16);
	switch (rnd(g, 3)) {
	case 0:
		a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8;
		break;
	case 1:
		a[0] = 0xfe; a[1] = 0x80;
		break;
	default:
		a[0] = 0x26; a[1] = 0x00; a[2] = 0x14; a[3] = 0x06;
		break;
	}
	a[15] = (uint8_t)(1 + rnd(g, 8));
}

static uint16_t
pick_port(struct pktgen *g)
{
	static const uint16_t common[] = {443, 80, 53, 22, 123, 8080};

	switch (rnd(g, 4)) {
	case 0:
	case 1:
		return common[rnd(g, 6)];
	case 2:
		return (uint16_t)(1000 + rnd(g, 1001));
	default:
		return (uint16_t)(1024 + rnd(g, 64000));
	}
}

enum mutation {
	MUT_NONE,
	MUT_TRUNC_L2,
	MUT_TRUNC_VLAN,
	MUT_TOO_MANY_VLANS,
	MUT_TRUNC_L3,
	MUT_BAD_VERSION,
	MUT_BAD_IHL,
	MUT_BAD_IP_LEN,
	MUT_TRUNC_EXT,
	MUT_BAD_EXT_LEN,
	MUT_TOO_MANY_EXT,
	MUT_TRUNC_L4,
	MUT_BAD_L4_LEN,
	MUT_BAD_TCP_OFF,
	MUT_SNAP,
	MUT_GARBAGE,
	MUT_COUNT
};

static void
random_spec(struct pktgen *g, struct gpugen_pkt_spec *s, int mut)
{
	uint32_t r;

	memset(s, 0, sizeof(*s));
	memcpy(s->eth_dst, macs[rnd(g, 4)], 6);
	memcpy(s->eth_src, macs[rnd(g, 3)], 6);
	r = rnd(g, 100);
	if (r < 15) {
		s->n_vlans = 1;
	} else if (r < 25) {
		s->n_vlans = 2;
		s->tpid[0] = GPURX_ETHERTYPE_QINQ;
	} else if (r < 30) {
		s->n_vlans = 2;
		s->tpid[0] = GPURX_ETHERTYPE_QINQ_OLD;
	}
	if (mut == MUT_TRUNC_VLAN && s->n_vlans == 0)
		s->n_vlans = 1;
	if (mut == MUT_TOO_MANY_VLANS)
		s->n_vlans = GPURX_MAX_VLANS + 1;
	for (int i = 0; i < s->n_vlans; i++)
		s->vid[i] = (uint16_t)(100 * (1 + rnd(g, 4)) + i);

	s->payload_len = rnd(g, 4) == 0 ? rnd(g, 1200) : rnd(g, 300);
	s->payload_byte = (uint8_t)rnd(g, 256);
	if (mut == MUT_NONE && rnd(g, 20) == 0) {
		/* ARP, or an 802.3 frame whose type field is a length. */
		s->ethertype = rnd(g, 2) ? 0x0806 : 0x0040;
		s->l2_body_len = 28 + rnd(g, 40);
		return;
	}

	s->ip_version = rnd(g, 10) < 6 ? 4 : 6;
	if (mut == MUT_BAD_IHL)
		s->ip_version = 4;
	if (mut == MUT_TRUNC_EXT || mut == MUT_BAD_EXT_LEN ||
			mut == MUT_TOO_MANY_EXT)
		s->ip_version = 6;
	if (s->ip_version == 4) {
		pick_v4(g, s->src);
		pick_v4(g, s->dst);
		if (rnd(g, 7) == 0)
			s->ip_opt_len = (uint8_t)(4 * (1 + rnd(g, 10)));
	} else {
		pick_v6(g, s->src);
		pick_v6(g, s->dst);
		if (rnd(g, 4) == 0 || mut == MUT_TRUNC_EXT ||
				mut == MUT_BAD_EXT_LEN) {
			static const uint8_t types[] = {
				GPURX_IPPROTO_HOPOPTS, GPURX_IPPROTO_ROUTING,
				GPURX_IPPROTO_DSTOPTS, GPURX_IPPROTO_AH,
				GPURX_IPPROTO_FRAGMENT,
			};

			s->n_ext = 1 + (int)rnd(g, 4);
			for (int i = 0; i < s->n_ext; i++) {
				s->ext[i] = types[rnd(g, 5)];
				s->ext_len[i] = s->ext[i] == GPURX_IPPROTO_AH ?
					(uint8_t)(2 + 2 * rnd(g, 3)) :
					(uint8_t)rnd(g, 3);
			}
			if (mut == MUT_BAD_EXT_LEN)
				s->ext[0] = GPURX_IPPROTO_DSTOPTS;
		}
		if (mut == MUT_TOO_MANY_EXT) {
			s->n_ext = GPURX_MAX_EXT_HDRS + 1;
			for (int i = 0; i < s->n_ext; i++) {
				s->ext[i] = GPURX_IPPROTO_DSTOPTS;
				s->ext_len[i] = 0;
			}
		}
	}
	/* Fragments: a first one (has L4) or a later one (has not). */
	if (rnd(g, 10) == 0 && mut != MUT_TOO_MANY_EXT) {
		if (rnd(g, 2))
			s->frag_off = (uint16_t)(1 + rnd(g, 200));
		/* The last fragment has MF clear; the first never does. */
		s->more_frags = s->frag_off == 0 ? 1 : (int)rnd(g, 2);
		if (s->ip_version == 6 && s->n_ext < GPUGEN_PB_MAX_EXT) {
			s->ext[s->n_ext] = GPURX_IPPROTO_FRAGMENT;
			s->ext_len[s->n_ext] = 0;
			s->n_ext++;
		}
	}
	/* A v6 chain may contain a fragment header without the branch above. */
	for (int i = 0; i < s->n_ext; i++)
		if (s->ext[i] == GPURX_IPPROTO_FRAGMENT && rnd(g, 3) == 0)
			s->frag_off = (uint16_t)(1 + rnd(g, 50));

	r = rnd(g, 100);
	if (r < 40)
		s->proto = GPURX_IPPROTO_TCP;
	else if (r < 70)
		s->proto = GPURX_IPPROTO_UDP;
	else if (r < 82)
		s->proto = s->ip_version == 4 ? GPURX_IPPROTO_ICMP :
			GPURX_IPPROTO_ICMPV6;
	else if (r < 90)
		s->proto = GPURX_IPPROTO_SCTP;
	else
		s->proto = rnd(g, 2) ? 47 /* GRE */ : GPURX_IPPROTO_ESP;
	if (mut == MUT_BAD_TCP_OFF || mut == MUT_TRUNC_L4 ||
			mut == MUT_BAD_L4_LEN) {
		s->proto = GPURX_IPPROTO_TCP;
		s->frag_off = 0;
	}
	s->sport = pick_port(g);
	s->dport = pick_port(g);
	s->tcp_flags = (uint8_t)(rnd(g, 3) == 0 ? 0x02 : rnd(g, 64));
	if (rnd(g, 3) == 0)
		s->tcp_opt_len = (uint8_t)(4 * rnd(g, 11));
	s->icmp_type = (uint8_t)(rnd(g, 2) ? 8 : 0);
	s->ttl = (uint8_t)(1 + rnd(g, 255));
}

/* Sets the IP header at h to say the datagram is len bytes (IPv6: its
 * payload length, the 40-byte header left out), whatever it holds. */
static void
put_ip_len(uint8_t *h, int ip_version, uint32_t len)
{
	if (ip_version == 4)
		gpurx_put_be16(h + 2, (uint16_t)len);
	else
		gpurx_put_be16(h + 4, (uint16_t)(len - 40));
}

void
pktgen_next(struct pktgen *g, struct pktgen_pkt *p)
{
	static const char *const names[MUT_COUNT] = {
		"valid", "trunc-l2", "trunc-vlan", "too-many-vlans",
		"trunc-l3", "bad-version", "bad-ihl", "bad-ip-len",
		"trunc-ext", "bad-ext-len", "too-many-ext", "trunc-l4",
		"bad-l4-len", "bad-tcp-off", "snapped", "garbage",
	};
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	uint32_t len, l3;
	int mut = MUT_NONE;
	uint8_t *h;

	g->ts += 1 + rnd(g, 5000);
	p->ts = g->ts;
	if (rnd(g, 4) == 0)
		mut = 1 + (int)rnd(g, MUT_COUNT - 1);
	random_spec(g, &s, mut);
	len = gpugen_pkt_build(&s, p->data, sizeof(p->data), &lay);
	p->caplen = p->wirelen = len;
	p->expect_malformed = GPURX_MAL_NONE;
	p->what = names[mut];
	l3 = lay.l3_off;
	h = p->data + l3;

	switch (mut) {
	case MUT_TRUNC_L2:
		p->caplen = rnd(g, GPURX_ETH_HLEN);
		p->expect_malformed = GPURX_MAL_TRUNCATED_L2;
		break;
	case MUT_TRUNC_VLAN:
		p->caplen = GPURX_ETH_HLEN + rnd(g, 4);
		p->expect_malformed = GPURX_MAL_TRUNCATED_VLAN;
		break;
	case MUT_TOO_MANY_VLANS:
		p->expect_malformed = GPURX_MAL_TOO_MANY_VLANS;
		break;
	case MUT_TRUNC_L3:
		p->caplen = l3 + 1 + rnd(g, s.ip_version == 4 ?
			19u + s.ip_opt_len : 39u);
		p->expect_malformed = GPURX_MAL_TRUNCATED_L3;
		break;
	case MUT_BAD_VERSION:
		h[0] = (uint8_t)((h[0] & 0x0f) | (s.ip_version == 4 ? 0x60 : 0x40));
		if (rnd(g, 2))
			h[0] = (uint8_t)((h[0] & 0x0f) | ((7 + rnd(g, 9)) << 4));
		p->expect_malformed = GPURX_MAL_BAD_IP_VERSION;
		break;
	case MUT_BAD_IHL:
		h[0] = (uint8_t)(0x40 | rnd(g, 5));
		p->expect_malformed = GPURX_MAL_BAD_IHL;
		break;
	case MUT_BAD_IP_LEN: {
		uint32_t over = len - l3 + 1 + rnd(g, 100);

		put_ip_len(h, s.ip_version, over);
		/* Or, IPv4, shorter than its own header. */
		if (s.ip_version == 4 && rnd(g, 2)) {
			h[2] = 0;
			h[3] = (uint8_t)rnd(g, (h[0] & 0x0f) * 4u);
		}
		p->expect_malformed = GPURX_MAL_BAD_IP_LEN;
		break;
	}
	case MUT_TRUNC_EXT:
		p->caplen = lay.ext_off[0] + rnd(g, 8);
		p->expect_malformed = GPURX_MAL_TRUNCATED_EXT_HDR;
		break;
	case MUT_BAD_EXT_LEN:
		p->data[lay.ext_off[0] + 1] = 255;
		p->expect_malformed = GPURX_MAL_BAD_EXT_HDR_LEN;
		break;
	case MUT_TOO_MANY_EXT:
		p->expect_malformed = GPURX_MAL_TOO_MANY_EXT_HDRS;
		break;
	case MUT_TRUNC_L4:
		if (lay.l4_off == 0)
			break;
		p->caplen = lay.l4_off + rnd(g, 20);
		p->expect_malformed = GPURX_MAL_TRUNCATED_L4;
		break;
	case MUT_BAD_L4_LEN: {
		/* Never 0 past the headers: v6 length 0 means jumbogram. */
		uint32_t short_len = lay.l4_off - l3 + 1 + rnd(g, 19);

		if (lay.l4_off == 0)
			break;
		put_ip_len(h, s.ip_version, short_len);
		p->expect_malformed = GPURX_MAL_BAD_L4_LEN;
		break;
	}
	case MUT_BAD_TCP_OFF:
		if (lay.l4_off == 0)
			break;
		p->data[lay.l4_off + 12] = (uint8_t)(rnd(g, 5) << 4);
		p->expect_malformed = GPURX_MAL_BAD_TCP_OFFSET;
		break;
	case MUT_SNAP:
		p->caplen = rnd(g, len + 1);
		p->expect_malformed = -1;
		break;
	case MUT_GARBAGE:
		p->caplen = p->wirelen = rnd(g, 200);
		for (uint32_t i = 0; i < p->caplen; i++)
			p->data[i] = (uint8_t)pktgen_rand(g);
		/* Sometimes make it look like IP so deeper code runs. */
		if (p->caplen > 14 && rnd(g, 2)) {
			p->data[12] = rnd(g, 2) ? 0x08 : 0x86;
			p->data[13] = p->data[12] == 0x08 ? 0x00 : 0xdd;
		}
		p->expect_malformed = -1;
		break;
	default:
		break;
	}
}

/* --- The benchmarks' mix --------------------------------------------------- */

#define PKTGEN_HUGE_ALIGN ((size_t)2 << 20)

static uint16_t
mix_pick_len(uint64_t *rng)
{
	unsigned int r = rand64_next(rng) % 100;
	unsigned int lo, hi;

	if (r < 40) {
		lo = PKTGEN_MIX_MIN_LEN;
		hi = 127;
	} else if (r < 60) {
		lo = 128;
		hi = 575;
	} else if (r < 75) {
		lo = 576;
		hi = 1023;
	} else {
		lo = 1024;
		hi = PKTGEN_MIX_MAX_LEN;
	}
	return (uint16_t)(lo + rand64_next(rng) % (hi - lo + 1));
}

uint32_t
pktgen_pick_ip4(uint64_t *rng)
{
	uint64_t r = rand64_next(rng);

	if (r % 100 < 50) {
		if ((r >> 8) % 100 < 2)
			return 0x0A010203; /* 10.1.2.3 */
		return 0x0A000000 | (uint32_t)((r >> 16) & 0xFFFFFF);
	}
	return (uint32_t)(r >> 32);
}

uint16_t
pktgen_pick_dport(uint64_t *rng)
{
	uint64_t r = rand64_next(rng);
	unsigned int c = r % 100;

	if (c < 30)
		return 443;
	if (c < 45)
		return 80;
	if (c < 55)
		return 53;
	return (uint16_t)(1 + (r >> 16) % 65535);
}

uint8_t
pktgen_pick_proto(uint64_t *rng)
{
	unsigned int c = rand64_next(rng) % 100;

	return c < 70 ? GPURX_IPPROTO_TCP : c < 95 ? GPURX_IPPROTO_UDP :
		GPURX_IPPROTO_ICMP;
}

/*
 * The mix's frame of len bytes at p: the spec drawn from the mix's
 * distributions, the headers written by gpugen_pkt_build(), then random
 * bytes after them and the checksums over those. Returns 0, or -1 when
 * the builder refuses the spec (a bug here: every length fits).
 */
static int
mix_packet(uint8_t *p, uint16_t len, uint64_t *rng)
{
	unsigned int c = rand64_next(rng) % 100;
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	uint32_t hdr = GPURX_ETH_HLEN, body;

	memset(&s, 0, sizeof(s));
	rand64_fill(s.eth_dst, sizeof(s.eth_dst), rng);
	rand64_fill(s.eth_src, sizeof(s.eth_src), rng);
	s.eth_dst[0] &= 0xFE; /* unicast destination */
	if (c < 88) {
		s.ip_version = 4;
		s.proto = pktgen_pick_proto(rng);
		s.ip_id = (uint16_t)rand64_next(rng);
		/* A non-first fragment (offset in 8-byte units, no L4
		 * header, TCP's part), else DF. */
		if (rand64_next(rng) % 100 == 0) {
			s.proto = GPURX_IPPROTO_TCP;
			s.frag_off = (uint16_t)(1 + rand64_next(rng) % 1000);
		} else {
			s.dont_frag = 1;
		}
		gpurx_put_be32(s.src, pktgen_pick_ip4(rng));
		gpurx_put_be32(s.dst, pktgen_pick_ip4(rng));
		hdr += 20;
	} else if (c < 97 && len >= GPURX_ETH_HLEN + 40 + 20) {
		s.ip_version = 6;
		s.proto = pktgen_pick_proto(rng);
		if (s.proto == GPURX_IPPROTO_ICMP)
			s.proto = GPURX_IPPROTO_ICMPV6;
		/* Random addresses in 2001:db8::/32. */
		rand64_fill(s.src, sizeof(s.src), rng);
		rand64_fill(s.dst, sizeof(s.dst), rng);
		gpurx_put_be32(s.src, 0x20010DB8);
		gpurx_put_be32(s.dst, 0x20010DB8);
		hdr += 40;
	} else {
		/* ARP, and IPv6's share of the frames too short for it. */
		s.ethertype = 0x0806;
		s.l2_body_len = len - hdr;
	}
	if (s.ip_version != 0 && s.frag_off == 0) {
		s.sport = (uint16_t)(1024 + rand64_next(rng) % 64512);
		s.dport = pktgen_pick_dport(rng);
		s.tcp_seq = (uint32_t)rand64_next(rng);
		s.tcp_ack = (uint32_t)rand64_next(rng);
		s.tcp_flags = 0x18; /* PSH|ACK */
		s.icmp_type = s.proto == GPURX_IPPROTO_ICMPV6 ? 128 : 8; /* echo */
		hdr += gpugen_pb_l4_hlen(&s);
	}
	if (s.ip_version != 0)
		s.payload_len = len - hdr;
	if (gpugen_pkt_build(&s, p, len, &lay) != len)
		return -1;
	body = lay.payload_off;
	if (s.ip_version == 0) {
		/* An ARP request's fixed part; addresses random below. */
		uint8_t *a = p + lay.l3_off;

		gpurx_put_be16(a, 1);		/* Ethernet */
		gpurx_put_be16(a + 2, GPURX_ETHERTYPE_IPV4);
		a[4] = 6;
		a[5] = 4;
		gpurx_put_be16(a + 6, 1);	/* request */
		body += 8;
	}
	rand64_fill(p + body, len - body, rng);
	gpugen_pkt_csum_fill(p, &lay);
	return 0;
}

int
pktgen_generate(struct pktgen_set *set, uint32_t n, uint64_t seed)
{
	uint64_t rng = rand64_seed(seed);
	uint64_t off = 0;
	uint32_t i;

	memset(set, 0, sizeof(*set));
	set->off = malloc(sizeof(*set->off) * (n ? n : 1));
	set->len = malloc(sizeof(*set->len) * (n ? n : 1));
	if (set->off == NULL || set->len == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		set->len[i] = mix_pick_len(&rng);
		set->off[i] = off;
		off += (set->len[i] + PKTGEN_ALIGN - 1) & ~(uint64_t)(PKTGEN_ALIGN - 1);
		set->total_bytes += set->len[i];
	}
	set->buf_size = off ? off : PKTGEN_ALIGN;
	/* 2 MiB-aligned and, where the kernel allows, backed by transparent
	 * huge pages: like a capture application's hugepage mempools, the
	 * filters then pay cache misses, not TLB misses on 4 KiB pages. */
	set->buf = aligned_alloc(PKTGEN_HUGE_ALIGN,
		(set->buf_size + PKTGEN_HUGE_ALIGN - 1) & ~(size_t)(PKTGEN_HUGE_ALIGN - 1));
	if (set->buf == NULL)
		goto fail;
	(void)madvise(set->buf, set->buf_size, MADV_HUGEPAGE); /* best effort */
	for (i = 0; i < n; i++)
		if (mix_packet(set->buf + set->off[i], set->len[i], &rng) != 0)
			goto fail;
	set->n = n;
	return 0;
fail:
	pktgen_free(set);
	return -1;
}

void
pktgen_free(struct pktgen_set *set)
{
	free(set->buf);
	free(set->off);
	free(set->len);
	memset(set, 0, sizeof(*set));
}
