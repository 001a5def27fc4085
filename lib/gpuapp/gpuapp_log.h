/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/gpuapp's own diagnostics: rte_log on lib.gpuapp (stderr, no prefix
 * in DPDK 22.11, before rte_eal_init() too). Private to the library.
 */
#ifndef GPUAPP_LOG_H
#define GPUAPP_LOG_H

#include <rte_log.h>

extern int gpuapp_logtype;

#define GPUAPP_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)gpuapp_logtype, __VA_ARGS__)

#endif /* GPUAPP_LOG_H */
