/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "gpuapp_pool.h"
#include "gpuapp_log.h"

/* GPU pages: what the DMA mapping and the GPU's peer access align to. */
#define GPUAPP_GPU_PAGE (64 * 1024)

static void
say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int
gpuapp_ext_pool_map_port(struct gpuapp_ext_pool *p, uint16_t port,
		char *err, size_t errlen)
{
	struct rte_eth_dev_info di;
	int rc, e;

	rc = rte_eth_dev_info_get(port, &di);
	if (rc != 0) {
		say(err, errlen, "port %u: rte_eth_dev_info_get: %s", port,
			rte_strerror(-rc));
		return rc;
	}
	if (di.device == p->dev)
		return 0;
	for (uint8_t i = 0; i < p->n_more; i++)
		if (p->more[i] == di.device)
			return 0;
	if (p->n_more == GPUAPP_EXT_POOL_MAX_MORE) {
		say(err, errlen, "port %u: a pool of GPU memory is mapped for "
			"%u devices at most", port, GPUAPP_EXT_POOL_MAX_MORE + 1);
		return -ENOSPC;
	}
	if (rte_dev_dma_map(di.device, p->mem, RTE_BAD_IOVA, p->len) != 0) {
		e = rte_errno;
		say(err, errlen, "port %u: rte_dev_dma_map: %s", port,
			rte_strerror(e));
		rte_errno = e;
		return 1;
	}
	p->more[p->n_more++] = di.device;
	return 0;
}

void
gpuapp_ext_pool_unmap(struct gpuapp_ext_pool *p)
{
	while (p->mem != NULL && p->n_more > 0)
		if (rte_dev_dma_unmap(p->more[--p->n_more], p->mem, RTE_BAD_IOVA,
				p->len) != 0)
			GPUAPP_LOG(WARNING, "warning: rte_dev_dma_unmap: %s\n",
				rte_strerror(rte_errno));
	if (p->mem == NULL || !p->mapped)
		return;
	if (rte_dev_dma_unmap(p->dev, p->mem, RTE_BAD_IOVA, p->len) != 0)
		GPUAPP_LOG(WARNING, "warning: rte_dev_dma_unmap: %s\n",
			rte_strerror(rte_errno));
	p->mapped = 0;
}

void
gpuapp_ext_pool_free(struct gpuapp_ext_pool *p)
{
	if (p->mem == NULL)
		return;
	rte_mempool_free(p->mp);
	p->mp = NULL;
	gpuapp_ext_pool_unmap(p);
	if (p->registered && rte_extmem_unregister(p->mem, p->len) != 0)
		GPUAPP_LOG(WARNING, "warning: rte_extmem_unregister: %s\n",
			rte_strerror(rte_errno));
	if (rte_gpu_mem_free(p->gpu_id, p->mem) != 0)
		GPUAPP_LOG(WARNING, "warning: rte_gpu_mem_free: %s\n",
			rte_strerror(rte_errno));
	p->mem = NULL;
	p->len = 0;
	p->registered = 0;
	p->mapped = 0;
}

int
gpuapp_ext_pool_create(struct gpuapp_ext_pool *p, const char *name,
		int16_t gpu_id, uint16_t port, uint32_t n, unsigned int cache,
		uint16_t data_room, int socket, char *err, size_t errlen)
{
	struct rte_pktmbuf_extmem ext;
	struct rte_eth_dev_info di;
	int rc, e;

	memset(p, 0, sizeof(*p));
	p->gpu_id = gpu_id;
	rc = rte_eth_dev_info_get(port, &di);
	if (rc != 0) {
		say(err, errlen, "port %u: rte_eth_dev_info_get: %s", port,
			rte_strerror(-rc));
		return rc;
	}
	p->dev = di.device;
	p->len = RTE_ALIGN_CEIL((size_t)n * data_room, GPUAPP_GPU_PAGE);
	p->mem = rte_gpu_mem_alloc(gpu_id, p->len, GPUAPP_GPU_PAGE);
	if (p->mem == NULL) {
		e = rte_errno;
		say(err, errlen, "%zu bytes of GPU memory: %s", p->len,
			rte_strerror(e));
		p->len = 0;
		return -e;
	}
	/* Known to EAL as external memory, then mapped for the port's DMA. */
	if (rte_extmem_register(p->mem, p->len, NULL, 0, GPUAPP_GPU_PAGE) != 0) {
		e = rte_errno;
		say(err, errlen, "rte_extmem_register: %s", rte_strerror(e));
		gpuapp_ext_pool_free(p);
		return -e;
	}
	p->registered = 1;
	rc = rte_dev_dma_map(p->dev, p->mem, RTE_BAD_IOVA, p->len);
	if (rc != 0) {
		e = rte_errno;
		say(err, errlen, "rte_dev_dma_map: %s", rte_strerror(e));
		gpuapp_ext_pool_free(p);
		rte_errno = e;
		return 1;
	}
	p->mapped = 1;
	ext.buf_ptr = p->mem;
	ext.buf_iova = RTE_BAD_IOVA;
	ext.buf_len = p->len;
	ext.elt_size = data_room;
	p->mp = rte_pktmbuf_pool_create_extbuf(name, n, cache, 0, data_room,
		socket, &ext, 1);
	if (p->mp == NULL) {
		e = rte_errno;
		say(err, errlen, "mbuf pool: %s", rte_strerror(e));
		gpuapp_ext_pool_free(p);
		return -e;
	}
	return 0;
}

struct reg_ctx {
	int16_t gpu_id;
	int failed;
	int (*cb)(void *, void *, size_t);
	void *opaque;
	char *err;
	size_t errlen;
};

static void
register_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
		struct rte_mempool_memhdr *hdr, unsigned int idx __rte_unused)
{
	struct reg_ctx *c = opaque;

	if (c->failed)
		return;
	if (rte_gpu_mem_register(c->gpu_id, hdr->len, hdr->addr) != 0) {
		say(c->err, c->errlen, "rte_gpu_mem_register(%p, %zu): %s",
			hdr->addr, hdr->len, rte_strerror(rte_errno));
		c->failed = 1;
		return;
	}
	if (c->cb(c->opaque, hdr->addr, hdr->len) != 0) {
		say(c->err, c->errlen, "chunk %p refused by the caller",
			hdr->addr);
		c->failed = 1;
	}
}

int
gpuapp_pool_register(int16_t gpu_id, struct rte_mempool *mp,
		int (*cb)(void *opaque, void *addr, size_t len), void *opaque,
		char *err, size_t errlen)
{
	struct reg_ctx c = { gpu_id, 0, cb, opaque, err, errlen };

	rte_mempool_mem_iter(mp, register_chunk, &c);
	return c.failed ? -1 : 0;
}
