/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_LOG_H
#define GPU_CUDA_LOG_H

#include <rte_log.h>

/* Defined by each plugin that links the CUDA loader (cuda_api.h). */
extern int gpu_cuda_logtype;

#define CUDA_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, gpu_cuda_logtype, \
		"gpu_cuda: " fmt "\n", ## __VA_ARGS__)

#endif /* GPU_CUDA_LOG_H */
