/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * comm_list: packets handed to a persistent kernel through a gpudev
 * communication list arrive intact (checksums computed on the GPU match
 * the CPU's) and every mbuf goes back to its pool. The kernel is the ring
 * library's (lib/gpucomm), fed first through gpudev's own populate and
 * cleanup, then through the library's lcore side for several laps of the
 * ring, then launched per item; it must quit on its flag.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "gpucomm_ring.h"
#include "pattern.h"
#include "tg.h"
#include "tg_time.h"

#define N_ITEMS 16
#define MAX_PKTS 32
#define MAX_PKT_LEN 1400
#define POOL_SIZE 1023
#define MAX_CHUNKS 64
/* Laps of the ring through the library's lcore side. */
#define RING_LAPS 8
#define CPU_WAIT_NS (25ULL * 1000000000ULL)
/* The persistent kernel ends this soon after its quit flag. */
#define KERNEL_QUIT_MS 1000

struct pool_reg {
	int16_t dev_id;
	unsigned int n;
	void *addr[MAX_CHUNKS];
	int err;		/* first registration failure (rte_errno) */
};

struct item_expect {
	uint32_t num_pkts;
	uint64_t bytes;
	uint64_t checksum;
	struct rte_mbuf *mbufs[MAX_PKTS];
};

/* Mbuf data lives in mempool chunks; the kernel reads it in place. */
static void
register_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
		struct rte_mempool_memhdr *memhdr, unsigned int idx __rte_unused)
{
	struct pool_reg *reg = opaque;

	if (reg->err != 0)
		return;
	if (reg->n == MAX_CHUNKS) {
		reg->err = E2BIG;
		return;
	}
	if (rte_gpu_mem_register(reg->dev_id, memhdr->len, memhdr->addr) != 0) {
		reg->err = rte_errno != 0 ? rte_errno : EPERM;
		return;
	}
	reg->addr[reg->n++] = memhdr->addr;
}

static void
unregister_chunks(struct pool_reg *reg, struct tg_result *res)
{
	while (reg->n > 0) {
		void *addr = reg->addr[--reg->n];

		if (rte_gpu_mem_unregister(reg->dev_id, addr) != 0)
			tg_fail(res, "unregister mempool chunk %p: %s", addr,
				tg_errno_str(rte_errno));
	}
}

static enum tg_status
fill_item(struct tg_result *res, struct rte_mempool *mp,
		struct item_expect *ex, uint64_t *rng)
{
	uint32_t p;

	memset(ex, 0, sizeof(*ex));
	ex->num_pkts = 1 + tg_rand(rng) % MAX_PKTS;
	if (rte_pktmbuf_alloc_bulk(mp, ex->mbufs, ex->num_pkts) != 0) {
		ex->num_pkts = 0;
		return tg_fail(res, "rte_pktmbuf_alloc_bulk failed");
	}
	for (p = 0; p < ex->num_pkts; p++) {
		uint16_t len = 1 + tg_rand(rng) % MAX_PKT_LEN;
		uint8_t *data = (uint8_t *)rte_pktmbuf_append(ex->mbufs[p], len);
		uint16_t j;

		if (data == NULL)
			return tg_fail(res, "no room for %u bytes in an mbuf", len);
		for (j = 0; j < len; j++) {
			data[j] = (uint8_t)tg_rand(rng);
			ex->checksum += gk_checksum_term(p, j, data[j]);
		}
		ex->bytes += len;
	}
	return TG_PASS;
}

/* Populate must refuse multi-segment mbufs and leave the item FREE. */
static enum tg_status
check_chained_rejected(struct tg_result *res, struct rte_mempool *mp,
		struct rte_gpu_comm_list *item)
{
	enum rte_gpu_comm_list_status st;
	struct rte_mbuf *head, *tail;
	int ret;

	head = rte_pktmbuf_alloc(mp);
	tail = rte_pktmbuf_alloc(mp);
	if (head == NULL || tail == NULL) {
		rte_pktmbuf_free(head);
		rte_pktmbuf_free(tail);
		return tg_fail(res, "mbuf alloc for the chained case failed");
	}
	if (rte_pktmbuf_append(head, 64) == NULL ||
			rte_pktmbuf_append(tail, 64) == NULL ||
			rte_pktmbuf_chain(head, tail) != 0) {
		rte_pktmbuf_free(head);
		rte_pktmbuf_free(tail);
		return tg_fail(res, "cannot build a chained mbuf");
	}
	ret = rte_gpu_comm_populate_list_pkts(item, &head, 1);
	if (ret != -ENOTSUP || rte_errno != ENOTSUP)
		tg_fail(res, "populate with a chained mbuf returned %d "
			"(rte_errno %d), expected -ENOTSUP", ret, rte_errno);
	else if (rte_gpu_comm_get_status(item, &st) != 0 ||
			st != RTE_GPU_COMM_LIST_FREE)
		tg_fail(res, "item not FREE after a rejected populate");
	/* frees both segments */
	rte_pktmbuf_free(head);
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

static enum tg_status
wait_done(struct tg_result *res, struct rte_gpu_comm_list *item,
		uint32_t idx, uint64_t deadline)
{
	enum rte_gpu_comm_list_status st;

	do {
		if (rte_gpu_comm_get_status(item, &st) != 0)
			return tg_fail(res, "get_status(item %u): %s", idx,
				tg_errno_str(rte_errno));
		if (st == RTE_GPU_COMM_LIST_DONE)
			return TG_PASS;
		if (st != RTE_GPU_COMM_LIST_READY)
			return tg_fail(res, "item %u status %d while the GPU works "
				"on it", idx, (int)st);
	} while (tg_now_ns() < deadline);
	return tg_fail(res, "item %u not DONE within %llu s", idx,
		CPU_WAIT_NS / 1000000000ULL);
}

static enum tg_status
check_report(struct tg_result *res, const volatile struct gk_item_report *r,
		const struct item_expect *ex, uint32_t idx, uint64_t seq)
{
	if (r->state != GK_ITEM_DONE)
		return tg_fail(res, "item %u: kernel state %u", idx, r->state);
	if (r->seq != seq)
		return tg_fail(res, "item %u: the kernel was handed item number %"
			PRIu64 ", the CPU published %" PRIu64, idx, r->seq, seq);
	if (r->num_pkts != ex->num_pkts || r->bytes != ex->bytes)
		return tg_fail(res, "item %u: GPU saw %u packets / %" PRIu64
			" bytes, CPU populated %u / %" PRIu64, idx, r->num_pkts,
			r->bytes, ex->num_pkts, ex->bytes);
	if (r->checksum != ex->checksum)
		return tg_fail(res, "item %u: GPU checksum %#" PRIx64 ", CPU %#"
			PRIx64, idx, r->checksum, ex->checksum);
	return TG_PASS;
}

/* Cleanup resets the item; mbufs must end up back in the pool. */
static enum tg_status
cleanup_item(struct tg_result *res, struct rte_mempool *mp,
		struct rte_gpu_comm_list *item, struct item_expect *ex,
		uint32_t idx)
{
	enum rte_gpu_comm_list_status st;
	unsigned int before = rte_mempool_avail_count(mp);

	if (rte_gpu_comm_cleanup_list(item) != 0)
		return tg_fail(res, "cleanup_list(item %u): %s", idx,
			tg_errno_str(rte_errno));
	/*
	 * Some gpudev versions return the mbufs in cleanup, others leave
	 * them to the caller: accept both, never free twice.
	 */
	if (rte_mempool_avail_count(mp) == before)
		rte_pktmbuf_free_bulk(ex->mbufs, ex->num_pkts);
	else if (rte_mempool_avail_count(mp) != before + ex->num_pkts)
		return tg_fail(res, "cleanup_list(item %u) returned %u of %u mbufs",
			idx, rte_mempool_avail_count(mp) - before, ex->num_pkts);
	ex->num_pkts = 0;
	if (rte_gpu_comm_get_status(item, &st) != 0 ||
			st != RTE_GPU_COMM_LIST_FREE || item->num_pkts != 0)
		return tg_fail(res, "item %u not FREE and empty after cleanup", idx);
	return TG_PASS;
}

/*
 * Phase 1, gpudev's own API: every item populated while the ring
 * library's persistent kernel already waits on it, checksums checked,
 * items cleaned up. The kernel has then taken items 0 .. N_ITEMS - 1.
 */
static enum tg_status
run_populate(struct tg_result *res, struct rte_mempool *mp,
		struct rte_gpu_comm_list *list, struct item_expect *ex,
		const volatile struct gk_item_report *rep, uint64_t *rng)
{
	uint64_t deadline;
	uint32_t i, filled = 0;

	for (i = 0; i < N_ITEMS; i++) {
		if (fill_item(res, mp, &ex[i], rng) != TG_PASS)
			break;
		filled = i + 1;
		if (rte_gpu_comm_populate_list_pkts(&list[i], ex[i].mbufs,
				ex[i].num_pkts) != 0) {
			tg_fail(res, "populate item %u: %s", i,
				tg_errno_str(rte_errno));
			break;
		}
		if (list[i].num_pkts != ex[i].num_pkts) {
			tg_fail(res, "item %u holds %u packets after populating %u",
				i, list[i].num_pkts, ex[i].num_pkts);
			break;
		}
	}
	deadline = tg_now_ns() + CPU_WAIT_NS;
	for (i = 0; i < filled && res->status != TG_FAIL; i++) {
		if (wait_done(res, &list[i], i, deadline) != TG_PASS ||
				check_report(res, &rep[i], &ex[i], i, i) != TG_PASS)
			break;
	}
	for (i = 0; i < filled; i++) {
		enum rte_gpu_comm_list_status st;

		/* A READY item the kernel never took: released by hand (the
		 * kernel never looks at ERROR). */
		if (rte_gpu_comm_get_status(&list[i], &st) == 0 &&
				st == RTE_GPU_COMM_LIST_READY)
			rte_gpu_comm_set_status(&list[i], RTE_GPU_COMM_LIST_ERROR);
		cleanup_item(res, mp, &list[i], &ex[i], i);
	}
	/* A fill that failed half-way still holds its mbufs. */
	if (filled < N_ITEMS && ex[filled].num_pkts != 0) {
		rte_pktmbuf_free_bulk(ex[filled].mbufs, ex[filled].num_pkts);
		ex[filled].num_pkts = 0;
	}
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

/* One more item through the library's lcore side; *seq_base + published
 * is the number the kernel gives it. */
static enum tg_status
ring_publish(struct tg_result *res, struct rte_mempool *mp,
		struct gpucomm_ring *r, struct item_expect *ex, uint64_t *rng)
{
	struct item_expect *e = &ex[r->head];
	int rc;

	if (fill_item(res, mp, e, rng) != TG_PASS)
		return TG_FAIL;
	rc = gpucomm_ring_fill_mbufs(r, e->mbufs, e->num_pkts);
	if (rc == 0)
		rc = gpucomm_ring_publish(r, e->num_pkts);
	if (rc != 0) {
		rte_pktmbuf_free_bulk(e->mbufs, e->num_pkts);
		e->num_pkts = 0;
		return tg_fail(res, "ring publish: %s", tg_errno_str(-rc));
	}
	return TG_PASS;
}

/* The oldest item, once DONE: checked, its mbufs freed, back to FREE. 1
 * collected, 0 not yet, TG_FAIL as -1. */
static int
ring_collect(struct tg_result *res, struct gpucomm_ring *r,
		struct item_expect *ex, const volatile struct gk_item_report *rep,
		uint64_t seq_base)
{
	struct rte_gpu_comm_list *it;
	uint32_t idx = r->tail;
	int rc = gpucomm_ring_collect(r, &it);

	if (rc == 0)
		return 0;
	if (rc < 0) {
		tg_fail(res, "ring collect: %s", tg_errno_str(-rc));
		return -1;
	}
	rc = check_report(res, &rep[idx], &ex[idx], idx, seq_base + r->released) ==
		TG_PASS ? 1 : -1;
	rte_pktmbuf_free_bulk(ex[idx].mbufs, ex[idx].num_pkts);
	ex[idx].num_pkts = 0;
	if (gpucomm_ring_release(r) != 0) {
		tg_fail(res, "ring release of item %u", idx);
		return -1;
	}
	return rc;
}

/*
 * Phase 2, the ring library end to end: RING_LAPS laps of the ring
 * through gpucomm_ring, kept full so that the kernel's workers take items
 * side by side and finish them out of order; collected in ring order.
 */
static enum tg_status
run_ring(struct tg_result *res, struct rte_mempool *mp, struct gpucomm_ring *r,
		struct item_expect *ex, const volatile struct gk_item_report *rep,
		uint64_t seq_base, uint64_t *rng)
{
	const uint64_t total = (uint64_t)RING_LAPS * N_ITEMS;
	uint64_t deadline = tg_now_ns() + CPU_WAIT_NS;
	int rc = 0;

	/* The kernel numbered populate's items (whole laps) before the
	 * ring's: the ring's laps, which its lap tags carry, go on from
	 * there, or every item would be loaded after READY. */
	r->lap = (uint32_t)(seq_base / N_ITEMS);
	while (r->released < total && res->status != TG_FAIL) {
		while ((rc = ring_collect(res, r, ex, rep, seq_base)) == 1)
			;
		if (rc < 0)
			break;
		if (r->published < total && gpucomm_ring_next(r) != NULL) {
			if (ring_publish(res, mp, r, ex, rng) != TG_PASS)
				break;
			continue;
		}
		if (tg_now_ns() > deadline) {
			tg_fail(res, "ring: %" PRIu64 " of %" PRIu64 " items back "
				"within %llu s", r->released, total,
				CPU_WAIT_NS / 1000000000ULL);
			break;
		}
	}
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

/* Phase 3: the same body launched per item, through the same ring. */
static enum tg_status
run_per_item(struct tg_result *res, struct rte_mempool *mp,
		struct gpucomm_ring *r, struct item_expect *ex, struct gk_ring *g,
		const struct gpucomm_kparams *kp, uint64_t *rng)
{
	const volatile struct gk_item_report *rep = gk_ring_reports(g);

	for (int k = 0; k < 4 && res->status != TG_FAIL; k++) {
		uint32_t idx = r->head;
		uint64_t seq = r->published;
		int err;

		if (ring_publish(res, mp, r, ex, rng) != TG_PASS)
			break;
		err = gk_ring_launch_item(g, kp, idx, seq);
		if (err != 0) {
			tg_fail(res, "item kernel: %s", gpucuda_strerror(err));
			break;
		}
		/* Launched and waited for: DONE now. */
		if (ring_collect(res, r, ex, rep, 0) != 1) {
			tg_fail(res, "item %u not DONE after its kernel", idx);
			break;
		}
	}
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

/*
 * The three phases on one list. *kernel_alive is set when the persistent
 * kernel did not quit: the list must then not be freed.
 */
static enum tg_status
run_list(const struct tg_env *env, struct tg_result *res,
		struct rte_mempool *mp, struct rte_gpu_comm_list *list,
		int *kernel_alive)
{
	static struct item_expect ex[N_ITEMS];
	struct gpucomm_kernel k;
	struct gpucomm_ring r;
	struct gk_ring *g = NULL;
	enum rte_gpu_comm_list_status st;
	uint64_t rng = tg_seed(env, 500);
	uint32_t i;
	int err;

	for (i = 0; i < N_ITEMS; i++) {
		if (rte_gpu_comm_get_status(&list[i], &st) != 0 ||
				st != RTE_GPU_COMM_LIST_FREE)
			return tg_fail(res, "new list item %u is not FREE", i);
	}
	if (check_chained_rejected(res, mp, &list[0]) != TG_PASS)
		return TG_FAIL;
	err = gpucomm_ring_init(&r, env->dev_id, list, N_ITEMS,
		GPUCOMM_RING_TAGS);
	if (err != 0)
		return tg_fail(res, "ring init: %s", tg_errno_str(-err));
	err = gpucomm_kernel_setup(&k, env->dev_id, &list, 1, N_ITEMS,
		GPUCOMM_WORKERS_MAX);
	if (err != 0)
		return tg_fail(res, "ring kernel setup: %s", tg_errno_str(-err));
	k.kp.lap_tags = 1;
	err = gk_ring_create(N_ITEMS, &g);
	if (err != 0) {
		gpucomm_kernel_teardown(&k);
		return tg_fail(res, "ring reports: %s", gpucuda_strerror(err));
	}
	/* The list array is registered host memory: the kernel walks it. */
	err = gk_ring_start(g, &k.kp);
	if (err != 0) {
		tg_fail(res, "launch the ring's persistent kernel: %s",
			gpucuda_strerror(err));
		goto out;
	}
	if (run_populate(res, mp, list, ex, gk_ring_reports(g), &rng) == TG_PASS)
		run_ring(res, mp, &r, ex, gk_ring_reports(g), N_ITEMS, &rng);
	/* Quit once every published item came back (else it stays put). */
	if (gpucomm_ring_inflight(&r) == 0) {
		if (gpucomm_kernel_quit(&k) != 0)
			tg_fail(res, "raise the quit flag");
		err = gk_ring_wait(g, KERNEL_QUIT_MS);
		if (err != 0) {
			*kernel_alive = err == (int)cudaErrorNotReady;
			tg_fail(res, "persistent kernel %s", *kernel_alive ?
				"did not quit" : gpucuda_strerror(err));
		} else if (res->status != TG_FAIL) {
			run_per_item(res, mp, &r, ex, g, &k.kp, &rng);
		}
	} else {
		*kernel_alive = 1;
	}
out:
	/* Items still in flight: their mbufs back, whatever the kernel did. */
	for (i = 0; i < gpucomm_ring_inflight(&r); i++) {
		struct rte_gpu_comm_list *it = gpucomm_ring_inflight_item(&r, i);
		struct item_expect *e = &ex[it - list];

		rte_pktmbuf_free_bulk(e->mbufs, e->num_pkts);
		e->num_pkts = 0;
	}
	gpucomm_ring_abandon(&r);
	if (!*kernel_alive) {
		gk_ring_destroy(g);
		gpucomm_kernel_teardown(&k);
	}
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}

enum tg_status
tg_case_comm_list(const struct tg_env *env, struct tg_result *res)
{
	struct pool_reg reg = { .dev_id = env->dev_id };
	struct rte_gpu_comm_list *list = NULL;
	struct rte_mempool *mp;
	unsigned int avail;
	int kernel_alive = 0;

	if (rte_gpu_comm_create_list(env->dev_id, 0) != NULL ||
			rte_errno != EINVAL)
		return tg_fail(res, "create_list with 0 items did not fail with EINVAL");

	/* No per-lcore cache, so the available count is exact. */
	mp = rte_pktmbuf_pool_create("tg_comm_list", POOL_SIZE, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL)
		return tg_fail(res, "rte_pktmbuf_pool_create: %s",
			rte_strerror(rte_errno));
	rte_mempool_mem_iter(mp, register_chunk, &reg);
	if (reg.err != 0 || reg.n == 0) {
		tg_fail(res, "register mempool memory with the GPU: %s",
			reg.n == 0 && reg.err == 0 ? "no chunk" :
			tg_errno_str(reg.err));
		goto out;
	}

	list = rte_gpu_comm_create_list(env->dev_id, N_ITEMS);
	if (list == NULL) {
		tg_fail(res, "create_list(%d items): %s", N_ITEMS,
			tg_errno_str(rte_errno));
		goto out;
	}
	run_list(env, res, mp, list, &kernel_alive);
	if (kernel_alive) {
		/* A kernel may still read it all: leave it. */
		tg_fail(res, "the ring kernel still runs: list and pool left");
		return TG_FAIL;
	}
	if (rte_gpu_comm_destroy_list(list, N_ITEMS) != 0)
		tg_fail(res, "destroy_list: %s", tg_errno_str(rte_errno));

	avail = rte_mempool_avail_count(mp);
	if (avail != POOL_SIZE)
		tg_fail(res, "pool holds %u of %u mbufs at the end", avail,
			POOL_SIZE);
out:
	unregister_chunks(&reg, res);
	rte_mempool_free(mp);
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}
