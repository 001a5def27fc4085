/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU's view of a gpudev communication list (struct rte_gpu_comm_list
 * and struct rte_gpu_comm_pkt, DPDK 22.11), for code nvcc compiles
 * without DPDK's headers (nvcc takes none of DPDK's compiler flags). The
 * one mirror of that layout in the project: gpucomm_ring.c checks it
 * against rte_gpudev.h field by field, so a DPDK whose layout differs
 * does not build.
 */
#ifndef GPUCOMM_LAYOUT_H
#define GPUCOMM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values of enum rte_gpu_comm_list_status. */
#define GPUCOMM_STATUS_FREE 0u
#define GPUCOMM_STATUS_READY 1u
#define GPUCOMM_STATUS_DONE 2u
#define GPUCOMM_STATUS_ERROR 3u

/* RTE_GPU_COMM_LIST_PKTS_MAX: entries of every item's packet list. */
#define GPUCOMM_PKTS_MAX 1024u

/* struct rte_gpu_comm_pkt: one packet's bytes, where the GPU reads them. */
struct gpucomm_pkt {
	uintptr_t addr;
	size_t size;	/* low 32 bits; the high ones a lap tag (below) */
};

/* struct rte_gpu_comm_list: one item of a list (the list is an array of
 * them, in host memory registered for the GPU). The status word is
 * status_h[0] for the CPU and status_d[0] for the GPU: the same word,
 * in registered host memory or, where the driver can map GPU memory for
 * the CPU (GDRCopy), in GPU memory. gpudev allocates the statuses of a
 * list as one array: item i's is status_d[0] of the first item plus i. */
struct gpucomm_item {
	uint16_t dev_id;
	void **mbufs;
	struct gpucomm_pkt *pkt_list;
	uint32_t num_pkts;
	uint32_t *status_h;
	uint32_t *status_d;
};

/*
 * Lap tags: an entry that proves itself current, so that the worker can
 * load an item's first descriptors while it polls for READY rather than
 * one PCIe round trip after it (gpucomm_persistent.cuh).
 *
 * A packet entry's size word is 64 bits and a packet is shorter than
 * 4 GiB: the low half is the size, the high half the tag word, stored
 * with the size in one 8-byte store after the entry's address:
 *
 *   bit 31      GPUCOMM_TAG_MARK: a tag (an untagged entry has 0 here)
 *   bits 16-26  entry 0 only: the item's packet count, stored by the
 *               ring's publish once nothing can fail any more; 0 in the
 *               other entries and in entry 0 until then
 *   bits 0-15   the item's lap (ring sequence number / items) mod 2^16
 *
 * An entry whose tag word holds the mark and the item's current lap was
 * written this lap: its address before its size word (x86 keeps stores
 * in order; the ring's filler puts rte_io_wmb() between them), and both
 * are read by one aligned 16-byte load, one PCIe read of part of one
 * cache line, which the host serves from one coherent copy of the line
 * (the assumption here: PTX makes no promise for a vector load, and a
 * descriptor of one 8-byte word would need no such promise). Each entry
 * is written at most once a lap (after a failed publish the same entries
 * are published again, or the ring is initialised again), so a current
 * entry is final.
 *
 * Wrap-around: 16 bits of lap repeat every 65536 laps, and an entry past
 * an item's count is not rewritten that lap: entry 31 of an item that
 * carried 1 packet for 65536 laps would carry the current lap's tag from
 * long ago. So the ring also tags the unused entries of the window
 * (entries count .. GPUCOMM_TAG_WINDOW - 1, with no count) every
 * GPUCOMM_TAG_REFRESH laps (lap 0 included), and gpucomm_ring_init()
 * clears every window entry's tag: an entry the worker loads for lap L
 * was written at lap L, or at a lap in [L - GPUCOMM_TAG_REFRESH, L - 1]
 * (the refresh before L; the worker loads it only after lap L - 1 of the
 * item was done, which follows that refresh), or is untagged: a stale
 * entry's lap differs from L mod 2^16.
 */
#define GPUCOMM_TAG_MARK 0x80000000u
#define GPUCOMM_TAG_LAP_MASK 0xffffu
#define GPUCOMM_TAG_COUNT_SHIFT 16
#define GPUCOMM_TAG_COUNT_MASK 0x7ffu
/* The entries a worker loads while it polls: one warp, a lane each. */
#define GPUCOMM_TAG_WINDOW 32u
/* Laps between refreshes of the window: at most half the lap tag's range. */
#define GPUCOMM_TAG_REFRESH 0x8000u

/*
 * Side records (GPUCOMM_RING_SIDE): up to GPUCOMM_SIDE_MAX 64-bit words
 * per item that the worker needs before it can start on the item (a
 * timestamp, flags), carried by the same prefetch as the entries, so
 * that they too need no PCIe read after READY. Slot k is entry
 * GPUCOMM_SIDE_ENTRY(k) of the item's packet list, one of its last
 * GPUCOMM_SIDE_MAX entries, which a ring with side records never fills
 * with packets (at most GPUCOMM_SIDE_PKTS_MAX a item): the word where an
 * entry has its address, and in the size word a tag of the item's lap
 * with no count (gpucomm_tag_size(0, lap, 0)), both in one 16-byte store
 * as an entry's. The worker keeps the slots it needs only if each
 * carries the item's current lap; else it loads the words after READY
 * from wherever the program also keeps them.
 *
 * Every publish of such a ring writes all the slots its kernel reads,
 * once: a slot loaded for lap L (after lap L - 1 of the item was done,
 * which followed the CPU's writes of lap L - 1) was then written at lap
 * L or L - 1, or cleared by gpucomm_ring_init(), never left from a lap
 * 2^16 before: no refresh is needed, and a stale tag differs from L's.
 */
#define GPUCOMM_SIDE_MAX 4u
#define GPUCOMM_SIDE_PKTS_MAX (GPUCOMM_PKTS_MAX - GPUCOMM_SIDE_MAX)
#define GPUCOMM_SIDE_ENTRY(k) (GPUCOMM_SIDE_PKTS_MAX + (k))

#ifdef __CUDACC__
#define GPUCOMM_HD __host__ __device__
#else
#define GPUCOMM_HD
#endif

/* The size word of an entry written at lap `lap` (count: entry 0's
 * packet count, or 0). */
static inline GPUCOMM_HD uint64_t
gpucomm_tag_size(uint32_t size, uint64_t lap, uint32_t count)
{
	const uint32_t tag = GPUCOMM_TAG_MARK |
		(count & GPUCOMM_TAG_COUNT_MASK) << GPUCOMM_TAG_COUNT_SHIFT |
		((uint32_t)lap & GPUCOMM_TAG_LAP_MASK);

	return (uint64_t)tag << 32 | size;
}

/* Whether a size word loaded for lap `lap` was written that lap. */
static inline GPUCOMM_HD int
gpucomm_tag_current(uint64_t size_word, uint64_t lap)
{
	const uint32_t tag = (uint32_t)(size_word >> 32);
	const uint32_t want = GPUCOMM_TAG_MARK |
		((uint32_t)lap & GPUCOMM_TAG_LAP_MASK);

	return (tag & ~(GPUCOMM_TAG_COUNT_MASK << GPUCOMM_TAG_COUNT_SHIFT)) ==
		want;
}

/* Entry 0's size word loaded for lap `lap`: the item's packet count when
 * the publish stored it this lap, else 0 (not yet, or a stale word). */
static inline GPUCOMM_HD uint32_t
gpucomm_tag_count(uint64_t size_word0, uint64_t lap)
{
	if (!gpucomm_tag_current(size_word0, lap))
		return 0;
	return (uint32_t)(size_word0 >> (32 + GPUCOMM_TAG_COUNT_SHIFT)) &
		GPUCOMM_TAG_COUNT_MASK;
}

#ifdef __cplusplus
}
#endif

#endif /* GPUCOMM_LAYOUT_H */
