/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TSC's measured rate, and TSC readings as CLOCK_REALTIME
 * nanoseconds. Every conversion of TSC cycles to time a user sees
 * (timestamps, rates, timeouts) takes its rate from here, not from
 * rte_get_tsc_hz(): EAL rounds its estimate to 10 MHz (2596.13 MHz reads
 * as 2600 on an EPYC VM, 1500 ppm off), which put dpdk-gpu-rx's receive
 * times 1.5 ms a second behind the generator's stamps. The rate is
 * measured once a process against CLOCK_MONOTONIC (50 ms, within a few
 * ppm), on the first call of either function below.
 */
#ifndef GPUAPP_TSC_H
#define GPUAPP_TSC_H

#include <stdint.h>

/*
 * TSC cycles a second, measured. The first call sleeps 50 ms to measure:
 * make it at start-up, after rte_eal_init(), not in a timed loop. Where
 * the system clock cannot be read (never on Linux) EAL's estimate.
 * Thread-safe.
 */
uint64_t gpuapp_tsc_hz(void);

/* A TSC reading and CLOCK_REALTIME at one instant, with the rate. */
struct gpuapp_tsc {
	uint64_t base_cycles;
	uint64_t base_ns;
	uint64_t hz;
};

/* After rte_eal_init(). 0, or -1 where the clocks cannot be read. */
int gpuapp_tsc_init(struct gpuapp_tsc *c);

/* CLOCK_REALTIME ns of TSC reading cycles (the RX fast path reads only
 * the TSC). */
static inline uint64_t
gpuapp_tsc_ns(const struct gpuapp_tsc *c, uint64_t cycles)
{
	uint64_t d = cycles - c->base_cycles;
	uint64_t sec = d / c->hz;

	/* Whole seconds apart so d * 1e9 cannot overflow. */
	return c->base_ns + sec * 1000000000ull +
		(d - sec * c->hz) * 1000000000ull / c->hz;
}

#endif /* GPUAPP_TSC_H */
