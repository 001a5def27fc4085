/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generated packet batches in the flat layout the GPU kernel takes
 * (one byte array + offsets), shared by the CPU and GPU tests.
 */
#ifndef GPURX_CLASSIFY_REF_H
#define GPURX_CLASSIFY_REF_H

#include <stdint.h>

struct pkt_batch {
	uint8_t *bytes;
	uint32_t *offs;
	uint32_t *caplens;
	uint32_t *wirelens;
	uint64_t *ts;
	uint32_t n;
	uint32_t total;	/* bytes used */
};

int pkt_batch_make(struct pkt_batch *b, uint32_t n, uint64_t seed);
void pkt_batch_free(struct pkt_batch *b);

struct gpurx_flow_table;

/*
 * Flows of want that got lacks or counts differently (packets, bytes,
 * first and last seen), wherever each landed in its table. The callers
 * compare n_flows and overflow_pkts themselves.
 */
uint32_t flow_tables_diff(const struct gpurx_flow_table *want,
		const struct gpurx_flow_table *got);

#endif /* GPURX_CLASSIFY_REF_H */
