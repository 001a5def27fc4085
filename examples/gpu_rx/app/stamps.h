/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --stamps: the receiver's side of the generator's stamps
 * (lib/gpugen/gpugen_stamp.h). Per stream id: stamped packets received, lost,
 * reordered, duplicated, and the latency, RX time minus the stamp's
 * tx_ns (min, median, p99, max).
 *
 * Each RX queue keeps its own table, written by its lcore alone (no lock
 * per packet); the summary merges the queues' tables stream by stream.
 * A stream is assumed to arrive on one queue, as RSS puts one 5-tuple on
 * one queue: a duplicate whose copies arrive on two queues is counted as
 * two packets received there, not as a duplicate.
 *
 * Definitions, per stream:
 *   received    stamped packets, duplicates included
 *   duplicates  a sequence number received before, told apart within the
 *               GPURX_STAMP_WINDOW numbers below the highest one received
 *   reordered   a first copy arriving after a higher sequence number
 *   late        of those, the ones below that window: not checked for a
 *               duplicate (assumed first copies)
 *   lost        numbers between the lowest and the highest received that
 *               never arrived (by the end of the run; a reordered packet
 *               that comes later is not lost). Numbers before the first
 *               one received (a run started mid-stream) are not counted.
 *   latency     in ns, RX time minus tx_ns where both are on one clock;
 *               to within 1/64 (the histogram's resolution; min and max
 *               exact). A packet with tx_ns after its RX time is counted
 *               as `negative`, outside the histogram (clocks not the
 *               same); with --ts none there is no RX time: no latency.
 *   histogram   the latencies counted by octave (GPURX_STAMP_OCTAVES)
 *   jitter      in ns, RFC 3550 interarrival jitter: over the stream's
 *               packets with an RX time, in arrival order, D the change
 *               of transit (RX time minus tx_ns) from one to the next,
 *               J += (|D| - J) / 16, from J = 0 (the final J, rounded).
 *               A clock offset cancels out: kept when latency is
 *               negative. Of one queue (J is not a sum): a stream over
 *               several reports that of the queue with most packets.
 */
#ifndef GPURX_APP_STAMPS_H
#define GPURX_APP_STAMPS_H

#include <stdint.h>
#include <stdio.h>

#include "gpugen_stamp.h"

/* Sequence numbers below the highest in which a duplicate is found. */
#define GPURX_STAMP_WINDOW 4096u
/* Octaves of the per-stream latency histogram: [0] 0-1 ns, [e]
 * [2^e, 2^(e+1)) ns, the last from 2^40 ns (18 min) on. */
#define GPURX_STAMP_OCTAVES 41u
/* Streams each queue tracks; packets of more are counted `untracked`. */
#define GPURX_STAMP_STREAMS 256u

struct gpurx_stamps;

/* Tables for RX queues 0..nq-1. NULL when out of memory. */
struct gpurx_stamps *gpurx_stamps_create(uint16_t nq);
void gpurx_stamps_free(struct gpurx_stamps *s);

/*
 * Queue q's lcore only: a received packet with stamp st (NULL: a packet
 * without one), received at rx_ns (ns on the clock of tx_ns; 0: unknown).
 */
void gpurx_stamps_add(struct gpurx_stamps *s, uint16_t q,
		const struct gpugen_stamp *st, uint64_t rx_ns);

/* The whole run's figures for one stream, merged over the queues. */
struct gpurx_stamp_stream {
	uint32_t stream;
	uint64_t received;
	uint64_t lost;
	uint64_t reordered;
	uint64_t duplicates;
	uint64_t late;
	uint64_t lat_n;		/* latencies in the histogram */
	uint64_t negative;	/* tx_ns after the RX time */
	uint64_t lat_min, lat_p50, lat_p99, lat_max;	/* ns */
	uint64_t jitter;	/* ns, RFC 3550 */
	uint64_t hist[GPURX_STAMP_OCTAVES];	/* latencies by octave */
};

struct gpurx_stamp_report {
	uint64_t stamped;	/* packets with a stamp */
	uint64_t unstamped;	/* matched packets without one */
	uint64_t untracked;	/* stamped, of streams past the table */
	uint32_t n_streams;
	struct gpurx_stamp_stream *streams;	/* by stream id; free() */
};

/*
 * After the lcores stopped: the report, streams in increasing id.
 * 0, or -ENOMEM.
 */
int gpurx_stamps_report(const struct gpurx_stamps *s,
		struct gpurx_stamp_report *r);

/* `clock` says what the RX time is, for the reader. */
void gpurx_stamps_print(FILE *f, const struct gpurx_stamp_report *r,
		const char *clock);

struct gpuapp_json;

/* The JSON summary's "stamps" member. */
void gpurx_stamps_json(struct gpuapp_json *j,
		const struct gpurx_stamp_report *r, const char *clock);

#endif /* GPURX_APP_STAMPS_H */
