/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU side of the flow export (GPU modes), per GPU of the run: its
 * export ring's records in its memory and their copies to the host, and
 * the exporter thread's scans of its table (flow_scan.cu), each on a
 * stream of its own.
 */
#ifndef GPURX_APP_FLOW_GPU_H
#define GPURX_APP_FLOW_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "flow_table.h"

struct gpurx_app;

/*
 * *ring: an export ring in the memory of the kth GPU of the run for
 * `limit` records waiting, its size a power of two that also holds
 * *slack more (set: what that GPU's reservations in progress can take at
 * once; for gpurx_flow_table_set_ring_slack()), its header in host
 * memory the GPU reads and host copies of up to cap records a pull
 * (gpurx_flow_ring_init_dev(); all released with the GPU's buffers).
 * 0 or -1 (said why).
 */
int gpurx_flow_gpu_ring(struct gpurx_app *a, uint16_t k, uint64_t limit,
		uint32_t cap, struct gpurx_flow_ring **ring, uint64_t *slack);

struct gpurx_flow_gpu {
	void *stream;			/* scans */
	void *copy_stream;		/* the ring's records to the host */
	struct gpurx_flow_table *d_ft;	/* the table in GPU memory */
	/* The table's header as of the last scan (its counters). */
	struct gpurx_flow_table hdr;
	int scanning;			/* a scan is queued */
	int dev;			/* CUDA ordinal */
	uint16_t k;			/* in gpurx_app.gpus[] */
};

/*
 * hdr, a copy of the table's header, for the kth GPU's table: the port
 * index of each of its queues (gpurx_flow_table_set_queue_ports()) by
 * the index its kernel knows the queue by, its ring's (ring r is the
 * run's queue gpurx_gpu.queues[r]), not the run's. 0 or -1 (said why).
 */
int gpurx_flow_gpu_queue_ports(const struct gpurx_app *a, uint16_t k,
		struct gpurx_flow_table *hdr);

/*
 * The kth GPU of the run: its table in GPU memory given `hdr`'s header
 * (its export ring's: gpurx_flow_table_set_expiry()), before any kernel
 * runs; a low-priority stream for scans and one for copies. 0 or -1.
 */
int gpurx_flow_gpu_open(struct gpurx_app *a, uint16_t k,
		const struct gpurx_flow_table *hdr, struct gpurx_flow_gpu *fg);

/*
 * The host copy of the kth GPU's table once gpurx_gpu_stop() brought it
 * back (the first GPU's is a->ft), else NULL: the GPU failed before.
 */
struct gpurx_flow_table *gpurx_flow_gpu_table(struct gpurx_app *a,
		uint16_t k);

/* Bring the records reserved from position tail on into ring's host
 * copies (gpurx_flow_cuda_pull()). 0 or -1 (said why). */
int gpurx_flow_gpu_pull(struct gpurx_flow_gpu *fg, struct gpurx_flow_ring *ring,
		uint64_t tail);

/* The calling thread drives fg's GPU. 0 or -1. */
int gpurx_flow_gpu_attach(struct gpurx_flow_gpu *fg);

/*
 * Once the last scan is done: refresh fg->hdr and queue a scan ending
 * what is due at now. 1 queued, 0 the last one still runs, -1 a CUDA
 * error (said).
 */
int gpurx_flow_gpu_tick(struct gpurx_flow_gpu *fg, uint64_t now);

/*
 * Waits for the last scan (bounded), then frees the stream: 0. 1 when
 * the scan could not even start (every SM held by the persistent
 * kernel): the stream is kept; gpurx_flow_gpu_settle() once the kernel
 * quit.
 */
int gpurx_flow_gpu_close(struct gpurx_flow_gpu *fg);

/* After the persistent kernel quit: the scan left by close() finishes,
 * and the GPU's host copy (gpurx_flow_gpu_table()) gets the table again
 * as it left it. 0 or -1 (said why). */
int gpurx_flow_gpu_settle(struct gpurx_app *a, struct gpurx_flow_gpu *fg);

/* close(), then the copy stream: after the last pull. */
void gpurx_flow_gpu_free(struct gpurx_flow_gpu *fg);

#endif /* GPURX_APP_FLOW_GPU_H */
