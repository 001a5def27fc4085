/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent fill's host half (gpugen_fill.h): a gpudev communication
 * list per TX lcore used as a ring (lib/gpucomm), each item's first packet
 * number and stamp time in registered host memory beside it, the staging
 * scratch in GPU memory, and the kernel's start and stop. The per-burst
 * calls (post, collect, release) are a ring's lcore's alone and make no
 * CUDA call unless each burst launches its own kernel.
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "gpucomm_ring.h"
#include "gpugen.h"
#include "gpugen_core.h"
#include "gpugen_cuda.h"
#include "gpugen_fill.h"
#include "gpugen_frames_priv.h"
#include "gpugen_gpu_priv.h"
#include "gpugen_priv.h"

/* How long the kernel may take to see the quit flag and end. */
#define FILL_QUIT_TIMEOUT_MS 2000
/* The floor's echo gives up after this long without an ask (GPU clock);
 * the CPU waits a second for each answer. */
#define FLOOR_ECHO_IDLE_NS (5ULL * 1000000000ULL)
/* GPU memory the floor's flag takes where the statuses are GPU memory:
 * GDRCopy maps whole 64 KiB GPU pages. */
#define FLOOR_GPU_BYTES 65536
/* The times' records are cleared from a host buffer of this many zeros. */
#define FILL_TIMES_ZERO ((size_t)1 << 20)

/* The record's layout is the kernel's (gpugen_cuda.h). */
static_assert(sizeof(struct gpugen_fill_times) ==
	GPUGEN_FILL_TIME_WORDS * sizeof(uint64_t) &&
	offsetof(struct gpugen_fill_times, seq1) == 0 &&
	offsetof(struct gpugen_fill_times, seen) == 8 &&
	offsetof(struct gpugen_fill_times, loaded) == 16 &&
	offsetof(struct gpugen_fill_times, built) == 24 &&
	offsetof(struct gpugen_fill_times, done) == 32,
	"gpugen_fill_times against the kernel's GPUGEN_FILL_TIME_WORDS");

/* A ring's state: its lcore's alone, a cache line of its own. */
struct fill_ring {
	struct gpucomm_ring ring;
	struct rte_gpu_comm_list *list;
	struct gpugen_fill_side *side;	/* its items' words in f->side */
	void *stream;			/* launch per burst */
} __rte_cache_aligned;

struct gpugen_fill {
	struct fill_ring r[GPUCOMM_MAX_RINGS];
	struct gpugen_gpu *gg;
	struct gpugen_fill_conf c;
	char gpu_name[RTE_DEV_NAME_MAX_LEN];
	struct gpugen_fill_side *side;	/* registered host pages */
	size_t side_len;
	uint8_t *scratch;		/* GPU memory, staged builds only */
	uint64_t *times;		/* GPU memory, with c.times only */
	struct gpucomm_kernel k;
	int k_ok;
	struct gpugen_fill_kargs ka;
	void *kstream;			/* the persistent kernel's */
	int running;			/* launched, not seen ended */
	uint32_t fixed_len;		/* every frame's length, or 0 */
};

/* The device this thread's CUDA runtime launches on: a thread of its own
 * starts on device 0. */
static __thread const struct gpugen_fill *fill_selected;

static int
select_gpu(const struct gpugen_fill *f)
{
	int rc;

	if (fill_selected == f)
		return 0;
	rc = gpucuda_select(f->gpu_name, NULL);
	if (rc == 0)
		fill_selected = f;
	return rc;
}

void
gpugen_fill_close(struct gpugen_fill *f)
{
	int16_t id;

	if (f == NULL)
		return;
	if (f->running) {
		/* The kernel may still read the lists and write the
		 * frames: leave it all rather than free under it. */
		fprintf(stderr, "gpugen: fill closed with its kernel running: "
			"its memory is left\n");
		return;
	}
	id = f->gg->gpu_id;
	for (uint32_t r = 0; r < f->c.rings; r++) {
		struct fill_ring *R = &f->r[r];

		if (R->list != NULL && rte_gpu_comm_destroy_list(R->list,
				f->c.items) != 0)
			fprintf(stderr, "gpugen: ring %u: comm list destroy: %s\n",
				r, rte_strerror(rte_errno));
		if (gpucuda_stream_destroy(R->stream) != 0)
			fprintf(stderr, "gpugen: ring %u: stream destroy failed\n", r);
	}
	if (gpucuda_stream_destroy(f->kstream) != 0)
		fprintf(stderr, "gpugen: fill stream destroy failed\n");
	if (f->k_ok)
		gpucomm_kernel_teardown(&f->k);
	if (f->scratch != NULL && rte_gpu_mem_free(id, f->scratch) != 0)
		fprintf(stderr, "gpugen: rte_gpu_mem_free (fill scratch): %s\n",
			rte_strerror(rte_errno));
	if (f->times != NULL && rte_gpu_mem_free(id, f->times) != 0)
		fprintf(stderr, "gpugen: rte_gpu_mem_free (fill times): %s\n",
			rte_strerror(rte_errno));
	gpugen_unpin(id, f->side, f->side_len);
	rte_free(f);
}

/* len bytes of the fill's GPU's memory, or NULL with *rc a negative
 * errno and err saying why (what: the memory's use). */
static void *
fill_gpu_alloc(struct gpugen_fill *f, size_t len, const char *what, int *rc,
		char *err, size_t errlen)
{
	void *p = rte_gpu_mem_alloc(f->gg->gpu_id, len, 16);

	if (p == NULL) {
		int e = rte_errno != 0 ? rte_errno : ENOMEM;

		*rc = gpugen_fail(err, errlen, -e, "%s: %zu bytes of GPU "
			"memory: %s", what, len, rte_strerror(e));
	}
	return p;
}

/* Worker blocks per ring and where frames are built: shared memory,
 * in place, or the staging scratch that host-memory frames then need
 * (gpugen_fill_shape). */
static int
fill_scratch(struct gpugen_fill *f, uint32_t *bpq, char *err, size_t errlen)
{
	uint32_t slot, smem;
	int rc;
	size_t len = gpugen_fill_shape(f->gg->max_len, f->c.rings, f->c.items,
		f->c.frames_in_gpu, bpq, &slot, &smem);

	if (*bpq == 0)
		return gpugen_fail(err, errlen, -EINVAL, "frames of %u bytes on %u "
			"rings need more than %zu MiB of staging", f->gg->max_len,
			f->c.rings, GPUGEN_FILL_SCRATCH_MAX >> 20);
	f->ka.smem = smem;
	f->ka.slot = slot;
	f->ka.workers = *bpq;
	if (len == 0)
		return 0;
	f->scratch = fill_gpu_alloc(f, len, "fill scratch", &rc, err, errlen);
	if (f->scratch == NULL)
		return rc;
	f->ka.scratch = f->scratch;
	return 0;
}

/* The GPU times' records (conf.times a ring), zeroed: a record never
 * written reads seq1 0. */
static int
fill_times(struct gpugen_fill *f, char *err, size_t errlen)
{
	const size_t len = (size_t)f->c.rings * f->c.times *
		sizeof(struct gpugen_fill_times);
	void *zero;
	int rc;

	if (f->c.times == 0)
		return 0;
	f->times = fill_gpu_alloc(f, len, "fill times", &rc, err, errlen);
	if (f->times == NULL)
		return rc;
	zero = calloc(1, RTE_MIN(len, (size_t)FILL_TIMES_ZERO));
	if (zero == NULL)
		return gpugen_fail(err, errlen, -ENOMEM, "fill times: no memory");
	rc = select_gpu(f);
	for (size_t off = 0; rc == 0 && off < len; off += FILL_TIMES_ZERO)
		rc = gpucuda_copy((uint8_t *)f->times + off, zero,
			RTE_MIN(len - off, (size_t)FILL_TIMES_ZERO));
	free(zero);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "fill times: clearing %zu "
			"bytes: %s", len, gpucuda_strerror(rc));
	f->ka.times = (unsigned long long *)f->times;
	f->ka.n_times = f->c.times;
	return 0;
}

/*
 * The compact table's length when the worker blocks keep it in shared
 * memory (GPUGEN_FILL_SMEM_TABLE), else 0. A table in host memory stays
 * there: GPUGEN_TABLE_HOST is chosen to read it over PCIe.
 */
static uint32_t
fill_table_smem(const struct gpugen_gpu *gg)
{
	size_t len;
	const struct gpugen_table *t = gpugen_table(gg->g, &len);
	const uint32_t clen = gpugen_table_compact_len(t->n_streams,
		t->tmpl_bytes);

	if (gg->where != GPUGEN_TABLE_DEVICE || clen > GPUGEN_FILL_SMEM_TABLE)
		return 0;
	return clen;
}

/* Rings with lap tags and side records: the persistent kernel's only
 * (the item kernel loads its item after the launch). */
static int
fill_tagged(const struct gpugen_fill_conf *c)
{
	return c->lap_tags && !c->launch_per_burst;
}

int
gpugen_fill_open(struct gpugen_gpu *gg, const struct gpugen_fill_conf *c,
		struct gpugen_fill **out, char *err, size_t errlen)
{
	struct rte_gpu_comm_list *lists[GPUCOMM_MAX_RINGS];
	struct rte_gpu_info info;
	struct gpugen_fill *f;
	uint32_t bpq;
	int rc;

	*out = NULL;
	if (gg == NULL || c == NULL)
		return gpugen_fail(err, errlen, -EINVAL, "no GPU build or no conf");
	rc = gpugen_fill_conf_check(c->rings, c->items, c->burst, "bursts",
		err, errlen);
	if (rc != 0)
		return rc;
	if (fill_tagged(c) && c->burst > GPUCOMM_SIDE_PKTS_MAX)
		return gpugen_fail(err, errlen, -EINVAL, "lap tags: bursts of at "
			"most %u packets (the side records take the packet "
			"lists' last entries)", GPUCOMM_SIDE_PKTS_MAX);
	if (c->times > GPUGEN_FILL_TIMES_MAX)
		return gpugen_fail(err, errlen, -EINVAL, "times of %u bursts a "
			"ring: at most %u", c->times, GPUGEN_FILL_TIMES_MAX);
	rc = rte_gpu_info_get(gg->gpu_id, &info);
	if (rc != 0)
		return gpugen_fail(err, errlen, rc, "GPU %d: rte_gpu_info_get: %s",
			gg->gpu_id, rte_strerror(-rc));
	f = rte_zmalloc("gpugen_fill", sizeof(*f), RTE_CACHE_LINE_SIZE);
	if (f == NULL)
		return gpugen_fail(err, errlen, -ENOMEM, "no memory for the fill");
	f->gg = gg;
	f->c = *c;
	f->fixed_len = gpugen_fixed_len(gg->g);
	snprintf(f->gpu_name, sizeof(f->gpu_name), "%s", info.name);
	f->ka.table = gg->table;
	f->ka.table_smem = fill_table_smem(gg);
	f->side_len = (size_t)c->rings * c->items * sizeof(*f->side);
	f->side = gpugen_pinned(gg->gpu_id, &f->side_len);
	if (f->side == NULL) {
		rc = gpugen_fail(err, errlen, -rte_errno, "fill side words: %s",
			rte_strerror(rte_errno));
		goto fail;
	}
	f->ka.side = f->side;
	for (uint32_t r = 0; r < c->rings; r++) {
		struct fill_ring *R = &f->r[r];

		R->side = f->side + (size_t)r * c->items;
		R->list = rte_gpu_comm_create_list(gg->gpu_id, c->items);
		if (R->list == NULL) {
			rc = gpugen_fail(err, errlen, -rte_errno, "ring %u: "
				"rte_gpu_comm_create_list(%u): %s", r, c->items,
				rte_strerror(rte_errno));
			goto fail;
		}
		/* No GPU_WMB: the CPU writes only descriptors, which its
		 * own barrier orders; the GPU writes the frames. */
		rc = gpucomm_ring_init(&R->ring, gg->gpu_id, R->list, c->items,
			fill_tagged(c) ? GPUCOMM_RING_TAGS | GPUCOMM_RING_SIDE :
			0);
		if (rc != 0) {
			rc = gpugen_fail(err, errlen, rc, "ring %u: init: %s", r,
				rte_strerror(-rc));
			goto fail;
		}
		lists[r] = R->list;
		if (c->launch_per_burst &&
				(rc = gpucuda_stream_create(&R->stream)) != 0) {
			rc = gpugen_fail(err, errlen, -EIO, "ring %u: CUDA stream: %s",
				r, gpucuda_strerror(rc));
			goto fail;
		}
	}
	rc = fill_scratch(f, &bpq, err, errlen);
	if (rc != 0)
		goto fail;
	rc = fill_times(f, err, errlen);
	if (rc != 0)
		goto fail;
	rc = gpucomm_kernel_setup(&f->k, gg->gpu_id, lists, c->rings, c->items,
		bpq);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, rc, "kernel state: %s",
			rte_strerror(-rc));
		goto fail;
	}
	f->k_ok = 1;
	/* The workers' prefetch (gpucomm_persistent.cuh). */
	f->k.kp.lap_tags = fill_tagged(c);
	rc = gpucuda_stream_create(&f->kstream);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -EIO, "CUDA stream: %s",
			gpucuda_strerror(rc));
		goto fail;
	}
	*out = f;
	return 0;
fail:
	gpugen_fill_close(f);
	return rc;
}

int
gpugen_fill_start(struct gpugen_fill *f, char *err, size_t errlen)
{
	int rc;

	if (f->running)
		return gpugen_fail(err, errlen, -EALREADY, "fill already started");
	rc = select_gpu(f);
	if (rc != 0)
		return gpugen_fail(err, errlen, -ENODEV, "GPU %s: %s", f->gpu_name,
			gpucuda_strerror(rc));
	if (f->c.launch_per_burst) {
		/* The item kernels read each item's packet list and status
		 * from the dispatch state: set once (synchronously). */
		rc = gpucomm_cuda_state_init(&f->k.kp, f->kstream);
		if (rc != 0)
			return gpugen_fail(err, errlen, -EIO, "dispatch state: %s",
				gpucuda_strerror(rc));
		return 0;
	}
	rc = gpugen_fill_cuda_launch(&f->k.kp, &f->ka, f->kstream);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "persistent fill kernel "
			"(%u rings x %u worker blocks): %s", f->c.rings, f->k.kp.bpq,
			gpucuda_strerror(rc));
	f->running = 1;
	return 0;
}

/* Ring r's next item, its descriptors and mbufs written: READY (or the
 * launch for it). */
static inline int
post_item(struct gpugen_fill *f, uint32_t r, uint32_t n, uint64_t first,
		uint64_t tx_ns, uint64_t tx_gap_ns)
{
	struct fill_ring *R = &f->r[r];
	const uint32_t idx = R->ring.head;
	const uint64_t seq = R->ring.published;
	int rc;

	/* Plain stores: publish's barrier orders them before READY. */
	R->side[idx].first = first;
	R->side[idx].tx_ns = tx_ns;
	R->side[idx].tx_gap_ns = tx_gap_ns;
	/* Tagged: the same words in the item's side slots too, which the
	 * workers load with their poll; every publish writes all three,
	 * once (a publish that fails ends the lcore's run). */
	if (R->ring.side) {
		gpucomm_ring_set_side(&R->ring, 0, first);
		gpucomm_ring_set_side(&R->ring, 1, tx_ns);
		gpucomm_ring_set_side(&R->ring, 2, tx_gap_ns);
	}
	rc = gpucomm_ring_publish(&R->ring, n);
	if (unlikely(rc != 0))
		return rc;
	if (f->c.launch_per_burst) {
		/* The launch is the acquire: stream order after READY. */
		if (unlikely(select_gpu(f) != 0 || gpugen_fill_cuda_launch_item(
				&f->k.kp, &f->ka, r, idx, seq, R->stream) != 0))
			return -EIO;
	}
	return 0;
}

/* Ring r's next item for a burst of n: 0, -ENOSPC, or -EINVAL. */
static inline int
next_item(struct gpugen_fill *f, uint32_t r, uint32_t n,
		struct rte_gpu_comm_list **it)
{
	*it = gpucomm_ring_next(&f->r[r].ring);
	if (unlikely(*it == NULL))
		return -ENOSPC;
	if (unlikely(n == 0 || n > f->c.burst))
		return -EINVAL;
	return 0;
}

int
gpugen_fill_post(struct gpugen_fill *f, uint32_t r, struct rte_mbuf **m,
		uint32_t n, uint64_t first, uint64_t tx_ns, uint64_t tx_gap_ns)
{
	struct rte_gpu_comm_list *it;
	struct rte_gpu_comm_pkt *e;
	/* Locals: the stores through mbuf pointers would otherwise have
	 * it->mbufs and the ring's lap (the entries' tag word) loaded
	 * again each packet. */
	struct rte_mbuf **keep;
	uint64_t tag;
	int rc = next_item(f, r, n, &it);

	if (unlikely(rc != 0))
		return rc;
	e = it->pkt_list;
	keep = it->mbufs;
	tag = gpucomm_ring_tag_word(&f->r[r].ring, 0);
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *b = m[i];

		if (unlikely(b->nb_segs != 1)) {
			/* Tagged, entries of this lap were written. */
			gpucomm_ring_tag_abandon(&f->r[r].ring);
			return -EINVAL;
		}
		gpucomm_ring_put_pkt(&e[i], rte_pktmbuf_mtod(b, uintptr_t),
			b->data_len, tag);
		keep[i] = b;
	}
	return post_item(f, r, n, first, tx_ns, tx_gap_ns);
}

int
gpugen_fill_post_raw(struct gpugen_fill *f, uint32_t r, struct rte_mbuf **m,
		uint32_t n, uint64_t first, uint64_t tx_ns, uint64_t tx_gap_ns)
{
	const uint32_t fixed = f->fixed_len;
	struct rte_gpu_comm_list *it;
	struct rte_gpu_comm_pkt *e;
	/* Locals: the stores through mbuf pointers would otherwise have
	 * it->mbufs and the ring's lap (the entries' tag word) loaded
	 * again each packet. */
	struct rte_mbuf **keep;
	uint64_t tag;
	int rc = next_item(f, r, n, &it);

	if (unlikely(rc != 0))
		return rc;
	e = it->pkt_list;
	keep = it->mbufs;
	tag = gpucomm_ring_tag_word(&f->r[r].ring, 0);
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *b = m[i];

		gpugen_mbuf_ready(b, f->gg->g, fixed, first + i);
		gpucomm_ring_put_pkt(&e[i],
			(uintptr_t)b->buf_addr + RTE_PKTMBUF_HEADROOM,
			b->pkt_len, tag);
		keep[i] = b;
	}
	return post_item(f, r, n, first, tx_ns, tx_gap_ns);
}

int
gpugen_fill_collect(struct gpugen_fill *f, uint32_t r, struct rte_mbuf ***m,
		uint32_t *n)
{
	struct rte_gpu_comm_list *it = NULL;
	int rc = gpucomm_ring_collect(&f->r[r].ring, &it);

	if (rc <= 0)
		return rc;
	*m = it->mbufs;
	*n = it->num_pkts;
	return 1;
}

int
gpugen_fill_release(struct gpugen_fill *f, uint32_t r)
{
	return gpucomm_ring_release(&f->r[r].ring);
}

uint32_t
gpugen_fill_inflight(const struct gpugen_fill *f, uint32_t r)
{
	return gpucomm_ring_inflight(&f->r[r].ring);
}

uint32_t
gpugen_fill_abandon(struct gpugen_fill *f, uint32_t r)
{
	struct gpucomm_ring *g = &f->r[r].ring;
	uint32_t freed = 0;

	for (uint32_t k = 0; k < gpucomm_ring_inflight(g); k++) {
		struct rte_gpu_comm_list *it = gpucomm_ring_inflight_item(g, k);

		rte_pktmbuf_free_bulk(it->mbufs, it->num_pkts);
		freed += it->num_pkts;
	}
	gpucomm_ring_abandon(g);
	return freed;
}

int
gpugen_fill_stop(struct gpugen_fill *f, char *err, size_t errlen)
{
	int rc;

	if (f->c.launch_per_burst) {
		for (uint32_t r = 0; r < f->c.rings; r++) {
			rc = gpucuda_stream_sync(f->r[r].stream);
			if (rc != 0)
				return gpugen_fail(err, errlen, -EIO, "ring %u: %s",
					r, gpucuda_strerror(rc));
		}
		return 0;
	}
	if (!f->running)
		return 0;
	for (uint32_t r = 0; r < f->c.rings; r++)
		if (gpucomm_ring_inflight(&f->r[r].ring) != 0)
			return gpugen_fail(err, errlen, -EBUSY, "ring %u has %u "
				"bursts in flight: collect them first", r,
				gpucomm_ring_inflight(&f->r[r].ring));
	rc = gpucomm_kernel_quit(&f->k);
	if (rc != 0)
		return gpugen_fail(err, errlen, rc, "quit flag: %s",
			rte_strerror(-rc));
	rc = gpucomm_cuda_wait(f->kstream, FILL_QUIT_TIMEOUT_MS);
	if (rc == 0) {
		f->running = 0;
		return 0;
	}
	if (gpucuda_still_running(rc))
		return gpugen_fail(err, errlen, -ETIMEDOUT, "persistent fill kernel "
			"did not end within %d ms of the quit flag",
			FILL_QUIT_TIMEOUT_MS);
	/* It ended, with an error: nothing runs on the memory any more. */
	f->running = 0;
	return gpugen_fail(err, errlen, -EIO, "persistent fill kernel: %s",
		gpucuda_strerror(rc));
}

int
gpugen_fill_times(struct gpugen_fill *f, uint32_t r,
		struct gpugen_fill_times *t, uint32_t n)
{
	int rc;

	if (f == NULL || t == NULL || f->times == NULL || n != f->c.times ||
			r >= f->c.rings)
		return -EINVAL;
	/* The kernel writes a record after its burst's DONE: only its end
	 * (or, launched per burst, the ring's stream drained) orders the
	 * last ones before this copy. */
	if (f->running)
		return -EBUSY;
	rc = select_gpu(f);
	if (rc == 0 && f->c.launch_per_burst)
		rc = gpucuda_stream_sync(f->r[r].stream);
	if (rc == 0)
		rc = gpucuda_copy(t, f->times + (size_t)r * n *
			GPUGEN_FILL_TIME_WORDS, (size_t)n * sizeof(*t));
	return rc == 0 ? 0 : -EIO;
}

/* The floor's flag: where gpudev put ring r's statuses, GPU memory the
 * CPU maps (*host the CPU's address, *dev the GPU's) or registered host
 * memory (the same address). 0 or -errno with err. */
static int
floor_flag(struct gpugen_fill *f, int in_gpu, volatile uint32_t **host,
		uint32_t **dev, char *err, size_t errlen)
{
	const int16_t id = f->gg->gpu_id;
	void *m;

	if (in_gpu) {
		m = rte_gpu_mem_alloc(id, FLOOR_GPU_BYTES, FLOOR_GPU_BYTES);
		if (m == NULL)
			return gpugen_fail(err, errlen, -ENOMEM, "floor: %d bytes "
				"of GPU memory: %s", FLOOR_GPU_BYTES,
				rte_strerror(rte_errno));
		*host = rte_gpu_mem_cpu_map(id, FLOOR_GPU_BYTES, m);
		if (*host == NULL) {
			int e = rte_errno;

			rte_gpu_mem_free(id, m);
			return gpugen_fail(err, errlen, -e, "floor: mapping GPU "
				"memory for the CPU: %s", rte_strerror(e));
		}
		*dev = m;
		return 0;
	}
	m = rte_zmalloc("gpugen_floor", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
	if (m == NULL)
		return gpugen_fail(err, errlen, -ENOMEM, "floor: no memory");
	if (rte_gpu_mem_register(id, RTE_CACHE_LINE_SIZE, m) != 0) {
		int e = rte_errno;

		rte_free(m);
		return gpugen_fail(err, errlen, -e, "floor: registering the flag: "
			"%s", rte_strerror(e));
	}
	*host = m;
	*dev = m;
	return 0;
}

static void
floor_flag_free(struct gpugen_fill *f, int in_gpu, uint32_t *dev)
{
	const int16_t id = f->gg->gpu_id;

	if (in_gpu) {
		if (rte_gpu_mem_cpu_unmap(id, dev) != 0)
			fprintf(stderr, "gpugen: floor: unmapping the flag: %s\n",
				rte_strerror(rte_errno));
		if (rte_gpu_mem_free(id, dev) != 0)
			fprintf(stderr, "gpugen: floor: freeing the flag: %s\n",
				rte_strerror(rte_errno));
		return;
	}
	if (rte_gpu_mem_unregister(id, dev) != 0) {
		/* Still mapped for the GPU: leave it rather than free it. */
		fprintf(stderr, "gpugen: floor: unregistering the flag: %s\n",
			rte_strerror(rte_errno));
		return;
	}
	rte_free(dev);
}

int
gpugen_fill_floor(struct gpugen_fill *f, uint32_t r, uint64_t *cycles,
		uint32_t rounds, int *in_gpu, char *err, size_t errlen)
{
	const uint64_t wait = rte_get_tsc_hz();	/* a second */
	struct gpucomm_echo_state st;
	struct gpucomm_echo *echo;
	volatile uint32_t *host;
	uint32_t *dev, k;
	int wc, rc, e;

	if (f == NULL || cycles == NULL || rounds == 0 || r >= f->c.rings)
		return gpugen_fail(err, errlen, -EINVAL, "floor: %s",
			f == NULL ? "no fill" : cycles == NULL ? "nowhere for the "
			"times" : rounds == 0 ? "no round" : "no such ring");
	wc = f->r[r].ring.wc_status;
	if (in_gpu != NULL)
		*in_gpu = wc;
	rc = select_gpu(f);
	if (rc != 0)
		return gpugen_fail(err, errlen, -ENODEV, "GPU %s: %s", f->gpu_name,
			gpucuda_strerror(rc));
	rc = floor_flag(f, wc, &host, &dev, err, errlen);
	if (rc != 0)
		return rc;
	/* The echo must not take this 0 for an ask, nor a stale word left
	 * in GPU memory: stored and, write-combined, flushed before the
	 * launch. */
	*host = 0;
	rte_wmb();
	e = gpucomm_echo_start(dev, rounds, FLOOR_ECHO_IDLE_NS, &echo);
	if (e != 0) {
		floor_flag_free(f, wc, dev);
		return gpugen_fail(err, errlen, -EIO, "floor: launching the flag "
			"echo: %s", gpucuda_strerror(e));
	}
	for (k = 0; k < rounds; k++) {
		const uint32_t ask = 2 * k + 1;
		uint64_t t0, t1;
		uint32_t v;

		t0 = rte_rdtsc_precise();
		v = gpucomm_echo_ask(host, wc, ask, ask + 1, t0 + wait);
		t1 = rte_rdtsc_precise();
		if (v != ask + 1)
			break;
		cycles[k] = t1 - t0;
	}
	if (k < rounds) {
		/* It ends on the quit word (or its idle timeout). */
		__atomic_store_n(host, GPUCOMM_ECHO_QUIT, __ATOMIC_RELAXED);
		rte_wmb();
	}
	e = gpucomm_echo_finish(echo, &st);
	floor_flag_free(f, wc, dev);
	if (k < rounds)
		return gpugen_fail(err, errlen, -ETIMEDOUT, "floor: round %u of "
			"%u: no answer from the GPU within a second", k + 1,
			rounds);
	if (e != 0)
		return gpugen_fail(err, errlen, -EIO, "floor: flag echo: %s",
			gpucuda_strerror(e));
	if (st.rounds != rounds)
		return gpugen_fail(err, errlen, -EIO, "floor: the echo answered "
			"%u asks of %u", st.rounds, rounds);
	return 0;
}
