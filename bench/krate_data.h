/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_KRATE_DATA_H
#define BENCH_KRATE_DATA_H

/*
 * Host side of bench-kernel-rate: the packets the kernels classify, and
 * the CPU pass they are checked against. Plain C, no CUDA.
 *
 * Packets come from pktgen (the generator and seed of bench-bpf-cpu: the
 * same length mix and protocol mix). Their flow tuples are then rewritten
 * (the headers built again by lib/gpugen's frame builder, as pktgen
 * builds them) so that the packets of a data set belong to a chosen
 * number of flows:
 * pktgen draws addresses and ports per packet, which makes almost every
 * packet a flow of its own. Each IPv4 packet takes the tuple (addresses,
 * protocol, ports) of one of the IPv4 flows, each IPv6 packet one of the
 * IPv6 flows, drawn uniformly; the tuples are drawn with pktgen's
 * distributions (address ranges, 443/80/53 ports, TCP/UDP/ICMP shares),
 * so the filters accept about the same share of packets as in
 * bench-bpf-cpu. Non-first IPv4 fragments (1%, no ports) take their
 * addresses from the first 1% of the IPv4 flows, ARP stays as generated.
 *
 * The 64-byte data set takes the first 64 bytes of generated packets
 * (pktgen run in chunks, seeds derived from the seed; then rewritten as
 * 64-byte frames); its IPv6 packets become IPv4 ones, as pktgen does for
 * frames too short for IPv6 + TCP.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow_classify.h"
#include "pktgen.h"

enum kr_pclass {
	KR_PC_OTHER = 0,	/* ARP: left as generated */
	KR_PC_V4,
	KR_PC_V4_FRAG,		/* non-first fragment: no L4 header */
	KR_PC_V6,
};

struct kr_dataset {
	struct pktgen_set set;	/* packet bytes (set.buf), pktgen's arrays */
	uint32_t n;
	bool fixed64;		/* every frame 64 bytes */
	uint8_t *cls;		/* enum kr_pclass of each packet */
	/* What the kernels read, each array on pages of its own so it can
	 * be registered with the GPU (cudaHostRegister) by itself. */
	uint32_t *offs;		/* byte offset of packet i in set.buf */
	uint16_t *lens;		/* caplen == wirelen */
	uint64_t *ts;		/* ns */
	size_t offs_bytes, lens_bytes, ts_bytes;	/* allocated sizes */
	uint64_t wire_bytes;	/* sum of lens */
	uint32_t flows;		/* flows asked for (0: none rewritten yet) */
};

/* Generates n packets from seed (fixed64: 64-byte frames). 0 or -1. */
int kr_dataset_make(struct kr_dataset *d, uint32_t n, uint64_t seed,
		bool fixed64);
/* Rewrites the flow tuples for `flows` flows (>= 1). Deterministic in
 * (seed, flows): may be called again with another count. */
void kr_dataset_set_flows(struct kr_dataset *d, uint32_t flows, uint64_t seed);
void kr_dataset_free(struct kr_dataset *d);

/* Bytes of the packet buffer a reader of every packet may touch: the
 * allocation behind set.buf, rounded to what the kernels may read past
 * the last packet (they read 16-byte words). */
size_t kr_dataset_buf_bytes(const struct kr_dataset *d);

/*
 * Bytes a kernel must read per packet (averages over the data set):
 * need = the header bytes the parser and the filters look at (up to the
 * end of the L4 header, at least the Ethernet header) plus the
 * descriptor (offset 4 + length 2 + timestamp 8 bytes); sectors = the
 * same with the header bytes rounded up to 32-byte sectors, the unit the
 * GPU's memory system moves; window = what the warp-staged kernels
 * actually load (min(len, window) rounded up to 16 bytes + descriptor).
 */
/* Descriptor bytes a kernel reads per packet: offset, length, time. */
#define KR_DESC_BYTES (sizeof(uint32_t) + sizeof(uint16_t) + sizeof(uint64_t))

struct kr_read_bytes {
	double need;
	double sectors;
	double window;
	/* Distinct 128-byte lines the header sectors of a packet touch (a
	 * line shared with the previous packet counted once), descriptors
	 * not included: requests a header-only reader cannot avoid. */
	double lines;
};

void kr_dataset_read_bytes(const struct kr_dataset *d, uint32_t window,
		struct kr_read_bytes *rb);

/* Table capacity for `flows` flows: a power of two, half full at most. */
uint32_t kr_flow_capacity(uint32_t flows);

/*
 * The CPU pass the GPU results are checked against: gpurx_classify_pkt()
 * over the first n packets in order, flows into ft, verdicts into
 * verdicts[n]. window > 0 gives the filter and parser only the first
 * window bytes of each packet (as the warp-staged kernels do). Returns
 * the number of accepted packets.
 */
uint64_t kr_cpu_pass(const struct kr_dataset *d, uint32_t n,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		uint32_t window, struct gpurx_flow_table *ft, uint32_t *verdicts);

/* Order-free summary of a table: equal for equal contents. */
struct kr_table_sum {
	uint64_t entries;	/* READY slots */
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_seen;	/* sums, wrapping */
	uint64_t last_seen;
	uint64_t key_hash;	/* sum of key hashes, wrapping */
	uint64_t n_flows;	/* header */
	uint64_t overflow_pkts;
	uint64_t overflow_bytes;
};

void kr_table_sum(const struct gpurx_flow_table *ft, struct kr_table_sum *s);
/* 0 when equal; else prints what differs (prefix first) and returns -1. */
int kr_table_sum_cmp(const char *prefix, const struct kr_table_sum *want,
		const struct kr_table_sum *got);
/* Every flow of want found in got with the same counters (and as many
 * flows): 0, or prints up to 5 differences and returns -1. */
int kr_table_cmp_full(const char *prefix, const struct gpurx_flow_table *want,
		const struct gpurx_flow_table *got);
/* Verdicts equal: 0, or prints up to 5 differences and returns -1. */
int kr_verdicts_cmp(const char *prefix, const uint32_t *want,
		const uint32_t *got, uint32_t n);

#endif /* BENCH_KRATE_DATA_H */
