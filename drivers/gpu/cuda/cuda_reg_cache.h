/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_REG_CACHE_H
#define GPU_CUDA_REG_CACHE_H

/*
 * Registration cache ("lazy unpinning", devarg reg_cache=1): when the
 * application unregisters host memory, the CUDA registration is kept
 * ("parked") so that registering the same range, or a range inside it,
 * again costs a lookup instead of a pin.
 *
 * Only memory whose release the driver learns of is cached: memory of
 * EAL's heaps, which EAL announces through its memory event callbacks
 * before it gives it back (or, with legacy memory where there are no
 * events, EAL's own memory, which is then never given back). A parked
 * registration of memory EAL frees is dropped in the callback; one still
 * in use is marked stale and dropped when the application unregisters it.
 * Any other memory (malloc, mmap, rte_extmem_register) could be freed and
 * its address reused without the driver knowing, leaving a registration of
 * pages that are no longer there: it is unregistered at once, as without
 * the cache.
 *
 * Parked registrations are evicted least recently used first when they
 * hold more than the limit (devarg reg_cache_max) or number more than
 * GPU_CUDA_REG_CACHE_MAX_PARKED, at dev_close, on invalidation, and when a
 * new registration overlaps them (CUDA refuses overlapping registrations,
 * and the application must not see a refusal the cache caused).
 *
 * Thread-safe: one lock per cache, never held across a CUDA call.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpu_cuda_ctx;
struct gpu_cuda_reg_cache;
struct gpu_cuda_reg_cache_entry;
struct rte_pmd_gpu_cuda_reg_cache_stats;

/* Parked registrations at most, whatever their size: lookups scan them. */
#define GPU_CUDA_REG_CACHE_MAX_PARKED 1024

/* Default of devarg reg_cache_max. */
#define GPU_CUDA_REG_CACHE_DEFAULT_MAX ((size_t)1 << 30)

/* Creates c->reg_cache when c->reg_cache_on. Returns 0 or a negative
 * errno. */
int gpu_cuda_reg_cache_init(struct gpu_cuda_ctx *c);

/* Unregisters every parked registration, logs the counters and frees the
 * cache. The calls that use the cache must be over. */
void gpu_cuda_reg_cache_fini(struct gpu_cuda_ctx *c);

/*
 * Looks for a registration of [ptr, ptr + size) before mem_register pins
 * it. Returns NULL when the memory is not cached (no cache, or memory the
 * driver cannot watch): the caller registers and later unregisters as
 * without the cache. Else returns the entry the caller holds from now on:
 * *hit says whether it is a parked registration reused as is (nothing to
 * pin), else the caller must register [ptr, ptr + size) with CUDA and
 * give the entry back with gpu_cuda_reg_cache_abort if that fails.
 * *base and *len get the registered range.
 */
struct gpu_cuda_reg_cache_entry *gpu_cuda_reg_cache_acquire(
		struct gpu_cuda_ctx *c, uintptr_t ptr, size_t size, bool *hit,
		uintptr_t *base, size_t *len);

/* Forgets an entry from acquire whose registration failed (nothing to
 * unregister). */
void gpu_cuda_reg_cache_abort(struct gpu_cuda_ctx *c,
		struct gpu_cuda_reg_cache_entry *e);

/*
 * mem_unregister of a cached registration. Returns true when the
 * registration is parked (the caller must not unregister it), false when
 * the caller must unregister it now (stale, too large for the limit): the
 * entry is gone either way.
 */
bool gpu_cuda_reg_cache_release(struct gpu_cuda_ctx *c,
		struct gpu_cuda_reg_cache_entry *e);

/*
 * Unregisters the parked registrations of every device of this driver that
 * overlap [ptr, ptr + size) (CUDA registrations are process-wide). Returns
 * how many.
 */
unsigned int gpu_cuda_reg_cache_evict_overlapping(uintptr_t ptr, size_t size);

/* Unregisters every parked registration of c's cache; returns how many. */
unsigned int gpu_cuda_reg_cache_flush(struct gpu_cuda_ctx *c);

/* Fills st; -ENOTSUP when c does not cache. */
int gpu_cuda_reg_cache_stats(struct gpu_cuda_ctx *c,
		struct rte_pmd_gpu_cuda_reg_cache_stats *st);

#endif /* GPU_CUDA_REG_CACHE_H */
