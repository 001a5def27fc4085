/* SPDX-License-Identifier: BSD-3-Clause */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include <rte_common.h>

#include "cuda_gdr.h"
#include "cuda_gpu.h"
#include "cuda_log.h"

#define LIBGDRAPI "libgdrapi.so.2"
/* Another library to load instead (the tests load a fake). */
#define LIBGDRAPI_ENV "GPU_CUDA_LIBGDRAPI"

/* Types and entry points of GDRCopy's public API (gdrapi.h), declared here
 * so that building needs no GDRCopy headers. */
typedef struct gdr *gdr_t;
typedef struct {
	unsigned long h;
} gdr_mh_t;

static struct {
	gdr_t (*open)(void);
	int (*pin_buffer)(gdr_t g, unsigned long addr, size_t size,
			uint64_t p2p_token, uint32_t va_space, gdr_mh_t *handle);
	int (*unpin_buffer)(gdr_t g, gdr_mh_t handle);
	int (*map)(gdr_t g, gdr_mh_t handle, void **va, size_t size);
	int (*unmap)(gdr_t g, gdr_mh_t handle, void *va, size_t size);
} gdr;

static pthread_once_t gdr_once = PTHREAD_ONCE_INIT;
static gdr_t gdr_handle;  /* one per process, shared by all GPUs */

struct gdr_mapping {
	gdr_mh_t mh;
	void *va;
	size_t len;
};

static void
gdr_load_once(void)
{
	const char *path = getenv(LIBGDRAPI_ENV);
	void *lib;

	if (path == NULL || path[0] == '\0')
		path = LIBGDRAPI;
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL) {
		CUDA_LOG(INFO, "GDRCopy not available (%s): rte_gpu_mem_cpu_map is not supported",
			dlerror());
		return;
	}
	gdr.open = (gdr_t (*)(void))dlsym(lib, "gdr_open");
	*(void **)&gdr.pin_buffer = dlsym(lib, "gdr_pin_buffer");
	*(void **)&gdr.unpin_buffer = dlsym(lib, "gdr_unpin_buffer");
	*(void **)&gdr.map = dlsym(lib, "gdr_map");
	*(void **)&gdr.unmap = dlsym(lib, "gdr_unmap");
	if (gdr.open == NULL || gdr.pin_buffer == NULL || gdr.unpin_buffer == NULL ||
			gdr.map == NULL || gdr.unmap == NULL) {
		CUDA_LOG(WARNING, "%s lacks part of the GDRCopy API: rte_gpu_mem_cpu_map is not supported",
			path);
		dlclose(lib);
		return;
	}
	gdr_handle = gdr.open();
	if (gdr_handle == NULL) {
		CUDA_LOG(WARNING, "gdr_open failed (is the gdrdrv kernel module loaded?): rte_gpu_mem_cpu_map is not supported");
		dlclose(lib);
		return;
	}
	CUDA_LOG(INFO, "GDRCopy loaded: rte_gpu_mem_cpu_map available");
	/* The library stays loaded for the process lifetime: mappings made
	 * through it may outlive any one device. */
}

int
gpu_cuda_gdr_probe(void)
{
	if (pthread_once(&gdr_once, gdr_load_once) != 0)
		return -ENOTSUP;
	return gdr_handle != NULL ? 0 : -ENOTSUP;
}

int
gpu_cuda_gdr_map(uintptr_t dptr, size_t size, uintptr_t alloc_base,
		size_t alloc_size, void **cpu_ptr, void **handle)
{
	uintptr_t start = RTE_ALIGN_FLOOR(dptr, (uintptr_t)GPU_CUDA_PAGE_SIZE);
	uintptr_t end = RTE_ALIGN_CEIL(dptr + size, (uintptr_t)GPU_CUDA_PAGE_SIZE);
	struct gdr_mapping *map;
	int ret;

	if (gpu_cuda_gdr_probe() != 0)
		return -ENOTSUP;
	if (start < alloc_base || end > alloc_base + alloc_size) {
		CUDA_LOG(ERR, "cpu_map of %#" PRIxPTR ": GDRCopy maps whole %u KiB GPU pages and this allocation does not span them; allocate with alignment %u",
			dptr, GPU_CUDA_PAGE_SIZE / 1024, GPU_CUDA_PAGE_SIZE);
		return -EINVAL;
	}
	map = calloc(1, sizeof(*map));
	if (map == NULL)
		return -ENOMEM;
	map->len = end - start;
	ret = gdr.pin_buffer(gdr_handle, start, map->len, 0, 0, &map->mh);
	if (ret != 0) {
		CUDA_LOG(ERR, "gdr_pin_buffer(%#" PRIxPTR ", %zu) failed: %d",
			start, map->len, ret);
		free(map);
		return -EIO;
	}
	ret = gdr.map(gdr_handle, map->mh, &map->va, map->len);
	if (ret != 0) {
		CUDA_LOG(ERR, "gdr_map(%#" PRIxPTR ", %zu) failed: %d",
			start, map->len, ret);
		gdr.unpin_buffer(gdr_handle, map->mh);
		free(map);
		return -EIO;
	}
	*cpu_ptr = (char *)map->va + (dptr - start);
	*handle = map;
	return 0;
}

int
gpu_cuda_gdr_unmap(void *handle)
{
	struct gdr_mapping *map = handle;
	int ret = 0;

	if (gdr.unmap(gdr_handle, map->mh, map->va, map->len) != 0) {
		CUDA_LOG(ERR, "gdr_unmap(%p) failed", map->va);
		ret = -EIO;
	}
	if (gdr.unpin_buffer(gdr_handle, map->mh) != 0) {
		CUDA_LOG(ERR, "gdr_unpin_buffer failed");
		ret = -EIO;
	}
	free(map);
	return ret;
}
