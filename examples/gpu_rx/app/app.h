/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State shared by the main lcore, the RX lcores and the GPU path.
 */
#ifndef GPURX_APP_APP_H
#define GPURX_APP_APP_H

#include <signal.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "capture.h"
#include "filter_compile.h"
#include "flow_table.h"
#include "gpuapp_gpus.h"
#include "gpuapp_tsc.h"
#include "opts.h"
#include "stats.h"

/* GPUs of a run: each serves one queue or more. */
#define GPURX_MAX_GPUS GPURX_MAX_QUEUES
/* Ports of a run (--port LIST): each has one RX queue at least. */
#define GPURX_MAX_PORTS GPURX_MAX_QUEUES

/* One ethdev port of the run, as port.c found it. */
struct gpurx_port {
	uint16_t id;
	int socket;
	char driver[64];
	int sw_port;			/* no GPU-memory DMA (gpuapp_port.h) */
	/* Packets a port replaying files once (net_pcap without
	 * infinite_rx) will deliver: the run ends when they are in, as
	 * tcpdump -r ends with its file. 0: a live or endless port. */
	uint64_t file_pkts;
	/* Its counters as it stopped (stats_final in gpurx_app). */
	uint64_t end_imissed, end_ierrors, end_nombuf;
};

struct gpurx_gpu;
struct gpurx_flow_export;
struct gpurx_stamps;

struct gpurx_app {
	struct gpurx_opts opt;
	/*
	 * The ports of --port, in its order, each with --queues RX queues.
	 * A "queue" everywhere else is one of all of them, by its global
	 * index q = port index * --queues + the port's queue: port
	 * q_port[q], its queue q_qid[q]. So the per-queue arrays and the
	 * per-packet paths are those of one port.
	 */
	uint16_t n_ports;
	struct gpurx_port ports[GPURX_MAX_PORTS];
	uint16_t q_port[GPURX_MAX_QUEUES];	/* ethdev port id */
	uint16_t q_qid[GPURX_MAX_QUEUES];	/* RX queue of that port */
	uint16_t nq;			/* all the ports' queues */
	/* The first port's, which one-port messages name. */
	uint16_t port;
	int socket;
	const char *driver;
	/* Some port cannot DMA into GPU memory: --mem gpu refused. */
	int sw_port;
	/* The ports' file_pkts summed: 0 when any port is live. */
	uint64_t file_pkts;
	/* The ports are closed: their counters are the end_ ones (set
	 * with release, read with acquire: the telemetry thread reads). */
	int stats_final;
	enum gpurx_mem_mode mem;	/* resolved; AUTO only with --cpu */
	const char *mem_why;

	/*
	 * One pool, or with --pool-per-queue (host memory) one per RX queue:
	 * then each lcore allocates (in RX) and frees (after the GPU) only
	 * its own queue's mbufs, and no ring is shared between lcores when
	 * more mbufs are in flight than a mempool cache holds.
	 */
	struct rte_mempool *pools[GPURX_MAX_QUEUES];
	uint16_t n_pools;
	/* Each RX queue's pool in pools[]: 0 with one pool, the queue with
	 * --pool-per-queue, else its GPU's (several GPUs: one pool each, in
	 * that GPU's memory or registered with it alone). */
	uint8_t q_pool[GPURX_MAX_QUEUES];
	uint32_t pool_size;		/* mbufs per pool */
	uint16_t data_room;
	/*
	 * --split: the first `split` bytes of every packet go into a buffer
	 * of a header pool (host memory), the rest into the pool(s) above
	 * (GPU memory, or host with --cpu). A header pool per GPU, registered
	 * with it alone (hdr_pools[k]: the kth GPU's), one with --cpu. split
	 * 0: no buffer split, no header pool.
	 */
	uint32_t split;
	struct rte_mempool *hdr_pools[GPURX_MAX_GPUS];
	uint16_t n_hdr_pools;

	struct gpurx_filter filter;
	struct gpurx_flow_table *ft;	/* host table: live (CPU), copy (GPU) */
	struct gpurx_capture *cap;
	struct gpuapp_tsc clk;

	/* Port timestamps (--ts port). */
	int ts_off;			/* dynfield offset, -1 when unused */
	uint64_t ts_flag;
	int ts_in_us;			/* net_pcap stores microseconds */

	/*
	 * GPU modes: the GPUs --gpus gives the queues, in the order of
	 * their first queue, each with its own kernel, rings, pools and
	 * flow table (struct gpurx_gpu); queue q is ring q_ring[q] of
	 * gpus[q_gpu[q]].
	 */
	uint16_t n_gpus;
	struct gpurx_gpu *gpus[GPURX_MAX_GPUS];
	uint8_t q_gpu[GPURX_MAX_QUEUES];
	uint16_t q_ring[GPURX_MAX_QUEUES];
	struct gpurx_flow_export *fx;	/* flow export (flow_export.c) */
	struct gpurx_stamps *stamps;	/* --stamps, else NULL */

	uint64_t admitted;		/* taken against --count-received */
	uint64_t matches_taken;		/* taken against -c/--count */
	volatile int stop;		/* RX lcores: stop receiving, drain */
	struct gpurx_qstats qs[GPURX_MAX_QUEUES];
};

extern struct gpurx_app gpurx_app;

/* The port of RX queue q (its index over every port's queues). */
static inline const struct gpurx_port *
gpurx_queue_port(const struct gpurx_app *a, uint16_t q)
{
	return &a->ports[q / a->opt.queues];
}

static inline struct rte_mempool *
gpurx_queue_pool(const struct gpurx_app *a, uint16_t q)
{
	return a->pools[a->q_pool[q]];
}

/* --split: RX queue q's header pool. */
static inline struct rte_mempool *
gpurx_queue_hdr_pool(const struct gpurx_app *a, uint16_t q)
{
	return a->hdr_pools[a->n_hdr_pools > 1 ? a->q_gpu[q] : 0];
}

/*
 * Whether m can go back to `pool` without rte_pktmbuf_free()'s per-mbuf
 * work: direct, not shared, one segment (so m->next is NULL, as
 * rte_mbuf_check() requires) and from that pool. Reads only the first
 * cache line of the mbuf, which RX has just written.
 */
static inline int
gpurx_mbuf_plain(const struct rte_mbuf *m, const struct rte_mempool *pool)
{
	return m->pool == pool && m->nb_segs == 1 && RTE_MBUF_DIRECT(m) &&
		rte_mbuf_refcnt_read(m) == 1;
}

/* The pool of pkts[0..n) (n > 0) if they are all plain mbufs of it,
 * else NULL. */
static inline struct rte_mempool *
gpurx_mbufs_plain_pool(struct rte_mbuf *const *pkts, unsigned int n)
{
	struct rte_mempool *pool = pkts[0]->pool;

	for (unsigned int i = 0; i < n; i++)
		if (!gpurx_mbuf_plain(pkts[i], pool))
			return NULL;
	return pool;
}

/*
 * Frees pkts[0..n). plain_pool: the pool all of them are plain mbufs of
 * (gpurx_mbuf_plain), then they go back to it as they are, like a PMD's
 * RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE; else NULL. rte_pktmbuf_free_bulk()
 * reads two cache lines of each mbuf again: a fifth of a GPU-mode RX
 * lcore's time at 64 B (perf on the H100: git show
 * 405aef3:doc/performance.md).
 */
static inline void
gpurx_mbufs_free(struct rte_mbuf **pkts, unsigned int n,
		struct rte_mempool *plain_pool)
{
	if (plain_pool != NULL)
		rte_mempool_put_bulk(plain_pool, (void *const *)pkts, n);
	else
		rte_pktmbuf_free_bulk(pkts, n);
}

/*
 * Bytes of packet m to linearize and classify: its length, at most
 * GPURX_SCRATCH_BYTES, and never more than its segments hold. A chain
 * can hold less than pkt_len: DPDK 22.11's net_pcap keeps the frame
 * length in 16 bits while chaining, so a frame longer than 65535 bytes
 * plus its first segment arrives with only (length mod 65536) bytes, and
 * rte_pktmbuf_read() would walk off the chain. *short_chain is set then.
 */
static inline uint32_t
gpurx_pkt_linear_len(const struct rte_mbuf *m, int *short_chain)
{
	uint32_t want = RTE_MIN(rte_pktmbuf_pkt_len(m),
		(uint32_t)GPURX_SCRATCH_BYTES);
	uint32_t held = 0;

	*short_chain = 0;
	if (likely(m->nb_segs == 1 && m->data_len >= want))
		return want;
	for (const struct rte_mbuf *s = m; s != NULL && held < want; s = s->next)
		held += s->data_len;
	if (held >= want)
		return want;
	*short_chain = 1;
	return held;
}

/* Timestamp of a received packet in ns since the epoch. */
static inline uint64_t
gpurx_pkt_ts(const struct gpurx_app *a, const struct rte_mbuf *m,
		uint64_t rx_ns)
{
	if (a->ts_off >= 0 && (m->ol_flags & a->ts_flag)) {
		uint64_t v = *RTE_MBUF_DYNFIELD(m, a->ts_off,
			const rte_mbuf_timestamp_t *);

		return a->ts_in_us ? v * 1000 : v;
	}
	return rx_ns;
}

/*
 * Take up to n of *taken's budget (limit; 0: none), shared by the RX
 * lcores. Returns how many may go on; sets a->stop once the limit is
 * reached.
 */
static inline uint32_t
gpurx_take(struct gpurx_app *a, uint64_t *taken, uint64_t limit, uint32_t n)
{
	uint64_t old;

	if (limit == 0 || n == 0)
		return n;
	old = __atomic_fetch_add(taken, n, __ATOMIC_RELAXED);
	if (old + n >= limit)
		a->stop = 1;
	if (old >= limit)
		return 0;
	return (uint32_t)RTE_MIN((uint64_t)n, limit - old);
}

/* Packets of a burst to process against --count-received; the rest are
 * freed uncounted. */
static inline uint16_t
gpurx_admit(struct gpurx_app *a, uint16_t n)
{
	return (uint16_t)gpurx_take(a, &a->admitted, a->opt.count_received, n);
}

/* Matched packets that count against -c/--count, as tcpdump -c: of n
 * matches, how many may be captured and counted. */
static inline uint32_t
gpurx_take_matches(struct gpurx_app *a, uint32_t n)
{
	return gpurx_take(a, &a->matches_taken, a->opt.count, n);
}

/* Ports and pools (port.c). probe: every port of --port, the queues'
 * global indexes. */
int gpurx_port_probe(struct gpurx_app *a);
int gpurx_port_setup(struct gpurx_app *a);
/* Per-lcore mempool cache size for a pool of a->pool_size mbufs, or -1
 * (said why) when --mbuf-cache is too large for it. */
int gpurx_mbuf_cache(const struct gpurx_app *a);
void gpurx_port_close(struct gpurx_app *a);
/*
 * The port index of each of n RX queues into ft's header, for the keys of
 * their flows (the same 5-tuple on two ports is two flows): queue r is
 * the run's queue queues[r], or r where queues is NULL (the CPU path's
 * table; a GPU's kernel knows a queue by its ring). 0, or -1 after
 * saying why, naming `who`.
 */
int gpurx_flow_queue_ports(const struct gpurx_app *a, const uint16_t *queues,
		uint16_t n, struct gpurx_flow_table *ft, const char *who);

/* Ports replaying a file (port_file.c): 0, or -1 (said why) when one of
 * net_pcap's rx_pcap files is malformed; sets p->file_pkts. A warning
 * when such a port counted ierrors. */
int gpurx_port_file_check(struct gpurx_port *p);
void gpurx_port_file_warn(const struct gpurx_port *p, uint64_t ierrors);

/* CPU path (rx_cpu.c): lcore body for one queue. */
int gpurx_rx_cpu_lcore(void *arg);

#endif /* GPURX_APP_APP_H */
