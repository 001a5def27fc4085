/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What a context of this driver has beside its CUDA context, and the gate
 * every call passes: dev_close must not free what a call on another lcore
 * is using, nor leave behind what such a call adds after it drained the
 * tables.
 */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_pause.h>
#include <rte_spinlock.h>

#include "cuda_gpu.h"
#include "cuda_log.h"
#include "cuda_reg_cache.h"

/* Contexts of closed devices. A call that read dev->process_private just
 * before dev_close cleared it still looks at the context's gate: the
 * struct must stay valid for the process lifetime (everything it pointed
 * to is released at close). */
static rte_spinlock_t retired_lock = RTE_SPINLOCK_INITIALIZER;
static struct gpu_cuda_ctx *retired;

static int
stream_destroy(struct gpu_cuda_ctx *c)
{
	int ret = gpu_cuda_ctx_enter(c, c->name);
	int r;

	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL(c->name, cuStreamDestroy, c->stream);
	r = gpu_cuda_ctx_leave(c->name);
	if (ret == 0)
		c->stream = NULL;
	return ret != 0 ? ret : r;
}

static int
stream_create(struct gpu_cuda_ctx *c)
{
	int ret = gpu_cuda_ctx_enter(c, c->name);
	int r;

	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL(c->name, cuStreamCreate, &c->stream,
			CU_STREAM_NON_BLOCKING);
	r = gpu_cuda_ctx_leave(c->name);
	if (ret == 0 && r != 0) {
		if (stream_destroy(c) != 0)
			CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
		ret = r;
	}
	if (ret != 0)
		c->stream = NULL;
	return ret;
}

int
gpu_cuda_ctx_setup(struct gpu_cuda_ctx *c)
{
	int ret;

	c->active = 0;
	c->closing = 0;
	c->stream = NULL;
	c->reg_cache = NULL;
	c->dmabufs = NULL;
	c->retired_next = NULL;
	rte_spinlock_init(&c->dmabuf_lock);
	ret = gpu_cuda_mem_table_init(&c->mem);
	if (ret != 0)
		return ret;
	ret = stream_create(c);
	if (ret != 0)
		goto fini_table;
	ret = gpu_cuda_reg_cache_init(c);
	if (ret != 0)
		goto destroy_stream;
	return 0;

destroy_stream:
	if (stream_destroy(c) != 0)
		CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
fini_table:
	gpu_cuda_mem_table_fini(&c->mem);
	return ret;
}

int
gpu_cuda_ctx_teardown(struct gpu_cuda_ctx *c)
{
	int ret = 0;

	gpu_cuda_reg_cache_fini(c);
	if (c->stream != NULL) {
		ret = stream_destroy(c);
		/* Tried once more if the context could not be entered: a
		 * passing failure must not leak it. */
		if (c->stream != NULL && stream_destroy(c) != 0)
			CUDA_LOG(ERR, "%s: CUDA stream leaked", c->name);
	}
	gpu_cuda_mem_table_fini(&c->mem);
	return ret;
}

struct gpu_cuda_ctx *
gpu_cuda_ctx_get(struct rte_gpu *dev, const char *op)
{
	struct gpu_cuda_ctx *c = __atomic_load_n(
			(struct gpu_cuda_ctx **)&dev->process_private,
			__ATOMIC_ACQUIRE);

	if (c == NULL) {
		CUDA_LOG(ERR, "%s on %s: device is not initialised in this process (or closed)",
			op, dev->mpshared->info.name);
		return NULL;
	}
	/* Dekker with dev_close: either it sees this call in flight, or the
	 * call sees it closing. */
	__atomic_fetch_add(&c->active, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->closing, __ATOMIC_SEQ_CST) != 0) {
		__atomic_fetch_sub(&c->active, 1, __ATOMIC_RELEASE);
		CUDA_LOG(ERR, "%s on %s: device is closing, call refused",
			op, c->name);
		return NULL;
	}
	return c;
}

void
gpu_cuda_ctx_put(struct gpu_cuda_ctx *c)
{
	__atomic_fetch_sub(&c->active, 1, __ATOMIC_RELEASE);
}

struct gpu_cuda_ctx *
gpu_cuda_ctx_get_by_id(int16_t dev_id, const char *op, int *err)
{
	struct rte_gpu_info info;
	struct gpu_cuda_ctx *c;
	struct rte_gpu *dev;

	*err = -ENODEV;
	if (rte_gpu_info_get(dev_id, &info) != 0 ||
			(dev = rte_gpu_get_by_name(info.name)) == NULL) {
		CUDA_LOG(ERR, "%s: no GPU %d", op, dev_id);
		return NULL;
	}
	if (dev->ops.dev_close != gpu_cuda_dev_close) {
		CUDA_LOG(ERR, "%s: GPU %d (%s) is not a GPU of the CUDA driver",
			op, dev_id, info.name);
		return NULL;
	}
	c = gpu_cuda_ctx_get(dev, op);
	if (c != NULL)
		*err = 0;
	return c;
}

bool
gpu_cuda_ctx_begin_close(struct gpu_cuda_ctx *c)
{
	unsigned int spins = 0;

	if (__atomic_exchange_n(&c->closing, 1, __ATOMIC_SEQ_CST) != 0) {
		CUDA_LOG(ERR, "close %s: already closing", c->name);
		return false;
	}
	while (__atomic_load_n(&c->active, __ATOMIC_SEQ_CST) != 0) {
		if (++spins % 1024 == 0)
			sched_yield();
		else
			rte_pause();
	}
	return true;
}

void
gpu_cuda_ctx_retire(struct rte_gpu *dev, struct gpu_cuda_ctx *c)
{
	__atomic_store_n((struct gpu_cuda_ctx **)&dev->process_private, NULL,
		__ATOMIC_RELEASE);
	rte_spinlock_lock(&retired_lock);
	c->retired_next = retired;
	retired = c;
	rte_spinlock_unlock(&retired_lock);
}
