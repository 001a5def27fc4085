/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-kernel-rate: how many packets per second the GPU classifies
 * (cBPF filter + parse + flow-table update, gpurx_classify_pkt) when the
 * packets are already resident
 *   mem=gpu   in GPU memory (cudaMalloc), and
 *   mem=host  in host memory mapped for the GPU (cudaHostRegister,
 *             Mapped): the kernel reads packets and descriptors over PCIe,
 * for the three filters of bench-bpf-cpu (empty, `tcp port 443`, a
 * 38-instruction one), 1k and 1M flows (the flow table sized for them),
 * 64-byte frames and pktgen's 64..1500-byte mix (krate_data.h: how the
 * flow mix is made; about 1% more flows than asked, from fragments).
 * The kernel is the one dpdk-gpu-rx ships: its persistent kernel (the
 * ring library's skeleton, lib/gpucomm, around the app's per-item body,
 * examples/gpu_rx/app/gpu_kernels.cu, linked from the app's kernel
 * library), fed through the ring library's lcore side as the RX lcores
 * feed it: the data set is cut into items of SHIP_BURST packets spread
 * over SHIP_RINGS rings (queues), their comm list entries written once,
 * and a pass publishes every item (count, barrier, READY) and collects
 * every DONE. A pass is timed from the first publish to the last DONE
 * seen by the CPU. The packets' descriptors are where gpudev keeps them,
 * in host memory, as in the app; the packet bytes in GPU or host-mapped
 * memory.
 *
 * In the same run: device-memory read bandwidth (a kernel streaming a
 * 1 GiB GPU buffer), PCIe read bandwidth (the same kernel over a 512 MiB
 * host-mapped buffer), the rate of scattered 32/64/128-byte reads from
 * host-mapped memory (pcie_scatter) and, per data set, the gather floor
 * (krate_kernels.h: every packet's descriptor and first 64 bytes loaded
 * by coalesced warps, nothing classified; floor-gather). floor =
 * bandwidth / bytes a kernel must read per packet (headers to the end of
 * L4 in 32-byte sectors, plus the 14-byte descriptor); line_floor (host
 * memory) = the 128-byte lines those headers touch at the scattered
 * 64-byte read rate, plus the descriptors at streaming bandwidth.
 *
 * The kernel's results are checked against a CPU pass of the same code
 * over the same packets (every verdict, from the items' match bits and
 * verdicts, and the flow table: flow count, counters, key hashes; key by
 * key once per data set); a difference fails the run. Each
 * configuration: one checked pass on a fresh table (timed: includes the
 * flow inserts), then warm-up passes, then >= 20 timed passes on the
 * table that now holds every flow (steady state: counter updates).
 * Median and p99 (slowest) packets/s.
 * The CPU baseline (cpu1): the same code on one core, timed over the
 * same kind of table.
 *
 * Usage: bench-kernel-rate [--packets N] [--reps N] [--warmup N]
 *        [--seed N] [--flows N,N] [--sizes 64,mix] [--mem gpu,host]
 *        [--filters empty,tcp443,complex]
 *        [--window N] [--budget-s N] [--device N | --pci BUS_ID]
 *        [--out DIR] [--cpu-only] [--tiny]
 *        [--rings N,N] [--burst N,N] [--workers N,N]
 *        bench-kernel-rate --self-test
 *
 * --budget-s: no new configuration starts after that many seconds (the
 * 64-byte ones run first); --cpu-only: the CPU part alone (packets, flow
 * mix, reference passes, and whether the window changes any result), for
 * CI; --tiny: 8192 packets, 100 and 4000 flows. The GPU part starts EAL
 * itself (no hugepages, no PCI scan, the driver on the chosen GPU as
 * gpu_cuda0, the first lcore of the process's affinity): gpudev owns the
 * comm lists.
 *
 * --rings, --burst, --workers (a sweep): the shipped kernel in every
 * shape of their product (rings 1..GPUCOMM_MAX_RINGS, packets an item
 * 1..GPURX_MAX_BURST, worker blocks a ring 1..GPUCOMM_WORKERS_MAX, lowered
 * to what fits as the app's are; a dimension not given stays as shipped:
 * 8, 512, 64) on each configuration the other options choose, each shape
 * checked and timed as the default run's one, with its items a second,
 * the share of a pass the CPU spent publishing, how often it waited for
 * a DONE (never: the CPU was the bound), and the body's own block
 * counters (busy share of the worker blocks, an item's time by phase and
 * outside the body): a line "kernel-rate-sweep ..." and a result in
 * kernel_rate_sweep.json.
 * With --cpu-only, each (rings, burst) shape's cutting of the pass is
 * checked on the CPU (kernel_rate_sweep_cpu.json).
 * Exit: 0 done, 1 failure (check failed, CUDA error), 2 usage, 77 no GPU.
 */

#include <inttypes.h>
#include <math.h>
#include <pcap/dlt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>

#include "bench_common.h"
#include "filter_compile.h"
#include "gpu_kernels.h"
#include "gpucomm_ring.h"
#include "krate_data.h"
#include "krate_kernels.h"

#define DEFAULT_PACKETS (4u << 20)
#define DEFAULT_REPS 20
#define DEFAULT_WARMUP 3
#define DEFAULT_WINDOW 128
#define DEFAULT_BUDGET_S 60
#define TINY_PACKETS 8192
#define MAX_FLOW_COUNTS 4
/* Bandwidth buffers: far larger than the 50 MB L2 of an H100. */
#define BW_DEV_BYTES ((size_t)1 << 30)
#define BW_HOST_BYTES ((size_t)512 << 20)
#define BW_REPS 20
/* A configuration slower than this for all its passes gets fewer
 * (flagged). */
#define VARIANT_BUDGET_S 2.0
#define MIN_REPS_SLOW 3
/* Packets of the timed steady-state CPU pass (the table holds every
 * flow already, so its access pattern does not depend on the count). */
#define CPU_STEADY_PKTS (1u << 20)
/* libpcap's default snapshot length: the programs of bench-bpf-cpu. */
#define FILTER_SNAPLEN 65535

struct filter_def {
	const char *name;
	const char *expr;
};

/* The same expressions as bench_bpf_cpu.c. */
static const struct filter_def filters[] = {
	{ "empty", "" },
	{ "tcp443", "tcp port 443" },
	{ "complex", "(tcp port 80 or tcp port 443 or udp port 53 or udp port 123) and "
		"net 10.0.0.0/8 and not host 10.1.2.3 and not ip[6:2] & 0x1fff != 0" },
};
#define N_FILTERS (sizeof(filters) / sizeof(filters[0]))

/*
 * The shipped kernel as the bench drives it. Rings: queues of one
 * persistent kernel, so that it takes as much of the GPU as the app's
 * kernel does with that many RX queues (gpucomm_kernel_share). Items of
 * the app's largest burst: the ring's per-item costs spread over the
 * most packets, which is what a rate of resident packets asks.
 */
#define SHIP_NAME "gpu_rx-persistent"
#define SHIP_RINGS 8
/* The app's largest burst (GPURX_MAX_BURST: a match bit a packet). */
#define SHIP_BURST (GPURX_SUM_MATCH_WORDS * 32)
#define SHIP_WORKERS GPUCOMM_WORKERS_MAX
/* The kernel ends this soon after its quit flag. */
#define SHIP_QUIT_MS 2000
/* A pass not done by then is a failure (a lost item). */
#define SHIP_PASS_TIMEOUT_NS (30ULL * 1000000000ULL)
/* EAL memory for gpudev's comm lists (each item takes a packet list of
 * RTE_GPU_COMM_LIST_PKTS_MAX entries and as many mbuf pointers, about
 * 24 KiB): at least this, more for the items of a sweep's small bursts. */
#define SHIP_EAL_MEM_MB 2048
#define SHIP_ITEM_BYTES (RTE_GPU_COMM_LIST_PKTS_MAX * \
	(sizeof(struct rte_gpu_comm_pkt) + sizeof(void *)) + 256)
/* Items of one pass, at most (1.6 GB of pinned host memory). */
#define SHIP_ITEMS_MAX 65536u
/* Values of each of --rings, --burst, --workers. */
#define SHAPE_VALUES_MAX 8

enum mem_kind { MEM_GPU, MEM_HOST, MEM_MAX };
static const char *const mem_names[MEM_MAX] = { "gpu", "host" };

struct opts {
	uint64_t packets;
	uint64_t reps;
	uint64_t warmup;
	uint64_t seed;
	uint64_t flows[MAX_FLOW_COUNTS];
	unsigned int n_flows;
	bool sizes[2];		/* 64 B, the mix: size_names[] */
	bool mem[MEM_MAX];
	bool filter[N_FILTERS];	/* which of filters[] run (profiling one) */
	uint64_t window;
	uint64_t budget_s;
	uint64_t device;
	const char *pci;
	const char *out;
	int cpu_only;
	/* The shipped kernel's shapes (--rings, --burst, --workers): any
	 * given, a sweep over their product; the others stay as shipped. */
	uint64_t rings[SHAPE_VALUES_MAX];
	uint64_t burst[SHAPE_VALUES_MAX];
	uint64_t workers[SHAPE_VALUES_MAX];
	unsigned int n_rings, n_burst, n_workers;
};

/* One shape of the shipped kernel's feed. */
struct shape {
	uint32_t rings;		/* asked; fewer when a pass has fewer items */
	uint32_t burst;		/* packets an item */
	uint32_t workers;	/* worker blocks a ring, asked (gpucomm fits) */
};

/* How a pass of n packets is cut for a shape: item k of the pass is item
 * k / rings of ring k % rings and holds packets k * burst onwards. */
struct ship_layout {
	uint32_t rings;
	uint32_t burst;
	uint32_t items;		/* items of a pass */
	uint32_t n_items;	/* items a ring */
};

static const char *const size_names[] = { "64", "mix" };

/* Scattered reads from host-mapped memory: bytes read, one read per
 * SCATTER_STRIDE bytes. */
static const uint32_t scatter_sizes[] = { 32, 64, 128 };
#define N_SCATTER (sizeof(scatter_sizes) / sizeof(scatter_sizes[0]))
#define SCATTER_STRIDE 256
/* scatter_sizes[] index of 64-byte reads: a header's share of a line. */
#define SCATTER_HDR 1

/* Bandwidths measured at the start, bytes/s; scattered reads, reads/s. */
struct bw {
	double dev_median, dev_p99;
	double host_median, host_p99;
	double scatter_median[N_SCATTER];
};

/* Device copies of one data set and where each memory kind sees it. */
struct gpu_set {
	uint8_t *buf;
	uint32_t *offs;
	uint16_t *lens;
	uint64_t *ts;
	bool registered[4];	/* buf, offs, lens, ts host pages */
	struct kr_batch batch[MEM_MAX];
	uint32_t *verdicts;	/* device */
	uint32_t *out;		/* device, gather kernel */
	struct gpurx_flow_table *ft;
	size_t ft_bytes;
};

/*
 * The shipped kernel's side: comm lists as rings (lcore side of
 * lib/gpucomm), the kernel's quit flag and dispatch state, and the app's
 * per-queue inputs and outputs (struct gpurx_gq), in mapped pinned
 * memory (UVA: one address for the CPU and the GPU). One gpudev list,
 * sized for the largest shape, is cut into the rings of the shape set
 * (ship_shape_set): ring r is items r * n_items onwards (the statuses of
 * a ring stay one array, as the dispatcher wants them).
 */
struct ship {
	bool eal;
	int16_t dev_id;
	struct ship_layout lay;		/* of the shape set */
	uint32_t workers;		/* asked, of the shape set */
	int filled;			/* entries point at this mem_kind; -1 */
	struct rte_gpu_comm_list *list;
	uint32_t list_items;
	uint32_t max_rings;		/* gq[] entries */
	size_t pkt_slots;		/* ts[], verdict[] entries */
	struct rte_gpu_comm_list *lists[GPUCOMM_MAX_RINGS];	/* in list */
	struct gpucomm_ring rings[GPUCOMM_MAX_RINGS];
	struct gpucomm_kernel k;
	bool k_ok;
	bool running;
	cudaStream_t stream;
	struct gpurx_gq *gq;		/* [max_rings] */
	struct gpurx_item_in *in;	/* [slots] */
	uint64_t *ts;			/* [slots * burst] */
	uint32_t *verdict;		/* the same */
	struct gpurx_item_sum *sum;	/* [slots] */
	unsigned int blocks;		/* of the running kernel */
};

struct ctx {
	struct opts o;
	struct ship ship;
	struct kr_gpu_info gi;
	struct bw bw;
	struct bench_json j;
	struct gpurx_filter prog[N_FILTERS];	/* host */
	struct bpf_vm_insn *dprog[N_FILTERS];	/* device copies */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	uint64_t deadline_ns;
	double *samples;	/* reps */
	double *pub_samples;	/* reps: first to last publish of a pass */
	int status;
};

#define CK(call) do { \
	cudaError_t ck_err_ = (cudaError_t)(call); \
	if (ck_err_ != cudaSuccess) { \
		printf("FAIL %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
			cudaGetErrorString(ck_err_), cudaGetErrorName(ck_err_)); \
		goto fail; \
	} \
} while (0)

/* --window: the staging window, whole warps of 16-packet rows. */
static int
opt_window(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	uint64_t v;
	int ret = gpuapp_opt_uint(opt, arg, logtype, &v);

	if (ret != 0)
		return ret;
	if (v % 16 != 0) {
		rte_log(RTE_LOG_ERR, (uint32_t)logtype,
			"--%s: '%s' is not a multiple of 16\n", opt->name, arg);
		return -EINVAL;
	}
	*(uint64_t *)opt->dst = v;
	return 0;
}

/* --tiny: the CI's quick run. */
static void
set_tiny(void *opts)
{
	struct opts *o = opts;

	o->packets = TINY_PACKETS;
	o->reps = 3;
	o->warmup = 1;
	o->flows[0] = 100;
	o->flows[1] = 4000;
	o->n_flows = 2;
}

/* A sweep: any of --rings, --burst, --workers given. */
static bool
sweeping(const struct opts *o)
{
	return o->n_rings + o->n_burst + o->n_workers > 0;
}

/* Shapes to run: the product of the lists (1 without a sweep). */
static unsigned int
shape_count(const struct opts *o)
{
	return (o->n_rings > 0 ? o->n_rings : 1) *
		(o->n_burst > 0 ? o->n_burst : 1) *
		(o->n_workers > 0 ? o->n_workers : 1);
}

/* Shape i (< shape_count): rings outermost, workers innermost; a
 * dimension not swept is the shipped value. */
static void
shape_at(const struct opts *o, unsigned int i, struct shape *sh)
{
	const unsigned int nw = o->n_workers > 0 ? o->n_workers : 1;
	const unsigned int nb = o->n_burst > 0 ? o->n_burst : 1;

	sh->workers = o->n_workers > 0 ? (uint32_t)o->workers[i % nw] :
		SHIP_WORKERS;
	sh->burst = o->n_burst > 0 ? (uint32_t)o->burst[i / nw % nb] :
		SHIP_BURST;
	sh->rings = o->n_rings > 0 ? (uint32_t)o->rings[i / nw / nb] :
		SHIP_RINGS;
}

static void
ship_layout_of(uint32_t n, uint32_t rings, uint32_t burst,
		struct ship_layout *l)
{
	l->burst = burst;
	l->items = (n + burst - 1) / burst;
	l->rings = l->items < rings ? l->items : rings;
	l->n_items = (l->items + l->rings - 1) / l->rings;
}

/* What the shapes of a run need set up at once (shapes_need()). */
struct ship_need {
	uint32_t items;		/* comm list items */
	size_t pkt_slots;	/* per-packet side data and verdicts */
	uint32_t rings;
};

/*
 * What the shapes need at once: the largest shape's rings x items a ring
 * (every item of a pass is published together), its packet slots, and
 * the most rings. -EINVAL with the reason when a shape needs more than
 * SHIP_ITEMS_MAX items.
 */
static int
shapes_need(const struct opts *o, struct ship_need *nd)
{
	unsigned int i;

	memset(nd, 0, sizeof(*nd));
	for (i = 0; i < shape_count(o); i++) {
		struct ship_layout l;
		struct shape sh;
		uint64_t slots;

		shape_at(o, i, &sh);
		ship_layout_of((uint32_t)o->packets, sh.rings, sh.burst, &l);
		slots = (uint64_t)l.rings * l.n_items;
		if (slots > SHIP_ITEMS_MAX) {
			fprintf(stderr, "bench-kernel-rate: --burst %u with --packets %"
				PRIu64 " makes %" PRIu64 " items of a pass, more "
				"than the %u whose comm lists it can pin (about "
				"24 KiB each): raise --burst or lower --packets\n",
				sh.burst, o->packets, slots, SHIP_ITEMS_MAX);
			return -EINVAL;
		}
		if (slots > nd->items)
			nd->items = (uint32_t)slots;
		if (slots * l.burst > nd->pkt_slots)
			nd->pkt_slots = (size_t)(slots * l.burst);
		if (l.rings > nd->rings)
			nd->rings = l.rings;
	}
	return 0;
}

static int
parse_args(int argc, char **argv, struct opts *o)
{
	const char *filter_names[N_FILTERS];
	struct bench_opt_list flows = {
		.v = o->flows, .max_n = MAX_FLOW_COUNTS, .n = &o->n_flows,
	};
	struct bench_opt_names sizes = {
		.names = size_names, .sel = o->sizes, .n = RTE_DIM(o->sizes),
	};
	struct bench_opt_names mem = {
		.names = mem_names, .sel = o->mem, .n = MEM_MAX,
	};
	struct bench_opt_names filter = {
		.names = filter_names, .sel = o->filter, .n = N_FILTERS,
	};
	struct bench_opt_list rings = {
		.v = o->rings, .max_n = SHAPE_VALUES_MAX, .n = &o->n_rings,
	};
	struct bench_opt_list burst = {
		.v = o->burst, .max_n = SHAPE_VALUES_MAX, .n = &o->n_burst,
	};
	struct bench_opt_list workers = {
		.v = o->workers, .max_n = SHAPE_VALUES_MAX, .n = &o->n_workers,
	};
	struct bench_opt_preset tiny_preset = { .apply = set_tiny, .opts = o };
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("packets", &o->packets, 1, UINT32_MAX, "N",
			"packets per pass (default 4194304)"),
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 100000, "N",
			"passes timed (default 20)"),
		GPUAPP_OPT_UINT_ENTRY("warmup", &o->warmup, 0, 1000, "N",
			"passes before them (default 3)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"seed of the traffic mix (default 1)"),
		BENCH_OPT_LIST_ENTRY("flows", &flows, 1, UINT32_MAX, "N[,N...]",
			"flow counts, at most 4 (default 1000,1000000)"),
		BENCH_OPT_NAMES_ENTRY("sizes", &sizes, "64,mix",
			"packet sizes: 64 B, the mix (default both)"),
		BENCH_OPT_NAMES_ENTRY("mem", &mem, "gpu,host",
			"where the packets lie (default both)"),
		BENCH_OPT_NAMES_ENTRY("filters", &filter, "NAME[,NAME...]",
			"empty, tcp443, complex (default all)"),
		{ .name = "window", .kind = GPUAPP_OPT_CALLBACK,
		  .cb = opt_window, .dst = &o->window, .min = 16,
		  .max = KR_WINDOW_MAX, .arg_name = "N",
		  .help = "staging window, a multiple of 16 (default 128)" },
		GPUAPP_OPT_UINT_ENTRY("budget-s", &o->budget_s, 1, 86400, "N",
			"time budget in s (default 60)"),
		GPUAPP_OPT_UINT_ENTRY("device", &o->device, 0, 1024, "N",
			"CUDA device (default 0)"),
		GPUAPP_OPT_STRING_ENTRY("pci", &o->pci, "BUS_ID",
			"CUDA device by PCI address"),
		BENCH_OPT_OUT_ENTRY(&o->out, "where the JSON result goes"),
		GPUAPP_OPT_FLAG_ENTRY("cpu-only", &o->cpu_only,
			"the CPU part alone, no GPU"),
		BENCH_OPT_LIST_ENTRY("rings", &rings, 1, GPUCOMM_MAX_RINGS,
			"N[,N...]", "sweep: rings (queues) of the shipped\n"
			"kernel, 1..32 (shipped: 8)"),
		BENCH_OPT_LIST_ENTRY("burst", &burst, 1, SHIP_BURST,
			"N[,N...]", "sweep: packets an item, 1..512\n"
			"(shipped: 512)"),
		BENCH_OPT_LIST_ENTRY("workers", &workers, 1, GPUCOMM_WORKERS_MAX,
			"N[,N...]", "sweep: worker blocks a ring, 1..64, as\n"
			"many as fit (shipped: 64)"),
		BENCH_OPT_PRESET_ENTRY("tiny", &tiny_preset,
			"small runs (CI)"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	for (size_t k = 0; k < N_FILTERS; k++)
		filter_names[k] = filters[k].name;
	/* No EAL here: the bench starts CUDA itself. */
	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

static const char *
count_str(uint64_t v, char *buf, size_t len)
{
	if (v >= 1000000 && v % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "M", v / 1000000);
	else if (v >= 1000 && v % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "k", v / 1000);
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* "1.23Gpps" / "45.6Mpps" */
static const char *
pps_str(double pps, char *buf, size_t len)
{
	if (!isfinite(pps))
		snprintf(buf, len, "n/a");
	else if (pps >= 1e9)
		snprintf(buf, len, "%.2fGpps", pps / 1e9);
	else
		snprintf(buf, len, "%.1fMpps", pps / 1e6);
	return buf;
}

static bool
past_deadline(const struct ctx *c)
{
	return bench_now_ns() > c->deadline_ns;
}

/* Time of one queued piece of work in ns, by CUDA events around it. */
#define TIMED(c, t_ns, launch) do { \
	float ms_ = 0; \
	CK(cudaEventRecord((c)->ev0, (c)->stream)); \
	CK(launch); \
	CK(cudaEventRecord((c)->ev1, (c)->stream)); \
	CK(cudaEventSynchronize((c)->ev1)); \
	CK(cudaEventElapsedTime(&ms_, (c)->ev0, (c)->ev1)); \
	(t_ns) = (double)ms_ * 1e6; \
} while (0)

/* --- Bandwidth --------------------------------------------------------------- */

/*
 * Reads buf (size bytes) BW_REPS times after warm-up: all of it (rd 0,
 * bytes/s) or rd bytes every SCATTER_STRIDE (reads/s).
 */
static int
measure_bw(struct ctx *c, const void *buf, size_t size, uint32_t rd,
		unsigned long long *sink, double *median, double *p99)
{
	double units = rd == 0 ? (double)size : (double)(size / SCATTER_STRIDE);
	struct bench_stats st;
	double t;
	int r;

#define BW_LAUNCH() (rd == 0 ? \
	kr_read_bw_launch(buf, size, sink, c->stream) : \
	kr_read_scatter_launch(buf, size, SCATTER_STRIDE, rd, sink, c->stream))
	for (r = 0; r < 2; r++)
		TIMED(c, t, BW_LAUNCH());
	for (r = 0; r < BW_REPS; r++) {
		TIMED(c, t, BW_LAUNCH());
		c->samples[r] = t;
	}
#undef BW_LAUNCH
	bench_stats_compute(c->samples, BW_REPS, &st);
	*median = units / (st.median * 1e-9);
	if (p99 != NULL)
		*p99 = units / (st.p99 * 1e-9);
	return 0;
fail:
	return -1;
}

static int
bandwidth(struct ctx *c, bool tiny)
{
	size_t dev_bytes = tiny ? (64u << 20) : BW_DEV_BYTES;
	size_t host_bytes = tiny ? (64u << 20) : BW_HOST_BYTES;
	unsigned long long *sink = NULL;
	void *dbuf = NULL, *hbuf = NULL, *hdev = NULL;
	uint64_t rng = rand64_seed(c->o.seed ^ 0xb0b0);
	char a[32], b[32];
	int ret = -1;

	if (dev_bytes > c->gi.mem_bytes / 8)
		dev_bytes = (c->gi.mem_bytes / 8) & ~(size_t)15;
	CK(cudaMalloc((void **)&sink, sizeof(*sink)));
	CK(cudaMalloc(&dbuf, dev_bytes));
	CK(kr_fill_launch(dbuf, dev_bytes, c->o.seed, c->stream));
	CK(cudaHostAlloc(&hbuf, host_bytes, cudaHostAllocMapped));
	rand64_fill(hbuf, host_bytes, &rng);
	CK(cudaHostGetDevicePointer(&hdev, hbuf, 0));
	CK(cudaStreamSynchronize(c->stream));
	if (measure_bw(c, dbuf, dev_bytes, 0, sink, &c->bw.dev_median,
			&c->bw.dev_p99) != 0 ||
			measure_bw(c, hdev, host_bytes, 0, sink, &c->bw.host_median,
				&c->bw.host_p99) != 0)
		goto fail;
	for (size_t s = 0; s < N_SCATTER; s++)
		if (measure_bw(c, hdev, host_bytes, scatter_sizes[s], sink,
				&c->bw.scatter_median[s], NULL) != 0)
			goto fail;
	printf("kernel-rate bandwidth device_read=%.0fGB/s (p99 %.0f) "
		"pcie_read=%.1fGB/s (p99 %.1f) [%s device, %s host-mapped]\n",
		c->bw.dev_median / 1e9, c->bw.dev_p99 / 1e9,
		c->bw.host_median / 1e9, c->bw.host_p99 / 1e9,
		count_str(dev_bytes >> 20, a, sizeof(a)),
		count_str(host_bytes >> 20, b, sizeof(b)));
	printf("kernel-rate pcie_scatter stride=%u", SCATTER_STRIDE);
	for (size_t s = 0; s < N_SCATTER; s++)
		printf(" %uB=%.0fM/s (%.1fGB/s)", scatter_sizes[s],
			c->bw.scatter_median[s] / 1e6,
			c->bw.scatter_median[s] * scatter_sizes[s] / 1e9);
	printf("\n");
	bench_json_obj_begin(&c->j, "bandwidth");
	bench_json_int(&c->j, "device_buffer_bytes", (int64_t)dev_bytes);
	bench_json_int(&c->j, "host_buffer_bytes", (int64_t)host_bytes);
	bench_json_int(&c->j, "reps", BW_REPS);
	bench_json_num(&c->j, "device_read_Bps_median", c->bw.dev_median);
	bench_json_num(&c->j, "device_read_Bps_p99", c->bw.dev_p99);
	bench_json_num(&c->j, "pcie_read_Bps_median", c->bw.host_median);
	bench_json_num(&c->j, "pcie_read_Bps_p99", c->bw.host_p99);
	bench_json_int(&c->j, "pcie_scatter_stride", SCATTER_STRIDE);
	bench_json_obj_begin(&c->j, "pcie_scatter_reads_per_s_median");
	for (size_t s = 0; s < N_SCATTER; s++) {
		char key[16];

		snprintf(key, sizeof(key), "%u", scatter_sizes[s]);
		bench_json_num(&c->j, key, c->bw.scatter_median[s]);
	}
	bench_json_obj_end(&c->j);
	bench_json_obj_end(&c->j);
	ret = 0;
fail:
	cudaFree(sink);
	cudaFree(dbuf);
	cudaFreeHost(hbuf);
	return ret;
}

/* --- Data sets on the GPU -------------------------------------------------- */

static void
gpu_set_free(struct gpu_set *g, struct kr_dataset *d)
{
	void *host[4] = { d->set.buf, d->offs, d->lens, d->ts };
	int k;

	cudaFree(g->buf);
	cudaFree(g->offs);
	cudaFree(g->lens);
	cudaFree(g->ts);
	cudaFree(g->verdicts);
	cudaFree(g->out);
	cudaFree(g->ft);
	for (k = 0; k < 4; k++)
		if (g->registered[k])
			cudaHostUnregister(host[k]);
	memset(g, 0, sizeof(*g));
}

/* Host pages of the data set registered (mem=host) and device copies
 * allocated (mem=gpu; filled by gpu_set_upload). */
static int
gpu_set_alloc(struct ctx *c, struct gpu_set *g, struct kr_dataset *d)
{
	/* pktgen allocates the packet buffer in whole 2 MiB pages, so the
	 * page-rounded size stays inside the allocation. */
	size_t buf_reg = (kr_dataset_buf_bytes(d) + 4095) & ~(size_t)4095;
	void *host[4] = { d->set.buf, d->offs, d->lens, d->ts };
	size_t host_len[4] = { buf_reg, d->offs_bytes, d->lens_bytes,
		d->ts_bytes };
	void *mapped[4] = { NULL };
	int k;

	memset(g, 0, sizeof(*g));
	if (c->o.mem[MEM_GPU]) {
		CK(cudaMalloc((void **)&g->buf, kr_dataset_buf_bytes(d)));
		CK(cudaMalloc((void **)&g->offs, sizeof(*g->offs) * d->n));
		CK(cudaMalloc((void **)&g->lens, sizeof(*g->lens) * d->n));
		CK(cudaMalloc((void **)&g->ts, sizeof(*g->ts) * d->n));
		g->batch[MEM_GPU] = (struct kr_batch){ g->buf, g->offs, g->lens,
			g->ts, d->n };
	}
	if (c->o.mem[MEM_HOST]) {
		for (k = 0; k < 4; k++) {
			CK(cudaHostRegister(host[k], host_len[k],
				cudaHostRegisterMapped));
			g->registered[k] = true;
			CK(cudaHostGetDevicePointer(&mapped[k], host[k], 0));
		}
		g->batch[MEM_HOST] = (struct kr_batch){ mapped[0], mapped[1],
			mapped[2], mapped[3], d->n };
	}
	CK(cudaMalloc((void **)&g->verdicts, sizeof(*g->verdicts) * d->n));
	CK(cudaMalloc((void **)&g->out, sizeof(*g->out) * d->n));
	return 0;
fail:
	gpu_set_free(g, d);
	return -1;
}

static int
gpu_set_upload(struct ctx *c, struct gpu_set *g, const struct kr_dataset *d)
{
	if (!c->o.mem[MEM_GPU])
		return 0;
	CK(cudaMemcpy(g->buf, d->set.buf, kr_dataset_buf_bytes(d),
		cudaMemcpyHostToDevice));
	CK(cudaMemcpy(g->offs, d->offs, sizeof(*d->offs) * d->n,
		cudaMemcpyHostToDevice));
	CK(cudaMemcpy(g->lens, d->lens, sizeof(*d->lens) * d->n,
		cudaMemcpyHostToDevice));
	CK(cudaMemcpy(g->ts, d->ts, sizeof(*d->ts) * d->n,
		cudaMemcpyHostToDevice));
	return 0;
fail:
	return -1;
}

/* An empty table of ft_cpu's geometry on the device. */
static int
ft_reset(struct ctx *c, struct gpu_set *g, const struct gpurx_flow_table *like)
{
	struct gpurx_flow_table hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.capacity = like->capacity;
	hdr.max_probe = like->max_probe;
	CK(cudaMemsetAsync(g->ft, 0, g->ft_bytes, c->stream));
	CK(cudaMemcpyAsync(g->ft, &hdr, sizeof(hdr), cudaMemcpyHostToDevice,
		c->stream));
	CK(cudaStreamSynchronize(c->stream));
	return 0;
fail:
	return -1;
}

/* --- The shipped kernel, through the ring library ---------------------------- */

/*
 * EAL for gpudev, started here rather than from the command line so that
 * the bench keeps its options: no hugepages or PCI scan, the driver's
 * device on the CUDA device or PCI address the runtime uses, and the
 * first CPU the process may run on as its one lcore (run-all.sh pins it).
 * Memory for list_items comm list items.
 */
static int
ship_eal_init(struct ship *s, const struct opts *o, uint32_t list_items)
{
	char dev[160], lcore[16], mem[24];
	char *argv[] = {
		(char *)"bench-kernel-rate", (char *)"--no-huge",
		(char *)"-m", mem, (char *)"--no-shconf",
		(char *)"--no-pci", (char *)"--no-telemetry",
		(char *)"--file-prefix", (char *)"bench-krate", (char *)"-l",
		lcore, (char *)"--log-level", (char *)"lib.eal:error",
		(char *)"--vdev", dev, NULL,
	};
	/* The lists, a quarter more for the allocator, and what the rest
	 * took at SHIP_EAL_MEM_MB before sweeps (8192 items). */
	uint64_t mb = ((uint64_t)list_items * SHIP_ITEM_BYTES * 5 / 4 >> 20) +
		SHIP_EAL_MEM_MB / 2;
	cpu_set_t set;
	int cpu = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
			cpu++;
	snprintf(lcore, sizeof(lcore), "%d", cpu);
	snprintf(mem, sizeof(mem), "%" PRIu64, mb > SHIP_EAL_MEM_MB ? mb :
		(uint64_t)SHIP_EAL_MEM_MB);
	if (o->pci != NULL)
		snprintf(dev, sizeof(dev), "gpu_cuda0,dev=%s", o->pci);
	else
		snprintf(dev, sizeof(dev), "gpu_cuda0,dev=%" PRIu64, o->device);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		printf("FAIL: EAL start for gpudev: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	s->eal = true;
	s->dev_id = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (s->dev_id < 0) {
		printf("FAIL: gpudev found no GPU at %s\n", dev);
		return -1;
	}
	return 0;
}

static void
ship_free(struct ship *s)
{
	if (s->running) {
		/* Only after a failure: the kernel gets its quit flag and
		 * whatever time it takes; the process ends after. */
		if (gpucomm_kernel_quit(&s->k) != 0 ||
				gpucomm_cuda_wait(s->stream, SHIP_QUIT_MS) != 0)
			printf("FAIL: the shipped kernel did not end\n");
		s->running = false;
	}
	if (s->k_ok)
		gpucomm_kernel_teardown(&s->k);
	s->k_ok = false;
	if (s->list != NULL &&
			rte_gpu_comm_destroy_list(s->list, s->list_items) < 0)
		printf("rte_gpu_comm_destroy_list: %s\n",
			rte_strerror(rte_errno));
	cudaFreeHost(s->gq);
	cudaFreeHost(s->in);
	cudaFreeHost(s->ts);
	cudaFreeHost(s->verdict);
	cudaFreeHost(s->sum);
	if (s->stream != NULL)
		cudaStreamDestroy(s->stream);
	if (s->eal)
		rte_eal_cleanup();
	memset(s, 0, sizeof(*s));
}

/* The comm list and the app's queue inputs for every shape of the run
 * (shapes_need()). */
static int
ship_setup(struct ship *s, const struct ship_need *nd)
{
	const uint32_t list_items = nd->items;

	s->filled = -1;
	s->max_rings = nd->rings;
	s->list = rte_gpu_comm_create_list(s->dev_id, list_items);
	if (s->list == NULL) {
		printf("FAIL: a comm list of %u items: %s\n", list_items,
			rte_strerror(rte_errno));
		return -1;
	}
	s->list_items = list_items;
	s->pkt_slots = nd->pkt_slots;
	CK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
	CK(cudaHostAlloc((void **)&s->gq, sizeof(*s->gq) * s->max_rings,
		cudaHostAllocMapped));
	CK(cudaHostAlloc((void **)&s->in, sizeof(*s->in) * list_items,
		cudaHostAllocMapped));
	CK(cudaHostAlloc((void **)&s->ts, sizeof(*s->ts) * nd->pkt_slots,
		cudaHostAllocMapped));
	CK(cudaHostAlloc((void **)&s->verdict,
		sizeof(*s->verdict) * nd->pkt_slots, cudaHostAllocMapped));
	CK(cudaHostAlloc((void **)&s->sum, sizeof(*s->sum) * list_items,
		cudaHostAllocMapped));
	return 0;
fail:
	return -1;
}

/*
 * The rings, kernel state and queue inputs of shape sh for passes of n
 * packets; no kernel may run. The entries and side data are written
 * again by the next ship_fill.
 */
static int
ship_shape_set(struct ship *s, const struct shape *sh, uint32_t n)
{
	struct ship_layout *l = &s->lay;
	uint32_t r;
	int rc;

	if (s->k_ok)
		gpucomm_kernel_teardown(&s->k);
	s->k_ok = false;
	s->filled = -1;
	ship_layout_of(n, sh->rings, sh->burst, l);
	if ((size_t)l->rings * l->n_items > s->list_items ||
			(size_t)l->rings * l->n_items * l->burst > s->pkt_slots ||
			l->rings > s->max_rings) {
		printf("FAIL: %u rings of %u items of %u packets: more than "
			"set up for\n", l->rings, l->n_items, l->burst);
		return -1;
	}
	s->workers = sh->workers;
	for (r = 0; r < l->rings; r++)
		s->lists[r] = s->list + (size_t)r * l->n_items;
	rc = gpucomm_kernel_setup(&s->k, s->dev_id, s->lists, l->rings,
		l->n_items, sh->workers);
	if (rc != 0) {
		printf("FAIL: the ring kernel's setup: %s\n", rte_strerror(-rc));
		return -1;
	}
	s->k_ok = true;
	/* The block counters from zero: the kernel continues from them. */
	memset(s->gq, 0, sizeof(*s->gq) * s->max_rings);
	for (r = 0; r < l->rings; r++) {
		struct gpurx_gq *q = &s->gq[r];

		q->items = (struct gpucomm_item *)s->lists[r];
		q->n_items = l->n_items;
		q->burst = l->burst;
		/* No capture: no arena, and no snap length cuts a verdict. */
		q->max_caplen = UINT16_MAX;
		q->in = s->in + (size_t)r * l->n_items;
		q->ts = s->ts + (size_t)r * l->n_items * l->burst;
		q->verdict = s->verdict + (size_t)r * l->n_items * l->burst;
		q->sum = s->sum + (size_t)r * l->n_items;
	}
	return 0;
}

/* Ring slot (r * n_items + idx) of pass item k. */
static size_t
ship_slot(const struct ship_layout *l, uint32_t k)
{
	return (size_t)(k % l->rings) * l->n_items + k / l->rings;
}

static uint32_t
ship_item_pkts(const struct ship_layout *l, uint32_t n, uint32_t k)
{
	return n - k * l->burst < l->burst ? n - k * l->burst : l->burst;
}

/*
 * The items' entries at the packets as the GPU sees them in memory m,
 * and their side data: every packet's own timestamp, as the CPU pass
 * takes it (GPURX_IN_TS); wire length = entry size, as the data set's
 * packets are whole.
 */
static void
ship_fill(struct ship *s, const struct kr_dataset *d, const struct kr_batch *b,
		int m)
{
	const struct ship_layout *l = &s->lay;
	uint32_t k, j;

	if (s->filled == m)
		return;
	for (k = 0; k < l->items; k++) {
		const size_t slot = ship_slot(l, k);
		struct rte_gpu_comm_list *it = &s->list[slot];

		s->in[slot].ts = 0;
		s->in[slot].flags = GPURX_IN_TS;
		for (j = 0; j < ship_item_pkts(l, d->n, k); j++) {
			size_t i = (size_t)k * l->burst + j;

			it->pkt_list[j].addr = (uintptr_t)(b->pkts + d->offs[i]);
			it->pkt_list[j].size = d->lens[i];
			s->ts[slot * l->burst + j] = d->ts[i];
		}
	}
	s->filled = m;
}

/* The shipped kernel on this filter and table, rings fresh. */
static int
ship_start(struct ship *s, const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft)
{
	struct gpurx_kparams p;
	uint32_t r;
	int rc;

	for (r = 0; r < s->lay.rings; r++) {
		rc = gpucomm_ring_init(&s->rings[r], s->dev_id, s->lists[r],
			s->lay.n_items, 0);
		if (rc != 0) {
			printf("FAIL: ring %u init: %s\n", r, rte_strerror(-rc));
			return -1;
		}
	}
	memset(&p, 0, sizeof(p));
	p.gq = s->gq;
	p.prog = prog;
	p.prog_len = prog_len;
	p.ft = ft;
	/* flow_order NULL: flows never end here, so the table's counts
	 * do not depend on the order items are worked on. */
	s->k.kp.bpq = s->workers;
	CK(gpurx_cuda_launch_persistent(&s->k.kp, &p, s->stream));
	s->running = true;
	s->blocks = s->k.kp.n_rings * (s->k.kp.bpq + 1);
	return 0;
fail:
	return -1;
}

/* Quit flag after every item came back; the kernel ends; flag down. */
static int
ship_stop(struct ship *s)
{
	int rc, err;

	if (!s->running)
		return 0;
	rc = gpucomm_kernel_quit(&s->k);
	err = gpucomm_cuda_wait(s->stream, SHIP_QUIT_MS);
	if (rc != 0 || err != 0) {
		printf("FAIL: the shipped kernel did not end on its quit flag: "
			"%s\n", rc != 0 ? rte_strerror(-rc) :
			cudaGetErrorString((cudaError_t)err));
		return -1;
	}
	s->running = false;
	rc = gpucomm_kernel_rearm(&s->k);
	if (rc != 0) {
		printf("FAIL: quit flag rearm: %s\n", rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * One pass: every item published (all fit: each ring has room for its
 * share), then every ring's items collected in order and released.
 * *t_ns: first publish to last DONE seen; *pub_ns: to the last publish;
 * *waits: the collects that found the ring's tail item not yet DONE (0:
 * the CPU never waited for the GPU, it was the bound).
 */
static int
ship_pass(struct ship *s, uint32_t n, double *t_ns, double *pub_ns,
		uint64_t *waits)
{
	const struct ship_layout *l = &s->lay;
	struct rte_gpu_comm_list *it;
	uint64_t t0 = bench_now_ns(), deadline = t0 + SHIP_PASS_TIMEOUT_NS;
	uint64_t spins = 0;
	uint32_t k, r;
	int rc;

	for (k = 0; k < l->items; k++) {
		rc = gpucomm_ring_publish(&s->rings[k % l->rings],
			ship_item_pkts(l, n, k));
		if (rc != 0) {
			printf("FAIL: publishing item %u: %s\n", k,
				rte_strerror(-rc));
			return -1;
		}
	}
	*pub_ns = (double)(bench_now_ns() - t0);
	for (r = 0; r < l->rings; r++) {
		while (gpucomm_ring_inflight(&s->rings[r]) > 0) {
			rc = gpucomm_ring_collect(&s->rings[r], &it);
			if (rc == 0) {
				if ((++spins & 1023) == 0 &&
						bench_now_ns() > deadline) {
					printf("FAIL: ring %u: %u items not done "
						"after %llu s\n", r,
						gpucomm_ring_inflight(&s->rings[r]),
						SHIP_PASS_TIMEOUT_NS / 1000000000ULL);
					return -1;
				}
				continue;
			}
			if (rc < 0 || (rc = gpucomm_ring_release(&s->rings[r])) != 0) {
				printf("FAIL: ring %u: collecting an item: %s\n",
					r, rte_strerror(-rc));
				return -1;
			}
		}
	}
	*t_ns = (double)(bench_now_ns() - t0);
	*waits = spins;
	return 0;
}

/* Every packet's verdict as the CPU pass gives it, from items cut as l:
 * the item's match bit, and the verdict written for a matched packet
 * (0 otherwise). */
static void
ship_verdicts(const struct ship_layout *l, const struct gpurx_item_sum *sum,
		const uint32_t *verdict, uint32_t n, uint32_t *v)
{
	uint32_t k, j;

	for (k = 0; k < l->items; k++) {
		size_t slot = ship_slot(l, k);
		uint32_t np = ship_item_pkts(l, n, k);

		for (j = 0; j < np; j++) {
			uint32_t bits = gpurx_sum_match_word(&sum[slot], j / 32,
				np);

			v[(size_t)k * l->burst + j] = (bits >> (j % 32)) & 1 ?
				verdict[slot * l->burst + j] : 0;
		}
	}
}

/*
 * The block counters of the running shape summed (struct gpurx_gq: the
 * body stores them after each item's DONE, so an item or so a block may
 * be missing while the kernel runs; statistics only).
 */
struct ship_ctr {
	uint64_t items;
	uint64_t busy_ns;
	uint64_t wait_ns;
	uint64_t phase_ns[GPURX_PHASES];
};

static void
ship_counters(const struct ship *s, struct ship_ctr *c)
{
	uint32_t r, b;
	int ph;

	memset(c, 0, sizeof(*c));
	for (r = 0; r < s->lay.rings; r++) {
		const volatile struct gpurx_gq *q = &s->gq[r];

		for (b = 0; b < s->k.kp.bpq && b < GPURX_BLOCKS_PER_QUEUE_MAX; b++) {
			c->items += q->items_done[b];
			c->busy_ns += q->busy_ns[b];
			c->wait_ns += q->wait_ns[b];
			for (ph = 0; ph < GPURX_PHASES; ph++)
				c->phase_ns[ph] += q->phase_ns[ph][b];
		}
	}
}

/* --- One configuration ------------------------------------------------------ */

/* What the CPU pass found, which the GPU must reproduce. */
struct cpu_ref {
	const struct gpurx_flow_table *ft;
	const uint32_t *verdicts;
	struct kr_table_sum sum;
	uint64_t accepted;
	double pps_first;	/* one core, fresh table */
	double pps_steady;	/* one core, table holding every flow */
};

struct vres {
	bool run;
	bool verified;
	bool reps_cut;
	unsigned int blocks;
	unsigned int reps;
	double first_ns;
	struct bench_stats st;	/* pass time, ns */
	struct bench_stats pub;	/* first to last publish of a pass, ns */
	double timed_ns;	/* the timed passes' times summed */
	uint64_t waits;		/* the timed passes' ship_pass waits summed */
	struct ship_ctr ctr;	/* the block counters over the timed passes */
};

/*
 * The shipped kernel: checked pass on a fresh table, warm-up, timed
 * passes. Returns 0 (r filled; r->verified false if the check failed),
 * -1 on a CUDA or ring error.
 */
static int
run_shipped(struct ctx *c, struct gpu_set *g, const struct kr_dataset *d,
		int mem, const struct gpurx_filter *f,
		const struct bpf_vm_insn *dprog, const struct cpu_ref *ref,
		bool full_check, const char *tag,
		struct gpurx_flow_table *ft_host, uint32_t *verdicts_host,
		struct vres *r)
{
	struct ship *s = &c->ship;
	struct gpurx_flow_table hdr;
	struct kr_table_sum sum;
	struct ship_ctr c0;
	char name[192];
	uint64_t k, reps = c->o.reps, warm = c->o.warmup;
	double t, tp;
	uint64_t w;

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "%s %s", tag, SHIP_NAME);
	if (ft_reset(c, g, ref->ft) != 0)
		return -1;
	ship_fill(s, d, &g->batch[mem], mem);
	if (ship_start(s, dprog, f->len, g->ft) != 0)
		goto fail;
	r->blocks = s->blocks;
	if (ship_pass(s, d->n, &r->first_ns, &tp, &w) != 0)
		goto fail;
	r->run = true;

	/* The check: every verdict, then the table (copied on the legacy
	 * stream, which the kernel's non-blocking stream does not hold). */
	ship_verdicts(&s->lay, s->sum, s->verdict, d->n, verdicts_host);
	CK(cudaMemcpy(ft_host, g->ft, g->ft_bytes, cudaMemcpyDeviceToHost));
	r->verified = kr_verdicts_cmp(name, ref->verdicts, verdicts_host, d->n) == 0;
	kr_table_sum(ft_host, &sum);
	if (kr_table_sum_cmp(name, &ref->sum, &sum) != 0)
		r->verified = false;
	if (full_check && r->verified &&
			kr_table_cmp_full(name, ref->ft, ft_host) != 0)
		r->verified = false;
	if (!r->verified)
		return ship_stop(s);

	/* A very slow configuration (packets read over PCIe) would eat the
	 * time budget: it gets the passes that fit in VARIANT_BUDGET_S (it
	 * has had one), and says so; none, when even one does not fit. */
	if ((double)(1 + warm + reps) * r->first_ns * 1e-9 > VARIANT_BUDGET_S) {
		double fit = VARIANT_BUDGET_S / (r->first_ns * 1e-9) - 1;

		warm = 0;
		reps = fit < 1 ? 0 : (uint64_t)fit < reps ? (uint64_t)fit : reps;
		r->reps_cut = true;
	}
	for (k = 0; k < warm; k++)
		if (ship_pass(s, d->n, &t, &tp, &w) != 0)
			goto fail;
	ship_counters(s, &c0);
	for (k = 0; k < reps; k++) {
		if (ship_pass(s, d->n, &t, &tp, &w) != 0)
			goto fail;
		c->samples[k] = t;
		c->pub_samples[k] = tp;
		r->timed_ns += t;
		r->waits += w;
	}
	r->reps = (unsigned int)reps;
	bench_stats_compute(c->samples, reps, &r->st);
	bench_stats_compute(c->pub_samples, reps, &r->pub);

	/* Passes over a table that holds every flow add no flow and
	 * overflow nothing: checks the steady state too. */
	CK(cudaMemcpy(&hdr, g->ft, sizeof(hdr), cudaMemcpyDeviceToHost));
	if (hdr.n_flows != ref->sum.n_flows ||
			hdr.overflow_pkts != ref->sum.overflow_pkts * (1 + warm + reps)) {
		printf("FAIL %s: after %" PRIu64 " passes the table holds %"
			PRIu64 " flows (want %" PRIu64 "), overflow %" PRIu64 "\n",
			name, 1 + warm + reps, hdr.n_flows, ref->sum.n_flows,
			hdr.overflow_pkts);
		r->verified = false;
	}
	if (ship_stop(s) != 0)
		return -1;
	/* After the kernel ended every counter is stored. */
	ship_counters(s, &r->ctr);
	r->ctr.items -= c0.items;
	r->ctr.busy_ns -= c0.busy_ns;
	r->ctr.wait_ns -= c0.wait_ns;
	for (int ph = 0; ph < GPURX_PHASES; ph++)
		r->ctr.phase_ns[ph] -= c0.phase_ns[ph];
	return 0;
fail:
	(void)ship_stop(s);
	return -1;
}

/* The gather floor on this data set. */
static int
run_gather(struct ctx *c, struct gpu_set *g, const struct kr_batch *b,
		struct bench_stats *st)
{
	uint64_t k;
	double t;

	for (k = 0; k < c->o.warmup; k++)
		TIMED(c, t, kr_gather_launch(b, (uint32_t)c->o.window, g->out,
			c->stream));
	for (k = 0; k < c->o.reps; k++) {
		TIMED(c, t, kr_gather_launch(b, (uint32_t)c->o.window, g->out,
			c->stream));
		c->samples[k] = t;
	}
	bench_stats_compute(c->samples, c->o.reps, st);
	return 0;
fail:
	return -1;
}

static void
json_rates(struct bench_json *j, const char *key, uint32_t n,
		const struct bench_stats *st)
{
	bench_json_obj_begin(j, key);
	bench_json_num(j, "median", (double)n / (st->median * 1e-9));
	/* The slow tail: the rate of the p99 pass time. */
	bench_json_num(j, "p99", (double)n / (st->p99 * 1e-9));
	bench_json_num(j, "max", (double)n / (st->min * 1e-9));
	bench_json_num(j, "min", (double)n / (st->max * 1e-9));
	bench_json_obj_end(j);
}

/* ns as "12.3us" */
static const char *
us_str(double ns, char *buf, size_t len)
{
	snprintf(buf, len, "%.2fus", ns / 1e3);
	return buf;
}

/* The body's phases (gpu_body.cuh, phase_mark), in order. */
static const char *const phase_names[GPURX_PHASES] = {
	"load", "stage", "classify", "results",
};

/*
 * The shipped kernel in every shape of the sweep on one (data set,
 * filter, memory), each checked as the default run's is, beside the same
 * gather floor: a line and a JSON result object a shape. With the rate,
 * what tells a per-item bound from a per-packet one: the items a second,
 * the CPU's share of a pass spent publishing, and from the body's own
 * block counters (struct gpurx_gq) how busy the worker blocks were and
 * where an item's time went.
 */
static int
run_sweep(struct ctx *c, struct gpu_set *g, const struct kr_dataset *d,
		size_t fi, enum mem_kind mem, const struct cpu_ref *ref,
		const char *tag, bool full_check,
		struct gpurx_flow_table *ft_host, uint32_t *verdicts_host,
		const struct bench_stats *gst)
{
	const double gather_pps = (double)d->n / (gst->median * 1e-9);
	struct ship *s = &c->ship;
	unsigned int i;
	int ph;

	for (i = 0; i < shape_count(&c->o); i++) {
		char ptag[224], s1[32], s2[32], s3[32], s4[32], s5[32], s6[32];
		char s7[32];
		char phs[160];
		double rate = 0, items_ns = 0, busy = 0, gap = 0;
		uint64_t workers;
		size_t at = 0;
		struct shape sh;
		struct vres vr;
		bool timed;

		shape_at(&c->o, i, &sh);
		if (past_deadline(c)) {
			printf("kernel-rate-sweep %s rings=%u burst=%u workers=%u "
				"SKIPPED (time budget)\n", tag, sh.rings, sh.burst,
				sh.workers);
			continue;
		}
		if (ship_shape_set(s, &sh, d->n) != 0)
			return -1;
		snprintf(ptag, sizeof(ptag), "%s rings=%u burst=%u workers=%u",
			tag, s->lay.rings, sh.burst, sh.workers);
		if (run_shipped(c, g, d, mem, &c->prog[fi], c->dprog[fi], ref,
				full_check, ptag, ft_host, verdicts_host, &vr) != 0)
			return -1;
		if (!vr.verified)
			c->status = BENCH_EXIT_FAIL;
		timed = vr.verified && vr.reps > 0 && vr.ctr.items > 0;
		workers = (uint64_t)s->lay.rings * s->k.kp.bpq;
		if (timed) {
			rate = (double)d->n / (vr.st.median * 1e-9);
			items_ns = (double)vr.ctr.busy_ns / (double)vr.ctr.items;
			busy = (double)vr.ctr.busy_ns / ((double)workers *
				vr.timed_ns);
			/* A worker's time an item outside the body: DONE's
			 * release, the hand-over, and waiting for work (every
			 * item is published at once: at a pass's ends only). */
			gap = (double)workers * vr.timed_ns /
				(double)vr.ctr.items - items_ns;
		}

		bench_json_obj_begin(&c->j, NULL);
		bench_json_str(&c->j, "mem", mem_names[mem]);
		bench_json_str(&c->j, "filter", filters[fi].name);
		bench_json_str(&c->j, "pkts", d->fixed64 ? "64B" : "mix");
		bench_json_int(&c->j, "flows", d->flows);
		bench_json_int(&c->j, "packets", d->n);
		bench_json_int(&c->j, "rings", s->lay.rings);
		bench_json_int(&c->j, "rings_asked", sh.rings);
		bench_json_int(&c->j, "burst", sh.burst);
		bench_json_int(&c->j, "items", s->lay.items);
		bench_json_int(&c->j, "workers_asked", sh.workers);
		/* What gpucomm_fit_workers gave a ring. */
		bench_json_int(&c->j, "workers", s->k.kp.bpq);
		bench_json_int(&c->j, "blocks", vr.blocks);
		bench_json_bool(&c->j, "verified", vr.verified);
		json_rates(&c->j, "floor_gather_pps", d->n, gst);
		if (vr.run)
			bench_json_num(&c->j, "first_pass_pps",
				(double)d->n / (vr.first_ns * 1e-9));
		if (timed) {
			bench_json_int(&c->j, "reps", vr.reps);
			bench_json_bool(&c->j, "reps_cut", vr.reps_cut);
			json_rates(&c->j, "rate_pps", d->n, &vr.st);
			bench_json_num(&c->j, "rate_vs_gather", rate / gather_pps);
			bench_json_num(&c->j, "items_per_s",
				(double)s->lay.items / (vr.st.median * 1e-9));
			bench_json_num(&c->j, "publish_ns_median", vr.pub.median);
			bench_json_num(&c->j, "publish_fraction",
				vr.pub.median / vr.st.median);
			bench_json_num(&c->j, "worker_busy_fraction", busy);
			bench_json_num(&c->j, "cpu_waits_per_pass",
				(double)vr.waits / vr.reps);
			bench_json_obj_begin(&c->j, "item_ns");
			bench_json_num(&c->j, "busy", items_ns);
			bench_json_num(&c->j, "gap", gap);
			bench_json_num(&c->j, "wait", (double)vr.ctr.wait_ns /
				(double)vr.ctr.items);
			for (ph = 0; ph < GPURX_PHASES; ph++)
				bench_json_num(&c->j, phase_names[ph],
					(double)vr.ctr.phase_ns[ph] /
					(double)vr.ctr.items);
			bench_json_obj_end(&c->j);
			bench_json_stats(&c->j, "pass_time", &vr.st);
		}
		bench_json_obj_end(&c->j);

		if (!timed) {
			printf("kernel-rate-sweep %s NO RESULT (%s)\n", ptag,
				!vr.verified ? "check failed" : vr.reps == 0 ?
				"time budget" : "no block counters");
			fflush(stdout);
			continue;
		}
		for (ph = 0; ph < GPURX_PHASES && at < sizeof(phs); ph++)
			at += (size_t)snprintf(phs + at, sizeof(phs) - at, " %s=%s",
				phase_names[ph], us_str((double)vr.ctr.phase_ns[ph] /
				(double)vr.ctr.items, s6, sizeof(s6)));
		printf("kernel-rate-sweep %s bpq=%u blocks=%u rate=%s p99=%s "
			"first=%s gather=%s (%.1f%%) items=%.2fM/s publish=%.0f%% "
			"cpu_waits=%.0f "
			"busy=%.0f%% item=%s gap=%s wait=%s%s%s verified\n", ptag,
			s->k.kp.bpq, vr.blocks, pps_str(rate, s1, sizeof(s1)),
			pps_str((double)d->n / (vr.st.p99 * 1e-9), s2, sizeof(s2)),
			pps_str((double)d->n / (vr.first_ns * 1e-9), s3, sizeof(s3)),
			pps_str(gather_pps, s4, sizeof(s4)), 100 * rate / gather_pps,
			(double)s->lay.items / (vr.st.median * 1e-9) / 1e6,
			100 * vr.pub.median / vr.st.median,
			(double)vr.waits / vr.reps, 100 * busy,
			us_str(items_ns, s5, sizeof(s5)),
			us_str(gap, s7, sizeof(s7)),
			us_str((double)vr.ctr.wait_ns / (double)vr.ctr.items, s6,
				sizeof(s6)), phs, vr.reps_cut ? " (few reps)" : "");
		fflush(stdout);
	}
	return 0;
}

/*
 * --cpu-only with a sweep: each (rings, burst) shape's cutting of the
 * pass checked without a GPU (the workers do not change it). The items
 * are classified ring by ring, each ring's in its order, as the rings'
 * workers take them, by the CPU's code into the per-item verdicts and
 * match bits the kernel writes; the verdicts read back through the map
 * the GPU run uses (ship_verdicts) and the table must equal the
 * reference pass's. That is what the GPU run's check relies on: every
 * packet in one item, the slot map, and counts that do not depend on
 * the order items are worked on. ft: a table of the reference's size;
 * v: d->n verdicts (scratch).
 */
static int
layout_check(struct ctx *c, const struct kr_dataset *d, size_t fi,
		const struct cpu_ref *ref, const char *dtag,
		struct gpurx_flow_table *ft, uint32_t *v)
{
	const struct gpurx_filter *f = &c->prog[fi];
	const unsigned int nw = c->o.n_workers > 0 ? c->o.n_workers : 1;
	unsigned int i;

	for (i = 0; i < shape_count(&c->o); i += nw) {
		struct gpurx_item_sum *sum;
		struct ship_layout l;
		struct kr_table_sum ts;
		uint32_t *verdict, r, idx, j;
		struct shape sh;
		char name[192];
		size_t slots;
		bool same;

		shape_at(&c->o, i, &sh);
		ship_layout_of(d->n, sh.rings, sh.burst, &l);
		slots = (size_t)l.rings * l.n_items;
		sum = calloc(slots, sizeof(*sum));
		verdict = calloc(slots * l.burst, sizeof(*verdict));
		if (sum == NULL || verdict == NULL) {
			free(sum);
			free(verdict);
			printf("FAIL: out of memory for %zu items\n", slots);
			return -1;
		}
		gpurx_flow_table_init(ft, ref->ft->capacity, 0);
		for (r = 0; r < l.rings; r++) {
			for (idx = 0; idx < l.n_items; idx++) {
				const uint32_t k = idx * l.rings + r;
				const size_t slot = (size_t)r * l.n_items + idx;

				if (k >= l.items)
					break;
				for (j = 0; j < ship_item_pkts(&l, d->n, k); j++) {
					const size_t p = (size_t)k * l.burst + j;
					const uint32_t vv = gpurx_classify_pkt(
						d->set.buf + d->offs[p], d->lens[p],
						d->lens[p], d->ts[p], f->insns,
						f->len, ft, NULL);

					if (vv == 0)
						continue;
					verdict[slot * l.burst + j] = vv;
					sum[slot].match[j / 32] |= 1u << (j % 32);
				}
			}
		}
		snprintf(name, sizeof(name), "filter=%s %s rings=%u burst=%u",
			filters[fi].name, dtag, l.rings, l.burst);
		ship_verdicts(&l, sum, verdict, d->n, v);
		kr_table_sum(ft, &ts);
		same = kr_verdicts_cmp(name, ref->verdicts, v, d->n) == 0 &&
			kr_table_sum_cmp(name, &ref->sum, &ts) == 0;
		free(sum);
		free(verdict);
		if (!same)
			c->status = BENCH_EXIT_FAIL;
		printf("kernel-rate-sweep-cpu %s items=%u items_per_ring=%u %s\n",
			name, l.items, l.n_items, same ? "same" : "DIFFERENT");
		bench_json_obj_begin(&c->j, NULL);
		bench_json_str(&c->j, "mem", "cpu-layout");
		bench_json_str(&c->j, "filter", filters[fi].name);
		bench_json_str(&c->j, "pkts", d->fixed64 ? "64B" : "mix");
		bench_json_int(&c->j, "flows", d->flows);
		bench_json_int(&c->j, "packets", d->n);
		bench_json_int(&c->j, "rings", l.rings);
		bench_json_int(&c->j, "rings_asked", sh.rings);
		bench_json_int(&c->j, "burst", l.burst);
		bench_json_int(&c->j, "items", l.items);
		bench_json_int(&c->j, "items_per_ring", l.n_items);
		bench_json_bool(&c->j, "same", same);
		bench_json_obj_end(&c->j);
	}
	return 0;
}

/*
 * The shipped kernel and the gather floor for one (data set, filter,
 * memory). Writes the JSON result object and the summary line.
 */
static int
run_config(struct ctx *c, struct gpu_set *g, const struct kr_dataset *d,
		size_t fi, enum mem_kind mem, const struct cpu_ref *ref,
		const struct kr_read_bytes *rb, const char *dtag, bool full_check,
		struct gpurx_flow_table *ft_host, uint32_t *verdicts_host)
{
	const struct kr_batch *b = &g->batch[mem];
	const struct gpurx_filter *f = &c->prog[fi];
	struct vres vr;
	struct bench_stats gst;
	double bw = mem == MEM_GPU ? c->bw.dev_median : c->bw.host_median;
	double floor_pps = bw / rb->sectors, gather_pps, best_pps = 0, frac;
	/* Host memory: the packets' header lines at the measured rate of
	 * scattered 64-byte reads, the descriptors at streaming bandwidth. */
	double line_floor_pps = 1.0 / (rb->lines / c->bw.scatter_median[SCATTER_HDR] +
		KR_DESC_BYTES / c->bw.host_median);
	char tag[160], s1[32], s2[32], s3[32], s4[32], s5[32], s6[80];
	bool all_ok = true, timed;

	snprintf(tag, sizeof(tag), "mem=%s filter=%s %s", mem_names[mem],
		filters[fi].name, dtag);
	if (run_gather(c, g, b, &gst) != 0)
		return -1;
	gather_pps = (double)d->n / (gst.median * 1e-9);
	if (sweeping(&c->o))
		return run_sweep(c, g, d, fi, mem, ref, tag, full_check,
			ft_host, verdicts_host, &gst);

	if (run_shipped(c, g, d, mem, f, c->dprog[fi], ref, full_check, tag,
			ft_host, verdicts_host, &vr) != 0)
		return -1;
	all_ok = vr.verified;
	if (!all_ok)
		c->status = BENCH_EXIT_FAIL;
	/* Only a configuration with timed passes has a rate. */
	timed = vr.verified && vr.reps > 0;
	if (timed)
		best_pps = (double)d->n / (vr.st.median * 1e-9);

	bench_json_obj_begin(&c->j, NULL);
	bench_json_str(&c->j, "mem", mem_names[mem]);
	bench_json_str(&c->j, "filter", filters[fi].name);
	bench_json_str(&c->j, "expr", filters[fi].expr);
	bench_json_int(&c->j, "cbpf_insns", f->len);
	bench_json_str(&c->j, "pkts", d->fixed64 ? "64B" : "mix");
	bench_json_int(&c->j, "flows", d->flows);
	bench_json_int(&c->j, "flows_seen", (int64_t)ref->sum.n_flows);
	bench_json_int(&c->j, "flow_table_slots", ref->ft->capacity);
	bench_json_int(&c->j, "packets", d->n);
	bench_json_num(&c->j, "wire_bytes_per_pkt", (double)d->wire_bytes / d->n);
	bench_json_int(&c->j, "accepted", (int64_t)ref->accepted);
	bench_json_obj_begin(&c->j, "read_bytes_per_pkt");
	bench_json_num(&c->j, "need", rb->need);
	bench_json_num(&c->j, "sectors", rb->sectors);
	bench_json_num(&c->j, "window", rb->window);
	bench_json_num(&c->j, "header_lines", rb->lines);
	bench_json_obj_end(&c->j);
	if (mem == MEM_HOST)
		bench_json_num(&c->j, "line_floor_pps", line_floor_pps);
	bench_json_num(&c->j, "bandwidth_Bps", bw);
	bench_json_num(&c->j, "floor_pps", floor_pps);
	json_rates(&c->j, "floor_gather_pps", d->n, &gst);
	bench_json_num(&c->j, "cpu_classify_pps_first", ref->pps_first);
	bench_json_num(&c->j, "cpu_classify_pps", ref->pps_steady);
	bench_json_bool(&c->j, "verified", all_ok);
	bench_json_bool(&c->j, "time_budget_cut", false);
	/* The kernel timed, kept under the key of the shapes it replaced. */
	bench_json_str(&c->j, "best", timed ? SHIP_NAME : NULL);
	if (timed) {
		json_rates(&c->j, "rate_pps", d->n, &vr.st);
		bench_json_num(&c->j, "first_pass_pps",
			(double)d->n / (vr.first_ns * 1e-9));
		/* Share of the measured bandwidth the kernel moves, as
		 * bytes it must read (32-byte sectors) per second. */
		bench_json_num(&c->j, "bw_fraction", best_pps * rb->sectors / bw);
		bench_json_num(&c->j, "speedup_vs_cpu_core",
			best_pps / ref->pps_steady);
	}
	bench_json_obj_begin(&c->j, "kernel");
	bench_json_str(&c->j, "name", SHIP_NAME);
	bench_json_int(&c->j, "rings", c->ship.lay.rings);
	bench_json_int(&c->j, "burst", c->ship.lay.burst);
	bench_json_int(&c->j, "blocks", vr.blocks);
	bench_json_bool(&c->j, "verified", vr.verified);
	if (vr.run)
		bench_json_num(&c->j, "first_pass_pps",
			(double)d->n / (vr.first_ns * 1e-9));
	if (vr.verified) {
		bench_json_int(&c->j, "reps", vr.reps);
		bench_json_bool(&c->j, "reps_cut", vr.reps_cut);
		if (vr.reps > 0)
			bench_json_stats(&c->j, "pass_time", &vr.st);
	}
	bench_json_obj_end(&c->j);
	bench_json_obj_end(&c->j);

	if (!timed) {
		printf("kernel-rate %s NO RESULT (%s)\n", tag,
			all_ok ? "time budget" : "check failed");
		return 0;
	}
	frac = best_pps * rb->sectors / bw;
	if (mem == MEM_HOST)
		snprintf(s6, sizeof(s6), " lines=%.2f/pkt line_floor=%.1fMpps "
			"(%.0f%%)", rb->lines, line_floor_pps / 1e6,
			100 * best_pps / line_floor_pps);
	else
		s6[0] = '\0';
	printf("kernel-rate %s rate=%s p99=%s best=%s%s floor=%s floor_gather=%s "
		"read=%.0fB/pkt bw_used=%.0f%%%s cpu1=%s x%.0f %s\n", tag,
		pps_str(best_pps, s1, sizeof(s1)),
		pps_str((double)d->n / (vr.st.p99 * 1e-9), s2, sizeof(s2)),
		SHIP_NAME, vr.reps_cut ? "(few reps)" : "",
		pps_str(floor_pps, s3, sizeof(s3)),
		pps_str(gather_pps, s4, sizeof(s4)), rb->sectors, 100 * frac, s6,
		pps_str(ref->pps_steady, s5, sizeof(s5)),
		best_pps / ref->pps_steady, all_ok ? "verified" : "CHECK FAILED");
	return 0;
}

/* --- Data set loop ---------------------------------------------------------- */

static int
run_dataset(struct ctx *c, bool fixed64)
{
	struct kr_dataset d;
	struct gpu_set g;
	struct gpurx_flow_table *ft_cpu = NULL, *ft_host = NULL;
	uint32_t *v_cpu = NULL, *v_host = NULL, *v_win = NULL;
	bool have_gpu = !c->o.cpu_only;
	uint64_t t0;
	double gen_s;
	unsigned int fl;
	int ret = -1;

	memset(&g, 0, sizeof(g));
	t0 = bench_now_ns();
	if (kr_dataset_make(&d, (uint32_t)c->o.packets, c->o.seed, fixed64) != 0)
		return -1;
	gen_s = (double)(bench_now_ns() - t0) * 1e-9;
	printf("# kernel-rate: %u packets of %s (%.0f B mean, %.1f MB buffer) "
		"generated in %.1f s\n", d.n, fixed64 ? "64 B" : "64..1500 B",
		(double)d.wire_bytes / d.n, (double)kr_dataset_buf_bytes(&d) / 1e6,
		gen_s);
	v_cpu = malloc(sizeof(*v_cpu) * d.n);
	v_host = malloc(sizeof(*v_host) * d.n);
	v_win = malloc(sizeof(*v_win) * d.n);
	if (v_cpu == NULL || v_host == NULL || v_win == NULL) {
		printf("FAIL: out of memory for verdicts\n");
		goto out;
	}
	if (have_gpu) {
		if (gpu_set_alloc(c, &g, &d) != 0)
			goto out;
		/* The entries and side data, of this data set. */
		c->ship.filled = -1;
	}

	for (fl = 0; fl < c->o.n_flows; fl++) {
		uint32_t cap = kr_flow_capacity((uint32_t)c->o.flows[fl]);
		size_t ft_bytes = gpurx_flow_table_bytes(cap);
		struct kr_read_bytes rb;
		char dtag[96], fs[32];
		size_t fi;

		if (past_deadline(c)) {
			printf("kernel-rate pkts=%s flows=%s SKIPPED (time budget "
				"of %" PRIu64 " s)\n", fixed64 ? "64B" : "mix",
				count_str(c->o.flows[fl], fs, sizeof(fs)),
				c->o.budget_s);
			continue;
		}
		kr_dataset_set_flows(&d, (uint32_t)c->o.flows[fl], c->o.seed);
		kr_dataset_read_bytes(&d, (uint32_t)c->o.window, &rb);
		snprintf(dtag, sizeof(dtag), "flows=%s pkts=%s",
			count_str(c->o.flows[fl], fs, sizeof(fs)),
			fixed64 ? "64B" : "mix");
		/* The CPU's table, and a second one of the same size: the
		 * GPU's copied back (pinned), or the CPU's scratch. */
		free(ft_cpu);
		ft_cpu = aligned_alloc(64, ft_bytes);
		if (have_gpu) {
			cudaFree(g.ft);
			g.ft = NULL;
			cudaFreeHost(ft_host);
			ft_host = NULL;
			CK(cudaMalloc((void **)&g.ft, ft_bytes));
			g.ft_bytes = ft_bytes;
			CK(cudaMallocHost((void **)&ft_host, ft_bytes));
			if (gpu_set_upload(c, &g, &d) != 0)
				goto out;
		} else {
			free(ft_host);
			ft_host = aligned_alloc(64, ft_bytes);
		}
		if (ft_cpu == NULL || ft_host == NULL) {
			printf("FAIL: out of memory for a %u-slot flow table\n", cap);
			goto out;
		}

		for (fi = 0; fi < N_FILTERS; fi++) {
			const struct gpurx_filter *f = &c->prog[fi];
			uint32_t n_steady = d.n < CPU_STEADY_PKTS ? d.n :
				CPU_STEADY_PKTS;
			struct cpu_ref ref;
			char s1[32], s2[32];
			uint64_t t1, t2, t3, t4;
			bool full_done = false;
			int m;

			if (!c->o.filter[fi])
				continue;
			if (past_deadline(c)) {
				printf("kernel-rate filter=%s %s SKIPPED (time "
					"budget)\n", filters[fi].name, dtag);
				continue;
			}
			/* The reference, timed: one core, fresh table; then
			 * again over a copy of the table, which now holds
			 * every flow (what the GPU's timed passes do), on
			 * the first CPU_STEADY_PKTS packets (time budget). */
			memset(&ref, 0, sizeof(ref));
			gpurx_flow_table_init(ft_cpu, cap, 0);
			t1 = bench_now_ns();
			ref.accepted = kr_cpu_pass(&d, d.n, f->insns, f->len,
				0, ft_cpu, v_cpu);
			t2 = bench_now_ns();
			kr_table_sum(ft_cpu, &ref.sum);
			memcpy(ft_host, ft_cpu, ft_bytes);
			t3 = bench_now_ns();
			(void)kr_cpu_pass(&d, n_steady, f->insns, f->len, 0,
				ft_host, v_win);
			t4 = bench_now_ns();
			ref.pps_first = (double)d.n * 1e9 / (double)(t2 - t1);
			ref.pps_steady = (double)n_steady * 1e9 / (double)(t4 - t3);
			ref.ft = ft_cpu;
			ref.verdicts = v_cpu;

			if (!have_gpu) {
				/* The gather floor's window: would the first
				 * window bytes alone decide every packet? */
				struct gpurx_flow_table *ft_w = ft_host;
				struct kr_table_sum ws;
				bool same;

				gpurx_flow_table_init(ft_w, cap, 0);
				(void)kr_cpu_pass(&d, d.n, f->insns, f->len,
					(uint32_t)c->o.window, ft_w, v_win);
				kr_table_sum(ft_w, &ws);
				same = kr_verdicts_cmp("window", v_cpu, v_win, d.n) == 0 &&
					kr_table_sum_cmp("window", &ref.sum, &ws) == 0 &&
					kr_table_cmp_full("window", ft_cpu, ft_w) == 0;
				if (!same)
					c->status = BENCH_EXIT_FAIL;
				printf("kernel-rate-cpu filter=%s %s cpu1=%s (first "
					"pass %s) accept=%.1f%% flows_seen=%" PRIu64
					" read=%.0fB/pkt lines=%.2f/pkt window%u=%s\n",
					filters[fi].name, dtag,
					pps_str(ref.pps_steady, s1, sizeof(s1)),
					pps_str(ref.pps_first, s2, sizeof(s2)),
					100.0 * (double)ref.accepted / d.n,
					ref.sum.n_flows, rb.sectors, rb.lines,
					(unsigned int)c->o.window,
					same ? "same" : "DIFFERENT");
				bench_json_obj_begin(&c->j, NULL);
				bench_json_str(&c->j, "mem", "cpu");
				bench_json_str(&c->j, "filter", filters[fi].name);
				bench_json_str(&c->j, "expr", filters[fi].expr);
				bench_json_int(&c->j, "cbpf_insns", f->len);
				bench_json_str(&c->j, "pkts", fixed64 ? "64B" : "mix");
				bench_json_int(&c->j, "flows", d.flows);
				bench_json_int(&c->j, "flows_seen",
					(int64_t)ref.sum.n_flows);
				bench_json_int(&c->j, "packets", d.n);
				bench_json_int(&c->j, "accepted", (int64_t)ref.accepted);
				bench_json_num(&c->j, "header_lines_per_pkt", rb.lines);
				bench_json_num(&c->j, "cpu_classify_pps_first",
					ref.pps_first);
				bench_json_num(&c->j, "cpu_classify_pps", ref.pps_steady);
				bench_json_bool(&c->j, "window_same", same);
				bench_json_obj_end(&c->j);
				if (sweeping(&c->o) && layout_check(c, &d, fi,
						&ref, dtag, ft_host, v_win) != 0)
					goto out;
				continue;
			}
			for (m = 0; m < MEM_MAX; m++) {
				if (!c->o.mem[m])
					continue;
				if (past_deadline(c)) {
					printf("kernel-rate mem=%s filter=%s %s "
						"SKIPPED (time budget)\n",
						mem_names[m], filters[fi].name, dtag);
					continue;
				}
				/* Key by key once per data set, with the filter
				 * that accepts every flow; the order-free sums
				 * (and every verdict) for the rest. */
				if (run_config(c, &g, &d, fi, (enum mem_kind)m,
						&ref, &rb, dtag, fi == 0 && !full_done,
						ft_host, v_host) != 0)
					goto out;
				full_done = true;
				fflush(stdout);
			}
		}
	}
	ret = 0;
fail:
out:
	if (have_gpu) {
		cudaDeviceSynchronize();
		gpu_set_free(&g, &d);
		cudaFreeHost(ft_host);
	} else {
		free(ft_host);
	}
	free(ft_cpu);
	free(v_cpu);
	free(v_host);
	free(v_win);
	kr_dataset_free(&d);
	return ret;
}

int
main(int argc, char **argv)
{
	struct ctx c;
	struct opts *o = &c.o;
	char errbuf[512];
	struct ship_need need;
	bool tiny;
	size_t fi;
	int ret, m;

	ret = bench_self_test_arg(argc, argv);
	if (ret >= 0)
		return ret;
	memset(&c, 0, sizeof(c));
	o->packets = DEFAULT_PACKETS;
	o->reps = DEFAULT_REPS;
	o->warmup = DEFAULT_WARMUP;
	o->seed = 1;	/* bench-bpf-cpu's */
	o->flows[0] = 1000;
	o->flows[1] = 1000000;
	o->n_flows = 2;
	o->sizes[0] = o->sizes[1] = true;
	o->mem[MEM_GPU] = o->mem[MEM_HOST] = true;
	for (size_t fi = 0; fi < N_FILTERS; fi++)
		o->filter[fi] = true;
	o->window = DEFAULT_WINDOW;
	o->budget_s = DEFAULT_BUDGET_S;
	ret = parse_args(argc, argv, o);
	if (ret != 0)
		return ret > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
	/* Checked with --cpu-only too: the same options fail alike. */
	if (shapes_need(o, &need) != 0)
		return BENCH_EXIT_USAGE;
	tiny = o->packets <= TINY_PACKETS;
	c.deadline_ns = bench_now_ns() + o->budget_s * 1000000000ULL;
	c.status = BENCH_EXIT_OK;

	if (!o->cpu_only) {
		ret = kr_device_open(o->pci, (int)o->device, &c.gi);
		if (ret != 0) {
			if (kr_error_is_no_gpu(ret)) {
				printf("SKIP: no GPU: %s (%s); --cpu-only runs "
					"the CPU part\n",
					cudaGetErrorString((cudaError_t)ret),
					cudaGetErrorName((cudaError_t)ret));
				return BENCH_EXIT_SKIP;
			}
			printf("FAIL: CUDA device %s: %s\n", o->pci != NULL ?
				o->pci : "(--device)",
				cudaGetErrorString((cudaError_t)ret));
			return BENCH_EXIT_FAIL;
		}
		if (o->mem[MEM_HOST] && !c.gi.can_map_host) {
			printf("SKIP: %s cannot map host memory\n", c.gi.name);
			return BENCH_EXIT_SKIP;
		}
		struct shape sh;

		/* Without a sweep the one shape is set here, for good. */
		shape_at(o, 0, &sh);
		if (ship_eal_init(&c.ship, o, need.items) != 0 ||
				ship_setup(&c.ship, &need) != 0 ||
				(!sweeping(o) && ship_shape_set(&c.ship, &sh,
					(uint32_t)o->packets) != 0)) {
			ship_free(&c.ship);
			return BENCH_EXIT_FAIL;
		}
		printf("# kernel-rate: GPU %d %s, %d SMs, cc %d.%d, L2 %d MB, "
			"driver %d, runtime %d\n", c.gi.dev, c.gi.name,
			c.gi.sm_count, c.gi.cc_major, c.gi.cc_minor,
			c.gi.l2_bytes >> 20, c.gi.driver_version,
			c.gi.runtime_version);
	}
	c.samples = calloc(o->reps > BW_REPS ? o->reps : BW_REPS,
		sizeof(*c.samples));
	c.pub_samples = calloc(o->reps, sizeof(*c.pub_samples));
	if (c.samples == NULL || c.pub_samples == NULL) {
		free(c.samples);
		free(c.pub_samples);
		printf("FAIL: out of memory\n");
		ship_free(&c.ship);
		return BENCH_EXIT_FAIL;
	}
	for (fi = 0; fi < N_FILTERS; fi++) {
		if (gpurx_filter_compile(filters[fi].expr, DLT_EN10MB,
				FILTER_SNAPLEN, &c.prog[fi], errbuf,
				sizeof(errbuf)) != 0) {
			printf("FAIL: filter \"%s\": %s\n", filters[fi].expr, errbuf);
			c.status = BENCH_EXIT_FAIL;
			goto out;
		}
	}

	/* The kernels read the programs from device memory. */
	for (fi = 0; !o->cpu_only && fi < N_FILTERS; fi++) {
		size_t len = sizeof(struct bpf_vm_insn) * c.prog[fi].len;

		if (cudaMalloc((void **)&c.dprog[fi], len) != cudaSuccess ||
				cudaMemcpy(c.dprog[fi], c.prog[fi].insns, len,
					cudaMemcpyHostToDevice) != cudaSuccess) {
			printf("FAIL: cannot copy filter \"%s\" to the GPU\n",
				filters[fi].expr);
			c.status = BENCH_EXIT_FAIL;
			goto out;
		}
	}

	/* A sweep has a file of its own: run-all's kernel_rate.json stays
	 * the default run's. */
	if (bench_json_open(&c.j, o->out, sweeping(o) ? (o->cpu_only ?
			"kernel_rate_sweep_cpu.json" : "kernel_rate_sweep.json") :
			o->cpu_only ? "kernel_rate_cpu.json" :
			"kernel_rate.json") != 0) {
		c.status = BENCH_EXIT_FAIL;
		goto out;
	}
	bench_json_obj_begin(&c.j, NULL);
	bench_json_str(&c.j, "bench", "kernel_rate");
	bench_json_host(&c.j);
	if (!o->cpu_only) {
		bench_json_obj_begin(&c.j, "gpu");
		bench_json_str(&c.j, "name", c.gi.name);
		bench_json_int(&c.j, "sm_count", c.gi.sm_count);
		bench_json_int(&c.j, "cc_major", c.gi.cc_major);
		bench_json_int(&c.j, "cc_minor", c.gi.cc_minor);
		bench_json_int(&c.j, "l2_bytes", c.gi.l2_bytes);
		bench_json_int(&c.j, "mem_bytes", (int64_t)c.gi.mem_bytes);
		bench_json_int(&c.j, "driver_version", c.gi.driver_version);
		bench_json_int(&c.j, "runtime_version", c.gi.runtime_version);
		bench_json_obj_end(&c.j);
	}
	bench_json_obj_begin(&c.j, "config");
	bench_json_int(&c.j, "packets", (int64_t)o->packets);
	bench_json_int(&c.j, "reps", (int64_t)o->reps);
	bench_json_int(&c.j, "warmup", (int64_t)o->warmup);
	bench_json_int(&c.j, "seed", (int64_t)o->seed);
	bench_json_int(&c.j, "window", (int64_t)o->window);
	bench_json_int(&c.j, "budget_s", (int64_t)o->budget_s);
	bench_json_bool(&c.j, "cpu_only", o->cpu_only);
	if (sweeping(o)) {
		bench_json_obj_begin(&c.j, "sweep");
		bench_json_int(&c.j, "shapes", shape_count(o));
		bench_json_int(&c.j, "list_items", need.items);
		bench_json_obj_end(&c.j);
	}
	bench_json_obj_end(&c.j);

	if (!o->cpu_only) {
		if (cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking) !=
				cudaSuccess ||
				cudaEventCreate(&c.ev0) != cudaSuccess ||
				cudaEventCreate(&c.ev1) != cudaSuccess) {
			printf("FAIL: cannot create a CUDA stream or events\n");
			c.status = BENCH_EXIT_FAIL;
			goto close;
		}
		if (bandwidth(&c, tiny) != 0) {
			c.status = BENCH_EXIT_FAIL;
			goto close;
		}
	}
	bench_json_arr_begin(&c.j, "results");
	/* 64-byte frames first: the 1.2 Gpps goal is about them, and they
	 * must not be what the time budget cuts. */
	for (m = 0; m < 2; m++) {
		bool fixed64 = m == 0;

		if (!o->sizes[fixed64 ? 0 : 1])
			continue;
		if (past_deadline(&c)) {
			printf("kernel-rate pkts=%s SKIPPED (time budget of %"
				PRIu64 " s)\n", fixed64 ? "64B" : "mix", o->budget_s);
			continue;
		}
		if (run_dataset(&c, fixed64) != 0) {
			c.status = BENCH_EXIT_FAIL;
			break;
		}
	}
	bench_json_arr_end(&c.j);
close:
	bench_json_obj_end(&c.j);
	if (bench_json_close(&c.j) != 0)
		c.status = BENCH_EXIT_FAIL;
out:
	ship_free(&c.ship);
	for (fi = 0; fi < N_FILTERS; fi++) {
		gpurx_filter_free(&c.prog[fi]);
		if (c.dprog[fi] != NULL)
			cudaFree(c.dprog[fi]);
	}
	if (c.ev0 != NULL)
		cudaEventDestroy(c.ev0);
	if (c.ev1 != NULL)
		cudaEventDestroy(c.ev1);
	if (c.stream != NULL)
		cudaStreamDestroy(c.stream);
	free(c.samples);
	free(c.pub_samples);
	if (c.status != BENCH_EXIT_OK)
		printf("FAIL: bench-kernel-rate: see the FAIL lines above\n");
	return c.status;
}
