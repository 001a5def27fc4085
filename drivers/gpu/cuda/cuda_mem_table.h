/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_MEM_TABLE_H
#define GPU_CUDA_MEM_TABLE_H

/*
 * The live GPU allocations and host registrations of one CUDA context,
 * keyed by the pointer handed to the application. Lookups, inserts and
 * removals are O(1) on average whatever the number of live entries (chained
 * hashing, the bucket array doubles as entries are added), so freeing does
 * not slow down as an application holds more memory.
 *
 * The table has its own lock: it is safe to call from several lcores at once.
 * The lock is never held across a CUDA call.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_spinlock.h>

enum gpu_cuda_mem_kind {
	GPU_CUDA_MEM_DEVICE,     /* cuMemAlloc'd by mem_alloc */
	GPU_CUDA_MEM_REGISTERED, /* host memory cuMemHostRegister'd */
};

struct gpu_cuda_reg_cache_entry;

struct gpu_cuda_mem {
	struct gpu_cuda_mem *next;   /* bucket chain */
	uintptr_t ptr;               /* what the application holds */
	size_t size;                 /* what the application asked for */
	enum gpu_cuda_mem_kind kind;
	/* Start and size of the CUDA allocation (alignment slack included)
	 * or of the CUDA host registration (which, reused from the
	 * registration cache, may be wider than [ptr, ptr + size)). */
	uintptr_t base;
	size_t base_size;
	uint64_t id;                 /* unique in the process, never reused */
	void *cpu_map;               /* GDRCopy state, NULL if not mapped */
	/* A CPU mapping of it was refused (no GDRCopy). DPDK's
	 * rte_gpu_comm_create_list then drops its pointer to the allocation
	 * and never frees it, so close frees it without calling it the
	 * application's leak. */
	bool cpu_map_refused;
	/* The registration cache's record of this registration, NULL when
	 * it is not cached. */
	struct gpu_cuda_reg_cache_entry *cache_ent;
};

struct gpu_cuda_mem_table {
	rte_spinlock_t lock;
	struct gpu_cuda_mem **buckets;
	size_t nb_buckets;           /* power of two */
	size_t count;
};

/* Returns 0, or -ENOMEM. */
int gpu_cuda_mem_table_init(struct gpu_cuda_mem_table *t);

/* Frees the table's own memory; entries still in it are freed too. */
void gpu_cuda_mem_table_fini(struct gpu_cuda_mem_table *t);

/* Adds an entry (owned by the table from now on); -EEXIST if its pointer is
 * already there. */
int gpu_cuda_mem_table_insert(struct gpu_cuda_mem_table *t,
		struct gpu_cuda_mem *m);

/*
 * Removes and returns the entry for ptr if it is of the wanted kind.
 * When it is absent, returns NULL; when present with another kind, returns
 * NULL, leaves it in place and sets *other_kind. The caller frees what it
 * gets back.
 */
struct gpu_cuda_mem *gpu_cuda_mem_table_remove(struct gpu_cuda_mem_table *t,
		uintptr_t ptr, enum gpu_cuda_mem_kind kind, int *other_kind);

/*
 * Runs fn on the entry for ptr under the table lock (so it cannot be removed
 * meanwhile). Returns fn's result, or -ENOENT if ptr is absent.
 */
int gpu_cuda_mem_table_with(struct gpu_cuda_mem_table *t, uintptr_t ptr,
		int (*fn)(struct gpu_cuda_mem *m, void *arg), void *arg);

/* As gpu_cuda_mem_table_with, for the entry whose range [ptr, ptr + size)
 * contains addr (O(1) when addr is an entry's start, else O(number of
 * entries)). */
int gpu_cuda_mem_table_with_containing(struct gpu_cuda_mem_table *t,
		uintptr_t addr, int (*fn)(struct gpu_cuda_mem *m, void *arg),
		void *arg);

/* Finds an entry whose range [ptr, ptr + size) contains addr, for error
 * messages only: O(number of entries). Copies it to *out; returns 0 or
 * -ENOENT. */
int gpu_cuda_mem_table_find_containing(struct gpu_cuda_mem_table *t,
		uintptr_t addr, struct gpu_cuda_mem *out);

/* Unlinks every entry and returns them as a chain (for dev_close). */
struct gpu_cuda_mem *gpu_cuda_mem_table_drain(struct gpu_cuda_mem_table *t);

#endif /* GPU_CUDA_MEM_TABLE_H */
