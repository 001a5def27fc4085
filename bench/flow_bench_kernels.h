/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU side of bench-flow-export (flow_bench_kernels.cu). */
#ifndef BENCH_FLOW_BENCH_KERNELS_H
#define BENCH_FLOW_BENCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpurx_flow_table;

/* CUDA devices usable (0 without a GPU or driver). */
int fbk_gpu_count(void);

/* n bytes of GPU memory at d zeroed. 0 or a cudaError_t value. */
int fbk_memset(void *d, size_t n);

/*
 * Queue n packets from index first: packet i belongs to flow base +
 * (hash(i) mod flows) (flow_stress_key()), wire bytes 64..1500, time ts
 * (every packet of a chunk, as an RX burst shares its time). 0 or a
 * cudaError_t value.
 */
int fbk_updates(struct gpurx_flow_table *d_ft, uint64_t first, uint32_t n,
		uint64_t base, uint64_t flows, uint64_t ts, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_FLOW_BENCH_KERNELS_H */
