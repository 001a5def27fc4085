/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU's populate alone, on this CPU, no GPU and no EAL:
 * gpucomm_ring_fill_mbufs + gpucomm_ring_publish into plain host memory
 * (the ring built by hand over calloc'd lists, statuses marked DONE by
 * hand, 16 items a sample), the part of bench-handoff's populate_median that is the ring's.
 * Built against any tree's lib/gpucomm (bench/ring-fill-ab.sh compiles
 * it against two and alternates them), so it uses only what every
 * version of the ring has; GPUCOMM_RING_TAGS where the tree has it.
 *
 *   bench-ring-fill [--rounds N] [--tags 0|1]
 * prints, per burst (32, 1024): min/median/p99 ns of one fill+publish
 * (a sample: 16 of them in a row, divided by 16).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "gpucomm_ring.h"

#define N_ITEMS 16u
#define N_MBUFS 8192u
#define MBUF_STRIDE 2304u	/* mbuf, headroom, 2 KiB of data: a pool's */

static int
cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* N_ITEMS fills+publishes (the ring full), then the items returned by
 * hand; the cycles of the fills+publishes. */
static uint64_t
one_round(struct gpucomm_ring *r, struct rte_mbuf **mb, uint32_t *next,
		uint32_t burst)
{
	struct rte_gpu_comm_list *it;
	uint64_t t0, t1;

	t0 = rte_rdtsc_precise();
	for (uint32_t k = 0; k < N_ITEMS; k++) {
		/* bench-handoff's packets_next: the pool in order. */
		if (*next + burst > N_MBUFS)
			*next = 0;
		if (gpucomm_ring_fill_mbufs(r, &mb[*next], burst) != 0 ||
				gpucomm_ring_publish(r, burst) != 0) {
			fprintf(stderr, "fill/publish failed\n");
			exit(1);
		}
		*next += burst;
	}
	t1 = rte_rdtsc_precise();
	for (uint32_t k = 0; k < N_ITEMS; k++) {
		*gpucomm_ring_inflight_item(r, 0)->status_h =
			RTE_GPU_COMM_LIST_DONE;
		if (gpucomm_ring_collect(r, &it) != 1 ||
				gpucomm_ring_release(r) != 0) {
			fprintf(stderr, "collect/release failed\n");
			exit(1);
		}
	}
	return t1 - t0;
}

int
main(int argc, char **argv)
{
	static const uint32_t bursts[] = { 32, 1024 };
	struct rte_gpu_comm_list *list;
	struct rte_mbuf **mb;
	uint64_t *samples, hz, t0;
	unsigned long rounds = 3000;
	int tags = 0;
	uint8_t *mem;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--rounds") == 0)
			rounds = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--tags") == 0)
			tags = atoi(argv[i + 1]);
	}
#ifndef GPUCOMM_RING_TAGS
	if (tags) {
		fprintf(stderr, "this tree's ring has no lap tags\n");
		return 77;
	}
#endif
	list = calloc(N_ITEMS, sizeof(*list));
	mb = calloc(N_MBUFS, sizeof(*mb));
	samples = calloc(rounds, sizeof(*samples));
	mem = aligned_alloc(64, (size_t)N_MBUFS * MBUF_STRIDE);
	if (list == NULL || mb == NULL || samples == NULL || mem == NULL)
		return 1;
	for (uint32_t i = 0; i < N_ITEMS; i++) {
		list[i].pkt_list = aligned_alloc(64, RTE_GPU_COMM_LIST_PKTS_MAX *
			sizeof(struct rte_gpu_comm_pkt));
		list[i].mbufs = calloc(RTE_GPU_COMM_LIST_PKTS_MAX, sizeof(void *));
		list[i].status_h = calloc(1, sizeof(*list[i].status_h));
		if (list[i].pkt_list == NULL || list[i].mbufs == NULL ||
				list[i].status_h == NULL)
			return 1;
		memset(list[i].pkt_list, 0, RTE_GPU_COMM_LIST_PKTS_MAX *
			sizeof(struct rte_gpu_comm_pkt));
	}
	memset(mem, 0, (size_t)N_MBUFS * MBUF_STRIDE);
	for (uint32_t i = 0; i < N_MBUFS; i++) {
		struct rte_mbuf *m = (struct rte_mbuf *)(mem + (size_t)i * MBUF_STRIDE);

		m->buf_addr = (uint8_t *)m + sizeof(*m);
		m->data_off = RTE_PKTMBUF_HEADROOM;
		m->data_len = 64;
		m->pkt_len = 64;
		m->nb_segs = 1;
		mb[i] = m;
	}
	hz = rte_get_tsc_hz();
	if (hz == 0) {
		/* No EAL: the TSC's rate measured against the wall clock. */
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		t0 = rte_rdtsc();
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000L +
			(b.tv_nsec - a.tv_nsec) < 100000000L);
		hz = (rte_rdtsc() - t0) * 10;
	}
	for (size_t k = 0; k < RTE_DIM(bursts); k++) {
		const uint32_t burst = bursts[k];
		struct gpucomm_ring r;
		uint32_t next = 0;

		/* As gpucomm_ring_init leaves it (that needs EAL). */
		memset(&r, 0, sizeof(r));
		r.list = list;
		r.n_items = N_ITEMS;
#ifdef GPUCOMM_RING_TAGS
		r.tags = (uint8_t)tags;
#endif
		for (unsigned long i = 0; i < rounds + rounds / 10; i++) {
			const uint64_t c = one_round(&r, mb, &next, burst);

			if (i >= rounds / 10)
				samples[i - rounds / 10] = c;
		}
		qsort(samples, rounds, sizeof(*samples), cmp_u64);
		/* Per item: a sample is N_ITEMS of them. */
		printf("burst=%u tags=%d min=%.1fns median=%.1fns p99=%.1fns\n",
			burst, tags, samples[0] * 1e9 / hz / N_ITEMS,
			samples[rounds / 2] * 1e9 / hz / N_ITEMS,
			samples[rounds * 99 / 100] * 1e9 / hz / N_ITEMS);
	}
	return 0;
}
