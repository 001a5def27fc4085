/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU of dpdk-gpu-rx and every buffer the app takes for it, in one
 * place and through gpudev, the API this project serves: host buffers the
 * kernel reads and writes (side data, results, capture arena, bounce and
 * staging areas) are pages registered with rte_gpu_mem_register, device
 * buffers come from rte_gpu_mem_alloc, the --mem gpu mbuf pool too, and
 * the host pools' chunks are registered for host-mapped mode. So the
 * driver's memory table and leak report at close see all of it. The CUDA
 * runtime only copies into GPU memory here; it launches the kernels and
 * owns the streams elsewhere.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "gpu_path.h"
#include "gpu_priv.h"
#include "gpuapp_eal.h"
#include "gpuapp_pool.h"
#include "log.h"

int
gpurx_gpu_cuda_fail(const char *what, int err)
{
	GPURX_LOG(ERR, "error: %s: %s\n", what, gpucuda_strerror(err));
	return -1;
}

int
gpurx_gpu_use(const struct gpurx_gpu *g)
{
	int dev, rc = gpucuda_select(g->name, &dev);

	if (rc != 0) {
		GPURX_LOG(ERR, "error: GPU %d (%s): CUDA runtime: %s\n", g->id,
			g->name, gpucuda_strerror(rc));
		return -1;
	}
	return 0;
}

/* The entry of gpudev id in a->gpus[], added (opened) on its first queue. */
static struct gpurx_gpu *
gpu_of(struct gpurx_app *a, int16_t id)
{
	struct rte_gpu_info info;
	struct gpurx_gpu *g;
	int rc;

	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (a->gpus[k]->id == id)
			return a->gpus[k];
	rc = rte_gpu_info_get(id, &info);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: rte_gpu_info_get(%d): %s\n", id,
			rte_strerror(-rc));
		return NULL;
	}
	g = rte_zmalloc("gpurx_gpu", sizeof(*g), 0);
	if (g == NULL) {
		GPURX_LOG(ERR, "error: GPU %d: no memory for its state\n", id);
		return NULL;
	}
	g->id = id;
	g->idx = a->n_gpus;
	snprintf(g->name, sizeof(g->name), "%s", info.name);
	/* Torn down with the others from here, whatever fails next. */
	a->gpus[a->n_gpus++] = g;
	/* The runtime must drive the same device (and primary context). */
	rc = gpucuda_select(info.name, &g->cuda_dev);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: GPU %d (%s): CUDA runtime: %s\n", id,
			info.name, gpucuda_strerror(rc));
		return NULL;
	}
	printf("gpu: gpudev %d = %s (CUDA device %d), %zu MiB\n", id,
		info.name, g->cuda_dev, info.total_memory >> 20);
	return g;
}

int16_t
gpurx_gpu_id(const struct gpurx_app *a, uint16_t k)
{
	return a->gpus[k]->id;
}

int
gpurx_gpu_init(struct gpurx_app *a)
{
	int16_t map[GPURX_MAX_QUEUES];
	char err[256];
	int rc;

	if (rte_gpu_count_avail() == 0 ||
			rte_gpu_find_next(0, RTE_GPU_ID_ANY) < 0) {
		GPURX_LOG(ERR, "error: no GPU probed by DPDK gpudev (%s): it "
			"needs an NVIDIA GPU and its driver (libcuda.so.1); or run "
			"with --cpu\n", gpuapp_gpu_driver());
		return -1;
	}
	/* Each port's queues, as --gpus maps that port's; map[] by the
	 * queues' global index. */
	for (uint16_t i = 0; i < a->n_ports; i++) {
		rc = gpuapp_gpus_map_port(&a->opt.gpus, "/sys", a->ports[i].id,
			a->opt.queues, map + i * a->opt.queues, err, sizeof(err));
		if (rc != 0) {
			GPURX_LOG(ERR, "error: %s\n", err);
			return -1;
		}
	}
	for (uint16_t q = 0; q < a->nq; q++) {
		struct gpurx_gpu *g = gpu_of(a, map[q]);

		if (g == NULL)
			return -1;
		a->q_gpu[q] = (uint8_t)g->idx;
		a->q_ring[q] = g->nq;
		g->queues[g->nq++] = q;
	}
	/* One GPU says nothing more than before several were possible. */
	for (uint16_t k = 0; a->n_gpus > 1 && k < a->n_gpus; k++) {
		const struct gpurx_gpu *g = a->gpus[k];
		char qs[GPURX_MAX_QUEUES * 4] = "";
		size_t len = 0;

		for (uint16_t r = 0; r < g->nq && len < sizeof(qs); r++)
			len += snprintf(qs + len, sizeof(qs) - len, "%s%u",
				r > 0 ? "," : "", g->queues[r]);
		printf("gpu: GPU %d serves queue%s %s\n", g->id,
			g->nq > 1 ? "s" : "", qs);
	}
	return 0;
}

/* Keeps buf in the registry; on failure the caller releases it. */
static int
track(struct gpurx_gpu *g, void *ptr, size_t len, enum gpurx_buf_kind kind)
{
	if (g->n_bufs == g->bufs_cap) {
		unsigned int cap = g->bufs_cap ? g->bufs_cap * 2 : 64;
		struct gpurx_gpu_buf *b = realloc(g->bufs, cap * sizeof(*b));

		if (b == NULL) {
			GPURX_LOG(ERR, "error: buffer registry: out of memory\n");
			return -1;
		}
		g->bufs = b;
		g->bufs_cap = cap;
	}
	g->bufs[g->n_bufs++] = (struct gpurx_gpu_buf){ ptr, len, kind };
	return 0;
}

int
gpurx_gpu_mem_pinned(struct gpurx_gpu *g, void *p, size_t n, const char *what)
{
	size_t len = RTE_ALIGN_CEIL(RTE_MAX(n, (size_t)1),
		(size_t)sysconf(_SC_PAGESIZE));
	/* Whole pages of their own: a registration pins whole pages, and
	 * gpudev refuses to register a range twice. Anonymous pages come
	 * zeroed. */
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*(void **)p = NULL;
	if (m == MAP_FAILED) {
		GPURX_LOG(ERR, "error: %s: %zu bytes: %s\n", what, len,
			strerror(errno));
		return -1;
	}
	if (rte_gpu_mem_register(g->id, len, m) != 0) {
		GPURX_LOG(ERR, "error: %s: rte_gpu_mem_register(%zu bytes): %s\n",
			what, len, rte_strerror(rte_errno));
		munmap(m, len);
		return -1;
	}
	if (track(g, m, len, GPURX_BUF_PINNED) != 0) {
		if (rte_gpu_mem_unregister(g->id, m) == 0)
			munmap(m, len);
		return -1;
	}
	g->pinned_bytes += len;
	*(void **)p = m;
	return 0;
}

int
gpurx_gpu_mem_device(struct gpurx_gpu *g, void *d, size_t n, const char *what)
{
	void *m = rte_gpu_mem_alloc(g->id, RTE_MAX(n, (size_t)1), 0);

	*(void **)d = NULL;
	if (m == NULL) {
		GPURX_LOG(ERR, "error: %s: %zu bytes of GPU memory: %s\n", what,
			n, rte_strerror(rte_errno));
		return -1;
	}
	if (track(g, m, n, GPURX_BUF_DEVICE) != 0) {
		rte_gpu_mem_free(g->id, m);
		return -1;
	}
	g->dev_bytes += n;
	*(void **)d = m;
	return 0;
}

int
gpurx_gpu_mem_upload(struct gpurx_gpu *g, void *d, const void *src, size_t n,
		const char *what)
{
	int rc;

	if (gpurx_gpu_mem_device(g, d, n, what) != 0)
		return -1;
	rc = n == 0 ? 0 : gpucuda_copy(*(void **)d, src, n);
	return rc == 0 ? 0 : gpurx_gpu_cuda_fail(what, rc);
}

void
gpurx_gpu_port_unmap(struct gpurx_app *a)
{
	for (uint16_t k = 0; k < a->n_gpus; k++)
		if (a->gpus[k]->ext != NULL)
			gpuapp_ext_pool_unmap(&a->gpus[k]->extp);
}

/* GPU g's --mem gpu pool and its memory, whatever of them exists. 1 when
 * there was one, else 0. */
static int
release_ext_pool(struct gpurx_gpu *g)
{
	if (g->ext == NULL)
		return 0;
	gpuapp_ext_pool_free(&g->extp);
	/* It held only this pool yet (a fallback to host pools follows) or
	 * is done with (teardown). */
	memset(&g->rd, 0, sizeof(g->rd));
	g->dev_bytes -= g->ext_len;
	g->ext = NULL;
	g->ext_len = 0;
	return 1;
}

void
gpurx_gpu_release_pools(struct gpurx_app *a)
{
	int had = 0;

	for (uint16_t k = 0; k < a->n_gpus; k++)
		had |= release_ext_pool(a->gpus[k]);
	if (!had)
		return;
	for (uint16_t i = 0; i < a->n_pools; i++)
		a->pools[i] = NULL;
	a->n_pools = 0;
}

/* Port p refused to map GPU g's memory for DMA (rte_errno e): 1 where
 * --mem auto falls back to host memory, else -1; said. */
static int
dma_refused(const struct gpurx_app *a, const struct gpurx_gpu *g,
		const struct gpurx_port *p, int e)
{
	if (a->opt.mem == GPURX_MEM_AUTO) {
		printf("memory: port %u (%s) refused to map GPU %d's memory "
			"for DMA (rte_dev_dma_map: %s): packets in host "
			"memory mapped into the GPU instead\n", p->id,
			p->driver, g->id, rte_strerror(e));
		return 1;
	}
	GPURX_LOG(ERR, "error: --mem gpu: port %u (%s) cannot DMA into GPU "
		"%d's memory (rte_dev_dma_map: %s); is nvidia-peermem "
		"loaded? Use --mem host-mapped\n", p->id, p->driver,
		g->id, rte_strerror(e));
	return -1;
}

/* GPU g's --mem gpu pool, DMA-mapped for the port of each of its queues
 * (several ports share it): 0, 1 (refused by a port, --mem auto: said),
 * -1 (said). */
static int
create_gpu_pool(struct gpurx_app *a, struct gpurx_gpu *g, int cache)
{
	char name[RTE_MEMPOOL_NAMESIZE], err[256];
	const struct gpurx_port *p = gpurx_queue_port(a, g->queues[0]);
	const char *why;
	int rc;

	/* Whether the NIC's writes into GPU memory can be ordered before the
	 * kernel reads them; asked before any memory is taken. */
	why = gpurx_wmb_refusal(a->mem, rte_gpu_wmb(g->id));
	if (why != NULL) {
		GPURX_LOG(ERR, "error: --mem gpu on GPU %d: %s\n", g->id, why);
		return -1;
	}
	/* The first GPU's keeps the one-GPU name. */
	snprintf(name, sizeof(name), g->idx == 0 ? "gpurx_mbufs_gpu" :
		"gpurx_mbufs_gpu%u", g->idx);
	rc = gpuapp_ext_pool_create(&g->extp, name, g->id, p->id,
		a->pool_size, (unsigned int)cache, a->data_room, p->socket, err,
		sizeof(err));
	if (rc == 1)
		return dma_refused(a, g, p, rte_errno);
	/* The other ports of its queues: mapped once each (a port seen
	 * again is nothing to do). */
	for (uint16_t r = 1; rc == 0 && r < g->nq; r++) {
		const struct gpurx_port *qp = gpurx_queue_port(a, g->queues[r]);

		/* One port (the usual run): nothing to ask the port. */
		if (qp == p)
			continue;
		rc = gpuapp_ext_pool_map_port(&g->extp, qp->id, err,
			sizeof(err));
		if (rc == 1) {
			rc = dma_refused(a, g, qp, rte_errno);
			gpuapp_ext_pool_free(&g->extp);
			return rc;
		}
		if (rc != 0)
			gpuapp_ext_pool_free(&g->extp);
	}
	if (rc != 0) {
		GPURX_LOG(ERR, "error: --mem gpu: GPU %d: %s\n", g->id, err);
		return -1;
	}
	g->ext = g->extp.mem;
	g->ext_len = g->extp.len;
	g->dev_bytes += g->ext_len;
	/* Cannot fail: the table is empty. */
	gpurx_readable_add_pool(&g->rd, g->extp.mp);
	gpurx_readable_add_span(&g->rd, g->ext, g->ext_len);
	return 0;
}

int
gpurx_gpu_create_pool(struct gpurx_app *a)
{
	int cache = gpurx_mbuf_cache(a);
	int rc = 0;

	if (cache < 0)
		return -1;
	a->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	for (uint16_t k = 0; k < a->n_gpus && rc == 0; k++) {
		rc = create_gpu_pool(a, a->gpus[k], cache);
		if (rc == 0)
			a->pools[a->n_pools++] = a->gpus[k]->extp.mp;
	}
	if (rc != 0) {
		/* All in GPU memory or none. */
		gpurx_gpu_release_pools(a);
		return rc;
	}
	for (uint16_t q = 0; q < a->nq; q++)
		a->q_pool[q] = a->q_gpu[q];
	return 0;
}

/* Each chunk the GPU maps: in the registry, and readable by the kernel. */
static int
track_chunk(void *opaque, void *addr, size_t len)
{
	struct gpurx_gpu *g = opaque;

	if (track(g, addr, len, GPURX_BUF_CHUNK) != 0) {
		rte_gpu_mem_unregister(g->id, addr);
		return -1;
	}
	if (gpurx_readable_add_span(&g->rd, addr, len) != 0) {
		GPURX_LOG(ERR, "error: more than %u mempool chunks to register\n",
			GPURX_READABLE_SPANS);
		return -1;
	}
	return 0;
}

int
gpurx_gpu_mem_register_pool(struct gpurx_gpu *g, struct rte_mempool *mp)
{
	char err[256];

	if (g->chunks_failed)
		return -1;
	if (gpuapp_pool_register(g->id, mp, track_chunk, g, err,
			sizeof(err)) != 0) {
		GPURX_LOG(ERR, "error: GPU %d: %s\n", g->id, err);
		g->chunks_failed = 1;
		return -1;
	}
	if (gpurx_readable_add_pool(&g->rd, mp) != 0) {
		GPURX_LOG(ERR, "error: more than %u mempools for the GPU to "
			"read\n", GPURX_MAX_QUEUES);
		return -1;
	}
	return 0;
}

int
gpurx_gpu_mem_register_pools(struct gpurx_app *a, struct gpurx_gpu *g)
{
	/* Each pool once, and only those of g's queues: host memory is
	 * registered with one GPU (port.c gives each GPU pools of its own). */
	for (uint16_t i = 0; i < a->n_pools; i++) {
		int used = 0;

		for (uint16_t r = 0; r < g->nq && !used; r++)
			used = a->q_pool[g->queues[r]] == i;
		if (used && gpurx_gpu_mem_register_pool(g, a->pools[i]) != 0)
			return -1;
	}
	return 0;
}

void
gpurx_gpu_mem_release(struct gpurx_gpu *g)
{
	while (g->n_bufs > 0) {
		struct gpurx_gpu_buf *b = &g->bufs[--g->n_bufs];

		if (b->kind == GPURX_BUF_DEVICE) {
			if (rte_gpu_mem_free(g->id, b->ptr) != 0)
				GPURX_LOG(WARNING, "warning: GPU %d: "
					"rte_gpu_mem_free: %s\n", g->id,
					rte_strerror(rte_errno));
			continue;
		}
		if (rte_gpu_mem_unregister(g->id, b->ptr) != 0) {
			/* Still mapped for the GPU: the pages must stay. */
			GPURX_LOG(WARNING, "warning: GPU %d: "
				"rte_gpu_mem_unregister: %s\n", g->id,
				rte_strerror(rte_errno));
			continue;
		}
		if (b->kind == GPURX_BUF_PINNED)
			munmap(b->ptr, b->len);
	}
	free(g->bufs);
	g->bufs = NULL;
	g->bufs_cap = 0;
}
