/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_DMABUF_H
#define GPU_CUDA_DMABUF_H

/*
 * dma-buf export of GPU allocations (rte_pmd_gpu_cuda_dmabuf_export): the
 * fds handed out are the driver's, recorded per context with the
 * allocation they came from, and closed with it (cuda_dmabuf.c).
 */

#include <stddef.h>
#include <stdint.h>

struct gpu_cuda_ctx;

/* rte_pmd_gpu_cuda_dmabuf_export on a context whose gate the caller
 * passed. */
int gpu_cuda_dmabuf_export(struct gpu_cuda_ctx *c, const void *ptr,
		size_t size, int *fd, uint64_t *offset);

/* rte_pmd_gpu_cuda_dmabuf_close on a context whose gate the caller
 * passed. */
int gpu_cuda_dmabuf_close(struct gpu_cuda_ctx *c, int fd);

/* Closes the fds exported from the allocation mem_id (before it is freed);
 * an export of it still in progress fails. */
void gpu_cuda_dmabuf_release_alloc(struct gpu_cuda_ctx *c, uint64_t mem_id);

/* Closes every fd c still has (dev_close); returns how many. */
unsigned int gpu_cuda_dmabuf_release_all(struct gpu_cuda_ctx *c);

#endif /* GPU_CUDA_DMABUF_H */
