/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes: gpudev communication lists between the RX lcores and the
 * persistent CUDA kernel (or a kernel per burst), and the mbuf pool in
 * GPU memory for --mem gpu.
 */
#ifndef GPURX_APP_GPU_PATH_H
#define GPURX_APP_GPU_PATH_H

#include <stdint.h>

struct gpurx_app;

/*
 * The GPU of each RX queue (--gpus), each one's gpudev device and CUDA
 * ordinal. Returns 0, or -1 after printing why (no GPU probed, a bad
 * --gpus list, CUDA runtime unusable).
 */
int gpurx_gpu_init(struct gpurx_app *a);

/* The gpudev id of the kth GPU of the run (a->gpus[k]). */
int16_t gpurx_gpu_id(const struct gpurx_app *a, uint16_t k);

/*
 * --mem gpu: mbuf data buffers in GPU memory, DMA-mapped for the port.
 * 0; 1 when the port refused the mapping and --mem is auto (said why,
 * nothing kept: the caller goes on in host memory); -1 after saying why.
 */
int gpurx_gpu_create_pool(struct gpurx_app *a);

/*
 * After the port started: rings, buffers, registration of the pool
 * (host-mapped), flow table. 0 or -1.
 */
int gpurx_gpu_setup(struct gpurx_app *a);

/*
 * The persistent kernel (or, --launch-per-burst, the dispatch state the
 * item kernels read). Whatever else runs kernels beside the persistent
 * one (the flow export's scans) must have loaded them before this: with
 * CUDA's lazy loading (the default since CUDA 12.2) the first launch of
 * a kernel not yet loaded may wait for the context to go idle, which a
 * kernel that runs until told to quit never does. 0 or -1.
 */
int gpurx_gpu_launch(struct gpurx_app *a);

/* RX lcore body for one queue (arg: queue index). */
int gpurx_rx_gpu_lcore(void *arg);

/*
 * After every RX lcore returned (their items drained): tell the kernels
 * to quit, wait for them, copy the first GPU's flow table into a->ft and
 * the others' beside it. 0 or -1.
 */
int gpurx_gpu_stop(struct gpurx_app *a);

/* After gpurx_gpu_stop() and the flow export's last records (which take
 * each GPU's table as it is): the other GPUs' flows merged into a->ft,
 * for the summary. */
void gpurx_gpu_merge_flows(struct gpurx_app *a);

/*
 * Main lcore, every loop: at most every GPURX_WATCH_PERIOD_MS (at once
 * when a queue found its ring full, or with force) looks at the kernel's
 * stream and each queue's progress. NULL while all is well; else the
 * exit reason, after printing the CUDA error or the stalled queue and
 * what each queue had in flight; gpurx_gpu_stop() then fails.
 */
const char *gpurx_gpu_watch(struct gpurx_app *a, int force);

/*
 * After gpurx_gpu_stop(): 1 (said why) when the persistent kernel did
 * not quit and may still poll rings and read packets: the caller must
 * then free none of it and skip rte_eal_cleanup(). Else 0.
 */
int gpurx_gpu_kernel_held(const struct gpurx_app *a);

struct gpurx_item_stats;
/* Ring item latency and GPU time per item, over the run so far. */
void gpurx_gpu_item_stats(const struct gpurx_app *a,
		struct gpurx_item_stats *st);

/* Every --mem gpu pool's DMA mapping undone: after the port stops, before
 * it closes (gpuapp_ext_pool_unmap()). Nothing without one. */
void gpurx_gpu_port_unmap(struct gpurx_app *a);

/* Free everything; after the port is closed. */
void gpurx_gpu_teardown(struct gpurx_app *a);

#endif /* GPURX_APP_GPU_PATH_H */
