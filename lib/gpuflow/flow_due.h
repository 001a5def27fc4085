/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When a flow's record is due to end: the idle and active timeouts and
 * the TCP FIN/RST linger, from its times and flags, and whether times
 * read while others update them have landed.
 * Part of the flow table: include flow_table.h, not this file.
 */
#ifndef GPURX_FLOW_DUE_H
#define GPURX_FLOW_DUE_H

#include "flow_layout.h"

/*
 * Whether a flow with these first and last packet times and TCP flags is
 * due to end at time now, and why (0: not due). It ends at the earliest
 * of its deadlines, so the reason depends only on the record, never on
 * when the check ran (ties: FIN/RST, then idle, then active).
 */
GPURX_FN uint32_t
gpurx_flow_due(const struct gpurx_flow_table *ft, uint64_t first,
		uint64_t last, uint32_t tcp_flags, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	uint32_t why = GPURX_FLOW_END_NONE;

	if (tcp_flags & (GPURX_TCP_FIN | GPURX_TCP_RST)) {
		deadline = last + ft->linger_ns;
		why = GPURX_FLOW_END_EOF;
	}
	if (ft->idle_ns != 0 && last + ft->idle_ns < deadline) {
		deadline = last + ft->idle_ns;
		why = GPURX_FLOW_END_IDLE;
	}
	if (ft->active_ns != 0 && first + ft->active_ns < deadline) {
		deadline = first + ft->active_ns;
		why = GPURX_FLOW_END_ACTIVE;
	}
	return now >= deadline ? why : (uint32_t)GPURX_FLOW_END_NONE;
}

/*
 * Whether a record's times, read while other threads may be adding to
 * them, can decide an end: both landed. A commit adds its first (min)
 * and last (max) times with two relaxed atomics, so a reader between
 * them sees the first time and the emptied buffer's last, 0: read as
 * such, the record would look idle since time 0 and end on the next
 * packet (3 threads starting one record at once did that in about one
 * round in 150). Once both landed last >= first: every last is the max
 * of times whose min is first. Relaxed reads may still see an older
 * last, as any racing reader may; an ordered reader (the next plan in
 * the queue's turn, or one thread per queue) sees both.
 */
GPURX_FN int
gpurx_flow_times_landed(uint64_t first, uint64_t last)
{
	return first != UINT64_MAX && last >= first;
}

/* The same for a live entry, its fields read as they are (not due while
 * it has no record, or its times have not landed). */
GPURX_FN uint32_t
gpurx_flow_entry_due(const struct gpurx_flow_table *ft,
		const struct gpurx_flow_entry *e, uint64_t now)
{
	const uint64_t r = gpurx_atomic_load_u64(&e->rec, GPURX_RELAXED);
	const struct gpurx_flow_acc *a = &e->acc[GPURX_FLOW_REC_B(r)];
	uint64_t first, last;

	if (!(r & GPURX_FLOW_REC_LIVE))
		return GPURX_FLOW_END_NONE;
	first = gpurx_atomic_load_u64(&a->first_seen, GPURX_RELAXED);
	last = gpurx_atomic_load_u64(&a->last_seen, GPURX_RELAXED);
	if (!gpurx_flow_times_landed(first, last))
		return GPURX_FLOW_END_NONE;
	return gpurx_flow_due(ft, first, last,
		GPURX_FLOW_REC_FLAGS(r, GPURX_FLOW_REC_B(r)), now);
}

#endif /* GPURX_FLOW_DUE_H */
