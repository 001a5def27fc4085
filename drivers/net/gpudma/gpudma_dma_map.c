/* SPDX-License-Identifier: BSD-3-Clause */

/* The port's DMA mapping table (rte_dev_dma_map/unmap through the vdev
 * bus). */

#include <errno.h>
#include <string.h>

#include <rte_memory.h>

#include "gpudma_dma_map.h"

void
gpudma_map_init(struct gpudma_map_table *t)
{
	memset(t, 0, sizeof(*t));
	rte_spinlock_init(&t->lock);
}

int
gpudma_map_add(struct gpudma_map_table *t, uintptr_t addr, uint64_t iova,
		size_t len, struct gpudma_cuda *cuda)
{
	unsigned int i;
	int ret = 0;

	rte_spinlock_lock(&t->lock);
	for (i = 0; i < t->n; i++) {
		if (addr < t->m[i].addr + t->m[i].len &&
				t->m[i].addr < addr + len) {
			ret = -EEXIST;
			goto out;
		}
	}
	if (t->n == GPUDMA_MAX_MAPS) {
		ret = -ENOSPC;
		goto out;
	}
	t->m[t->n++] = (struct gpudma_map){ addr, iova, len, cuda != NULL,
		cuda };
out:
	rte_spinlock_unlock(&t->lock);
	return ret;
}

int
gpudma_map_remove(struct gpudma_map_table *t, uintptr_t addr, size_t len)
{
	unsigned int i;
	int ret = -ENOENT;

	rte_spinlock_lock(&t->lock);
	for (i = 0; i < t->n; i++) {
		if (t->m[i].addr == addr && t->m[i].len == len) {
			t->m[i] = t->m[--t->n];
			ret = 0;
			break;
		}
	}
	rte_spinlock_unlock(&t->lock);
	return ret;
}

enum gpudma_mem
gpudma_mem_kind(struct gpudma_map_table *t, uintptr_t addr, size_t len,
		struct gpudma_cuda **cuda)
{
	const struct rte_memseg_list *msl;
	enum gpudma_mem k = GPUDMA_MEM_NONE;
	unsigned int i;

	if (cuda != NULL)
		*cuda = NULL;
	msl = rte_mem_virt2memseg_list((void *)addr);
	if (msl != NULL && !msl->external &&
			addr + len <= (uintptr_t)msl->base_va + msl->len)
		return GPUDMA_MEM_EAL;
	rte_spinlock_lock(&t->lock);
	for (i = 0; i < t->n; i++) {
		const struct gpudma_map *m = &t->m[i];

		if (addr >= m->addr && len <= m->len &&
				addr - m->addr <= m->len - len) {
			k = m->gpu ? GPUDMA_MEM_GPU : GPUDMA_MEM_HOST;
			if (cuda != NULL)
				*cuda = m->cuda;
			break;
		}
	}
	rte_spinlock_unlock(&t->lock);
	return k;
}

const char *
gpudma_mem_name(enum gpudma_mem k)
{
	switch (k) {
	case GPUDMA_MEM_EAL: return "EAL memory";
	case GPUDMA_MEM_HOST: return "DMA-mapped host memory";
	case GPUDMA_MEM_GPU: return "DMA-mapped GPU memory";
	default: return "memory neither EAL's nor DMA-mapped to the port";
	}
}
