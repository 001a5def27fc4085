/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime for the project's C code, besides kernel launches:
 * the device the runtime drives, streams, copies and the device
 * attributes a persistent kernel depends on. Memory itself is taken
 * through gpudev. C sources need no CUDA header for these: streams are
 * void pointers, errors ints.
 *
 * All return 0 or a cudaError_t value; gpucuda_strerror() names it.
 */
#ifndef GPUCUDA_H
#define GPUCUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *gpucuda_strerror(int err);
/* err is cudaErrorNotReady: the work waited for still runs. */
int gpucuda_still_running(int err);

/* Makes the GPU at PCI address pci_bus_id the calling thread's current
 * device; its runtime ordinal in *ordinal unless ordinal is NULL. */
int gpucuda_select(const char *pci_bus_id, int *ordinal);

/* Blocking copy; either side host or GPU memory. */
int gpucuda_copy(void *dst, const void *src, size_t n);

/* A non-blocking stream: it does not serialize with the legacy default
 * stream, so work on it never waits for a persistent kernel. */
int gpucuda_stream_create(void **s);
/* NULL is a no-op. */
int gpucuda_stream_destroy(void *s);
int gpucuda_copy_async(void *dst, const void *src, size_t n, void *s);
int gpucuda_stream_sync(void *s);
/* 0: idle, -1: still running, else the error. */
int gpucuda_stream_busy(void *s);

/* What a persistent kernel needs of the current device: *exec_timeout
 * (kernels killed after a while), *coop (cooperative launch). */
int gpucuda_props(int *exec_timeout, int *coop);

#ifdef __cplusplus
}
#endif

#endif /* GPUCUDA_H */
