/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-flow-export's traffic, one definition for its CPU threads and its
 * GPU kernel: `flows` flows live at once, the window of them sliding on
 * by the churn (new flows a second, the oldest going idle as many), each
 * packet on one of them at random.
 */
#ifndef BENCH_FLOW_BENCH_H
#define BENCH_FLOW_BENCH_H

#include "flow_stress.h"

/* Packet i, the window starting at flow base: its flow and wire bytes. */
GPURX_FN void
flow_bench_pkt(uint64_t i, uint64_t base, uint64_t flows, uint64_t *id,
		uint32_t *bytes)
{
	uint64_t h = flow_stress_mix(i + 1);

	*id = base + h % flows;
	*bytes = 64 + (uint32_t)((h >> 40) % 1437);
}

/* Packet i at time ts, into ft. */
GPURX_FN void
flow_bench_update(struct gpurx_flow_table *ft, uint64_t i, uint64_t base,
		uint64_t flows, uint64_t ts)
{
	struct gpurx_flow_key k;
	uint64_t id;
	uint32_t bytes;

	flow_bench_pkt(i, base, flows, &id, &bytes);
	flow_stress_key((uint32_t)id, &k);
	gpurx_flow_update_pkt(ft, &k, bytes, ts, k.proto == 6 ? 0x10 : 0, 0);
}

#endif /* BENCH_FLOW_BENCH_H */
