/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command line of dpdk-gpu-rx (what follows the EAL options and "--").
 */
#ifndef GPURX_APP_OPTS_H
#define GPURX_APP_OPTS_H

#include <stdint.h>

#include "gpuapp_gpus.h"

enum gpurx_mem_mode {
	GPURX_MEM_AUTO = 0,	/* gpu where the port can DMA, else host-mapped */
	GPURX_MEM_GPU,
	GPURX_MEM_HOST_MAPPED,
	GPURX_MEM_STAGED,
};

enum gpurx_format {
	GPURX_FMT_PCAPNG = 0,
	GPURX_FMT_PCAP,
};

enum gpurx_ts_source {
	GPURX_TS_RX = 0,	/* TSC read by the RX lcore, as ns since epoch */
	GPURX_TS_PORT,		/* the port's RX timestamp dynfield */
	GPURX_TS_NONE,		/* all zero: reproducible files and flow tables */
};

#define GPURX_MAX_QUEUES 16
#define GPURX_MAX_BURST 512
/* tcpdump's default snaplen, and the most libpcap reads back for Ethernet. */
#define GPURX_DEFAULT_SNAPLEN 262144
/* Longest packet linearized, filtered and captured whole; longer ones are
 * cut to it (counted). Loopback (MTU 65536) and GRO frames fit. */
#define GPURX_SCRATCH_BYTES GPURX_DEFAULT_SNAPLEN

/*
 * --split: RX buffer split, the first N bytes of each packet into a host
 * mempool, the rest into the GPU-memory one. AUTO: where --mem resolves
 * to gpu and the port offers buffer split (port.c picks N); OFF: never.
 * N is a multiple of 16: the kernel copies captures in 16-byte words, and
 * the payload then starts on one in the capture area.
 */
#define GPURX_SPLIT_AUTO UINT32_MAX
#define GPURX_SPLIT_OFF 0u
#define GPURX_SPLIT_MIN 16u
#define GPURX_SPLIT_MAX 2048u
#define GPURX_SPLIT_ALIGN 16u

/* --rotate-seconds (a year) and --rotate-files at most. */
#define GPURX_ROTATE_MAX_SECONDS (366u * 86400u)
#define GPURX_ROTATE_MAX_FILES 100000u
/* --capture-writers at most (more than the queues are not started). */
#define GPURX_CAPTURE_MAX_WRITERS 64u

/* --mtu: the port's largest (default), or the port's own. */
#define GPURX_MTU_MAX 0u
#define GPURX_MTU_KEEP UINT32_MAX

struct gpurx_opts {
	const char *filter;
	const char *write_path;	/* NULL: count only */
	uint32_t rotate_seconds;	/* a new file every N s; 0: never */
	uint64_t rotate_size;	/* a new file before N bytes; 0: never */
	uint32_t rotate_files;	/* a ring of the last N files; 0: all */
	uint32_t capture_writers;	/* writer threads; 0: the RX lcores
					 * write */
	const char *json_path;
	enum gpurx_format format;
	uint32_t snaplen;
	uint64_t count;		/* matched packets (-c); 0: unlimited */
	uint64_t count_received;	/* received packets; 0: unlimited */
	double duration_s;	/* 0: unlimited */
	uint32_t idle_exit_ms;	/* 0: never */
	uint32_t top_n;
	enum gpurx_mem_mode mem;
	int cpu;
	struct gpuapp_gpus gpus;	/* --gpus: which GPU serves each queue */
	/* --port LIST: the ethdev ports, in order, none twice. */
	uint16_t ports[GPURX_MAX_QUEUES];
	uint16_t n_ports;
	uint16_t queues;	/* RX queues of each port */
	uint16_t burst;
	uint32_t ring_items;
	uint32_t nb_rxd;
	uint32_t mbufs;		/* per pool; 0: sized from queues, rings,
				 * descriptors */
	int pool_per_queue;	/* host memory: an mbuf pool per RX queue */
	int mbuf_cache;		/* per-lcore mempool cache; -1: the default,
				 * min(RTE_MEMPOOL_CACHE_MAX_SIZE, pool / 4) */
	uint32_t flow_capacity;
	int launch_per_burst;
	int no_lap_tags;	/* rings without lap tags (A/B of the prefetch) */
	int backpressure;	/* ring full: wait for the GPU, do not drop */
	uint32_t stall_ms;	/* a queue's items not back for this long:
				 * stalled, the run stops; 0: never */
	enum gpurx_ts_source ts_source;
	uint32_t mtu;		/* GPURX_MTU_MAX, GPURX_MTU_KEEP or a value */
	int quiet;		/* no per-second stats line */
	uint32_t split;		/* header bytes, or GPURX_SPLIT_AUTO/OFF */
	/* Flow records (with an export): they end this long after their
	 * last packet, after their first (0: never), after their last once
	 * a FIN or RST was seen; in ns of packet time. */
	uint64_t flow_idle_ns;
	uint64_t flow_active_ns;
	uint64_t flow_linger_ns;
	const char *ipfix;	/* collector, [udp://|tcp://]HOST:PORT */
	const char *ipfix_file;	/* IPFIX file */
	uint32_t ipfix_domain;	/* observation domain of port 0 (+ port) */
	uint64_t ipfix_rate;	/* UDP: records/s, 0: unpaced */
	uint32_t ipfix_encoders;	/* gpurx_ipfix_set_encoders() */
	int stamps;		/* --stamps: generator stamps (stamps.h) */
};

/* Exit status for bad options and filters, as documented. */
#define GPURX_EXIT_USAGE 2

/*
 * Parse argv (application part only). Returns 0, or -1 after printing
 * the problem (caller exits GPURX_EXIT_USAGE); 1 when --help was shown.
 */
int gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o);

const char *gpurx_mem_mode_str(enum gpurx_mem_mode m);

#endif /* GPURX_APP_OPTS_H */
