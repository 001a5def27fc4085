/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The benchmarks that call the CUDA driver API directly (bench-driver,
 * bench-gpudma) do it through the driver's loader (cuda_api.h, linked in
 * as the plugins link it): the entry points and ABI versions the driver
 * is measured against are the driver's own, and GPU_CUDA_LIBCUDA points
 * the benchmark and the plugins at one library (the fake in CI). The
 * loader logs through the log type of the program linking it
 * (cuda_log.h): this is the benchmarks', at the plugins' level.
 */

#include <rte_log.h>

#include "cuda_log.h"

RTE_LOG_REGISTER(gpu_cuda_logtype, bench.cuda, NOTICE);
