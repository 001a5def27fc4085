/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_MEM_H
#define GPU_CUDA_MEM_H

/*
 * The memory operations (cuda_mem.c) on a context whose gate the caller
 * passed (gpu_cuda_ctx_get): the rte_gpu ops of the same names, which
 * cuda_dev.c wires, and the release of what is left at dev_close. Each
 * returns 0 or a negative errno, logged.
 */

#include <stddef.h>

struct gpu_cuda_ctx;

int gpu_cuda_mem_alloc(struct gpu_cuda_ctx *c, size_t size,
		unsigned int align, void **ptr);
int gpu_cuda_mem_free(struct gpu_cuda_ctx *c, void *ptr);
int gpu_cuda_mem_register(struct gpu_cuda_ctx *c, size_t size, void *ptr);
int gpu_cuda_mem_unregister(struct gpu_cuda_ctx *c, void *ptr);
int gpu_cuda_mem_cpu_map(struct gpu_cuda_ctx *c, size_t size, void *ptr_in,
		void **ptr_out);
int gpu_cuda_mem_cpu_unmap(struct gpu_cuda_ctx *c, void *ptr);

/* dev_close, once no call is in flight: releases every allocation and
 * registration still in c's table, logging each as a leak of the device
 * name. Returns 0 or the first error. */
int gpu_cuda_mem_release_all(struct gpu_cuda_ctx *c, const char *name);

#endif /* GPU_CUDA_MEM_H */
