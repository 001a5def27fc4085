/* SPDX-License-Identifier: BSD-3-Clause */
/* libgpugen's own helpers, shared by its C files. */
#ifndef GPUGEN_PRIV_H
#define GPUGEN_PRIV_H

#include <stddef.h>

/* The message into err (when there is one); returns rc. */
int gpugen_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* GPUGEN_PRIV_H */
