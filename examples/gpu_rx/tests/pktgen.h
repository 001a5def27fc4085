/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test packet generator: builds Ethernet frames of every protocol the
 * parser knows, plus deliberately malformed ones, from a seeded PRNG so
 * CPU and GPU tests see the same packets and failures reproduce.
 */
#ifndef GPURX_PKTGEN_H
#define GPURX_PKTGEN_H

#include <stdint.h>

#define PKTGEN_MAX_LEN 2048
#define PKTGEN_MAX_VLANS 6
#define PKTGEN_MAX_EXT 12

/* What to build. Zero-initialise, then set what matters. */
struct pkt_spec {
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	int n_vlans;
	uint16_t tpid[PKTGEN_MAX_VLANS];	/* 0 means 0x8100 */
	uint16_t vid[PKTGEN_MAX_VLANS];
	uint16_t ethertype;	/* only when ip_version == 0 */
	uint32_t l2_body_len;	/* non-IP body length */

	int ip_version;		/* 0, 4 or 6 */
	uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint8_t ttl;
	uint8_t ip_opt_len;	/* IPv4 options, multiple of 4, <= 40 */
	uint16_t frag_off;	/* 8-byte units, IPv4 or IPv6 fragment header */
	int more_frags;
	int n_ext;		/* IPv6 extension headers, in order */
	uint8_t ext[PKTGEN_MAX_EXT];
	uint8_t ext_len[PKTGEN_MAX_EXT];	/* the header's length byte */

	uint8_t proto;		/* IPPROTO_* */
	uint16_t sport;
	uint16_t dport;
	uint8_t tcp_flags;
	uint8_t tcp_opt_len;	/* multiple of 4, <= 40 */
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint32_t payload_len;
	uint8_t payload_byte;
};

/* Where things landed in the built frame, for mutations and checks. */
struct pkt_layout {
	uint32_t l3_off;
	uint32_t l4_off;	/* 0 when there is no L4 header */
	uint32_t l4_hlen;
	uint32_t ext_off[PKTGEN_MAX_EXT];
	uint32_t len;		/* frame length incl. padding to 60 */
};

/* Returns the frame length, or 0 if it does not fit in bufsz. */
uint32_t pktgen_build(const struct pkt_spec *s, uint8_t *buf, uint32_t bufsz,
		struct pkt_layout *lay);

struct pktgen_pkt {
	uint8_t data[PKTGEN_MAX_LEN];
	uint32_t caplen;
	uint32_t wirelen;
	uint64_t ts;
	int expect_malformed;	/* enum gpurx_malformed, or -1: not predicted */
	const char *what;	/* variant name for failure messages */
};

struct pktgen {
	uint64_t rng;
	uint64_t ts;
};

void pktgen_init(struct pktgen *g, uint64_t seed);
uint64_t pktgen_rand(struct pktgen *g);
void pktgen_next(struct pktgen *g, struct pktgen_pkt *p);

#endif /* GPURX_PKTGEN_H */
