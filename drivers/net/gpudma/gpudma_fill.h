/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_FILL_H
#define GPUDMA_FILL_H

/*
 * The fill's per-packet code, one source for the GPU (the launched
 * gpudma_scatter kernel and the persistent gpudma_fill_persistent one,
 * gpudma_scatter.cu) and the CPU (the fake CUDA library's stand-in for
 * both, tests/fake_cuda): how a descriptor's bytes are copied, and the
 * persistent fill's slot protocol (fill=persistent).
 *
 * The protocol: a ring of GPUDMA_FILL_SLOTS slots in pinned host memory
 * mapped for the GPU. Fill seq (counting from 1, wrapping) uses slot
 * seq % GPUDMA_FILL_SLOTS: the CPU writes its descriptors into that slot's
 * array, then the slot's READY word ((seq << 32) | descriptors) with
 * release ordering; the kernel serves the fills in seq order, each READY
 * seen with an acquire load, and publishes each one's completion by a
 * release store of seq into DONE, which the CPU reads with an acquire
 * load. QUIT, set by the CPU, ends the kernel once every fill posted
 * before it has been served.
 *
 * The kernel also ends by itself, parked: when no fill has been READY for
 * the port's fill_idle_us, or at the first fill boundary after
 * GPUDMA_FILL_LIFE_NS of running. It then releases PARKED (after its last
 * DONE) and the CPU launches it again at DONE + 1 once its end event has
 * completed: at the next burst, or at once where fills were posted that it
 * did not see. Why: a kernel that never ends holds up whatever waits for
 * the whole context (lazy loading of another kernel, cuMemFree, a
 * synchronisation of the device); when the thread that waits is also the
 * one that posts the fills, only an end of the kernel's own undoes the
 * deadlock (the CUDA programming guide's lazy loading section describes
 * it for kernels that wait on each other).
 */

#include <stdint.h>

#include "gpudma_scatter.h"
#include "gpurx_portable.h"

#ifdef __CUDACC__
#include <cuda/atomic>
#include "gpucomm_dev.cuh"
typedef uint4 gpudma_v16;
#define GPUDMA_LD(type, p) (*(const type *)(p))
#define GPUDMA_ST(type, p, v) (*(type *)(p) = (v))
#else
#include <sched.h>
#include <string.h>
#include <time.h>
typedef struct {
	uint32_t x, y, z, w;
} gpudma_v16;
/* memcpy: the CPU's accesses are not typed like the GPU's. */
#define GPUDMA_LD(type, p) __extension__ ({ \
	type v_; \
	memcpy(&v_, (p), sizeof(v_)); \
	v_; \
})
#define GPUDMA_ST(type, p, v) __extension__ ({ \
	type v_ = (v); \
	memcpy((p), &v_, sizeof(v_)); \
})
#endif

/* Bytes one chunk of a descriptor covers: a 16-byte access. */
#define GPUDMA_CHUNK 16u

#define GPUDMA_FILL_SLOTS 8u
#define GPUDMA_FILL_KERNEL "gpudma_fill_persistent"
/* The persistent kernel: one block of this many threads a queue. */
#define GPUDMA_FILL_THREADS 256u
/* Descriptors the block holds in shared memory at a time. */
#define GPUDMA_FILL_TILE 1024u
/* Chunks each thread has in flight (loaded before the first is stored):
 * a PCIe read costs about a microsecond, so one block covers it only
 * with many reads outstanding. */
#define GPUDMA_FILL_UNROLL 8u
/* gpudma_fill_wait's answer once the CPU asked the kernel to quit. */
#define GPUDMA_FILL_QUIT UINT32_MAX
/* gpudma_fill_wait's answer when the kernel is to park (end by itself). */
#define GPUDMA_FILL_PARK (UINT32_MAX - 1)
/* The longest a kernel runs before it parks at a fill boundary: what a
 * thread waiting for the whole context waits at most under traffic that
 * never pauses; a relaunch (a few microseconds) this often costs nothing
 * measurable. */
#define GPUDMA_FILL_LIFE_NS 50000000ull
/* Unanswered polls of READY between two reads of QUIT and the clock. */
#define GPUDMA_FILL_QUIT_POLLS 16u

/*
 * The ring, a page of pinned host memory mapped for the GPU. The words
 * the CPU writes and the one the GPU writes are on lines of their own, so
 * that neither side's writes disturb the other's polling.
 */
struct gpudma_fill_post {
	uint64_t ready;          /* (seq << 32) | descriptors, written last */
	uint8_t pad[56];
};

struct gpudma_fill_ring {
	struct gpudma_fill_post post[GPUDMA_FILL_SLOTS];
	/* The slots' descriptor arrays as the GPU addresses them: written
	 * once before the kernel's launch. */
	uint64_t descs[GPUDMA_FILL_SLOTS];
	uint32_t quit;           /* CPU: nonzero asks the kernel to end */
	uint8_t pad_quit[60];
	uint32_t done;           /* GPU: the last fill served */
	uint32_t parked;         /* GPU: nonzero once it parked (ends) */
	uint8_t pad_done[56];
};

/* ---- memory ordering between the CPU and the GPU --------------------- */

#ifdef __CUDACC__
/* System scope: the other side is the CPU, across PCIe. */
GPURX_FN uint64_t
gpudma_load_acquire64(uint64_t *p)
{
	return cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(*p)
		.load(cuda::memory_order_acquire);
}

GPURX_FN uint32_t
gpudma_load_acquire32(uint32_t *p)
{
	return cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*p)
		.load(cuda::memory_order_acquire);
}

GPURX_FN void
gpudma_store_release32(uint32_t *p, uint32_t v)
{
	cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*p)
		.store(v, cuda::memory_order_release);
}

/* Nothing: each poll is a PCIe round trip already. */
GPURX_FN void
gpudma_fill_pause(void)
{
}

GPURX_FN uint64_t
gpudma_fill_now_ns(void)
{
	return gpucomm_gpu_ns();
}
#else
GPURX_FN uint64_t
gpudma_load_acquire64(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

GPURX_FN uint32_t
gpudma_load_acquire32(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

GPURX_FN void
gpudma_store_release32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* A stand-in polling on the CPU leaves the core to the lcores whose
 * fills it waits for. */
GPURX_FN void
gpudma_fill_pause(void)
{
	sched_yield();
}

GPURX_FN uint64_t
gpudma_fill_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* ---- the slot protocol, the kernel's side ------------------------------- */

/*
 * Waits until fill seq is READY: its descriptor count; GPUDMA_FILL_QUIT
 * once QUIT is set and the fill is not READY; GPUDMA_FILL_PARK when it
 * was not READY for idle_ns, or at once when the kernel has run past
 * deadline (both by gpudma_fill_now_ns). READY is read with acquire: the
 * slot's descriptors (and the frame bytes the CPU staged) written before
 * the CPU's release of READY are visible to what the caller reads after
 * this (on the GPU, to the whole block once it passes a barrier after
 * it). QUIT with acquire too: the CPU sets it after its last READY, so a
 * READY read after QUIT is seen is the last one. A fill READY after the
 * last look before parking is the CPU's to notice (PARKED).
 */
GPURX_FN uint32_t
gpudma_fill_wait(struct gpudma_fill_ring *r, uint32_t seq, uint64_t idle_ns,
		uint64_t deadline)
{
	uint64_t *ready = &r->post[seq % GPUDMA_FILL_SLOTS].ready;
	uint64_t now = gpudma_fill_now_ns(), idle_end = now + idle_ns;
	uint32_t polls = 0;
	uint64_t w;

	if (now >= deadline)
		return GPUDMA_FILL_PARK;
	for (;;) {
		w = gpudma_load_acquire64(ready);
		if ((uint32_t)(w >> 32) == seq)
			return (uint32_t)w;
		if (++polls % GPUDMA_FILL_QUIT_POLLS == 0) {
			if (gpudma_load_acquire32(&r->quit) != 0) {
				w = gpudma_load_acquire64(ready);
				return (uint32_t)(w >> 32) == seq ?
					(uint32_t)w : GPUDMA_FILL_QUIT;
			}
			if (gpudma_fill_now_ns() >= idle_end)
				return GPUDMA_FILL_PARK;
		}
		gpudma_fill_pause();
	}
}

/*
 * The kernel parks: PARKED released at system scope after its last DONE,
 * so that the CPU that sees PARKED (acquire) sees every fill it served.
 * The kernel ends right after.
 */
GPURX_FN void
gpudma_fill_park(struct gpudma_fill_ring *r)
{
	gpudma_store_release32(&r->parked, 1);
}

/*
 * Fill seq served: DONE = seq with release at system scope, so that the
 * fill's writes into the mbufs (on the GPU: the whole block's, ordered
 * before this by the barrier the caller passed) are visible to the CPU
 * that reads DONE with acquire, and through it to whatever the CPU then
 * hands the mbufs to.
 */
GPURX_FN void
gpudma_fill_finish(struct gpudma_fill_ring *r, uint32_t seq)
{
	gpudma_store_release32(&r->done, seq);
}

/* ---- copying a descriptor ----------------------------------------------- */

GPURX_FN uint32_t
gpudma_desc_chunks(uint32_t len)
{
	return (len + GPUDMA_CHUNK - 1) / GPUDMA_CHUNK;
}

/*
 * Chunk k of the copy of len bytes s -> t: bytes [16k, min(16k + 16, len)).
 * Loaded into *c here and written by gpudma_chunk_store, so that a thread
 * can have several chunks' PCIe reads in flight before its first write.
 * Both ends 16-byte aligned (the frame store's and the staging ring's
 * frames are 64-byte aligned, so are mbuf data): one 16-byte access, or
 * for the last, short chunk 8-, 4-, 2- and 1-byte accesses at offsets
 * aligned for them. Otherwise the chunk is copied byte by byte here and
 * the store has nothing left to do.
 */
GPURX_FN void
gpudma_chunk_load(const uint8_t *s, uint8_t *t, uint32_t len, uint32_t k,
		gpudma_v16 *c)
{
	const uint32_t off = k * GPUDMA_CHUNK;
	const uint32_t m = len - off < GPUDMA_CHUNK ? len - off : GPUDMA_CHUNK;
	uint32_t j;

	s += off;
	if ((((uintptr_t)s | (uintptr_t)(t + off)) & (GPUDMA_CHUNK - 1)) != 0) {
		for (j = 0; j < m; j++)
			t[off + j] = s[j];
		return;
	}
	if (m == GPUDMA_CHUNK) {
		*c = GPUDMA_LD(gpudma_v16, s);
		return;
	}
	c->x = c->y = c->z = c->w = 0;
	if (m & 8) {
		uint64_t v = GPUDMA_LD(uint64_t, s);

		c->x = (uint32_t)v;
		c->y = (uint32_t)(v >> 32);
	}
	if (m & 4)
		c->z = GPUDMA_LD(uint32_t, s + (m & 8));
	if (m & 2)
		c->w = GPUDMA_LD(uint16_t, s + (m & 12));
	if (m & 1)
		c->w |= (uint32_t)s[m & 14] << 16;
}

GPURX_FN void
gpudma_chunk_store(const uint8_t *s, uint8_t *t, uint32_t len, uint32_t k,
		const gpudma_v16 *c)
{
	const uint32_t off = k * GPUDMA_CHUNK;
	const uint32_t m = len - off < GPUDMA_CHUNK ? len - off : GPUDMA_CHUNK;

	t += off;
	if ((((uintptr_t)(s + off) | (uintptr_t)t) & (GPUDMA_CHUNK - 1)) != 0)
		return;
	if (m == GPUDMA_CHUNK) {
		GPUDMA_ST(gpudma_v16, t, *c);
		return;
	}
	if (m & 8)
		GPUDMA_ST(uint64_t, t, (uint64_t)c->x | (uint64_t)c->y << 32);
	if (m & 4)
		GPUDMA_ST(uint32_t, t + (m & 8), c->z);
	if (m & 2)
		GPUDMA_ST(uint16_t, t + (m & 12), (uint16_t)c->w);
	if (m & 1)
		t[m & 14] = (uint8_t)(c->w >> 16);
}

/* Chunks first, first + step, ... of descriptor d: a warp's lanes on the
 * GPU (step 32), all of them on the CPU (0, 1). */
GPURX_FN void
gpudma_copy_desc(const struct gpudma_scatter_desc *d, uint32_t first,
		uint32_t step)
{
	const uint8_t *s = (const uint8_t *)(uintptr_t)d->src;
	uint8_t *t = (uint8_t *)(uintptr_t)d->dst;
	const uint32_t len = d->len, n = gpudma_desc_chunks(len);
	gpudma_v16 c;
	uint32_t k;

	for (k = first; k < n; k += step) {
		gpudma_chunk_load(s, t, len, k, &c);
		gpudma_chunk_store(s, t, len, k, &c);
	}
}

#endif /* GPUDMA_FILL_H */
