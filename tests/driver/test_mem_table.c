/* SPDX-License-Identifier: BSD-3-Clause */

/* Unit test of the driver's table of live allocations and registrations. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "cuda_mem_table.h"
#include "check.h"


static struct gpu_cuda_mem *
entry(uintptr_t ptr, size_t size, enum gpu_cuda_mem_kind kind)
{
	struct gpu_cuda_mem *m = calloc(1, sizeof(*m));

	m->ptr = ptr;
	m->size = size;
	m->kind = kind;
	return m;
}

static void
basic(void)
{
	struct gpu_cuda_mem_table t;
	struct gpu_cuda_mem *m, *dup, found;
	int other;

	CHECK(gpu_cuda_mem_table_init(&t) == 0, "init");
	CHECK(gpu_cuda_mem_table_insert(&t, entry(0x10000, 100, GPU_CUDA_MEM_DEVICE)) == 0, "insert");
	dup = entry(0x10000, 5, GPU_CUDA_MEM_DEVICE);
	CHECK(gpu_cuda_mem_table_insert(&t, dup) == -EEXIST, "duplicate refused");
	free(dup);
	CHECK(gpu_cuda_mem_table_insert(&t, entry(0x20000, 50, GPU_CUDA_MEM_REGISTERED)) == 0, "insert 2");

	/* wrong kind: stays, flagged */
	m = gpu_cuda_mem_table_remove(&t, 0x20000, GPU_CUDA_MEM_DEVICE, &other);
	CHECK(m == NULL && other == 1, "kind mismatch");
	CHECK(t.count == 2, "still two entries");
	/* unknown */
	m = gpu_cuda_mem_table_remove(&t, 0x30000, GPU_CUDA_MEM_DEVICE, &other);
	CHECK(m == NULL && other == 0, "unknown pointer");
	/* inside */
	CHECK(gpu_cuda_mem_table_find_containing(&t, 0x10000 + 99, &found) == 0 &&
		found.ptr == 0x10000, "containing lookup");
	CHECK(gpu_cuda_mem_table_find_containing(&t, 0x10000 + 100, &found) == -ENOENT,
		"one past the end is outside");
	m = gpu_cuda_mem_table_remove(&t, 0x10000, GPU_CUDA_MEM_DEVICE, &other);
	CHECK(m != NULL && m->size == 100, "remove");
	free(m);
	m = gpu_cuda_mem_table_remove(&t, 0x10000, GPU_CUDA_MEM_DEVICE, &other);
	CHECK(m == NULL && other == 0, "double remove");
	gpu_cuda_mem_table_fini(&t);
}

static void
grows_and_keeps_everything(void)
{
	enum { N = 100000 };
	struct gpu_cuda_mem_table t;
	unsigned int i, drained = 0;
	struct gpu_cuda_mem *m;
	int other;

	CHECK(gpu_cuda_mem_table_init(&t) == 0, "init");
	for (i = 0; i < N; i++)
		CHECK(gpu_cuda_mem_table_insert(&t,
			entry(0x100000 + (uintptr_t)i * 256, 256, GPU_CUDA_MEM_DEVICE)) == 0,
			"insert %u", i);
	CHECK(t.count == N, "count %zu", t.count);
	CHECK(t.nb_buckets >= N, "table grew to %zu buckets", t.nb_buckets);
	for (i = 0; i < N; i += 2) {
		m = gpu_cuda_mem_table_remove(&t, 0x100000 + (uintptr_t)i * 256,
				GPU_CUDA_MEM_DEVICE, &other);
		CHECK(m != NULL, "remove %u", i);
		free(m);
	}
	m = gpu_cuda_mem_table_drain(&t);
	while (m != NULL) {
		struct gpu_cuda_mem *next = m->next;

		CHECK(((m->ptr - 0x100000) / 256) % 2 == 1, "odd entries remain");
		drained++;
		free(m);
		m = next;
	}
	CHECK(drained == N / 2, "drained %u", drained);
	CHECK(t.count == 0, "empty after drain");
	gpu_cuda_mem_table_fini(&t);
}

static struct gpu_cuda_mem_table shared;

static void *
worker(void *arg)
{
	uintptr_t base = 0x1000000000ULL * (1 + (uintptr_t)arg);
	unsigned int i, round;
	int other, bad = 0;

	for (round = 0; round < 20; round++) {
		for (i = 0; i < 2000; i++)
			bad |= gpu_cuda_mem_table_insert(&shared,
				entry(base + i * 512, 512, GPU_CUDA_MEM_DEVICE)) != 0;
		for (i = 0; i < 2000; i++) {
			struct gpu_cuda_mem *m = gpu_cuda_mem_table_remove(&shared,
				base + i * 512, GPU_CUDA_MEM_DEVICE, &other);

			bad |= m == NULL || m->ptr != base + i * 512;
			free(m);
		}
	}
	return (void *)(uintptr_t)bad;
}

static void
concurrent(void)
{
	enum { THREADS = 8 };
	pthread_t th[THREADS];
	uintptr_t i;
	void *res;

	CHECK(gpu_cuda_mem_table_init(&shared) == 0, "init");
	for (i = 0; i < THREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0, "thread");
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], &res);
		CHECK(res == NULL, "thread %u saw a wrong result", (unsigned int)i);
	}
	CHECK(shared.count == 0, "count %zu after balanced inserts/removes", shared.count);
	gpu_cuda_mem_table_fini(&shared);
}

int
main(void)
{
	CHECK_CASE(basic);
	CHECK_CASE(grows_and_keeps_everything);
	CHECK_CASE(concurrent);
	return check_finish("mem_table");
}
