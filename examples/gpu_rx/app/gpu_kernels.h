/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interface between the host C code and the CUDA side (gpu_kernels.cu,
 * gpu_body.cuh), compiled by both gcc and nvcc, without DPDK headers (nvcc
 * does not take DPDK's compiler flags). The gpudev communication list is
 * seen through the ring library's mirror of it (lib/gpucomm:
 * gpucomm_layout.h, whose layout the library checks against rte_gpudev.h).
 */
#ifndef GPURX_APP_GPU_KERNELS_H
#define GPURX_APP_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "flow_order.h"
#include "gpucomm_kernel.h"
#include "gpurx_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_vm_insn;
struct gpurx_flow_table;

/*
 * One RX queue as the kernel sees it. Lives in mapped pinned host memory:
 * the CPU writes the inputs before publishing an item, the kernel writes
 * the outputs before marking it DONE. Per-packet arrays hold
 * n_items * burst entries, item i at [i * burst].
 */
/*
 * At most this many items of one queue are processed at once (worker
 * blocks per queue of the ring library's persistent kernel, whose
 * GPUCOMM_WORKERS_MAX says why 64). With the host-line fixes (see
 * gpu_body.cuh) a queue runs 42 Mpps at 64 B, limited by the RX lcore.
 */
#define GPURX_BLOCKS_PER_QUEUE_MAX GPUCOMM_WORKERS_MAX
#define GPURX_PHASES 4

/*
 * What the RX lcore needs of an item's results, written by the kernel
 * before DONE: the RX lcore reads two cache lines per item instead of a
 * verdict and a malformed kind per packet (those reads, each a cache miss
 * after the GPU's writes, were a sixth of the lcore's time at 64 B).
 * Written as 32-bit words (GPURX_SUM_WORDS).
 */
#define GPURX_SUM_MATCH_WORDS 16	/* GPURX_MAX_BURST / 32 (opts.h) */
#define GPURX_SUM_MAL 16		/* >= GPURX_MAL_COUNT (pkt_parse.h) */
struct gpurx_item_sum {
	uint32_t match[GPURX_SUM_MATCH_WORDS];	/* bit i: packet i matched */
	uint32_t mal[GPURX_SUM_MAL];	/* packets per malformed kind; [0] 0 */
};
#define GPURX_SUM_WORDS (sizeof(struct gpurx_item_sum) / sizeof(uint32_t))

/*
 * Match bits of packets 32 w .. 32 w + 31 of an item of n packets, read
 * once from the summary the GPU wrote; bits of packets past n are never
 * reported, whatever the word holds.
 */
static inline uint32_t
gpurx_sum_match_word(const struct gpurx_item_sum *s, uint32_t w, uint32_t n)
{
	uint32_t bits;

	if (w >= GPURX_SUM_MATCH_WORDS || n <= w * 32)
		return 0;
	bits = *(const volatile uint32_t *)&s->match[w];
	if (n - w * 32 < 32)
		bits &= (1u << (n - w * 32)) - 1;
	return bits;
}

/*
 * What an item's packets share, written by the RX lcore once per item
 * with its other inputs. The per-packet side arrays (ts, wirelen) are
 * written, and read, only for an item whose flags say so. At 64 B the
 * three per-packet side stores they replace (a timestamp every packet of
 * a burst shares, a wire length equal to the entry's size, an arena
 * offset the sizes determine) were 5.0 of the 5.1 ns a packet the
 * pipeline cost an RX lcore beyond receiving on the build machine
 * (bench/rx-lcore-cost.sh, kernel played by a thread), and 16 more bytes
 * a packet for the kernel to read over PCIe. Read by the kernel in one
 * 16-byte load (gpu_body.cuh checks the layout).
 */
#define GPURX_IN_TS	1u	/* ts[] per packet (PMD timestamps); else
				 * every packet's is .ts */
#define GPURX_IN_WIRE	2u	/* wirelen[] per packet (a packet cut short
				 * of its wire length); else it is the
				 * entry's size */
struct gpurx_item_in {
	uint64_t ts;		/* ns, unless GPURX_IN_TS */
	uint32_t flags;		/* GPURX_IN_* */
	uint32_t pull;		/* --mem staged: bytes of the item the kernel
				 * copies first from the staging buffer into
				 * GPU memory (struct gpurx_gq, pull_src);
				 * 0: none */
};

/*
 * With lap tags, an item's struct gpurx_item_in also travels as the
 * ring's side slots (GPUCOMM_RING_SIDE, gpucomm_layout.h), which the
 * workers load while they poll for READY: slot 0 .ts, slot 1 .flags in
 * the low half and .pull in the high half (the words item_in_load reads
 * from .in). The kernel needs them before it can start on the item.
 */
#define GPURX_SIDE_WORDS 2u
GPURX_FN uint64_t
gpurx_in_side1(uint32_t flags, uint32_t pull)
{
	return (uint64_t)flags | (uint64_t)pull << 32;
}

/* Packet `slot`'s timestamp and wire length (size: its entry's), by the
 * item's flags: the rule the kernel and the CPU both read them by. */
GPURX_FN uint64_t
gpurx_in_ts(uint32_t flags, uint64_t item_ts, const uint64_t *ts,
		size_t slot)
{
	return (flags & GPURX_IN_TS) ? ts[slot] : item_ts;
}

GPURX_FN uint32_t
gpurx_in_wirelen(uint32_t flags, const uint32_t *wirelen, size_t slot,
		uint32_t size)
{
	return (flags & GPURX_IN_WIRE) ? wirelen[slot] : size;
}

/*
 * Arena bytes a packet of cap bytes takes: the kernel copies captures in
 * 16-byte words. Packet i's capture starts at the sum of the spans of
 * packets 0 .. i - 1 of its item (computed where needed, never stored).
 */
GPURX_FN uint32_t
gpurx_arena_span(uint32_t cap)
{
	return (cap + 15u) & ~15u;
}

/*
 * Bytes of every packet the kernel stages into shared memory to classify
 * it from (gpu_body.cuh), and the default of --split (port.c).
 */
#define GPURX_STAGE_HEAD 128u

/*
 * --split: where the rest of packet i is, beside its comm list entry
 * (whose addr is the header buffer, size the bytes of the whole packet).
 * Written by the CPU with the item's other inputs, 16 bytes read in one
 * load by the kernel.
 */
struct gpurx_split_pkt {
	uint64_t tail;		/* GPU address of bytes [len0, size); 0: none,
				 * the packet is whole at the entry's addr */
	uint32_t len0;		/* bytes at the entry's addr */
	uint32_t host;		/* 1: that addr is host memory the CPU reads:
				 * a capture of at most len0 bytes is written
				 * from there, the kernel copies nothing */
};

/*
 * --stamps: the generator stamp (gpugen_stamp.h) the kernel read from a
 * matched packet, found or not; the RX lcore adds the packet's RX time,
 * which it wrote itself (struct gpurx_item_in), and accounts it as --cpu
 * does.
 */
struct gpurx_stamp_out {
	uint64_t seq;
	uint64_t tx_ns;
	uint32_t stream;
	uint32_t found;		/* 0: the packet has no stamp */
};

struct gpurx_gq {
	struct gpucomm_item *items;	/* the gpudev list (registered) */
	uint32_t n_items;
	uint32_t burst;
	uint32_t item_bytes;		/* arena bytes per item */
	uint32_t max_caplen;		/* --snaplen */
	/* CPU -> GPU */
	struct gpurx_item_in *in;	/* [n_items] */
	uint64_t *ts;			/* ns, taken at RX (GPURX_IN_TS) */
	uint32_t *wirelen;		/* > pkt_list size (GPURX_IN_WIRE) */
	struct gpurx_split_pkt *split;	/* --split, else NULL */
	/*
	 * --mem staged, else NULL: item idx's packets, copied one after
	 * another by the RX lcore to pull_src + idx * item_bytes (pinned host
	 * memory), are pulled by the kernel's own loads to pull_dst + idx *
	 * item_bytes (GPU memory), where the item's entries point. The GPU
	 * pulling them leaves the lcore no CUDA call per item: the driver
	 * serializes a context's calls, and lcores issuing a copy each per
	 * item crowded each other out (0.03-0.05 of the bare RX loop on 8
	 * lcores with cudaMemcpyAsync, doc/performance.md).
	 */
	const uint8_t *pull_src;
	uint8_t *pull_dst;
	/* GPU -> CPU */
	uint32_t *verdict;		/* BPF result, bytes to keep: written
					 * only for matched packets */
	struct gpurx_item_sum *sum;	/* [n_items] */
	struct gpurx_stamp_out *stamp;	/* --stamps, else NULL: written only
					 * for matched packets */
	uint8_t *arena;			/* captured bytes, item_bytes per item */
	/* Kernel time spent on items and items done, one slot per block of
	 * the queue (each block writes only its own: no atomics on host
	 * memory, which PCIe may not support). Written after the item's DONE
	 * (gpu_body.cuh): a reader may see them an item late. From a cache
	 * line of their own on: the GPU writes them for every item, and a
	 * line shared with the pointers above (sum, arena, read by the RX
	 * lcore for every item) would leave the CPU's copy of those
	 * invalidated each time, a miss per item collected. */
	uint64_t busy_ns[GPURX_BLOCKS_PER_QUEUE_MAX]
		__attribute__((aligned(64)));
	uint64_t items_done[GPURX_BLOCKS_PER_QUEUE_MAX];
	/* Persistent kernel: time items waited from the dispatcher seeing
	 * them READY to their worker starting, summed per block. */
	uint64_t wait_ns[GPURX_BLOCKS_PER_QUEUE_MAX];
	/* Processing time split (summed per block): loading the item's
	 * inputs, staging packet bytes, classifying, writing the results. */
	uint64_t phase_ns[GPURX_PHASES][GPURX_BLOCKS_PER_QUEUE_MAX];
};

/*
 * The app's kernel parameters besides the ring library's (struct
 * gpucomm_kparams: lists, dispatch state, quit flag).
 */
struct gpurx_kparams {
	struct gpurx_gq *gq;		/* [queues], mapped pinned memory */
	const struct bpf_vm_insn *prog;	/* device memory, validated */
	uint32_t prog_len;
	struct gpurx_flow_table *ft;	/* device memory */
	/*
	 * Flows end (flow export): per queue, from q * flow_order.stride,
	 * a slot per ring item saying how far the item's packets have got
	 * with the flow table (pinned, decided), zeroed (device memory), so
	 * that a queue's packets of one flow reach it in arrival order
	 * (gpu_body.cuh, account_decide). NULL: flows never end, and
	 * counting them commutes.
	 */
	struct gpurx_flow_order flow_order;
	/* A capture file is written: copy accepted packets to the arena
	 * (else the copy, a PCIe round trip or two per accepted packet,
	 * would only add to every item's latency). */
	uint32_t capture;
	/* --split: the queues' split side arrays are read (a kernel built
	 * for it; without split the kernels never look at them). */
	uint32_t split;
	/* --stamps: matched packets' stamps are read into gq->stamp (one
	 * uniform branch per packet when off). */
	uint32_t stamps;
};

/*
 * The ring library's persistent kernel (per queue a dispatcher and
 * kp->bpq worker blocks, polling items until the quit flag) with this
 * app's per-item code: gpucomm_launch_persistent, which lowers kp->bpq
 * to what the GPU holds at once and launches cooperatively (the blocks
 * are all resident together or the launch fails,
 * cudaErrorCooperativeLaunchTooLarge). 0 or a cudaError_t value.
 */
int gpurx_cuda_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, void *s);
/* --launch-per-burst: process exactly item idx (ring sequence number
 * seq) of queue q. */
int gpurx_cuda_launch_item(const struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, uint32_t q, uint32_t idx,
		unsigned long long seq, void *s);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_APP_GPU_KERNELS_H */
