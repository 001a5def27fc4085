/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * errors: misuse fails with a negative errno, sets rte_errno and leaves
 * the driver's other allocations alone (a live buffer keeps its content).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"

#define LIVE_SIZE (64 * 1024)
#define HOST_SIZE (64 * 1024)

/* ret must be -rte_errno with rte_errno set (gpudev reports driver errors as EPERM). */
static bool
failed_properly(int ret)
{
	return ret < 0 && rte_errno != 0 && ret == -rte_errno;
}

#define EXPECT_FAIL(res, call) do { \
	int ret_; \
	rte_errno = 0; \
	ret_ = (call); \
	if (!failed_properly(ret_)) \
		return tg_fail(res, "%s returned %d (rte_errno %d), expected a " \
			"negative errno", #call, ret_, rte_errno); \
} while (0)

#define EXPECT_ERRNO(res, call, err) do { \
	int ret_; \
	rte_errno = 0; \
	ret_ = (call); \
	if (ret_ != -(err) || rte_errno != (err)) \
		return tg_fail(res, "%s returned %d (rte_errno %d), expected -%s", \
			#call, ret_, rte_errno, #err); \
} while (0)

#define EXPECT_OK(res, call) do { \
	int ret_ = (call); \
	if (ret_ != 0) \
		return tg_fail(res, "%s returned %d (%s)", #call, ret_, \
			tg_errno_str(rte_errno)); \
} while (0)

static enum tg_status
check_free_errors(const struct tg_env *env, struct tg_result *res)
{
	int16_t dev = env->dev_id;
	uint64_t bad = 0, first = 0, seed = tg_seed(env, 600);
	cudaError_t cerr;
	void *foreign = NULL;
	uint8_t *p;
	int err;

	EXPECT_OK(res, rte_gpu_mem_free(dev, NULL));

	/* Real device memory the driver did not hand out. */
	cerr = cudaMalloc(&foreign, 4096);
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaMalloc: %s", cudaGetErrorString(cerr));
	rte_errno = 0;
	err = rte_gpu_mem_free(dev, foreign);
	cerr = cudaFree(foreign);
	if (!failed_properly(err))
		return tg_fail(res, "free of cudaMalloc memory returned %d "
			"(rte_errno %d)", err, rte_errno);
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaFree after the driver was asked to free "
			"it: %s (the driver freed memory it did not own?)",
			cudaGetErrorString(cerr));

	p = rte_gpu_mem_alloc(dev, 8192, 0);
	if (p == NULL)
		return tg_fail(res, "alloc 8 KiB: %s", tg_errno_str(rte_errno));
	err = gk_pattern_fill(p, 8192, seed);
	if (err != 0)
		return tg_fail(res, "fill kernel: %s", gpucuda_strerror(err));
	EXPECT_FAIL(res, rte_gpu_mem_free(dev, p + 4096));
	/* The refused middle free must not have touched the allocation. */
	err = gk_pattern_check(p, 8192, seed, &bad, &first);
	if (err != 0 || bad != 0)
		return tg_fail(res, "allocation damaged by a refused middle free "
			"(%s, %" PRIu64 " bad bytes)", err ? gpucuda_strerror(err) : "ok",
			bad);
	EXPECT_OK(res, rte_gpu_mem_free(dev, p));
	EXPECT_FAIL(res, rte_gpu_mem_free(dev, p));
	return TG_PASS;
}

static enum tg_status
check_alloc_errors(const struct tg_env *env, struct tg_result *res)
{
	static const unsigned int bad_align[] = { 3, 4097, 0x80000001u };
	volatile size_t huge = SIZE_MAX;
	int16_t dev = env->dev_id;
	unsigned int i;
	int e;
	void *p;

	for (i = 0; i < RTE_DIM(bad_align); i++) {
		rte_errno = 0;
		p = rte_gpu_mem_alloc(dev, 4096, bad_align[i]);
		if (p != NULL) {
			rte_gpu_mem_free(dev, p);
			return tg_fail(res, "alloc with alignment %u succeeded",
				bad_align[i]);
		}
		if (rte_errno != EINVAL)
			return tg_fail(res, "alloc with alignment %u: rte_errno %d, "
				"expected EINVAL", bad_align[i], rte_errno);
	}

	/* volatile: the compiler would reject the size at build time */
	rte_errno = 0;
	p = rte_gpu_mem_alloc(dev, huge, 0);
	if (p != NULL) {
		rte_gpu_mem_free(dev, p);
		return tg_fail(res, "alloc of SIZE_MAX succeeded");
	}
	e = rte_errno < 0 ? -rte_errno : rte_errno;
	if (e != ENOMEM && e != E2BIG && e != EPERM)
		return tg_fail(res, "alloc of SIZE_MAX: rte_errno %d, expected "
			"ENOMEM, E2BIG or EPERM", rte_errno);

	/* Size 0 is a documented no-op. */
	if (rte_gpu_mem_alloc(dev, 0, 0) != NULL)
		return tg_fail(res, "alloc of 0 bytes returned memory");
	return TG_PASS;
}

static enum tg_status
check_register_errors(const struct tg_env *env, struct tg_result *res,
		void *gpu_live)
{
	int16_t dev = env->dev_id;
	uint64_t seed = tg_seed(env, 601);
	enum tg_status st = TG_PASS;
	uint8_t *h, *other;
	size_t nbad, first;
	int err;

	/* NULL and empty ranges are documented no-ops. */
	EXPECT_OK(res, rte_gpu_mem_unregister(dev, NULL));
	EXPECT_OK(res, rte_gpu_mem_register(dev, 0, gpu_live));
	EXPECT_OK(res, rte_gpu_mem_register(dev, HOST_SIZE, NULL));

	h = aligned_alloc(4096, HOST_SIZE);
	other = aligned_alloc(4096, HOST_SIZE);
	if (h == NULL || other == NULL) {
		free(h);
		free(other);
		return tg_fail(res, "no host memory");
	}
	if (rte_gpu_mem_register(dev, HOST_SIZE, h) != 0) {
		st = tg_fail(res, "register: %s", tg_errno_str(rte_errno));
		goto out;
	}
	rte_errno = 0;
	err = rte_gpu_mem_register(dev, HOST_SIZE, h);
	if (!failed_properly(err))
		st = tg_fail(res, "second register of %p returned %d (rte_errno %d)",
			h, err, rte_errno);
	rte_errno = 0;
	err = rte_gpu_mem_free(dev, h);
	if (st == TG_PASS && !failed_properly(err))
		st = tg_fail(res, "mem_free of registered host memory returned %d",
			err);
	rte_errno = 0;
	err = rte_gpu_mem_unregister(dev, gpu_live);
	if (st == TG_PASS && !failed_properly(err))
		st = tg_fail(res, "unregister of GPU memory returned %d", err);
	rte_errno = 0;
	err = rte_gpu_mem_unregister(dev, other);
	if (st == TG_PASS && !failed_properly(err))
		st = tg_fail(res, "unregister of never registered memory returned %d",
			err);
	/* After all that, the registration must still work. */
	if (st == TG_PASS) {
		err = gk_pattern_fill(h, HOST_SIZE, seed);
		if (err != 0)
			st = tg_fail(res, "kernel on registered memory after the "
				"error calls: %s", gpucuda_strerror(err));
		else if ((nbad = tg_pattern_check(h, HOST_SIZE, seed, &first)) != 0)
			st = tg_fail(res, "registered memory: %zu bytes wrong after "
				"the error calls, first at %zu", nbad, first);
	}
	if (rte_gpu_mem_unregister(dev, h) != 0) {
		st = tg_fail(res, "unregister: %s", tg_errno_str(rte_errno));
		goto out;
	}
	rte_errno = 0;
	err = rte_gpu_mem_unregister(dev, h);
	if (st == TG_PASS && !failed_properly(err))
		st = tg_fail(res, "second unregister returned %d", err);
out:
	free(h);
	free(other);
	return st;
}

static enum tg_status
check_bad_ids(struct tg_result *res, void *gpu_live)
{
	int16_t ids[3] = { -1, RTE_GPU_DEFAULT_MAX, RTE_GPU_ID_NONE };
	struct rte_gpu_info info;
	uint8_t host[64];
	int16_t id;
	unsigned int i;

	/* An id in range that no device uses. */
	for (id = 0; id < RTE_GPU_DEFAULT_MAX; id++) {
		if (!rte_gpu_is_valid(id)) {
			ids[2] = id;
			break;
		}
	}
	for (i = 0; i < RTE_DIM(ids); i++) {
		int16_t bad = ids[i];

		if (rte_gpu_is_valid(bad))
			continue;
		EXPECT_ERRNO(res, rte_gpu_info_get(bad, &info), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_mem_free(bad, gpu_live), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_mem_register(bad, sizeof(host), host),
			ENODEV);
		EXPECT_ERRNO(res, rte_gpu_mem_unregister(bad, host), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_mem_cpu_unmap(bad, gpu_live), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_wmb(bad), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_close(bad), ENODEV);
		EXPECT_ERRNO(res, rte_gpu_add_child("tg_orphan", bad, 1), ENODEV);
		rte_errno = 0;
		if (rte_gpu_mem_alloc(bad, 4096, 0) != NULL || rte_errno != ENODEV)
			return tg_fail(res, "alloc on device %d: rte_errno %d, "
				"expected ENODEV", bad, rte_errno);
		rte_errno = 0;
		if (rte_gpu_mem_cpu_map(bad, 4096, gpu_live) != NULL ||
				rte_errno != ENODEV)
			return tg_fail(res, "cpu_map on device %d: rte_errno %d, "
				"expected ENODEV", bad, rte_errno);
	}
	return TG_PASS;
}

enum tg_status
tg_case_errors(const struct tg_env *env, struct tg_result *res)
{
	uint64_t seed = tg_seed(env, 602), bad = 0, first = 0;
	void *live;
	int err;

	/* Witness: any collateral damage from the error paths shows here. */
	live = rte_gpu_mem_alloc(env->dev_id, LIVE_SIZE, 0);
	if (live == NULL)
		return tg_fail(res, "alloc: %s", tg_errno_str(rte_errno));
	err = gk_pattern_fill(live, LIVE_SIZE, seed);
	if (err != 0) {
		tg_fail(res, "fill kernel: %s", gpucuda_strerror(err));
		goto out;
	}

	if (check_free_errors(env, res) != TG_PASS ||
			check_alloc_errors(env, res) != TG_PASS ||
			check_register_errors(env, res, live) != TG_PASS ||
			check_bad_ids(res, live) != TG_PASS)
		goto out;

	err = gk_pattern_check(live, LIVE_SIZE, seed, &bad, &first);
	if (err != 0)
		tg_fail(res, "check kernel: %s", gpucuda_strerror(err));
	else if (bad != 0)
		tg_fail(res, "live allocation damaged by the error cases: %" PRIu64
			" bytes, first at %" PRIu64, bad, first);
out:
	if (rte_gpu_mem_free(env->dev_id, live) != 0)
		tg_fail(res, "free of the live allocation: %s",
			tg_errno_str(rte_errno));
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}
