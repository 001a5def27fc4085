/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels that talk to the CPU while they run, through the ring library's
 * system-scope operations (lib/gpucomm): the library's persistent kernel
 * with a checksumming body over gpudev comm lists (the flag case uses the
 * library's flag echo).
 */

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu_kernels.h"
#include "gpucomm_persistent.cuh"

#define GK_RING_THREADS 256

/*
 * The ring kernels' per-item body: the item's count and descriptors
 * (gpucomm_load_item), then every byte of every packet checksummed by the
 * block, and the report.
 */
struct gk_sum_body {
	static constexpr unsigned int threads = GK_RING_THREADS;
	/* The first descriptors loaded with READY (lap tags). */
	static constexpr bool prefetch = true;
	struct gk_item_report *reports;	/* mapped host memory */
	uint32_t n_reports;

	struct worker : gpucomm_worker_base<gk_sum_body> {
		using gpucomm_worker_base<gk_sum_body>::gpucomm_worker_base;

		__device__ void
		item(const struct gpucomm_item_ctx &c)
		{
			__shared__ uintptr_t s_addr[GPUCOMM_PKTS_MAX];
			__shared__ uint32_t s_size[GPUCOMM_PKTS_MAX];
			__shared__ unsigned long long s_sum, s_bytes;
			unsigned long long local = 0, bytes = 0;
			const uint32_t n = gpucomm_load_item(c, GK_RING_THREADS - 32,
				s_addr, s_size);

			if (threadIdx.x == 0) {
				s_sum = 0;
				s_bytes = 0;
			}
			for (uint32_t p = threadIdx.x; p < n; p += blockDim.x)
				bytes += s_size[p];
			__syncthreads();
			for (uint32_t p = 0; p < n; p++) {
				/* Volatile: buffers are reused with new bytes. */
				const volatile uint8_t *d =
					(const volatile uint8_t *)s_addr[p];

				for (uint32_t j = threadIdx.x; j < s_size[p];
						j += blockDim.x)
					local += gk_checksum_term(p, j, d[j]);
			}
			atomicAdd(&s_sum, local);
			atomicAdd(&s_bytes, bytes);
			__syncthreads();
			if (threadIdx.x == 0) {
				volatile struct gk_item_report *r =
					&b.reports[c.seq % b.n_reports];

				r->checksum = s_sum;
				r->bytes = s_bytes;
				r->seq = c.seq;
				r->num_pkts = n;
				r->state = GK_ITEM_DONE;
			}
			/* The skeleton's barrier and release of DONE publish
			 * the report. */
		}
	};
};

struct gk_ring {
	cudaStream_t stream;
	struct gk_sum_body body;	/* reports: mapped host memory */
};

extern "C" int
gk_ring_create(uint32_t n_reports, struct gk_ring **ring)
{
	size_t size = sizeof(struct gk_item_report) * n_reports;
	struct gk_ring *g;
	cudaError_t err;

	if (n_reports == 0)
		return cudaErrorInvalidValue;
	g = (struct gk_ring *)calloc(1, sizeof(*g));
	if (g == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&g->body.reports, size, cudaHostAllocMapped);
	if (err != cudaSuccess) {
		free(g);
		return err;
	}
	memset(g->body.reports, 0, size);
	g->body.n_reports = n_reports;
	/* Non-blocking: nothing else waits on the persistent kernel. */
	err = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		cudaFreeHost(g->body.reports);
		free(g);
		return err;
	}
	*ring = g;
	return cudaSuccess;
}

extern "C" const volatile struct gk_item_report *
gk_ring_reports(const struct gk_ring *ring)
{
	return ring->body.reports;
}

extern "C" int
gk_ring_start(struct gk_ring *ring, struct gpucomm_kparams *kp)
{
	return gpucomm_launch_persistent(kp, ring->body, ring->stream);
}

extern "C" int
gk_ring_wait(struct gk_ring *ring, uint32_t timeout_ms)
{
	return gpucomm_cuda_wait(ring->stream, timeout_ms);
}

extern "C" int
gk_ring_launch_item(struct gk_ring *ring, const struct gpucomm_kparams *kp,
		uint32_t idx, uint64_t seq)
{
	int err = gpucomm_launch_item(kp, ring->body, 0, idx, seq, ring->stream);

	return err != 0 ? err : (int)cudaStreamSynchronize(ring->stream);
}

extern "C" void
gk_ring_destroy(struct gk_ring *ring)
{
	if (ring == NULL)
		return;
	cudaStreamDestroy(ring->stream);
	cudaFreeHost(ring->body.reports);
	free(ring);
}
