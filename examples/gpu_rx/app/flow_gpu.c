/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "flow_gpu.h"
#include "gpu_priv.h"
#include "gpurx_flow_kernels.h"

/* How long gpurx_flow_gpu_close() waits for a scan that cannot start (a
 * GPU whose every SM the persistent kernel holds). */
#define SCAN_CLOSE_WAIT_MS 2000

int
gpurx_flow_gpu_ring(struct gpurx_app *a, size_t bytes, void **ring)
{
	return gpurx_gpu_mem_pinned(a, ring, bytes, "flow export ring");
}

int
gpurx_flow_gpu_open(struct gpurx_app *a, struct gpurx_flow_gpu *fg)
{
	int rc;

	memset(fg, 0, sizeof(*fg));
	fg->d_ft = a->gpu->d_ft;
	fg->dev = a->gpu->cuda_dev;
	rc = gpurx_flow_cuda_stream(&fg->stream);
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: scan stream", rc);
	return 0;
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
		rc = gpurx_cuda_stream_busy(fg->stream);
		if (rc == -1)
			return 0;
		fg->scanning = 0;
		if (rc != 0)
			return gpurx_gpu_cuda_fail("flow export: scan", rc);
	}
	/* The counters as the last scan left them: a copy on the idle
	 * stream, done at once. */
	rc = gpurx_cuda_copy_async(&fg->hdr, fg->d_ft, sizeof(fg->hdr),
		fg->stream);
	if (rc == 0)
		rc = gpurx_cuda_stream_sync(fg->stream);
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
	uint64_t t0 = rte_get_tsc_cycles(), hz = rte_get_tsc_hz();

	if (fg->stream == NULL)
		return 0;
	while (fg->scanning && gpurx_cuda_stream_busy(fg->stream) == -1) {
		if ((rte_get_tsc_cycles() - t0) * 1000 / hz > SCAN_CLOSE_WAIT_MS)
			return 1;
		rte_delay_us_sleep(1000);
	}
	fg->scanning = 0;
	gpurx_cuda_stream_destroy(fg->stream);
	fg->stream = NULL;
	return 0;
}

int
gpurx_flow_gpu_settle(struct gpurx_app *a, struct gpurx_flow_gpu *fg)
{
	int rc;

	if (fg->stream == NULL)
		return 0;
	rc = gpurx_cuda_stream_sync(fg->stream);
	fg->scanning = 0;
	gpurx_cuda_stream_destroy(fg->stream);
	fg->stream = NULL;
	if (rc == 0)
		rc = gpurx_cuda_copy(a->ft, fg->d_ft,
			gpurx_flow_table_bytes(a->opt.flow_capacity));
	if (rc != 0)
		return gpurx_gpu_cuda_fail("flow export: last scan", rc);
	return 0;
}
