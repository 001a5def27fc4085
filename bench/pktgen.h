/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_PKTGEN_H
#define BENCH_PKTGEN_H

/*
 * Synthetic but realistic Ethernet traffic for the filter benchmarks (CPU
 * baselines here, the GPU kernel-rate benchmark later: both must use the
 * same generator and seed so that they filter the same packets).
 *
 * Mix (per packet, independently):
 *  - frame length 64..1500 bytes: 40% 64..127, 20% 128..575,
 *    15% 576..1023, 25% 1024..1500 (bimodal, like Internet traces);
 *  - EtherType: 88% IPv4, 9% IPv6, 3% ARP;
 *  - IPv4/IPv6 payload: 70% TCP, 25% UDP, 5% ICMP;
 *  - destination port: 30% 443, 15% 80, 10% 53, rest random;
 *  - addresses: 50% of IPv4 sources and destinations in 10.0.0.0/8, of
 *    which 2% are exactly 10.1.2.3; the rest random;
 *  - 1% of IPv4 packets are non-first fragments (no L4 header).
 * Bytes after the headers are random: no packet is mostly zeros.
 */

#include <stddef.h>
#include <stdint.h>

#define PKTGEN_MIN_LEN 64
#define PKTGEN_MAX_LEN 1500
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

/* Generates n packets from seed. Returns 0, or -1 (out of memory). */
int pktgen_generate(struct pktgen_set *set, uint32_t n, uint64_t seed);
void pktgen_free(struct pktgen_set *set);

/* The generator's address and destination-port distributions, for
 * benchmarks that build their own flow mixes on the same traffic. */
uint32_t pktgen_pick_ip4(uint64_t *rng);
uint16_t pktgen_pick_dport(uint64_t *rng);

static inline const uint8_t *
pktgen_pkt(const struct pktgen_set *set, uint32_t i)
{
	return set->buf + set->off[i];
}

#endif /* BENCH_PKTGEN_H */
