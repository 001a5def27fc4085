/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes of dpdk-gpu-rx, from the main lcore: the watch of the kernel
 * and of each queue's progress (liveness.h decides), and the ring items'
 * latency and GPU time for the summary.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "gpu_path.h"
#include "gpu_priv.h"
#include "gpuapp_lat_hist.h"
#include "stats.h"
#include "log.h"

void
gpurx_gpu_item_stats(const struct gpurx_app *a, struct gpurx_item_stats *st)
{
	const struct gpurx_gpu *g = a->gpu;
	const uint64_t *hists[GPURX_MAX_QUEUES] = { NULL };
	uint64_t busy = 0, wait = 0, done = 0;
	uint64_t phase[GPURX_PHASES] = { 0 };
	struct gpuapp_lat_summary lat;

	RTE_BUILD_BUG_ON(RTE_DIM(st->phase_us) != GPURX_PHASES);
	memset(st, 0, sizeof(*st));
	if (g == NULL || g->gq == NULL)
		return;
	for (uint16_t q = 0; q < a->nq; q++) {
		const struct gpurx_gq *gq = &g->gq[q];

		for (uint32_t b = 0; b < GPURX_BLOCKS_PER_QUEUE_MAX; b++) {
			busy += RTE_GPU_VOLATILE(gq->busy_ns[b]);
			wait += RTE_GPU_VOLATILE(gq->wait_ns[b]);
			done += RTE_GPU_VOLATILE(gq->items_done[b]);
			for (int ph = 0; ph < GPURX_PHASES; ph++)
				phase[ph] += RTE_GPU_VOLATILE(gq->phase_ns[ph][b]);
		}
		hists[q] = g->q[q].lat_hist;
	}
	/* Percentiles over every queue's items together. */
	gpuapp_lat_hist_summary(hists, a->nq, LAT_BUCKETS, &lat);
	st->items = lat.n;
	st->lat_p50_us = lat.p50;
	st->lat_p99_us = lat.p99;
	st->lat_max_us = lat.max;
	if (done != 0) {
		st->wait_us = a->opt.launch_per_burst ? 0 : wait / 1e3 / done;
		st->busy_us = busy / 1e3 / done;
		for (int ph = 0; ph < GPURX_PHASES; ph++)
			st->phase_us[ph] = phase[ph] / 1e3 / done;
	}
}

/* What each queue had in flight when the GPU side failed. */
static void
report_in_flight(const struct gpurx_app *a, const struct gpurx_qlive *live)
{
	for (uint16_t q = 0; q < a->nq; q++)
		if (live[q].published != live[q].collected)
			GPURX_LOG(ERR, "error:   queue %u: %" PRIu64 " ring items, %"
				PRIu64 " packets in flight\n", q,
				live[q].published - live[q].collected,
				live[q].inflight_pkts);
}

const char *
gpurx_gpu_watch(struct gpurx_app *a, int force)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpurx_qlive live[GPURX_MAX_QUEUES];
	uint64_t now = rte_get_tsc_cycles(), age = 0, hz = a->clk.hz;
	enum gpurx_kstate ks = GPURX_KSTATE_NONE;
	int ring_full = 0, err = 0;
	uint16_t q = 0;

	if (g == NULL || g->gq == NULL || g->watch_failed)
		return NULL;
	for (uint16_t i = 0; i < a->nq; i++)
		ring_full |= (int)__atomic_exchange_n(&g->q[i].live.ring_full, 0,
			__ATOMIC_RELAXED);
	if (!force && !gpurx_watch_due(&g->watch, now, ring_full))
		return NULL;
	if (g->kernel_running) {
		err = gpucuda_stream_busy(g->kstream);
		ks = err == -1 ? GPURX_KSTATE_RUNNING : err == 0 ?
			GPURX_KSTATE_ENDED : GPURX_KSTATE_FAILED;
	}
	/* Each counter whole (relaxed loads of single-writer stores). */
	for (uint16_t i = 0; i < a->nq; i++) {
		const struct gpurx_qlive *l = &g->q[i].live;

		live[i].published = __atomic_load_n(&l->published, __ATOMIC_RELAXED);
		live[i].collected = __atomic_load_n(&l->collected, __ATOMIC_RELAXED);
		live[i].inflight_pkts = __atomic_load_n(&l->inflight_pkts,
			__ATOMIC_RELAXED);
	}
	switch (gpurx_watch_decide(&g->watch, now, ks, live, &q, &age)) {
	case GPURX_WATCH_OK:
		return NULL;
	case GPURX_WATCH_KERNEL_FAILED:
	case GPURX_WATCH_KERNEL_ENDED:
		/* The RX lcores stop waiting for items it will never finish. */
		g->dead = 1;
		g->watch_failed = 1;
		GPURX_LOG(ERR, "error: persistent kernel %s%s, found %" PRIu64
			" ms after items last came back; stopping. Lost with it:\n",
			ks == GPURX_KSTATE_FAILED ? "failed: " :
			"ended without being told to quit",
			ks == GPURX_KSTATE_FAILED ? gpucuda_strerror(err) : "",
			(now - g->watch.progress) * 1000 / hz);
		report_in_flight(a, live);
		return ks == GPURX_KSTATE_FAILED ? "GPU kernel failed" :
			"GPU kernel ended";
	case GPURX_WATCH_STALLED:
		g->watch_failed = 1;
		GPURX_LOG(ERR, "error: queue %u stalled: READY ring items not "
			"taken back by the GPU for %" PRIu64 " ms (--stall-ms %u), the "
			"kernel %s; stopping. In flight:\n", q, age * 1000 / hz,
			a->opt.stall_ms, ks == GPURX_KSTATE_RUNNING ? "still running" :
			"launched per burst");
		report_in_flight(a, live);
		return "GPU queue stalled";
	}
	return NULL;
}

int
gpurx_gpu_kernel_held(const struct gpurx_app *a)
{
	if (a->gpu == NULL || !a->gpu->kernel_running)
		return 0;
	GPURX_LOG(ERR, "error: the persistent kernel is still running: exiting "
		"without freeing what it polls (comm lists, registrations, pools) "
		"and without rte_eal_cleanup(), which would free them under it; "
		"the CUDA context ends with the process\n");
	return 1;
}

