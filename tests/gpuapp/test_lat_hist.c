/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ring item latency summary of dpdk-gpu-rx (lib/gpuapp/gpuapp_lat_hist.c):
 * nearest-rank percentiles over several per-queue histograms.
 */
#include <stdint.h>
#include <string.h>

#include "gpuapp_lat_hist.h"
#include "check.h"

#define B 4096

static uint64_t h1[B], h2[B], h3[B];

/* The summary of hists must be n values, p50, p99, max (case: what). */
static void
expect(const uint64_t *const *hists, unsigned int nh, const char *what,
		uint64_t n, uint32_t p50, uint32_t p99, uint32_t max)
{
	struct gpuapp_lat_summary s;

	gpuapp_lat_hist_summary(hists, nh, B, &s);
	CHECK(s.n == n && s.p50 == p50 && s.p99 == p99 && s.max == max,
		"%s: n %llu p50 %u p99 %u max %u, expected %llu %u %u %u", what,
		(unsigned long long)s.n, s.p50, s.p99, s.max,
		(unsigned long long)n, p50, p99, max);
}

static void
reset(void)
{
	memset(h1, 0, sizeof(h1));
	memset(h2, 0, sizeof(h2));
	memset(h3, 0, sizeof(h3));
}

int
main(void)
{
	const uint64_t *all[3] = { h1, h2, h3 };
	const uint64_t *some[4] = { h3, NULL, h1, h2 };

	reset();
	expect(all, 3, "nothing counted", 0, 0, 0, 0);

	/* 1..100: the 50th and 99th values. */
	for (uint64_t v = 1; v <= 100; v++)
		gpuapp_lat_hist_add(h1, B, v);
	expect(all, 3, "1..100 in one histogram", 100, 50, 99, 100);

	/* The same values spread over three queues (and a missing one). */
	reset();
	for (uint64_t v = 1; v <= 100; v++)
		gpuapp_lat_hist_add(v % 3 == 0 ? h1 : v % 3 == 1 ? h2 : h3, B, v);
	expect(some, 4, "1..100 over three histograms", 100, 50, 99, 100);

	reset();
	gpuapp_lat_hist_add(h2, B, 7);
	expect(all, 3, "one value", 1, 7, 7, 7);

	/* A tail: 990 fast items, 9 slow ones and one past the last bucket:
	 * p99 is the 990th value (nearest rank); the overflow is counted in
	 * the last bucket. One more slow item moves the rank to 991. */
	reset();
	for (int i = 0; i < 990; i++)
		gpuapp_lat_hist_add(h1, B, 20);
	for (int i = 0; i < 9; i++)
		gpuapp_lat_hist_add(h2, B, 300);
	gpuapp_lat_hist_add(h3, B, 1000000);
	expect(all, 3, "tail of 10 in 1000", 1000, 20, 20, B - 1);
	gpuapp_lat_hist_add(h2, B, 300);
	expect(all, 3, "tail of 11 in 1001", 1001, 20, 300, B - 1);

	return check_finish("test_lat_hist");
}
