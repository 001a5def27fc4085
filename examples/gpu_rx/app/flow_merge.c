/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several GPUs: each counts the flows of its queues in a table of its
 * own; at the end (after the flow export's last records, taken from each
 * table as it is) the others' tables are merged into the first one's
 * (gpurx_app.ft), so that the summary's flow count and top flows are what
 * one table would have held. Without flow export flows never end, every
 * slot in use holds one live record, and n_flows is the number of keys;
 * with it n_flows counts records started, the live ones are merged.
 */

#include <string.h>

#include <rte_common.h>

#include "flow_table.h"
#include "gpu_priv.h"

/* A slot src's key may take in dst: on its probe path, not in use. */
static struct gpurx_flow_entry *
free_slot(struct gpurx_flow_table *dst, const struct gpurx_flow_key *key,
		struct gpurx_flow_entry **home, uint32_t *dist)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(dst);
	const uint32_t mask = dst->capacity - 1;
	uint32_t idx = gpurx_flow_hash(key) & mask;

	*home = &ents[idx];
	for (uint32_t d = 0; d < dst->max_probe; d++, idx = (idx + 1) & mask) {
		uint32_t tag = GPURX_FLOW_TAG(ents[idx].state);

		if (tag == GPURX_FLOW_EMPTY || tag == GPURX_FLOW_FREE) {
			*dist = d;
			return &ents[idx];
		}
	}
	return NULL;
}

void
gpurx_flow_merge(struct gpurx_flow_table *dst,
		const struct gpurx_flow_table *src)
{
	const struct gpurx_flow_entry *e;
	uint32_t pos = 0;

	dst->n_flows += src->n_flows;
	dst->overflow_pkts += src->overflow_pkts;
	dst->overflow_bytes += src->overflow_bytes;
	while ((e = gpurx_flow_table_next(src, &pos)) != NULL) {
		const struct gpurx_flow_acc *x = gpurx_flow_live(e);
		struct gpurx_flow_entry *d = (struct gpurx_flow_entry *)
			gpurx_flow_table_find(dst, &e->key);
		struct gpurx_flow_entry *home;
		uint32_t dist;
		uint16_t lock, reach;

		if (d != NULL) {
			/* The flow came on queues of both GPUs (no RSS
			 * keeping it on one): one flow, as one table has it.
			 * Its TCP flags are not merged: only an export
			 * reports them. */
			struct gpurx_flow_acc *y = (struct gpurx_flow_acc *)
				gpurx_flow_live(d);

			y->packets += x->packets;
			y->bytes += x->bytes;
			y->first_seen = RTE_MIN(y->first_seen, x->first_seen);
			y->last_seen = RTE_MAX(y->last_seen, x->last_seen);
			dst->n_flows--;
			continue;
		}
		d = free_slot(dst, &e->key, &home, &dist);
		if (d == NULL) {
			/* No room on its path: its packets overflowed, as
			 * they would have in one table this full. */
			dst->n_flows--;
			dst->overflow_pkts += x->packets;
			dst->overflow_bytes += x->bytes;
			continue;
		}
		/* The slot's lock and reach are its own as a home slot,
		 * not the key's. */
		lock = d->lock;
		reach = d->reach;
		*d = *e;
		d->lock = lock;
		d->reach = reach;
		gpurx_flow_reach_at_least(home, dist);
	}
}
