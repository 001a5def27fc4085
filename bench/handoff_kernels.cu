/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels of bench-handoff. The handoff runs through the ring library's
 * kernels (lib/gpucomm: dispatcher warp, worker blocks, one release of
 * DONE per item) with the per-item body here; the floor is a bare flag
 * ping-pong. Memory the CPU writes while a kernel runs is read with the
 * library's system-scope operations.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpucomm_persistent.cuh"
#include "handoff_kernels.h"

#define HK_WARP 32
#define HK_WARPS (HK_THREADS / HK_WARP)
/* Packets a warp reads at once: their loads are in flight together. */
#define HK_UNROLL 4

static_assert(HK_WARPS <= HK_WARP, "one warp sums the warps' partial sums");

/* Sum of the 16 bytes of w (__vsadu4(x, 0): sum of the 4 bytes of x). */
static __device__ __forceinline__ unsigned int
hk_sum16(uint4 w)
{
	return __vsadu4(w.x, 0) + __vsadu4(w.y, 0) + __vsadu4(w.z, 0) +
		__vsadu4(w.w, 0);
}

/*
 * Sum of the bytes of HK_UNROLL packets (size 0: none), by a group of g
 * lanes (g divides 32; sl: the lane's place in it; the result is partial
 * per lane): each step loads a 16-byte word of every packet per lane
 * before adding any, so the packets' loads travel together instead of
 * one packet's after another's. ld.global.cv (__ldcv) fetches from
 * memory again each time: a packet buffer reused by a later burst is
 * never served from a stale cached copy, as with a NIC writing new data
 * into it. Bytes past the last whole word, and packets not 16-byte
 * aligned, are read byte by byte.
 */
static __device__ __forceinline__ unsigned long long
hk_sum_pkts(const uintptr_t *a, const uint32_t *z, unsigned int g,
		unsigned int sl)
{
	unsigned long long s = 0;
	uint32_t most = 0;

#pragma unroll
	for (unsigned int u = 0; u < HK_UNROLL; u++)
		most = z[u] > most ? z[u] : most;
	for (uint32_t off = sl * 16; off < most; off += g * 16) {
		uint4 v[HK_UNROLL];

#pragma unroll
		for (unsigned int u = 0; u < HK_UNROLL; u++)
			v[u] = (a[u] & 15) == 0 && off + 16 <= z[u] ?
				__ldcv((const uint4 *)(a[u] + off)) :
				make_uint4(0, 0, 0, 0);
#pragma unroll
		for (unsigned int u = 0; u < HK_UNROLL; u++)
			s += hk_sum16(v[u]);
	}
#pragma unroll
	for (unsigned int u = 0; u < HK_UNROLL; u++) {
		uint32_t from = (a[u] & 15) == 0 ? z[u] & ~15u : 0;

		for (uint32_t i = from + sl; i < z[u]; i += g)
			s += __ldcv((const unsigned char *)a[u] + i);
	}
	return s;
}

static __device__ __forceinline__ unsigned long long
hk_warp_sum(unsigned long long s)
{
	for (int o = HK_WARP / 2; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	return s;
}

/*
 * The per-item body: the item's count and its first `burst` descriptors
 * in one round trip (gpucomm_load_item); then a group of lanes a packet,
 * as few as the item's largest packet needs at 16 bytes a lane (4 for
 * 64-byte packets, a warp from 512 bytes on), so that every packet of a
 * 1024-packet burst of small packets is loaded at once (a warp a packet
 * had 128 packets' loads in flight at a time: 1024 x 64 B from host
 * memory took 43 us from loaded to DONE, run eeedb4f, against a 1.3 us
 * transfer); the warps' sums added by warp 0 with shuffles (no
 * shared-memory atomics: a 64-bit atomicAdd on shared memory by every
 * warp serializes them), the round's report; then the skeleton releases
 * DONE.
 */
struct hk_sum_body {
	static constexpr unsigned int threads = HK_THREADS;
	/* The first descriptors loaded with READY (lap tags). */
	static constexpr bool prefetch = true;
	struct hk_report *reports;	/* reports[seq % n_reports] */
	uint64_t n_reports;
	uint32_t burst;

	struct worker : gpucomm_worker_base<hk_sum_body> {
		using gpucomm_worker_base<hk_sum_body>::gpucomm_worker_base;

		__device__ void
		item(const struct gpucomm_item_ctx &c)
		{
			__shared__ uintptr_t s_addr[GPUCOMM_PKTS_MAX];
			__shared__ uint32_t s_size[GPUCOMM_PKTS_MAX];
			__shared__ unsigned long long s_part[HK_WARPS];
			__shared__ uint32_t s_most[HK_WARPS];
			const unsigned int lane = threadIdx.x % HK_WARP;
			const unsigned int warp = threadIdx.x / HK_WARP;
			unsigned long long s = 0, t_loaded = 0;
			const uint32_t n = gpucomm_load_item(c, b.burst, s_addr, s_size);
			uint32_t most = 0;
			unsigned int g, per;

			if (threadIdx.x == 0)
				t_loaded = gpucomm_gpu_ns();
			/* The item's largest packet, from the descriptors in
			 * shared memory: the lanes a packet. */
			for (uint32_t p = threadIdx.x; p < n; p += HK_THREADS)
				most = s_size[p] > most ? s_size[p] : most;
			most = __reduce_max_sync(0xffffffffu, most);
			if (lane == 0)
				s_most[warp] = most;
			__syncthreads();
			most = __reduce_max_sync(0xffffffffu,
				lane < HK_WARPS ? s_most[lane] : 0);
			g = most <= 64 ? 4 : most <= 128 ? 8 : most <= 256 ? 16 : 32;
			per = HK_WARP / g;	/* packets a warp at a time */
			for (uint32_t p0 = warp * per + lane / g; p0 < n;
					p0 += HK_UNROLL * HK_WARPS * per) {
				uintptr_t a[HK_UNROLL];
				uint32_t z[HK_UNROLL];

#pragma unroll
				for (unsigned int u = 0; u < HK_UNROLL; u++) {
					const uint32_t p = p0 + u * HK_WARPS * per;

					a[u] = p < n ? s_addr[p] : 0;
					z[u] = p < n ? s_size[p] : 0;
				}
				s += hk_sum_pkts(a, z, g, lane % g);
			}
			s = hk_warp_sum(s);
			if (lane == 0)
				s_part[warp] = s;
			__syncthreads();
			if (warp == 0) {
				s = hk_warp_sum(lane < HK_WARPS ? s_part[lane] : 0);
				if (lane == 0) {
					struct hk_report *r =
						&b.reports[c.seq % b.n_reports];

					/* Before the skeleton's release of
					 * DONE, which publishes it. */
					r->checksum = s;
					r->round = c.seq;
					r->num_pkts = n;
					r->state = HK_STATE_OK;
					r->t_seen = c.ready_ns;
					r->t_loaded = t_loaded;
					r->t_done = gpucomm_gpu_ns();
					r->prefetched = c.pre_n != 0 &&
						n <= GPUCOMM_TAG_WINDOW;
				}
			}
			/* The descriptors are reused by the next item: the
			 * skeleton's barrier after this call keeps them. */
		}
	};
};

__global__ void
hk_empty_kernel(void)
{
}

/* --- Host side ------------------------------------------------------- */


extern "C" int
hk_error_is_no_gpu(int err)
{
	return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
		err == cudaErrorInitializationError ||
		err == cudaErrorCompatNotSupportedOnDevice ||
		err == cudaErrorSystemDriverMismatch;
}

extern "C" int
hk_device_init(const char *pci, struct hk_gpu_info *gi)
{
	cudaDeviceProp prop;
	cudaError_t err;
	int count = 0;

	memset(gi, 0, sizeof(*gi));
	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess)
		return err;
	if (count == 0)
		return cudaErrorNoDevice;
	if (pci == NULL ||
			cudaDeviceGetByPCIBusId(&gi->cuda_dev, pci) != cudaSuccess) {
		(void)cudaGetLastError();
		if (count != 1)
			return cudaErrorInvalidDevice;
		gi->cuda_dev = 0;
	}
	err = cudaSetDevice(gi->cuda_dev);
	if (err != cudaSuccess)
		return err;
	/* Spin-wait in cudaStreamSynchronize: the launch-per-burst baseline
	 * gets its best latency. May be refused on an active context. */
	gi->spin_sched = cudaSetDeviceFlags(cudaDeviceScheduleSpin) == cudaSuccess;
	(void)cudaGetLastError();
	err = cudaFree(0);
	if (err != cudaSuccess)
		return err;
	err = cudaGetDeviceProperties(&prop, gi->cuda_dev);
	if (err != cudaSuccess)
		return err;
	snprintf(gi->name, sizeof(gi->name), "%s", prop.name);
	gi->sm_count = prop.multiProcessorCount;
	gi->cc_major = prop.major;
	gi->cc_minor = prop.minor;
	if (cudaDeviceGetAttribute(&gi->rdma_flush_options,
			cudaDevAttrGPUDirectRDMAFlushWritesOptions,
			gi->cuda_dev) != cudaSuccess) {
		(void)cudaGetLastError();
		gi->rdma_flush_options = 0;
	}
	if (cudaDeviceGetAttribute(&gi->rdma_writes_ordering,
			cudaDevAttrGPUDirectRDMAWritesOrdering,
			gi->cuda_dev) != cudaSuccess) {
		(void)cudaGetLastError();
		gi->rdma_writes_ordering = 0;
	}
	err = cudaDriverGetVersion(&gi->driver_version);
	if (err == cudaSuccess)
		err = cudaRuntimeGetVersion(&gi->runtime_version);
	return err;
}


extern "C" int
hk_error_not_ready(void)
{
	return (int)cudaErrorNotReady;
}

struct hk_ring {
	cudaStream_t stream;
	struct hk_sum_body body;	/* reports: GPU memory, one per round */
};

extern "C" int
hk_ring_start(struct gpucomm_kparams *kp, uint32_t burst, uint64_t n_rounds,
		struct hk_ring **out)
{
	struct hk_ring *r;
	cudaError_t err;

	if (burst == 0 || burst > GPUCOMM_PKTS_MAX || n_rounds == 0)
		return cudaErrorInvalidValue;
	r = (struct hk_ring *)calloc(1, sizeof(*r));
	if (r == NULL)
		return cudaErrorMemoryAllocation;
	r->body.n_reports = n_rounds;
	r->body.burst = burst;
	err = cudaMalloc((void **)&r->body.reports,
		sizeof(struct hk_report) * n_rounds);
	if (err != cudaSuccess)
		goto fail;
	/* Own non-blocking stream: nothing else waits on the spinning
	 * kernel. */
	err = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_reports;
	err = cudaMemsetAsync(r->body.reports, 0,
		sizeof(struct hk_report) * n_rounds, r->stream);
	if (err == cudaSuccess)
		err = (cudaError_t)gpucomm_launch_persistent(kp, r->body, r->stream);
	if (err != cudaSuccess)
		goto fail_stream;
	*out = r;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(r->stream);
fail_reports:
	cudaFree(r->body.reports);
fail:
	free(r);
	return err;
}

extern "C" int
hk_ring_finish(struct hk_ring *r, struct hk_report *reports, uint64_t n,
		uint32_t timeout_ms)
{
	cudaError_t err, e2;

	err = (cudaError_t)gpucomm_cuda_wait(r->stream, timeout_ms);
	if (err == cudaErrorNotReady)
		return err;	/* still runs: it may read all of it */
	if (err == cudaSuccess && reports != NULL)
		err = cudaMemcpy(reports, r->body.reports, sizeof(*reports) *
			(n < r->body.n_reports ? n : r->body.n_reports),
			cudaMemcpyDeviceToHost);
	e2 = cudaStreamDestroy(r->stream);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFree(r->body.reports);
	if (err == cudaSuccess)
		err = e2;
	free(r);
	return err;
}

struct hk_launcher {
	cudaStream_t stream;
	struct hk_sum_body body;	/* one report, mapped host memory */
};

extern "C" int
hk_launcher_create(struct hk_launcher **out)
{
	struct hk_launcher *l;
	cudaError_t err;

	l = (struct hk_launcher *)calloc(1, sizeof(*l));
	if (l == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&l->body.reports, sizeof(struct hk_report),
			cudaHostAllocMapped);
	if (err != cudaSuccess) {
		free(l);
		return err;
	}
	l->body.n_reports = 1;
	err = cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		cudaFreeHost(l->body.reports);
		free(l);
		return err;
	}
	*out = l;
	return cudaSuccess;
}

extern "C" int
hk_launcher_prepare(struct hk_launcher *l, const struct gpucomm_kparams *kp)
{
	return gpucomm_cuda_state_init(kp, l->stream);
}

extern "C" int
hk_launch_item(struct hk_launcher *l, const struct gpucomm_kparams *kp,
		uint32_t idx, uint64_t seq, uint32_t burst, uint64_t *checksum)
{
	volatile struct hk_report *r = l->body.reports;
	cudaError_t err;

	if (burst == 0 || burst > GPUCOMM_PKTS_MAX)
		return cudaErrorInvalidValue;
	l->body.burst = burst;
	r->state = HK_STATE_IDLE;
	err = (cudaError_t)gpucomm_launch_item(kp, l->body, 0, idx, seq, l->stream);
	if (err == cudaSuccess)
		err = cudaStreamSynchronize(l->stream);
	if (err != cudaSuccess)
		return err;
	/* After the stream sync, which orders it after the kernel's writes. */
	if (r->state != HK_STATE_OK || r->round != seq)
		return cudaErrorUnknown;
	*checksum = r->checksum;
	return cudaSuccess;
}

extern "C" int
hk_launch_empty(struct hk_launcher *l)
{
	cudaError_t err;

	hk_empty_kernel<<<1, 1, 0, l->stream>>>();
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	return cudaStreamSynchronize(l->stream);
}

extern "C" void
hk_launcher_destroy(struct hk_launcher *l)
{
	if (l == NULL)
		return;
	cudaStreamDestroy(l->stream);
	cudaFreeHost(l->body.reports);
	free(l);
}
