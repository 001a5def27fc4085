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
	const uint64_t *hists[GPURX_MAX_QUEUES] = { NULL };
	uint64_t busy = 0, wait = 0, done = 0;
	uint64_t phase[GPURX_PHASES] = { 0 };
	struct gpuapp_lat_summary lat;
	unsigned int nh = 0;

	RTE_BUILD_BUG_ON(RTE_DIM(st->phase_us) != GPURX_PHASES);
	memset(st, 0, sizeof(*st));
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		const struct gpurx_gpu *g = a->gpus[k];

		for (uint16_t r = 0; g->gq != NULL && r < g->nq; r++) {
			const struct gpurx_gq *gq = &g->gq[r];

			for (uint32_t b = 0; b < GPURX_BLOCKS_PER_QUEUE_MAX; b++) {
				busy += RTE_GPU_VOLATILE(gq->busy_ns[b]);
				wait += RTE_GPU_VOLATILE(gq->wait_ns[b]);
				done += RTE_GPU_VOLATILE(gq->items_done[b]);
				for (int ph = 0; ph < GPURX_PHASES; ph++)
					phase[ph] += RTE_GPU_VOLATILE(
						gq->phase_ns[ph][b]);
			}
			hists[nh++] = g->q[r].lat_hist;
		}
	}
	if (nh == 0)
		return;
	/* Percentiles over every queue's items together. */
	gpuapp_lat_hist_summary(hists, nh, LAT_BUCKETS, &lat);
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

/* Queue q as a user names it: its index, and with several ports the
 * port and that port's own queue (the index is global over the ports). */
static const char *
queue_name(const struct gpurx_app *a, uint16_t q, char *buf, size_t len)
{
	if (a->n_ports > 1)
		snprintf(buf, len, "%u (port %u queue %u)", q, a->q_port[q],
			a->q_qid[q]);
	else
		snprintf(buf, len, "%u", q);
	return buf;
}

/* What each of g's queues had in flight when the GPU side failed. */
static void
report_in_flight(const struct gpurx_app *a, const struct gpurx_gpu *g,
		const struct gpurx_qlive *live)
{
	char qn[48];

	for (uint16_t r = 0; r < g->nq; r++)
		if (live[r].published != live[r].collected)
			GPURX_LOG(ERR, "error:   queue %s: %" PRIu64 " ring items, %"
				PRIu64 " packets in flight\n",
				queue_name(a, g->queues[r], qn, sizeof(qn)),
				live[r].published - live[r].collected,
				live[r].inflight_pkts);
}

/* The exit reason, naming the GPU when there are several. */
static const char *
reason(const struct gpurx_app *a, const struct gpurx_gpu *g, const char *what)
{
	/* One per GPU: several may fail in one look. */
	static char buf[GPURX_MAX_QUEUES][64];

	if (a->n_gpus < 2)
		return what;
	snprintf(buf[g->idx], sizeof(buf[g->idx]), "%s (GPU %d)", what, g->id);
	return buf[g->idx];
}

static const char *
watch_gpu(struct gpurx_app *a, struct gpurx_gpu *g, int force)
{
	struct gpurx_qlive live[GPURX_MAX_QUEUES];
	uint64_t now = rte_get_tsc_cycles(), age = 0, hz = a->clk.hz;
	enum gpurx_kstate ks = GPURX_KSTATE_NONE;
	int ring_full = 0, err = 0;
	uint16_t r = 0;
	char qn[48];

	if (g->gq == NULL || g->watch_failed)
		return NULL;
	for (uint16_t i = 0; i < g->nq; i++)
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
	for (uint16_t i = 0; i < g->nq; i++) {
		const struct gpurx_qlive *l = &g->q[i].live;

		live[i].published = __atomic_load_n(&l->published, __ATOMIC_RELAXED);
		live[i].collected = __atomic_load_n(&l->collected, __ATOMIC_RELAXED);
		live[i].inflight_pkts = __atomic_load_n(&l->inflight_pkts,
			__ATOMIC_RELAXED);
	}
	switch (gpurx_watch_decide(&g->watch, now, ks, live, &r, &age)) {
	case GPURX_WATCH_OK:
		return NULL;
	case GPURX_WATCH_KERNEL_FAILED:
	case GPURX_WATCH_KERNEL_ENDED:
		/* The RX lcores stop waiting for items it will never finish. */
		g->dead = 1;
		g->watch_failed = 1;
		GPURX_LOG(ERR, "error: GPU %d: persistent kernel %s%s, found %"
			PRIu64 " ms after items last came back; stopping. Lost "
			"with it:\n", g->id, ks == GPURX_KSTATE_FAILED ?
			"failed: " : "ended without being told to quit",
			ks == GPURX_KSTATE_FAILED ? gpucuda_strerror(err) : "",
			(now - g->watch.progress) * 1000 / hz);
		report_in_flight(a, g, live);
		return reason(a, g, ks == GPURX_KSTATE_FAILED ?
			"GPU kernel failed" : "GPU kernel ended");
	case GPURX_WATCH_STALLED:
		g->watch_failed = 1;
		GPURX_LOG(ERR, "error: GPU %d: queue %s stalled: READY ring items "
			"not taken back by the GPU for %" PRIu64 " ms (--stall-ms "
			"%u), the kernel %s; stopping. In flight:\n", g->id,
			queue_name(a, g->queues[r], qn, sizeof(qn)),
			age * 1000 / hz, a->opt.stall_ms,
			ks == GPURX_KSTATE_RUNNING ? "still running" :
			"launched per burst");
		report_in_flight(a, g, live);
		return reason(a, g, "GPU queue stalled");
	}
	return NULL;
}

const char *
gpurx_gpu_watch(struct gpurx_app *a, int force)
{
	const char *first = NULL;

	/* Each GPU on its own: the first to fail stops the run, and the
	 * others are looked at then too, so that RX lcores of another dead
	 * kernel do not wait out the drain for it. */
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		const char *why = watch_gpu(a, a->gpus[k],
			force || first != NULL);

		if (first == NULL && why != NULL)
			first = why;
	}
	return first;
}

int
gpurx_gpu_kernel_held(const struct gpurx_app *a)
{
	int held = 0;

	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (a->gpus[k]->kernel_running) {
			GPURX_LOG(ERR, "error: GPU %d: the persistent kernel is "
				"still running\n", a->gpus[k]->id);
			held = 1;
		}
	if (held)
		GPURX_LOG(ERR, "error: exiting without freeing what the kernel "
			"polls (comm lists, registrations, pools) and without "
			"rte_eal_cleanup(), which would free them under it; the "
			"CUDA context ends with the process\n");
	return held;
}
