/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The measured TSC rate (lib/gpuapp/gpuapp_tsc.h) against the system
 * clocks: what dpdk-gpu-rx's timestamps, rates and timeouts and the
 * benchmarks' numbers divide by. No EAL: the TSC and the clocks need none.
 */

#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include <rte_cycles.h>

#include "gpuapp_clock.h"
#include "gpuapp_tsc.h"
#include "check.h"


/* Over 400 ms the reads' brackets (tens of ns) weigh < 0.1 ppm. */
#define CHECK_NS (400ull * 1000 * 1000)
#define MAX_PPM 100.0

/* A TSC reading and clk's at one instant: the narrowest of a few
 * bracketed reads (as the library takes them, written apart here). */
static void
pair_now(clockid_t clk, uint64_t *cycles, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int k = 0; k < 16; k++) {
		uint64_t t0 = rte_get_tsc_cycles();
		uint64_t n = gpuapp_clock_ns(clk);
		uint64_t t1 = rte_get_tsc_cycles();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*cycles = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

static double
ppm(double got, double want)
{
	return (got - want) / want * 1e6;
}

/* The rate counts the TSC's cycles of a later CLOCK_MONOTONIC interval. */
static void
rate_matches_monotonic(void)
{
	uint64_t hz = gpuapp_tsc_hz(), c0, n0, c1, n1;
	double want, e;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)CHECK_NS };

	CHECK(hz > 100000000ull, "rate %" PRIu64 " Hz", hz);
	if (hz == 0)
		return;
	CHECK(gpuapp_tsc_hz() == hz, "a second call measured again");
	pair_now(CLOCK_MONOTONIC, &c0, &n0);
	nanosleep(&ts, NULL);
	pair_now(CLOCK_MONOTONIC, &c1, &n1);
	want = (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
	e = ppm((double)hz, want);
	printf("  measured %" PRIu64 " Hz, over %.0f ms %.0f Hz: %+.2f ppm\n",
		hz, (double)(n1 - n0) / 1e6, want, e);
	CHECK(e < MAX_PPM && e > -MAX_PPM, "%+.1f ppm off", e);
}

/* A TSC reading as CLOCK_REALTIME, 400 ms after the origin was taken. */
static void
realtime_of_cycles(void)
{
	struct gpuapp_tsc c;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)CHECK_NS };
	uint64_t cy, real;
	int64_t d;

	CHECK(gpuapp_tsc_init(&c) == 0, "init");
	CHECK(c.hz == gpuapp_tsc_hz(), "one rate: %" PRIu64 " vs %" PRIu64,
		c.hz, gpuapp_tsc_hz());
	nanosleep(&ts, NULL);
	pair_now(CLOCK_REALTIME, &cy, &real);
	d = (int64_t)(gpuapp_tsc_ns(&c, cy) - real);
	printf("  TSC as CLOCK_REALTIME: %+" PRId64 " ns off after 400 ms\n", d);
	/* 100 ppm of 400 ms, and the two origins' reads. */
	CHECK(d < 41000 && d > -41000, "%" PRId64 " ns off", d);
}

/* Exact, far from the origin: no overflow of cycles * 1e9. */
static void
conversion_exact(void)
{
	const struct gpuapp_tsc c = {
		.base_cycles = 5000, .base_ns = 1700000000ull * 1000000000ull,
		.hz = 2596130000ull,
	};
	/* 10 days and 3/4 of a second later. */
	uint64_t days = 10ull * 86400;
	uint64_t cy = c.base_cycles + days * c.hz + c.hz / 4 * 3;

	CHECK(gpuapp_tsc_ns(&c, cy) == c.base_ns + days * 1000000000ull +
		750000000ull, "%" PRIu64, gpuapp_tsc_ns(&c, cy));
	CHECK(gpuapp_tsc_ns(&c, c.base_cycles + 2596) == c.base_ns + 999,
		"%" PRIu64, gpuapp_tsc_ns(&c, c.base_cycles + 2596) - c.base_ns);
}

int
main(void)
{
	CHECK_CASE(conversion_exact);
	CHECK_CASE(rate_matches_monotonic);
	CHECK_CASE(realtime_of_cycles);
	return check_finish("gpuapp_tsc");
}
