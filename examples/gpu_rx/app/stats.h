/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: one block per RX queue, each written by its own lcore only
 * (relaxed atomic stores, so readers see whole values), summed by the
 * main lcore for the stats line, the summary, JSON and telemetry.
 */
#ifndef GPURX_APP_STATS_H
#define GPURX_APP_STATS_H

#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>

#include "pkt_parse.h"
#include "flow_table.h"
#include "opts.h"

struct gpurx_qstats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t matched;
	uint64_t captured;
	uint64_t cap_bytes;
	uint64_t cap_from_hdr;	/* --split, GPU: captures written from a
				 * header buffer in host memory, nothing
				 * copied out by the GPU */
	uint64_t drop_ring;	/* every ring item busy */
	uint64_t drop_capture;	/* not in the capture file: a write failed
				 * (the capture stops there), see capture.h */
	uint64_t chained;	/* multi-segment packets linearized */
	uint64_t truncated;	/* longer than the linearize scratch */
	uint64_t short_chain;	/* segments hold less than pkt_len */
	uint64_t foreign;	/* one segment the GPU cannot read in place:
				 * copied (host-mapped, gpu modes) */
	uint64_t gpu_lost;	/* in ring items the GPU never finished */
	uint64_t bursts;
	uint64_t gpu_busy_ns;	/* kernel time spent on items */
	uint64_t malformed[GPURX_MAL_COUNT];
} __rte_cache_aligned;

/* Single writer per block: a plain add published with a relaxed store. */
#define GPURX_STAT_ADD(qs, field, v) \
	__atomic_store_n(&(qs)->field, (qs)->field + (v), __ATOMIC_RELAXED)
#define GPURX_STAT_GET(qs, field) \
	__atomic_load_n(&(qs)->field, __ATOMIC_RELAXED)

struct gpurx_totals {
	struct gpurx_qstats q;	/* summed over queues */
	uint64_t port_imissed;
	uint64_t port_ierrors;
	uint64_t port_nombuf;
	double elapsed_s;
};

void gpurx_stats_sum(const struct gpurx_qstats *qs, unsigned int nq,
		struct gpurx_qstats *sum);

/* "rx ... pps ..." line from two samples dt seconds apart. */
void gpurx_stats_line(FILE *f, const struct gpurx_totals *now,
		const struct gpurx_totals *prev, double dt, unsigned int nq);

/* GPU ring items over the run (GPU modes). */
struct gpurx_item_stats {
	uint64_t items;
	/* READY stored -> DONE seen by the RX lcore, 1 us resolution. */
	uint32_t lat_p50_us, lat_p99_us, lat_max_us;
	/* Means per item on the GPU: from the dispatcher seeing READY to a
	 * worker starting (persistent kernel only), and processing. */
	double wait_us, busy_us;
	/* busy_us split: item inputs loaded, packet bytes staged, packets
	 * classified, results written (and fenced). */
	double phase_us[4];
};

struct gpuapp_json;

struct gpurx_summary_info {
	const char *mode;		/* "cpu", "gpu/host-mapped", ... */
	const char *filter;
	const char *capture_path;
	uint32_t top_n;
	/* Several ports: the ethdev port id of each port index a flow's key
	 * holds, named in the top flows; NULL with one port. */
	const uint16_t *port_ids;
	uint16_t n_ports;
	uint32_t mbufs_total;
	uint32_t mbufs_avail;		/* after shutdown */
	const struct gpurx_item_stats *items;	/* NULL with --cpu */
	int exit_reason_signal;		/* 0, or the signal number */
	const char *exit_reason;
	/* More members for the JSON summary (NULL: none). */
	void (*json_more)(struct gpuapp_json *j, void *arg);
	void *json_more_arg;
};

void gpurx_summary_print(FILE *f, const struct gpurx_totals *t,
		const struct gpurx_flow_table *ft,
		const struct gpurx_summary_info *si);

/* --json: the summary to path ("-": stdout). 0, or a negative errno after
 * saying why on stderr. */
int gpurx_summary_json(const char *path, const struct gpurx_totals *t,
		const struct gpurx_flow_table *ft,
		const struct gpurx_summary_info *si);

struct rte_tel_data;

/*
 * Register /gpu_rx/stats. fill() is called from the telemetry thread and
 * must only read counters; more(), unless NULL, adds to the reply's dict
 * after them (same rule). Returns 0 or a negative errno.
 */
int gpurx_telemetry_register(void (*fill)(struct gpurx_totals *t),
		void (*more)(struct rte_tel_data *d));

#endif /* GPURX_APP_STATS_H */
