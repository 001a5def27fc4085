/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPFIX writer's own data messages (lib/gpuflow/ipfix_enc.h) against
 * libfixbuf's: random records (every field random, both IP versions,
 * ICMP and not, in runs and mixed) through gpurx_ipfix_enc_check() at the
 * datagrams' and the streams' MTU must come out byte for byte as
 * libfixbuf writes them (fBufAppend() per record, a message wherever
 * libfixbuf ends one). And the check must see a difference: a model in
 * which libfixbuf encodes vlanId otherwise (raw, host order) must fail.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fixbuf/public.h>

#include "ipfix_enc.h"

#define N_RECS 6000

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* v6: percent of IPv6 records; -1: the versions alternate. */
static void
make_recs(struct gpurx_flow_rec *recs, uint32_t n, int v6)
{
	for (uint32_t i = 0; i < n; i++) {
		struct gpurx_flow_rec *r = &recs[i];
		uint64_t *w = (uint64_t *)r;

		for (size_t j = 0; j < sizeof(*r) / sizeof(*w); j++)
			w[j] = next();
		if (v6 < 0)
			r->key.ip_version = i & 1 ? 6 : 4;
		else
			r->key.ip_version = (int)(next() % 100) < v6 ? 6 : 4;
		if (next() % 4 == 0)
			r->key.proto = r->key.ip_version == 4 ? 1 : 58;
		/* The extremes of the counters and times. */
		if (i % 97 == 0)
			memset(r, 0xff, offsetof(struct gpurx_flow_rec, queue));
	}
}

int
main(void)
{
	static const int mixes[] = { 0, 10, 50, 100, -1 };
	static const uint32_t mtus[] = { 1400, 65000 };
	struct gpurx_flow_rec *recs = calloc(N_RECS, sizeof(*recs));
	fbInfoModel_t *model = fbInfoModelAlloc();
	fbInfoModel_t *odd = fbInfoModelAlloc();
	fbInfoElement_t vlan = FB_IE_INIT_FULL("vlanId", 0, 58, 2, 0, 0, 0,
		FB_OCTET_ARRAY, NULL);
	char why[200];
	int fails = 0;

	if (recs == NULL || model == NULL || odd == NULL) {
		fprintf(stderr, "FAIL: out of memory\n");
		return 1;
	}
	for (size_t mi = 0; mi < RTE_DIM(mtus); mi++) {
		for (size_t v = 0; v < RTE_DIM(mixes); v++) {
			make_recs(recs, N_RECS, mixes[v]);
			if (gpurx_ipfix_enc_check(model, recs, N_RECS, mtus[mi],
					7 + (uint32_t)v, 0x01020304, why,
					sizeof(why)) != 0) {
				printf("FAIL: MTU %u, IPv6 %d%%: %s\n", mtus[mi],
					mixes[v], why);
				fails++;
			}
		}
	}
	/* libfixbuf writing vlanId unswapped: the check must say where. */
	fbInfoModelAddElement(odd, &vlan);
	make_recs(recs, 64, 0);
	if (gpurx_ipfix_enc_check(odd, recs, 64, 1400, 1, 1, why,
			sizeof(why)) == 0) {
		printf("FAIL: a libfixbuf that encodes vlanId otherwise passed "
			"the check\n");
		fails++;
	} else {
		printf("the check saw an odd libfixbuf: %s\n", why);
	}
	fbInfoModelFree(odd);
	fbInfoModelFree(model);
	free(recs);
	if (fails != 0)
		return 1;
	printf("PASS: %u random records a run, %zu mixes at MTU 1400 and "
		"65000: the builder's messages are libfixbuf's\n", N_RECS,
		RTE_DIM(mixes));
	return 0;
}
