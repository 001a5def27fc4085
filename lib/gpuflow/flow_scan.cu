/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table's scan on the GPU: a thread per slot, concurrent with
 * the packet kernels' updates (the protocol is flow_table.h's). The
 * threads of a warp that find their flow due reserve their ring
 * positions with one CAS for the warp: one per due flow would make the
 * ring head the scan's bottleneck when many flows end at once.
 */

#include <cuda_runtime.h>

#include "flow_table.h"
#include "flow_scan.h"

#define SCAN_THREADS 256
#define SCAN_BLOCKS_MAX 1024u

__global__ void __launch_bounds__(SCAN_THREADS)
gpurx_flow_scan_kernel(struct gpurx_flow_table *ft, uint64_t now)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	const uint32_t cap = ft->capacity;
	const unsigned int lane = threadIdx.x % 32;

	if (ft->ring == NULL)
		return;
	/* Whole warps go round together: the ballot below is warp-wide. */
	for (uint32_t base = blockIdx.x * blockDim.x; base < cap;
			base += gridDim.x * blockDim.x) {
		const uint32_t i = base + threadIdx.x;
		struct gpurx_flow_entry *e = NULL;
		uint64_t s = 0, pos = 0;
		uint32_t why = GPURX_FLOW_END_NONE, got = 0;
		unsigned int want;

		if (i < cap) {
			e = &ents[i];
			s = gpurx_atomic_load_u64(&e->state, GPURX_ACQUIRE);
			if (GPURX_FLOW_TAG(s) == GPURX_FLOW_READY &&
					GPURX_FLOW_REFS(s) == 0)
				why = gpurx_flow_entry_due(ft, e, now);
		}
		want = __ballot_sync(0xffffffffu, why != GPURX_FLOW_END_NONE);
		if (want == 0)
			continue;
		if (lane == (unsigned int)(__ffs(want) - 1))
			got = gpurx_flow_ring_reserve(ft, __popc(want), &pos);
		got = __shfl_sync(0xffffffffu, got, __ffs(want) - 1);
		pos = __shfl_sync(0xffffffffu, pos, __ffs(want) - 1);
		if (why != GPURX_FLOW_END_NONE) {
			/* This lane's place among the warp's due flows. */
			uint32_t rank = __popc(want & ((1u << lane) - 1));

			/* Beyond what the ring had room for: stays live,
			 * counted in ring_full by the reservation. */
			if (rank < got)
				gpurx_flow_end_at(ft, e, s, why, GPURX_FLOW_FREE,
					pos + rank, now);
		}
	}
}

extern "C" int
gpurx_flow_cuda_scan(struct gpurx_flow_table *d_ft, uint32_t capacity,
		uint64_t now, void *stream)
{
	uint32_t blocks = (capacity + SCAN_THREADS - 1) / SCAN_THREADS;

	if (blocks > SCAN_BLOCKS_MAX)
		blocks = SCAN_BLOCKS_MAX;
	gpurx_flow_scan_kernel<<<blocks, SCAN_THREADS, 0,
		(cudaStream_t)stream>>>(d_ft, now);
	return (int)cudaGetLastError();
}

extern "C" int
gpurx_flow_cuda_pull(struct gpurx_flow_ring *r, const uint64_t *d_head,
		uint64_t tail, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	struct gpurx_flow_ring_seg seg[2];
	cudaError_t e;
	uint32_t k, n = 0;

	/* How far producers reserved: sizes the copy only (the seqs decide
	 * what is taken), so a plain copy of the counter is enough. */
	e = cudaMemcpyAsync(r->head_copy, d_head, sizeof(*d_head),
		cudaMemcpyDeviceToHost, st);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(st);
	if (e != cudaSuccess)
		return (int)e;
	k = gpurx_flow_ring_pull_plan(r, tail,
		__atomic_load_n(r->head_copy, __ATOMIC_RELAXED), seg);
	if (k == 0)
		return 0;
	/* The first copy, for its seqs; then, ordered after it completed by
	 * the stream, the second (gpurx_flow_ring_pull_plan() says why). */
	for (int pass = 0; pass < 2 && e == cudaSuccess; pass++) {
		struct gpurx_flow_rec *dst = pass == 0 ? r->seen : r->copy;

		for (uint32_t i = 0; i < k && e == cudaSuccess; i++)
			e = cudaMemcpyAsync(dst + seg[i].at, r->recs + seg[i].slot,
				(size_t)seg[i].n * sizeof(struct gpurx_flow_rec),
				cudaMemcpyDeviceToHost, st);
	}
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(st);
	if (e != cudaSuccess)
		return (int)e;
	for (uint32_t i = 0; i < k; i++)
		n += seg[i].n;
	gpurx_flow_ring_pulled(r, tail, n);
	return 0;
}

extern "C" int
gpurx_flow_cuda_ring_slack(uint64_t *slack)
{
	int dev, sms = 0, threads = 0;
	cudaError_t e = cudaGetDevice(&dev);

	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
			dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&threads,
			cudaDevAttrMaxThreadsPerMultiProcessor, dev);
	if (e != cudaSuccess)
		return (int)e;
	*slack = (uint64_t)sms * (uint64_t)threads;
	return 0;
}

extern "C" int
gpurx_flow_cuda_use_device(int ordinal)
{
	return (int)cudaSetDevice(ordinal);
}

extern "C" int
gpurx_flow_cuda_stream(void **s)
{
	struct cudaFuncAttributes fa;
	int least, greatest;
	cudaError_t e;

	/*
	 * Scans run beside a kernel that never ends on its own (the
	 * persistent one). Under lazy loading the runtime loads a kernel at
	 * its first reference, and that load may wait for the whole context
	 * to be idle: a first scan launched while the persistent kernel
	 * runs then waits for a kernel that waits for this thread. Taking
	 * the kernel's attributes is such a reference: it is loaded here,
	 * before the persistent kernel starts.
	 */
	e = cudaFuncGetAttributes(&fa, gpurx_flow_scan_kernel);
	if (e == cudaSuccess)
		e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaStreamCreateWithPriority((cudaStream_t *)s,
		cudaStreamNonBlocking, least);
}

extern "C" int
gpurx_flow_cuda_host_alloc(void **p, size_t n)
{
	void *dev;
	cudaError_t e = cudaHostAlloc(p, n, cudaHostAllocMapped |
		cudaHostAllocPortable);

	if (e != cudaSuccess)
		return (int)e;
	/* The table keeps the ring's host address: the GPU must reach it
	 * there (unified addressing). */
	e = cudaHostGetDevicePointer(&dev, *p, 0);
	if (e == cudaSuccess && dev != *p)
		e = cudaErrorNotSupported;
	if (e != cudaSuccess)
		cudaFreeHost(*p);
	return (int)e;
}

extern "C" int
gpurx_flow_cuda_host_free(void *p)
{
	return (int)cudaFreeHost(p);
}

extern "C" int
gpurx_flow_cuda_dev_alloc(void **p, size_t n)
{
	return (int)cudaMalloc(p, n);
}

extern "C" int
gpurx_flow_cuda_dev_free(void *p)
{
	return (int)cudaFree(p);
}

extern "C" int
gpurx_flow_cuda_dev_zalloc(void **p, size_t n)
{
	cudaError_t e = cudaMalloc(p, n);

	if (e != cudaSuccess)
		return (int)e;
	e = cudaMemset(*p, 0, n);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess)
		cudaFree(*p);
	return (int)e;
}
