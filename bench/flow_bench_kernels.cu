/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-flow-export's packets on the GPU (flow_bench.h): the flow-table
 * update of dpdk-gpu-rx's kernels (flow_table.h), a thread per packet.
 */

#include <cuda_runtime.h>

#include "flow_bench_kernels.h"
#include "flow_bench.h"

__global__ void
fbk_update_kernel(struct gpurx_flow_table *ft, uint64_t first, uint32_t n,
		uint64_t base, uint64_t flows, uint64_t ts)
{
	for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n;
			j += gridDim.x * blockDim.x)
		flow_bench_update(ft, first + j, base, flows, ts);
}

extern "C" int
fbk_updates(struct gpurx_flow_table *d_ft, uint64_t first, uint32_t n,
		uint64_t base, uint64_t flows, uint64_t ts, void *stream)
{
	uint32_t blocks = (n + 255) / 256;

	if (blocks > 4096)
		blocks = 4096;
	fbk_update_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(d_ft, first,
		n, base, flows, ts);
	return (int)cudaGetLastError();
}

extern "C" int
fbk_gpu_count(void)
{
	int n = 0;

	return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

extern "C" int
fbk_memset(void *d, size_t n)
{
	cudaError_t e = cudaMemset(d, 0, n);

	return (int)(e == cudaSuccess ? cudaDeviceSynchronize() : e);
}
