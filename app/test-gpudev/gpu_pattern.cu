/* SPDX-License-Identifier: BSD-3-Clause */

/* Kernels that write and verify tg_pattern over GPU-visible memory. */

#include <cuda_runtime.h>

#include "gpu_kernels.h"

#define GK_THREADS 256
#define GK_MAX_BLOCKS 4096

static unsigned int
gk_blocks(size_t words)
{
	size_t b = (words + GK_THREADS - 1) / GK_THREADS;

	if (b == 0)
		b = 1;
	return b > GK_MAX_BLOCKS ? GK_MAX_BLOCKS : (unsigned int)b;
}

__global__ void
gk_fill_kernel(uint8_t *buf, size_t len, uint64_t seed)
{
	size_t words = (len + 7) / 8;
	size_t w;

	for (w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words;
			w += (size_t)gridDim.x * blockDim.x) {
		uint64_t v = tg_pattern_word(seed, w);
		size_t off = w * 8;
		unsigned int k;

		/* The buffer start is not always 8-byte aligned (1 B, +3). */
		if (off + 8 <= len && ((uintptr_t)(buf + off) & 7) == 0) {
			*(uint64_t *)(buf + off) = v;
			continue;
		}
		for (k = 0; k < 8 && off + k < len; k++)
			buf[off + k] = (uint8_t)(v >> (8 * k));
	}
}

__global__ void
gk_check_kernel(const uint8_t *buf, size_t len, uint64_t seed,
		unsigned long long *bad, unsigned long long *first)
{
	size_t words = (len + 7) / 8;
	size_t w;

	for (w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words;
			w += (size_t)gridDim.x * blockDim.x) {
		uint64_t v = tg_pattern_word(seed, w);
		size_t off = w * 8;
		unsigned int k, nbad = 0;

		for (k = 0; k < 8 && off + k < len; k++) {
			if (buf[off + k] != (uint8_t)(v >> (8 * k))) {
				if (nbad++ == 0)
					atomicMin(first, (unsigned long long)(off + k));
			}
		}
		if (nbad != 0)
			atomicAdd(bad, (unsigned long long)nbad);
	}
}

extern "C" int
gk_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	cudaError_t err;

	gk_fill_kernel<<<gk_blocks((len + 7) / 8), GK_THREADS>>>(
			(uint8_t *)buf, len, seed);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	return cudaStreamSynchronize(0);
}

extern "C" int
gk_pattern_check(const void *buf, size_t len, uint64_t seed,
		uint64_t *bad, uint64_t *first_bad)
{
	unsigned long long init[2] = { 0, ~0ULL };
	unsigned long long out[2];
	unsigned long long *counters = NULL;
	cudaError_t err, err2;

	err = cudaMalloc((void **)&counters, sizeof(init));
	if (err != cudaSuccess)
		return err;
	err = cudaMemcpy(counters, init, sizeof(init), cudaMemcpyHostToDevice);
	if (err != cudaSuccess)
		goto out;
	gk_check_kernel<<<gk_blocks((len + 7) / 8), GK_THREADS>>>(
			(const uint8_t *)buf, len, seed, &counters[0], &counters[1]);
	err = cudaGetLastError();
	if (err != cudaSuccess)
		goto out;
	/* cudaMemcpy on the legacy stream waits for the kernel */
	err = cudaMemcpy(out, counters, sizeof(out), cudaMemcpyDeviceToHost);
	if (err != cudaSuccess)
		goto out;
	*bad = out[0];
	*first_bad = out[1];
out:
	err2 = cudaFree(counters);
	return err != cudaSuccess ? err : err2;
}
