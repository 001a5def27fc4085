/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_GPU_KERNELS_H
#define TG_GPU_KERNELS_H

/*
 * C view of the CUDA kernels. Every launcher returns 0 or a cudaError_t
 * value (gpucuda_strerror() names it) and runs in the CUDA context current on
 * the calling thread, so a pushed child context is honoured.
 */

#include <stddef.h>
#include <stdint.h>

#include "gpucomm_kernel.h"
#include "gpucuda.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Write tg_pattern over buf (device or registered host memory), then wait. */
int gk_pattern_fill(void *buf, size_t len, uint64_t seed);

/* Count on the GPU the bytes of buf that differ from tg_pattern. */
int gk_pattern_check(const void *buf, size_t len, uint64_t seed,
		uint64_t *bad, uint64_t *first_bad);

enum gk_item_state {
	GK_ITEM_PENDING = 0,
	GK_ITEM_DONE = 1,
};

/* What the ring kernel found in one item, written before its DONE. */
struct gk_item_report {
	uint64_t checksum;
	uint64_t bytes;
	uint64_t seq;		/* the ring's item number it was handed */
	uint32_t num_pkts;
	uint32_t state; /* enum gk_item_state */
};

/* Checksum of one packet byte, summed over a list item (order-free). */
static inline TG_HOST_DEVICE uint64_t
gk_checksum_term(uint32_t pkt_idx, uint64_t byte_idx, uint8_t byte)
{
	return ((uint64_t)byte + 1) *
		(((uint64_t)pkt_idx << 16) + byte_idx + 1);
}

/*
 * The ring library's kernels (lib/gpucomm) with a per-item body that
 * checksums every packet of the item into reports[seq % n_reports]
 * (mapped host memory, written before DONE). kp is set up by
 * gpucomm_kernel_setup().
 */
struct gk_ring;

int gk_ring_create(uint32_t n_reports, struct gk_ring **ring);
/* Reports live in mapped host memory the kernel updates as it goes. */
const volatile struct gk_item_report *gk_ring_reports(const struct gk_ring *ring);
/* The persistent kernel, until the quit flag of kp is raised (kp->bpq
 * lowered to what fits). */
int gk_ring_start(struct gk_ring *ring, struct gpucomm_kparams *kp);
/* After the quit flag: waits up to timeout_ms for the kernel to end;
 * cudaErrorNotReady when it still runs (then the lists it reads must not
 * be freed). */
int gk_ring_wait(struct gk_ring *ring, uint32_t timeout_ms);
/* The same body in a kernel for item idx (sequence number seq) of ring
 * 0, launched on the ring's stream (no persistent kernel on it) and
 * waited for. */
int gk_ring_launch_item(struct gk_ring *ring, const struct gpucomm_kparams *kp,
		uint32_t idx, uint64_t seq);
void gk_ring_destroy(struct gk_ring *ring);

#ifdef __cplusplus
}
#endif

#endif /* TG_GPU_KERNELS_H */
