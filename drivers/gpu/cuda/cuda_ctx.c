/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The device context object at the bottom of the driver, on which mem,
 * reg_cache, dmabuf and dev all build and which calls none of them: making
 * the CUDA context current, the gate every call passes (dev_close must not
 * free what a call on another lcore is using, nor leave behind what such a
 * call adds after it drained the tables), and undoing a host registration,
 * which both the memory operations and the registration cache need.
 */

#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>

#include <rte_pause.h>
#include <rte_spinlock.h>

#include "cuda_gpu.h"
#include "cuda_log.h"

int
gpu_cuda_ctx_enter(const struct gpu_cuda_ctx *c, const char *what)
{
	return GPU_CUDA_CALL(what, cuCtxPushCurrent, c->ctx);
}

int
gpu_cuda_ctx_leave(const char *what)
{
	CUcontext popped;

	return GPU_CUDA_CALL(what, cuCtxPopCurrent, &popped);
}

/* Contexts of closed devices. A call that read dev->process_private just
 * before dev_close cleared it still looks at the context's gate: the
 * struct must stay valid for the process lifetime (everything it pointed
 * to is released at close). */
static rte_spinlock_t retired_lock = RTE_SPINLOCK_INITIALIZER;
static struct gpu_cuda_ctx *retired;

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

int
gpu_cuda_host_unregister_try(struct gpu_cuda_ctx *c, uintptr_t base,
		const char *what, bool *held)
{
	int ret, r;

	*held = false;
	ret = gpu_cuda_ctx_enter(c, what);
	if (ret != 0) {
		*held = true;
		return ret;
	}
	ret = GPU_CUDA_CALL(what, cuMemHostUnregister, (void *)base);
	r = gpu_cuda_ctx_leave(what);
	return ret != 0 ? ret : r;
}

int
gpu_cuda_host_unregister(struct gpu_cuda_ctx *c, uintptr_t base,
		const char *what)
{
	bool held;
	int ret = gpu_cuda_host_unregister_try(c, base, what, &held);

	/* Tried once more if the context could not be entered: a passing
	 * failure must not leak the registration. */
	if (held)
		gpu_cuda_host_unregister_try(c, base, what, &held);
	if (held)
		CUDA_LOG(ERR, "%s on %s: registration of %#" PRIxPTR " leaked",
			what, c->name, base);
	return ret;
}
