/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <stdlib.h>

#include "cuda_mem_table.h"

#define INITIAL_BUCKETS 64

static inline size_t
bucket_of(uintptr_t ptr, size_t nb_buckets)
{
	/* Allocations are at least 256-byte aligned and host registrations
	 * usually page aligned: the low bits carry no information, so mix
	 * (Fibonacci hashing) before masking. */
	uint64_t h = (uint64_t)ptr * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> 32) & (nb_buckets - 1);
}

int
gpu_cuda_mem_table_init(struct gpu_cuda_mem_table *t)
{
	rte_spinlock_init(&t->lock);
	t->count = 0;
	t->nb_buckets = INITIAL_BUCKETS;
	t->buckets = calloc(t->nb_buckets, sizeof(*t->buckets));
	return t->buckets == NULL ? -ENOMEM : 0;
}

void
gpu_cuda_mem_table_fini(struct gpu_cuda_mem_table *t)
{
	struct gpu_cuda_mem *m = gpu_cuda_mem_table_drain(t);

	while (m != NULL) {
		struct gpu_cuda_mem *next = m->next;

		free(m);
		m = next;
	}
	free(t->buckets);
	t->buckets = NULL;
	t->nb_buckets = 0;
}

/* Called with the lock held. On allocation failure the table just stays at
 * its size: still correct, only longer chains. */
static void
grow(struct gpu_cuda_mem_table *t)
{
	size_t n = t->nb_buckets * 2;
	struct gpu_cuda_mem **b = calloc(n, sizeof(*b));
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < t->nb_buckets; i++) {
		struct gpu_cuda_mem *m = t->buckets[i];

		while (m != NULL) {
			struct gpu_cuda_mem *next = m->next;
			size_t j = bucket_of(m->ptr, n);

			m->next = b[j];
			b[j] = m;
			m = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nb_buckets = n;
}

int
gpu_cuda_mem_table_insert(struct gpu_cuda_mem_table *t, struct gpu_cuda_mem *m)
{
	struct gpu_cuda_mem *cur;
	size_t i;

	rte_spinlock_lock(&t->lock);
	i = bucket_of(m->ptr, t->nb_buckets);
	for (cur = t->buckets[i]; cur != NULL; cur = cur->next) {
		if (cur->ptr == m->ptr) {
			rte_spinlock_unlock(&t->lock);
			return -EEXIST;
		}
	}
	m->next = t->buckets[i];
	t->buckets[i] = m;
	t->count++;
	if (t->count > t->nb_buckets)
		grow(t);
	rte_spinlock_unlock(&t->lock);
	return 0;
}

struct gpu_cuda_mem *
gpu_cuda_mem_table_remove(struct gpu_cuda_mem_table *t, uintptr_t ptr,
		enum gpu_cuda_mem_kind kind, int *other_kind)
{
	struct gpu_cuda_mem **link;
	struct gpu_cuda_mem *m = NULL;

	*other_kind = 0;
	rte_spinlock_lock(&t->lock);
	link = &t->buckets[bucket_of(ptr, t->nb_buckets)];
	for (; *link != NULL; link = &(*link)->next) {
		if ((*link)->ptr != ptr)
			continue;
		if ((*link)->kind != kind) {
			*other_kind = 1;
			break;
		}
		m = *link;
		*link = m->next;
		m->next = NULL;
		t->count--;
		break;
	}
	rte_spinlock_unlock(&t->lock);
	return m;
}

int
gpu_cuda_mem_table_with(struct gpu_cuda_mem_table *t, uintptr_t ptr,
		int (*fn)(struct gpu_cuda_mem *m, void *arg), void *arg)
{
	struct gpu_cuda_mem *m;
	int ret = -ENOENT;

	rte_spinlock_lock(&t->lock);
	for (m = t->buckets[bucket_of(ptr, t->nb_buckets)]; m != NULL; m = m->next) {
		if (m->ptr == ptr) {
			ret = fn(m, arg);
			break;
		}
	}
	rte_spinlock_unlock(&t->lock);
	return ret;
}

/* Called with the lock held. */
static struct gpu_cuda_mem *
containing_locked(struct gpu_cuda_mem_table *t, uintptr_t addr)
{
	struct gpu_cuda_mem *m;
	size_t i;

	for (m = t->buckets[bucket_of(addr, t->nb_buckets)]; m != NULL; m = m->next)
		if (m->ptr == addr)
			return m;
	for (i = 0; i < t->nb_buckets; i++)
		for (m = t->buckets[i]; m != NULL; m = m->next)
			if (addr >= m->ptr && addr - m->ptr < m->size)
				return m;
	return NULL;
}

int
gpu_cuda_mem_table_with_containing(struct gpu_cuda_mem_table *t,
		uintptr_t addr, int (*fn)(struct gpu_cuda_mem *m, void *arg),
		void *arg)
{
	struct gpu_cuda_mem *m;
	int ret = -ENOENT;

	rte_spinlock_lock(&t->lock);
	m = containing_locked(t, addr);
	if (m != NULL)
		ret = fn(m, arg);
	rte_spinlock_unlock(&t->lock);
	return ret;
}

int
gpu_cuda_mem_table_find_containing(struct gpu_cuda_mem_table *t,
		uintptr_t addr, struct gpu_cuda_mem *out)
{
	struct gpu_cuda_mem *m;

	rte_spinlock_lock(&t->lock);
	m = containing_locked(t, addr);
	if (m != NULL) {
		*out = *m;
		out->next = NULL;
	}
	rte_spinlock_unlock(&t->lock);
	return m != NULL ? 0 : -ENOENT;
}

struct gpu_cuda_mem *
gpu_cuda_mem_table_drain(struct gpu_cuda_mem_table *t)
{
	struct gpu_cuda_mem *all = NULL;
	size_t i;

	rte_spinlock_lock(&t->lock);
	for (i = 0; i < t->nb_buckets; i++) {
		struct gpu_cuda_mem *m = t->buckets[i];

		while (m != NULL) {
			struct gpu_cuda_mem *next = m->next;

			m->next = all;
			all = m;
			m = next;
		}
		t->buckets[i] = NULL;
	}
	t->count = 0;
	rte_spinlock_unlock(&t->lock);
	return all;
}
