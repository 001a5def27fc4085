/* SPDX-License-Identifier: BSD-3-Clause */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "flow_gpu.h"
#include "gpu_path.h"
#include "gpu_priv.h"
#include "flow_scan.h"
#include "log.h"

/* How long gpurx_flow_gpu_close() waits for a scan that cannot start (a
 * GPU whose every SM the persistent kernel holds). */
#define SCAN_CLOSE_WAIT_MS 2000

int
gpurx_flow_gpu_ring(struct gpurx_app *a, uint16_t k, uint64_t limit,
		uint32_t cap, struct gpurx_flow_ring **ring, uint64_t *slack)
{
	const size_t mbytes = gpurx_flow_ring_mirror_bytes(cap);
	struct gpurx_gpu *g = a->gpus[k];
	uint64_t size;
	size_t rbytes;
	void *hdr, *mirror, *recs;
	int rc;

	*ring = NULL;
	/* The slack is the current device's, the copy below goes to it. */
	if (gpurx_gpu_use(g) != 0)
		return -1;
	/* Room beyond the limit for what reservations in progress at once
	 * can take: the GPU's warps reserve by fetch_add
	 * (gpurx_flow_ring_try_reserve()). */
	rc = gpurx_flow_cuda_ring_slack(slack);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export ring's slack", rc);
	size = gpurx_flow_ring_size_for(limit, *slack);
	rbytes = (size_t)size * sizeof(struct gpurx_flow_rec);
	/* Each buffer is kept in the GPU's registry, released with it
	 * whatever fails below. */
	if (gpurx_gpu_mem_pinned(g, &hdr, sizeof(struct gpurx_flow_ring),
			"flow export ring") != 0 ||
			gpurx_gpu_mem_pinned(g, &mirror, mbytes,
				"flow export ring's host copies") != 0 ||
			gpurx_gpu_mem_device(g, &recs, rbytes,
				"flow export ring's records") != 0)
		return -1;
	/* Seqs of 0: no position's. Zeroed from the (zeroed) host copies'
	 * pages, a piece at a time, before any kernel runs. */
	for (size_t off = 0; off < rbytes && rc == 0; off += mbytes)
		rc = gpucuda_copy((char *)recs + off, mirror,
			RTE_MIN(mbytes, rbytes - off));
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export ring's records", rc);
	*ring = gpurx_flow_ring_init_dev(hdr, recs, size, mirror, cap);
	if (*ring == NULL) {
		GPURX_LOG(ERR, "error: flow export ring: bad size %" PRIu64
			" or copy size %u\n", size, cap);
		return -1;
	}
	return 0;
}

int
gpurx_flow_gpu_queue_ports(const struct gpurx_app *a, uint16_t k,
		struct gpurx_flow_table *hdr)
{
	const struct gpurx_gpu *g = a->gpus[k];
	char who[32];

	snprintf(who, sizeof(who), "GPU %d", gpurx_gpu_id(a, k));
	return gpurx_flow_queue_ports(a, g->queues, g->nq, hdr, who);
}

int
gpurx_flow_gpu_open(struct gpurx_app *a, uint16_t k,
		const struct gpurx_flow_table *hdr, struct gpurx_flow_gpu *fg)
{
	struct gpurx_gpu *g = a->gpus[k];
	int rc;

	memset(fg, 0, sizeof(*fg));
	fg->d_ft = g->d_ft;
	fg->dev = g->cuda_dev;
	fg->k = k;
	if (gpurx_gpu_use(g) != 0)
		return -1;
	/* Every GPU got a->ft as it was, with the first GPU's ring: each
	 * ends its flows into its own. No kernel runs yet (the copy is
	 * synchronous), so none reads the header half written. */
	rc = gpucuda_copy(fg->d_ft, hdr, sizeof(*hdr));
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: table header", rc);
	rc = gpurx_flow_cuda_stream(&fg->stream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: scan stream", rc);
	/* The ring's copies get a stream of their own: behind a scan that
	 * cannot start (every SM held by the persistent kernel) they would
	 * wait with it. Non-blocking, as every stream beside that kernel. */
	rc = gpucuda_stream_create(&fg->copy_stream);
	if (rc != 0) {
		gpucuda_stream_destroy(fg->stream);
		fg->stream = NULL;
		return gpurx_gpu_cuda_fail("flow export: copy stream", rc);
	}
	return 0;
}

struct gpurx_flow_table *
gpurx_flow_gpu_table(struct gpurx_app *a, uint16_t k)
{
	const struct gpurx_gpu *g = a->gpus[k];

	if (!g->ft_back)
		return NULL;
	return k == 0 ? a->ft : g->ft;
}

int
gpurx_flow_gpu_pull(struct gpurx_flow_gpu *fg, struct gpurx_flow_ring *ring,
		uint64_t tail)
{
	int rc;

	if (fg->copy_stream == NULL)
		return -1;
	rc = gpurx_flow_cuda_pull(ring, &fg->d_ft->ring_head, tail,
		fg->copy_stream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: records from the GPU",
			rc);
	return 0;
}

void
gpurx_flow_gpu_free(struct gpurx_flow_gpu *fg)
{
	gpurx_flow_gpu_close(fg);
	if (fg->copy_stream != NULL)
		(void)gpurx_flow_gpu_attach(fg);
	gpucuda_stream_destroy(fg->copy_stream);
	fg->copy_stream = NULL;
}

int
gpurx_flow_gpu_attach(struct gpurx_flow_gpu *fg)
{
	int rc = gpurx_flow_cuda_use_device(fg->dev);

	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: cudaSetDevice", rc);
	return 0;
}

int
gpurx_flow_gpu_tick(struct gpurx_flow_gpu *fg, uint64_t now)
{
	int rc;

	if (fg->scanning) {
		rc = gpucuda_stream_busy(fg->stream);
		if (rc == -1)
			return 0;
		fg->scanning = 0;
		if (rc != 0)
			return gpurx_gpu_cuda_fail("flow export: scan", rc);
	}
	/* The counters as the last scan left them: a copy on the idle
	 * stream, done at once. */
	rc = gpucuda_copy_async(&fg->hdr, fg->d_ft, sizeof(fg->hdr),
		fg->stream);
	if (rc == 0)
		rc = gpucuda_stream_sync(fg->stream);
	if (rc == 0)
		rc = gpurx_flow_cuda_scan(fg->d_ft, fg->hdr.capacity, now,
			fg->stream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: scan", rc);
	fg->scanning = 1;
	return 1;
}

int
gpurx_flow_gpu_close(struct gpurx_flow_gpu *fg)
{
	uint64_t t0 = rte_get_tsc_cycles(), hz = gpuapp_tsc_hz();

	if (fg->stream == NULL)
		return 0;
	/* Its stream is destroyed on its device (said if not). */
	(void)gpurx_flow_gpu_attach(fg);
	while (fg->scanning && gpucuda_stream_busy(fg->stream) == -1) {
		if ((rte_get_tsc_cycles() - t0) * 1000 / hz > SCAN_CLOSE_WAIT_MS)
			return 1;
		rte_delay_us_sleep(1000);
	}
	fg->scanning = 0;
	gpucuda_stream_destroy(fg->stream);
	fg->stream = NULL;
	return 0;
}

int
gpurx_flow_gpu_settle(struct gpurx_app *a, struct gpurx_flow_gpu *fg)
{
	struct gpurx_flow_table *ft = gpurx_flow_gpu_table(a, fg->k);
	int rc;

	if (fg->stream == NULL)
		return 0;
	if (gpurx_gpu_use(a->gpus[fg->k]) != 0)
		return -1;
	rc = gpucuda_stream_sync(fg->stream);
	fg->scanning = 0;
	gpucuda_stream_destroy(fg->stream);
	fg->stream = NULL;
	/* Not back: the GPU failed, its table is lost either way. */
	if (rc == 0 && ft != NULL)
		rc = gpucuda_copy(ft, fg->d_ft,
			gpurx_flow_table_bytes(a->opt.flow_capacity));
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: last scan", rc);
	return 0;
}
