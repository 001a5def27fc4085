/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent fill over plain memory (gpugen_frames.h): the ring
 * library's kernel with the generator's body (gpugen_fill.cu, the one the
 * DPDK layer's fill runs), fed through rings laid out as gpudev's
 * communication lists (gpucomm_layout.h) but allocated here in mapped host
 * memory of the CUDA runtime, so that no DPDK is needed. The per-batch
 * calls are a ring's thread's alone: a few stores, no CUDA call.
 *
 * Ordering, CPU side (the kernel's side: gpucomm_persistent.cuh):
 *  post   the batch's addresses, side words and count are plain stores,
 *         then ring_wmb(), then READY: the GPU's acquire of READY sees
 *         them;
 *  poll   DONE is loaded with acquire (pairing with the kernel's
 *         system-scope release of DONE): the frames are complete when it
 *         is seen, then FREE is a plain store (the kernel never acts on
 *         FREE; the next post's barrier orders it before the next READY);
 *  close  the quit word stored after the last batch came back.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpucomm_kernel.h"
#include "gpucomm_layout.h"
#include "gpugen.h"
#include "gpugen_cuda.h"
#include "gpugen_frames.h"
#include "gpugen_frames_priv.h"
#include "gpugen_priv.h"

/* How long close waits for batches in flight, then for the kernel. */
#define RING_CLOSE_TIMEOUT_MS 2000

/*
 * Stores before it reach every observer, a PCIe device reading host
 * memory included, before stores after it. x86 never reorders stores
 * with older stores, so only the compiler must be held; Arm orders them
 * for the outer-shareable domain the GPU reads from with DMB OSHST.
 */
static inline void
ring_wmb(void)
{
#if defined(__aarch64__)
	__asm__ volatile("dmb oshst" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* A ring's state: its thread's alone, cache lines of its own. */
struct ring_q {
	struct gpucomm_item *items;
	uint32_t *status;		/* the items' words, one array */
	struct gpugen_fill_side *side;
	uint32_t head;			/* next item to post */
	uint32_t tail;			/* oldest item in flight */
	uint32_t inflight;
} __attribute__((aligned(64)));

struct gpugen_frames_ring {
	struct ring_q q[GPUCOMM_MAX_RINGS];
	struct gpugen_frames *f;
	struct gpugen_frames_ring_conf c;
	void *host;			/* mapped: items, entries, words */
	uint32_t *quit;
	void *state;			/* device: dispatch state */
	void *scratch;			/* device: staging, host frames only */
	void *stream;			/* the kernel's */
	struct gpucomm_kparams kp;
	struct gpugen_fill_kargs ka;
	int running;			/* launched, not seen ended */
	int quitting;			/* quit stored */
};

static size_t
align64(size_t n)
{
	return (n + 63) / 64 * 64;
}

static void
ring_free(struct gpugen_frames_ring *fr)
{
	const int rc[4] = {
		gpucuda_stream_destroy(fr->stream),
		gpugen_cuda_dev_free(fr->scratch),
		gpugen_cuda_dev_free(fr->state),
		gpugen_cuda_host_free(fr->host),
	};
	static const char *const what[4] = { "stream", "staging scratch",
		"dispatch state", "rings" };

	for (unsigned int i = 0; i < 4; i++)
		if (rc[i] != 0)
			fprintf(stderr, "gpugen: persistent fill %s release: %s\n",
				what[i], gpucuda_strerror(rc[i]));
	free(fr);
}

/* The rings' mapped memory: items, their entries, status words, side
 * words, the quit word; every item FREE with no packets. */
static int
ring_lay_out(struct gpugen_frames_ring *fr, char *err, size_t errlen)
{
	const struct gpugen_frames_ring_conf *c = &fr->c;
	const size_t n = (size_t)c->rings * c->items;
	const size_t o_pkt = align64(n * sizeof(struct gpucomm_item));
	const size_t o_st = o_pkt + align64(n * c->batch *
		sizeof(struct gpucomm_pkt));
	const size_t o_side = o_st + align64(n * sizeof(uint32_t));
	const size_t o_quit = o_side + align64(n *
		sizeof(struct gpugen_fill_side));
	const size_t len = o_quit + 64;
	struct gpucomm_item *items;
	struct gpucomm_pkt *pkt;
	uint32_t *st;
	uint8_t *h;
	int rc = gpugen_cuda_host_alloc(&fr->host, len);

	if (rc != 0)
		return gpugen_fail(err, errlen, -ENOMEM, "rings: %zu bytes of "
			"mapped host memory, one address for CPU and GPU: %s",
			len, gpucuda_strerror(rc));
	h = fr->host;
	memset(h, 0, len);
	items = (struct gpucomm_item *)h;
	pkt = (struct gpucomm_pkt *)(h + o_pkt);
	st = (uint32_t *)(h + o_st);
	fr->ka.side = (struct gpugen_fill_side *)(h + o_side);
	fr->quit = (uint32_t *)(h + o_quit);
	for (size_t i = 0; i < n; i++) {
		items[i].pkt_list = pkt + i * c->batch;
		items[i].status_h = &st[i];
		items[i].status_d = &st[i];
	}
	for (uint32_t r = 0; r < c->rings; r++) {
		fr->q[r].items = items + (size_t)r * c->items;
		fr->q[r].status = st + (size_t)r * c->items;
		fr->q[r].side = (struct gpugen_fill_side *)fr->ka.side +
			(size_t)r * c->items;
		fr->kp.items[r] = fr->q[r].items;
	}
	return 0;
}

int
gpugen_frames_ring_open(struct gpugen_frames *f,
		const struct gpugen_frames_ring_conf *c,
		struct gpugen_frames_ring **out, char *err, size_t errlen)
{
	struct gpugen_frames_ring *fr;
	uint32_t bpq, slot, smem;
	size_t slen;
	int rc;

	if (out == NULL)
		return gpugen_fail(err, errlen, -EINVAL, "no handle to return");
	*out = NULL;
	if (f == NULL || c == NULL)
		return gpugen_fail(err, errlen, -EINVAL, "no frames handle or no "
			"conf");
	rc = gpugen_fill_conf_check(c->rings, c->items, c->batch, "batches",
		err, errlen);
	if (rc != 0)
		return rc;
	if ((c->flags & ~GPUGEN_FRAMES_IN_GPU) != 0)
		return gpugen_fail(err, errlen, -EINVAL, "flags %#x: unknown "
			"bits %#x", c->flags, c->flags & ~GPUGEN_FRAMES_IN_GPU);
	rc = gpugen_frames_on_dev(f, err, errlen);
	if (rc != 0)
		return rc;
	slen = gpugen_fill_shape(f->max_len, c->rings, c->items,
		(c->flags & GPUGEN_FRAMES_IN_GPU) != 0, &bpq, &slot, &smem);
	if (bpq == 0)
		return gpugen_fail(err, errlen, -EINVAL, "frames of %u bytes on %u "
			"rings need more than %zu MiB of staging", f->max_len,
			c->rings, GPUGEN_FILL_SCRATCH_MAX >> 20);
	fr = aligned_alloc(64, sizeof(*fr));
	if (fr == NULL)
		return gpugen_fail(err, errlen, -ENOMEM, "fill: out of memory");
	memset(fr, 0, sizeof(*fr));
	fr->f = f;
	fr->c = *c;
	rc = ring_lay_out(fr, err, errlen);
	if (rc != 0)
		goto fail;
	rc = gpugen_cuda_dev_alloc(&fr->state,
		gpucomm_kstate_bytes(c->rings, c->items));
	if (rc == 0 && slen != 0)
		rc = gpugen_cuda_dev_alloc(&fr->scratch, slen);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -ENOMEM, "%s: device memory: %s",
			fr->state == NULL ? "dispatch state" : "staging scratch",
			gpucuda_strerror(rc));
		goto fail;
	}
	rc = gpucuda_stream_create(&fr->stream);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -EIO, "CUDA stream: %s",
			gpucuda_strerror(rc));
		goto fail;
	}
	fr->kp.n_rings = c->rings;
	fr->kp.n_items = c->items;
	fr->kp.bpq = bpq;
	fr->kp.poll_ns_min = GPUCOMM_POLL_NS_MIN;
	fr->kp.poll_ns_max = GPUCOMM_POLL_NS_MAX;
	fr->kp.quit = fr->quit;
	gpucomm_kstate_bind(&fr->kp, fr->state);
	fr->ka.table = f->table;
	fr->ka.scratch = fr->scratch;
	fr->ka.slot = slot;
	fr->ka.workers = bpq;
	fr->ka.smem = smem;
	/* The rings' FREE words and pointers out before the kernel reads
	 * them. */
	ring_wmb();
	rc = gpugen_fill_cuda_launch(&fr->kp, &fr->ka, fr->stream);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -EIO, "persistent fill kernel (%u "
			"rings x %u worker blocks) on device %d: %s", c->rings,
			fr->kp.bpq, f->dev, gpucuda_strerror(rc));
		goto fail;
	}
	fr->running = 1;
	*out = fr;
	return 0;
fail:
	ring_free(fr);
	return rc;
}

int
gpugen_frames_ring_post(struct gpugen_frames_ring *fr, uint32_t r,
		void *const *addrs, uint32_t n, uint64_t first, uint64_t tx_ns)
{
	struct gpucomm_item *it;
	struct ring_q *q;
	uint32_t h;

	if (fr == NULL || r >= fr->c.rings || addrs == NULL || n == 0 ||
			n > fr->c.batch || fr->quitting)
		return -EINVAL;
	q = &fr->q[r];
	if (q->inflight == fr->c.items)
		return -ENOSPC;
	h = q->head;
	it = &q->items[h];
	for (uint32_t i = 0; i < n; i++) {
		if (addrs[i] == NULL)
			return -EINVAL;
		it->pkt_list[i].addr = (uintptr_t)addrs[i];
		it->pkt_list[i].size = fr->f->max_len;
	}
	q->side[h].first = first;
	q->side[h].tx_ns = tx_ns;
	/* One stamp time for the whole batch (the API's promise). */
	q->side[h].tx_gap_ns = 0;
	it->num_pkts = n;
	/* The entries, side words and count reach the GPU before READY. */
	ring_wmb();
	__atomic_store_n(&q->status[h], GPUCOMM_STATUS_READY, __ATOMIC_RELAXED);
	q->head = h + 1 == fr->c.items ? 0 : h + 1;
	q->inflight++;
	return 0;
}

int
gpugen_frames_ring_poll(struct gpugen_frames_ring *fr, uint32_t r,
		uint64_t *first, uint32_t *n)
{
	struct ring_q *q;
	uint32_t t, st;

	if (fr == NULL || r >= fr->c.rings)
		return -EINVAL;
	q = &fr->q[r];
	if (q->inflight == 0)
		return 0;
	t = q->tail;
	/* Pairs with the kernel's release of DONE: the frames are written. */
	st = __atomic_load_n(&q->status[t], __ATOMIC_ACQUIRE);
	if (st != GPUCOMM_STATUS_DONE)
		return st == GPUCOMM_STATUS_ERROR ? -EIO : 0;
	if (first != NULL)
		*first = q->side[t].first;
	if (n != NULL)
		*n = q->items[t].num_pkts;
	q->items[t].num_pkts = 0;
	__atomic_store_n(&q->status[t], GPUCOMM_STATUS_FREE, __ATOMIC_RELAXED);
	q->tail = t + 1 == fr->c.items ? 0 : t + 1;
	q->inflight--;
	return 1;
}

uint32_t
gpugen_frames_ring_inflight(const struct gpugen_frames_ring *fr, uint32_t r)
{
	return fr != NULL && r < fr->c.rings ? fr->q[r].inflight : 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
gpugen_frames_ring_close(struct gpugen_frames_ring *fr, char *err,
		size_t errlen)
{
	const uint64_t end = now_ms() + RING_CLOSE_TIMEOUT_MS;
	uint32_t left = 0;
	int rc;

	if (fr == NULL)
		return 0;
	/* The kernel reads the rings and writes the frames until every
	 * batch came back: nothing may be freed before. */
	for (int failed = 0; fr->running && !fr->quitting; ) {
		left = 0;
		for (uint32_t r = 0; r < fr->c.rings; r++) {
			while ((rc = gpugen_frames_ring_poll(fr, r, NULL,
					NULL)) == 1)
				;
			failed |= rc < 0;
			left += fr->q[r].inflight;
		}
		/* A failed batch never comes back: the kernel is stopped
		 * with what it holds. */
		if (left == 0 || failed)
			break;
		if (now_ms() > end)
			return gpugen_fail(err, errlen, -ETIMEDOUT, "%u batches "
				"still in flight after %d ms", left,
				RING_CLOSE_TIMEOUT_MS);
	}
	if (fr->running && !fr->quitting) {
		ring_wmb();
		__atomic_store_n(fr->quit, 1, __ATOMIC_RELAXED);
		/* Out to memory now, not when the store buffer drains. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		fr->quitting = 1;
	}
	rc = fr->running ? gpucomm_cuda_wait(fr->stream,
		RING_CLOSE_TIMEOUT_MS) : 0;
	if (rc != 0 && gpucuda_still_running(rc))
		return gpugen_fail(err, errlen, -ETIMEDOUT, "persistent fill "
			"kernel did not end within %d ms of the quit flag",
			RING_CLOSE_TIMEOUT_MS);
	fr->running = 0;
	ring_free(fr);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "persistent fill kernel: %s",
			gpucuda_strerror(rc));
	return 0;
}
