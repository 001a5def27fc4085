/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_GPU_H
#define GPU_CUDA_GPU_H

/*
 * The device context object (cuda_ctx.c), which every other part of the
 * driver works on: what one GPU of this driver is, and what cuda_ctx.c
 * offers on it. It names no other part's functions, so that each part
 * can depend on it without depending on the others.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_dev.h>
#include <rte_spinlock.h>

#include <gpudev_driver.h>

#include "cuda_api.h"
#include "cuda_mem_table.h"

/*
 * GPU page size for GPUDirect RDMA and GDRCopy: peer mappings pin GPU
 * memory in 64 KiB pages, so buffers a NIC writes into or the CPU maps
 * should start and end on this boundary.
 */
#define GPU_CUDA_PAGE_SIZE (64 * 1024)

/* cuMemAlloc returns pointers aligned to at least this. */
#define GPU_CUDA_ALLOC_ALIGN 256

#define GPU_CUDA_BUS_ID_LEN 32

/* What the device supports, read once at probe. */
struct gpu_cuda_caps {
	int cc_major;
	int cc_minor;
	int rdma_supported;        /* GPU_DIRECT_RDMA_SUPPORTED */
	int rdma_flush_options;    /* CUflushGPUDirectRDMAWritesOptions bits */
	int rdma_writes_ordering;  /* CUGPUDirectRDMAWritesOrdering */
	int dmabuf_supported;
	int host_ptr_is_dev_ptr;   /* CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM */
};

struct gpu_cuda_reg_cache;
struct gpu_cuda_dmabuf;

/* process_private of every rte_gpu of this driver: one CUDA context. */
struct gpu_cuda_ctx {
	CUcontext ctx;
	CUdevice cu_dev;
	bool primary;         /* holds a primary context reference */
	bool use_gdrcopy;     /* devarg gdrcopy (default on) */
	bool reg_cache_on;    /* devarg reg_cache (default off) */
	size_t reg_cache_max; /* devarg reg_cache_max: bytes parked at most */
	/* wmb must flush GPUDirect RDMA writes: the GPU can, and does not
	 * order them natively for its own kernels (decided at probe). */
	bool flush_on_wmb;
	char bus_id[GPU_CUDA_BUS_ID_LEN];
	char name[RTE_DEV_NAME_MAX_LEN]; /* the gpudev name, for logs */
	struct gpu_cuda_caps caps;
	struct gpu_cuda_mem_table mem;
	/* Non-blocking stream of the context for the driver's own work
	 * (clearing new allocations): it must not wait for, nor be waited
	 * for by, the application's kernels on the legacy stream. */
	CUstream stream;
	struct gpu_cuda_reg_cache *reg_cache; /* NULL: not caching */
	/* dma-buf fds exported from this context's allocations. */
	rte_spinlock_t dmabuf_lock;
	struct gpu_cuda_dmabuf *dmabufs;
	/* Calls in flight and the closing flag (see gpu_cuda_ctx_get). */
	uint32_t active;
	uint32_t closing;
	struct gpu_cuda_ctx *retired_next; /* see gpu_cuda_ctx_retire */
};

/*
 * Enters a call on dev's context: returns it, or NULL (logged) when the
 * device has no context in this process or is closing. Every non-NULL
 * result must be given back with gpu_cuda_ctx_put once the call is done:
 * dev_close waits for calls in flight and releases nothing they hold.
 */
struct gpu_cuda_ctx *gpu_cuda_ctx_get(struct rte_gpu *dev, const char *op);
void gpu_cuda_ctx_put(struct gpu_cuda_ctx *c);

/* dev_close: refuses calls from now on and waits for those in flight.
 * False (logged) when another close is under way. */
bool gpu_cuda_ctx_begin_close(struct gpu_cuda_ctx *c);

/* dev_close, last: detaches c from dev; c is kept for late callers. */
void gpu_cuda_ctx_retire(struct rte_gpu *dev, struct gpu_cuda_ctx *c);

/* Makes the context current on the calling thread / restores the previous
 * one. Both log and return a negative errno on failure. */
int gpu_cuda_ctx_enter(const struct gpu_cuda_ctx *c, const char *what);
int gpu_cuda_ctx_leave(const char *what);

/* Undoes a host registration that no table entry holds (one the
 * registration cache kept), retrying once if the context could not be
 * entered. Returns 0 or the first error (logged). */
int gpu_cuda_host_unregister(struct gpu_cuda_ctx *c, uintptr_t base,
		const char *what);

/* One try of the above, without the leak log: *held is set when nothing
 * was undone because the context could not be entered. */
int gpu_cuda_host_unregister_try(struct gpu_cuda_ctx *c, uintptr_t base,
		const char *what, bool *held);

#endif /* GPU_CUDA_GPU_H */
