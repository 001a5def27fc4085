/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels of bench-kernel-rate besides the shipped one (dpdk-gpu-rx's
 * persistent kernel, which the bench drives through the ring library):
 * the memory-only kernels its rate is compared with. The gather floor
 * reads what a header-inspecting kernel must read; the bandwidth kernels
 * measure the memory and the PCIe link themselves.
 */

#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "krate_kernels.h"

#define KR_WARP_SIZE 32
#define KR_FULL_MASK 0xffffffffu
#define KR_MAX_TPB 512
#define KR_BW_TPB 256
#define KR_BW_UNROLL 4

/* Word r of a lane when a warp loads `chunks` 16-byte words of each of
 * its 32 packets: chunk *c (counted from the first loaded) of packet *p. */
static __device__ __forceinline__ void
kr_warp_word(uint32_t r, unsigned int lane, uint32_t chunks, uint32_t *p,
		uint32_t *c)
{
	const uint32_t f = r * KR_WARP_SIZE + lane;

	*p = f / chunks;
	*c = f % chunks;
}

/*
 * Loads bytes [from, min(win, to)) (whole 16-byte words; from and to
 * multiples of 16) of the 32 packets of a warp, lane l's packet
 * described by (off, win). Chunk f of the warp's 32 * chunks goes to
 * lane f % 32: lanes next to each other read consecutive 16-byte words
 * of one packet, a whole 128-byte line per 8 lanes, which is how a GPU
 * reads memory (and PCIe) best. Calls visit(lane's packet slot index,
 * chunk, value) for each word loaded.
 */
template <typename Visit>
static __device__ __forceinline__ void
kr_warp_load(const uint8_t *pkts, uint32_t off, uint32_t win, uint32_t from,
		uint32_t to, unsigned int lane, Visit visit)
{
	const uint32_t first = from / 16, chunks = to / 16 - first;

	for (uint32_t r = 0; r < chunks; r++) {
		uint32_t p, c;

		kr_warp_word(r, lane, chunks, &p, &c);
		c += first;
		const uint32_t poff = __shfl_sync(KR_FULL_MASK, off, p);
		const uint32_t pwin = __shfl_sync(KR_FULL_MASK, win, p);

		if (c * 16 < pwin)
			visit(p, c, __ldg((const uint4 *)(pkts + poff) + c));
	}
}

/* Bytes of every packet the warp-staged kernels fetch first. */
static __host__ __device__ __forceinline__ uint32_t
kr_head_bytes(uint32_t window)
{
	return window < KR_HEAD_BYTES ? window : KR_HEAD_BYTES;
}

/*
 * The gather floor: every packet's descriptor and first KR_HEAD_BYTES
 * loaded a warp per 32 packets with coalesced 16-byte loads, a word
 * stored per packet, and nothing else: what any kernel that looks at the
 * headers of resident packets must at least move. The shipped kernel's
 * rate is set against it.
 */
__global__ void __launch_bounds__(KR_MAX_TPB)
kr_gather_kernel(struct kr_batch b, uint32_t window, uint32_t *out)
{
	const unsigned int lane = threadIdx.x % KR_WARP_SIZE;
	const uint32_t wpb = blockDim.x / KR_WARP_SIZE;
	uint64_t stride = (uint64_t)gridDim.x * wpb * KR_WARP_SIZE;

	for (uint64_t base = ((uint64_t)blockIdx.x * wpb +
			threadIdx.x / KR_WARP_SIZE) * KR_WARP_SIZE;
			base < b.n; base += stride) {
		uint64_t i = base + lane;
		bool valid = i < b.n;
		uint32_t len = valid ? b.lens[i] : 0;
		uint32_t off = valid ? b.offs[i] : 0;
		uint64_t ts = valid ? b.ts[i] : 0;
		uint32_t win = len < window ? len : window;
		uint32_t acc = (uint32_t)ts ^ (uint32_t)(ts >> 32);

		kr_warp_load(b.pkts, off, win, 0, kr_head_bytes(window), lane,
			[&](uint32_t, uint32_t, uint4 v) {
				acc ^= v.x ^ v.y ^ v.z ^ v.w;
			});
		if (valid)
			out[i] = acc;
	}
}

/* Streams a buffer, KR_BW_UNROLL independent 16-byte loads in flight per
 * thread; the xor keeps the loads from being optimised away. */
__global__ void __launch_bounds__(KR_BW_TPB)
kr_read_bw_kernel(const uint4 *__restrict__ v, size_t n,
		unsigned long long *sink)
{
	size_t stride = (size_t)blockDim.x * gridDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t acc = 0;

	for (; i + (KR_BW_UNROLL - 1) * stride < n; i += KR_BW_UNROLL * stride) {
		uint4 w[KR_BW_UNROLL];

#pragma unroll
		for (int k = 0; k < KR_BW_UNROLL; k++)
			w[k] = __ldcs(v + i + k * stride);
#pragma unroll
		for (int k = 0; k < KR_BW_UNROLL; k++)
			acc ^= w[k].x ^ w[k].y ^ w[k].z ^ w[k].w;
	}
	for (; i < n; i += stride) {
		uint4 w = __ldcs(v + i);

		acc ^= w.x ^ w.y ^ w.z ^ w.w;
	}
	if (acc == 0x9e3779b9u)
		atomicAdd(sink, 1ULL);
}

/*
 * One read of `rd` bytes (a multiple of 16, at most 128) at the start of
 * every `stride`-byte block: rd / 16 lanes per read, each loading one
 * 16-byte word, KR_BW_UNROLL reads in flight per lane. With a stride of a
 * cache line or more each read is a request of its own, as the first
 * bytes of scattered packets are.
 */
__global__ void __launch_bounds__(KR_BW_TPB)
kr_read_scatter_kernel(const uint8_t *__restrict__ buf, size_t n_reads,
		uint32_t stride, uint32_t rd, unsigned long long *sink)
{
	const uint32_t lanes = rd / 16;
	const uint32_t sub = threadIdx.x % lanes;
	const size_t groups = (size_t)blockDim.x * gridDim.x / lanes;
	size_t k = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / lanes;
	uint32_t acc = 0;

	for (; k + (KR_BW_UNROLL - 1) * groups < n_reads;
			k += KR_BW_UNROLL * groups) {
		uint4 w[KR_BW_UNROLL];

#pragma unroll
		for (int u = 0; u < KR_BW_UNROLL; u++)
			w[u] = __ldcs((const uint4 *)(buf +
				(k + u * groups) * stride) + sub);
#pragma unroll
		for (int u = 0; u < KR_BW_UNROLL; u++)
			acc ^= w[u].x ^ w[u].y ^ w[u].z ^ w[u].w;
	}
	for (; k < n_reads; k += groups) {
		uint4 w = __ldcs((const uint4 *)(buf + k * stride) + sub);

		acc ^= w.x ^ w.y ^ w.z ^ w.w;
	}
	if (acc == 0x9e3779b9u)
		atomicAdd(sink, 1ULL);
}

__global__ void
kr_fill_kernel(uint64_t *p, size_t n, uint64_t seed)
{
	size_t stride = (size_t)blockDim.x * gridDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
			i += stride) {
		/* splitmix64 of the index: random-looking, reproducible. */
		uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;

		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		p[i] = z ^ (z >> 31);
	}
}

/* --- Host side ------------------------------------------------------------ */

static int kr_sm_count;

extern "C" int
kr_error_is_no_gpu(int err)
{
	return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
		err == cudaErrorInitializationError ||
		err == cudaErrorCompatNotSupportedOnDevice ||
		err == cudaErrorSystemDriverMismatch;
}

extern "C" int
kr_device_open(const char *pci, int dev, struct kr_gpu_info *gi)
{
	cudaDeviceProp prop;
	cudaError_t err;
	int count = 0;

	memset(gi, 0, sizeof(*gi));
	if ((err = cudaGetDeviceCount(&count)) != cudaSuccess)
		return err;
	if (count == 0)
		return cudaErrorNoDevice;
	if (pci != NULL && (err = cudaDeviceGetByPCIBusId(&dev, pci)) != cudaSuccess)
		return err;
	if (dev < 0 || dev >= count)
		return cudaErrorInvalidDevice;
	if ((err = cudaSetDevice(dev)) != cudaSuccess ||
			(err = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess ||
			(err = cudaDeviceGetAttribute(&gi->sm_count,
				cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
			(err = cudaDeviceGetAttribute(&gi->l2_bytes,
				cudaDevAttrL2CacheSize, dev)) != cudaSuccess ||
			(err = cudaDeviceGetAttribute(&gi->can_map_host,
				cudaDevAttrCanMapHostMemory, dev)) != cudaSuccess ||
			(err = cudaDriverGetVersion(&gi->driver_version)) != cudaSuccess ||
			(err = cudaRuntimeGetVersion(&gi->runtime_version)) != cudaSuccess)
		return err;
	gi->dev = dev;
	snprintf(gi->name, sizeof(gi->name), "%s", prop.name);
	gi->cc_major = prop.major;
	gi->cc_minor = prop.minor;
	gi->mem_bytes = prop.totalGlobalMem;
	kr_sm_count = gi->sm_count;
	/* Create the context now, not inside the first timed call. */
	return cudaFree(0);
}

static int
kr_window_ok(uint32_t window)
{
	return window >= 16 && window <= KR_WINDOW_MAX && window % 16 == 0;
}

extern "C" int
kr_gather_launch(const struct kr_batch *b, uint32_t window, uint32_t *out,
		cudaStream_t stream)
{
	const unsigned int tpb = 256;
	uint64_t blocks = ((uint64_t)b->n + tpb - 1) / tpb;

	if (!kr_window_ok(window))
		return cudaErrorInvalidValue;
	if (b->n == 0)
		return cudaSuccess;
	kr_gather_kernel<<<(unsigned int)blocks, tpb, 0, stream>>>(*b, window,
		out);
	return cudaGetLastError();
}

/* Every SM full: enough loads in flight to cover PCIe latency. */
static cudaError_t
kr_full_grid(const void *fn, unsigned int *blocks)
{
	int per_sm = 0;
	cudaError_t err;

	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn,
		KR_BW_TPB, 0);
	if (err != cudaSuccess)
		return err;
	*blocks = (unsigned int)(per_sm * kr_sm_count);
	return cudaSuccess;
}

extern "C" int
kr_read_bw_launch(const void *buf, size_t bytes, unsigned long long *sink,
		cudaStream_t stream)
{
	unsigned int blocks;
	cudaError_t err;

	if (bytes % 16 != 0 || ((uintptr_t)buf & 15) != 0)
		return cudaErrorInvalidValue;
	if ((err = kr_full_grid((const void *)kr_read_bw_kernel, &blocks)) !=
			cudaSuccess)
		return err;
	kr_read_bw_kernel<<<blocks, KR_BW_TPB, 0, stream>>>(
		(const uint4 *)buf, bytes / 16, sink);
	return cudaGetLastError();
}

extern "C" int
kr_read_scatter_launch(const void *buf, size_t bytes, uint32_t stride,
		uint32_t rd, unsigned long long *sink, cudaStream_t stream)
{
	unsigned int blocks;
	cudaError_t err;

	if (rd < 16 || rd > 128 || rd % 16 != 0 || (rd & (rd - 1)) != 0 ||
			stride < rd || stride % 16 != 0 ||
			((uintptr_t)buf & 15) != 0 || bytes < stride)
		return cudaErrorInvalidValue;
	if ((err = kr_full_grid((const void *)kr_read_scatter_kernel,
			&blocks)) != cudaSuccess)
		return err;
	kr_read_scatter_kernel<<<blocks, KR_BW_TPB, 0, stream>>>(
		(const uint8_t *)buf, bytes / stride, stride, rd, sink);
	return cudaGetLastError();
}

extern "C" int
kr_fill_launch(void *buf, size_t bytes, uint64_t seed, cudaStream_t stream)
{
	if (bytes % 8 != 0 || ((uintptr_t)buf & 7) != 0)
		return cudaErrorInvalidValue;
	kr_fill_kernel<<<kr_sm_count * 8, 256, 0, stream>>>((uint64_t *)buf,
		bytes / 8, seed);
	return cudaGetLastError();
}
