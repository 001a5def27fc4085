/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_CLOCK_H
#define GPUAPP_CLOCK_H

/*
 * The programs' clock, read in one place: CLOCK_MONOTONIC for intervals
 * and deadlines (steady across time-of-day steps), CLOCK_REALTIME for
 * times another program compares with its own (the generator's stamps
 * against dpdk-gpu-rx's TSC clock, gpuapp_tsc.h). Header only, no DPDK:
 * CUDA-only programs include it too.
 */

#include <stdint.h>
#include <time.h>

/* ns on clock clk; 0 when the system has no such clock. */
static inline uint64_t
gpuapp_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
gpuapp_mono_ns(void)
{
	return gpuapp_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t
gpuapp_real_ns(void)
{
	return gpuapp_clock_ns(CLOCK_REALTIME);
}

#endif /* GPUAPP_CLOCK_H */
