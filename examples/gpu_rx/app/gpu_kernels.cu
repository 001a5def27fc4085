/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CUDA side of dpdk-gpu-rx.
 *
 * Persistent kernel: per RX queue one dispatcher and bpq worker blocks.
 * The dispatcher alone polls the queue's ring over PCIe and publishes, in
 * GPU memory, how many items are READY; worker j takes the queue's items
 * j, j + bpq, j + 2 bpq, ... so that up to bpq items are processed at once
 * (each costs PCIe round trips whatever its size). A worker's thread 0
 * waits for its next item to be published as READY (system-scope acquire load of the
 * gpudev status word, so the CPU's pkt_list/num_pkts/ts writes and the
 * packet bytes are visible once READY is seen), or for the quit flag.
 * The block then classifies the item's packets, one thread per packet,
 * with the same gpurx_classify_pkt() the CPU path runs, and copies each
 * accepted packet's bytes into the item's capture arena with the whole
 * block striding over the bytes. Every thread fences at system scope,
 * the block synchronizes, and thread 0 release-stores DONE. Each block
 * takes its items in ring order and the CPU collects items in ring order,
 * so no item is skipped and the output order is the RX order.
 */

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "gpurx_classify.h"
#include "gpu_kernels.h"
#include "opts.h"

#define GPURX_KERNEL_THREADS 128
/* Poll back-off bounds: low latency when busy, little PCIe chatter idle
 * (one poller per queue: the dispatcher). */
#define GPURX_POLL_NS_MIN 32
#define GPURX_POLL_NS_MAX 512

static __device__ __forceinline__ uint32_t
ld_acquire_sys(const uint32_t *p)
{
	uint32_t v;

	/* Acquire at system scope: later loads cannot see older CPU data. */
	asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void
st_release_sys(uint32_t *p, uint32_t v)
{
	/* Release at system scope: the results are visible before DONE. */
	asm volatile("st.release.sys.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ uint64_t
globaltimer_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __device__ void
process_item(const struct gpurx_kparams *p, struct gpurx_gq *gq, uint32_t idx)
{
	__shared__ uint32_t s_len[GPURX_MAX_BURST];
	__shared__ uintptr_t s_addr[GPURX_MAX_BURST];
	struct gpurx_comm_item *it = &gq->items[idx];
	const uint32_t base = idx * gq->burst;
	uint32_t n = *(volatile uint32_t *)&it->num_pkts;
	uint8_t *arena = gq->arena + (size_t)idx * gq->item_bytes;

	if (n > gq->burst)
		n = gq->burst;	/* never index past the per-item arrays */
	for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
		volatile struct gpurx_comm_pkt *pk = &it->pkt_list[i];
		uintptr_t addr = pk->addr;
		uint32_t caplen = (uint32_t)pk->size;
		uint32_t wirelen = gq->wirelen[base + i];
		uint8_t mal = 0;
		uint32_t v;

		v = gpurx_classify_pkt((const uint8_t *)addr, caplen, wirelen,
			gq->ts[base + i], p->prog, p->prog_len, p->ft, &mal);
		gq->verdict[base + i] = v;
		gq->malformed[base + i] = mal;
		s_addr[i] = addr;
		s_len[i] = v == 0 ? 0 : min(min(v, caplen), gq->max_caplen);
	}
	__syncthreads();
	/* Whole block per packet: consecutive threads read consecutive bytes. */
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *src = (const uint8_t *)s_addr[i];
		uint32_t off = gq->cap_off[base + i];
		uint32_t len = s_len[i];

		if (len == 0 || off > gq->item_bytes ||
				len > gq->item_bytes - off)
			continue;	/* CPU reserved the space; guard anyway */
		for (uint32_t b = threadIdx.x; b < len; b += blockDim.x)
			arena[off + b] = src[b];
	}
	/* Each thread's result and arena stores are ordered before DONE. */
	__threadfence_system();
	__syncthreads();
}

static __device__ void
finish_item(struct gpurx_gq *gq, uint32_t idx, uint32_t slot, uint64_t t0)
{
	if (threadIdx.x == 0) {
		volatile struct gpurx_gq *vq = gq;

		/* Only this block writes its slot: plain stores suffice. */
		vq->busy_ns[slot] = vq->busy_ns[slot] + (globaltimer_ns() - t0);
		vq->items_done[slot] = vq->items_done[slot] + 1;
		/* Counters too must be visible before DONE. */
		__threadfence_system();
		st_release_sys(gq->items[idx].status_d, GPURX_ITEM_DONE);
	}
	__syncthreads();
}

static __device__ __forceinline__ unsigned long long
ld_acquire_gpu_u64(const unsigned long long *p)
{
	unsigned long long v;

	/* Acquire at device scope: pairs with the dispatcher's release. */
	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void
st_release_gpu_u64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ uint32_t
ld_relaxed_sys(const uint32_t *p)
{
	uint32_t v;

	/* Relaxed: several can be in flight at once; ordering comes from the
	 * fence taken once READY items are found. */
	asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

/* Items whose status the dispatcher reads per PCIe round trip. */
#define GPURX_DISPATCH_WINDOW 8

/*
 * The queue's dispatcher (one thread): takes the ring's items in order and
 * publishes, in GPU memory, how many are READY. It reads the status of up
 * to GPURX_DISPATCH_WINDOW consecutive items at once (independent loads in
 * flight together: one PCIe round trip for the lot), skipping items whose
 * previous lap the worker has not finished yet (so an old READY is never
 * taken for a new one). The only PCIe poller of the queue.
 */
static __device__ void
dispatch_queue(const struct gpurx_kparams *p, uint32_t q)
{
	struct gpurx_gq *gq = &p->gq[q];
	struct gpurx_qdev *qd = &p->qdev[q];
	const unsigned long long *done = p->done_seq + (size_t)q * gq->n_items;
	const uint32_t n = gq->n_items;
	/* gpudev keeps a list's status words in one array, item i at
	 * [i]: read the pointers once instead of once per item. */
	const uint32_t *status = *(uint32_t *volatile *)&gq->items[0].status_d;
	unsigned long long seq = 0;
	uint32_t ns = GPURX_POLL_NS_MIN;

	for (uint32_t i = 1; i < n; i++)
		if (*(uint32_t *volatile *)&gq->items[i].status_d != status + i)
			status = NULL;	/* not gpudev's layout: one at a time */
	for (;;) {
		uint32_t v[GPURX_DISPATCH_WINDOW];
		uint32_t k, w = status != NULL ? GPURX_DISPATCH_WINDOW : 1;

		for (k = 0; k < w; k++) {
			unsigned long long s = seq + k;
			uint32_t idx = (uint32_t)(s % n);

			/* Previous lap of this slot not finished: stop here. */
			if (s >= n && ld_acquire_gpu_u64(&done[idx]) < s - n + 1)
				break;
			v[k] = ld_relaxed_sys(status != NULL ? status + idx :
				*(uint32_t *volatile *)&gq->items[idx].status_d);
		}
		w = k;
		for (k = 0; k < w && v[k] == GPURX_ITEM_READY; k++)
			;
		if (k > 0) {
			/* Acquire at system scope: what the CPU wrote before
			 * each READY seen above, then handed on to the workers
			 * by the release (cumulativity). */
			cuda::atomic_thread_fence(cuda::memory_order_acquire,
				cuda::thread_scope_system);
			seq += k;
			st_release_gpu_u64(&qd->ready_seq, seq);
			ns = GPURX_POLL_NS_MIN;
			continue;
		}
		/*
		 * The CPU raises quit only after every item it published came
		 * back DONE, so quitting here loses nothing.
		 */
		if (ld_acquire_sys(p->quit) != 0) {
			*(volatile unsigned int *)&qd->quit = 1;
			/* Release at device scope: workers that acquire
			 * ready_seq see quit. */
			st_release_gpu_u64(&qd->ready_seq, ~0ULL);
			return;
		}
		__nanosleep(ns);
		if (ns < GPURX_POLL_NS_MAX)
			ns *= 2;
	}
}

__global__ void
gpurx_persistent_kernel(struct gpurx_kparams p)
{
	__shared__ int s_go;
	const uint32_t q = blockIdx.x / (p.bpq + 1);
	const uint32_t j = blockIdx.x % (p.bpq + 1);
	struct gpurx_gq *gq;
	unsigned long long seq = j;

	if (q >= p.nq)
		return;
	gq = &p.gq[q];
	if (j == p.bpq) {
		if (threadIdx.x == 0)
			dispatch_queue(&p, q);
		return;
	}
	if (j >= gq->n_items)
		return;
	for (;;) {
		const uint32_t idx = (uint32_t)(seq % gq->n_items);
		uint64_t t0 = 0;

		if (threadIdx.x == 0) {
			struct gpurx_qdev *qd = &p.qdev[q];

			while (ld_acquire_gpu_u64(&qd->ready_seq) < seq + 1)
				;
			s_go = *(volatile unsigned int *)&qd->quit == 0;
			/* The packet bytes and lists came from the CPU: order
			 * this block's later loads at system scope as well. */
			__threadfence_system();
			t0 = globaltimer_ns();
		}
		__syncthreads();
		if (!s_go)
			break;
		process_item(&p, gq, idx);
		finish_item(gq, idx, j, t0);
		if (threadIdx.x == 0)
			/* After DONE: the dispatcher may now wait for this
			 * slot's next READY. */
			st_release_gpu_u64(&p.done_seq[(size_t)q * gq->n_items + idx],
				seq + 1);
		seq += p.bpq;
	}
}

__global__ void
gpurx_item_kernel(struct gpurx_kparams p, uint32_t q, uint32_t idx)
{
	struct gpurx_gq *gq = &p.gq[q];
	uint64_t t0 = threadIdx.x == 0 ? globaltimer_ns() : 0;

	/* Launched after the item was filled: stream order is the acquire. */
	process_item(&p, gq, idx);
	finish_item(gq, idx, 0, t0);
}

extern "C" const char *
gpurx_cuda_strerror(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

extern "C" int
gpurx_cuda_select(const char *pci_bus_id, int *ordinal)
{
	cudaError_t e = cudaDeviceGetByPCIBusId(ordinal, pci_bus_id);

	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaSetDevice(*ordinal);
}

extern "C" int
gpurx_cuda_host_alloc(void **p, size_t n)
{
	void *dev = NULL;
	cudaError_t e;

	*p = NULL;
	e = cudaHostAlloc(p, n, cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
		return (int)e;
	memset(*p, 0, n);
	/* The structs hold host pointers the kernel follows: UVA required. */
	e = cudaHostGetDevicePointer(&dev, *p, 0);
	if (e == cudaSuccess && dev != *p)
		e = cudaErrorNotSupported;
	if (e != cudaSuccess) {
		cudaFreeHost(*p);
		*p = NULL;
	}
	return (int)e;
}

extern "C" int
gpurx_cuda_host_free(void *p)
{
	return p == NULL ? 0 : (int)cudaFreeHost(p);
}

extern "C" int
gpurx_cuda_dev_alloc(void **p, size_t n)
{
	return (int)cudaMalloc(p, n);
}

extern "C" int
gpurx_cuda_dev_free(void *p)
{
	return p == NULL ? 0 : (int)cudaFree(p);
}

extern "C" int
gpurx_cuda_copy(void *dst, const void *src, size_t n)
{
	return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

extern "C" int
gpurx_cuda_stream_create(void **s)
{
	/* Non-blocking: must not serialize with the persistent kernel. */
	return (int)cudaStreamCreateWithFlags((cudaStream_t *)s,
		cudaStreamNonBlocking);
}

extern "C" int
gpurx_cuda_stream_destroy(void *s)
{
	return s == NULL ? 0 : (int)cudaStreamDestroy((cudaStream_t)s);
}

extern "C" int
gpurx_cuda_copy_async(void *dst, const void *src, size_t n, void *s)
{
	return (int)cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault,
		(cudaStream_t)s);
}

extern "C" int
gpurx_cuda_stream_sync(void *s)
{
	return (int)cudaStreamSynchronize((cudaStream_t)s);
}

extern "C" int
gpurx_cuda_stream_busy(void *s)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)s);

	if (e == cudaSuccess)
		return 0;
	if (e == cudaErrorNotReady)
		return -1;
	return (int)e;
}

extern "C" int
gpurx_cuda_launch_persistent(struct gpurx_kparams *p, void *s)
{
	int dev, sms, per_sm;
	uint32_t resident;
	cudaError_t e;

	e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (e == cudaSuccess)
		e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm,
			gpurx_persistent_kernel, GPURX_KERNEL_THREADS, 0);
	if (e != cudaSuccess)
		return (int)e;
	resident = (uint32_t)sms * (uint32_t)per_sm;
	/* One dispatcher block and at least one worker per queue. */
	if (2 * p->nq > resident)
		return (int)cudaErrorInvalidConfiguration;
	if (p->nq * (p->bpq + 1) > resident)
		p->bpq = resident / p->nq - 1;
	gpurx_persistent_kernel<<<p->nq * (p->bpq + 1), GPURX_KERNEL_THREADS, 0,
		(cudaStream_t)s>>>(*p);
	return (int)cudaGetLastError();
}

extern "C" int
gpurx_cuda_launch_item(const struct gpurx_kparams *p, uint32_t q,
		uint32_t idx, void *s)
{
	gpurx_item_kernel<<<1, GPURX_KERNEL_THREADS, 0, (cudaStream_t)s>>>(
		*p, q, idx);
	return (int)cudaGetLastError();
}
