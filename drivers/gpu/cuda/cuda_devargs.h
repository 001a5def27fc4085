/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_DEVARGS_H
#define GPU_CUDA_DEVARGS_H

#include <stdbool.h>

#include "cuda_gpu.h"

#define GPU_CUDA_DEVARG_DEV "dev"
#define GPU_CUDA_DEVARG_GDRCOPY "gdrcopy"
#define GPU_CUDA_DEVARG_REG_CACHE "reg_cache"
#define GPU_CUDA_DEVARG_REG_CACHE_MAX "reg_cache_max"

struct gpu_cuda_devargs {
	/* Which GPU (vdev only): a CUDA ordinal or a PCI address. */
	bool has_dev;
	int ordinal;                        /* -1 when given as PCI address */
	char bus_id[GPU_CUDA_BUS_ID_LEN];
	bool gdrcopy;                       /* allow mem_cpu_map via GDRCopy */
	bool reg_cache;                     /* keep host registrations */
	size_t reg_cache_max;               /* bytes kept at most */
};

/*
 * Parses "key=value,..." (NULL or empty: defaults). allow_dev says whether
 * the dev key is accepted (vdev: yes; PCI: the bus gives the address).
 * Returns 0, or -EINVAL after logging which key or value is wrong.
 */
int gpu_cuda_devargs_parse(const char *dev_name, const char *args,
		bool allow_dev, struct gpu_cuda_devargs *out);

#endif /* GPU_CUDA_DEVARGS_H */
