/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packets received with RX buffer split (the headers in one buffer, the
 * rest in another) classified where they lie, through the two-run view:
 * for every filter of filters.h and generated traffic of every kind,
 * split at every header boundary and in the middle of fields, the
 * verdict, the parse, the malformed kind and the flow table must be those
 * of the same packet in one buffer. Each run is a copy of exactly its
 * bytes, so a read past either (ASan build) or of the wrong one shows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "classify_ref.h"
#include "filter_compile.h"
#include "filters.h"
#include "flow_classify.h"
#include "check.h"

#define N_PKTS 2000
#define TABLE_SLOTS (1u << 13)

/* Fixed split points: inside the Ethernet header and its EtherType,
 * VLAN tags, IPv4/IPv6 headers and addresses, L4 ports and flags; and
 * two drawn per packet. */
static const uint32_t fixed_points[] = {
	0, 1, 12, 13, 14, 15, 17, 18, 19, 23, 26, 30, 34, 35, 37, 38, 40, 47,
	54, 55, 64, 66, 74, 128,
};
#define N_POINTS (sizeof(fixed_points) / sizeof(fixed_points[0]) + 2)

struct split_pkt {
	uint8_t *p0, *p1;	/* exactly n0 and cap - n0 bytes */
	uint32_t n0;
};

static struct split_pkt (*splits)[N_POINTS];

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
draw(uint32_t bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return bound == 0 ? 0 : (uint32_t)(rng % bound);
}

static uint8_t *
copy_of(const uint8_t *src, uint32_t n)
{
	/* malloc(0) may give NULL: a view whose run is never read. */
	uint8_t *p = malloc(n ? n : 1);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
	return p;
}

static int
make_splits(const struct pkt_batch *b)
{
	splits = calloc(b->n, sizeof(*splits));
	if (splits == NULL)
		return -1;
	for (uint32_t i = 0; i < b->n; i++) {
		const uint8_t *pkt = b->bytes + b->offs[i];
		uint32_t cap = b->caplens[i];

		for (uint32_t s = 0; s < N_POINTS; s++) {
			struct split_pkt *sp = &splits[i][s];
			uint32_t n0;

			if (s < N_POINTS - 2)
				n0 = fixed_points[s];
			else
				n0 = draw(cap + 1);
			n0 = n0 < cap ? n0 : cap;
			sp->n0 = n0;
			sp->p0 = copy_of(pkt, n0);
			sp->p1 = copy_of(pkt + n0, cap - n0);
			if (sp->p0 == NULL || sp->p1 == NULL)
				return -1;
		}
	}
	return 0;
}

static void
free_splits(uint32_t n)
{
	for (uint32_t i = 0; splits != NULL && i < n; i++)
		for (uint32_t s = 0; s < N_POINTS; s++) {
			free(splits[i][s].p0);
			free(splits[i][s].p1);
		}
	free(splits);
}

static struct gpurx_flow_table *
table_new(void)
{
	void *mem = aligned_alloc(64, gpurx_flow_table_bytes(TABLE_SLOTS));

	return mem == NULL ? NULL : gpurx_flow_table_init(mem, TABLE_SLOTS, 0);
}

/* The same flows with the same counters. */
static void
compare_tables(const char *expr, const struct gpurx_flow_table *one,
		const struct gpurx_flow_table *split)
{
	uint32_t bad = flow_tables_diff(one, split);

	CHECK(one->n_flows == split->n_flows && one->overflow_pkts ==
		split->overflow_pkts, "'%s': %llu flows (%llu overflow) in one "
		"run, %llu (%llu) split", expr,
		(unsigned long long)one->n_flows,
		(unsigned long long)one->overflow_pkts,
		(unsigned long long)split->n_flows,
		(unsigned long long)split->overflow_pkts);
	CHECK(bad == 0, "'%s': %u flows differ when split", expr, bad);
}

/*
 * One filter over every packet and split point: classify (verdict,
 * malformed kind, flows), and inspection from the first bytes as the GPU
 * does it (have: the header run, or 64 bytes), the same split or not.
 */
static void
run_filter(const char *expr, const struct pkt_batch *b, uint32_t *crossed,
		uint32_t *filters_matching)
{
	struct gpurx_flow_table *ft1 = table_new(), *ft2 = table_new();
	struct gpurx_filter flt;
	uint32_t vbad = 0, mbad = 0, pbad = 0, ibad = 0, matched = 0;
	char err[256];

	if (ft1 == NULL || ft2 == NULL) {
		CHECK(0, "out of memory");
		goto out;
	}
	if (gpurx_filter_compile(expr, DLT_EN10MB, 65535, &flt, err,
			sizeof(err)) != 0) {
		CHECK(0, "'%s': %s", expr, err);
		goto out;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		const uint8_t *pkt = b->bytes + b->offs[i];
		uint32_t cap = b->caplens[i], wire = b->wirelens[i];
		struct gpurx_pkt_info pi1, pi2;
		uint32_t v1, v2;
		uint8_t m1, m2;

		for (uint32_t s = 0; s < N_POINTS; s++) {
			const struct split_pkt *sp = &splits[i][s];
			struct gpurx_pkt_view v = gpurx_view_split(sp->p0,
				sp->n0, sp->p1);
			uint32_t haves[2] = { sp->n0, 64 < cap ? 64 : cap };

			/* Flows are counted once per packet, at one split
			 * point: the tables must then be the same. */
			v1 = gpurx_classify_pkt(pkt, cap, wire, b->ts[i],
				flt.insns, flt.len, s == 0 ? ft1 : NULL, &m1);
			v2 = gpurx_classify_pkt_view(v, cap, wire, b->ts[i],
				flt.insns, flt.len,
				s == i % N_POINTS ? ft2 : NULL, &m2);
			vbad += v1 != v2;
			mbad += m1 != m2;
			matched += v1 != 0;
			gpurx_pkt_parse(pkt, cap, wire, &pi1);
			gpurx_pkt_parse_view(v, cap, wire, &pi2);
			pbad += !gpurx_pkt_info_same(&pi1, &pi2);
			for (int h = 0; h < 2; h++) {
				int f1 = gpurx_classify_inspect(pkt, haves[h],
					cap, wire, flt.insns, flt.len, &v1, &pi1);
				int f2 = gpurx_classify_inspect_view(v,
					haves[h], cap, wire, flt.insns,
					flt.len, &v2, &pi2);

				ibad += f1 != f2 || v1 != v2 ||
					!gpurx_pkt_info_same(&pi1, &pi2);
			}
			/* The parse read bytes of both runs. */
			*crossed += sp->n0 > 0 && sp->n0 < pi1.l3_off;
		}
	}
	CHECK(vbad == 0, "'%s': %u verdicts differ when split", expr, vbad);
	CHECK(mbad == 0, "'%s': %u malformed kinds differ when split", expr,
		mbad);
	CHECK(pbad == 0, "'%s': %u parses differ when split", expr, pbad);
	CHECK(ibad == 0, "'%s': %u inspections from the first bytes differ "
		"when split", expr, ibad);
	compare_tables(expr, ft1, ft2);
	*filters_matching += matched > 0;
	gpurx_filter_free(&flt);
out:
	free(ft1);
	free(ft2);
}

int
main(void)
{
	struct pkt_batch b;
	uint32_t crossed = 0, matching = 0;

	if (pkt_batch_make(&b, N_PKTS, 42) != 0 || make_splits(&b) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t f = 0; f < N_TEST_FILTERS; f++)
		run_filter(test_filters[f], &b, &crossed, &matching);
	/* Not vacuous: headers read across the runs, most filters matching
	 * some packets. */
	CHECK(crossed > N_PKTS * N_TEST_FILTERS,
		"only %u parses read a header across the split", crossed);
	CHECK(matching > N_TEST_FILTERS * 3 / 4, "only %u of %zu filters "
		"matched a packet", matching, N_TEST_FILTERS);
	free_splits(b.n);
	pkt_batch_free(&b);
	return check_finish("test_split");
}
