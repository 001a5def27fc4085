/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow exporter's log (ipfix_writer.c's internal part, not an API):
 * the flow library's logtype, lib.gpuflow, registered by ipfix_writer.c
 * (RTE_LOG_REGISTER_DEFAULT), so that --log-level=lib.gpuflow:LEVEL
 * reaches every file of the exporter.
 */
#ifndef GPURX_IPFIX_LOG_H
#define GPURX_IPFIX_LOG_H

#include <stdint.h>

#include <rte_log.h>

extern int gpuflow_logtype;

#define FLOW_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)gpuflow_logtype, __VA_ARGS__)

#endif /* GPURX_IPFIX_LOG_H */
