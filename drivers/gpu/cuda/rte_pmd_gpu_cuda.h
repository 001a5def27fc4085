/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef RTE_PMD_GPU_CUDA_H
#define RTE_PMD_GPU_CUDA_H

/**
 * @file
 * Functions of the CUDA gpudev driver beyond the gpudev API.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Gives a device made by rte_gpu_add_child() the operations of its CUDA
 * parent, working in the CUDA context passed there as child_context.
 *
 * gpudev (DPDK 22.11) creates child devices without telling the parent's
 * driver, and with no operations: call this right after rte_gpu_add_child().
 * The symbol is exported by librte_gpu_cuda.so; find it with
 * dlsym(dlopen(<plugin path>, RTLD_NOW | RTLD_NOLOAD), ...) or link with the
 * plugin.
 *
 * @return 0; -ENODEV (no such GPU), -EINVAL (not a child of a CUDA GPU, or
 *   the context is not a usable CUDA context), -EXDEV (the context belongs to
 *   another GPU), -EEXIST (already attached), -ENOMEM.
 */
__attribute__((visibility("default")))
int rte_pmd_gpu_cuda_child_attach(int16_t child_dev_id);

/**
 * The driver's name and version and the DPDK version it was built for,
 * e.g. "librte_gpu_cuda 0.1.0 (DPDK 22.11.11)": for start-up lines, and
 * for programs that link the driver instead of loading it with EAL -d.
 */
__attribute__((visibility("default")))
const char *rte_pmd_gpu_cuda_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_GPU_CUDA_H */
