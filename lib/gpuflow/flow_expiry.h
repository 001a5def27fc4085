/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The expiry scan: the due flows of a range of slots ended into the
 * ring, concurrent with updates (the GPU's scan kernel, flow_scan.cu,
 * and the CPU pipeline run it).
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_EXPIRY_H
#define GPURX_FLOW_EXPIRY_H

#include "flow_record.h"

/*
 * The scan: end the flows of slots [from, to) that are due at `now` (the
 * time up to which every packet is accounted). Returns how many ended.
 * Concurrent with updates and other scans of other ranges.
 */
GPURX_FN uint32_t
gpurx_flow_scan(struct gpurx_flow_table *ft, uint32_t from, uint32_t to,
		uint64_t now)
{
	struct gpurx_flow_entry *ents = gpurx_flow_entries(ft);
	uint32_t ended = 0;

	if (ft->ring == NULL)
		return 0;
	for (uint32_t i = from; i < to && i < ft->capacity; i++) {
		struct gpurx_flow_entry *e = &ents[i];
		uint64_t s = gpurx_atomic_load_u64(&e->state, GPURX_ACQUIRE);
		uint32_t why;

		if (GPURX_FLOW_TAG(s) != GPURX_FLOW_READY)
			continue;
		why = gpurx_flow_entry_due(ft, e, now);
		if (why != GPURX_FLOW_END_NONE)
			ended += (uint32_t)gpurx_flow_end(ft, e, s, why,
				GPURX_FLOW_FREE, now);
	}
	return ended;
}

#endif /* GPURX_FLOW_EXPIRY_H */
