/* SPDX-License-Identifier: BSD-3-Clause */

#include <rte_cycles.h>

#include "gpupkt_clock.h"
#include "tsclock.h"

int
gpurx_tsclock_init(struct gpurx_tsclock *c)
{
	uint64_t t0, t1;

	c->hz = rte_get_tsc_hz();
	if (c->hz == 0)
		return -1;
	/* Bracket the clock read so the pair is off by half a call at most.
	 * CLOCK_REALTIME: the clock dpdk-gpu-tx stamps its frames with. */
	t0 = rte_get_tsc_cycles();
	c->base_ns = gpupkt_real_ns();
	t1 = rte_get_tsc_cycles();
	if (c->base_ns == 0)
		return -1;
	c->base_cycles = t0 + (t1 - t0) / 2;
	return 0;
}
