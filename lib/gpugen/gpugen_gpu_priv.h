/* SPDX-License-Identifier: BSD-3-Clause */
/* libgpugen-cuda's own: the GPU build's state, shared by gpugen_gpu.c and
 * gpugen_fill.c. */
#ifndef GPUGEN_GPU_PRIV_H
#define GPUGEN_GPU_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "gpugen.h"
#include "gpugen_cuda.h"

struct gpugen_gpu {
	const struct gpugen *g;	/* its streams, for the frames' lengths */
	int16_t gpu_id;
	uint32_t max_burst;
	uint32_t max_len;	/* the longest frame: the least ring stride */
	enum gpugen_gpu_mem where;
	void *table;		/* device-usable */
	struct gpugen_cuda_scratch scratch;	/* rte_gpu_mem_alloc */
	size_t table_len;	/* mapped length when in host pages */
	void **addrs;		/* registered host pages */
	size_t addrs_len;
	void *stream;
};

/*
 * *len bytes (rounded up to whole pages) of zeroed host pages of their
 * own, registered with GPU gpu_id (rte_gpu_mem_register); NULL with
 * rte_errno set. gpugen_unpin undoes it.
 */
void *gpugen_pinned(int16_t gpu_id, size_t *len);
void gpugen_unpin(int16_t gpu_id, void *m, size_t len);

#endif /* GPUGEN_GPU_PRIV_H */
