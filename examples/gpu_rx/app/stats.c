/* SPDX-License-Identifier: BSD-3-Clause */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "gpuapp_json.h"
#include "log.h"
#include "stats.h"

/* Every field of struct gpurx_qstats is a uint64_t: sum them as an array. */
#define QSTATS_WORDS (offsetof(struct gpurx_qstats, malformed) / 8 + \
	GPURX_MAL_COUNT)

void
gpurx_stats_sum(const struct gpurx_qstats *qs, unsigned int nq,
		struct gpurx_qstats *sum)
{
	uint64_t *out = (uint64_t *)sum;

	memset(sum, 0, sizeof(*sum));
	for (unsigned int q = 0; q < nq; q++) {
		const uint64_t *in = (const uint64_t *)&qs[q];

		for (size_t i = 0; i < QSTATS_WORDS; i++)
			out[i] += __atomic_load_n(&in[i], __ATOMIC_RELAXED);
	}
}

static double
rate(uint64_t now, uint64_t prev, double dt)
{
	return dt > 0 ? (double)(now - prev) / dt : 0.0;
}

void
gpurx_stats_line(FILE *f, const struct gpurx_totals *now,
		const struct gpurx_totals *prev, double dt, unsigned int nq)
{
	const struct gpurx_qstats *a = &now->q, *b = &prev->q;
	double busy = dt > 0 && nq > 0 ?
		(double)(a->gpu_busy_ns - b->gpu_busy_ns) / (dt * 1e9 * nq) : 0;

	fprintf(f, "[%7.1fs] rx %.0f pps %.3f Mbps | matched %.0f pps | "
		"captured %.0f pps | drop port %" PRIu64 " ring %" PRIu64
		" capture %" PRIu64 " | gpu busy %.1f%%\n",
		now->elapsed_s, rate(a->rx_pkts, b->rx_pkts, dt),
		rate(a->rx_bytes, b->rx_bytes, dt) * 8 / 1e6,
		rate(a->matched, b->matched, dt),
		rate(a->captured, b->captured, dt),
		now->port_imissed, a->drop_ring, a->drop_capture, busy * 100);
}

static void
addr_str(const uint8_t a[16], int ipv, char *buf, size_t len)
{
	if (ipv == 4)
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

static const char *
proto_str(uint8_t p, char *buf, size_t len)
{
	switch (p) {
	case GPURX_IPPROTO_TCP: return "tcp";
	case GPURX_IPPROTO_UDP: return "udp";
	case GPURX_IPPROTO_SCTP: return "sctp";
	case GPURX_IPPROTO_ICMP: return "icmp";
	case GPURX_IPPROTO_ICMPV6: return "icmp6";
	default:
		snprintf(buf, len, "proto-%u", p);
		return buf;
	}
}

/* The ethdev port id of the port index k holds (si->port_ids set). */
static unsigned int
flow_port_id(const struct gpurx_summary_info *si,
		const struct gpurx_flow_key *k)
{
	const uint16_t p = gpurx_flow_key_port(k);

	return p < si->n_ports ? si->port_ids[p] : p;
}

static uint32_t
top_flows(const struct gpurx_flow_table *ft, uint32_t n,
		const struct gpurx_flow_entry ***out)
{
	*out = NULL;
	if (ft == NULL || n == 0)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (*out == NULL)
		return 0;
	return gpurx_flow_table_top_bytes(ft, *out, n);
}

void
gpurx_summary_print(FILE *f, const struct gpurx_totals *t,
		const struct gpurx_flow_table *ft,
		const struct gpurx_summary_info *si)
{
	const struct gpurx_qstats *q = &t->q;
	const struct gpurx_flow_entry **top;
	uint32_t n;

	fprintf(f, "\n=== dpdk-gpu-rx summary (%s) ===\n", si->mode);
	fprintf(f, "filter:        %s\n", si->filter ? si->filter : "");
	fprintf(f, "stopped by:    %s\n", si->exit_reason);
	fprintf(f, "elapsed:       %.3f s\n", t->elapsed_s);
	fprintf(f, "received:      %" PRIu64 " packets, %" PRIu64 " bytes\n",
		q->rx_pkts, q->rx_bytes);
	fprintf(f, "matched:       %" PRIu64 "\n", q->matched);
	fprintf(f, "captured:      %" PRIu64 " packets, %" PRIu64 " bytes%s%s\n",
		q->captured, q->cap_bytes, si->capture_path ? " -> " : "",
		si->capture_path ? si->capture_path : "");
	if (q->cap_from_hdr != 0)
		fprintf(f, "               %" PRIu64 " of them written from "
			"header buffers in host memory (split: no copy-out)\n",
			q->cap_from_hdr);
	fprintf(f, "chained:       %" PRIu64 " (linearized), %" PRIu64
		" holding less than their length (cut to what they hold)\n",
		q->chained, q->short_chain);
	fprintf(f, "foreign:       %" PRIu64 " (outside GPU-readable memory, "
		"copied)\n", q->foreign);
	fprintf(f, "dropped:       port imissed %" PRIu64 ", port ierrors %"
		PRIu64 ", no mbuf %" PRIu64 ", ring full %" PRIu64
		", capture full %" PRIu64 ", over 256 KiB cut %" PRIu64
		", lost on the GPU %" PRIu64 "\n",
		t->port_imissed, t->port_ierrors, t->port_nombuf,
		q->drop_ring, q->drop_capture, q->truncated, q->gpu_lost);
	fprintf(f, "malformed:");
	bool any_malformed = false;
	for (int k = 1; k < GPURX_MAL_COUNT; k++)
		if (q->malformed[k] != 0) {
			fprintf(f, " %s=%" PRIu64, gpurx_malformed_str(k),
				q->malformed[k]);
			any_malformed = true;
		}
	fprintf(f, "%s\n", any_malformed ? "" : "     none");
	if (ft != NULL)
		fprintf(f, "flows:         %" PRIu64 " (overflow %" PRIu64
			" packets)\n", ft->n_flows, ft->overflow_pkts);
	fprintf(f, "mbufs:         %u of %u back in the pool%s\n",
		si->mbufs_avail, si->mbufs_total,
		si->mbufs_avail == si->mbufs_total ? "" : "  ** LEAK **");
	if (si->items != NULL && si->items->items != 0)
		fprintf(f, "gpu items:     %" PRIu64 "; READY to DONE seen p50 %u us, "
			"p99 %u us, max %u us; on the GPU per item: waiting %.1f us, "
			"processing %.1f us (inputs %.1f, staging %.1f, classify "
			"%.1f, results %.1f)\n", si->items->items,
			si->items->lat_p50_us, si->items->lat_p99_us,
			si->items->lat_max_us, si->items->wait_us,
			si->items->busy_us, si->items->phase_us[0],
			si->items->phase_us[1], si->items->phase_us[2],
			si->items->phase_us[3]);
	n = top_flows(ft, si->top_n, &top);
	if (n > 0)
		fprintf(f, "top %u flows by bytes:\n", n);
	for (uint32_t i = 0; i < n; i++) {
		const struct gpurx_flow_key *k = &top[i]->key;
		const struct gpurx_flow_acc *l = gpurx_flow_live(top[i]);
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], pb[16];
		char port[24] = "";

		addr_str(k->src, k->ip_version, s, sizeof(s));
		addr_str(k->dst, k->ip_version, d, sizeof(d));
		if (si->port_ids != NULL)
			snprintf(port, sizeof(port), "port %u ",
				flow_port_id(si, k));
		fprintf(f, "  %2u. %s%-5s %s:%u -> %s:%u vlan %u  %" PRIu64
			" pkts %" PRIu64 " bytes\n", i + 1, port,
			proto_str(k->proto, pb, sizeof(pb)), s, k->sport, d,
			k->dport, gpurx_flow_key_vlan(k), l->packets, l->bytes);
	}
	free(top);
}

/* One flow of the summary's top list. */
static void
json_flow(struct gpuapp_json *j, const struct gpurx_flow_entry *e,
		const struct gpurx_summary_info *si)
{
	const struct gpurx_flow_key *k = &e->key;
	const struct gpurx_flow_acc *l = gpurx_flow_live(e);
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], pb[16];

	addr_str(k->src, k->ip_version, s, sizeof(s));
	addr_str(k->dst, k->ip_version, d, sizeof(d));
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_str(j, "proto", proto_str(k->proto, pb, sizeof(pb)));
	gpuapp_json_str(j, "src", s);
	gpuapp_json_u64(j, "sport", k->sport);
	gpuapp_json_str(j, "dst", d);
	gpuapp_json_u64(j, "dport", k->dport);
	gpuapp_json_u64(j, "vlan", gpurx_flow_key_vlan(k));
	if (si->port_ids != NULL)
		gpuapp_json_u64(j, "port", flow_port_id(si, k));
	gpuapp_json_u64(j, "packets", l->packets);
	gpuapp_json_u64(j, "bytes", l->bytes);
	gpuapp_json_u64(j, "first_seen_ns", l->first_seen);
	gpuapp_json_u64(j, "last_seen_ns", l->last_seen);
	gpuapp_json_obj_end(j);
}

static void
json_items(struct gpuapp_json *j, const struct gpurx_item_stats *it)
{
	gpuapp_json_obj_begin(j, "gpu_items");
	gpuapp_json_u64(j, "items", it->items);
	gpuapp_json_u64(j, "latency_p50_us", it->lat_p50_us);
	gpuapp_json_u64(j, "latency_p99_us", it->lat_p99_us);
	gpuapp_json_u64(j, "latency_max_us", it->lat_max_us);
	gpuapp_json_fixed(j, "wait_us", it->wait_us, 2);
	gpuapp_json_fixed(j, "busy_us", it->busy_us, 2);
	gpuapp_json_fixed(j, "inputs_us", it->phase_us[0], 2);
	gpuapp_json_fixed(j, "staging_us", it->phase_us[1], 2);
	gpuapp_json_fixed(j, "classify_us", it->phase_us[2], 2);
	gpuapp_json_fixed(j, "results_us", it->phase_us[3], 2);
	gpuapp_json_obj_end(j);
}

int
gpurx_summary_json(const char *path, const struct gpurx_totals *t,
		const struct gpurx_flow_table *ft,
		const struct gpurx_summary_info *si)
{
	const struct gpurx_qstats *q = &t->q;
	const struct gpurx_flow_entry **top;
	struct gpuapp_json *j = gpuapp_json_create();
	uint32_t n;
	int rc;

	if (j == NULL) {
		GPURX_LOG(ERR, "error: JSON to %s: out of memory\n", path);
		return -ENOMEM;
	}
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_str(j, "mode", si->mode);
	gpuapp_json_str(j, "filter", si->filter != NULL ? si->filter : "");
	gpuapp_json_str(j, "stopped_by",
		si->exit_reason != NULL ? si->exit_reason : "");
	gpuapp_json_fixed(j, "elapsed_s", t->elapsed_s, 6);
	gpuapp_json_u64(j, "rx_packets", q->rx_pkts);
	gpuapp_json_u64(j, "rx_bytes", q->rx_bytes);
	gpuapp_json_u64(j, "matched", q->matched);
	gpuapp_json_u64(j, "captured", q->captured);
	gpuapp_json_u64(j, "captured_bytes", q->cap_bytes);
	gpuapp_json_u64(j, "chained", q->chained);
	gpuapp_json_u64(j, "short_chains", q->short_chain);
	gpuapp_json_u64(j, "foreign", q->foreign);
	gpuapp_json_obj_begin(j, "dropped");
	gpuapp_json_u64(j, "port_imissed", t->port_imissed);
	gpuapp_json_u64(j, "port_ierrors", t->port_ierrors);
	gpuapp_json_u64(j, "no_mbuf", t->port_nombuf);
	gpuapp_json_u64(j, "ring_full", q->drop_ring);
	gpuapp_json_u64(j, "capture_full", q->drop_capture);
	gpuapp_json_u64(j, "cut_over_256k", q->truncated);
	gpuapp_json_u64(j, "gpu_lost", q->gpu_lost);
	gpuapp_json_obj_end(j);
	gpuapp_json_obj_begin(j, "malformed");
	for (int k = 1; k < GPURX_MAL_COUNT; k++)
		gpuapp_json_u64(j, gpurx_malformed_str(k), q->malformed[k]);
	gpuapp_json_obj_end(j);
	gpuapp_json_obj_begin(j, "mbufs");
	gpuapp_json_u64(j, "total", si->mbufs_total);
	gpuapp_json_u64(j, "returned", si->mbufs_avail);
	gpuapp_json_obj_end(j);
	if (si->items != NULL)
		json_items(j, si->items);
	gpuapp_json_u64(j, "flows", ft ? ft->n_flows : 0);
	gpuapp_json_u64(j, "flow_overflow_packets", ft ? ft->overflow_pkts : 0);
	if (si->json_more != NULL)
		si->json_more(j, si->json_more_arg);
	gpuapp_json_arr_begin(j, "top_flows");
	n = top_flows(ft, si->top_n, &top);
	for (uint32_t i = 0; i < n; i++)
		json_flow(j, top[i], si);
	free(top);
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
	/* Top-level members one a line, each flow on its own. */
	rc = gpuapp_json_write(j, path, 1);
	gpuapp_json_free(j);
	return rc;
}

static void (*tel_fill)(struct gpurx_totals *t);
static void (*tel_more)(struct rte_tel_data *d);

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct gpurx_totals t;

	if (tel_fill == NULL)
		return -EINVAL;
	tel_fill(&t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_packets", t.q.rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", t.q.rx_bytes);
	rte_tel_data_add_dict_u64(d, "matched", t.q.matched);
	rte_tel_data_add_dict_u64(d, "captured", t.q.captured);
	rte_tel_data_add_dict_u64(d, "captured_bytes", t.q.cap_bytes);
	rte_tel_data_add_dict_u64(d, "chained", t.q.chained);
	rte_tel_data_add_dict_u64(d, "short_chains", t.q.short_chain);
	rte_tel_data_add_dict_u64(d, "foreign", t.q.foreign);
	rte_tel_data_add_dict_u64(d, "gpu_lost", t.q.gpu_lost);
	rte_tel_data_add_dict_u64(d, "drop_port_imissed", t.port_imissed);
	rte_tel_data_add_dict_u64(d, "drop_ring_full", t.q.drop_ring);
	rte_tel_data_add_dict_u64(d, "drop_capture_full", t.q.drop_capture);
	rte_tel_data_add_dict_u64(d, "gpu_busy_ns", t.q.gpu_busy_ns);
	for (int k = 1; k < GPURX_MAL_COUNT; k++) {
		char name[64];

		snprintf(name, sizeof(name), "malformed_%s",
			gpurx_malformed_str(k));
		rte_tel_data_add_dict_u64(d, name, t.q.malformed[k]);
	}
	if (tel_more != NULL)
		tel_more(d);
	return 0;
}

int
gpurx_telemetry_register(void (*fill)(struct gpurx_totals *t),
		void (*more)(struct rte_tel_data *d))
{
	tel_fill = fill;
	tel_more = more;
	return rte_telemetry_register_cmd("/gpu_rx/stats", tel_stats,
		"dpdk-gpu-rx counters. No parameters");
}
