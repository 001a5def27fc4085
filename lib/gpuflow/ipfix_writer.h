/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow records (flow_ring.h) out as IPFIX, with libfixbuf: to a
 * collector over UDP or TCP ([udp://|tcp://]HOST:PORT) and/or to a file.
 * One thread uses a writer at a time (dpdk-gpu-rx's exporter thread, the
 * main thread at exit, bench-flow-export).
 */
#ifndef GPURX_APP_IPFIX_WRITER_H
#define GPURX_APP_IPFIX_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "flow_ring.h"

struct gpurx_ipfix;

/*
 * collector and/or file (either may be NULL, not both), records of
 * observation domain `domain` with ingressInterface `ingress`. The file
 * is created and a UDP collector's socket made now; a TCP collector is
 * connected by gpurx_ipfix_connect() and gpurx_ipfix_tick(). NULL after
 * printing why (an unusable argument, an unresolvable host, a file that
 * cannot be created).
 */
struct gpurx_ipfix *gpurx_ipfix_open(const char *collector, const char *file,
		uint32_t domain, uint32_t ingress);

/*
 * The same for records of several ports: a record whose key holds port
 * index p (gpurx_flow_key_port()) goes out in ports[p]'s observation
 * domain with its ingressInterface. RFC 7011 keeps each domain's
 * messages apart: each port's records have messages, sequence numbers,
 * templates and statistics of their own, over the same destinations.
 * One port is gpurx_ipfix_open(), byte for byte. Domains must differ.
 */
#define GPURX_IPFIX_PORTS_MAX GPURX_FLOW_KEY_PORTS
struct gpurx_ipfix_port {
	uint32_t domain;
	uint32_t ingress;
};
struct gpurx_ipfix *gpurx_ipfix_open_ports(const char *collector,
		const char *file, const struct gpurx_ipfix_port *ports,
		unsigned int n_ports);

/*
 * UDP collectors: records/s at most (0: as fast as the socket takes
 * them), GPURX_IPFIX_RATE_DEFAULT unless set. UDP has no flow control:
 * a collector slower than this drops datagrams unseen by the exporter,
 * which only the collector's sequence check shows.
 */
#define GPURX_IPFIX_RATE_DEFAULT 100000
void gpurx_ipfix_set_rate(struct gpurx_ipfix *x, uint64_t rate);
/* Whether a destination is a UDP collector. */
int gpurx_ipfix_has_udp(const struct gpurx_ipfix *x);

/*
 * Encoder threads: n message builders (the calling thread's and n - 1
 * threads'), each building whole messages of a slice of a drain's
 * records at once; the draining thread sends them in the ring's order,
 * one stream with its sequence numbers. 1 (the default): the draining
 * thread alone. Once, before any record. The threads start at the first
 * drain, on the draining thread's CPUs. 0, or -EINVAL (n out of range),
 * -EBUSY, -ENOMEM after saying why; x is then as it was.
 */
#define GPURX_IPFIX_ENCODERS_MAX 16
/* dpdk-gpu-rx's --ipfix-encoders unless set: the helpers sleep while
 * drains are small. */
#define GPURX_IPFIX_ENCODERS_DEFAULT 4
int gpurx_ipfix_set_encoders(struct gpurx_ipfix *x, unsigned int n);
unsigned int gpurx_ipfix_encoders(const struct gpurx_ipfix *x);

/* "udp://192.0.2.1:4739 and file x.ipfix", for messages. */
const char *gpurx_ipfix_describe(const struct gpurx_ipfix *x);

/* A TCP collector not connected: try now (templates first once it is). */
void gpurx_ipfix_connect(struct gpurx_ipfix *x);

/* One record into the message being built (sent once full). */
void gpurx_ipfix_add(struct gpurx_ipfix *x, const struct gpurx_flow_rec *r);

/*
 * n records, in order, as n gpurx_ipfix_add() calls would put them, but
 * through the encoder threads (gpurx_ipfix_set_encoders()) where there
 * are enough of them: for a batch the caller holds, e.g. the flows still
 * live at exit.
 */
void gpurx_ipfix_add_many(struct gpurx_ipfix *x,
		const struct gpurx_flow_rec *recs, uint32_t n);

/*
 * The consumer of an export ring (flow_ring.h): up to max records from
 * position *tail on, those written so far (records in GPU memory: those
 * the last gpurx_flow_cuda_pull() brought over), into x; *tail moves past
 * them and the ring is told. Returns how many positions were taken.
 */
uint32_t gpurx_ipfix_drain(struct gpurx_ipfix *x, struct gpurx_flow_ring *ring,
		uint64_t *tail, uint32_t max);

/*
 * Every GPURX_IPFIX_TICK_MS or so: the message built so far goes out (a
 * record waits no longer), a lost TCP connection is made again, UDP
 * collectors get the templates again every GPURX_IPFIX_TEMPLATE_S.
 */
#define GPURX_IPFIX_TICK_MS 100
#define GPURX_IPFIX_TEMPLATE_S 10
void gpurx_ipfix_tick(struct gpurx_ipfix *x);

/*
 * The exporter's statistics (an options record, RFC 7011 section 4.3,
 * scoped to the observation domain: exportedMessageTotalCount,
 * exportedFlowRecordTotalCount, exportedOctetTotalCount,
 * ignoredPacketTotalCount, notSentFlowTotalCount) go out every
 * GPURX_IPFIX_STATS_S from gpurx_ipfix_tick() and last from
 * gpurx_ipfix_close(). The meter's part: packets no flow slot took,
 * records it never handed over (the writer adds those a destination
 * lost), as of now.
 */
#define GPURX_IPFIX_STATS_S 10
void gpurx_ipfix_set_meter_counts(struct gpurx_ipfix *x,
		uint64_t ignored_packets, uint64_t not_sent);

/* Everything out, the file and sockets closed. 0, or -1 when a file is
 * incomplete or libfixbuf failed (said). */
int gpurx_ipfix_close(struct gpurx_ipfix *x);

void gpurx_ipfix_free(struct gpurx_ipfix *x);

/* What went out: records given to libfixbuf, and per destination. */
struct gpurx_ipfix_counts {
	uint64_t records, packets, bytes;
	uint64_t by_reason[GPURX_FLOW_END_KINDS];
};
const struct gpurx_ipfix_counts *gpurx_ipfix_counts(const struct gpurx_ipfix *x);

/* "  -> NAME: M messages, L records lost (last: ...)" per destination. */
void gpurx_ipfix_print_sinks(FILE *f, const struct gpurx_ipfix *x);
/* Destinations, in --ipfix's order: i < gpurx_ipfix_n_sinks(). Its name
 * (as in messages), messages sent, records lost. */
unsigned int gpurx_ipfix_n_sinks(const struct gpurx_ipfix *x);
const char *gpurx_ipfix_sink(const struct gpurx_ipfix *x, unsigned int i,
		uint64_t *messages, uint64_t *lost_records);
/* Records lost to any destination. */
uint64_t gpurx_ipfix_lost(const struct gpurx_ipfix *x);

#endif /* GPURX_APP_IPFIX_WRITER_H */
