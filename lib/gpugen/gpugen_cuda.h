/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime as libgpugen uses it: the build kernel's launch, its
 * stream, copies. Memory comes from gpudev (gpugen_gpu.c). All return 0
 * or a cudaError_t value that gpugen_cuda_strerror() names.
 */
#ifndef GPUGEN_CUDA_H
#define GPUGEN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *gpugen_cuda_strerror(int err);
int gpugen_cuda_select(const char *pci_bus_id);
int gpugen_cuda_copy(void *dst, const void *src, size_t n);
int gpugen_cuda_stream_create(void **s);
int gpugen_cuda_stream_destroy(void *s);

/*
 * Build global packets first .. first + n - 1 of the table (device-usable
 * address) into addrs[k] (the array itself device-readable), one thread
 * each, on stream s; returns when they are written.
 */
int gpugen_cuda_build(const void *table, void *const *addrs, uint64_t first,
		uint32_t n, uint64_t tx_ns, void *s);

#ifdef __cplusplus
}
#endif

#endif /* GPUGEN_CUDA_H */
