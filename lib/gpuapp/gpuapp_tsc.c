/* SPDX-License-Identifier: BSD-3-Clause */

#include <pthread.h>

#include <rte_cycles.h>

#include "gpuapp_clock.h"
#include "gpuapp_tsc.h"

/* Long enough that two reads' error (~30 ns each) weighs < 1 ppm. */
#define TSC_CAL_NS (50ull * 1000 * 1000)
#define TSC_TRIES 8

static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static uint64_t tsc_hz;	/* 0: not measurable */

/*
 * A TSC reading and clk's at the same instant: of a few bracketed reads,
 * the narrowest. The first read after a sleep is slow and lopsided (a
 * 6000-cycle bracket on a VM, its midpoint a microsecond off: 25 ppm
 * over 50 ms, 100 us of drift in a 4 s loop); the narrowest is within
 * tens of cycles.
 */
static int
pair(clockid_t clk, uint64_t *cycles, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int k = 0; k < TSC_TRIES; k++) {
		uint64_t t0, t1, n;

		t0 = rte_get_tsc_cycles();
		n = gpuapp_clock_ns(clk);
		t1 = rte_get_tsc_cycles();
		if (n == 0)
			return -1;
		if (t1 - t0 < best) {
			best = t1 - t0;
			*cycles = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
	return 0;
}

/* Against CLOCK_MONOTONIC, which runs at CLOCK_REALTIME's rate. */
static void
measure(void)
{
	uint64_t c0, n0, c1, n1;

	if (pair(CLOCK_MONOTONIC, &c0, &n0) != 0)
		return;
	rte_delay_us_sleep(TSC_CAL_NS / 1000);
	if (pair(CLOCK_MONOTONIC, &c1, &n1) != 0 || n1 <= n0 || c1 <= c0)
		return;
	tsc_hz = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(n1 - n0) + 0.5);
}

uint64_t
gpuapp_tsc_hz(void)
{
	if (pthread_once(&tsc_once, measure) != 0 || tsc_hz == 0)
		return rte_get_tsc_hz();
	return tsc_hz;
}

int
gpuapp_tsc_init(struct gpuapp_tsc *c)
{
	if (pthread_once(&tsc_once, measure) != 0 || tsc_hz == 0)
		return -1;
	c->hz = tsc_hz;
	/* CLOCK_REALTIME: the clock dpdk-gpu-tx stamps its frames with. */
	return pair(CLOCK_REALTIME, &c->base_cycles, &c->base_ns);
}
