/* SPDX-License-Identifier: BSD-3-Clause */

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_cuda.h"

struct bench_cuda bcu;

struct request {
	const char *name;
	int version;
	size_t offset;
};

#define BENCH_CUDA_REQUEST(sym, ver) \
	{ #sym, ver, offsetof(struct bench_cuda, sym) },
static const struct request requests[] = {
	BENCH_CUDA_SYMBOLS(BENCH_CUDA_REQUEST)
};
#undef BENCH_CUDA_REQUEST

int
bench_cuda_load(char *why, size_t why_len)
{
	PFN_cuGetProcAddress_v12000 get_proc;
	PFN_cuDriverGetVersion_v2020 get_version;
	const char *path = getenv("BENCH_LIBCUDA");
	void *h;
	size_t i;

	if (path == NULL || path[0] == '\0')
		path = "libcuda.so.1";
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(why, why_len, "cannot load %s: %s", path, dlerror());
		return -1;
	}
	/* cuGetProcAddress_v2 (CUDA 12.0) reports whether the symbol exists
	 * at the version asked; bench-driver needs nothing older. */
	get_proc = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	get_version = (PFN_cuDriverGetVersion_v2020)dlsym(h, "cuDriverGetVersion");
	if (get_proc == NULL || get_version == NULL) {
		snprintf(why, why_len, "%s has no cuGetProcAddress_v2 (CUDA driver older than 12.0)",
			path);
		return -1;
	}
	if (get_version(&bcu.driver_version) != CUDA_SUCCESS) {
		snprintf(why, why_len, "cuDriverGetVersion failed");
		return -1;
	}
	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		const struct request *r = &requests[i];
		void **slot = (void **)((char *)&bcu + r->offset);
		CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
		CUresult res;

		res = get_proc(r->name, slot, r->version,
				CU_GET_PROC_ADDRESS_DEFAULT, &found);
		if (res != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS ||
				*slot == NULL) {
			snprintf(why, why_len, "%s (driver API %d) has no %s at ABI version %d (error %d, status %d)",
				path, bcu.driver_version, r->name, r->version,
				(int)res, (int)found);
			return -1;
		}
	}
	/* The handle stays open: the entry points live in it. */
	return 0;
}

const char *
bench_cuda_err(CUresult res)
{
	const char *s = NULL;

	if (bcu.cuGetErrorName == NULL || bcu.cuGetErrorName(res, &s) !=
			CUDA_SUCCESS || s == NULL)
		return "unknown CUDA error";
	return s;
}
