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

#include "gpuapp_lat_hist.h"
#include "gpuapp_tsc.h"
#include "gpu_tx.h"

static void
summary(struct app *a, FILE *f, int json)
{
	double secs = (double)(a->tsc_end - a->tsc_start) /
		gpuapp_tsc_hz();
	double pps = secs > 0 ? a->st.pkts / secs : 0;
	/* Frame bits with FCS, as --rate N bps counts them. */
	double bps = secs > 0 ? (a->st.bytes + 4.0 * a->st.pkts) * 8 / secs : 0;
	const char *unit = a->o.unit == RATE_PPS ? "pps" :
		a->o.unit == RATE_BPS ? "bps" : a->o.unit == RATE_PCT ? "%" :
		"none";
	const uint64_t *hists[MAX_QUEUES];
	struct gpuapp_lat_summary lat;

	for (uint16_t q = 0; q < a->o.queues; q++)
		hists[q] = a->txq[q].lat_hist;
	gpuapp_lat_hist_summary(hists, a->o.queues, BUILD_LAT_BUCKETS, &lat);
	if (!json) {
		fprintf(f, "sent: %" PRIu64 " packets, %" PRIu64 " bytes in %.3f s\n"
			"rate: requested %g %s, measured %.0f pps, %.0f bps\n"
			"tx: %" PRIu64 " retries (port full), %" PRIu64 " not "
			"sent (stopped with the port full)\n",
			a->st.pkts, a->st.bytes, secs, a->o.rate, unit, pps, bps,
			a->st.retries, a->st.failed);
		if (lat.n != 0)
			fprintf(f, "GPU build: %" PRIu64 " bursts, posted to built "
				"(us): median %u, p99 %u, max %u%s\n", lat.n,
				lat.p50, lat.p99, lat.max, lat.max ==
				BUILD_LAT_BUCKETS - 1 ? " or more" : "");
		return;
	}
	fprintf(f, "{\"mem\": \"%s\", \"build\": \"%s\", \"queues\": %u, "
		"\"burst\": %u, \"streams\": %u, \"packets\": %" PRIu64
		", \"bytes\": %" PRIu64 ", \"seconds\": %.6f, "
		"\"rate_requested\": %g, \"rate_unit\": \"%s\", "
		"\"pps\": %.1f, \"bps\": %.1f, \"tx_retries\": %" PRIu64
		", \"tx_failed\": %" PRIu64 ", \"first_tx_ns\": %" PRIu64
		", \"last_tx_ns\": %" PRIu64 ", \"fast_free\": %s, "
		"\"build_bursts\": %" PRIu64 ", \"build_lat_us\": {\"p50\": %u, "
		"\"p99\": %u, \"max\": %u}}\n",
		gputx_mem_str(a->o.mem), gputx_build_str(&a->o), a->o.queues,
		a->o.burst, gpugen_n_streams(a->gen), a->st.pkts, a->st.bytes,
		secs, a->o.rate, unit, pps, bps, a->st.retries, a->st.failed,
		a->st.first_tx_ns, a->st.last_tx_ns,
		a->fast_free ? "true" : "false", lat.n, lat.p50, lat.p99, lat.max);
}

/* The summary on stdout, and as JSON to --json's file: 0, or -1 when
 * the file could not be written (said). */
int
gputx_report(struct app *a)
{
	int rc = 0;

	summary(a, stdout, 0);
	if (a->o.json != NULL) {
		FILE *f = strcmp(a->o.json, "-") == 0 ? stdout :
			fopen(a->o.json, "w");

		if (f == NULL) {
			GPUTX_LOG(ERR, "error: --json %s: %s\n", a->o.json,
				strerror(errno));
			rc = -1;
		} else {
			summary(a, f, 1);
			if (f != stdout && fclose(f) != 0) {
				GPUTX_LOG(ERR, "error: --json %s: %s\n", a->o.json,
					strerror(errno));
				rc = -1;
			}
		}
	}
	return rc;
}
