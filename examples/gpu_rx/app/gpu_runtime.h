/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime for dpdk-gpu-rx's C code (gpu_runtime.cu): streams,
 * copies, the device and its attributes. Memory comes from gpudev.
 */
#ifndef GPURX_APP_GPU_RUNTIME_H
#define GPURX_APP_GPU_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* All return 0 or a cudaError_t value; gpurx_cuda_strerror() names it. */
const char *gpurx_cuda_strerror(int err);
int gpurx_cuda_select(const char *pci_bus_id, int *ordinal);
int gpurx_cuda_copy(void *dst, const void *src, size_t n);
int gpurx_cuda_stream_create(void **s);
int gpurx_cuda_stream_destroy(void *s);
int gpurx_cuda_copy_async(void *dst, const void *src, size_t n, void *s);
int gpurx_cuda_stream_sync(void *s);
/* 0: idle, -1: still running, else the error. */
int gpurx_cuda_stream_busy(void *s);

/* What the persistent kernel needs of the current device: *exec_timeout
 * (kernels killed after a while), *coop (cooperative launch). */
int gpurx_cuda_props(int *exec_timeout, int *coop);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_APP_GPU_RUNTIME_H */
