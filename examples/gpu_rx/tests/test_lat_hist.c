/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ring item latency summary of dpdk-gpu-rx (app/lat_hist.c):
 * nearest-rank percentiles over several per-queue histograms.
 */
#include <stdint.h>

#include "../app/lat_hist.h"
#include "test_common.h"

#define B 4096

static uint64_t h1[B], h2[B], h3[B];

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
	struct gpurx_lat_summary s;

	/* Nothing counted: all zero. */
	reset();
	gpurx_lat_hist_summary(all, 3, B, &s);
	CHECK_EQ(s.n, 0);
	CHECK_EQ(s.p50, 0);
	CHECK_EQ(s.p99, 0);
	CHECK_EQ(s.max, 0);

	/* 1..100 in one histogram: the 50th and 99th values. */
	reset();
	for (uint64_t v = 1; v <= 100; v++)
		gpurx_lat_hist_add(h1, B, v);
	gpurx_lat_hist_summary(all, 3, B, &s);
	CHECK_EQ(s.n, 100);
	CHECK_EQ(s.p50, 50);
	CHECK_EQ(s.p99, 99);
	CHECK_EQ(s.max, 100);

	/* The same values spread over three queues' histograms (and a
	 * missing one) give the same summary. */
	reset();
	for (uint64_t v = 1; v <= 100; v++)
		gpurx_lat_hist_add(v % 3 == 0 ? h1 : v % 3 == 1 ? h2 : h3, B, v);
	{
		const uint64_t *some[4] = { h3, NULL, h1, h2 };

		gpurx_lat_hist_summary(some, 4, B, &s);
	}
	CHECK_EQ(s.n, 100);
	CHECK_EQ(s.p50, 50);
	CHECK_EQ(s.p99, 99);
	CHECK_EQ(s.max, 100);

	/* One value: every percentile is it. */
	reset();
	gpurx_lat_hist_add(h2, B, 7);
	gpurx_lat_hist_summary(all, 3, B, &s);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.p50, 7);
	CHECK_EQ(s.p99, 7);
	CHECK_EQ(s.max, 7);

	/* A tail: 990 fast items and 10 slow ones; p99 is the 990th value
	 * (nearest rank), max the slowest; overflow lands in the last
	 * bucket. */
	reset();
	for (int i = 0; i < 990; i++)
		gpurx_lat_hist_add(h1, B, 20);
	for (int i = 0; i < 9; i++)
		gpurx_lat_hist_add(h2, B, 300);
	gpurx_lat_hist_add(h3, B, 1000000);
	gpurx_lat_hist_summary(all, 3, B, &s);
	CHECK_EQ(s.n, 1000);
	CHECK_EQ(s.p50, 20);
	CHECK_EQ(s.p99, 20);
	CHECK_EQ(s.max, B - 1);
	gpurx_lat_hist_add(h2, B, 300);	/* 1001 values: rank 991 */
	gpurx_lat_hist_summary(all, 3, B, &s);
	CHECK_EQ(s.p99, 300);

	return test_finish("test_lat_hist");
}
