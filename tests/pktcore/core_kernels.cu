/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>

#include <cuda_runtime.h>

#include "flow_classify.h"
#include "core_kernels.h"

/* One thread per packet, grid-stride so any batch size fits any grid. */
__global__ void
gpurx_core_classify_kernel(const uint8_t *__restrict__ pkts,
		const uint32_t *__restrict__ offs,
		const uint32_t *__restrict__ caplens,
		const uint32_t *__restrict__ wirelens,
		const uint64_t *__restrict__ ts, uint32_t n,
		const uint32_t *__restrict__ n0, const uint8_t *__restrict__ pkts1,
		const uint32_t *__restrict__ offs1,
		const struct bpf_vm_insn *__restrict__ prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *__restrict__ verdicts,
		uint8_t *__restrict__ malformed)
{
	uint32_t stride = blockDim.x * gridDim.x;

	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
			i += stride) {
		uint8_t mal;

		if (n0 != NULL)
			verdicts[i] = gpurx_classify_pkt_view(gpurx_view_split(
				pkts + offs[i], n0[i], pkts1 + offs1[i]),
				caplens[i], wirelens[i], ts[i], prog, prog_len,
				ft, &mal);
		else
			verdicts[i] = gpurx_classify_pkt(pkts + offs[i],
				caplens[i], wirelens[i], ts[i], prog, prog_len,
				ft, &mal);
		if (malformed != NULL)
			malformed[i] = mal;
	}
}

static void
set_why(char *why, size_t len, const char *what, cudaError_t err)
{
	if (why != NULL && len > 0)
		snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorString(err),
			cudaGetErrorName(err));
}

extern "C" int
gpurx_core_gpu_count(char *why, size_t why_len)
{
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	if (err != cudaSuccess) {
		set_why(why, why_len, "cudaGetDeviceCount", err);
		return -1;
	}
	if (n == 0 && why != NULL && why_len > 0)
		snprintf(why, why_len, "cudaGetDeviceCount: 0 devices");
	return n;
}

extern "C" int
gpurx_core_classify_launch(const struct gpurx_core_batch *b,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		uint8_t *malformed, void *stream)
{
	const uint32_t threads = 256;
	uint32_t blocks;

	if (b->n == 0)
		return 0;
	/* Enough blocks to fill the GPU; the loop covers the rest. */
	blocks = (b->n + threads - 1) / threads;
	if (blocks > 4096)
		blocks = 4096;
	gpurx_core_classify_kernel<<<blocks, threads, 0,
		(cudaStream_t)stream>>>(b->pkts, b->offs, b->caplens,
		b->wirelens, b->ts, b->n, b->n0, b->pkts1, b->offs1, prog,
		prog_len, ft, verdicts, malformed);
	return (int)cudaGetLastError();
}

/* Device copies made by gpurx_core_classify_host(), freed in one place. */
struct dev_bufs {
	void *p[12];
};

static cudaError_t
dev_copy(struct dev_bufs *d, int slot, const void *src, size_t len)
{
	cudaError_t err = cudaMalloc(&d->p[slot], len ? len : 1);

	if (err == cudaSuccess && src != NULL && len > 0)
		err = cudaMemcpy(d->p[slot], src, len, cudaMemcpyHostToDevice);
	return err;
}

extern "C" int
gpurx_core_classify_host(const struct gpurx_core_batch *b,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		uint8_t *malformed, char *why, size_t why_len)
{
	struct dev_bufs d = {};
	struct gpurx_core_batch db = *b;
	size_t ft_bytes = gpurx_flow_table_bytes(ft->capacity);
	size_t n = b->n;
	const char *what = "cudaMalloc/cudaMemcpy";
	cudaError_t err;
	int rc = -1;

	if ((err = dev_copy(&d, 0, b->pkts, b->pkts_len)) ||
			(err = dev_copy(&d, 1, b->offs, n * 4)) ||
			(err = dev_copy(&d, 2, b->caplens, n * 4)) ||
			(err = dev_copy(&d, 3, b->wirelens, n * 4)) ||
			(err = dev_copy(&d, 4, b->ts, n * 8)) ||
			(err = dev_copy(&d, 5, prog, prog_len * sizeof(*prog))) ||
			(err = dev_copy(&d, 6, ft, ft_bytes)) ||
			(err = dev_copy(&d, 7, NULL, n * 4)) ||
			(err = dev_copy(&d, 8, NULL, n)) ||
			(b->n0 != NULL &&
			 ((err = dev_copy(&d, 9, b->n0, n * 4)) ||
			  (err = dev_copy(&d, 10, b->pkts1, b->pkts1_len)) ||
			  (err = dev_copy(&d, 11, b->offs1, n * 4)))))
		goto out;
	db.pkts = (const uint8_t *)d.p[0];
	db.offs = (const uint32_t *)d.p[1];
	db.caplens = (const uint32_t *)d.p[2];
	db.wirelens = (const uint32_t *)d.p[3];
	db.ts = (const uint64_t *)d.p[4];
	if (b->n0 != NULL) {
		db.n0 = (const uint32_t *)d.p[9];
		db.pkts1 = (const uint8_t *)d.p[10];
		db.offs1 = (const uint32_t *)d.p[11];
	}
	what = "kernel launch";
	err = (cudaError_t)gpurx_core_classify_launch(&db,
		(const struct bpf_vm_insn *)d.p[5], prog_len,
		(struct gpurx_flow_table *)d.p[6], (uint32_t *)d.p[7],
		(uint8_t *)d.p[8], NULL);
	if (err != cudaSuccess)
		goto out;
	what = "kernel";
	if ((err = cudaDeviceSynchronize()) != cudaSuccess)
		goto out;
	what = "cudaMemcpy back";
	if ((err = cudaMemcpy(ft, d.p[6], ft_bytes, cudaMemcpyDeviceToHost)) ||
			(err = cudaMemcpy(verdicts, d.p[7], n * 4,
				cudaMemcpyDeviceToHost)) ||
			(malformed != NULL && (err = cudaMemcpy(malformed,
				d.p[8], n, cudaMemcpyDeviceToHost))))
		goto out;
	rc = 0;
out:
	if (rc != 0)
		set_why(why, why_len, what, err);
	for (int i = 0; i < 12; i++)
		cudaFree(d.p[i]);
	return rc;
}
