/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's build kernel: the per-packet code of gpugen_core.h,
 * the very source the CPU reference runs, one thread per packet.
 */
#include <cuda_runtime.h>

#include "gpugen_core.h"
#include "gpugen_cuda.h"

#define GPUGEN_THREADS 128

static __global__ void
gpugen_build_kernel(const struct gpugen_table *t, struct gpugen_cuda_dst dst,
		uint64_t first, uint32_t n, uint64_t tx_ns)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t s;
	uint8_t *out;

	if (k >= n)
		return;
	if (dst.addrs != NULL) {
		out = (uint8_t *)dst.addrs[k];
	} else {
		/* slot0 < slots and k % slots < slots: one subtraction
		 * wraps the sum. */
		uint32_t slot = dst.slot0 + k % dst.slots;

		if (slot >= dst.slots)
			slot -= dst.slots;
		out = dst.ring + (size_t)slot * dst.stride;
	}
	(void)gpugen_make_n(t, first + k, tx_ns, out, &s);
}

extern "C" const char *
gpugen_cuda_strerror(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

extern "C" int
gpugen_cuda_select(const char *pci_bus_id)
{
	int ordinal;
	cudaError_t e = cudaDeviceGetByPCIBusId(&ordinal, pci_bus_id);

	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaSetDevice(ordinal);
}

extern "C" int
gpugen_cuda_copy(void *dst, const void *src, size_t n)
{
	return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

extern "C" int
gpugen_cuda_stream_create(void **s)
{
	return (int)cudaStreamCreateWithFlags((cudaStream_t *)s,
		cudaStreamNonBlocking);
}

extern "C" int
gpugen_cuda_stream_destroy(void *s)
{
	return s == NULL ? 0 : (int)cudaStreamDestroy((cudaStream_t)s);
}

extern "C" int
gpugen_cuda_build(const void *table, const struct gpugen_cuda_dst *dst,
		uint64_t first, uint32_t n, uint64_t tx_ns, void *s)
{
	if (n == 0)
		return 0;
	gpugen_build_kernel<<<(n + GPUGEN_THREADS - 1) / GPUGEN_THREADS,
		GPUGEN_THREADS, 0, (cudaStream_t)s>>>(
		(const struct gpugen_table *)table, *dst, first, n, tx_ns);
	return (int)cudaGetLastError();
}

extern "C" int
gpugen_cuda_sync(void *s)
{
	/*
	 * Kernel completion orders every write of the builds queued before
	 * this returns: host-mapped frames are then visible to the CPU and
	 * to a NIC reading host memory, and GPU-memory frames to a peer
	 * reading through the BAR (the kernel's writes are flushed at
	 * completion).
	 */
	return (int)cudaStreamSynchronize((cudaStream_t)s);
}
