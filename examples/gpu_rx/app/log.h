/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx's diagnostics: rte_log on its logtype, app.gpu_rx, so
 * --log-level=app.gpu_rx:LEVEL filters them. DPDK 22.11 writes them to
 * stderr with no prefix, as the fprintf calls before did; results asked
 * for (stats lines, the summary, --help) stay printf on stdout.
 */
#ifndef GPURX_APP_LOG_H
#define GPURX_APP_LOG_H

#include <rte_log.h>

extern int gpurx_logtype;

#define GPURX_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)gpurx_logtype, __VA_ARGS__)

#endif /* GPURX_APP_LOG_H */
