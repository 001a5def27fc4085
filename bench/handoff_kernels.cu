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

#include "handoff_kernels.h"

#define HK_WARP 32

static_assert(sizeof(struct hk_comm_pkt) == 16,
	"hk_block_descs loads a descriptor as one 16-byte vector");

typedef cuda::atomic_ref<int, cuda::thread_scope_system> hk_sys_int;
typedef cuda::atomic_ref<unsigned int, cuda::thread_scope_system> hk_sys_u32;

/* Wall-clock nanoseconds on the GPU, for timeouts that do not depend on
 * the SM clock. */
static __device__ __forceinline__ uint64_t
hk_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

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

		/* addr and size in one 16-byte load: one request, not two
		 * to the same line. */
		asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
			: "=l"(a), "=l"(z) : "l"(&pkts[p]) : "memory");
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
	unsigned long long arrived;	/* blocks done, over all rounds */
	unsigned long long sum[HK_MAX_ITEMS];
	/*
	 * Block 0 alone reads the item over PCIe (its status, then its packet
	 * count) and passes both to the other blocks here, in GPU memory.
	 * Two measured reasons (bench-sysmem-probe, doc/performance.md):
	 * every block polling the status floods the link with reads that
	 * delay the packet reads, and loads of one host word by many warps
	 * are served one after another, a PCIe round trip (~1 us) each; a
	 * count read by every warp made the handoff ~1 us per packet.
	 */
	unsigned long long go_round;	/* round + 1 once its status is known */
	int go_status;
	uint32_t go_n;			/* the item's num_pkts */
};

__global__ void __launch_bounds__(HK_THREADS)
hk_persist_kernel(const struct hk_comm_item *items, uint32_t n_items,
		struct hk_dev_state *ds, struct hk_report *reports,
		uint64_t timeout_ns)
{
	__shared__ int *s_status[HK_MAX_ITEMS];
	__shared__ struct hk_comm_pkt *s_pkts[HK_MAX_ITEMS];
	__shared__ uint32_t *s_num[HK_MAX_ITEMS];
	__shared__ int s_seen;
	__shared__ uint32_t s_n;
	__shared__ unsigned long long s_sum;
	__shared__ uintptr_t s_addr[HK_THREADS / HK_WARP];
	__shared__ size_t s_size[HK_THREADS / HK_WARP];
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
		uint32_t n;

		if (threadIdx.x == 0 && blockIdx.x == 0) {
			hk_sys_int status(*s_status[it]);
			uint64_t start = hk_ns();
			uint32_t cnt = 0;
			int v;

			s_sum = 0;
			for (;;) {
				/* Relaxed polling; ordering comes from the fence
				 * below once READY is seen. */
				v = status.load(cuda::memory_order_relaxed);
				if (v == HK_READY || v == HK_ERROR)
					break;
				if (hk_ns() - start > timeout_ns) {
					v = -1;
					break;
				}
			}
			/* Acquire at system scope: the packet list, the packet
			 * count and the packet data the CPU wrote before it
			 * stored READY (after rte_gpu_wmb) are visible to this
			 * thread's later loads. */
			cuda::atomic_thread_fence(cuda::memory_order_acquire,
				cuda::thread_scope_system);
			if (v == HK_READY)
				cnt = *(const volatile uint32_t *)s_num[it];
			go_status.store(v, cuda::memory_order_relaxed);
			go_n.store(cnt, cuda::memory_order_relaxed);
			/* Release at device scope: the blocks that acquire
			 * go_round see go_status and go_n and, by cumulativity,
			 * everything this thread acquired from the CPU above —
			 * their plain loads of the packets need no fence of
			 * their own (a system-scope fence per block measured
			 * +1-2 us per round). */
			go.store(round + 1, cuda::memory_order_release);
			s_seen = v;
			s_n = cnt;
		} else if (threadIdx.x == 0) {
			uint64_t start = hk_ns();
			int v = -1;

			s_sum = 0;
			/* Acquire at device scope pairs with block 0's release. */
			while (go.load(cuda::memory_order_acquire) < round + 1) {
				if (hk_ns() - start > timeout_ns + 1000000) {
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
				reports[it].state = HK_STATE_TIMEOUT;
				/* Release: the report reaches the CPU. */
				__threadfence_system();
			}
			return;
		}
		n = s_n;
		hk_block_descs(pkts, n, s_addr, s_size);
		{
			unsigned long long s = hk_block_work(pkts, n, s_addr,
				s_size);

			if (threadIdx.x % HK_WARP == 0 && s != 0)
				atomicAdd(&s_sum, s);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			unsigned long long prev;

			atomicAdd(&ds->sum[it], s_sum);
			/* Release at device scope: this block's sum (and, the
			 * barrier above being cumulative, its warps' packet
			 * reads) is ordered before its arrival is counted. */
			__threadfence();
			prev = atomicAdd(&ds->arrived, 1ULL);
			if (prev == (round + 1) * gridDim.x - 1) {
				volatile struct hk_report *r = &reports[it];
				hk_sys_int status(*s_status[it]);

				/* Acquire at device scope: every block's sum,
				 * each fenced before its arrival, is visible. */
				__threadfence();
				r->checksum = atomicExch(&ds->sum[it], 0ULL);
				r->num_pkts = n;
				r->round = round;
				r->state = HK_STATE_OK;
				/* Release at system scope: the report, and every
				 * block's packet reads (cumulativity through the
				 * arrival count), come before the CPU can see
				 * DONE and recycle the buffers. */
				status.store(HK_DONE, cuda::memory_order_release);
			}
		}
		/* s_seen, s_n and s_sum are reused next round. */
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
	uint64_t start = hk_ns();

	for (;;) {
		/* Relaxed both ways: the flag publishes nothing else, so a
		 * bare ping-pong needs no fence (this is the floor). */
		unsigned int v = f.load(cuda::memory_order_relaxed);

		if (v == HK_PP_QUIT)
			return;
		if (v == want) {
			f.store(want + 1, cuda::memory_order_relaxed);
			want += 2;
			start = hk_ns();
			continue;
		}
		if (hk_ns() - start > timeout_ns) {
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
	struct hk_report *reports;	/* mapped host memory */
};

extern "C" int
hk_persist_start(struct hk_comm_item *items, uint32_t n_items,
		uint32_t blocks, uint64_t timeout_ns, struct hk_persist **out)
{
	struct hk_persist *p;
	cudaError_t err;

	if (n_items == 0 || n_items > HK_MAX_ITEMS || blocks == 0 ||
			blocks > HK_MAX_BLOCKS)
		return cudaErrorInvalidValue;
	p = (struct hk_persist *)calloc(1, sizeof(*p));
	if (p == NULL)
		return cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&p->reports,
			sizeof(*p->reports) * HK_MAX_ITEMS, cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	memset(p->reports, 0, sizeof(*p->reports) * HK_MAX_ITEMS);
	err = cudaMalloc((void **)&p->ds, sizeof(*p->ds));
	if (err != cudaSuccess)
		goto fail_host;
	/* Own non-blocking stream: nothing else waits on the spinning
	 * kernel. */
	err = cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_dev;
	err = cudaMemsetAsync(p->ds, 0, sizeof(*p->ds), p->stream);
	if (err != cudaSuccess)
		goto fail_stream;
	hk_persist_kernel<<<blocks, HK_THREADS, 0, p->stream>>>(items, n_items,
			p->ds, p->reports, timeout_ns);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*out = p;
	return cudaSuccess;

fail_stream:
	cudaStreamDestroy(p->stream);
fail_dev:
	cudaFree(p->ds);
fail_host:
	cudaFreeHost(p->reports);
fail:
	free(p);
	return err;
}

extern "C" const volatile struct hk_report *
hk_persist_reports(const struct hk_persist *p)
{
	return p->reports;
}

extern "C" int
hk_persist_finish(struct hk_persist *p)
{
	cudaError_t err, e2;

	err = cudaStreamSynchronize(p->stream);
	e2 = cudaStreamDestroy(p->stream);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFree(p->ds);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFreeHost(p->reports);
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
