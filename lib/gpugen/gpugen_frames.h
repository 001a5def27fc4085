/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen-cuda: the GPU build with no DPDK. Packets of a generator
 * (gpugen.h) built by a CUDA kernel into frame buffers the caller owns,
 * on a CUDA stream the caller owns: no gpudev, no mbufs, no DPDK header,
 * and no CUDA header either (a stream is passed as void *). The kernel
 * and the per-packet code are those of every other build, so frames are
 * byte-identical to gpugen_build_cpu()'s for the same numbers and stamp
 * time.
 *
 * Synchronisation is the caller's:
 *  - gpugen_frames_build() returns once the build is queued on the
 *    stream, before a byte is written; the frames are complete when
 *    work queued after it on that stream runs, or once the caller
 *    synchronised the stream (cudaStreamSynchronize) or recorded and
 *    waited on an event.
 *  - Frame buffers (and an address array) must stay allocated, and
 *    untouched by the CPU and other streams, until then.
 *  - Builds of host-memory frames go through the handle's GPU scratch:
 *    builds through one handle must run one after another (one stream,
 *    or ordered by the caller); open a handle per stream for builds at
 *    once. Builds with GPUGEN_FRAMES_IN_GPU use no scratch.
 *  - gpugen_frames_close() must come after every build through the
 *    handle completed.
 * Errors: negative errno, with a message naming what and why in the
 * caller's buffer (err, errlen; err may be NULL).
 */
#ifndef GPUGEN_FRAMES_H
#define GPUGEN_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "gpugen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cudaStream_t of the handle's device; NULL is the default stream.
 * Builds are launched on the calling thread's current CUDA device, which
 * must be the one the handle was opened on (else -EINVAL). */
typedef void *gpugen_cuda_stream_t;

struct gpugen_frames;

/*
 * Ready g's streams for GPU builds on the calling thread's current CUDA
 * device (cudaSetDevice): its table copied to device memory, the build
 * scratch allocated there. g must have streams, must not change
 * afterwards and must outlive the handle. -EINVAL for no streams,
 * -ENODEV when the CUDA runtime has no device, -ENOMEM, -EIO.
 */
int gpugen_frames_open(const struct gpugen *g, struct gpugen_frames **out,
		char *err, size_t errlen);
/* NULL is a no-op. */
void gpugen_frames_close(struct gpugen_frames *f);

/* gpugen_frames_dst.flags */
/*
 * Every frame buffer is GPU memory (cudaMalloc, managed): built in
 * place, one thread a packet, no scratch. Without it frames are built in
 * the GPU scratch and copied out a warp at a time, what host memory
 * mapped for the GPU needs. Either is correct for any memory; the flag
 * only picks the fast one.
 */
#define GPUGEN_FRAMES_IN_GPU 1u

/*
 * Where packet first + k goes, each buffer device memory or host memory
 * the GPU can write (cudaHostAlloc mapped, cudaHostRegister'ed, with
 * unified addressing: the host address is the device address):
 *  - addrs set: addrs[k], for k in 0 .. n - 1; the array itself
 *    device-readable (device memory, or mapped host memory), each buffer
 *    room bytes;
 *  - addrs NULL: base + k * stride, stride bytes each.
 * Buffers must not overlap. Each must hold gpugen_max_len() bytes.
 */
struct gpugen_frames_dst {
	void *const *addrs;
	uint32_t room;
	void *base;
	uint32_t stride;
	uint32_t flags;		/* GPUGEN_FRAMES_* */
};

/*
 * Queue the build of global packets first .. first + n - 1 of the
 * handle's generator, stamped tx_ns, into dst on stream (see above for
 * when they are written). lens (host memory, n entries, may be NULL)
 * receives each frame's length (no FCS) before the call returns, as
 * gpugen_len() gives it. 0, or -EINVAL (NULL handle or dst, n = 0, no
 * buffers, unknown flags, a strided span beyond the address space, the
 * thread's current device not the handle's),
 * -EMSGSIZE (buffers smaller than the longest frame), -EIO (the launch
 * failed; nothing was queued).
 */
int gpugen_frames_build(struct gpugen_frames *f,
		const struct gpugen_frames_dst *dst, uint64_t first, uint32_t n,
		uint64_t tx_ns, uint32_t *lens, gpugen_cuda_stream_t stream,
		char *err, size_t errlen);

/*
 * The persistent fill over plain memory: one kernel stays on the GPU and
 * builds the batches that caller threads post through rings in host
 * memory mapped for it, with no CUDA call per batch (gpugen_fill.h does
 * the same over gpudev lists and mbufs for DPDK programs; both run one
 * kernel). For a sender that hands out a batch of buffers at a time and
 * would otherwise pay a launch per batch.
 *
 *   thread r                                    GPU (one kernel)
 *   gpugen_frames_ring_post(fr, r, addrs, n,
 *                           first, tx_ns)   ->  READY
 *                                               a worker block builds
 *                                               first .. first + n - 1
 *                                               into addrs[0 .. n - 1]
 *   gpugen_frames_ring_poll(fr, r, ...)     <-  DONE: 1, the oldest
 *                                               batch's frames complete
 *
 * Each ring is one thread's, with no lock; rings are independent. A
 * ring's batches complete in post order. The buffers (device memory, or
 * host memory the GPU can write, as for gpugen_frames_build) must stay
 * allocated and untouched until their batch is polled; the address array
 * is copied at post. Frames are those of gpugen_build_cpu() for the same
 * numbers and stamp time.
 */
struct gpugen_frames_ring;

struct gpugen_frames_ring_conf {
	uint32_t rings;		/* posting threads, 1 .. 32 */
	uint32_t items;		/* batches in flight per ring, 2 .. 1024 */
	uint32_t batch;		/* frames per batch at most, 1 .. 1024 */
	uint32_t flags;		/* GPUGEN_FRAMES_IN_GPU: every buffer is GPU
				 * memory (else built through a staging
				 * scratch, as for gpugen_frames_build) */
};

/*
 * Starts the fill of f's generator on f's device, which must be the
 * calling thread's current one; every buffer must hold gpugen_max_len()
 * bytes. The kernel keeps multiprocessors busy polling until closed.
 * 0, or -EINVAL (bad conf, another current device), -ENOMEM (also
 * without unified addressing: the rings' host and device addresses must
 * be one), -EIO (the launch failed); nothing is kept on error.
 */
int gpugen_frames_ring_open(struct gpugen_frames *f,
		const struct gpugen_frames_ring_conf *c,
		struct gpugen_frames_ring **out, char *err, size_t errlen);

/*
 * Posts packets first .. first + n - 1, stamped tx_ns, into addrs[0 ..
 * n - 1] on ring r. 0; -ENOSPC when the ring has items batches in
 * flight (poll first); -EINVAL for a bad ring, n of 0 or over the batch,
 * or a NULL address (nothing posted).
 */
int gpugen_frames_ring_post(struct gpugen_frames_ring *fr, uint32_t r,
		void *const *addrs, uint32_t n, uint64_t first, uint64_t tx_ns);

/*
 * Ring r's oldest batch once built: 1 with its first packet and count in
 * *first and *n (either may be NULL), the batch's slot free again; 0 when
 * none is in flight or the oldest is not built yet; -EINVAL for a bad
 * ring; -EIO when the kernel marked it failed.
 */
int gpugen_frames_ring_poll(struct gpugen_frames_ring *fr, uint32_t r,
		uint64_t *first, uint32_t *n);

/* Batches posted on ring r and not yet polled. */
uint32_t gpugen_frames_ring_inflight(const struct gpugen_frames_ring *fr,
		uint32_t r);

/*
 * Waits for the batches in flight (their frames are then complete, and
 * no longer reported by poll), stops the kernel and frees the rings. 0;
 * -ETIMEDOUT when batches or the kernel did not end within 2 s: nothing
 * is freed, the kernel may still read the rings, call again; -EIO when
 * the kernel ended with an error (freed). NULL: 0.
 */
int gpugen_frames_ring_close(struct gpugen_frames_ring *fr, char *err,
		size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPUGEN_FRAMES_H */
