/* SPDX-License-Identifier: BSD-3-Clause */

#include <rte_cycles.h>

#include "gpupkt_clock.h"
#include "tsclock.h"

/* Long enough that two reads' error (~30 ns each) weighs < 1 ppm. */
#define TSCLOCK_CAL_NS (50ull * 1000 * 1000)
#define TSCLOCK_TRIES 8

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

	for (int k = 0; k < TSCLOCK_TRIES; k++) {
		uint64_t t0, t1, n;

		t0 = rte_get_tsc_cycles();
		n = gpupkt_clock_ns(clk);
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

int
gpurx_tsclock_init(struct gpurx_tsclock *c)
{
	uint64_t c0, n0, c1, n1;

	/*
	 * The TSC's rate measured against CLOCK_MONOTONIC (which runs at
	 * CLOCK_REALTIME's rate), not rte_get_tsc_hz(): EAL rounds its
	 * estimate to 10 MHz (2596.13 MHz reads as 2600 on an EPYC VM), and
	 * 1500 ppm put the RX time 1.5 ms a second behind the generator's
	 * stamps.
	 */
	if (pair(CLOCK_MONOTONIC, &c0, &n0) != 0)
		return -1;
	rte_delay_us_sleep(TSCLOCK_CAL_NS / 1000);
	if (pair(CLOCK_MONOTONIC, &c1, &n1) != 0 || n1 <= n0 || c1 <= c0)
		return -1;
	c->hz = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(n1 - n0) + 0.5);
	if (c->hz == 0)
		return -1;
	/* CLOCK_REALTIME: the clock dpdk-gpu-tx stamps its frames with. */
	return pair(CLOCK_REALTIME, &c->base_cycles, &c->base_ns);
}
