/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_SCATTER_H
#define GPUDMA_SCATTER_H

/*
 * The scatter kernel's descriptor (shared by the kernel, the port and the
 * fake CUDA library): copy len bytes from src to dst, both device
 * addresses (src: pinned host memory mapped for the GPU).
 */

#include <stdint.h>

struct gpudma_scatter_desc {
	uint64_t dst;
	uint64_t src;
	uint32_t len;
	uint32_t pad;
};

#define GPUDMA_SCATTER_KERNEL "gpudma_scatter"
/* Threads a block; a warp copies a descriptor. */
#define GPUDMA_SCATTER_THREADS 256u

#endif /* GPUDMA_SCATTER_H */
