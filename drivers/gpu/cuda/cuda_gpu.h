/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_GPU_H
#define GPU_CUDA_GPU_H

#include <stdbool.h>

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

/* process_private of every rte_gpu of this driver: one CUDA context. */
struct gpu_cuda_ctx {
	CUcontext ctx;
	CUdevice cu_dev;
	bool primary;         /* holds a primary context reference */
	bool use_gdrcopy;     /* devarg gdrcopy (default on) */
	/* wmb must flush GPUDirect RDMA writes: the GPU can, and does not
	 * order them natively for its own kernels (decided at probe). */
	bool flush_on_wmb;
	char bus_id[GPU_CUDA_BUS_ID_LEN];
	struct gpu_cuda_caps caps;
	struct gpu_cuda_mem_table mem;
};

/* Fills the operations every device of this driver has. */
void gpu_cuda_set_ops(struct rte_gpu *dev);

/* dev_close: releases what the context still holds (logging each leak),
 * then the context itself. */
int gpu_cuda_dev_close(struct rte_gpu *dev);

/* Makes the context current on the calling thread / restores the previous
 * one. Both log and return a negative errno on failure. */
int gpu_cuda_ctx_enter(const struct gpu_cuda_ctx *c, const char *what);
int gpu_cuda_ctx_leave(const char *what);

#endif /* GPU_CUDA_GPU_H */
