/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow-expiry stress stream updated by GPU threads: the same packets
 * (flow_stress.h) and the same table code (flow_table.h) as the CPU
 * stress test, a thread per packet.
 */

#include <cuda_runtime.h>

#include "flow_stress.h"
#include "flow_stress_gpu.h"

__global__ void
fsg_update_kernel(struct gpurx_flow_table *ft, uint64_t first, uint32_t n,
		uint32_t churn, uint32_t window, uint8_t *overflowed)
{
	for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n;
			j += gridDim.x * blockDim.x) {
		const uint64_t i = first + j;
		struct gpurx_flow_key k;
		uint32_t id;
		uint8_t flags;

		flow_stress_pkt(i, churn, window, &id, &flags);
		flow_stress_key(id, &k);
		overflowed[j] = gpurx_flow_update_pkt(ft, &k,
			flow_stress_bytes(id), i, flags, 0) != 0;
	}
}

extern "C" int
fsg_updates(struct gpurx_flow_table *d_ft, uint64_t first, uint32_t n,
		uint32_t churn, uint32_t window, uint8_t *d_overflowed,
		void *stream)
{
	uint32_t blocks = (n + 255) / 256;

	if (blocks > 2048)
		blocks = 2048;
	fsg_update_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(d_ft,
		first, n, churn, window, d_overflowed);
	return (int)cudaGetLastError();
}
