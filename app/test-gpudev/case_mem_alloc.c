/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * mem_alloc_kernel: GPU memory from rte_gpu_mem_alloc is real device
 * memory of this GPU, as large and as aligned as asked, that kernels
 * and copies read and write.
 */

#include <inttypes.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"

static enum tg_status
check_one(const struct tg_env *env, struct tg_result *res, size_t size,
		unsigned int align, uint8_t *host, uint64_t salt)
{
	struct cudaPointerAttributes attr;
	uint64_t seed_gpu = tg_seed(env, salt), seed_cpu = tg_seed(env, ~salt);
	uint64_t bad = 0, first_bad = 0;
	size_t nbad, first, need;
	cudaError_t cerr;
	void *p;
	int err;

	p = rte_gpu_mem_alloc(env->dev_id, size, align);
	if (p == NULL)
		return tg_fail(res, "alloc(%zu, align %u): %s", size, align,
			tg_errno_str(rte_errno));
	need = align != 0 ? align : alignof(max_align_t);
	if ((uintptr_t)p % need != 0) {
		tg_fail(res, "alloc(%zu, align %u) = %p, not %zu-aligned",
			size, align, p, need);
		goto out;
	}
	cerr = cudaPointerGetAttributes(&attr, p);
	if (cerr != cudaSuccess) {
		tg_fail(res, "cudaPointerGetAttributes(%p): %s", p,
			cudaGetErrorString(cerr));
		goto out;
	}
	if (attr.type != cudaMemoryTypeDevice || attr.device != env->cuda_dev) {
		tg_fail(res, "alloc(%zu) = %p is memory type %d of device %d, "
			"not device memory of device %d", size, p, (int)attr.type,
			attr.device, env->cuda_dev);
		goto out;
	}

	/* GPU writes the whole buffer, the CPU checks every byte. */
	err = gk_pattern_fill(p, size, seed_gpu);
	if (err != 0) {
		tg_fail(res, "fill kernel on %zu B: %s", size, gpucuda_strerror(err));
		goto out;
	}
	cerr = cudaMemcpy(host, p, size, cudaMemcpyDeviceToHost);
	if (cerr != cudaSuccess) {
		tg_fail(res, "cudaMemcpy D2H %zu B: %s", size,
			cudaGetErrorString(cerr));
		goto out;
	}
	nbad = tg_pattern_check(host, size, seed_gpu, &first);
	if (nbad != 0) {
		tg_fail(res, "alloc(%zu, align %u): %zu bytes differ from the "
			"kernel's pattern, first at offset %zu", size, align,
			nbad, first);
		goto out;
	}

	/* CPU writes, the GPU checks every byte. */
	tg_pattern_fill(host, size, seed_cpu);
	cerr = cudaMemcpy(p, host, size, cudaMemcpyHostToDevice);
	if (cerr != cudaSuccess) {
		tg_fail(res, "cudaMemcpy H2D %zu B: %s", size,
			cudaGetErrorString(cerr));
		goto out;
	}
	err = gk_pattern_check(p, size, seed_cpu, &bad, &first_bad);
	if (err != 0) {
		tg_fail(res, "check kernel on %zu B: %s", size, gpucuda_strerror(err));
		goto out;
	}
	if (bad != 0)
		tg_fail(res, "alloc(%zu, align %u): GPU found %" PRIu64
			" bytes differing from the CPU's pattern, first at %" PRIu64,
			size, align, bad, first_bad);
out:
	if (rte_gpu_mem_free(env->dev_id, p) != 0)
		tg_fail(res, "free(%p) of alloc(%zu, align %u): %s", p, size,
			align, tg_errno_str(rte_errno));
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

enum tg_status
tg_case_mem_alloc_kernel(const struct tg_env *env, struct tg_result *res)
{
	static const size_t sizes[] = { 1, 4096 + 3, 64 << 20 };
	static const unsigned int aligns[] = { 0, 8, 4096, 65536, 2 << 20 };
	uint8_t *host;
	size_t s, a;

	host = malloc(sizes[RTE_DIM(sizes) - 1]);
	if (host == NULL)
		return tg_fail(res, "no host memory for the check buffer");
	for (s = 0; s < RTE_DIM(sizes); s++) {
		for (a = 0; a < RTE_DIM(aligns); a++) {
			if (check_one(env, res, sizes[s], aligns[a], host,
					s * 16 + a) != TG_PASS)
				goto out;
		}
	}
out:
	free(host);
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}
