/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU self-test of the core: the CUDA build of the shared headers must
 * give the same verdicts, malformed kinds and flow table as the CPU build
 * on the same generated traffic, also with every packet split in two runs
 * apart (RX buffer split) and read through the two-run view on the GPU.
 * Exits 77 (skipped) without a GPU.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "classify_ref.h"
#include "filter_compile.h"
#include "filters.h"
#include "flow_classify.h"
#include "core_kernels.h"
#include "check.h"

#define EXIT_SKIP 77

static struct gpurx_flow_table *
table_new(uint32_t capacity)
{
	void *mem = aligned_alloc(64, gpurx_flow_table_bytes(capacity));

	return gpurx_flow_table_init(mem, capacity, 0);
}

static struct gpurx_core_batch
as_core_batch(const struct pkt_batch *b)
{
	struct gpurx_core_batch cb = {
		.pkts = b->bytes, .pkts_len = b->total, .offs = b->offs,
		.caplens = b->caplens, .wirelens = b->wirelens, .ts = b->ts,
		.n = b->n,
	};

	return cb;
}

/* Poison between the runs: a read past one gives bytes of no packet. */
#define SPLIT_GAP 16

/*
 * The batch split, packet i after n0 bytes (i % 97: inside every header),
 * each run apart from the other with poison around. The buffers are kept
 * in *heads and *tails until the caller frees them.
 */
static int
split_core_batch(const struct pkt_batch *b, struct gpurx_core_batch *cb,
		uint8_t **heads, uint8_t **tails, uint32_t **n0,
		uint32_t **offs0, uint32_t **offs1)
{
	size_t len = (size_t)b->total + (size_t)b->n * SPLIT_GAP;
	size_t h = 0, t = 0;

	*heads = malloc(len);
	*tails = malloc(len);
	*n0 = calloc(b->n, sizeof(**n0));
	*offs0 = calloc(b->n, sizeof(**offs0));
	*offs1 = calloc(b->n, sizeof(**offs1));
	if (*heads == NULL || *tails == NULL || *n0 == NULL || *offs0 == NULL ||
			*offs1 == NULL)
		return -1;
	memset(*heads, 0xa5, len);
	memset(*tails, 0x5a, len);
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t cap = b->caplens[i], k = i % 97 < cap ? i % 97 : cap;

		(*n0)[i] = k;
		(*offs0)[i] = (uint32_t)h;
		memcpy(*heads + h, b->bytes + b->offs[i], k);
		h += k + SPLIT_GAP;
		t += SPLIT_GAP;
		(*offs1)[i] = (uint32_t)t;
		memcpy(*tails + t, b->bytes + b->offs[i] + k, cap - k);
		t += cap - k;
	}
	*cb = as_core_batch(b);
	cb->pkts = *heads;
	cb->pkts_len = h;
	cb->offs = *offs0;
	cb->n0 = *n0;
	cb->pkts1 = *tails;
	cb->pkts1_len = t;
	cb->offs1 = *offs1;
	return 0;
}

/* Same flows with the same counters, wherever each landed. */
static void
compare_tables(const char *what, const struct gpurx_flow_table *cpu,
		const struct gpurx_flow_table *gpu)
{
	uint32_t bad;

	CHECK(cpu->n_flows == gpu->n_flows, "%s: %llu flows on CPU, %llu on GPU",
		what, (unsigned long long)cpu->n_flows,
		(unsigned long long)gpu->n_flows);
	CHECK_EQ(cpu->overflow_pkts, gpu->overflow_pkts);
	bad = flow_tables_diff(cpu, gpu);
	CHECK(bad == 0, "%s: %u flows differ", what, bad);
}

static void
run_filter_on(const char *expr, const struct pkt_batch *b, uint32_t capacity,
		bool split)
{
	struct gpurx_core_batch cb = as_core_batch(b);
	uint8_t *heads = NULL, *tails = NULL;
	uint32_t *n0 = NULL, *offs0 = NULL, *offs1 = NULL;
	struct gpurx_flow_table *cft = table_new(capacity);
	struct gpurx_flow_table *gft = table_new(capacity);
	uint32_t *cv = calloc(b->n, 4), *gv = calloc(b->n, 4);
	uint8_t *cm = calloc(b->n, 1), *gm = calloc(b->n, 1);
	struct gpurx_filter f;
	char err[512];
	uint32_t vbad = 0, mbad = 0;

	if (split && split_core_batch(b, &cb, &heads, &tails, &n0, &offs0,
			&offs1) != 0) {
		CHECK(0, "out of memory");
		goto out;
	}
	if (gpurx_filter_compile(expr, DLT_EN10MB, 65535, &f, err,
			sizeof(err)) != 0) {
		CHECK(0, "\"%s\": %s", expr, err);
		goto out;
	}
	for (uint32_t i = 0; i < b->n; i++)
		cv[i] = gpurx_classify_pkt(b->bytes + b->offs[i], b->caplens[i],
			b->wirelens[i], b->ts[i], f.insns, f.len, cft, &cm[i]);
	if (gpurx_core_classify_host(&cb, f.insns, f.len, gft, gv, gm, err,
			sizeof(err)) != 0) {
		CHECK(0, "\"%s\": GPU run failed: %s", expr, err);
		goto out_f;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		vbad += cv[i] != gv[i];
		mbad += cm[i] != gm[i];
	}
	CHECK(vbad == 0, "\"%s\"%s: %u verdicts differ", expr,
		split ? " split" : "", vbad);
	CHECK(mbad == 0, "\"%s\"%s: %u malformed kinds differ", expr,
		split ? " split" : "", mbad);
	if (capacity >= 4 * b->n) {
		compare_tables(expr, cft, gft);
	} else {
		/* Which flows win a full table depends on thread order. */
		CHECK_EQ(gft->n_flows, capacity);
		CHECK_EQ(cft->n_flows, capacity);
	}
	{
		uint64_t cp = cft->overflow_pkts, gp = gft->overflow_pkts;
		const struct gpurx_flow_entry *e;
		uint32_t pos = 0;

		while ((e = gpurx_flow_table_next(cft, &pos)) != NULL)
			cp += gpurx_flow_live(e)->packets;
		pos = 0;
		while ((e = gpurx_flow_table_next(gft, &pos)) != NULL)
			gp += gpurx_flow_live(e)->packets;
		CHECK(cp == gp, "\"%s\": %llu packets accounted on CPU, %llu on GPU",
			expr, (unsigned long long)cp, (unsigned long long)gp);
	}
out_f:
	gpurx_filter_free(&f);
out:
	free(cv);
	free(gv);
	free(cm);
	free(gm);
	free(cft);
	free(gft);
	free(heads);
	free(tails);
	free(n0);
	free(offs0);
	free(offs1);
}

static void
run_filter(const char *expr, const struct pkt_batch *b, uint32_t capacity)
{
	run_filter_on(expr, b, capacity, false);
}

int
main(void)
{
	struct pkt_batch b, hot;
	char why[256] = "";
	int n = gpurx_core_gpu_count(why, sizeof(why));

	if (n <= 0) {
		printf("SKIP: no usable CUDA GPU: %s\n", why);
		return EXIT_SKIP;
	}
	if (pkt_batch_make(&b, 20000, 99) != 0 ||
			pkt_batch_make(&hot, 200000, 7) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < N_TEST_FILTERS; i++) {
		run_filter(test_filters[i], &b, 1 << 17);
		/* The two-run view on the GPU against one run on the CPU. */
		run_filter_on(test_filters[i], &b, 1 << 17, true);
	}

	/* Contention: 200k packets over 32 frames, i.e. a few hot flows. */
	for (uint32_t i = 32; i < hot.n; i++) {
		hot.offs[i] = hot.offs[i % 32];
		hot.caplens[i] = hot.caplens[i % 32];
		hot.wirelens[i] = hot.wirelens[i % 32];
	}
	run_filter("", &hot, 1 << 20);
	/* A table far too small: overflow accounting must still add up. */
	run_filter("ip or ip6", &b, 64);

	pkt_batch_free(&b);
	pkt_batch_free(&hot);
	return check_finish("gpurx-core-gpu-test");
}
