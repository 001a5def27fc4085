/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_KRATE_KERNELS_H
#define BENCH_KRATE_KERNELS_H

/*
 * CUDA side of bench-kernel-rate, callable from C. Every function returns
 * 0 or a cudaError_t value (cudaGetErrorString() names it); launches are
 * asynchronous on the given stream.
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_vm_insn;
struct gpurx_flow_table;

/* A batch as a capture pipeline hands it over: one buffer, descriptors. */
struct kr_batch {
	const uint8_t *pkts;	/* packet i at pkts + offs[i], 16-byte aligned */
	const uint32_t *offs;
	const uint16_t *lens;	/* caplen == wirelen */
	const uint64_t *ts;	/* ns */
	uint32_t n;
};

enum kr_kind {
	/* One thread per packet, reading the packet where it lies. */
	KR_THREAD = 0,
	/* A warp stages the first `window` bytes of its 32 packets into
	 * shared memory with coalesced 16-byte loads, then each thread
	 * classifies its packet from there (caplen = min(len, window)). */
	KR_WARP = 1,
	/* KR_WARP, grid-stride, with the next round's descriptors and
	 * first bytes loaded while the current round is worked on. */
	KR_WARP_PF = 2,
};

struct kr_variant {
	const char *name;
	int kind;		/* enum kr_kind */
	unsigned int tpb;	/* threads per block, a multiple of 32, <= 512 */
	int grid_stride;	/* 0: a thread (warp) per packet (32 packets),
				 * 1: as many blocks as fit at once, looping */
};

/* Largest staging window (bytes, multiple of 16). */
#define KR_WINDOW_MAX 256
/* What the warp-staged kernels fetch of every packet before looking at
 * it: the headers of most packets fit. */
#define KR_HEAD_BYTES 64
/* Programs up to this many instructions are copied to shared memory. */
#define KR_PROG_SMEM_MAX 256

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
 * Blocks for variant v over n packets (prepares the kernel for its
 * shared memory too). prog_len decides where the program lives.
 */
int kr_classify_prepare(const struct kr_variant *v, uint32_t n,
		uint32_t window, uint32_t prog_len, unsigned int *blocks);

/* Classify every packet of b: verdicts[i], flows into ft (device). */
int kr_classify_launch(const struct kr_variant *v, unsigned int blocks,
		const struct kr_batch *b, uint32_t window,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint32_t *verdicts,
		cudaStream_t stream);

/*
 * The memory traffic the KR_WARP kernels cannot avoid: the descriptors
 * and the first min(len, window, KR_HEAD_BYTES) bytes of every packet
 * loaded as the warp-staged kernel loads them, a word written per
 * packet; no classification.
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
