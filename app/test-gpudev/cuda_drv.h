/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_CUDA_DRV_H
#define TG_CUDA_DRV_H

/*
 * The few CUDA driver API calls the test needs (contexts, pointer
 * ownership), reached through the runtime's entry-point lookup so the
 * program links no libcuda and still starts where none is installed.
 * Functions return 0 or a CUresult; GD_UNAVAILABLE means the driver did
 * not provide the entry point.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GD_UNAVAILABLE (-1)

/* Resolve entry points; 0, GD_UNAVAILABLE or a cudaError_t (as negative). */
int gd_init(void);
const char *gd_strerror(int err);

/* New context on a CUDA device; the caller's current context is kept. */
int gd_ctx_create(int cuda_dev, uint64_t *ctx);
int gd_ctx_destroy(uint64_t ctx);
int gd_ctx_get_current(uint64_t *ctx);
int gd_ctx_push(uint64_t ctx);
int gd_ctx_pop(void);
/* CUDA device ordinal of a context. */
int gd_ctx_device(uint64_t ctx, int *cuda_dev);
/* Context that owns an allocation or a registration. */
int gd_ptr_ctx(const void *ptr, uint64_t *ctx);

#ifdef __cplusplus
}
#endif

#endif /* TG_CUDA_DRV_H */
