/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cpu_map: GPU memory mapped for the CPU (GDRCopy) carries data both ways
 * between CPU stores through the mapping and kernels.
 * wmb: the GPU write barrier.
 */

#include <errno.h>
#include <inttypes.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"

#define MAP_SIZE (1 << 20)

static enum tg_status
check_mapping(const struct tg_env *env, struct tg_result *res, void *gpu,
		uint8_t *cpu)
{
	uint64_t seed_cpu = tg_seed(env, 300), seed_gpu = tg_seed(env, 301);
	uint64_t bad = 0, first_bad = 0;
	size_t nbad, first;
	int err;

	tg_pattern_fill(cpu, MAP_SIZE, seed_cpu);
	/* CPU stores to the BAR are write-combined: flush before the kernel. */
	if (rte_gpu_wmb(env->dev_id) != 0)
		return tg_fail(res, "rte_gpu_wmb: %s", tg_errno_str(rte_errno));
	err = gk_pattern_check(gpu, MAP_SIZE, seed_cpu, &bad, &first_bad);
	if (err != 0)
		return tg_fail(res, "check kernel: %s", gpucuda_strerror(err));
	if (bad != 0)
		return tg_fail(res, "GPU sees %" PRIu64 " bytes differing from the "
			"CPU's writes through the mapping, first at %" PRIu64,
			bad, first_bad);

	err = gk_pattern_fill(gpu, MAP_SIZE, seed_gpu);
	if (err != 0)
		return tg_fail(res, "fill kernel: %s", gpucuda_strerror(err));
	nbad = tg_pattern_check(cpu, MAP_SIZE, seed_gpu, &first);
	if (nbad != 0)
		return tg_fail(res, "CPU mapping shows %zu bytes differing from the "
			"kernel's writes, first at %zu", nbad, first);
	return TG_PASS;
}

enum tg_status
tg_case_cpu_map(const struct tg_env *env, struct tg_result *res)
{
	uint8_t *cpu;
	void *gpu;
	int e;

	gpu = rte_gpu_mem_alloc(env->dev_id, MAP_SIZE, env->info.page_size);
	if (gpu == NULL)
		return tg_fail(res, "alloc: %s", tg_errno_str(rte_errno));
	cpu = rte_gpu_mem_cpu_map(env->dev_id, MAP_SIZE, gpu);
	if (cpu == NULL) {
		/* gpudev turns driver failures into EPERM (sometimes -EPERM). */
		e = rte_errno < 0 ? -rte_errno : rte_errno;
		if (e == ENOTSUP || e == EPERM)
			tg_skip(res, "GDRCopy not available (rte_errno %d: %s)",
				rte_errno, tg_errno_str(rte_errno));
		else
			tg_fail(res, "cpu_map: %s", tg_errno_str(rte_errno));
		goto out;
	}
	if (cpu == (uint8_t *)gpu)
		tg_fail(res, "cpu_map returned the GPU pointer itself");
	else
		check_mapping(env, res, gpu, cpu);
	if (rte_gpu_mem_cpu_unmap(env->dev_id, gpu) != 0)
		tg_fail(res, "cpu_unmap: %s", tg_errno_str(rte_errno));
out:
	if (rte_gpu_mem_free(env->dev_id, gpu) != 0)
		tg_fail(res, "free: %s", tg_errno_str(rte_errno));
	return res->status;
}

enum tg_status
tg_case_wmb(const struct tg_env *env, struct tg_result *res)
{
	int ret = rte_gpu_wmb(env->dev_id);

	if (ret != 0)
		return tg_fail(res, "rte_gpu_wmb returned %d (rte_errno %s)", ret,
			tg_errno_str(rte_errno));
	return TG_PASS;
}
