/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU side of test_gpu_flow.c (flow_stress_gpu.cu). */
#ifndef GPURX_FLOW_STRESS_GPU_H
#define GPURX_FLOW_STRESS_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpurx_flow_table;

/* 0 or a cudaError_t value (gpucuda_strerror() names it; memory:
 * flow_scan.h, streams and copies: gpucuda.h). */
/* Packets first .. first + n - 1 of the stress stream (flow_stress.h),
 * timestamp = packet index, on RX queue 0; overflowed[i - first] = 1 for
 * those that went to the overflow counters. */
int fsg_updates(struct gpurx_flow_table *d_ft, uint64_t first, uint32_t n,
		uint32_t churn, uint32_t window, uint8_t *d_overflowed,
		void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_FLOW_STRESS_GPU_H */
