/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx --build-breakdown: where a GPU-built burst's time goes,
 * against the flag floor of the same run. The arithmetic, the text and
 * the JSON, with no DPDK or CUDA: what the lcores and the kernel timed
 * comes in as numbers, so that CI checks it without a GPU.
 *
 * A burst's parts, host times from the TSC and GPU times from
 * %globaltimer (gpugen_fill_times):
 *   total    the lcore begins posting -> it sees DONE (the build latency)
 *   post     its post: descriptors, side words, barrier, READY
 *   handoff  post returned -> READY seen on the GPU, plus DONE released
 *            -> the lcore sees it: total - post - (GPU done - GPU seen).
 *            Two one-way trips of a flag, as the floor is; each alone
 *            would need the offset between the two clocks, which one
 *            round trip bounds only to half of itself (about 1.2 us,
 *            each leg's own size), so their sum is what is measured
 *   load     READY seen -> count, descriptors and side words held
 *   build    -> the block's last frame written
 *   publish  -> DONE released (its fence drains the frames' writes)
 * Each part's median and p99 (nearest rank) over the bursts, and each
 * divided by the floor's median and p99: the flag ping-pong between the
 * TX lcore and a GPU thread through the memory of the ring's statuses.
 */
#ifndef GPUTX_TX_BREAKDOWN_H
#define GPUTX_TX_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuapp_json.h"

/* Bursts of each queue whose times are kept: the last ones posted. */
#define GPUTX_BD_LOG 16384
/* Floor round trips: the first GPUTX_BD_FLOOR_WARMUP are not counted. */
#define GPUTX_BD_FLOOR_WARMUP 1000
#define GPUTX_BD_FLOOR_ROUNDS 10000

enum gputx_bd_part {
	GPUTX_BD_TOTAL,
	GPUTX_BD_POST,
	GPUTX_BD_HANDOFF,
	GPUTX_BD_LOAD,
	GPUTX_BD_BUILD,
	GPUTX_BD_PUBLISH,
	GPUTX_BD_PARTS
};

/* One burst as the lcore (TSC cycles) and the kernel (GPU ns) saw it. */
struct gputx_bd_burst {
	uint64_t post, posted, seen;	/* post begun, post returned, DONE seen */
	uint64_t g_seen, g_loaded, g_built, g_done;
};

struct gputx_bd_stat {
	double median, p99;	/* ns */
};

struct gputx_bd {
	uint64_t bursts;	/* bursts timed by both sides */
	struct gputx_bd_stat part[GPUTX_BD_PARTS];
	struct gputx_bd_stat floor;
	uint32_t floor_rounds;	/* counted */
	int floor_in_gpu;	/* the flag in GPU memory (GDRCopy) */
	int per_burst;		/* launch per burst: seen is the kernel's start */
};

/* The name of part p, as the text and the JSON say it. */
const char *gputx_bd_part_name(enum gputx_bd_part p);

/* Burst b's parts in ns, host cycles at tsc_hz. */
void gputx_bd_parts(const struct gputx_bd_burst *b, double tsc_hz,
		double part[GPUTX_BD_PARTS]);

/*
 * Median and p99 of n bursts' parts and of nf floor round trips (TSC
 * cycles at tsc_hz) into bd (its floor_in_gpu and per_burst untouched).
 * 0; -EINVAL for no burst or no round; -ENOMEM.
 */
int gputx_bd_compute(const struct gputx_bd_burst *b, size_t n,
		const uint64_t *floor_cycles, size_t nf, double tsc_hz,
		struct gputx_bd *bd);

/* The summary's lines. */
void gputx_bd_text(const struct gputx_bd *bd, FILE *f);

/* "build_breakdown_us": { ... } into the summary's object. */
void gputx_bd_json(const struct gputx_bd *bd, struct gpuapp_json *j);

#endif /* GPUTX_TX_BREAKDOWN_H */
