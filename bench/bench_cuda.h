/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_CUDA_H
#define BENCH_CUDA_H

/*
 * The CUDA driver API entry points bench-driver calls directly, loaded
 * from libcuda.so.1 at run time (the binary does not link libcuda, so it
 * starts, and reports a skip, where no driver is installed). Each entry
 * point is asked from cuGetProcAddress at the CUDA version whose ABI the
 * field's PFN type describes: the driver then hands back that ABI even
 * where newer versions changed the signature.
 */

#include <cuda.h>
#include <cudaTypedefs.h>

/* X(symbol, ABI version) */
#define BENCH_CUDA_SYMBOLS(X) \
	X(cuGetErrorName, 6000) \
	X(cuInit, 2000) \
	X(cuDeviceGet, 2000) \
	X(cuDeviceGetByPCIBusId, 4010) \
	X(cuDeviceGetName, 2000) \
	X(cuDeviceGetAttribute, 2000) \
	X(cuDevicePrimaryCtxRetain, 7000) \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxPushCurrent, 4000) \
	X(cuCtxPopCurrent, 4000) \
	X(cuMemAlloc, 3020) \
	X(cuMemFree, 3020) \
	X(cuPointerSetAttribute, 6000) \
	X(cuMemHostRegister, 6050) \
	X(cuMemHostUnregister, 4000) \
	X(cuFlushGPUDirectRDMAWrites, 11030) \
	X(cuStreamCreate, 2000) \
	X(cuStreamDestroy, 4000) \
	X(cuStreamSynchronize, 2000) \
	X(cuMemsetD8Async, 3020) \
	X(cuMemcpyHtoD, 3020) \
	X(cuMemcpyDtoH, 3020)

#define BENCH_CUDA_FIELD(sym, ver) PFN_ ## sym ## _v ## ver sym;
struct bench_cuda {
	int driver_version;
	BENCH_CUDA_SYMBOLS(BENCH_CUDA_FIELD)
};
#undef BENCH_CUDA_FIELD

extern struct bench_cuda bcu;

/* Loads libcuda.so.1 (or $BENCH_LIBCUDA) and resolves every entry point.
 * Returns 0, or -1 with the reason in why. cuInit is not called. */
int bench_cuda_load(char *why, size_t why_len);

/* Name of a CUDA error ("CUDA_ERROR_..."). */
const char *bench_cuda_err(CUresult res);

#endif /* BENCH_CUDA_H */
