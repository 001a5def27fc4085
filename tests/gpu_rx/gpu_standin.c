/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CPU stand-in for dpdk-gpu-rx's CUDA side (lib/gpucuda's runtime
 * wrappers, the kernels of gpu_kernels.cu and lib/gpucomm's
 * gpucomm_cuda.cu), linked instead of them into dpdk-gpu-rx-standin. With the fake CUDA driver
 * behind gpudev (GPU_CUDA_LIBCUDA=libfakecuda.so, --vdev gpu_cuda0,dev=0)
 * every GPU buffer is host memory, so the app's GPU modes run unchanged on
 * a machine without a GPU: the RX lcores' fill, publish, collect and free
 * are the shipped code, and only the kernel is played by a CPU thread.
 * What that measures and tests: the RX lcore's own per-packet cost
 * (bench/rx-lcore-cost.sh, with perf), and the lcore's handling of the
 * results (captures, counters, flow table) against --cpu.
 *
 * The "kernel" thread keeps the kernel's contract (gpu_body.cuh,
 * gpucomm_persistent.cuh): items of each ring taken in ring order once
 * READY (acquire: pairs with the lcore's rte_wmb before READY), the
 * packets classified with the per-packet code the kernel and --cpu run
 * (flow_classify.h), verdicts of matched packets, the item summary and,
 * with a capture, the accepted bytes into the arena; then DONE with a
 * release store (pairs with the lcore's rte_rmb after DONE); the block
 * counters after DONE. The test variant's faults (kernel_faults.h: hold,
 * fault_at) behave alike. It runs on the core of the thread that
 * launched it (the main lcore, which sleeps between its checks), at the
 * highest priority it may take, and naps when idle.
 *
 * GPURX_STANDIN_GPU_US=L (environment; the persistent form only) plays a
 * GPU's latency: an item is DONE no sooner than L microseconds after the
 * thread saw it READY. It is still processed at once and in ring order,
 * and the items seen since wait together, each for its own deadline
 * (in flight together, as on a GPU, not one after another), so that about
 * L x the item rate of items and their mbufs are out of the lcore's hands,
 * as a real GPU's PCIe round trips and processing hold them (microseconds
 * per item). Without it items return almost at once.
 *
 * Consecutive packets of identical bytes (a net_null source: every frame
 * the same) are classified once: the verdict and parse of the previous one
 * are reused, its flow accounted again. This keeps the one thread ahead
 * of an RX lcore, so that a benchmark measures the lcore, not the
 * stand-in; the results are those of classifying each packet.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "gpu_kernels.h"
#include "gpucuda.h"
#include "flow_classify.h"
#include "gpu_stamp.h"
#include "kernel_faults.h"
#include "opts.h"

/* cudaError_t values the app may be handed. */
#define STANDIN_ERR_INVALID_VALUE 1
#define STANDIN_ERR_MEMORY 2
#define STANDIN_ERR_NOT_READY 600
#define STANDIN_ERR_ILLEGAL_ADDRESS 700
/* Not a CUDA error: a READY item whose lap tags are not current. */
#define STANDIN_ERR_LAP_TAGS 999
/* work_item()'s seq of an item launched alone: no prefetch, no tags. */
#define STANDIN_NO_SEQ (~0ULL)

/* Bytes of a packet compared with the previous one to reuse its result:
 * what the kernel stages to classify from (GPURX_STAGE_HEAD) suffices for
 * short frames, and longer ones are classified anew. */
#define STANDIN_SAME_MAX 128u
/* Packets whose bytes are prefetched ahead of the one classified. */
#define STANDIN_AHEAD 8u
/* Idle polls before napping, and the nap: an RX lcore fills a ring item
 * of 128 packets in a few microseconds and a ring of 64 in hundreds. */
#define STANDIN_SPINS 2000u
#define STANDIN_NAP_NS 20000

struct standin_stream {
	pthread_t thread;
	int has_thread;
	int running;		/* atomic: the kernel thread has not ended */
	int err;		/* what it ended with, read after running 0 */
};

struct standin_kernel {
	struct gpucomm_kparams kp;
	struct gpurx_kparams p;
	struct gpurx_test_faults f;
	struct standin_stream *s;
	uint64_t lat_cycles;	/* GPURX_STANDIN_GPU_US in TSC cycles, or 0 */
	uint64_t *seen;		/* [q * n_items + idx]: TSC at READY seen */
};

/* Per thread: the previous packet classified, for the reuse above. */
struct standin_last {
	bool valid;		/* false: none yet (a 0-byte frame is one) */
	uint32_t len;
	uint32_t wirelen;
	uint32_t verdict;
	struct gpurx_pkt_info pi;
	uint8_t bytes[STANDIN_SAME_MAX];
};

static uint64_t
standin_ns(void)
{
	return rte_get_tsc_cycles() * 1000000000.0 / rte_get_tsc_hz();
}

static uint32_t
classify_one(const struct gpurx_kparams *p, struct standin_last *last,
		const uint8_t *pkt, uint32_t caplen, uint32_t wirelen,
		uint64_t ts, uint16_t q, const struct gpurx_split_pkt *sp,
		struct gpurx_pkt_info *pi)
{
	struct gpurx_pkt_view view;
	uint32_t v;

	if (sp != NULL && sp->tail != 0) {
		view = gpurx_view_split(pkt, sp->len0,
			(const uint8_t *)(uintptr_t)sp->tail);
		return gpurx_classify_pkt_view_info(view, caplen, wirelen, ts,
			q, p->prog, p->prog_len, p->ft, pi);
	}
	if (last->valid && caplen == last->len && wirelen == last->wirelen &&
			memcmp(pkt, last->bytes, caplen) == 0) {
		*pi = last->pi;
		gpurx_classify_account_q(pi, last->verdict, wirelen, ts, q, p->ft);
		return last->verdict;
	}
	view = gpurx_view_linear(pkt);
	v = gpurx_classify_pkt_view_info(view, caplen, wirelen, ts, q,
		p->prog, p->prog_len, p->ft, pi);
	if (caplen <= STANDIN_SAME_MAX) {
		memcpy(last->bytes, pkt, caplen);
		last->valid = true;
		last->len = caplen;
		last->wirelen = wirelen;
		last->verdict = v;
		last->pi = *pi;
	} else {
		last->valid = false;
	}
	return v;
}

/* The kernel's body for item idx of queue q (gpu_body.cuh,
 * process_item), results before return. */
static void
process_item(const struct gpurx_kparams *p, struct standin_last *last,
		uint32_t q, uint32_t idx, uint32_t slot, uint32_t n_pkts,
		const struct gpurx_item_in *item_in)
{
	struct gpurx_gq *gq = &p->gq[q];
	const struct gpucomm_item *it = &gq->items[idx];
	const uint32_t burst = gq->burst, base = idx * burst;
	uint8_t *arena = gq->arena + (size_t)idx * gq->item_bytes;
	const struct gpucomm_pkt *pkts = it->pkt_list;
	struct gpurx_item_sum sum;
	uint64_t t0 = standin_ns();
	uint32_t n = RTE_MIN(n_pkts, burst);
	const struct gpurx_item_in in = *item_in;
	uint32_t off = 0;	/* packet i's arena offset */

	/* --mem staged: the kernel's pull_item(), before any packet is
	 * read (the entries point at pull_dst). */
	if (in.pull != 0 && gq->pull_dst != NULL)
		memcpy(gq->pull_dst + (size_t)idx * gq->item_bytes,
			gq->pull_src + (size_t)idx * gq->item_bytes,
			RTE_MIN(in.pull, gq->item_bytes) & ~15u);
	memset(&sum, 0, sizeof(sum));
	/* The packets' first lines are read a few packets ahead: misses in
	 * flight together, as the kernel's loads are (one at a time, a
	 * miss per packet made this thread slower than the RX lcore). */
	for (uint32_t i = 0; i < RTE_MIN(n, STANDIN_AHEAD); i++)
		rte_prefetch0((const void *)pkts[i].addr);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *pkt = (const uint8_t *)pkts[i].addr;
		const uint32_t caplen = (uint32_t)pkts[i].size;
		const struct gpurx_split_pkt *sp = p->split ?
			&gq->split[base + i] : NULL;
		struct gpurx_pkt_info pi;
		uint32_t v, len, at = off;

		off += gpurx_arena_span(caplen);
		if (i + STANDIN_AHEAD < n)
			rte_prefetch0((const void *)pkts[i + STANDIN_AHEAD].addr);
		v = classify_one(p, last, pkt, caplen, gpurx_in_wirelen(in.flags,
				gq->wirelen, base + i, caplen),
			gpurx_in_ts(in.flags, in.ts, gq->ts, base + i),
			(uint16_t)q, sp, &pi);
		if (pi.malformed != GPURX_MAL_NONE)
			sum.mal[pi.malformed % GPURX_SUM_MAL]++;
		if (v == 0)
			continue;
		gq->verdict[base + i] = v;
		sum.match[i / 32] |= 1u << (i % 32);
		if (p->stamps)
			gpurx_stamp_out_put(&gq->stamp[base + i], sp != NULL &&
				sp->tail != 0 ? gpurx_view_split(pkt, sp->len0,
					(const uint8_t *)(uintptr_t)sp->tail) :
				gpurx_view_linear(pkt), caplen, &pi);
		len = RTE_MIN(RTE_MIN(v, caplen), gq->max_caplen);
		if (!p->capture || at > gq->item_bytes ||
				len > gq->item_bytes - at)
			continue;
		if (sp != NULL && sp->tail != 0) {
			uint32_t h = RTE_MIN(len, sp->len0);

			memcpy(arena + at, pkt, h);
			memcpy(arena + at + h,
				(const uint8_t *)(uintptr_t)sp->tail, len - h);
		} else if (sp == NULL || !sp->host || len > sp->len0) {
			memcpy(arena + at, pkt, len);
		}
		/* else: within a header buffer in host memory, the CPU
		 * writes it itself */
	}
	gq->sum[idx] = sum;
	gq->busy_ns[slot] += standin_ns() - t0;
	gq->items_done[slot]++;
}

static void
item_done(const struct gpucomm_kparams *kp, uint32_t q, uint32_t idx)
{
	/* Results before DONE: pairs with collect's rte_rmb after it. */
	__atomic_store_n(kp->items[q][idx].status_h, GPUCOMM_STATUS_DONE,
		__ATOMIC_RELEASE);
}

/* Item idx of ring q READY: processed, by the worker slot a GPU's would
 * be (not yet DONE). */
/*
 * The persistent kernel's prefetch with lap tags (kp.lap_tags,
 * gpucomm_persistent.cuh): the item's count from entry 0's tag, kept
 * with the entries when every entry below it in the window carries the
 * item's lap. Read here after READY, when a correct fill always passes;
 * 0 when it does not (the kernel would load the item again after READY,
 * which would hide the fill's fault from the tests).
 */
static uint32_t
tagged_count(const struct gpucomm_item *it, unsigned long long lap)
{
	const struct gpucomm_pkt *e = it->pkt_list;
	const uint32_t cnt = gpucomm_tag_count(e[0].size, lap);

	for (uint32_t i = 0; i < RTE_MIN(cnt, GPUCOMM_TAG_WINDOW); i++)
		if (!gpucomm_tag_current(e[i].size, lap))
			return 0;
	return cnt;
}

/*
 * The item's struct gpurx_item_in as the prefetch takes it on a tagged
 * ring: from its side slots (GPURX_SIDE_WORDS, gpucomm_layout.h), each
 * carrying the item's lap. -1 when one does not (READY without current
 * side slots: the kernel would load .in after READY, hiding the fault),
 * -2 when they disagree with .in (which the kernel reads when they are
 * not current, and the CPU when it collects the item).
 */
static int
tagged_in(const struct gpurx_gq *gq, uint32_t idx, unsigned long long lap,
		struct gpurx_item_in *in)
{
	const struct gpucomm_pkt *e = gq->items[idx].pkt_list;
	uint64_t w[GPURX_SIDE_WORDS];

	for (uint32_t k = 0; k < GPURX_SIDE_WORDS; k++) {
		const struct gpucomm_pkt *s = &e[GPUCOMM_SIDE_ENTRY(k)];

		if (!gpucomm_tag_current(s->size, lap))
			return -1;
		w[k] = s->addr;
	}
	in->ts = w[0];
	in->flags = (uint32_t)w[1];
	in->pull = (uint32_t)(w[1] >> 32);
	if (in->ts != gq->in[idx].ts || in->flags != gq->in[idx].flags ||
			in->pull != gq->in[idx].pull)
		return -2;
	return 0;
}

static int
work_item(const struct gpucomm_kparams *kp, const struct gpurx_kparams *p,
		struct standin_last *last, uint32_t q, uint32_t idx,
		unsigned long long seq)
{
	const struct gpucomm_item *it = &p->gq[q].items[idx];
	uint32_t n = it->num_pkts;
	struct gpurx_item_in in = p->gq[q].in[idx];

	if (kp->lap_tags && seq != STANDIN_NO_SEQ) {
		int rc;

		n = tagged_count(it, seq / kp->n_items);
		if (n == 0) {
			fprintf(stderr, "stand-in: ring %u item %u (seq %llu): "
				"READY without current lap tags\n", q, idx, seq);
			return STANDIN_ERR_LAP_TAGS;
		}
		rc = tagged_in(&p->gq[q], idx, seq / kp->n_items, &in);
		if (rc != 0) {
			fprintf(stderr, "stand-in: ring %u item %u (seq %llu): "
				"READY with side slots %s\n", q, idx, seq,
				rc == -1 ? "not current" :
				"other than the item's inputs");
			return STANDIN_ERR_LAP_TAGS;
		}
	}
	process_item(p, last, q, idx, kp->bpq == 0 ? 0 : idx % kp->bpq, n,
		&in);
	return 0;
}

/* Item idx of ring q READY: processed and DONE. */
static int
run_item(const struct gpucomm_kparams *kp, const struct gpurx_kparams *p,
		struct standin_last *last, uint32_t q, uint32_t idx,
		unsigned long long seq)
{
	const int rc = work_item(kp, p, last, q, idx, seq);

	if (rc == 0)
		item_done(kp, q, idx);
	return rc;
}

/* GPURX_STANDIN_GPU_US: the n_held items of ring q processed but not yet
 * DONE, from *held on in ring order, DONE as far as their deadlines have
 * passed (deadlines grow along the ring: items are seen in order).
 * Returns how many are still held. */
static uint32_t
release_held(const struct standin_kernel *k, uint32_t q, uint32_t *held,
		uint32_t n_held, uint64_t now)
{
	const uint32_t n_items = k->kp.n_items;
	uint32_t h = *held;

	while (n_held != 0 && now - k->seen[(size_t)q * n_items + h] >=
			k->lat_cycles) {
		item_done(&k->kp, q, h);
		h = h + 1 == n_items ? 0 : h + 1;
		n_held--;
	}
	*held = h;
	return n_held;
}

static void *
kernel_main(void *arg)
{
	struct standin_kernel *k = arg;
	const struct gpucomm_kparams *kp = &k->kp;
	uint32_t next[GPUCOMM_MAX_RINGS] = { 0 };
	uint32_t held[GPUCOMM_MAX_RINGS] = { 0 };
	uint32_t n_held[GPUCOMM_MAX_RINGS] = { 0 };
	unsigned long long seq[GPUCOMM_MAX_RINGS] = { 0 };
	struct standin_last last = { .valid = false };
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = STANDIN_NAP_NS };
	uint32_t spins = 0;
	int err = 0;

	/* Ahead of the lcore even on a busy machine: first in line for its
	 * core when it wakes (where allowed: root, CAP_SYS_NICE), napping
	 * rather than spinning when idle so that it takes little from the
	 * core's other threads, with wake-ups on time. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20);
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		int idle = 1, holding = 0;

		for (uint32_t q = 0; q < kp->n_rings; q++) {
			uint32_t idx = next[q];

			if (k->lat_cycles != 0) {
				n_held[q] = release_held(k, q, &held[q],
					n_held[q], rte_get_tsc_cycles());
				holding |= n_held[q] != 0;
				/* A held item is still READY: with the whole
				 * ring held, next is one of them. */
				if (n_held[q] == kp->n_items)
					continue;
			}
			/* Acquire: what the lcore wrote before READY (its
			 * rte_wmb) is seen after. */
			if (__atomic_load_n(kp->items[q][idx].status_h,
					__ATOMIC_ACQUIRE) != GPUCOMM_STATUS_READY)
				continue;
			if (q == 0 && k->f.fault_at != 0 &&
					seq[q] == k->f.fault_at) {
				err = STANDIN_ERR_ILLEGAL_ADDRESS;
				goto out;
			}
			if (k->lat_cycles != 0) {
				k->seen[(size_t)q * kp->n_items + idx] =
					rte_get_tsc_cycles();
				err = work_item(kp, &k->p, &last, q, idx,
					seq[q]);
				n_held[q]++;
				holding = 1;
			} else {
				err = run_item(kp, &k->p, &last, q, idx, seq[q]);
			}
			if (err != 0)
				goto out;
			next[q] = idx + 1 == kp->n_items ? 0 : idx + 1;
			seq[q]++;
			idle = 0;
		}
		if (!idle) {
			spins = 0;
			continue;
		}
		/* Items held for their latency are released first: the app
		 * may wait for their DONE before it quits. Spin meanwhile: a
		 * nap would hold them far past their deadline. */
		if (holding) {
			rte_pause();
			continue;
		}
		if (!k->f.hold && __atomic_load_n(kp->quit, __ATOMIC_ACQUIRE) != 0)
			break;
		if (++spins < STANDIN_SPINS) {
			rte_pause();
		} else {
			/* The ring holds far more than a nap's worth of RX. */
			nanosleep(&nap, NULL);
		}
	}
out:
	k->s->err = err;
	__atomic_store_n(&k->s->running, 0, __ATOMIC_RELEASE);
	free(k->seen);
	free(k);
	return NULL;
}

const char *
gpucuda_strerror(int err)
{
	switch (err) {
	case 0: return "no error";
	case STANDIN_ERR_INVALID_VALUE: return "invalid argument (CPU stand-in)";
	case STANDIN_ERR_MEMORY: return "out of memory (CPU stand-in)";
	case STANDIN_ERR_NOT_READY: return "not ready (CPU stand-in)";
	case STANDIN_ERR_ILLEGAL_ADDRESS:
		return "an illegal memory access was encountered (CPU stand-in, "
			"fault_at)";
	case STANDIN_ERR_LAP_TAGS:
		return "an item READY without current lap tags (CPU stand-in)";
	default: return "error (CPU stand-in)";
	}
}

int
gpucuda_still_running(int err)
{
	return err == STANDIN_ERR_NOT_READY;
}

int
gpucuda_select(const char *pci_bus_id, int *ordinal)
{
	(void)pci_bus_id;
	*ordinal = 0;
	return 0;
}

/* Every buffer is host memory here (the fake CUDA's too). */
int
gpucuda_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	return 0;
}

int
gpucuda_stream_create(void **s)
{
	struct standin_stream *st = calloc(1, sizeof(*st));

	*s = st;
	return st == NULL ? STANDIN_ERR_MEMORY : 0;
}

int
gpucuda_stream_destroy(void *s)
{
	struct standin_stream *st = s;

	if (st == NULL)
		return 0;
	if (st->has_thread) {
		/* The kernel thread ends before its stream: a kernel that
		 * ignores quit (hold) is never destroyed by the app. */
		if (__atomic_load_n(&st->running, __ATOMIC_ACQUIRE))
			return STANDIN_ERR_NOT_READY;
		pthread_join(st->thread, NULL);
	}
	free(st);
	return 0;
}

/* Synchronous: done before the call returns, as after a stream sync. */
int
gpucuda_copy_async(void *dst, const void *src, size_t n, void *s)
{
	(void)s;
	memcpy(dst, src, n);
	return 0;
}

int
gpucuda_stream_sync(void *s)
{
	struct standin_stream *st = s;

	while (st != NULL && __atomic_load_n(&st->running, __ATOMIC_ACQUIRE))
		rte_pause();
	return st == NULL ? 0 : st->err;
}

int
gpucuda_stream_busy(void *s)
{
	struct standin_stream *st = s;

	if (st == NULL)
		return 0;
	if (__atomic_load_n(&st->running, __ATOMIC_ACQUIRE))
		return -1;
	return st->err;
}

int
gpucuda_props(int *exec_timeout, int *coop)
{
	*exec_timeout = 0;
	*coop = 1;
	return 0;
}

/* GPURX_STANDIN_GPU_US into k: 0 or a cudaError_t-like code. */
static int
standin_latency(struct standin_kernel *k)
{
	const char *e = getenv("GPURX_STANDIN_GPU_US");
	char *end;
	unsigned long us;

	k->lat_cycles = 0;
	if (e == NULL || *e == '\0')
		return 0;
	errno = 0;
	us = strtoul(e, &end, 10);
	if (errno != 0 || *end != '\0' || us > 1000000) {
		fprintf(stderr, "error: GPURX_STANDIN_GPU_US: microseconds "
			"0..1000000, not '%s'\n", e);
		return STANDIN_ERR_INVALID_VALUE;
	}
	if (us == 0)
		return 0;
	k->seen = calloc((size_t)k->kp.n_rings * k->kp.n_items,
		sizeof(*k->seen));
	if (k->seen == NULL)
		return STANDIN_ERR_MEMORY;
	k->lat_cycles = us * rte_get_tsc_hz() / 1000000;
	return 0;
}

int
gpurx_test_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, const struct gpurx_test_faults *f,
		void *s)
{
	struct standin_stream *st = s;
	struct standin_kernel *k;
	int rc;

	if (st == NULL || st->has_thread || kp->n_rings > GPUCOMM_MAX_RINGS)
		return STANDIN_ERR_INVALID_VALUE;
	k = malloc(sizeof(*k));
	if (k == NULL)
		return STANDIN_ERR_MEMORY;
	k->kp = *kp;
	k->p = *p;
	k->f = *f;
	k->s = st;
	k->seen = NULL;
	rc = standin_latency(k);
	if (rc != 0) {
		free(k);
		return rc;
	}
	st->err = 0;
	st->running = 1;
	rc = pthread_create(&st->thread, NULL, kernel_main, k);
	if (rc != 0) {
		st->running = 0;
		free(k->seen);
		free(k);
		fprintf(stderr, "error: CPU stand-in kernel thread: %s\n",
			strerror(rc));
		return STANDIN_ERR_MEMORY;
	}
	pthread_setname_np(st->thread, "gpu-standin");
	st->has_thread = 1;
	return 0;
}

int
gpurx_cuda_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, void *s)
{
	const struct gpurx_test_faults none = { .fault_at = 0, .hold = 0 };

	return gpurx_test_launch_persistent(kp, p, &none, s);
}

int
gpurx_cuda_launch_item(const struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, uint32_t q, uint32_t idx,
		unsigned long long seq, void *s)
{
	/* Per launch, as a kernel per item has no state between them. */
	struct standin_last last = { .valid = false };

	(void)s;
	(void)seq;
	if (q >= kp->n_rings || idx >= kp->n_items)
		return STANDIN_ERR_INVALID_VALUE;
	/* The item kernel loads its item after the launch: no prefetch. */
	return run_item(kp, p, &last, q, idx, STANDIN_NO_SEQ);
}

/* The dispatch state is the GPU kernels' alone: the thread above reads
 * the items' own pointers. */
int
gpucomm_cuda_state_init(const struct gpucomm_kparams *kp, void *stream)
{
	(void)kp;
	(void)stream;
	return 0;
}

/* Copies here are done when queued: READY is stored at once, a release
 * after the lcore's entries and side data (its rte_wmb came first). */
int
gpucomm_cuda_queue_ready(void *stream, uint32_t *status_d)
{
	(void)stream;
	__atomic_store_n(status_d, GPUCOMM_STATUS_READY, __ATOMIC_RELEASE);
	return 0;
}
