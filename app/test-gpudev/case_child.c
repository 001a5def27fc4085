/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * child: a gpudev child device wrapping a CUDA context we created allocates
 * its memory in that context, kernels running there use it, and closing
 * the child leaves the parent and the thread's current context alone.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "cuda_drv.h"
#include "gpu_kernels.h"
#include "pattern.h"
#include "rte_pmd_gpu_cuda.h"
#include "tg.h"

#define CHILD_SIZE (1 << 20)

struct cb_count {
	int16_t dev_del;
	unsigned int n_del;
};

static void
count_del(int16_t dev_id, enum rte_gpu_event event, void *arg)
{
	struct cb_count *c = arg;

	if (event == RTE_GPU_EVENT_DEL) {
		c->n_del++;
		c->dev_del = dev_id;
	}
}

/* Kernels and copies on the child's memory, inside the child context. */
static enum tg_status
touch_in_context(const struct tg_env *env, struct tg_result *res,
		uint64_t ctx, uint8_t *p, uint8_t *host)
{
	uint64_t seed = tg_seed(env, 700), bad = 0, first_bad = 0, owner = 0;
	size_t nbad, first;
	cudaError_t cerr;
	int err;

	err = gd_ptr_ctx(p, &owner);
	if (err != 0)
		return tg_fail(res, "owner context of %p: %s", p, gd_strerror(err));
	if (owner != ctx)
		return tg_fail(res, "child allocation %p belongs to context %#"
			PRIx64 ", not the child's %#" PRIx64, p, owner, ctx);

	err = gd_ctx_push(ctx);
	if (err != 0)
		return tg_fail(res, "push child context: %s", gd_strerror(err));
	err = gk_pattern_fill(p, CHILD_SIZE, seed);
	if (err != 0) {
		tg_fail(res, "fill kernel in the child context: %s",
			gpucuda_strerror(err));
		goto pop;
	}
	cerr = cudaMemcpy(host, p, CHILD_SIZE, cudaMemcpyDeviceToHost);
	if (cerr != cudaSuccess) {
		tg_fail(res, "cudaMemcpy in the child context: %s",
			cudaGetErrorString(cerr));
		goto pop;
	}
	nbad = tg_pattern_check(host, CHILD_SIZE, seed, &first);
	if (nbad != 0) {
		tg_fail(res, "child memory: %zu bytes differ from the kernel's "
			"writes, first at %zu", nbad, first);
		goto pop;
	}
	err = gk_pattern_check(p, CHILD_SIZE, seed, &bad, &first_bad);
	if (err != 0)
		tg_fail(res, "check kernel in the child context: %s",
			gpucuda_strerror(err));
	else if (bad != 0)
		tg_fail(res, "child memory: GPU found %" PRIu64 " bad bytes", bad);
pop:
	err = gd_ctx_pop();
	if (err != 0)
		tg_fail(res, "pop child context: %s", gd_strerror(err));
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

static enum tg_status
use_child(const struct tg_env *env, struct tg_result *res, uint64_t ctx)
{
	struct cb_count cb = { .dev_del = -1 };
	static uint8_t host[CHILD_SIZE];
	struct rte_gpu_info info;
	char name[32];
	int16_t child;
	uint16_t before = rte_gpu_count_avail();
	uint8_t *p;
	int ret;

	snprintf(name, sizeof(name), "tg_child_%d", env->dev_id);
	child = rte_gpu_add_child(name, env->dev_id, ctx);
	if (child < 0)
		return tg_fail(res, "add_child: %s", tg_errno_str(-child));
	if (!rte_gpu_is_valid(child) || rte_gpu_count_avail() != before + 1)
		tg_fail(res, "child %d not valid or not counted", child);
	/*
	 * Only a callback on the child's own id: gpudev resets a slot's
	 * callbacks when it hands the slot to a new device.
	 */
	else if (rte_gpu_callback_register(child, RTE_GPU_EVENT_DEL, count_del,
			&cb) != 0)
		tg_fail(res, "callback_register(child): %s",
			tg_errno_str(rte_errno));
	else if (rte_gpu_find_next(0, env->dev_id) != child)
		tg_fail(res, "find_next(0, parent %d) does not find child %d",
			env->dev_id, child);
	else if (rte_gpu_add_child(name, env->dev_id, ctx) != -EEXIST)
		tg_fail(res, "second add_child with the same name did not fail "
			"with EEXIST");
	else if (rte_gpu_info_get(child, &info) != 0)
		tg_fail(res, "info_get(child): %s", tg_errno_str(rte_errno));
	else if (info.parent != env->dev_id || info.context != ctx)
		tg_fail(res, "child info: parent %d context %#" PRIx64
			", expected %d and %#" PRIx64, info.parent, info.context,
			env->dev_id, ctx);
	if (res->status == TG_FAIL)
		goto close;

	/* The driver is linked in: its own API, called directly. */
	ret = rte_pmd_gpu_cuda_child_attach(child);
	if (ret != 0) {
		tg_fail(res, "rte_pmd_gpu_cuda_child_attach(%d): %s", child,
			tg_errno_str(ret));
		goto close;
	}
	p = rte_gpu_mem_alloc(child, CHILD_SIZE, 0);
	if (p == NULL) {
		tg_fail(res, "alloc on the child: %s", tg_errno_str(rte_errno));
		goto close;
	}
	touch_in_context(env, res, ctx, p, host);
	if (rte_gpu_mem_free(child, p) != 0)
		tg_fail(res, "free on the child: %s", tg_errno_str(rte_errno));

close:
	ret = rte_gpu_close(child);
	if (ret != 0)
		return tg_fail(res, "close(child %d): %d (%s)", child, ret,
			tg_errno_str(rte_errno));
	if (rte_gpu_is_valid(child))
		return tg_fail(res, "child %d still valid after close", child);
	if (cb.n_del != 1 || cb.dev_del != child)
		return tg_fail(res, "DEL callback ran %u times (device %d) for "
			"child %d", cb.n_del, cb.dev_del, child);
	if (!rte_gpu_is_valid(env->dev_id))
		return tg_fail(res, "parent invalid after closing its child");
	return res->status;
}

enum tg_status
tg_case_child(const struct tg_env *env, struct tg_result *res)
{
	uint64_t ctx = 0, saved = 0, now = 0;
	int err;

	err = gd_init();
	if (err != 0)
		return tg_skip(res, "CUDA driver context API unavailable: %s",
			gd_strerror(err));
	err = gd_ctx_get_current(&saved);
	if (err != 0)
		return tg_fail(res, "cuCtxGetCurrent: %s", gd_strerror(err));
	err = gd_ctx_create(env->cuda_dev, &ctx);
	if (err != 0)
		return tg_fail(res, "cuCtxCreate: %s", gd_strerror(err));

	use_child(env, res, ctx);

	err = gd_ctx_destroy(ctx);
	if (err != 0)
		tg_fail(res, "cuCtxDestroy: %s", gd_strerror(err));
	err = gd_ctx_get_current(&now);
	if (err != 0)
		tg_fail(res, "cuCtxGetCurrent: %s", gd_strerror(err));
	else if (now != saved)
		tg_fail(res, "current context changed from %#" PRIx64 " to %#"
			PRIx64, saved, now);
	return res->status;
}
