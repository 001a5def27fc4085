/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef RTE_PMD_GPU_CUDA_H
#define RTE_PMD_GPU_CUDA_H

/**
 * @file
 * Functions of the CUDA gpudev driver beyond the gpudev API.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Gives a device made by rte_gpu_add_child() the operations of its CUDA
 * parent, working in the CUDA context passed there as child_context.
 *
 * gpudev (DPDK 22.11) creates child devices without telling the parent's
 * driver, and with no operations: call this right after rte_gpu_add_child().
 * The symbol is exported by librte_gpu_cuda.so; find it with
 * dlsym(dlopen(<plugin path>, RTLD_NOW | RTLD_NOLOAD), ...) or link with the
 * plugin.
 *
 * @return 0; -ENODEV (no such GPU), -EINVAL (not a child of a CUDA GPU, or
 *   the context is not a usable CUDA context), -EXDEV (the context belongs to
 *   another GPU), -EEXIST (already attached), -ENOMEM.
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_child_attach(int16_t child_dev_id);

/**
 * The driver's name and version and the DPDK version it was built for,
 * e.g. "librte_gpu_cuda 0.1.0 (DPDK 22.11.11)": for start-up lines, and
 * for programs that link the driver instead of loading it with EAL -d.
 */
__attribute__((visibility("default")))
const char *rte_pmd_gpu_cuda_version(void);

/**
 * Counters of a device's registration cache (devarg reg_cache=1).
 */
struct rte_pmd_gpu_cuda_reg_cache_stats {
	uint64_t hits;          /**< mem_register served by a kept registration */
	uint64_t misses;        /**< mem_register of cacheable memory that pinned */
	uint64_t uncached;      /**< mem_register of memory the cache does not take */
	uint64_t evictions;     /**< kept registrations undone: limit, overlap, flush, close */
	uint64_t invalidations; /**< registrations dropped because EAL freed their memory */
	uint64_t bytes_held;    /**< bytes of kept registrations now */
	uint64_t bytes_limit;   /**< devarg reg_cache_max */
	uint32_t parked;        /**< kept registrations now */
	uint32_t in_use;        /**< cached registrations the application holds */
};

/**
 * Reads the counters of the registration cache of a GPU of this driver.
 *
 * @return 0; -ENODEV (no such GPU of this driver, or closing), -EINVAL
 *   (stats NULL), -ENOTSUP (the device was probed without reg_cache=1).
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_reg_cache_stats_get(int16_t dev_id,
		struct rte_pmd_gpu_cuda_reg_cache_stats *stats);

/**
 * Undoes every registration the cache keeps and the application does not
 * hold (registrations the application holds are untouched).
 *
 * @return the number undone; -ENODEV, -ENOTSUP as above.
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_reg_cache_flush(int16_t dev_id);

/**
 * Exports a range of GPU memory allocated with rte_gpu_mem_alloc() on this
 * device as a dma-buf file descriptor, which a NIC driver imports without
 * nvidia-peermem, e.g. with rdma-core:
 *
 *   mr = ibv_reg_dmabuf_mr(pd, offset, size, (uint64_t)(uintptr_t)ptr,
 *                          fd, IBV_ACCESS_LOCAL_WRITE | ...);
 *
 * The exported range is [ptr, ptr + size) widened to whole 64 KiB GPU
 * pages, which must lie inside the allocation: allocate with align =
 * 65536 (rte_gpu_info.page_size). *offset is where ptr lies in the
 * dma-buf.
 *
 * The driver keeps the fd: it is closed by rte_pmd_gpu_cuda_dmabuf_close()
 * or when the allocation is freed or the device closed. Never close() it
 * yourself (the driver would later close whatever file then has that
 * number); dup() it if you need an fd of your own. An importer holds its
 * own reference: a memory region stays valid after the fd is closed, but
 * deregister it before freeing the GPU memory.
 *
 * @return 0; -ENODEV (no such GPU of this driver, or closing), -EINVAL (NULL
 *   argument, size 0, ptr not inside an allocation of this device: foreign,
 *   freed or host memory; range past the allocation or not within its
 *   whole GPU pages), -ENOTSUP (GPU without dma-buf support, or a CUDA
 *   driver older than 11.7), -ENOMEM, or the CUDA error as errno.
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_dmabuf_export(int16_t dev_id, const void *ptr,
		size_t size, int *fd, uint64_t *offset);

/**
 * Closes an fd returned by rte_pmd_gpu_cuda_dmabuf_export() on this device.
 *
 * @return 0; -ENODEV; -EINVAL (not an fd this device exported, or already
 *   closed, by this call or by freeing its allocation).
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_dmabuf_close(int16_t dev_id, int fd);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_GPU_CUDA_H */
