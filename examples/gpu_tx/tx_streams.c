/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What each stream sent: per-queue counters the TX lcores add to after
 * every posted burst, read by the per-second line, telemetry and the
 * summary, as a tester reads its per-stream statistics.
 *
 * A burst is packets first … first+n−1 of the global sequence, and
 * streams take turns by weight (lib/gpugen): stream s owns positions
 * [wstart, wstart + weight) of each round. So a burst's share of each
 * stream is counted from the round arithmetic, without looking at its
 * packets; only streams whose frames vary in size need each packet's
 * length, and then each packet's stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "gpu_tx.h"

int
gputx_streams_setup(struct app *a)
{
	const uint32_t n = gpugen_n_streams(a->gen);
	uint32_t wstart = 0;

	a->n_streams = n;
	a->sched = rte_zmalloc("gputx_sched", n * sizeof(*a->sched), 0);
	a->s_pkts = rte_zmalloc("gputx_spkts", n * sizeof(uint64_t), 0);
	a->s_bytes = rte_zmalloc("gputx_sbytes", n * sizeof(uint64_t), 0);
	if (a->sched == NULL || a->s_pkts == NULL || a->s_bytes == NULL)
		goto nomem;
	a->streams_var = 0;
	for (uint32_t s = 0; s < n; s++) {
		struct gpugen_stream_info si;
		int rc = gpugen_stream_info(a->gen, s, &si);

		if (rc != 0) {
			GPUTX_LOG(ERR, "error: stream %u: %s\n", s,
				rte_strerror(-rc));
			return -1;
		}
		a->sched[s].wstart = wstart;
		a->sched[s].weight = si.weight;
		a->sched[s].id = si.id;
		a->sched[s].len = si.len_min == si.len_max ? si.len_min : 0;
		if (a->sched[s].len == 0)
			a->streams_var = 1;
		wstart += si.weight;
	}
	a->round = wstart;
	for (uint16_t q = 0; q < a->o.queues; q++) {
		/* Packets then bytes, on the queue's lines alone: only its
		 * lcore writes them. */
		a->txq[q].s_pkts = rte_zmalloc("gputx_qstreams",
			2 * n * sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		if (a->txq[q].s_pkts == NULL)
			goto nomem;
		a->txq[q].s_bytes = a->txq[q].s_pkts + n;
	}
	return 0;
nomem:
	GPUTX_LOG(ERR, "error: per-stream counters of %u streams: out of "
		"memory\n", n);
	return -1;
}

void
gputx_streams_release(struct app *a)
{
	for (uint16_t q = 0; q < MAX_QUEUES; q++) {
		rte_free(a->txq[q].s_pkts);
		a->txq[q].s_pkts = NULL;
		a->txq[q].s_bytes = NULL;
	}
	rte_free(a->sched);
	rte_free(a->s_pkts);
	rte_free(a->s_bytes);
	a->sched = NULL;
	a->s_pkts = a->s_bytes = NULL;
}

/* Positions below x of the round (x < round) that stream s owns. */
static inline uint64_t
owned_below(const struct tx_sched *s, uint64_t x)
{
	return x <= s->wstart ? 0 : RTE_MIN(x - s->wstart,
		(uint64_t)s->weight);
}

void
gputx_streams_count(struct txq *T, uint64_t first, uint32_t n,
		const uint32_t *len)
{
	const struct app *a = T->a;
	const uint64_t end = first + n;
	const uint64_t r0 = first / a->round, p0 = first % a->round;
	const uint64_t r1 = end / a->round, p1 = end % a->round;

	if (n == 0)
		return;
	if (a->streams_var) {
		/* len[i]: packet first + i's frame (fixed_len is 0 here). */
		for (uint32_t i = 0; i < n; i++) {
			uint32_t s = gpugen_stream_of(a->gen, first + i);

			T->s_pkts[s]++;
			T->s_bytes[s] += len[i];
		}
		return;
	}
	for (uint32_t s = 0; s < a->n_streams; s++) {
		const struct tx_sched *sc = &a->sched[s];
		uint64_t c = (r1 - r0) * sc->weight + owned_below(sc, p1) -
			owned_below(sc, p0);

		T->s_pkts[s] += c;
		T->s_bytes[s] += c * sc->len;
	}
}

/*
 * Each stream's packets and bytes sent so far, summed over the queues.
 * Relaxed atomic loads of words one lcore writes, as
 * gputx_sent_so_far(): whole values, however stale.
 */
void
gputx_streams_so_far(const struct app *a, uint64_t *pkts, uint64_t *bytes)
{
	memset(pkts, 0, a->n_streams * sizeof(*pkts));
	memset(bytes, 0, a->n_streams * sizeof(*bytes));
	for (uint16_t q = 0; q < a->o.queues; q++) {
		const struct txq *T = &a->txq[q];

		for (uint32_t s = 0; s < a->n_streams; s++) {
			pkts[s] += __atomic_load_n(&T->s_pkts[s],
				__ATOMIC_RELAXED);
			bytes[s] += __atomic_load_n(&T->s_bytes[s],
				__ATOMIC_RELAXED);
		}
	}
}

/* With 2 to GPUTX_LINE_STREAMS streams, the per-second line's tail: each
 * stream's packets a second since the last line (prev: their counts
 * then, updated). Empty otherwise. */
void
gputx_streams_line(const struct app *a, uint64_t *prev, double dt,
		char *buf, size_t len)
{
	uint64_t pkts[GPUTX_LINE_STREAMS], bytes[GPUTX_LINE_STREAMS];
	size_t off;

	buf[0] = '\0';
	if (a->n_streams < 2 || a->n_streams > GPUTX_LINE_STREAMS || dt <= 0)
		return;
	gputx_streams_so_far(a, pkts, bytes);
	off = (size_t)snprintf(buf, len, " | pps by stream:");
	for (uint32_t s = 0; s < a->n_streams && off < len; s++) {
		off += (size_t)snprintf(buf + off, len - off, " %u=%.0f", s,
			(double)(pkts[s] - prev[s]) / dt);
		prev[s] = pkts[s];
	}
}
