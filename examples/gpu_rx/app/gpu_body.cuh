/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CUDA side of dpdk-gpu-rx: its per-item body, nvcc only. Included by
 * gpu_kernels.cu, which instantiates the shipped kernels, and by the test
 * variant's kernel build, which instantiates the persistent one with its
 * fault and hold hook (gpucomm_persistent.cuh).
 *
 * The kernels are the ring library's (lib/gpucomm, gpucomm_persistent.cuh:
 * per RX queue one dispatcher warp, the only PCIe poller, and bpq worker
 * blocks, worker j taking the queue's items j, j + bpq, ...; or one item
 * per launch with --launch-per-burst) around this app's per-item body,
 * struct gpurx_body. A worker is handed its item after the dispatcher's
 * system-scope acquire of READY, which by cumulativity makes what the CPU
 * wrote before READY visible to the block. The body loads the item's count,
 * descriptors and side data in one round trip, stages the packets' first
 * bytes into shared memory, classifies the packets, one thread per
 * packet, with the code gpurx_classify_pkt() runs on the CPU (from the
 * staged bytes where they suffice, gpurx_classify_inspect), and, when a
 * capture file is written, copies each accepted packet's bytes into the
 * item's capture arena, a warp per packet. The RX lcore reads a summary
 * per item (match bits, malformed counts) and the verdicts of matched
 * packets only. After a block barrier the library's thread 0 release-stores
 * DONE at system scope. Each block takes its items in ring order and the
 * CPU collects items in ring order, so no item is skipped and the output
 * order is the RX order.
 *
 * Host memory is read one cache line per request: uncached loads of one
 * host line by several warps are served one after another, a PCIe round
 * trip each (bench-sysmem-probe), so nothing here has many warps load the
 * same host line.
 *
 * --split (RX buffer split): each packet's first bytes are in a header
 * buffer in host memory (the comm list entry's addr), the rest in GPU
 * memory (the item's split side data). The body exists twice, template
 * argument SPLIT, and so both kernels: without split the side data is never read and
 * no split code runs (the same PTX instruction count as before the split
 * instantiation was added). With it, the header
 * buffer is staged as a whole packet is (it is the first bytes), a packet
 * needing more is read through the two-run view (pkt_view.h) from the
 * staged header and the payload in GPU memory, and the capture area gets
 * the header then the payload; a capture within the header buffer is
 * left to the CPU, which writes it from host memory.
 */

#ifndef GPURX_APP_GPU_BODY_CUH
#define GPURX_APP_GPU_BODY_CUH

#include <cuda_runtime.h>

#include "gpucomm_persistent.cuh"
#include "flow_classify.h"
#include "flow_order.h"
#include "gpu_kernels.h"
#include "gpu_stamp.h"
#include "opts.h"

static_assert(GPURX_SUM_MATCH_WORDS * 32 == GPURX_MAX_BURST,
	"a match bit per packet of an item");
static_assert(GPURX_MAL_COUNT <= GPURX_SUM_MAL, "a count per malformed kind");
static_assert(sizeof(struct gpurx_split_pkt) == 16 &&
	offsetof(struct gpurx_split_pkt, tail) == 0 &&
	offsetof(struct gpurx_split_pkt, len0) == 8 &&
	offsetof(struct gpurx_split_pkt, host) == 12,
	"split side data read as one uint4");

#define GPURX_KERNEL_THREADS 128

/*
 * What a block needs of its queue's struct gpurx_gq, copied into shared
 * memory once per launch. The struct is in host memory, and loads of one
 * host cache line by several warps are served one after another, a PCIe
 * round trip each (bench-sysmem-probe, doc/performance.md): reading the
 * fields there for every item cost more than the item's packets.
 */
struct gq_view {
	struct gpucomm_item *items;
	const struct gpurx_item_in *in;
	uint64_t *ts;
	uint32_t *wirelen;
	const struct gpurx_split_pkt *split;	/* SPLIT only */
	uint32_t *verdict;
	struct gpurx_item_sum *sum;
	struct gpurx_stamp_out *stamp;
	uint8_t *arena;
	const uint8_t *pull_src;	/* --mem staged, else NULL */
	uint8_t *pull_dst;
	uint32_t n_items;
	uint32_t burst;
	uint32_t item_bytes;
	uint32_t max_caplen;
};

template <bool SPLIT>
static __device__ void
gq_view_load(struct gq_view *v, const struct gpurx_gq *gq)
{
	if (threadIdx.x == 0) {
		v->items = gq->items;
		v->in = gq->in;
		v->ts = gq->ts;
		v->wirelen = gq->wirelen;
		if (SPLIT)
			v->split = gq->split;
		v->verdict = gq->verdict;
		v->sum = gq->sum;
		v->stamp = gq->stamp;
		v->arena = gq->arena;
		v->pull_src = gq->pull_src;
		v->pull_dst = gq->pull_dst;
		v->n_items = gq->n_items;
		v->burst = gq->burst;
		v->item_bytes = gq->item_bytes;
		v->max_caplen = gq->max_caplen;
	}
	__syncthreads();
}

/*
 * Packet bytes are first copied into shared memory by the whole block:
 * every 16-byte load of every packet is independent of the others, so a
 * burst costs one or two PCIe round trips instead of the chain of
 * dependent reads the parser and the filter would make per packet.
 * Only a packet's first GPURX_STAGE_HEAD bytes are staged: the filter
 * and parser of almost every packet need no more (one that needs more is
 * inspected again, inspect_deep_warp), and whole large packets would
 * fill the area after a few of them. Packets beyond the staging area are
 * inspected by inspect_deep_warp too.
 */
#define GPURX_STAGE_BYTES (32u * 1024)
/* With split the block keeps each packet's payload address and header
 * length in shared memory too (6 KiB): the staging area gives up 4 KiB so
 * that the block stays within the 48 KiB of static shared memory. A
 * 128-packet item stages in 18 KiB. */
#define GPURX_STAGE_BYTES_SPLIT (28u * 1024)
/* 16-byte loads each thread keeps in flight while staging. */
#define GPURX_STAGE_UNROLL 8

/* The packet whose staged range holds byte offset off (start[0] = 0,
 * start[k] = end of the k staged packets). */
static __device__ __forceinline__ uint32_t
stage_find(const uint32_t *start, uint32_t k, uint32_t off)
{
	return gpurx_range_find(start, k, off);
}

/* Bytes of a packet that are staged, of the len bytes at its address
 * (the whole packet, or with split its header buffer). */
static __device__ __forceinline__ uint32_t
stage_bytes(uint32_t len)
{
	return min(len, GPURX_STAGE_HEAD);
}

/* --split: a packet's bytes at its address (s_len0) with, in bit 31, the
 * split side data's host flag. */
#define SPLIT_HOST_BIT 0x80000000u

static __device__ __forceinline__ uint32_t
split_len0(uint32_t v)
{
	return v & ~SPLIT_HOST_BIT;
}

/* v summed over lanes 0..lane of the warp (a shuffle scan); every lane of
 * the warp calls it. */
static __device__ __forceinline__ uint32_t
warp_incl_sum(uint32_t v, unsigned int lane)
{
	for (int o = 1; o < 32; o *= 2) {
		const uint32_t t = __shfl_up_sync(0xffffffffu, v, o);

		if (lane >= (unsigned int)o)
			v += t;
	}
	return v;
}

/*
 * Offsets in the staging area (area bytes) of packets 0..n-1 (the
 * 16-byte-aligned span of their staged bytes), by warp 0 with a shuffle
 * scan; len: the bytes at each packet's address (SPLIT: with the host
 * flag). Returns k: packets 0..k-1 fit and are staged.
 */
template <bool SPLIT>
static __device__ uint32_t
stage_layout(const uintptr_t *addr, const uint32_t *len, uint32_t n,
		uint32_t *start, uint32_t area)
{
	__shared__ uint32_t s_k;

	if (threadIdx.x < 32) {
		const unsigned int lane = threadIdx.x;
		uint32_t carry = 0, w = 0;

		if (lane == 0)
			start[0] = 0;
		for (uint32_t c = 0; c < n; c += 32) {
			uint32_t i = c + lane, span = 0, incl;

			if (i < n)
				span = ((uint32_t)(addr[i] & 15) +
					stage_bytes(SPLIT ? split_len0(len[i]) :
						len[i]) + 15) & ~15u;
			incl = warp_incl_sum(span, lane);
			if (i < n)
				start[i + 1] = carry + incl;
			carry += __shfl_sync(0xffffffffu, incl, 31);
			w = min(n, c + 32);	/* start[0..w] written */
			if (carry > area)
				break;
		}
		__syncwarp();
		/* Staged: the longest prefix of packets that ends inside the
		 * area (start[] is non-decreasing). */
		if (lane == 0) {
			uint32_t lo = 0, hi = w;

			while (lo < hi) {
				uint32_t mid = (lo + hi + 1) / 2;

				if (start[mid] <= area)
					lo = mid;
				else
					hi = mid - 1;
			}
			s_k = lo;
		}
	}
	__syncthreads();
	return s_k;
}

/*
 * Arena offsets of packets 0..n-1 (each the spans, gpurx_arena_span, of
 * the packets before it), by one warp with a shuffle scan: the CPU no
 * longer writes them per packet (struct gpurx_item_in). len: the
 * packets' sizes.
 */
static __device__ void
arena_layout(const uint32_t *len, uint32_t n, uint32_t *off)
{
	const unsigned int lane = threadIdx.x % 32;
	uint32_t carry = 0;

	for (uint32_t c = 0; c < n; c += 32) {
		const uint32_t i = c + lane;
		const uint32_t span = i < n ? gpurx_arena_span(len[i]) : 0;
		const uint32_t incl = warp_incl_sum(span, lane);

		if (i < n)
			off[i] = carry + incl - span;
		carry += __shfl_sync(0xffffffffu, incl, 31);
	}
}

static_assert(sizeof(struct gpurx_item_in) == 16 &&
	offsetof(struct gpurx_item_in, ts) == 0 &&
	offsetof(struct gpurx_item_in, flags) == 8 &&
	offsetof(struct gpurx_item_in, pull) == 12,
	"struct gpurx_item_in read as two 64-bit words");

/* An item's struct gpurx_item_in in one 16-byte load from host memory
 * (flags: the low half of the second word, pull the high half). */
static __device__ __forceinline__ void
item_in_load(const struct gpurx_item_in *in, unsigned long long *ts,
		unsigned long long *flags)
{
	asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
		: "=l"(*ts), "=l"(*flags) : "l"(in) : "memory");
}

static __device__ void
stage_copy(uint8_t *stage, const uintptr_t *addr, const uint32_t *start,
		uint32_t k)
{
	const uint32_t chunks = start[k] / 16;

	for (uint32_t c0 = threadIdx.x; c0 < chunks;
			c0 += GPURX_STAGE_UNROLL * blockDim.x) {
		uint4 v[GPURX_STAGE_UNROLL];

		/* All loads first, then all stores: the loads are in flight
		 * together. ld.global.cv: a reused buffer is fetched again,
		 * never served stale from a cache. */
#pragma unroll
		for (int u = 0; u < GPURX_STAGE_UNROLL; u++) {
			uint32_t c = c0 + u * blockDim.x;

			if (c < chunks) {
				uint32_t i = stage_find(start, k, c * 16);
				/* The 16-byte chunks around the packet never
				 * cross a page: reading them is safe. */
				const uint4 *src = (const uint4 *)
					((addr[i] & ~(uintptr_t)15) +
					 (c * 16 - start[i]));

				v[u] = __ldcv(src);
			}
		}
#pragma unroll
		for (int u = 0; u < GPURX_STAGE_UNROLL; u++) {
			uint32_t c = c0 + u * blockDim.x;

			if (c < chunks)
				*(uint4 *)(stage + c * 16) = v[u];
		}
	}
	__syncthreads();
}

/*
 * --mem staged: the item's packets, laid out one after another by the RX
 * lcore in pinned host memory, copied by the block into GPU memory, where
 * the item's entries point, before anything reads them. One contiguous
 * range read with every 16-byte load of the block in flight: a few PCIe
 * round trips an item, and no CUDA call on the RX lcore (struct
 * gpurx_gq, pull_src). bytes: a multiple of 16 (arena spans), both
 * buffers 16-byte aligned.
 */
static __device__ void
pull_item(uint8_t *dst, const uint8_t *src, uint32_t bytes)
{
	const uint32_t words = bytes / 16;

	for (uint32_t c0 = threadIdx.x; c0 < words;
			c0 += GPURX_STAGE_UNROLL * blockDim.x) {
		uint4 v[GPURX_STAGE_UNROLL];

		/* ld.global.cv: the staging buffer is rewritten every lap
		 * of the ring, so it is fetched again, never served stale
		 * from a cache. */
#pragma unroll
		for (int u = 0; u < GPURX_STAGE_UNROLL; u++) {
			const uint32_t c = c0 + u * blockDim.x;

			if (c < words)
				v[u] = __ldcv((const uint4 *)src + c);
		}
#pragma unroll
		for (int u = 0; u < GPURX_STAGE_UNROLL; u++) {
			const uint32_t c = c0 + u * blockDim.x;

			if (c < words)
				((uint4 *)dst)[c] = v[u];
		}
	}
	/* The block's stores before any of its threads reads the packets
	 * (every read of packet bytes is ld.global.cv, served from L2,
	 * where these stores go). */
	__syncthreads();
}

/*
 * Packets whose staged bytes did not decide them (long IPv6 extension
 * header chains, deep filter loads) or that were not staged are read
 * where they lie, GPURX_DEEP_BYTES at once: each of the parser's and the
 * filter's dependent loads would cost a PCIe round trip, and the whole
 * item waits for its slowest packet. The packet's warp fetches them
 * together, a 16-byte word per lane in one coalesced request, into the
 * warp's buffer in shared memory, where the packet's own lane inspects
 * them. The packet's lane loading its 32 words alone was served a round
 * trip per word (ld.global.cv loads of one host line are served one
 * after another: bench-sysmem-probe), and the words the filter never
 * read were still in flight after the classify barrier, in front of the
 * block's next memory access: with 2 % of the realistic mix needing it,
 * 8.8 us of classify and 7.6 us of results per 128-packet item
 * (doc/perf/ab/results-step-experiments.md).
 */
#define GPURX_DEEP_BYTES 512u
static_assert(GPURX_DEEP_BYTES == 32 * 16, "a 16-byte word per lane");

/*
 * Call with all 32 lanes of the warp; deep: this lane's packet needs it
 * (then where, caplen and wirelen describe it, and *verdict and *pi get
 * its results). SPLIT: len0 bytes are at where, the rest at tail (GPU
 * memory; NULL: none), and staged is the header buffer whole in the
 * staging area, or NULL.
 *
 * A split packet (tail set) is inspected whole through the two-run view:
 * its header from the staging area (or, not staged, fetched as above),
 * past it the payload read in GPU memory where it lies, no PCIe round
 * trip. Plain loads see the payload: the item's hand-over (the
 * dispatcher's system-scope fence after READY, the worker's device-scope
 * acquire of the hand-over; launched per item, the launch) orders them
 * after the CPU's READY store, which followed the port's completion of its
 * writes (the copy engine's event, or rte_gpu_wmb for a NIC).
 */
template <bool SPLIT>
static __device__ void
inspect_deep_warp(const struct gpurx_kparams *p, uint8_t *wbuf, bool deep,
		const uint8_t *where, uint32_t caplen, uint32_t wirelen,
		uint32_t len0, const uint8_t *tail, const uint8_t *staged,
		uint32_t *verdict, struct gpurx_pkt_info *pi)
{
	const unsigned int lane = threadIdx.x % 32;
	unsigned int todo = __ballot_sync(0xffffffffu, deep);
	/* Bytes of this lane's packet to fetch at where. */
	const uint32_t fetch = SPLIT && tail != NULL ?
		(staged != NULL ? 0 : len0) : caplen;

	while (todo != 0) {
		const int owner = __ffs(todo) - 1;
		const unsigned long long a = __shfl_sync(0xffffffffu,
			(unsigned long long)(uintptr_t)where, owner);
		const uint32_t len = __shfl_sync(0xffffffffu, fetch, owner);
		const uint32_t mis = (uint32_t)(a & 15);
		const uint32_t have = min(len, GPURX_DEEP_BYTES - mis);
		const uint32_t words = SPLIT && len == 0 ? 0 :
			(mis + have + 15) / 16;

		todo &= todo - 1;
		/* Whole 16-byte words around the packet: they never cross a
		 * page. ld.global.cv: a reused buffer is fetched again. */
		if (lane < words)
			((uint4 *)wbuf)[lane] =
				__ldcv((const uint4 *)(uintptr_t)(a - mis) + lane);
		__syncwarp();
		if (lane == (unsigned int)owner) {
			if (SPLIT && tail != NULL) {
				const uint8_t *hdr = staged != NULL ? staged :
					len0 <= have ? wbuf + mis : where;

				gpurx_classify_inspect_view(gpurx_view_split(hdr,
					len0, tail), caplen, caplen, wirelen,
					p->prog, p->prog_len, verdict, pi);
			} else if (!gpurx_classify_inspect(wbuf + mis, have,
					caplen, wirelen, p->prog, p->prog_len,
					verdict, pi)) {
				gpurx_classify_inspect(where, caplen, caplen,
					wirelen, p->prog, p->prog_len, verdict,
					pi);
			}
		}
		/* The buffer is the next packet's. */
		__syncwarp();
	}
}

/* Where staged packet i's bytes are (i < k of stage_layout). */
static __device__ __forceinline__ const uint8_t *
stage_at(const uint8_t *stage, const uint32_t *start, const uintptr_t *addr,
		uint32_t i)
{
	return stage + start[i] + (addr[i] & 15);
}

/* 16-byte words of a packet each lane of warp_copy keeps in flight. */
#define GPURX_COPY_UNROLL 4

/*
 * Copies len bytes by the 32 lanes of a warp. From host memory every
 * dependent load is a PCIe round trip: a byte per lane and a store
 * after each load took ~1 us per 32 bytes (a 1500-byte packet 47 us).
 * With both ends 16-byte aligned (mbuf data and arena slots are), each
 * lane loads GPURX_COPY_UNROLL 16-byte words before storing any: 2 KiB
 * per round trip. from_global: src is in global memory (host-mapped or
 * GPU), read with ld.global.cv as stage_copy does; else shared memory.
 */
static __device__ void
warp_copy(uint8_t *dst, const uint8_t *src, uint32_t len, bool from_global,
		unsigned int lane)
{
	uint32_t b = 0;

	if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0) {
		const uint32_t words = len / 16;
		const uint4 *s = (const uint4 *)src;
		uint4 *d = (uint4 *)dst;

		for (uint32_t w0 = lane; w0 < words;
				w0 += 32 * GPURX_COPY_UNROLL) {
			uint4 v[GPURX_COPY_UNROLL];

#pragma unroll
			for (int u = 0; u < GPURX_COPY_UNROLL; u++)
				if (w0 + u * 32 < words)
					v[u] = from_global ?
						__ldcv(s + w0 + u * 32) :
						s[w0 + u * 32];
#pragma unroll
			for (int u = 0; u < GPURX_COPY_UNROLL; u++)
				if (w0 + u * 32 < words)
					d[w0 + u * 32] = v[u];
		}
		b = words * 16;
	}
	for (b += lane; b < len; b += 32)
		dst[b] = src[b];
}

/* The block's own counters, kept in registers by thread 0 and stored to
 * host memory (reading them back would cost a round trip per item). */
struct block_counters {
	uint64_t busy_ns;
	uint64_t items_done;
	uint64_t wait_ns;
	uint64_t phase_ns[GPURX_PHASES];
	uint64_t t_mark;
};

/* Thread 0, after a barrier: the time since the last mark goes to phase
 * ph. */
static __device__ __forceinline__ void
phase_mark(struct block_counters *bc, int ph)
{
	if (threadIdx.x == 0) {
		uint64_t t = gpucomm_gpu_ns();

		if (ph >= 0)
			bc->phase_ns[ph] += t - bc->t_mark;
		bc->t_mark = t;
	}
}

/*
 * One ring reservation for the warp (every lane calls it): each lane asks
 * for `need` positions, lane 0 reserves their sum, and a lane's run
 * starts at *base + *incl - need (*incl: the sum up to and with its own).
 * Returns how many the warp got, the lowest lanes' runs first. ahead: a
 * reservation before the turn, for ends not yet decided, whose shortfall
 * is not counted; else each position short is an end put off (ring_full).
 */
static __device__ uint32_t
warp_ring_reserve(struct gpurx_flow_table *ft, uint32_t need,
		unsigned int lane, bool ahead, uint32_t *incl,
		unsigned long long *base)
{
	uint32_t total, got = 0;
	uint64_t b64 = 0;

	*incl = warp_incl_sum(need, lane);
	total = __shfl_sync(0xffffffffu, *incl, 31);
	if (total != 0 && lane == 0)
		got = ahead ? gpurx_flow_ring_try_reserve(ft, total, &b64) :
			gpurx_flow_ring_reserve(ft, total, &b64);
	*base = __shfl_sync(0xffffffffu, (unsigned long long)b64, 0);
	return __shfl_sync(0xffffffffu, got, 0);
}

/*
 * Flow accounting in arrival order, where flows end (--ipfix, --ipfix-file:
 * p->flow_order.slots set). Whether a packet ends its flow's record depends on
 * the packets before it (a FIN, then a new connection of the same tuple
 * past the linger; the first packet past an active timeout), so a queue's
 * packets of one flow must be decided one after the other, as on the CPU.
 * Workers run a queue's items side by side and the threads of an item its
 * packets; in a 32-packet chunk the lanes holding packets of one flow form
 * a group whose lowest lane decides for all of them, in lane order, the
 * groups at once.
 *
 * Only the decision waits for anything (flow_table.h's four steps): every
 * lane of the item pins its flow's slot first (inserting it if new), and
 * the item publishes that in its queue's order slot (flow_order.h:
 * PINNED). Once every earlier item of the queue is pinned too, a group
 * whose flow's pins are its own alone has nobody before it on the flow (a packet
 * before it is pinned, or has let go after its commit) and nobody after
 * it that has decided: it plans and commits at once, out of the queue's
 * order (gpurx_flow_plan_alone). A chunk with a group that is not alone
 * (the flow's packets in another chunk, another in-flight item or
 * another queue) takes its place in the order: after the item's earlier
 * chunks (s_decided) and every earlier item of the queue (DECIDED) have
 * decided, as one thread per queue would, and plans again then. So
 * only items that share a flow with an item in flight wait for each
 * other; a queue of many flows decides its items side by side. (A turn
 * handed from item to item made every item wait for the one before: its
 * plan's load, CAS and hand-over, ~3.1 us per 32-packet item on the
 * H100, bounded the pipeline at ~9 Mpps a queue.)
 *
 * Each group's leader plans first where it stands, for the ring positions
 * its ends will need (one reservation for the warp, before any wait);
 * after committing it finishes: sums, records ended within the group
 * written out, buffers let go (the last holder of an ended record writes
 * it out), pins let go.
 */

/* Step 1, not ordered, per lane: the packet's flow slot pinned (NULL: no
 * flow, or the overflow counters took it), its side of the plan in pk. */
static __device__ struct gpurx_flow_entry *
account_pin(const struct gpurx_kparams *p, uint32_t q, bool mine,
		const struct gpurx_pkt_info *pi, uint32_t v, uint32_t wl,
		uint64_t ts, struct gpurx_flow_pkt *pk)
{
	struct gpurx_flow_key key;
	struct gpurx_flow_attr attr;

	*pk = {};
	if (!mine || !gpurx_classify_flow_of(pi, v, (uint16_t)q, p->ft, &key))
		return NULL;
	pk->bytes = wl;
	pk->ts = ts;
	pk->hash = gpurx_flow_hash(&key);
	pk->tcp_flags = gpurx_pkt_flow_tcp_flags(pi);
	pk->ttl = pi->ttl;
	pk->queue = (uint16_t)q;
	gpurx_flow_attr_from_pkt(pi, &attr);
	return gpurx_flow_pin_attr(p->ft, &key, pk, &attr);
}

/*
 * Steps 2 to 4 for chunk `chunk` of the item (every lane of the warp,
 * after the whole item is pinned and every earlier item of the queue
 * too); e and pk: the lane's step 1. Returns once the chunk has decided
 * and finished.
 */
static __device__ void
account_decide(const struct gpurx_kparams *p, uint32_t q, uint32_t n_items,
		unsigned long long seq, uint32_t chunk, uint32_t chunks,
		struct gpurx_flow_entry *e, const struct gpurx_flow_pkt &pk,
		uint32_t *s_decided)
{
	const unsigned int lane = threadIdx.x % 32;
	struct gpurx_flow_table *ft = p->ft;
	/* The group's packets by lane, for a leader of a group of several. */
	struct gpurx_flow_pkt gpk[32];
	struct gpurx_flow_plan pl;
	const struct gpurx_flow_pkt *gp;
	/* Ring positions this leader holds, from hpos. */
	uint64_t hpos = 0;
	uint32_t hcnt = 0, expect = 0, spins = 0, mask;
	unsigned int grp;
	bool leader, multi, done, alone = false, ordered = false, fresh = true;
	int noend = 0;

	/* Lanes that pinned one slot hold packets of one key (a pinned slot
	 * keeps its key, and a key is live in one slot at most). */
	grp = __match_any_sync(0xffffffffu, (unsigned long long)(uintptr_t)e);
	leader = e != NULL && lane == (unsigned int)(__ffs(grp) - 1);
	multi = __popc(grp) > 1;
	if (__any_sync(0xffffffffu, e != NULL && multi)) {
		for (int j = 0; j < 32; j++) {
			struct gpurx_flow_pkt o;
			uint32_t ft8;

			o.bytes = __shfl_sync(0xffffffffu, pk.bytes, j);
			o.ts = __shfl_sync(0xffffffffu, pk.ts, j);
			o.hash = 0;
			/* Flags and TTL in one shuffle. */
			ft8 = __shfl_sync(0xffffffffu, (uint32_t)pk.tcp_flags |
				(uint32_t)pk.ttl << 8, j);
			o.tcp_flags = (uint8_t)ft8;
			o.ttl = (uint8_t)(ft8 >> 8);
			o.queue = (uint16_t)q;
			if (leader && multi && ((grp >> j) & 1u))
				gpk[j] = o;
		}
	}
	gp = multi ? gpk : &pk;
	mask = multi ? grp : 1u;
	/*
	 * The first plan, where the flow stands now: final if the group is
	 * alone on it, else a guess (earlier items may still change the
	 * record). The warp reserves, in one reservation, ring positions
	 * for the ends these plans expect, before anything waits; a plan
	 * made again that ends more gives its positions up and reserves
	 * again, those held and not used are published empty after the
	 * commit. Positions of one flow may be passed by a later item's
	 * (records reach the ring out of order: each is complete; no
	 * consumer orders them). Not counted when short: no end is put off
	 * yet.
	 */
	if (leader) {
		alone = gpurx_flow_plan_alone(ft, e, gp, mask, 0, (uint16_t)q,
			__popc(grp), &pl);
		expect = pl.ends;
	}
	{
		unsigned long long base;
		uint32_t incl;
		const uint32_t got = warp_ring_reserve(ft, expect, lane, true,
			&incl, &base);

		if (expect != 0 && incl <= got) {
			hpos = base + (incl - expect);
			hcnt = expect;
		} else if (expect != 0 && incl - expect < got) {
			/* The ring had room for part of them only. */
			gpurx_flow_skip_n(ft, base + (incl - expect),
				got - (incl - expect));
		}
	}
	/* Steps 2 and 3: commit the plan (with held positions, or, for more
	 * ends than held, one reservation for the warp's lanes that need
	 * one); plan again where the commit found the record word changed
	 * (another queue, or a let-go of an earlier finish: the positions
	 * stay held) or the other buffer not yet emptied, or where the
	 * chunk has just taken its place in the order. */
	done = !leader;
	while (__any_sync(0xffffffffu, !done)) {
		uint32_t need = 0, incl, got;
		unsigned long long base;
		bool blocked = false;

		if (!ordered && __any_sync(0xffffffffu, !done && !alone)) {
			/* The queue's order: the item's earlier chunks (other
			 * warps of this block) and earlier items decided. */
			if (lane == 0) {
				const uint32_t below = (1u << chunk) - 1u;

				while ((*(volatile uint32_t *)s_decided &
						below) != below)
					;
				/* Acquire: their commits. */
				__threadfence_block();
			}
			gpurx_flow_order_wait_earlier(&p->flow_order, q,
				n_items, seq, GPURX_FLOW_ORDER_DECIDED);
			ordered = true;
			fresh = false;
		}
		if (!done) {
			if (!fresh && ordered)
				/* Relaxed: the order's acquires, above. */
				gpurx_flow_plan_in_turn(ft, e, gp, mask, noend,
					(uint16_t)q, &pl);
			else if (!fresh)
				alone = gpurx_flow_plan_alone(ft, e, gp, mask,
					noend, (uint16_t)q, __popc(grp), &pl);
			fresh = false;
			if (!ordered && !alone) {
				/* Decided in the order, on the next lap. */
				blocked = true;
			} else if (gpurx_flow_plan_blocked(&pl)) {
				/* The record this flow ended before is still
				 * being written out by an earlier finish (past
				 * its commit, waiting for nothing): plan
				 * again, nothing reserved. */
				if (++spins > GPURX_FLOW_SPIN_MAX) {
					gpurx_atomic_add_u64(&ft->ring_full,
						pl.ends);
					noend = 1;
				}
				__nanosleep(64);
				blocked = true;
			} else if (pl.ends > hcnt) {
				/* One run of positions (the walk writes the
				 * records ended within the group at pos + 1,
				 * ...): the held ones go. */
				gpurx_flow_skip_n(ft, hpos, hcnt);
				hcnt = 0;
				need = pl.ends;
			}
		}
		got = warp_ring_reserve(ft, need, lane, false, &incl, &base);
		if (done || blocked)
			continue;
		if (need != 0) {
			const uint32_t from = incl - need;

			if (incl > got) {
				/* The ring had no room for all of them
				 * (counted): the positions this leader got
				 * are skipped, its records stay live and
				 * take its packets. */
				if (from < got)
					gpurx_flow_skip_n(ft, base + from,
						got - from);
				noend = 1;
				continue;
			}
			hpos = base + from;
			hcnt = need;
		}
		if (gpurx_flow_commit(ft, e, &pl, hpos) > 0)
			done = true;
	}
	__syncwarp();
	if (lane == 0) {
		/* Release to the later chunks' warps (same block); the last
		 * chunk to decide marks the item decided: the other chunks'
		 * commits were seen through s_decided, so the release orders
		 * them too (cumulativity), and this warp's (the syncwarp). A
		 * release after the item's stores to host memory (verdicts,
		 * captures) would wait for them: it comes before. */
		const uint32_t all = chunks >= 32 ? ~0u : (1u << chunks) - 1u;

		__threadfence_block();
		if ((atomicOr(s_decided, 1u << chunk) | 1u << chunk) == all)
			gpurx_flow_order_mark(&p->flow_order, q, n_items, seq,
				GPURX_FLOW_ORDER_DECIDED);
	}
	/* Step 4, not ordered: the group's pins are let go with it. */
	if (leader) {
		if (hcnt > pl.ends)
			gpurx_flow_skip_n(ft, hpos + pl.ends, hcnt - pl.ends);
		gpurx_flow_finish(ft, e, &pl, gp, mask, hpos, __popc(grp));
	}
}

/* A packet's results for the CPU: its verdict (bytes to keep), the item's
 * match and malformed sums, and in s_len the bytes captured. */
static __device__ __forceinline__ void
packet_result(const struct gq_view *gq, uint32_t at, uint32_t i, uint32_t v,
		uint8_t malformed, uint32_t *s_len, struct gpurx_item_sum *s_sum)
{
	if (v != 0) {
		/* The CPU reads verdicts of matched packets only. */
		gq->verdict[at] = v;
		atomicOr(&s_sum->match[i / 32], 1u << (i % 32));
	}
	if (malformed != GPURX_MAL_NONE)
		atomicAdd(&s_sum->mal[malformed % GPURX_SUM_MAL], 1u);
	s_len[i] = v == 0 ? 0 : min(min(v, s_len[i]), gq->max_caplen);
}

/*
 * --stamps: the stamp of a matched packet for the CPU, read with the
 * code --cpu runs (gpugen_stamp_find_view). From the staged bytes where
 * the stamp lies within them (a 64-byte UDP frame's ends at byte 66 of
 * the 128 staged), else where the packet lies; SPLIT with a tail,
 * through the two-run view as the packet was classified. Stored before
 * the barrier that precedes DONE, as the verdicts are. Not inlined:
 * inlined, it raised the per-burst kernel from 128 to 160 registers
 * (ptxas -v, sm_90), stamps on or off; called, the kernels keep their
 * registers and only reserve a larger stack frame.
 */
template <bool SPLIT>
static __device__ __noinline__ void
stamp_result(const struct gq_view *gq, uint32_t at, const uint8_t *where,
		uint32_t caplen, const uint8_t *staged, uint32_t n_staged,
		uint32_t len0, const uint8_t *tail,
		const struct gpurx_pkt_info *pi)
{
	/* The stamp's last byte, ICMP's 4 echo bytes before it counted in
	 * every case (a bound, not the exact end). */
	const uint32_t need = pi->payload_off + GPUGEN_STAMP_PAYLOAD_OFF + 4 +
		GPUGEN_STAMP_LEN;
	struct gpurx_pkt_view view;

	if (SPLIT && tail != NULL)
		view = gpurx_view_split(staged != NULL ? staged : where, len0,
			tail);
	else if (staged != NULL && need <= n_staged)
		view = gpurx_view_linear(staged);
	else
		view = gpurx_view_linear(where);
	gpurx_stamp_out_put(&gq->stamp[at], view, caplen, pi);
}

/* Packets of an item each thread classifies (one per thread per lap). */
#define GPURX_PKTS_PER_THREAD ((GPURX_MAX_BURST + GPURX_KERNEL_THREADS - 1) / \
	GPURX_KERNEL_THREADS)

/*
 * pkts: the item's packet list, the pointer gpudev keeps in the item, from
 * the copy in GPU memory (the ring library's dispatch state): loading it from
 * the item itself would cost a round trip, and one more behind num_pkts on
 * the same host line. With a worker per slot the pointer was first cached
 * per worker; where the GPU holds fewer workers than slots (8 queues) the
 * per-item fallback, every warp loading it from host memory, made the
 * item's inputs take 17 us instead of 3.5. pre: the library's prefetch
 * (struct gpucomm_item_ctx: pre_n, pre_addr, pre_size), the item's count
 * and first entries loaded while the worker polled (lap tags); pre->pre_n
 * 0: none.
 */
template <bool SPLIT>
static __device__ void
process_item(const struct gpurx_kparams *p, const struct gq_view *gq,
		uint32_t q, uint32_t idx, unsigned long long seq,
		const struct gpucomm_pkt *pkts, const struct gpucomm_item_ctx *pre,
		struct block_counters *bc)
{
	constexpr uint32_t stage_area = SPLIT ? GPURX_STAGE_BYTES_SPLIT :
		GPURX_STAGE_BYTES;
	__shared__ uint32_t s_len[GPURX_MAX_BURST];
	__shared__ uint32_t s_off[GPURX_MAX_BURST];
	__shared__ uintptr_t s_addr[GPURX_MAX_BURST];
	__shared__ uint32_t s_start[GPURX_MAX_BURST + 1];
	__shared__ __align__(16) uint8_t s_stage[stage_area];
	__shared__ __align__(16) uint8_t s_deep[GPURX_KERNEL_THREADS / 32][GPURX_DEEP_BYTES];
	__shared__ uint32_t s_n;
	__shared__ uint32_t s_in_flags;
	__shared__ uint32_t s_in_pull;
	__shared__ unsigned long long s_in_ts;
	__shared__ uint32_t s_decided;	/* account_decide's chunks, a bit each */
	__shared__ struct gpurx_item_sum s_sum;
	/* SPLIT: where the rest of each packet is (0: none), and the bytes
	 * at its address with the host flag (SPLIT_HOST_BIT). */
	__shared__ uintptr_t s_tail[SPLIT ? GPURX_MAX_BURST : 1];
	__shared__ uint32_t s_len0[SPLIT ? GPURX_MAX_BURST : 1];
	const struct gpucomm_item *it = &gq->items[idx];
	const uint32_t burst = gq->burst, base = idx * burst;
	uint8_t *arena = gq->arena + (size_t)idx * gq->item_bytes;
	uint32_t wire[GPURX_PKTS_PER_THREAD];
	uint64_t ts[GPURX_PKTS_PER_THREAD];
	/* Flows end: each packet's pinned flow, its side of the plan, its
	 * verdict and malformed reason, from the pins to the decisions. */
	struct gpurx_flow_entry *fe[GPURX_PKTS_PER_THREAD];
	struct gpurx_flow_pkt fpk[GPURX_PKTS_PER_THREAD];
	uint32_t fv[GPURX_PKTS_PER_THREAD];
	uint8_t fmal[GPURX_PKTS_PER_THREAD];
	uint32_t n, k;

	/*
	 * Everything the CPU wrote for the item, loaded at once: one PCIe
	 * round trip, not one per field. The whole burst's slots are read
	 * before the count is known (slots past the count hold stale values
	 * and are not used); the count is loaded once and shared, not once
	 * per warp.
	 */
	uint32_t cnt = 0;
	unsigned long long in_ts = 0, in_flags = 0;

	/* Issued first and stored to shared memory last: a warp stalls at
	 * the first use of a load's result, and its later loads would wait
	 * behind this one instead of travelling with it. The count and the
	 * item's inputs from two warps: loads of one warp from host memory
	 * go one round trip after another (gpucomm_ld_num_pkts). */
	/* Prefetched (pre_n != 0, at most the burst the lcore fills): the
	 * count and the first GPUCOMM_TAG_WINDOW entries are in shared
	 * memory, entries past the count are not loaded, and an item of
	 * up to the window reads nothing from host memory here when its
	 * struct gpurx_item_in came with them (pre_side). */
	const uint32_t pre_n = pre->pre_n;

	if (threadIdx.x == 0)
		cnt = pre_n != 0 ? pre_n : gpucomm_ld_num_pkts(it);
	if (threadIdx.x == 32) {
		/* Prefetched with the poll too where the slots were
		 * current (GPURX_SIDE_WORDS). */
		if (pre->pre_side != NULL) {
			in_ts = pre->pre_side[0];
			in_flags = pre->pre_side[1];
		} else {
			item_in_load(&gq->in[idx], &in_ts, &in_flags);
		}
	}
#pragma unroll
	for (int m = 0; m < GPURX_PKTS_PER_THREAD; m++) {
		uint32_t i = threadIdx.x + m * GPURX_KERNEL_THREADS;
		unsigned long long a, z;

		if (i >= burst || (pre_n != 0 && i >= pre_n))
			break;
		if (i < pre_n && i < GPUCOMM_TAG_WINDOW) {
			a = pre->pre_addr[i];
			z = pre->pre_size[i];
		} else {
			gpucomm_ld_pkt(&pkts[i], &a, &z);
		}
		if (SPLIT) {
			/* struct gpurx_split_pkt in one 16-byte load. */
			const uint4 w = *(const uint4 *)&gq->split[base + i];

			s_tail[i] = (uintptr_t)w.x | (uintptr_t)w.y << 32;
			s_len0[i] = w.z | (w.w != 0 ? SPLIT_HOST_BIT : 0);
		}
		s_addr[i] = (uintptr_t)a;
		s_len[i] = (uint32_t)z;
	}
	for (uint32_t w = threadIdx.x; w < GPURX_SUM_WORDS; w += blockDim.x)
		((uint32_t *)&s_sum)[w] = 0;
	if (threadIdx.x == 0) {
		s_n = cnt;
		s_decided = 0;
	}
	if (threadIdx.x == 32) {
		s_in_ts = in_ts;
		s_in_flags = (uint32_t)in_flags;
		s_in_pull = (uint32_t)(in_flags >> 32);
	}
	__syncthreads();
	phase_mark(bc, 0);
	/* Never index past the per-item arrays. */
	n = min(s_n, burst);
	{
		/* Per-packet side data only for an item that has it: a
		 * second round trip then, used no sooner than classify. */
		const uint32_t fl = s_in_flags;
		const uint64_t its = s_in_ts;

#pragma unroll
		for (int m = 0; m < GPURX_PKTS_PER_THREAD; m++) {
			const uint32_t i = threadIdx.x + m * GPURX_KERNEL_THREADS;

			if (i >= n)
				break;
			wire[m] = gpurx_in_wirelen(fl, gq->wirelen, base + i,
				s_len[i]);
			ts[m] = gpurx_in_ts(fl, its, gq->ts, base + i);
		}
	}
	/* Read from shared memory: the same value for every thread, so the
	 * whole block takes the barrier inside or none does. The CPU bounds
	 * it by item_bytes; checked again, as a count is. */
	if (!SPLIT && s_in_pull != 0 && gq->pull_dst != NULL)
		pull_item(gq->pull_dst + (size_t)idx * gq->item_bytes,
			gq->pull_src + (size_t)idx * gq->item_bytes,
			min(s_in_pull, gq->item_bytes) & ~15u);
	/* Capture offsets by warp 1 while warp 0 lays out the staging. */
	if (p->capture && threadIdx.x / 32 == 1)
		arena_layout(s_len, n, s_off);
	k = stage_layout<SPLIT>(s_addr, SPLIT ? s_len0 : s_len, n, s_start,
		stage_area);
	stage_copy(s_stage, s_addr, s_start, k);
	phase_mark(bc, 1);
#pragma unroll
	for (int m = 0; m < GPURX_PKTS_PER_THREAD; m++) {
		const uint32_t i = threadIdx.x + m * GPURX_KERNEL_THREADS;
		const bool mine = i < n;
		const uint8_t *where = NULL, *tail = NULL, *staged = NULL;
		struct gpurx_pkt_info pi;
		uint32_t caplen = 0, len0 = 0, wl = 0, v = 0;
		bool deep = false;

		/* Whole warps leave together: inspect_deep_warp is warp-wide. */
		if (i - threadIdx.x % 32 >= n)
			break;
		if (mine) {
			where = (const uint8_t *)s_addr[i];
			caplen = s_len[i];
			len0 = SPLIT ? split_len0(s_len0[i]) : caplen;
			wl = wire[m];
			/* The staged bytes are the packet's first: with
			 * split, those of its header buffer. */
			deep = i >= k || !gpurx_classify_inspect(stage_at(s_stage,
				s_start, s_addr, i), stage_bytes(len0), caplen,
				wl, p->prog, p->prog_len, &v, &pi);
			if (SPLIT) {
				tail = (const uint8_t *)s_tail[i];
				if (i < k && len0 <= GPURX_STAGE_HEAD)
					staged = stage_at(s_stage, s_start,
						s_addr, i);
			}
		}
		inspect_deep_warp<SPLIT>(p, s_deep[threadIdx.x / 32], deep,
			where, caplen, wl, len0, tail, staged, &v, &pi);
		/* A kernel parameter: off, one uniform branch per packet. */
		if (p->stamps && mine && v != 0)
			stamp_result<SPLIT>(gq, base + i, where, caplen,
				SPLIT ? staged : (i < k ? stage_at(s_stage,
					s_start, s_addr, i) : NULL),
				stage_bytes(len0), len0, tail, &pi);
		if (p->flow_order.slots != NULL) {
			/* Flows end: pinned now, decided once the whole
			 * item is (account_decide). */
			fe[m] = account_pin(p, q, mine, &pi, v, wl,
				mine ? ts[m] : 0, &fpk[m]);
			fv[m] = v;
			fmal[m] = pi.malformed;
			continue;
		}
		if (!mine)
			continue;
		gpurx_classify_account_q(&pi, v, wl, ts[m], (uint16_t)q, p->ft);
		packet_result(gq, base + i, i, v, pi.malformed, s_len, &s_sum);
	}
	if (p->flow_order.slots != NULL && n == 0) {
		/* An item without packets waits for nothing. */
		if (threadIdx.x == 0)
			gpurx_flow_order_mark(&p->flow_order, q, gq->n_items, seq,
				GPURX_FLOW_ORDER_DECIDED);
	} else if (p->flow_order.slots != NULL) {
		/* Every pin of the item (the barrier) before its PINNED mark,
		 * and every earlier item's before any decision. */
		__syncthreads();
		if (threadIdx.x == 0)
			gpurx_flow_order_mark(&p->flow_order, q, gq->n_items, seq,
				GPURX_FLOW_ORDER_PINNED);
		if (threadIdx.x / 32 == 0)
			gpurx_flow_order_wait_earlier(&p->flow_order, q,
				gq->n_items, seq, GPURX_FLOW_ORDER_PINNED);
		__syncthreads();
#pragma unroll
		for (int m = 0; m < GPURX_PKTS_PER_THREAD; m++) {
			const uint32_t i = threadIdx.x + m * GPURX_KERNEL_THREADS;

			if (i - threadIdx.x % 32 >= n)
				break;
			account_decide(p, q, gq->n_items, seq, i / 32,
				(n + 31) / 32, fe[m], fpk[m], &s_decided);
			if (i < n)
				packet_result(gq, base + i, i, fv[m], fmal[m],
					s_len, &s_sum);
		}
	}
	__syncthreads();
	phase_mark(bc, 2);
	/* Before the barrier that precedes DONE, like every result. */
	for (uint32_t w = threadIdx.x; w < GPURX_SUM_WORDS; w += blockDim.x)
		((uint32_t *)&gq->sum[idx])[w] = ((const uint32_t *)&s_sum)[w];
	/*
	 * Accepted packets to the arena, a warp per packet: each warp looks
	 * at 32 packets at once and copies only those accepted (a loop over
	 * every packet by the whole block measured ~60 ns per packet even
	 * when all were rejected), from the staging area when the bytes to
	 * keep were all staged, else from where the packet lies. SPLIT: the
	 * CPU writes a capture within a header buffer in host memory itself;
	 * a longer one is the header (staged, or where it lies) then the
	 * payload from GPU memory.
	 */
	if (p->capture) {
		const unsigned int lane = threadIdx.x % 32;
		const unsigned int warp = threadIdx.x / 32;
		const unsigned int nwarps = blockDim.x / 32;

		for (uint32_t c = warp * 32; c < n; c += nwarps * 32) {
			uint32_t i = c + lane;
			bool take = i < n && s_len[i] != 0 &&
				s_off[i] <= gq->item_bytes &&
				s_len[i] <= gq->item_bytes - s_off[i];
			unsigned int m;

			if (SPLIT && take && (s_len0[i] & SPLIT_HOST_BIT) &&
					s_len[i] <= split_len0(s_len0[i]))
				take = false;
			m = __ballot_sync(0xffffffffu, take);
			while (m != 0) {
				const uint32_t j = c + __ffs(m) - 1;
				const uint32_t len = s_len[j];

				m &= m - 1;
				if (SPLIT && s_tail[j] != 0) {
					const uint32_t l0 = split_len0(s_len0[j]);
					const uint32_t h = min(len, l0);
					const bool hs = j < k &&
						l0 <= GPURX_STAGE_HEAD;

					warp_copy(arena + s_off[j], hs ?
						stage_at(s_stage, s_start,
							s_addr, j) :
						(const uint8_t *)s_addr[j], h,
						!hs, lane);
					if (len > h)
						warp_copy(arena + s_off[j] + h,
							(const uint8_t *)s_tail[j],
							len - h, true, lane);
					continue;
				}
				const bool staged = j < k &&
					len <= GPURX_STAGE_HEAD;

				warp_copy(arena + s_off[j], staged ?
					stage_at(s_stage, s_start, s_addr, j) :
					(const uint8_t *)s_addr[j], len, !staged,
					lane);
			}
		}
	}
	/*
	 * Every thread's result and arena stores happen before the barrier
	 * (and the library's after the body): thread 0's system-scope
	 * release of DONE after it orders them all before DONE
	 * (cumulativity). A fence in every thread measured 4 us per
	 * 32-packet item and 10 us per 128-packet item: the fences of one
	 * block are served one by one.
	 */
	__syncthreads();
	phase_mark(bc, 3);
}

/* The counters a block continues from (zero at start, or what an
 * earlier launch left). */
static __device__ void
block_counters_load(struct block_counters *bc, const struct gpurx_gq *gq,
		uint32_t slot)
{
	const volatile struct gpurx_gq *vq = gq;

	bc->busy_ns = vq->busy_ns[slot];
	bc->items_done = vq->items_done[slot];
	bc->wait_ns = vq->wait_ns[slot];
	for (int ph = 0; ph < GPURX_PHASES; ph++)
		bc->phase_ns[ph] = vq->phase_ns[ph][slot];
}

/*
 * The per-item body of the ring library's kernels (gpucomm_persistent.cuh):
 * one worker block of one queue. SPLIT: the kernels built for --split.
 */
template <bool SPLIT>
struct gpurx_body {
	static constexpr unsigned int threads = GPURX_KERNEL_THREADS;
	/*
	 * Four blocks an SM: at most 128 registers a thread. Left to itself
	 * ptxas gave the persistent kernel 255 (sm_80 and sm_90; the item
	 * kernel 128-136), so an SM held two blocks, and the kernel's share
	 * of the GPU (gpucomm_kernel_share: half) was 128 blocks on an H200:
	 * 8 rings of 15 workers, about 6 % of the GPU's threads, for a body
	 * whose time is memory latency (bench-kernel-rate, run eeedb4f:
	 * 0.33 Gpps from GPU memory against a 49 Gpps gather floor). The
	 * shared memory (45-47 KB a block) allows four.
	 */
	static constexpr unsigned int min_blocks = 4;
	/* Launched with kp.lap_tags (rings with lap tags, the default),
	 * the workers load an item's count and first entries while they
	 * poll for its READY (gpucomm_persistent.cuh), which process_item
	 * takes from the item's context. */
	static constexpr bool prefetch = true;
	/* And the item's struct gpurx_item_in, from its side slots. */
	static constexpr uint32_t side_n = GPURX_SIDE_WORDS;
	struct gpurx_kparams p;

	struct worker {
		const struct gpurx_kparams *p;
		struct gpurx_gq *gq;		/* host memory: the counters */
		const struct gq_view *v;	/* shared memory */
		struct block_counters bc;	/* thread 0's */
		uint64_t t0;			/* thread 0: the item's start */
		uint32_t q;			/* the RX queue (ring) */
		uint32_t slot;

		/* Once per block and launch: the queue's view and the
		 * block's counters as an earlier launch left them. */
		__device__
		worker(const gpurx_body &b, uint32_t ring, uint32_t slot_)
			: p(&b.p), gq(&b.p.gq[ring]), bc(), t0(0), q(ring),
			slot(slot_)
		{
			__shared__ struct gq_view s_gq;

			if (threadIdx.x == 0) {
				/* Launched per item: the item's time includes
				 * these loads, as it always did. */
				t0 = gpucomm_gpu_ns();
				block_counters_load(&bc, gq, slot);
			}
			gq_view_load<SPLIT>(&s_gq, gq);	/* synchronizes the block */
			v = &s_gq;
		}

		__device__ void
		item(const struct gpucomm_item_ctx &c)
		{
			if (threadIdx.x == 0) {
				const uint64_t t = gpucomm_gpu_ns();

				/* ready_ns 0: launched per item, the item's
				 * time runs from the launch (t0 above) and it
				 * waited for no dispatcher. */
				if (c.ready_ns != 0) {
					t0 = t;
					bc.wait_ns += t - c.ready_ns;
				}
				bc.t_mark = t;
			}
			process_item<SPLIT>(p, v, q, c.idx, c.seq, c.pkts, &c,
				&bc);
			/* The last phase mark (after the body's last barrier)
			 * ends the item's time: no clock read of its own. */
			if (threadIdx.x == 0) {
				bc.busy_ns += bc.t_mark - t0;
				bc.items_done++;
			}
		}

		/*
		 * After DONE, off the item's critical path: the counters to
		 * host memory, plain stores (only this block writes its
		 * slot). The RX lcore and the main lcore read them while the
		 * kernel runs, for statistics only (the busy share, the
		 * per-second report), and may see them an item late; the
		 * summary reads them after the kernel ended, when every store
		 * is visible. Before, they were stored before DONE with a
		 * system-scope fence and the status pointer loaded from the
		 * item in host memory: up to two PCIe round trips per item.
		 */
		__device__ void
		item_done(const struct gpucomm_item_ctx &c)
		{
			(void)c;
			if (threadIdx.x == 0) {
				volatile struct gpurx_gq *vq = gq;

				vq->busy_ns[slot] = bc.busy_ns;
				vq->items_done[slot] = bc.items_done;
				vq->wait_ns[slot] = bc.wait_ns;
				for (int ph = 0; ph < GPURX_PHASES; ph++)
					vq->phase_ns[ph][slot] = bc.phase_ns[ph];
			}
		}
	};
};

#endif /* GPURX_APP_GPU_BODY_CUH */
