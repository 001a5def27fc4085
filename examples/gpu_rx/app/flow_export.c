/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx's flow export: the export ring between the packet path and
 * the exporter thread, the thread (it takes records from the ring into
 * the IPFIX writer, ipfix_writer.c, and runs the scan that ends idle
 * flows: a GPU kernel in GPU modes, a slice of the table a tick on the
 * CPU), and the export of every flow still live at exit. The thread never
 * holds up the packet path: the RX lcores and the GPU only write the
 * ring, and when the thread falls behind the ring fills and flows stay in
 * the table longer (counted and said).
 *
 * Several GPUs: each has its table, export ring and scan (a part below),
 * and the one thread takes every part's records into the one writer, one
 * IPFIX stream per observation domain. A flow stays on one RX queue, so
 * on one GPU: no record is ever combined across parts.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "app.h"
#include "dpdk_compat.h"
#include "flow_export.h"
#include "flow_gpu.h"
#include "gpu_path.h"
#include "gpuapp_json.h"
#include "ipfix_writer.h"
#include "log.h"

struct gpurx_flow_clock gpurx_flow_clocks[GPURX_MAX_QUEUES];

#define DRAIN_BATCH 4096
/* Flows still live at exit, exported a batch at a time (2 MiB). */
#define FINAL_BATCH 16384u
#define WARN_EVERY_S 10

/* One table's export: --cpu's, or one GPU's (gpurx_app.gpus[k]). */
struct fx_part {
	uint16_t k;
	struct gpurx_flow_ring *ring;
	uint64_t tail;		/* records taken from the ring */
	uint64_t slack;		/* the ring's (gpurx_flow_table_set_ring_slack) */
	struct gpurx_flow_gpu gpu;
	int gpu_on, gpu_failed, gpu_stuck;
	int pull_failed;	/* the ring's records no longer come over */
	uint64_t ring_lost;	/* reserved but never written (a GPU fault) */
};

struct gpurx_flow_export {
	struct gpurx_app *a;
	int ring_gpu;		/* GPU memory registry owns the rings */
	struct gpurx_ipfix *ipfix;
	/* The thread. */
	gpu_compat_thread_t thread;
	int thread_on;
	volatile int stop;
	uint32_t scan_pos;
	uint64_t hz;
	/* Over every part: as of the thread's last tick during the run,
	 * final after gpurx_flow_export_finish(). Written by one thread at
	 * a time, read by the telemetry's as whole aligned words. */
	uint64_t ring_full, ring_lost, started;
	uint64_t ring_full_said, next_ring_warn;
	uint16_t n_parts;
	struct fx_part part[GPURX_MAX_GPUS];
};

/* --- Set-up ------------------------------------------------------------- */

/* t's flows end into p's ring, at most limit records waiting. 0, or -1
 * (said why). */
static int
bind_ring(const struct gpurx_app *a, struct gpurx_flow_table *t,
		const struct fx_part *p, uint64_t limit)
{
	gpurx_flow_table_set_expiry(t, p->ring, a->opt.flow_idle_ns,
		a->opt.flow_active_ns, a->opt.flow_linger_ns);
	if (p->slack != 0 && gpurx_flow_table_set_ring_slack(t, limit,
			p->slack) != 0) {
		GPURX_LOG(ERR, "error: flow export ring: %" PRIu64 " records "
			"do not hold %" PRIu64 " and a slack of %" PRIu64 "\n",
			p->ring->size, limit, p->slack);
		return -1;
	}
	return 0;
}

int
gpurx_flow_export_init(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx;
	struct gpurx_ipfix_port ports[GPURX_MAX_PORTS];
	char doms[GPURX_MAX_PORTS * 32], pn[16] = "";
	size_t dlen = 0;
	uint64_t rsize;
	size_t rbytes;
	void *mem = NULL;

	a->fx = NULL;
	if (a->opt.ipfix == NULL && a->opt.ipfix_file == NULL)
		return 0;
	fx = calloc(1, sizeof(*fx));
	if (fx == NULL) {
		GPURX_LOG(ERR, "error: flow export: out of memory\n");
		return -1;
	}
	rsize = gpurx_flow_export_ring_limit(a->opt.flow_capacity);
	rbytes = gpurx_flow_ring_bytes(rsize);
	a->fx = fx;
	fx->a = a;
	fx->hz = a->clk.hz;
	memset(gpurx_flow_clocks, 0, sizeof(gpurx_flow_clocks));
	/* Sequence numbers and templates are per observation domain: one
	 * per port, --ipfix-domain N + its port id; its records (their key
	 * holds the port's index) name the port as ingressInterface. */
	for (uint16_t i = 0; i < a->n_ports; i++) {
		const uint16_t id = a->ports[i].id;

		/* --ipfix-domain is at most 2^32 - 1 - 65535. */
		ports[i].domain = a->opt.ipfix_domain + id;
		ports[i].ingress = id;
		if (a->n_ports > 1)
			snprintf(pn, sizeof(pn), " (port %u)", id);
		/* 32 bytes a port: room for ", 4294967295 (port 65535)". */
		dlen += (size_t)snprintf(doms + dlen, sizeof(doms) - dlen,
			"%s%u%s", i == 0 ? "" : ", ", ports[i].domain, pn);
	}
	fx->ipfix = gpurx_ipfix_open_ports(a->opt.ipfix, a->opt.ipfix_file,
		ports, a->n_ports);
	if (fx->ipfix == NULL)
		return -1;
	gpurx_ipfix_set_rate(fx->ipfix, a->opt.ipfix_rate);
	if (gpurx_ipfix_set_encoders(fx->ipfix, a->opt.ipfix_encoders) != 0)
		return -1;
	/* A ring per table, for rsize records waiting: its records in the
	 * GPU's memory in GPU modes (the GPU publishes them at GPU scope;
	 * drain() copies them over), host memory with --cpu. */
	fx->n_parts = a->opt.cpu ? 1 : a->n_gpus;
	for (uint16_t k = 0; k < fx->n_parts; k++) {
		struct fx_part *p = &fx->part[k];

		p->k = k;
		if (a->opt.cpu)
			break;
		if (gpurx_flow_gpu_ring(a, k, rsize, RTE_MIN(rsize,
				(uint64_t)DRAIN_BATCH), &p->ring, &p->slack) != 0)
			return -1;
		fx->ring_gpu = 1;
	}
	if (a->opt.cpu) {
		mem = rte_zmalloc("gpurx_flow_ring", rbytes, 64);
		if (mem == NULL) {
			GPURX_LOG(ERR, "error: flow export ring: no memory for "
				"%" PRIu64 " records\n", rsize);
			return -1;
		}
		fx->part[0].ring = gpurx_flow_ring_init(mem, rsize);
	}
	/* a->ft as every GPU gets it: the first GPU's ring, each GPU's own
	 * put in its copy's header (gpurx_flow_export_start()). */
	if (bind_ring(a, a->ft, &fx->part[0], rsize) != 0)
		return -1;

	printf("flow export: %s, observation domain%s %s; records end %.3g s "
		"idle, %.3g s after their first packet%s, %.3g s after a FIN/RST; "
		"ring of %" PRIu64 " records%s; %u encoder%s\n",
		gpurx_ipfix_describe(fx->ipfix), a->n_ports > 1 ? "s" : "",
		doms, a->opt.flow_idle_ns / 1e9,
		a->opt.flow_active_ns / 1e9,
		a->opt.flow_active_ns ? "" : " (never)",
		a->opt.flow_linger_ns / 1e9, rsize,
		fx->n_parts > 1 ? " per GPU" : "",
		gpurx_ipfix_encoders(fx->ipfix),
		gpurx_ipfix_encoders(fx->ipfix) > 1 ? "s" : "");
	if (a->opt.ts_source == GPURX_TS_NONE)
		printf("flow export: --ts none: every packet at time 0, no "
			"record ends before exit\n");
	if (gpurx_ipfix_has_udp(fx->ipfix)) {
		if (a->opt.ipfix_rate != 0)
			printf("flow export: over UDP at most %" PRIu64
				" records/s (--ipfix-rate)\n",
				a->opt.ipfix_rate);
		else
			printf("flow export: over UDP unpaced (--ipfix-rate "
				"0)\n");
	}
	return 0;
}

/* --- The exporter thread ------------------------------------------------ */

/*
 * The time flows end by (see flow_export.h) in part p's table; p NULL:
 * in every table, at exit. A GPU's table goes by its own queues' time
 * alone: another GPU's queues ahead of them (files replayed on each)
 * would end its flows before their next packets came.
 */
static uint64_t
flow_now(const struct gpurx_app *a, const struct fx_part *p)
{
	uint64_t now = 0;

	switch (a->opt.ts_source) {
	case GPURX_TS_RX:
		return gpuapp_tsc_ns(&a->clk, rte_get_tsc_cycles());
	case GPURX_TS_NONE:
		return 0;
	default:
		for (uint16_t q = 0; q < a->nq; q++) {
			uint64_t t;

			if (p != NULL && !a->opt.cpu && a->q_gpu[q] != p->k)
				continue;
			t = __atomic_load_n(&gpurx_flow_clocks[q].ns,
				__ATOMIC_ACQUIRE);
			if (t > now)
				now = t;
		}
		return now;
	}
}

/* The calling thread drives p's GPU: with several, it changes. */
static int
use_part(const struct gpurx_flow_export *fx, struct fx_part *p)
{
	if (fx->n_parts < 2 || !p->gpu_on)
		return 0;
	return gpurx_flow_gpu_attach(&p->gpu);
}

/*
 * Up to max records from the ring into messages. Returns how many. Records
 * in GPU memory come over first, as many as producers reserved (at most
 * DRAIN_BATCH): those published by then are taken, the others next time.
 */
static uint32_t
drain(struct gpurx_flow_export *fx, struct fx_part *p, uint32_t max)
{
	if (fx->ring_gpu) {
		if (p->pull_failed)
			return 0;
		if (!p->gpu_on || use_part(fx, p) != 0 ||
				gpurx_flow_gpu_pull(&p->gpu, p->ring, p->tail) != 0) {
			GPURX_LOG(ERR, "error: flow export: no more records "
				"from GPU %d\n", gpurx_gpu_id(fx->a, p->k));
			p->pull_failed = 1;
			return 0;
		}
	}
	return gpurx_ipfix_drain(fx->ipfix, p->ring, &p->tail, max);
}

static void
scan(struct gpurx_flow_export *fx, struct fx_part *p)
{
	struct gpurx_app *a = fx->a;
	uint64_t now = flow_now(a, p);

	if (a->opt.cpu) {
		/* The whole table once a second, a slice a tick. */
		uint32_t cap = a->ft->capacity;
		uint32_t step = RTE_MAX(cap / (1000 / GPURX_IPFIX_TICK_MS), 4096u);

		gpurx_flow_scan(a->ft, fx->scan_pos, fx->scan_pos + step, now);
		fx->scan_pos = fx->scan_pos + step >= cap ? 0 :
			fx->scan_pos + step;
		return;
	}
	if (!p->gpu_on || p->gpu_failed)
		return;
	if (use_part(fx, p) != 0 || gpurx_flow_gpu_tick(&p->gpu, now) < 0) {
		GPURX_LOG(ERR, "error: flow export: no more scans of GPU %d's "
			"flow table; its idle flows end only at exit\n",
			gpurx_gpu_id(a, p->k));
		p->gpu_failed = 1;
	}
}

/* A table's counters: live on the CPU, as of the last scan on the GPU. */
static const struct gpurx_flow_table *
counters(const struct gpurx_flow_export *fx, const struct fx_part *p)
{
	return fx->a->opt.cpu || !p->gpu_on ? fx->a->ft : &p->gpu.hdr;
}

/* full: the ring-full count as of now. */
static void
warn_ring_full(struct gpurx_flow_export *fx, uint64_t full)
{
	uint64_t now = rte_get_tsc_cycles();

	if (full == fx->ring_full_said || now < fx->next_ring_warn)
		return;
	GPURX_LOG(WARNING, "warning: flow export: the export ring (%" PRIu64
		" records) was full: %" PRIu64 " flow ends put off so far (the "
		"flows stay in the table; the collector or file is slower than "
		"flows end)\n", fx->a->ft->ring_limit, full);
	fx->ring_full_said = full;
	fx->next_ring_warn = now + WARN_EVERY_S * fx->hz;
}

static gpu_compat_thread_ret_t
exporter_main(void *arg)
{
	struct gpurx_flow_export *fx = arg;
	const uint64_t tick = GPURX_IPFIX_TICK_MS * fx->hz / 1000;
	uint64_t last_tick = 0;

	/* The CUDA runtime keeps the current device per thread: one GPU's
	 * once, several before each one's work (use_part()). */
	if (fx->n_parts == 1 && fx->part[0].gpu_on &&
			gpurx_flow_gpu_attach(&fx->part[0].gpu) != 0)
		fx->part[0].gpu_failed = 1;
	while (!fx->stop) {
		uint64_t t = rte_get_tsc_cycles();
		uint32_t n = 0;

		for (uint16_t k = 0; k < fx->n_parts; k++)
			n += drain(fx, &fx->part[k], DRAIN_BATCH);
		if (t - last_tick >= tick) {
			uint64_t overflow = 0, full = 0;

			last_tick = t;
			for (uint16_t k = 0; k < fx->n_parts; k++) {
				const struct fx_part *p = &fx->part[k];

				scan(fx, &fx->part[k]);
				overflow += __atomic_load_n(
					&counters(fx, p)->overflow_pkts,
					__ATOMIC_RELAXED);
				full += __atomic_load_n(&counters(fx, p)->ring_full,
					__ATOMIC_RELAXED);
			}
			/* Relaxed: a whole value for the telemetry's thread,
			 * which orders nothing by it. */
			__atomic_store_n(&fx->ring_full, full, __ATOMIC_RELAXED);
			/* For the statistics record the tick may send. */
			gpurx_ipfix_set_meter_counts(fx->ipfix, overflow, 0);
			/* Records wait at most a tick in a message. */
			gpurx_ipfix_tick(fx->ipfix);
			warn_ring_full(fx, full);
		}
		if (n == 0)
			rte_delay_us_sleep(1000);
	}
	return 0;
}

int
gpurx_flow_export_start(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;
	int rc;

	if (fx == NULL)
		return 0;
	for (uint16_t k = 0; k < fx->n_parts && !a->opt.cpu; k++) {
		struct fx_part *p = &fx->part[k];
		struct gpurx_flow_table hdr = *a->ft;

		if (gpurx_flow_gpu_queue_ports(a, k, &hdr) != 0 ||
				bind_ring(a, &hdr, p, a->ft->ring_limit) != 0 ||
				gpurx_flow_gpu_open(a, k, &hdr, &p->gpu) != 0)
			return -1;
		p->gpu_on = 1;
	}
	/* Connect a TCP collector before traffic, so the first records do
	 * not wait a retry; not there yet is not an error. */
	gpurx_ipfix_connect(fx->ipfix);
	/* A control thread: on the CPUs no lcore runs on, where there are
	 * any, so that the RX lcores keep theirs. */
	rc = gpu_compat_ctrl_thread_create(&fx->thread, "gpurx-export",
		exporter_main, fx);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: flow export thread: %s\n", strerror(-rc));
		return -1;
	}
	fx->thread_on = 1;
	return 0;
}

void
gpurx_flow_export_quiesce(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	if (fx->thread_on) {
		int rc;

		fx->stop = 1;
		rc = gpu_compat_thread_join(fx->thread);
		if (rc != 0)
			GPURX_LOG(ERR, "error: joining the flow export thread: %s\n",
				strerror(-rc));
		fx->thread_on = 0;
	}
	for (uint16_t k = 0; k < fx->n_parts; k++) {
		struct fx_part *p = &fx->part[k];

		if (p->gpu_on && gpurx_flow_gpu_close(&p->gpu) != 0)
			p->gpu_stuck = 1;
	}
}

/* Part p's table as it ended: the host table with --cpu, else the GPU's
 * copy back (NULL: the GPU failed before). */
static const struct gpurx_flow_table *
final_table(struct gpurx_flow_export *fx, const struct fx_part *p)
{
	return fx->a->opt.cpu ? fx->a->ft : gpurx_flow_gpu_table(fx->a, p->k);
}

/* Part p's last records: what its ring holds, then every flow still live
 * in its table, ending at now. 0 or -1 (said why). */
static int
finish_part(struct gpurx_flow_export *fx, struct fx_part *p, uint64_t now)
{
	const struct gpurx_flow_table *ft;
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_rec *recs, one;
	uint32_t pos = 0, cap;
	uint64_t head;
	int rc = 0;

	/* A scan the persistent kernel kept from starting ran when it quit,
	 * after the table was copied back: take the table again. */
	if (p->gpu_stuck && gpurx_flow_gpu_settle(fx->a, &p->gpu) != 0)
		rc = -1;
	ft = final_table(fx, p);
	if (ft == NULL) {
		GPURX_LOG(ERR, "error: flow export: GPU %d's flow table did not "
			"come back: its flows still live and the records left in "
			"its ring are lost\n", gpurx_gpu_id(fx->a, p->k));
		return -1;
	}
	/* Every producer is done: what was reserved is written, unless the
	 * GPU died holding it (in GPU memory: each drain copies it over). */
	head = ft->ring_head;
	while (p->tail < head) {
		if (drain(fx, p, DRAIN_BATCH) == 0) {
			p->ring_lost = head - p->tail;
			GPURX_LOG(ERR, "error: flow export: %" PRIu64 " flow "
				"records reserved in the ring were never written "
				"(the GPU stopped)\n", p->ring_lost);
			rc = -1;
			break;
		}
	}
	/* Then every flow still live, in batches, so that the encoder
	 * threads take them (10 M flows took 1.5 s on the one thread);
	 * one at a time if a batch's memory cannot be had. */
	recs = malloc(FINAL_BATCH * sizeof(*recs));
	cap = recs != NULL ? FINAL_BATCH : 1;
	if (recs == NULL)
		recs = &one;
	for (;;) {
		uint32_t n = 0;

		while (n < cap && (e = gpurx_flow_table_next(ft, &pos)) != NULL)
			gpurx_flow_final_rec(ft, e, now, &recs[n++]);
		if (n == 0)
			break;
		gpurx_ipfix_add_many(fx->ipfix, recs, n);
	}
	if (recs != &one)
		free(recs);
	return rc;
}

int
gpurx_flow_export_finish(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;
	/* Every packet is in: the last time of them all, as one table of
	 * every queue's flows would end them. */
	uint64_t now, overflow = 0, full = 0, lost = 0, started = 0;
	int rc = 0;

	if (fx == NULL)
		return 0;
	now = flow_now(a, NULL);
	for (uint16_t k = 0; k < fx->n_parts; k++) {
		struct fx_part *p = &fx->part[k];
		const struct gpurx_flow_table *ft;

		if (finish_part(fx, p, now) != 0)
			rc = -1;
		ft = final_table(fx, p);
		lost += p->ring_lost;
		if (ft == NULL)
			continue;
		overflow += ft->overflow_pkts;
		full += ft->ring_full;
		started += ft->n_flows;
	}
	gpurx_ipfix_set_meter_counts(fx->ipfix, overflow, lost);
	if (gpurx_ipfix_close(fx->ipfix) != 0)
		rc = -1;
	/* Relaxed: whole values for the telemetry's thread. */
	__atomic_store_n(&fx->ring_full, full, __ATOMIC_RELAXED);
	__atomic_store_n(&fx->ring_lost, lost, __ATOMIC_RELAXED);
	fx->started = started;
	/* The tables' final counters (the GPUs' copied back): a run shorter
	 * than the exporter's tick still hears of a full ring, whatever the
	 * warning's rate limit. */
	fx->next_ring_warn = 0;
	warn_ring_full(fx, full);
	return rc;
}

/* --- Reports -------------------------------------------------------------- */

void
gpurx_flow_export_print(FILE *f, const struct gpurx_app *a)
{
	const struct gpurx_flow_export *fx = a->fx;
	const struct gpurx_ipfix_counts *c;

	if (fx == NULL)
		return;
	c = gpurx_ipfix_counts(fx->ipfix);
	fprintf(f, "flow export:   %" PRIu64 " records, %" PRIu64 " packets, %"
		PRIu64 " bytes; ended idle %" PRIu64 ", active %" PRIu64
		", FIN/RST %" PRIu64 ", at exit %" PRIu64 ", table full %" PRIu64
		"; ring full %" PRIu64 ", ring lost %" PRIu64 "\n", c->records,
		c->packets, c->bytes, c->by_reason[GPURX_FLOW_END_IDLE],
		c->by_reason[GPURX_FLOW_END_ACTIVE],
		c->by_reason[GPURX_FLOW_END_EOF],
		c->by_reason[GPURX_FLOW_END_FORCED],
		c->by_reason[GPURX_FLOW_END_PRESSURE], fx->ring_full,
		fx->ring_lost);
	gpurx_ipfix_print_sinks(f, fx->ipfix);
	/* A datagram a collector drops is not seen here: say so, rather
	 * than let "0 records lost" read as delivered. */
	if (gpurx_ipfix_has_udp(fx->ipfix))
		fprintf(f, "               UDP: records lost on the way or in "
			"the collector show only in its sequence check (nfdump "
			"-I: \"Sequence failures\")\n");
}

/* The run whose export the telemetry thread reports. */
static const struct gpurx_app *tel_app;

/*
 * /gpu_rx/flow_export: the summary's export counters while the run goes
 * on. The writer thread and the lcores update them as aligned 64-bit
 * words; relaxed atomic loads read whole values, however stale.
 */
static int
tel_flow_export(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	static const struct {
		const char *name;
		int reason;
	} ended[] = {
		{ "ended_idle", GPURX_FLOW_END_IDLE },
		{ "ended_active", GPURX_FLOW_END_ACTIVE },
		{ "ended_fin_rst", GPURX_FLOW_END_EOF },
		{ "ended_at_exit", GPURX_FLOW_END_FORCED },
		{ "ended_table_full", GPURX_FLOW_END_PRESSURE },
	};
	const struct gpurx_ipfix_counts *c;

	if (tel_app == NULL || tel_app->fx == NULL)
		return -EINVAL;
	c = gpurx_ipfix_counts(tel_app->fx->ipfix);
	rte_tel_data_start_dict(d);
	gpu_compat_tel_dict_uint(d, "records",
		__atomic_load_n(&c->records, __ATOMIC_RELAXED));
	gpu_compat_tel_dict_uint(d, "packets",
		__atomic_load_n(&c->packets, __ATOMIC_RELAXED));
	gpu_compat_tel_dict_uint(d, "bytes",
		__atomic_load_n(&c->bytes, __ATOMIC_RELAXED));
	for (unsigned int i = 0; i < RTE_DIM(ended); i++)
		gpu_compat_tel_dict_uint(d, ended[i].name, __atomic_load_n(
			&c->by_reason[ended[i].reason], __ATOMIC_RELAXED));
	gpu_compat_tel_dict_uint(d, "ring_full",
		__atomic_load_n(&tel_app->fx->ring_full, __ATOMIC_RELAXED));
	gpu_compat_tel_dict_uint(d, "ring_lost",
		__atomic_load_n(&tel_app->fx->ring_lost, __ATOMIC_RELAXED));
	return 0;
}

int
gpurx_flow_export_telemetry_register(const struct gpurx_app *a)
{
	if (a->fx == NULL)
		return 0;
	tel_app = a;
	return rte_telemetry_register_cmd("/gpu_rx/flow_export",
		tel_flow_export, "dpdk-gpu-rx flow export counters: records, "
		"packets and bytes exported, why flows ended, ring full and "
		"lost. No parameters");
}

void
gpurx_flow_export_json(struct gpuapp_json *j, const struct gpurx_app *a)
{
	const struct gpurx_flow_export *fx = a->fx;
	const struct gpurx_ipfix_counts *c;

	if (fx == NULL)
		return;
	c = gpurx_ipfix_counts(fx->ipfix);
	gpuapp_json_obj_begin(j, "flow_export");
	gpuapp_json_u64(j, "records", c->records);
	gpuapp_json_u64(j, "packets", c->packets);
	gpuapp_json_u64(j, "bytes", c->bytes);
	gpuapp_json_obj_begin(j, "ended");
	gpuapp_json_u64(j, "idle", c->by_reason[GPURX_FLOW_END_IDLE]);
	gpuapp_json_u64(j, "active", c->by_reason[GPURX_FLOW_END_ACTIVE]);
	gpuapp_json_u64(j, "eof", c->by_reason[GPURX_FLOW_END_EOF]);
	gpuapp_json_u64(j, "exit", c->by_reason[GPURX_FLOW_END_FORCED]);
	gpuapp_json_u64(j, "pressure", c->by_reason[GPURX_FLOW_END_PRESSURE]);
	gpuapp_json_obj_end(j);
	gpuapp_json_u64(j, "ring_full", fx->ring_full);
	gpuapp_json_u64(j, "ring_lost", fx->ring_lost);
	gpuapp_json_u64(j, "started", fx->started);
	gpuapp_json_arr_begin(j, "to");
	for (unsigned int i = 0; i < gpurx_ipfix_n_sinks(fx->ipfix); i++) {
		uint64_t messages, lost;
		const char *name = gpurx_ipfix_sink(fx->ipfix, i, &messages,
			&lost);

		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_str(j, "sink", name);
		gpuapp_json_u64(j, "messages", messages);
		gpuapp_json_u64(j, "lost_records", lost);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
}

void
gpurx_flow_export_free(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	gpurx_flow_export_quiesce(a);
	for (uint16_t k = 0; k < fx->n_parts; k++)
		if (fx->part[k].gpu_on)
			gpurx_flow_gpu_free(&fx->part[k].gpu);
	gpurx_ipfix_free(fx->ipfix);
	if (!fx->ring_gpu)
		rte_free(fx->part[0].ring);
	if (a->ft != NULL)
		gpurx_flow_table_set_expiry(a->ft, NULL, 0, 0, 0);
	free(fx);
	a->fx = NULL;
}
