/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx: the traffic generator over libgpugen. Streams from specs
 * or pcap files; each burst's frames built by the CPU reference (--mem
 * cpu) or by the GPU into host-mapped or GPU-memory mbufs, then posted to
 * any DPDK port at a rate the CPU paces, from one or more TX lcores (a TX
 * queue each). On the GPU a persistent kernel builds the bursts the TX
 * lcores post to it through gpudev communication lists (gpugen_fill.h),
 * or a kernel is launched per burst (--launch-per-burst). Usage:
 * doc/gpu_tx.md.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "gpugen.h"
#include "gpugen_fill.h"
#include "gpupkt_clock.h"
#include "gpupkt_eal.h"
#include "gpupkt_pool.h"
#include "gpupkt_port.h"
#include "gpupkt_lat_hist.h"
#include "gpupkt_tsc.h"

#define MAX_BURST 512
#define MAX_QUEUES 32
#define DEFAULT_RING_ITEMS 8
#define MAX_STREAM_ARGS 64
/* Preamble, start delimiter and inter-frame gap: what % of link counts. */
#define WIRE_OVERHEAD 20

enum mem_mode { MEM_CPU, MEM_HOST_MAPPED, MEM_GPU };
enum rate_unit { RATE_NONE, RATE_PPS, RATE_BPS, RATE_PCT };

struct opts {
	const char *streams[MAX_STREAM_ARGS];
	char *pcap_specs[MAX_STREAM_ARGS];
	unsigned int n_streams;
	uint16_t port;
	uint32_t burst;
	uint64_t count;		/* 0: no limit */
	double duration;	/* s; 0: no limit */
	enum rate_unit unit;
	double rate;
	enum mem_mode mem;
	uint64_t seed;
	uint32_t mbufs;
	double wait_link;	/* s; 0: send with the link down */
	double linger;		/* s the port stays up after the last burst */
	const char *json;
	uint16_t queues;	/* TX queues, an lcore each */
	uint32_t ring_items;	/* GPU: bursts in flight per queue */
	int launch_per_burst;	/* GPU: a kernel per burst */
	int no_build;		/* benchmark baseline: frames not built */
	int no_fast_free;	/* benchmark baseline: per-packet TX frees */
	int csum_offload;	/* IPv4/UDP/TCP checksums left to the port */
	int table_in_host;	/* GPU builds read the streams from host memory */
};

struct tx_stats {
	uint64_t pkts, bytes, retries, failed;
	uint64_t first_tx_ns, last_tx_ns;
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
		"  --stream SPEC     a stream (repeatable; syntax in doc/gpu_tx.md)\n"
		"  --pcap FILE       a stream from the file's first packet\n"
		"                    (--stream pcap=FILE,all for all of them)\n"
		"  --port N          port to send on (default 0)\n"
		"  --rate R          N[k|M|G]pps, N[k|M|G]bps (frame bits with FCS)\n"
		"                    or N%% of the link (on-wire); default: as fast\n"
		"                    as the port takes\n"
		"  --count N         stop after N packets\n"
		"  --duration S      stop after S seconds\n"
		"  --mem MODE        cpu (CPU build, no GPU), host-mapped, gpu\n"
		"                    (default cpu)\n"
		"  --burst N         packets per burst (default 32, max %d)\n"
		"  --queues N        TX queues, each sent by a worker lcore of\n"
		"                    its own (default 1; one queue runs on the\n"
		"                    main lcore when there is no worker)\n"
		"  --ring-items N    GPU: bursts in flight per queue (default %d)\n"
		"  --launch-per-burst GPU: a kernel launch per burst instead of\n"
		"                    the persistent kernel\n"
		"  --no-build        benchmark baseline (with --mem cpu): send the\n"
		"                    streams' lengths unbuilt, the TX lcore's own\n"
		"                    ceiling\n"
		"  --table-in-host   GPU builds read the streams (templates, field\n"
		"                    engine) from host memory, not GPU memory\n"
		"                    (for comparison)\n"
		"  --csum-offload    leave IPv4, UDP and TCP checksums to the\n"
		"                    port's TX checksum offload\n"
		"  --no-fast-free    benchmark baseline: do not ask the port for\n"
		"                    bulk frees of sent mbufs (MBUF_FAST_FREE)\n"
		"  --seed N          default seed of the streams (default 1)\n"
		"  --mbufs N         mbuf pool size\n"
		"  --wait-link S     wait up to S s for the link to come up\n"
		"                    (default 10; 0: do not wait)\n"
		"  --linger S        keep the port up S s after the last burst,\n"
		"                    or until its link goes down (default 0)\n"
		"  --json FILE       summary as JSON ('-' for stdout)\n",
		prog, MAX_BURST, DEFAULT_RING_ITEMS);
}

static int
parse_u64_arg(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*s == '-' || *s == '\0')
		return -1;
	*v = strtoull(s, &end, 0);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

/* --name's value, a number in lo..hi; else said, -1. */
static int
parse_range(const char *name, const char *s, uint64_t lo, uint64_t hi,
		uint64_t *v)
{
	if (parse_u64_arg(s, v) == 0 && *v >= lo && *v <= hi)
		return 0;
	fprintf(stderr, "error: --%s %s: %" PRIu64 "..%" PRIu64 "\n", name, s,
		lo, hi);
	return -1;
}

static int
parse_rate(const char *s, struct opts *o)
{
	char *end;
	double v, mult = 1;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v <= 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		mult = 1e3, end++;
	else if (*end == 'M')
		mult = 1e6, end++;
	else if (*end == 'G')
		mult = 1e9, end++;
	if (*end == '\0' || strcmp(end, "pps") == 0)
		o->unit = RATE_PPS;
	else if (strcmp(end, "bps") == 0)
		o->unit = RATE_BPS;
	else if (strcmp(end, "%") == 0 && mult == 1 && v <= 100)
		o->unit = RATE_PCT;
	else
		return -1;
	o->rate = v * mult;
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "stream", required_argument, NULL, 's' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "port", required_argument, NULL, 'P' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mem", required_argument, NULL, 'm' },
		{ "burst", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'S' },
		{ "mbufs", required_argument, NULL, 'M' },
		{ "json", required_argument, NULL, 'j' },
		{ "wait-link", required_argument, NULL, 'W' },
		{ "linger", required_argument, NULL, 'L' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "ring-items", required_argument, NULL, 'I' },
		{ "launch-per-burst", no_argument, NULL, 'B' },
		{ "no-build", no_argument, NULL, 'N' },
		{ "no-fast-free", no_argument, NULL, 'F' },
		{ "csum-offload", no_argument, NULL, 'C' },
		{ "table-in-host", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	char *end;
	double d;
	int c;

	memset(o, 0, sizeof(*o));
	o->burst = 32;
	o->seed = 1;
	o->mem = MEM_CPU;
	o->wait_link = 10;
	o->queues = 1;
	o->ring_items = DEFAULT_RING_ITEMS;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'p':
			if (o->n_streams == MAX_STREAM_ARGS) {
				fprintf(stderr, "error: more than %d --stream/--pcap\n",
					MAX_STREAM_ARGS);
				return -1;
			}
			if (c == 'p') {
				size_t n = strlen(optarg) + 6;
				char *s = malloc(n);

				if (s == NULL)
					return -1;
				snprintf(s, n, "pcap=%s", optarg);
				o->pcap_specs[o->n_streams] = s;
				o->streams[o->n_streams++] = s;
			} else {
				o->streams[o->n_streams++] = optarg;
			}
			break;
		case 'P':
			if (parse_u64_arg(optarg, &v) != 0 || v >= RTE_MAX_ETHPORTS) {
				fprintf(stderr, "error: --port %s: not a port number\n",
					optarg);
				return -1;
			}
			o->port = (uint16_t)v;
			break;
		case 'r':
			if (parse_rate(optarg, o) != 0) {
				fprintf(stderr, "error: --rate %s: want N[k|M|G]pps, "
					"N[k|M|G]bps or N%% (0 < N <= 100)\n", optarg);
				return -1;
			}
			break;
		case 'c':
			if (parse_u64_arg(optarg, &o->count) != 0 || o->count == 0) {
				fprintf(stderr, "error: --count %s: a number >= 1\n",
					optarg);
				return -1;
			}
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || o->duration <= 0) {
				fprintf(stderr, "error: --duration %s: seconds > 0\n",
					optarg);
				return -1;
			}
			break;
		case 'm':
			if (strcmp(optarg, "cpu") == 0)
				o->mem = MEM_CPU;
			else if (strcmp(optarg, "host-mapped") == 0)
				o->mem = MEM_HOST_MAPPED;
			else if (strcmp(optarg, "gpu") == 0)
				o->mem = MEM_GPU;
			else {
				fprintf(stderr, "error: --mem %s: cpu, host-mapped or "
					"gpu\n", optarg);
				return -1;
			}
			break;
		case 'b':
			if (parse_range("burst", optarg, 1, MAX_BURST, &v) != 0)
				return -1;
			o->burst = (uint32_t)v;
			break;
		case 'S':
			if (parse_u64_arg(optarg, &o->seed) != 0) {
				fprintf(stderr, "error: --seed %s: a number\n", optarg);
				return -1;
			}
			break;
		case 'M':
			if (parse_u64_arg(optarg, &v) != 0 || v < 64 ||
					v > UINT32_MAX) {
				fprintf(stderr, "error: --mbufs %s: 64 or more\n",
					optarg);
				return -1;
			}
			o->mbufs = (uint32_t)v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'Q':
			if (parse_range("queues", optarg, 1, MAX_QUEUES, &v) != 0)
				return -1;
			o->queues = (uint16_t)v;
			break;
		case 'I':
			if (parse_range("ring-items", optarg, 2, 1024, &v) != 0)
				return -1;
			o->ring_items = (uint32_t)v;
			break;
		case 'B':
			o->launch_per_burst = 1;
			break;
		case 'N':
			o->no_build = 1;
			break;
		case 'F':
			o->no_fast_free = 1;
			break;
		case 'C':
			o->csum_offload = 1;
			break;
		case 'T':
			o->table_in_host = 1;
			break;
		case 'W':
		case 'L':
			errno = 0;
			d = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
					!(d >= 0 && d <= 86400)) {
				fprintf(stderr, "error: --%s %s: seconds, 0 to 86400\n",
					c == 'W' ? "wait-link" : "linger", optarg);
				return -1;
			}
			if (c == 'W')
				o->wait_link = d;
			else
				o->linger = d;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->n_streams == 0) {
		fprintf(stderr, "error: no stream: give --stream SPEC or --pcap "
			"FILE\n");
		return -1;
	}
	if (o->no_build && o->mem != MEM_CPU) {
		fprintf(stderr, "error: --no-build is the CPU lcore's baseline: "
			"with --mem cpu only\n");
		return -1;
	}
	return 0;
}

static const char *
mem_str(enum mem_mode m)
{
	return m == MEM_CPU ? "cpu" : m == MEM_HOST_MAPPED ? "host-mapped" :
		"gpu";
}

/* What one packet of len bytes (no FCS) costs against the rate. */
static double
pkt_cost(const struct opts *o, uint32_t len)
{
	switch (o->unit) {
	case RATE_BPS: return (len + 4.0) * 8;
	case RATE_PCT: return (len + 4.0 + WIRE_OVERHEAD) * 8;
	default: return 1;
	}
}

struct chunk_list {
	void *addr[256];
	unsigned int n;
};

static int
track_chunk(void *opaque, void *addr, size_t len)
{
	struct chunk_list *l = opaque;

	(void)len;
	if (l->n == RTE_DIM(l->addr)) {
		fprintf(stderr, "error: more than %zu mempool chunks\n",
			RTE_DIM(l->addr));
		return -1;
	}
	l->addr[l->n++] = addr;
	return 0;
}

struct app;

/* A TX queue and its lcore: its own counters on a line of their own. */
struct txq {
	struct app *a;
	uint16_t q;
	int rc;
	struct tx_stats st;
	/* GPU builds: when each burst in flight was posted (TSC, by ring
	 * position), and post-to-built times, 1 us a bucket. */
	uint64_t *post_tsc;
	uint64_t *lat_hist;
	uint64_t posted, built;
} __rte_cache_aligned;

/* Post-to-built histogram: 1 us buckets to 20 ms, the last for longer. */
#define BUILD_LAT_BUCKETS 20000

struct app {
	struct opts o;
	struct gpugen *gen;
	struct gpugen_gpu *gg;
	struct gpugen_fill *fill;
	int16_t gpu_id;
	struct rte_mempool *pool;
	struct gpupkt_ext_pool ext;
	struct chunk_list chunks;
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
};

static int
setup_gpu(struct app *a)
{
	a->gpu_id = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (rte_gpu_count_avail() == 0 || a->gpu_id < 0) {
		fprintf(stderr, "error: --mem %s: no GPU probed by DPDK gpudev "
			"(%s); it needs an NVIDIA GPU and its driver; or run with "
			"--mem cpu\n", mem_str(a->o.mem), gpupkt_gpu_driver());
		return -1;
	}
	return 0;
}

static int
setup_pool(struct app *a, int socket)
{
	/* Per queue: the bursts in flight to the GPU, the port's ring, one
	 * burst being posted and the lcore's mempool cache. */
	uint64_t need = (uint64_t)a->o.queues * ((uint64_t)(a->o.mem ==
		MEM_CPU ? 1 : a->o.ring_items) * a->o.burst + 1024 +
		a->o.burst + 256);
	uint32_t n = a->o.mbufs ? a->o.mbufs :
		(uint32_t)RTE_MAX((uint64_t)8191, need + need / 4);
	char err[256];
	int rc;

	if (a->o.mem == MEM_GPU) {
		rc = gpupkt_ext_pool_create(&a->ext, "gputx_mbufs_gpu", a->gpu_id,
			a->o.port, n, 256, RTE_MBUF_DEFAULT_BUF_SIZE, socket, 0,
			err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "error: --mem gpu: port %u: %s%s\n",
				a->o.port, err, rc == 1 ? "; use --mem "
				"host-mapped" : "");
			return -1;
		}
		a->pool = a->ext.mp;
		return 0;
	}
	a->pool = rte_pktmbuf_pool_create("gputx_mbufs", n, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (a->pool == NULL) {
		fprintf(stderr, "error: mbuf pool of %u: %s\n", n,
			rte_strerror(rte_errno));
		return -1;
	}
	if (a->o.mem == MEM_HOST_MAPPED &&
			gpupkt_pool_register(a->gpu_id, a->pool, track_chunk,
			&a->chunks, err, sizeof(err)) != 0) {
		fprintf(stderr, "error: --mem host-mapped: %s\n", err);
		return -1;
	}
	return 0;
}

static void
release_pool(struct app *a)
{
	for (unsigned int k = 0; k < a->chunks.n; k++)
		if (rte_gpu_mem_unregister(a->gpu_id, a->chunks.addr[k]) != 0)
			fprintf(stderr, "warning: rte_gpu_mem_unregister: %s\n",
				rte_strerror(rte_errno));
	a->chunks.n = 0;
	if (a->o.mem == MEM_GPU)
		gpupkt_ext_pool_free(&a->ext);
	else
		rte_mempool_free(a->pool);
	a->pool = NULL;
}

static int
setup_port(struct app *a)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	uint16_t nb_rxd = 0, nb_txd = 1024;
	int rc;

	rc = rte_eth_dev_info_get(a->o.port, &di);
	if (rc != 0) {
		fprintf(stderr, "error: port %u: %s\n", a->o.port,
			rte_strerror(-rc));
		return -1;
	}
	if (a->o.mem == MEM_GPU && !gpupkt_port_is_gpudma(a->o.port) &&
			(di.device == NULL || strcmp(rte_bus_name(
			rte_dev_bus(di.device)), "vdev") == 0)) {
		fprintf(stderr, "error: --mem gpu: port %u (%s) moves frames with "
			"the CPU and cannot read GPU memory; use a NIC, net_gpudma, "
			"or --mem host-mapped\n", a->o.port, di.driver_name);
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	if (a->o.queues > di.max_tx_queues) {
		fprintf(stderr, "error: --queues %u: port %u (%s) has at most %u "
			"TX queues\n", a->o.queues, a->o.port, di.driver_name,
			di.max_tx_queues);
		return -1;
	}
	if ((di.tx_offload_capa & a->ol_needed) != a->ol_needed) {
		uint64_t miss = a->ol_needed & ~di.tx_offload_capa;

		fprintf(stderr, "error: --csum-offload: port %u (%s) offers no TX "
			"checksum offload for%s%s%s; without --csum-offload the "
			"generator computes them\n", a->o.port, di.driver_name,
			miss & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM ? " IPv4" : "",
			miss & RTE_ETH_TX_OFFLOAD_UDP_CKSUM ? " UDP" : "",
			miss & RTE_ETH_TX_OFFLOAD_TCP_CKSUM ? " TCP" : "");
		return -1;
	}
	conf.txmode.offloads |= a->ol_needed;
	/* Every mbuf comes from a->pool, one segment, refcnt 1, never
	 * attached: the port may free sent ones in bulk, as NICs do. */
	a->fast_free = !a->o.no_fast_free &&
		(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	if (a->fast_free)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	rc = rte_eth_dev_configure(a->o.port, 0, a->o.queues, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(a->o.port, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; rc == 0 && q < a->o.queues; q++)
		rc = rte_eth_tx_queue_setup(a->o.port, q, nb_txd,
			rte_eth_dev_socket_id(a->o.port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(a->o.port);
	if (rc != 0) {
		fprintf(stderr, "error: port %u (%s) setup: %s\n", a->o.port,
			di.driver_name, rte_strerror(-rc));
		return -1;
	}
	if (rte_eth_link_get_nowait(a->o.port, &link) == 0 &&
			link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
			link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		a->link_mbps = link.link_speed;
	printf("port %u: %s, link %u Mb/s%s%s\n", a->o.port, di.driver_name,
		a->link_mbps, a->fast_free ? ", bulk TX frees" : "",
		a->ol_needed != 0 ? ", TX checksums offloaded" : "");
	return 0;
}

/*
 * Until the link is up a port may take nothing (net_memif before its
 * client connects) or drop what it takes: the run, its count and its
 * rate start once there is someone to send to.
 */
static int
wait_link(struct app *a)
{
	uint64_t hz = gpupkt_tsc_hz(), start = rte_rdtsc();
	struct rte_eth_link link;
	int said = 0, rc;

	for (;;) {
		rc = rte_eth_link_get_nowait(a->o.port, &link);
		if (rc != 0) {
			/* A port that cannot tell is taken as up. */
			fprintf(stderr, "warning: port %u: link status: %s; sending "
				"without waiting\n", a->o.port, rte_strerror(-rc));
			return 0;
		}
		if (link.link_status == RTE_ETH_LINK_UP)
			break;
		if (quit)
			return -1;
		if ((double)(rte_rdtsc() - start) / hz >= a->o.wait_link) {
			fprintf(stderr, "error: port %u: link still down after "
				"%g s (net_memif: no client connected; a cable, the "
				"peer?); --wait-link S waits longer, 0 sends anyway\n",
				a->o.port, a->o.wait_link);
			return -1;
		}
		if (!said) {
			/* Flushed: a script starts the peer on this line. */
			printf("port %u: waiting up to %g s for the link\n",
				a->o.port, a->o.wait_link);
			fflush(stdout);
			said = 1;
		}
		rte_delay_us_sleep(10 * 1000);
	}
	if (link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
			link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		a->link_mbps = link.link_speed;
	if (said)
		printf("port %u: link up, %u Mb/s\n", a->o.port, a->link_mbps);
	return 0;
}

static int
set_rate(struct app *a)
{
	const struct opts *o = &a->o;

	if (o->unit == RATE_NONE) {
		a->rate_units = 0;
		return 0;
	}
	if (o->unit == RATE_PCT) {
		if (a->link_mbps == 0) {
			fprintf(stderr, "error: --rate %g%%: port %u reports no link "
				"speed; give pps or bps\n", o->rate, o->port);
			return -1;
		}
		a->rate_units = o->rate / 100 * a->link_mbps * 1e6;
	} else {
		a->rate_units = o->rate;
	}
	if (o->unit == RATE_BPS && a->link_mbps != 0 &&
			o->rate > a->link_mbps * 1e6)
		fprintf(stderr, "warning: --rate %g bps beyond port %u's link "
			"(%u Mb/s): the port sets the rate\n", o->rate, o->port,
			a->link_mbps);
	return 0;
}

/*
 * Post the burst until the port took every packet; stopped half way, the
 * rest is freed and counted as failed, never lost unsaid. The lengths
 * are read before: a frame the port took is the port's, and may already
 * be back in the pool and taken by another lcore.
 */
static void
post(struct txq *T, struct rte_mbuf **m, uint16_t n)
{
	const uint16_t port = T->a->o.port;
	const uint32_t fixed = T->a->fixed_len;
	uint32_t len[MAX_BURST];
	uint16_t done = 0;

	if (fixed == 0)
		for (uint16_t j = 0; j < n; j++)
			len[j] = m[j]->pkt_len;
	while (done < n) {
		uint16_t k = rte_eth_tx_burst(port, T->q, m + done, n - done);

		if (fixed != 0)
			T->st.bytes += (uint64_t)k * fixed;
		else
			for (uint16_t j = done; j < done + k; j++)
				T->st.bytes += len[j];
		done += k;
		T->st.pkts += k;
		if (done < n) {
			T->st.retries++;
			if (quit) {
				T->st.failed += n - done;
				rte_pktmbuf_free_bulk(m + done, n - done);
				return;
			}
			rte_pause();
		}
	}
}

/*
 * n mbufs of the pool, for single-segment frames: 0 or -ENOENT. Not
 * rte_pktmbuf_alloc_bulk: its reset writes each mbuf's second cache line
 * (next, tx_offload), a miss per packet that was the TX lcore's largest
 * cost (perf, --no-build at 64 B). The pool holds only this program's
 * mbufs, which come back through rte_pktmbuf_free or the port's bulk
 * free (next NULL, one segment, refcnt 1: the raw state) and carry no
 * VLAN tags, nor offload flags unless --csum-offload, which sets them on
 * every mbuf; the caller sets the first line's data_off and lengths, in
 * the one pass it makes over the burst.
 */
static inline int
alloc_raw(struct rte_mempool *mp, struct rte_mbuf **m, uint32_t n)
{
	if (rte_mempool_get_bulk(mp, (void **)m, n) != 0)
		return -ENOENT;
#ifdef RTE_LIBRTE_MBUF_DEBUG
	for (uint32_t i = 0; i < n; i++)
		__rte_mbuf_raw_sanity_check(m[i]);
#endif
	return 0;
}

/*
 * Sends the bursts the GPU has built, oldest first, as long as there
 * are some. 0, or -1 when the kernel failed one (said).
 */
static int
send_built(struct txq *T)
{
	struct app *a = T->a;
	struct rte_mbuf **m;
	uint32_t n;
	int rc;

	while ((rc = gpugen_fill_collect(a->fill, T->q, &m, &n)) == 1) {
		/* Bursts come back in post order. */
		gpupkt_lat_hist_add(T->lat_hist, BUILD_LAT_BUCKETS,
			(rte_rdtsc() - T->post_tsc[T->built++ % a->o.ring_items]) /
			a->tsc_per_us);
		post(T, m, (uint16_t)n);
		rc = gpugen_fill_release(a->fill, T->q);
		if (rc != 0)
			break;
	}
	if (rc < 0) {
		fprintf(stderr, "error: queue %u: GPU build: %s\n", T->q,
			rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * A TX queue's lcore. Bursts of the global packet sequence are dealt out
 * round robin (queue q sends bursts q, q + queues, ...), so every packet
 * is the same whatever the number of queues, and each queue paces its
 * share of the rate. With the GPU, up to --ring-items bursts are being
 * built while earlier ones are sent.
 */
static int
tx_lcore(void *arg)
{
	struct txq *T = arg;
	struct app *a = T->a;
	const struct opts *o = &a->o;
	const uint64_t hz = gpupkt_tsc_hz();
	const double rate = a->rate_units / o->queues;
	/* Two bursts of credit at most: a stall is not made up by a flood. */
	const double cap = 2.0 * o->burst * pkt_cost(o, gpugen_max_len(a->gen));
	/* Locals: the per-packet loop stores through mbuf pointers, after
	 * which the compiler would load these again each packet. */
	const uint32_t fixed = a->fixed_len;
	const int cpu_build = o->mem == MEM_CPU && !o->no_build;
	/* --csum-offload: the same flags for every packet, or per stream. */
	const int ol = a->ol_needed != 0;
	const uint64_t ol_flags = a->ol_flags[0], tx_offload = a->tx_offload[0];
	const int raw_post = a->fill != NULL && !ol;
	struct rte_mbuf *m[MAX_BURST];
	uint64_t k = T->q, last = rte_rdtsc();
	double tokens = 0;
	int posting = 1;

	T->rc = 0;
	for (;;) {
		uint64_t first = k * o->burst, tx_ns;
		uint32_t b = o->burst;
		double cost = 0;
		int rc;

		if (a->fill != NULL && send_built(T) != 0) {
			/* The kernel failed a burst: the rest will not come
			 * back either; their mbufs are freed and counted. */
			T->st.failed += gpugen_fill_abandon(a->fill, T->q);
			T->rc = -1;
			break;
		}
		if (posting && (quit || (a->end_tsc && rte_rdtsc() >= a->end_tsc) ||
				(o->count != 0 && first >= o->count)))
			posting = 0;
		if (!posting) {
			if (a->fill == NULL || gpugen_fill_inflight(a->fill,
					T->q) == 0)
				break;
			rte_pause();
			continue;
		}
		if (a->fill != NULL && gpugen_fill_inflight(a->fill, T->q) ==
				o->ring_items) {
			rte_pause();
			continue;
		}
		if (o->count != 0 && o->count - first < b)
			b = (uint32_t)(o->count - first);
		if (rate > 0) {
			uint64_t t;

			for (uint32_t i = 0; i < b; i++)
				cost += pkt_cost(o, a->fixed_len != 0 ? a->fixed_len :
					gpugen_len(a->gen, first + i));
			t = rte_rdtsc();
			tokens += (double)(t - last) * rate / hz;
			last = t;
			if (tokens > cap)
				tokens = cap;
			if (tokens < cost) {
				rte_pause();
				continue;
			}
			tokens -= cost;
		}
		if (alloc_raw(a->pool, m, b) != 0) {
			/* All out: the port or the GPU still hold them. */
			rte_pause();
			continue;
		}
		tx_ns = gpupkt_real_ns();
		if (T->st.first_tx_ns == 0)
			T->st.first_tx_ns = tx_ns;
		T->st.last_tx_ns = tx_ns;
		/* GPU builds without offload flags: the fill readies the
		 * mbufs in the pass it makes to post them. */
		for (uint32_t i = 0; i < b && !raw_post; i++) {
			uint32_t len = fixed != 0 ? fixed :
				gpugen_len(a->gen, first + i);

			m[i]->data_off = RTE_PKTMBUF_HEADROOM;
			m[i]->data_len = (uint16_t)len;
			m[i]->pkt_len = len;
			if (ol) {
				/* Every mbuf of this run gets its flags set:
				 * none comes back with another stream's. */
				uint32_t st = a->one_ol ? 0 :
					gpugen_stream_of(a->gen, first + i);

				m[i]->ol_flags = a->one_ol ? ol_flags :
					a->ol_flags[st];
				m[i]->tx_offload = a->one_ol ? tx_offload :
					a->tx_offload[st];
			}
			if (cpu_build)
				gpugen_build_cpu(a->gen, first + i, tx_ns,
					rte_pktmbuf_mtod(m[i], uint8_t *),
					rte_pktmbuf_tailroom(m[i]) + len, NULL, NULL);
		}
		k += o->queues;
		if (o->mem == MEM_CPU) {
			post(T, m, (uint16_t)b);
			continue;
		}
		T->post_tsc[T->posted % o->ring_items] = rte_rdtsc();
		rc = raw_post ? gpugen_fill_post_raw(a->fill, T->q, m, b, first,
			tx_ns) : gpugen_fill_post(a->fill, T->q, m, b, first, tx_ns);
		if (rc != 0) {
			fprintf(stderr, "error: queue %u: posting a burst to the "
				"GPU: %s\n", T->q, rte_strerror(-rc));
			/* Not posted (-EINVAL): still ours. Posted, its kernel
			 * not launched (-EIO): never coming back. */
			if (rc == -EIO)
				T->st.failed += gpugen_fill_abandon(a->fill, T->q);
			else
				rte_pktmbuf_free_bulk(m, b);
			T->rc = -1;
			break;
		}
		T->posted++;
	}
	return T->rc;
}

/*
 * The queues on worker lcores, or a single one on this (main) lcore when
 * there is no worker. 0, or -1 when a queue failed.
 */
static int
run(struct app *a)
{
	/* Measured here, once, not by the first lcore to pace. */
	const uint64_t hz = gpupkt_tsc_hz();
	unsigned int lc, q = 0;
	int rc = 0;

	a->tsc_start = rte_rdtsc();
	if (a->o.duration > 0)
		a->end_tsc = a->tsc_start + (uint64_t)(a->o.duration * hz);
	if (rte_lcore_count() == 1) {
		rc = tx_lcore(&a->txq[0]);
	} else {
		RTE_LCORE_FOREACH_WORKER(lc) {
			if (q == a->o.queues)
				break;
			if (rte_eal_remote_launch(tx_lcore, &a->txq[q], lc) != 0) {
				fprintf(stderr, "error: lcore %u: launch failed\n", lc);
				quit = 1;
				rc = -1;
				break;
			}
			q++;
		}
		rte_eal_mp_wait_lcore();
	}
	a->tsc_end = rte_rdtsc();
	for (q = 0; q < a->o.queues; q++) {
		const struct tx_stats *s = &a->txq[q].st;

		if (a->txq[q].rc != 0)
			rc = -1;
		a->st.pkts += s->pkts;
		a->st.bytes += s->bytes;
		a->st.retries += s->retries;
		a->st.failed += s->failed;
		if (s->first_tx_ns != 0 && (a->st.first_tx_ns == 0 ||
				s->first_tx_ns < a->st.first_tx_ns))
			a->st.first_tx_ns = s->first_tx_ns;
		if (s->last_tx_ns > a->st.last_tx_ns)
			a->st.last_tx_ns = s->last_tx_ns;
	}
	return rc;
}

/*
 * Frames a port has taken may still wait in it: net_memif's ring is read
 * by its client, which loses what is left there when the server stops.
 * A client that has stopped reading takes the link down and ends the
 * wait early.
 */
static void
linger(struct app *a)
{
	uint64_t hz = gpupkt_tsc_hz(), start = rte_rdtsc();
	struct rte_eth_link link;

	while (!quit && (double)(rte_rdtsc() - start) / hz < a->o.linger) {
		if (rte_eth_link_get_nowait(a->o.port, &link) == 0 &&
				link.link_status == RTE_ETH_LINK_DOWN)
			break;
		rte_delay_us_sleep(10 * 1000);
	}
}

static const char *
build_str(const struct app *a)
{
	return a->o.no_build ? "none" : a->o.mem == MEM_CPU ? "cpu" :
		a->o.launch_per_burst ? "launch-per-burst" : "persistent";
}

static void
summary(struct app *a, FILE *f, int json)
{
	double secs = (double)(a->tsc_end - a->tsc_start) /
		gpupkt_tsc_hz();
	double pps = secs > 0 ? a->st.pkts / secs : 0;
	/* Frame bits with FCS, as --rate N bps counts them. */
	double bps = secs > 0 ? (a->st.bytes + 4.0 * a->st.pkts) * 8 / secs : 0;
	const char *unit = a->o.unit == RATE_PPS ? "pps" :
		a->o.unit == RATE_BPS ? "bps" : a->o.unit == RATE_PCT ? "%" :
		"none";
	const uint64_t *hists[MAX_QUEUES];
	struct gpupkt_lat_summary lat;

	for (uint16_t q = 0; q < a->o.queues; q++)
		hists[q] = a->txq[q].lat_hist;
	gpupkt_lat_hist_summary(hists, a->o.queues, BUILD_LAT_BUCKETS, &lat);
	if (!json) {
		fprintf(f, "sent: %" PRIu64 " packets, %" PRIu64 " bytes in %.3f s\n"
			"rate: requested %g %s, measured %.0f pps, %.0f bps\n"
			"tx: %" PRIu64 " retries (port full), %" PRIu64 " not "
			"sent (stopped with the port full)\n",
			a->st.pkts, a->st.bytes, secs, a->o.rate, unit, pps, bps,
			a->st.retries, a->st.failed);
		if (lat.n != 0)
			fprintf(f, "GPU build: %" PRIu64 " bursts, posted to built "
				"(us): median %u, p99 %u, max %u%s\n", lat.n,
				lat.p50, lat.p99, lat.max, lat.max ==
				BUILD_LAT_BUCKETS - 1 ? " or more" : "");
		return;
	}
	fprintf(f, "{\"mem\": \"%s\", \"build\": \"%s\", \"queues\": %u, "
		"\"burst\": %u, \"streams\": %u, \"packets\": %" PRIu64
		", \"bytes\": %" PRIu64 ", \"seconds\": %.6f, "
		"\"rate_requested\": %g, \"rate_unit\": \"%s\", "
		"\"pps\": %.1f, \"bps\": %.1f, \"tx_retries\": %" PRIu64
		", \"tx_failed\": %" PRIu64 ", \"first_tx_ns\": %" PRIu64
		", \"last_tx_ns\": %" PRIu64 ", \"fast_free\": %s, "
		"\"build_bursts\": %" PRIu64 ", \"build_lat_us\": {\"p50\": %u, "
		"\"p99\": %u, \"max\": %u}}\n",
		mem_str(a->o.mem),
		build_str(a), a->o.queues, a->o.burst, gpugen_n_streams(a->gen), a->st.pkts, a->st.bytes, secs,
		a->o.rate, unit, pps, bps, a->st.retries, a->st.failed,
		a->st.first_tx_ns, a->st.last_tx_ns,
		a->fast_free ? "true" : "false", lat.n, lat.p50, lat.p99, lat.max);
}

/* The GPU's persistent fill (or per-burst launches): a ring a queue. */
static int
open_fill(struct app *a, char *err, size_t errlen)
{
	struct gpugen_fill_conf fc = {
		.rings = a->o.queues,
		.items = a->o.ring_items,
		.burst = a->o.burst,
		.frames_in_gpu = a->o.mem == MEM_GPU,
		.launch_per_burst = a->o.launch_per_burst,
	};

	return gpugen_fill_open(a->gg, &fc, &a->fill, err, errlen);
}

/* The mbuf flags and lengths stream s's frames need for the port to
 * compute what the generator left out (--csum-offload). */
static void
stream_offload(struct app *a, uint32_t s, const struct gpugen_stream_info *si)
{
	uint64_t fl = 0;

	if (si->csum_offload != 0)
		fl |= si->ip_version == 4 ? RTE_MBUF_F_TX_IPV4 :
			RTE_MBUF_F_TX_IPV6;
	if (si->csum_offload & GPUGEN_CSUM_IP4) {
		fl |= RTE_MBUF_F_TX_IP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	}
	if (si->csum_offload & GPUGEN_CSUM_UDP) {
		fl |= RTE_MBUF_F_TX_UDP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	}
	if (si->csum_offload & GPUGEN_CSUM_TCP) {
		fl |= RTE_MBUF_F_TX_TCP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	}
	a->ol_flags[s] = fl;
	a->tx_offload[s] = fl != 0 ? rte_mbuf_tx_offload(si->l2_len,
		si->l3_len, 0, 0, 0, 0, 0) : 0;
	a->one_ol = s == 0 || (a->one_ol && fl == a->ol_flags[0] &&
		a->tx_offload[s] == a->tx_offload[0]);
}

int
main(int argc, char **argv)
{
	struct gpugen_conf gc = { 0 };
	struct app a;
	char err[512];
	int rc, ret = 1, port_started = 0;

	memset(&a, 0, sizeof(a));
	rc = gpupkt_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "error: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)"dpdk-gpu-tx";
	if (parse_opts(argc, argv, &a.o) != 0)
		goto out;
	gc.data_room = RTE_MBUF_DEFAULT_DATAROOM;
	gc.burst = a.o.burst;
	gc.seed = a.o.seed;
	gc.csum_offload = a.o.csum_offload;
	rc = gpugen_create(&a.gen, &gc);
	if (rc != 0) {
		fprintf(stderr, "error: generator: %s\n", strerror(-rc));
		goto out;
	}
	for (unsigned int k = 0; k < a.o.n_streams; k++) {
		rc = gpugen_add_spec(a.gen, a.o.streams[k], err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "error: stream '%s': %s\n", a.o.streams[k],
				err);
			goto out;
		}
	}
	a.fixed_len = gpugen_fixed_len(a.gen);
	a.ol_flags = calloc(gpugen_n_streams(a.gen), sizeof(*a.ol_flags));
	a.tx_offload = calloc(gpugen_n_streams(a.gen), sizeof(*a.tx_offload));
	if (a.ol_flags == NULL || a.tx_offload == NULL) {
		fprintf(stderr, "error: out of memory\n");
		goto out;
	}
	for (uint32_t s = 0; s < gpugen_n_streams(a.gen); s++) {
		struct gpugen_stream_info si;

		gpugen_stream_info(a.gen, s, &si);
		stream_offload(&a, s, &si);
		printf("stream %u: %s: %u-%u bytes, weight %u, %u variables, "
			"%s\n", s, si.desc, si.len_min + 4, si.len_max + 4,
			si.weight, si.n_vars, si.stamp_off ? "stamped" :
			"no stamp");
	}
	if (!rte_eth_dev_is_valid_port(a.o.port)) {
		fprintf(stderr, "error: port %u does not exist (%u ports probed; "
			"add one with -a PCI_ADDR or --vdev)\n", a.o.port,
			rte_eth_dev_count_avail());
		goto out;
	}
	if (rte_lcore_count() > 1 && rte_lcore_count() - 1 < a.o.queues) {
		fprintf(stderr, "error: --queues %u: a worker lcore each, and EAL "
			"has %u (-l 0-%u gives %u)\n", a.o.queues,
			rte_lcore_count() - 1, a.o.queues, a.o.queues);
		goto out;
	}
	if (rte_lcore_count() == 1 && a.o.queues > 1) {
		fprintf(stderr, "error: --queues %u: a worker lcore each, and EAL "
			"has none (-l 0-%u)\n", a.o.queues, a.o.queues);
		goto out;
	}
	a.tsc_per_us = RTE_MAX(gpupkt_tsc_hz() / 1000000, (uint64_t)1);
	for (uint16_t q = 0; q < a.o.queues; q++) {
		a.txq[q].a = &a;
		a.txq[q].q = q;
		if (a.o.mem == MEM_CPU)
			continue;
		a.txq[q].post_tsc = rte_zmalloc("gputx_post_tsc",
			a.o.ring_items * sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		a.txq[q].lat_hist = rte_zmalloc("gputx_lat", BUILD_LAT_BUCKETS *
			sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		if (a.txq[q].post_tsc == NULL || a.txq[q].lat_hist == NULL) {
			fprintf(stderr, "error: queue %u: out of memory\n", q);
			goto out;
		}
	}
	if (a.o.mem != MEM_CPU && setup_gpu(&a) != 0)
		goto out;
	if (setup_pool(&a, rte_eth_dev_socket_id(a.o.port)) != 0)
		goto out;
	if (a.o.mem != MEM_CPU) {
		/* The streams in GPU memory whatever the frames' memory: each
		 * packet's build reads them (program, template) in dependent
		 * steps, each a PCIe round trip from host memory. Host-mapped,
		 * 32-packet bursts, posted to built: 39 -> 28 us for one
		 * 100-byte stream, 58 -> 48 us for the memif loop's streams. */
		rc = gpugen_gpu_open(a.gen, a.gpu_id, a.o.burst,
			a.o.table_in_host ? GPUGEN_TABLE_HOST :
			GPUGEN_TABLE_DEVICE, &a.gg, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "error: GPU build: %s\n", err);
			goto out;
		}
		rc = open_fill(&a, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "error: GPU fill: %s\n", err);
			goto out;
		}
	}
	if (setup_port(&a) != 0)
		goto out;
	port_started = 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (a.o.wait_link > 0 && wait_link(&a) != 0)
		goto out;
	if (set_rate(&a) != 0)
		goto out;
	printf("memory: %s; build: %s; %u TX queue%s, burst %u%s\n",
		mem_str(a.o.mem), build_str(&a), a.o.queues,
		a.o.queues > 1 ? "s" : "", a.o.burst, a.fill == NULL ? "" :
		", bursts in flight per queue up to --ring-items");
	if (a.fill != NULL && gpugen_fill_start(a.fill, err, sizeof(err)) != 0) {
		fprintf(stderr, "error: GPU fill: %s\n", err);
		goto out;
	}
	rc = run(&a);
	if (a.fill != NULL && gpugen_fill_stop(a.fill, err, sizeof(err)) != 0) {
		fprintf(stderr, "error: GPU fill: %s\n", err);
		rc = -1;
	}
	if (rc == 0 && a.o.linger > 0)
		linger(&a);
	summary(&a, stdout, 0);
	if (a.o.json != NULL) {
		FILE *f = strcmp(a.o.json, "-") == 0 ? stdout :
			fopen(a.o.json, "w");

		if (f == NULL) {
			fprintf(stderr, "error: --json %s: %s\n", a.o.json,
				strerror(errno));
			rc = -1;
		} else {
			summary(&a, f, 1);
			if (f != stdout && fclose(f) != 0) {
				fprintf(stderr, "error: --json %s: %s\n", a.o.json,
					strerror(errno));
				rc = -1;
			}
		}
	}
	ret = rc == 0 && a.st.failed == 0 ? 0 : 1;
out:
	if (port_started) {
		/* Stop and close: the port gives back the mbufs it holds. */
		if (rte_eth_dev_stop(a.o.port) != 0)
			fprintf(stderr, "warning: port %u stop failed\n", a.o.port);
		if (rte_eth_dev_close(a.o.port) != 0)
			fprintf(stderr, "warning: port %u close failed\n", a.o.port);
	}
	gpugen_fill_close(a.fill);
	gpugen_gpu_close(a.gg);
	if (a.pool != NULL)
		release_pool(&a);
	for (uint16_t q = 0; q < MAX_QUEUES; q++) {
		rte_free(a.txq[q].post_tsc);
		rte_free(a.txq[q].lat_hist);
	}
	gpugen_free(a.gen);
	free(a.ol_flags);
	free(a.tx_offload);
	for (unsigned int k = 0; k < a.o.n_streams; k++)
		free(a.o.pcap_specs[k]);
	rte_eal_cleanup();
	return ret;
}
