/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histograms of GPU ring items: one counter per unit (1 us in
 * dpdk-gpu-rx and dpdk-gpu-tx), the last bucket for everything longer.
 * One histogram per queue, each written by its lcore alone; summaries
 * merge them.
 */
#ifndef GPUAPP_LAT_HIST_H
#define GPUAPP_LAT_HIST_H

#include <stdint.h>

struct gpuapp_lat_summary {
	uint64_t n;		/* values counted */
	uint32_t p50;		/* nearest-rank median, in buckets */
	uint32_t p99;		/* nearest-rank 99th percentile */
	uint32_t max;		/* highest non-empty bucket */
};

/* Counts value in hist[buckets]; values past the end go to the last. */
static inline void
gpuapp_lat_hist_add(uint64_t *hist, uint32_t buckets, uint64_t value)
{
	hist[value < buckets ? value : buckets - 1]++;
}

/* Percentiles over nh histograms of `buckets` counters taken together;
 * NULL histograms are skipped. All zero when nothing was counted. */
void gpuapp_lat_hist_summary(const uint64_t *const *hists, unsigned int nh,
		uint32_t buckets, struct gpuapp_lat_summary *s);

#endif /* GPUAPP_LAT_HIST_H */
