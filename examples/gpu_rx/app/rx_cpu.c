/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --cpu: each RX burst is parsed, filtered, flow-counted and captured on
 * the RX lcore with the same per-packet code the GPU kernel runs. A packet
 * in two buffers (RX buffer split) is classified where they lie, through
 * the two-run view the kernel uses; longer chains are linearized.
 */

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "app.h"
#include "flow_export.h"
#include "gpu_guard.h"
#include "flow_classify.h"
#include "gpugen_stamp.h"
#include "stamps.h"
#include "log.h"

static void
cpu_process(struct gpurx_app *a, struct gpurx_qstats *qs, uint16_t q,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *scratch)
{
	uint64_t rx_ns = a->opt.ts_source == GPURX_TS_NONE ? 0 :
		gpuapp_tsc_ns(&a->clk, rte_get_tsc_cycles());
	uint64_t last_ts = rx_ns;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t wirelen = rte_pktmbuf_pkt_len(m);
		int short_chain;
		uint32_t caplen = gpurx_pkt_linear_len(m, &short_chain);
		uint64_t ts = last_ts = gpurx_pkt_ts(a, m, rx_ns);
		struct gpurx_pkt_view view;
		struct gpurx_pkt_info pi;
		const uint8_t *data;
		uint32_t verdict, n0 = caplen;
		uint8_t mal;

		if (m->nb_segs > 1)
			GPURX_STAT_ADD(qs, chained, 1);
		if (unlikely(short_chain))
			GPURX_STAT_ADD(qs, short_chain, 1);
		else if (caplen < wirelen)
			GPURX_STAT_ADD(qs, truncated, 1);
		if (m->nb_segs == 2 && m->data_len < caplen) {
			/* Two segments hold the caplen bytes (caplen is at
			 * most what the chain holds): read in place. */
			n0 = m->data_len;
			data = rte_pktmbuf_mtod(m, const uint8_t *);
			view = gpurx_view_split(data, n0,
				rte_pktmbuf_mtod(m->next, const uint8_t *));
		} else {
			/* Contiguous data is used in place; a longer chain
			 * is copied whole. */
			data = rte_pktmbuf_read(m, 0, caplen, scratch);
			if (data == NULL)
				continue;	/* cannot happen: caplen <= pkt_len */
			view = gpurx_view_linear(data);
		}
		verdict = gpurx_classify_pkt_view_info(view, caplen, wirelen,
			ts, q, a->filter.insns, a->filter.len, a->ft, &pi);
		mal = pi.malformed;
		/* A match past -c ends the burst here, uncounted, as the
		 * packets past --count-received are (its flow was counted). */
		if (verdict != 0 && gpurx_take_matches(a, 1) == 0)
			break;
		/* After -c, as the GPU modes: a stamp per counted match. */
		if (a->stamps != NULL && verdict != 0) {
			struct gpugen_stamp st;

			gpurx_stamps_add(a->stamps, q,
				gpugen_stamp_find_view(view, caplen, &pi, &st) == 0 ?
				&st : NULL, ts);
		}
		GPURX_STAT_ADD(qs, rx_pkts, 1);
		GPURX_STAT_ADD(qs, rx_bytes, wirelen);
		GPURX_STAT_ADD(qs, malformed[mal], 1);
		if (verdict == 0)
			continue;
		GPURX_STAT_ADD(qs, matched, 1);
		if (a->cap == NULL)
			continue;
		caplen = RTE_MIN(caplen, RTE_MIN(verdict, a->opt.snaplen));
		/* The capture wants one run: past the first segment of a
		 * split packet, its bytes are gathered (cannot fail: the
		 * segments hold caplen bytes). */
		if (caplen > n0) {
			if (gpurx_pkt_copy(m, caplen, scratch) != 0) {
				GPURX_STAT_ADD(qs, drop_capture, 1);
				continue;
			}
			data = scratch;
		}
		/* The writer counts captures and capture drops itself. */
		gpurx_capture_write(a->cap, q, data, caplen, wirelen, ts);
	}
	/* The burst's flows are in the table: their time may end others. */
	gpurx_flow_note(q, last_ts);
}

int
gpurx_rx_cpu_lcore(void *arg)
{
	struct gpurx_app *a = &gpurx_app;
	uint16_t q = (uint16_t)(uintptr_t)arg;
	struct gpurx_qstats *qs = &a->qs[q];
	const uint16_t port = a->q_port[q], qid = a->q_qid[q];
	struct rte_mbuf *pkts[GPURX_MAX_BURST];
	uint8_t *scratch;

	/* Per lcore, so linearizing needs no lock. */
	scratch = rte_malloc_socket("gpurx_scratch", GPURX_SCRATCH_BYTES, 64,
		(int)rte_socket_id());
	if (scratch == NULL) {
		GPURX_LOG(ERR, "error: queue %u: no memory for the scratch buffer\n",
			q);
		a->stop = 1;
		return -1;
	}
	while (!a->stop) {
		uint16_t n = rte_eth_rx_burst(port, qid, pkts, a->opt.burst);
		uint16_t take;

		if (a->cap != NULL)
			gpurx_capture_poll(a->cap, q);
		if (n == 0)
			continue;
		take = gpurx_admit(a, n);
		GPURX_STAT_ADD(qs, bursts, 1);
		cpu_process(a, qs, q, pkts, take, scratch);
		gpurx_mbufs_free(pkts, n, gpurx_mbufs_plain_pool(pkts, n));
	}
	rte_free(scratch);
	return 0;
}
