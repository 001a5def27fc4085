/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet generator of the tests and the benchmarks: two behaviours,
 * one frame builder under both (gpugen_pkt_build() of lib/gpugen, the
 * traffic generator's, which writes every header the parser reads).
 *
 * The tests' stream (pktgen_init(), pktgen_next()): Ethernet frames of
 * every protocol the parser knows, plus deliberately malformed ones, from
 * a seeded PRNG so CPU and GPU tests see the same packets and failures
 * reproduce. Tests and the e2e runs hold expectations tied to its exact
 * sequence.
 *
 * The benchmarks' mix (pktgen_generate()): synthetic but realistic
 * traffic in one buffer, for the filter benchmarks (the CPU baselines and
 * the GPU kernel rate use the same generator and seed, so they filter the
 * same packets). Per packet, independently:
 *  - frame length 64..1500 bytes: 40% 64..127, 20% 128..575,
 *    15% 576..1023, 25% 1024..1500 (bimodal, like Internet traces);
 *  - EtherType: 88% IPv4, 9% IPv6, 3% ARP;
 *  - IPv4/IPv6 payload: 70% TCP, 25% UDP, 5% ICMP;
 *  - destination port: 30% 443, 15% 80, 10% 53, rest random;
 *  - addresses: 50% of IPv4 sources and destinations in 10.0.0.0/8, of
 *    which 2% are exactly 10.1.2.3; the rest random;
 *  - 1% of IPv4 packets are non-first fragments (no L4 header).
 * Bytes after the headers are random (no packet is mostly zeros), and the
 * checksums are computed over them.
 */
#ifndef TEST_SUPPORT_PKTGEN_H
#define TEST_SUPPORT_PKTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "gpugen_build.h"

/* --- The tests' stream ----------------------------------------------------- */

#define PKTGEN_MAX_LEN 2048

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

/* --- The benchmarks' mix --------------------------------------------------- */

#define PKTGEN_MIX_MIN_LEN 64
#define PKTGEN_MIX_MAX_LEN 1500
/* Each packet starts at a multiple of this in the buffer. */
#define PKTGEN_ALIGN 64

struct pktgen_set {
	uint32_t n;		/* packets */
	uint8_t *buf;		/* all packets, each PKTGEN_ALIGN-aligned */
	size_t buf_size;
	uint64_t *off;		/* start of packet i in buf */
	uint16_t *len;		/* length of packet i */
	uint64_t total_bytes;	/* sum of len[] */
};

/* Generates n packets from seed (rand64.h's generator). Returns 0, or -1
 * (out of memory, or a frame the builder refused: a bug). */
int pktgen_generate(struct pktgen_set *set, uint32_t n, uint64_t seed);
void pktgen_free(struct pktgen_set *set);

/* The mix's address, destination-port and protocol (6, 17 or 1)
 * distributions, for benchmarks that build their own flow mixes on the
 * same traffic. rng: rand64.h's state. */
uint32_t pktgen_pick_ip4(uint64_t *rng);
uint16_t pktgen_pick_dport(uint64_t *rng);
uint8_t pktgen_pick_proto(uint64_t *rng);

static inline const uint8_t *
pktgen_set_pkt(const struct pktgen_set *set, uint32_t i)
{
	return set->buf + set->off[i];
}

#endif /* TEST_SUPPORT_PKTGEN_H */
