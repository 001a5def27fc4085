/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CPU stand-in for the flow export's GPU side (lib/gpuflow's
 * flow_scan.cu), linked with gpu_standin.c into dpdk-gpu-rx-standin: with
 * the fake CUDA driver every GPU buffer is host memory, so the app's
 * flow export in GPU modes (flow_gpu.c, flow_export.c: a ring and a scan
 * per GPU, one exporter) runs unchanged without a GPU. The scan is the
 * CPU pipeline's (gpurx_flow_scan over the whole table, done when
 * queued), concurrent with the stand-in kernel thread's updates as the
 * CPU's is with its RX lcores'; the pull keeps the real one's two copies
 * (gpurx_flow_ring_pull_plan()).
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flow_scan.h"
#include "flow_table.h"
#include "gpucuda.h"

int
gpurx_flow_cuda_scan(struct gpurx_flow_table *d_ft, uint32_t capacity,
		uint64_t now, void *stream)
{
	(void)stream;
	gpurx_flow_scan(d_ft, 0, capacity, now);
	return 0;
}

int
gpurx_flow_cuda_pull(struct gpurx_flow_ring *r, const uint64_t *d_head,
		uint64_t tail, void *stream)
{
	struct gpurx_flow_ring_seg seg[2];
	uint32_t k, n = 0;

	(void)stream;
	*r->head_copy = __atomic_load_n(d_head, __ATOMIC_RELAXED);
	k = gpurx_flow_ring_pull_plan(r, tail, *r->head_copy, seg);
	for (uint32_t i = 0; i < k; i++)
		memcpy(r->seen + seg[i].at, r->recs + seg[i].slot,
			(size_t)seg[i].n * sizeof(struct gpurx_flow_rec));
	/* Acquire: a record whose seq the first copy read as published
	 * (the producer's release store, system scope on the CPU) has its
	 * fields read as published by the second copy, as the stream orders
	 * the GPU's copies. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < k; i++) {
		memcpy(r->copy + seg[i].at, r->recs + seg[i].slot,
			(size_t)seg[i].n * sizeof(struct gpurx_flow_rec));
		n += seg[i].n;
	}
	gpurx_flow_ring_pulled(r, tail, n);
	return 0;
}

/* No slack: reservations take the CAS loop, as the CPU pipeline's do. */
int
gpurx_flow_cuda_ring_slack(uint64_t *slack)
{
	*slack = 0;
	return 0;
}

int
gpurx_flow_cuda_use_device(int ordinal)
{
	(void)ordinal;
	return 0;
}

/* A stream of the stand-in's (gpu_standin.c): never busy, scans being
 * done when queued. */
int
gpurx_flow_cuda_stream(void **s)
{
	return gpucuda_stream_create(s);
}
