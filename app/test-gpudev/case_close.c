/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * close: closing a device that still holds an allocation and a
 * registration succeeds, releases both in CUDA and ends the device.
 */

#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "tg.h"

#define LEAK_SIZE 4096

/* True when CUDA no longer knows ptr as memory of the given type. */
static bool
released(const void *ptr, enum cudaMemoryType was)
{
	struct cudaPointerAttributes attr;
	cudaError_t cerr;

	cerr = cudaPointerGetAttributes(&attr, ptr);
	if (cerr != cudaSuccess) {
		/* Unknown pointer: clear the error so later calls are clean. */
		(void)cudaGetLastError();
		return true;
	}
	return attr.type != was;
}

enum tg_status
tg_case_close(const struct tg_env *env, struct tg_result *res)
{
	struct rte_gpu_info info;
	uint16_t before = rte_gpu_count_avail();
	void *gpu, *host;
	int ret;

	host = aligned_alloc(4096, LEAK_SIZE);
	if (host == NULL)
		return tg_fail(res, "no host memory");
	gpu = rte_gpu_mem_alloc(env->dev_id, LEAK_SIZE, 0);
	if (gpu == NULL) {
		free(host);
		return tg_fail(res, "alloc: %s", tg_errno_str(rte_errno));
	}
	if (rte_gpu_mem_register(env->dev_id, LEAK_SIZE, host) != 0) {
		tg_fail(res, "register: %s", tg_errno_str(rte_errno));
		rte_gpu_mem_free(env->dev_id, gpu);
		free(host);
		return TG_FAIL;
	}

	/* Both are left behind on purpose: the driver must clean up. */
	ret = rte_gpu_close(env->dev_id);
	if (ret != 0)
		tg_fail(res, "close with leaks returned %d (%s)", ret,
			tg_errno_str(rte_errno));
	else if (rte_gpu_is_valid(env->dev_id))
		tg_fail(res, "device %d still valid after close", env->dev_id);
	else if (rte_gpu_count_avail() != before - 1)
		tg_fail(res, "count_avail %u after close, was %u",
			rte_gpu_count_avail(), before);
	else if (rte_gpu_info_get(env->dev_id, &info) != -ENODEV)
		tg_fail(res, "info_get after close did not fail with ENODEV");
	else if (!released(gpu, cudaMemoryTypeDevice))
		tg_fail(res, "leaked allocation %p still allocated after close",
			gpu);
	else if (!released(host, cudaMemoryTypeHost))
		tg_fail(res, "leaked registration %p still registered after close",
			host);
	free(host);
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}
