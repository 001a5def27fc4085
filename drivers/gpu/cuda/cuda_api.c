/* SPDX-License-Identifier: BSD-3-Clause */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include <rte_common.h>

#include "cuda_api.h"
#include "cuda_log.h"

#define LIBCUDA_DEFAULT "libcuda.so.1"
#define LIBCUDA_ENV "GPU_CUDA_LIBCUDA"

struct gpu_cuda_api gpu_cuda;

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static const struct gpu_cuda_api *api_loaded;
static void *libcuda_handle;

struct symbol_request {
	const char *name;
	int version;
	size_t offset;
};

#define GPU_CUDA_REQUEST(sym, ver) \
	{ #sym, ver, offsetof(struct gpu_cuda_api, sym) },
static const struct symbol_request symbol_requests[] = {
	GPU_CUDA_SYMBOLS(GPU_CUDA_REQUEST)
};
static const struct symbol_request optional_requests[] = {
	GPU_CUDA_OPTIONAL_SYMBOLS(GPU_CUDA_REQUEST)
};
#undef GPU_CUDA_REQUEST

/* cuGetProcAddress itself, in its 12.0 form or, on older drivers, 11.3. */
static PFN_cuGetProcAddress_v12000 get_proc_v2;
static PFN_cuGetProcAddress_v11030 get_proc_v1;

static CUresult
resolve(const char *name, int version, void **pfn)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
	CUresult res;

	if (get_proc_v2 != NULL) {
		res = get_proc_v2(name, pfn, version, CU_GET_PROC_ADDRESS_DEFAULT,
				&status);
		if (res == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS)
			res = CUDA_ERROR_NOT_FOUND;
	} else {
		res = get_proc_v1(name, pfn, version, CU_GET_PROC_ADDRESS_DEFAULT);
	}
	if (res == CUDA_SUCCESS && *pfn == NULL)
		res = CUDA_ERROR_NOT_FOUND;
	return res;
}

static int
load_symbols(const char *path)
{
	PFN_cuDriverGetVersion_v2020 get_version;
	unsigned int i;
	CUresult res;
	int version;

	get_version = (PFN_cuDriverGetVersion_v2020)dlsym(libcuda_handle,
			"cuDriverGetVersion");
	get_proc_v2 = (PFN_cuGetProcAddress_v12000)dlsym(libcuda_handle,
			"cuGetProcAddress_v2");
	if (get_proc_v2 == NULL)
		get_proc_v1 = (PFN_cuGetProcAddress_v11030)dlsym(libcuda_handle,
				"cuGetProcAddress");
	if (get_version == NULL || (get_proc_v2 == NULL && get_proc_v1 == NULL)) {
		CUDA_LOG(ERR, "%s lacks cuDriverGetVersion/cuGetProcAddress: CUDA driver older than %d.%d, no GPU will be probed",
			path, GPU_CUDA_MIN_DRIVER_VERSION / 1000,
			GPU_CUDA_MIN_DRIVER_VERSION % 1000 / 10);
		return -ENOTSUP;
	}
	res = get_version(&version);
	if (res != CUDA_SUCCESS) {
		CUDA_LOG(ERR, "cuDriverGetVersion failed (error %d): no GPU will be probed",
			(int)res);
		return -EIO;
	}
	if (version < GPU_CUDA_MIN_DRIVER_VERSION) {
		CUDA_LOG(ERR, "CUDA driver API %d.%d is older than the %d.%d this driver needs: no GPU will be probed",
			version / 1000, version % 1000 / 10,
			GPU_CUDA_MIN_DRIVER_VERSION / 1000,
			GPU_CUDA_MIN_DRIVER_VERSION % 1000 / 10);
		return -ENOTSUP;
	}
	gpu_cuda.driver_version = version;

	for (i = 0; i < RTE_DIM(symbol_requests); i++) {
		const struct symbol_request *req = &symbol_requests[i];
		void **slot = (void **)((char *)&gpu_cuda + req->offset);

		res = resolve(req->name, req->version, slot);
		if (res != CUDA_SUCCESS) {
			CUDA_LOG(ERR, "%s (CUDA %d.%d) has no %s at ABI version %d (error %d): no GPU will be probed",
				path, version / 1000, version % 1000 / 10,
				req->name, req->version, (int)res);
			return -ENOTSUP;
		}
	}
	for (i = 0; i < RTE_DIM(optional_requests); i++) {
		const struct symbol_request *req = &optional_requests[i];
		void **slot = (void **)((char *)&gpu_cuda + req->offset);

		/* resolve() may have written junk on failure. */
		if (resolve(req->name, req->version, slot) != CUDA_SUCCESS) {
			*slot = NULL;
			CUDA_LOG(INFO, "%s (CUDA %d.%d) has no %s at ABI version %d: what needs it is not supported",
				path, version / 1000, version % 1000 / 10,
				req->name, req->version);
		}
	}
	return 0;
}

static void
api_load_once(void)
{
	const char *path = getenv(LIBCUDA_ENV);
	CUresult res;

	if (path == NULL || path[0] == '\0')
		path = LIBCUDA_DEFAULT;
	libcuda_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (libcuda_handle == NULL) {
		CUDA_LOG(NOTICE, "cannot load the CUDA driver library (%s): no GPU will be probed",
			dlerror());
		return;
	}
	if (load_symbols(path) != 0)
		goto fail;

	res = gpu_cuda.cuInit(0);
	if (res != CUDA_SUCCESS) {
		gpu_cuda_log_error("no GPU will be probed", "cuInit", res);
		goto fail;
	}
	CUDA_LOG(INFO, "CUDA driver API %d.%d loaded from %s",
		gpu_cuda.driver_version / 1000,
		gpu_cuda.driver_version % 1000 / 10, path);
	api_loaded = &gpu_cuda;
	return;
fail:
	dlclose(libcuda_handle);
	libcuda_handle = NULL;
}

const struct gpu_cuda_api *
gpu_cuda_api_get(void)
{
	if (pthread_once(&api_once, api_load_once) != 0)
		return NULL;
	return api_loaded;
}

void
gpu_cuda_log_error(const char *what, const char *call, CUresult res)
{
	const char *name = NULL;
	const char *desc = NULL;

	if (gpu_cuda.cuGetErrorName == NULL ||
			gpu_cuda.cuGetErrorName(res, &name) != CUDA_SUCCESS)
		name = NULL;
	if (gpu_cuda.cuGetErrorString == NULL ||
			gpu_cuda.cuGetErrorString(res, &desc) != CUDA_SUCCESS)
		desc = NULL;
	CUDA_LOG(ERR, "%s: %s failed: %s (%d): %s", what, call,
		name != NULL ? name : "CUDA_ERROR_?", (int)res,
		desc != NULL ? desc : "unknown error");
}

int
gpu_cuda_errno(CUresult res)
{
	switch (res) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_CONTEXT:
	case CUDA_ERROR_INVALID_DEVICE:
		return -EINVAL;
	case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
		return -EEXIST;
	case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
	case CUDA_ERROR_NOT_FOUND:
		return -ENOENT;
	case CUDA_ERROR_NOT_SUPPORTED:
	case CUDA_ERROR_NOT_PERMITTED:
		return -ENOTSUP;
	case CUDA_ERROR_NO_DEVICE:
		return -ENODEV;
	default:
		return -EIO;
	}
}
