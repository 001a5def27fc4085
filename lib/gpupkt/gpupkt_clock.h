/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUPKT_CLOCK_H
#define GPUPKT_CLOCK_H

/*
 * The programs' clock, read in one place: CLOCK_MONOTONIC for intervals
 * and deadlines (steady across time-of-day steps), CLOCK_REALTIME for
 * times another program compares with its own (the generator's stamps
 * against dpdk-gpu-rx's TSC clock, gpupkt_tsc.h). Header only, no DPDK:
 * CUDA-only programs include it too.
 */

#include <stdint.h>
#include <time.h>

/* ns on clock clk; 0 when the system has no such clock. */
static inline uint64_t
gpupkt_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
gpupkt_mono_ns(void)
{
	return gpupkt_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t
gpupkt_real_ns(void)
{
	return gpupkt_clock_ns(CLOCK_REALTIME);
}

#endif /* GPUPKT_CLOCK_H */
