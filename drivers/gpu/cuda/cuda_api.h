/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_API_H
#define GPU_CUDA_API_H

/*
 * The CUDA driver API, loaded from libcuda.so.1 at run time.
 *
 * Every entry point is resolved through cuGetProcAddress at the CUDA version
 * whose ABI the call sites in this driver were written against: the driver
 * hands back the newest ABI of a symbol up to the version asked for, and some
 * symbols changed signature (cuCtxGetDevice gained a context argument in
 * 13.0). Each field's type is the versioned PFN typedef of that ABI, so the
 * compiler checks every call against the ABI that is actually requested.
 */

#include <cuda.h>
#include <cudaTypedefs.h>

/* Oldest driver that has everything below (cuGetProcAddress, the GPUDirect
 * RDMA flush). */
#define GPU_CUDA_MIN_DRIVER_VERSION 11030

/* X(symbol, ABI version) */
#define GPU_CUDA_SYMBOLS(X) \
	X(cuGetErrorName, 6000) \
	X(cuGetErrorString, 6000) \
	X(cuInit, 2000) \
	X(cuDeviceGet, 2000) \
	X(cuDeviceGetCount, 2000) \
	X(cuDeviceGetName, 2000) \
	X(cuDeviceGetByPCIBusId, 4010) \
	X(cuDeviceGetPCIBusId, 4010) \
	X(cuDeviceTotalMem, 3020) \
	X(cuDeviceGetAttribute, 2000) \
	X(cuDevicePrimaryCtxRetain, 7000) \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxPushCurrent, 4000) \
	X(cuCtxPopCurrent, 4000) \
	X(cuCtxGetDevice, 2000) \
	X(cuMemAlloc, 3020) \
	X(cuMemFree, 3020) \
	X(cuMemHostRegister, 6050) \
	X(cuMemHostUnregister, 4000) \
	X(cuMemHostGetDevicePointer, 3020) \
	X(cuPointerSetAttribute, 6000) \
	X(cuPointerGetAttribute, 4000) \
	X(cuFlushGPUDirectRDMAWrites, 11030) \
	X(cuStreamCreate, 2000) \
	X(cuStreamDestroy, 4000) \
	X(cuStreamSynchronize, 2000) \
	X(cuMemsetD8Async, 3020) \
	/* net_gpudma's copy engine (drivers/net/gpudma) */ \
	X(cuEventCreate, 2000) \
	X(cuEventDestroy, 4000) \
	X(cuEventRecord, 2000) \
	X(cuEventQuery, 2000) \
	X(cuEventSynchronize, 2000) \
	X(cuMemcpyHtoDAsync, 3020) \
	X(cuMemcpyDtoHAsync, 3020) \
	X(cuModuleLoadData, 2000) \
	X(cuModuleUnload, 2000) \
	X(cuModuleGetFunction, 2000) \
	X(cuLaunchKernel, 4000) \
	/* bench-gpudma's reference copies, which link this loader: the \
	 * synchronous forms every driver has */ \
	X(cuMemcpyHtoD, 3020) \
	X(cuMemcpyDtoH, 3020)

/*
 * Entry points of features a driver may lack: probe goes on without them
 * and the feature reports -ENOTSUP. The field stays NULL when the driver
 * does not have the symbol. X(symbol, ABI version)
 */
#define GPU_CUDA_OPTIONAL_SYMBOLS(X) \
	/* dma-buf export, CUDA 11.7 */ \
	X(cuMemGetHandleForAddressRange, 11070) \
	/* CUDA 12.8; requested in its 12.8 form (with failIdx) */ \
	X(cuMemcpyBatchAsync, 12080) \
	/* stream memory operations, v2 ABI (CUDA 11.7): net_gpudma's \
	 * completion words */ \
	X(cuStreamWriteValue32, 11070)

#define GPU_CUDA_FIELD(sym, ver) PFN_ ## sym ## _v ## ver sym;
struct gpu_cuda_api {
	int driver_version;
	GPU_CUDA_SYMBOLS(GPU_CUDA_FIELD)
	GPU_CUDA_OPTIONAL_SYMBOLS(GPU_CUDA_FIELD)
};
#undef GPU_CUDA_FIELD

/*
 * The loader is a static library every plugin that needs CUDA links (the
 * gpudev driver, net_gpudma): each plugin gets its own copy of the table,
 * filled from the same libcuda, and the loader logs through the
 * gpu_cuda_logtype the linking plugin defines (cuda_log.h).
 *
 * Loads and initialises the CUDA driver once per process (thread-safe).
 * Returns the entry points, or NULL when CUDA cannot be used; the reason is
 * logged once. The environment variable GPU_CUDA_LIBCUDA names another
 * library to load instead of libcuda.so.1 (the test double uses it).
 */
const struct gpu_cuda_api *gpu_cuda_api_get(void);

/* The entry points loaded by gpu_cuda_api_get(); only valid after it
 * returned non-NULL. */
extern struct gpu_cuda_api gpu_cuda;

/* Logs a failed CUDA call with the error's name and description. */
void gpu_cuda_log_error(const char *what, const char *call, CUresult res);

/* The negative errno that best describes a CUDA error. */
int gpu_cuda_errno(CUresult res);

/* Calls a CUDA entry point; on failure logs it (with the caller's context
 * string) and evaluates to the negative errno, else 0. */
#define GPU_CUDA_CALL(what, sym, ...) __extension__ ({ \
	CUresult res_ = gpu_cuda.sym(__VA_ARGS__); \
	int ret_ = 0; \
	if (res_ != CUDA_SUCCESS) { \
		gpu_cuda_log_error(what, #sym, res_); \
		ret_ = gpu_cuda_errno(res_); \
	} \
	ret_; \
})

#endif /* GPU_CUDA_API_H */
