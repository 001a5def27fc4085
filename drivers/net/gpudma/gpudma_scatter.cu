/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One burst's copies as one kernel: a warp a descriptor, 16-byte loads
 * where both ends allow them. For small frames this costs one launch a
 * burst where the copy engine takes an operation a segment. The source
 * is the port's pinned frame store read over PCIe.
 */

#include <stdint.h>

#include "gpudma_scatter.h"

extern "C" __global__ void
gpudma_scatter(const struct gpudma_scatter_desc *d, unsigned int n)
{
	const unsigned int lane = threadIdx.x & 31u;
	const unsigned int nwarps = gridDim.x * blockDim.x / 32u;
	unsigned int i;

	for (i = (blockIdx.x * blockDim.x + threadIdx.x) / 32u; i < n;
			i += nwarps) {
		const uint8_t *s = (const uint8_t *)d[i].src;
		uint8_t *t = (uint8_t *)d[i].dst;
		const unsigned int len = d[i].len;
		unsigned int j = 0;

		if ((((uintptr_t)s | (uintptr_t)t) & 15u) == 0) {
			const unsigned int n16 = len / 16u;

			for (j = lane; j < n16; j += 32u)
				((uint4 *)t)[j] = ((const uint4 *)s)[j];
			j = n16 * 16u;
		}
		for (j += lane; j < len; j += 32u)
			t[j] = s[j];
	}
}
