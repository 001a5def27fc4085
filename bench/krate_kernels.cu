/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Kernels of bench-kernel-rate: the per-packet step of the capture
 * pipeline (gpurx_classify_pkt: cBPF filter, parse, flow-table update)
 * over a resident batch, in two shapes, plus the memory-only kernels the
 * rates are compared with.
 */

#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "flow_classify.h"
#include "krate_kernels.h"

#define KR_WARP_SIZE 32
#define KR_FULL_MASK 0xffffffffu
#define KR_MAX_TPB 512
#define KR_BW_TPB 256
#define KR_BW_UNROLL 4

/* Shared memory holds the program first, then the packet slots. */
static __host__ __device__ __forceinline__ uint32_t
kr_prog_smem_bytes(uint32_t prog_len)
{
	return prog_len <= KR_PROG_SMEM_MAX ?
		(prog_len * (uint32_t)sizeof(struct bpf_vm_insn) + 15) & ~15u : 0;
}

/*
 * A slot holds window bytes plus one word: an odd stride in words, so
 * the 32 threads of a warp reading the same offset of their own packets
 * hit 32 different banks.
 */
static __host__ __device__ __forceinline__ uint32_t
kr_slot_words(uint32_t window)
{
	return window / 4 + 1;
}

/*
 * The filter program is read by every thread at every step: a copy in
 * shared memory is served without touching L1/L2. Returns where the
 * block should read it from. Every thread of the block must call it.
 */
static __device__ __forceinline__ const struct bpf_vm_insn *
kr_stage_prog(const struct bpf_vm_insn *prog, uint32_t prog_len,
		uint32_t *smem)
{
	struct bpf_vm_insn *sp = (struct bpf_vm_insn *)smem;

	if (prog_len > KR_PROG_SMEM_MAX)
		return prog;
	for (uint32_t k = threadIdx.x; k < prog_len; k += blockDim.x)
		sp[k] = prog[k];
	__syncthreads();
	return sp;
}

/* One thread per packet; the packet is read where it lies. */
__global__ void __launch_bounds__(KR_MAX_TPB)
kr_thread_kernel(struct kr_batch b, const struct bpf_vm_insn *prog,
		uint32_t prog_len, struct gpurx_flow_table *ft,
		uint32_t *__restrict__ verdicts)
{
	extern __shared__ uint32_t kr_smem[];
	const struct bpf_vm_insn *p = kr_stage_prog(prog, prog_len, kr_smem);
	uint64_t stride = (uint64_t)blockDim.x * gridDim.x;

	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
			i < b.n; i += stride) {
		uint32_t len = b.lens[i];

		verdicts[i] = gpurx_classify_pkt(b.pkts + b.offs[i], len, len,
			b.ts[i], p, prog_len, ft, NULL);
	}
}

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

/* Chunk c of packet slot `slot` into a warp's shared-memory slots (sw
 * words a slot). */
static __device__ __forceinline__ void
kr_slot_put(uint32_t *slots, uint32_t sw, uint32_t slot, uint32_t c, uint4 v)
{
	uint32_t *d = slots + slot * sw + c * 4;

	d[0] = v.x;
	d[1] = v.y;
	d[2] = v.z;
	d[3] = v.w;
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

/* 16-byte words of the head each lane loads for its warp's 32 packets. */
#define KR_HEAD_WORDS (KR_HEAD_BYTES / 16)

/*
 * The next round's heads, loaded into registers by the prefetching shape
 * while the current round is classified, word r of this lane in
 * kr_warp_load's order (kr_warp_word); a chunk past a packet's window is
 * zero (never read: the inspection is bounded by the window).
 */
struct kr_heads {
	uint4 w[KR_HEAD_WORDS];
};

static __device__ __forceinline__ void
kr_heads_load(struct kr_heads *h, const uint8_t *pkts, uint32_t off,
		uint32_t win, unsigned int lane)
{
#pragma unroll
	for (uint32_t r = 0; r < KR_HEAD_WORDS; r++) {
		uint32_t p, c;

		kr_warp_word(r, lane, KR_HEAD_WORDS, &p, &c);
		const uint32_t poff = __shfl_sync(KR_FULL_MASK, off, p);
		const uint32_t pwin = __shfl_sync(KR_FULL_MASK, win, p);

		h->w[r] = c * 16 < pwin ?
			__ldg((const uint4 *)(pkts + poff) + c) :
			make_uint4(0, 0, 0, 0);
	}
}

static __device__ __forceinline__ void
kr_heads_store(const struct kr_heads *h, uint32_t *slots, uint32_t sw,
		unsigned int lane)
{
#pragma unroll
	for (uint32_t r = 0; r < KR_HEAD_WORDS; r++) {
		uint32_t p, c;

		kr_warp_word(r, lane, KR_HEAD_WORDS, &p, &c);
		kr_slot_put(slots, sw, p, c, h->w[r]);
	}
}

/*
 * A warp per 32 packets: stage their first KR_HEAD_BYTES in shared
 * memory, a thread per packet filters and parses its copy; the packets
 * whose filter or headers reach further get the rest of their window
 * staged and are inspected again; then each accepted packet's flow is
 * accounted. A scattered 64-byte read costs a PCIe request as a 128-byte
 * one does, at 1.5x the rate (bench-kernel-rate's pcie_scatter line), and
 * most packets need no more. The filter and parser see caplen =
 * min(len, window); the CPU check runs on whole packets, so a filter or
 * header beyond the window shows up as a failed check.
 *
 * PF (grid-stride only, window >= KR_HEAD_BYTES): the next round's
 * descriptors are loaded before this round's packets are inspected, and
 * its heads, into registers, before this round's flows are accounted, so
 * that those loads travel while the warp computes and waits on the flow
 * table, instead of each round starting with two dependent round trips.
 */
template <bool PF>
__global__ void __launch_bounds__(KR_MAX_TPB)
kr_warp_kernel(struct kr_batch b, uint32_t window,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *__restrict__ verdicts)
{
	extern __shared__ uint32_t kr_smem[];
	const struct bpf_vm_insn *p = kr_stage_prog(prog, prog_len, kr_smem);
	const unsigned int lane = threadIdx.x % KR_WARP_SIZE;
	const unsigned int warp = threadIdx.x / KR_WARP_SIZE;
	const uint32_t wpb = blockDim.x / KR_WARP_SIZE;
	const uint32_t sw = kr_slot_words(window);
	const uint32_t head = kr_head_bytes(window);
	uint32_t *slots = kr_smem + kr_prog_smem_bytes(prog_len) / 4 +
		(size_t)warp * KR_WARP_SIZE * sw;
	const uint8_t *mine = (const uint8_t *)(slots + lane * sw);
	uint64_t stride = (uint64_t)gridDim.x * wpb * KR_WARP_SIZE;
	auto stage = [&](uint32_t slot, uint32_t c, uint4 v) {
		kr_slot_put(slots, sw, slot, c, v);
	};
	/* This round's descriptor of the lane's packet (PF: loaded the round
	 * before), and with PF its heads. */
	uint64_t base = ((uint64_t)blockIdx.x * wpb + warp) * KR_WARP_SIZE;
	auto desc = [&](uint64_t at, uint32_t *len, uint32_t *off,
			uint64_t *ts) {
		const bool v = at < b.n;

		*len = v ? b.lens[at] : 0;
		*off = v ? b.offs[at] : 0;
		*ts = v ? b.ts[at] : 0;
	};
	uint32_t len, off;
	uint64_t ts;
	struct kr_heads h;

	desc(base + lane, &len, &off, &ts);
	if (PF)
		kr_heads_load(&h, b.pkts, off, len < window ? len : window,
			lane);
	/* base is the same in every lane: the shuffles see the whole warp. */
	for (; base < b.n; base += stride) {
		const uint64_t i = base + lane;
		const bool valid = i < b.n;
		const uint32_t win = len < window ? len : window;
		uint32_t verdict = 0, nlen = 0, noff = 0;
		uint64_t nts = 0;
		struct gpurx_pkt_info pi;
		bool more = false;

		if (PF) {
			kr_heads_store(&h, slots, sw, lane);
			desc(base + stride + lane, &nlen, &noff, &nts);
		} else {
			kr_warp_load(b.pkts, off, win, 0, head, lane, stage);
		}
		__syncwarp();
		if (valid)
			more = !gpurx_classify_inspect(mine, win < head ? win : head,
				win, len, p, prog_len, &verdict, &pi);
		if (__any_sync(KR_FULL_MASK, more)) {
			kr_warp_load(b.pkts, off, more ? win : 0, head, window,
				lane, stage);
			__syncwarp();
			if (more)
				gpurx_classify_inspect(mine, win, win, len, p,
					prog_len, &verdict, &pi);
		}
		if (PF && base + stride < b.n)
			kr_heads_load(&h, b.pkts, noff,
				nlen < window ? nlen : window, lane);
		if (valid) {
			gpurx_classify_account(&pi, verdict, len, ts, ft);
			verdicts[i] = verdict;
		}
		if (PF) {
			len = nlen;
			off = noff;
			ts = nts;
		} else if (base + stride < b.n) {
			desc(base + stride + lane, &len, &off, &ts);
		}
		/* The slots are refilled on the next round. */
		__syncwarp();
	}
}

/*
 * kr_warp_kernel's first loads (every packet's first KR_HEAD_BYTES) and
 * its stores without the work: its memory floor when no packet needs
 * more than those.
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

static size_t
kr_smem_bytes(const struct kr_variant *v, uint32_t window, uint32_t prog_len)
{
	size_t s = kr_prog_smem_bytes(prog_len);

	if (v->kind != KR_THREAD)
		s += (size_t)v->tpb * kr_slot_words(window) * 4;
	return s;
}

static const void *
kr_fn(const struct kr_variant *v)
{
	return v->kind == KR_WARP ? (const void *)kr_warp_kernel<false> :
		v->kind == KR_WARP_PF ? (const void *)kr_warp_kernel<true> :
		(const void *)kr_thread_kernel;
}

static int
kr_window_ok(uint32_t window)
{
	return window >= 16 && window <= KR_WINDOW_MAX && window % 16 == 0;
}

extern "C" int
kr_classify_prepare(const struct kr_variant *v, uint32_t n, uint32_t window,
		uint32_t prog_len, unsigned int *blocks)
{
	size_t smem = kr_smem_bytes(v, window, prog_len);
	const void *fn = kr_fn(v);
	uint64_t want = ((uint64_t)n + v->tpb - 1) / v->tpb;
	cudaError_t err;
	int per_sm = 0;

	if (v->tpb == 0 || v->tpb % KR_WARP_SIZE != 0 || v->tpb > KR_MAX_TPB ||
			(v->kind != KR_THREAD && !kr_window_ok(window)) ||
			(v->kind == KR_WARP_PF && (!v->grid_stride ||
				window < KR_HEAD_BYTES)))
		return cudaErrorInvalidValue;
	/* Above 48 KiB a kernel must ask for its shared memory. */
	err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
		(int)smem);
	if (err != cudaSuccess)
		return err;
	err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn,
		(int)v->tpb, smem);
	if (err != cudaSuccess)
		return err;
	if (per_sm == 0)
		return cudaErrorInvalidConfiguration;
	/* Grid-stride: exactly what fits at once on every SM. */
	if (v->grid_stride && want > (uint64_t)per_sm * kr_sm_count)
		want = (uint64_t)per_sm * kr_sm_count;
	if (want == 0)
		want = 1;
	if (want > 0x7fffffffULL)
		return cudaErrorInvalidConfiguration;
	*blocks = (unsigned int)want;
	return cudaSuccess;
}

extern "C" int
kr_classify_launch(const struct kr_variant *v, unsigned int blocks,
		const struct kr_batch *b, uint32_t window,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		cudaStream_t stream)
{
	size_t smem = kr_smem_bytes(v, window, prog_len);

	if (b->n == 0)
		return cudaSuccess;
	if (v->kind == KR_WARP)
		kr_warp_kernel<false><<<blocks, v->tpb, smem, stream>>>(*b,
			window, prog, prog_len, ft, verdicts);
	else if (v->kind == KR_WARP_PF)
		kr_warp_kernel<true><<<blocks, v->tpb, smem, stream>>>(*b,
			window, prog, prog_len, ft, verdicts);
	else
		kr_thread_kernel<<<blocks, v->tpb, smem, stream>>>(*b, prog,
			prog_len, ft, verdicts);
	return cudaGetLastError();
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
