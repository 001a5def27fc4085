/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test variants' persistent kernel (dpdk-gpu-rx-test, and
 * dpdk-gpu-rx-standin's CPU thread): the app's kernel with the faults the
 * e2e runs inject, which the shipped one cannot carry (no field for them
 * in its parameters, no branch in its code). C and nvcc.
 */
#ifndef GPURX_TEST_KERNEL_FAULTS_H
#define GPURX_TEST_KERNEL_FAULTS_H

#include <stdint.h>

#include "gpu_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpurx_test_faults {
	/* 0, or queue 0's first worker faults (an illegal address) on
	 * taking its item of this sequence number, which is never DONE. */
	unsigned long long fault_at;
	/* Non-zero: the dispatchers never see the quit flag, so the kernel
	 * runs on until the process ends. */
	uint32_t hold;
};

/* gpurx_cuda_launch_persistent() with the faults of f. 0 or a
 * cudaError_t value. */
int gpurx_test_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, const struct gpurx_test_faults *f,
		void *s);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_TEST_KERNEL_FAULTS_H */
