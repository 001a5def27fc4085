/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Liveness of the GPU side, watched by the main lcore: the persistent
 * kernel's stream (a fault ends it with a sticky error, an Xid or a
 * watchdog ends it early) and each queue's progress (a queue whose
 * published items stop coming back is stalled: its dispatcher is not
 * running, or the kernel hangs). Without this, a dead kernel leaves
 * every item READY and each later burst is dropped as "ring full" while
 * the program keeps running.
 *
 * Only the decision is here, with no CUDA or lcore state, so that the
 * CPU tests drive it; gpu_path.c samples and reports.
 */
#ifndef GPURX_APP_LIVENESS_H
#define GPURX_APP_LIVENESS_H

#include <stdint.h>

#include "opts.h"

/* At most this long between two looks at the GPU side, in ms. */
#define GPURX_WATCH_PERIOD_MS 100

/*
 * Per queue, written by its RX lcore only (relaxed atomic stores), read
 * by the main lcore.
 */
struct gpurx_qlive {
	uint64_t published;	/* items stored READY */
	uint64_t collected;	/* items collected DONE */
	uint64_t inflight_pkts;	/* packets in published, uncollected items */
	uint32_t ring_full;	/* the lcore found no FREE item: look now */
};

/* What the kernel stream answered. */
enum gpurx_kstate {
	GPURX_KSTATE_NONE,	/* no persistent kernel (launch per burst) */
	GPURX_KSTATE_RUNNING,
	GPURX_KSTATE_ENDED,	/* finished without being told to quit */
	GPURX_KSTATE_FAILED,	/* finished with an error */
};

enum gpurx_watch_verdict {
	GPURX_WATCH_OK,
	GPURX_WATCH_KERNEL_FAILED,
	GPURX_WATCH_KERNEL_ENDED,
	GPURX_WATCH_STALLED,	/* *q: the queue, *age: cycles without progress */
};

struct gpurx_watch {
	uint64_t hz;
	uint64_t period;	/* cycles between looks */
	uint64_t stall;		/* cycles; 0: no stall detection */
	uint64_t last_look;
	uint64_t progress;	/* last look that saw an item come back */
	uint16_t nq;
	/* Per queue: collected at the last look, and since when the queue
	 * has had items out without any coming back. */
	uint64_t seen[GPURX_MAX_QUEUES];
	uint64_t since[GPURX_MAX_QUEUES];
};

void gpurx_watch_init(struct gpurx_watch *w, uint16_t nq, uint64_t hz,
		uint32_t stall_ms, uint64_t now);

/* Whether to look now: a period has passed, or a queue found its ring
 * full (a dead kernel shows there first). */
int gpurx_watch_due(const struct gpurx_watch *w, uint64_t now,
		int ring_full);

/*
 * Decide from one sample: the kernel's state and a snapshot of each
 * queue's counters (live[0..nq)). A kernel that failed or ended comes first; then the
 * first queue whose published items have not come back, with none
 * collected, for the stall time. A queue with nothing out, or that
 * collected anything since the last look, starts its clock again, so an
 * idle queue is never stalled. Updates w.
 */
enum gpurx_watch_verdict gpurx_watch_decide(struct gpurx_watch *w,
		uint64_t now, enum gpurx_kstate ks,
		const struct gpurx_qlive *live, uint16_t *q, uint64_t *age);

#endif /* GPURX_APP_LIVENESS_H */
