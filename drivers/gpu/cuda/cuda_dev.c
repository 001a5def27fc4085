/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One GPU of this driver as gpudev and the application see it: what the
 * device holds beside its CUDA context, from probe to dev_close, and every
 * entry point into it (the rte_gpu ops table, rte_gpu_wmb, and the
 * rte_pmd_gpu_cuda_* calls on a device). Entry points live here, above mem,
 * reg_cache and dmabuf, because each passes the context's gate before the
 * part below does the work, and closing has to reach all of those parts.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_atomic.h>
#include <rte_spinlock.h>

#include "cuda_dev.h"
#include "cuda_dmabuf.h"
#include "cuda_gpu.h"
#include "cuda_log.h"
#include "cuda_mem.h"
#include "cuda_reg_cache.h"
#include "rte_pmd_gpu_cuda.h"

static int
stream_destroy(struct gpu_cuda_ctx *c)
{
	int ret = gpu_cuda_ctx_enter(c, c->name);
	int r;

	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL(c->name, cuStreamDestroy, c->stream);
	r = gpu_cuda_ctx_leave(c->name);
	if (ret == 0)
		c->stream = NULL;
	return ret != 0 ? ret : r;
}

static int
stream_create(struct gpu_cuda_ctx *c)
{
	int ret = gpu_cuda_ctx_enter(c, c->name);
	int r;

	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL(c->name, cuStreamCreate, &c->stream,
			CU_STREAM_NON_BLOCKING);
	r = gpu_cuda_ctx_leave(c->name);
	if (ret == 0 && r != 0) {
		if (stream_destroy(c) != 0)
			CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
		ret = r;
	}
	if (ret != 0)
		c->stream = NULL;
	return ret;
}

int
gpu_cuda_dev_setup(struct gpu_cuda_ctx *c)
{
	int ret;

	c->active = 0;
	c->closing = 0;
	c->stream = NULL;
	c->reg_cache = NULL;
	c->dmabufs = NULL;
	c->retired_next = NULL;
	rte_spinlock_init(&c->dmabuf_lock);
	ret = gpu_cuda_mem_table_init(&c->mem);
	if (ret != 0)
		return ret;
	ret = stream_create(c);
	if (ret != 0)
		goto fini_table;
	ret = gpu_cuda_reg_cache_init(c);
	if (ret != 0)
		goto destroy_stream;
	return 0;

destroy_stream:
	if (stream_destroy(c) != 0)
		CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
fini_table:
	gpu_cuda_mem_table_fini(&c->mem);
	return ret;
}

int
gpu_cuda_dev_teardown(struct gpu_cuda_ctx *c)
{
	int ret = 0;

	gpu_cuda_reg_cache_fini(c);
	if (c->stream != NULL) {
		ret = stream_destroy(c);
		/* Tried once more if the context could not be entered: a
		 * passing failure must not leak it. */
		if (c->stream != NULL && stream_destroy(c) != 0)
			CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
	}
	gpu_cuda_mem_table_fini(&c->mem);
	return ret;
}

/* gpu_cuda_ctx_get for a public function of rte_pmd_gpu_cuda.h: the device
 * of dev_id, if it is one of this driver's. *err gets the negative errno on
 * NULL. */
static struct gpu_cuda_ctx *
ctx_get_by_id(int16_t dev_id, const char *op, int *err)
{
	struct rte_gpu_info info;
	struct gpu_cuda_ctx *c;
	struct rte_gpu *dev;

	*err = -ENODEV;
	if (rte_gpu_info_get(dev_id, &info) != 0 ||
			(dev = rte_gpu_get_by_name(info.name)) == NULL) {
		CUDA_LOG(ERR, "%s: no GPU %d", op, dev_id);
		return NULL;
	}
	if (dev->ops.dev_close != gpu_cuda_dev_close) {
		CUDA_LOG(ERR, "%s: GPU %d (%s) is not a GPU of the CUDA driver",
			op, dev_id, info.name);
		return NULL;
	}
	c = gpu_cuda_ctx_get(dev, op);
	if (c != NULL)
		*err = 0;
	return c;
}

static int
cuda_wmb(struct rte_gpu *dev)
{
	struct gpu_cuda_ctx *c = __atomic_load_n(
			(struct gpu_cuda_ctx **)&dev->process_private,
			__ATOMIC_ACQUIRE);
	int ret, r;

	/* Orders the CPU's earlier stores (including write-combined GDRCopy
	 * mappings) before whatever the caller writes next, typically the
	 * flag or status that publishes the data to the GPU. */
	rte_wmb();
	if (c == NULL)
		return -ENODEV;
	if (!c->flush_on_wmb) {
		/* Ordered by the GPU itself for its own kernels: the CPU
		 * barrier is all there is to do. Neither ordered nor
		 * flushable: writes a NIC made into GPU memory may not be
		 * visible yet, and saying 0 would be a lie (the probe log
		 * says so once; this is the per-burst path). */
		return c->caps.rdma_writes_ordering >=
			CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER ? 0 : -ENOTSUP;
	}
	/* Makes writes peers (a NIC through GPUDirect RDMA) made into this
	 * GPU's memory visible to the context's kernels before the caller
	 * tells them the data is there. */
	c = gpu_cuda_ctx_get(dev, "wmb");
	if (c == NULL)
		return -ENODEV;
	ret = gpu_cuda_ctx_enter(c, "wmb");
	if (ret == 0) {
		ret = GPU_CUDA_CALL("wmb", cuFlushGPUDirectRDMAWrites,
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
		r = gpu_cuda_ctx_leave("wmb");
		if (ret == 0)
			ret = r;
	}
	gpu_cuda_ctx_put(c);
	return ret;
}

int
gpu_cuda_dev_close(struct rte_gpu *dev)
{
	const char *name = dev->mpshared->info.name;
	struct gpu_cuda_ctx *c = dev->process_private;
	unsigned int fds;
	int16_t child;
	int ret;
	int r;

	if (c == NULL)
		return 0;
	RTE_GPU_FOREACH_CHILD(child, dev->mpshared->info.dev_id) {
		CUDA_LOG(ERR, "close %s: child device %d still open, close it first",
			name, child);
		return -EBUSY;
	}
	/* From here on calls are refused, and those in flight are over: no
	 * one uses the table, and no entry is added after the drain. */
	if (!gpu_cuda_ctx_begin_close(c))
		return -EBUSY;
	/* Parked registrations first, while EAL's callback can still remove
	 * them concurrently: then no event can be missed. */
	gpu_cuda_reg_cache_flush(c);
	ret = gpu_cuda_mem_release_all(c, name);
	/* Freeing the allocations closed their fds; none should be left. */
	fds = gpu_cuda_dmabuf_release_all(c);
	if (fds != 0)
		CUDA_LOG(ERR, "close %s: %u dma-buf fd(s) outlived their allocation, closed",
			name, fds);
	r = gpu_cuda_dev_teardown(c);
	if (r != 0 && ret == 0)
		ret = r;
	if (c->primary) {
		r = GPU_CUDA_CALL("dev_close", cuDevicePrimaryCtxRelease, c->cu_dev);
		if (r != 0 && ret == 0)
			ret = r;
	}
	gpu_cuda_mp_forget(name);
	CUDA_LOG(INFO, "closed %s", name);
	gpu_cuda_ctx_retire(dev, c);
	return ret;
}

/* The operations: each passes the context's gate (see gpu_cuda_ctx_get). */

#define GPU_CUDA_GATED_OP(op, proto, ...) \
static int \
cuda_ ## op proto \
{ \
	struct gpu_cuda_ctx *c = gpu_cuda_ctx_get(dev, #op); \
	int ret; \
 \
	if (c == NULL) \
		return -ENODEV; \
	ret = gpu_cuda_ ## op(c, __VA_ARGS__); \
	gpu_cuda_ctx_put(c); \
	return ret; \
}

GPU_CUDA_GATED_OP(mem_alloc,
		(struct rte_gpu *dev, size_t size, unsigned int align, void **ptr),
		size, align, ptr)
GPU_CUDA_GATED_OP(mem_free, (struct rte_gpu *dev, void *ptr), ptr)
GPU_CUDA_GATED_OP(mem_register, (struct rte_gpu *dev, size_t size, void *ptr),
		size, ptr)
GPU_CUDA_GATED_OP(mem_unregister, (struct rte_gpu *dev, void *ptr), ptr)
GPU_CUDA_GATED_OP(mem_cpu_map,
		(struct rte_gpu *dev, size_t size, void *ptr_in, void **ptr_out),
		size, ptr_in, ptr_out)
GPU_CUDA_GATED_OP(mem_cpu_unmap, (struct rte_gpu *dev, void *ptr), ptr)

void
gpu_cuda_set_ops(struct rte_gpu *dev)
{
	dev->ops.dev_close = gpu_cuda_dev_close;
	dev->ops.mem_alloc = cuda_mem_alloc;
	dev->ops.mem_free = cuda_mem_free;
	dev->ops.mem_register = cuda_mem_register;
	dev->ops.mem_unregister = cuda_mem_unregister;
	dev->ops.mem_cpu_map = cuda_mem_cpu_map;
	dev->ops.mem_cpu_unmap = cuda_mem_cpu_unmap;
	dev->ops.wmb = cuda_wmb;
}

int
rte_pmd_gpu_cuda_reg_cache_stats_get(int16_t dev_id,
		struct rte_pmd_gpu_cuda_reg_cache_stats *stats)
{
	struct gpu_cuda_ctx *c;
	int ret;

	if (stats == NULL) {
		CUDA_LOG(ERR, "reg_cache_stats_get(%d): NULL stats", dev_id);
		return -EINVAL;
	}
	c = ctx_get_by_id(dev_id, "reg_cache_stats_get", &ret);
	if (c == NULL)
		return ret;
	ret = gpu_cuda_reg_cache_stats(c, stats);
	if (ret != 0)
		CUDA_LOG(ERR, "reg_cache_stats_get on %s: no registration cache (probe with devarg reg_cache=1)",
			c->name);
	gpu_cuda_ctx_put(c);
	return ret;
}

int
rte_pmd_gpu_cuda_reg_cache_flush(int16_t dev_id)
{
	struct gpu_cuda_ctx *c;
	int ret;

	c = ctx_get_by_id(dev_id, "reg_cache_flush", &ret);
	if (c == NULL)
		return ret;
	if (c->reg_cache == NULL) {
		CUDA_LOG(ERR, "reg_cache_flush on %s: no registration cache (probe with devarg reg_cache=1)",
			c->name);
		ret = -ENOTSUP;
	} else {
		ret = (int)gpu_cuda_reg_cache_flush(c);
	}
	gpu_cuda_ctx_put(c);
	return ret;
}

int
rte_pmd_gpu_cuda_dmabuf_export(int16_t dev_id, const void *ptr, size_t size,
		int *fd, uint64_t *offset)
{
	struct gpu_cuda_ctx *c;
	int ret;

	c = ctx_get_by_id(dev_id, "dmabuf_export", &ret);
	if (c == NULL)
		return ret;
	ret = gpu_cuda_dmabuf_export(c, ptr, size, fd, offset);
	gpu_cuda_ctx_put(c);
	return ret;
}

int
rte_pmd_gpu_cuda_dmabuf_close(int16_t dev_id, int fd)
{
	struct gpu_cuda_ctx *c;
	int ret;

	c = ctx_get_by_id(dev_id, "dmabuf_close", &ret);
	if (c == NULL)
		return ret;
	ret = gpu_cuda_dmabuf_close(c, fd);
	gpu_cuda_ctx_put(c);
	return ret;
}
