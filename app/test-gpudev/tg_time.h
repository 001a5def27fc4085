/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_TIME_H
#define TG_TIME_H

/* Wall-clock deadlines for the CPU side of CPU/GPU handshakes. */

#include <stdint.h>
#include <time.h>

#include "gpuapp_clock.h"

static inline uint64_t
tg_now_ns(void)
{
	return gpuapp_mono_ns();
}

static inline void
tg_sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

#endif /* TG_TIME_H */
