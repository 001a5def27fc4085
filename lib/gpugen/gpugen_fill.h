/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen-cuda's persistent fill: packets built by a GPU kernel into
 * the data buffers of mbufs that TX lcores post, handed back to them
 * through gpudev communication lists (lib/gpucomm), one ring per lcore.
 *
 *   TX lcore r                          GPU (one persistent kernel)
 *   alloc a burst of mbufs
 *   gpugen_fill_post(r, m, n, first) -> READY
 *                                        a worker block builds packets
 *                                        first .. first + n - 1 into
 *                                        the mbufs' data buffers
 *                                     <- DONE
 *   gpugen_fill_collect(r) : the burst, in post order
 *   rte_eth_tx_burst(...), gpugen_fill_release(r)
 *
 * An lcore keeps up to `items` bursts in flight, so the build of later
 * bursts overlaps the transmission of earlier ones, and posting costs a
 * few stores per packet and no CUDA call. With launch_per_burst each
 * post launches a kernel for its item instead (the comparison the
 * generator's benchmark makes; a CUDA call per burst).
 *
 * Threads: one lcore per ring, no locks; rings are independent.
 * Frames are those of gpugen_build_cpu() for the same packet numbers and
 * stamp times (the tests compare them byte for byte).
 */
#ifndef GPUGEN_FILL_H
#define GPUGEN_FILL_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "gpugen.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpugen_fill;

/*
 * An mbuf made ready for packet n of g's sequence, its bytes not
 * written: data at the headroom, one segment of the packet's length
 * (fixed: gpugen_fixed_len(g), read once by the caller; 0 asks
 * gpugen_len() per packet). What every sender of unbuilt or GPU-built
 * frames does to an mbuf it took raw from its pool.
 */
static inline void
gpugen_mbuf_ready(struct rte_mbuf *m, const struct gpugen *g, uint32_t fixed,
		uint64_t n)
{
	const uint32_t len = fixed != 0 ? fixed : gpugen_len(g, n);

	/*
	 * Frames of one length: an mbuf back from an earlier burst has
	 * these already, and its line is left clean, not written back when
	 * the thousands of mbufs in flight to the GPU push it out of the
	 * cache. The loads hit the line the caller reads for the buffer
	 * address. 64 B into GPU memory, 2 / 4 TX queues on an H200 host:
	 * 1.21 / 1.34 times the packet rate (doc/perf/tx-lcore-profile).
	 */
	if (fixed != 0 && m->pkt_len == len && m->data_len == len &&
			m->data_off == RTE_PKTMBUF_HEADROOM)
		return;
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
}

struct gpugen_fill_conf {
	uint32_t rings;		/* TX lcores, 1 .. 32 */
	uint32_t items;		/* bursts in flight per ring, 2 .. 1024 */
	uint32_t burst;		/* packets per burst at most, 1 .. 1024 */
	/* The mbufs' data buffers are GPU memory (built in place) rather
	 * than host memory mapped for the GPU (built in GPU memory and
	 * copied out by the block's warps). Either is correct for both; this
	 * picks the fast one. */
	int frames_in_gpu;
	int launch_per_burst;	/* a kernel launch per post */
	/* 0, or the kernel keeps the GPU times of each ring's last `times`
	 * bursts (1 .. GPUGEN_FILL_TIMES_MAX; gpugen_fill_times): a
	 * measurement, at a few clock reads, a barrier and five stores per
	 * burst. 0 leaves the per-burst path as it is. */
	uint32_t times;
	/* Non-zero: rings with lap tags and side records (gpucomm.md), so
	 * that the persistent kernel's workers load a burst's first
	 * descriptors and its side words (first packet, stamp times) while
	 * they poll for its READY: no read of host memory after READY for a
	 * burst of up to 32. Bursts of at most GPUCOMM_SIDE_PKTS_MAX (1020);
	 * no effect with launch_per_burst. */
	int lap_tags;
};

#define GPUGEN_FILL_TIMES_MAX 65536u

/*
 * The fill of gg's streams (gpugen_gpu_open) on its GPU. Nothing runs
 * until gpugen_fill_start. 0, or -errno with err said why (-EINVAL for a
 * bad conf, gpudev's or CUDA's error); nothing is kept on error.
 */
int gpugen_fill_open(struct gpugen_gpu *gg, const struct gpugen_fill_conf *c,
		struct gpugen_fill **out, char *err, size_t errlen);

/* Launches the persistent kernel (or readies the per-burst launches).
 * 0 or -errno with err. */
int gpugen_fill_start(struct gpugen_fill *f, char *err, size_t errlen);

/*
 * Ring r (its lcore only): build packets first .. first + n - 1 into the
 * data buffers of m[0 .. n - 1] (single segment, data_off where the
 * frame starts, room for gpugen_len() of each: the caller sets their
 * lengths), packet first + i stamped tx_ns + i * tx_gap_ns (its own
 * transmit time; gpugen_build_cpu() with that time builds the same
 * frame). The mbufs belong to the fill until
 * gpugen_fill_collect returns them.
 * 0; -ENOSPC when the ring has `items` bursts in flight (collect first);
 * -EINVAL for n out of 1 .. burst or a chained mbuf (nothing posted);
 * -EIO when a per-burst launch failed (the burst is posted and will not
 * come back: gpugen_fill_abandon).
 */
int gpugen_fill_post(struct gpugen_fill *f, uint32_t r, struct rte_mbuf **m,
		uint32_t n, uint64_t first, uint64_t tx_ns, uint64_t tx_gap_ns);

/*
 * The same for mbufs fresh from their pool (rte_mempool_get_bulk: one
 * segment, next NULL, the raw state), which the fill readies in the pass
 * it makes over them anyway: data_off the headroom, data_len and pkt_len
 * the frames' lengths. A TX lcore's loop over the burst, and its cache
 * misses, once instead of twice. Other fields are left as they are (no
 * offload flags: set those before, or use gpugen_fill_post). Returns as
 * gpugen_fill_post.
 */
int gpugen_fill_post_raw(struct gpugen_fill *f, uint32_t r,
		struct rte_mbuf **m, uint32_t n, uint64_t first, uint64_t tx_ns,
		uint64_t tx_gap_ns);

/*
 * Ring r's oldest burst once built: 1 with *m and *n set (valid until
 * gpugen_fill_release), 0 when it is not built yet or nothing is in
 * flight, -EIO when the kernel failed it.
 */
int gpugen_fill_collect(struct gpugen_fill *f, uint32_t r,
		struct rte_mbuf ***m, uint32_t *n);

/* The collected burst's slot back to the ring. 0 or -errno. */
int gpugen_fill_release(struct gpugen_fill *f, uint32_t r);

/* Bursts of ring r in flight (posted, not released). */
uint32_t gpugen_fill_inflight(const struct gpugen_fill *f, uint32_t r);

/*
 * Ring r's bursts in flight forgotten, their mbufs freed: for a kernel
 * that died (they never come back). Returns how many mbufs were freed.
 */
uint32_t gpugen_fill_abandon(struct gpugen_fill *f, uint32_t r);

/*
 * One burst's way through the kernel, on the GPU's clock (%globaltimer,
 * ns; its origin is not the host's, so only differences mean anything):
 * seen, READY seen (by the ring's dispatcher or the waiting worker; with
 * launch_per_burst the item kernel's start); loaded, the burst's count,
 * descriptors and side words held by its worker block; built, the
 * block's last frame written (its stores issued); done, DONE's release
 * issued, after its fence made the frames visible to the CPU.
 */
struct gpugen_fill_times {
	uint64_t seq1;		/* the burst's number on its ring + 1; 0: none */
	uint64_t seen, loaded, built, done;
};

/*
 * Ring r's records, n of them (conf.times): record k holds the last burst
 * whose number s on the ring (0 for its first post, 1 for the next, ...)
 * has s % n == k, or seq1 0. After gpugen_fill_stop (the kernel writes a
 * record after its burst's DONE). 0; -EINVAL (no times kept, n not
 * conf.times, r out of range), -EBUSY (the kernel runs), -EIO.
 */
int gpugen_fill_times(struct gpugen_fill *f, uint32_t r,
		struct gpugen_fill_times *t, uint32_t n);

/*
 * The floor under ring r's handoff: `rounds` round trips of one 32-bit
 * flag between the calling thread and one GPU thread (lib/gpucomm's flag
 * echo), through the memory gpudev gave ring r's status words (*in_gpu
 * 1: GPU memory the CPU maps through GDRCopy; 0: registered host
 * memory). cycles[k]: TSC cycles (rte_rdtsc_precise) from round k's
 * store to its answer seen. Call it from the lcore that posts to ring r,
 * before or while the fill runs. 0, or -errno with err (-ETIMEDOUT: no
 * answer within a second).
 */
int gpugen_fill_floor(struct gpugen_fill *f, uint32_t r, uint64_t *cycles,
		uint32_t rounds, int *in_gpu, char *err, size_t errlen);

/*
 * Ends the kernel once every ring's bursts came back (the lcores
 * collected and released them): 0, or -ETIMEDOUT / -EIO with err.
 */
int gpugen_fill_stop(struct gpugen_fill *f, char *err, size_t errlen);

/* Frees everything; the kernel must have stopped (or never started). */
void gpugen_fill_close(struct gpugen_fill *f);

#ifdef __cplusplus
}
#endif

#endif /* GPUGEN_FILL_H */
