/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "cuda_drv.h"

/*
 * Own pointer types pinned to the ABI version we ask the driver for:
 * cuda.h maps the plain names to the newest variants (cuCtxCreate_v4,
 * cuCtxGetDevice with a context argument), which differ in arguments.
 */
typedef CUresult (*gd_ctx_create_v3020_t)(CUcontext *ctx, unsigned int flags,
		CUdevice dev);
typedef CUresult (*gd_ctx_create_v12050_t)(CUcontext *ctx,
		CUctxCreateParams *params, unsigned int flags, CUdevice dev);
typedef CUresult (*gd_ctx_t)(CUcontext ctx);
typedef CUresult (*gd_ctx_out_t)(CUcontext *ctx);
typedef CUresult (*gd_ctx_get_device_v2000_t)(CUdevice *dev);
typedef CUresult (*gd_device_get_v2000_t)(CUdevice *dev, int ordinal);
typedef CUresult (*gd_ptr_attr_v4000_t)(void *data, CUpointer_attribute attr,
		CUdeviceptr ptr);
typedef CUresult (*gd_error_string_v6000_t)(CUresult err, const char **str);

static struct {
	int resolved;
	gd_ctx_create_v3020_t ctx_create;
	gd_ctx_create_v12050_t ctx_create_params;
	gd_ctx_t ctx_destroy;
	gd_ctx_t ctx_push;
	gd_ctx_out_t ctx_pop;
	gd_ctx_out_t ctx_get_current;
	gd_ctx_get_device_v2000_t ctx_get_device;
	gd_device_get_v2000_t device_get;
	gd_ptr_attr_v4000_t ptr_attr;
	gd_error_string_v6000_t error_string;
} gd;

static int
gd_lookup(const char *name, unsigned int version, void **fn)
{
	enum cudaDriverEntryPointQueryResult q;
	cudaError_t err;

	*fn = NULL;
	err = cudaGetDriverEntryPointByVersion(name, fn, version,
			cudaEnableDefault, &q);
	if (err != cudaSuccess)
		return -(int)err;
	return (q == cudaDriverEntryPointSuccess && *fn != NULL) ?
		0 : GD_UNAVAILABLE;
}

extern "C" int
gd_init(void)
{
	int ret;

	if (gd.resolved)
		return 0;
	/* Optional: newer drivers may drop the old ABI, then use v4. */
	gd_lookup("cuCtxCreate", 3020, (void **)&gd.ctx_create);
	if (gd.ctx_create == NULL)
		gd_lookup("cuCtxCreate", 12050, (void **)&gd.ctx_create_params);
	if (gd.ctx_create == NULL && gd.ctx_create_params == NULL)
		return GD_UNAVAILABLE;
	if ((ret = gd_lookup("cuCtxDestroy", 4000, (void **)&gd.ctx_destroy)) != 0 ||
	    (ret = gd_lookup("cuCtxPushCurrent", 4000, (void **)&gd.ctx_push)) != 0 ||
	    (ret = gd_lookup("cuCtxPopCurrent", 4000, (void **)&gd.ctx_pop)) != 0 ||
	    (ret = gd_lookup("cuCtxGetCurrent", 4000, (void **)&gd.ctx_get_current)) != 0 ||
	    (ret = gd_lookup("cuCtxGetDevice", 2000, (void **)&gd.ctx_get_device)) != 0 ||
	    (ret = gd_lookup("cuDeviceGet", 2000, (void **)&gd.device_get)) != 0 ||
	    (ret = gd_lookup("cuPointerGetAttribute", 4000, (void **)&gd.ptr_attr)) != 0)
		return ret;
	/* Only for messages: a missing one just gives plainer text. */
	gd_lookup("cuGetErrorString", 6000, (void **)&gd.error_string);
	gd.resolved = 1;
	return 0;
}

extern "C" const char *
gd_strerror(int err)
{
	static __thread char buf[64];
	const char *s = NULL;

	if (err == GD_UNAVAILABLE)
		return "driver entry point not available";
	if (err < 0)
		return cudaGetErrorString((cudaError_t)-err);
	if (gd.error_string != NULL &&
			gd.error_string((CUresult)err, &s) == CUDA_SUCCESS && s != NULL)
		return s;
	snprintf(buf, sizeof(buf), "CUresult %d", err);
	return buf;
}

extern "C" int
gd_ctx_create(int cuda_dev, uint64_t *ctx)
{
	CUcontext c = NULL, popped = NULL;
	CUdevice dev;
	CUresult res;

	if (!gd.resolved)
		return GD_UNAVAILABLE;
	res = gd.device_get(&dev, cuda_dev);
	if (res != CUDA_SUCCESS)
		return res;
	if (gd.ctx_create != NULL) {
		res = gd.ctx_create(&c, 0, dev);
	} else {
		/* v4 wants one parameter block; an empty affinity list is none. */
		CUexecAffinityParam none[1];
		CUctxCreateParams params = { none, 0, NULL };

		res = gd.ctx_create_params(&c, &params, 0, dev);
	}
	if (res != CUDA_SUCCESS)
		return res;
	/* Creation makes the context current; give the caller's back. */
	res = gd.ctx_pop(&popped);
	if (res != CUDA_SUCCESS || popped != c) {
		gd.ctx_destroy(c);
		return res != CUDA_SUCCESS ? res : CUDA_ERROR_INVALID_CONTEXT;
	}
	*ctx = (uint64_t)(uintptr_t)c;
	return CUDA_SUCCESS;
}

extern "C" int
gd_ctx_destroy(uint64_t ctx)
{
	if (!gd.resolved)
		return GD_UNAVAILABLE;
	return gd.ctx_destroy((CUcontext)(uintptr_t)ctx);
}

extern "C" int
gd_ctx_get_current(uint64_t *ctx)
{
	CUcontext c = NULL;
	CUresult res;

	if (!gd.resolved)
		return GD_UNAVAILABLE;
	res = gd.ctx_get_current(&c);
	if (res == CUDA_SUCCESS)
		*ctx = (uint64_t)(uintptr_t)c;
	return res;
}

extern "C" int
gd_ctx_push(uint64_t ctx)
{
	if (!gd.resolved)
		return GD_UNAVAILABLE;
	return gd.ctx_push((CUcontext)(uintptr_t)ctx);
}

extern "C" int
gd_ctx_pop(void)
{
	CUcontext c;

	if (!gd.resolved)
		return GD_UNAVAILABLE;
	return gd.ctx_pop(&c);
}

extern "C" int
gd_ctx_device(uint64_t ctx, int *cuda_dev)
{
	CUcontext popped;
	CUdevice dev;
	CUresult res, res2;

	if (!gd.resolved)
		return GD_UNAVAILABLE;
	res = gd.ctx_push((CUcontext)(uintptr_t)ctx);
	if (res != CUDA_SUCCESS)
		return res;
	res = gd.ctx_get_device(&dev);
	res2 = gd.ctx_pop(&popped);
	if (res != CUDA_SUCCESS)
		return res;
	if (res2 != CUDA_SUCCESS)
		return res2;
	/* A CUdevice handle is the device ordinal. */
	*cuda_dev = (int)dev;
	return CUDA_SUCCESS;
}

extern "C" int
gd_ptr_ctx(const void *ptr, uint64_t *ctx)
{
	CUcontext c = NULL;
	CUresult res;

	if (!gd.resolved)
		return GD_UNAVAILABLE;
	res = gd.ptr_attr(&c, CU_POINTER_ATTRIBUTE_CONTEXT,
			(CUdeviceptr)(uintptr_t)ptr);
	if (res == CUDA_SUCCESS)
		*ctx = (uint64_t)(uintptr_t)c;
	return res;
}
