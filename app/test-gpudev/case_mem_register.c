/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * mem_register_kernel: CPU memory registered with rte_gpu_mem_register is
 * reachable by kernels through the very same pointer, in both directions,
 * and is really released by rte_gpu_mem_unregister.
 */

#include <inttypes.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"

enum host_kind {
	HOST_ALIGNED,	/* page-aligned libc memory */
	HOST_MALLOC,	/* plain malloc, odd size, shares pages with others */
	HOST_RTE,	/* DPDK heap */
};

static const char *const kind_name[] = {
	[HOST_ALIGNED] = "aligned_alloc",
	[HOST_MALLOC] = "malloc",
	[HOST_RTE] = "rte_zmalloc",
};

static enum tg_status
check_registered(const struct tg_env *env, struct tg_result *res,
		uint8_t *buf, size_t size, enum host_kind kind, uint64_t salt)
{
	struct cudaPointerAttributes attr;
	uint64_t seed_gpu = tg_seed(env, salt), seed_cpu = tg_seed(env, ~salt);
	uint64_t bad = 0, first_bad = 0;
	size_t nbad, first;
	cudaError_t cerr;
	int err;

	cerr = cudaPointerGetAttributes(&attr, buf);
	if (cerr != cudaSuccess)
		return tg_fail(res, "%s: cudaPointerGetAttributes: %s",
			kind_name[kind], cudaGetErrorString(cerr));
	/* The driver promises kernels can use the host pointer as is. */
	if (attr.type != cudaMemoryTypeHost || attr.devicePointer != buf)
		return tg_fail(res, "%s %p registered but CUDA sees type %d, "
			"device pointer %p", kind_name[kind], buf, (int)attr.type,
			attr.devicePointer);

	err = gk_pattern_fill(buf, size, seed_gpu);
	if (err != 0)
		return tg_fail(res, "%s: fill kernel: %s", kind_name[kind],
			gpucuda_strerror(err));
	cerr = cudaDeviceSynchronize();
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaDeviceSynchronize: %s",
			cudaGetErrorString(cerr));
	nbad = tg_pattern_check(buf, size, seed_gpu, &first);
	if (nbad != 0)
		return tg_fail(res, "%s %zu B: CPU sees %zu bytes differing from "
			"the kernel's writes, first at %zu", kind_name[kind],
			size, nbad, first);

	tg_pattern_fill(buf, size, seed_cpu);
	err = gk_pattern_check(buf, size, seed_cpu, &bad, &first_bad);
	if (err != 0)
		return tg_fail(res, "%s: check kernel: %s", kind_name[kind],
			gpucuda_strerror(err));
	if (bad != 0)
		return tg_fail(res, "%s %zu B: GPU sees %" PRIu64 " bytes differing "
			"from the CPU's writes, first at %" PRIu64,
			kind_name[kind], size, bad, first_bad);
	return TG_PASS;
}

static enum tg_status
check_kind(const struct tg_env *env, struct tg_result *res,
		enum host_kind kind, size_t size)
{
	struct cudaPointerAttributes attr;
	cudaError_t cerr;
	uint8_t *buf;

	switch (kind) {
	case HOST_ALIGNED:
		buf = aligned_alloc(4096, size);
		break;
	case HOST_MALLOC:
		buf = malloc(size);
		break;
	default:
		buf = rte_zmalloc(NULL, size, 64);
		break;
	}
	if (buf == NULL)
		return tg_fail(res, "%s(%zu) failed", kind_name[kind], size);

	if (rte_gpu_mem_register(env->dev_id, size, buf) != 0) {
		tg_fail(res, "register %s %p (%zu B): %s", kind_name[kind], buf,
			size, tg_errno_str(rte_errno));
		goto out;
	}
	check_registered(env, res, buf, size, kind, kind + 100);
	if (rte_gpu_mem_unregister(env->dev_id, buf) != 0) {
		tg_fail(res, "unregister %s %p: %s", kind_name[kind], buf,
			tg_errno_str(rte_errno));
		goto out;
	}
	/* After unregistering, CUDA must no longer know the range. */
	cerr = cudaPointerGetAttributes(&attr, buf);
	if (cerr != cudaSuccess) {
		tg_fail(res, "cudaPointerGetAttributes after unregister: %s",
			cudaGetErrorString(cerr));
		goto out;
	}
	if (attr.type != cudaMemoryTypeUnregistered)
		tg_fail(res, "%s %p still registered with CUDA (type %d) after "
			"rte_gpu_mem_unregister", kind_name[kind], buf,
			(int)attr.type);
out:
	if (kind == HOST_RTE)
		rte_free(buf);
	else
		free(buf);
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

enum tg_status
tg_case_mem_register_kernel(const struct tg_env *env, struct tg_result *res)
{
	if (check_kind(env, res, HOST_ALIGNED, 1 << 20) != TG_PASS ||
			check_kind(env, res, HOST_MALLOC, 100003) != TG_PASS ||
			check_kind(env, res, HOST_RTE, 65536 + 123) != TG_PASS)
		return TG_FAIL;
	return TG_PASS;
}
