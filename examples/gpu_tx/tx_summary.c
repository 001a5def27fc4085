/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's end-of-run report: what was sent, at what rate, what
 * the port refused and the GPU's post-to-built times, as text on stdout
 * and, with --json, as one JSON object.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "gpuapp_json.h"
#include "gpuapp_lat_hist.h"
#include "gpuapp_tsc.h"
#include "gpu_tx.h"

/* What both forms of the summary report. */
struct figures {
	double secs, pps, bps;
	const char *unit;
	struct gpuapp_lat_summary lat;
};

static void
figures(const struct app *a, struct figures *fg)
{
	const uint64_t *hists[MAX_QUEUES];

	fg->secs = (double)(a->tsc_end - a->tsc_start) / gpuapp_tsc_hz();
	fg->pps = fg->secs > 0 ? a->st.pkts / fg->secs : 0;
	/* Frame bits with FCS, as --rate N bps counts them. */
	fg->bps = fg->secs > 0 ?
		(a->st.bytes + 4.0 * a->st.pkts) * 8 / fg->secs : 0;
	fg->unit = a->o.unit == RATE_PPS ? "pps" :
		a->o.unit == RATE_BPS ? "bps" : a->o.unit == RATE_PCT ? "%" :
		"none";
	for (uint16_t q = 0; q < a->o.queues; q++)
		hists[q] = a->txq[q].lat_hist;
	gpuapp_lat_hist_summary(hists, a->o.queues, BUILD_LAT_BUCKETS,
		&fg->lat);
}

static void
summary_text(const struct app *a, const struct figures *fg, FILE *f)
{
	fprintf(f, "sent: %" PRIu64 " packets, %" PRIu64 " bytes in %.3f s\n"
		"rate: requested %g %s, measured %.0f pps, %.0f bps\n"
		"tx: %" PRIu64 " retries (port full), %" PRIu64 " not "
		"sent (stopped with the port full)\n",
		a->st.pkts, a->st.bytes, fg->secs, a->o.rate, fg->unit, fg->pps,
		fg->bps, a->st.retries, a->st.failed);
	if (a->port_oerrors != 0)
		fprintf(f, "port: %" PRIu64 " of the packets sent not written "
			"or sent by port %u (its oerrors)\n", a->port_oerrors,
			a->o.port);
	if (fg->lat.n != 0)
		fprintf(f, "GPU build: %" PRIu64 " bursts, posted to built "
			"(us): median %u, p99 %u, max %u%s\n", fg->lat.n,
			fg->lat.p50, fg->lat.p99, fg->lat.max, fg->lat.max ==
			BUILD_LAT_BUCKETS - 1 ? " or more" : "");
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
	summary_text(a, &fg, stdout);
	if (a->o.json != NULL && summary_json(a, &fg, a->o.json) != 0)
		return -1;
	return 0;
}
