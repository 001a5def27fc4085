/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-sysmem-probe: what a persistent kernel pays for talking to the
 * CPU through host memory, taken apart step by step. It found why the
 * persistent handoff of bench-handoff needed ~1 us per packet where a
 * launched kernel reading the same memory needed ~20 ns: uncached loads
 * of one host cache line by several warps are served one after another,
 * a PCIe round trip each (the "every warp loads one count word" and
 * "descriptors: one load per block" rows).
 *
 *  fence    B blocks, one or all threads of each, each iteration one
 *           system-scope load of host memory then one fence of the kind
 *           named; ns per iteration. Shows whether a fence's cost grows
 *           with the number of blocks fencing at once.
 *  round    a handoff round without DPDK: the CPU fills a descriptor list
 *           and writes READY in host memory, block 0 polls it and passes
 *           it on in GPU memory, every warp reads one 64-byte packet
 *           through its descriptor, the last block to finish writes DONE;
 *           the CPU times READY -> DONE and checks the sum. Variants
 *           switch single steps on or off; packets in cudaHostAlloc
 *           memory reused each round, or in registered memory rotating
 *           over 140 MB (mbuf-sized slots, like a DPDK mbuf pool). The
 *           first variant is the naive persistent kernel, a system-scope
 *           fence in every block and before DONE; each later row drops or
 *           changes one step of it. None of them is the shipped ring
 *           (lib/gpucomm), which bench-handoff measures.
 *  launch   the same packet reads by a kernel launched per round + sync.
 *
 * CUDA runtime only (no DPDK): bench-sysmem-probe [--reps N].
 * Exit 0, 1 on a CUDA failure or a wrong answer, 77 without a GPU.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "gpucomm_dev.cuh"
#include "gpuapp_clock.h"

#define SP_THREADS 256
#define SP_WARP 32
#define SP_PKT 64
#define SP_MAX_PKTS 1024
#define SP_TIMEOUT_NS 2000000000ULL

#define SP_CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "sysmem-probe: %s: %s\n", #call, \
			cudaGetErrorString(e_)); \
		exit(e_ == cudaErrorNoDevice || \
			e_ == cudaErrorInsufficientDriver ? 77 : 1); \
	} \
} while (0)

enum sp_fence {
	SP_FENCE_NONE,
	SP_FENCE_ACQREL_GPU,
	SP_FENCE_SC_GPU,
	SP_FENCE_ACQREL_SYS,
	SP_FENCE_SC_SYS,
	SP_FENCE_N
};

static const char *const sp_fence_name[SP_FENCE_N] = {
	"none", "fence.acq_rel.gpu", "fence.sc.gpu (__threadfence)",
	"fence.acq_rel.sys", "fence.sc.sys (__threadfence_system)",
};

static __device__ __forceinline__ void
sp_do_fence(int kind)
{
	switch (kind) {
	case SP_FENCE_ACQREL_GPU:
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
		break;
	case SP_FENCE_SC_GPU:
		asm volatile("fence.sc.gpu;" ::: "memory");
		break;
	case SP_FENCE_ACQREL_SYS:
		asm volatile("fence.acq_rel.sys;" ::: "memory");
		break;
	case SP_FENCE_SC_SYS:
		asm volatile("fence.sc.sys;" ::: "memory");
		break;
	default:
		break;
	}
}

/* Each iteration: one host-memory load (its own 128-byte line per block),
 * then the fence. The sum keeps the loads from being optimized out. */
__global__ void
sp_fence_kernel(const uint32_t *host, int kind, int all_threads, int iters,
		uint32_t *sink)
{
	uint32_t s = 0;

	if (!all_threads && threadIdx.x != 0)
		return;
	for (int i = 0; i < iters; i++) {
		s += gpucomm_ld_relaxed_sys_u32(host + blockIdx.x * 32);
		sp_do_fence(kind);
	}
	if (s == 0xdeadbeefu)
		*sink = s;
}

/* Variants of the handoff round, one bit each. */
#define SP_V_BLOCK_SYS_FENCE 1u	/* every block: fence.acq_rel.sys after go */
#define SP_V_LOAD_CV 2u		/* packet loads ld.global.cv (else .volatile) */
#define SP_V_NO_ARRIVE_FENCE 4u	/* no __threadfence before the arrival add */
#define SP_V_DONE_SC_SYS 8u	/* __threadfence_system before DONE (else
				 * st.release.sys alone) */
#define SP_V_BLOCK_DESC 32u	/* the block's descriptors loaded by its first
				 * threads in one instruction, then shared */
#define SP_V_SHARED_COUNT 16u	/* every warp loads the packet count from
				 * one host word (as a comm list's num_pkts) */

struct sp_dev {
	unsigned long long arrived;
	unsigned long long go;
	unsigned long long sum;
};

struct sp_host {
	volatile uint32_t ready;	/* round + 1, written by the CPU */
	uint32_t pad0[31];
	volatile uint32_t done;		/* round + 1, written by the GPU */
	uint32_t pad1[31];
	volatile unsigned long long sum;
	volatile uint32_t quit;
	uint32_t pad2[29];
	volatile uint32_t count;	/* packets of the round, CPU-written */
};

static __device__ __forceinline__ uint4
sp_ld_pkt(const uint4 *p, unsigned int variant)
{
	uint4 v;

	if (variant & SP_V_LOAD_CV)
		return __ldcv(p);
	asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
		: "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)
		: "memory");
	return v;
}

/* Lanes 0..3 of a warp load one 64-byte packet; the warp's sum. The
 * packet's address comes from the descriptor list in host memory, as
 * with a gpudev comm list (one more round trip before the data). */
static __device__ __forceinline__ unsigned long long
sp_warp_pkt_sum(const uint64_t *desc, uint32_t p, unsigned int variant,
		const uint64_t *s_desc)
{
	unsigned int lane = threadIdx.x % SP_WARP;
	unsigned long long s = 0;

	if (lane < SP_PKT / 16) {
		uintptr_t a = (variant & SP_V_BLOCK_DESC) ?
			s_desc[threadIdx.x / SP_WARP] :
			*(const volatile uint64_t *)&desc[p];
		uint4 w = sp_ld_pkt((const uint4 *)a + lane, variant);

		s = (unsigned long long)w.x + w.y + w.z + w.w;
	}
	for (int o = SP_WARP / 2; o > 0; o /= 2)
		s += __shfl_down_sync(0xffffffffu, s, o);
	return s;
}

/* Packet p's sum (warp p of the grid) added to the block's *s_sum;
 * synchronizes the block. */
static __device__ __forceinline__ void
sp_block_sum(const uint64_t *desc, uint32_t p, uint32_t n_pkts,
		unsigned int variant, const uint64_t *s_desc,
		unsigned long long *s_sum)
{
	if (p < n_pkts) {
		unsigned long long s = sp_warp_pkt_sum(desc, p, variant, s_desc);

		if (threadIdx.x % SP_WARP == 0)
			atomicAdd(s_sum, s);
	}
	__syncthreads();
}

__global__ void __launch_bounds__(SP_THREADS)
sp_round_kernel(struct sp_host *h, const uint64_t *desc, uint32_t n_pkts,
		struct sp_dev *d, unsigned int variant)
{
	__shared__ int s_go;
	__shared__ unsigned long long s_sum;
	__shared__ uint64_t s_desc[SP_THREADS / SP_WARP];
	const uint32_t p = blockIdx.x * (SP_THREADS / SP_WARP) +
		threadIdx.x / SP_WARP;
	cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> go(d->go);

	for (unsigned long long round = 0;; round++) {
		if (threadIdx.x == 0) {
			uint64_t start = gpucomm_gpu_ns();
			int ok = 1;

			s_sum = 0;
			if (blockIdx.x == 0) {
				uint32_t v;

				for (;;) {
					v = gpucomm_ld_relaxed_sys_u32((const uint32_t *)&h->ready);
					if (v == round + 1 || h->quit)
						break;
					if (gpucomm_gpu_ns() - start > SP_TIMEOUT_NS)
						break;
				}
				ok = v == round + 1;
				/* Acquire at system scope: the CPU's writes before
				 * READY. Release at device scope to the blocks. */
				asm volatile("fence.acq_rel.sys;" ::: "memory");
				go.store(ok ? round + 1 : ~0ULL,
					cuda::memory_order_release);
			} else {
				unsigned long long g;

				while ((g = go.load(cuda::memory_order_acquire)) <
						round + 1)
					if (gpucomm_gpu_ns() - start > SP_TIMEOUT_NS)
						break;
				ok = g == round + 1;
				if (variant & SP_V_BLOCK_SYS_FENCE)
					asm volatile("fence.acq_rel.sys;" ::: "memory");
			}
			s_go = ok;
		}
		__syncthreads();
		if (!s_go)
			return;
		if (variant & SP_V_SHARED_COUNT)
			n_pkts = h->count;
		if (variant & SP_V_BLOCK_DESC) {
			uint32_t q = blockIdx.x * (SP_THREADS / SP_WARP) +
				threadIdx.x;

			if (threadIdx.x < SP_THREADS / SP_WARP && q < n_pkts)
				s_desc[threadIdx.x] =
					*(const volatile uint64_t *)&desc[q];
			__syncthreads();
		}
		sp_block_sum(desc, p, n_pkts, variant, s_desc, &s_sum);
		if (threadIdx.x == 0) {
			atomicAdd(&d->sum, s_sum);
			if (!(variant & SP_V_NO_ARRIVE_FENCE))
				__threadfence();
			if (atomicAdd(&d->arrived, 1ULL) ==
					(round + 1) * gridDim.x - 1) {
				__threadfence();
				h->sum = atomicExch(&d->sum, 0ULL);
				if (variant & SP_V_DONE_SC_SYS)
					__threadfence_system();
				cuda::atomic_ref<uint32_t, cuda::thread_scope_system>
					done(*(uint32_t *)&h->done);
				/* Release at system scope: sum before DONE. */
				done.store((uint32_t)(round + 1),
					cuda::memory_order_release);
			}
		}
		__syncthreads();
	}
}

/* One block sum per block into mapped host memory: one PCIe write per
 * block (an atomic on host memory per warp would cost a round trip each). */
__global__ void __launch_bounds__(SP_THREADS)
sp_launch_kernel(const uint64_t *desc, uint32_t n_pkts,
		unsigned long long *partial)
{
	__shared__ unsigned long long s_sum;
	const uint32_t p = blockIdx.x * (SP_THREADS / SP_WARP) +
		threadIdx.x / SP_WARP;

	if (threadIdx.x == 0)
		s_sum = 0;
	__syncthreads();
	sp_block_sum(desc, p, n_pkts, SP_V_LOAD_CV, NULL, &s_sum);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = s_sum;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
median_us(uint64_t *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	return t[n / 2] / 1000.0;
}

static double
p99_us(const uint64_t *t, int n)
{
	return t[(int)(n * 0.99)] / 1000.0;
}

/*
 * Packets the rounds read: n_slots buffers of SP_STRIDE bytes (an mbuf's
 * size), random data. Rotating takes the next n packets each round, as
 * bench-handoff does over its mbuf pool; fixed reuses the first n.
 */
#define SP_STRIDE 2176
#define SP_POOL_SLOTS 65536

struct sp_pool {
	const char *name;
	uint8_t *base;
	uint32_t n_slots;
	int registered;		/* cudaHostRegister'ed, else cudaHostAlloc */
	int rotate;
	uint32_t next;
	unsigned long long *slot_sum;
	uint64_t *desc;		/* mapped host memory, SP_MAX_PKTS */
};

static void
pool_init(struct sp_pool *pl, const char *name, int registered, int rotate)
{
	size_t bytes = (size_t)SP_POOL_SLOTS * SP_STRIDE;

	memset(pl, 0, sizeof(*pl));
	pl->name = name;
	pl->n_slots = SP_POOL_SLOTS;
	pl->registered = registered;
	pl->rotate = rotate;
	if (registered) {
		pl->base = (uint8_t *)aligned_alloc(4096, bytes);
		if (pl->base == NULL) {
			fprintf(stderr, "sysmem-probe: out of memory\n");
			exit(1);
		}
		SP_CHECK(cudaHostRegister(pl->base, bytes,
			cudaHostRegisterPortable | cudaHostRegisterMapped));
	} else {
		SP_CHECK(cudaHostAlloc((void **)&pl->base, bytes,
			cudaHostAllocMapped));
	}
	pl->slot_sum = (unsigned long long *)calloc(pl->n_slots,
		sizeof(*pl->slot_sum));
	if (pl->slot_sum == NULL) {
		fprintf(stderr, "sysmem-probe: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < bytes; i++)
		pl->base[i] = (uint8_t)rand();
	for (uint32_t k = 0; k < pl->n_slots; k++)
		for (int w = 0; w < SP_PKT / 4; w++) {
			uint32_t v;

			memcpy(&v, pl->base + (size_t)k * SP_STRIDE + 4 * w, 4);
			pl->slot_sum[k] += v;
		}
	SP_CHECK(cudaHostAlloc((void **)&pl->desc,
		sizeof(*pl->desc) * SP_MAX_PKTS, cudaHostAllocMapped));
}

static void
pool_fini(struct sp_pool *pl)
{
	if (pl->registered) {
		SP_CHECK(cudaHostUnregister(pl->base));
		free(pl->base);
	} else {
		SP_CHECK(cudaFreeHost(pl->base));
	}
	SP_CHECK(cudaFreeHost(pl->desc));
	free(pl->slot_sum);
}

/* Fills the descriptor list for the next n packets; their sum. */
static unsigned long long
pool_next(struct sp_pool *pl, uint32_t n)
{
	unsigned long long s = 0;

	if (!pl->rotate || pl->next + n > pl->n_slots)
		pl->next = 0;
	for (uint32_t p = 0; p < n; p++) {
		pl->desc[p] = (uint64_t)(uintptr_t)(pl->base +
			(size_t)(pl->next + p) * SP_STRIDE);
		s += pl->slot_sum[pl->next + p];
	}
	pl->next += n;
	return s;
}

static int
probe_fences(uint32_t *host, uint32_t *sink)
{
	static const int blocks[] = { 1, 8, 32, 128 };
	const int iters = 2000;
	cudaEvent_t a, b;

	SP_CHECK(cudaEventCreate(&a));
	SP_CHECK(cudaEventCreate(&b));
	printf("\n# fence: ns per iteration (one relaxed.sys host load + the fence)\n");
	printf("%-38s %-7s %8s %8s %8s %8s\n", "fence", "threads", "B=1", "B=8",
		"B=32", "B=128");
	for (int all = 0; all < 2; all++)
		for (int k = 0; k < SP_FENCE_N; k++) {
			printf("%-38s %-7s", sp_fence_name[k], all ? "all" : "one");
			for (size_t bi = 0; bi < sizeof(blocks) / sizeof(blocks[0]); bi++) {
				float ms = 0;

				/* Warm-up, then the timed run. */
				sp_fence_kernel<<<blocks[bi], SP_THREADS>>>(host, k,
					all, 10, sink);
				SP_CHECK(cudaEventRecord(a));
				sp_fence_kernel<<<blocks[bi], SP_THREADS>>>(host, k,
					all, iters, sink);
				SP_CHECK(cudaEventRecord(b));
				SP_CHECK(cudaEventSynchronize(b));
				SP_CHECK(cudaEventElapsedTime(&ms, a, b));
				printf(" %8.0f", ms * 1e6 / iters);
			}
			printf("\n");
		}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return 0;
}

static int
probe_rounds(struct sp_host *h, struct sp_pool *pl, uint32_t n_pkts,
		unsigned int variant, int reps, const char *name, double *med)
{
	uint32_t blocks = (n_pkts + SP_THREADS / SP_WARP - 1) /
		(SP_THREADS / SP_WARP);
	uint64_t *t = (uint64_t *)malloc(sizeof(*t) * reps);
	struct sp_dev *d;
	cudaStream_t st;
	int bad = 0;

	if (t == NULL)
		return -ENOMEM;
	SP_CHECK(cudaMalloc((void **)&d, sizeof(*d)));
	SP_CHECK(cudaMemset(d, 0, sizeof(*d)));
	SP_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	h->ready = 0;
	h->done = 0;
	h->quit = 0;
	h->count = n_pkts;
	__sync_synchronize();
	sp_round_kernel<<<blocks, SP_THREADS, 0, st>>>(h, pl->desc, n_pkts, d,
		variant);
	SP_CHECK(cudaGetLastError());
	for (int r = -100; r < reps; r++) {
		uint32_t round = (uint32_t)(r + 101);
		uint64_t t0 = gpuapp_mono_ns(), deadline = t0 + SP_TIMEOUT_NS;
		unsigned long long want = pool_next(pl, n_pkts);

		h->count = n_pkts;
		/* Descriptors before READY (x86: stores stay in order; the
		 * compiler barrier keeps them so). */
		__sync_synchronize();
		h->ready = round;
		while (h->done != round)
			if (gpuapp_mono_ns() > deadline) {
				fprintf(stderr, "sysmem-probe: %s: round %u timed out\n",
					name, round);
				h->quit = 1;
				cudaStreamSynchronize(st);
				exit(1);
			}
		if (r >= 0)
			t[r] = gpuapp_mono_ns() - t0;
		__sync_synchronize();
		if (h->sum != want)
			bad++;
	}
	h->quit = 1;
	__sync_synchronize();
	SP_CHECK(cudaStreamSynchronize(st));
	SP_CHECK(cudaStreamDestroy(st));
	SP_CHECK(cudaFree(d));
	*med = median_us(t, reps);
	printf("%-22s %-34s %5u %4u %9.2f %9.2f %s\n", pl->name, name, n_pkts,
		blocks, *med, p99_us(t, reps), bad ? "WRONG SUM" : "");
	free(t);
	return bad ? -EIO : 0;
}

static int
probe_launch(struct sp_pool *pl, uint32_t n_pkts, int reps)
{
	uint32_t blocks = (n_pkts + SP_THREADS / SP_WARP - 1) /
		(SP_THREADS / SP_WARP);
	uint64_t *t = (uint64_t *)malloc(sizeof(*t) * reps);
	unsigned long long *partial;
	cudaStream_t st;
	int bad = 0;

	if (t == NULL)
		return -ENOMEM;
	SP_CHECK(cudaHostAlloc((void **)&partial, sizeof(*partial) * blocks,
		cudaHostAllocMapped));
	SP_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	for (int r = -100; r < reps; r++) {
		uint64_t t0 = gpuapp_mono_ns();
		unsigned long long want = pool_next(pl, n_pkts), got = 0;

		sp_launch_kernel<<<blocks, SP_THREADS, 0, st>>>(pl->desc, n_pkts,
			partial);
		SP_CHECK(cudaStreamSynchronize(st));
		if (r >= 0)
			t[r] = gpuapp_mono_ns() - t0;
		for (uint32_t b = 0; b < blocks; b++)
			got += ((volatile unsigned long long *)partial)[b];
		if (got != want)
			bad++;
	}
	SP_CHECK(cudaStreamDestroy(st));
	SP_CHECK(cudaFreeHost(partial));
	printf("%-22s %-34s %5u %4u %9.2f %9.2f %s\n", pl->name,
		"launch per round + sync", n_pkts, blocks, median_us(t, reps),
		p99_us(t, reps), bad ? "WRONG SUM" : "");
	free(t);
	return bad ? -EIO : 0;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 32, 256, 1024 };
	static const struct {
		unsigned int v;
		const char *name;
	} variants[] = {
		{ SP_V_BLOCK_SYS_FENCE | SP_V_LOAD_CV | SP_V_DONE_SC_SYS,
		  "block + DONE sys fences" },
		{ SP_V_LOAD_CV, "no block/DONE sys fences" },
		{ SP_V_LOAD_CV | SP_V_SHARED_COUNT, "every warp loads one count word" },
		{ SP_V_LOAD_CV | SP_V_BLOCK_DESC, "descriptors: one load per block" },
		{ SP_V_LOAD_CV | SP_V_BLOCK_DESC | SP_V_NO_ARRIVE_FENCE,
		  "+ no arrival fence" },
	};
	static const struct {
		const char *name;
		int registered, rotate;
	} pools[] = {
		{ "hostalloc fixed", 0, 0 },
		{ "registered rotating", 1, 1 },
	};
	int reps = 2000, rc = 0;
	double shared_us = 0, block_desc_us = 0;
	uint32_t *host, *sink;
	struct sp_host *h;
	int dev = 0;
	cudaDeviceProp prop;
	int drv = 0;

	if (argc == 3 && strcmp(argv[1], "--reps") == 0)
		reps = atoi(argv[2]);
	if (reps < 100) {
		fprintf(stderr, "usage: bench-sysmem-probe [--reps N>=100]\n");
		return 2;
	}
	{
		int count = 0;
		cudaError_t e = cudaGetDeviceCount(&count);

		if (e != cudaSuccess || count == 0) {
			printf("sysmem-probe: skipped: no GPU (%s)\n",
				cudaGetErrorString(e));
			return 77;
		}
	}
	SP_CHECK(cudaSetDevice(dev));
	SP_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
	SP_CHECK(cudaGetDeviceProperties(&prop, dev));
	SP_CHECK(cudaDriverGetVersion(&drv));
	printf("sysmem-probe: %s, %d SMs, driver %d.%d\n", prop.name,
		prop.multiProcessorCount, drv / 1000, drv % 1000 / 10);

	SP_CHECK(cudaHostAlloc((void **)&host, 128 * 128 * 4, cudaHostAllocMapped));
	memset(host, 1, 128 * 128 * 4);
	SP_CHECK(cudaMalloc((void **)&sink, 4));
	probe_fences(host, sink);

	SP_CHECK(cudaHostAlloc((void **)&h, sizeof(*h), cudaHostAllocMapped));
	memset(h, 0, sizeof(*h));
	srand(42);

	printf("\n# round: CPU READY -> GPU reads every packet -> CPU sees DONE (us)\n");
	printf("%-22s %-34s %5s %4s %9s %9s\n", "packets", "variant", "pkts",
		"blks", "median", "p99");
	for (size_t pi = 0; pi < sizeof(pools) / sizeof(pools[0]); pi++) {
		struct sp_pool pl;

		pool_init(&pl, pools[pi].name, pools[pi].registered,
			pools[pi].rotate);
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			for (size_t vi = 0; vi < sizeof(variants) / sizeof(variants[0]); vi++) {
				double med = 0;

				if (probe_rounds(h, &pl, sizes[si], variants[vi].v,
						reps, variants[vi].name, &med) != 0)
					rc = 1;
				if (sizes[si] == 1024 && pools[pi].rotate &&
						(variants[vi].v & SP_V_SHARED_COUNT))
					shared_us = med;
				if (sizes[si] == 1024 && pools[pi].rotate &&
						variants[vi].v == (SP_V_LOAD_CV | SP_V_BLOCK_DESC))
					block_desc_us = med;
			}
			if (probe_launch(&pl, sizes[si], reps) != 0)
				rc = 1;
		}
		pool_fini(&pl);
	}
	printf("sysmem-probe: 1024 packets per round, registered rotating: %.1f us "
		"when every warp loads one host word, %.1f us with descriptors "
		"loaded once per block (%.0fx)%s\n", shared_us, block_desc_us,
		block_desc_us > 0 ? shared_us / block_desc_us : 0.0,
		rc ? "; WRONG RESULTS above" : "");
	SP_CHECK(cudaFreeHost(h));
	SP_CHECK(cudaFree(sink));
	SP_CHECK(cudaFreeHost(host));
	return rc;
}
