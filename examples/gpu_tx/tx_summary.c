/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's end-of-run report: what was sent, at what rate, what
 * the port refused and the GPU's post-to-built times, as text on stdout
 * and, with --json, as one JSON object.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "dpdk_compat.h"
#include "gpuapp_json.h"
#include "gpuapp_lat_hist.h"
#include "gpuapp_tsc.h"
#include "gpu_tx.h"

/* What both forms of the summary report. */
struct figures {
	double secs, pps, bps;
	double bps_l1;		/* bps with each frame's L1 overhead */
	double measured;	/* in --rate's own unit, 0 without one */
	const char *measured_unit;	/* that unit as the text says it */
	const char *unit;
	struct gpuapp_lat_summary lat;
	/* Shares of the TX lcores' time spent waiting for the GPU (ring
	 * full) and for mbufs (pool empty); the bursts in flight at a post
	 * on average, -1 without a GPU build. */
	double wait_gpu, wait_mbuf, inflight;
};

/* v with an SI prefix, as people read rates: "1.25 M". */
static const char *
si(double v, char *buf, size_t len)
{
	static const char *const pfx[] = { "", "k", "M", "G", "T" };
	unsigned int k = 0;

	while (v >= 1000 && k + 1 < RTE_DIM(pfx)) {
		v /= 1000;
		k++;
	}
	snprintf(buf, len, "%.*f %s", v < 10 ? 3 : v < 100 ? 2 : 1, v, pfx[k]);
	return buf;
}

static void
figures(const struct app *a, struct figures *fg)
{
	const uint64_t *hists[MAX_QUEUES];

	fg->secs = (double)(a->tsc_end - a->tsc_start) / gpuapp_tsc_hz();
	fg->pps = fg->secs > 0 ? a->st.pkts / fg->secs : 0;
	/* Frame bits with FCS, as --rate N bps counts them. */
	fg->bps = fg->secs > 0 ?
		gputx_l2_bits(a->st.bytes, a->st.pkts) / fg->secs : 0;
	fg->bps_l1 = fg->secs > 0 ?
		gputx_l1_bits(a->st.bytes, a->st.pkts) / fg->secs : 0;
	/* In the unit the rate was asked in; % of link counts L1 bits. */
	fg->measured = a->o.unit == RATE_PPS ? fg->pps :
		a->o.unit == RATE_BPS ? fg->bps :
		a->o.unit == RATE_PCT ? fg->bps_l1 : 0;
	fg->measured_unit = a->o.unit == RATE_PPS ? "pps" :
		a->o.unit == RATE_BPS ? "bit/s L2" : "bit/s L1";
	fg->unit = a->o.unit == RATE_PPS ? "pps" :
		a->o.unit == RATE_BPS ? "bps" : a->o.unit == RATE_PCT ? "%" :
		"none";
	{
		const double lc = (double)(a->tsc_end - a->tsc_start) *
			a->o.queues;

		fg->wait_gpu = lc > 0 ? a->st.wait_gpu_tsc / lc : 0;
		fg->wait_mbuf = lc > 0 ? a->st.wait_mbuf_tsc / lc : 0;
		fg->inflight = a->st.posts > 0 ?
			(double)a->st.inflight_sum / a->st.posts : -1;
	}
	for (uint16_t q = 0; q < a->o.queues; q++)
		hists[q] = a->txq[q].lat_hist;
	gpuapp_lat_hist_summary(hists, a->o.queues, BUILD_LAT_BUCKETS,
		&fg->lat);
}

static void
summary_text(const struct app *a, const struct figures *fg, FILE *f)
{
	char r[64], p[32], l2[32], l1[32];

	if (a->o.unit == RATE_PPS || a->o.unit == RATE_BPS)
		snprintf(r, sizeof(r), "%s%s", si(a->o.rate, p, sizeof(p)),
			fg->measured_unit);
	else if (a->o.unit == RATE_PCT)
		snprintf(r, sizeof(r), "%g%% of the link", a->o.rate);
	else
		snprintf(r, sizeof(r), "none");
	fprintf(f, "sent: %" PRIu64 " packets, %" PRIu64 " bytes in %.3f s\n"
		"rate: requested %s; measured %spps, %sbit/s L2 (frames "
		"with FCS), %sbit/s L1 (with preamble and gap)\n"
		"tx: %" PRIu64 " retries (port full), %" PRIu64 " not "
		"sent (stopped with the port full)\n",
		a->st.pkts, a->st.bytes, fg->secs, r, si(fg->pps, p, sizeof(p)),
		si(fg->bps, l2, sizeof(l2)), si(fg->bps_l1, l1, sizeof(l1)),
		a->st.retries, a->st.failed);
	if (a->port_oerrors != 0)
		fprintf(f, "port: %" PRIu64 " of the packets sent not written "
			"or sent by port %u (its oerrors)\n", a->port_oerrors,
			a->o.port);
	/* Per stream when there are several, as a tester lists them. */
	for (uint32_t s = 0; a->n_streams > 1 && s < a->n_streams; s++)
		fprintf(f, "stream %u: %" PRIu64 " packets, %" PRIu64 " bytes, "
			"%spps, %sbit/s L2\n", s, a->s_pkts[s], a->s_bytes[s],
			si(fg->secs > 0 ? a->s_pkts[s] / fg->secs : 0, p,
				sizeof(p)),
			si(fg->secs > 0 ? gputx_l2_bits(a->s_bytes[s],
				a->s_pkts[s]) / fg->secs : 0, l2, sizeof(l2)));
	/* Per GPU when there are several: the share each built. */
	for (unsigned int k = 0; a->n_gpus > 1 && k < a->n_gpus; k++) {
		uint64_t n = gputx_gpu_pkts(a, &a->gpu[k]);

		fprintf(f, "GPU %d: %u queue%s, %" PRIu64 " packets, %spps\n",
			a->gpu[k].id, a->gpu[k].n_queues, a->gpu[k].n_queues > 1 ?
			"s" : "", n, si(fg->secs > 0 ? n / fg->secs : 0, p,
				sizeof(p)));
	}
	if (fg->lat.n != 0)
		fprintf(f, "GPU build: %" PRIu64 " bursts, posted to built "
			"(us): median %u, p99 %u, max %u%s\n", fg->lat.n,
			fg->lat.p50, fg->lat.p99, fg->lat.max, fg->lat.max ==
			BUILD_LAT_BUCKETS - 1 ? " or more" : "");
	/* What bounds the lcores: the GPU when they wait on full rings, the
	 * pool when on mbufs, else themselves (or the port: retries). */
	if (fg->inflight >= 0)
		fprintf(f, "lcores: %.1f %% of their time waiting for the GPU "
			"(every one of %u items posted), %.1f %% for mbufs; "
			"%.1f bursts in flight at a post on average\n",
			100 * fg->wait_gpu, a->o.ring_items, 100 * fg->wait_mbuf,
			fg->inflight);
	else if (a->st.wait_mbuf_tsc != 0)
		fprintf(f, "lcores: %.1f %% of their time waiting for mbufs\n",
			100 * fg->wait_mbuf);
	if (a->bd_ok)
		gputx_bd_text(&a->bd, f);
}

/* One object on one line. 0, or a negative errno (said). */
static int
summary_json(const struct app *a, const struct figures *fg, const char *to)
{
	struct gpuapp_json *j = gpuapp_json_create();
	int rc;

	if (j == NULL) {
		GPUTX_LOG(ERR, "error: --json %s: out of memory\n", to);
		return -ENOMEM;
	}
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_str(j, "mem", gputx_mem_str(a->o.mem));
	gpuapp_json_str(j, "build", gputx_build_str(&a->o));
	gpuapp_json_u64(j, "queues", a->o.queues);
	gpuapp_json_u64(j, "burst", a->o.burst);
	gpuapp_json_u64(j, "streams", gpugen_n_streams(a->gen));
	gpuapp_json_u64(j, "packets", a->st.pkts);
	gpuapp_json_u64(j, "bytes", a->st.bytes);
	gpuapp_json_fixed(j, "seconds", fg->secs, 6);
	gpuapp_json_num(j, "rate_requested", a->o.rate);
	gpuapp_json_str(j, "rate_unit", fg->unit);
	gpuapp_json_fixed(j, "pps", fg->pps, 1);
	gpuapp_json_fixed(j, "bps", fg->bps, 1);
	gpuapp_json_fixed(j, "bps_l1", fg->bps_l1, 1);
	gpuapp_json_bool(j, "rate_short", a->rate_short != 0);
	gpuapp_json_u64(j, "tx_retries", a->st.retries);
	gpuapp_json_u64(j, "tx_failed", a->st.failed);
	gpuapp_json_u64(j, "port_oerrors", a->port_oerrors);
	gpuapp_json_u64(j, "first_tx_ns", a->st.first_tx_ns);
	gpuapp_json_u64(j, "last_tx_ns", a->st.last_tx_ns);
	gpuapp_json_bool(j, "fast_free", a->fast_free);
	gpuapp_json_u64(j, "build_bursts", fg->lat.n);
	gpuapp_json_obj_begin(j, "build_lat_us");
	gpuapp_json_u64(j, "p50", fg->lat.p50);
	gpuapp_json_u64(j, "p99", fg->lat.p99);
	gpuapp_json_u64(j, "max", fg->lat.max);
	gpuapp_json_obj_end(j);
	gpuapp_json_obj_begin(j, "lcore_wait");
	gpuapp_json_fixed(j, "gpu_share", fg->wait_gpu, 4);
	gpuapp_json_fixed(j, "mbuf_share", fg->wait_mbuf, 4);
	gpuapp_json_obj_end(j);
	/* GPU modes only: no ring without a GPU build. */
	if (fg->inflight >= 0) {
		gpuapp_json_u64(j, "ring_items", a->o.ring_items);
		gpuapp_json_fixed(j, "inflight_mean", fg->inflight, 2);
	}
	if (a->bd_ok)
		gputx_bd_json(&a->bd, j);
	gpuapp_json_arr_begin(j, "per_stream");
	for (uint32_t s = 0; s < a->n_streams; s++) {
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_u64(j, "stream", s);
		gpuapp_json_u64(j, "id", a->sched[s].id);
		gpuapp_json_u64(j, "weight", a->sched[s].weight);
		gpuapp_json_u64(j, "packets", a->s_pkts[s]);
		gpuapp_json_u64(j, "bytes", a->s_bytes[s]);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
	if (a->n_gpus > 1) {
		gpuapp_json_arr_begin(j, "per_gpu");
		for (unsigned int k = 0; k < a->n_gpus; k++) {
			gpuapp_json_obj_begin(j, NULL);
			gpuapp_json_u64(j, "gpu", (uint64_t)a->gpu[k].id);
			gpuapp_json_arr_begin(j, "queues");
			for (uint16_t q = 0; q < a->o.queues; q++)
				if (a->txq[q].g == &a->gpu[k])
					gpuapp_json_u64(j, NULL, q);
			gpuapp_json_arr_end(j);
			gpuapp_json_u64(j, "packets",
				gputx_gpu_pkts(a, &a->gpu[k]));
			gpuapp_json_obj_end(j);
		}
		gpuapp_json_arr_end(j);
	}
	gpuapp_json_obj_end(j);
	rc = gpuapp_json_write(j, to, 0);
	gpuapp_json_free(j);
	return rc;
}

/* The summary on stdout, and as JSON to --json's target ("-": stdout
 * too): 0, or -1 when it could not be written (said). */
int
gputx_report(struct app *a)
{
	struct rte_eth_stats es;
	struct figures fg;
	int rc;

	/* After the run and --linger: what the port still holds is sent
	 * or dropped by now, and its count is final. */
	rc = rte_eth_stats_get(a->o.port, &es);
	if (rc != 0)
		GPUTX_LOG(WARNING, "warning: port %u statistics: %s; frames it "
			"failed to send are not known\n", a->o.port,
			rte_strerror(-rc));
	a->port_oerrors = rc == 0 ? es.oerrors : 0;
	figures(a, &fg);
	/* A tester must know when it did not offer what it was asked to. */
	a->rate_short = a->rate_units > 0 && fg.measured < 0.99 * a->rate_units;
	if (a->rate_short) {
		char m[32], w[32];

		GPUTX_LOG(WARNING, "warning: measured %s%s, %.1f%% short of the "
			"%s%s asked%s\n", si(fg.measured, m, sizeof(m)),
			fg.measured_unit, 100 * (1 - fg.measured / a->rate_units),
			si(a->rate_units, w, sizeof(w)), fg.measured_unit,
			a->o.strict_rate ? " (--strict-rate: exit 1)" : "");
	}
	summary_text(a, &fg, stdout);
	if (a->o.json != NULL && summary_json(a, &fg, a->o.json) != 0)
		return -1;
	return 0;
}

/* The one run of this process, for the telemetry thread's queries, and
 * the lock that keeps it from going away under a query. */
static const struct app *tel_app;
static rte_spinlock_t tel_lock = RTE_SPINLOCK_INITIALIZER;

static int
tel_stats_locked(const struct app *a, struct rte_tel_data *d,
		struct rte_tel_data *by_stream, struct rte_tel_data *by_gpu,
		uint64_t *pkts)
{
	struct tx_stats t;
	int rc;

	if (a == NULL)
		return -EINVAL;
	gputx_sent_so_far(a, &t);
	gputx_streams_so_far(a, pkts, pkts + a->n_streams);
	rte_tel_data_start_array(by_stream, RTE_TEL_U64_VAL);
	for (uint32_t s = 0; s < a->n_streams; s++)
		gpu_compat_tel_array_uint(by_stream, pkts[s]);
	/* Keyed by gpudev id, so that a reader needs no second list to
	 * tell which GPU a count belongs to; --mem cpu builds on no GPU
	 * (id -1), and the dict stays empty. */
	rte_tel_data_start_dict(by_gpu);
	for (unsigned int k = 0; k < a->n_gpus; k++) {
		char id[16];

		if (a->gpu[k].id < 0)
			continue;
		snprintf(id, sizeof(id), "%d", a->gpu[k].id);
		gpu_compat_tel_dict_uint(by_gpu, id,
			gputx_gpu_pkts(a, &a->gpu[k]));
	}
	rte_tel_data_start_dict(d);
	gpu_compat_tel_dict_uint(d, "tx_packets", t.pkts);
	gpu_compat_tel_dict_uint(d, "tx_bytes", t.bytes);
	gpu_compat_tel_dict_uint(d, "retries", t.retries);
	gpu_compat_tel_dict_uint(d, "not_sent", t.failed);
	gpu_compat_tel_dict_uint(d, "queues", a->o.queues);
	/* Each container is freed with d once added, even when the second
	 * add fails; the caller frees only what was never added. */
	rc = rte_tel_data_add_dict_container(d, "packets_by_stream",
		by_stream, 0);
	if (rc != 0)
		return rc;
	return rte_tel_data_add_dict_container(d, "packets_by_gpu", by_gpu, 0)
		!= 0 ? 1 : 0;
}

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct rte_tel_data *by_stream = rte_tel_data_alloc();
	struct rte_tel_data *by_gpu = rte_tel_data_alloc();
	uint64_t *pkts = NULL;
	int rc = -ENOMEM;

	rte_spinlock_lock(&tel_lock);
	if (tel_app != NULL)
		pkts = calloc(2 * (size_t)tel_app->n_streams + 1,
			sizeof(*pkts));
	if (by_stream != NULL && by_gpu != NULL &&
			(pkts != NULL || tel_app == NULL))
		rc = tel_stats_locked(tel_app, d, by_stream, by_gpu, pkts);
	rte_spinlock_unlock(&tel_lock);
	free(pkts);
	/* 1: by_stream is d's, by_gpu was refused (the reply goes out
	 * without it); any other failure: neither was added. */
	if (rc == 1) {
		rte_tel_data_free(by_gpu);
		return 0;
	}
	if (rc != 0) {
		rte_tel_data_free(by_stream);
		rte_tel_data_free(by_gpu);
	}
	return rc;
}

/* No query reads the run any more: its counters may go. */
void
gputx_telemetry_detach(void)
{
	rte_spinlock_lock(&tel_lock);
	tel_app = NULL;
	rte_spinlock_unlock(&tel_lock);
}

int
gputx_telemetry_register(const struct app *a)
{
	rte_spinlock_lock(&tel_lock);
	tel_app = a;
	rte_spinlock_unlock(&tel_lock);
	return rte_telemetry_register_cmd("/gpu_tx/stats", tel_stats,
		"dpdk-gpu-tx counters: packets and bytes sent, retries, frames "
		"not sent, packets by stream and by GPU. No parameters");
}
