/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * dma-buf export of GPU memory for NICs (GPUDirect RDMA without
 * nvidia-peermem): cuMemGetHandleForAddressRange over whole 64 KiB GPU
 * pages of an allocation made through this driver.
 *
 * No P2P token is involved: the fd is the only handle, it is never logged
 * with anything that would let another process map the memory, and it is
 * closed with the allocation.
 *
 * Works on the context alone (the table, its dmabuf list, entering it):
 * mem_free calls in here to close an allocation's fds, so nothing here may
 * call mem; the public entry points are cuda_dev.c's.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "cuda_dmabuf.h"
#include "cuda_gpu.h"
#include "cuda_log.h"

struct gpu_cuda_dmabuf {
	struct gpu_cuda_dmabuf *next;
	uint64_t mem_id;      /* the allocation's gpu_cuda_mem id */
	uintptr_t start;      /* exported range */
	size_t len;
	int fd;               /* -1 while the export is in progress */
	bool cancelled;       /* the allocation was freed meanwhile */
};

/* dmabuf_lock held. */
static void
unlink_locked(struct gpu_cuda_ctx *c, struct gpu_cuda_dmabuf *d)
{
	struct gpu_cuda_dmabuf **link;

	for (link = &c->dmabufs; *link != NULL; link = &(*link)->next) {
		if (*link == d) {
			*link = d->next;
			d->next = NULL;
			return;
		}
	}
}

static void
close_fd(struct gpu_cuda_ctx *c, struct gpu_cuda_dmabuf *d, const char *why)
{
	if (close(d->fd) != 0)
		CUDA_LOG(ERR, "%s: %s: close of dma-buf fd %d failed: %s",
			c->name, why, d->fd, strerror(errno));
	else
		CUDA_LOG(DEBUG, "%s: %s: dma-buf fd %d of %#" PRIxPTR " closed",
			c->name, why, d->fd, d->start);
}

/* Closes and frees a chain of records. */
static unsigned int
close_chain(struct gpu_cuda_ctx *c, struct gpu_cuda_dmabuf *d, const char *why)
{
	unsigned int n = 0;

	while (d != NULL) {
		struct gpu_cuda_dmabuf *next = d->next;

		close_fd(c, d, why);
		free(d);
		d = next;
		n++;
	}
	return n;
}

/* Takes out the records matching (all when all is set); marks matching
 * exports still in progress as cancelled instead. */
static struct gpu_cuda_dmabuf *
take_locked(struct gpu_cuda_ctx *c, bool all, uint64_t mem_id)
{
	struct gpu_cuda_dmabuf **link = &c->dmabufs;
	struct gpu_cuda_dmabuf *taken = NULL;

	while (*link != NULL) {
		struct gpu_cuda_dmabuf *d = *link;

		if (!all && d->mem_id != mem_id) {
			link = &d->next;
			continue;
		}
		if (d->fd < 0) {
			d->cancelled = true;
			link = &d->next;
			continue;
		}
		*link = d->next;
		d->next = taken;
		taken = d;
	}
	return taken;
}

void
gpu_cuda_dmabuf_release_alloc(struct gpu_cuda_ctx *c, uint64_t mem_id)
{
	struct gpu_cuda_dmabuf *taken;

	rte_spinlock_lock(&c->dmabuf_lock);
	taken = take_locked(c, false, mem_id);
	rte_spinlock_unlock(&c->dmabuf_lock);
	close_chain(c, taken, "allocation freed");
}

unsigned int
gpu_cuda_dmabuf_release_all(struct gpu_cuda_ctx *c)
{
	struct gpu_cuda_dmabuf *taken;

	rte_spinlock_lock(&c->dmabuf_lock);
	taken = take_locked(c, true, 0);
	rte_spinlock_unlock(&c->dmabuf_lock);
	return close_chain(c, taken, "device closed");
}

struct export_request {
	struct gpu_cuda_ctx *c;
	uintptr_t ptr;
	size_t size;
	struct gpu_cuda_dmabuf *d;
};

/* Under the table lock: the allocation cannot be freed meanwhile, and the
 * record is visible to mem_free before the lock is dropped. */
static int
claim_locked(struct gpu_cuda_mem *m, void *arg)
{
	struct export_request *req = arg;
	struct gpu_cuda_dmabuf *d = req->d;
	uintptr_t start, end;

	if (m->kind != GPU_CUDA_MEM_DEVICE) {
		CUDA_LOG(ERR, "dmabuf_export(%#" PRIxPTR ") on %s: registered host memory, not GPU memory",
			req->ptr, req->c->name);
		return -EINVAL;
	}
	if (req->size > m->size - (req->ptr - m->ptr)) {
		CUDA_LOG(ERR, "dmabuf_export(%#" PRIxPTR ", %zu) on %s: past the end of the allocation at %#" PRIxPTR " (%zu bytes)",
			req->ptr, req->size, req->c->name, m->ptr, m->size);
		return -EINVAL;
	}
	start = RTE_ALIGN_FLOOR(req->ptr, (uintptr_t)GPU_CUDA_PAGE_SIZE);
	end = RTE_ALIGN_CEIL(req->ptr + req->size, (uintptr_t)GPU_CUDA_PAGE_SIZE);
	if (start < m->base || end > m->base + m->base_size) {
		CUDA_LOG(ERR, "dmabuf_export(%#" PRIxPTR ", %zu) on %s: the %u KiB GPU pages around it are not all in the allocation; allocate with alignment %u",
			req->ptr, req->size, req->c->name,
			GPU_CUDA_PAGE_SIZE / 1024, GPU_CUDA_PAGE_SIZE);
		return -EINVAL;
	}
	d->mem_id = m->id;
	d->start = start;
	d->len = end - start;
	d->fd = -1;
	rte_spinlock_lock(&req->c->dmabuf_lock);
	d->next = req->c->dmabufs;
	req->c->dmabufs = d;
	rte_spinlock_unlock(&req->c->dmabuf_lock);
	return 0;
}

int
gpu_cuda_dmabuf_export(struct gpu_cuda_ctx *c, const void *ptr, size_t size,
		int *fd, uint64_t *offset)
{
	struct export_request req = {
		.c = c, .ptr = (uintptr_t)ptr, .size = size,
	};
	struct gpu_cuda_dmabuf *d;
	int handle = -1;
	int ret, r;

	if (ptr == NULL || size == 0 || fd == NULL || offset == NULL) {
		CUDA_LOG(ERR, "dmabuf_export(%p, %zu) on %s: %s", ptr, size,
			c->name, size == 0 ? "size 0" : "NULL argument");
		return -EINVAL;
	}
	if (gpu_cuda.cuMemGetHandleForAddressRange == NULL) {
		CUDA_LOG(ERR, "dmabuf_export on %s: CUDA driver %d.%d has no cuMemGetHandleForAddressRange (11.7 or newer needed)",
			c->name, gpu_cuda.driver_version / 1000,
			gpu_cuda.driver_version % 1000 / 10);
		return -ENOTSUP;
	}
	if (!c->caps.dmabuf_supported) {
		CUDA_LOG(ERR, "dmabuf_export on %s: the GPU or its kernel driver does not support dma-buf (DMA_BUF_SUPPORTED=0; needs the open GPU kernel modules and Linux 5.12+)",
			c->name);
		return -ENOTSUP;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	req.d = d;
	ret = gpu_cuda_mem_table_with_containing(&c->mem, req.ptr, claim_locked,
			&req);
	if (ret == -ENOENT)
		CUDA_LOG(ERR, "dmabuf_export(%p) on %s: not inside a GPU allocation of this device (foreign pointer, or already freed)",
			ptr, c->name);
	if (ret != 0) {
		free(d);
		return ret == -ENOENT ? -EINVAL : ret;
	}

	ret = gpu_cuda_ctx_enter(c, "dmabuf_export");
	if (ret == 0) {
		ret = GPU_CUDA_CALL("dmabuf_export", cuMemGetHandleForAddressRange,
				&handle, (CUdeviceptr)d->start, d->len,
				CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
		r = gpu_cuda_ctx_leave("dmabuf_export");
		if (ret == 0 && r != 0)
			ret = r;
	}
	if (ret == 0 && handle < 0)
		ret = -EIO;

	rte_spinlock_lock(&c->dmabuf_lock);
	unlink_locked(c, d);
	if (ret == 0 && d->cancelled) {
		CUDA_LOG(ERR, "dmabuf_export(%p) on %s: the allocation was freed during the export",
			ptr, c->name);
		ret = -EINVAL;
	}
	if (ret == 0) {
		d->fd = handle;
		d->next = c->dmabufs;
		c->dmabufs = d;
	}
	rte_spinlock_unlock(&c->dmabuf_lock);
	if (ret != 0) {
		if (handle >= 0 && close(handle) != 0)
			CUDA_LOG(ERR, "dmabuf_export on %s: close of the unused dma-buf fd failed: %s",
				c->name, strerror(errno));
		if (ret != -EINVAL)
			CUDA_LOG(ERR, "dmabuf_export(%p, %zu) on %s: not exported",
				ptr, size, c->name);
		free(d);
		return ret;
	}
	*fd = handle;
	*offset = req.ptr - d->start;
	CUDA_LOG(INFO, "%s: GPU memory %#" PRIxPTR "..%#" PRIxPTR " exported as dma-buf fd %d",
		c->name, d->start, d->start + d->len, handle);
	return 0;
}

int
gpu_cuda_dmabuf_close(struct gpu_cuda_ctx *c, int fd)
{
	struct gpu_cuda_dmabuf *d;

	rte_spinlock_lock(&c->dmabuf_lock);
	for (d = c->dmabufs; d != NULL; d = d->next)
		if (d->fd == fd && fd >= 0)
			break;
	if (d != NULL)
		unlink_locked(c, d);
	rte_spinlock_unlock(&c->dmabuf_lock);
	if (d == NULL) {
		CUDA_LOG(ERR, "dmabuf_close(%d) on %s: not a dma-buf fd this device exported (or already closed, by this call or by freeing its allocation)",
			fd, c->name);
		return -EINVAL;
	}
	close_fd(c, d, "dmabuf_close");
	free(d);
	return 0;
}
