/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes of dpdk-gpu-rx: the rings and the kernel. Per RX queue a
 * rte_gpu_comm_list of --ring-items items used as a ring, its side data
 * and results (struct gpurx_gq) and buffers, the flow table and filter in
 * GPU memory, the ring library's kernel state (lib/gpucomm), then the
 * persistent kernel (or none: --launch-per-burst);
 * at the end the kernel told to quit, the flow table copied back, and
 * everything released (buffers through gpu_mem.c).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "flow_gpu.h"
#include "gpu_path.h"
#include "gpu_priv.h"
#include "gpuapp_lat_hist.h"
#include "log.h"

/* The persistent kernel, where the GPU can run it safely. */
static int
launch_persistent(struct gpurx_gpu *g)
{
	struct gpurx_gpu_props props;
	const char *why;
	uint32_t bpq = g->ck.kp.bpq;
	int rc;

	rc = gpucuda_props(&props.exec_timeout, &props.coop_launch);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("device attributes", rc);
	why = gpurx_persistent_refusal(&props);
	if (why != NULL) {
		GPURX_LOG(ERR, "error: persistent kernel on GPU %d: %s\n",
			g->id, why);
		return -1;
	}
	rc = gpucuda_stream_create(&g->kstream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("kernel stream", rc);
	rc = gpurx_cuda_launch_persistent(&g->ck.kp, &g->kp, g->kstream);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: persistent kernel launch on GPU %d, %u "
			"queue(s) x (1 dispatcher + %u workers) blocks, all resident "
			"together: %s; fewer --queues or --ring-items, or "
			"--launch-per-burst\n", g->id, g->nq, bpq,
			gpucuda_strerror(rc));
		return -1;
	}
	g->kernel_running = 1;
	return 0;
}

/* Ring r of GPU g, RX queue q. */
static int
setup_queue(struct gpurx_app *a, struct gpurx_gpu *g, uint16_t r)
{
	const uint16_t q = g->queues[r];
	struct gpu_queue *Q = &g->q[r];
	struct gpurx_gq *gq = &g->gq[r];
	uint32_t n = a->opt.ring_items, burst = a->opt.burst;
	size_t slots = (size_t)n * burst, bytes;
	int rc;

	Q->list = rte_gpu_comm_create_list(g->id, n);
	if (Q->list == NULL) {
		GPURX_LOG(ERR, "error: queue %u: rte_gpu_comm_create_list(%u): %s\n",
			q, n, rte_strerror(rte_errno));
		return -1;
	}
	/* Lap tags (gpucomm_layout.h): the workers load an item's first
	 * entries while they poll for its READY (kp.lap_tags, below). A
	 * comm list's items hold RTE_GPU_COMM_LIST_PKTS_MAX entries, as
	 * many as the tags need, and room past the largest burst for the
	 * side slots that carry struct gpurx_item_in with them. */
	RTE_BUILD_BUG_ON(GPURX_MAX_BURST > GPUCOMM_SIDE_PKTS_MAX);
	rc = gpucomm_ring_init(&Q->ring, g->id, Q->list, n,
		(gpurx_mem_needs_gpu_wmb(a->mem) ? GPUCOMM_RING_GPU_WMB : 0) |
		(a->opt.no_lap_tags ? 0 :
		GPUCOMM_RING_TAGS | GPUCOMM_RING_SIDE));
	if (rc != 0) {
		GPURX_LOG(ERR, "error: queue %u: comm list statuses not reset to "
			"FREE: %s\n", q, rte_strerror(-rc));
		return -1;
	}
	Q->items = rte_zmalloc("gpurx_items", n * sizeof(*Q->items), 0);
	Q->lat_hist = rte_zmalloc("gpurx_lat", LAT_BUCKETS * sizeof(uint64_t), 0);
	Q->stash = rte_zmalloc("gpurx_stash",
		GPURX_STASH_MBUFS * sizeof(*Q->stash), RTE_CACHE_LINE_SIZE);
	if (Q->items == NULL || Q->lat_hist == NULL || Q->stash == NULL) {
		GPURX_LOG(ERR, "error: queue %u: no memory for the ring's "
			"bookkeeping (%u items)\n", q, n);
		return -1;
	}
	gq->items = (struct gpucomm_item *)Q->list;
	gq->n_items = n;
	gq->burst = burst;
	gq->item_bytes = RTE_ALIGN_CEIL(RTE_MAX(ITEM_BYTES_MIN,
		burst * (uint32_t)(RTE_MBUF_DEFAULT_BUF_SIZE + 128)), 64);
	gq->max_caplen = a->opt.snaplen;
	bytes = (size_t)n * gq->item_bytes;
	if (gpurx_gpu_mem_pinned(g, &gq->in, n * sizeof(*gq->in),
				"pinned item inputs") ||
			gpurx_gpu_mem_pinned(g, &gq->ts, slots * 8, "pinned ts") ||
			gpurx_gpu_mem_pinned(g, &gq->wirelen, slots * 4, "pinned len") ||
			gpurx_gpu_mem_pinned(g, &gq->verdict, slots * 4,
				"pinned verdict") ||
			gpurx_gpu_mem_pinned(g, &gq->sum, n * sizeof(*gq->sum),
				"pinned item summaries") ||
			gpurx_gpu_mem_pinned(g, &gq->arena, bytes, "capture arena"))
		return -1;
	if (a->opt.stamps && gpurx_gpu_mem_pinned(g, &gq->stamp,
			slots * sizeof(*gq->stamp), "pinned stamps"))
		return -1;
	if (a->split != 0 && gpurx_gpu_mem_pinned(g, &gq->split,
			slots * sizeof(*gq->split), "pinned split side data"))
		return -1;
	if (a->mem != GPURX_MEM_GPU && gpurx_gpu_mem_pinned(g, &Q->host_buf,
			bytes, "bounce buffer"))
		return -1;
	if (a->mem != GPURX_MEM_HOST_MAPPED && gpurx_gpu_mem_device(g,
			&Q->dev_buf, bytes, "device item buffers"))
		return -1;
	if (a->mem == GPURX_MEM_STAGED) {
		gq->pull_src = Q->host_buf;
		gq->pull_dst = Q->dev_buf;
	}
	rc = gpucuda_stream_create(&Q->stream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("cudaStreamCreate", rc);
	return 0;
}

static int
setup_gpu(struct gpurx_app *a, struct gpurx_gpu *g)
{
	size_t ft_bytes = gpurx_flow_table_bytes(a->opt.flow_capacity);
	struct rte_gpu_comm_list *lists[GPURX_MAX_QUEUES];
	int rc;

	RTE_BUILD_BUG_ON(GPURX_MAX_QUEUES > GPUCOMM_MAX_RINGS);
	if (gpurx_gpu_use(g) != 0)
		return -1;
	if (gpurx_gpu_mem_pinned(g, &g->gq, g->nq * sizeof(*g->gq),
			"queue table"))
		return -1;
	for (uint16_t r = 0; r < g->nq; r++)
		if (setup_queue(a, g, r) != 0)
			return -1;
	if (a->mem == GPURX_MEM_HOST_MAPPED &&
			gpurx_gpu_mem_register_pools(a, g) != 0)
		return -1;
	/* --split: the kernel reads the headers where the port wrote them,
	 * in its GPU's header pool. */
	if (a->n_hdr_pools > 0 &&
			gpurx_gpu_mem_register_pool(g, a->hdr_pools[g->idx]) != 0)
		return -1;
	if (gpurx_gpu_mem_upload(g, &g->d_prog, a->filter.insns,
			a->filter.len * sizeof(*a->filter.insns), "filter program") ||
			gpurx_gpu_mem_upload(g, &g->d_ft, a->ft, ft_bytes,
				"flow table"))
		return -1;
	/* Its kernel knows a queue by its ring: the ports of its rings'
	 * queues in its table's header (one port: every queue's is 0). */
	if (a->n_ports > 1) {
		struct gpurx_flow_table hdr = *a->ft;

		if (gpurx_flow_gpu_queue_ports(a, g->idx, &hdr) != 0)
			return -1;
		rc = gpucuda_copy(g->d_ft, &hdr, sizeof(hdr));
		if (rc != 0)
			return gpurx_gpu_cuda_fail("flow table header", rc);
	}
	/* Flows end: the queues' order slots, every item not yet seen. */
	if (a->fx != NULL) {
		size_t tb = (size_t)g->nq *
			gpurx_flow_order_stride(a->opt.ring_items) *
			sizeof(unsigned long long);
		void *zero = calloc(1, tb);

		rc = zero == NULL ? -1 : gpurx_gpu_mem_upload(g,
			&g->d_flow_order, zero, tb, "flow order slots");
		free(zero);
		if (rc != 0) {
			if (zero == NULL)
				GPURX_LOG(ERR, "error: no memory for %zu bytes\n", tb);
			return -1;
		}
	}
	/* The quit flag and the dispatch state: what the kernels of the
	 * ring library need besides the lists. Its GPU memory is counted
	 * with the app's. */
	for (uint16_t r = 0; r < g->nq; r++)
		lists[r] = g->q[r].list;
	rc = gpucomm_kernel_setup(&g->ck, g->id, lists, g->nq,
		a->opt.ring_items, RTE_MIN(a->opt.ring_items,
			(uint32_t)GPURX_BLOCKS_PER_QUEUE_MAX));
	if (rc != 0) {
		GPURX_LOG(ERR, "error: GPU %d kernel state: %s\n", g->id,
			rte_strerror(-rc));
		return -1;
	}
	g->dev_bytes += g->ck.state_bytes;
	/* Every ring of this GPU tagged (setup_queue). */
	g->ck.kp.lap_tags = !a->opt.no_lap_tags;
	g->kp.gq = g->gq;
	g->kp.prog = g->d_prog;
	g->kp.prog_len = a->filter.len;
	g->kp.ft = g->d_ft;
	g->kp.flow_order.slots = g->d_flow_order;
	g->kp.flow_order.stride = gpurx_flow_order_stride(a->opt.ring_items);
	g->kp.capture = a->cap != NULL;
	g->kp.split = a->split != 0;
	g->kp.stamps = a->opt.stamps != 0;
	if (a->n_gpus > 1)
		printf("memory: GPU %d: ", g->id);
	else
		printf("memory: ");
	printf("%u ring items x %u packets per queue, %zu MiB pinned "
		"host, %zu MiB GPU (%s)\n", a->opt.ring_items, a->opt.burst,
		g->pinned_bytes >> 20, g->dev_bytes >> 20,
		a->opt.launch_per_burst ? "kernel per burst" : "persistent kernel");
	gpurx_watch_init(&g->watch, g->nq, a->clk.hz, a->opt.stall_ms,
		rte_get_tsc_cycles());
	return 0;
}

int
gpurx_gpu_setup(struct gpurx_app *a)
{
	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (setup_gpu(a, a->gpus[k]) != 0)
			return -1;
	return 0;
}

int
gpurx_gpu_launch(struct gpurx_app *a)
{
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		struct gpurx_gpu *g = a->gpus[k];
		int rc;

		if (gpurx_gpu_use(g) != 0)
			return -1;
		if (!a->opt.launch_per_burst) {
			if (launch_persistent(g) != 0)
				return -1;
			continue;
		}
		/* The item kernels read each item's packet list and status
		 * pointers from the dispatch state: set once, here. */
		rc = gpucomm_cuda_state_init(&g->ck.kp, g->q[0].stream);
		if (rc != 0)
			return gpurx_gpu_cuda_fail("dispatch state", rc);
	}
	return 0;
}

/* GPU g's kernel told to quit (with the others: they quit together). */
static int
stop_kernel_begin(struct gpurx_gpu *g)
{
	if (!g->kernel_running || g->dead)
		return 0;
	/* Every item is back (lcores drained): the kernel idles. */
	if (gpucomm_kernel_quit(&g->ck) != 0) {
		GPURX_LOG(ERR, "error: GPU %d: persistent kernel's quit flag not "
			"set\n", g->id);
		return -1;
	}
	return 0;
}

static int
stop_gpu(struct gpurx_app *a, struct gpurx_gpu *g, struct gpurx_flow_table *ft)
{
	uint64_t t0 = rte_get_tsc_cycles(), hz = a->clk.hz;
	int rc = 0, busy = 0;

	if (g->kernel_running && g->dead) {
		/* Found ended by the watch: it reads nothing any more, and
		 * after a fault the context takes no more calls. */
		g->kernel_running = 0;
		return -1;
	}
	if (gpurx_gpu_use(g) != 0)
		return -1;
	if (g->kernel_running) {
		do {
			busy = gpucuda_stream_busy(g->kstream);
			if (busy == -1)
				rte_delay_us_sleep(100);
		} while (busy == -1 && (rte_get_tsc_cycles() - t0) * 1000 / hz <
				KERNEL_QUIT_TIMEOUT_MS);
		if (busy != 0) {
			GPURX_LOG(ERR, "error: GPU %d: persistent kernel %s\n",
				g->id, busy == -1 ? "did not quit within 1 s" :
				gpucuda_strerror(busy));
			/* Ended with an error: it no longer runs. */
			if (busy != -1)
				g->kernel_running = 0;
			return -1;
		}
		g->kernel_running = 0;
		if (a->n_gpus > 1)
			printf("gpu: GPU %d: persistent kernel quit in %.3f ms\n",
				g->id, (double)(rte_get_tsc_cycles() - t0) * 1000 /
				hz);
		else
			printf("gpu: persistent kernel quit in %.3f ms\n",
				(double)(rte_get_tsc_cycles() - t0) * 1000 / hz);
	}
	if (g->d_ft != NULL && ft != NULL) {
		rc = gpucuda_copy(ft, g->d_ft,
			gpurx_flow_table_bytes(a->opt.flow_capacity));
		if (rc != 0)
			return gpurx_gpu_cuda_fail("flow table from the GPU", rc);
		g->ft_back = 1;
	}
	return g->watch_failed ? -1 : 0;
}

int
gpurx_gpu_stop(struct gpurx_app *a)
{
	const size_t ft_bytes = gpurx_flow_table_bytes(a->opt.flow_capacity);
	int status = 0;

	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (gpurx_gpu_use(a->gpus[k]) != 0 ||
				stop_kernel_begin(a->gpus[k]) != 0)
			status = -1;
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		struct gpurx_gpu *g = a->gpus[k];

		/* The first GPU's table is the run's; the others' are
		 * merged into it (gpurx_gpu_merge_flows()). */
		if (k > 0 && g->d_ft != NULL && g->ft == NULL) {
			g->ft = rte_malloc("gpurx_flows_gpu", ft_bytes, 64);
			if (g->ft == NULL) {
				GPURX_LOG(ERR, "error: GPU %d: no memory for its "
					"flow table's copy\n", g->id);
				status = -1;
			}
		}
		if (stop_gpu(a, g, k == 0 ? a->ft : g->ft) != 0)
			status = -1;
	}
	return status;
}

void
gpurx_gpu_merge_flows(struct gpurx_app *a)
{
	for (uint16_t k = 1; k < a->n_gpus; k++) {
		struct gpurx_gpu *g = a->gpus[k];

		if (g->ft_back)
			gpurx_flow_merge(a->ft, g->ft);
	}
}

void
gpurx_gpu_teardown(struct gpurx_app *a)
{
	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (a->gpus[k]->kernel_running)
			return;	/* a kernel may still read it all: leave it */
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		struct gpurx_gpu *g = a->gpus[k];

		/* Streams are destroyed on their device (said if not). */
		(void)gpurx_gpu_use(g);
		for (uint16_t r = 0; r < g->nq; r++) {
			struct gpu_queue *Q = &g->q[r];

			if (Q->list != NULL && rte_gpu_comm_destroy_list(Q->list,
					a->opt.ring_items) != 0)
				GPURX_LOG(WARNING, "warning: queue %u: comm list "
					"destroy failed\n", g->queues[r]);
			rte_free(Q->items);
			rte_free(Q->lat_hist);
			rte_free(Q->stash);
			gpucuda_stream_destroy(Q->stream);
		}
		gpucuda_stream_destroy(g->kstream);
		gpucomm_kernel_teardown(&g->ck);
		gpurx_gpu_mem_release(g);
	}
	gpurx_gpu_release_pools(a);
	for (uint16_t k = 0; k < a->n_gpus; k++) {
		rte_free(a->gpus[k]->ft);
		rte_free(a->gpus[k]);
		a->gpus[k] = NULL;
	}
	a->n_gpus = 0;
}
