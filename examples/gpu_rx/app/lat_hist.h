/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histograms of GPU ring items: one counter per unit (1 us in
 * dpdk-gpu-rx), the last bucket for everything longer. One histogram per
 * RX queue, each written by its lcore alone; summaries merge them.
 */
#ifndef GPURX_APP_LAT_HIST_H
#define GPURX_APP_LAT_HIST_H

#include <stdint.h>

struct gpurx_lat_summary {
	uint64_t n;		/* values counted */
	uint32_t p50;		/* nearest-rank median, in buckets */
	uint32_t p99;		/* nearest-rank 99th percentile */
	uint32_t max;		/* highest non-empty bucket */
};

/* Counts value in hist[buckets]; values past the end go to the last. */
static inline void
gpurx_lat_hist_add(uint64_t *hist, uint32_t buckets, uint64_t value)
{
	hist[value < buckets ? value : buckets - 1]++;
}

/* Percentiles over nh histograms of `buckets` counters taken together;
 * NULL histograms are skipped. All zero when nothing was counted. */
void gpurx_lat_hist_summary(const uint64_t *const *hists, unsigned int nh,
		uint32_t buckets, struct gpurx_lat_summary *s);

#endif /* GPURX_APP_LAT_HIST_H */
