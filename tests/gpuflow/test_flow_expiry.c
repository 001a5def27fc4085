/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow expiry (flow_table.h) on the CPU: each way a record ends (idle,
 * active, FIN/RST after the linger, pressure), the scan, a full export
 * ring, the reason at exit; a random stream against a plain sequential
 * model of the same rules; and the concurrency protocol under load:
 * updating threads, a scanning thread and a consuming thread at once,
 * every packet found exactly once in a record, a live entry or the
 * overflow count, no record mixing keys, no key live twice; and the ring
 * laid out as in GPU modes, its records taken through two host copies.
 */
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow_stress.h"
#include "flow_table.h"
#include "check.h"

struct tbl {
	struct gpurx_flow_table *ft;
	struct gpurx_flow_ring *ring;
	uint64_t tail;		/* consumer position */
};

/* aligned_alloc() wants a multiple of the alignment. */
static void *
alloc64(size_t n)
{
	return aligned_alloc(64, (n + 63) & ~(size_t)63);
}

static void
tbl_new(struct tbl *t, uint32_t capacity, uint32_t probe, uint64_t ring_size,
		uint64_t idle, uint64_t active, uint64_t linger)
{
	void *mem = alloc64(gpurx_flow_table_bytes(capacity));
	void *rmem = alloc64(gpurx_flow_ring_bytes(ring_size));

	t->ft = gpurx_flow_table_init(mem, capacity, probe);
	t->ring = gpurx_flow_ring_init(rmem, ring_size);
	t->tail = 0;
	if (t->ft == NULL || t->ring == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	gpurx_flow_table_set_expiry(t->ft, t->ring, idle, active, linger);
}

static void
tbl_free(struct tbl *t)
{
	free(t->ft);
	free(t->ring);
}

/* Take every record published so far (empty slots skipped) into out. */
static uint32_t
tbl_drain(struct tbl *t, struct gpurx_flow_rec *out, uint32_t max)
{
	const struct gpurx_flow_rec *r;
	uint32_t n = 0;

	while ((r = gpurx_flow_ring_peek(t->ring, t->tail)) != NULL) {
		if (r->reason != GPURX_FLOW_END_NONE) {
			CHECK(n < max, "more records than expected");
			if (n < max)
				out[n++] = *r;
		}
		gpurx_flow_ring_consumed(t->ring, ++t->tail);
	}
	return n;
}

static void
key_id(uint32_t id, struct gpurx_flow_key *k)
{
	flow_stress_key(id, k);
}

static int
upd(struct tbl *t, uint32_t id, uint64_t bytes, uint64_t ts, uint8_t flags)
{
	struct gpurx_flow_key k;

	key_id(id, &k);
	return gpurx_flow_update_pkt(t->ft, &k, bytes, ts, flags, 3);
}

/* The same with a TTL, into the record's range. */
static int
upd_ttl(struct tbl *t, uint32_t id, uint64_t bytes, uint64_t ts,
		uint8_t flags, uint8_t ttl)
{
	struct gpurx_flow_key k;

	key_id(id, &k);
	return gpurx_flow_update_pkt_attr(t->ft, &k, gpurx_flow_hash(&k),
		bytes, ts, flags, ttl, NULL, 3);
}

static void
check_rec(const struct gpurx_flow_rec *r, uint32_t id, uint64_t packets,
		uint64_t bytes, uint64_t first, uint64_t last, uint32_t reason)
{
	CHECK(flow_stress_key_id(&r->key) == id, "record of key %u, want %u",
		flow_stress_key_id(&r->key), id);
	CHECK(r->packets == packets && r->bytes == bytes &&
		r->first_ns == first && r->last_ns == last && r->reason == reason,
		"key %u: %llu pkts %llu B [%llu, %llu] reason %u; want %llu pkts "
		"%llu B [%llu, %llu] reason %u", id,
		(unsigned long long)r->packets, (unsigned long long)r->bytes,
		(unsigned long long)r->first_ns, (unsigned long long)r->last_ns,
		r->reason, (unsigned long long)packets,
		(unsigned long long)bytes, (unsigned long long)first,
		(unsigned long long)last, reason);
}

/* Each way a record ends, packet by packet. */
static void
test_lifetimes(void)
{
	struct gpurx_flow_rec rec[16];
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_key k;
	struct tbl t;

	/* Idle 10, active 25, linger 2. */
	tbl_new(&t, 256, 32, 64, 10, 25, 2);

	/* Idle: packets at 0, 1, 9; one at 19 (10 after 9) starts anew. */
	upd(&t, 1, 100, 0, 0);
	upd(&t, 1, 100, 1, 0);
	upd(&t, 1, 100, 9, 0);
	CHECK_EQ(tbl_drain(&t, rec, 16), 0);
	upd(&t, 1, 100, 19, 0);
	CHECK_EQ(tbl_drain(&t, rec, 16), 1);
	check_rec(&rec[0], 1, 3, 300, 0, 9, GPURX_FLOW_END_IDLE);
	key_id(1, &k);
	e = gpurx_flow_table_find(t.ft, &k);
	CHECK(e != NULL && gpurx_flow_live(e)->packets == 1 &&
		gpurx_flow_live(e)->first_seen == 19 &&
		gpurx_flow_live_queue(e) == 3, "the new record of key 1");

	/* Active: a packet every 5 from 100: the record ends 25 after its
	 * first packet; the packet at 125 starts the next one. */
	for (uint64_t ts = 100; ts <= 160; ts += 5)
		upd(&t, 2, 10, ts, 0x10);
	CHECK_EQ(tbl_drain(&t, rec, 16), 2);
	check_rec(&rec[0], 2, 5, 50, 100, 120, GPURX_FLOW_END_ACTIVE);
	check_rec(&rec[1], 2, 5, 50, 125, 145, GPURX_FLOW_END_ACTIVE);
	CHECK_EQ(rec[0].tcp_flags, 0x10);

	/* FIN at 201, the last ACK within the linger joins, a packet 2 after
	 * the last one starts anew. */
	upd(&t, 3, 60, 200, 0x18);
	upd(&t, 3, 60, 201, 0x11);
	upd(&t, 3, 60, 202, 0x10);
	CHECK_EQ(tbl_drain(&t, rec, 16), 0);
	upd(&t, 3, 60, 204, 0x02);
	CHECK_EQ(tbl_drain(&t, rec, 16), 1);
	check_rec(&rec[0], 3, 3, 180, 200, 202, GPURX_FLOW_END_EOF);
	CHECK_EQ(rec[0].tcp_flags, 0x19);

	/* The scan ends what is due at its time, nothing earlier. Key 1
	 * (last 19), 2 (first 150, last 160), 3 (204): at 214 key 2's idle
	 * deadline (170) came first: idle, not active. */
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, t.ft->capacity, 213), 2);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, t.ft->capacity, 214), 1);
	CHECK_EQ(tbl_drain(&t, rec, 16), 3);
	for (int i = 0; i < 3; i++) {
		uint32_t id = flow_stress_key_id(&rec[i].key);

		if (id == 2)
			check_rec(&rec[i], 2, 3, 30, 150, 160, GPURX_FLOW_END_IDLE);
		else if (id == 1)
			check_rec(&rec[i], 1, 1, 100, 19, 19, GPURX_FLOW_END_IDLE);
		else
			check_rec(&rec[i], 3, 1, 60, 204, 204, GPURX_FLOW_END_IDLE);
	}
	/* RST the same way, ended by the scan once the linger is over. */
	upd(&t, 4, 60, 300, 0x04);
	upd(&t, 4, 60, 301, 0x10);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, t.ft->capacity, 302), 0);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, t.ft->capacity, 303), 1);
	CHECK_EQ(tbl_drain(&t, rec, 16), 1);
	check_rec(&rec[0], 4, 2, 120, 300, 301, GPURX_FLOW_END_EOF);
	CHECK_EQ(rec[0].tcp_flags, 0x14);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_IDLE], 4);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_ACTIVE], 2);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_EOF], 2);
	CHECK_EQ(t.ft->n_flows, 8);
	tbl_free(&t);

	/* Without a ring, nothing ever ends. */
	{
		void *mem = alloc64(gpurx_flow_table_bytes(64));
		struct gpurx_flow_table *ft = gpurx_flow_table_init(mem, 64, 0);

		key_id(9, &k);
		gpurx_flow_update_pkt(ft, &k, 1, 0, 0x01, 0);
		gpurx_flow_update_pkt(ft, &k, 1, 1000000, 0, 0);
		CHECK_EQ(gpurx_flow_scan(ft, 0, 64, UINT64_MAX), 0);
		e = gpurx_flow_table_find(ft, &k);
		CHECK(e != NULL && gpurx_flow_live(e)->packets == 2,
			"no-expiry table lost packets");
		free(mem);
	}
}

/* Pressure ends the flow seen longest ago in the window; a full ring
 * ends nothing and loses nothing. */
static void
test_pressure_and_full_ring(void)
{
	struct gpurx_flow_rec rec[64];
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_key k;
	uint32_t pos = 0, live = 0;
	struct tbl t;

	/* 8 slots, the window is the whole table; no timeouts. */
	tbl_new(&t, 8, 8, 64, 0, 0, 0);
	for (uint32_t id = 0; id < 8; id++)
		CHECK_EQ(upd(&t, id, 10, 100 - id, 0), 0);
	/* Key 5 gets a late packet; key 7 (last 93) is now the oldest. */
	upd(&t, 5, 10, 200, 0);
	CHECK_EQ(upd(&t, 100, 10, 300, 0), 0);
	CHECK_EQ(tbl_drain(&t, rec, 64), 1);
	check_rec(&rec[0], 7, 1, 10, 93, 93, GPURX_FLOW_END_PRESSURE);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_PRESSURE], 1);
	CHECK_EQ(t.ft->overflow_pkts, 0);
	tbl_free(&t);

	/* A ring of 2 records and no consumer: 2 of 5 due flows end, the
	 * others stay live and end once it has room. */
	tbl_new(&t, 64, 64, 2, 10, 0, 0);
	for (uint32_t id = 0; id < 5; id++)
		upd(&t, id, 10, id, 0);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, 64, 1000), 2);
	CHECK_EQ(t.ft->ring_full, 3);
	while ((e = gpurx_flow_table_next(t.ft, &pos)) != NULL)
		live++;
	CHECK_EQ(live, 3);
	/* A packet of a due flow while the ring is full: counted in it. */
	pos = 0;
	e = gpurx_flow_table_next(t.ft, &pos);
	CHECK(e != NULL, "a due flow left live");
	if (e != NULL)
		k = e->key;
	gpurx_flow_update_pkt(t.ft, &k, 10, 2000, 0, 0);
	CHECK(e != NULL && gpurx_flow_live(e)->packets == 2,
		"packet not counted in a flow "
		"that could not end");
	CHECK_EQ(tbl_drain(&t, rec, 64), 2);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, 64, 3000), 2);
	CHECK_EQ(tbl_drain(&t, rec, 64), 2);
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, 64, 3000), 1);
	CHECK_EQ(tbl_drain(&t, rec, 64), 1);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_IDLE], 5);
	/* A full window and a full ring: the packet overflows. */
	tbl_free(&t);
	tbl_new(&t, 4, 4, 1, 0, 0, 0);
	for (uint32_t id = 0; id < 5; id++)
		upd(&t, id, 10, id, 0);
	CHECK_EQ(t.ft->ended[GPURX_FLOW_END_PRESSURE], 1);
	CHECK_EQ(upd(&t, 50, 10, 9, 0), -1);
	CHECK_EQ(t.ft->overflow_pkts, 1);
	CHECK_EQ(t.ft->overflow_bytes, 10);
	tbl_free(&t);
}

/* The reason a flow live at exit is given. */
static void
test_final_reason(void)
{
	struct gpurx_flow_entry e;
	struct tbl t;

	tbl_new(&t, 16, 0, 16, 10, 100, 5);
	memset(&e, 0, sizeof(e));
	e.state = GPURX_FLOW_READY;
	e.rec = GPURX_FLOW_REC_LIVE;
	e.acc[0].first_seen = 0;
	e.acc[0].last_seen = 50;
	CHECK_EQ(gpurx_flow_final_reason(t.ft, &e, 55), GPURX_FLOW_END_FORCED);
	CHECK_EQ(gpurx_flow_final_reason(t.ft, &e, 60), GPURX_FLOW_END_IDLE);
	e.rec |= 0x01ull << GPURX_FLOW_REC_FLAGS_SHIFT(0);
	CHECK_EQ(gpurx_flow_final_reason(t.ft, &e, 51), GPURX_FLOW_END_EOF);
	e.acc[0].last_seen = 98;
	e.rec = GPURX_FLOW_REC_LIVE;
	CHECK_EQ(gpurx_flow_final_reason(t.ft, &e, 100), GPURX_FLOW_END_ACTIVE);
	tbl_free(&t);
}

/* --- A random stream against a sequential model ---------------------- */

#define REF_KEYS 400
#define REF_PKTS 60000

struct ref_flow {
	int live;
	uint64_t first, last, packets, bytes;
	uint32_t flags;
	uint8_t ttl_min, ttl_max;
};

/* The rules written out plainly: the earliest deadline, FIN first. */
static uint32_t
ref_due(const struct ref_flow *f, uint64_t now, uint64_t idle,
		uint64_t active, uint64_t linger)
{
	uint64_t fin = (f->flags & 0x05) ? f->last + linger : UINT64_MAX;
	uint64_t idl = f->last + idle, act = f->first + active;
	uint64_t first = fin < idl ? fin : idl;

	first = first < act ? first : act;
	if (now < first)
		return 0;
	if (first == fin)
		return GPURX_FLOW_END_EOF;
	return first == idl ? GPURX_FLOW_END_IDLE : GPURX_FLOW_END_ACTIVE;
}

static int
rec_cmp(const void *pa, const void *pb)
{
	const struct gpurx_flow_rec *a = pa, *b = pb;
	uint32_t ia = flow_stress_key_id(&a->key), ib = flow_stress_key_id(&b->key);

	if (ia != ib)
		return ia < ib ? -1 : 1;
	if (a->first_ns != b->first_ns)
		return a->first_ns < b->first_ns ? -1 : 1;
	return 0;
}

static void
ref_emit(struct gpurx_flow_rec *out, uint32_t *n, uint32_t id,
		struct ref_flow *f, uint32_t why)
{
	struct gpurx_flow_rec *r = &out[(*n)++];

	memset(r, 0, sizeof(*r));
	flow_stress_key(id, &r->key);
	r->packets = f->packets;
	r->bytes = f->bytes;
	r->first_ns = f->first;
	r->last_ns = f->last;
	r->tcp_flags = (uint8_t)f->flags;
	r->reason = (uint8_t)why;
	r->ttl_min = f->ttl_min;
	r->ttl_max = f->ttl_max;
	f->live = 0;
}

/* One packet of the model's stream. */
struct ref_pkt {
	uint32_t id;
	uint8_t flags;
	uint8_t ttl;	/* records' TTL ranges: the CAS of both buffers' */
	uint64_t ts;
};

#define REF_IDLE 700
#define REF_ACTIVE 5000
#define REF_LINGER 90

/*
 * The model's stream (REF_PKTS packets of REF_KEYS keys, bursty times:
 * most packets close together, some far apart, so that records end by
 * every timeout) and, into want (REF_PKTS + REF_KEYS records), the
 * records the rules give for it, those live at the end ending as at exit
 * at the last packet's time. Returns how many records.
 */
static uint32_t
ref_stream(struct ref_pkt *pk, struct gpurx_flow_rec *want)
{
	struct ref_flow *ref = calloc(REF_KEYS, sizeof(*ref));
	uint64_t ts = 0, rng = 12345;
	uint32_t nw = 0;

	for (uint32_t i = 0; i < REF_PKTS; i++) {
		uint32_t id, why;
		uint8_t flags;
		struct ref_flow *f;

		rng = flow_stress_mix(rng);
		ts += rng % 100 == 0 ? 400 + rng % 900 : rng % 7;
		flow_stress_pkt(i, 97, 60, &id, &flags);
		id %= REF_KEYS;
		pk[i].id = id;
		pk[i].flags = flags;
		pk[i].ts = ts;
		pk[i].ttl = (uint8_t)(30 + (rng >> 24) % 40);
		f = &ref[id];
		if (f->live && (why = ref_due(f, ts, REF_IDLE, REF_ACTIVE,
				REF_LINGER)) != 0)
			ref_emit(want, &nw, id, f, why);
		if (!f->live) {
			memset(f, 0, sizeof(*f));
			f->live = 1;
			f->first = ts;
			f->ttl_min = 255;
		}
		f->ttl_min = pk[i].ttl < f->ttl_min ? pk[i].ttl : f->ttl_min;
		f->ttl_max = pk[i].ttl > f->ttl_max ? pk[i].ttl : f->ttl_max;
		f->last = ts;
		f->packets++;
		f->bytes += flow_stress_bytes(id);
		f->flags |= flags;
	}
	/* Exit: what is live ends as due, else by its FIN or RST, else
	 * forced. */
	for (uint32_t j = 0; j < REF_KEYS; j++) {
		uint32_t why;

		if (!ref[j].live)
			continue;
		why = ref_due(&ref[j], ts, REF_IDLE, REF_ACTIVE, REF_LINGER);
		if (why == 0)
			why = ref[j].flags & 0x05 ? GPURX_FLOW_END_EOF :
				GPURX_FLOW_END_FORCED;
		ref_emit(want, &nw, j, &ref[j], why);
	}
	free(ref);
	return nw;
}

/*
 * After the stream: the table's records (ng taken from the ring into
 * got) and those live at exit equal the model's, record for record.
 */
static void
ref_compare(const char *what, struct tbl *t, struct gpurx_flow_rec *got,
		uint32_t ng, struct gpurx_flow_rec *want, uint32_t nw,
		uint64_t now)
{
	const struct gpurx_flow_entry *e;
	uint32_t pos = 0, bad = 0;

	while ((e = gpurx_flow_table_next(t->ft, &pos)) != NULL)
		gpurx_flow_final_rec(t->ft, e, now, &got[ng++]);
	CHECK(nw > 2000, "%s: too few records in the model: %u", what, nw);
	CHECK(ng == nw, "%s: %u records, the model %u", what, ng, nw);
	qsort(want, nw, sizeof(*want), rec_cmp);
	qsort(got, ng, sizeof(*got), rec_cmp);
	for (uint32_t i = 0; i < nw && i < ng; i++) {
		const struct gpurx_flow_rec *a = &want[i], *b = &got[i];

		if (memcmp(&a->key, &b->key, sizeof(a->key)) != 0 ||
				a->packets != b->packets || a->bytes != b->bytes ||
				a->first_ns != b->first_ns ||
				a->last_ns != b->last_ns ||
				a->tcp_flags != b->tcp_flags ||
				a->reason != b->reason ||
				a->ttl_min != b->ttl_min ||
				a->ttl_max != b->ttl_max) {
			if (++bad <= 5)
				CHECK(0, "%s: record %u: key %u [%llu, %llu] "
					"%llu pkts reason %u; model key %u "
					"[%llu, %llu] %llu pkts reason %u", what,
					i, flow_stress_key_id(&b->key),
					(unsigned long long)b->first_ns,
					(unsigned long long)b->last_ns,
					(unsigned long long)b->packets, b->reason,
					flow_stress_key_id(&a->key),
					(unsigned long long)a->first_ns,
					(unsigned long long)a->last_ns,
					(unsigned long long)a->packets, a->reason);
		}
	}
	CHECK(bad == 0, "%s: %u records differ from the model", what, bad);
	CHECK(t->ft->ended[GPURX_FLOW_END_IDLE] > 0 &&
		t->ft->ended[GPURX_FLOW_END_ACTIVE] > 0 &&
		t->ft->ended[GPURX_FLOW_END_EOF] > 0,
		"%s: not every reason seen", what);
}

static void
test_against_model(void)
{
	struct gpurx_flow_rec *want = calloc(REF_PKTS + REF_KEYS, sizeof(*want));
	struct gpurx_flow_rec *got = calloc(REF_PKTS + REF_KEYS, sizeof(*got));
	struct ref_pkt *pk = calloc(REF_PKTS, sizeof(*pk));
	uint32_t nw, ng = 0;
	struct tbl t;

	nw = ref_stream(pk, want);
	tbl_new(&t, 2048, 0, 1 << 16, REF_IDLE, REF_ACTIVE, REF_LINGER);
	for (uint32_t i = 0; i < REF_PKTS; i++) {
		CHECK_EQ(upd_ttl(&t, pk[i].id, flow_stress_bytes(pk[i].id),
			pk[i].ts, pk[i].flags, pk[i].ttl), 0);
		/* A scan now and then, at the time of the last packet. */
		if (i % 1000 == 999)
			gpurx_flow_scan(t.ft, 0, t.ft->capacity, pk[i].ts);
		ng += tbl_drain(&t, got + ng, REF_PKTS + REF_KEYS - ng);
	}
	ref_compare("sequential", &t, got, ng, want, nw, pk[REF_PKTS - 1].ts);
	free(want);
	free(got);
	free(pk);
	tbl_free(&t);
}

/* --- The GPU's order, on the CPU: decisions in order where flows meet -- */

/* Packets an item holds, threads taking items, the queue's ring slots. */
#define ORDER_ITEM 16
#define ORDER_THREADS 4
#define ORDER_SLOTS 8

struct order_run {
	struct tbl t;
	const struct ref_pkt *pk;
	uint32_t n_items;
	/* Per ring slot, item it at it % ORDER_SLOTS: 2 it + 1 pinned,
	 * 2 it + 2 decided (gpu_body.cuh's order slots); and it + 1 once
	 * the item is done, which frees the slot for item it + ORDER_SLOTS
	 * (the comm list's DONE). */
	uint64_t mark[ORDER_SLOTS];
	uint64_t done[ORDER_SLOTS];
	uint64_t done_ts;	/* every packet up to it is decided */
	uint64_t alone, ordered;	/* groups decided each way */
	int stop_scan;
	uint64_t scans;
};

/* Every item before `it` marked at least 2 j + what (acquire). */
static void
order_wait(struct order_run *r, uint32_t it, uint64_t what)
{
	const uint32_t lo = it >= ORDER_SLOTS ? it - ORDER_SLOTS + 1 : 0;

	for (uint32_t j = lo; j < it; j++)
		while (__atomic_load_n(&r->mark[j % ORDER_SLOTS],
				__ATOMIC_ACQUIRE) < 2ull * j + what)
			sched_yield();
}

/*
 * Thread j takes items j, j + ORDER_THREADS, ... as a GPU queue's workers
 * do (account_decide): pin each packet's flow, mark the item pinned,
 * wait for the earlier items' pins, then per group: a group alone on its
 * flow plans and commits at once; the first group that is not waits for
 * every earlier item to have decided, and it and the rest of the item
 * plan again then, in arrival order. Then the item is marked decided and
 * its groups finished.
 */
static void *
order_worker(void *arg)
{
	struct order_run *r = ((void **)arg)[0];
	const uint32_t me = (uint32_t)(uintptr_t)((void **)arg)[1];
	struct gpurx_flow_table *ft = r->t.ft;

	for (uint32_t it = me; it < r->n_items; it += ORDER_THREADS) {
		struct gpurx_flow_pkt pk[ORDER_ITEM];
		struct gpurx_flow_entry *e[ORDER_ITEM];
		struct gpurx_flow_plan pl[ORDER_ITEM];
		uint64_t pos[ORDER_ITEM];
		uint32_t grp[ORDER_ITEM];
		int leader[ORDER_ITEM], ordered = 0;

		/* The ring: the slot's previous item is done. */
		if (it >= ORDER_SLOTS)
			while (__atomic_load_n(&r->done[it % ORDER_SLOTS],
					__ATOMIC_ACQUIRE) < it - ORDER_SLOTS + 1)
				sched_yield();
		for (uint32_t i = 0; i < ORDER_ITEM; i++) {
			const struct ref_pkt *x = &r->pk[it * ORDER_ITEM + i];
			struct gpurx_flow_key k;

			key_id(x->id, &k);
			pk[i].bytes = flow_stress_bytes(x->id);
			pk[i].ts = x->ts;
			pk[i].hash = gpurx_flow_hash(&k);
			pk[i].tcp_flags = x->flags;
			pk[i].ttl = x->ttl;
			pk[i].queue = 0;
			e[i] = gpurx_flow_pin(ft, &k, &pk[i]);
			CHECK(e[i] != NULL, "order: packet %u overflowed",
				it * ORDER_ITEM + i);
		}
		for (uint32_t i = 0; i < ORDER_ITEM; i++) {
			grp[i] = 0;
			leader[i] = 1;
			for (uint32_t j = 0; j < ORDER_ITEM; j++)
				if (e[j] == e[i])
					grp[i] |= 1u << j;
			for (uint32_t j = 0; j < i; j++)
				leader[i] &= e[j] != e[i];
		}
		/* Release: the pins before the mark. */
		__atomic_store_n(&r->mark[it % ORDER_SLOTS], 2ull * it + 1,
			__ATOMIC_RELEASE);
		order_wait(r, it, 1);
		for (uint32_t i = 0; i < ORDER_ITEM; i++) {
			int noend = 0;

			if (!leader[i] || e[i] == NULL)
				continue;
			for (;;) {
				const int alone = gpurx_flow_plan_alone(ft,
					e[i], pk, grp[i], noend, 0,
					(uint32_t)__builtin_popcount(grp[i]),
					&pl[i]);

				if (!alone && !ordered) {
					/* Acquire: the earlier items'
					 * commits; plan again after. */
					order_wait(r, it, 2);
					ordered = 1;
					continue;
				}
				pos[i] = 0;
				if (gpurx_flow_plan_blocked(&pl[i])) {
					sched_yield();
					continue;
				}
				if (pl[i].ends != 0 && gpurx_flow_ring_reserve(ft,
						pl[i].ends, &pos[i]) != pl[i].ends) {
					CHECK(0, "order: ring full");
					noend = 1;
					continue;
				}
				if (gpurx_flow_commit(ft, e[i], &pl[i],
						pos[i]) > 0) {
					if (alone)
						__atomic_add_fetch(&r->alone, 1,
							__ATOMIC_RELAXED);
					else
						__atomic_add_fetch(&r->ordered, 1,
							__ATOMIC_RELAXED);
					break;
				}
				gpurx_flow_skip_n(ft, pos[i], pl[i].ends);
				sched_yield();
			}
		}
		/* Release: this item's commits before the later items' plans
		 * that wait for them (and the scan's now: every earlier item
		 * decided too, so every packet up to this item's). */
		__atomic_store_n(&r->mark[it % ORDER_SLOTS], 2ull * it + 2,
			__ATOMIC_RELEASE);
		if (it % ORDER_THREADS == ORDER_THREADS - 1) {
			order_wait(r, it, 2);
			__atomic_store_n(&r->done_ts, r->pk[it * ORDER_ITEM +
				ORDER_ITEM - 1].ts, __ATOMIC_RELEASE);
		}
		for (uint32_t i = 0; i < ORDER_ITEM; i++)
			if (leader[i] && e[i] != NULL)
				gpurx_flow_finish(ft, e[i], &pl[i], pk, grp[i],
					pos[i], (uint32_t)__builtin_popcount(grp[i]));
		__atomic_store_n(&r->done[it % ORDER_SLOTS], it + 1,
			__ATOMIC_RELEASE);
	}
	return NULL;
}

/* Scans at the time up to which every packet is decided, as the
 * exporter's scan does. */
static void *
order_scanner(void *arg)
{
	struct order_run *r = arg;

	while (!__atomic_load_n(&r->stop_scan, __ATOMIC_ACQUIRE)) {
		uint64_t now = __atomic_load_n(&r->done_ts, __ATOMIC_ACQUIRE);

		gpurx_flow_scan(r->t.ft, 0, r->t.ft->capacity, now);
		r->scans++;
		sched_yield();
	}
	return NULL;
}

/*
 * The split protocol under concurrency (flow_table.h, steps pin / plan /
 * commit / finish as gpu_body.cuh runs them around its queue's order):
 * threads pinning and finishing at once, one flow's packets in several
 * items in flight, groups alone on their flow deciding out of order, a
 * scanning thread: the records equal the sequential model's.
 */
static void
test_order(void)
{
	struct gpurx_flow_rec *want = calloc(REF_PKTS + REF_KEYS, sizeof(*want));
	struct gpurx_flow_rec *got = calloc(REF_PKTS + REF_KEYS, sizeof(*got));
	struct ref_pkt *pk = calloc(REF_PKTS, sizeof(*pk));
	pthread_t th[ORDER_THREADS], sc;
	void *args[ORDER_THREADS][2];
	struct order_run r;
	uint32_t nw, ng;

	memset(&r, 0, sizeof(r));
	nw = ref_stream(pk, want);
	/* Room for every record and every position a retried commit
	 * skips: a full ring would change records (ends put off). */
	tbl_new(&r.t, 2048, 0, 1 << 20, REF_IDLE, REF_ACTIVE, REF_LINGER);
	r.pk = pk;
	r.n_items = REF_PKTS / ORDER_ITEM;
	CHECK_EQ(REF_PKTS % ORDER_ITEM, 0);
	CHECK_EQ(pthread_create(&sc, NULL, order_scanner, &r), 0);
	for (uintptr_t j = 0; j < ORDER_THREADS; j++) {
		args[j][0] = &r;
		args[j][1] = (void *)j;
		CHECK_EQ(pthread_create(&th[j], NULL, order_worker, args[j]), 0);
	}
	for (int j = 0; j < ORDER_THREADS; j++)
		pthread_join(th[j], NULL);
	__atomic_store_n(&r.stop_scan, 1, __ATOMIC_RELEASE);
	pthread_join(sc, NULL);
	ng = tbl_drain(&r.t, got, REF_PKTS + REF_KEYS);
	CHECK_EQ(r.t.ft->ring_full, 0);
	CHECK_EQ(r.t.ft->overflow_pkts, 0);
	CHECK(r.scans > 0, "order: the scanner never ran");
	/* Both ways of deciding were taken, or the test proves less. */
	CHECK(r.alone > 0 && r.ordered > 0, "order: %llu groups alone, %llu "
		"in order: want both", (unsigned long long)r.alone,
		(unsigned long long)r.ordered);
	printf("order: %llu groups decided alone, %llu in order\n",
		(unsigned long long)r.alone, (unsigned long long)r.ordered);
	ref_compare("order", &r.t, got, ng, want, nw, pk[REF_PKTS - 1].ts);
	free(want);
	free(got);
	free(pk);
	tbl_free(&r.t);
}

/* --- The protocol under load ------------------------------------------ */

struct stress_cfg {
	const char *name;
	uint32_t threads;
	uint64_t pkts;		/* in all */
	uint32_t churn, window;
	uint32_t capacity, probe, ring;
	uint64_t idle, active, linger;
	int want_pressure;
};

struct stress {
	const struct stress_cfg *c;
	struct tbl t;
	uint32_t keys;
	uint64_t clock;		/* the packets' time, one tick per packet */
	uint64_t next;		/* next packet index to take */
	int stop_scan, stop_drain;
	/* Per key id: packets sent and counted (not overflow), and what the
	 * records added up to. */
	uint64_t *sent, *sent_bytes, *exported, *exported_bytes;
	uint64_t overflow;
	uint64_t records, bad_records, scans;
};

static void *
stress_updater(void *arg)
{
	struct stress *s = arg;
	uint64_t *sent = calloc(s->keys, sizeof(*sent));
	uint64_t overflow = 0;

	for (;;) {
		uint64_t i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
		uint64_t ts;
		uint32_t id;
		uint8_t flags;

		if (i >= s->c->pkts)
			break;
		flow_stress_pkt(i, s->c->churn, s->c->window, &id, &flags);
		ts = __atomic_fetch_add(&s->clock, 1, __ATOMIC_RELAXED);
		if (upd(&s->t, id, flow_stress_bytes(id), ts, flags) == 0)
			sent[id]++;
		else
			overflow++;
	}
	for (uint32_t k = 0; k < s->keys; k++) {
		__atomic_fetch_add(&s->sent[k], sent[k], __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->sent_bytes[k],
			sent[k] * flow_stress_bytes(k), __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&s->overflow, overflow, __ATOMIC_RELAXED);
	free(sent);
	return NULL;
}

static void *
stress_scanner(void *arg)
{
	struct stress *s = arg;
	uint32_t cap = s->t.ft->capacity, step = cap < 4 ? cap : cap / 4;
	uint32_t from = 0;

	while (!__atomic_load_n(&s->stop_scan, __ATOMIC_ACQUIRE)) {
		/* Slices, as the exporter scans a large table on the CPU. */
		gpurx_flow_scan(s->t.ft, from, from + step,
			__atomic_load_n(&s->clock, __ATOMIC_RELAXED));
		from = (from + step) % cap;
		s->scans++;
		sched_yield();
	}
	return NULL;
}

static void
stress_take(struct stress *s, const struct gpurx_flow_rec *r)
{
	int64_t id = flow_stress_rec_check(r, s->keys);

	if (id < 0) {
		s->bad_records++;
		return;
	}
	s->exported[id] += r->packets;
	s->exported_bytes[id] += r->bytes;
	s->records++;
}

static void *
stress_consumer(void *arg)
{
	struct stress *s = arg;

	for (;;) {
		const struct gpurx_flow_rec *r =
			gpurx_flow_ring_peek(s->t.ring, s->t.tail);

		if (r == NULL) {
			if (__atomic_load_n(&s->stop_drain, __ATOMIC_ACQUIRE))
				break;
			sched_yield();
			continue;
		}
		if (r->reason != GPURX_FLOW_END_NONE)
			stress_take(s, r);
		gpurx_flow_ring_consumed(s->t.ring, ++s->t.tail);
	}
	return NULL;
}

/*
 * Updating threads, a scanning thread and a consuming thread at once;
 * then every packet counted must be in exactly one record or live entry
 * of its key, with its bytes.
 */
static void
test_stress(const struct stress_cfg *c)
{
	struct stress *s = calloc(1, sizeof(*s));
	pthread_t *up = calloc(c->threads, sizeof(*up)), scan, cons;
	const struct gpurx_flow_entry *e;
	uint64_t mismatched = 0, total = 0;
	uint32_t pos = 0, dup = 0;
	uint8_t *live_seen;

	s->c = c;
	s->keys = (uint32_t)(c->pkts / c->churn) + c->window + 1;
	s->sent = calloc(s->keys, sizeof(uint64_t));
	s->sent_bytes = calloc(s->keys, sizeof(uint64_t));
	s->exported = calloc(s->keys, sizeof(uint64_t));
	s->exported_bytes = calloc(s->keys, sizeof(uint64_t));
	live_seen = calloc(s->keys, 1);
	tbl_new(&s->t, c->capacity, c->probe, c->ring, c->idle, c->active,
		c->linger);
	pthread_create(&cons, NULL, stress_consumer, s);
	pthread_create(&scan, NULL, stress_scanner, s);
	for (uint32_t i = 0; i < c->threads; i++)
		pthread_create(&up[i], NULL, stress_updater, s);
	for (uint32_t i = 0; i < c->threads; i++)
		pthread_join(up[i], NULL);
	__atomic_store_n(&s->stop_scan, 1, __ATOMIC_RELEASE);
	pthread_join(scan, NULL);
	/* Every producer is done: what is published is all there is. */
	__atomic_store_n(&s->stop_drain, 1, __ATOMIC_RELEASE);
	pthread_join(cons, NULL);

	while ((e = gpurx_flow_table_next(s->t.ft, &pos)) != NULL) {
		uint32_t id = flow_stress_key_id(&e->key);
		const uint32_t mask = s->t.ft->capacity - 1;
		const uint32_t home = e->hash & mask;
		const uint32_t d = (pos - 1 - home) & mask;

		/* Lookups stop at the home's reach: every live key within. */
		CHECK(d < gpurx_flow_probe_len(s->t.ft,
			&gpurx_flow_entries(s->t.ft)[home]),
			"%s: key %u lies %u slots from its home, past its reach "
			"%u", c->name, id, d,
			gpurx_flow_entries(s->t.ft)[home].reach);
		CHECK(id < s->keys, "%s: live key %u out of range", c->name, id);
		if (id >= s->keys)
			continue;
		dup += live_seen[id];
		live_seen[id] = 1;
		CHECK(gpurx_flow_live(e)->bytes ==
			gpurx_flow_live(e)->packets * flow_stress_bytes(id),
			"%s: live key %u mixes counts", c->name, id);
		s->exported[id] += gpurx_flow_live(e)->packets;
		s->exported_bytes[id] += gpurx_flow_live(e)->bytes;
	}
	for (uint32_t k = 0; k < s->keys; k++) {
		mismatched += s->exported[k] != s->sent[k] ||
			s->exported_bytes[k] != s->sent_bytes[k];
		total += s->sent[k];
	}
	printf("stress %s: %llu packets counted, %llu overflow, %llu records "
		"(idle %llu, active %llu, eof %llu, pressure %llu), ring full "
		"%llu, %llu scans\n", c->name, (unsigned long long)total,
		(unsigned long long)s->overflow, (unsigned long long)s->records,
		(unsigned long long)s->t.ft->ended[GPURX_FLOW_END_IDLE],
		(unsigned long long)s->t.ft->ended[GPURX_FLOW_END_ACTIVE],
		(unsigned long long)s->t.ft->ended[GPURX_FLOW_END_EOF],
		(unsigned long long)s->t.ft->ended[GPURX_FLOW_END_PRESSURE],
		(unsigned long long)s->t.ft->ring_full,
		(unsigned long long)s->scans);
	CHECK_EQ(dup, 0);
	CHECK_EQ(s->bad_records, 0);
	CHECK_EQ(mismatched, 0);
	CHECK_EQ(total + s->overflow, c->pkts);
	CHECK_EQ(s->overflow, s->t.ft->overflow_pkts);
	CHECK_EQ(s->records, s->t.ft->ended[GPURX_FLOW_END_IDLE] +
		s->t.ft->ended[GPURX_FLOW_END_ACTIVE] +
		s->t.ft->ended[GPURX_FLOW_END_EOF] +
		s->t.ft->ended[GPURX_FLOW_END_PRESSURE]);
	/* The load reached every path. */
	CHECK(s->t.ft->ended[GPURX_FLOW_END_IDLE] > 0 &&
		s->t.ft->ended[GPURX_FLOW_END_ACTIVE] > 0 &&
		s->t.ft->ended[GPURX_FLOW_END_EOF] > 0 &&
		(!c->want_pressure ||
		 (s->t.ft->ended[GPURX_FLOW_END_PRESSURE] > 0 &&
		  s->t.ft->ring_full > 0)), "%s: a path was not exercised",
		c->name);
	tbl_free(&s->t);
	free(s->sent);
	free(s->sent_bytes);
	free(s->exported);
	free(s->exported_bytes);
	free(live_seen);
	free(up);
	free(s);
}

/*
 * Threads that all start a new record of the same key at once, round
 * after round, released together by a spinning start: the key must be
 * live in exactly one slot after each round.
 */
#define RACE_THREADS 3
#define RACE_ROUNDS 20000
/*
 * Rounds past RACE_MIN_ROUNDS stop after RACE_SECONDS: on an idle machine
 * all 20000 run in about a second, while on a loaded 2-core machine each
 * hand-off can wait a scheduler tick, and 20000 of them outlasted meson's
 * timeout. An atomicity bug in the insert (a plain store where the claim
 * needs a CAS) is found within the first few hundred rounds.
 */
#define RACE_MIN_ROUNDS 2000
#define RACE_SECONDS 8

struct race {
	struct tbl t;
	uint32_t round;		/* released round + 1 */
	uint32_t done;		/* updates finished, in all */
	uint32_t stop;		/* set before the last release: no more rounds */
};

static void *
race_thread(void *arg)
{
	struct race *r = arg;

	for (uint32_t round = 0;; round++) {
		while (__atomic_load_n(&r->round, __ATOMIC_ACQUIRE) <= round)
			sched_yield();
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		upd(&r->t, round, flow_stress_bytes(round), round, 0);
		__atomic_fetch_add(&r->done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
test_insert_race(void)
{
	struct race *r = calloc(1, sizeof(*r));
	pthread_t th[RACE_THREADS];
	struct gpurx_flow_rec recs[RACE_THREADS + 1];
	uint32_t dups = 0, lost = 0, split = 0, round;
	struct timespec t0, t;

	/* Idle 1: each round's record is due by the next round; the scan
	 * ends it, so slots are reused. */
	tbl_new(&r->t, 64, 16, 1 << 14, 1, 0, 0);
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_create(&th[i], NULL, race_thread, r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (round = 0; round < RACE_ROUNDS; round++) {
		const struct gpurx_flow_entry *e;
		uint32_t pos = 0, live = 0, n;
		uint64_t pk = 0;

		if (round >= RACE_MIN_ROUNDS && round % 256 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= RACE_SECONDS)
				break;
		}

		__atomic_store_n(&r->round, round + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) <
				(round + 1) * RACE_THREADS)
			sched_yield();
		while ((e = gpurx_flow_table_next(r->t.ft, &pos)) != NULL) {
			if (flow_stress_key_id(&e->key) != round)
				continue;
			live++;
			pk += gpurx_flow_live(e)->packets;
		}
		/* All the round's packets carry one time: nothing may end
		 * them before the scan (a record ended early is a wrong
		 * boundary even where no packet is lost). */
		n = tbl_drain(&r->t, recs, RACE_THREADS + 1);
		split += n != 0;
		for (uint32_t i = 0; i < n; i++)
			pk += recs[i].packets;
		dups += live > 1;
		lost += pk != RACE_THREADS;
		/* End it before the next round. */
		gpurx_flow_scan(r->t.ft, 0, r->t.ft->capacity, round + 1);
		CHECK(tbl_drain(&r->t, recs, RACE_THREADS + 1) == live,
			"round %u: %u live records, ended other than one each",
			round, live);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->round, round + 1, __ATOMIC_RELEASE);
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(dups == 0, "a key live in two slots after %u of %u rounds",
		dups, round);
	CHECK(lost == 0, "packets missing after %u rounds", lost);
	CHECK(split == 0, "a record ended before its time in %u rounds", split);
	CHECK_EQ(r->t.ft->overflow_pkts, 0);
	tbl_free(&r->t);
	free(r);
}

/* A table (idle 10) holding one flow, key id, a 100-byte packet at ts:
 * its slot, to be changed under the test's hands; NULL: failed, freed. */
static struct gpurx_flow_entry *
one_flow(struct tbl *t, uint32_t id, uint64_t ts)
{
	struct gpurx_flow_key k;
	const struct gpurx_flow_entry *e;

	tbl_new(t, 16, 16, 16, 10, 0, 0);
	CHECK_EQ(upd(t, id, 100, ts, 0), 0);
	key_id(id, &k);
	e = gpurx_flow_table_find(t->ft, &k);
	CHECK(e != NULL, "key %u not inserted", id);
	if (e == NULL)
		tbl_free(t);
	return (struct gpurx_flow_entry *)(uintptr_t)e;
}

/*
 * The scan decides a flow is due on fields it read before its CAS; a
 * packet that pinned, ended that record, started the next and let go in
 * between leaves the slot's state as the scan read it. The scan must not
 * end the new record (not due): it reopens the slot.
 */
static void
test_scan_stale(void)
{
	struct gpurx_flow_rec rec[4];
	struct gpurx_flow_key k;
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_entry *me;
	uint64_t s, pos;
	uint32_t why;
	struct tbl t;

	if ((me = one_flow(&t, 1, 0)) == NULL)
		return;
	key_id(1, &k);
	/* The scan's first half at 20: idle since 0. */
	s = me->state;
	why = gpurx_flow_entry_due(t.ft, me, 20);
	CHECK_EQ(why, GPURX_FLOW_END_IDLE);
	/* A packet at 15 ends that record and starts one due at 25. */
	CHECK_EQ(upd(&t, 1, 60, 15, 0), 0);
	CHECK_EQ(me->state, s);
	/* The scan's second half. */
	CHECK_EQ(gpurx_flow_ring_reserve(t.ft, 1, &pos), 1);
	CHECK_EQ(gpurx_flow_end_at(t.ft, me, s, why, GPURX_FLOW_FREE, pos, 20),
		0);
	CHECK_EQ(GPURX_FLOW_TAG(me->state), GPURX_FLOW_READY);
	CHECK_EQ(me->state, s);
	CHECK_EQ(tbl_drain(&t, rec, 4), 1);
	check_rec(&rec[0], 1, 1, 100, 0, 0, GPURX_FLOW_END_IDLE);
	e = gpurx_flow_table_find(t.ft, &k);
	CHECK(e != NULL && gpurx_flow_live(e)->packets == 1 &&
		gpurx_flow_live(e)->first_seen == 15, "the new record was ended");
	/* Due at 25, and ended then like any flow. */
	CHECK_EQ(gpurx_flow_scan(t.ft, 0, 16, 25), 1);
	CHECK_EQ(tbl_drain(&t, rec, 4), 1);
	check_rec(&rec[0], 1, 1, 60, 15, 15, GPURX_FLOW_END_IDLE);
	tbl_free(&t);
}

struct closing_wait {
	struct tbl *t;
	uint32_t done;
};

static void *
closing_upd(void *arg)
{
	struct closing_wait *w = arg;

	upd(w->t, 7, 40, 3, 0);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A packet whose key's slot is CLOSING waits for the closer's outcome:
 * reopened, the packet goes into the same slot, not into a second one
 * inserted meanwhile.
 */
static void
test_closing_wait(void)
{
	struct closing_wait w = { 0 };
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_entry *me;
	uint32_t pos = 0, slots = 0;
	struct timespec ms = { 0, 1000000 };
	uint64_t s;
	pthread_t th;
	struct tbl t;

	if ((me = one_flow(&t, 7, 1)) == NULL)
		return;
	/* As a closer does. */
	s = me->state;
	CHECK_EQ(gpurx_atomic_cas_ord_u64(&me->state, s,
		(s & ~0xffull) | GPURX_FLOW_CLOSING, GPURX_ACQ_REL), s);
	w.t = &t;
	pthread_create(&th, NULL, closing_upd, &w);
	for (int i = 0; i < 20; i++)
		nanosleep(&ms, NULL);
	CHECK(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) == 0,
		"a packet went past its key's CLOSING slot");
	gpurx_flow_retag(me, GPURX_FLOW_CLOSING, GPURX_FLOW_READY);
	pthread_join(th, NULL);
	while ((e = gpurx_flow_table_next(t.ft, &pos)) != NULL)
		slots += flow_stress_key_id(&e->key) == 7;
	CHECK_EQ(slots, 1);
	CHECK(gpurx_flow_live(me)->packets == 2 &&
		gpurx_flow_live(me)->bytes == 140, "packets %llu bytes %llu",
		(unsigned long long)gpurx_flow_live(me)->packets,
		(unsigned long long)gpurx_flow_live(me)->bytes);
	tbl_free(&t);
}

/*
 * Windows full of ended (FREE) slots, no EMPTY one left: a lookup of a
 * new key probes only as far as keys of its home were ever placed, not
 * the whole window, and still finds keys placed far.
 */
static void
test_reach(void)
{
	struct gpurx_flow_rec recs[64];
	struct gpurx_flow_entry *ents;
	struct gpurx_flow_key k;
	struct tbl t;
	uint32_t far = 0, unused = 0, homes[64] = {0};
	const uint32_t cap = 64;

	tbl_new(&t, cap, 64, 256, 10, 0, 0);
	ents = gpurx_flow_entries(t.ft);
	/* Every slot used once, then ended: FREE everywhere. */
	for (uint32_t id = 0; id < cap; id++)
		CHECK_EQ(upd(&t, id, 100, 1, 0), 0);
	gpurx_flow_scan(t.ft, 0, cap, 1000);
	CHECK_EQ(tbl_drain(&t, recs, 64), cap);
	for (uint32_t i = 0; i < cap; i++)
		CHECK_EQ(GPURX_FLOW_TAG(ents[i].state), GPURX_FLOW_FREE);
	/* Keys by home: a new key whose home no key had probes that slot
	 * alone (the whole window of 64 before); keys of others were
	 * placed past their homes. */
	for (uint32_t id = 0; id < cap; id++) {
		key_id(id, &k);
		homes[gpurx_flow_hash(&k) & (cap - 1)]++;
	}
	for (uint32_t h = 0; h < cap; h++) {
		if (homes[h] == 0) {
			CHECK(gpurx_flow_probe_len(t.ft, &ents[h]) == 1,
				"home %u without keys: probes %u slots", h,
				gpurx_flow_probe_len(t.ft, &ents[h]));
			unused++;
		}
		far += ents[h].reach;
	}
	CHECK(unused > 0 && far > 0, "%u homes without keys, reach %u in all: "
		"the case is not made", unused, far);
	/* Every key still found through its home's reach (new records). */
	for (uint32_t id = 0; id < cap; id++)
		CHECK_EQ(upd(&t, id, 100, 2000, 0), 0);
	for (uint32_t id = 0; id < cap; id++) {
		const struct gpurx_flow_entry *e;

		key_id(id, &k);
		e = gpurx_flow_table_find(t.ft, &k);
		CHECK(e != NULL && gpurx_flow_live(e)->packets == 1,
			"key %u not found once", id);
	}
	tbl_free(&t);
}

static const struct stress_cfg stress_wide = {
	/* 1024 slots for a window of 900 hot keys and the idle ones behind
	 * it: pressure; a ring of 512 records: at times full. Keys stay in
	 * the window 36000 ticks: several active timeouts each. */
	.name = "wide", .threads = 4, .pkts = 1200000, .churn = 40,
	.window = 900, .capacity = 1024, .probe = 64, .ring = 512,
	.idle = 3000, .active = 10000, .linger = 200, .want_pressure = 1,
};

static const struct stress_cfg stress_tiny = {
	/* 16 threads on a few CPUs over 32 slots with records ending every
	 * few ticks: a thread preempted between comparing a key and entering
	 * its slot comes back to a slot ended and refilled. */
	.name = "tiny", .threads = 16, .pkts = 1200000, .churn = 200,
	.window = 24, .capacity = 32, .probe = 8, .ring = 1 << 16,
	.idle = 40, .active = 300, .linger = 5, .want_pressure = 0,
};

/* --- Records in GPU memory, taken through host copies --------------------- */

/*
 * A ring laid out as in GPU modes (gpurx_flow_ring_init_dev()), its
 * "GPU memory" a host array: the copies gpurx_flow_cuda_pull() makes are
 * memcpy()s here, and between the first and the second `between` runs
 * (a producer publishing meanwhile).
 */
struct dev_ring {
	struct gpurx_flow_ring *ring;
	struct gpurx_flow_rec *recs;
	void *mirror;
};

static void
dev_ring_new(struct dev_ring *d, uint64_t size, uint32_t cap)
{
	d->ring = alloc64(sizeof(*d->ring));
	d->recs = alloc64(size * sizeof(*d->recs));
	d->mirror = alloc64(gpurx_flow_ring_mirror_bytes(cap));
	if (d->ring == NULL || d->recs == NULL || d->mirror == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(d->recs, 0, size * sizeof(*d->recs));
	CHECK(gpurx_flow_ring_init_dev(d->ring, d->recs, size, d->mirror,
		cap) == d->ring, "init_dev refused a good ring");
}

static void
dev_ring_free(struct dev_ring *d)
{
	free(d->ring);
	free(d->recs);
	free(d->mirror);
}

/* Returns how many pieces were copied. */
static uint32_t
dev_ring_pull(struct dev_ring *d, const struct gpurx_flow_table *ft,
		uint64_t tail, void (*between)(void *), void *arg)
{
	struct gpurx_flow_ring *r = d->ring;
	struct gpurx_flow_ring_seg seg[2];
	uint32_t k, n = 0;

	*r->head_copy = ft->ring_head;
	k = gpurx_flow_ring_pull_plan(r, tail, *r->head_copy, seg);
	for (uint32_t i = 0; i < k; i++)
		memcpy(r->seen + seg[i].at, r->recs + seg[i].slot,
			seg[i].n * sizeof(*r->recs));
	if (between != NULL)
		between(arg);
	for (uint32_t i = 0; i < k; i++) {
		memcpy(r->copy + seg[i].at, r->recs + seg[i].slot,
			seg[i].n * sizeof(*r->recs));
		n += seg[i].n;
	}
	gpurx_flow_ring_pulled(r, tail, n);
	return k;
}

/* A record at a reserved position, marked by its packet count. */
static void
dev_put(struct gpurx_flow_table *ft, uint64_t pos)
{
	struct gpurx_flow_rec *rec = &ft->ring_recs[pos & (ft->ring_size - 1)];

	memset(rec, 0, offsetof(struct gpurx_flow_rec, seq));
	rec->packets = 1000 + pos;
	rec->reason = GPURX_FLOW_END_IDLE;
	gpurx_flow_ring_publish(ft->ring_recs, ft->ring_size, pos,
		ft->ring_dev);
}

static void
put_pos1(void *arg)
{
	dev_put(arg, 1);
}

static void
put_pos12(void *arg)
{
	dev_put(arg, 12);
}

static void
check_taken(struct gpurx_flow_ring *r, uint64_t pos)
{
	const struct gpurx_flow_rec *rec = gpurx_flow_ring_peek(r, pos);

	CHECK(rec != NULL, "position %llu not taken", (unsigned long long)pos);
	if (rec != NULL)
		CHECK(rec->packets == 1000 + pos && rec->reason ==
			GPURX_FLOW_END_IDLE, "position %llu: record of %llu",
			(unsigned long long)pos,
			(unsigned long long)rec->packets - 1000);
}

/* The consumer's side: what is taken from the copies, the wrap, the tail
 * the producers see. */
static void
test_dev_ring_pull(void)
{
	struct gpurx_flow_ring_seg seg[2];
	struct gpurx_flow_table *ft;
	struct gpurx_flow_ring *r;
	struct dev_ring d;
	uint64_t pos;
	char junk[128];

	/* 8 records, copies of 4 at a time. */
	dev_ring_new(&d, 8, 4);
	r = d.ring;
	CHECK(gpurx_flow_ring_init_dev(junk, d.recs, 8, d.mirror, 9) == NULL,
		"copies larger than the ring accepted");
	CHECK(gpurx_flow_ring_init_dev(junk, d.recs, 6, d.mirror, 4) == NULL,
		"a ring of 6 accepted");
	ft = gpurx_flow_table_init(alloc64(gpurx_flow_table_bytes(64)), 64, 0);
	gpurx_flow_table_set_expiry(ft, r, 10, 0, 10);
	CHECK(ft->ring_recs == d.recs && ft->ring_dev == 1,
		"the table does not know where the records are");

	/* Nothing reserved: nothing copied, nothing taken. */
	CHECK_EQ(dev_ring_pull(&d, ft, 0, NULL, NULL), 0);
	CHECK(gpurx_flow_ring_peek(r, 0) == NULL, "taken from an empty ring");

	/* 0 and 2 published before the copies, 1 between them: 1 waits
	 * (its seq was not in the first copy), and so does 2 behind it. */
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 3, &pos), 3);
	CHECK_EQ(pos, 0);
	dev_put(ft, 0);
	dev_put(ft, 2);
	CHECK_EQ(dev_ring_pull(&d, ft, 0, put_pos1, ft), 1);
	check_taken(r, 0);
	CHECK(gpurx_flow_ring_peek(r, 1) == NULL,
		"a record published during the copy was taken");
	gpurx_flow_ring_consumed(r, 1);
	CHECK_EQ(r->tail, 1);
	/* The next pull takes it, and 2; 3 was never reserved. */
	dev_ring_pull(&d, ft, 1, NULL, NULL);
	check_taken(r, 1);
	check_taken(r, 2);
	CHECK(gpurx_flow_ring_peek(r, 3) == NULL, "an unreserved position taken");
	gpurx_flow_ring_consumed(r, 3);

	/* Full: 8 positions from 3 (slots 3..7 then 0..2), the producer
	 * reading the tail (3) past its cached copy; a 9th finds no room. */
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 8, &pos), 8);
	CHECK_EQ(pos, 3);
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 1, &pos), 0);
	CHECK_EQ(ft->ring_full, 1);
	for (uint64_t p = 3; p < 11; p++)
		dev_put(ft, p);
	/* 4 a pull: [3, 7) in one piece, [7, 11) wraps (slot 7, slots
	 * 0..2). */
	CHECK_EQ(dev_ring_pull(&d, ft, 3, NULL, NULL), 1);
	for (uint64_t p = 3; p < 7; p++)
		check_taken(r, p);
	CHECK(gpurx_flow_ring_peek(r, 7) == NULL, "taken beyond the copies");
	/* Still full until the tail says otherwise. */
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 1, &pos), 0);
	gpurx_flow_ring_consumed(r, 7);
	CHECK_EQ(dev_ring_pull(&d, ft, 7, NULL, NULL), 2);
	for (uint64_t p = 7; p < 11; p++)
		check_taken(r, p);
	gpurx_flow_ring_consumed(r, 11);
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 2, &pos), 2);
	CHECK_EQ(pos, 11);
	/* Slot 4 holds position 4's record in the first copy (seq 5), not
	 * position 12's: 12 is published between the copies, and waits. */
	dev_put(ft, 11);
	dev_ring_pull(&d, ft, 11, put_pos12, ft);
	check_taken(r, 11);
	CHECK(gpurx_flow_ring_peek(r, 12) == NULL,
		"the slot's old record taken for a new position");
	/* A head behind the tail (a torn read): as much as the copies hold. */
	CHECK_EQ(gpurx_flow_ring_pull_plan(r, 12, 11, seg), 1);
	CHECK(seg[0].slot == 4 && seg[0].at == 0 && seg[0].n == 4,
		"piece %llu +%u at %u", (unsigned long long)seg[0].slot,
		seg[0].n, seg[0].at);
	free(ft);
	dev_ring_free(&d);
}

/* Reservations by fetch_add (a ring slack): at most the limit waits,
 * reservations racing overrun it by no more than the slack. */
#define SLACK_THREADS 8
#define SLACK_MAX_N 4
#define SLACK_RECORDS 400000u

struct slack_race {
	struct gpurx_flow_table *ft;
	struct gpurx_flow_ring *r;
	uint64_t made;		/* positions reserved, by producers */
	uint64_t worst;		/* most past tail + limit seen */
	int bad;
};

static void *
slack_producer(void *arg)
{
	struct slack_race *s = arg;
	uint64_t i = 0;

	while (__atomic_load_n(&s->made, __ATOMIC_RELAXED) < SLACK_RECORDS &&
			!__atomic_load_n(&s->bad, __ATOMIC_RELAXED)) {
		const uint32_t n = 1 + (uint32_t)(i++ % SLACK_MAX_N);
		uint64_t pos = 0, over;
		const uint32_t got = gpurx_flow_ring_try_reserve(s->ft, n, &pos);
		/* The tail now is at least the tail when the positions were
		 * taken: past it + size means a record not yet read was
		 * given out. */
		const uint64_t t = __atomic_load_n(&s->r->tail, __ATOMIC_ACQUIRE);

		if (got == 0) {
			sched_yield();
			continue;
		}
		if (pos + got > t + s->r->size)
			__atomic_store_n(&s->bad, 1, __ATOMIC_RELAXED);
		over = pos + got > t + s->ft->ring_limit ?
			pos + got - t - s->ft->ring_limit : 0;
		if (over > __atomic_load_n(&s->worst, __ATOMIC_RELAXED))
			__atomic_store_n(&s->worst, over, __ATOMIC_RELAXED);
		for (uint32_t k = 0; k < got; k++) {
			struct gpurx_flow_rec *rec =
				&s->r->recs[(pos + k) & (s->r->size - 1)];

			rec->packets = pos + k;
			rec->reason = GPURX_FLOW_END_IDLE;
			gpurx_flow_ring_publish(s->r->recs, s->r->size, pos + k, 0);
		}
		__atomic_fetch_add(&s->made, got, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_ring_slack(void)
{
	/* limit 64, slack the most all producers take at once. */
	const uint64_t limit = 64, slack = SLACK_THREADS * SLACK_MAX_N;
	struct gpurx_flow_ring *r = gpurx_flow_ring_init(
		alloc64(gpurx_flow_ring_bytes(128)), 128);
	struct gpurx_flow_table *ft = gpurx_flow_table_init(
		alloc64(gpurx_flow_table_bytes(64)), 64, 0);
	pthread_t th[SLACK_THREADS];
	struct slack_race s;
	uint64_t pos = 0, tail = 0;

	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, 8, 8), -EINVAL);
	gpurx_flow_table_set_expiry(ft, r, 10, 0, 10);
	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, 0, 8), -EINVAL);
	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, 8, 0), -EINVAL);
	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, 100, 29), -EINVAL);
	CHECK_EQ(ft->ring_slack, 0);
	/* Alone: exactly the limit, as the CAS loop gives the size. */
	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, 8, 8), 0);
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 5, &pos), 5);
	CHECK_EQ(pos, 0);
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 5, &pos), 3);
	CHECK_EQ(pos, 5);
	CHECK_EQ(ft->ring_full, 2);
	CHECK_EQ(gpurx_flow_ring_try_reserve(ft, 1, &pos), 0);
	CHECK_EQ(ft->ring_full, 2);
	/* The consumer's tail read past the cached copy. */
	gpurx_flow_ring_consumed(r, 4);
	CHECK_EQ(gpurx_flow_ring_reserve(ft, 4, &pos), 4);
	CHECK_EQ(pos, 8);
	CHECK_EQ(ft->ring_tail_seen, 4);

	/* Racing producers, one consumer: every record read is its
	 * position's, none handed out over one not yet read. */
	memset(r, 0, gpurx_flow_ring_bytes(128));
	gpurx_flow_ring_init(r, 128);
	gpurx_flow_table_set_expiry(ft, r, 10, 0, 10);
	ft->ring_head = ft->ring_tail_seen = 0;
	CHECK_EQ(gpurx_flow_table_set_ring_slack(ft, limit, slack), 0);
	memset(&s, 0, sizeof(s));
	s.ft = ft;
	s.r = r;
	for (int i = 0; i < SLACK_THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, slack_producer, &s), 0);
	for (;;) {
		const struct gpurx_flow_rec *rec = gpurx_flow_ring_peek(r, tail);

		if (rec == NULL) {
			if (__atomic_load_n(&s.bad, __ATOMIC_RELAXED) ||
					(__atomic_load_n(&s.made,
					__ATOMIC_RELAXED) >= SLACK_RECORDS &&
					tail >= __atomic_load_n(&ft->ring_head,
					__ATOMIC_RELAXED)))
				break;
			/* Overwritten by a later position: never taken. */
			if (__atomic_load_n(&r->recs[tail & 127].seq,
					__ATOMIC_ACQUIRE) > tail + 1) {
				s.bad = 1;
				break;
			}
			sched_yield();
			continue;
		}
		if (rec->packets != tail) {
			s.bad = 1;
			break;
		}
		gpurx_flow_ring_consumed(r, ++tail);
	}
	for (int i = 0; i < SLACK_THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(!s.bad, "a record not yet read was given out (tail %llu)",
		(unsigned long long)tail);
	CHECK(s.worst <= slack, "the limit overrun by %llu > slack %llu",
		(unsigned long long)s.worst, (unsigned long long)slack);
	CHECK(tail >= SLACK_RECORDS, "only %llu records taken",
		(unsigned long long)tail);
	free(ft);
	free(r);
}

/* The table ends records into a ring in "GPU memory" just as into one in
 * host memory: the same records, through the copies. */
static void
test_dev_ring_table(void)
{
	const uint32_t cap = 256;
	const uint32_t max = 4096;
	struct gpurx_flow_rec *want = calloc(max, sizeof(*want));
	struct gpurx_flow_rec *got = calloc(max, sizeof(*got));
	struct dev_ring d;
	struct tbl t, u;
	uint32_t nw, ng = 0;

	tbl_new(&t, cap, 16, 4096, 50, 400, 10);
	memset(&u, 0, sizeof(u));
	u.ft = gpurx_flow_table_init(alloc64(gpurx_flow_table_bytes(cap)), cap,
		16);
	dev_ring_new(&d, 4096, 64);
	gpurx_flow_table_set_expiry(u.ft, d.ring, 50, 400, 10);
	for (uint64_t i = 0; i < 3000; i++) {
		uint32_t id;
		uint8_t flags;
		struct gpurx_flow_key k;

		flow_stress_pkt(i, 8, 150, &id, &flags);
		flow_stress_key(id, &k);
		gpurx_flow_update_pkt(t.ft, &k, flow_stress_bytes(id), i,
			flags, 1);
		gpurx_flow_update_pkt(u.ft, &k, flow_stress_bytes(id), i,
			flags, 1);
		if (i % 500 == 499) {
			gpurx_flow_scan(t.ft, 0, cap, i);
			gpurx_flow_scan(u.ft, 0, cap, i);
		}
	}
	nw = tbl_drain(&t, want, max);
	while (u.tail < u.ft->ring_head) {
		const struct gpurx_flow_rec *r;
		uint64_t from = u.tail;

		dev_ring_pull(&d, u.ft, u.tail, NULL, NULL);
		while ((r = gpurx_flow_ring_peek(d.ring, u.tail)) != NULL) {
			if (r->reason != GPURX_FLOW_END_NONE && ng < max)
				got[ng++] = *r;
			u.tail++;
		}
		gpurx_flow_ring_consumed(d.ring, u.tail);
		CHECK(u.tail > from, "no progress at %llu",
			(unsigned long long)from);
		if (u.tail == from)
			break;
	}
	CHECK(nw > 256, "only %u records ended", nw);
	CHECK_EQ(u.ft->ring_full, 0);
	CHECK_EQ(ng, nw);
	for (uint32_t i = 0; i < nw && i < ng; i++)
		CHECK(memcmp(&want[i], &got[i], sizeof(want[i])) == 0,
			"record %u differs", i);
	free(want);
	free(got);
	free(u.ft);
	dev_ring_free(&d);
	tbl_free(&t);
}

int
main(void)
{
	test_lifetimes();
	test_pressure_and_full_ring();
	test_final_reason();
	test_against_model();
	test_order();
	test_insert_race();
	test_scan_stale();
	test_closing_wait();
	test_reach();
	test_dev_ring_pull();
	test_ring_slack();
	test_dev_ring_table();
	test_stress(&stress_wide);
	test_stress(&stress_tiny);
	return check_finish("test_flow_expiry");
}
