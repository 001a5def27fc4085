/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The GPU communication ring's lcore side (lib/gpucomm) without a GPU:
 * gpudev comm lists from the gpu_cuda driver over the fake CUDA library,
 * a thread standing in for the kernel where one is needed.
 *
 * Usage: test-gpucomm-ring FAKE_LIBCUDA [gdrcopy]
 *   gdrcopy: GPU_CUDA_LIBGDRAPI is set, so gpudev puts the status words
 *   in (fake) GPU memory mapped for the CPU.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_cycles.h>

#include "fake_cuda.h"
#include "gpucomm_kernel.h"
#include "gpucomm_ring.h"
#include "gpuapp_eal.h"
#include "check.h"


static int16_t gpu;
static bool gdrcopy;
static struct rte_mempool *pool;

/* Entry i of the item published as sequence number seq. */
static uintptr_t
entry_addr(uint64_t seq, uint32_t i)
{
	return (uintptr_t)(0x10000000u + seq * 4096 + i * 16);
}

static uint32_t
item_pkts(uint64_t seq)
{
	return 1 + (uint32_t)(seq * 7 % 32);
}

static void
fill_entries(struct rte_gpu_comm_list *it, uint64_t seq, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		it->pkt_list[i].addr = entry_addr(seq, i);
		it->pkt_list[i].size = 64 + i;
	}
}

static enum rte_gpu_comm_list_status
status_of(struct rte_gpu_comm_list *it)
{
	enum rte_gpu_comm_list_status st = RTE_GPU_COMM_LIST_ERROR;

	if (rte_gpu_comm_get_status(it, &st) != 0)
		return (enum rte_gpu_comm_list_status)-1;
	return st;
}

/* What the kernel does with an item, done here by hand. */
static void
gpu_sets(struct rte_gpu_comm_list *it, enum rte_gpu_comm_list_status st)
{
	CHECK(rte_gpu_comm_set_status(it, st) == 0, "status store");
}

static void
kstate_layout(void)
{
	struct gpucomm_kparams kp;
	const uint32_t rings = 3, items = 5, n = rings * items;
	size_t bytes = gpucomm_kstate_bytes(rings, items);
	uint8_t *mem = calloc(1, bytes);
	uintptr_t lo = (uintptr_t)mem, hi = lo + bytes;

	CHECK(mem != NULL, "memory");
	if (mem == NULL)
		return;
	memset(&kp, 0, sizeof(kp));
	kp.n_rings = rings;
	kp.n_items = items;
	gpucomm_kstate_bind(&kp, mem);
	/* Five arrays of n words each, back to back, inside the buffer. */
	CHECK((uintptr_t)kp.st.ready_seq == lo, "ready_seq first");
	CHECK((uintptr_t)(kp.st.ready_seq + n) == (uintptr_t)kp.st.done_seq &&
		(uintptr_t)(kp.st.done_seq + n) == (uintptr_t)kp.st.ready_ns &&
		(uintptr_t)(kp.st.ready_ns + n) == (uintptr_t)kp.st.pkt_list &&
		(uintptr_t)(kp.st.pkt_list + n) == (uintptr_t)kp.st.status,
		"arrays adjacent, n words each");
	CHECK((uintptr_t)(kp.st.status + n) == hi, "state size: %zu bytes", bytes);
	free(mem);

	/* Worker blocks that fit: every block of the kernel resident. */
	CHECK(gpucomm_fit_workers(1, 256, 64, 264) == 64, "one ring, room");
	CHECK(gpucomm_fit_workers(1, 8, 64, 264) == 8, "no more than items");
	CHECK(gpucomm_fit_workers(1, 1024, 1000, 10000) == GPUCOMM_WORKERS_MAX,
		"no more than GPUCOMM_WORKERS_MAX");
	CHECK(gpucomm_fit_workers(8, 256, 64, 132) == 15,
		"8 rings on 132 blocks: 8 x (15 + 1) = 128");
	CHECK(gpucomm_fit_workers(4, 256, 64, 8) == 1, "4 x (1 + 1) = 8");
	CHECK(gpucomm_fit_workers(5, 256, 64, 8) == 0,
		"not even a worker and a dispatcher per ring");
	CHECK(gpucomm_fit_workers(0, 256, 64, 132) == 0 &&
		gpucomm_fit_workers(1, 0, 64, 132) == 0 &&
		gpucomm_fit_workers(1, 256, 0, 132) == 0, "zero arguments");
	/* Half the GPU for the persistent kernel, the rest for others. */
	CHECK(gpucomm_kernel_share(8, 528) == 264 &&
		gpucomm_fit_workers(8, 64, 64, gpucomm_kernel_share(8, 528)) == 32,
		"8 rings on an H100's 528 resident blocks: 8 x (32 + 1) <= 264");
	CHECK(gpucomm_fit_workers(4, 64, 64, gpucomm_kernel_share(4, 528)) == 64,
		"4 rings: 4 x 65 = 260 <= 264, as many workers as before");
	CHECK(gpucomm_kernel_share(32, 100) == 100 &&
		gpucomm_kernel_share(25, 100) == 50,
		"all of the GPU only where half leaves a ring without a worker");
}

static void
init_resets_and_refuses(void)
{
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, 8);
	struct gpucomm_ring r;

	CHECK(list != NULL, "create list: %s", rte_strerror(rte_errno));
	if (list == NULL)
		return;
	CHECK(gdrcopy == (fake_cuda_is_device_range(list[0].status_d,
		8 * sizeof(uint32_t)) != 0), "status words %s GPU memory",
		gdrcopy ? "in" : "not in");
	/* As an earlier user could have left it. */
	for (uint32_t i = 0; i < 8; i++) {
		gpu_sets(&list[i], i % 3 == 0 ? RTE_GPU_COMM_LIST_READY :
			i % 3 == 1 ? RTE_GPU_COMM_LIST_DONE : RTE_GPU_COMM_LIST_ERROR);
		list[i].num_pkts = 100 + i;
	}
	CHECK(gpucomm_ring_init(&r, gpu, list, 8, 0) == 0, "init");
	for (uint32_t i = 0; i < 8; i++)
		CHECK(status_of(&list[i]) == RTE_GPU_COMM_LIST_FREE &&
			list[i].num_pkts == 0, "item %u FREE and empty", i);
	CHECK(r.inflight == 0 && r.head == 0 && r.tail == 0 &&
		r.published == 0 && !r.gpu_wmb, "fresh ring");
	CHECK(r.wc_status == gdrcopy, "write-combined status drain %s",
		gdrcopy ? "on" : "off");
	CHECK(gpucomm_ring_init(&r, gpu, list, 8, GPUCOMM_RING_GPU_WMB) == 0 &&
		r.gpu_wmb, "gpu wmb flag");

	CHECK(gpucomm_ring_init(NULL, gpu, list, 8, 0) == -EINVAL, "no ring");
	CHECK(gpucomm_ring_init(&r, gpu, NULL, 8, 0) == -EINVAL, "no list");
	CHECK(gpucomm_ring_init(&r, gpu, list, 0, 0) == -EINVAL, "no items");
	CHECK(gpucomm_ring_init(&r, gpu, list, 8, 0x80) == -EINVAL, "bad flag");
	CHECK(rte_gpu_comm_destroy_list(list, 8) == 0, "destroy");
}

/*
 * Ring order, a full ring, collect only on DONE (in ring order even when
 * the GPU finishes out of order), release back to FREE, and the in-flight
 * accounting at every step, over several laps.
 */
static void
ring_order_and_accounting(void)
{
	enum { N = 4 };
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, N);
	struct rte_gpu_comm_list *it = NULL;
	struct gpucomm_ring r;
	uint64_t pkts = 0, seq_done = 0;

	CHECK(list != NULL, "create list: %s", rte_strerror(rte_errno));
	if (list == NULL || gpucomm_ring_init(&r, gpu, list, N, 0) != 0)
		goto out;
	CHECK(gpucomm_ring_collect(&r, &it) == 0, "nothing in flight");
	CHECK(gpucomm_ring_release(&r) == -EINVAL, "release before collect");

	for (uint64_t seq = 0; seq < 3 * N; seq++) {
		struct rte_gpu_comm_list *h = gpucomm_ring_next(&r);
		uint32_t n = item_pkts(seq);

		/* Keep the ring full from the first lap on. */
		while (h == NULL) {
			/* Full: no room, publish refused and nothing moved. */
			CHECK(r.inflight == N && r.inflight_pkts == pkts,
				"full ring accounting");
			CHECK(gpucomm_ring_publish(&r, 1) == -ENOSPC, "publish on full");
			CHECK(r.published == seq && r.inflight == N, "unchanged");
			/* The GPU finishes the two oldest out of order: the
			 * newer first, which cannot be collected before the
			 * older. */
			it = NULL;
			gpu_sets(gpucomm_ring_inflight_item(&r, 1),
				RTE_GPU_COMM_LIST_DONE);
			CHECK(gpucomm_ring_collect(&r, &it) == 0 && it == NULL,
				"item %u DONE before the tail: not collected",
				(r.tail + 1) % N);
			gpu_sets(gpucomm_ring_inflight_item(&r, 0),
				RTE_GPU_COMM_LIST_DONE);
			for (int k = 0; k < 2; k++) {
				uint32_t want = (uint32_t)(seq_done % N);

				CHECK(gpucomm_ring_collect(&r, &it) == 1 &&
					it == &list[want], "collect item %u", want);
				CHECK(gpucomm_ring_collect(&r, &it) == 1 &&
					it == &list[want], "collect again: same item");
				CHECK(it->num_pkts == item_pkts(seq_done) &&
					it->pkt_list[0].addr == entry_addr(seq_done, 0),
					"results of item %" PRIu64, seq_done);
				pkts -= it->num_pkts;
				CHECK(gpucomm_ring_release(&r) == 0, "release");
				CHECK(status_of(&list[want]) == RTE_GPU_COMM_LIST_FREE &&
					list[want].num_pkts == 0,
					"item %u FREE and empty", want);
				seq_done++;
				CHECK(r.inflight == (uint32_t)(N - 1 - k) && r.inflight_pkts == pkts &&
					r.released == seq_done, "accounting after release");
			}
			CHECK(gpucomm_ring_release(&r) == -EINVAL,
				"release of an item not collected");
			h = gpucomm_ring_next(&r);
		}
		CHECK(h == &list[seq % N], "head is item %u", (unsigned int)(seq % N));
		CHECK(status_of(h) == RTE_GPU_COMM_LIST_FREE, "head FREE");
		fill_entries(h, seq, n);
		CHECK(gpucomm_ring_publish(&r, 0) == -EINVAL &&
			gpucomm_ring_publish(&r, RTE_GPU_COMM_LIST_PKTS_MAX + 1) ==
			-EINVAL, "bad packet counts refused");
		CHECK(r.published == seq && status_of(h) == RTE_GPU_COMM_LIST_FREE,
			"nothing published by a refused call");
		CHECK(gpucomm_ring_publish(&r, n) == 0, "publish");
		CHECK(status_of(h) == RTE_GPU_COMM_LIST_READY && h->num_pkts == n,
			"READY with its count");
		pkts += n;
		CHECK(r.published == seq + 1 && r.inflight_pkts == pkts &&
			r.inflight == seq + 1 - seq_done, "accounting after publish");
		CHECK(gpucomm_ring_collect(&r, &it) == 0, "READY is not collected");
	}
	/* An ERROR from the kernel is an error, not a result. */
	gpu_sets(gpucomm_ring_inflight_item(&r, 0), RTE_GPU_COMM_LIST_ERROR);
	CHECK(gpucomm_ring_collect(&r, &it) == -EIO, "ERROR item");
	/* Items that never come back: forgotten, counted. */
	CHECK(gpucomm_ring_abandon(&r) == N && r.inflight == 0 &&
		r.inflight_pkts == 0 && gpucomm_ring_next(&r) != NULL,
		"abandon");
out:
	if (list != NULL)
		CHECK(rte_gpu_comm_destroy_list(list, N) == 0, "destroy");
}

static void
fill_mbufs(void)
{
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, 2);
	struct rte_mbuf *m[3] = { NULL, NULL, NULL };
	struct gpucomm_ring r;

	CHECK(list != NULL, "create list");
	if (list == NULL || gpucomm_ring_init(&r, gpu, list, 2, 0) != 0 ||
			rte_pktmbuf_alloc_bulk(pool, m, 3) != 0)
		goto out;
	for (int i = 0; i < 3; i++)
		CHECK(rte_pktmbuf_append(m[i], (uint16_t)(60 + i)) != NULL, "append");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == 0, "fill");
	/* Without tags: the plain size, as rte_gpu_comm_populate_list_pkts. */
	for (int i = 0; i < 2; i++)
		CHECK(list[0].pkt_list[i].addr == rte_pktmbuf_mtod(m[i], uintptr_t) &&
			list[0].pkt_list[i].size == (uint64_t)(60 + i) &&
			list[0].mbufs[i] == m[i], "entry %d", i);
	CHECK(status_of(&list[0]) == RTE_GPU_COMM_LIST_FREE, "fill alone publishes nothing");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == 0, "filled again (no tags)");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 0) == -EINVAL, "no mbufs");

	/* Tagged: entry 0 with the count, the window's rest refreshed at
	 * lap 0; the item final once filled. */
	CHECK(gpucomm_ring_init(&r, gpu, list, 2, GPUCOMM_RING_TAGS) == 0,
		"init with tags");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == 0, "tagged fill");
	for (int i = 0; i < 2; i++)
		CHECK(list[0].pkt_list[i].addr == rte_pktmbuf_mtod(m[i], uintptr_t) &&
			(uint32_t)list[0].pkt_list[i].size == (uint32_t)(60 + i) &&
			gpucomm_tag_current(list[0].pkt_list[i].size, 0) &&
			gpucomm_tag_count(list[0].pkt_list[i].size, 0) ==
			(i == 0 ? 2u : 0u), "entry %d, tagged lap 0", i);
	for (uint32_t j = 2; j < GPUCOMM_TAG_WINDOW; j++)
		CHECK(gpucomm_tag_current(list[0].pkt_list[j].size, 0) &&
			gpucomm_tag_count(list[0].pkt_list[j].size, 0) == 0,
			"entry %u refreshed", j);
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == -EALREADY,
		"a filled tagged item is final for the lap");
	CHECK(gpucomm_ring_publish(&r, 3) == -EINVAL &&
		status_of(&list[0]) == RTE_GPU_COMM_LIST_FREE,
		"publish of another count than the fill's refused");
	CHECK(gpucomm_ring_publish(&r, 2) == 0 &&
		gpucomm_tag_count(list[0].pkt_list[0].size, 0) == 2 &&
		status_of(&list[0]) == RTE_GPU_COMM_LIST_READY, "publish");

	/* A chain cannot be described by one entry. A fill refused part
	 * way leaves the item without a count this lap, refilled or not. */
	CHECK(rte_pktmbuf_chain(m[1], m[2]) == 0, "chain");
	m[2] = NULL;
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == -EINVAL, "chained mbuf refused");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 3) == -EINVAL, "NULL mbuf refused");
	CHECK(r.tag_burnt && gpucomm_ring_fill_mbufs(&r, m, 1) == 0 &&
		gpucomm_tag_current(list[1].pkt_list[0].size, 0) &&
		gpucomm_tag_count(list[1].pkt_list[0].size, 0) == 0,
		"no count after a refused fill");
	CHECK(gpucomm_ring_publish(&r, 1) == 0 &&
		gpucomm_tag_count(list[1].pkt_list[0].size, 0) == 0 &&
		status_of(&list[1]) == RTE_GPU_COMM_LIST_READY,
		"published without a count: loaded after READY");
	CHECK(!r.tag_burnt && r.tag_n == 0 && r.lap == 1, "next item clean");
out:
	rte_pktmbuf_free_bulk(m, 3);
	if (list != NULL)
		CHECK(rte_gpu_comm_destroy_list(list, 2) == 0, "destroy");
}

/*
 * The lap tag's validation, the function the worker runs (gpucomm_layout.h,
 * compiled here for the host): an entry of another lap, an untagged one
 * and entry 0 without its count are not taken for current.
 */
static void
lap_tag_validation(void)
{
	const uint64_t laps[] = { 0, 1, 2, 0x7fff, 0x8000, 0xffff, 0x10000,
		0x123456789ull };

	for (unsigned int k = 0; k < RTE_DIM(laps); k++) {
		const uint64_t lap = laps[k];
		const uint64_t w = gpucomm_tag_size(1500, lap, 0);
		const uint64_t w0 = gpucomm_tag_size(64, lap, 1024);

		CHECK((uint32_t)w == 1500 && (uint32_t)w0 == 64,
			"size in the low half");
		CHECK(gpucomm_tag_current(w, lap) && gpucomm_tag_current(w0, lap),
			"lap %" PRIu64 ": current", lap);
		CHECK(gpucomm_tag_count(w0, lap) == 1024 &&
			gpucomm_tag_count(w, lap) == 0,
			"lap %" PRIu64 ": count only in entry 0's word", lap);
		/* Every lap the refresh lets an entry be from: stale. */
		for (uint64_t back = 1; back <= GPUCOMM_TAG_REFRESH; back++) {
			if (lap < back)
				break;
			if (gpucomm_tag_current(gpucomm_tag_size(64, lap - back, 0), lap) ||
					gpucomm_tag_count(gpucomm_tag_size(64,
					lap - back, 32), lap) != 0) {
				CHECK(0, "lap %" PRIu64 ": an entry of lap %" PRIu64
					" taken for current", lap, lap - back);
				break;
			}
		}
		CHECK(!gpucomm_tag_current(gpucomm_tag_size(64, lap + 1, 0), lap),
			"lap %" PRIu64 ": the next lap's entry", lap);
		/* Untagged (as before the ring's init cleared it, or a ring
		 * without tags): never current, not even at lap 0. */
		CHECK(!gpucomm_tag_current(64, lap) && !gpucomm_tag_current(0, lap) &&
			gpucomm_tag_count((uint64_t)(lap & 0xffff) << 32 | 64, lap) == 0,
			"lap %" PRIu64 ": untagged", lap);
	}
	/* 2^16 laps apart the tags agree: why the ring refreshes them. */
	CHECK(gpucomm_tag_current(gpucomm_tag_size(64, 5, 0), 5 + 0x10000),
		"the lap tag wraps at 2^16");
}

/*
 * A tagged ring's stores: entries tagged with the head's lap (the lap
 * counts head wraps), entry 0's count at publish, the window's unused
 * entries tagged every GPUCOMM_TAG_REFRESH laps only, and init clearing
 * the window's tags an earlier user left. An entry of the previous lap
 * is stale under the validation.
 */
static void
ring_lap_tags(void)
{
	enum { N = 2 };
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, N);
	struct rte_gpu_comm_list *it = NULL;
	struct gpucomm_ring r;

	CHECK(list != NULL, "create list");
	if (list == NULL)
		return;
	/* As an earlier user of the list could have left it: tags of lap 0
	 * (its count too), which the new ring counts again. */
	for (uint32_t i = 0; i < N; i++)
		for (uint32_t j = 0; j < RTE_GPU_COMM_LIST_PKTS_MAX; j++)
			list[i].pkt_list[j].size =
				gpucomm_tag_size(100, 0, j == 0 ? 7 : 0);
	CHECK(gpucomm_ring_init(&r, gpu, list, N, GPUCOMM_RING_TAGS) == 0 &&
		r.tags && r.lap == 0, "init with tags");
	for (uint32_t i = 0; i < N; i++)
		for (uint32_t j = 0; j < GPUCOMM_TAG_WINDOW; j++)
			if (gpucomm_tag_current(list[i].pkt_list[j].size, 0) ||
					(uint32_t)list[i].pkt_list[j].size != 100) {
				CHECK(0, "item %u entry %u: tag left by init", i, j);
				goto out;
			}
	for (uint64_t seq = 0; seq < 6; seq++) {
		struct rte_gpu_comm_list *h = gpucomm_ring_next(&r);
		const uint64_t lap = seq / N;
		/* 32 and 3 packets, then 1: entries 1..31 of lap 0 stay
		 * (written, or tagged by lap 0's refresh). */
		const uint32_t n = seq == 0 ? 32 : seq == 1 ? 3 : 1;
		const struct rte_gpu_comm_pkt *e = h->pkt_list;

		CHECK(r.lap == lap, "lap %" PRIu64 " counted", lap);
		for (uint32_t j = 0; j < n; j++)
			gpucomm_ring_set_pkt(&r, &h->pkt_list[j],
				entry_addr(seq, j), 64 + j);
		CHECK(gpucomm_tag_count(e[0].size, lap) == 0,
			"no count before publish");
		CHECK(gpucomm_ring_publish(&r, n) == 0, "publish");
		CHECK(gpucomm_tag_count(e[0].size, lap) == n &&
			(uint32_t)e[0].size == 64 && e[0].addr == entry_addr(seq, 0),
			"seq %" PRIu64 ": entry 0 with the count", seq);
		for (uint32_t j = 1; j < GPUCOMM_TAG_WINDOW; j++) {
			/* Lap 0 refreshes the unused ones: current, no count. */
			const bool cur = j < n || lap == 0;

			if (gpucomm_tag_current(e[j].size, lap) != cur ||
					(j < n && (uint32_t)e[j].size != 64 + j)) {
				CHECK(0, "seq %" PRIu64 " entry %u: %s", seq, j,
					cur ? "not current" :
					"an earlier lap's entry taken for current");
				goto out;
			}
		}
		gpu_sets(h, RTE_GPU_COMM_LIST_DONE);
		CHECK(gpucomm_ring_collect(&r, &it) == 1 &&
			gpucomm_ring_release(&r) == 0, "collect, release");
	}
	CHECK(r.lap == 3, "three laps");
	/* The refresh lap: the window's unused entries tagged again. */
	r.lap = GPUCOMM_TAG_REFRESH;
	gpucomm_ring_set_pkt(&r, &gpucomm_ring_next(&r)->pkt_list[0], 1, 64);
	CHECK(gpucomm_ring_publish(&r, 1) == 0, "publish");
	for (uint32_t j = 1; j < GPUCOMM_TAG_WINDOW; j++)
		CHECK(gpucomm_tag_current(list[0].pkt_list[j].size,
			GPUCOMM_TAG_REFRESH) &&
			gpucomm_tag_count(list[0].pkt_list[j].size,
			GPUCOMM_TAG_REFRESH) == 0, "refreshed entry %u", j);
	CHECK(!gpucomm_tag_current(list[0].pkt_list[GPUCOMM_TAG_WINDOW].size,
		GPUCOMM_TAG_REFRESH), "past the window: not refreshed");
	/* A ring without tags stores no count. */
	CHECK(gpucomm_ring_init(&r, gpu, list, N, 0) == 0 && !r.tags, "init");
	gpucomm_ring_set_pkt(&r, &list[0].pkt_list[0], 1, 64);
	CHECK(gpucomm_ring_publish(&r, 1) == 0 &&
		gpucomm_tag_count(list[0].pkt_list[0].size, 0) == 0,
		"no count without tags");
out:
	CHECK(rte_gpu_comm_destroy_list(list, N) == 0, "destroy");
}

/*
 * Publish ordering, seen as the order of the stores: the status words lie
 * in a page made read-only, so the READY store faults, and the handler,
 * at that instant, records what the item holds and how many times
 * rte_gpu_wmb reached the GPU (cuFlushGPUDirectRDMAWrites, counted by the
 * fake), then lets the store through.
 */
static struct {
	uint8_t *page;
	struct rte_gpu_comm_list *item;
	volatile int faults;
	uint32_t num_pkts;
	uintptr_t last_addr;
	uint64_t flushes;
} seen;

static void
on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if ((uint8_t *)si->si_addr < seen.page ||
			(uint8_t *)si->si_addr >= seen.page + getpagesize()) {
		signal(sig, SIG_DFL);
		return;	/* a real fault: crash on return */
	}
	seen.faults++;
	seen.num_pkts = seen.item->num_pkts;
	seen.last_addr = seen.num_pkts == 0 ? 0 :
		seen.item->pkt_list[seen.num_pkts - 1].addr;
	seen.flushes = fake_cuda_flush_calls();
	mprotect(seen.page, getpagesize(), PROT_READ | PROT_WRITE);
}

static void
publish_store_order(void)
{
	enum { N = 2 };
	const size_t pg = (size_t)getpagesize();
	struct rte_gpu_comm_list list[N];
	struct rte_gpu_comm_pkt *pkts;
	struct sigaction sa, old;
	struct gpucomm_ring r;
	uint32_t *status;

	memset(list, 0, sizeof(list));
	seen.page = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pkts = calloc((size_t)N * RTE_GPU_COMM_LIST_PKTS_MAX, sizeof(*pkts));
	CHECK(seen.page != MAP_FAILED && pkts != NULL, "memory");
	if (seen.page == MAP_FAILED || pkts == NULL)
		goto out;
	/* A list as gpudev lays it out, in plain memory: statuses in one
	 * array (here the guarded page). */
	status = (uint32_t *)seen.page;
	for (int i = 0; i < N; i++) {
		list[i].dev_id = (uint16_t)gpu;
		list[i].pkt_list = pkts + (size_t)i * RTE_GPU_COMM_LIST_PKTS_MAX;
		list[i].status_h = (enum rte_gpu_comm_list_status *)&status[i];
		list[i].status_d = list[i].status_h;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSEGV, &sa, &old) == 0, "handler");

	for (int wmb = 0; wmb < 2; wmb++) {
		uint64_t before;

		CHECK(gpucomm_ring_init(&r, gpu, list, N,
			wmb ? GPUCOMM_RING_GPU_WMB : 0) == 0, "init");
		/* Not EAL memory: taken for GPU memory mapped for the CPU. */
		CHECK(r.wc_status, "write-combining drain");
		fill_entries(&list[r.head], 77, 9);
		seen.item = &list[r.head];
		seen.faults = 0;
		before = fake_cuda_flush_calls();
		CHECK(mprotect(seen.page, pg, PROT_READ) == 0, "guard");
		CHECK(gpucomm_ring_publish(&r, 9) == 0, "publish");
		CHECK(seen.faults == 1, "one store to the status page: %d",
			seen.faults);
		CHECK(seen.num_pkts == 9 && seen.last_addr == entry_addr(77, 8),
			"count and entries stored before READY (saw %u)",
			seen.num_pkts);
		CHECK(seen.flushes == before + (uint64_t)wmb,
			"rte_gpu_wmb %s before READY (%" PRIu64 " flushes)",
			wmb ? "reached the GPU" : "not called", seen.flushes - before);
		CHECK(fake_cuda_flush_calls() == before + (uint64_t)wmb,
			"one rte_gpu_wmb per publish at most");
		CHECK(status[0] == RTE_GPU_COMM_LIST_READY, "READY stored");
		/* Back to FREE: also one store, count cleared first. */
		status[0] = RTE_GPU_COMM_LIST_DONE;
		{
			struct rte_gpu_comm_list *it;

			CHECK(gpucomm_ring_collect(&r, &it) == 1, "collect");
			seen.faults = 0;
			CHECK(mprotect(seen.page, pg, PROT_READ) == 0, "guard");
			CHECK(gpucomm_ring_release(&r) == 0, "release");
			CHECK(seen.faults == 1 && seen.num_pkts == 0 &&
				status[0] == RTE_GPU_COMM_LIST_FREE,
				"count cleared, then FREE stored");
		}
	}
	CHECK(sigaction(SIGSEGV, &old, NULL) == 0, "handler restored");
out:
	free(pkts);
	if (seen.page != MAP_FAILED)
		munmap(seen.page, pg);
}

/*
 * The protocol under concurrency: a thread plays the kernel (takes READY
 * items, checks what it was handed, writes a result, releases DONE, two
 * items at a time finishing the newer first) while this lcore publishes,
 * collects in order and checks every result.
 */
#define CONC_N 8
#define CONC_ITEMS 50000u

static struct {
	struct rte_gpu_comm_list *list;
	uint64_t result[CONC_N];	/* "GPU memory": sum of the entries */
	volatile int stop;
	volatile uint64_t bad;
	uint64_t prefetched;	/* items summed from entries loaded before READY */
	uint64_t stale;		/* polls that found entry 0 of an earlier lap */
	uint64_t side_kept;	/* items whose side slots came with the poll */
} conc;

/* The worker's prefetch (gpucomm_persistent.cuh), played: an item's
 * first entries loaded while polling, kept once all are current. */
struct prefetch {
	uint32_t n;
	uintptr_t addr[GPUCOMM_TAG_WINDOW];
	uint64_t size[GPUCOMM_TAG_WINDOW];
	bool side_ok;		/* side[] kept: every slot current */
	uint64_t side[GPUCOMM_SIDE_MAX];
};

/* Warp 2 of the worker's prefetch, played: side slots 0 .. n_side - 1,
 * each word with its tag word (one 16-byte load on the GPU: the tag
 * first here, so a current tag means a current word), kept once all
 * carry the item's lap. */
static void
side_poll(const struct rte_gpu_comm_list *it, uint64_t lap, uint32_t n_side,
		struct prefetch *p)
{
	const struct rte_gpu_comm_pkt *e = it->pkt_list;

	if (p->side_ok)
		return;
	for (uint32_t k = 0; k < n_side; k++) {
		const struct rte_gpu_comm_pkt *sl = &e[GPUCOMM_SIDE_ENTRY(k)];
		const uint64_t tag = __atomic_load_n(&sl->size, __ATOMIC_ACQUIRE);

		p->side[k] = __atomic_load_n(&sl->addr, __ATOMIC_RELAXED);
		if (!gpucomm_tag_current(tag, lap))
			return;
	}
	p->side_ok = true;
}

static void
prefetch_poll(const struct rte_gpu_comm_list *it, uint64_t lap,
		struct prefetch *p)
{
	const struct rte_gpu_comm_pkt *e = it->pkt_list;
	uint32_t cnt;

	if (p->n != 0)
		return;
	for (uint32_t i = 0; i < GPUCOMM_TAG_WINDOW; i++) {
		/* The size word, then the address: loads in order (as the
		 * GPU's one 16-byte load reads both at once), so a current
		 * tag means a current address. */
		p->size[i] = __atomic_load_n(&e[i].size, __ATOMIC_ACQUIRE);
		p->addr[i] = __atomic_load_n(&e[i].addr, __ATOMIC_RELAXED);
	}
	cnt = gpucomm_tag_count(p->size[0], lap);
	if (cnt == 0) {
		if (p->size[0] >> 32 != 0 && !gpucomm_tag_current(p->size[0], lap))
			conc.stale++;
		return;
	}
	for (uint32_t i = 0; i < cnt && i < GPUCOMM_TAG_WINDOW; i++)
		if (!gpucomm_tag_current(p->size[i], lap))
			return;
	p->n = cnt;
}

static uint64_t
entries_sum(const struct rte_gpu_comm_list *it, uint32_t n)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += it->pkt_list[i].addr + (uint32_t)it->pkt_list[i].size;
	return s;
}

static uint64_t
expected_sum(uint64_t seq)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < item_pkts(seq); i++)
		s += entry_addr(seq, i) + 64 + i;
	return s;
}

/* The fake kernel's work on item i, READY seen: result (from the
 * prefetched entries when p has them), then DONE. */
static void
fake_item(uint32_t i, const struct prefetch *p, uint64_t seq)
{
	uint32_t n = conc.list[i].num_pkts;

	/* Side slots kept before READY: this lap's words, or torn. */
	if (p != NULL && p->side_ok) {
		conc.side_kept++;
		if (p->side[0] != seq || p->side[1] != ~seq)
			conc.bad++;
	}
	if (n == 0 || n > 32 || (p != NULL && p->n != 0 && p->n != n)) {
		conc.bad++;
	} else if (p != NULL && p->n != 0) {
		uint64_t s = 0;

		for (uint32_t k = 0; k < n; k++)
			s += p->addr[k] + (uint32_t)p->size[k];
		conc.result[i] = s;
		conc.prefetched++;
	} else {
		conc.result[i] = entries_sum(&conc.list[i], n);
	}
	/* Release: the result before DONE. */
	__atomic_store_n((uint32_t *)conc.list[i].status_h,
		RTE_GPU_COMM_LIST_DONE, __ATOMIC_RELEASE);
}

static void *
fake_kernel(void *arg)
{
	uint64_t seq = 0, p_seq = UINT64_MAX;
	struct prefetch p;

	(void)arg;
	while (!conc.stop) {
		uint32_t a = (uint32_t)(seq % CONC_N), b = (uint32_t)((seq + 1) % CONC_N);

		if (p_seq != seq) {
			p.n = 0;
			p.side_ok = false;
			p_seq = seq;
		}
		/* Item a's previous lap is done (this thread did it), as the
		 * worker's latency path requires: its entries are loaded
		 * before READY is, and a stale one must not be kept. */
		prefetch_poll(&conc.list[a], seq / CONC_N, &p);
		side_poll(&conc.list[a], seq / CONC_N, 2, &p);
		/* Acquire: what the lcore wrote before READY. */
		if (__atomic_load_n((uint32_t *)conc.list[a].status_h,
				__ATOMIC_ACQUIRE) != RTE_GPU_COMM_LIST_READY) {
			/* EAL pinned this thread with the lcore to one CPU. */
			sched_yield();
			continue;
		}
		seq++;
		if (__atomic_load_n((uint32_t *)conc.list[b].status_h,
				__ATOMIC_ACQUIRE) == RTE_GPU_COMM_LIST_READY) {
			/* Both: the newer finishes first. */
			fake_item(b, NULL, seq);
			seq++;
			fake_item(a, &p, seq - 2);
		} else {
			fake_item(a, &p, seq - 1);
		}
	}
	return NULL;
}

/* One poll of the worker (gpucomm_worker_loop_prefetch), played: the
 * entries and the status in the same poll; READY or not. */
static bool
first_poll(struct rte_gpu_comm_list *it, uint64_t lap, struct prefetch *p)
{
	p->n = 0;
	prefetch_poll(it, lap, p);
	return __atomic_load_n((uint32_t *)it->status_h, __ATOMIC_ACQUIRE) ==
		RTE_GPU_COMM_LIST_READY;
}

/*
 * READY visible on the worker's very first poll: the entries loaded in
 * that poll are kept when current (fill_mbufs, or entries one by one and
 * publish's count) and never when stale: the previous lap's (entry 0's
 * count included), an item filled only part way, a window entry of an
 * earlier lap, or an item whose fill was refused part way and redone.
 */
static void
prefetch_first_poll(void)
{
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, 1);
	struct rte_mbuf *m[3] = { NULL, NULL, NULL };
	struct rte_gpu_comm_list *it = NULL;
	struct gpucomm_ring r;
	struct prefetch p;

	CHECK(list != NULL, "create list");
	if (list == NULL || rte_pktmbuf_alloc_bulk(pool, m, 3) != 0 ||
			gpucomm_ring_init(&r, gpu, list, 1, GPUCOMM_RING_TAGS) != 0) {
		CHECK(0, "setup");
		goto out;
	}
	for (int i = 0; i < 3; i++)
		CHECK(rte_pktmbuf_append(m[i], (uint16_t)(60 + i)) != NULL, "append");
	/* Lap 0: nothing current before the fill (init cleared the tags). */
	CHECK(!first_poll(list, 0, &p) && p.n == 0, "lap 0 before the fill");
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 3) == 0 &&
		gpucomm_ring_publish(&r, 3) == 0, "lap 0 published");
	CHECK(first_poll(list, 0, &p) && p.n == 3, "lap 0: READY and the "
		"entries on the first poll (%u kept)", p.n);
	for (int i = 0; i < 3; i++)
		CHECK(p.addr[i] == rte_pktmbuf_mtod(m[i], uintptr_t) &&
			(uint32_t)p.size[i] == (uint32_t)(60 + i), "entry %d", i);
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");

	/* Lap 1, entries one by one: lap 0's entries, its count in entry 0,
	 * are stale; so is an item whose entry 0 has no count yet. */
	CHECK(!first_poll(list, 1, &p) && p.n == 0, "lap 0's entries for lap 1");
	gpucomm_ring_set_pkt(&r, &list->pkt_list[1], entry_addr(1, 1), 65);
	gpucomm_ring_set_pkt(&r, &list->pkt_list[0], entry_addr(1, 0), 64);
	CHECK(!first_poll(list, 1, &p) && p.n == 0, "no count, nothing kept");
	/* Entry 0 with a count of 3 while entry 2 is lap 0's: not kept. */
	list->pkt_list[0].size = gpucomm_tag_size(64, 1, 3);
	CHECK(!first_poll(list, 1, &p) && p.n == 0,
		"an earlier lap's entry below the count");
	list->pkt_list[0].size = gpucomm_tag_size(64, 1, 0);
	CHECK(gpucomm_ring_publish(&r, 2) == 0, "lap 1 published");
	CHECK(first_poll(list, 1, &p) && p.n == 2 &&
		p.addr[0] == entry_addr(1, 0) && p.addr[1] == entry_addr(1, 1) &&
		(uint32_t)p.size[1] == 65, "lap 1: kept on the first poll");
	/* The worker of lap 2 loading lap 1's published item: stale. */
	CHECK(first_poll(list, 2, &p) && p.n == 0, "lap 1's READY item for lap 2");
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");

	/* Lap 2: a fill refused at its second mbuf, then redone: the first
	 * fill's entry 0 would have carried lap 2's tag, so no count. */
	{
		struct rte_mbuf *bad[2] = { m[0], NULL };

		CHECK(gpucomm_ring_fill_mbufs(&r, bad, 2) == -EINVAL, "refused");
	}
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 2) == 0 &&
		gpucomm_ring_publish(&r, 2) == 0, "redone, published");
	CHECK(first_poll(list, 2, &p) && p.n == 0,
		"a redone fill's entries never kept before READY");
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");
	/* Lap 3: kept again. */
	CHECK(gpucomm_ring_fill_mbufs(&r, m, 1) == 0 &&
		gpucomm_ring_publish(&r, 1) == 0 && first_poll(list, 3, &p) &&
		p.n == 1, "lap 3 kept");
out:
	rte_pktmbuf_free_bulk(m, 3);
	if (list != NULL)
		CHECK(rte_gpu_comm_destroy_list(list, 1) == 0, "destroy");
}

/* One poll of the worker's side slots (warp 2), played: kept or not. */
static bool
side_first_poll(const struct rte_gpu_comm_list *it, uint64_t lap,
		uint32_t n_side, struct prefetch *p)
{
	p->side_ok = false;
	side_poll(it, lap, n_side, p);
	return p->side_ok;
}

/*
 * Side records (GPUCOMM_RING_SIDE): the slots an earlier user of the list
 * left are cleared by init; a slot is kept only with the item's current
 * lap, so never the previous lap's, nor an item's whose slots were
 * written only in part, nor one whose word was stored without its tag;
 * the lap's wrap at 2^16; and such a ring's items leave the slots'
 * entries to them.
 */
static void
ring_side_records(void)
{
	static struct rte_mbuf *many[GPUCOMM_PKTS_MAX];
	struct rte_gpu_comm_list *list = rte_gpu_comm_create_list(gpu, 1);
	struct rte_gpu_comm_list *it = NULL;
	struct rte_gpu_comm_pkt *sl;
	struct gpucomm_ring r;
	struct prefetch p;

	CHECK(list != NULL, "create list");
	if (list == NULL)
		return;
	sl = &list->pkt_list[GPUCOMM_SIDE_ENTRY(0)];
	CHECK(gpucomm_ring_init(&r, gpu, list, 1, GPUCOMM_RING_SIDE) == -EINVAL,
		"side records without lap tags refused");
	CHECK(gpucomm_ring_init(&r, gpu, list, 1, GPUCOMM_RING_TAGS) == 0 &&
		gpucomm_ring_set_side(&r, 0, 1) == -EINVAL,
		"no side slot on a ring without side records");
	/* An earlier user's slots, current for lap 0. */
	for (uint32_t k = 0; k < GPUCOMM_SIDE_MAX; k++) {
		sl[k].addr = 7;
		sl[k].size = gpucomm_tag_size(0, 0, 0);
	}
	CHECK(gpucomm_ring_init(&r, gpu, list, 1, GPUCOMM_RING_TAGS |
		GPUCOMM_RING_SIDE) == 0 && r.side, "init with side records");
	CHECK(!side_first_poll(list, 0, GPUCOMM_SIDE_MAX, &p),
		"an earlier user's slots cleared by init");
	CHECK(gpucomm_ring_set_side(&r, GPUCOMM_SIDE_MAX, 1) == -EINVAL,
		"slot out of range");
	/* Lap 0: slot 0 alone is not the record of two. */
	CHECK(gpucomm_ring_set_side(&r, 0, 100) == 0, "slot 0");
	CHECK(side_first_poll(list, 0, 1, &p) && p.side[0] == 100 &&
		!side_first_poll(list, 0, 2, &p), "a record written in part");
	CHECK(gpucomm_ring_set_side(&r, 1, 101) == 0 &&
		side_first_poll(list, 0, 2, &p) && p.side[0] == 100 &&
		p.side[1] == 101, "lap 0's record kept");
	/* Past the slots' entries: refused, nothing written. */
	CHECK(gpucomm_ring_fill_mbufs(&r, many, GPUCOMM_SIDE_PKTS_MAX + 1) ==
		-EINVAL && gpucomm_ring_publish(&r, GPUCOMM_SIDE_PKTS_MAX + 1) ==
		-EINVAL && r.published == 0 && sl[0].addr == 100,
		"more packets than a ring with side records has entries for");
	gpucomm_ring_set_pkt(&r, &list->pkt_list[0], 1, 64);
	CHECK(gpucomm_ring_publish(&r, 1) == 0, "lap 0 published");
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");
	/* Lap 1: lap 0's record is stale; so is a word stored without its
	 * tag (a torn slot). */
	CHECK(!side_first_poll(list, 1, 2, &p), "lap 0's record for lap 1");
	sl[0].addr = 200;
	CHECK(!side_first_poll(list, 1, 1, &p), "a word without its tag");
	CHECK(gpucomm_ring_set_side(&r, 0, 200) == 0 &&
		gpucomm_ring_set_side(&r, 1, 201) == 0 &&
		side_first_poll(list, 1, 2, &p) && p.side[1] == 201 &&
		!side_first_poll(list, 2, 2, &p), "lap 1's record, for lap 1 only");
	gpucomm_ring_set_pkt(&r, &list->pkt_list[0], 1, 64);
	CHECK(gpucomm_ring_publish(&r, 1) == 0, "lap 1 published");
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");
	/* The lap tag's wrap: lap 0xffff's record is stale for 0x10000,
	 * which the ring tags as lap 0 of the 16 bits. */
	r.lap = 0xffff;
	CHECK(gpucomm_ring_set_side(&r, 0, 300) == 0 &&
		gpucomm_ring_set_side(&r, 1, 301) == 0 &&
		side_first_poll(list, 0xffff, 2, &p), "lap 0xffff");
	gpucomm_ring_set_pkt(&r, &list->pkt_list[0], 1, 64);
	CHECK(gpucomm_ring_publish(&r, 1) == 0, "lap 0xffff published");
	gpu_sets(list, RTE_GPU_COMM_LIST_DONE);
	CHECK(gpucomm_ring_collect(&r, &it) == 1 && gpucomm_ring_release(&r) == 0,
		"collect, release");
	CHECK(r.lap == 0x10000 && !side_first_poll(list, 0x10000, 2, &p),
		"lap 0xffff's record for lap 0x10000");
	CHECK(gpucomm_ring_set_side(&r, 0, 400) == 0 &&
		gpucomm_ring_set_side(&r, 1, 401) == 0 &&
		side_first_poll(list, 0x10000, 2, &p) && p.side[0] == 400,
		"lap 0x10000's record");
	CHECK(rte_gpu_comm_destroy_list(list, 1) == 0, "destroy");
}

static void
concurrent_protocol(void)
{
	struct gpucomm_ring r;
	pthread_t t;
	uint64_t next_collect = 0, wrong = 0, full = 0;
	uint64_t deadline;

	conc.list = rte_gpu_comm_create_list(gpu, CONC_N);
	CHECK(conc.list != NULL, "create list");
	if (conc.list == NULL)
		return;
	if (gpucomm_ring_init(&r, gpu, conc.list, CONC_N, GPUCOMM_RING_TAGS |
			GPUCOMM_RING_SIDE) != 0 ||
			pthread_create(&t, NULL, fake_kernel, NULL) != 0) {
		CHECK(0, "init or thread");
		goto out;
	}
	deadline = rte_get_timer_cycles() + 60 * rte_get_timer_hz();
	while (next_collect < CONC_ITEMS && rte_get_timer_cycles() < deadline) {
		struct rte_gpu_comm_list *it = NULL;
		int rc;

		while ((rc = gpucomm_ring_collect(&r, &it)) == 1) {
			uint32_t idx = (uint32_t)(it - conc.list);

			if (idx != next_collect % CONC_N ||
					__atomic_load_n(&conc.result[idx], __ATOMIC_RELAXED) !=
					expected_sum(next_collect))
				wrong++;
			CHECK(gpucomm_ring_release(&r) == 0, "release");
			next_collect++;
		}
		CHECK(rc == 0, "collect error %d", rc);
		if (r.published == CONC_ITEMS)
			sched_yield();
		else {
			struct rte_gpu_comm_list *h = gpucomm_ring_next(&r);

			if (h == NULL) {
				full++;
				sched_yield();
				continue;
			}
			for (uint32_t i = 0; i < item_pkts(r.published); i++)
				gpucomm_ring_set_pkt(&r, &h->pkt_list[i],
					entry_addr(r.published, i), 64 + i);
			CHECK(gpucomm_ring_set_side(&r, 0, r.published) == 0 &&
				gpucomm_ring_set_side(&r, 1, ~r.published) == 0,
				"side slots");
			CHECK(gpucomm_ring_publish(&r, item_pkts(r.published)) == 0,
				"publish");
		}
		CHECK(r.inflight == r.published - r.released &&
			r.inflight <= CONC_N, "in flight %u", r.inflight);
	}
	conc.stop = 1;
	pthread_join(t, NULL);
	CHECK(next_collect == CONC_ITEMS, "%" PRIu64 " of %u items collected",
		next_collect, CONC_ITEMS);
	CHECK(wrong == 0 && conc.bad == 0, "%" PRIu64 " results wrong or out of "
		"order, %" PRIu64 " items handed over torn", wrong, conc.bad);
	CHECK(r.inflight == 0 && r.inflight_pkts == 0, "nothing left in flight");
	/* Most items are READY when first polled, their entries current. */
	CHECK(conc.prefetched > 0, "no item summed from its prefetched entries");
	CHECK(conc.side_kept > 0, "no item's side slots kept before READY");
	printf("  %u items through a %u-item ring, ring full %" PRIu64 " times, "
		"%" PRIu64 " summed from entries loaded before READY (%" PRIu64
		" with their side slots), %" PRIu64
		" polls saw an earlier lap's entry 0\n",
		CONC_ITEMS, CONC_N, full, conc.prefetched, conc.side_kept,
		conc.stale);
out:
	CHECK(rte_gpu_comm_destroy_list(conc.list, CONC_N) == 0, "destroy");
}

/* The kernel's setup on the CPU side: quit flag and dispatch state. */
static void
kernel_setup(void)
{
	struct rte_gpu_comm_list *lists[2];
	struct gpucomm_kernel k;
	uint32_t v = 7;

	lists[0] = rte_gpu_comm_create_list(gpu, 16);
	lists[1] = rte_gpu_comm_create_list(gpu, 16);
	CHECK(lists[0] != NULL && lists[1] != NULL, "lists");
	if (lists[0] == NULL || lists[1] == NULL)
		goto out;
	CHECK(gpucomm_kernel_setup(&k, gpu, lists, 2, 16, 64) == 0, "setup");
	CHECK(k.kp.n_rings == 2 && k.kp.n_items == 16 && k.kp.bpq == 64 &&
		(void *)k.kp.items[0] == (void *)lists[0] &&
		(void *)k.kp.items[1] == (void *)lists[1] &&
		k.kp.quit == k.quit.ptr && k.kp.poll_ns_min == GPUCOMM_POLL_NS_MIN &&
		k.kp.poll_ns_max == GPUCOMM_POLL_NS_MAX &&
		k.kp.lap_tags == 0, "parameters (no lap tags unless asked)");
	CHECK(fake_cuda_is_device_range(k.state, gpucomm_kstate_bytes(2, 16)) &&
		(void *)k.kp.st.ready_seq == k.state, "state in GPU memory");
	CHECK(fake_cuda_is_registered(k.quit.ptr, sizeof(uint32_t)),
		"quit flag where the GPU reads it");
	CHECK(rte_gpu_comm_get_flag_value(&k.quit, &v) == 0 && v == 0, "quit 0");
	CHECK(gpucomm_kernel_quit(&k) == 0 &&
		rte_gpu_comm_get_flag_value(&k.quit, &v) == 0 && v == 1, "quit 1");
	CHECK(gpucomm_kernel_rearm(&k) == 0 &&
		rte_gpu_comm_get_flag_value(&k.quit, &v) == 0 && v == 0,
		"quit 0 again");
	gpucomm_kernel_teardown(&k);
	CHECK(k.state == NULL && !k.quit_ok, "teardown");
	CHECK(gpucomm_kernel_quit(&k) == -EINVAL &&
		gpucomm_kernel_rearm(&k) == -EINVAL, "quit after teardown");

	{
		struct rte_gpu_comm_list *one_missing[2] = { lists[0], NULL };

		CHECK(gpucomm_kernel_setup(&k, gpu, one_missing, 2, 16, 64) ==
			-EINVAL, "a ring without list refused");
	}
	CHECK(gpucomm_kernel_setup(&k, gpu, lists, 0, 16, 64) == -EINVAL &&
		gpucomm_kernel_setup(&k, gpu, lists, GPUCOMM_MAX_RINGS + 1, 16, 64) ==
		-EINVAL && gpucomm_kernel_setup(&k, gpu, lists, 1, 0, 64) ==
		-EINVAL && gpucomm_kernel_setup(&k, gpu, lists, 1, 16, 0) == -EINVAL,
		"bad sizes refused");
out:
	for (int i = 0; i < 2; i++)
		if (lists[i] != NULL)
			CHECK(rte_gpu_comm_destroy_list(lists[i], 16) == 0, "destroy");
	/* The status arrays gpudev 22.11 loses when it cannot map GPU
	 * memory for the CPU are reclaimed at close; nothing else is left. */
	CHECK(fake_cuda_live_registrations() == 0, "registrations left");
}

/* The ring library logs under the name the build gives it, so that
 * --log-level=lib.gpucomm:debug reaches it. */
static void
logtype(void)
{
	char *dump = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&dump, &len);

	CHECK(f != NULL, "open_memstream");
	if (f == NULL)
		return;
	rte_log_dump(f);
	fclose(f);
	CHECK(strstr(dump, "lib.gpucomm") != NULL, "no logtype lib.gpucomm");
	CHECK(strstr(dump, "RTE_LOG_DEFAULT_LOGTYPE") == NULL,
		"a logtype named RTE_LOG_DEFAULT_LOGTYPE");
	free(dump);
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = { argv[0], (char *)"--no-huge", (char *)"-m", (char *)"256",
		(char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
		(char *)"-l", (char *)"0", (char *)"--vdev", (char *)"gpu_cuda0",
		(char *)"--log-level", (char *)"lib.eal:error",
		(char *)"--file-prefix", prefix, NULL };

	if (argc < 2) {
		fprintf(stderr, "usage: %s FAKE_LIBCUDA [gdrcopy]\n", argv[0]);
		return 2;
	}
	setenv("GPU_CUDA_LIBCUDA", argv[1], 1);
	gdrcopy = argc > 2 && strcmp(argv[2], "gdrcopy") == 0;
	snprintf(prefix, sizeof(prefix), "test-gpucomm-%d", (int)getpid());
	if (gpuapp_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		printf("FAIL eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	printf("gpu_cuda driver %s over the fake CUDA\n", gpuapp_gpu_driver());
	gpu = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	pool = rte_pktmbuf_pool_create("gpucomm_test", 63, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (gpu < 0 || pool == NULL) {
		printf("FAIL no fake GPU (%d) or no mbuf pool\n", gpu);
		return 1;
	}
	CHECK_CASE(logtype);
	CHECK_CASE(kstate_layout);
	CHECK_CASE(init_resets_and_refuses);
	CHECK_CASE(ring_order_and_accounting);
	CHECK_CASE(fill_mbufs);
	CHECK_CASE(lap_tag_validation);
	CHECK_CASE(ring_lap_tags);
	CHECK_CASE(publish_store_order);
	CHECK_CASE(prefetch_first_poll);
	CHECK_CASE(ring_side_records);
	CHECK_CASE(concurrent_protocol);
	CHECK_CASE(kernel_setup);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return check_finish("gpucomm_ring");
}
