/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels of bench-handoff. Memory the CPU writes while a kernel runs
 * (item status, packet list, packet data, ping-pong flag) lives in host
 * memory registered for the GPU, or in GPU memory the CPU maps: it is
 * read with system-scope atomics or cache-bypassing loads, and every
 * answer is published after a system-scope fence.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "gpurx_portable.h"
#include "handoff_kernels.h"

#define HK_WARP 32

static_assert(sizeof(struct hk_comm_pkt) == 16,
	"hk_block_descs loads a descriptor as one 16-byte vector");

typedef cuda::atomic_ref<int, cuda::thread_scope_system> hk_sys_int;
typedef cuda::atomic_ref<unsigned int, cuda::thread_scope_system> hk_sys_u32;

/*
 * Sum of the bytes of one packet, by the 32 lanes of a warp (the result
 * is partial per lane). ld.global.cv (__ldcv) fetches from memory again
 * each time: a packet buffer reused by a later burst is never served from
 * a stale cached copy, as with a NIC writing new data into it.
 */
static __device__ __forceinline__ unsigned long long
hk_sum_bytes(uintptr_t addr, size_t size, unsigned int lane)
{
	unsigned long long s = 0;
	size_t done = 0, i;

	if ((addr & 15) == 0) {
		const uint4 *v = (const uint4 *)addr;
		size_t nv = size / 16;

		for (i = lane; i < nv; i += HK_WARP) {
			uint4 w = __ldcv(v + i);

			/* __vsadu4(x, 0): sum of the 4 bytes of x. */
			s += __vsadu4(w.x, 0) + __vsadu4(w.y, 0) +
				__vsadu4(w.z, 0) + __vsadu4(w.w, 0);
		}
		done = nv * 16;
	}
	for (i = done + lane; i < size; i += HK_WARP)
		s += __ldcv((const unsigned char *)addr + i);
	return s;
}

static __device__ __forceinline__ unsigned long long
hk_warp_sum(unsigned long long s)
{
	int o;

	for (o = HK_WARP / 2; o > 0; o /= 2)
		s += __shfl_down_sync(0xffffffffu, s, o);
	return s;
}

/*
 * Descriptors of the block's first packets (one per warp), loaded by the
 * block's first threads in one coalesced instruction and shared. Uncached
 * loads of one host cache line by different warps are served one after
 * another, a PCIe round trip each (bench-sysmem-probe): with one warp per
 * 16-byte descriptor, eight warps would wait on each line in turn.
 * Call with every thread of the block; it synchronizes the block.
 */
static __device__ __forceinline__ void
hk_block_descs(const volatile struct hk_comm_pkt *pkts, uint32_t n,
		uintptr_t *s_addr, size_t *s_size)
{
	const unsigned int wpb = blockDim.x / HK_WARP;
	const uint32_t p = blockIdx.x * wpb + threadIdx.x;

	if (threadIdx.x < wpb && p < n) {
		unsigned long long a, z;

		gpurx_ld_comm_pkt(&pkts[p], &a, &z);
		s_addr[threadIdx.x] = (uintptr_t)a;
		s_size[threadIdx.x] = (size_t)z;
	}
	__syncthreads();
}

/*
 * This block's share of a burst: warp w of block b takes packets
 * b * warps_per_block + w, then every (grid warps)-th. The descriptor of
 * the warp's first packet comes from hk_block_descs(). Returns the
 * warp's sum in lane 0.
 */
static __device__ __forceinline__ unsigned long long
hk_block_work(const volatile struct hk_comm_pkt *pkts, uint32_t n,
		const uintptr_t *s_addr, const size_t *s_size)
{
	const unsigned int lane = threadIdx.x % HK_WARP;
	const unsigned int w = threadIdx.x / HK_WARP;
	const unsigned int wpb = blockDim.x / HK_WARP;
	const uint32_t stride = gridDim.x * wpb;
	uint32_t p = blockIdx.x * wpb + w;
	unsigned long long s = 0;

	if (p < n)
		s += hk_sum_bytes(s_addr[w], s_size[w], lane);
	for (p += stride; p < n; p += stride)
		s += hk_sum_bytes(pkts[p].addr, pkts[p].size, lane);
	return hk_warp_sum(s);
}

/* Per-launch state of the persistent kernel in GPU memory (zeroed). */
struct hk_dev_state {
	/* Blocks done with the item's current round; reset by the last. */
	unsigned int arrived[HK_MAX_ITEMS];
	unsigned long long sum[HK_MAX_ITEMS];
	/*
	 * Block 0 alone reads the item over PCIe (its status, then its packet
	 * count) and passes both to the other blocks here, in GPU memory.
	 * Two measured reasons (bench-sysmem-probe, doc/performance.md):
	 * every block polling the status floods the link with reads that
	 * delay the packet reads, and loads of one host cache line by many
	 * warps are served one after another, a PCIe round trip (~1 us) each;
	 * a count read by every warp made the handoff ~1 us per packet.
	 */
	unsigned long long go_round;	/* round + 1 once its status is known */
	int go_status;
	uint32_t go_n;			/* the item's num_pkts */
};

/*
 * Round of the persistent kernel, on the critical path from READY to DONE:
 *   block 0   poll status (system-scope acquire loads) -> count and its
 *             own descriptors, one round trip -> go to the other blocks ->
 *             its packets -> [DONE if it is the only block needed]
 *   block b   go (GPU memory) -> its descriptors -> its packets -> arrive;
 *             the last of the blocks needed sets DONE.
 * Only ceil(n / warps per block) blocks take part: a burst that fits one
 * block needs no hand-over through GPU memory at all.
 */
__global__ void __launch_bounds__(HK_THREADS)
hk_persist_kernel(const struct hk_comm_item *items, uint32_t n_items,
		struct hk_dev_state *ds, struct hk_report *reports,
		uint64_t n_rounds, unsigned int *timed_out, uint64_t timeout_ns)
{
	__shared__ int *s_status[HK_MAX_ITEMS];
	__shared__ struct hk_comm_pkt *s_pkts[HK_MAX_ITEMS];
	__shared__ uint32_t *s_num[HK_MAX_ITEMS];
	__shared__ int s_seen;
	__shared__ uint32_t s_n;
	__shared__ unsigned long long s_sum;
	__shared__ uintptr_t s_addr[HK_THREADS / HK_WARP];
	__shared__ size_t s_size[HK_THREADS / HK_WARP];
	const unsigned int wpb = HK_THREADS / HK_WARP;
	unsigned long long round;

	/* The list's pointers do not change while the kernel runs: read them
	 * over PCIe once, not every round. */
	if (threadIdx.x < n_items) {
		const volatile struct hk_comm_item *it = &items[threadIdx.x];

		s_status[threadIdx.x] = it->status_d;
		s_pkts[threadIdx.x] = it->pkt_list;
		s_num[threadIdx.x] = (uint32_t *)&items[threadIdx.x].num_pkts;
	}
	__syncthreads();

	for (round = 0;; round++) {
		const uint32_t it = (uint32_t)(round % n_items);
		const volatile struct hk_comm_pkt *pkts = s_pkts[it];
		cuda::atomic_ref<int, cuda::thread_scope_device> go_status(ds->go_status);
		cuda::atomic_ref<uint32_t, cuda::thread_scope_device> go_n(ds->go_n);
		cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> go(ds->go_round);
		uint32_t n, needed;

		if (threadIdx.x == 0) {
			s_sum = 0;
			s_seen = -2;
		}
		if (blockIdx.x == 0) {
			if (threadIdx.x == 0) {
				hk_sys_int status(*s_status[it]);
				uint64_t start = gpurx_gpu_ns();
				int v;

				for (;;) {
					/* Acquire at system scope: the packet
					 * list, the count and the packet data
					 * the CPU wrote before it stored READY
					 * (after rte_gpu_wmb) are visible to the
					 * block once past the barrier. (A
					 * relaxed poll and a fence after it
					 * measured the same.) */
					v = status.load(cuda::memory_order_acquire);
					if (v == HK_READY || v == HK_ERROR)
						break;
					if (gpurx_gpu_ns() - start > timeout_ns) {
						v = -1;
						break;
					}
				}
				s_seen = v;
				if (round < n_rounds)
					reports[round].t_seen = gpurx_gpu_ns();
			}
			__syncthreads();
			if (s_seen == HK_READY) {
				/* Count and this block's descriptors in the same
				 * round trip (descriptors past the count are
				 * stale and not used; the list has room for
				 * RTE_GPU_COMM_LIST_PKTS_MAX entries). The count
				 * is loaded by warp 1, the descriptors by warp
				 * 0: in one warp the second load would wait for
				 * the first (READY to both held: 2.5 us from
				 * one warp, 1.6 us from two). */
				if (threadIdx.x == HK_WARP)
					s_n = *(const volatile uint32_t *)s_num[it];
				hk_block_descs(pkts, 1024, s_addr, s_size);
			}
			if (threadIdx.x == 0) {
				uint32_t cnt = s_seen == HK_READY ? s_n : 0;

				if (round < n_rounds)
					reports[round].t_loaded = gpurx_gpu_ns();

				go_status.store(s_seen, cuda::memory_order_relaxed);
				go_n.store(cnt, cuda::memory_order_relaxed);
				/*
				 * Release at device scope: the blocks that
				 * acquire go_round see go_status and go_n and,
				 * by cumulativity, everything this block
				 * acquired from the CPU: their loads of the
				 * packets need no fence of their own (one per
				 * block measured +1-2 us per round).
				 */
				go.store(round + 1, cuda::memory_order_release);
			}
		} else if (threadIdx.x == 0) {
			uint64_t start = gpurx_gpu_ns();
			int v = -1;

			/* Acquire at device scope pairs with block 0's release. */
			while (go.load(cuda::memory_order_acquire) < round + 1) {
				if (gpurx_gpu_ns() - start > timeout_ns + 1000000) {
					v = -2;
					break;
				}
			}
			if (v != -2)
				v = go_status.load(cuda::memory_order_relaxed);
			s_seen = v;
			s_n = go_n.load(cuda::memory_order_relaxed);
		}
		__syncthreads();
		if (s_seen != HK_READY) {
			if (threadIdx.x == 0 && s_seen == -1 && blockIdx.x == 0) {
				*(volatile unsigned int *)timed_out = 1;
				/* Release: the flag reaches the CPU. */
				__threadfence_system();
			}
			return;
		}
		n = s_n;
		needed = (n + wpb - 1) / wpb;
		if (needed > gridDim.x)
			needed = gridDim.x;
		if (needed == 0)
			needed = 1;	/* an empty burst: block 0 answers */
		if (blockIdx.x >= needed) {
			/* Not needed this round. The barrier keeps thread 0
			 * from resetting s_seen for the next round while a
			 * slower warp still reads this round's. */
			__syncthreads();
			continue;
		}
		if (blockIdx.x != 0)
			hk_block_descs(pkts, n, s_addr, s_size);
		{
			unsigned long long s = hk_block_work(pkts, n, s_addr,
				s_size);

			if (threadIdx.x % HK_WARP == 0 && s != 0)
				atomicAdd(&s_sum, s);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			bool last = needed == 1;
			unsigned long long total = s_sum;

			if (!last) {
				atomicAdd(&ds->sum[it], s_sum);
				/* Release at device scope: this block's sum (and,
				 * the barrier above being cumulative, its warps'
				 * packet reads) is ordered before its arrival. */
				__threadfence();
				last = atomicAdd(&ds->arrived[it], 1u) == needed - 1;
				if (last) {
					/* Acquire at device scope: every block's
					 * sum, fenced before its arrival. Reset
					 * for the item's next round, which cannot
					 * start before the CPU sees DONE. */
					__threadfence();
					ds->arrived[it] = 0;
					total = atomicExch(&ds->sum[it], 0ULL);
				}
			}
			if (last) {
				hk_sys_int status(*s_status[it]);

				/* In GPU memory, checked by the CPU after the
				 * run: writes to host memory here would sit in
				 * front of DONE in the release below. */
				if (round < n_rounds) {
					struct hk_report *r = &reports[round];

					r->checksum = total;
					r->num_pkts = n;
					r->round = round;
					r->state = HK_STATE_OK;
					r->t_done = gpurx_gpu_ns();
				}
				/* Release at system scope: every block's packet
				 * reads (cumulativity through the arrival count)
				 * come before the CPU can see DONE and recycle
				 * the buffers. */
				status.store(HK_DONE, cuda::memory_order_release);
			}
		}
		/* s_seen, s_n, s_sum and the descriptors are reused next
		 * round. */
		__syncthreads();
	}
}

struct hk_persist_state {
	unsigned int timed_out;
};

__global__ void
hk_pingpong_kernel(unsigned int *flag, uint64_t timeout_ns,
		struct hk_persist_state *st)
{
	hk_sys_u32 f(*flag);
	unsigned int want = 1;
	uint64_t start = gpurx_gpu_ns();

	for (;;) {
		/* Relaxed both ways: the flag publishes nothing else, so a
		 * bare ping-pong needs no fence (this is the floor). */
		unsigned int v = f.load(cuda::memory_order_relaxed);

		if (v == HK_PP_QUIT)
			return;
		if (v == want) {
			f.store(want + 1, cuda::memory_order_relaxed);
			want += 2;
			start = gpurx_gpu_ns();
			continue;
		}
		if (gpurx_gpu_ns() - start > timeout_ns) {
			*(volatile unsigned int *)&st->timed_out = 1;
			/* Release: the CPU reads it after the kernel ends. */
			__threadfence_system();
			return;
		}
	}
}

__global__ void __launch_bounds__(HK_THREADS)
hk_burst_kernel(const struct hk_comm_pkt *pkts, uint32_t n,
		unsigned long long *partial)
{
	__shared__ unsigned long long s_sum;
	__shared__ uintptr_t s_addr[HK_THREADS / HK_WARP];
	__shared__ size_t s_size[HK_THREADS / HK_WARP];
	const volatile struct hk_comm_pkt *vp = pkts;
	unsigned long long s;

	if (threadIdx.x == 0)
		s_sum = 0;
	hk_block_descs(vp, n, s_addr, s_size);
	s = hk_block_work(vp, n, s_addr, s_size);
	if (threadIdx.x % HK_WARP == 0 && s != 0)
		atomicAdd(&s_sum, s);
	__syncthreads();
	/* Mapped host memory; the CPU reads it after the stream sync, which
	 * orders it after the kernel's writes. */
	if (threadIdx.x == 0)
		partial[blockIdx.x] = s_sum;
}

__global__ void
hk_empty_kernel(void)
{
}

/* --- Host side ------------------------------------------------------- */

extern "C" const char *
hk_strerror(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

extern "C" int
hk_error_is_no_gpu(int err)
{
	return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
		err == cudaErrorInitializationError ||
		err == cudaErrorCompatNotSupportedOnDevice ||
		err == cudaErrorSystemDriverMismatch;
}

extern "C" int
hk_copy_to_device(void *dst, const void *src, size_t n)
{
	return (int)cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
}

extern "C" int
hk_device_init(const char *pci, struct hk_gpu_info *gi)
{
	cudaDeviceProp prop;
	cudaError_t err;
	int count = 0, per_sm = 0;

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
	if (err == cudaSuccess)
		err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm,
			hk_persist_kernel, HK_THREADS, 0);
	if (err != cudaSuccess)
		return err;
	gi->max_blocks = per_sm * gi->sm_count;
	if (gi->max_blocks > HK_MAX_BLOCKS)
		gi->max_blocks = HK_MAX_BLOCKS;
	if (gi->max_blocks < 1)
		return cudaErrorInvalidConfiguration;
	return cudaSuccess;
}

extern "C" uint32_t
hk_blocks_for(const struct hk_gpu_info *gi, uint32_t n)
{
	uint32_t wpb = HK_THREADS / HK_WARP;
	uint32_t b = (n + wpb - 1) / wpb;

	if (b < 1)
		b = 1;
	if (b > (uint32_t)gi->max_blocks)
		b = (uint32_t)gi->max_blocks;
	return b;
}

struct hk_persist {
	cudaStream_t stream;
	struct hk_dev_state *ds;
	struct hk_report *reports;	/* GPU memory, one per round */
	uint64_t n_rounds;
	unsigned int *timed_out;	/* mapped host memory */
};

extern "C" int
hk_persist_start(struct hk_comm_item *items, uint32_t n_items,
		uint32_t blocks, uint64_t timeout_ns, uint64_t n_rounds,
		struct hk_persist **out)
{
	struct hk_persist *p;
	cudaError_t err;

	if (n_items == 0 || n_items > HK_MAX_ITEMS || blocks == 0 ||
			blocks > HK_MAX_BLOCKS || n_rounds == 0)
		return cudaErrorInvalidValue;
	p = (struct hk_persist *)calloc(1, sizeof(*p));
	if (p == NULL)
		return cudaErrorMemoryAllocation;
	p->n_rounds = n_rounds;
	err = cudaHostAlloc((void **)&p->timed_out, sizeof(*p->timed_out),
			cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	*p->timed_out = 0;
	err = cudaMalloc((void **)&p->ds, sizeof(*p->ds));
	if (err != cudaSuccess)
		goto fail_host;
	err = cudaMalloc((void **)&p->reports, sizeof(*p->reports) * n_rounds);
	if (err != cudaSuccess)
		goto fail_dev;
	/* Own non-blocking stream: nothing else waits on the spinning
	 * kernel. */
	err = cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_reports;
	err = cudaMemsetAsync(p->ds, 0, sizeof(*p->ds), p->stream);
	if (err == cudaSuccess)
		err = cudaMemsetAsync(p->reports, 0,
			sizeof(*p->reports) * n_rounds, p->stream);
	if (err != cudaSuccess)
		goto fail_stream;
	hk_persist_kernel<<<blocks, HK_THREADS, 0, p->stream>>>(items, n_items,
			p->ds, p->reports, n_rounds, p->timed_out, timeout_ns);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*out = p;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(p->stream);
fail_reports:
	cudaFree(p->reports);
fail_dev:
	cudaFree(p->ds);
fail_host:
	cudaFreeHost(p->timed_out);
fail:
	free(p);
	return err;
}

extern "C" int
hk_persist_timed_out(const struct hk_persist *p)
{
	return *(const volatile unsigned int *)p->timed_out != 0;
}

extern "C" int
hk_persist_finish(struct hk_persist *p, struct hk_report *reports,
		uint64_t n)
{
	cudaError_t err, e2;

	err = cudaStreamSynchronize(p->stream);
	if (err == cudaSuccess && reports != NULL)
		err = cudaMemcpy(reports, p->reports, sizeof(*reports) *
			(n < p->n_rounds ? n : p->n_rounds),
			cudaMemcpyDeviceToHost);
	e2 = cudaStreamDestroy(p->stream);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFree(p->reports);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFree(p->ds);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFreeHost(p->timed_out);
	if (err == cudaSuccess)
		err = e2;
	free(p);
	return err;
}

struct hk_pingpong {
	cudaStream_t stream;
	struct hk_persist_state *st;	/* mapped host memory */
};

extern "C" int
hk_pingpong_start(uint32_t *flag, uint64_t timeout_ns, struct hk_pingpong **out)
{
	struct hk_pingpong *pp;
	cudaError_t err;

	pp = (struct hk_pingpong *)calloc(1, sizeof(*pp));
	if (pp == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&pp->st, sizeof(*pp->st),
			cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	memset(pp->st, 0, sizeof(*pp->st));
	err = cudaStreamCreateWithFlags(&pp->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_host;
	hk_pingpong_kernel<<<1, 1, 0, pp->stream>>>((unsigned int *)flag,
			timeout_ns, pp->st);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*out = pp;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(pp->stream);
fail_host:
	cudaFreeHost(pp->st);
fail:
	free(pp);
	return err;
}

extern "C" int
hk_pingpong_finish(struct hk_pingpong *pp, int *timed_out)
{
	cudaError_t err, e2;

	err = cudaStreamSynchronize(pp->stream);
	*timed_out = *(volatile unsigned int *)&pp->st->timed_out != 0;
	e2 = cudaStreamDestroy(pp->stream);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFreeHost(pp->st);
	if (err == cudaSuccess)
		err = e2;
	free(pp);
	return err;
}

struct hk_launcher {
	cudaStream_t stream;
	unsigned long long *partial;	/* mapped host memory, per block */
};

extern "C" int
hk_launcher_create(struct hk_launcher **out)
{
	struct hk_launcher *l;
	cudaError_t err;

	l = (struct hk_launcher *)calloc(1, sizeof(*l));
	if (l == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&l->partial,
			sizeof(*l->partial) * HK_MAX_BLOCKS, cudaHostAllocMapped);
	if (err != cudaSuccess) {
		free(l);
		return err;
	}
	err = cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		cudaFreeHost(l->partial);
		free(l);
		return err;
	}
	*out = l;
	return cudaSuccess;
}

extern "C" int
hk_launch_burst(struct hk_launcher *l, const struct hk_comm_pkt *pkts,
		uint32_t n, uint32_t blocks, uint64_t *checksum)
{
	cudaError_t err;
	uint64_t s = 0;
	uint32_t b;

	if (blocks == 0 || blocks > HK_MAX_BLOCKS)
		return cudaErrorInvalidValue;
	hk_burst_kernel<<<blocks, HK_THREADS, 0, l->stream>>>(pkts, n,
			l->partial);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	err = cudaStreamSynchronize(l->stream);
	if (err != cudaSuccess)
		return err;
	for (b = 0; b < blocks; b++)
		s += ((volatile unsigned long long *)l->partial)[b];
	*checksum = s;
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
	cudaFreeHost(l->partial);
	free(l);
}
