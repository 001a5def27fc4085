/* SPDX-License-Identifier: BSD-3-Clause */

#include "gpuapp_log.h"

/* The library's diagnostics: --log-level=lib.gpuapp:LEVEL. In a file of
 * its own, so that a test built from one of the library's sources links
 * it without the rest. */
RTE_LOG_REGISTER(gpuapp_logtype, lib.gpuapp, INFO);
