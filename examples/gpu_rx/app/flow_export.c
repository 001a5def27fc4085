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
#include "gpuapp_json.h"
#include "ipfix_writer.h"
#include "log.h"

struct gpurx_flow_clock gpurx_flow_clocks[GPURX_MAX_QUEUES];

#define DRAIN_BATCH 4096
#define WARN_EVERY_S 10

struct gpurx_flow_export {
	struct gpurx_app *a;
	struct gpurx_flow_ring *ring;
	int ring_gpu;		/* GPU memory registry owns the ring */
	uint64_t tail;		/* records taken from the ring */
	struct gpurx_ipfix *ipfix;
	/* The thread. */
	gpu_compat_thread_t thread;
	int thread_on;
	volatile int stop;
	struct gpurx_flow_gpu gpu;
	int gpu_on, gpu_failed, gpu_stuck;
	int pull_failed;	/* the ring's records no longer come over */
	uint32_t scan_pos;
	uint64_t hz;
	uint64_t ring_lost;	/* reserved but never written (a GPU fault) */
	uint64_t ring_full_said, next_ring_warn;
};

/* --- Set-up ------------------------------------------------------------- */

int
gpurx_flow_export_init(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx;
	uint64_t rsize, slack = 0;
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
	 * per port. */
	fx->ipfix = gpurx_ipfix_open(a->opt.ipfix, a->opt.ipfix_file,
		a->opt.ipfix_domain + a->port, a->port);
	if (fx->ipfix == NULL)
		return -1;
	gpurx_ipfix_set_rate(fx->ipfix, a->opt.ipfix_rate);
	/* The ring, for rsize records waiting: its records in GPU memory in
	 * GPU modes (the GPU publishes them at GPU scope; drain() copies
	 * them over), host memory with --cpu. */
	if (!a->opt.cpu) {
		if (gpurx_flow_gpu_ring(a, rsize, RTE_MIN(rsize,
				(uint64_t)DRAIN_BATCH), &fx->ring, &slack) != 0)
			return -1;
		fx->ring_gpu = 1;
	} else {
		mem = rte_zmalloc("gpurx_flow_ring", rbytes, 64);
		if (mem == NULL) {
			GPURX_LOG(ERR, "error: flow export ring: no memory for "
				"%" PRIu64 " records\n", rsize);
			return -1;
		}
		fx->ring = gpurx_flow_ring_init(mem, rsize);
	}
	gpurx_flow_table_set_expiry(a->ft, fx->ring, a->opt.flow_idle_ns,
		a->opt.flow_active_ns, a->opt.flow_linger_ns);
	if (slack != 0 && gpurx_flow_table_set_ring_slack(a->ft, rsize,
			slack) != 0) {
		GPURX_LOG(ERR, "error: flow export ring: %" PRIu64 " records "
			"do not hold %" PRIu64 " and a slack of %" PRIu64 "\n",
			fx->ring->size, rsize, slack);
		return -1;
	}

	printf("flow export: %s, observation domain %u; records end %.3g s "
		"idle, %.3g s after their first packet%s, %.3g s after a FIN/RST; "
		"ring of %" PRIu64 " records\n", gpurx_ipfix_describe(fx->ipfix),
		a->opt.ipfix_domain + a->port, a->opt.flow_idle_ns / 1e9,
		a->opt.flow_active_ns / 1e9,
		a->opt.flow_active_ns ? "" : " (never)",
		a->opt.flow_linger_ns / 1e9, rsize);
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

/* The time flows end by: see flow_export.h. */
static uint64_t
flow_now(const struct gpurx_app *a)
{
	uint64_t now = 0;

	switch (a->opt.ts_source) {
	case GPURX_TS_RX:
		return gpuapp_tsc_ns(&a->clk, rte_get_tsc_cycles());
	case GPURX_TS_NONE:
		return 0;
	default:
		for (uint16_t q = 0; q < a->nq; q++) {
			uint64_t t = __atomic_load_n(&gpurx_flow_clocks[q].ns,
				__ATOMIC_ACQUIRE);

			if (t > now)
				now = t;
		}
		return now;
	}
}

/*
 * Up to max records from the ring into messages. Returns how many. Records
 * in GPU memory come over first, as many as producers reserved (at most
 * DRAIN_BATCH): those published by then are taken, the others next time.
 */
static uint32_t
drain(struct gpurx_flow_export *fx, uint32_t max)
{
	if (fx->ring_gpu) {
		if (fx->pull_failed)
			return 0;
		if (!fx->gpu_on || gpurx_flow_gpu_pull(&fx->gpu, fx->ring,
				fx->tail) != 0) {
			GPURX_LOG(ERR, "error: flow export: no more records "
				"from the GPU\n");
			fx->pull_failed = 1;
			return 0;
		}
	}
	return gpurx_ipfix_drain(fx->ipfix, fx->ring, &fx->tail, max);
}

static void
scan(struct gpurx_flow_export *fx)
{
	struct gpurx_app *a = fx->a;
	uint64_t now = flow_now(a);

	if (a->opt.cpu) {
		/* The whole table once a second, a slice a tick. */
		uint32_t cap = a->ft->capacity;
		uint32_t step = RTE_MAX(cap / (1000 / GPURX_IPFIX_TICK_MS), 4096u);

		gpurx_flow_scan(a->ft, fx->scan_pos, fx->scan_pos + step, now);
		fx->scan_pos = fx->scan_pos + step >= cap ? 0 :
			fx->scan_pos + step;
		return;
	}
	if (!fx->gpu_on || fx->gpu_failed)
		return;
	if (gpurx_flow_gpu_tick(&fx->gpu, now) < 0) {
		GPURX_LOG(ERR, "error: flow export: no more scans of the flow "
			"table; idle flows end only at exit\n");
		fx->gpu_failed = 1;
	}
}

/* The table's counters: live on the CPU, as of the last scan on the GPU. */
static const struct gpurx_flow_table *
counters(const struct gpurx_flow_export *fx)
{
	return fx->a->opt.cpu || !fx->gpu_on ? fx->a->ft : &fx->gpu.hdr;
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

	/* The CUDA runtime keeps the current device per thread. */
	if (fx->gpu_on && gpurx_flow_gpu_attach(&fx->gpu) != 0)
		fx->gpu_failed = 1;
	while (!fx->stop) {
		uint32_t n = drain(fx, DRAIN_BATCH);
		uint64_t t = rte_get_tsc_cycles();

		if (t - last_tick >= tick) {
			last_tick = t;
			scan(fx);
			/* For the statistics record the tick may send. */
			gpurx_ipfix_set_meter_counts(fx->ipfix,
				__atomic_load_n(&counters(fx)->overflow_pkts,
					__ATOMIC_RELAXED), 0);
			/* Records wait at most a tick in a message. */
			gpurx_ipfix_tick(fx->ipfix);
			warn_ring_full(fx, __atomic_load_n(
				&counters(fx)->ring_full, __ATOMIC_RELAXED));
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
	if (!a->opt.cpu) {
		if (gpurx_flow_gpu_open(a, &fx->gpu) != 0)
			return -1;
		fx->gpu_on = 1;
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
	if (fx->gpu_on && gpurx_flow_gpu_close(&fx->gpu) != 0)
		fx->gpu_stuck = 1;
}

int
gpurx_flow_export_finish(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;
	const struct gpurx_flow_entry *e;
	uint64_t now, head;
	uint32_t pos = 0;
	int rc = 0;

	if (fx == NULL)
		return 0;
	/* A scan the persistent kernel kept from starting ran when it quit,
	 * after the table was copied back: take the table again. */
	if (fx->gpu_stuck && gpurx_flow_gpu_settle(a, &fx->gpu) != 0)
		rc = -1;
	now = flow_now(a);
	/* Every producer is done: what was reserved is written, unless the
	 * GPU died holding it (in GPU memory: each drain copies it over). */
	head = a->ft->ring_head;
	while (fx->tail < head) {
		if (drain(fx, DRAIN_BATCH) == 0) {
			fx->ring_lost = head - fx->tail;
			GPURX_LOG(ERR, "error: flow export: %" PRIu64 " flow "
				"records reserved in the ring were never written "
				"(the GPU stopped)\n", fx->ring_lost);
			rc = -1;
			break;
		}
	}
	/* Then every flow still live. */
	while ((e = gpurx_flow_table_next(a->ft, &pos)) != NULL) {
		struct gpurx_flow_rec r;

		gpurx_flow_final_rec(a->ft, e, now, &r);
		gpurx_ipfix_add(fx->ipfix, &r);
	}
	gpurx_ipfix_set_meter_counts(fx->ipfix, a->ft->overflow_pkts,
		fx->ring_lost);
	if (gpurx_ipfix_close(fx->ipfix) != 0)
		rc = -1;
	/* The table's final counters (the GPU's copied back): a run shorter
	 * than the exporter's tick still hears of a full ring, whatever the
	 * warning's rate limit. */
	fx->next_ring_warn = 0;
	warn_ring_full(fx, a->ft->ring_full);
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
		c->by_reason[GPURX_FLOW_END_PRESSURE], a->ft->ring_full,
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
		__atomic_load_n(&tel_app->ft->ring_full, __ATOMIC_RELAXED));
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
	gpuapp_json_u64(j, "ring_full", a->ft->ring_full);
	gpuapp_json_u64(j, "ring_lost", fx->ring_lost);
	gpuapp_json_u64(j, "started", a->ft->n_flows);
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
	if (fx->gpu_on)
		gpurx_flow_gpu_free(&fx->gpu);
	gpurx_ipfix_free(fx->ipfix);
	if (!fx->ring_gpu)
		rte_free(fx->ring);
	if (a->ft != NULL)
		gpurx_flow_table_set_expiry(a->ft, NULL, 0, 0, 0);
	free(fx);
	a->fx = NULL;
}
