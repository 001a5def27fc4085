/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's command line: the options, their limits and defaults,
 * their parsing and usage text, and how the summary names the memory and
 * build modes they select.
 */
#ifndef GPUTX_TX_OPTS_H
#define GPUTX_TX_OPTS_H

#include <stdint.h>

#include <rte_log.h>

#include "gpuapp_gpus.h"

/*
 * dpdk-gpu-tx's diagnostics: rte_log on app.gpu_tx, so --log-level
 * filters them; 22.11 writes them to stderr without a prefix, as fprintf
 * did. The summary and --help stay printf on stdout.
 */
extern int gputx_logtype;
#define GPUTX_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)gputx_logtype, __VA_ARGS__)

#define MAX_BURST 512
#define MAX_QUEUES 32
#define DEFAULT_RING_ITEMS 32
#define MAX_STREAM_ARGS 64

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
	struct gpuapp_gpus gpus;	/* GPU modes: each queue's GPU */
	uint32_t ring_items;	/* GPU: bursts in flight per queue */
	int launch_per_burst;	/* GPU: a kernel per burst */
	int no_lap_tags;	/* GPU: rings without lap tags (A/B) */
	int build_breakdown;	/* GPU: time each burst's parts, and the floor */
	int no_build;		/* benchmark baseline: frames not built */
	int no_fast_free;	/* benchmark baseline: per-packet TX frees */
	int csum_offload;	/* IPv4/UDP/TCP checksums left to the port */
	int table_in_host;	/* GPU builds read the streams from host memory */
	int strict_rate;	/* exit 1 when the measured rate falls short */
	int quiet;		/* no per-second line */
};

/* The options after EAL's into o: 0, or -1 with the error said; 1 when
 * --help printed the usage (the program then exits 0). */
int gputx_parse_opts(int argc, char **argv, struct opts *o);

/* --mem's name of a memory mode. */
const char *gputx_mem_str(enum mem_mode m);

/* What builds the frames: none, cpu, launch-per-burst or persistent. */
const char *gputx_build_str(const struct opts *o);

#endif /* GPUTX_TX_OPTS_H */
