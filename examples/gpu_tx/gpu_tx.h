/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's private header: the state main.c wires together and the
 * other files share (struct app, the TX queues), the stop flag the
 * signal handler raises, and what each file offers the others.
 */
#ifndef GPUTX_GPU_TX_H
#define GPUTX_GPU_TX_H

#include <signal.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#include "gpugen.h"
#include "gpugen_fill.h"
#include "gpuapp_pool.h"
#include "tx_breakdown.h"
#include "tx_opts.h"

/* Post-to-built histogram: 1 us buckets to 20 ms, the last for longer. */
#define BUILD_LAT_BUCKETS 20000
/* Preamble, start delimiter and inter-frame gap of each frame on the
 * wire: what --rate N% (of the link) and the L1 rate count. */
#define GPUTX_L1_OVERHEAD 20

/* Bits of pkts frames of bytes bytes in all (no FCS) as --rate N bps
 * counts them: with each frame's FCS. */
static inline double
gputx_l2_bits(double bytes, double pkts)
{
	return (bytes + RTE_ETHER_CRC_LEN * pkts) * 8;
}

/* The same on the wire, as --rate N% and the L1 rate count them. */
static inline double
gputx_l1_bits(double bytes, double pkts)
{
	return gputx_l2_bits(bytes, pkts) + GPUTX_L1_OVERHEAD * 8 * pkts;
}

struct tx_stats {
	uint64_t pkts, bytes, retries, failed;
	uint64_t first_tx_ns, last_tx_ns;
	/* Where the lcore waited (TSC cycles): for the GPU, every item of
	 * its ring posted and none built yet; for mbufs, its pool empty.
	 * And the items in flight at each post, summed (GPU modes): what
	 * tells a GPU-bound queue from an lcore-bound one. */
	uint64_t wait_gpu_tsc, wait_mbuf_tsc;
	uint64_t posts, inflight_sum;
};

/* A stream's place in each round of the packet sequence (tx_streams.c). */
struct tx_sched {
	uint32_t wstart, weight;
	uint32_t id;		/* the stream's id, as stamps carry it */
	uint32_t len;		/* every frame's length, or 0: they vary */
};

/* Set by SIGINT and SIGTERM (main.c): every loop stops. */
extern volatile sig_atomic_t gputx_quit;

struct chunk_list {
	void *addr[256];
	unsigned int n;
};

struct app;

/*
 * A GPU the run builds frames on (GPU modes), or the one pool of --mem
 * cpu (id -1): its generator context, its fill (a ring for each queue it
 * serves, in queue order), and its mbuf pool, host memory registered
 * with it or its own memory, so that no build crosses GPUs.
 */
struct tx_gpu {
	int16_t id;
	uint16_t n_queues;
	struct gpugen_gpu *gg;
	struct gpugen_fill *fill;
	struct rte_mempool *pool;
	struct gpuapp_ext_pool ext;
	struct chunk_list chunks;
};

/* A TX queue and its lcore: its own counters on a line of their own. */
struct txq {
	struct app *a;
	uint16_t q;
	struct tx_gpu *g;	/* its GPU (or --mem cpu's pool) */
	uint32_t ring;		/* its ring in g's fill */
	int rc;
	struct tx_stats st;
	/* GPU builds: when each burst in flight was posted (TSC, by ring
	 * position), and post-to-built times, 1 us a bucket. */
	uint64_t *post_tsc;
	uint64_t *lat_hist;
	uint64_t posted, built;
	/* GPU builds: each burst in flight's first packet, by ring position. */
	uint64_t *post_first;
	/* --build-breakdown: the last GPUTX_BD_LOG bursts' TSC when posting
	 * began, when the post returned and when DONE was seen, three words
	 * a burst by its number on the ring; else NULL. */
	uint64_t *bd_tsc;
	/* What each stream sent from this queue (tx_streams.c). */
	uint64_t *s_pkts, *s_bytes;
} __rte_cache_aligned;

struct app {
	struct opts o;
	struct gpugen *gen;
	/* GPU modes: the GPUs in use, by first queue mapped; --mem cpu:
	 * gpu[0] alone, holding the pool. */
	struct tx_gpu gpu[MAX_QUEUES];
	unsigned int n_gpus;
	uint32_t link_mbps;
	double rate_units;	/* per second, in pkt_cost() units; 0: none */
	/* Every packet's length when all streams have one and the same (the
	 * per-packet lookup is a good part of a TX lcore's time); else 0. */
	uint32_t fixed_len;
	int fast_free;		/* the port frees sent mbufs in bulk */
	/* --csum-offload: per stream, what its mbufs carry (ol_flags with
	 * l2_len and l3_len packed as in rte_mbuf's tx_offload). */
	uint64_t *ol_flags;
	uint64_t *tx_offload;
	uint64_t ol_needed;	/* RTE_ETH_TX_OFFLOAD_*_CKSUM the port must offer */
	int one_ol;		/* every stream carries the same */
	uint64_t tsc_start, tsc_end, end_tsc;
	uint64_t tsc_per_us;
	struct txq txq[MAX_QUEUES];
	struct tx_stats st;	/* the queues' summed */
	/* Streams: their rounds, and what each sent (the queues' summed,
	 * after the run). */
	uint32_t n_streams, round;
	int streams_var;	/* a stream's frames vary in size */
	struct tx_sched *sched;
	uint64_t *s_pkts, *s_bytes;
	/* Frames the port took but did not send (its oerrors, read at the
	 * report): a write error of a file port, a NIC's TX error. */
	uint64_t port_oerrors;
	/* The measured rate fell more than 1% short of --rate (said). */
	int rate_short;
	/* --build-breakdown: the floor's round trips (TSC cycles, warm-up
	 * first), and the figures once the run is over (bd_ok). */
	uint64_t *floor_cycles;
	int floor_in_gpu;
	struct gputx_bd bd;
	int bd_ok;
};

/* tx_port.c: the GPUs, the mbuf pools, the port and its link. */
int gputx_setup_gpu(struct app *a);
int gputx_setup_pool(struct app *a, int socket);
void gputx_unmap_pools(struct app *a);
void gputx_release_pool(struct app *a);
/* Packets sent so far by the queues of GPU g (relaxed reads). */
uint64_t gputx_gpu_pkts(const struct app *a, const struct tx_gpu *g);
int gputx_setup_port(struct app *a);
int gputx_wait_link(struct app *a);
void gputx_linger(struct app *a);

/* tx_lcore.c: the TX queues, their pacing and their lcores. */
int gputx_txq_setup(struct app *a);
void gputx_txq_release(struct app *a);
int gputx_set_rate(struct app *a);
int gputx_run(struct app *a);
/* --build-breakdown: the flag floor, from queue 0's lcore, with the
 * fills started; after they stopped, the bursts' parts. 0, or -1
 * (said). */
int gputx_bd_floor(struct app *a);
int gputx_bd_collect(struct app *a);
/* The queues' counters while they run (totals; first/last times zero). */
void gputx_sent_so_far(const struct app *a, struct tx_stats *t);
/* /gpu_tx/stats for DPDK's telemetry: 0, or a negative errno. */
int gputx_telemetry_register(const struct app *a);
/* Before the run's counters are freed: queries answer -EINVAL after. */
void gputx_telemetry_detach(void);

/* tx_streams.c: per-stream counters. Count a queue's sent packets
 * first … first+n−1; len[i] is packet first+i's length (read only when
 * a stream's frames vary in size, when fixed_len is 0). */
int gputx_streams_setup(struct app *a);
void gputx_streams_release(struct app *a);
void gputx_streams_count(struct txq *T, uint64_t first, uint32_t n,
		const uint32_t *len);
void gputx_streams_so_far(const struct app *a, uint64_t *pkts,
		uint64_t *bytes);
#define GPUTX_LINE_STREAMS 8
void gputx_streams_line(const struct app *a, uint64_t *prev, double dt,
		char *buf, size_t len);

/* tx_summary.c: the end-of-run report, and its JSON with --json. */
int gputx_report(struct app *a);

#endif /* GPUTX_GPU_TX_H */
