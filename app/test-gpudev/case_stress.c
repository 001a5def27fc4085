/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * stress: threads allocate, register, fill, verify and release at random,
 * concurrently; every buffer keeps its own thread's data until released
 * and no gpudev call fails.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "pattern.h"
#include "tg.h"
#include "tg_time.h"

#define SLOTS 16
#define MAX_SIZE (1 << 20)
#define PAGE 4096

enum slot_kind {
	SLOT_EMPTY,
	SLOT_GPU,	/* rte_gpu_mem_alloc */
	SLOT_HOST,	/* host buffer, rte_gpu_mem_register */
};

struct slot {
	enum slot_kind kind;
	uint8_t *ptr;
	size_t size;
	uint64_t seed;
};

struct worker {
	const struct tg_env *env;
	unsigned int id;
	pthread_t thread;
	cudaStream_t stream;
	uint8_t *stage;		/* pattern source for copies */
	uint8_t *check;		/* copy-back target */
	uint8_t *scratch;	/* device bounce buffer for host slots */
	struct slot slots[SLOTS];
	uint64_t rng;
	uint64_t ops;
	char err[256];
};

static int
worker_fail(struct worker *w, const char *fmt, ...)
	__rte_format_printf(2, 3);

static int
worker_fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err[0] != '\0')
		return -1;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int
cuda_copy(struct worker *w, void *dst, const void *src, size_t size)
{
	cudaError_t cerr;

	/* Own stream: threads must not serialise on the legacy stream. */
	cerr = cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, w->stream);
	if (cerr == cudaSuccess)
		cerr = cudaStreamSynchronize(w->stream);
	if (cerr != cudaSuccess)
		return worker_fail(w, "thread %u: copy of %zu B: %s", w->id, size,
			cudaGetErrorString(cerr));
	return 0;
}

static int
slot_fill(struct worker *w, struct slot *s)
{
	int16_t dev = w->env->dev_id;
	static const unsigned int aligns[] = { 0, 8, 256, 4096 };
	unsigned int align;

	s->size = 1 + tg_rand(&w->rng) % MAX_SIZE;
	/* Seed unique to this thread and operation. */
	s->seed = tg_pattern_word(w->env->seed, ((uint64_t)w->id << 40) | w->ops);
	tg_pattern_fill(w->stage, s->size, s->seed);

	if (tg_rand(&w->rng) & 1) {
		align = aligns[tg_rand(&w->rng) % RTE_DIM(aligns)];
		s->ptr = rte_gpu_mem_alloc(dev, s->size, align);
		if (s->ptr == NULL)
			return worker_fail(w, "thread %u: alloc(%zu, %u): %s", w->id,
				s->size, align, tg_errno_str(rte_errno));
		s->kind = SLOT_GPU;
		if (align != 0 && (uintptr_t)s->ptr % align != 0)
			return worker_fail(w, "thread %u: alloc align %u gave %p",
				w->id, align, s->ptr);
		return cuda_copy(w, s->ptr, w->stage, s->size);
	}

	/* Whole pages, so registrations of different threads never share one. */
	s->ptr = aligned_alloc(PAGE, RTE_ALIGN_CEIL(s->size, PAGE));
	if (s->ptr == NULL)
		return worker_fail(w, "thread %u: no host memory", w->id);
	if (rte_gpu_mem_register(dev, s->size, s->ptr) != 0) {
		free(s->ptr);
		s->ptr = NULL;
		return worker_fail(w, "thread %u: register(%zu): %s", w->id,
			s->size, tg_errno_str(rte_errno));
	}
	s->kind = SLOT_HOST;
	/* The GPU's copy engine writes the registered pages. */
	if (cuda_copy(w, w->scratch, w->stage, s->size) < 0)
		return -1;
	return cuda_copy(w, s->ptr, w->scratch, s->size);
}

static int
slot_release(struct worker *w, struct slot *s)
{
	int16_t dev = w->env->dev_id;
	size_t nbad, first;
	const uint8_t *data = s->ptr;
	int ret = 0;

	if (s->kind == SLOT_GPU) {
		if (cuda_copy(w, w->check, s->ptr, s->size) < 0)
			ret = -1;
		data = w->check;
	}
	if (ret == 0) {
		nbad = tg_pattern_check(data, s->size, s->seed, &first);
		if (nbad != 0)
			ret = worker_fail(w, "thread %u: %s buffer %p (%zu B): %zu "
				"bytes lost their pattern, first at %zu", w->id,
				s->kind == SLOT_GPU ? "GPU" : "registered", s->ptr,
				s->size, nbad, first);
	}
	if (s->kind == SLOT_GPU) {
		if (rte_gpu_mem_free(dev, s->ptr) != 0)
			ret = worker_fail(w, "thread %u: free(%p): %s", w->id,
				s->ptr, tg_errno_str(rte_errno));
	} else {
		if (rte_gpu_mem_unregister(dev, s->ptr) != 0)
			ret = worker_fail(w, "thread %u: unregister(%p): %s", w->id,
				s->ptr, tg_errno_str(rte_errno));
		free(s->ptr);
	}
	s->kind = SLOT_EMPTY;
	s->ptr = NULL;
	return ret;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	cudaError_t cerr;
	unsigned int i;

	/* The runtime's current device is per thread. */
	cerr = cudaSetDevice(w->env->cuda_dev);
	if (cerr == cudaSuccess)
		cerr = cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking);
	if (cerr == cudaSuccess)
		cerr = cudaMalloc((void **)&w->scratch, MAX_SIZE);
	if (cerr != cudaSuccess) {
		worker_fail(w, "thread %u: CUDA setup: %s", w->id,
			cudaGetErrorString(cerr));
		return NULL;
	}

	while (w->ops < w->env->stress_ops) {
		struct slot *s = &w->slots[tg_rand(&w->rng) % SLOTS];
		int ret = s->kind == SLOT_EMPTY ? slot_fill(w, s) :
			slot_release(w, s);

		w->ops++;
		if (ret < 0)
			break;
	}
	/* Whatever is left is verified too. */
	for (i = 0; i < SLOTS; i++) {
		if (w->slots[i].kind != SLOT_EMPTY)
			slot_release(w, &w->slots[i]);
	}
	cudaFree(w->scratch);
	cudaStreamDestroy(w->stream);
	return NULL;
}

enum tg_status
tg_case_stress(const struct tg_env *env, struct tg_result *res)
{
	unsigned int n = env->stress_threads, i, started = 0;
	uint64_t t0, total = 0;
	struct worker *w;
	double secs;

	w = calloc(n, sizeof(*w));
	if (w == NULL)
		return tg_fail(res, "no memory for %u workers", n);
	for (i = 0; i < n; i++) {
		w[i].env = env;
		w[i].id = i;
		w[i].rng = tg_seed(env, 800 + i);
		w[i].stage = malloc(MAX_SIZE);
		w[i].check = malloc(MAX_SIZE);
		if (w[i].stage == NULL || w[i].check == NULL) {
			tg_fail(res, "no host memory for worker buffers");
			goto out;
		}
	}

	t0 = tg_now_ns();
	for (i = 0; i < n; i++) {
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
			tg_fail(res, "pthread_create failed for thread %u", i);
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	secs = (tg_now_ns() - t0) / 1e9;

	for (i = 0; i < started; i++) {
		total += w[i].ops;
		if (w[i].err[0] != '\0')
			tg_fail(res, "%s", w[i].err);
	}
	if (res->status != TG_FAIL)
		tg_pass(res, "%u threads, %" PRIu64 " ops, %.0f ops/s", started,
			total, secs > 0 ? total / secs : 0.0);
out:
	for (i = 0; i < n; i++) {
		free(w[i].stage);
		free(w[i].check);
	}
	free(w);
	return res->status;
}
