/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_KRATE_KERNELS_H
#define BENCH_KRATE_KERNELS_H

/*
 * CUDA side of bench-kernel-rate besides the shipped kernel, callable
 * from C. Every function returns
 * 0 or a cudaError_t value (cudaGetErrorString() names it); launches are
 * asynchronous on the given stream.
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A batch as a capture pipeline hands it over: one buffer, descriptors. */
struct kr_batch {
	const uint8_t *pkts;	/* packet i at pkts + offs[i], 16-byte aligned */
	const uint32_t *offs;
	const uint16_t *lens;	/* caplen == wirelen */
	const uint64_t *ts;	/* ns */
	uint32_t n;
};

/* Largest staging window (bytes, multiple of 16). */
#define KR_WINDOW_MAX 256
/* What the gather floor loads of every packet: the headers of most
 * packets fit. */
#define KR_HEAD_BYTES 64

struct kr_gpu_info {
	int dev;
	char name[256];
	int sm_count;
	int cc_major;
	int cc_minor;
	int l2_bytes;
	size_t mem_bytes;
	int driver_version;
	int runtime_version;
	int can_map_host;
};

/* True for errors that mean "no usable GPU or driver here" (a skip). */
int kr_error_is_no_gpu(int err);

/* Selects the CUDA device at PCI address pci (if not NULL), else CUDA
 * device dev, and fills gi. */
int kr_device_open(const char *pci, int dev, struct kr_gpu_info *gi);

/*
 * The gather floor: the descriptors and the first min(len, window,
 * KR_HEAD_BYTES) bytes of every packet loaded by coalesced warps, a word
 * written per packet; no classification.
 */
int kr_gather_launch(const struct kr_batch *b, uint32_t window,
		uint32_t *out, cudaStream_t stream);

/* Streams `bytes` (multiple of 16) from buf: read bandwidth. */
int kr_read_bw_launch(const void *buf, size_t bytes,
		unsigned long long *sink, cudaStream_t stream);

/*
 * Reads the first rd bytes (16, 32, 64 or 128) of every stride-byte
 * block of buf (bytes / stride reads): the request rate of scattered
 * reads, the limit of header-only access to packets in host memory.
 */
int kr_read_scatter_launch(const void *buf, size_t bytes, uint32_t stride,
		uint32_t rd, unsigned long long *sink, cudaStream_t stream);

/* Fills device memory with pseudo-random words (never all zeros). */
int kr_fill_launch(void *buf, size_t bytes, uint64_t seed,
		cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_KRATE_KERNELS_H */
