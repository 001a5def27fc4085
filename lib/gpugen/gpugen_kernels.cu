/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's build kernel: the per-packet code of gpugen_core.h,
 * the very source the CPU reference runs, one thread per packet.
 *
 * That code writes a frame a byte at a time and reads it back (field
 * engine variables, checksum fixes). Into host memory mapped for the GPU
 * each of those accesses would cross PCIe on its own, so every thread
 * builds in its slot of a scratch area in GPU memory, and its warp then
 * copies the warp's frames out together: for one frame at a time, the 32
 * lanes store consecutive 16-byte pieces, so the destination sees whole
 * coalesced lines and is never read. A destination in GPU memory is
 * built in place instead, one thread a packet (gpugen_build_direct): its
 * byte stores and read-backs stay in L2 either way, and staging there
 * only adds the copy (1.38 Gpps in place, 1.10 staged, 64 B with no
 * variable on an H100, bench-gpugen mem=gpu).
 */
#include <cuda_runtime.h>

#include "gpugen_core.h"
#include "gpugen_cuda.h"

#define GPUGEN_WARP 32
#define GPUGEN_FULL_MASK 0xffffffffu

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

/* The warp copies len bytes in pieces of T, each lane one piece in 32. */
template <typename T>
static __device__ void
gpugen_warp_copy_w(uint8_t *d, const uint8_t *s, uint32_t len, uint32_t lane)
{
	for (uint32_t k = lane * sizeof(T); k < len;
			k += GPUGEN_WARP * sizeof(T))
		*(T *)(d + k) = *(const T *)(s + k);
}

/*
 * Copy len bytes from s to d with the whole warp, every lane calling with
 * the same arguments. s and d agree modulo 16 (the thread built at that
 * offset in its slot), so past a head of under 16 bytes both are 16-byte
 * aligned and the body moves as 16-byte stores, consecutive across the
 * lanes; head and tail are one byte a lane, still one store instruction
 * each. A short frame whose start and length are multiples of 4 or 8
 * goes out in one instruction of pieces that size instead: the head or
 * tail would otherwise write a second time into a line the body writes
 * (a 60-byte frame: 48 bytes, then 12), which over PCIe is a second
 * write request for the same line.
 */
static __device__ void
gpugen_warp_copy(uint8_t *d, const uint8_t *s, uint32_t len, uint32_t lane)
{
	uint32_t head = (16u - (uint32_t)((uintptr_t)d & 15u)) & 15u;
	uint32_t body;
	uint32_t al = ((uint32_t)(uintptr_t)d | len) & 15u;

	if (al == 8 && len <= GPUGEN_WARP * 8u) {
		gpugen_warp_copy_w<unsigned long long>(d, s, len, lane);
		return;
	}
	if ((al == 4 || al == 12) && len <= GPUGEN_WARP * 4u) {
		gpugen_warp_copy_w<uint32_t>(d, s, len, lane);
		return;
	}
	if (head > len)
		head = len;
	if (lane < head)
		d[lane] = s[lane];
	body = head + ((len - head) & ~15u);
	gpugen_warp_copy_w<uint4>(d + head, s + head, body - head, lane);
	if (body + lane < len)
		d[body + lane] = s[body + lane];
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

	for (uint64_t k = tid; k - lane < n; k += step) {
		uint8_t *out = NULL, *src = mine;
		uint32_t len = 0, s;

		if (k < n) {
			out = gpugen_dst_of(&dst, (uint32_t)k);
			/* The slot has 16 bytes to spare for this. */
			src = mine + ((uintptr_t)out & 15u);
			len = gpugen_make_n(t, first + k, tx_ns, src, &s);
		}
		/* Orders each lane's scratch writes before the other lanes
		 * read them below (__syncwarp orders memory among the lanes
		 * it joins). */
		__syncwarp();
		for (uint32_t j = 0; j < GPUGEN_WARP; j++) {
			uint32_t l = __shfl_sync(GPUGEN_FULL_MASK, len, j);
			uint8_t *d = (uint8_t *)__shfl_sync(GPUGEN_FULL_MASK,
				(unsigned long long)out, j);
			const uint8_t *from = (const uint8_t *)__shfl_sync(
				GPUGEN_FULL_MASK, (unsigned long long)src, j);

			if (l != 0)
				gpugen_warp_copy(d, from, l, lane);
		}
		/* The next step's build overwrites the slots read above. */
		__syncwarp();
	}
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
