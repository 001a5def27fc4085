/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA half of the GPU communication ring that is not a template:
 * the dispatch state's initialisation, the bounded wait for a kernel
 * told to quit, and READY stored by a stream.
 */

#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "gpucomm_dev.cuh"
#include "gpucomm_kernel.h"

#define GPUCOMM_INIT_THREADS 256

/*
 * Zeroes the sequence words and copies each item's packet-list and status
 * pointers into GPU memory: one host read per item here, none per item
 * processed later. A thread per item; items of one host line are read by
 * neighbouring lanes of one warp, one request.
 */
__global__ void
gpucomm_state_init_kernel(const struct gpucomm_kparams kp)
{
	const size_t n = (size_t)kp.n_rings * kp.n_items;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
			i += (size_t)gridDim.x * blockDim.x) {
		const volatile struct gpucomm_item *it =
			kp.items[i / kp.n_items] + i % kp.n_items;

		kp.st.ready_seq[i] = 0;
		kp.st.done_seq[i] = 0;
		kp.st.ready_ns[i] = 0;
		kp.st.pkt_list[i] = it->pkt_list;
		kp.st.status[i] = it->status_d;
	}
}

/*
 * READY stored by the stream: a single thread's system-scope release, so
 * that the work queued before it on the stream (the copy of an item's
 * packets) is complete and visible before any reader of READY sees it.
 */
__global__ void
gpucomm_ready_kernel(uint32_t *status)
{
	gpucomm_st_release_sys_u32(status, GPUCOMM_STATUS_READY);
}

extern "C" int
gpucomm_cuda_state_init(const struct gpucomm_kparams *kp, void *stream)
{
	const size_t n = (size_t)kp->n_rings * kp->n_items;
	unsigned int blocks;

	if (n == 0 || kp->n_rings > GPUCOMM_MAX_RINGS || kp->st.ready_seq == NULL)
		return (int)cudaErrorInvalidValue;
	for (uint32_t r = 0; r < kp->n_rings; r++)
		if (kp->items[r] == NULL)
			return (int)cudaErrorInvalidValue;
	/*
	 * The READY kernel of gpucomm_cuda_queue_ready loaded now, before a
	 * persistent kernel runs: with lazy loading (CUDA 12's default) its
	 * first launch would load it then, and loading waits for the
	 * context's kernels to end, which a persistent kernel never does.
	 */
	{
		struct cudaFuncAttributes fa;
		cudaError_t e = cudaFuncGetAttributes(&fa, gpucomm_ready_kernel);

		if (e != cudaSuccess)
			return (int)e;
	}
	blocks = (unsigned int)((n + GPUCOMM_INIT_THREADS - 1) / GPUCOMM_INIT_THREADS);
	if (blocks > 1024)
		blocks = 1024;
	gpucomm_state_init_kernel<<<blocks, GPUCOMM_INIT_THREADS, 0,
		(cudaStream_t)stream>>>(*kp);
	if (cudaPeekAtLastError() != cudaSuccess)
		return (int)cudaGetLastError();
	/* Done before this returns: the item kernels of launch per burst may
	 * run on other streams. */
	return (int)cudaStreamSynchronize((cudaStream_t)stream);
}

extern "C" int
gpucomm_cuda_wait(void *stream, uint32_t timeout_ms)
{
	struct timespec t0, t;
	cudaError_t e;

	if (clock_gettime(CLOCK_MONOTONIC, &t0) != 0)
		return (int)cudaErrorUnknown;
	for (;;) {
		e = cudaStreamQuery((cudaStream_t)stream);
		if (e != cudaErrorNotReady)
			return (int)e;
		if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
			return (int)cudaErrorUnknown;
		if ((int64_t)(t.tv_sec - t0.tv_sec) * 1000 +
				(t.tv_nsec - t0.tv_nsec) / 1000000 >= (int64_t)timeout_ms)
			return (int)cudaErrorNotReady;
		usleep(100);
	}
}

/*
 * cuStreamWriteValue32 (a stream memory operation: no kernel, and by
 * default a barrier after the stream's earlier work), looked up once
 * through the runtime at the ABI this call is written against; NULL
 * where the driver lacks it.
 */
static PFN_cuStreamWriteValue32_v11070 gpucomm_write32;
static pthread_once_t gpucomm_write32_once = PTHREAD_ONCE_INIT;

static void
gpucomm_write32_lookup(void)
{
	enum cudaDriverEntryPointQueryResult q;
	void *fn = NULL;

	if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 11070,
			cudaEnableDefault, &q) == cudaSuccess &&
			q == cudaDriverEntryPointSuccess)
		gpucomm_write32 = (PFN_cuStreamWriteValue32_v11070)fn;
}

extern "C" int
gpucomm_cuda_queue_ready(void *stream, uint32_t *status_d)
{
	if (status_d == NULL)
		return (int)cudaErrorInvalidValue;
	pthread_once(&gpucomm_write32_once, gpucomm_write32_lookup);
	/*
	 * Measured on an H100 (staged dpdk-gpu-rx, 64 B): a kernel launch
	 * per item from 4 and 8 lcores fell to 0.74x and 0.35x of the lcore
	 * waiting for the copy; the stream write is the cheaper call. The
	 * kernel remains for drivers without stream memory operations.
	 */
	if (gpucomm_write32 != NULL && gpucomm_write32((CUstream)stream,
			(CUdeviceptr)(uintptr_t)status_d, GPUCOMM_STATUS_READY,
			CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_SUCCESS)
		return 0;
	gpucomm_ready_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(status_d);
	return (int)cudaGetLastError();
}
