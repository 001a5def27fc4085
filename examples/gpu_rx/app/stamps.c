/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "gpuapp_json.h"
#include "stamps.h"

/*
 * Latency histogram, log-linear: values below 64 ns one bucket each,
 * then every power of two [2^e, 2^(e+1)) in 64 buckets of 2^(e-6) ns, up
 * to 2^41 ns (36 min); longer ones in the last bucket. A bucket is at
 * most 1/64 of its values wide, whatever the scale, in 18 KiB a stream.
 */
#define HB_SUB 64u
#define HB_EXP_MAX 40u
#define HB_N (HB_SUB * (HB_EXP_MAX - 5u + 1u))
_Static_assert(GPURX_STAMP_OCTAVES == HB_EXP_MAX + 1, "an octave per exponent");

static inline uint32_t
hb_bucket(uint64_t v)
{
	uint32_t e;

	if (v < HB_SUB)
		return (uint32_t)v;
	e = 63u - (uint32_t)__builtin_clzll(v);
	if (e > HB_EXP_MAX)
		return HB_N - 1;
	return HB_SUB * (e - 5u) + (uint32_t)((v >> (e - 6u)) - HB_SUB);
}

/* The octave (GPURX_STAMP_OCTAVES) bucket b's values lie in. */
static inline uint32_t
hb_octave(uint32_t b)
{
	if (b < 2)
		return 0;
	if (b < HB_SUB)
		return 31u - (uint32_t)__builtin_clz(b);
	return b / HB_SUB + 5u;
}

/* The lowest value of bucket b. */
static inline uint64_t
hb_low(uint32_t b)
{
	if (b < HB_SUB)
		return b;
	return (uint64_t)(HB_SUB + b % HB_SUB) << (b / HB_SUB + 5u - 6u);
}

struct stream_state {
	uint32_t id;
	int used;
	uint64_t received, unique, duplicates, reordered, late;
	uint64_t min_seq, max_seq;
	uint64_t lat_n, negative, lat_min, lat_max;
	/* RFC 3550 interarrival jitter over the packets with an RX time,
	 * in arrival order: the last one's transit (RX time minus tx_ns,
	 * signed: a clock offset cancels out) and J. */
	uint64_t jit_n;
	int64_t last_transit;
	double jitter;
	/* Bit seq % GPURX_STAMP_WINDOW: seq received, for the numbers
	 * (max_seq - GPURX_STAMP_WINDOW, max_seq]. */
	uint64_t seen[GPURX_STAMP_WINDOW / 64];
	uint64_t *hist;		/* HB_N buckets */
};

/* One queue's: its lcore's alone. */
struct stamp_queue {
	uint64_t stamped, unstamped, untracked;
	struct stream_state st[GPURX_STAMP_STREAMS];
} __rte_cache_aligned;

struct gpurx_stamps {
	uint16_t nq;
	struct stamp_queue *q;
};

struct gpurx_stamps *
gpurx_stamps_create(uint16_t nq)
{
	struct gpurx_stamps *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->nq = nq;
	s->q = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(
		(size_t)nq * sizeof(*s->q), RTE_CACHE_LINE_SIZE));
	if (s->q == NULL) {
		free(s);
		return NULL;
	}
	memset(s->q, 0, (size_t)nq * sizeof(*s->q));
	return s;
}

void
gpurx_stamps_free(struct gpurx_stamps *s)
{
	if (s == NULL)
		return;
	for (uint16_t q = 0; q < s->nq; q++)
		for (uint32_t i = 0; i < GPURX_STAMP_STREAMS; i++)
			free(s->q[q].st[i].hist);
	free(s->q);
	free(s);
}

/* The stream's state, made on its first packet; NULL when the table is
 * full (or no memory for its histogram). */
static struct stream_state *
stream_of(struct stamp_queue *sq, uint32_t id)
{
	uint32_t h = (uint32_t)((id * 2654435761u) >> 8) % GPURX_STAMP_STREAMS;

	for (uint32_t k = 0; k < GPURX_STAMP_STREAMS; k++) {
		struct stream_state *e = &sq->st[(h + k) % GPURX_STAMP_STREAMS];

		if (e->used && e->id == id)
			return e;
		if (!e->used) {
			/* Once per stream, on the lcore: its NUMA node. */
			e->hist = calloc(HB_N, sizeof(*e->hist));
			if (e->hist == NULL)
				return NULL;
			e->used = 1;
			e->id = id;
			e->lat_min = UINT64_MAX;
			return e;
		}
	}
	return NULL;
}

static inline int
seen_test_set(struct stream_state *e, uint64_t seq)
{
	uint32_t b = (uint32_t)(seq % GPURX_STAMP_WINDOW);
	uint64_t bit = 1ull << (b % 64);
	int was = (e->seen[b / 64] & bit) != 0;

	e->seen[b / 64] |= bit;
	return was;
}

/* max_seq moves up to seq: the numbers it passes leave the window. */
static void
window_advance(struct stream_state *e, uint64_t seq)
{
	if (seq - e->max_seq >= GPURX_STAMP_WINDOW) {
		memset(e->seen, 0, sizeof(e->seen));
		return;
	}
	for (uint64_t k = e->max_seq + 1; k <= seq; k++) {
		uint32_t b = (uint32_t)(k % GPURX_STAMP_WINDOW);

		e->seen[b / 64] &= ~(1ull << (b % 64));
	}
}

/*
 * RFC 3550, 6.4.1: D is the difference of two consecutive packets'
 * transits, J += (|D| - J) / 16. In double: the RFC's integer form keeps
 * J scaled by 16, which the report would have to undo anyway.
 */
static inline void
jitter_step(double *j, int64_t transit, int64_t last_transit)
{
	int64_t d = transit - last_transit;

	*j += ((double)(d < 0 ? -d : d) - *j) / 16.0;
}

static inline void
jitter_add(struct stream_state *e, int64_t transit)
{
	if (e->jit_n != 0)
		jitter_step(&e->jitter, transit, e->last_transit);
	e->last_transit = transit;
	e->jit_n++;
}

void
gpurx_stamps_add(struct gpurx_stamps *s, uint16_t q,
		const struct gpugen_stamp *st, uint64_t rx_ns)
{
	struct stamp_queue *sq = &s->q[q];
	struct stream_state *e;
	uint64_t seq;

	if (st == NULL) {
		sq->unstamped++;
		return;
	}
	sq->stamped++;
	e = stream_of(sq, st->stream);
	if (e == NULL) {
		sq->untracked++;
		return;
	}
	seq = st->seq;
	e->received++;
	if (e->received == 1) {
		e->min_seq = e->max_seq = seq;
		seen_test_set(e, seq);
		e->unique++;
	} else if (seq > e->max_seq) {
		window_advance(e, seq);
		e->max_seq = seq;
		seen_test_set(e, seq);
		e->unique++;
	} else if (e->max_seq - seq < GPURX_STAMP_WINDOW) {
		if (seen_test_set(e, seq)) {
			e->duplicates++;
		} else {
			e->unique++;
			e->reordered++;
		}
	} else {
		e->late++;
		e->reordered++;
		e->unique++;
	}
	if (seq < e->min_seq)
		e->min_seq = seq;
	if (rx_ns == 0)
		return;
	jitter_add(e, (int64_t)(rx_ns - st->tx_ns));
	if (rx_ns < st->tx_ns) {
		e->negative++;
		return;
	}
	e->hist[hb_bucket(rx_ns - st->tx_ns)]++;
	e->lat_n++;
	e->lat_min = RTE_MIN(e->lat_min, rx_ns - st->tx_ns);
	e->lat_max = RTE_MAX(e->lat_max, rx_ns - st->tx_ns);
}

static int
cmp_stream(const void *a, const void *b)
{
	const struct gpurx_stamp_stream *x = a, *y = b;

	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Stream id's figures over every queue, into out; hist is scratch. */
static void
merge_stream(const struct gpurx_stamps *s, uint32_t id, uint64_t *hist,
		struct gpurx_stamp_stream *out)
{
	uint64_t unique = 0, min_seq = UINT64_MAX, max_seq = 0, span;
	uint64_t r50, r99, seen = 0, jit_from = 0;

	memset(out, 0, sizeof(*out));
	memset(hist, 0, HB_N * sizeof(*hist));
	out->stream = id;
	out->lat_min = UINT64_MAX;
	for (uint16_t q = 0; q < s->nq; q++) {
		for (uint32_t i = 0; i < GPURX_STAMP_STREAMS; i++) {
			const struct stream_state *e = &s->q[q].st[i];

			if (!e->used || e->id != id || e->received == 0)
				continue;
			out->received += e->received;
			out->duplicates += e->duplicates;
			out->reordered += e->reordered;
			out->late += e->late;
			out->negative += e->negative;
			out->lat_n += e->lat_n;
			out->lat_min = RTE_MIN(out->lat_min, e->lat_min);
			out->lat_max = RTE_MAX(out->lat_max, e->lat_max);
			unique += e->unique;
			min_seq = RTE_MIN(min_seq, e->min_seq);
			max_seq = RTE_MAX(max_seq, e->max_seq);
			for (uint32_t b = 0; b < HB_N; b++)
				hist[b] += e->hist[b];
			/* J runs over consecutive packets: it does not add
			 * up over queues. A stream split over queues reports
			 * the J of the queue with most of its packets. */
			if (e->jit_n > jit_from) {
				jit_from = e->jit_n;
				out->jitter = (uint64_t)(e->jitter + 0.5);
			}
		}
	}
	span = max_seq - min_seq + 1;
	out->lost = span > unique ? span - unique : 0;
	if (out->lat_n == 0) {
		out->lat_min = 0;
		return;
	}
	/* Nearest rank, 1-based: the value at position ceil(p * n). A
	 * bucket stands for its lowest value, kept within the exact min and
	 * max. */
	r50 = (out->lat_n + 1) / 2;
	r99 = out->lat_n - out->lat_n / 100;
	for (uint32_t b = 0; b < HB_N; b++) {
		if (hist[b] == 0)
			continue;
		out->hist[hb_octave(b)] += hist[b];
		if (seen < r50 && seen + hist[b] >= r50)
			out->lat_p50 = hb_low(b);
		if (seen < r99 && seen + hist[b] >= r99)
			out->lat_p99 = hb_low(b);
		seen += hist[b];
	}
	out->lat_p50 = RTE_MAX(out->lat_min, RTE_MIN(out->lat_p50,
		out->lat_max));
	out->lat_p99 = RTE_MAX(out->lat_min, RTE_MIN(out->lat_p99,
		out->lat_max));
}

int
gpurx_stamps_report(const struct gpurx_stamps *s, struct gpurx_stamp_report *r)
{
	size_t cap = (size_t)s->nq * GPURX_STAMP_STREAMS;
	uint32_t *ids;
	uint64_t *hist;
	uint32_t n = 0;

	memset(r, 0, sizeof(*r));
	for (uint16_t q = 0; q < s->nq; q++) {
		r->stamped += s->q[q].stamped;
		r->unstamped += s->q[q].unstamped;
		r->untracked += s->q[q].untracked;
	}
	ids = malloc(cap * sizeof(*ids));
	hist = malloc(HB_N * sizeof(*hist));
	r->streams = calloc(cap, sizeof(*r->streams));
	if (ids == NULL || hist == NULL || r->streams == NULL) {
		free(ids);
		free(hist);
		free(r->streams);
		r->streams = NULL;
		return -ENOMEM;
	}
	/* Every id once, whichever queues saw it. */
	for (uint16_t q = 0; q < s->nq; q++) {
		for (uint32_t i = 0; i < GPURX_STAMP_STREAMS; i++) {
			const struct stream_state *e = &s->q[q].st[i];
			uint32_t k;

			if (!e->used)
				continue;
			for (k = 0; k < n && ids[k] != e->id; k++)
				;
			if (k == n)
				ids[n++] = e->id;
		}
	}
	for (uint32_t k = 0; k < n; k++)
		merge_stream(s, ids[k], hist, &r->streams[k]);
	qsort(r->streams, n, sizeof(*r->streams), cmp_stream);
	r->n_streams = n;
	free(ids);
	free(hist);
	return 0;
}

void
gpurx_stamps_print(FILE *f, const struct gpurx_stamp_report *r,
		const char *clock)
{
	fprintf(f, "stamps:        %" PRIu64 " stamped packets in %u stream(s), "
		"%" PRIu64 " matched without a stamp, %" PRIu64 " of streams "
		"past %u a queue (not counted)\n", r->stamped, r->n_streams,
		r->unstamped, r->untracked, GPURX_STAMP_STREAMS);
	fprintf(f, "               latency: RX time (%s) minus the stamp's "
		"tx_ns\n", clock);
	for (uint32_t i = 0; i < r->n_streams; i++) {
		const struct gpurx_stamp_stream *s = &r->streams[i];

		fprintf(f, "  stream %" PRIu32 ": received %" PRIu64 ", lost %"
			PRIu64 ", reordered %" PRIu64 " (%" PRIu64 " late), "
			"duplicates %" PRIu64, s->stream, s->received, s->lost,
			s->reordered, s->late, s->duplicates);
		if (s->lat_n != 0)
			fprintf(f, "; latency us min %.3f median %.3f p99 %.3f "
				"max %.3f", s->lat_min / 1e3, s->lat_p50 / 1e3,
				s->lat_p99 / 1e3, s->lat_max / 1e3);
		if (s->lat_n != 0 || s->negative != 0)
			fprintf(f, "; jitter us %.3f", s->jitter / 1e3);
		if (s->negative != 0)
			fprintf(f, "; %" PRIu64 " sent after they were received "
				"(clocks differ)", s->negative);
		fputc('\n', f);
	}
}

void
gpurx_stamps_json(struct gpuapp_json *j, const struct gpurx_stamp_report *r,
		const char *clock)
{
	gpuapp_json_obj_begin(j, "stamps");
	gpuapp_json_u64(j, "stamped", r->stamped);
	gpuapp_json_u64(j, "unstamped", r->unstamped);
	gpuapp_json_u64(j, "untracked", r->untracked);
	gpuapp_json_str(j, "rx_clock", clock);
	gpuapp_json_arr_begin(j, "streams");
	for (uint32_t i = 0; i < r->n_streams; i++) {
		const struct gpurx_stamp_stream *s = &r->streams[i];

		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_u64(j, "stream", s->stream);
		gpuapp_json_u64(j, "received", s->received);
		gpuapp_json_u64(j, "lost", s->lost);
		gpuapp_json_u64(j, "reordered", s->reordered);
		gpuapp_json_u64(j, "late", s->late);
		gpuapp_json_u64(j, "duplicates", s->duplicates);
		gpuapp_json_obj_begin(j, "latency_ns");
		gpuapp_json_u64(j, "count", s->lat_n);
		gpuapp_json_u64(j, "negative", s->negative);
		gpuapp_json_u64(j, "min", s->lat_min);
		gpuapp_json_u64(j, "median", s->lat_p50);
		gpuapp_json_u64(j, "p99", s->lat_p99);
		gpuapp_json_u64(j, "max", s->lat_max);
		gpuapp_json_u64(j, "jitter", s->jitter);
		gpuapp_json_obj_end(j);
		/* Non-empty octaves only: from_ns, its lowest value. */
		gpuapp_json_arr_begin(j, "latency_hist");
		for (uint32_t e = 0; e < GPURX_STAMP_OCTAVES; e++) {
			if (s->hist[e] == 0)
				continue;
			gpuapp_json_obj_begin(j, NULL);
			gpuapp_json_u64(j, "from_ns", e == 0 ? 0 : 1ull << e);
			gpuapp_json_u64(j, "count", s->hist[e]);
			gpuapp_json_obj_end(j);
		}
		gpuapp_json_arr_end(j);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
}
