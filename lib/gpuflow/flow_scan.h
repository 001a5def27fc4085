/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C entry points of the flow table's GPU side (flow_scan.cu):
 * the scan that ends due flows into the export ring while the packet
 * kernels keep updating the table (flow_table.h).
 */
#ifndef GPURX_FLOW_KERNELS_H
#define GPURX_FLOW_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpurx_flow_table;
struct gpurx_flow_ring;

/*
 * Queue on stream (a cudaStream_t) a scan of every slot of d_ft (device
 * memory, `capacity` slots) ending the flows due at `now`. Returns 0 or a
 * cudaError_t value.
 */
int gpurx_flow_cuda_scan(struct gpurx_flow_table *d_ft, uint32_t capacity,
		uint64_t now, void *stream);

/*
 * The consumer of a ring whose records are in GPU memory
 * (gpurx_flow_ring_init_dev()): copy the records producers reserved from
 * position tail on (up to the ring's copy_cap; d_head: the table's
 * ring_head in GPU memory) into the ring's host copies, on stream (a
 * non-blocking cudaStream_t: it runs beside the packet kernels; only it
 * is waited for), then gpurx_flow_ring_peek() takes those published.
 * Returns 0 or a cudaError_t value (the copies then hold nothing).
 */
int gpurx_flow_cuda_pull(struct gpurx_flow_ring *r, const uint64_t *d_head,
		uint64_t tail, void *stream);

/* The calling thread drives CUDA device `ordinal` (the runtime keeps the
 * current device per thread). 0 or a cudaError_t value. */
int gpurx_flow_cuda_use_device(int ordinal);

/*
 * The ring slack for flow tables the current device updates
 * (gpurx_flow_table_set_ring_slack()): every reserving warp takes at most
 * 32 positions, so the threads the device can hold at once (its SMs
 * times their most resident threads). 0 or a cudaError_t value.
 */
int gpurx_flow_cuda_ring_slack(uint64_t *slack);

/* A non-blocking stream of the lowest priority: scans yield to the packet
 * kernels. Loads the scan kernel too: call it before a kernel that runs
 * until told to quit starts. 0 or a cudaError_t value. */
int gpurx_flow_cuda_stream(void **s);

/*
 * For the tests and benchmarks (dpdk-gpu-rx takes its memory through
 * gpudev): n bytes of host memory the GPU reaches at the same address
 * (mapped, pinned: an export ring's header and host copies), and of GPU
 * memory (dev_zalloc: zeroed, an export ring's records; it waits for the
 * whole device, so only before any kernel runs).
 */
int gpurx_flow_cuda_host_alloc(void **p, size_t n);
int gpurx_flow_cuda_host_free(void *p);
int gpurx_flow_cuda_dev_alloc(void **p, size_t n);
int gpurx_flow_cuda_dev_zalloc(void **p, size_t n);
int gpurx_flow_cuda_dev_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_FLOW_KERNELS_H */
