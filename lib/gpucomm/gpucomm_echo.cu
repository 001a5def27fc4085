/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flag echo (gpucomm_kernel.h): the bare CPU <-> GPU round trip of one
 * word, the floor under every handoff the ring makes. A file of its own so
 * that programs which never use it (the generator's library) do not pull
 * it from the static archive.
 */

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpucomm_dev.cuh"
#include "gpucomm_kernel.h"

struct gpucomm_echo {
	cudaStream_t stream;
	struct gpucomm_echo_state *st;	/* mapped host memory */
};

/*
 * One thread. Relaxed loads and stores at system scope both ways: the flag
 * publishes nothing besides itself, so a fence would only add to the floor
 * this measures. The record is written as the kernel ends, before done.
 * load: between ask and answer, the read gpucomm_echo_start_load() names;
 * without it the kernel is the bare echo, not a branch of it.
 */
template <bool load>
__global__ void
gpucomm_echo_kernel(uint32_t *flag, uint32_t rounds, uint64_t timeout_ns,
		const uint32_t *lines, uint32_t n_lines, uint32_t line_words,
		struct gpucomm_echo_state *st)
{
	uint64_t start = gpucomm_gpu_ns();
	uint32_t last = 0, n = 0;	/* n: asks answered */

	gpucomm_st_relaxed_sys_u32(&st->started, 1);
	for (;;) {
		const uint32_t v = gpucomm_ld_relaxed_sys_u32(flag);

		if (v == GPUCOMM_ECHO_QUIT)
			break;
		/* Odd values are asks; the answer (even) and an ask already
		 * answered are not, so the kernel never answers itself. */
		if ((v & 1) != 0 && v != last) {
			uint32_t a = v + 1;

			/* The line's address comes from v: the load cannot
			 * start before the flag's value is back. ld.global.cv
			 * as a kernel's reads of packets the CPU wrote. */
			if (load)
				a += 2 * __ldcv(lines + (size_t)((v >> 1) %
					n_lines) * line_words);
			gpucomm_st_relaxed_sys_u32(flag, a);
			last = v;
			n++;
			if (n == rounds)
				break;
			start = gpucomm_gpu_ns();
			continue;
		}
		if (gpucomm_gpu_ns() - start > timeout_ns) {
			gpucomm_st_relaxed_sys_u32(&st->timed_out, 1);
			break;
		}
	}
	/* The record once, at the end: no host store of it trails an answer
	 * on the link while the next ask is awaited. */
	gpucomm_st_relaxed_sys_u32(&st->seen, last);
	gpucomm_st_relaxed_sys_u32(&st->rounds, n);
	gpucomm_fence_acq_rel_sys();
	gpucomm_st_relaxed_sys_u32(&st->done, 1);
}

extern "C" int
gpucomm_echo_start_load(uint32_t *flag, uint32_t rounds, uint64_t timeout_ns,
		const uint32_t *lines, uint32_t n_lines, uint32_t line_bytes,
		struct gpucomm_echo **out)
{
	struct gpucomm_echo *e;
	cudaError_t err;

	if (flag == NULL || out == NULL || timeout_ns == 0 ||
			(lines != NULL && (n_lines == 0 || line_bytes == 0 ||
			line_bytes % sizeof(uint32_t) != 0)))
		return (int)cudaErrorInvalidValue;
	e = (struct gpucomm_echo *)calloc(1, sizeof(*e));
	if (e == NULL)
		return (int)cudaErrorMemoryAllocation;
	err = cudaHostAlloc((void **)&e->st, sizeof(*e->st),
		cudaHostAllocMapped);
	if (err != cudaSuccess)
		goto fail;
	memset(e->st, 0, sizeof(*e->st));
	/* Its own stream: nothing the caller queues meanwhile waits on the
	 * spinning kernel, and it waits on nothing of theirs. */
	err = cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess)
		goto fail_host;
	if (lines != NULL)
		gpucomm_echo_kernel<true><<<1, 1, 0, e->stream>>>(flag, rounds,
			timeout_ns, lines, n_lines, line_bytes / sizeof(uint32_t),
			e->st);
	else
		gpucomm_echo_kernel<false><<<1, 1, 0, e->stream>>>(flag, rounds,
			timeout_ns, NULL, 0, 0, e->st);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto fail_stream;
	*out = e;
	return 0;

fail_stream:
	cudaStreamDestroy(e->stream);
fail_host:
	cudaFreeHost(e->st);
fail:
	free(e);
	return (int)err;
}

extern "C" int
gpucomm_echo_start(uint32_t *flag, uint32_t rounds, uint64_t timeout_ns,
		struct gpucomm_echo **out)
{
	return gpucomm_echo_start_load(flag, rounds, timeout_ns, NULL, 0, 0,
		out);
}

extern "C" void
gpucomm_echo_peek(const struct gpucomm_echo *e, struct gpucomm_echo_state *st)
{
	const volatile struct gpucomm_echo_state *s = e->st;

	st->started = s->started;
	st->done = s->done;
	st->timed_out = s->timed_out;
	st->seen = s->seen;
	st->rounds = s->rounds;
}

extern "C" int
gpucomm_echo_finish(struct gpucomm_echo *e, struct gpucomm_echo_state *st)
{
	cudaError_t err, e2;

	err = cudaStreamSynchronize(e->stream);
	if (st != NULL)
		gpucomm_echo_peek(e, st);
	e2 = cudaStreamDestroy(e->stream);
	if (err == cudaSuccess)
		err = e2;
	e2 = cudaFreeHost(e->st);
	if (err == cudaSuccess)
		err = e2;
	free(e);
	return (int)err;
}
