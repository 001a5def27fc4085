/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_GDR_H
#define GPU_CUDA_GDR_H

#include <stddef.h>
#include <stdint.h>

/*
 * CPU mappings of GPU memory through GDRCopy (libgdrapi.so.2 and the gdrdrv
 * kernel module), loaded at run time when present.
 */

/* 0 if GDRCopy can be used; else -ENOTSUP, the reason logged once. */
int gpu_cuda_gdr_probe(void);

/*
 * Maps [dptr, dptr + size) for the CPU. The pinned range is widened to GPU
 * pages, which must lie inside [alloc_base, alloc_base + alloc_size).
 * Returns 0 with *cpu_ptr and *handle set, or a negative errno.
 */
int gpu_cuda_gdr_map(uintptr_t dptr, size_t size, uintptr_t alloc_base,
		size_t alloc_size, void **cpu_ptr, void **handle);

/* Undoes gpu_cuda_gdr_map; returns 0 or a negative errno. */
int gpu_cuda_gdr_unmap(void *handle);

#endif /* GPU_CUDA_GDR_H */
