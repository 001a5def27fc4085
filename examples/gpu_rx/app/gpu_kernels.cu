/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx's kernels: the ring library's skeletons around the app's
 * body (gpu_body.cuh), as shipped, with no test hook.
 */

#include "gpu_body.cuh"

extern "C" int
gpurx_cuda_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, void *s)
{
	/* Built for split or not: the same kernel's two forms. */
	if (p->split)
		return gpucomm_launch_persistent(kp, gpurx_body<true>{ *p },
			(cudaStream_t)s);
	return gpucomm_launch_persistent(kp, gpurx_body<false>{ *p },
		(cudaStream_t)s);
}

extern "C" int
gpurx_cuda_launch_item(const struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, uint32_t q, uint32_t idx,
		unsigned long long seq, void *s)
{
	if (p->split)
		return gpucomm_launch_item(kp, gpurx_body<true>{ *p }, q, idx,
			seq, (cudaStream_t)s);
	return gpucomm_launch_item(kp, gpurx_body<false>{ *p }, q, idx, seq,
		(cudaStream_t)s);
}
