/* SPDX-License-Identifier: BSD-3-Clause */

#include <string.h>

#include "liveness.h"

void
gpurx_watch_init(struct gpurx_watch *w, uint16_t nq, uint64_t hz,
		uint32_t stall_ms, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->hz = hz;
	w->period = hz * GPURX_WATCH_PERIOD_MS / 1000;
	w->stall = hz / 1000 * stall_ms;
	w->last_look = now;
	w->progress = now;
	w->nq = nq < GPURX_MAX_QUEUES ? nq : GPURX_MAX_QUEUES;
	for (uint16_t q = 0; q < w->nq; q++)
		w->since[q] = now;
}

int
gpurx_watch_due(const struct gpurx_watch *w, uint64_t now, int ring_full)
{
	return ring_full || now - w->last_look >= w->period;
}

enum gpurx_watch_verdict
gpurx_watch_decide(struct gpurx_watch *w, uint64_t now, enum gpurx_kstate ks,
		const struct gpurx_qlive *live, uint16_t *q, uint64_t *age)
{
	enum gpurx_watch_verdict v = GPURX_WATCH_OK;

	w->last_look = now;
	if (ks == GPURX_KSTATE_FAILED)
		return GPURX_WATCH_KERNEL_FAILED;
	if (ks == GPURX_KSTATE_ENDED)
		return GPURX_WATCH_KERNEL_ENDED;
	for (uint16_t i = 0; i < w->nq; i++) {
		uint64_t p = live[i].published, c = live[i].collected;

		if (c != w->seen[i])
			w->progress = now;
		if (c != w->seen[i] || p == c) {
			w->seen[i] = c;
			w->since[i] = now;
			continue;
		}
		if (v == GPURX_WATCH_OK && w->stall != 0 &&
				now - w->since[i] >= w->stall) {
			v = GPURX_WATCH_STALLED;
			*q = i;
			*age = now - w->since[i];
		}
	}
	return v;
}
