/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow expiry on the GPU (exits 77 without one):
 * - the scan kernel ends exactly the records the CPU's scan ends, from
 *   the same table (a warp's ring positions reserved together, by
 *   fetch_add with the device's slack, as dpdk-gpu-rx's);
 * - under load: GPU threads update the table (the stress stream of
 *   flow_stress.h, table pressure and records ending on every path)
 *   while scans run on another stream and a host thread takes the
 *   records from the ring (its records in GPU memory, taken through the
 *   host copies gpurx_flow_cuda_pull() makes, as dpdk-gpu-rx's exporter
 *   does) while the GPU writes them: every
 *   packet is then in exactly one record or live entry of its key, with
 *   its bytes, no record mixes keys, no key is live twice.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow_stress.h"
#include "flow_stress_gpu.h"
#include "flow_table.h"
#include "gpucuda.h"
#include "flow_scan.h"
#include "core_kernels.h"
#include "check.h"

#define EXIT_SKIP 77

#define CUDA_OK(call) do { \
	int rc_ = (call); \
	if (rc_ != 0) { \
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
			gpucuda_strerror(rc_)); \
		exit(1); \
	} \
} while (0)

/* Records a pull copies at most, as dpdk-gpu-rx's exporter. */
#define PULL_RECORDS 4096u

struct gtbl {
	struct gpurx_flow_table *ft;	/* host copy */
	struct gpurx_flow_table *d_ft;	/* device */
	/* As in GPU modes: header and host copies in mapped host memory,
	 * records in GPU memory. */
	struct gpurx_flow_ring *ring;
	void *d_recs, *mirror;
	void *stream;			/* the pulls' */
	size_t bytes;
	uint64_t tail;
	uint64_t limit, slack;		/* records waiting at most; slack */
};

static void
gtbl_new(struct gtbl *t, uint32_t capacity, uint32_t probe, uint64_t ring,
		uint64_t idle, uint64_t active, uint64_t linger)
{
	const uint32_t cap = ring < PULL_RECORDS ? (uint32_t)ring : PULL_RECORDS;
	uint64_t size;
	void *r;

	/* `ring` records may wait; the ring holds the slack beyond. */
	CUDA_OK(gpurx_flow_cuda_ring_slack(&t->slack));
	size = gpurx_flow_ring_size_for(ring, t->slack);
	t->limit = ring;
	t->bytes = gpurx_flow_table_bytes(capacity);
	t->ft = gpurx_flow_table_init(aligned_alloc(64, t->bytes), capacity,
		probe);
	CUDA_OK(gpurx_flow_cuda_host_alloc(&r, sizeof(struct gpurx_flow_ring)));
	CUDA_OK(gpurx_flow_cuda_host_alloc(&t->mirror,
		gpurx_flow_ring_mirror_bytes(cap)));
	CUDA_OK(gpurx_flow_cuda_dev_zalloc(&t->d_recs,
		size * sizeof(struct gpurx_flow_rec)));
	t->ring = gpurx_flow_ring_init_dev(r, t->d_recs, size, t->mirror, cap);
	if (t->ft == NULL || t->ring == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	gpurx_flow_table_set_expiry(t->ft, t->ring, idle, active, linger);
	CHECK_EQ(gpurx_flow_table_set_ring_slack(t->ft, t->limit, t->slack), 0);
	CUDA_OK(gpurx_flow_cuda_dev_alloc((void **)&t->d_ft, t->bytes));
	CUDA_OK(gpucuda_stream_create(&t->stream));
	t->tail = 0;
}

static void
gtbl_free(struct gtbl *t)
{
	CUDA_OK(gpucuda_stream_destroy(t->stream));
	CUDA_OK(gpurx_flow_cuda_dev_free(t->d_ft));
	CUDA_OK(gpurx_flow_cuda_dev_free(t->d_recs));
	CUDA_OK(gpurx_flow_cuda_host_free(t->mirror));
	CUDA_OK(gpurx_flow_cuda_host_free(t->ring));
	free(t->ft);
}

/* The records published from t->tail on, as far as a pull reaches: copied
 * over, then each given to take(). Returns how many positions passed. */
static uint32_t
gtbl_take(struct gtbl *t, void (*take)(void *, const struct gpurx_flow_rec *),
		void *arg)
{
	const struct gpurx_flow_rec *r;
	uint32_t n = 0;

	CUDA_OK(gpurx_flow_cuda_pull(t->ring, &t->d_ft->ring_head, t->tail,
		t->stream));
	while ((r = gpurx_flow_ring_peek(t->ring, t->tail)) != NULL) {
		if (r->reason != GPURX_FLOW_END_NONE)
			take(arg, r);
		t->tail++;
		n++;
	}
	if (n != 0)
		gpurx_flow_ring_consumed(t->ring, t->tail);
	return n;
}

struct rec_list {
	struct gpurx_flow_rec *r;
	uint32_t n, max;
};

static void
rec_list_add(void *arg, const struct gpurx_flow_rec *r)
{
	struct rec_list *l = arg;

	if (l->n < l->max)
		l->r[l->n++] = *r;
}

static int
rec_cmp(const void *pa, const void *pb)
{
	const struct gpurx_flow_rec *a = pa, *b = pb;
	int c = memcmp(&a->key, &b->key, sizeof(a->key));

	if (c != 0)
		return c;
	return a->first_ns < b->first_ns ? -1 : a->first_ns > b->first_ns;
}

/* The scan kernel ends what the CPU's scan ends, from the same table. */
static void
test_scan_equals_cpu(void)
{
	const uint32_t cap = 1 << 14;
	struct gpurx_flow_rec *want, *got;
	struct gpurx_flow_ring *cring;
	struct rec_list gl;
	uint32_t nw = 0, ng = 0;
	uint64_t now = 0, ctail = 0;
	void *stream;
	struct gtbl t;

	gtbl_new(&t, cap, 0, 1 << 14, 2000, 20000, 100);
	/* The CPU's records go to a ring of its own, in host memory. */
	cring = gpurx_flow_ring_init(aligned_alloc(64,
		gpurx_flow_ring_bytes(1 << 14)), 1 << 14);
	if (cring == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	gpurx_flow_table_set_expiry(t.ft, cring, 2000, 20000, 100);
	/* 60000 packets of the stress stream on the CPU: records of every
	 * age, some FIN-ended, some past their active timeout. */
	for (uint64_t i = 0; i < 60000; i++) {
		struct gpurx_flow_key k;
		uint32_t id;
		uint8_t flags;

		flow_stress_pkt(i, 10, 3000, &id, &flags);
		flow_stress_key(id, &k);
		gpurx_flow_update_pkt(t.ft, &k, flow_stress_bytes(id), i, flags, 0);
	}
	/* Whatever ended on the way is not what is compared: the GPU's
	 * table ends into the GPU ring from its start. */
	ctail = t.ft->ring_head;
	gpurx_flow_ring_consumed(cring, ctail);
	gpurx_flow_table_set_expiry(t.ft, t.ring, 2000, 20000, 100);
	CHECK_EQ(gpurx_flow_table_set_ring_slack(t.ft, t.limit, t.slack), 0);
	t.ft->ring_head = t.ft->ring_tail_seen = 0;
	now = 61000;
	CUDA_OK(gpucuda_copy(t.d_ft, t.ft, t.bytes));
	CUDA_OK(gpucuda_stream_create(&stream));
	CUDA_OK(gpurx_flow_cuda_scan(t.d_ft, cap, now, stream));
	CUDA_OK(gpucuda_stream_sync(stream));
	want = calloc(cap, sizeof(*want));
	got = calloc(cap, sizeof(*got));
	/* Pull after pull (PULL_RECORDS each) until one brings nothing:
	 * the scan is done, everything reserved is published. */
	gl.r = got;
	gl.n = 0;
	gl.max = cap;
	while (gtbl_take(&t, rec_list_add, &gl) != 0)
		;
	ng = gl.n;
	CUDA_OK(gpucuda_copy(&t.ft->ring_head, &t.d_ft->ring_head,
		sizeof(uint64_t)));
	CHECK_EQ(t.tail, t.ft->ring_head);
	/* The CPU's scan of its own table (as it was before the GPU's), into
	 * its ring. */
	gpurx_flow_table_set_expiry(t.ft, cring, 2000, 20000, 100);
	t.ft->ring_head = t.ft->ring_tail_seen = ctail;
	gpurx_flow_scan(t.ft, 0, cap, now);
	for (const struct gpurx_flow_rec *r;
			(r = gpurx_flow_ring_peek(cring, ctail)) != NULL;
			gpurx_flow_ring_consumed(cring, ++ctail))
		if (r->reason != GPURX_FLOW_END_NONE && nw < cap)
			want[nw++] = *r;
	CHECK(nw > 1000, "only %u records due", nw);
	CHECK_EQ(ng, nw);
	qsort(want, nw, sizeof(*want), rec_cmp);
	qsort(got, ng, sizeof(*got), rec_cmp);
	for (uint32_t i = 0; i < nw && i < ng; i++)
		CHECK(memcmp(&want[i].key, &got[i].key, sizeof(want[i].key)) == 0 &&
			want[i].packets == got[i].packets &&
			want[i].bytes == got[i].bytes &&
			want[i].first_ns == got[i].first_ns &&
			want[i].last_ns == got[i].last_ns &&
			want[i].tcp_flags == got[i].tcp_flags &&
			want[i].reason == got[i].reason,
			"record %u differs between the GPU's and the CPU's scan", i);
	free(want);
	free(got);
	free(cring);
	CUDA_OK(gpucuda_stream_destroy(stream));
	gtbl_free(&t);
}

/* --- Under load ---------------------------------------------------------- */

#define LD_PKTS (8u << 20)
#define LD_CHUNK (1u << 18)
#define LD_CHURN 16
#define LD_WINDOW 60000

struct consumer {
	struct gtbl *t;
	uint32_t keys;
	uint64_t *exported, *exported_bytes;
	uint64_t records, bad;
	int stop;
};

static void
consume_rec(void *arg, const struct gpurx_flow_rec *r)
{
	struct consumer *c = arg;
	int64_t id = flow_stress_rec_check(r, c->keys);

	if (id < 0) {
		c->bad++;
	} else {
		c->exported[id] += r->packets;
		c->exported_bytes[id] += r->bytes;
		c->records++;
	}
}

static void *
consume(void *arg)
{
	struct consumer *c = arg;

	for (;;) {
		/* Read before the pull: once set, every producer is done and
		 * that pull sees every position reserved. */
		int stop = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);

		if (gtbl_take(c->t, consume_rec, c) == 0) {
			if (stop)
				break;
			sched_yield();
		}
	}
	return NULL;
}

static void
test_under_load(void)
{
	const uint32_t keys = LD_PKTS / LD_CHURN + LD_WINDOW + 1;
	struct consumer c = { 0 };
	const struct gpurx_flow_entry *e;
	uint8_t *over = malloc(LD_PKTS), *d_over, *live;
	uint64_t *sent = calloc(keys, sizeof(*sent)), overflow = 0;
	uint64_t mismatched = 0;
	uint32_t pos = 0, dup = 0;
	void *upd_stream, *scan_stream;
	pthread_t th;
	struct gtbl t;

	/* 64 K slots for a window of 60 K hot keys and those going idle
	 * behind it: pressure; a ring of 4 K records: at times full. */
	gtbl_new(&t, 1 << 16, 64, 1 << 12, 150000, 400000, 3000);
	CUDA_OK(gpucuda_copy(t.d_ft, t.ft, t.bytes));
	CUDA_OK(gpurx_flow_cuda_dev_alloc((void **)&d_over, LD_PKTS));
	CUDA_OK(gpucuda_stream_create(&upd_stream));
	CUDA_OK(gpurx_flow_cuda_stream(&scan_stream));
	c.t = &t;
	c.keys = keys;
	c.exported = calloc(keys, sizeof(uint64_t));
	c.exported_bytes = calloc(keys, sizeof(uint64_t));
	live = calloc(keys, 1);
	pthread_create(&th, NULL, consume, &c);
	for (uint32_t first = 0; first < LD_PKTS; first += LD_CHUNK) {
		CUDA_OK(fsg_updates(t.d_ft, first, LD_CHUNK, LD_CHURN, LD_WINDOW,
			d_over + first, upd_stream));
		/* A scan beside the updates whenever the last one is done, at
		 * the time the updates queued so far reach. */
		if (gpucuda_stream_busy(scan_stream) == 0)
			CUDA_OK(gpurx_flow_cuda_scan(t.d_ft, t.ft->capacity,
				first, scan_stream));
	}
	while (gpucuda_stream_busy(upd_stream) == -1)
		if (gpucuda_stream_busy(scan_stream) == 0)
			CUDA_OK(gpurx_flow_cuda_scan(t.d_ft, t.ft->capacity,
				LD_PKTS, scan_stream));
	CUDA_OK(gpucuda_stream_sync(upd_stream));
	CUDA_OK(gpucuda_stream_sync(scan_stream));
	/* Every producer is done: what is published is all there is. */
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CUDA_OK(gpucuda_copy(t.ft, t.d_ft, t.bytes));
	CUDA_OK(gpucuda_copy(over, d_over, LD_PKTS));
	CHECK_EQ(t.tail, t.ft->ring_head);

	for (uint64_t i = 0; i < LD_PKTS; i++) {
		uint32_t id;
		uint8_t flags;

		flow_stress_pkt(i, LD_CHURN, LD_WINDOW, &id, &flags);
		if (over[i])
			overflow++;
		else
			sent[id]++;
	}
	while ((e = gpurx_flow_table_next(t.ft, &pos)) != NULL) {
		uint32_t id = flow_stress_key_id(&e->key);

		CHECK(id < keys, "live key %u out of range", id);
		if (id >= keys)
			continue;
		dup += live[id];
		live[id] = 1;
		CHECK(gpurx_flow_live(e)->bytes ==
			gpurx_flow_live(e)->packets * flow_stress_bytes(id),
			"live key %u mixes counts", id);
		c.exported[id] += gpurx_flow_live(e)->packets;
		c.exported_bytes[id] += gpurx_flow_live(e)->bytes;
	}
	for (uint32_t k = 0; k < keys; k++)
		mismatched += c.exported[k] != sent[k] ||
			c.exported_bytes[k] != sent[k] * flow_stress_bytes(k);
	printf("gpu under load: %u packets, %llu overflow, %llu records (idle "
		"%llu, active %llu, eof %llu, pressure %llu), ring full %llu\n",
		LD_PKTS, (unsigned long long)overflow,
		(unsigned long long)c.records,
		(unsigned long long)t.ft->ended[GPURX_FLOW_END_IDLE],
		(unsigned long long)t.ft->ended[GPURX_FLOW_END_ACTIVE],
		(unsigned long long)t.ft->ended[GPURX_FLOW_END_EOF],
		(unsigned long long)t.ft->ended[GPURX_FLOW_END_PRESSURE],
		(unsigned long long)t.ft->ring_full);
	CHECK_EQ(dup, 0);
	CHECK_EQ(c.bad, 0);
	CHECK_EQ(mismatched, 0);
	CHECK_EQ(overflow, t.ft->overflow_pkts);
	CHECK_EQ(c.records, t.ft->ended[GPURX_FLOW_END_IDLE] +
		t.ft->ended[GPURX_FLOW_END_ACTIVE] +
		t.ft->ended[GPURX_FLOW_END_EOF] +
		t.ft->ended[GPURX_FLOW_END_PRESSURE]);
	CHECK(t.ft->ended[GPURX_FLOW_END_IDLE] > 0 &&
		t.ft->ended[GPURX_FLOW_END_ACTIVE] > 0 &&
		t.ft->ended[GPURX_FLOW_END_EOF] > 0 &&
		t.ft->ended[GPURX_FLOW_END_PRESSURE] > 0,
		"a path was not exercised");
	CUDA_OK(gpucuda_stream_destroy(upd_stream));
	CUDA_OK(gpucuda_stream_destroy(scan_stream));
	CUDA_OK(gpurx_flow_cuda_dev_free(d_over));
	gtbl_free(&t);
	free(c.exported);
	free(c.exported_bytes);
	free(live);
	free(sent);
	free(over);
}

int
main(void)
{
	char why[256] = "";

	if (gpurx_core_gpu_count(why, sizeof(why)) <= 0) {
		printf("SKIP: no usable GPU (%s)\n", why);
		return EXIT_SKIP;
	}
	test_scan_equals_cpu();
	test_under_load();
	return check_finish("test_gpu_flow");
}
