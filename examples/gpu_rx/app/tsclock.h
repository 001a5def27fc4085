/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TSC cycles to nanoseconds since the epoch (CLOCK_REALTIME), the TSC's
 * rate measured and the origin taken once at start (50 ms), so the RX
 * fast path reads only the TSC.
 */
#ifndef GPURX_APP_TSCLOCK_H
#define GPURX_APP_TSCLOCK_H

#include <stdint.h>

struct gpurx_tsclock {
	uint64_t base_cycles;
	uint64_t base_ns;
	uint64_t hz;
};

/* Call after rte_eal_init() (needs the TSC frequency). Returns 0 or -1. */
int gpurx_tsclock_init(struct gpurx_tsclock *c);

static inline uint64_t
gpurx_tsclock_ns(const struct gpurx_tsclock *c, uint64_t cycles)
{
	uint64_t d = cycles - c->base_cycles;
	uint64_t sec = d / c->hz;

	/* Whole seconds apart so d * 1e9 cannot overflow. */
	return c->base_ns + sec * 1000000000ull +
		(d - sec * c->hz) * 1000000000ull / c->hz;
}

#endif /* GPURX_APP_TSCLOCK_H */
