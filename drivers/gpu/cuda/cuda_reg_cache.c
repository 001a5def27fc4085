/* SPDX-License-Identifier: BSD-3-Clause */

/* The registration cache: see cuda_reg_cache.h. */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_spinlock.h>
#include <rte_tailq.h>

#include "cuda_gpu.h"
#include "cuda_log.h"
#include "cuda_reg_cache.h"
#include "rte_pmd_gpu_cuda.h"

struct gpu_cuda_reg_cache_entry {
	TAILQ_ENTRY(gpu_cuda_reg_cache_entry) all;  /* every entry */
	TAILQ_ENTRY(gpu_cuda_reg_cache_entry) lru;  /* parked ones, newest first */
	uintptr_t base;
	size_t len;
	bool parked;      /* else held by a table entry */
	bool stale;       /* EAL freed (part of) it while in use */
};

TAILQ_HEAD(reg_cache_list, gpu_cuda_reg_cache_entry);

struct gpu_cuda_reg_cache {
	rte_spinlock_t lock;
	struct gpu_cuda_ctx *c;
	struct reg_cache_list all;
	struct reg_cache_list lru;
	size_t limit;
	size_t held;           /* bytes parked */
	unsigned int parked;
	unsigned int in_use;
	bool events;           /* EAL memory events registered */
	char cb_name[RTE_DEV_NAME_MAX_LEN + 16];
	uint64_t hits, misses, uncached, evictions, invalidations;
	TAILQ_ENTRY(gpu_cuda_reg_cache) next;  /* in all_caches */
};

/* Every cache of the process: a registration parked by one device must not
 * make another device's registration of the same memory fail. */
static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, gpu_cuda_reg_cache) all_caches =
	TAILQ_HEAD_INITIALIZER(all_caches);

static bool
overlap(const struct gpu_cuda_reg_cache_entry *e, uintptr_t p, size_t len)
{
	return p < e->base + e->len && e->base < p + len;
}

/* Lock held. Unlinks a parked entry (the caller releases it). */
static void
unpark_locked(struct gpu_cuda_reg_cache *rc, struct gpu_cuda_reg_cache_entry *e)
{
	TAILQ_REMOVE(&rc->lru, e, lru);
	rc->held -= e->len;
	rc->parked--;
	e->parked = false;
}

/* Lock held. Moves a parked entry to the chain of entries to release. */
static void
evict_locked(struct gpu_cuda_reg_cache *rc, struct gpu_cuda_reg_cache_entry *e,
		struct reg_cache_list *out)
{
	unpark_locked(rc, e);
	TAILQ_REMOVE(&rc->all, e, all);
	TAILQ_INSERT_TAIL(out, e, all);
}

/* Unregisters and frees what evict_locked collected, without the lock. */
static unsigned int
release_list(struct gpu_cuda_reg_cache *rc, struct reg_cache_list *list,
		const char *why)
{
	struct gpu_cuda_reg_cache_entry *e;
	unsigned int n = 0;
	int ret;

	while ((e = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, e, all);
		ret = gpu_cuda_host_unregister(rc->c, e->base, why);
		if (ret != 0)
			CUDA_LOG(ERR, "%s: %s: cached registration %#" PRIxPTR " (%zu bytes) not unregistered: %s",
				rc->c->name, why, e->base, e->len, strerror(-ret));
		else
			CUDA_LOG(DEBUG, "%s: %s: unregistered %#" PRIxPTR " (%zu bytes)",
				rc->c->name, why, e->base, e->len);
		free(e);
		n++;
	}
	return n;
}

/*
 * EAL calls this before it gives memory back (and when it gets more,
 * which needs nothing). The memory is still mapped: its registrations can
 * be undone here.
 */
static void
mem_event(enum rte_mem_event type, const void *addr, size_t len, void *arg)
{
	struct gpu_cuda_reg_cache *rc = arg;
	struct gpu_cuda_reg_cache_entry *e, *tmp;
	struct reg_cache_list out = TAILQ_HEAD_INITIALIZER(out);
	uintptr_t p = (uintptr_t)addr;

	if (type != RTE_MEM_EVENT_FREE)
		return;
	rte_spinlock_lock(&rc->lock);
	RTE_TAILQ_FOREACH_SAFE(e, &rc->all, all, tmp) {
		if (!overlap(e, p, len))
			continue;
		rc->invalidations++;
		if (e->parked)
			evict_locked(rc, e, &out);
		else
			e->stale = true;
	}
	rte_spinlock_unlock(&rc->lock);
	release_list(rc, &out, "EAL frees the memory");
}

int
gpu_cuda_reg_cache_init(struct gpu_cuda_ctx *c)
{
	struct gpu_cuda_reg_cache *rc;

	c->reg_cache = NULL;
	if (!c->reg_cache_on)
		return 0;
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL)
		return -ENOMEM;
	rte_spinlock_init(&rc->lock);
	TAILQ_INIT(&rc->all);
	TAILQ_INIT(&rc->lru);
	rc->c = c;
	rc->limit = c->reg_cache_max;
	snprintf(rc->cb_name, sizeof(rc->cb_name), "gpu_cuda_rc_%s", c->name);
	if (rte_mem_event_callback_register(rc->cb_name, mem_event, rc) == 0) {
		rc->events = true;
	} else if (rte_errno != ENOTSUP) {
		int ret = -rte_errno;

		CUDA_LOG(ERR, "%s: registration cache: cannot watch EAL memory events: %s",
			c->name, rte_strerror(rte_errno));
		free(rc);
		return ret;
	}
	pthread_mutex_lock(&caches_lock);
	TAILQ_INSERT_TAIL(&all_caches, rc, next);
	pthread_mutex_unlock(&caches_lock);
	c->reg_cache = rc;
	CUDA_LOG(INFO, "%s: registration cache on: up to %zu bytes in %u registrations of EAL memory, %s",
		c->name, rc->limit, GPU_CUDA_REG_CACHE_MAX_PARKED,
		rc->events ? "invalidated by EAL memory events" :
			"legacy memory (EAL never frees it)");
	return 0;
}

static void
log_counters(const struct gpu_cuda_reg_cache *rc)
{
	CUDA_LOG(INFO, "%s: registration cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " uncached, %" PRIu64 " evictions, %" PRIu64 " invalidations, %zu bytes in %u parked registrations",
		rc->c->name, rc->hits, rc->misses, rc->uncached, rc->evictions,
		rc->invalidations, rc->held, rc->parked);
}

void
gpu_cuda_reg_cache_fini(struct gpu_cuda_ctx *c)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;
	struct gpu_cuda_reg_cache_entry *e;

	if (rc == NULL)
		return;
	log_counters(rc);
	pthread_mutex_lock(&caches_lock);
	TAILQ_REMOVE(&all_caches, rc, next);
	pthread_mutex_unlock(&caches_lock);
	gpu_cuda_reg_cache_flush(c);
	/* After this no callback runs (EAL waits for those running). */
	if (rc->events &&
			rte_mem_event_callback_unregister(rc->cb_name, rc) != 0)
		CUDA_LOG(ERR, "%s: registration cache: EAL memory callback not unregistered: %s",
			c->name, rte_strerror(rte_errno));
	/* Entries still held belong to table entries dev_close releases. */
	while ((e = TAILQ_FIRST(&rc->all)) != NULL) {
		TAILQ_REMOVE(&rc->all, e, all);
		free(e);
	}
	free(rc);
	c->reg_cache = NULL;
}

/* EAL memory is the only memory whose release the driver learns of. */
static bool
cacheable(uintptr_t ptr, size_t size)
{
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list((void *)ptr);

	/* External memory (rte_extmem_register, rte_malloc_heap_memory_add)
	 * leaves without an event. */
	return msl != NULL && msl->external == 0 &&
		size <= msl->len &&
		ptr - (uintptr_t)msl->base_va <= msl->len - size;
}

struct gpu_cuda_reg_cache_entry *
gpu_cuda_reg_cache_acquire(struct gpu_cuda_ctx *c, uintptr_t ptr, size_t size,
		bool *hit, uintptr_t *base, size_t *len)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;
	struct gpu_cuda_reg_cache_entry *e, *fresh;

	*hit = false;
	if (rc == NULL)
		return NULL;
	if (!cacheable(ptr, size)) {
		rte_spinlock_lock(&rc->lock);
		rc->uncached++;
		rte_spinlock_unlock(&rc->lock);
		return NULL;
	}
	/* Allocated before the lock: malloc may be slow. */
	fresh = calloc(1, sizeof(*fresh));
	rte_spinlock_lock(&rc->lock);
	TAILQ_FOREACH(e, &rc->lru, lru) {
		if (e->base <= ptr && ptr - e->base <= e->len &&
				size <= e->len - (ptr - e->base)) {
			unpark_locked(rc, e);
			rc->in_use++;
			rc->hits++;
			rte_spinlock_unlock(&rc->lock);
			free(fresh);
			*hit = true;
			*base = e->base;
			*len = e->len;
			return e;
		}
	}
	if (fresh == NULL) {
		/* Registered uncached: correct, only not reusable. */
		rc->uncached++;
		rte_spinlock_unlock(&rc->lock);
		return NULL;
	}
	rc->misses++;
	rc->in_use++;
	fresh->base = ptr;
	fresh->len = size;
	TAILQ_INSERT_TAIL(&rc->all, fresh, all);
	rte_spinlock_unlock(&rc->lock);
	*base = ptr;
	*len = size;
	return fresh;
}

void
gpu_cuda_reg_cache_abort(struct gpu_cuda_ctx *c, struct gpu_cuda_reg_cache_entry *e)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;

	rte_spinlock_lock(&rc->lock);
	TAILQ_REMOVE(&rc->all, e, all);
	rc->in_use--;
	rte_spinlock_unlock(&rc->lock);
	free(e);
}

bool
gpu_cuda_reg_cache_release(struct gpu_cuda_ctx *c, struct gpu_cuda_reg_cache_entry *e)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;
	struct reg_cache_list out = TAILQ_HEAD_INITIALIZER(out);
	struct gpu_cuda_reg_cache_entry *old;

	rte_spinlock_lock(&rc->lock);
	rc->in_use--;
	if (e->stale || e->len > rc->limit) {
		TAILQ_REMOVE(&rc->all, e, all);
		rte_spinlock_unlock(&rc->lock);
		free(e);
		return false;
	}
	e->parked = true;
	TAILQ_INSERT_HEAD(&rc->lru, e, lru);
	rc->held += e->len;
	rc->parked++;
	while (rc->held > rc->limit || rc->parked > GPU_CUDA_REG_CACHE_MAX_PARKED) {
		old = TAILQ_LAST(&rc->lru, reg_cache_list);
		evict_locked(rc, old, &out);
		rc->evictions++;
	}
	rte_spinlock_unlock(&rc->lock);
	release_list(rc, &out, "registration cache over its limit");
	return true;
}

/* Lock of rc held: collects parked entries overlapping the range (all of
 * them for size 0). */
static unsigned int
collect_locked(struct gpu_cuda_reg_cache *rc, uintptr_t ptr, size_t size,
		struct reg_cache_list *out)
{
	struct gpu_cuda_reg_cache_entry *e, *tmp;
	unsigned int n = 0;

	RTE_TAILQ_FOREACH_SAFE(e, &rc->lru, lru, tmp) {
		if (size != 0 && !overlap(e, ptr, size))
			continue;
		evict_locked(rc, e, out);
		rc->evictions++;
		n++;
	}
	return n;
}

unsigned int
gpu_cuda_reg_cache_evict_overlapping(uintptr_t ptr, size_t size)
{
	struct gpu_cuda_reg_cache *rc;
	unsigned int n = 0;

	/* Held across the CUDA calls so that no cache goes away meanwhile:
	 * this path only runs when CUDA refused a registration. */
	pthread_mutex_lock(&caches_lock);
	TAILQ_FOREACH(rc, &all_caches, next) {
		struct reg_cache_list out = TAILQ_HEAD_INITIALIZER(out);

		rte_spinlock_lock(&rc->lock);
		collect_locked(rc, ptr, size, &out);
		rte_spinlock_unlock(&rc->lock);
		n += release_list(rc, &out, "registration overlapping a new one");
	}
	pthread_mutex_unlock(&caches_lock);
	return n;
}

unsigned int
gpu_cuda_reg_cache_flush(struct gpu_cuda_ctx *c)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;
	struct reg_cache_list out = TAILQ_HEAD_INITIALIZER(out);

	if (rc == NULL)
		return 0;
	rte_spinlock_lock(&rc->lock);
	collect_locked(rc, 0, 0, &out);
	rte_spinlock_unlock(&rc->lock);
	return release_list(rc, &out, "registration cache flush");
}

int
gpu_cuda_reg_cache_stats(struct gpu_cuda_ctx *c,
		struct rte_pmd_gpu_cuda_reg_cache_stats *st)
{
	struct gpu_cuda_reg_cache *rc = c->reg_cache;

	if (rc == NULL)
		return -ENOTSUP;
	rte_spinlock_lock(&rc->lock);
	st->hits = rc->hits;
	st->misses = rc->misses;
	st->uncached = rc->uncached;
	st->evictions = rc->evictions;
	st->invalidations = rc->invalidations;
	st->bytes_held = rc->held;
	st->bytes_limit = rc->limit;
	st->parked = rc->parked;
	st->in_use = rc->in_use;
	rte_spinlock_unlock(&rc->lock);
	return 0;
}
