/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounds-checked packet parser shared by the CPU and GPU paths.
 *
 * Every read is checked against caplen (what was captured) and header
 * length fields are checked against the IP datagram end derived from the
 * wire length, so a snapped packet is reported TRUNCATED_* while a packet
 * that lies about its own lengths is reported BAD_*. The bytes are read
 * through a struct gpurx_pkt_view (pkt_view.h): one run, or the two of a
 * packet received with buffer split.
 */
#ifndef GPURX_PKT_PARSE_H
#define GPURX_PKT_PARSE_H

#include "gpurx_portable.h"
#include "pkt_view.h"

#ifndef __CUDACC__
#include <string.h>
#endif

#define GPURX_ETH_HLEN 14
#define GPURX_MAX_VLANS 4
#define GPURX_MAX_EXT_HDRS 8

#define GPURX_ETHERTYPE_IPV4 0x0800
#define GPURX_ETHERTYPE_IPV6 0x86dd
#define GPURX_ETHERTYPE_VLAN 0x8100
#define GPURX_ETHERTYPE_QINQ 0x88a8
#define GPURX_ETHERTYPE_QINQ_OLD 0x9100

#define GPURX_IPPROTO_HOPOPTS 0
#define GPURX_IPPROTO_ICMP 1
#define GPURX_IPPROTO_TCP 6
#define GPURX_IPPROTO_UDP 17
#define GPURX_IPPROTO_ROUTING 43
#define GPURX_IPPROTO_FRAGMENT 44
#define GPURX_IPPROTO_ESP 50
#define GPURX_IPPROTO_AH 51
#define GPURX_IPPROTO_ICMPV6 58
#define GPURX_IPPROTO_NONE 59
#define GPURX_IPPROTO_DSTOPTS 60
#define GPURX_IPPROTO_SCTP 132

enum gpurx_malformed {
	GPURX_MAL_NONE = 0,
	GPURX_MAL_TRUNCATED_L2,
	GPURX_MAL_TRUNCATED_VLAN,
	GPURX_MAL_TOO_MANY_VLANS,
	GPURX_MAL_TRUNCATED_L3,
	GPURX_MAL_BAD_IP_VERSION,
	GPURX_MAL_BAD_IHL,
	GPURX_MAL_BAD_IP_LEN,
	GPURX_MAL_TRUNCATED_EXT_HDR,
	GPURX_MAL_BAD_EXT_HDR_LEN,
	GPURX_MAL_TOO_MANY_EXT_HDRS,
	GPURX_MAL_TRUNCATED_L4,
	GPURX_MAL_BAD_L4_LEN,
	GPURX_MAL_BAD_TCP_OFFSET,
	GPURX_MAL_COUNT
};

/* pkt_info.flags */
#define GPURX_PF_VLAN 0x0001
#define GPURX_PF_LLC 0x0002	/* 802.3 length field instead of EtherType */
#define GPURX_PF_IPV4 0x0004
#define GPURX_PF_IPV6 0x0008
#define GPURX_PF_IP_OPTIONS 0x0010
#define GPURX_PF_IPV6_EXT 0x0020
#define GPURX_PF_FRAGMENT 0x0040	/* any fragment, first one included */
#define GPURX_PF_FRAG_LATER 0x0080	/* not the first fragment: no L4 header */
#define GPURX_PF_L4 0x0100	/* L4 header fields (ports, flags, type) valid */
#define GPURX_PF_L4_PORTS 0x0200	/* protocol has ports (TCP, UDP, SCTP) */

struct gpurx_pkt_info {
	uint32_t l3_off;	/* first byte after the L2 headers */
	uint32_t l4_off;	/* 0 unless ip_version != 0 */
	uint32_t payload_off;	/* first byte after the L4 header */
	uint32_t ip_end;	/* end of the IP datagram (wire bytes) */
	uint16_t ethertype;	/* innermost */
	uint16_t vlan_id;	/* VID of the outermost tag */
	uint16_t inner_vlan_id;
	uint16_t flags;
	uint16_t sport;
	uint16_t dport;
	uint16_t frag_offset;	/* in 8-byte units */
	uint8_t vlan_count;
	uint8_t ip_version;	/* 0, 4 or 6 */
	uint8_t l4_proto;	/* IPv4 protocol or last IPv6 next header */
	uint8_t ext_hdr_count;
	uint8_t ttl;		/* TTL or hop limit */
	uint8_t tos;		/* IPv4 TOS or IPv6 traffic class */
	uint8_t tcp_flags;
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint8_t malformed;	/* enum gpurx_malformed */
	uint8_t src[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t dst[16];
	uint8_t dst_mac[6];	/* the frame's first bytes, as on the wire */
	uint8_t src_mac[6];
};

/*
 * Whether the parser stopped at the end of the captured bytes: the only
 * verdicts that more bytes could change (a read past caplen is never
 * made; every other verdict comes from bytes read and the wire length).
 */
GPURX_FN int
gpurx_mal_is_truncated(uint8_t m)
{
	return m == GPURX_MAL_TRUNCATED_L2 || m == GPURX_MAL_TRUNCATED_VLAN ||
		m == GPURX_MAL_TRUNCATED_L3 ||
		m == GPURX_MAL_TRUNCATED_EXT_HDR ||
		m == GPURX_MAL_TRUNCATED_L4;
}

/* Field by field: the struct has padding. */
GPURX_FN int
gpurx_pkt_info_same(const struct gpurx_pkt_info *a,
		const struct gpurx_pkt_info *b)
{
	return a->l3_off == b->l3_off && a->l4_off == b->l4_off &&
		a->payload_off == b->payload_off && a->ip_end == b->ip_end &&
		a->ethertype == b->ethertype && a->vlan_id == b->vlan_id &&
		a->inner_vlan_id == b->inner_vlan_id && a->flags == b->flags &&
		a->sport == b->sport && a->dport == b->dport &&
		a->frag_offset == b->frag_offset &&
		a->vlan_count == b->vlan_count &&
		a->ip_version == b->ip_version && a->l4_proto == b->l4_proto &&
		a->ext_hdr_count == b->ext_hdr_count && a->ttl == b->ttl &&
		a->tos == b->tos && a->tcp_flags == b->tcp_flags && a->icmp_type == b->icmp_type &&
		a->icmp_code == b->icmp_code && a->malformed == b->malformed &&
		memcmp(a->src, b->src, 16) == 0 &&
		memcmp(a->dst, b->dst, 16) == 0 &&
		memcmp(a->dst_mac, b->dst_mac, 6) == 0 &&
		memcmp(a->src_mac, b->src_mac, 6) == 0;
}

/* off + len <= end, written so it cannot wrap. */
GPURX_FN int
gpurx_fits(uint32_t off, uint32_t len, uint32_t end)
{
	return off <= end && len <= end - off;
}

GPURX_FN int
gpurx_is_vlan_tpid(uint16_t et)
{
	return et == GPURX_ETHERTYPE_VLAN || et == GPURX_ETHERTYPE_QINQ ||
		et == GPURX_ETHERTYPE_QINQ_OLD;
}

/* The IPv4 address at byte off, as ::ffff:a.b.c.d. */
GPURX_FN void
gpurx_addr_from_v4(uint8_t out[16], struct gpurx_pkt_view pkt, uint32_t off)
{
	for (int i = 0; i < 10; i++)
		out[i] = 0;
	out[10] = 0xff;
	out[11] = 0xff;
	for (uint32_t i = 0; i < 4; i++)
		out[12 + i] = gpurx_view_u8(pkt, off + i);
}

/*
 * Check a header of hlen bytes at off: beyond the datagram is a lie in a
 * length field (bad), beyond the capture only a short snapshot (truncated).
 */
GPURX_FN int
gpurx_hdr_check(uint32_t off, uint32_t hlen, uint32_t ip_end, uint32_t caplen,
		int bad, int truncated)
{
	if (!gpurx_fits(off, hlen, ip_end))
		return bad;
	if (!gpurx_fits(off, hlen, caplen))
		return truncated;
	return GPURX_MAL_NONE;
}

GPURX_FN int
gpurx_parse_l4(struct gpurx_pkt_view pkt, uint32_t caplen,
		struct gpurx_pkt_info *pi)
{
	uint32_t off = pi->l4_off;
	uint32_t end = pi->ip_end;
	struct gpurx_pkt_view h;
	int rc;

	pi->payload_off = off;
	switch (pi->l4_proto) {
	case GPURX_IPPROTO_TCP: {
		uint32_t hlen;

		rc = gpurx_hdr_check(off, 20, end, caplen,
			GPURX_MAL_BAD_L4_LEN, GPURX_MAL_TRUNCATED_L4);
		if (rc)
			return rc;
		h = gpurx_view_at(pkt, off);
		hlen = (uint32_t)(gpurx_view_u8(h, 12) >> 4) * 4;
		if (hlen < 20 || !gpurx_fits(off, hlen, end))
			return GPURX_MAL_BAD_TCP_OFFSET;
		pi->sport = gpurx_view_be16(h, 0);
		pi->dport = gpurx_view_be16(h, 2);
		pi->tcp_flags = gpurx_view_u8(h, 13);
		pi->flags |= GPURX_PF_L4 | GPURX_PF_L4_PORTS;
		pi->payload_off = off + hlen;
		/* Ports are usable even if the options were snapped off. */
		if (!gpurx_fits(off, hlen, caplen))
			return GPURX_MAL_TRUNCATED_L4;
		return GPURX_MAL_NONE;
	}
	case GPURX_IPPROTO_UDP: {
		uint32_t ulen;

		rc = gpurx_hdr_check(off, 8, end, caplen,
			GPURX_MAL_BAD_L4_LEN, GPURX_MAL_TRUNCATED_L4);
		if (rc)
			return rc;
		h = gpurx_view_at(pkt, off);
		pi->sport = gpurx_view_be16(h, 0);
		pi->dport = gpurx_view_be16(h, 2);
		pi->flags |= GPURX_PF_L4 | GPURX_PF_L4_PORTS;
		pi->payload_off = off + 8;
		ulen = gpurx_view_be16(h, 4);
		/*
		 * A first fragment carries only part of the datagram the
		 * UDP length describes; a jumbogram has length 0.
		 */
		if (!(pi->flags & GPURX_PF_FRAGMENT) && ulen != 0 &&
				(ulen < 8 || !gpurx_fits(off, ulen, end)))
			return GPURX_MAL_BAD_L4_LEN;
		return GPURX_MAL_NONE;
	}
	case GPURX_IPPROTO_SCTP:
		rc = gpurx_hdr_check(off, 12, end, caplen,
			GPURX_MAL_BAD_L4_LEN, GPURX_MAL_TRUNCATED_L4);
		if (rc)
			return rc;
		h = gpurx_view_at(pkt, off);
		pi->sport = gpurx_view_be16(h, 0);
		pi->dport = gpurx_view_be16(h, 2);
		pi->flags |= GPURX_PF_L4 | GPURX_PF_L4_PORTS;
		pi->payload_off = off + 12;
		return GPURX_MAL_NONE;
	case GPURX_IPPROTO_ICMP:
	case GPURX_IPPROTO_ICMPV6:
		rc = gpurx_hdr_check(off, 4, end, caplen,
			GPURX_MAL_BAD_L4_LEN, GPURX_MAL_TRUNCATED_L4);
		if (rc)
			return rc;
		h = gpurx_view_at(pkt, off);
		pi->icmp_type = gpurx_view_u8(h, 0);
		pi->icmp_code = gpurx_view_u8(h, 1);
		pi->flags |= GPURX_PF_L4;
		pi->payload_off = off + 4;
		return GPURX_MAL_NONE;
	default:
		/* Unknown transports are counted as flows without ports. */
		return GPURX_MAL_NONE;
	}
}

GPURX_FN int
gpurx_parse_ipv4(struct gpurx_pkt_view pkt, uint32_t caplen, uint32_t wirelen,
		struct gpurx_pkt_info *pi)
{
	uint32_t off = pi->l3_off;
	uint32_t ihl, tot_len;
	uint16_t frag;
	struct gpurx_pkt_view h;

	if (!gpurx_fits(off, 1, caplen))
		return GPURX_MAL_TRUNCATED_L3;
	h = gpurx_view_at(pkt, off);
	if ((gpurx_view_u8(h, 0) >> 4) != 4)
		return GPURX_MAL_BAD_IP_VERSION;
	ihl = (uint32_t)(gpurx_view_u8(h, 0) & 0x0f) * 4;
	if (ihl < 20)
		return GPURX_MAL_BAD_IHL;
	if (!gpurx_fits(off, ihl, caplen))
		return GPURX_MAL_TRUNCATED_L3;
	pi->ip_version = 4;
	pi->flags |= GPURX_PF_IPV4;
	if (ihl > 20)
		pi->flags |= GPURX_PF_IP_OPTIONS;
	pi->tos = gpurx_view_u8(h, 1);
	pi->ttl = gpurx_view_u8(h, 8);
	pi->l4_proto = gpurx_view_u8(h, 9);
	gpurx_addr_from_v4(pi->src, h, 12);
	gpurx_addr_from_v4(pi->dst, h, 16);

	tot_len = gpurx_view_be16(h, 2);
	if (tot_len < ihl || !gpurx_fits(off, tot_len, wirelen))
		return GPURX_MAL_BAD_IP_LEN;
	/* Trailing Ethernet padding is not part of the datagram. */
	pi->ip_end = off + tot_len;
	pi->l4_off = off + ihl;
	pi->payload_off = pi->l4_off;

	frag = gpurx_view_be16(h, 6);
	pi->frag_offset = frag & 0x1fff;
	if (frag & 0x3fff) {
		pi->flags |= GPURX_PF_FRAGMENT;
		if (pi->frag_offset != 0) {
			/* Only the first fragment starts with the L4 header. */
			pi->flags |= GPURX_PF_FRAG_LATER;
			return GPURX_MAL_NONE;
		}
	}
	return gpurx_parse_l4(pkt, caplen, pi);
}

GPURX_FN int
gpurx_ipv6_is_ext(uint8_t nh)
{
	return nh == GPURX_IPPROTO_HOPOPTS || nh == GPURX_IPPROTO_ROUTING ||
		nh == GPURX_IPPROTO_FRAGMENT || nh == GPURX_IPPROTO_DSTOPTS ||
		nh == GPURX_IPPROTO_AH;
}

GPURX_FN int
gpurx_parse_ipv6(struct gpurx_pkt_view pkt, uint32_t caplen, uint32_t wirelen,
		struct gpurx_pkt_info *pi)
{
	uint32_t off = pi->l3_off;
	uint32_t plen;
	struct gpurx_pkt_view h;
	uint8_t nh;
	int rc;

	if (!gpurx_fits(off, 1, caplen))
		return GPURX_MAL_TRUNCATED_L3;
	h = gpurx_view_at(pkt, off);
	if ((gpurx_view_u8(h, 0) >> 4) != 6)
		return GPURX_MAL_BAD_IP_VERSION;
	if (!gpurx_fits(off, 40, caplen))
		return GPURX_MAL_TRUNCATED_L3;
	pi->ip_version = 6;
	pi->flags |= GPURX_PF_IPV6;
	/* The traffic class straddles the first two bytes. */
	pi->tos = (uint8_t)((gpurx_view_u8(h, 0) << 4) |
		(gpurx_view_u8(h, 1) >> 4));
	pi->ttl = gpurx_view_u8(h, 7);
	for (int i = 0; i < 16; i++) {
		pi->src[i] = gpurx_view_u8(h, 8 + i);
		pi->dst[i] = gpurx_view_u8(h, 24 + i);
	}
	nh = gpurx_view_u8(h, 6);
	pi->l4_proto = nh;
	plen = gpurx_view_be16(h, 4);
	if (!gpurx_fits(off + 40, plen, wirelen))
		return GPURX_MAL_BAD_IP_LEN;
	/* Payload length 0 is a jumbogram: the frame bounds the datagram. */
	pi->ip_end = plen != 0 ? off + 40 + plen : wirelen;
	off += 40;

	while (gpurx_ipv6_is_ext(nh)) {
		uint32_t hlen;

		if (pi->ext_hdr_count >= GPURX_MAX_EXT_HDRS)
			return GPURX_MAL_TOO_MANY_EXT_HDRS;
		rc = gpurx_hdr_check(off, nh == GPURX_IPPROTO_FRAGMENT ? 8 : 2,
			pi->ip_end, caplen, GPURX_MAL_BAD_EXT_HDR_LEN,
			GPURX_MAL_TRUNCATED_EXT_HDR);
		if (rc)
			return rc;
		h = gpurx_view_at(pkt, off);
		if (nh == GPURX_IPPROTO_FRAGMENT)
			hlen = 8;
		else if (nh == GPURX_IPPROTO_AH)
			hlen = ((uint32_t)gpurx_view_u8(h, 1) + 2) * 4;
		else
			hlen = ((uint32_t)gpurx_view_u8(h, 1) + 1) * 8;
		rc = gpurx_hdr_check(off, hlen, pi->ip_end, caplen,
			GPURX_MAL_BAD_EXT_HDR_LEN, GPURX_MAL_TRUNCATED_EXT_HDR);
		if (rc)
			return rc;
		pi->ext_hdr_count++;
		pi->flags |= GPURX_PF_IPV6_EXT;
		if (nh == GPURX_IPPROTO_FRAGMENT) {
			uint16_t fo = gpurx_view_be16(h, 2);

			pi->flags |= GPURX_PF_FRAGMENT;
			pi->frag_offset = fo >> 3;
			if (pi->frag_offset != 0) {
				/* What follows is the middle of a datagram. */
				pi->flags |= GPURX_PF_FRAG_LATER;
				pi->l4_proto = gpurx_view_u8(h, 0);
				pi->l4_off = off + hlen;
				pi->payload_off = pi->l4_off;
				return GPURX_MAL_NONE;
			}
		}
		nh = gpurx_view_u8(h, 0);
		pi->l4_proto = nh;
		off += hlen;
	}
	pi->l4_off = off;
	pi->payload_off = off;
	return gpurx_parse_l4(pkt, caplen, pi);
}

/*
 * Parse one frame. Returns pi->malformed; fields parsed before a problem
 * was found stay filled in (e.g. addresses of a packet whose L4 is cut).
 */
GPURX_FN int
gpurx_pkt_parse_view(struct gpurx_pkt_view pkt, uint32_t caplen,
		uint32_t wirelen, struct gpurx_pkt_info *pi)
{
	struct gpurx_pkt_info zero = GPURX_ZERO_INIT;
	uint32_t off = GPURX_ETH_HLEN;
	uint16_t et;
	int rc;

	*pi = zero;
	/* A capture cannot hold more than the wire did: trust the bytes. */
	if (wirelen < caplen)
		wirelen = caplen;
	if (caplen < GPURX_ETH_HLEN) {
		rc = GPURX_MAL_TRUNCATED_L2;
		goto out;
	}
	for (uint32_t i = 0; i < 6; i++) {
		pi->dst_mac[i] = gpurx_view_u8(pkt, i);
		pi->src_mac[i] = gpurx_view_u8(pkt, 6 + i);
	}
	et = gpurx_view_be16(pkt, 12);
	while (gpurx_is_vlan_tpid(et)) {
		uint16_t vid;

		if (pi->vlan_count >= GPURX_MAX_VLANS) {
			rc = GPURX_MAL_TOO_MANY_VLANS;
			goto out;
		}
		if (!gpurx_fits(off, 4, caplen)) {
			rc = GPURX_MAL_TRUNCATED_VLAN;
			goto out;
		}
		vid = gpurx_view_be16(gpurx_view_at(pkt, off), 0) & 0x0fff;
		if (pi->vlan_count == 0)
			pi->vlan_id = vid;
		else if (pi->vlan_count == 1)
			pi->inner_vlan_id = vid;
		pi->vlan_count++;
		pi->flags |= GPURX_PF_VLAN;
		et = gpurx_view_be16(gpurx_view_at(pkt, off), 2);
		off += 4;
	}
	pi->ethertype = et;
	pi->l3_off = off;
	if (et < 0x0600) {
		/* 802.3 length: LLC/SNAP follows, nothing we classify. */
		pi->flags |= GPURX_PF_LLC;
		rc = GPURX_MAL_NONE;
	} else if (et == GPURX_ETHERTYPE_IPV4) {
		rc = gpurx_parse_ipv4(pkt, caplen, wirelen, pi);
	} else if (et == GPURX_ETHERTYPE_IPV6) {
		rc = gpurx_parse_ipv6(pkt, caplen, wirelen, pi);
	} else {
		rc = GPURX_MAL_NONE;
	}
out:
	pi->malformed = (uint8_t)rc;
	return rc;
}

/* gpurx_pkt_parse_view() over one run of bytes. */
GPURX_FN int
gpurx_pkt_parse(const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		struct gpurx_pkt_info *pi)
{
	return gpurx_pkt_parse_view(gpurx_view_linear(data), caplen, wirelen,
		pi);
}

/* Host-only: names for logs and test messages. */
static inline const char *
gpurx_malformed_str(int kind)
{
	switch (kind) {
	case GPURX_MAL_NONE: return "NONE";
	case GPURX_MAL_TRUNCATED_L2: return "TRUNCATED_L2";
	case GPURX_MAL_TRUNCATED_VLAN: return "TRUNCATED_VLAN";
	case GPURX_MAL_TOO_MANY_VLANS: return "TOO_MANY_VLANS";
	case GPURX_MAL_TRUNCATED_L3: return "TRUNCATED_L3";
	case GPURX_MAL_BAD_IP_VERSION: return "BAD_IP_VERSION";
	case GPURX_MAL_BAD_IHL: return "BAD_IHL";
	case GPURX_MAL_BAD_IP_LEN: return "BAD_IP_LEN";
	case GPURX_MAL_TRUNCATED_EXT_HDR: return "TRUNCATED_EXT_HDR";
	case GPURX_MAL_BAD_EXT_HDR_LEN: return "BAD_EXT_HDR_LEN";
	case GPURX_MAL_TOO_MANY_EXT_HDRS: return "TOO_MANY_EXT_HDRS";
	case GPURX_MAL_TRUNCATED_L4: return "TRUNCATED_L4";
	case GPURX_MAL_BAD_L4_LEN: return "BAD_L4_LEN";
	case GPURX_MAL_BAD_TCP_OFFSET: return "BAD_TCP_OFFSET";
	default: return "UNKNOWN";
	}
}

#endif /* GPURX_PKT_PARSE_H */
