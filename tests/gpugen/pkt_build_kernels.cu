/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernels over gpugen_build.h and gpugen_fe.h: one thread per packet, as the
 * generator will run them, so the test sees the device build of exactly
 * the code the CPU reference runs.
 */
#include <stdio.h>

#include <cuda_runtime.h>

#include "gpugen_build.h"
#include "gpugen_fe.h"
#include "pkt_build_kernels.h"

static __global__ void
pb_stream_kernel(const struct gpugen_fe_prog *prog, const uint8_t *tmpl,
		uint64_t first, uint32_t n, uint32_t stride, uint64_t tx_ns,
		uint8_t *out)
{
	for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
			k += gridDim.x * blockDim.x)
		gpugen_fe_make(prog, tmpl, out + (size_t)k * stride, first + k,
			tx_ns);
}

static __global__ void
pb_build_kernel(const struct gpugen_pkt_spec *specs, uint32_t n,
		uint32_t stride, uint8_t *out, uint32_t *lens)
{
	struct gpugen_pkt_layout lay;

	for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
			k += gridDim.x * blockDim.x)
		lens[k] = gpugen_pkt_build(&specs[k], out + (size_t)k * stride,
			stride, &lay);
}

static void
set_why(char *why, size_t why_len, const char *what, cudaError_t err)
{
	if (why != NULL && why_len > 0)
		snprintf(why, why_len, "%s: %s", what, cudaGetErrorString(err));
}

/* Device buffers of one call, freed in one place. */
struct pb_bufs {
	void *p[4];
};

static cudaError_t
pb_alloc(struct pb_bufs *d, int slot, const void *src, size_t len)
{
	cudaError_t err = cudaMalloc(&d->p[slot], len ? len : 1);

	if (err == cudaSuccess && src != NULL && len > 0)
		err = cudaMemcpy(d->p[slot], src, len, cudaMemcpyHostToDevice);
	return err;
}

static void
pb_free(struct pb_bufs *d)
{
	for (int i = 0; i < 4; i++)
		if (d->p[i] != NULL)
			(void)cudaFree(d->p[i]);	/* nothing to do if it fails */
}

static uint32_t
pb_blocks(uint32_t n)
{
	uint32_t b = (n + 255) / 256;

	return b == 0 ? 1 : b > 4096 ? 4096 : b;
}

extern "C" int
gpugen_pb_gpu_stream(const struct gpugen_fe_prog *prog, const uint8_t *tmpl,
		uint64_t first, uint32_t n, uint32_t stride, uint64_t tx_ns,
		uint8_t *out, char *why, size_t why_len)
{
	struct pb_bufs d = {};
	size_t out_len = (size_t)n * stride;
	const char *what = "cudaMalloc/cudaMemcpy";
	cudaError_t err;

	if ((err = pb_alloc(&d, 0, prog, sizeof(*prog))) ||
			(err = pb_alloc(&d, 1, tmpl, prog->tmpl_len)) ||
			(err = pb_alloc(&d, 2, NULL, out_len)))
		goto out;
	pb_stream_kernel<<<pb_blocks(n), 256>>>(
		(const struct gpugen_fe_prog *)d.p[0], (const uint8_t *)d.p[1],
		first, n, stride, tx_ns, (uint8_t *)d.p[2]);
	what = "pb_stream_kernel";
	if ((err = cudaGetLastError()) || (err = cudaDeviceSynchronize()))
		goto out;
	what = "cudaMemcpy out";
	err = cudaMemcpy(out, d.p[2], out_len, cudaMemcpyDeviceToHost);
out:
	if (err != cudaSuccess)
		set_why(why, why_len, what, err);
	pb_free(&d);
	return err == cudaSuccess ? 0 : -1;
}

extern "C" int
gpugen_pb_gpu_build(const struct gpugen_pkt_spec *specs, uint32_t n,
		uint32_t stride, uint8_t *out, uint32_t *lens, char *why,
		size_t why_len)
{
	struct pb_bufs d = {};
	size_t out_len = (size_t)n * stride;
	const char *what = "cudaMalloc/cudaMemcpy";
	cudaError_t err;

	if ((err = pb_alloc(&d, 0, specs, sizeof(*specs) * n)) ||
			(err = pb_alloc(&d, 1, NULL, out_len)) ||
			(err = pb_alloc(&d, 2, NULL, sizeof(*lens) * n)))
		goto out;
	pb_build_kernel<<<pb_blocks(n), 256>>>(
		(const struct gpugen_pkt_spec *)d.p[0], n, stride,
		(uint8_t *)d.p[1], (uint32_t *)d.p[2]);
	what = "pb_build_kernel";
	if ((err = cudaGetLastError()) || (err = cudaDeviceSynchronize()))
		goto out;
	what = "cudaMemcpy out";
	if ((err = cudaMemcpy(out, d.p[1], out_len, cudaMemcpyDeviceToHost)))
		goto out;
	err = cudaMemcpy(lens, d.p[2], sizeof(*lens) * n, cudaMemcpyDeviceToHost);
out:
	if (err != cudaSuccess)
		set_why(why, why_len, what, err);
	pb_free(&d);
	return err == cudaSuccess ? 0 : -1;
}
