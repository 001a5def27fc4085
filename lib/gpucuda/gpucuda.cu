/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime wrappers of gpucuda.h: the C code of dpdk-gpu-rx,
 * libgpugen-cuda and the benchmarks is compiled without CUDA's headers
 * and flags, and calls the runtime through these.
 */

#include <cuda_runtime.h>

#include "gpucuda.h"

extern "C" const char *
gpucuda_strerror(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

extern "C" int
gpucuda_still_running(int err)
{
	return err == (int)cudaErrorNotReady;
}

extern "C" int
gpucuda_select(const char *pci_bus_id, int *ordinal)
{
	int dev;
	cudaError_t e = cudaDeviceGetByPCIBusId(&dev, pci_bus_id);

	if (e != cudaSuccess)
		return (int)e;
	e = cudaSetDevice(dev);
	if (e == cudaSuccess && ordinal != NULL)
		*ordinal = dev;
	return (int)e;
}

extern "C" int
gpucuda_copy(void *dst, const void *src, size_t n)
{
	return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

extern "C" int
gpucuda_stream_create(void **s)
{
	return (int)cudaStreamCreateWithFlags((cudaStream_t *)s,
		cudaStreamNonBlocking);
}

extern "C" int
gpucuda_stream_destroy(void *s)
{
	return s == NULL ? 0 : (int)cudaStreamDestroy((cudaStream_t)s);
}

extern "C" int
gpucuda_copy_async(void *dst, const void *src, size_t n, void *s)
{
	return (int)cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault,
		(cudaStream_t)s);
}

extern "C" int
gpucuda_stream_sync(void *s)
{
	return (int)cudaStreamSynchronize((cudaStream_t)s);
}

extern "C" int
gpucuda_stream_busy(void *s)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)s);

	if (e == cudaSuccess)
		return 0;
	if (e == cudaErrorNotReady)
		return -1;
	return (int)e;
}

extern "C" int
gpucuda_props(int *exec_timeout, int *coop)
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
