/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_CHILD_ATTACH_H
#define TG_CHILD_ATTACH_H

#include <stdint.h>

/*
 * gpudev 22.11 gives child devices no operations; the CUDA driver lends
 * its own through rte_pmd_gpu_cuda_child_attach() (rte_pmd_gpu_cuda.h).
 * The driver is a plugin EAL loaded privately, so the symbol is looked up
 * in the loaded plugin. Returns the driver's result, or -ENOENT when no
 * loaded plugin exports it.
 */
int tg_child_attach(int16_t child_dev_id);

#endif /* TG_CHILD_ATTACH_H */
