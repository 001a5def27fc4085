/* SPDX-License-Identifier: BSD-3-Clause */

/* info: device description and device enumeration. */

#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "tg.h"

static enum tg_status
check_enumeration(const struct tg_env *env, struct tg_result *res)
{
	uint16_t avail = rte_gpu_count_avail();
	unsigned int seen = 0;
	int16_t id, unused = RTE_GPU_ID_NONE;

	if (avail == 0)
		return tg_fail(res, "rte_gpu_count_avail() is 0 with a probed GPU");
	RTE_GPU_FOREACH(id) {
		if (!rte_gpu_is_valid(id))
			return tg_fail(res, "find_next returned invalid id %d", id);
		seen++;
	}
	if (seen != avail)
		return tg_fail(res, "RTE_GPU_FOREACH visits %u devices, count_avail says %u",
			seen, avail);
	if (rte_gpu_find_next(env->dev_id, RTE_GPU_ID_ANY) != env->dev_id)
		return tg_fail(res, "find_next(%d, ANY) = %d, expected itself",
			env->dev_id, rte_gpu_find_next(env->dev_id, RTE_GPU_ID_ANY));
	if (rte_gpu_find_next(env->dev_id, RTE_GPU_ID_NONE) != env->dev_id)
		return tg_fail(res, "find_next(%d, NONE) skips the parentless device",
			env->dev_id);
	if (rte_gpu_find_next(INT16_MAX, RTE_GPU_ID_ANY) != RTE_GPU_ID_NONE)
		return tg_fail(res, "find_next(INT16_MAX) found a device");
	if (!rte_gpu_is_valid(env->dev_id))
		return tg_fail(res, "is_valid(%d) false for the probed device",
			env->dev_id);
	if (rte_gpu_is_valid(-1) || rte_gpu_is_valid(INT16_MAX) ||
			rte_gpu_is_valid(RTE_GPU_ID_ANY))
		return tg_fail(res, "is_valid true for -1, INT16_MAX or ID_ANY");
	for (id = 0; id < RTE_GPU_DEFAULT_MAX; id++) {
		if (rte_gpu_find_next(id, RTE_GPU_ID_ANY) != id) {
			unused = id;
			break;
		}
	}
	if (unused != RTE_GPU_ID_NONE && rte_gpu_is_valid(unused))
		return tg_fail(res, "is_valid(%d) true for an id find_next skips",
			unused);
	return TG_PASS;
}

static enum tg_status
check_info(const struct tg_env *env, struct tg_result *res)
{
	struct rte_gpu_info info;
	size_t free_b, total_b;
	cudaError_t cerr;
	int sms;

	memset(&info, 0, sizeof(info));
	if (rte_gpu_info_get(env->dev_id, &info) != 0)
		return tg_fail(res, "rte_gpu_info_get: %s", tg_errno_str(rte_errno));
	if (info.name == NULL || info.name[0] == '\0')
		return tg_fail(res, "empty device name");
	if (info.dev_id != env->dev_id)
		return tg_fail(res, "info.dev_id %d for device %d", info.dev_id,
			env->dev_id);
	if (info.parent != RTE_GPU_ID_NONE)
		return tg_fail(res, "probed device has parent %d", info.parent);
	if (info.total_memory == 0)
		return tg_fail(res, "total_memory is 0");
	if (info.processor_count == 0)
		return tg_fail(res, "processor_count is 0");
	if (info.page_size == 0 || (info.page_size & (info.page_size - 1)) != 0)
		return tg_fail(res, "page_size %zu is not a power of two",
			info.page_size);
	if (info.numa_node < -1)
		return tg_fail(res, "numa_node %d < -1", info.numa_node);
	if (rte_gpu_info_get(env->dev_id, NULL) != -EINVAL || rte_errno != EINVAL)
		return tg_fail(res, "info_get(NULL) did not fail with EINVAL");

	/* The figures must be the real GPU's, not placeholders. */
	cerr = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
			env->cuda_dev);
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaDeviceGetAttribute: %s",
			cudaGetErrorString(cerr));
	if (info.processor_count != (uint32_t)sms)
		return tg_fail(res, "processor_count %u, CUDA reports %d multiprocessors",
			info.processor_count, sms);
	cerr = cudaMemGetInfo(&free_b, &total_b);
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaMemGetInfo: %s", cudaGetErrorString(cerr));
	if (info.total_memory != total_b)
		return tg_fail(res, "total_memory %zu, CUDA reports %zu",
			info.total_memory, total_b);
	return TG_PASS;
}

enum tg_status
tg_case_info(const struct tg_env *env, struct tg_result *res)
{
	if (check_info(env, res) != TG_PASS)
		return TG_FAIL;
	return check_enumeration(env, res);
}
