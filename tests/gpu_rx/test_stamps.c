/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receiver's stamp accounting (app/stamps.c) on sequences fed to it
 * directly: the duplicate window's edge, a stream over two queues, more
 * streams than a queue tracks, and latency percentiles across scales
 * against the exact nearest-rank values (within the documented 1/64) and
 * octave counts (exact), and
 * RFC 3550 jitter against values worked out by hand.
 */
#include <stdint.h>
#include <stdlib.h>

#include "stamps.h"
#include "check.h"

static void
feed(struct gpurx_stamps *s, uint16_t q, uint32_t stream, uint64_t seq,
		uint64_t rx_ns, uint64_t tx_ns)
{
	struct gpugen_stamp st = { stream, seq, tx_ns };

	gpurx_stamps_add(s, q, &st, rx_ns);
}

static const struct gpurx_stamp_stream *
find(const struct gpurx_stamp_report *r, uint32_t id)
{
	for (uint32_t i = 0; i < r->n_streams; i++)
		if (r->streams[i].stream == id)
			return &r->streams[i];
	return NULL;
}

/* Stream id of r has these counts. */
static void
expect_counts(const struct gpurx_stamp_report *r, uint32_t id,
		uint64_t received, uint64_t dup, uint64_t late,
		uint64_t reordered, uint64_t lost)
{
	const struct gpurx_stamp_stream *x = find(r, id);

	CHECK(x != NULL && x->received == received && x->duplicates == dup &&
		x->late == late && x->reordered == reordered && x->lost == lost,
		"stream %u: received %llu dup %llu late %llu reordered %llu "
		"lost %llu", id, x ? (unsigned long long)x->received : 0,
		x ? (unsigned long long)x->duplicates : 0,
		x ? (unsigned long long)x->late : 0,
		x ? (unsigned long long)x->reordered : 0,
		x ? (unsigned long long)x->lost : 0);
}

/* A duplicate just inside the window is one; just outside it is late. */
static void
test_window(void)
{
	struct gpurx_stamps *s = gpurx_stamps_create(1);
	struct gpurx_stamp_report r;
	const uint64_t w = GPURX_STAMP_WINDOW;

	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	/* Stream 1: 0..w, then 1 again (w - 1 below the top: duplicate)
	 * and 0 again (w below: late, taken for a first copy). */
	for (uint64_t q = 0; q <= w; q++)
		feed(s, 0, 1, q, 0, 0);
	feed(s, 0, 1, 1, 0, 0);
	feed(s, 0, 1, 0, 0, 0);
	/* Stream 2: 0, 2*w (the window cleared whole by the jump), then 0
	 * (late) and w + 1 (within the window, never seen: reordered). */
	feed(s, 0, 2, 0, 0, 0);
	feed(s, 0, 2, 2 * w, 0, 0);
	feed(s, 0, 2, 0, 0, 0);
	feed(s, 0, 2, w + 1, 0, 0);
	gpurx_stamps_add(s, 0, NULL, 0);
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	CHECK(r.n_streams == 2 && r.stamped == w + 3 + 4 && r.unstamped == 1,
		"%u streams, %llu stamped, %llu unstamped", r.n_streams,
		(unsigned long long)r.stamped, (unsigned long long)r.unstamped);
	expect_counts(&r, 1, w + 3, 1, 1, 1, 0);
	/* Seen: 0 (twice, the second late), w + 1, 2w: 2w + 1 numbers. */
	expect_counts(&r, 2, 4, 0, 1, 2, 2 * w + 1 - 4);
	free(r.streams);
	gpurx_stamps_free(s);
}

/* Even numbers on queue 0, odd on queue 1, 7 missing: merged, one loss. */
static void
test_two_queues(void)
{
	struct gpurx_stamps *s = gpurx_stamps_create(2);
	struct gpurx_stamp_report r;
	const struct gpurx_stamp_stream *x;

	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	for (uint64_t q = 0; q < 100; q++)
		if (q != 7)
			feed(s, (uint16_t)(q % 2), 5, q, 1000 + q, 1000);
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	x = find(&r, 5);
	CHECK(r.n_streams == 1 && x != NULL && x->received == 99 &&
		x->lost == 1 && x->reordered == 0 && x->duplicates == 0 &&
		x->lat_n == 99 && x->lat_min == 0 && x->lat_max == 99,
		"two queues: %u streams", r.n_streams);
	free(r.streams);
	gpurx_stamps_free(s);
}

/* Past GPURX_STAMP_STREAMS streams on a queue: counted untracked. */
static void
test_many_streams(void)
{
	struct gpurx_stamps *s = gpurx_stamps_create(1);
	struct gpurx_stamp_report r;

	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	for (uint32_t id = 0; id < GPURX_STAMP_STREAMS + 10; id++)
		for (uint64_t q = 0; q < 3; q++)
			feed(s, 0, id * 7919u, q, 0, 0);
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	CHECK(r.n_streams == GPURX_STAMP_STREAMS && r.untracked == 30 &&
		r.stamped == 3 * (GPURX_STAMP_STREAMS + 10),
		"%u streams, %llu untracked", r.n_streams,
		(unsigned long long)r.untracked);
	for (uint32_t i = 1; i < r.n_streams; i++)
		CHECK(r.streams[i - 1].stream < r.streams[i].stream,
			"streams not in increasing id");
	free(r.streams);
	gpurx_stamps_free(s);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Latencies spread over ns to s: percentiles within 1/64 below exact. */
static void
test_latency_scales(void)
{
	enum { N = 10007 };
	static uint64_t lat[N];
	struct gpurx_stamps *s = gpurx_stamps_create(1);
	struct gpurx_stamp_report r;
	const struct gpurx_stamp_stream *x;
	uint64_t v = 88172645463325252ull, p50, p99;
	uint64_t oct[GPURX_STAMP_OCTAVES] = { 0 };
	int oct_ok = 1;

	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	for (uint64_t q = 0; q < N; q++) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		/* 0 .. 2^31 ns, every scale as likely. */
		lat[q] = (v >> 33) >> (v % 31);
		feed(s, 0, 9, q, (1ull << 40) + lat[q], 1ull << 40);
		oct[lat[q] < 2 ? 0 : 63 - __builtin_clzll(lat[q])]++;
	}
	feed(s, 0, 9, N, 5, 6);	/* sent after it was received */
	qsort(lat, N, sizeof(lat[0]), cmp_u64);
	p50 = lat[(N + 1) / 2 - 1];
	p99 = lat[(N * 99 + 99) / 100 - 1];
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	x = find(&r, 9);
	CHECK(x != NULL && x->lat_n == N && x->negative == 1 &&
		x->lat_min == lat[0] && x->lat_max == lat[N - 1],
		"count, negative, min, max");
	CHECK(x != NULL && x->lat_p50 <= p50 && p50 - x->lat_p50 <= p50 / 64 &&
		x->lat_p99 <= p99 && p99 - x->lat_p99 <= p99 / 64,
		"p50 %llu (exact %llu), p99 %llu (exact %llu)",
		x ? (unsigned long long)x->lat_p50 : 0, (unsigned long long)p50,
		x ? (unsigned long long)x->lat_p99 : 0, (unsigned long long)p99);
	/* The octaves exact: a fine bucket never straddles two. */
	for (uint32_t e = 0; x != NULL && e < GPURX_STAMP_OCTAVES; e++)
		oct_ok &= x->hist[e] == oct[e];
	CHECK(x != NULL && oct_ok, "latency octaves differ from the exact "
		"counts");
	free(r.streams);
	gpurx_stamps_free(s);
}

/*
 * RFC 3550 jitter on transits worked out by hand: J_k = J_(k-1) +
 * (|D_k| - J_(k-1)) / 16 from J = 0, over a queue's packets in arrival
 * order, those without an RX time skipped.
 */
static void
test_jitter(void)
{
	/* Transits 1000, 1100, 900, 900, 1300 ns: D 100, 200, 0, 400;
	 * J 6.25, 18.359375, 17.2119140625, 41.13616943359375. */
	static const int64_t transit[] = { 1000, 1100, 900, 900, 1300 };
	struct gpurx_stamps *s = gpurx_stamps_create(2);
	struct gpurx_stamp_report r;
	const struct gpurx_stamp_stream *x;
	const uint64_t base = 1ull << 50;

	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	for (uint64_t k = 0; k < sizeof(transit) / sizeof(transit[0]); k++) {
		uint64_t rx = base + k * 1000000;

		feed(s, 0, 1, k, rx, rx - (uint64_t)transit[k]);
		/* No RX time (--ts none): no effect on J. */
		if (k == 2)
			feed(s, 0, 1, 100 + k, 0, rx);
	}
	/* A constant clock offset, tx_ns after the RX time: J 0. */
	for (uint64_t k = 0; k < 50; k++)
		feed(s, 0, 2, k, base + k * 1000, base + k * 1000 + 777);
	/* Transits alternating 0 and 1600: J = 1600 (1 - (15/16)^n) after
	 * n steps: 100 after one, 1600 within 0.5 after 150. */
	feed(s, 0, 3, 0, base, base);
	feed(s, 0, 3, 1, base + 10, base + 10 - 1600);
	/* Stream 4 over two queues: 2 packets on queue 0 (J 100), 3 on
	 * queue 1 (transits 0, 320, 0: J 20 then 38.75): queue 1's. */
	feed(s, 0, 4, 0, base, base);
	feed(s, 0, 4, 1, base + 5, base + 5 - 1600);
	feed(s, 1, 4, 2, base + 10, base + 10);
	feed(s, 1, 4, 3, base + 15, base + 15 - 320);
	feed(s, 1, 4, 4, base + 20, base + 20);
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	x = find(&r, 1);
	CHECK(x != NULL && x->jitter == 41, "stream 1: jitter %llu, want 41",
		x ? (unsigned long long)x->jitter : 0);
	x = find(&r, 2);
	CHECK(x != NULL && x->jitter == 0 && x->negative == 50,
		"stream 2: jitter %llu, want 0 (offset clocks)",
		x ? (unsigned long long)x->jitter : 0);
	x = find(&r, 3);
	CHECK(x != NULL && x->jitter == 100, "stream 3: jitter %llu, want 100",
		x ? (unsigned long long)x->jitter : 0);
	x = find(&r, 4);
	CHECK(x != NULL && x->jitter == 39, "stream 4: jitter %llu, want 39",
		x ? (unsigned long long)x->jitter : 0);
	free(r.streams);
	gpurx_stamps_free(s);

	s = gpurx_stamps_create(1);
	CHECK(s != NULL, "create");
	if (s == NULL)
		return;
	for (uint64_t k = 0; k <= 150; k++)
		feed(s, 0, 5, k, base + k * 10, base + k * 10 -
			(k % 2 ? 1600 : 0));
	CHECK(gpurx_stamps_report(s, &r) == 0, "report");
	x = find(&r, 5);
	CHECK(x != NULL && x->jitter == 1600, "stream 5: jitter %llu, want 1600",
		x ? (unsigned long long)x->jitter : 0);
	free(r.streams);
	gpurx_stamps_free(s);
}

int
main(void)
{
	test_window();
	test_two_queues();
	test_many_streams();
	test_latency_scales();
	test_jitter();
	return check_finish("test_stamps");
}
