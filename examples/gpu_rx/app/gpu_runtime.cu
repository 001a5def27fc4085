/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime as dpdk-gpu-rx uses it besides its kernels: the device
 * the runtime drives, streams, copies into GPU memory and the device
 * attributes the persistent kernel depends on. Memory itself is taken
 * through gpudev (gpu_mem.c).
 */

#include <cuda_runtime.h>

#include "gpu_runtime.h"

extern "C" const char *
gpurx_cuda_strerror(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

extern "C" int
gpurx_cuda_select(const char *pci_bus_id, int *ordinal)
{
	cudaError_t e = cudaDeviceGetByPCIBusId(ordinal, pci_bus_id);

	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaSetDevice(*ordinal);
}

extern "C" int
gpurx_cuda_copy(void *dst, const void *src, size_t n)
{
	return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

extern "C" int
gpurx_cuda_stream_create(void **s)
{
	/* Non-blocking: must not serialize with the persistent kernel. */
	return (int)cudaStreamCreateWithFlags((cudaStream_t *)s,
		cudaStreamNonBlocking);
}

extern "C" int
gpurx_cuda_stream_destroy(void *s)
{
	return s == NULL ? 0 : (int)cudaStreamDestroy((cudaStream_t)s);
}

extern "C" int
gpurx_cuda_copy_async(void *dst, const void *src, size_t n, void *s)
{
	return (int)cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault,
		(cudaStream_t)s);
}

extern "C" int
gpurx_cuda_stream_sync(void *s)
{
	return (int)cudaStreamSynchronize((cudaStream_t)s);
}

extern "C" int
gpurx_cuda_stream_busy(void *s)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)s);

	if (e == cudaSuccess)
		return 0;
	if (e == cudaErrorNotReady)
		return -1;
	return (int)e;
}

extern "C" int
gpurx_cuda_props(int *exec_timeout, int *coop)
{
	cudaError_t e;
	int dev;

	e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(exec_timeout,
			cudaDevAttrKernelExecTimeout, dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(coop, cudaDevAttrCooperativeLaunch, dev);
	return (int)e;
}

