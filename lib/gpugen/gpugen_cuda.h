/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The build kernel's launch (gpugen_kernels.cu); its stream, copies and
 * the device come from gpucuda.h, memory from gpudev (gpugen_gpu.c). All
 * return 0 or a cudaError_t value that gpucuda_strerror() names.
 */
#ifndef GPUGEN_CUDA_H
#define GPUGEN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gpucomm_kernel.h"
#include "gpucuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where the build kernel writes packet first + k: addrs[k] (the array
 * itself device-readable) when addrs is set, else slot
 * (first + k) % slots, stride bytes each, of ring. slot0 is
 * first % slots, taken once on the host so a thread needs no 64-bit
 * division to place its frame.
 */
struct gpugen_cuda_dst {
	void *const *addrs;
	uint8_t *ring;
	uint32_t stride;
	uint32_t slots;
	uint32_t slot0;
	/* Every destination is GPU memory: built in place, one thread a
	 * packet, no scratch (gpugen_cuda_build()). */
	uint32_t in_gpu;
};

/* *in_gpu = 1 when p is GPU memory (device or managed), 0 when host
 * memory; 0 or a cudaError_t value. */
int gpugen_cuda_mem_in_gpu(const void *p, uint32_t *in_gpu);

/* Device memory of the current device (cudaMalloc), for builds with no
 * gpudev (gpugen_frames.c); freed by gpugen_cuda_dev_free (NULL: no-op).
 * The current device's ordinal and (sms not NULL) multiprocessors. */
int gpugen_cuda_dev_alloc(void **p, size_t len);
int gpugen_cuda_dev_free(void *p);
int gpugen_cuda_current(int *dev, int *sms);
/* Host memory mapped for every device (cudaHostAlloc, mapped and
 * portable) whose device address is its host address (unified
 * addressing; else cudaErrorNotSupported and nothing kept), for the
 * persistent fill's rings with no gpudev; freed by gpugen_cuda_host_free
 * (NULL: no-op). */
int gpugen_cuda_host_alloc(void **p, size_t len);
int gpugen_cuda_host_free(void *p);

/* Threads per block of the build kernel. */
#define GPUGEN_CUDA_BLOCK 128

/*
 * Where the build kernel's threads build before their warp copies the
 * frames out (GPU memory, base 16-byte aligned): thread i in bytes
 * [i * slot, (i + 1) * slot), slot a multiple of 16 and at least the
 * longest frame + 16 (a frame starts at its destination's offset modulo
 * 16 in the slot). The grid holds at most threads threads, a whole number
 * of blocks of GPUGEN_CUDA_BLOCK (threads >= GPUGEN_CUDA_BLOCK), and
 * strides over longer builds.
 */
struct gpugen_cuda_scratch {
	uint8_t *base;
	uint32_t slot;
	uint32_t threads;
};

/*
 * The scratch's shape for frames of up to max_len bytes on a GPU of sms
 * multiprocessors (0 when unknown: then one multiprocessor's worth): as
 * many threads as the GPU runs at once (2048 a multiprocessor on sm_80
 * and sm_90), a slot each, but no more than 128 MiB in all, so long
 * frames take fewer threads rather than more memory; the kernel strides
 * over the rest. Returns the bytes to allocate (16-byte aligned).
 */
static inline size_t
gpugen_cuda_scratch_shape(uint32_t max_len, uint32_t sms,
		struct gpugen_cuda_scratch *sc)
{
	const size_t sm_threads = 2048, most = (size_t)128 << 20;
	/* The frame starts at its destination's offset modulo 16. */
	size_t slot = ((size_t)max_len + 15) / 16 * 16 + 16;
	size_t threads = (size_t)(sms != 0 ? sms : 1) * sm_threads;

	if (threads * slot > most)
		threads = most / slot;
	threads -= threads % GPUGEN_CUDA_BLOCK;
	if (threads == 0)
		threads = GPUGEN_CUDA_BLOCK;
	sc->base = NULL;
	sc->slot = (uint32_t)slot;
	sc->threads = (uint32_t)threads;
	return threads * slot;
}

/*
 * Queue the build of global packets first .. first + n - 1 of the table
 * (device-usable address) into dst, through scratch unless dst->in_gpu,
 * on stream s; returns once queued. gpucuda_stream_sync(s) waits for
 * them. Builds on one stream run in turn, so they share one scratch.
 */
int gpugen_cuda_build(const void *table, const struct gpugen_cuda_dst *dst,
		const struct gpugen_cuda_scratch *scratch, uint64_t first,
		uint32_t n, uint64_t tx_ns, void *s);

/*
 * The persistent fill (gpugen_fill.cu): a gpucomm ring per TX lcore,
 * whose items carry the data addresses of a burst's mbufs; the kernel
 * builds packets side[ring][item].first + i into entry i's address.
 */
#define GPUGEN_FILL_THREADS 256

/* Staging scratch of a persistent fill at most (worker blocks are fewer
 * for long frames). */
#define GPUGEN_FILL_SCRATCH_MAX ((size_t)128 << 20)

/*
 * A thread's slot in its worker block's shared memory at most, where
 * frames up to 121 bytes without the FCS (every 64-byte and 100-byte
 * case) are built, then copied out by the block's warps, to GPU or host
 * memory alike. The per-packet code works a byte at a time, each lane on
 * its own frame: on frames in place in GPU memory every such access of a
 * warp touches 32 lines, and in the global scratch too; in shared slots
 * whose stride is 4 x an odd number of bytes it touches 32 different
 * banks once. 31 KiB a block of GPUGEN_FILL_THREADS.
 */
#define GPUGEN_FILL_SMEM_SLOT 124u

/*
 * A worker block's copy of the stream table in shared memory at most
 * (gpugen_table_compact_len: 2 KiB a stream, then the templates: one
 * stream with 2.5 KiB of templates, two with 0.5 KiB; the static limit
 * of 48 KiB a block leaves no more), taken once when the kernel starts.
 * A frame's build follows a chain of dependent loads through the table
 * (stream, length mode, template, program steps); from GPU memory each
 * is an L2 round trip, as the workers of a ring run on different
 * multiprocessors and an item finds its block's L1 cold. Larger tables
 * are read where they lie.
 */
#define GPUGEN_FILL_SMEM_TABLE 4608u

/* The shared slots' stride for frames of up to max_len bytes: room for
 * the frame at any offset modulo 4, 4 x an odd number of bytes. */
static inline uint32_t
gpugen_fill_smem_stride(uint32_t max_len)
{
	uint32_t w = (max_len + 3 + 3) / 4;

	return 4 * (w | 1);
}

/*
 * A persistent fill's worker blocks per ring (*bpq: as many as a ring has
 * items, up to the ring library's most) and where its frames are built:
 * *smem 1, in the worker blocks' shared memory, *slot bytes apart (frames
 * that fit GPUGEN_FILL_SMEM_SLOT); else in place for frames in GPU memory
 * (in_gpu), or staged through a global scratch of *slot bytes a thread,
 * with fewer blocks where the scratch would pass GPUGEN_FILL_SCRATCH_MAX.
 * Returns the scratch bytes (0 without one); *bpq 0 when even one block a
 * ring does not fit.
 */
static inline size_t
gpugen_fill_shape(uint32_t max_len, uint32_t rings, uint32_t items,
		int in_gpu, uint32_t *bpq, uint32_t *slot, uint32_t *smem)
{
	const size_t sl = ((size_t)max_len + 15) / 16 * 16 + 16;
	const size_t per_block = sl * GPUGEN_FILL_THREADS * rings;
	const uint32_t stride = gpugen_fill_smem_stride(max_len);

	*bpq = items < GPUCOMM_WORKERS_MAX ? items : GPUCOMM_WORKERS_MAX;
	*smem = stride <= GPUGEN_FILL_SMEM_SLOT;
	*slot = *smem ? stride : (uint32_t)sl;
	if (in_gpu || *smem)
		return 0;
	if ((size_t)*bpq * per_block > GPUGEN_FILL_SCRATCH_MAX)
		*bpq = (uint32_t)(GPUGEN_FILL_SCRATCH_MAX / per_block);
	return (size_t)*bpq * per_block;
}

/* Per item, in registered host memory, written before READY. */
struct gpugen_fill_side {
	uint64_t first;		/* global number of the item's first packet */
	uint64_t tx_ns;		/* the first packet's stamp time */
	uint64_t tx_gap_ns;	/* and what each next one adds to it */
};

struct gpugen_fill_kargs {
	const void *table;			/* device-usable */
	const struct gpugen_fill_side *side;	/* rings x items */
	/* NULL: frames built in place (GPU memory) or, with smem, staged in
	 * shared memory; else the staging area, slot bytes a thread,
	 * GPUGEN_FILL_THREADS threads a worker block, workers blocks a ring
	 * (at least the kernel's bpq). */
	uint8_t *scratch;
	uint32_t slot;
	uint32_t workers;
	uint32_t smem;	/* 1: staged in shared memory, slot bytes apart */
	/* Not 0: the table's compact length (at most GPUGEN_FILL_SMEM_TABLE),
	 * copied into each worker block's shared memory when it starts. */
	uint32_t table_smem;
	/* NULL: no times kept (the shipped path: one untaken branch per
	 * item). Else GPU memory, n_times records of GPUGEN_FILL_TIME_WORDS
	 * words a ring; ring r's burst seq in record r * n_times + seq %
	 * n_times: seq + 1, then the %globaltimer ns when READY was seen,
	 * the descriptors were held, every frame was written, DONE was
	 * released (gpugen_fill_times in gpugen_fill.h). */
	unsigned long long *times;
	uint32_t n_times;
};

#define GPUGEN_FILL_TIME_WORDS 5

/* The persistent kernel on stream s (gpucomm_launch_persistent: kp->bpq
 * lowered to what fits). 0 or a cudaError_t value. */
int gpugen_fill_cuda_launch(struct gpucomm_kparams *kp,
		const struct gpugen_fill_kargs *a, void *s);
/* Item idx (sequence seq) of ring ring, one kernel, on stream s. */
int gpugen_fill_cuda_launch_item(const struct gpucomm_kparams *kp,
		const struct gpugen_fill_kargs *a, uint32_t ring, uint32_t idx,
		unsigned long long seq, void *s);

#ifdef __cplusplus
}
#endif

#endif /* GPUGEN_CUDA_H */
