/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet builder and field engine run by CUDA kernels, for the GPU
 * test that compares their bytes with the CPU build of the same headers.
 * Test-only; synchronous; all pointers are host memory.
 */
#ifndef GPURX_PKT_BUILD_KERNELS_H
#define GPURX_PKT_BUILD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpugen_fe_prog;
struct gpugen_pkt_spec;

/*
 * Packets first .. first + n - 1 of the stream (template tmpl, program
 * prog), packet k at out + k * stride. Returns 0, or -1 with the CUDA
 * error in why.
 */
int gpugen_pb_gpu_stream(const struct gpugen_fe_prog *prog, const uint8_t *tmpl,
		uint64_t first, uint32_t n, uint32_t stride, uint64_t tx_ns,
		uint8_t *out, char *why, size_t why_len);

/* Frame k built from specs[k] at out + k * stride, its length in lens[k]. */
int gpugen_pb_gpu_build(const struct gpugen_pkt_spec *specs, uint32_t n,
		uint32_t stride, uint8_t *out, uint32_t *lens, char *why,
		size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_PKT_BUILD_KERNELS_H */
