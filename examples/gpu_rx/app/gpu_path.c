/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes of dpdk-gpu-rx: the RX lcore side of the gpudev rings.
 *
 * Per RX queue, a rte_gpu_comm_list of --ring-items items used as a ring:
 * the lcore fills item `head` and publishes it READY, the kernel (per
 * queue one dispatcher and up to 64 worker blocks, see gpu_kernels.cu)
 * processes items, several at once, and marks them DONE, the lcore
 * collects item `tail` once DONE (so the output keeps the RX order),
 * writes the captured bytes, frees the mbufs and returns the item to
 * FREE.
 *
 * Per-packet side data (timestamp, wire length, capture offset) and the
 * results (an item summary of matches and malformed kinds, the verdicts
 * of matched packets, captured bytes) live in mapped pinned memory
 * described by struct gpurx_gq. An item holds at most --burst
 * packets and at most item_bytes of packet data, so every packet has
 * reserved room in the capture arena: a burst that does not fit spills
 * into the next item, and only a ring with no FREE item drops packets.
 *
 * Items are filled by hand in one pass with the ordering of
 * rte_gpu_comm_populate_list_pkts(): entries and num_pkts first, then a
 * CPU write barrier and, packets in GPU memory, rte_gpu_wmb(), then the
 * READY store. Chained mbufs (which populate refuses), and mbufs whose
 * bytes the GPU cannot read where they are (foreign: external buffers or
 * indirect mbufs outside registered memory), are copied into the item's
 * bounce buffer on the way.
 *
 * The main lcore watches the kernel and each queue's progress
 * (gpurx_gpu_watch, liveness.h): a dead kernel or a stalled queue stops
 * the run at once rather than turning every later burst into "ring full".
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_prefetch.h>

#include "app.h"
#include "gpu_guard.h"
#include "gpu_kernels.h"
#include "gpu_path.h"
#include "lat_hist.h"
#include "liveness.h"
#include "test_hooks.h"

/* The kernel walks the gpudev list through mirror types: same layout. */
_Static_assert(sizeof(struct gpurx_comm_item) == sizeof(struct rte_gpu_comm_list),
	"comm list size");
_Static_assert(offsetof(struct gpurx_comm_item, pkt_list) ==
	offsetof(struct rte_gpu_comm_list, pkt_list), "pkt_list");
_Static_assert(offsetof(struct gpurx_comm_item, num_pkts) ==
	offsetof(struct rte_gpu_comm_list, num_pkts), "num_pkts");
_Static_assert(offsetof(struct gpurx_comm_item, status_d) ==
	offsetof(struct rte_gpu_comm_list, status_d), "status_d");
_Static_assert(sizeof(enum rte_gpu_comm_list_status) == sizeof(uint32_t),
	"status word");
_Static_assert(sizeof(struct gpurx_comm_pkt) == sizeof(struct rte_gpu_comm_pkt),
	"comm pkt");
_Static_assert(GPURX_ITEM_READY == RTE_GPU_COMM_LIST_READY &&
	GPURX_ITEM_DONE == RTE_GPU_COMM_LIST_DONE, "status values");
_Static_assert(GPURX_MAX_BURST <= RTE_GPU_COMM_LIST_PKTS_MAX, "burst");
_Static_assert(GPURX_SUM_MATCH_WORDS * 32 == GPURX_MAX_BURST, "match bits");
_Static_assert(GPURX_MAL_COUNT <= GPURX_SUM_MAL, "malformed kinds");

#define ITEM_BYTES_MIN (256u * 1024)
_Static_assert(ITEM_BYTES_MIN >= GPURX_SCRATCH_BYTES,
	"an empty ring item holds the longest packet");
#define GPU_PAGE 65536u
#define DRAIN_TIMEOUT_S 5
#define KERNEL_QUIT_TIMEOUT_MS 1000
#define MAX_REGS 256

/* The mbufs an item holds are in its comm list entry (mbufs[0..n)). */
struct gpu_item {
	uint16_t n;
	uint64_t t_ready;		/* TSC when published READY */
	uint64_t bytes;			/* wire bytes of its packets */
	struct rte_mempool *plain_pool;	/* see gpurx_mbufs_free() */
};

/* Item latency (READY stored -> DONE seen by the lcore) histogram: 1 us
 * buckets, the last one for everything longer. */
#define LAT_BUCKETS 4096

/* One per RX lcore, on its own cache lines: head/tail/inflight change on
 * every item, and sharing a line with a neighbour queue's would bounce it
 * between lcores. */
struct gpu_queue {
	struct rte_gpu_comm_list *list;
	struct gpu_item *items;
	uint8_t *host_buf;	/* pinned: chained bounce, or staging */
	uint8_t *dev_buf;	/* device: staged copies, gpu-mode chains */
	void *stream;
	uint32_t head, tail, inflight;
	uint32_t collected;	/* items, for the busy-share refresh */
	uint64_t *lat_hist;	/* [LAT_BUCKETS] */
	struct gpurx_qlive live;	/* progress, for the main lcore's watch */
} __rte_cache_aligned;

struct gpurx_gpu {
	int cuda_dev;
	struct gpurx_gq *gq;
	struct gpu_queue q[GPURX_MAX_QUEUES];
	struct rte_gpu_comm_flag quit;
	int quit_ok;
	void *kstream;
	int kernel_running;
	struct gpurx_kparams kp;
	void *d_prog;
	void *d_ft;
	void *d_qdev;		/* struct gpurx_qdev [nq] */
	void *d_done_seq;	/* unsigned long long [nq * ring_items] */
	void *d_pub_ns;		/* unsigned long long [nq * ring_items] */
	void *d_pkt_lists;	/* struct gpurx_comm_pkt *[nq * ring_items] */
	size_t pinned_bytes, dev_bytes;
	void *regs[MAX_REGS];	/* mempool chunks registered (host-mapped) */
	unsigned int n_regs;
	int reg_failed;
	/* What the kernel may read in place; other mbufs are copied. */
	struct gpurx_readable rd;
	/* Main lcore's watch of the kernel and the queues; dead: the kernel
	 * ended with an error (RX lcores stop waiting for items); failed:
	 * the watch stopped the run. */
	struct gpurx_watch watch;
	volatile int dead;
	int watch_failed;
	/* --mem gpu */
	void *ext;
	size_t ext_len;
	int ext_registered, ext_mapped;
	struct rte_device *port_dev;
};

static int
cuda_fail(const char *what, int err)
{
	fprintf(stderr, "error: %s: %s\n", what, gpurx_cuda_strerror(err));
	return -1;
}

int
gpurx_gpu_init(struct gpurx_app *a)
{
	struct rte_gpu_info info;
	struct gpurx_gpu *g;
	int16_t id;
	int rc;

	id = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (rte_gpu_count_avail() == 0 || id < 0) {
		fprintf(stderr, "error: no GPU probed by DPDK gpudev: load the CUDA "
			"driver (-d librte_gpu_cuda.so) on a machine with an NVIDIA "
			"GPU, or run with --cpu\n");
		return -1;
	}
	rc = rte_gpu_info_get(id, &info);
	if (rc != 0) {
		fprintf(stderr, "error: rte_gpu_info_get(%d): %s\n", id,
			rte_strerror(-rc));
		return -1;
	}
	g = rte_zmalloc("gpurx_gpu", sizeof(*g), 0);
	if (g == NULL)
		return -1;
	/* The runtime must drive the same device (and primary context). */
	rc = gpurx_cuda_select(info.name, &g->cuda_dev);
	if (rc != 0) {
		fprintf(stderr, "error: GPU %d (%s): CUDA runtime: %s\n", id,
			info.name, gpurx_cuda_strerror(rc));
		rte_free(g);
		return -1;
	}
	a->gpu_id = id;
	a->gpu = g;
	printf("gpu: gpudev %d = %s (CUDA device %d), %zu MiB\n", id, info.name,
		g->cuda_dev, info.total_memory >> 20);
	return 0;
}

int
gpurx_gpu_create_pool(struct gpurx_app *a)
{
	struct gpurx_gpu *g = a->gpu;
	struct rte_pktmbuf_extmem ext;
	struct rte_eth_dev_info di;
	int cache = gpurx_mbuf_cache(a);
	const char *why;
	int rc;

	if (cache < 0)
		return -1;
	/* Whether the NIC's writes into GPU memory can be ordered before the
	 * kernel reads them; asked before any memory is taken. */
	why = gpurx_wmb_refusal(a->mem, rte_gpu_wmb(a->gpu_id));
	if (why != NULL) {
		fprintf(stderr, "error: --mem gpu on GPU %d: %s\n", a->gpu_id, why);
		return -1;
	}
	rc = rte_eth_dev_info_get(a->port, &di);
	if (rc != 0)
		return -1;
	g->port_dev = di.device;
	a->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	g->ext_len = RTE_ALIGN_CEIL((size_t)a->pool_size * a->data_room,
		GPU_PAGE);
	g->ext = rte_gpu_mem_alloc(a->gpu_id, g->ext_len, GPU_PAGE);
	if (g->ext == NULL) {
		fprintf(stderr, "error: --mem gpu: %zu bytes of GPU memory: %s\n",
			g->ext_len, rte_strerror(rte_errno));
		return -1;
	}
	g->dev_bytes += g->ext_len;
	/* Known to EAL as external memory, then mapped for the port's DMA. */
	if (rte_extmem_register(g->ext, g->ext_len, NULL, 0, GPU_PAGE) != 0) {
		fprintf(stderr, "error: --mem gpu: rte_extmem_register: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	g->ext_registered = 1;
	if (rte_dev_dma_map(g->port_dev, g->ext, RTE_BAD_IOVA, g->ext_len) != 0) {
		fprintf(stderr, "error: --mem gpu: port %u (%s) cannot DMA into GPU "
			"memory (rte_dev_dma_map: %s); is nvidia-peermem loaded? "
			"Use --mem host-mapped\n", a->port, a->driver,
			rte_strerror(rte_errno));
		return -1;
	}
	g->ext_mapped = 1;
	ext.buf_ptr = g->ext;
	ext.buf_iova = RTE_BAD_IOVA;
	ext.buf_len = g->ext_len;
	ext.elt_size = a->data_room;
	a->pools[0] = rte_pktmbuf_pool_create_extbuf("gpurx_mbufs_gpu",
		a->pool_size, (unsigned int)cache, 0, a->data_room,
		a->socket, &ext, 1);
	if (a->pools[0] == NULL) {
		fprintf(stderr, "error: --mem gpu: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	a->n_pools = 1;
	/* Cannot fail: the table is empty. */
	gpurx_readable_add_pool(&g->rd, a->pools[0]);
	gpurx_readable_add_span(&g->rd, g->ext, g->ext_len);
	return 0;
}

static void
register_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
		struct rte_mempool_memhdr *hdr, unsigned int idx __rte_unused)
{
	struct gpurx_app *a = opaque;
	struct gpurx_gpu *g = a->gpu;

	if (g->n_regs == MAX_REGS) {
		fprintf(stderr, "error: more than %u mempool chunks to register\n",
			MAX_REGS);
		g->reg_failed = 1;
		return;
	}
	if (rte_gpu_mem_register(a->gpu_id, hdr->len, hdr->addr) != 0) {
		fprintf(stderr, "error: rte_gpu_mem_register(%p, %zu): %s\n",
			hdr->addr, hdr->len, rte_strerror(rte_errno));
		g->reg_failed = 1;
		return;
	}
	g->regs[g->n_regs++] = hdr->addr;
	/* As many spans as registrations: cannot overflow. */
	gpurx_readable_add_span(&g->rd, hdr->addr, hdr->len);
}

static int
pinned(struct gpurx_gpu *g, void **p, size_t n, const char *what)
{
	int rc = gpurx_cuda_host_alloc(p, n);

	if (rc != 0)
		return cuda_fail(what, rc);
	g->pinned_bytes += n;
	return 0;
}

/* *d: n bytes of device memory holding a copy of src, counted in
 * dev_bytes (freed by gpurx_gpu_teardown whatever happens here). */
static int
dev_upload(struct gpurx_gpu *g, void **d, const void *src, size_t n)
{
	int rc = gpurx_cuda_dev_alloc(d, n);

	if (rc == 0)
		rc = gpurx_cuda_copy(*d, src, n);
	if (rc == 0)
		g->dev_bytes += n;
	return rc;
}

/* The persistent kernel, where the GPU can run it safely. */
static int
launch_persistent(struct gpurx_app *a)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpurx_gpu_props props;
	const char *why, *fault = getenv("GPURX_TEST_KERNEL_FAULT");
	uint32_t bpq = g->kp.bpq;
	int rc;

	rc = gpurx_cuda_props(&props.exec_timeout, &props.coop_launch);
	if (rc != 0)
		return cuda_fail("device attributes", rc);
	why = gpurx_persistent_refusal(&props);
	if (why != NULL) {
		fprintf(stderr, "error: persistent kernel on GPU %d: %s\n",
			a->gpu_id, why);
		return -1;
	}
	if (fault != NULL) {
		g->kp.fault_at = strtoull(fault, NULL, 0);
		printf("test: the kernel faults on purpose at queue 0's item "
			"%llu (GPURX_TEST_KERNEL_FAULT)\n", g->kp.fault_at);
	}
	rc = gpurx_cuda_stream_create(&g->kstream);
	if (rc != 0)
		return cuda_fail("kernel stream", rc);
	rc = gpurx_cuda_launch_persistent(&g->kp, g->kstream);
	if (rc != 0) {
		fprintf(stderr, "error: persistent kernel launch, %u queue(s) x "
			"(1 dispatcher + %u workers) blocks, all resident together: "
			"%s; fewer --queues or --ring-items, or --launch-per-burst\n",
			a->nq, bpq, gpurx_cuda_strerror(rc));
		return -1;
	}
	g->kernel_running = 1;
	return 0;
}

static int
setup_queue(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpu_queue *Q = &g->q[q];
	struct gpurx_gq *gq = &g->gq[q];
	uint32_t n = a->opt.ring_items, burst = a->opt.burst;
	size_t slots = (size_t)n * burst, bytes;
	int rc;

	Q->list = rte_gpu_comm_create_list(a->gpu_id, n);
	if (Q->list == NULL) {
		fprintf(stderr, "error: queue %u: rte_gpu_comm_create_list(%u): %s\n",
			q, n, rte_strerror(rte_errno));
		return -1;
	}
	/* Test only: memory as a previous run could have left it. */
	if (getenv("GPURX_TEST_DIRTY_RING") != NULL)
		for (uint32_t i = 0; i < n; i++)
			if (rte_gpu_comm_set_status(&Q->list[i],
					RTE_GPU_COMM_LIST_READY) != 0)
				return -1;
	rc = gpurx_ring_init(Q->list, n);
	if (rc != 0) {
		fprintf(stderr, "error: queue %u: comm list statuses not reset to "
			"FREE: %s\n", q, rte_strerror(-rc));
		return -1;
	}
	Q->items = rte_zmalloc("gpurx_items", n * sizeof(*Q->items), 0);
	Q->lat_hist = rte_zmalloc("gpurx_lat", LAT_BUCKETS * sizeof(uint64_t), 0);
	if (Q->items == NULL || Q->lat_hist == NULL)
		return -1;
	gq->items = (struct gpurx_comm_item *)Q->list;
	gq->n_items = n;
	gq->burst = burst;
	gq->item_bytes = RTE_ALIGN_CEIL(RTE_MAX(ITEM_BYTES_MIN,
		burst * (uint32_t)(RTE_MBUF_DEFAULT_BUF_SIZE + 128)), 64);
	gq->max_caplen = a->opt.snaplen;
	bytes = (size_t)n * gq->item_bytes;
	if (pinned(g, (void **)&gq->ts, slots * 8, "pinned ts") ||
			pinned(g, (void **)&gq->wirelen, slots * 4, "pinned len") ||
			pinned(g, (void **)&gq->cap_off, slots * 4, "pinned off") ||
			pinned(g, (void **)&gq->verdict, slots * 4, "pinned verdict") ||
			pinned(g, (void **)&gq->sum, n * sizeof(*gq->sum),
				"pinned item summaries") ||
			pinned(g, (void **)&gq->arena, bytes, "capture arena"))
		return -1;
	if (a->mem != GPURX_MEM_GPU &&
			pinned(g, (void **)&Q->host_buf, bytes, "bounce buffer"))
		return -1;
	if (a->mem != GPURX_MEM_HOST_MAPPED) {
		rc = gpurx_cuda_dev_alloc((void **)&Q->dev_buf, bytes);
		if (rc != 0)
			return cuda_fail("device item buffers", rc);
		g->dev_bytes += bytes;
	}
	rc = gpurx_cuda_stream_create(&Q->stream);
	if (rc != 0)
		return cuda_fail("cudaStreamCreate", rc);
	return 0;
}

int
gpurx_gpu_setup(struct gpurx_app *a)
{
	struct gpurx_gpu *g = a->gpu;
	size_t ft_bytes = gpurx_flow_table_bytes(a->opt.flow_capacity);
	int rc;

	rc = rte_gpu_comm_create_flag(a->gpu_id, &g->quit, RTE_GPU_COMM_FLAG_CPU);
	if (rc != 0) {
		fprintf(stderr, "error: rte_gpu_comm_create_flag: %s\n",
			rte_strerror(-rc));
		return -1;
	}
	g->quit_ok = 1;
	if (rte_gpu_comm_set_flag(&g->quit, 0) != 0)
		return -1;
	if (pinned(g, (void **)&g->gq, a->nq * sizeof(*g->gq), "queue table"))
		return -1;
	for (uint16_t q = 0; q < a->nq; q++)
		if (setup_queue(a, q) != 0)
			return -1;
	if (a->mem == GPURX_MEM_HOST_MAPPED) {
		/* The kernel reads packets where the port wrote them. */
		for (uint16_t i = 0; i < a->n_pools; i++) {
			rte_mempool_mem_iter(a->pools[i], register_chunk, a);
			/* Cannot fail: n_pools <= GPURX_MAX_QUEUES. */
			gpurx_readable_add_pool(&g->rd, a->pools[i]);
		}
		if (g->reg_failed)
			return -1;
	}
	rc = gpurx_cuda_dev_alloc(&g->d_prog,
		RTE_MAX(1u, a->filter.len) * sizeof(*a->filter.insns));
	if (rc == 0)
		rc = gpurx_cuda_copy(g->d_prog, a->filter.insns,
			a->filter.len * sizeof(*a->filter.insns));
	if (rc == 0)
		rc = dev_upload(g, &g->d_ft, a->ft, ft_bytes);
	if (rc != 0)
		return cuda_fail("filter/flow table to the GPU", rc);
	if (!a->opt.launch_per_burst) {
		size_t qdev_bytes = a->nq * sizeof(struct gpurx_qdev);
		size_t seq_bytes = (size_t)a->nq * a->opt.ring_items *
			sizeof(unsigned long long);
		void *zero = calloc(1, RTE_MAX(qdev_bytes, seq_bytes));

		if (zero == NULL) {
			fprintf(stderr, "error: dispatch state: out of memory\n");
			return -1;
		}
		rc = dev_upload(g, &g->d_qdev, zero, qdev_bytes);
		if (rc == 0)
			rc = dev_upload(g, &g->d_done_seq, zero, seq_bytes);
		if (rc == 0)
			rc = dev_upload(g, &g->d_pub_ns, zero, seq_bytes);
		free(zero);
		if (rc != 0)
			return cuda_fail("dispatch state to the GPU", rc);
		g->kp.qdev = g->d_qdev;
		g->kp.done_seq = g->d_done_seq;
		g->kp.pub_ns = g->d_pub_ns;
	}
	{
		/* Every item's packet list pointer, in GPU memory. */
		size_t n = (size_t)a->nq * a->opt.ring_items;
		struct gpurx_comm_pkt **lists = calloc(n, sizeof(*lists));

		if (lists == NULL) {
			fprintf(stderr, "error: packet list pointers: out of memory\n");
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			lists[i] = (struct gpurx_comm_pkt *)
				g->q[i / a->opt.ring_items].list[i % a->opt.ring_items].pkt_list;
		rc = dev_upload(g, &g->d_pkt_lists, lists, n * sizeof(*lists));
		free(lists);
		if (rc != 0)
			return cuda_fail("packet list pointers to the GPU", rc);
		g->kp.pkt_lists = g->d_pkt_lists;
	}
	g->kp.gq = g->gq;
	g->kp.nq = a->nq;
	g->kp.bpq = RTE_MIN(a->opt.ring_items, (uint32_t)GPURX_BLOCKS_PER_QUEUE_MAX);
	g->kp.prog = g->d_prog;
	g->kp.prog_len = a->filter.len;
	g->kp.ft = g->d_ft;
	g->kp.quit = g->quit.ptr;
	g->kp.capture = a->cap != NULL;
	printf("memory: %u ring items x %u packets per queue, %zu MiB pinned "
		"host, %zu MiB GPU (%s)\n", a->opt.ring_items, a->opt.burst,
		g->pinned_bytes >> 20, g->dev_bytes >> 20,
		a->opt.launch_per_burst ? "kernel per burst" : "persistent kernel");
	gpurx_watch_init(&g->watch, a->nq, rte_get_tsc_hz(), a->opt.stall_ms,
		rte_get_tsc_cycles());
	if (a->opt.launch_per_burst)
		return 0;
	return launch_persistent(a);
}

/* Copy a chain segment by segment to device memory (--mem gpu). */
static int
chain_to_device(const struct rte_mbuf *m, uint8_t *dst, uint32_t cap,
		void *stream)
{
	uint32_t pos = 0;

	for (; m != NULL && pos < cap; m = m->next) {
		uint32_t len = RTE_MIN((uint32_t)m->data_len, cap - pos);
		int rc = gpurx_cuda_copy_async(dst + pos,
			rte_pktmbuf_mtod(m, const void *), len, stream);

		if (rc != 0)
			return cuda_fail("chained packet copy", rc);
		pos += len;
	}
	return 0;
}

/* An mbuf with fewer bytes in its segments than its pkt_len says. */
static int
pkt_short(uint16_t q, const struct rte_mbuf *m, uint32_t cap)
{
	fprintf(stderr, "error: queue %u: mbuf of pkt_len %u, %u segment(s), "
		"holds fewer than %u bytes\n", q, rte_pktmbuf_pkt_len(m),
		m->nb_segs, cap);
	return -1;
}

/*
 * Fill ring item `head` from pkts[0..n) and publish it. Returns how many
 * packets it took (the rest goes to the next item), or -1 on error.
 */
static int
fill_item(struct gpurx_app *a, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
		uint64_t rx_ns)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpu_queue *Q = &g->q[q];
	struct gpurx_gq *gq = &g->gq[q];
	struct gpurx_qstats *qs = &a->qs[q];
	uint32_t idx = Q->head, base = idx * gq->burst, off = 0, k;
	struct rte_gpu_comm_list *ci = &Q->list[idx];
	size_t ioff = (size_t)idx * gq->item_bytes;
	struct rte_mempool *pool = pkts[0]->pool;
	/* Loop invariants in locals: the loop's stores into the item's
	 * arrays could alias these fields, and the compiler would load
	 * them again for every packet. */
	const enum gpurx_mem_mode mem = a->mem;
	const uint32_t item_bytes = gq->item_bytes;
	const uint32_t max = RTE_MIN((uint32_t)n, gq->burst);
	const int pmd_ts = a->ts_off >= 0;
	uint64_t *ts = gq->ts + base;
	uint32_t *wirelen = gq->wirelen + base;
	uint32_t *cap_off = gq->cap_off + base;
	struct rte_gpu_comm_pkt *entry = ci->pkt_list;
	struct rte_mbuf **held = ci->mbufs;
	const struct gpurx_readable *rd = &g->rd;
	uint64_t bytes = 0;
	uint32_t chained = 0, truncated = 0, short_chains = 0, foreign = 0;
	int copies = 0, plain = 1, rc;

	/*
	 * One pass per packet fills the kernel's inputs and the comm list
	 * entry together (rte_gpu_comm_populate_list_pkts would walk the
	 * mbufs a second time, and cannot point an entry at a bounce copy).
	 */
	for (k = 0; k < max; k++) {
		struct rte_mbuf *m = pkts[k];
		uint32_t wire = rte_pktmbuf_pkt_len(m);
		int short_chain;
		uint32_t cap = gpurx_pkt_linear_len(m, &short_chain);
		/* 16: the kernel copies captures in 16-byte words. */
		uint32_t need = RTE_ALIGN_CEIL(cap, 16);
		uintptr_t addr;

		if (need > item_bytes - off)
			break;
		ts[k] = pmd_ts ? gpurx_pkt_ts(a, m, rx_ns) : rx_ns;
		wirelen[k] = wire;
		cap_off[k] = off;
		bytes += wire;
		plain &= gpurx_mbuf_plain(m, pool);
		chained += m->nb_segs > 1;
		short_chains += short_chain;
		truncated += !short_chain && cap < wire;
		if (mem == GPURX_MEM_STAGED) {
			if (gpurx_pkt_copy(m, cap, Q->host_buf + ioff + off) != 0)
				return pkt_short(q, m, cap);
			addr = (uintptr_t)(Q->dev_buf + ioff + off);
		} else if (likely(m->nb_segs == 1) &&
				likely(gpurx_mbuf_gpu_readable(rd, m, cap))) {
			addr = rte_pktmbuf_mtod(m, uintptr_t);
		} else if (mem == GPURX_MEM_HOST_MAPPED) {
			/* A chain, or bytes outside registered memory (an
			 * external buffer or indirect mbuf of the PMD's, a
			 * pool we did not register): the bounce buffer. */
			foreign += m->nb_segs == 1;
			if (gpurx_pkt_copy(m, cap, Q->host_buf + ioff + off) != 0)
				return pkt_short(q, m, cap);
			addr = (uintptr_t)(Q->host_buf + ioff + off);
		} else {
			/* A chain, or bytes outside the GPU pool: copied into
			 * device memory by the stream. */
			foreign += m->nb_segs == 1;
			if (chain_to_device(m, Q->dev_buf + ioff + off, cap,
					Q->stream) != 0)
				return -1;
			addr = (uintptr_t)(Q->dev_buf + ioff + off);
			copies = 1;
		}
		entry[k].addr = addr;
		entry[k].size = cap;
		held[k] = m;
		off += need;
	}
	if (unlikely(chained != 0))
		GPURX_STAT_ADD(qs, chained, chained);
	if (unlikely(truncated != 0))
		GPURX_STAT_ADD(qs, truncated, truncated);
	if (unlikely(short_chains != 0))
		GPURX_STAT_ADD(qs, short_chain, short_chains);
	if (unlikely(foreign != 0))
		GPURX_STAT_ADD(qs, foreign, foreign);
	if (k == 0)
		return -1;	/* cannot happen: see ITEM_BYTES_MIN */
	Q->items[idx].n = (uint16_t)k;
	Q->items[idx].bytes = bytes;
	Q->items[idx].plain_pool = plain ? pool : NULL;
	if (mem == GPURX_MEM_STAGED) {
		rc = gpurx_cuda_copy_async(Q->dev_buf + ioff,
			Q->host_buf + ioff, off, Q->stream);
		if (rc != 0)
			return cuda_fail("staged copy", rc);
		copies = 1;
	}
	if (copies) {
		/* The kernel may see READY as soon as we store it. */
		rc = gpurx_cuda_stream_sync(Q->stream);
		if (rc != 0)
			return cuda_fail("staged copy wait", rc);
	}
	RTE_GPU_VOLATILE(ci->num_pkts) = k;
	/*
	 * Same order as rte_gpu_comm_populate_list_pkts(): entries, count,
	 * bounce bytes and side data are globally visible before READY
	 * (rte_wmb also drains memcpy's streaming stores); with packets in
	 * GPU memory, rte_gpu_wmb() orders the NIC's writes there the same
	 * way (the other modes have none: gpurx_mem_needs_gpu_wmb; a GPU
	 * that cannot was refused at start-up).
	 */
	rte_wmb();
	if (gpurx_mem_needs_gpu_wmb(mem)) {
		rc = rte_gpu_wmb(a->gpu_id);
		if (rc != 0) {
			fprintf(stderr, "error: queue %u: rte_gpu_wmb: %s\n", q,
				rte_strerror(-rc));
			return -1;
		}
	}
	rc = rte_gpu_comm_set_status(ci, RTE_GPU_COMM_LIST_READY);
	if (rc != 0)
		return -1;
	Q->items[idx].t_ready = rte_get_tsc_cycles();
	GPURX_STAT_ADD(&Q->live, published, 1);
	GPURX_STAT_ADD(&Q->live, inflight_pkts, k);
	if (a->opt.launch_per_burst) {
		rc = gpurx_cuda_launch_item(&g->kp, q, idx, Q->stream);
		if (rc == 0)
			rc = gpurx_cuda_stream_sync(Q->stream);
		if (rc != 0)
			return cuda_fail("per-burst kernel", rc);
	}
	Q->head = Q->head + 1 == gq->n_items ? 0 : Q->head + 1;
	Q->inflight++;
	return (int)k;
}

/* Collect item `tail` if DONE. Returns 1 collected, 0 not yet, -1 error. */
static int
collect_item(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpu_queue *Q = &g->q[q];
	struct gpurx_gq *gq = &g->gq[q];
	struct gpurx_qstats *qs = &a->qs[q];
	uint32_t idx = Q->tail, base = idx * gq->burst;
	struct rte_gpu_comm_list *ci = &Q->list[idx];
	struct gpu_item *it = &Q->items[idx];
	const uint8_t *arena = gq->arena + (size_t)idx * gq->item_bytes;
	enum rte_gpu_comm_list_status st;
	int rc;

	if (Q->inflight == 0)
		return 0;
	rc = rte_gpu_comm_get_status(ci, &st);
	if (rc != 0 || st == RTE_GPU_COMM_LIST_ERROR)
		return -1;
	if (st != RTE_GPU_COMM_LIST_DONE)
		return 0;
	/* Pairs with the kernel's release of DONE: results read after it. */
	rte_rmb();
	if (Q->lat_hist != NULL)
		gpurx_lat_hist_add(Q->lat_hist, LAT_BUCKETS,
			(rte_get_tsc_cycles() - it->t_ready) * 1000000 /
			rte_get_tsc_hz());
	{
		/* Counted here, published once per item: the stats are
		 * read by other threads, so each update is an atomic store
		 * the compiler cannot merge. */
		const struct gpurx_item_sum *sum = &gq->sum[idx];
		uint64_t matched = 0, captured = 0, cap_bytes = 0, dropped = 0;

		/* The GPU's writes left these lines out of the CPU caches:
		 * ask for both at once rather than miss on each in turn. */
		rte_prefetch0(sum->match);
		rte_prefetch0(sum->mal);
		for (uint32_t w = 0; w * 32 < it->n; w++) {
			uint32_t bits = gpurx_sum_match_word(sum, w, it->n);

			matched += (uint32_t)__builtin_popcount(bits);
			for (; a->cap != NULL && bits != 0; bits &= bits - 1) {
				uint32_t i = w * 32 + (uint32_t)__builtin_ctz(bits);
				uint32_t v = RTE_GPU_VOLATILE(gq->verdict[base + i]);
				uint32_t cap = (uint32_t)ci->pkt_list[i].size;

				cap = RTE_MIN(cap, RTE_MIN(v, a->opt.snaplen));
				if (gpurx_capture_write(a->cap, q,
						arena + gq->cap_off[base + i], cap,
						gq->wirelen[base + i],
						gq->ts[base + i]) != 0) {
					dropped++;
					continue;
				}
				captured++;
				cap_bytes += cap;
			}
		}
		GPURX_STAT_ADD(qs, rx_pkts, it->n);
		GPURX_STAT_ADD(qs, rx_bytes, it->bytes);
		GPURX_STAT_ADD(qs, matched, matched);
		GPURX_STAT_ADD(qs, captured, captured);
		GPURX_STAT_ADD(qs, cap_bytes, cap_bytes);
		GPURX_STAT_ADD(qs, drop_capture, dropped);
		for (uint32_t m = GPURX_MAL_NONE + 1; m < GPURX_MAL_COUNT; m++) {
			uint32_t c = RTE_GPU_VOLATILE(sum->mal[m]);

			if (c != 0)
				GPURX_STAT_ADD(qs, malformed[m], c);
		}
	}
	/* Busy share of the queue's blocks (a sum over all of them): every
	 * 64 items is often enough for a per-second report. */
	if ((++Q->collected & 63) == 0 || a->stop) {
		uint64_t busy = 0;

		for (uint32_t b = 0; b < GPURX_BLOCKS_PER_QUEUE_MAX; b++)
			busy += RTE_GPU_VOLATILE(gq->busy_ns[b]);
		__atomic_store_n(&qs->gpu_busy_ns, busy / g->kp.bpq,
			__ATOMIC_RELAXED);
	}
	gpurx_mbufs_free(ci->mbufs, it->n, it->plain_pool);
	GPURX_STAT_ADD(&Q->live, collected, 1);
	GPURX_STAT_ADD(&Q->live, inflight_pkts, -(uint64_t)it->n);
	it->n = 0;
	/*
	 * Back to FREE. Not rte_gpu_comm_cleanup_list(): it also zeroes
	 * every entry (three stores per packet and a full barrier), which
	 * nothing needs: the next fill overwrites them and the kernel reads
	 * only num_pkts of them.
	 */
	RTE_GPU_VOLATILE(ci->num_pkts) = 0;
	rc = rte_gpu_comm_set_status(ci, RTE_GPU_COMM_LIST_FREE);
	if (rc != 0) {
		fprintf(stderr, "error: queue %u: rte_gpu_comm_set_status: %s\n",
			q, rte_strerror(-rc));
		return -1;
	}
	Q->tail = Q->tail + 1 == gq->n_items ? 0 : Q->tail + 1;
	Q->inflight--;
	return 1;
}

/*
 * Wait (bounded) for every published item of queue q to come back; not
 * at all once the kernel is dead, past the items it finished. What never
 * comes back is freed and counted lost.
 */
static int
drain_queue(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpu_queue *Q = &g->q[q];
	uint64_t deadline = rte_get_tsc_cycles() +
		DRAIN_TIMEOUT_S * rte_get_tsc_hz();
	uint64_t lost = 0;
	uint32_t items;
	int rc;

	while (Q->inflight > 0) {
		rc = collect_item(a, q);
		if (rc < 0 || (rc == 0 && (g->dead ||
				rte_get_tsc_cycles() >= deadline)))
			break;
	}
	if (Q->inflight == 0)
		return 0;
	items = Q->inflight;
	for (uint32_t i = 0; i < Q->inflight; i++) {
		uint32_t idx = (Q->tail + i) % a->opt.ring_items;
		struct gpu_item *it = &Q->items[idx];

		rte_pktmbuf_free_bulk(Q->list[idx].mbufs, it->n);
		lost += it->n;
		it->n = 0;
	}
	Q->inflight = 0;
	GPURX_STAT_ADD(&a->qs[q], gpu_lost, lost);
	__atomic_store_n(&Q->live.inflight_pkts, 0, __ATOMIC_RELAXED);
	fprintf(stderr, "error: queue %u: %u ring items, %" PRIu64 " packets, "
		"never came back from the GPU (%s): mbufs freed, packets counted "
		"lost\n", q, items, lost, g->dead ? "the kernel is dead" :
		"not DONE within " RTE_STR(DRAIN_TIMEOUT_S) " s");
	return -1;
}

/*
 * --backpressure: waits until the GPU hands an item back (1), the
 * application stops (0) or the GPU has not answered for 5 s (-1).
 */
static int
wait_item(struct gpurx_app *a, uint16_t q)
{
	const uint64_t limit = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
	int rc;

	while (!a->stop) {
		rc = collect_item(a, q);
		if (rc != 0)
			return rc;
		if (rte_get_tsc_cycles() > limit) {
			fprintf(stderr, "error: queue %u: GPU returned no ring item for 5 s\n",
				q);
			return -1;
		}
		rte_pause();
	}
	return 0;
}

int
gpurx_rx_gpu_lcore(void *arg)
{
	struct gpurx_app *a = &gpurx_app;
	uint16_t q = (uint16_t)(uintptr_t)arg;
	struct gpu_queue *Q = &a->gpu->q[q];
	struct gpurx_qstats *qs = &a->qs[q];
	struct rte_mbuf *pkts[GPURX_MAX_BURST];
	int status = 0;

	while (!a->stop) {
		uint64_t rx_ns;
		uint16_t n, take, i = 0;
		int rc;

		while ((rc = collect_item(a, q)) == 1)
			;
		if (rc < 0) {
			status = -1;
			break;
		}
		n = rte_eth_rx_burst(a->port, q, pkts, a->opt.burst);
		if (n == 0)
			continue;
		if (unlikely(gpurx_test_mangle_every != 0))
			gpurx_test_mangle(q, pkts, n);
		rx_ns = a->opt.ts_source == GPURX_TS_NONE ? 0 :
			gpurx_tsclock_ns(&a->clk, rte_get_tsc_cycles());
		take = gpurx_admit(a, n);
		if (take < n)
			rte_pktmbuf_free_bulk(pkts + take, n - take);
		GPURX_STAT_ADD(qs, bursts, 1);
		while (i < take) {
			if (Q->inflight == a->opt.ring_items &&
					collect_item(a, q) != 1) {
				/* The main lcore looks at the GPU at once. */
				__atomic_store_n(&Q->live.ring_full, 1,
					__ATOMIC_RELAXED);
				if (a->opt.backpressure) {
					rc = wait_item(a, q);
					if (rc == 1)
						continue;
					if (rc < 0) {
						status = -1;
						a->stop = 1;
					}
				}
				/* Never wait on the GPU with RX pending. */
				GPURX_STAT_ADD(qs, drop_ring, take - i);
				rte_pktmbuf_free_bulk(pkts + i, take - i);
				break;
			}
			rc = fill_item(a, q, pkts + i, take - i, rx_ns);
			if (rc < 0) {
				rte_pktmbuf_free_bulk(pkts + i, take - i);
				status = -1;
				a->stop = 1;
				break;
			}
			i += (uint16_t)rc;
		}
	}
	if (drain_queue(a, q) != 0)
		status = -1;
	return status;
}

void
gpurx_gpu_item_stats(const struct gpurx_app *a, struct gpurx_item_stats *st)
{
	const struct gpurx_gpu *g = a->gpu;
	const uint64_t *hists[GPURX_MAX_QUEUES] = { NULL };
	uint64_t busy = 0, wait = 0, done = 0;
	uint64_t phase[GPURX_PHASES] = { 0 };
	struct gpurx_lat_summary lat;

	RTE_BUILD_BUG_ON(RTE_DIM(st->phase_us) != GPURX_PHASES);
	memset(st, 0, sizeof(*st));
	if (g == NULL || g->gq == NULL)
		return;
	for (uint16_t q = 0; q < a->nq; q++) {
		const struct gpurx_gq *gq = &g->gq[q];

		for (uint32_t b = 0; b < GPURX_BLOCKS_PER_QUEUE_MAX; b++) {
			busy += RTE_GPU_VOLATILE(gq->busy_ns[b]);
			wait += RTE_GPU_VOLATILE(gq->wait_ns[b]);
			done += RTE_GPU_VOLATILE(gq->items_done[b]);
			for (int ph = 0; ph < GPURX_PHASES; ph++)
				phase[ph] += RTE_GPU_VOLATILE(gq->phase_ns[ph][b]);
		}
		hists[q] = g->q[q].lat_hist;
	}
	/* Percentiles over every queue's items together. */
	gpurx_lat_hist_summary(hists, a->nq, LAT_BUCKETS, &lat);
	st->items = lat.n;
	st->lat_p50_us = lat.p50;
	st->lat_p99_us = lat.p99;
	st->lat_max_us = lat.max;
	if (done != 0) {
		st->wait_us = a->opt.launch_per_burst ? 0 : wait / 1e3 / done;
		st->busy_us = busy / 1e3 / done;
		for (int ph = 0; ph < GPURX_PHASES; ph++)
			st->phase_us[ph] = phase[ph] / 1e3 / done;
	}
}

/* What each queue had in flight when the GPU side failed. */
static void
report_in_flight(const struct gpurx_app *a, const struct gpurx_qlive *live)
{
	for (uint16_t q = 0; q < a->nq; q++)
		if (live[q].published != live[q].collected)
			fprintf(stderr, "error:   queue %u: %" PRIu64 " ring items, %"
				PRIu64 " packets in flight\n", q,
				live[q].published - live[q].collected,
				live[q].inflight_pkts);
}

const char *
gpurx_gpu_watch(struct gpurx_app *a, int force)
{
	struct gpurx_gpu *g = a->gpu;
	struct gpurx_qlive live[GPURX_MAX_QUEUES];
	uint64_t now = rte_get_tsc_cycles(), age = 0, hz = rte_get_tsc_hz();
	enum gpurx_kstate ks = GPURX_KSTATE_NONE;
	int ring_full = 0, err = 0;
	uint16_t q = 0;

	if (g == NULL || g->gq == NULL || g->watch_failed)
		return NULL;
	for (uint16_t i = 0; i < a->nq; i++)
		ring_full |= (int)__atomic_exchange_n(&g->q[i].live.ring_full, 0,
			__ATOMIC_RELAXED);
	if (!force && !gpurx_watch_due(&g->watch, now, ring_full))
		return NULL;
	if (g->kernel_running) {
		err = gpurx_cuda_stream_busy(g->kstream);
		ks = err == -1 ? GPURX_KSTATE_RUNNING : err == 0 ?
			GPURX_KSTATE_ENDED : GPURX_KSTATE_FAILED;
	}
	/* Each counter whole (relaxed loads of single-writer stores). */
	for (uint16_t i = 0; i < a->nq; i++) {
		const struct gpurx_qlive *l = &g->q[i].live;

		live[i].published = __atomic_load_n(&l->published, __ATOMIC_RELAXED);
		live[i].collected = __atomic_load_n(&l->collected, __ATOMIC_RELAXED);
		live[i].inflight_pkts = __atomic_load_n(&l->inflight_pkts,
			__ATOMIC_RELAXED);
	}
	switch (gpurx_watch_decide(&g->watch, now, ks, live, &q, &age)) {
	case GPURX_WATCH_OK:
		return NULL;
	case GPURX_WATCH_KERNEL_FAILED:
	case GPURX_WATCH_KERNEL_ENDED:
		/* The RX lcores stop waiting for items it will never finish. */
		g->dead = 1;
		g->watch_failed = 1;
		fprintf(stderr, "error: persistent kernel %s%s, found %" PRIu64
			" ms after items last came back; stopping. Lost with it:\n",
			ks == GPURX_KSTATE_FAILED ? "failed: " :
			"ended without being told to quit",
			ks == GPURX_KSTATE_FAILED ? gpurx_cuda_strerror(err) : "",
			(now - g->watch.progress) * 1000 / hz);
		report_in_flight(a, live);
		return ks == GPURX_KSTATE_FAILED ? "GPU kernel failed" :
			"GPU kernel ended";
	case GPURX_WATCH_STALLED:
		g->watch_failed = 1;
		fprintf(stderr, "error: queue %u stalled: READY ring items not "
			"taken back by the GPU for %" PRIu64 " ms (--stall-ms %u), the "
			"kernel %s; stopping. In flight:\n", q, age * 1000 / hz,
			a->opt.stall_ms, ks == GPURX_KSTATE_RUNNING ? "still running" :
			"launched per burst");
		report_in_flight(a, live);
		return "GPU queue stalled";
	}
	return NULL;
}

int
gpurx_gpu_kernel_held(const struct gpurx_app *a)
{
	if (a->gpu == NULL || !a->gpu->kernel_running)
		return 0;
	fprintf(stderr, "error: the persistent kernel is still running: exiting "
		"without freeing what it polls (comm lists, registrations, pools) "
		"and without rte_eal_cleanup(), which would free them under it; "
		"the CUDA context ends with the process\n");
	return 1;
}

int
gpurx_gpu_stop(struct gpurx_app *a)
{
	struct gpurx_gpu *g = a->gpu;
	uint64_t t0 = rte_get_tsc_cycles(), hz = rte_get_tsc_hz();
	int rc = 0, busy = 0;

	if (g == NULL)
		return 0;
	if (g->kernel_running && g->dead) {
		/* Found ended by the watch: it reads nothing any more, and
		 * after a fault the context takes no more calls. */
		g->kernel_running = 0;
		return -1;
	}
	if (g->kernel_running) {
		/* Every item is back (lcores drained): the kernel idles. */
		if (rte_gpu_comm_set_flag(&g->quit, 1) != 0)
			return -1;
		rte_wmb();
		do {
			busy = gpurx_cuda_stream_busy(g->kstream);
			if (busy == -1)
				rte_delay_us_sleep(100);
		} while (busy == -1 && (rte_get_tsc_cycles() - t0) * 1000 / hz <
				KERNEL_QUIT_TIMEOUT_MS);
		if (busy != 0) {
			fprintf(stderr, "error: persistent kernel %s\n", busy == -1 ?
				"did not quit within 1 s" : gpurx_cuda_strerror(busy));
			/* Ended with an error: it no longer runs. */
			if (busy != -1)
				g->kernel_running = 0;
			return -1;
		}
		g->kernel_running = 0;
		printf("gpu: persistent kernel quit in %.3f ms\n",
			(double)(rte_get_tsc_cycles() - t0) * 1000 / hz);
	}
	if (g->d_ft != NULL) {
		rc = gpurx_cuda_copy(a->ft, g->d_ft,
			gpurx_flow_table_bytes(a->opt.flow_capacity));
		if (rc != 0)
			return cuda_fail("flow table from the GPU", rc);
	}
	return g->watch_failed ? -1 : 0;
}

void
gpurx_gpu_teardown(struct gpurx_app *a)
{
	struct gpurx_gpu *g = a->gpu;

	if (g == NULL || g->kernel_running)
		return;	/* a kernel may still read it all: leave it */
	for (uint16_t q = 0; q < a->nq && g->gq != NULL; q++) {
		struct gpu_queue *Q = &g->q[q];
		struct gpurx_gq *gq = &g->gq[q];

		if (Q->list != NULL &&
				rte_gpu_comm_destroy_list(Q->list, a->opt.ring_items) != 0)
			fprintf(stderr, "warning: queue %u: comm list destroy failed\n", q);
		rte_free(Q->items);
		rte_free(Q->lat_hist);
		gpurx_cuda_host_free(gq->ts);
		gpurx_cuda_host_free(gq->wirelen);
		gpurx_cuda_host_free(gq->cap_off);
		gpurx_cuda_host_free(gq->verdict);
		gpurx_cuda_host_free(gq->sum);
		gpurx_cuda_host_free(gq->arena);
		gpurx_cuda_host_free(Q->host_buf);
		gpurx_cuda_dev_free(Q->dev_buf);
		gpurx_cuda_stream_destroy(Q->stream);
	}
	gpurx_cuda_host_free(g->gq);
	gpurx_cuda_stream_destroy(g->kstream);
	gpurx_cuda_dev_free(g->d_prog);
	gpurx_cuda_dev_free(g->d_ft);
	gpurx_cuda_dev_free(g->d_qdev);
	gpurx_cuda_dev_free(g->d_done_seq);
	gpurx_cuda_dev_free(g->d_pub_ns);
	gpurx_cuda_dev_free(g->d_pkt_lists);
	for (unsigned int i = 0; i < g->n_regs; i++)
		if (rte_gpu_mem_unregister(a->gpu_id, g->regs[i]) != 0)
			fprintf(stderr, "warning: rte_gpu_mem_unregister: %s\n",
				rte_strerror(rte_errno));
	if (g->quit_ok)
		rte_gpu_comm_destroy_flag(&g->quit);
	if (g->ext != NULL) {
		/* The pool's buffers are this memory: pool first. */
		rte_mempool_free(a->pools[0]);
		a->pools[0] = NULL;
		a->n_pools = 0;
		if (g->ext_mapped && rte_dev_dma_unmap(g->port_dev, g->ext,
				RTE_BAD_IOVA, g->ext_len) != 0)
			fprintf(stderr, "warning: rte_dev_dma_unmap: %s\n",
				rte_strerror(rte_errno));
		if (g->ext_registered &&
				rte_extmem_unregister(g->ext, g->ext_len) != 0)
			fprintf(stderr, "warning: rte_extmem_unregister: %s\n",
				rte_strerror(rte_errno));
		rte_gpu_mem_free(a->gpu_id, g->ext);
	}
	rte_free(g);
	a->gpu = NULL;
}
