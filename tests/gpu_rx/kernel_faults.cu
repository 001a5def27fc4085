/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx-test's persistent kernel: the app's body (gpu_body.cuh,
 * the same source as the shipped kernels) in the ring library's skeleton
 * with a hook that injects the faults of struct gpurx_test_faults. Only
 * the persistent launch comes from here; every other kernel the test
 * variant runs is the shipped object.
 */

#include "gpu_body.cuh"
#include "kernel_faults.h"

/* The app's body with the faults beside its parameters: the kernel
 * parameter the hook reads them from. */
template <bool SPLIT>
struct gpurx_faulty_body : gpurx_body<SPLIT> {
	struct gpurx_test_faults f;
};

struct gpurx_fault_hook {
	template <class Body>
	static __device__ __forceinline__ bool
	hold(const Body &body)
	{
		return body.f.hold != 0;
	}

	/* Dies holding a taken item, as a fault would: thread 0 of queue
	 * 0's first worker, from item fault_at on. */
	template <class Body>
	static __device__ __forceinline__ void
	taken(const Body &body, const struct gpucomm_item_ctx &c)
	{
		if (body.f.fault_at != 0 && c.ring == 0 && c.slot == 0 &&
				c.seq >= body.f.fault_at && threadIdx.x == 0)
			*(volatile uint32_t *)(uintptr_t)8 = 1;
	}
};

extern "C" int
gpurx_test_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, const struct gpurx_test_faults *f,
		void *s)
{
	if (p->split)
		return gpucomm_launch_persistent<gpurx_faulty_body<true>,
			gpurx_fault_hook>(kp, gpurx_faulty_body<true>{ { *p }, *f },
			(cudaStream_t)s);
	return gpucomm_launch_persistent<gpurx_faulty_body<false>,
		gpurx_fault_hook>(kp, gpurx_faulty_body<false>{ { *p }, *f },
		(cudaStream_t)s);
}
