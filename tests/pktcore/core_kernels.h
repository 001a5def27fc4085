/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C-callable entry points of the CUDA build of the core. The kernel here
 * exists to prove the shared headers compile and behave identically on
 * the device; the capture pipeline's own kernels build on the same
 * headers.
 */
#ifndef GPURX_KERNELS_CORE_H
#define GPURX_KERNELS_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_vm_insn;
struct gpurx_flow_table;

/*
 * A batch of packets packed back to back in one buffer; or, with n0 set,
 * each received with buffer split: its first n0[i] bytes at pkts +
 * offs[i], the rest at pkts1 + offs1[i], read through the two-run view.
 */
struct gpurx_core_batch {
	const uint8_t *pkts;
	size_t pkts_len;	/* bytes in pkts */
	const uint32_t *offs;	/* start of packet i in pkts */
	const uint32_t *caplens;
	const uint32_t *wirelens;
	const uint64_t *ts;	/* ns */
	uint32_t n;
	const uint32_t *n0;	/* NULL: every packet in one run */
	const uint8_t *pkts1;
	size_t pkts1_len;
	const uint32_t *offs1;
};

/*
 * Number of CUDA devices; 0 or -1 (no driver, no device) with the reason
 * in why.
 */
int gpurx_core_gpu_count(char *why, size_t why_len);

/*
 * Queue the classify kernel on stream (a cudaStream_t, NULL = default).
 * Every pointer, including those inside b, is device memory; prog must
 * have passed bpf_vm_validate(). Returns 0 or a cudaError_t value.
 */
int gpurx_core_classify_launch(const struct gpurx_core_batch *b,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		uint8_t *malformed, void *stream);

/*
 * Synchronous helper for tests: all pointers are host memory. ft (a
 * whole table, header and entries) is copied in, updated on the device
 * and copied back. Returns 0, or -1 with the CUDA error text in why.
 */
int gpurx_core_classify_host(const struct gpurx_core_batch *b,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		uint8_t *malformed, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_KERNELS_CORE_H */
