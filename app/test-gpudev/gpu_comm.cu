/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels that talk to the CPU while they run: they poll CPU memory the
 * gpudev library registered, so every load of it is volatile (the CPU
 * changes it under the kernel) and every answer is fenced system-wide
 * before the store that publishes it.
 */

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu_kernels.h"

#define GK_LIST_THREADS 256

struct gk_flag_probe {
	cudaStream_t stream;
	struct gk_flag_result *state; /* mapped host memory */
};

struct gk_list_walker {
	cudaStream_t stream;
	struct gk_item_report *reports; /* mapped host memory */
};

__global__ void
gk_flag_kernel(uint32_t *flag, uint32_t want, uint32_t reply,
		uint64_t timeout_cycles, struct gk_flag_result *st)
{
	volatile uint32_t *vflag = flag;
	volatile struct gk_flag_result *vst = st;
	long long start = clock64();
	uint32_t v;

	vst->started = 1;
	__threadfence_system();
	for (;;) {
		v = *vflag;
		if (v == want)
			break;
		if ((uint64_t)(clock64() - start) > timeout_cycles) {
			vst->seen = v;
			vst->timed_out = 1;
			__threadfence_system();
			vst->done = 1;
			return;
		}
	}
	vst->seen = v;
	/* The CPU must see the record before the reply that ends its wait. */
	__threadfence_system();
	*vflag = reply;
	__threadfence_system();
	vst->done = 1;
}

__global__ void
gk_list_kernel(struct gk_comm_item *items, uint32_t n_items,
		uint64_t timeout_cycles, struct gk_item_report *reports)
{
	__shared__ int ready;
	__shared__ unsigned long long sum;
	long long start = clock64();
	uint32_t it;

	for (it = 0; it < n_items; it++) {
		volatile struct gk_comm_item *item = &items[it];
		volatile struct gk_item_report *rep = &reports[it];
		volatile struct gk_comm_pkt *pkts;
		unsigned long long local = 0;
		uint64_t bytes = 0;
		uint32_t p, npkts;

		if (threadIdx.x == 0) {
			volatile int *status = item->status_d;

			ready = 0;
			sum = 0;
			for (;;) {
				if (*status == GK_COMM_READY) {
					ready = 1;
					break;
				}
				if ((uint64_t)(clock64() - start) > timeout_cycles)
					break;
			}
			/* Order the packet reads after the READY load. */
			__threadfence_system();
		}
		__syncthreads();
		if (!ready) {
			if (threadIdx.x == 0) {
				rep->state = GK_ITEM_TIMEOUT;
				__threadfence_system();
			}
			return;
		}

		npkts = item->num_pkts;
		pkts = item->pkt_list;
		for (p = 0; p < npkts; p++) {
			const volatile uint8_t *data =
				(const volatile uint8_t *)pkts[p].addr;
			size_t size = pkts[p].size;
			size_t j;

			for (j = threadIdx.x; j < size; j += blockDim.x)
				local += gk_checksum_term(p, j, data[j]);
			bytes += size;
		}
		atomicAdd(&sum, local);
		__syncthreads();

		if (threadIdx.x == 0) {
			rep->checksum = sum;
			rep->bytes = bytes;
			rep->num_pkts = npkts;
			rep->state = GK_ITEM_DONE;
			/* Report first, then DONE: the CPU reads it on DONE. */
			__threadfence_system();
			*(volatile int *)item->status_d = GK_COMM_DONE;
			__threadfence_system();
		}
		/* Keep `sum` and `ready` stable until everyone has used them. */
		__syncthreads();
	}
}

extern "C" int
gk_flag_probe_start(uint32_t *flag, uint32_t want, uint32_t reply,
		uint64_t timeout_cycles, struct gk_flag_probe **probe)
{
	struct gk_flag_probe *pr;
	cudaError_t err;

	pr = (struct gk_flag_probe *)calloc(1, sizeof(*pr));
	if (pr == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&pr->state, sizeof(*pr->state),
			cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	memset(pr->state, 0, sizeof(*pr->state));
	/* Own stream: nothing the test does meanwhile waits on the spin. */
	err = cudaStreamCreateWithFlags(&pr->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_host;
	gk_flag_kernel<<<1, 1, 0, pr->stream>>>(flag, want, reply,
			timeout_cycles, pr->state);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*probe = pr;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(pr->stream);
fail_host:
	cudaFreeHost(pr->state);
fail:
	free(pr);
	return err;
}

extern "C" void
gk_flag_probe_peek(const struct gk_flag_probe *probe,
		struct gk_flag_result *res)
{
	const volatile struct gk_flag_result *st = probe->state;

	res->started = st->started;
	res->done = st->done;
	res->timed_out = st->timed_out;
	res->seen = st->seen;
}

extern "C" int
gk_flag_probe_finish(struct gk_flag_probe *probe, struct gk_flag_result *res)
{
	cudaError_t err, err2;

	err = cudaStreamSynchronize(probe->stream);
	gk_flag_probe_peek(probe, res);
	err2 = cudaStreamDestroy(probe->stream);
	if (err == cudaSuccess)
		err = err2;
	err2 = cudaFreeHost(probe->state);
	if (err == cudaSuccess)
		err = err2;
	free(probe);
	return err;
}

extern "C" int
gk_list_walker_start(struct gk_comm_item *items, uint32_t n_items,
		uint64_t timeout_cycles, struct gk_list_walker **walker)
{
	struct gk_list_walker *w;
	size_t size = sizeof(*w->reports) * n_items;
	cudaError_t err;

	w = (struct gk_list_walker *)calloc(1, sizeof(*w));
	if (w == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&w->reports, size, cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	memset(w->reports, 0, size);
	err = cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_host;
	gk_list_kernel<<<1, GK_LIST_THREADS, 0, w->stream>>>(items, n_items,
			timeout_cycles, w->reports);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*walker = w;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(w->stream);
fail_host:
	cudaFreeHost(w->reports);
fail:
	free(w);
	return err;
}

extern "C" const volatile struct gk_item_report *
gk_list_walker_reports(const struct gk_list_walker *walker)
{
	return walker->reports;
}

extern "C" int
gk_list_walker_finish(struct gk_list_walker *walker)
{
	cudaError_t err, err2;

	err = cudaStreamSynchronize(walker->stream);
	err2 = cudaStreamDestroy(walker->stream);
	if (err == cudaSuccess)
		err = err2;
	err2 = cudaFreeHost(walker->reports);
	if (err == cudaSuccess)
		err = err2;
	free(walker);
	return err;
}
