/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_DMA_MAP_H
#define GPUDMA_DMA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_spinlock.h>

#define GPUDMA_MAX_MAPS 64

struct gpudma_cuda;

/* What the port may DMA into, as a real device's IOMMU would allow. */
struct gpudma_map {
	uintptr_t addr;
	uint64_t iova;
	size_t len;
	bool gpu;                /* GPU memory: filled by the copy engine */
	struct gpudma_cuda *cuda; /* GPU memory: the port's GPU holding it */
};

struct gpudma_map_table {
	rte_spinlock_t lock;     /* control path vs the TX path's lookups */
	unsigned int n;
	struct gpudma_map m[GPUDMA_MAX_MAPS];
};

enum gpudma_mem {
	GPUDMA_MEM_NONE,         /* neither EAL memory nor mapped */
	GPUDMA_MEM_EAL,          /* EAL's own memory: always reachable */
	GPUDMA_MEM_HOST,         /* mapped external host memory */
	GPUDMA_MEM_GPU,          /* mapped GPU memory */
};

void gpudma_map_init(struct gpudma_map_table *t);
/* cuda: the GPU whose memory it is, NULL for host memory. -EEXIST if it
 * overlaps a mapping, -ENOSPC if the table is full. */
int gpudma_map_add(struct gpudma_map_table *t, uintptr_t addr, uint64_t iova,
	size_t len, struct gpudma_cuda *cuda);
/* Removes the mapping made with exactly these addr and len: -ENOENT if
 * none. */
int gpudma_map_remove(struct gpudma_map_table *t, uintptr_t addr, size_t len);
/* Where [addr, addr + len) lies, as the port sees it; *cuda (unless
 * NULL) the GPU holding it when that is GPU memory, else NULL. */
enum gpudma_mem gpudma_mem_kind(struct gpudma_map_table *t, uintptr_t addr,
	size_t len, struct gpudma_cuda **cuda);
const char *gpudma_mem_name(enum gpudma_mem k);

#endif /* GPUDMA_DMA_MAP_H */
