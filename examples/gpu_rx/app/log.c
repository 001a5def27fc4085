/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-rx's logtype, in a file of its own: the unit tests that build
 * one source of the program (capture.c) link it too.
 */

#include <rte_log.h>

#include "log.h"

RTE_LOG_REGISTER(gpurx_logtype, app.gpu_rx, INFO);
