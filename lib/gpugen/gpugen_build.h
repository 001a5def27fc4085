/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet builder: the inverse of pkt_parse.h, shared by the CPU and GPU.
 *
 * From a short spec (Ethernet, VLAN tags, IPv4 with options or IPv6 with
 * extension headers, TCP/UDP/ICMP/ICMPv6/SCTP, payload) it writes a frame
 * with valid IPv4, TCP, UDP, ICMP and ICMPv6 checksums and returns where
 * each header landed, with the offsets gpurx_pkt_parse() reports for it.
 * The checksum helpers (full and RFC 1624 incremental) live here too, as
 * the field engine (gpugen_fe.h) patches built frames with them.
 *
 * Device code has no libc: every copy and fill is a byte loop.
 */
#ifndef GPUGEN_BUILD_H
#define GPUGEN_BUILD_H

#include "pkt_parse.h"

/* More than the parser accepts, so tests can build the frames it refuses. */
#define GPUGEN_PB_MAX_VLANS 6
#define GPUGEN_PB_MAX_EXT 12
#define GPUGEN_PB_MIN_FRAME 60	/* Ethernet minimum without FCS */

/* gpugen_pkt_spec.payload_pattern */
#define GPUGEN_PB_PAY_FILL 0	/* every byte payload_byte */
#define GPUGEN_PB_PAY_INC 1	/* byte k is payload_byte + k (mod 256) */

/* What to build. Zero-initialise, then set what matters. */
struct gpugen_pkt_spec {
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	int n_vlans;
	uint16_t tpid[GPUGEN_PB_MAX_VLANS];	/* 0 means 0x8100 */
	uint16_t vid[GPUGEN_PB_MAX_VLANS];
	uint8_t pcp[GPUGEN_PB_MAX_VLANS];
	uint16_t ethertype;	/* only when ip_version == 0 */
	uint32_t l2_body_len;	/* non-IP body length */

	int ip_version;		/* 0, 4 or 6 */
	uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint8_t ttl;		/* 0 means 64 */
	uint8_t tos;		/* IPv4 TOS or IPv6 traffic class */
	uint16_t ip_id;		/* IPv4 identification */
	int dont_frag;		/* IPv4 DF */
	uint8_t ip_opt_len;	/* IPv4 options, multiple of 4, <= 40 */
	uint16_t frag_off;	/* 8-byte units, IPv4 or IPv6 fragment header */
	int more_frags;
	int n_ext;		/* IPv6 extension headers, in order */
	uint8_t ext[GPUGEN_PB_MAX_EXT];
	uint8_t ext_len[GPUGEN_PB_MAX_EXT];	/* the header's length byte */

	uint8_t proto;		/* IPPROTO_* */
	uint16_t sport;
	uint16_t dport;
	uint8_t tcp_flags;
	uint8_t tcp_opt_len;	/* multiple of 4, <= 40 */
	uint32_t tcp_seq;
	uint32_t tcp_ack;
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint32_t payload_len;
	uint8_t payload_byte;
	uint8_t payload_pattern;	/* GPUGEN_PB_PAY_* */
};

/*
 * Where things landed. Offsets are from the frame start; l3_off, l4_off
 * (when there is an L4 header), payload_off and ip_end equal what
 * gpurx_pkt_parse() reports for the frame, except that the parser ends
 * ICMP's header after 4 bytes (the echo identifier and sequence are
 * header here), an IPv6 payload length of 0 reads there as a jumbogram,
 * and in an IPv6 non-first fragment it stops at the fragment header.
 */
struct gpugen_pkt_layout {
	uint32_t vlan_off;	/* first tag; 0 without VLAN */
	uint32_t l3_off;
	uint32_t l3_hlen;	/* IP header, IPv6 extension headers included */
	uint32_t l4_off;	/* 0 when there is no L4 header */
	uint32_t l4_hlen;
	uint32_t payload_off;	/* first byte after the last header */
	uint32_t ip_end;	/* end of the IP datagram (or of the L2 body) */
	uint32_t ext_off[GPUGEN_PB_MAX_EXT];
	uint32_t ip4_csum_off;	/* 0 when none */
	uint32_t l4_csum_off;	/* 0 when none (SCTP, fragments, others) */
	uint32_t len;		/* frame length incl. padding to 60 */
	uint8_t ip_version;
	uint8_t l4_proto;
	uint8_t frag;		/* a fragment: L4 checksum not computable */
};

GPURX_FN void
gpugen_pb_copy(uint8_t *GPURX_RESTRICT d, const uint8_t *GPURX_RESTRICT s,
		uint32_t n)
{
#ifdef __CUDA_ARCH__
	/*
	 * A GPU thread runs a copy loop a dependent step at a time, each
	 * step waiting out its load's latency (an L2 hit is hundreds of
	 * cycles, and the build of a burst is one lane's serial path). A
	 * template (16-byte aligned in the table) into a 4-byte aligned
	 * frame goes in steps of four 16-byte loads, all issued before
	 * their stores (restrict: the stores cannot alias them): a 96-byte
	 * frame in two steps where 4-byte words took 24. The CPU's compiler
	 * makes the byte loop a memcpy itself.
	 */
	if ((((uintptr_t)s & 15u) | ((uintptr_t)d & 3u)) == 0) {
		uint32_t k = 0;

		for (; k + 16 <= n; k += 64) {
			uint4 v[4];

#pragma unroll
			for (uint32_t j = 0; j < 4; j++)
				if (k + 16 * j + 16 <= n)
					v[j] = *(const uint4 *)(s + k + 16 * j);
#pragma unroll
			for (uint32_t j = 0; j < 4; j++) {
				uint32_t *w = (uint32_t *)(d + k + 16 * j);

				if (k + 16 * j + 16 > n)
					break;
				w[0] = v[j].x;
				w[1] = v[j].y;
				w[2] = v[j].z;
				w[3] = v[j].w;
			}
		}
		/* Whole 16-byte pieces copied: k is past the last one. */
		k = n & ~15u;
		for (; k + 4 <= n; k += 4)
			*(uint32_t *)(d + k) = *(const uint32_t *)(s + k);
		for (; k < n; k++)
			d[k] = s[k];
		return;
	}
	if ((((uintptr_t)d | (uintptr_t)s) & 3u) == 0) {
		uint32_t k = 0;

		for (; k + 4 <= n; k += 4)
			*(uint32_t *)(d + k) = *(const uint32_t *)(s + k);
		for (; k < n; k++)
			d[k] = s[k];
		return;
	}
#endif
	for (uint32_t k = 0; k < n; k++)
		d[k] = s[k];
}

GPURX_FN void
gpugen_pb_fill(uint8_t *d, uint8_t v, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		d[k] = v;
}

/* ---- Internet checksum (RFC 1071) ---------------------------------- */

/* Fold a 32-bit one's complement accumulator to 16 bits (not inverted). */
GPURX_FN uint16_t
gpugen_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * Add len bytes at p, p being at an even offset of the checksummed data;
 * an odd last byte is the high half of its word. Folds first, so any
 * number of calls with up to 64 KiB each cannot overflow.
 */
GPURX_FN uint32_t
gpugen_csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
	uint32_t k;

	sum = gpugen_csum_fold(sum);
	for (k = 0; k + 1 < len; k += 2)
		sum += ((uint32_t)p[k] << 8) | p[k + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* The TCP/UDP/ICMPv6 pseudo-header of the IP header at l3. */
GPURX_FN uint32_t
gpugen_csum_pseudo(const uint8_t *l3, int ip_version, uint8_t proto,
		uint32_t l4_len)
{
	uint32_t sum;

	if (ip_version == 4)
		sum = gpugen_csum_add(0, l3 + 12, 8);
	else
		sum = gpugen_csum_add(0, l3 + 8, 32);
	return sum + proto + (l4_len >> 16) + (l4_len & 0xffff);
}

/* IPv4 header checksum of a header whose checksum field may be anything. */
GPURX_FN uint16_t
gpugen_ipv4_csum(const uint8_t *h, uint32_t ihl)
{
	uint32_t sum = gpugen_csum_add(0, h, 10);

	sum = gpugen_csum_add(sum, h + 12, ihl - 12);
	return (uint16_t)~gpugen_csum_fold(sum);
}

/*
 * Checksum of the L4 segment described by lay (its checksum field counted
 * as zero), as it belongs in the field: UDP's 0 sent as 0xffff, since 0
 * means "no checksum" there.
 */
GPURX_FN uint16_t
gpugen_l4_csum(const uint8_t *frame, const struct gpugen_pkt_layout *lay)
{
	uint32_t l4_len = lay->ip_end - lay->l4_off;
	uint32_t coff = lay->l4_csum_off - lay->l4_off;
	const uint8_t *l4 = frame + lay->l4_off;
	uint32_t sum = 0;
	uint16_t c;

	/* ICMPv4 alone has no pseudo-header. */
	if (lay->l4_proto != GPURX_IPPROTO_ICMP)
		sum = gpugen_csum_pseudo(frame + lay->l3_off, lay->ip_version,
			lay->l4_proto, l4_len);
	sum = gpugen_csum_add(sum, l4, coff);
	sum = gpugen_csum_add(sum, l4 + coff + 2, l4_len - coff - 2);
	c = (uint16_t)~gpugen_csum_fold(sum);
	if (c == 0 && lay->l4_proto == GPURX_IPPROTO_UDP)
		c = 0xffff;
	return c;
}

/* Recompute every checksum the layout names, from scratch. */
GPURX_FN void
gpugen_pkt_csum_fill(uint8_t *frame, const struct gpugen_pkt_layout *lay)
{
	if (lay->ip4_csum_off != 0)
		gpurx_put_be16(frame + lay->ip4_csum_off,
			gpugen_ipv4_csum(frame + lay->l3_off, lay->l3_hlen));
	if (lay->l4_csum_off != 0)
		gpurx_put_be16(frame + lay->l4_csum_off,
			gpugen_l4_csum(frame, lay));
}

/* What a port computes for a frame left to its TX checksum offload. */
#define GPUGEN_CSUM_OFF_IP4 1u	/* the IPv4 header checksum */
#define GPUGEN_CSUM_OFF_UDP 2u	/* UDP over IPv4 or IPv6 */
#define GPUGEN_CSUM_OFF_TCP 4u	/* TCP over IPv4 or IPv6 */

/*
 * Ready a frame with valid checksums (lay: its layout; only offsets are
 * read, lengths come from the frame's IP header) for a port's TX
 * checksum offload, as DPDK's RTE_MBUF_F_TX_IP_CKSUM and
 * RTE_MBUF_F_TX_UDP_CKSUM / _TCP_CKSUM expect it: the IPv4 header
 * checksum 0, and in the UDP or TCP checksum field the folded sum of the
 * pseudo-header, not complemented, which the port adds to its sum of the
 * segment before complementing. ICMP and fragments keep their checksum
 * (no port offloads them). Returns the GPUGEN_CSUM_OFF_* the port must
 * compute.
 */
GPURX_FN uint32_t
gpugen_pkt_csum_offload(uint8_t *frame, const struct gpugen_pkt_layout *lay)
{
	const uint8_t *l3 = frame + lay->l3_off;
	uint32_t what = 0, l4_len;

	if (lay->ip4_csum_off != 0) {
		gpurx_put_be16(frame + lay->ip4_csum_off, 0);
		what |= GPUGEN_CSUM_OFF_IP4;
	}
	if (lay->l4_csum_off == 0 || (lay->l4_proto != GPURX_IPPROTO_UDP &&
			lay->l4_proto != GPURX_IPPROTO_TCP))
		return what;
	/* The segment's length as the IP header gives it: what a port
	 * reads, padding to the minimum frame size left out. */
	if (lay->ip_version == 4)
		l4_len = gpurx_be16(l3 + 2) - (lay->l4_off - lay->l3_off);
	else
		l4_len = gpurx_be16(l3 + 4) + 40 - (lay->l4_off - lay->l3_off);
	gpurx_put_be16(frame + lay->l4_csum_off, gpugen_csum_fold(
		gpugen_csum_pseudo(l3, lay->ip_version, lay->l4_proto, l4_len)));
	return what | (lay->l4_proto == GPURX_IPPROTO_UDP ?
		GPUGEN_CSUM_OFF_UDP : GPUGEN_CSUM_OFF_TCP);
}

/*
 * RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m and m' being the one's
 * complement sums of the words before and after a change. Cheaper than a
 * full sum when a few bytes of a long segment change, which is what the
 * field engine does to every packet.
 */
GPURX_FN uint16_t
gpugen_csum_adjust(uint16_t hc, uint32_t old_sum, uint32_t new_sum)
{
	uint32_t s = (uint32_t)(uint16_t)~hc +
		(uint16_t)~gpugen_csum_fold(old_sum) + gpugen_csum_fold(new_sum);

	return (uint16_t)~gpugen_csum_fold(s);
}

/*
 * Sum of the words of the region [rstart, rend) of frame that bytes
 * [off, off + len) touch, words aligned on rstart; bytes outside the
 * region count as zero. Taken before and after a change, it is the m and
 * m' of gpugen_csum_adjust().
 */
GPURX_FN uint32_t
gpugen_csum_span(const uint8_t *frame, uint32_t rstart, uint32_t rend,
		uint32_t off, uint32_t len)
{
	uint32_t a = off, b = off + len;

	if (a < rstart)
		a = rstart;
	if (b > rend)
		b = rend;
	if (a >= b)
		return 0;
	a = rstart + ((a - rstart) & ~1u);
	if (((b - rstart) & 1) && b < rend)
		b++;
	return gpugen_csum_add(0, frame + a, b - a);
}

/* ---- The builder ----------------------------------------------------- */

GPURX_FN uint32_t
gpugen_pb_ext_len(uint8_t type, uint8_t len_byte)
{
	if (type == GPURX_IPPROTO_FRAGMENT)
		return 8;
	if (type == GPURX_IPPROTO_AH)
		return ((uint32_t)len_byte + 2) * 4;
	return ((uint32_t)len_byte + 1) * 8;
}

/* Header bytes of the transports the builder writes; 0: payload only. */
GPURX_FN uint32_t
gpugen_pb_l4_hlen(const struct gpugen_pkt_spec *s)
{
	switch (s->proto) {
	case GPURX_IPPROTO_TCP: return 20u + s->tcp_opt_len;
	case GPURX_IPPROTO_UDP: return 8;
	case GPURX_IPPROTO_SCTP: return 12;
	case GPURX_IPPROTO_ICMP:
	case GPURX_IPPROTO_ICMPV6: return 8;
	default: return 0;
	}
}

/* Returns the checksum field's offset in the header, or 0 for none. */
GPURX_FN uint32_t
gpugen_pb_put_l4(const struct gpugen_pkt_spec *s, uint8_t *p, uint32_t l4_total)
{
	switch (s->proto) {
	case GPURX_IPPROTO_TCP:
		gpurx_put_be16(p, s->sport);
		gpurx_put_be16(p + 2, s->dport);
		gpurx_put_be32(p + 4, s->tcp_seq);
		gpurx_put_be32(p + 8, s->tcp_ack);
		p[12] = (uint8_t)(((20u + s->tcp_opt_len) / 4) << 4);
		p[13] = s->tcp_flags;
		gpurx_put_be16(p + 14, 65535);
		/* Options as NOPs: valid and length-neutral. */
		gpugen_pb_fill(p + 20, 1, s->tcp_opt_len);
		return 16;
	case GPURX_IPPROTO_UDP:
		gpurx_put_be16(p, s->sport);
		gpurx_put_be16(p + 2, s->dport);
		gpurx_put_be16(p + 4, (uint16_t)l4_total);
		return 6;
	case GPURX_IPPROTO_SCTP:
		/* Its CRC32c is not computed: the checksum stays 0. */
		gpurx_put_be16(p, s->sport);
		gpurx_put_be16(p + 2, s->dport);
		gpurx_put_be32(p + 4, 0xdeadbeef);
		return 0;
	case GPURX_IPPROTO_ICMP:
	case GPURX_IPPROTO_ICMPV6:
		p[0] = s->icmp_type;
		p[1] = s->icmp_code;
		gpurx_put_be16(p + 4, 0x1234);	/* echo identifier */
		gpurx_put_be16(p + 6, 1);	/* echo sequence */
		return 2;
	default:
		return 0;
	}
}

GPURX_FN void
gpugen_pb_put_ipv6(const struct gpugen_pkt_spec *s, uint8_t *buf,
		struct gpugen_pkt_layout *lay, uint32_t ip_plen)
{
	uint8_t *h = buf + lay->l3_off;
	uint8_t *nh = h + 6;

	gpurx_put_be32(h, 0x60000000u | ((uint32_t)s->tos << 20));
	gpurx_put_be16(h + 4, (uint16_t)ip_plen);
	h[7] = s->ttl ? s->ttl : 64;
	gpugen_pb_copy(h + 8, s->src, 16);
	gpugen_pb_copy(h + 24, s->dst, 16);
	for (int i = 0; i < s->n_ext && i < GPUGEN_PB_MAX_EXT; i++) {
		uint8_t *e = buf + lay->ext_off[i];

		*nh = s->ext[i];
		nh = e;
		if (s->ext[i] == GPURX_IPPROTO_FRAGMENT) {
			gpurx_put_be16(e + 2, (uint16_t)((s->frag_off << 3) |
				(s->more_frags ? 1 : 0)));
			gpurx_put_be32(e + 4, 0xabcdef01);
		} else {
			e[1] = s->ext_len[i];
			if (s->ext[i] == GPURX_IPPROTO_AH)
				gpurx_put_be32(e + 4, 0x100);	/* SPI */
			/* The rest are zero bytes: Pad1 options. */
		}
	}
	*nh = s->proto;
}

/*
 * Write the frame s describes into buf. Returns its length (at least 60:
 * Ethernet padding follows a short datagram), or 0 if it does not fit in
 * bufsz or in IP's 16-bit lengths. Only the returned length is written.
 */
GPURX_FN uint32_t
gpugen_pkt_build(const struct gpugen_pkt_spec *s, uint8_t *buf, uint32_t bufsz,
		struct gpugen_pkt_layout *lay)
{
	struct gpugen_pkt_layout zero = GPURX_ZERO_INIT;
	uint32_t off = 12, l4_hlen, l3_hlen, l4_total = 0, total, pad_to;
	int later_frag = 0;
	uint8_t *h;

	*lay = zero;
	if (s->n_vlans < 0 || s->n_vlans > GPUGEN_PB_MAX_VLANS ||
			s->n_ext < 0 || s->n_ext > GPUGEN_PB_MAX_EXT ||
			s->ip_opt_len > 40 || (s->ip_opt_len & 3) ||
			s->tcp_opt_len > 40 || (s->tcp_opt_len & 3))
		return 0;
	/* Every length below is bounded, so the sums cannot wrap. */
	if (s->payload_len > (1u << 30) || s->l2_body_len > (1u << 30))
		return 0;

	if (s->n_vlans > 0)
		lay->vlan_off = off;
	off += 4u * (uint32_t)s->n_vlans;
	if (s->ip_version == 0) {
		total = off + 2 + s->l2_body_len;
		lay->l3_off = off + 2;
		lay->payload_off = lay->l3_off;
		lay->ip_end = total;
		l3_hlen = l4_hlen = 0;
	} else if (s->ip_version == 4 || s->ip_version == 6) {
		lay->l3_off = off + 2;
		lay->ip_version = (uint8_t)s->ip_version;
		if (s->ip_version == 4) {
			later_frag = s->frag_off != 0;
			lay->frag = (uint8_t)(s->frag_off != 0 || s->more_frags);
			l3_hlen = 20u + s->ip_opt_len;
		} else {
			l3_hlen = 40;
			for (int i = 0; i < s->n_ext; i++) {
				lay->ext_off[i] = lay->l3_off + l3_hlen;
				l3_hlen += gpugen_pb_ext_len(s->ext[i], s->ext_len[i]);
				if (s->ext[i] == GPURX_IPPROTO_FRAGMENT) {
					lay->frag = 1;
					if (s->frag_off)
						later_frag = 1;
				}
			}
		}
		l4_hlen = later_frag ? 0 : gpugen_pb_l4_hlen(s);
		l4_total = l4_hlen + s->payload_len;
		if (l3_hlen + l4_total > 65535)
			return 0;
		lay->l3_hlen = l3_hlen;
		lay->l4_proto = s->proto;
		lay->payload_off = lay->l3_off + l3_hlen + l4_hlen;
		lay->ip_end = lay->payload_off + s->payload_len;
		total = lay->ip_end;
	} else {
		return 0;
	}
	pad_to = total < GPUGEN_PB_MIN_FRAME ? GPUGEN_PB_MIN_FRAME : total;
	if (pad_to > bufsz)
		return 0;
	gpugen_pb_fill(buf, 0, pad_to);

	gpugen_pb_copy(buf, s->eth_dst, 6);
	gpugen_pb_copy(buf + 6, s->eth_src, 6);
	for (int i = 0; i < s->n_vlans; i++) {
		h = buf + 12 + 4 * i;
		gpurx_put_be16(h, s->tpid[i] ? s->tpid[i] : GPURX_ETHERTYPE_VLAN);
		gpurx_put_be16(h + 2, (uint16_t)(((uint16_t)(s->pcp[i] & 7) << 13) |
			(s->vid[i] & 0x0fff)));
	}
	h = buf + lay->l3_off;
	if (s->ip_version == 0) {
		gpurx_put_be16(h - 2, s->ethertype);
		gpugen_pb_fill(h, s->payload_byte, s->l2_body_len);
		lay->len = pad_to;
		return pad_to;
	}
	if (s->ip_version == 4) {
		gpurx_put_be16(h - 2, GPURX_ETHERTYPE_IPV4);
		h[0] = (uint8_t)(0x40 | (l3_hlen / 4));
		h[1] = s->tos;
		gpurx_put_be16(h + 2, (uint16_t)(l3_hlen + l4_total));
		gpurx_put_be16(h + 4, s->ip_id);
		gpurx_put_be16(h + 6, (uint16_t)((s->dont_frag ? 0x4000 : 0) |
			(s->more_frags ? 0x2000 : 0) | (s->frag_off & 0x1fff)));
		h[8] = s->ttl ? s->ttl : 64;
		h[9] = s->proto;
		gpugen_pb_copy(h + 12, s->src, 4);
		gpugen_pb_copy(h + 16, s->dst, 4);
		gpugen_pb_fill(h + 20, 1, s->ip_opt_len);	/* NOP options */
		if (s->ip_opt_len)
			h[20 + s->ip_opt_len - 1] = 0;	/* end of list */
		lay->ip4_csum_off = lay->l3_off + 10;
	} else {
		gpurx_put_be16(h - 2, GPURX_ETHERTYPE_IPV6);
		gpugen_pb_put_ipv6(s, buf, lay, l3_hlen - 40 + l4_total);
	}
	if (l4_hlen != 0) {
		uint32_t coff;

		lay->l4_off = lay->l3_off + l3_hlen;
		lay->l4_hlen = l4_hlen;
		coff = gpugen_pb_put_l4(s, buf + lay->l4_off, l4_total);
		/* A fragment holds part of the segment its checksum covers. */
		if (coff != 0 && !lay->frag)
			lay->l4_csum_off = lay->l4_off + coff;
	}
	h = buf + lay->payload_off;
	if (s->payload_pattern == GPUGEN_PB_PAY_INC) {
		for (uint32_t k = 0; k < s->payload_len; k++)
			h[k] = (uint8_t)(s->payload_byte + k);
	} else {
		gpugen_pb_fill(h, s->payload_byte, s->payload_len);
	}
	gpugen_pkt_csum_fill(buf, lay);
	lay->len = pad_to;
	return pad_to;
}

#endif /* GPUGEN_BUILD_H */
