/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx: capture packets from a DPDK port, filter them with a
 * tcpdump expression and count flows, on the GPU (persistent kernel fed
 * through gpudev communication lists) or on the CPU (--cpu).
 */

#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/dlt.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "app.h"
#include "dpdk_compat.h"
#include "flow_export.h"
#include "gpu_path.h"
#include "gpuapp_clock.h"
#include "gpuapp_eal.h"
#include "gpuapp_json.h"
#include "stamps.h"
#include "log.h"

struct gpurx_app gpurx_app;

static volatile sig_atomic_t quit_signal;

static void
on_signal(int sig)
{
	quit_signal = sig;
}

static int
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* SIGPIPE: the reader of --write - went away; the run ends as on
	 * SIGINT, every mbuf back (the failed write is counted). */
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
			sigaction(SIGTERM, &sa, NULL) != 0 ||
			sigaction(SIGPIPE, &sa, NULL) != 0)
		return -1;
	/* A capture growing past RLIMIT_FSIZE: its write fails with EFBIG,
	 * counted as capture drops, rather than the signal killing the run. */
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGXFSZ, &sa, NULL) != 0)
		return -1;
	return 0;
}

/*
 * Whether the program's options (after EAL's "--") write the capture to
 * standard output: -w -, -w-, --write -, --write=-. Read before EAL starts;
 * the option parser then takes them as usual.
 */
static int
writes_stdout(int argc, char **argv)
{
	int end;

	for (int i = gpuapp_prog_args(argc, argv, &end); i < end; i++) {
		const char *o = argv[i];

		if (strcmp(o, "-w-") == 0 || strcmp(o, "--write=-") == 0)
			return 1;
		if ((strcmp(o, "-w") == 0 || strcmp(o, "--write") == 0) &&
				i + 1 < end) {
			if (strcmp(argv[i + 1], "-") == 0)
				return 1;
			i++;
		}
	}
	return 0;
}

static void
totals(struct gpurx_totals *t)
{
	struct gpurx_app *a = &gpurx_app;
	struct rte_eth_stats es;

	memset(t, 0, sizeof(*t));
	gpurx_stats_sum(a->qs, a->nq, &t->q);
	for (uint16_t i = 0; i < a->n_ports; i++)
		if (rte_eth_stats_get(a->ports[i].id, &es) == 0) {
			t->port_imissed += es.imissed;
			t->port_ierrors += es.ierrors;
			t->port_nombuf += es.rx_nombuf;
		}
}

/*
 * Part i of n of the line under the per-second one: one GPU's or port's
 * rates over dt s (rx and matched packets in it) and one counter.
 */
static void
share_line(FILE *f, unsigned int i, unsigned int n, const char *what, int id,
		double dt, uint64_t rx, uint64_t matched, const char *cname,
		uint64_t c)
{
	fprintf(f, "%s %s %d rx %.0f pps matched %.0f pps %s %" PRIu64 "%s",
		i == 0 ? "          " : " |", what, id, dt > 0 ? rx / dt : 0.0,
		dt > 0 ? matched / dt : 0.0, cname, c, i + 1 == n ? "\n" : "");
}

/* Several ports: what each received, matched and captured, and its own
 * counters of what it could not deliver. */
struct port_figures {
	uint64_t rx_pkts, rx_bytes, matched, captured;
	uint64_t imissed, ierrors, nombuf;
};

/* A counter of a port's or a GPU's figures, as the JSON and the
 * telemetry name it, and where it lies in its struct. */
struct figure_counter {
	const char *json;
	const char *tel;
	size_t off;
};

static uint64_t
figure_get(const void *fig, const struct figure_counter *c)
{
	return *(const uint64_t *)((const char *)fig + c->off);
}

/* Each counter of tab, of fig, into j's open object. */
static void
figures_json(struct gpuapp_json *j, const struct figure_counter *tab,
		unsigned int n, const void *fig)
{
	for (unsigned int i = 0; i < n; i++)
		gpuapp_json_u64(j, tab[i].json, figure_get(fig, &tab[i]));
}

static const struct figure_counter port_counters[] = {
	{ "rx_packets", "rx_packets_by_port",
		offsetof(struct port_figures, rx_pkts) },
	{ "rx_bytes", "rx_bytes_by_port",
		offsetof(struct port_figures, rx_bytes) },
	{ "matched", "matched_by_port", offsetof(struct port_figures, matched) },
	{ "captured", "captured_by_port",
		offsetof(struct port_figures, captured) },
	{ "imissed", "imissed_by_port", offsetof(struct port_figures, imissed) },
	{ "ierrors", "ierrors_by_port", offsetof(struct port_figures, ierrors) },
	{ "rx_nombuf", "rx_nombuf_by_port",
		offsetof(struct port_figures, nombuf) },
};

/* Each port's figures into f[0 .. a->n_ports). */
static void
port_figures(const struct gpurx_app *a, struct port_figures *f)
{
	memset(f, 0, a->n_ports * sizeof(*f));
	for (uint16_t q = 0; q < a->nq; q++) {
		struct port_figures *p = &f[q / a->opt.queues];
		struct gpurx_qstats s;

		gpurx_stats_sum(&a->qs[q], 1, &s);
		p->rx_pkts += s.rx_pkts;
		p->rx_bytes += s.rx_bytes;
		p->matched += s.matched;
		p->captured += s.captured;
	}
	for (uint16_t i = 0; i < a->n_ports; i++) {
		const struct gpurx_port *p = &a->ports[i];
		struct rte_eth_stats es;

		/* Acquire: pairs with ports_stats_final()'s release, so the
		 * end_ counters read are those stored before the flag. */
		if (__atomic_load_n(&a->stats_final, __ATOMIC_ACQUIRE)) {
			f[i].imissed = p->end_imissed;
			f[i].ierrors = p->end_ierrors;
			f[i].nombuf = p->end_nombuf;
		} else if (rte_eth_stats_get(p->id, &es) == 0) {
			f[i].imissed = es.imissed;
			f[i].ierrors = es.ierrors;
			f[i].nombuf = es.rx_nombuf;
		}
	}
}

/* Before the ports close: their counters, for the summary. */
static void
ports_stats_final(struct gpurx_app *a)
{
	for (uint16_t i = 0; i < a->n_ports; i++) {
		struct gpurx_port *p = &a->ports[i];
		struct rte_eth_stats es;

		if (rte_eth_stats_get(p->id, &es) != 0)
			continue;
		p->end_imissed = es.imissed;
		p->end_ierrors = es.ierrors;
		p->end_nombuf = es.rx_nombuf;
	}
	/* Release: the telemetry's thread that sees the flag sees the
	 * end_ counters stored above. */
	__atomic_store_n(&a->stats_final, 1, __ATOMIC_RELEASE);
}

/* Under the per-second line: each port's share of it. */
static void
port_stats_line(FILE *f, const struct gpurx_app *a,
		struct port_figures *prev, double dt)
{
	struct port_figures now[GPURX_MAX_PORTS];

	port_figures(a, now);
	for (uint16_t i = 0; i < a->n_ports; i++) {
		share_line(f, i, a->n_ports, "port", a->ports[i].id, dt,
			now[i].rx_pkts - prev[i].rx_pkts,
			now[i].matched - prev[i].matched, "imissed",
			now[i].imissed);
		prev[i] = now[i];
	}
}

static void
port_summary(FILE *f, const struct gpurx_app *a)
{
	struct port_figures p[GPURX_MAX_PORTS];
	const uint16_t nq = a->opt.queues;

	port_figures(a, p);
	for (uint16_t i = 0; i < a->n_ports; i++) {
		char qs[32];

		if (nq > 1)
			snprintf(qs, sizeof(qs), "s %u-%u", i * nq, i * nq + nq - 1);
		else
			snprintf(qs, sizeof(qs), " %u", i);
		fprintf(f, "port %u (%s): queue%s: received %" PRIu64
			" packets, %" PRIu64 " bytes; matched %" PRIu64
			"; captured %" PRIu64 "; imissed %" PRIu64 "; ierrors %"
			PRIu64 "; rx_nombuf %" PRIu64 "\n", a->ports[i].id,
			a->ports[i].driver, qs, p[i].rx_pkts, p[i].rx_bytes,
			p[i].matched, p[i].captured, p[i].imissed, p[i].ierrors,
			p[i].nombuf);
	}
}

static void
port_json(struct gpuapp_json *j, const struct gpurx_app *a)
{
	struct port_figures p[GPURX_MAX_PORTS];

	port_figures(a, p);
	gpuapp_json_arr_begin(j, "per_port");
	for (uint16_t i = 0; i < a->n_ports; i++) {
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_u64(j, "port", a->ports[i].id);
		gpuapp_json_arr_begin(j, "queues");
		for (uint16_t q = 0; q < a->opt.queues; q++)
			gpuapp_json_u64(j, NULL, i * a->opt.queues + q);
		gpuapp_json_arr_end(j);
		figures_json(j, port_counters, RTE_DIM(port_counters), &p[i]);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
}

/* Several GPUs: what the queues of one received, matched and captured. */
struct gpu_figures {
	uint64_t rx_pkts, rx_bytes, matched, captured, cap_bytes;
	uint64_t drop_ring, gpu_lost;
	uint16_t nq;
	uint16_t queues[GPURX_MAX_QUEUES];
};

/* Each GPU's figures into f[0 .. a->n_gpus), in one walk of the queues;
 * reads only the app's own arrays (the telemetry's thread calls it). */
static void
gpu_figures(const struct gpurx_app *a, uint16_t n_gpus, struct gpu_figures *f)
{
	memset(f, 0, n_gpus * sizeof(*f));
	for (uint16_t q = 0; q < a->nq; q++) {
		struct gpu_figures *g = &f[a->q_gpu[q]];
		struct gpurx_qstats s;

		if (a->q_gpu[q] >= n_gpus)
			continue;
		gpurx_stats_sum(&a->qs[q], 1, &s);
		g->rx_pkts += s.rx_pkts;
		g->rx_bytes += s.rx_bytes;
		g->matched += s.matched;
		g->captured += s.captured;
		g->cap_bytes += s.cap_bytes;
		g->drop_ring += s.drop_ring;
		g->gpu_lost += s.gpu_lost;
		g->queues[g->nq++] = q;
	}
}

/* The queues of f, "0,2,...", into buf. */
static const char *
gpu_queues(const struct gpu_figures *f, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (uint16_t i = 0; i < f->nq && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%u", i > 0 ? "," : "",
			f->queues[i]);
	return buf;
}

/* The per-GPU counters as the JSON's per_gpu and the telemetry name
 * them: one list for both. */
static const struct figure_counter gpu_counters[] = {
	{ "rx_packets", "rx_packets_by_gpu",
		offsetof(struct gpu_figures, rx_pkts) },
	{ "rx_bytes", "rx_bytes_by_gpu", offsetof(struct gpu_figures, rx_bytes) },
	{ "matched", "matched_by_gpu", offsetof(struct gpu_figures, matched) },
	{ "captured", "captured_by_gpu", offsetof(struct gpu_figures, captured) },
	{ "captured_bytes", "captured_bytes_by_gpu",
		offsetof(struct gpu_figures, cap_bytes) },
	{ "drop_ring", "drop_ring_full_by_gpu",
		offsetof(struct gpu_figures, drop_ring) },
	{ "gpu_lost", "gpu_lost_by_gpu", offsetof(struct gpu_figures, gpu_lost) },
};

/* Under the per-second line: each GPU's share of it. */
static void
gpu_stats_line(FILE *f, const struct gpurx_app *a, struct gpu_figures *prev,
		double dt)
{
	struct gpu_figures now[GPURX_MAX_GPUS];

	gpu_figures(a, a->n_gpus, now);
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		share_line(f, k, a->n_gpus, "GPU", gpurx_gpu_id(a, k), dt,
			now[k].rx_pkts - prev[k].rx_pkts,
			now[k].matched - prev[k].matched, "ring",
			now[k].drop_ring);
		prev[k] = now[k];
	}
}

static void
gpu_summary(FILE *f, const struct gpurx_app *a)
{
	struct gpu_figures g[GPURX_MAX_GPUS];

	gpu_figures(a, a->n_gpus, g);
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		char qs[GPURX_MAX_QUEUES * 4];

		fprintf(f, "GPU %d:%*squeue%s %s: received %" PRIu64 " packets, %"
			PRIu64 " bytes; matched %" PRIu64 "; captured %" PRIu64
			"; ring full %" PRIu64 "; lost on the GPU %" PRIu64 "\n",
			gpurx_gpu_id(a, k), gpurx_gpu_id(a, k) < 10 ? 8 : 7, "",
			g[k].nq > 1 ? "s" : "", gpu_queues(&g[k], qs, sizeof(qs)),
			g[k].rx_pkts, g[k].rx_bytes, g[k].matched, g[k].captured,
			g[k].drop_ring, g[k].gpu_lost);
	}
}

static void
gpu_json(struct gpuapp_json *j, const struct gpurx_app *a)
{
	struct gpu_figures g[GPURX_MAX_GPUS];

	gpu_figures(a, a->n_gpus, g);
	gpuapp_json_arr_begin(j, "per_gpu");
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_u64(j, "gpu", (uint64_t)gpurx_gpu_id(a, k));
		gpuapp_json_arr_begin(j, "queues");
		for (uint16_t i = 0; i < g[k].nq; i++)
			gpuapp_json_u64(j, NULL, g[k].queues[i]);
		gpuapp_json_arr_end(j);
		figures_json(j, gpu_counters, RTE_DIM(gpu_counters), &g[k]);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
}

/*
 * /gpu_rx/stats with several GPUs: the GPUs' gpudev ids as the run
 * started (the telemetry's thread must not read a->gpus[], freed at the
 * end), and each figure of the JSON's per_gpu as a dict keyed by them.
 */
static int16_t tel_gpu_id[GPURX_MAX_GPUS];
static uint16_t tel_n_gpus;

/* One dict of d, name: each GPU's counter i, or its queues (i past the
 * counters). 0, or -1 out of memory. */
static int
tel_by_gpu(struct rte_tel_data *d, const struct gpu_figures *g,
		unsigned int i)
{
	struct rte_tel_data *by = rte_tel_data_alloc();

	if (by == NULL)
		return -1;
	rte_tel_data_start_dict(by);
	for (uint16_t k = 0; k < tel_n_gpus; k++) {
		char id[16], qs[GPURX_MAX_QUEUES * 4];

		snprintf(id, sizeof(id), "%d", tel_gpu_id[k]);
		if (i < RTE_DIM(gpu_counters))
			gpu_compat_tel_dict_uint(by, id,
				figure_get(&g[k], &gpu_counters[i]));
		else
			rte_tel_data_add_dict_string(by, id,
				gpu_queues(&g[k], qs, sizeof(qs)));
	}
	/* Freed with d once added; else here. */
	if (rte_tel_data_add_dict_container(d, i < RTE_DIM(gpu_counters) ?
			gpu_counters[i].tel : "queues_by_gpu", by, 0) != 0) {
		rte_tel_data_free(by);
		return -1;
	}
	return 0;
}

/* Each port's counters as a dict keyed by its ethdev id. */
static void
tel_ports(struct rte_tel_data *d)
{
	const struct gpurx_app *a = &gpurx_app;
	struct port_figures p[GPURX_MAX_PORTS];

	port_figures(a, p);
	for (unsigned int k = 0; k < RTE_DIM(port_counters); k++) {
		struct rte_tel_data *by = rte_tel_data_alloc();

		if (by == NULL)
			return;
		rte_tel_data_start_dict(by);
		for (uint16_t i = 0; i < a->n_ports; i++) {
			char id[16];

			snprintf(id, sizeof(id), "%u", a->ports[i].id);
			gpu_compat_tel_dict_uint(by, id,
				figure_get(&p[i], &port_counters[k]));
		}
		/* Freed with d once added; else here. */
		if (rte_tel_data_add_dict_container(d, port_counters[k].tel, by,
				0) != 0) {
			rte_tel_data_free(by);
			return;
		}
	}
}

static void
tel_gpus(struct rte_tel_data *d)
{
	struct gpu_figures g[GPURX_MAX_GPUS];

	if (tel_n_gpus > 1) {
		gpu_figures(&gpurx_app, tel_n_gpus, g);
		/* The counters, then the queues. */
		for (unsigned int i = 0; i <= RTE_DIM(gpu_counters); i++)
			if (tel_by_gpu(d, g, i) != 0)
				return;
	}
	if (gpurx_app.n_ports > 1)
		tel_ports(d);
}

static int
telemetry_register(struct gpurx_app *a)
{
	tel_n_gpus = a->n_gpus;
	for (uint16_t k = 0; k < a->n_gpus; k++)
		tel_gpu_id[k] = gpurx_gpu_id(a, k);
	return gpurx_telemetry_register(totals, a->n_gpus > 1 ||
		a->n_ports > 1 ? tel_gpus : NULL);
}

static const char *
mode_name(const struct gpurx_app *a)
{
	static char buf[64];

	if (a->opt.cpu)
		return "cpu";
	snprintf(buf, sizeof(buf), "gpu/%s%s", gpurx_mem_mode_str(a->mem),
		a->opt.launch_per_burst ? "/launch-per-burst" : "");
	return buf;
}

/* The first port that cannot DMA into GPU memory. */
static const struct gpurx_port *
first_sw_port(const struct gpurx_app *a)
{
	for (uint16_t i = 0; i < a->n_ports; i++)
		if (a->ports[i].sw_port)
			return &a->ports[i];
	return &a->ports[0];
}

/* Resolve --mem and say why (the user asked to be told). One mode for
 * every port: a software port among DMA-capable ones takes them all to
 * host memory, and says so. */
static int
choose_mem_mode(struct gpurx_app *a)
{
	const struct gpurx_port *sw = first_sw_port(a);

	a->mem = a->opt.mem;
	if (a->opt.cpu) {
		a->mem_why = "--cpu: packets processed on the CPU";
		return 0;
	}
	switch (a->mem) {
	case GPURX_MEM_GPU:
		if (a->sw_port) {
			GPURX_LOG(ERR, "error: --mem gpu: port %u (%s) is a software "
				"port and cannot DMA into GPU memory; use --mem "
				"host-mapped (or staged)\n", sw->id, sw->driver);
			return -1;
		}
		a->mem_why = "asked with --mem gpu";
		break;
	case GPURX_MEM_HOST_MAPPED:
		a->mem_why = "asked with --mem host-mapped";
		break;
	case GPURX_MEM_STAGED:
		a->mem_why = "asked with --mem staged";
		break;
	default:
		if (a->sw_port && a->n_ports > 1 && sw != &a->ports[0]) {
			static char why[128];

			snprintf(why, sizeof(why), "default: port %u is a "
				"software PMD, no GPUDirect RDMA: host memory for "
				"every port", sw->id);
			a->mem = GPURX_MEM_HOST_MAPPED;
			a->mem_why = why;
		} else if (a->sw_port) {
			a->mem = GPURX_MEM_HOST_MAPPED;
			a->mem_why = a->n_ports > 1 ? "default: a port is a "
				"software PMD, no GPUDirect RDMA" :
				"default: the port is a software PMD, no GPUDirect RDMA";
		} else {
			a->mem = GPURX_MEM_GPU;
			a->mem_why = a->n_ports > 1 ? "default: the ports are "
				"DMA-capable devices (GPUDirect RDMA)" :
				"default: the port is a DMA-capable device (GPUDirect RDMA)";
		}
		break;
	}
	return 0;
}

/*
 * --capture-writers: the threads run on the CPUs no EAL lcore has, so
 * that their write system calls take no RX lcore's time; where -l took
 * every CPU, on any CPU (a thread made here would otherwise inherit the
 * main lcore's one CPU). 0 or -1 with the reason in err.
 */
static int
start_capture_writers(struct gpurx_app *a, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	rte_cpuset_t all, free_cpus;
	unsigned int l, nfree;

	if (a->opt.capture_writers == 0)
		return 0;
	CPU_ZERO(&all);
	for (long i = 0; i < ncpu && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	free_cpus = all;
	RTE_LCORE_FOREACH(l) {
		rte_cpuset_t s = rte_lcore_cpuset(l);

		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &s))
				CPU_CLR(i, &free_cpus);
	}
	nfree = (unsigned int)CPU_COUNT(&free_cpus);
	if (gpurx_capture_start_writers(a->cap, a->opt.capture_writers,
			nfree != 0 ? &free_cpus : &all, err, errlen) != 0)
		return -1;
	printf("capture: %u writer thread(s), %s\n",
		RTE_MIN(a->opt.capture_writers, (unsigned int)a->nq),
		nfree != 0 ? "on the CPUs outside the EAL lcores" :
		"unpinned: every CPU is an EAL lcore's, so they take the RX "
		"lcores' time");
	return 0;
}

static int
launch_rx_lcores(struct gpurx_app *a)
{
	lcore_function_t *fn = a->opt.cpu ? gpurx_rx_cpu_lcore :
		gpurx_rx_gpu_lcore;
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);

	for (uint16_t q = 0; q < a->nq; q++) {
		int rc;

		if (lcore >= RTE_MAX_LCORE)
			return -1;
		rc = rte_eal_remote_launch(fn, (void *)(uintptr_t)q, lcore);
		if (rc != 0) {
			GPURX_LOG(ERR, "error: launch on lcore %u: %s\n", lcore,
				rte_strerror(-rc));
			a->stop = 1;
			return -1;
		}
		lcore = rte_get_next_lcore(lcore, 1, 0);
	}
	return 0;
}

/* Main lcore: stats every second, watch for the end conditions. */
static const char *
run_main_loop(struct gpurx_app *a)
{
	uint64_t hz = a->clk.hz, start = rte_get_tsc_cycles();
	uint64_t last_line = start, last_rx_change = start, last_rx = 0;
	/* Files replayed once: a record the port could not deliver must not
	 * hold the run forever, so without --idle-exit 1 s of quiet ends it. */
	const uint32_t idle_ms = a->opt.idle_exit_ms != 0 ? a->opt.idle_exit_ms :
		a->file_pkts != 0 ? 1000 : 0;
	struct gpurx_totals prev, now;
	struct gpu_figures gprev[GPURX_MAX_GPUS];
	struct port_figures pprev[GPURX_MAX_PORTS];

	memset(&prev, 0, sizeof(prev));
	memset(gprev, 0, sizeof(gprev));
	memset(pprev, 0, sizeof(pprev));
	for (;;) {
		uint64_t t = rte_get_tsc_cycles();
		struct gpurx_qstats sum;
		const char *gpu_fault;

		rte_delay_us_sleep(10 * 1000);
		if (quit_signal != 0)
			return quit_signal == SIGINT ? "SIGINT" :
				quit_signal == SIGPIPE ? "SIGPIPE (the reader of "
				"standard output went away)" : "SIGTERM";
		/* Before the other reasons: a dead kernel also stops RX
		 * lcores (looked at once then) and inbound packets. */
		gpu_fault = a->opt.cpu ? NULL : gpurx_gpu_watch(a, a->stop);
		if (gpu_fault != NULL)
			return gpu_fault;
		if (a->stop)
			return a->opt.count ? "--count reached" :
				a->opt.count_received ?
				"--count-received reached" : "RX lcore stopped";
		if (a->opt.duration_s > 0 &&
				(double)(t - start) / hz >= a->opt.duration_s)
			return "--duration reached";
		gpurx_stats_sum(a->qs, a->nq, &sum);
		if (a->file_pkts != 0 && sum.rx_pkts >= a->file_pkts) {
			gpu_fault = a->opt.cpu ? NULL : gpurx_gpu_watch(a, 1);
			return gpu_fault != NULL ? gpu_fault :
				"end of the port's file(s)";
		}
		if (sum.rx_pkts != last_rx) {
			last_rx = sum.rx_pkts;
			last_rx_change = t;
		} else if (idle_ms != 0 &&
				(t - last_rx_change) * 1000 / hz >= idle_ms) {
			gpu_fault = a->opt.cpu ? NULL : gpurx_gpu_watch(a, 1);
			return gpu_fault != NULL ? gpu_fault :
				a->opt.idle_exit_ms != 0 ? "--idle-exit: no packets" :
				"no packets for 1 s from the port's file(s)";
		}
		if (t - last_line >= hz) {
			totals(&now);
			now.elapsed_s = (double)(t - start) / hz;
			if (!a->opt.quiet)
				gpurx_stats_line(stderr, &now, &prev,
					(double)(t - last_line) / hz, a->nq);
			/* One GPU: its figures are the line's. */
			if (!a->opt.quiet && a->n_gpus > 1)
				gpu_stats_line(stderr, a, gprev,
					(double)(t - last_line) / hz);
			if (!a->opt.quiet && a->n_ports > 1)
				port_stats_line(stderr, a, pprev,
					(double)(t - last_line) / hz);
			prev = now;
			last_line = t;
			if (a->cap != NULL)
				gpurx_capture_flush(a->cap);
		}
	}
}

static void
count_left(const struct rte_memzone *mz, void *arg)
{
	unsigned int *left = arg;

	/* Pools (MP_, RG_MP_) and rings of this program are named gpurx_. */
	if (strstr(mz->name, "gpurx") != NULL) {
		GPURX_LOG(ERR, "error: at exit, memzone %s (%zu B) still "
			"allocated\n", mz->name, mz->len);
		(*left)++;
	}
}

/* What the RX time of --stamps is, said with the latencies. */
static const char *
stamp_clock(const struct gpurx_app *a)
{
	switch (a->opt.ts_source) {
	case GPURX_TS_PORT:
		return a->ts_in_us ? "--ts port: the pcap file's record times, "
			"in us" : "--ts port: the port's RX timestamps";
	case GPURX_TS_NONE:
		return "--ts none: no RX time, no latency";
	default:
		return "--ts rx: this host's CLOCK_REALTIME through the TSC, "
			"read once per RX burst";
	}
}

struct json_more_args {
	struct gpurx_app *a;
	const struct gpurx_stamp_report *stamps;	/* NULL: none */
};

static void
json_more(struct gpuapp_json *j, void *arg)
{
	const struct json_more_args *m = arg;

	gpurx_flow_export_json(j, m->a);
	if (m->a->n_gpus > 1)
		gpu_json(j, m->a);
	if (m->a->n_ports > 1)
		port_json(j, m->a);
	if (m->stamps != NULL)
		gpurx_stamps_json(j, m->stamps, stamp_clock(m->a));
}

/* Before rte_eal_cleanup(), on every path: what the program took (its
 * pools and rings, in memzones) is released. 0, or -1 after naming what
 * is left. */
static int
check_released(void)
{
	unsigned int left = 0;

	rte_memzone_walk(count_left, &left);
	return left == 0 ? 0 : -1;
}

static void
free_hdr_pools(struct gpurx_app *a)
{
	for (uint16_t k = 0; k < a->n_hdr_pools; k++) {
		rte_mempool_free(a->hdr_pools[k]);
		a->hdr_pools[k] = NULL;
	}
	a->n_hdr_pools = 0;
}

/*
 * A start-up failure: what was taken so far, released in the order of
 * the normal exit: RX lcores stopped, the port closed (its descriptors
 * hold mbufs of the pools), the capture closed, the GPU torn down (it
 * unregisters the pools' chunks and frees the --mem gpu pool), then the
 * host pools, flow export, flow table, filter and EAL.
 * port_set: gpurx_port_setup() was called (the port may be configured
 * or started). Returns the exit status.
 */
static int
fail_release(struct gpurx_app *a, int port_set)
{
	a->stop = 1;
	rte_eal_mp_wait_lcore();
	gpurx_flow_export_quiesce(a);
	if (a->n_gpus > 0)
		gpurx_gpu_stop(a);
	if (port_set)
		gpurx_port_close(a);
	gpurx_capture_close(a->cap, NULL);
	a->cap = NULL;
	/* A kernel that did not quit may still read all of it. */
	if (gpurx_gpu_kernel_held(a))
		return 1;
	gpurx_gpu_teardown(a);
	for (uint16_t i = 0; i < a->n_pools; i++) {
		rte_mempool_free(a->pools[i]);
		a->pools[i] = NULL;
	}
	a->n_pools = 0;
	free_hdr_pools(a);
	/* Before the flow table: the export's free reads it. */
	gpurx_flow_export_free(a);
	rte_free(a->ft);
	a->ft = NULL;
	gpurx_stamps_free(a->stamps);
	a->stamps = NULL;
	gpurx_filter_free(&a->filter);
	check_released();
	rte_eal_cleanup();
	return 1;
}

/* Each port's replayed files checked; the run's file_pkts their sum,
 * 0 (no end by count) when any port is live or endless. */
static int
files_check(struct gpurx_app *a)
{
	int live = 0;

	a->file_pkts = 0;
	for (uint16_t i = 0; i < a->n_ports; i++) {
		if (gpurx_port_file_check(&a->ports[i]) != 0)
			return -1;
		a->file_pkts += a->ports[i].file_pkts;
		live |= a->ports[i].file_pkts == 0;
	}
	if (live)
		a->file_pkts = 0;
	return 0;
}

/* After ports_stats_final(). */
static void
files_warn(const struct gpurx_app *a)
{
	for (uint16_t i = 0; i < a->n_ports; i++)
		gpurx_port_file_warn(&a->ports[i], a->ports[i].end_ierrors);
}

/* The start line with several ports: each, then the mode. */
static void
print_ports(const struct gpurx_app *a)
{
	printf("dpdk-gpu-rx: ports");
	for (uint16_t i = 0; i < a->n_ports; i++)
		printf("%s %u (%s)", i > 0 ? "," : "", a->ports[i].id,
			a->ports[i].driver);
	printf(", %u queue(s) each (queues %u-%u), mode %s: %s\n",
		a->opt.queues, 0, a->nq - 1, mode_name(a), a->mem_why);
	for (uint16_t i = 0; a->opt.queues > 1 && i < a->n_ports; i++)
		printf("port %u: queues %u-%u\n", a->ports[i].id,
			i * a->opt.queues, (i + 1) * a->opt.queues - 1);
}

/* The capture's packets name their own port's interface and queue. */
static int
capture_ports(struct gpurx_app *a)
{
	uint16_t ids[GPURX_MAX_PORTS];
	uint8_t pidx[GPURX_MAX_QUEUES];
	int rc;

	for (uint16_t i = 0; i < a->n_ports; i++)
		ids[i] = a->ports[i].id;
	for (uint16_t q = 0; q < a->nq; q++)
		pidx[q] = (uint8_t)(q / a->opt.queues);
	rc = gpurx_capture_set_ports(a->cap, ids, a->n_ports, pidx, a->q_qid);
	if (rc != 0)
		GPURX_LOG(ERR, "error: capture over %u ports: %s\n", a->n_ports,
			rte_strerror(-rc));
	return rc;
}

static int
print_help(void *opt)
{
	char *help[] = { (char *)"dpdk-gpu-rx", (char *)"--help", NULL };

	return gpurx_opts_parse(2, help, opt) > 0 ? 0 : GPURX_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	struct gpurx_app *a = &gpurx_app;
	struct gpurx_summary_info si;
	uint16_t port_ids[GPURX_MAX_PORTS];
	struct gpurx_item_stats items;
	struct gpurx_stamp_report sr;
	struct json_more_args jm;
	struct gpurx_totals tot;
	char err[512];	/* libpcap messages are under 256 bytes */
	struct gpurx_capture_end cap_end = { .port_drops = UINT64_MAX };
	uint64_t ports_drops[GPURX_MAX_PORTS];
	uint64_t t_start;
	int ret, status = 0, port_set = 0;
	unsigned int avail, total, l;

	/* --help and --version need no EAL (nor hugepages, nor a GPU). */
	ret = gpuapp_early_answer(argc, argv, "dpdk-gpu-rx", print_help,
		&a->opt);
	if (ret >= 0)
		return ret;
	/* --write -: standard output is the capture's from here, before EAL
	 * prints anything there. */
	if (writes_stdout(argc, argv) && gpurx_capture_take_stdout() != 0) {
		GPURX_LOG(ERR, "error: --write -: cannot take standard output\n");
		return 1;
	}
	ret = gpuapp_eal_init(argc, argv);
	if (ret < 0) {
		GPURX_LOG(ERR, "error: EAL init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)"dpdk-gpu-rx";
	a->ts_off = -1;
	ret = gpurx_opts_parse(argc, argv, &a->opt);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret > 0 ? 0 : GPURX_EXIT_USAGE;
	}
	/* --json's file is written at the end: a typo must not cost the run. */
	if (a->opt.json_path != NULL &&
			gpuapp_json_check_target(a->opt.json_path) != 0) {
		rte_eal_cleanup();
		return GPURX_EXIT_USAGE;
	}
	if (a->opt.write_path != NULL && a->opt.json_path != NULL &&
			strcmp(a->opt.write_path, "-") == 0 &&
			strcmp(a->opt.json_path, "-") == 0) {
		GPURX_LOG(ERR, "error: --json - and --write -: both on standard "
			"output; give --json a file\n");
		rte_eal_cleanup();
		return GPURX_EXIT_USAGE;
	}
	/* A bad --write pattern fails before any port or GPU is touched. */
	if (a->opt.write_path != NULL && gpurx_capture_path_check(
			a->opt.write_path, err, sizeof(err)) < 0) {
		GPURX_LOG(ERR, "error: --write: %s\n", err);
		rte_eal_cleanup();
		return GPURX_EXIT_USAGE;
	}
	/* Bad filters fail before any port or GPU is touched. */
	if (gpurx_filter_compile(a->opt.filter, DLT_EN10MB, (int)a->opt.snaplen,
			&a->filter, err, sizeof(err)) != 0) {
		GPURX_LOG(ERR, "error: invalid filter '%s': %s\n",
			a->opt.filter ? a->opt.filter : "", err);
		rte_eal_cleanup();
		return GPURX_EXIT_USAGE;
	}
	if (gpuapp_tsc_init(&a->clk) != 0) {
		GPURX_LOG(ERR, "error: cannot calibrate the TSC clock\n");
		goto fail;
	}
	if (gpurx_port_probe(a) != 0 || files_check(a) != 0 ||
			choose_mem_mode(a) != 0)
		goto fail;
	if (rte_lcore_count() < (unsigned int)a->nq + 1) {
		if (a->n_ports > 1)
			GPURX_LOG(ERR, "error: %u ports x %u RX queue(s) need %u "
				"lcores (main + one per queue of each port); EAL "
				"has %u: pass -l 0-%u\n", a->n_ports, a->opt.queues,
				a->nq + 1, rte_lcore_count(), a->nq);
		else
			GPURX_LOG(ERR, "error: %u RX queue(s) need %u lcores (main "
				"+ one per queue); EAL has %u: pass -l 0-%u\n",
				a->nq, a->nq + 1, rte_lcore_count(), a->nq);
		goto fail;
	}
	if (a->opt.stamps) {
		a->stamps = gpurx_stamps_create(a->nq);
		if (a->stamps == NULL) {
			GPURX_LOG(ERR, "error: --stamps: out of memory\n");
			goto fail;
		}
	}
	if (!a->opt.cpu && gpurx_gpu_init(a) != 0)
		goto fail;
	if (a->n_ports == 1)
		printf("dpdk-gpu-rx: port %u (%s), %u queue(s), mode %s: %s\n",
			a->port, a->driver, a->nq, mode_name(a), a->mem_why);
	else
		print_ports(a);

	a->ft = rte_zmalloc("gpurx_flows",
		gpurx_flow_table_bytes(a->opt.flow_capacity), 64);
	if (a->ft == NULL || gpurx_flow_table_init(a->ft, a->opt.flow_capacity,
			64) == NULL) {
		GPURX_LOG(ERR, "error: no memory for %u flow slots\n",
			a->opt.flow_capacity);
		goto fail;
	}
	/* Before the table is used or copied to a GPU. */
	if (gpurx_flow_queue_ports(a, NULL, a->nq, a->ft, "--port") != 0)
		goto fail;
	if (gpurx_flow_export_init(a) != 0)
		goto fail;
	port_set = 1;
	if (gpurx_port_setup(a) != 0)
		goto fail;
	printf("memory: %u mbuf pool(s) of %u x %u B (%s, per-lcore cache "
		"%d)%s, flow table %zu B\n",
		a->n_pools, a->pool_size, a->data_room,
		a->mem == GPURX_MEM_GPU ? "data in GPU memory" : "host",
		gpurx_mbuf_cache(a), a->n_hdr_pools == 0 ? "" :
		a->n_hdr_pools == 1 ? " and a header pool of as many (host)" :
		" and a header pool of as many per GPU (host)",
		gpurx_flow_table_bytes(a->opt.flow_capacity));
	if (a->opt.write_path != NULL) {
		struct gpurx_capture_rotate rot = {
			.seconds = a->opt.rotate_seconds,
			.size = a->opt.rotate_size,
			.files = a->opt.rotate_files,
			.times = a->opt.ts_source == GPURX_TS_RX,
		};

		a->cap = gpurx_capture_open_rotate(a->opt.write_path,
			a->opt.format, a->opt.snaplen, a->port, a->nq, a->qs,
			a->opt.filter, &rot, err, sizeof(err));
		if (a->cap == NULL) {
			GPURX_LOG(ERR, "error: capture: %s\n", err);
			goto fail;
		}
		if (a->n_ports > 1 && capture_ports(a) != 0)
			goto fail;
		if (start_capture_writers(a, err, sizeof(err)) != 0) {
			GPURX_LOG(ERR, "error: --capture-writers: %s\n", err);
			goto fail;
		}
	}
	if (!a->opt.cpu && gpurx_gpu_setup(a) != 0)
		goto fail;
	/* The export loads its scan kernel before the persistent kernel
	 * runs (gpurx_gpu_launch() says why). */
	if (gpurx_flow_export_start(a) != 0)
		goto fail;
	if (!a->opt.cpu && gpurx_gpu_launch(a) != 0)
		goto fail;
	ret = telemetry_register(a);
	if (ret != 0)
		GPURX_LOG(WARNING, "warning: telemetry /gpu_rx/stats: %s\n",
			rte_strerror(-ret));
	ret = gpurx_flow_export_telemetry_register(a);
	if (ret != 0)
		GPURX_LOG(WARNING, "warning: telemetry /gpu_rx/flow_export: "
			"%s\n", rte_strerror(-ret));
	if (install_signals() != 0) {
		GPURX_LOG(ERR, "error: cannot install signal handlers\n");
		goto fail;
	}
	fflush(stdout);

	t_start = rte_get_tsc_cycles();
	/* The statistics block's times in the packets' clock, --ts rx. */
	if (a->opt.ts_source == GPURX_TS_RX)
		cap_end.start_ns = gpuapp_real_ns();
	memset(&si, 0, sizeof(si));
	/* The launch's own result: a->stop may already be set by an RX
	 * lcore that reached --count before this line. */
	if (launch_rx_lcores(a) != 0) {
		a->stop = 1;
		si.exit_reason = "start-up failure";
	} else {
		si.exit_reason = run_main_loop(a);
	}
	/* RX lcores drain their in-flight items before returning. */
	a->stop = 1;
	RTE_LCORE_FOREACH_WORKER(l) {
		if (rte_eal_wait_lcore(l) < 0)
			status = 1;
	}
	/* No scan may end flows once the GPU's table is copied back. */
	gpurx_flow_export_quiesce(a);
	if (!a->opt.cpu && gpurx_gpu_stop(a) != 0)
		status = 1;
	if (gpurx_flow_export_finish(a) != 0)
		status = 1;
	/* After the export, which ends each GPU's flows from its own table. */
	if (!a->opt.cpu)
		gpurx_gpu_merge_flows(a);
	/* Before the totals: the last buffered packets are counted as the
	 * file has them. */
	if (a->cap != NULL) {
		struct rte_eth_stats es;

		if (cap_end.start_ns != 0)
			cap_end.end_ns = gpuapp_real_ns();
		if (rte_eth_stats_get(a->port, &es) == 0)
			cap_end.port_drops = es.imissed + es.rx_nombuf;
		for (uint16_t i = 0; a->n_ports > 1 && i < a->n_ports; i++) {
			ports_drops[i] = UINT64_MAX;
			if (rte_eth_stats_get(a->ports[i].id, &es) == 0)
				ports_drops[i] = es.imissed + es.rx_nombuf;
		}
		if (a->n_ports > 1)
			cap_end.ports_drops = ports_drops;
	}
	if (a->cap != NULL && gpurx_capture_close(a->cap, &cap_end) != 0) {
		GPURX_LOG(ERR, "error: capture %s%s is incomplete\n",
			strcmp(a->opt.write_path, "-") == 0 ? "to standard output" :
			"file ", strcmp(a->opt.write_path, "-") == 0 ? "" :
			a->opt.write_path);
		status = 1;
	}
	a->cap = NULL;
	totals(&tot);
	tot.elapsed_s = (double)(rte_get_tsc_cycles() - t_start) / a->clk.hz;
	ports_stats_final(a);
	gpurx_port_close(a);
	avail = 0;
	total = 0;
	/* Every pool, the header pools of --split too: each mbuf of a split
	 * chain goes back to its own. */
	for (uint16_t i = 0; i < a->n_pools + a->n_hdr_pools; i++) {
		struct rte_mempool *mp = i < a->n_pools ? a->pools[i] :
			a->hdr_pools[i - a->n_pools];
		unsigned int in = rte_mempool_avail_count(mp);

		if (in != mp->size)
			GPURX_LOG(ERR, "error: pool %s: %u of %u mbufs not "
				"returned\n", mp->name, mp->size - in, mp->size);
		avail += in;
		total += mp->size;
	}

	si.mode = mode_name(a);
	si.filter = a->opt.filter;
	si.capture_path = a->opt.write_path != NULL &&
		strcmp(a->opt.write_path, "-") == 0 ? "standard output" :
		a->opt.write_path;
	si.top_n = a->opt.top_n;
	for (uint16_t i = 0; i < a->n_ports; i++)
		port_ids[i] = a->ports[i].id;
	si.port_ids = a->n_ports > 1 ? port_ids : NULL;
	si.n_ports = a->n_ports;
	si.mbufs_total = total;
	si.mbufs_avail = avail;
	si.exit_reason_signal = quit_signal;
	si.items = NULL;
	memset(&sr, 0, sizeof(sr));
	if (a->stamps != NULL && gpurx_stamps_report(a->stamps, &sr) != 0) {
		GPURX_LOG(ERR, "error: --stamps: out of memory for the report\n");
		status = 1;
	}
	jm.a = a;
	jm.stamps = a->stamps != NULL ? &sr : NULL;
	si.json_more = json_more;
	si.json_more_arg = &jm;
	if (!a->opt.cpu) {
		gpurx_gpu_item_stats(a, &items);
		si.items = &items;
	}
	gpurx_summary_print(stdout, &tot, a->ft, &si);
	if (a->n_gpus > 1)
		gpu_summary(stdout, a);
	if (a->n_ports > 1)
		port_summary(stdout, a);
	files_warn(a);
	gpurx_flow_export_print(stdout, a);
	if (jm.stamps != NULL)
		gpurx_stamps_print(stdout, &sr, stamp_clock(a));
	if (avail != total) {
		GPURX_LOG(ERR, "error: %u mbufs not returned to their pools\n",
			total - avail);
		status = 1;
	}
	/* A failure is said there, naming the file and why. */
	if (a->opt.json_path != NULL &&
			gpurx_summary_json(a->opt.json_path, &tot, a->ft, &si) != 0)
		status = 1;
	if (!a->opt.cpu && gpurx_gpu_kernel_held(a))
		return 1;
	if (!a->opt.cpu)
		gpurx_gpu_teardown(a);
	for (uint16_t i = 0; i < a->n_pools; i++)
		rte_mempool_free(a->pools[i]);
	/* After the GPU teardown, which unregistered its chunks. */
	free_hdr_pools(a);
	gpurx_flow_export_free(a);
	rte_free(a->ft);
	free(sr.streams);
	gpurx_stamps_free(a->stamps);
	gpurx_filter_free(&a->filter);
	if (check_released() != 0)
		status = 1;
	rte_eal_cleanup();
	return status;

fail:
	return fail_release(a, port_set);
}
