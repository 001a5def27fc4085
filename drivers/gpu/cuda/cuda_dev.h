/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_DEV_H
#define GPU_CUDA_DEV_H

/*
 * One GPU of this driver as gpudev sees it (cuda_dev.c): what probe sets up
 * beside the CUDA context, the ops table, and dev_close. Probe is the only
 * part of the driver above it.
 */

#include <gpudev_driver.h>

struct gpu_cuda_ctx;

/*
 * Sets up what every context of this driver has beside its CUDA context
 * (memory table, stream, registration cache); c->ctx, c->cu_dev, c->name
 * and the devarg fields must be set. Returns 0 or a negative errno, having
 * undone its part.
 */
int gpu_cuda_dev_setup(struct gpu_cuda_ctx *c);

/* Undoes gpu_cuda_dev_setup (dev_close, failed probe). Returns 0 or the
 * first error. */
int gpu_cuda_dev_teardown(struct gpu_cuda_ctx *c);

/* Fills the operations every device of this driver has. */
void gpu_cuda_set_ops(struct rte_gpu *dev);

/* dev_close: releases what the context still holds (logging each leak),
 * then the context itself. Also how a device is known to be this
 * driver's (its ops.dev_close). */
int gpu_cuda_dev_close(struct rte_gpu *dev);

/* In the primary: a closed GPU is no longer offered to secondary processes
 * started later (gpudev leaves a released device's name in its shared
 * data, where rte_gpu_attach would still find it). */
void gpu_cuda_mp_forget(const char *name);

#endif /* GPU_CUDA_DEV_H */
