/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow table: exact counters for many flows, overflow accounting when
 * full or when the probe bound is hit, exact totals under concurrent
 * insertion from pthreads, top-N order, the classify step against a
 * naive recount of the same generated traffic, and classification from
 * a packet's first bytes against the whole packet.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify_ref.h"
#include "filter_compile.h"
#include "flow_classify.h"
#include "gpugen_build.h"
#include "check.h"

#include <pcap/pcap.h>

static struct gpurx_flow_table *
table_new(uint32_t capacity, uint32_t max_probe)
{
	void *mem = aligned_alloc(64, gpurx_flow_table_bytes(capacity));

	return gpurx_flow_table_init(mem, capacity, max_probe);
}

static void
key_n(struct gpurx_flow_key *k, uint32_t n)
{
	memset(k, 0, sizeof(*k));
	k->ip_version = n % 3 ? 4 : 6;
	k->src[10] = k->src[11] = 0xff;
	k->src[12] = 10;
	k->src[13] = (uint8_t)(n >> 16);
	k->src[14] = (uint8_t)(n >> 8);
	k->src[15] = (uint8_t)n;
	k->dst[15] = 1;
	k->sport = (uint16_t)(1024 + n);
	k->dport = 443;
	k->proto = 6;
	k->vlan_port = (uint16_t)(n % 5);
}

static void
test_exact_counts(void)
{
	struct gpurx_flow_table *ft = table_new(4096, 64);
	const struct gpurx_flow_entry *e, *top[10];
	struct gpurx_flow_key k;
	uint32_t n = 1500, pos = 0, seen = 0;

	/* Flow i gets i % 7 + 1 packets of 100 + i bytes at ts 10*j + i. */
	for (uint32_t rep = 0; rep < 7; rep++)
		for (uint32_t i = 0; i < n; i++)
			if (rep < i % 7 + 1) {
				key_n(&k, i);
				CHECK_EQ(gpurx_flow_update(ft, &k, 100 + i,
					1000 - 10 * rep + i), 0);
			}
	CHECK_EQ(ft->n_flows, n);
	CHECK_EQ(ft->overflow_pkts, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pk = i % 7 + 1;

		key_n(&k, i);
		e = gpurx_flow_table_find(ft, &k);
		CHECK(e != NULL, "flow %u missing", i);
		if (e == NULL)
			continue;
		CHECK_EQ(gpurx_flow_live(e)->packets, pk);
		CHECK_EQ(gpurx_flow_live(e)->bytes, pk * (100 + i));
		CHECK_EQ(gpurx_flow_live(e)->first_seen, 1000 - 10 * (pk - 1) + i);
		CHECK_EQ(gpurx_flow_live(e)->last_seen, 1000 + i);
	}
	while ((e = gpurx_flow_table_next(ft, &pos)) != NULL)
		seen++;
	CHECK_EQ(seen, n);

	/* Top 10 by bytes, checked against a brute-force scan. */
	CHECK_EQ(gpurx_flow_table_top_bytes(ft, top, 10), 10);
	for (int j = 0; j < 10; j++) {
		uint64_t best = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t b = (uint64_t)(i % 7 + 1) * (100 + i);
			int taken = 0;

			for (int q = 0; q < j; q++)
				taken |= gpurx_flow_live(top[q])->bytes == b;
			if (!taken && b > best)
				best = b;
		}
		CHECK(gpurx_flow_live(top[j])->bytes == best, "top[%d] = %llu, want %llu", j,
			(unsigned long long)gpurx_flow_live(top[j])->bytes,
			(unsigned long long)best);
	}
	free(ft);

	/* Asking for more than exists returns what exists. */
	ft = table_new(16, 0);
	key_n(&k, 1);
	gpurx_flow_update(ft, &k, 5, 1);
	CHECK_EQ(gpurx_flow_table_top_bytes(ft, top, 10), 1);
	free(ft);
}

/*
 * Keys placed up to 20 slots past their common home: each one found
 * again in its own slot, an absent key of that home found nowhere,
 * every packet counted once and no key inserted twice.
 */
static void
test_probe_window(void)
{
	struct gpurx_flow_table *ft = table_new(64, 0);
	struct gpurx_flow_key keys[21], k;
	uint32_t n = 0, home = UINT32_MAX;

	for (uint32_t i = 0; n < 21 && i < 100000; i++) {
		key_n(&k, i);
		if (home == UINT32_MAX)
			home = gpurx_flow_hash(&k) & 63;
		if ((gpurx_flow_hash(&k) & 63) == home)
			keys[n++] = k;
	}
	CHECK_EQ(n, 21);
	for (uint32_t rep = 0; rep < 3; rep++)
		for (uint32_t j = 0; j < 20; j++)
			CHECK_EQ(gpurx_flow_update(ft, &keys[j], 10 + j, rep), 0);
	CHECK_EQ(ft->n_flows, 20);
	for (uint32_t j = 0; j < 20; j++) {
		struct gpurx_flow_entry *e = gpurx_flow_find(ft, &keys[j],
			gpurx_flow_hash(&keys[j]), 0);

		CHECK(e == &gpurx_flow_entries(ft)[(home + j) & 63],
			"key %u not found %u slots past its home", j, j);
		CHECK(e != NULL && gpurx_flow_live(e)->packets == 3 &&
			gpurx_flow_live(e)->bytes == 3 * (10 + j),
			"key %u counted wrong", j);
	}
	CHECK(gpurx_flow_find(ft, &keys[20], gpurx_flow_hash(&keys[20]), 0) ==
		NULL, "an absent key found");
	free(ft);
}

static void
test_overflow(void)
{
	struct gpurx_flow_table *ft = table_new(64, 0);
	struct gpurx_flow_key k;
	uint64_t in_table = 0, bytes_in_table = 0;
	const struct gpurx_flow_entry *e;
	uint32_t pos = 0;

	/* Full table: the 64 first flows stay intact, the rest overflow. */
	for (uint32_t i = 0; i < 100; i++) {
		key_n(&k, i);
		gpurx_flow_update(ft, &k, 10, i);
		gpurx_flow_update(ft, &k, 10, i + 1000);
	}
	CHECK_EQ(ft->n_flows, 64);
	CHECK_EQ(ft->overflow_pkts, 72);
	CHECK_EQ(ft->overflow_bytes, 720);
	for (uint32_t i = 0; i < 64; i++) {
		key_n(&k, i);
		e = gpurx_flow_table_find(ft, &k);
		CHECK(e != NULL && gpurx_flow_live(e)->packets == 2 &&
			gpurx_flow_live(e)->bytes == 20 &&
			gpurx_flow_live(e)->first_seen == i &&
			gpurx_flow_live(e)->last_seen == i + 1000,
			"flow %u damaged", i);
	}
	free(ft);

	/* A short probe bound overflows early; totals still add up. */
	ft = table_new(1024, 2);
	for (uint32_t i = 0; i < 900; i++) {
		key_n(&k, i);
		gpurx_flow_update(ft, &k, 3, i);
	}
	while ((e = gpurx_flow_table_next(ft, &pos)) != NULL) {
		in_table += gpurx_flow_live(e)->packets;
		bytes_in_table += gpurx_flow_live(e)->bytes;
	}
	CHECK(ft->overflow_pkts > 0, "probe bound never hit");
	CHECK_EQ(in_table + ft->overflow_pkts, 900);
	CHECK_EQ(bytes_in_table + ft->overflow_bytes, 2700);
	CHECK_EQ(ft->n_flows, in_table);
	free(ft);

	ft = malloc(gpurx_flow_table_bytes(100));
	CHECK(gpurx_flow_table_init(ft, 100, 8) == NULL,
		"non power of two accepted");
	free(ft);
}

#define N_THREADS 8
#define N_KEYS 700
#define N_REPS 300

struct worker {
	struct gpurx_flow_table *ft;
	uint32_t id;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct gpurx_flow_key k;

	/* Each thread hits every key, in its own order: 3 is coprime to 700. */
	for (uint32_t r = 0; r < N_REPS; r++)
		for (uint32_t j = 0; j < N_KEYS; j++) {
			uint32_t i = (j * 3 + w->id * 131 + r) % N_KEYS;

			key_n(&k, i);
			gpurx_flow_update(w->ft, &k, i + 1,
				(uint64_t)r * 1000 + w->id + 5);
		}
	return NULL;
}

static void
test_concurrent(uint32_t capacity)
{
	struct gpurx_flow_table *ft = table_new(capacity, 0);
	pthread_t th[N_THREADS];
	struct worker w[N_THREADS];
	const struct gpurx_flow_entry *e;
	struct gpurx_flow_key k;
	uint64_t pk = 0, by = 0;
	uint32_t pos = 0;

	for (uint32_t t = 0; t < N_THREADS; t++) {
		w[t].ft = ft;
		w[t].id = t;
		pthread_create(&th[t], NULL, worker_main, &w[t]);
	}
	for (uint32_t t = 0; t < N_THREADS; t++)
		pthread_join(th[t], NULL);

	while ((e = gpurx_flow_table_next(ft, &pos)) != NULL) {
		pk += gpurx_flow_live(e)->packets;
		by += gpurx_flow_live(e)->bytes;
	}
	CHECK_EQ(pk + ft->overflow_pkts, (uint64_t)N_THREADS * N_REPS * N_KEYS);
	if (capacity >= 2 * N_KEYS) {
		CHECK_EQ(ft->n_flows, N_KEYS);
		CHECK_EQ(ft->overflow_pkts, 0);
		for (uint32_t i = 0; i < N_KEYS; i++) {
			key_n(&k, i);
			e = gpurx_flow_table_find(ft, &k);
			CHECK(e != NULL, "key %u missing", i);
			if (e == NULL)
				continue;
			CHECK_EQ(gpurx_flow_live(e)->packets, (uint64_t)N_THREADS * N_REPS);
			CHECK_EQ(gpurx_flow_live(e)->bytes, (uint64_t)N_THREADS * N_REPS * (i + 1));
			CHECK_EQ(gpurx_flow_live(e)->first_seen, 5);
			CHECK_EQ(gpurx_flow_live(e)->last_seen, (N_REPS - 1) * 1000ull +
				N_THREADS - 1 + 5);
		}
	} else {
		/* Too small on purpose: overflow under contention, no loss. */
		CHECK_EQ(ft->n_flows, capacity);
		CHECK(ft->overflow_pkts > 0, "no overflow");
		CHECK_EQ(pk + ft->overflow_pkts,
			(uint64_t)N_THREADS * N_REPS * N_KEYS);
		(void)by;
	}
	free(ft);
}

/* classify over generated traffic vs. a recount with a plain array. */
static void
test_classify(void)
{
	struct gpurx_flow_table *ft = table_new(1 << 14, 0);
	struct gpurx_filter flt;
	struct pkt_batch b;
	char err[256];
	struct {
		struct gpurx_flow_key key;
		uint64_t packets, bytes, first, last;
	} *ref = calloc(20000, sizeof(*ref));
	uint32_t n_ref = 0, accepted = 0, pos = 0;
	const struct gpurx_flow_entry *e;

	CHECK_EQ(pkt_batch_make(&b, 20000, 99), 0);
	CHECK_EQ(gpurx_filter_compile("ip or ip6", DLT_EN10MB, 65535, &flt,
		err, sizeof(err)), 0);
	for (uint32_t i = 0; i < b.n; i++) {
		const uint8_t *pkt = b.bytes + b.offs[i];
		struct gpurx_pkt_info pi;
		struct gpurx_flow_key key;
		uint8_t mal;
		uint32_t v, j;

		v = gpurx_classify_pkt(pkt, b.caplens[i], b.wirelens[i],
			b.ts[i], flt.insns, flt.len, ft, &mal);
		gpurx_pkt_parse(pkt, b.caplens[i], b.wirelens[i], &pi);
		CHECK_EQ(mal, pi.malformed);
		CHECK_EQ(v, bpf_vm_run(flt.insns, flt.len, pkt, b.wirelens[i],
			b.caplens[i]));
		if (v == 0 || !gpurx_pkt_has_flow(&pi))
			continue;
		accepted++;
		gpurx_flow_key_from_pkt(&pi, &key);
		for (j = 0; j < n_ref; j++)
			if (memcmp(&ref[j].key, &key, sizeof(key)) == 0)
				break;
		if (j == n_ref) {
			ref[n_ref].key = key;
			ref[n_ref].first = UINT64_MAX;
			n_ref++;
		}
		ref[j].packets++;
		ref[j].bytes += b.wirelens[i];
		if (b.ts[i] < ref[j].first)
			ref[j].first = b.ts[i];
		if (b.ts[i] > ref[j].last)
			ref[j].last = b.ts[i];
	}
	CHECK(accepted > 10000 && n_ref > 500,
		"too little traffic: %u packets, %u flows", accepted, n_ref);
	CHECK_EQ(ft->n_flows, n_ref);
	CHECK_EQ(ft->overflow_pkts, 0);
	for (uint32_t j = 0; j < n_ref; j++) {
		e = gpurx_flow_table_find(ft, &ref[j].key);
		CHECK(e != NULL && gpurx_flow_live(e)->packets == ref[j].packets &&
			gpurx_flow_live(e)->bytes == ref[j].bytes &&
			gpurx_flow_live(e)->first_seen == ref[j].first &&
			gpurx_flow_live(e)->last_seen == ref[j].last, "flow %u differs", j);
	}
	while (gpurx_flow_table_next(ft, &pos) != NULL)
		;
	gpurx_filter_free(&flt);
	pkt_batch_free(&b);
	free(ref);
	free(ft);
}

/*
 * Inspection from the first bytes of a packet: whenever it says its
 * result is final, verdict and parse equal those of the whole capture;
 * it says so for most packets at 64 bytes (the point of it), and never
 * for a filter that reads past what it was given.
 */
static void
test_classify_inspect(void)
{
	static const char *const filters[] = {
		"ip or ip6", "tcp port 443", "udp and ip[8] > 3",
		"vlan and tcp", "ether[200:2] != 0x1234",
	};
	static const uint32_t haves[] = { 0, 14, 34, 54, 64, 96 };
	struct pkt_batch b;
	char err[256];

	CHECK_EQ(pkt_batch_make(&b, 5000, 7), 0);
	for (size_t f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
		struct gpurx_filter flt;
		uint32_t final64 = 0, long_pkts = 0, bad_final = 0;

		CHECK_EQ(gpurx_filter_compile(filters[f], DLT_EN10MB, 65535,
			&flt, err, sizeof(err)), 0);
		for (uint32_t i = 0; i < b.n; i++) {
			const uint8_t *pkt = b.bytes + b.offs[i];
			uint32_t cap = b.caplens[i], wire = b.wirelens[i];
			struct gpurx_pkt_info full, part;
			uint32_t v_full, v_part;

			CHECK_EQ(gpurx_classify_inspect(pkt, cap, cap, wire,
				flt.insns, flt.len, &v_full, &full), 1);
			CHECK_EQ(v_full, bpf_vm_run(flt.insns, flt.len, pkt,
				wire, cap));
			for (size_t h = 0; h < sizeof(haves) / sizeof(haves[0]); h++) {
				uint32_t have = haves[h] < cap ? haves[h] : cap;
				int fin = gpurx_classify_inspect(pkt, have, cap,
					wire, flt.insns, flt.len, &v_part, &part);

				if (fin)
					CHECK(v_part == v_full &&
						gpurx_pkt_info_same(&part, &full),
						"filter '%s', packet %u, %u of %u "
						"bytes: final but different",
						filters[f], i, have, cap);
				if (haves[h] == 64)
					final64 += fin;
				/* Malformed, but not for want of bytes. */
				if (haves[h] == 64 && fin && have < cap &&
						full.malformed != GPURX_MAL_NONE &&
						!gpurx_mal_is_truncated(full.malformed))
					bad_final++;
				if (haves[h] == 64 && f == 4 && cap >= 202) {
					long_pkts++;
					CHECK(!fin, "packet %u: a load at 200 "
						"from 64 bytes called final", i);
				}
			}
		}
		if (f < 4) {
			CHECK(final64 > b.n / 2, "filter '%s': only %u of %u "
				"packets final from 64 bytes", filters[f],
				final64, b.n);
			CHECK(bad_final > 0, "filter '%s': no malformed packet "
				"final from 64 bytes", filters[f]);
		}
		else
			CHECK(long_pkts > 100, "only %u packets of >= 202 bytes",
				long_pkts);
		gpurx_filter_free(&flt);
	}
	pkt_batch_free(&b);
}

/* The flow key of the packet s builds (parsed into *pi). */
static struct gpurx_flow_key
key_of(const struct gpugen_pkt_spec *s, struct gpurx_pkt_info *pi)
{
	struct gpugen_pkt_layout lay;
	struct gpurx_flow_key key;
	uint8_t buf[256];
	uint32_t len = gpugen_pkt_build(s, buf, sizeof(buf), &lay);

	CHECK(len != 0, "the test packet does not fit");
	gpurx_pkt_parse(buf, len, len, pi);
	gpurx_flow_key_from_pkt(pi, &key);
	return key;
}

/*
 * ICMP flows are keyed by type and code (dport = type << 8 | code, as
 * nfdump keeps them), ICMPv6 too; a later fragment, with no ICMP header,
 * has none; the MACs and TOS go to the slot's attributes.
 */
static void
test_icmp_key(void)
{
	struct gpugen_pkt_spec s;
	struct gpurx_pkt_info pi;
	struct gpurx_flow_key key;
	struct gpurx_flow_attr attr;

	memset(&s, 0, sizeof(s));
	memcpy(s.eth_src, "\x02\0\0\0\0\x05", 6);
	s.ip_version = 4;
	s.proto = GPURX_IPPROTO_ICMP;
	s.icmp_type = 3;
	s.icmp_code = 1;
	s.tos = 0x20;
	key = key_of(&s, &pi);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(key.sport, 0);
	CHECK_EQ(key.dport, 0x0301);
	gpurx_flow_attr_from_pkt(&pi, &attr);
	CHECK_EQ(attr.tos, 0x20);
	CHECK_EQ(attr.src_mac[5], 5);
	s.frag_off = 10;
	CHECK_EQ(key_of(&s, &pi).dport, 0);
	s.frag_off = 0;
	s.ip_version = 6;
	s.proto = GPURX_IPPROTO_ICMPV6;
	s.icmp_type = 128;
	s.icmp_code = 0;
	key = key_of(&s, &pi);
	CHECK_EQ(pi.malformed, GPURX_MAL_NONE);
	CHECK_EQ(key.dport, 0x8000);
}

/*
 * The port of a packet's queue is part of its flow's key: the same
 * 5-tuple on two ports is two flows, each naming its port, its VLAN id
 * kept; port 0 leaves the key's bytes as the packet gives them. Port
 * indices a key cannot hold are refused.
 */
static void
test_queue_port(void)
{
	static const uint16_t port[4] = { 0, 0, 1, 1 };
	const uint16_t bad[2] = { 0, GPURX_FLOW_KEY_PORTS };
	uint16_t many[GPURX_FLOW_KEY_PORTS + 1] = { 0 };
	struct gpurx_flow_table *ft = table_new(64, 64);
	struct gpugen_pkt_spec s;
	struct gpurx_pkt_info pi;
	struct gpurx_flow_key key, k0;
	uint64_t pkts[2] = { 0, 0 };

	memset(&s, 0, sizeof(s));
	s.ip_version = 4;
	s.proto = GPURX_IPPROTO_UDP;
	s.sport = 1000;
	s.dport = 53;
	s.n_vlans = 1;
	s.vid[0] = 100;
	key = key_of(&s, &pi);
	CHECK_EQ(gpurx_flow_table_set_queue_ports(ft, port, 4), 0);
	CHECK_EQ(gpurx_flow_table_set_queue_ports(ft, bad, 2), -EINVAL);
	CHECK_EQ(gpurx_flow_table_set_queue_ports(ft, many,
		GPURX_FLOW_KEY_PORTS + 1), -EINVAL);
	CHECK_EQ(gpurx_flow_queue_port(ft, 1), 0);
	CHECK_EQ(gpurx_flow_queue_port(ft, 2), 1);
	CHECK(gpurx_classify_flow_of(&pi, 1, 1, ft, &k0), "a flow");
	CHECK(memcmp(&k0, &key, sizeof(key)) == 0,
		"port 0 changed the key's bytes");
	for (uint16_t q = 0; q < 4; q++)
		gpurx_classify_account_q(&pi, 1, 100, 1000 + q, q, ft);
	gpurx_classify_account_q(&pi, 1, 100, 2000, 0, ft);
	CHECK_EQ(ft->n_flows, 2);
	for (uint32_t i = 0; i < ft->capacity; i++) {
		const struct gpurx_flow_entry *e = &gpurx_flow_entries(ft)[i];

		if (!gpurx_flow_has_live(e))
			continue;
		CHECK_EQ(gpurx_flow_key_vlan(&e->key), 100);
		CHECK(gpurx_flow_key_port(&e->key) < 2, "a port index past 1");
		pkts[gpurx_flow_key_port(&e->key) & 1] +=
			gpurx_flow_live(e)->packets;
	}
	CHECK_EQ(pkts[0], 3);
	CHECK_EQ(pkts[1], 2);
	free(ft);
}

int
main(void)
{
	test_exact_counts();
	test_overflow();
	test_probe_window();
	test_concurrent(2048);
	test_concurrent(256);
	test_classify();
	test_classify_inspect();
	test_icmp_key();
	test_queue_port();
	return check_finish("test_flow");
}
