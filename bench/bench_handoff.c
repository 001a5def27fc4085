/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-handoff: CPU -> GPU -> CPU handoff latency through a gpudev
 * communication list, against its floor and against launching a kernel
 * per burst, in one run on the first GPU.
 *
 *  handoff  the CPU fills an item with a burst of B mbufs and publishes it
 *           through the ring library's lcore side (lib/gpucomm: packet
 *           entries and count, rte_wmb, with packets in GPU memory
 *           rte_gpu_wmb, READY); the library's persistent kernel (a
 *           dispatcher warp polling the statuses, worker blocks) hands it
 *           to a worker, whose body sums every byte of every packet, and
 *           releases DONE; the CPU spins until it collects it. Timed from
 *           before the fill to the CPU seeing DONE: the ring that ships.
 *           With lap tags (--lap-tags, default on) the worker loads an
 *           item's count and first 32 descriptors while it polls for
 *           READY; off, one PCIe round trip after it.
 *  floor    a bare ping-pong of one flag: the CPU writes it, a kernel
 *           sees it and writes it back, the CPU sees that. In registered
 *           host memory (where gpudev puts the status without GDRCopy)
 *           and, where the driver can CPU-map GPU memory (GDRCopy), in
 *           GPU memory (where gpudev puts it then).
 *  floor_host_load  (packets in host memory) the floor above (its flag
 *           where the comm list's status is) whose kernel, after seeing
 *           the flag, reads one 128-byte line of registered host memory
 *           picked by the flag's value (a new line each round) and folds
 *           the word into its answer: the least an item of host-memory
 *           packets costs, one more PCIe round trip.
 *  launch   fill and publish, then the library's item kernel with the
 *           same body launched + cudaStreamSynchronize per burst.
 *  empty    an empty kernel launch + cudaStreamSynchronize.
 *  wmb      rte_gpu_wmb() alone (publish calls it every burst with
 *           packets in GPU memory).
 *
 * Bursts of 1, 32, 256 and 1024 packets, 64-byte packets and a random
 * 64..1500-byte mix, rotating over a pool of mbufs larger than the GPU
 * and CPU caches. Times from rte_rdtsc_precise(); warm-up rounds first,
 * then >= 10000 measured rounds per case; median, p99, mean.
 *
 * --pkt-mem gpu puts the packets' data in GPU memory (an extbuf mbuf pool
 * over rte_gpu_mem_alloc, filled once through cudaMemcpy), where a NIC
 * writes it with GPUDirect RDMA: the kernel's packet reads become device
 * memory reads, the descriptors stay in host memory. Results go to
 * handoff_gpu_pkts.json instead of handoff.json.
 *
 * Usage: bench-handoff [EAL options] -- [--reps N] [--warmup N]
 *        [--bursts N[,N...]] [--sizes 64,mix] [--pool N] [--seed N]
 *        [--pkt-mem host|gpu] [--lap-tags on|off] [--timeout-ms N]
 *        [--out DIR]
 *        bench-handoff --self-test
 * Exit: 0 done, 1 failure (timeout, wrong checksum, failed call),
 * 2 usage, 77 no GPU (skipped).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench_common.h"
#include "gpucomm_ring.h"
#include "handoff_kernels.h"

#define N_ITEMS 4
#define MAX_BURSTS 8
#define MAX_MBUF_DATA 1500
#define MAX_CHUNKS 256
/* The ping-pong kernel gives up after this long without work. */
#define KERNEL_TIMEOUT_NS (5ULL * 1000000000ULL)
/* The ring's kernel ends this soon after its quit flag. */
#define KERNEL_QUIT_MS 1000
/* The floor + load's lines: one a round, 64 MiB at most (past the 50 MB
 * L2 of an H100 or H200), so a line comes round again only after more
 * than an L2 of others. */
#define LOAD_LINES_MAX 524288
/* Each line a GPU L2 line (two of the CPU's); its first word is read. */
#define LOAD_BYTES 128
#define LOAD_WORDS (LOAD_BYTES / sizeof(uint32_t))

struct opts {
	uint64_t reps;
	uint64_t warmup;
	uint64_t bursts[MAX_BURSTS];
	unsigned int n_bursts;
	bool sizes[2];		/* 64 B, the mix: size_names[] */
	uint64_t pool;
	uint64_t seed;
	uint64_t timeout_ms;
	uint64_t idle_us;	/* diagnostic: CPU idles this long before polling DONE */
	int pkt_gpu;		/* packet data in GPU memory (--pkt-mem gpu) */
	int no_tags;		/* --lap-tags off */
	const char *out;
};

static const char *const size_names[] = { "64", "mix" };
static const char *const pkt_mem_names[] = { "host", "gpu", NULL };
static const char *const lap_tags_names[] = { "on", "off", NULL };

struct pool_reg {
	int16_t dev_id;
	unsigned int n;
	void *addr[MAX_CHUNKS];
	int err;
};

struct env {
	int16_t dev_id;
	struct rte_gpu_info info;
	struct hk_gpu_info gi;
	struct rte_mempool *mp;
	struct pool_reg reg;
	struct rte_mbuf **mb;	/* every mbuf of the pool, held */
	/* --pkt-mem gpu: the pool's data buffers in GPU memory, and a host
	 * copy of their bytes the CPU reads (it cannot read GPU memory). */
	uint8_t *gpu_data;
	size_t gpu_data_len;
	uint8_t *gpu_data_copy;
	uint64_t *sum;		/* byte sum of mb[i]'s packet */
	uint32_t n_mb;
	uint32_t next_mb;	/* rotation over mb[] */
	struct rte_gpu_comm_list *list;
	struct gpucomm_ring ring;	/* over list */
	struct gpucomm_kernel k;	/* quit flag, dispatch state */
	bool k_ok;
	bool kernel_alive;	/* a ring kernel did not quit: free nothing */
	bool status_in_gpu;	/* comm list status in CPU-mapped GPU memory */
	uint64_t timeout_cycles;
	double *samples;
	/* Medians over the last handoff case's measured rounds, by the GPU's
	 * clock: READY seen -> count and descriptors held -> DONE stored. */
	double gpu_load_ns, gpu_work_ns;
	/* Share of those rounds whose items needed no read after READY. */
	double gpu_prefetched;
	struct bench_json j;
	int status;
};

static int
parse_args(int argc, char **argv, void *opts)
{
	struct opts *o = opts;
	struct bench_opt_list bursts = {
		.v = o->bursts, .max_n = MAX_BURSTS, .n = &o->n_bursts,
	};
	struct bench_opt_names sizes = {
		.names = size_names, .sel = o->sizes, .n = RTE_DIM(o->sizes),
	};
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 10000000, "N",
			"round trips timed per case (default 10000)"),
		GPUAPP_OPT_UINT_ENTRY("warmup", &o->warmup, 0, 10000000, "N",
			"round trips before them (default 1000)"),
		BENCH_OPT_LIST_ENTRY("bursts", &bursts, 1,
			RTE_GPU_COMM_LIST_PKTS_MAX, "N[,N...]",
			"packets per handoff, at most 8\n"
			"(default 1,32,256,1024)"),
		BENCH_OPT_NAMES_ENTRY("sizes", &sizes, "64,mix",
			"packet sizes: 64 B, the mix (default both)"),
		GPUAPP_OPT_UINT_ENTRY("pool", &o->pool, RTE_GPU_COMM_LIST_PKTS_MAX,
			1 << 22, "N", "mbufs in the pool (default 32768)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"seed of the traffic mix (default 1)"),
		GPUAPP_OPT_CHOICE_ENTRY("pkt-mem", &o->pkt_gpu, 0, pkt_mem_names,
			"host|gpu", "where the packet data lies (default host)"),
		GPUAPP_OPT_CHOICE_ENTRY("lap-tags", &o->no_tags, 0, lap_tags_names,
			"on|off", "the ring's lap tags: the worker loads an\n"
			"item's first 32 entries with READY (on, the\n"
			"default), or after it (off: the ring before them)"),
		GPUAPP_OPT_UINT_ENTRY("timeout-ms", &o->timeout_ms, 1, 600000,
			"N", "a round trip's time limit (default 2000)"),
		GPUAPP_OPT_UINT_ENTRY("cpu-idle-us", &o->idle_us, 0, 1000000,
			"N", "diagnostic: the CPU idles this long before\n"
			"polling DONE (default 0)"),
		BENCH_OPT_OUT_ENTRY(&o->out, "where the JSON result goes"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

/* --- Packets ------------------------------------------------------------ */

static void
register_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
		struct rte_mempool_memhdr *memhdr, unsigned int idx __rte_unused)
{
	struct pool_reg *reg = opaque;

	if (reg->err != 0)
		return;
	if (reg->n == MAX_CHUNKS) {
		reg->err = E2BIG;
		return;
	}
	if (rte_gpu_mem_register(reg->dev_id, memhdr->len, memhdr->addr) < 0) {
		reg->err = rte_errno != 0 ? rte_errno : EPERM;
		return;
	}
	reg->addr[reg->n++] = memhdr->addr;
}

static void
unregister_chunks(struct env *e)
{
	while (e->reg.n > 0) {
		void *addr = e->reg.addr[--e->reg.n];

		if (rte_gpu_mem_unregister(e->reg.dev_id, addr) < 0) {
			BENCH_LOG(ERR, "rte_gpu_mem_unregister(%p): %s\n", addr,
				rte_strerror(rte_errno));
			e->status = BENCH_EXIT_FAIL;
		}
	}
}

/* The bytes of mbuf m's data as the CPU can read them. */
static const uint8_t *
packet_bytes(const struct env *e, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	return e->gpu_data == NULL ? d : e->gpu_data_copy + (d - e->gpu_data);
}

/*
 * --pkt-mem gpu: an mbuf pool whose data buffers are GPU memory, as a
 * NIC writing through GPUDirect RDMA uses (headers stay in host memory:
 * the kernel reads only the comm list and the packet bytes).
 */
static int
packets_pool_gpu(struct env *e, uint64_t *rng)
{
	struct rte_pktmbuf_extmem ext;
	int err;

	e->gpu_data_len = RTE_ALIGN_CEIL((size_t)e->n_mb *
		RTE_MBUF_DEFAULT_BUF_SIZE, 65536);
	e->gpu_data = rte_gpu_mem_alloc(e->dev_id, e->gpu_data_len, 65536);
	if (e->gpu_data == NULL) {
		BENCH_LOG(ERR, "rte_gpu_mem_alloc(%zu) for packet data: %s\n",
			e->gpu_data_len, rte_strerror(rte_errno));
		return -1;
	}
	e->gpu_data_copy = malloc(e->gpu_data_len);
	if (e->gpu_data_copy == NULL) {
		BENCH_LOG(ERR, "host copy of the packet data (%zu B): %s\n",
			e->gpu_data_len, strerror(errno));
		return -1;
	}
	/* Random bytes everywhere, so every mbuf's data is random wherever
	 * the pool put its buffer; one copy to the GPU. */
	rand64_fill(e->gpu_data_copy, e->gpu_data_len, rng);
	err = gpucuda_copy(e->gpu_data, e->gpu_data_copy, e->gpu_data_len);
	if (err != 0) {
		BENCH_LOG(ERR, "packet data to GPU memory: %s\n", gpucuda_strerror(err));
		return -1;
	}
	ext.buf_ptr = e->gpu_data;
	ext.buf_iova = RTE_BAD_IOVA;
	ext.buf_len = e->gpu_data_len;
	ext.elt_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	e->mp = rte_pktmbuf_pool_create_extbuf("bench_handoff", e->n_mb, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id(), &ext, 1);
	if (e->mp == NULL) {
		BENCH_LOG(ERR, "rte_pktmbuf_pool_create_extbuf(%u mbufs): %s\n",
			e->n_mb, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* Pool of mbufs, all held by the benchmark, data random. */
static int
packets_create(struct env *e, const struct opts *o, uint64_t *rng)
{
	uint32_t i;

	e->n_mb = (uint32_t)o->pool;
	if (o->pkt_gpu) {
		if (packets_pool_gpu(e, rng) != 0)
			return -1;
	} else {
		/* No per-lcore cache: every mbuf can be taken. */
		e->mp = rte_pktmbuf_pool_create("bench_handoff", e->n_mb, 0, 0,
				RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
		if (e->mp == NULL) {
			BENCH_LOG(ERR, "rte_pktmbuf_pool_create(%u mbufs): %s\n",
				e->n_mb, rte_strerror(rte_errno));
			return -1;
		}
		e->reg.dev_id = e->dev_id;
		rte_mempool_mem_iter(e->mp, register_chunk, &e->reg);
		if (e->reg.err != 0 || e->reg.n == 0) {
			BENCH_LOG(ERR, "registering the mbuf pool with the GPU: %s\n",
				e->reg.n == 0 && e->reg.err == 0 ? "no memory chunk" :
				rte_strerror(e->reg.err));
			return -1;
		}
	}
	e->mb = calloc(e->n_mb, sizeof(*e->mb));
	e->sum = calloc(e->n_mb, sizeof(*e->sum));
	if (e->mb == NULL || e->sum == NULL)
		return -1;
	if (rte_pktmbuf_alloc_bulk(e->mp, e->mb, e->n_mb) != 0) {
		BENCH_LOG(ERR, "rte_pktmbuf_alloc_bulk(%u) failed\n", e->n_mb);
		free(e->mb);
		e->mb = NULL;
		return -1;
	}
	for (i = 0; i < e->n_mb; i++) {
		if (rte_pktmbuf_tailroom(e->mb[i]) < MAX_MBUF_DATA) {
			BENCH_LOG(ERR, "mbuf data room too small\n");
			return -1;
		}
		if (e->gpu_data == NULL)
			rand64_fill(rte_pktmbuf_mtod(e->mb[i], void *),
				MAX_MBUF_DATA, rng);
	}
	return 0;
}

/* Sets every mbuf's length (fixed, or 0 for the random mix). */
static uint64_t
packets_set_len(struct env *e, unsigned int fixed, uint64_t *rng)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < e->n_mb; i++) {
		struct rte_mbuf *m = e->mb[i];
		uint16_t len = fixed ? fixed :
			(uint16_t)(64 + rand64_next(rng) % (MAX_MBUF_DATA - 64 + 1));
		const uint8_t *d;
		uint64_t s = 0;
		uint16_t k;

		/* The data stays where it is: reset only moves offsets. */
		rte_pktmbuf_reset(m);
		if (rte_pktmbuf_append(m, len) == NULL)
			return 0;
		d = packet_bytes(e, m);
		for (k = 0; k < len; k++)
			s += d[k];
		e->sum[i] = s;
		total += len;
	}
	e->next_mb = 0;
	return total;
}

/* The next burst of n mbufs of the rotation, and their byte sum. */
static struct rte_mbuf **
packets_next(struct env *e, uint32_t n, uint64_t *sum)
{
	struct rte_mbuf **b;
	uint64_t s = 0;
	uint32_t i;

	if (e->next_mb + n > e->n_mb)
		e->next_mb = 0;
	b = &e->mb[e->next_mb];
	for (i = 0; i < n; i++)
		s += e->sum[e->next_mb + i];
	e->next_mb += n;
	*sum = s;
	return b;
}

/* --- Cases --------------------------------------------------------------- */

/* The ring over the list, afresh (all items FREE), for one case. */
static bool
ring_reset(struct env *e, const struct opts *o)
{
	int rc = gpucomm_ring_init(&e->ring, e->dev_id, e->list, N_ITEMS,
		(o->pkt_gpu ? GPUCOMM_RING_GPU_WMB : 0) |
		(o->no_tags ? 0 : GPUCOMM_RING_TAGS));

	if (rc == 0)
		return true;
	BENCH_LOG(ERR, "ring init: %s\n", rte_strerror(-rc));
	e->status = BENCH_EXIT_FAIL;
	return false;
}

/* Fills the head item with the burst and publishes it READY; false
 * (status set) on error. */
static inline bool
publish(struct env *e, struct rte_mbuf **b, uint32_t burst)
{
	int rc = gpucomm_ring_fill_mbufs(&e->ring, b, burst);

	if (rc == 0)
		rc = gpucomm_ring_publish(&e->ring, burst);
	if (rc == 0)
		return true;
	BENCH_LOG(ERR, "ring publish(%u): %s\n", burst, rte_strerror(-rc));
	e->status = BENCH_EXIT_FAIL;
	return false;
}

/* Spins until the oldest item is DONE and collected; false on timeout
 * or error (status set for an error, not for a timeout). */
static bool
wait_done(struct env *e, uint64_t deadline)
{
	struct rte_gpu_comm_list *it;
	unsigned int spins = 0;
	int rc;

	while ((rc = gpucomm_ring_collect(&e->ring, &it)) == 0)
		if ((++spins & 1023) == 0 && rte_rdtsc() > deadline)
			return false;
	if (rc == 1)
		return true;
	BENCH_LOG(ERR, "ring collect: %s\n", rte_strerror(-rc));
	e->status = BENCH_EXIT_FAIL;
	return false;
}

/* The collected item back to FREE. */
static bool
item_release(struct env *e)
{
	int rc = gpucomm_ring_release(&e->ring);

	if (rc == 0)
		return true;
	BENCH_LOG(ERR, "ring release: %s\n", rte_strerror(-rc));
	e->status = BENCH_EXIT_FAIL;
	return false;
}

/* Without a kernel (populate alone, or after a failure): the oldest item
 * marked DONE by hand, collected and released. */
static bool
item_return(struct env *e)
{
	if (rte_gpu_comm_set_status(gpucomm_ring_inflight_item(&e->ring, 0),
			RTE_GPU_COMM_LIST_DONE) != 0) {
		e->status = BENCH_EXIT_FAIL;
		return false;
	}
	return wait_done(e, rte_rdtsc() + e->timeout_cycles) && item_release(e);
}

/* Every round's report against what the CPU expected; false on the first
 * mismatch (printed). */
static bool
check_reports(const struct hk_report *rep, const uint64_t *want,
		uint64_t rounds, uint32_t burst)
{
	uint64_t r;

	for (r = 0; r < rounds; r++) {
		if (rep[r].state == HK_STATE_OK && rep[r].round == r &&
				rep[r].num_pkts == burst && rep[r].checksum == want[r])
			continue;
		BENCH_LOG(ERR, "handoff burst=%u round %" PRIu64
			": GPU report state %u, round %" PRIu64 ", %u packets, sum %"
			PRIu64 "; expected round %" PRIu64 ", %u packets, sum %"
			PRIu64 "\n", burst, r, rep[r].state, rep[r].round,
			rep[r].num_pkts, rep[r].checksum, r, burst, want[r]);
		return false;
	}
	return true;
}

/* Median of each GPU phase over n reports, into e->gpu_load_ns and
 * e->gpu_work_ns (own scratch: e->samples still holds the round times). */
static void
gpu_phases(struct env *e, const struct hk_report *rep, uint64_t n)
{
	double *v = malloc(sizeof(*v) * (n ? n : 1));
	struct bench_stats st;
	uint64_t i;

	e->gpu_load_ns = e->gpu_work_ns = e->gpu_prefetched = 0;
	if (v == NULL || n == 0) {
		free(v);
		return;
	}
	for (i = 0; i < n; i++)
		e->gpu_prefetched += rep[i].prefetched != 0;
	e->gpu_prefetched /= (double)n;
	for (i = 0; i < n; i++)
		v[i] = (double)(rep[i].t_loaded - rep[i].t_seen);
	if (bench_stats_compute(v, n, &st) == 0)
		e->gpu_load_ns = st.median;
	for (i = 0; i < n; i++)
		v[i] = (double)(rep[i].t_done - rep[i].t_loaded);
	if (bench_stats_compute(v, n, &st) == 0)
		e->gpu_work_ns = st.median;
	free(v);
}

/*
 * Handoff through the ring library's persistent kernel; samples in
 * e->samples. The kernel's per-round reports (byte sums) stay in GPU
 * memory during the run and are all checked after it.
 */
static size_t
run_handoff(struct env *e, const struct opts *o, uint32_t burst)
{
	struct hk_ring *p = NULL;
	uint64_t round, total = o->warmup + o->reps;
	struct hk_report *rep;
	uint64_t *want;
	size_t n = 0;
	int err;

	rep = calloc(total, sizeof(*rep));
	want = calloc(total, sizeof(*want));
	if (rep == NULL || want == NULL) {
		BENCH_LOG(ERR, "out of memory for %" PRIu64 " rounds\n", total);
		free(rep);
		free(want);
		e->status = BENCH_EXIT_FAIL;
		return 0;
	}
	if (!ring_reset(e, o) || gpucomm_kernel_rearm(&e->k) != 0) {
		free(rep);
		free(want);
		e->status = BENCH_EXIT_FAIL;
		return 0;
	}
	e->k.kp.bpq = GPUCOMM_WORKERS_MAX;
	e->k.kp.lap_tags = !o->no_tags;
	err = hk_ring_start(&e->k.kp, burst, total, &p);
	if (err != 0) {
		BENCH_LOG(ERR, "launching the ring's persistent kernel: %s\n",
			gpucuda_strerror(err));
		free(rep);
		free(want);
		e->status = BENCH_EXIT_FAIL;
		return 0;
	}

	for (round = 0; round < total; round++) {
		struct rte_mbuf **b = packets_next(e, burst, &want[round]);
		uint64_t t0, t1;

		t0 = rte_rdtsc_precise();
		if (!publish(e, b, burst))
			break;
		/* --cpu-idle-us: does the CPU's polling of DONE slow the GPU?
		 * (diagnostic; the handoff then takes at least this long) */
		if (o->idle_us != 0)
			rte_delay_us_block((unsigned int)o->idle_us);
		if (!wait_done(e, rte_rdtsc() + e->timeout_cycles)) {
			BENCH_LOG(ERR, "handoff burst=%u round %" PRIu64
				": item not DONE within %" PRIu64 " ms\n",
				burst, round, o->timeout_ms);
			e->status = BENCH_EXIT_FAIL;
			break;
		}
		t1 = rte_rdtsc_precise();
		if (!item_release(e))
			break;
		if (round >= o->warmup)
			e->samples[n++] = bench_cycles_to_ns(t1 - t0);
	}

	/* The kernel quits on its flag once nothing READY is left for it:
	 * every round came back, or, after a failure, not (then it may
	 * never end). */
	if (gpucomm_kernel_quit(&e->k) != 0)
		e->status = BENCH_EXIT_FAIL;
	err = hk_ring_finish(p, rep, round, KERNEL_QUIT_MS);
	if (err != 0) {
		BENCH_LOG(ERR, "ring's persistent kernel: %s\n",
			err == hk_error_not_ready() ? "did not quit" : gpucuda_strerror(err));
		e->kernel_alive = err == hk_error_not_ready();
		e->status = BENCH_EXIT_FAIL;
	} else if (e->status == BENCH_EXIT_OK &&
			!check_reports(rep, want, round, burst)) {
		e->status = BENCH_EXIT_FAIL;
	} else if (e->status == BENCH_EXIT_OK) {
		gpu_phases(e, rep + o->warmup, round - o->warmup);
	}
	free(rep);
	free(want);
	return e->status == BENCH_EXIT_OK ? n : 0;
}

/* Launch per burst: publish (as the handoff does), launch the item
 * kernel, sync. */
static size_t
run_launch(struct env *e, const struct opts *o, struct hk_launcher *l,
		uint32_t burst)
{
	uint64_t round, total = o->warmup + o->reps;
	size_t n = 0;
	int err;

	if (!ring_reset(e, o))
		return 0;
	err = hk_launcher_prepare(l, &e->k.kp);
	if (err != 0) {
		BENCH_LOG(ERR, "launch: dispatch state: %s\n", gpucuda_strerror(err));
		e->status = BENCH_EXIT_FAIL;
		return 0;
	}
	for (round = 0; round < total; round++) {
		uint64_t want, got = 0, t0, t1;
		struct rte_mbuf **b = packets_next(e, burst, &want);
		uint32_t idx = e->ring.head;

		t0 = rte_rdtsc_precise();
		if (!publish(e, b, burst))
			break;
		err = hk_launch_item(l, &e->k.kp, idx, e->ring.published - 1,
			burst, &got);
		t1 = rte_rdtsc_precise();
		if (err != 0) {
			BENCH_LOG(ERR, "launch burst=%u: %s\n", burst,
				gpucuda_strerror(err));
			e->status = BENCH_EXIT_FAIL;
			item_return(e);
			break;
		}
		/* The kernel stored DONE before it ended. */
		if (!wait_done(e, rte_rdtsc() + e->timeout_cycles) ||
				!item_release(e)) {
			BENCH_LOG(ERR, "launch burst=%u round %" PRIu64
				": item not DONE after its kernel\n", burst, round);
			e->status = BENCH_EXIT_FAIL;
			break;
		}
		if (got != want) {
			BENCH_LOG(ERR, "launch burst=%u round %" PRIu64 ": sum %"
				PRIu64 ", expected %" PRIu64 "\n", burst, round,
				got, want);
			e->status = BENCH_EXIT_FAIL;
			break;
		}
		if (round >= o->warmup)
			e->samples[n++] = bench_cycles_to_ns(t1 - t0);
	}
	return e->status == BENCH_EXIT_OK ? n : 0;
}

/* Fill and publish alone (no GPU involved), for the breakdown. */
static size_t
run_populate(struct env *e, const struct opts *o, uint32_t burst)
{
	uint64_t round, total = o->warmup + o->reps;
	size_t n = 0;

	if (!ring_reset(e, o))
		return 0;
	for (round = 0; round < total; round++) {
		uint64_t want, t0, t1;
		struct rte_mbuf **b = packets_next(e, burst, &want);

		t0 = rte_rdtsc_precise();
		if (!publish(e, b, burst))
			break;
		t1 = rte_rdtsc_precise();
		if (!item_return(e))
			break;
		if (round >= o->warmup)
			e->samples[n++] = bench_cycles_to_ns(t1 - t0);
	}
	return e->status == BENCH_EXIT_OK ? n : 0;
}

/* The floor + one dependent host load: the lines its kernel reads, the
 * first word of line i holding i. */
struct load_lines {
	uint32_t *addr;		/* registered host memory */
	uint32_t n;
};

/*
 * Ping-pong of one flag through the ring library's flag echo: host is the
 * CPU's pointer, the kernel gets dev (the same for registered host
 * memory). wc: the CPU's mapping is write-combined (GDRCopy), so each
 * store is followed by a store fence to leave the write-combining buffer
 * at once. ld: the echo loads a line of it between ask and answer
 * (gpucomm_echo_start_load), which the answer proves: round k reads line
 * k % n.
 */
static size_t
run_pingpong(struct env *e, const struct opts *o, volatile uint32_t *host,
		uint32_t *dev, bool wc, const struct load_lines *ld)
{
	struct gpucomm_echo *echo = NULL;
	struct gpucomm_echo_state st;
	uint64_t k, total = o->warmup + o->reps;
	size_t n = 0;
	int err;

	*host = 0;
	rte_wmb(); /* the reset reaches memory before the kernel starts */
	err = gpucomm_echo_start_load(dev, 0, KERNEL_TIMEOUT_NS,
		ld != NULL ? ld->addr : NULL, ld != NULL ? ld->n : 0, LOAD_BYTES,
		&echo);
	if (err != 0) {
		BENCH_LOG(ERR, "launching the ping-pong kernel: %s\n",
			gpucuda_strerror(err));
		e->status = BENCH_EXIT_FAIL;
		return 0;
	}
	for (k = 0; k < total; k++) {
		uint32_t ask = (uint32_t)(2 * k + 1), v;
		const uint32_t want = ask + 1 +
			(ld != NULL ? 2 * (uint32_t)(k % ld->n) : 0);
		uint64_t t0, t1;

		t0 = rte_rdtsc_precise();
		v = gpucomm_echo_ask(host, wc, ask, want,
			t0 + e->timeout_cycles);
		t1 = rte_rdtsc_precise();
		if (v != want) {
			BENCH_LOG(ERR, "ping-pong round %" PRIu64 ": no answer within %"
				PRIu64 " ms (flag %u, expected %u)\n", k,
				o->timeout_ms, v, want);
			e->status = BENCH_EXIT_FAIL;
			break;
		}
		if (k >= o->warmup)
			e->samples[n++] = bench_cycles_to_ns(t1 - t0);
	}
	__atomic_store_n(host, GPUCOMM_ECHO_QUIT, __ATOMIC_RELAXED);
	rte_wmb(); /* the quit reaches the kernel (WC buffer drained) */
	err = gpucomm_echo_finish(echo, &st);
	if (err != 0 || st.timed_out) {
		BENCH_LOG(ERR, "ping-pong kernel: %s\n",
			err != 0 ? gpucuda_strerror(err) : "timed out waiting");
		e->status = BENCH_EXIT_FAIL;
	}
	return e->status == BENCH_EXIT_OK ? n : 0;
}

/*
 * The lines of the floor + load: one per round up to LOAD_LINES_MAX (a
 * line read again only that many rounds later, out of any GPU cache),
 * in EAL memory registered with gpudev, as the mempool's packets are.
 * 0, or -1 (said) with nothing kept.
 */
static int
load_lines_create(struct env *e, const struct opts *o, struct load_lines *ld)
{
	uint64_t total = o->warmup + o->reps;
	size_t len;

	ld->n = (uint32_t)RTE_MIN(total, (uint64_t)LOAD_LINES_MAX);
	len = (size_t)ld->n * LOAD_BYTES;
	ld->addr = rte_zmalloc("bench_load_lines", len, LOAD_BYTES);
	if (ld->addr == NULL) {
		BENCH_LOG(ERR, "%zu bytes of host memory for the floor + load\n",
			len);
		return -1;
	}
	for (uint32_t i = 0; i < ld->n; i++)
		ld->addr[(size_t)i * LOAD_WORDS] = i;
	if (rte_gpu_mem_register(e->dev_id, len, ld->addr) < 0) {
		BENCH_LOG(ERR, "registering the floor + load's lines: %s\n",
			rte_strerror(rte_errno));
		rte_free(ld->addr);
		ld->addr = NULL;
		return -1;
	}
	return 0;
}

static void
load_lines_free(struct env *e, struct load_lines *ld)
{
	if (ld->addr == NULL)
		return;
	if (rte_gpu_mem_unregister(e->dev_id, ld->addr) < 0) {
		/* Still mapped for the GPU: keep the memory. */
		BENCH_LOG(ERR, "rte_gpu_mem_unregister: %s\n",
			rte_strerror(rte_errno));
		e->status = BENCH_EXIT_FAIL;
	} else {
		rte_free(ld->addr);
	}
	ld->addr = NULL;
}

/* --- Reporting ------------------------------------------------------------ */

static void
json_case(struct env *e, const char *kind, const char *size, uint32_t burst,
		const struct bench_stats *st)
{
	bench_json_obj_begin(&e->j, NULL);
	bench_json_str(&e->j, "kind", kind);
	if (size != NULL)
		bench_json_str(&e->j, "pkt_size", size);
	if (burst != 0) {
		bench_json_int(&e->j, "burst", burst);
		/* One worker block takes an item, whatever its size. */
		bench_json_int(&e->j, "blocks", 1);
	}
	bench_json_stats(&e->j, "latency", st);
	bench_json_obj_end(&e->j);
}

static bool
measure(struct env *e, size_t n, struct bench_stats *st)
{
	return n > 0 && bench_stats_compute(e->samples, n, st) == 0;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.reps = 10000,
		.warmup = 1000,
		.bursts = { 1, 32, 256, 1024 },
		.n_bursts = 4,
		.sizes = { true, true },
		.pool = 32768,
		.seed = 1,
		.timeout_ms = 2000,
	};
	struct env e = { .status = BENCH_EXIT_OK };
	struct bench_stats st_floor_host, st_floor_gpu, st_floor_load, st_empty,
		st_wmb;
	struct load_lines ld = { NULL, 0 };
	struct hk_launcher *launcher = NULL;
	bool have_floor_gpu = false;
	const struct bench_stats *floor;
	uint32_t *flag_host = NULL;
	void *flag_gpu = NULL, *flag_gpu_cpu = NULL;
	uint64_t rng;
	unsigned int s, b;
	size_t n;
	int ret, err;

	ret = bench_start(argc, argv, parse_args, &o);
	if (ret >= 0)
		return ret;
	rng = rand64_seed(o.seed);

	ret = bench_first_gpu(&e.dev_id, &e.info);
	if (ret >= 0)
		return ret;
	err = hk_device_init(e.info.name, &e.gi);
	if (err != 0) {
		bool skip = hk_error_is_no_gpu(err);

		printf("%s: CUDA runtime cannot use gpudev %d (%s): %s\n",
			skip ? "SKIP" : "FAIL", e.dev_id, e.info.name,
			gpucuda_strerror(err));
		rte_eal_cleanup();
		return skip ? BENCH_EXIT_SKIP : BENCH_EXIT_FAIL;
	}
	e.timeout_cycles = bench_ns_to_cycles(o.timeout_ms * 1000000ULL);
	e.samples = calloc(o.warmup + o.reps, sizeof(double));
	if (e.samples == NULL) {
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	printf("# bench-handoff: gpudev %d (%s), CUDA device %d '%s' sm_%d%d, "
		"%d SMs, driver %d, runtime %d, spin sync %s, lcore %u, "
		"timer overhead %.0f ns\n", e.dev_id, e.info.name, e.gi.cuda_dev,
		e.gi.name, e.gi.cc_major, e.gi.cc_minor, e.gi.sm_count,
		e.gi.driver_version, e.gi.runtime_version,
		e.gi.spin_sched ? "yes" : "no (default scheduling)",
		rte_lcore_id(), bench_timer_overhead_ns());
	fflush(stdout);

	if (packets_create(&e, &o, &rng) != 0) {
		e.status = BENCH_EXIT_FAIL;
		goto out;
	}
	e.list = rte_gpu_comm_create_list(e.dev_id, N_ITEMS);
	if (e.list == NULL) {
		BENCH_LOG(ERR, "rte_gpu_comm_create_list: %s\n",
			rte_strerror(rte_errno));
		e.status = BENCH_EXIT_FAIL;
		goto out;
	}
	e.status_in_gpu = (void *)e.list[0].status_h != (void *)e.list[0].status_d;
	err = gpucomm_kernel_setup(&e.k, e.dev_id, &e.list, 1, N_ITEMS,
		GPUCOMM_WORKERS_MAX);
	if (err != 0) {
		BENCH_LOG(ERR, "ring kernel setup: %s\n", rte_strerror(-err));
		e.status = BENCH_EXIT_FAIL;
		goto out;
	}
	e.k_ok = true;
	err = hk_launcher_create(&launcher);
	if (err != 0) {
		BENCH_LOG(ERR, "launcher: %s\n", gpucuda_strerror(err));
		e.status = BENCH_EXIT_FAIL;
		goto out;
	}

	/* Both packet memories in one results directory. */
	if (bench_json_open(&e.j, o.out, o.pkt_gpu ? "handoff_gpu_pkts.json" :
			"handoff.json") != 0) {
		e.status = BENCH_EXIT_FAIL;
		goto out;
	}
	bench_json_obj_begin(&e.j, NULL);
	bench_json_str(&e.j, "bench", "handoff");
	bench_json_host(&e.j);
	bench_json_obj_begin(&e.j, "gpu");
	bench_json_str(&e.j, "name", e.gi.name);
	bench_json_str(&e.j, "gpudev_name", e.info.name);
	bench_json_int(&e.j, "cuda_device", e.gi.cuda_dev);
	bench_json_int(&e.j, "sm_count", e.gi.sm_count);
	bench_json_int(&e.j, "cc", e.gi.cc_major * 10 + e.gi.cc_minor);
	bench_json_int(&e.j, "cuda_driver_version", e.gi.driver_version);
	bench_json_int(&e.j, "cuda_runtime_version", e.gi.runtime_version);
	bench_json_int(&e.j, "rdma_flush_options", e.gi.rdma_flush_options);
	bench_json_obj_end(&e.j);
	bench_json_obj_begin(&e.j, "config");
	bench_json_int(&e.j, "reps", (int64_t)o.reps);
	bench_json_int(&e.j, "warmup", (int64_t)o.warmup);
	bench_json_int(&e.j, "pool_mbufs", e.n_mb);
	bench_json_int(&e.j, "comm_items", N_ITEMS);
	bench_json_int(&e.j, "threads_per_block", HK_THREADS);
	bench_json_str(&e.j, "ring", "lib/gpucomm: dispatcher warp + worker "
		"blocks, one item per worker");
	bench_json_str(&e.j, "status_memory", e.status_in_gpu ?
		"gpu (CPU-mapped with GDRCopy)" : "host (registered)");
	bench_json_str(&e.j, "packet_memory", o.pkt_gpu ?
		"gpu (extbuf pool over rte_gpu_mem_alloc)" : "host (registered)");
	bench_json_bool(&e.j, "spin_sync", e.gi.spin_sched != 0);
	bench_json_bool(&e.j, "lap_tags", !o.no_tags);
	bench_json_int(&e.j, "lcore", rte_lcore_id());
	bench_json_num(&e.j, "timer_overhead_ns", bench_timer_overhead_ns());
	bench_json_obj_end(&e.j);
	bench_json_arr_begin(&e.j, "results");

	/* rte_gpu_wmb alone: publish pays it every burst with packets in GPU
	 * memory. */
	for (n = 0; n < o.warmup + o.reps; n++) {
		uint64_t t0 = rte_rdtsc_precise(), t1;

		if (rte_gpu_wmb(e.dev_id) < 0) {
			BENCH_LOG(ERR, "rte_gpu_wmb: %s\n", rte_strerror(rte_errno));
			e.status = BENCH_EXIT_FAIL;
			goto end_json;
		}
		t1 = rte_rdtsc_precise();
		if (n >= o.warmup)
			e.samples[n - o.warmup] = bench_cycles_to_ns(t1 - t0);
	}
	measure(&e, o.reps, &st_wmb);
	json_case(&e, "wmb", NULL, 0, &st_wmb);
	printf("handoff wmb median=%.3fus p99=%.3fus mean=%.3fus "
		"(cuFlushGPUDirectRDMAWrites %s)\n", st_wmb.median / 1e3,
		st_wmb.p99 / 1e3, st_wmb.mean / 1e3,
		/* The driver's rule (cuda_probe.c): flush only where the
		 * host can and the GPU's own ordering does not cover it. */
		!(e.gi.rdma_flush_options & 1) ? "not supported: CPU fence only" :
		e.gi.rdma_writes_ordering < 100 ? "called by the driver" :
		"not needed, RDMA writes ordered for the GPU's own kernels: CPU fence only");

	/* Floor in registered host memory. */
	flag_host = rte_zmalloc("bench_flag", RTE_CACHE_LINE_SIZE,
			RTE_CACHE_LINE_SIZE);
	if (flag_host == NULL ||
			rte_gpu_mem_register(e.dev_id, RTE_CACHE_LINE_SIZE, flag_host) < 0) {
		BENCH_LOG(ERR, "flag in host memory: %s\n", rte_strerror(rte_errno));
		e.status = BENCH_EXIT_FAIL;
		goto end_json;
	}
	if (!measure(&e, run_pingpong(&e, &o, flag_host, flag_host, false, NULL),
			&st_floor_host))
		goto end_json;
	json_case(&e, "floor_host", NULL, 0, &st_floor_host);
	printf("handoff floor memory=host median=%.2fus p99=%.2fus mean=%.2fus\n",
		st_floor_host.median / 1e3, st_floor_host.p99 / 1e3,
		st_floor_host.mean / 1e3);

	/* Floor in GPU memory the CPU maps, where the driver can. */
	flag_gpu = rte_gpu_mem_alloc(e.dev_id, 65536, 65536);
	if (flag_gpu != NULL)
		flag_gpu_cpu = rte_gpu_mem_cpu_map(e.dev_id, 65536, flag_gpu);
	if (flag_gpu_cpu != NULL) {
		if (!measure(&e, run_pingpong(&e, &o, flag_gpu_cpu, flag_gpu, true,
				NULL), &st_floor_gpu))
			goto end_json;
		have_floor_gpu = true;
		json_case(&e, "floor_gpu", NULL, 0, &st_floor_gpu);
		printf("handoff floor memory=gpu(gdrcopy) median=%.2fus p99=%.2fus "
			"mean=%.2fus\n", st_floor_gpu.median / 1e3,
			st_floor_gpu.p99 / 1e3, st_floor_gpu.mean / 1e3);
	} else {
		printf("handoff floor memory=gpu(gdrcopy) unavailable (no CPU "
			"mapping of GPU memory: GDRCopy missing or disabled)\n");
	}
	/* The floor of the comm list is the one of the memory its status is
	 * in. */
	floor = e.status_in_gpu && have_floor_gpu ? &st_floor_gpu : &st_floor_host;

	/* Packets in host memory: each item costs the flag's round trip plus
	 * at least one read of packet bytes across PCIe after READY, the
	 * floor of host_pkts' handoffs. The flag in the memory of the floor
	 * above (the comm list's status). */
	if (!o.pkt_gpu) {
		const bool in_gpu = floor == &st_floor_gpu;

		if (load_lines_create(&e, &o, &ld) != 0) {
			e.status = BENCH_EXIT_FAIL;
			goto end_json;
		}
		if (!measure(&e, run_pingpong(&e, &o, in_gpu ? flag_gpu_cpu :
				(void *)flag_host, in_gpu ? flag_gpu :
				(void *)flag_host, in_gpu, &ld), &st_floor_load))
			goto end_json;
		bench_json_obj_begin(&e.j, NULL);
		bench_json_str(&e.j, "kind", "floor_host_load");
		bench_json_str(&e.j, "flag_memory", in_gpu ? "gpu" : "host");
		bench_json_int(&e.j, "load_bytes", LOAD_BYTES);
		bench_json_int(&e.j, "load_lines", ld.n);
		bench_json_stats(&e.j, "latency", &st_floor_load);
		bench_json_obj_end(&e.j);
		printf("handoff floor+load memory=%s median=%.2fus p99=%.2fus "
			"mean=%.2fus (the flag floor + one dependent %d-byte "
			"line read from host memory)\n", in_gpu ? "gpu(gdrcopy)" :
			"host", st_floor_load.median / 1e3, st_floor_load.p99 / 1e3,
			st_floor_load.mean / 1e3, LOAD_BYTES);
	}

	for (n = 0; n < o.warmup + o.reps; n++) {
		uint64_t t0 = rte_rdtsc_precise(), t1;

		err = hk_launch_empty(launcher);
		t1 = rte_rdtsc_precise();
		if (err != 0) {
			BENCH_LOG(ERR, "empty launch: %s\n", gpucuda_strerror(err));
			e.status = BENCH_EXIT_FAIL;
			goto end_json;
		}
		if (n >= o.warmup)
			e.samples[n - o.warmup] = bench_cycles_to_ns(t1 - t0);
	}
	measure(&e, o.reps, &st_empty);
	json_case(&e, "launch_empty", NULL, 0, &st_empty);
	printf("handoff launch_empty median=%.2fus p99=%.2fus mean=%.2fus\n",
		st_empty.median / 1e3, st_empty.p99 / 1e3, st_empty.mean / 1e3);
	fflush(stdout);

	for (s = 0; s < 2; s++) {
		const char *size = s == 0 ? "64" : "mix";
		uint64_t bytes;

		if (!o.sizes[s])
			continue;
		bytes = packets_set_len(&e, s == 0 ? 64 : 0, &rng);
		if (bytes == 0) {
			BENCH_LOG(ERR, "cannot set packet lengths\n");
			e.status = BENCH_EXIT_FAIL;
			goto end_json;
		}
		for (b = 0; b < o.n_bursts; b++) {
			uint32_t burst = (uint32_t)o.bursts[b];
			struct bench_stats st_h, st_l, st_p;

			if (!measure(&e, run_populate(&e, &o, burst), &st_p) ||
					!measure(&e, run_handoff(&e, &o, burst), &st_h))
				goto end_json;
			json_case(&e, "populate", size, burst, &st_p);
			json_case(&e, "handoff", size, burst, &st_h);
			bench_json_obj_begin(&e.j, NULL);
			bench_json_str(&e.j, "kind", "handoff_gpu_phases");
			bench_json_str(&e.j, "pkt_size", size);
			bench_json_int(&e.j, "burst", burst);
			bench_json_num(&e.j, "ready_to_loaded_median_ns", e.gpu_load_ns);
			bench_json_num(&e.j, "loaded_to_done_median_ns", e.gpu_work_ns);
			bench_json_num(&e.j, "prefetched_share", e.gpu_prefetched);
			bench_json_obj_end(&e.j);
			if (!measure(&e, run_launch(&e, &o, launcher, burst), &st_l))
				goto end_json;
			json_case(&e, "launch", size, burst, &st_l);
			printf("handoff pkt=%s%s burst=%u median=%.2fus p99=%.2fus "
				"mean=%.2fus floor_median=%.2fus floor_p99=%.2fus "
				"launch_median=%.2fus launch_p99=%.2fus "
				"populate_median=%.2fus vs_floor=%.2fx/%.2fx(p99) "
				"launch_speedup=%.1fx gpu_ready_to_loaded=%.2fus "
				"gpu_loaded_to_done=%.2fus prefetched=%.2f\n", size,
				o.pkt_gpu ? " mem=gpu" : "", burst,
				st_h.median / 1e3, st_h.p99 / 1e3, st_h.mean / 1e3,
				floor->median / 1e3, floor->p99 / 1e3,
				st_l.median / 1e3, st_l.p99 / 1e3, st_p.median / 1e3,
				st_h.median / floor->median, st_h.p99 / floor->p99,
				st_l.median / st_h.median, e.gpu_load_ns / 1e3,
				e.gpu_work_ns / 1e3, e.gpu_prefetched);
			fflush(stdout);
		}
	}

end_json:
	bench_json_arr_end(&e.j);
	bench_json_str(&e.j, "status", e.status == BENCH_EXIT_OK ? "ok" : "failed");
	bench_json_obj_end(&e.j);
	if (bench_json_close(&e.j) != 0 && e.status == BENCH_EXIT_OK)
		e.status = BENCH_EXIT_FAIL;
out:
	if (e.kernel_alive) {
		/* A ring kernel still reads the list and the packets: free
		 * none of it, and leave EAL as it is. */
		BENCH_LOG(ERR, "the ring's persistent kernel did not quit: "
			"exiting without freeing what it may read\n");
		return BENCH_EXIT_FAIL;
	}
	if (e.k_ok)
		gpucomm_kernel_teardown(&e.k);
	hk_launcher_destroy(launcher);
	if (flag_gpu_cpu != NULL && rte_gpu_mem_cpu_unmap(e.dev_id, flag_gpu) < 0)
		e.status = BENCH_EXIT_FAIL;
	if (flag_gpu != NULL && rte_gpu_mem_free(e.dev_id, flag_gpu) < 0)
		e.status = BENCH_EXIT_FAIL;
	load_lines_free(&e, &ld);
	if (flag_host != NULL) {
		/* Not registered if registration failed: ignore that error. */
		rte_gpu_mem_unregister(e.dev_id, flag_host);
		rte_free(flag_host);
	}
	if (e.list != NULL && rte_gpu_comm_destroy_list(e.list, N_ITEMS) < 0) {
		BENCH_LOG(ERR, "rte_gpu_comm_destroy_list: %s\n",
			rte_strerror(rte_errno));
		e.status = BENCH_EXIT_FAIL;
	}
	if (e.mb != NULL)
		rte_pktmbuf_free_bulk(e.mb, e.n_mb);
	unregister_chunks(&e);
	rte_mempool_free(e.mp);
	/* After the pool: its mbufs pointed into it. */
	if (e.gpu_data != NULL && rte_gpu_mem_free(e.dev_id, e.gpu_data) < 0)
		e.status = BENCH_EXIT_FAIL;
	free(e.gpu_data_copy);
	free(e.mb);
	free(e.sum);
	free(e.samples);
	rte_eal_cleanup();
	return e.status;
}
