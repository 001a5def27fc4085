/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdlib.h>
#include <string.h>

#include "classify_ref.h"
#include "flow_table.h"
#include "pktgen.h"

int
pkt_batch_make(struct pkt_batch *b, uint32_t n, uint64_t seed)
{
	static struct pktgen_pkt p;
	struct pktgen g;
	uint32_t cap = n * 256 + PKTGEN_MAX_LEN;

	memset(b, 0, sizeof(*b));
	b->bytes = malloc(cap);
	b->offs = calloc(n, sizeof(*b->offs));
	b->caplens = calloc(n, sizeof(*b->caplens));
	b->wirelens = calloc(n, sizeof(*b->wirelens));
	b->ts = calloc(n, sizeof(*b->ts));
	if (!b->bytes || !b->offs || !b->caplens || !b->wirelens || !b->ts)
		return -1;
	pktgen_init(&g, seed);
	for (uint32_t i = 0; i < n; i++) {
		pktgen_next(&g, &p);
		if (b->total + p.caplen > cap) {
			uint8_t *nb;

			cap = cap * 2 + p.caplen;
			nb = realloc(b->bytes, cap);
			if (nb == NULL)
				return -1;
			b->bytes = nb;
		}
		memcpy(b->bytes + b->total, p.data, p.caplen);
		b->offs[i] = b->total;
		b->caplens[i] = p.caplen;
		b->wirelens[i] = p.wirelen;
		b->ts[i] = p.ts;
		b->total += p.caplen;
	}
	b->n = n;
	return 0;
}

void
pkt_batch_free(struct pkt_batch *b)
{
	free(b->bytes);
	free(b->offs);
	free(b->caplens);
	free(b->wirelens);
	free(b->ts);
	memset(b, 0, sizeof(*b));
}

uint32_t
flow_tables_diff(const struct gpurx_flow_table *want,
		const struct gpurx_flow_table *got)
{
	const struct gpurx_flow_entry *e, *g;
	uint32_t pos = 0, bad = 0;

	while ((e = gpurx_flow_table_next(want, &pos)) != NULL) {
		g = gpurx_flow_table_find(got, &e->key);
		if (g == NULL || gpurx_flow_live(g)->packets != gpurx_flow_live(e)->packets ||
				gpurx_flow_live(g)->bytes != gpurx_flow_live(e)->bytes ||
				gpurx_flow_live(g)->first_seen != gpurx_flow_live(e)->first_seen ||
				gpurx_flow_live(g)->last_seen != gpurx_flow_live(e)->last_seen)
			bad++;
	}
	return bad;
}
