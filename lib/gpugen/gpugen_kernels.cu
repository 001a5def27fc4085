/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's build kernels, launched per build: the per-packet code
 * of gpugen_core.h, the very source the CPU reference runs. Frames bound
 * for host memory are staged (gpugen_dev.cuh); a destination in GPU
 * memory is built in place instead, one thread a packet
 * (gpugen_build_direct): its byte stores and read-backs stay in L2
 * either way, and staging there only adds the copy (1.38 Gpps in place,
 * 1.10 staged, 64 B with no variable on an H100, bench-gpugen mem=gpu).
 */
#include <cuda_runtime.h>

#include "gpugen_core.h"
#include "gpugen_cuda.h"
#include "gpugen_dev.cuh"

/* Where packet first + k goes. */
static __device__ uint8_t *
gpugen_dst_of(const struct gpugen_cuda_dst *dst, uint32_t k)
{
	uint32_t slot;

	if (dst->addrs != NULL)
		return (uint8_t *)dst->addrs[k];
	/* slot0 < slots and k % slots < slots: one subtraction wraps the
	 * sum. */
	slot = dst->slot0 + k % dst->slots;
	if (slot >= dst->slots)
		slot -= dst->slots;
	return dst->ring + (size_t)slot * dst->stride;
}

/*
 * Grid-stride over the n packets, a warp taking 32 consecutive ones per
 * step; the grid is at most the scratch's threads, thread i owning
 * bytes [i * scratch.slot, (i + 1) * scratch.slot) of it. Every lane of
 * a warp runs every step (those past n build nothing), as the copy-out
 * needs the whole warp.
 */
static __global__ void
gpugen_build_kernel(const struct gpugen_table *t, struct gpugen_cuda_dst dst,
		struct gpugen_cuda_scratch scratch, uint64_t first, uint32_t n,
		uint64_t tx_ns)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t lane = threadIdx.x % GPUGEN_WARP;
	uint64_t step = (uint64_t)gridDim.x * blockDim.x;
	uint8_t *mine = scratch.base + (size_t)tid * scratch.slot;

	for (uint64_t k = tid; k - lane < n; k += step)
		gpugen_warp_build_staged(t, k < n ? gpugen_dst_of(&dst,
			(uint32_t)k) : NULL, first + k, tx_ns, mine, lane);
}

/* In place, one thread a packet: destinations in GPU memory. */
static __global__ void
gpugen_build_direct(const struct gpugen_table *t, struct gpugen_cuda_dst dst,
		uint64_t first, uint32_t n, uint64_t tx_ns)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t s;

	if (k < n)
		(void)gpugen_make_n(t, first + k, tx_ns, gpugen_dst_of(&dst, k),
			&s);
}

extern "C" int
gpugen_cuda_mem_in_gpu(const void *p, uint32_t *in_gpu)
{
	struct cudaPointerAttributes a;
	cudaError_t e = cudaPointerGetAttributes(&a, p);

	if (e != cudaSuccess)
		return (int)e;
	*in_gpu = a.type == cudaMemoryTypeDevice ||
		a.type == cudaMemoryTypeManaged;
	return 0;
}

extern "C" int
gpugen_cuda_dev_alloc(void **p, size_t len)
{
	return (int)cudaMalloc(p, len);
}

extern "C" int
gpugen_cuda_dev_free(void *p)
{
	/* cudaFree(NULL) would still need a working runtime. */
	return p == NULL ? 0 : (int)cudaFree(p);
}

extern "C" int
gpugen_cuda_host_alloc(void **p, size_t len)
{
	void *d = NULL;
	cudaError_t e = cudaHostAlloc(p, len, cudaHostAllocMapped |
		cudaHostAllocPortable);

	if (e != cudaSuccess) {
		*p = NULL;
		return (int)e;
	}
	/* The rings hold addresses both sides use: one address for both. */
	e = cudaHostGetDevicePointer(&d, *p, 0);
	if (e == cudaSuccess && d != *p)
		e = cudaErrorNotSupported;
	if (e != cudaSuccess) {
		(void)cudaFreeHost(*p);
		*p = NULL;
	}
	return (int)e;
}

extern "C" int
gpugen_cuda_host_free(void *p)
{
	return p == NULL ? 0 : (int)cudaFreeHost(p);
}

extern "C" int
gpugen_cuda_current(int *dev, int *sms)
{
	cudaError_t e = cudaGetDevice(dev);

	if (e == cudaSuccess && sms != NULL)
		e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount,
			*dev);
	return (int)e;
}

extern "C" int
gpugen_cuda_build(const void *table, const struct gpugen_cuda_dst *dst,
		const struct gpugen_cuda_scratch *scratch, uint64_t first,
		uint32_t n, uint64_t tx_ns, void *s)
{
	uint64_t blocks = ((uint64_t)n + GPUGEN_CUDA_BLOCK - 1) /
		GPUGEN_CUDA_BLOCK;
	uint32_t max_blocks = scratch->threads / GPUGEN_CUDA_BLOCK;

	if (n == 0)
		return 0;
	if (dst->in_gpu) {
		gpugen_build_direct<<<(unsigned int)blocks, GPUGEN_CUDA_BLOCK, 0,
			(cudaStream_t)s>>>((const struct gpugen_table *)table,
			*dst, first, n, tx_ns);
		return (int)cudaGetLastError();
	}
	if (max_blocks == 0 || scratch->slot % 16 != 0 ||
			((uintptr_t)scratch->base & 15) != 0)
		return (int)cudaErrorInvalidValue;
	if (blocks > max_blocks)
		blocks = max_blocks;
	gpugen_build_kernel<<<(unsigned int)blocks, GPUGEN_CUDA_BLOCK, 0,
		(cudaStream_t)s>>>((const struct gpugen_table *)table, *dst,
		*scratch, first, n, tx_ns);
	return (int)cudaGetLastError();
}
