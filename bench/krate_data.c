/* SPDX-License-Identifier: BSD-3-Clause */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_common.h"
#include "gpugen_build.h"
#include "gpurx_portable.h"
#include "krate_data.h"
#include "pkt_parse.h"

#define KR_PAGE 4096
#define KR_IP4_HLEN 20
#define KR_IP6_HLEN 40
/* Room every rewritten L4 header gets (a TCP header without options). */
#define KR_L4_ROOM 20
#define KR_FIXED_LEN 64
#define KR_HUGE ((size_t)2 << 20)
/* The warp-staged kernels load 16-byte words from each packet start. */
_Static_assert(PKTGEN_ALIGN % 16 == 0 && KR_FIXED_LEN % 16 == 0,
	"packets must start 16-byte aligned");

struct kr_tuple {
	uint8_t src[16];	/* IPv4: first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint8_t proto;		/* 6, 17 or 1 (ICMP; ICMPv6 over IPv6) */
};

/* Own pages, so that cudaHostRegister() of one array never overlaps the
 * pages of another registration. Returns the size allocated in *bytes. */
static void *
page_alloc(size_t len, size_t *bytes)
{
	size_t sz = (len + KR_PAGE - 1) & ~(size_t)(KR_PAGE - 1);
	void *p;

	if (sz == 0)
		sz = KR_PAGE;
	p = aligned_alloc(KR_PAGE, sz);
	if (p != NULL)
		*bytes = sz;
	return p;
}

/* --- Tuples drawn with pktgen's distributions ---------------------------- */

static void
make_tuple(struct kr_tuple *t, bool v6, uint64_t *rng)
{
	memset(t, 0, sizeof(*t));
	t->proto = pktgen_pick_proto(rng);
	t->sport = (uint16_t)(1024 + rand64_next(rng) % 64512);
	t->dport = pktgen_pick_dport(rng);
	if (v6) {
		rand64_fill(t->src, 16, rng);
		rand64_fill(t->dst, 16, rng);
		gpurx_put_be32(t->src, 0x20010DB8);
		gpurx_put_be32(t->dst, 0x20010DB8);
	} else {
		gpurx_put_be32(t->src, pktgen_pick_ip4(rng));
		gpurx_put_be32(t->dst, pktgen_pick_ip4(rng));
	}
}

/* --- Headers, by the generator's builder ---------------------------------- */

/*
 * Rewrites the headers of the packet of len bytes at p for tuple t with
 * lib/gpugen's frame builder (the one pktgen builds the packets with):
 * its Ethernet addresses kept, the IP header and the L4 header (none for
 * a non-first fragment) built anew, the bytes after the headers left as
 * generated. The KR_L4_ROOM bytes after the IP header are first drawn at
 * random whatever the protocol, so a packet's bytes depend only on
 * (seed, flows), not on earlier rewrites. Checksums are not computed
 * (nothing here reads them). Returns 0, or -1 when the builder refuses
 * (a bug: the lengths fit).
 */
static int
rewrite(uint8_t *p, uint16_t len, const struct kr_tuple *t, int ip_version,
		bool frag, uint64_t *rng)
{
	uint8_t frame[PKTGEN_MIX_MAX_LEN];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec sp;
	const uint32_t l3_end = GPURX_ETH_HLEN + (ip_version == 4 ?
		KR_IP4_HLEN : KR_IP6_HLEN);
	uint32_t hdr = l3_end;

	memset(&sp, 0, sizeof(sp));
	memcpy(sp.eth_dst, p, sizeof(sp.eth_dst));
	memcpy(sp.eth_src, p + 6, sizeof(sp.eth_src));
	sp.ip_version = ip_version;
	memcpy(sp.src, t->src, sizeof(sp.src));
	memcpy(sp.dst, t->dst, sizeof(sp.dst));
	sp.proto = ip_version == 6 && t->proto == GPURX_IPPROTO_ICMP ?
		GPURX_IPPROTO_ICMPV6 : t->proto;
	if (ip_version == 4) {
		sp.ip_id = (uint16_t)rand64_next(rng);
		if (frag) {
			/* A non-first fragment of TCP: no L4 header. */
			sp.proto = GPURX_IPPROTO_TCP;
			sp.frag_off = (uint16_t)(1 + rand64_next(rng) % 1000);
		} else {
			sp.dont_frag = 1;
		}
	}
	if (!frag) {
		sp.sport = t->sport;
		sp.dport = t->dport;
		sp.tcp_seq = (uint32_t)rand64_next(rng);
		sp.tcp_ack = (uint32_t)rand64_next(rng);
		sp.tcp_flags = 0x18;	/* PSH|ACK */
		sp.icmp_type = sp.proto == GPURX_IPPROTO_ICMPV6 ? 128 : 8; /* echo */
		hdr += gpugen_pb_l4_hlen(&sp);
	}
	if (len < hdr || len > sizeof(frame))
		return -1;
	sp.payload_len = len - hdr;
	if (gpugen_pkt_build(&sp, frame, len, &lay) != len)
		return -1;
	rand64_fill(p + l3_end, KR_L4_ROOM, rng);
	memcpy(p, frame, lay.payload_off);
	return 0;
}

/* --- Data set -------------------------------------------------------------- */

static uint8_t
pclass_of(const uint8_t *p, uint16_t len)
{
	uint16_t et = gpurx_be16(p + 12);

	if (et == 0x0800 && len >= GPURX_ETH_HLEN + KR_IP4_HLEN + KR_L4_ROOM)
		return (gpurx_be16(p + GPURX_ETH_HLEN + 6) & 0x1FFF) != 0 ?
			KR_PC_V4_FRAG : KR_PC_V4;
	if (et == 0x86DD && len >= GPURX_ETH_HLEN + KR_IP6_HLEN + KR_L4_ROOM)
		return KR_PC_V6;
	return KR_PC_OTHER;
}

/*
 * The 64-byte set: the first 64 bytes of pktgen's packets, generated in
 * chunks so that only 64 bytes per packet are ever held (the whole mix
 * would be ~9x larger). The seed of chunk k is derived from (seed, k).
 */
static int
make_fixed64(struct kr_dataset *d, uint32_t n, uint64_t seed)
{
	const uint32_t chunk = 1u << 16;
	struct pktgen_set *s = &d->set;
	struct pktgen_set tmp;
	size_t sz = (size_t)n * KR_FIXED_LEN;
	uint32_t i, k;

	memset(s, 0, sizeof(*s));
	/* Whole 2 MiB pages, as pktgen allocates: may be registered with
	 * the GPU rounded up to a page, and backed by huge pages. */
	s->buf = aligned_alloc(KR_HUGE, (sz + KR_HUGE - 1) & ~(size_t)(KR_HUGE - 1));
	s->off = malloc(sizeof(*s->off) * n);
	s->len = malloc(sizeof(*s->len) * n);
	if (s->buf == NULL || s->off == NULL || s->len == NULL)
		return -1;
	(void)madvise(s->buf, sz, MADV_HUGEPAGE); /* best effort */
	s->n = n;
	s->buf_size = sz;
	s->total_bytes = sz;
	for (i = 0; i < n; i += chunk) {
		uint32_t m = n - i < chunk ? n - i : chunk;

		if (pktgen_generate(&tmp, m, seed ^ ((uint64_t)(i / chunk) *
				0x9E3779B97F4A7C15ULL)) != 0)
			return -1;
		for (k = 0; k < m; k++) {
			uint8_t *dst = s->buf + (size_t)(i + k) * KR_FIXED_LEN;
			uint8_t c;

			/* pktgen's frames are at least 64 bytes. */
			memcpy(dst, pktgen_set_pkt(&tmp, k), KR_FIXED_LEN);
			s->off[i + k] = (uint64_t)(i + k) * KR_FIXED_LEN;
			s->len[i + k] = KR_FIXED_LEN;
			/* Too short for IPv6 + TCP: IPv4, as in pktgen. */
			c = pclass_of(pktgen_set_pkt(&tmp, k), tmp.len[k]);
			d->cls[i + k] = c == KR_PC_V6 ? KR_PC_V4 : c;
		}
		pktgen_free(&tmp);
	}
	return 0;
}

int
kr_dataset_make(struct kr_dataset *d, uint32_t n, uint64_t seed, bool fixed64)
{
	struct pktgen_set *s = &d->set;
	uint32_t i;

	memset(d, 0, sizeof(*d));
	if (n == 0)
		return -1;
	d->n = n;
	d->fixed64 = fixed64;
	d->cls = malloc(n);
	d->offs = page_alloc(sizeof(*d->offs) * n, &d->offs_bytes);
	d->lens = page_alloc(sizeof(*d->lens) * n, &d->lens_bytes);
	d->ts = page_alloc(sizeof(*d->ts) * n, &d->ts_bytes);
	if (d->cls == NULL || d->offs == NULL || d->lens == NULL ||
			d->ts == NULL)
		goto nomem;
	if (fixed64) {
		if (make_fixed64(d, n, seed) != 0)
			goto nomem;
	} else {
		if (pktgen_generate(s, n, seed) != 0)
			goto nomem;
		for (i = 0; i < n; i++)
			d->cls[i] = pclass_of(pktgen_set_pkt(s, i), s->len[i]);
	}
	/* The kernels take 32-bit offsets, as a capture batch would. */
	if (s->buf_size > UINT32_MAX) {
		BENCH_LOG(ERR, "%u packets need %zu bytes: more than 32-bit "
			"offsets reach (use fewer packets)\n", n, s->buf_size);
		kr_dataset_free(d);
		return -1;
	}
	for (i = 0; i < n; i++) {
		d->offs[i] = (uint32_t)s->off[i];
		d->lens[i] = s->len[i];
		/* A packet every 6.72 ns: 64-byte frames at 100 Gb/s. */
		d->ts[i] = 1000000000ULL + (uint64_t)i * 672 / 100;
		d->wire_bytes += s->len[i];
	}
	return 0;
nomem:
	BENCH_LOG(ERR, "out of memory for %u packets\n", n);
	kr_dataset_free(d);
	return -1;
}

void
kr_dataset_set_flows(struct kr_dataset *d, uint32_t flows, uint64_t seed)
{
	uint64_t rng = rand64_seed(seed ^ 0x6b726174652d666cULL ^
		((uint64_t)flows << 20));
	uint32_t n6, n4, nfrag, i;
	struct kr_tuple *t4, *t6;

	if (flows == 0)
		flows = 1;
	/* IPv6 flows in pktgen's proportion of IPv6 to IP packets (9:97). */
	n6 = d->fixed64 ? 0 : flows * 9ULL / 97 > 0 ? (uint32_t)(flows * 9ULL / 97) : 1;
	n4 = flows > n6 ? flows - n6 : 1;
	nfrag = n4 / 100 > 0 ? n4 / 100 : 1;
	t4 = malloc(sizeof(*t4) * n4);
	t6 = malloc(sizeof(*t6) * (n6 ? n6 : 1));
	if (t4 == NULL || t6 == NULL) {
		/* Sizes are bounded by the packet count: the packets were
		 * allocated, so this is the least of the memory. */
		BENCH_LOG(ERR, "out of memory for %u flow tuples\n", flows);
		abort();
	}
	for (i = 0; i < n4; i++)
		make_tuple(&t4[i], false, &rng);
	for (i = 0; i < n6; i++)
		make_tuple(&t6[i], true, &rng);
	for (i = 0; i < d->n; i++) {
		uint8_t *p = d->set.buf + d->offs[i];
		uint16_t len = d->lens[i];

		int rc = 0;

		switch (d->cls[i]) {
		case KR_PC_V4:
			rc = rewrite(p, len, &t4[rand64_next(&rng) % n4], 4,
				false, &rng);
			break;
		case KR_PC_V4_FRAG:
			rc = rewrite(p, len, &t4[rand64_next(&rng) % nfrag], 4,
				true, &rng);
			break;
		case KR_PC_V6:
			rc = rewrite(p, len, &t6[rand64_next(&rng) % n6], 6,
				false, &rng);
			break;
		default:
			break;
		}
		if (rc != 0) {
			/* Every class's headers fit its length (pclass_of). */
			BENCH_LOG(ERR, "packet %u: the frame builder refused "
				"its headers\n", i);
			abort();
		}
	}
	free(t4);
	free(t6);
	d->flows = flows;
}

void
kr_dataset_free(struct kr_dataset *d)
{
	pktgen_free(&d->set);
	free(d->cls);
	free(d->offs);
	free(d->lens);
	free(d->ts);
	memset(d, 0, sizeof(*d));
}

size_t
kr_dataset_buf_bytes(const struct kr_dataset *d)
{
	/* pktgen rounds every packet up to PKTGEN_ALIGN (a multiple of 16)
	 * and the 64-byte set is whole 64-byte frames: a 16-byte word read
	 * that starts inside a packet ends inside buf_size. */
	return d->set.buf_size;
}

void
kr_dataset_read_bytes(const struct kr_dataset *d, uint32_t window,
		struct kr_read_bytes *rb)
{
	double need = 0, sect = 0, win = 0, lines = 0;
	uint64_t last_line = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < d->n; i++) {
		const uint8_t *p = d->set.buf + d->offs[i];
		uint32_t len = d->lens[i], h, w;
		struct gpurx_pkt_info pi;

		gpurx_pkt_parse(p, len, len, &pi);
		h = pi.ip_version != 0 ? pi.payload_off : pi.l3_off;
		if (h < GPURX_ETH_HLEN)
			h = GPURX_ETH_HLEN;
		if (h > len)
			h = len;
		w = len < window ? len : window;
		need += h;
		sect += (h + 31) & ~31u;
		win += (w + 15) & ~15u;
		{
			/* Packets lie in offset order. */
			uint64_t first = d->offs[i] / 128;
			uint64_t end = (d->offs[i] + ((h + 31) & ~31u) - 1) / 128;

			if (first == last_line)
				first++;
			if (end >= first)
				lines += (double)(end - first + 1);
			last_line = end;
		}
	}
	rb->need = d->n ? need / d->n + KR_DESC_BYTES : 0;
	rb->sectors = d->n ? sect / d->n + KR_DESC_BYTES : 0;
	rb->window = d->n ? win / d->n + KR_DESC_BYTES : 0;
	rb->lines = d->n ? lines / d->n : 0;
}

uint32_t
kr_flow_capacity(uint32_t flows)
{
	uint64_t c = 1024;

	/* Half full at most: linear probing stays short. The rewrite makes
	 * up to 1% more flows (fragments): still well under. */
	while (c < 2ULL * flows && c < (1ULL << 31))
		c <<= 1;
	return (uint32_t)c;
}

uint64_t
kr_cpu_pass(const struct kr_dataset *d, uint32_t n,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		uint32_t window, struct gpurx_flow_table *ft, uint32_t *verdicts)
{
	uint64_t accepted = 0;
	uint32_t i;

	if (n > d->n)
		n = d->n;
	for (i = 0; i < n; i++) {
		uint32_t len = d->lens[i];
		uint32_t cap = window != 0 && window < len ? window : len;

		verdicts[i] = gpurx_classify_pkt(d->set.buf + d->offs[i], cap,
			len, d->ts[i], prog, prog_len, ft, NULL);
		accepted += verdicts[i] != 0;
	}
	return accepted;
}

/* --- Checks ------------------------------------------------------------------ */

void
kr_table_sum(const struct gpurx_flow_table *ft, struct kr_table_sum *s)
{
	const struct gpurx_flow_entry *e;
	uint32_t pos = 0;

	memset(s, 0, sizeof(*s));
	while ((e = gpurx_flow_table_next(ft, &pos)) != NULL) {
		const struct gpurx_flow_acc *l = gpurx_flow_live(e);

		s->entries++;
		s->packets += l->packets;
		s->bytes += l->bytes;
		s->first_seen += l->first_seen;
		s->last_seen += l->last_seen;
		s->key_hash += gpurx_flow_hash(&e->key);
	}
	s->n_flows = ft->n_flows;
	s->overflow_pkts = ft->overflow_pkts;
	s->overflow_bytes = ft->overflow_bytes;
}

int
kr_table_sum_cmp(const char *prefix, const struct kr_table_sum *want,
		const struct kr_table_sum *got)
{
	static const char *const names[] = {
		"entries", "packets", "bytes", "sum(first_seen)",
		"sum(last_seen)", "sum(key hash)", "n_flows", "overflow_pkts",
		"overflow_bytes",
	};
	const uint64_t *w = (const uint64_t *)want, *g = (const uint64_t *)got;
	size_t i;
	int ret = 0;

	_Static_assert(sizeof(struct kr_table_sum) == sizeof(names) /
		sizeof(names[0]) * sizeof(uint64_t), "kr_table_sum fields");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (w[i] != g[i]) {
			printf("FAIL %s: flow table %s: CPU %" PRIu64 ", GPU %"
				PRIu64 "\n", prefix, names[i], w[i], g[i]);
			ret = -1;
		}
	}
	return ret;
}

int
kr_table_cmp_full(const char *prefix, const struct gpurx_flow_table *want,
		const struct gpurx_flow_table *got)
{
	const struct gpurx_flow_entry *e, *o;
	uint64_t bad = 0;
	uint32_t pos = 0;

	if (want->n_flows != got->n_flows) {
		printf("FAIL %s: %" PRIu64 " flows on the CPU, %" PRIu64
			" on the GPU\n", prefix, want->n_flows, got->n_flows);
		bad++;
	}
	while ((e = gpurx_flow_table_next(want, &pos)) != NULL) {
		const struct gpurx_flow_acc *x = gpurx_flow_live(e), *y;

		o = gpurx_flow_table_find(got, &e->key);
		y = o != NULL ? gpurx_flow_live(o) : NULL;
		if (y != NULL && y->packets == x->packets &&
				y->bytes == x->bytes &&
				y->first_seen == x->first_seen &&
				y->last_seen == x->last_seen)
			continue;
		if (++bad <= 5) {
			if (y == NULL)
				printf("FAIL %s: flow (hash %08x, %" PRIu64
					" packets) missing on the GPU\n", prefix,
					e->hash, x->packets);
			else
				printf("FAIL %s: flow %08x: CPU %" PRIu64 " pkts %"
					PRIu64 " B first %" PRIu64 " last %" PRIu64
					", GPU %" PRIu64 " pkts %" PRIu64 " B first %"
					PRIu64 " last %" PRIu64 "\n", prefix,
					e->hash, x->packets, x->bytes,
					x->first_seen, x->last_seen, y->packets,
					y->bytes, y->first_seen, y->last_seen);
		}
	}
	if (bad > 5)
		printf("FAIL %s: %" PRIu64 " flows differ in all\n", prefix, bad);
	return bad ? -1 : 0;
}

int
kr_verdicts_cmp(const char *prefix, const uint32_t *want, const uint32_t *got,
		uint32_t n)
{
	uint64_t bad = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (want[i] == got[i])
			continue;
		if (++bad <= 5)
			printf("FAIL %s: packet %u: CPU verdict %u, GPU %u\n",
				prefix, i, want[i], got[i]);
	}
	if (bad > 5)
		printf("FAIL %s: %" PRIu64 " of %u verdicts differ\n", prefix,
			bad, n);
	return bad ? -1 : 0;
}
