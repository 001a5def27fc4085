/* SPDX-License-Identifier: BSD-3-Clause */

#include <time.h>

#include <rte_cycles.h>

#include "tsclock.h"

int
gpurx_tsclock_init(struct gpurx_tsclock *c)
{
	struct timespec ts;
	uint64_t t0, t1;

	c->hz = rte_get_tsc_hz();
	if (c->hz == 0)
		return -1;
	/* Bracket the clock read so the pair is off by half a call at most. */
	t0 = rte_get_tsc_cycles();
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	t1 = rte_get_tsc_cycles();
	c->base_cycles = t0 + (t1 - t0) / 2;
	c->base_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}
