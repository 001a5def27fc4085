/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's TX queues and their lcores: each queue's state, the rate
 * and its pacing by token bucket, the loop that allocates, builds (on
 * the CPU, or posts to the GPU and collects what it built) and sends
 * bursts, and the run over the worker lcores with the queues' counters
 * summed at its end.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "gpuapp_clock.h"
#include "gpuapp_lat_hist.h"
#include "gpuapp_tsc.h"
#include "gpu_tx.h"

/* What one packet of len bytes (no FCS) costs against the rate. */
static double
pkt_cost(const struct opts *o, uint32_t len)
{
	switch (o->unit) {
	case RATE_BPS: return gputx_l2_bits(len, 1);
	case RATE_PCT: return gputx_l1_bits(len, 1);
	default: return 1;
	}
}

/* The rate in pkt_cost() units a second, from --rate and the link's
 * speed: 0, or -1 (said). */
int
gputx_set_rate(struct app *a)
{
	const struct opts *o = &a->o;

	if (o->unit == RATE_NONE) {
		a->rate_units = 0;
		return 0;
	}
	if (o->unit == RATE_PCT) {
		if (a->link_mbps == 0) {
			GPUTX_LOG(ERR, "error: --rate %g%%: port %u reports no link "
				"speed; give pps or bps\n", o->rate, o->port);
			return -1;
		}
		a->rate_units = o->rate / 100 * a->link_mbps * 1e6;
	} else {
		a->rate_units = o->rate;
	}
	if (o->unit == RATE_BPS && a->link_mbps != 0 &&
			o->rate > a->link_mbps * 1e6)
		GPUTX_LOG(WARNING, "warning: --rate %g bps beyond port %u's link "
			"(%u Mb/s): the port sets the rate\n", o->rate, o->port,
			a->link_mbps);
	return 0;
}

/* Each queue's lcore state; with the GPU, its post times and build
 * latency histogram (microseconds). 0, or -1 out of memory (said). */
int
gputx_txq_setup(struct app *a)
{
	a->tsc_per_us = RTE_MAX(gpuapp_tsc_hz() / 1000000, (uint64_t)1);
	for (uint16_t q = 0; q < a->o.queues; q++) {
		a->txq[q].a = a;
		a->txq[q].q = q;
		if (a->o.mem == MEM_CPU)
			continue;
		a->txq[q].post_tsc = rte_zmalloc("gputx_post_tsc",
			a->o.ring_items * sizeof(uint64_t),
			RTE_CACHE_LINE_SIZE);
		a->txq[q].lat_hist = rte_zmalloc("gputx_lat",
			BUILD_LAT_BUCKETS * sizeof(uint64_t),
			RTE_CACHE_LINE_SIZE);
		a->txq[q].post_first = rte_zmalloc("gputx_post_first",
			a->o.ring_items * sizeof(uint64_t),
			RTE_CACHE_LINE_SIZE);
		if (a->o.build_breakdown)
			a->txq[q].bd_tsc = rte_zmalloc("gputx_bd_tsc",
				3 * GPUTX_BD_LOG * sizeof(uint64_t),
				RTE_CACHE_LINE_SIZE);
		if (a->txq[q].post_tsc == NULL || a->txq[q].lat_hist == NULL ||
				a->txq[q].post_first == NULL ||
				(a->o.build_breakdown && a->txq[q].bd_tsc == NULL)) {
			GPUTX_LOG(ERR, "error: queue %u: out of memory\n", q);
			return -1;
		}
	}
	return 0;
}

void
gputx_txq_release(struct app *a)
{
	for (uint16_t q = 0; q < MAX_QUEUES; q++) {
		rte_free(a->txq[q].post_tsc);
		rte_free(a->txq[q].lat_hist);
		rte_free(a->txq[q].post_first);
		rte_free(a->txq[q].bd_tsc);
	}
	rte_free(a->floor_cycles);
	a->floor_cycles = NULL;
}

/*
 * Post the burst until the port took every packet; stopped half way, the
 * rest is freed and counted as failed, never lost unsaid. The lengths
 * are read before: a frame the port took is the port's, and may already
 * be back in the pool and taken by another lcore.
 */
static void
post(struct txq *T, struct rte_mbuf **m, uint16_t n, uint64_t first)
{
	const uint16_t port = T->a->o.port;
	const uint32_t fixed = T->a->fixed_len;
	uint32_t len[MAX_BURST];
	uint16_t done = 0;

	if (fixed == 0)
		for (uint16_t j = 0; j < n; j++)
			len[j] = m[j]->pkt_len;
	while (done < n) {
		uint16_t k = rte_eth_tx_burst(port, T->q, m + done, n - done);

		if (fixed != 0)
			T->st.bytes += (uint64_t)k * fixed;
		else
			for (uint16_t j = done; j < done + k; j++)
				T->st.bytes += len[j];
		done += k;
		T->st.pkts += k;
		if (done < n) {
			T->st.retries++;
			if (gputx_quit) {
				T->st.failed += n - done;
				rte_pktmbuf_free_bulk(m + done, n - done);
				break;
			}
			rte_pause();
		}
	}
	gputx_streams_count(T, first, done, len);
}

/*
 * n mbufs of the pool, for single-segment frames: 0 or -ENOENT. Not
 * rte_pktmbuf_alloc_bulk: its reset writes each mbuf's second cache line
 * (next, tx_offload), a miss per packet that was the TX lcore's largest
 * cost (perf, --no-build at 64 B). The pool holds only this program's
 * mbufs, which come back through rte_pktmbuf_free or the port's bulk
 * free (next NULL, one segment, refcnt 1: the raw state) and carry no
 * VLAN tags, nor offload flags unless --csum-offload, which sets them on
 * every mbuf; the caller sets the first line's data_off and lengths, in
 * the one pass it makes over the burst.
 */
static inline int
alloc_raw(struct rte_mempool *mp, struct rte_mbuf **m, uint32_t n)
{
	if (rte_mempool_get_bulk(mp, (void **)m, n) != 0)
		return -ENOENT;
#ifdef RTE_LIBRTE_MBUF_DEBUG
	for (uint32_t i = 0; i < n; i++)
		__rte_mbuf_raw_sanity_check(m[i]);
#endif
	return 0;
}

/*
 * Sends the oldest burst the GPU has built, if there is one. 0, or -1
 * when the kernel failed one (said).
 */
static int
send_built(struct txq *T)
{
	struct app *a = T->a;
	struct gpugen_fill *f = T->g->fill;
	struct rte_mbuf **m;
	uint32_t n;
	int rc;

	/*
	 * One built burst a call, so that the lcore alternates: a burst's
	 * mbufs back to its mempool cache, then the next post's taken from
	 * it. Sending every built burst first put several bursts at once
	 * into a cache that holds two, which overflowed to the pool's ring,
	 * shared by every queue of the GPU, and the next posts took them
	 * back from there: the ring was 8.5 % of each TX lcore at 4 queues,
	 * and this made 64 B into GPU memory 1.19 / 1.51 / 1.49 times as
	 * fast on 1 / 2 / 4 queues (doc/perf/tx-lcore-profile).
	 */
	if ((rc = gpugen_fill_collect(f, T->ring, &m, &n)) == 1) {
		/* Bursts come back in post order. */
		const uint64_t now = rte_rdtsc();
		uint64_t i = T->built % a->o.ring_items;

		if (T->bd_tsc != NULL)
			T->bd_tsc[3 * (T->built % GPUTX_BD_LOG) + 2] = now;
		T->built++;
		gpuapp_lat_hist_add(T->lat_hist, BUILD_LAT_BUCKETS,
			(now - T->post_tsc[i]) / a->tsc_per_us);
		post(T, m, (uint16_t)n, T->post_first[i]);
		rc = gpugen_fill_release(f, T->ring);
	}
	if (rc < 0) {
		GPUTX_LOG(ERR, "error: queue %u: GPU build: %s\n", T->q,
			rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * A TX queue's lcore. Bursts of the global packet sequence are dealt out
 * round robin (queue q sends bursts q, q + queues, ...), so every packet
 * is the same whatever the number of queues, and each queue paces its
 * share of the rate. With the GPU, up to --ring-items bursts are being
 * built while earlier ones are sent.
 */
static int
tx_lcore(void *arg)
{
	struct txq *T = arg;
	struct app *a = T->a;
	const struct opts *o = &a->o;
	const uint64_t hz = gpuapp_tsc_hz();
	const double rate = a->rate_units / o->queues;
	const double burst_cost = o->burst * pkt_cost(o, gpugen_max_len(a->gen));
	/* Two bursts of credit at most: a stall is not made up by a flood. */
	const double cap = 2.0 * burst_cost;
	/*
	 * A low rate is one whose burst takes longer than 100 us to earn:
	 * there a burst waits for no more than the credit its first packets
	 * have (1 pps sends one packet a second, not 32 every 32 s, and
	 * nothing at all in a 10 s run), while faster rates keep whole
	 * bursts, which is what keeps them cheap.
	 */
	const int low_rate = rate > 0 && burst_cost / rate > 100e-6;
	/* Locals: the per-packet loop stores through mbuf pointers, after
	 * which the compiler would load these again each packet. */
	const uint32_t fixed = a->fixed_len;
	const int cpu_build = o->mem == MEM_CPU && !o->no_build;
	/* --csum-offload: the same flags for every packet, or per stream. */
	const int ol = a->ol_needed != 0;
	const uint64_t ol_flags = a->ol_flags[0], tx_offload = a->tx_offload[0];
	/* This queue's GPU: its fill (ring T->ring) and its pool. */
	struct gpugen_fill *const fill = T->g->fill;
	struct rte_mempool *const pool = T->g->pool;
	const int raw_post = fill != NULL && !ol;
	struct rte_mbuf *m[MAX_BURST];
	uint64_t k = T->q, last = rte_rdtsc();
	/* The first packet (or burst) goes at once: the bucket starts with
	 * the credit for it, not empty. */
	double tokens = low_rate ? pkt_cost(o, gpugen_max_len(a->gen)) :
		burst_cost;
	uint32_t done = 0;	/* packets of burst k already sent */
	int posting = 1;
	/* When the current wait for the GPU or for mbufs began, or 0: one
	 * clock read where a wait starts and one where it ends. */
	uint64_t full_since = 0, empty_since = 0;

	T->rc = 0;
	for (;;) {
		uint64_t first = k * o->burst + done, tx_ns, gap, post_tsc;
		uint32_t b = o->burst - done;
		double cost = 0;
		int rc;

		if (fill != NULL && send_built(T) != 0) {
			/* The kernel failed a burst: the rest will not come
			 * back either; their mbufs are freed and counted. */
			T->st.failed += gpugen_fill_abandon(fill, T->ring);
			T->rc = -1;
			break;
		}
		if (posting && (gputx_quit || (a->end_tsc &&
				rte_rdtsc() >= a->end_tsc) ||
				(o->count != 0 && first >= o->count)))
			posting = 0;
		if (!posting) {
			if (fill == NULL || gpugen_fill_inflight(fill,
					T->ring) == 0)
				break;
			rte_pause();
			continue;
		}
		if (fill != NULL && gpugen_fill_inflight(fill, T->ring) ==
				o->ring_items) {
			if (full_since == 0)
				full_since = rte_rdtsc();
			rte_pause();
			continue;
		}
		if (full_since != 0) {
			T->st.wait_gpu_tsc += rte_rdtsc() - full_since;
			full_since = 0;
		}
		if (o->count != 0 && o->count - first < b)
			b = (uint32_t)(o->count - first);
		if (rate > 0) {
			uint64_t t;

			for (uint32_t i = 0; i < b; i++)
				cost += pkt_cost(o, a->fixed_len != 0 ? a->fixed_len :
					gpugen_len(a->gen, first + i));
			t = rte_rdtsc();
			/* The end is judged on the clock that pays the credit:
			 * a stall between the check at the top and this read
			 * would otherwise send a packet earned after the end
			 * (11 in a 1 s run at 10 pps). */
			if (a->end_tsc != 0 && t >= a->end_tsc) {
				posting = 0;
				continue;
			}
			tokens += (double)(t - last) * rate / hz;
			last = t;
			if (tokens > cap)
				tokens = cap;
			if (tokens < cost && low_rate) {
				/* The packets the credit pays for; the rest of
				 * burst k follows as credit comes. */
				uint32_t n = 0;
				double c = 0, pc;

				for (; n < b; n++) {
					pc = pkt_cost(o, fixed != 0 ? fixed :
						gpugen_len(a->gen, first + n));
					if (c + pc > tokens)
						break;
					c += pc;
				}
				b = n;
				cost = c;
			}
			if (b == 0 || tokens < cost) {
				rte_pause();
				continue;
			}
			tokens -= cost;
		}
		if (alloc_raw(pool, m, b) != 0) {
			/* All out: the port or the GPU still hold them. */
			if (empty_since == 0)
				empty_since = rte_rdtsc();
			rte_pause();
			continue;
		}
		if (empty_since != 0) {
			T->st.wait_mbuf_tsc += rte_rdtsc() - empty_since;
			empty_since = 0;
		}
		tx_ns = gpuapp_real_ns();
		/*
		 * Each frame its own transmit time: the burst's frames
		 * spread evenly over the time since the queue's previous
		 * burst (whose last frame carried last_tx_ns), the last one
		 * at tx_ns, at most the interval --rate gives a frame apart
		 * (a stall is not spread over the burst). A frame's time is
		 * when its credit came due, and a queue's stamps never go
		 * back (checked by gputx-check). Not forward from tx_ns: a
		 * whole burst leaves at once, its later frames would be
		 * stamped after they arrived. One clock read a burst still:
		 * the GPU build takes the first time and the spacing.
		 */
		gap = 0;
		if (T->st.first_tx_ns == 0) {
			T->st.first_tx_ns = tx_ns;
		} else if (b > 1 && tx_ns > T->st.last_tx_ns) {
			const double most = rate > 0 ? cost * 1e9 / rate / b : 0;

			gap = (tx_ns - T->st.last_tx_ns) / b;
			if (rate > 0 && gap > most)
				gap = (uint64_t)most;
		}
		T->st.last_tx_ns = tx_ns;
		tx_ns -= (b - 1) * gap;
		/* GPU builds without offload flags: the fill readies the
		 * mbufs in the pass it makes to post them. */
		for (uint32_t i = 0; i < b && !raw_post; i++) {
			gpugen_mbuf_ready(m[i], a->gen, fixed, first + i);
			if (ol) {
				/* Every mbuf of this run gets its flags set:
				 * none comes back with another stream's. */
				uint32_t st = a->one_ol ? 0 :
					gpugen_stream_of(a->gen, first + i);

				m[i]->ol_flags = a->one_ol ? ol_flags :
					a->ol_flags[st];
				m[i]->tx_offload = a->one_ol ? tx_offload :
					a->tx_offload[st];
			}
			if (cpu_build)
				gpugen_build_cpu(a->gen, first + i,
					tx_ns + i * gap,
					rte_pktmbuf_mtod(m[i], uint8_t *),
					rte_pktmbuf_tailroom(m[i]) + m[i]->pkt_len,
					NULL, NULL);
		}
		done += b;
		if (done == o->burst || (o->count != 0 &&
				first + b >= o->count)) {
			k += o->queues;
			done = 0;
		}
		if (o->mem == MEM_CPU) {
			post(T, m, (uint16_t)b, first);
			continue;
		}
		T->st.posts++;
		T->st.inflight_sum += gpugen_fill_inflight(fill, T->ring);
		post_tsc = rte_rdtsc();
		T->post_tsc[T->posted % o->ring_items] = post_tsc;
		T->post_first[T->posted % o->ring_items] = first;
		rc = raw_post ? gpugen_fill_post_raw(fill, T->ring, m, b, first,
			tx_ns, gap) : gpugen_fill_post(fill, T->ring, m, b, first,
			tx_ns, gap);
		if (T->bd_tsc != NULL) {
			uint64_t *w = T->bd_tsc + 3 * (T->posted % GPUTX_BD_LOG);

			w[0] = post_tsc;
			w[1] = rte_rdtsc();
		}
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: queue %u: posting a burst to the "
				"GPU: %s\n", T->q, rte_strerror(-rc));
			/* Not posted (-EINVAL): still ours. Posted, its kernel
			 * not launched (-EIO): never coming back. */
			if (rc == -EIO)
				T->st.failed += gpugen_fill_abandon(fill, T->ring);
			else
				rte_pktmbuf_free_bulk(m, b);
			T->rc = -1;
			break;
		}
		T->posted++;
	}
	/* A wait the end of the run cut short counts up to there. */
	if (full_since != 0)
		T->st.wait_gpu_tsc += rte_rdtsc() - full_since;
	if (empty_since != 0)
		T->st.wait_mbuf_tsc += rte_rdtsc() - empty_since;
	return T->rc;
}

/*
 * What the queues have sent so far. Each counter is a naturally aligned
 * 64-bit word its lcore alone writes; a relaxed atomic load reads a
 * whole value, however stale, which is all a progress line or a
 * telemetry query needs (the summary reads them after the lcores end).
 */
void
gputx_sent_so_far(const struct app *a, struct tx_stats *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned int q = 0; q < a->o.queues; q++) {
		const struct tx_stats *s = &a->txq[q].st;

		t->pkts += __atomic_load_n(&s->pkts, __ATOMIC_RELAXED);
		t->bytes += __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
		t->retries += __atomic_load_n(&s->retries, __ATOMIC_RELAXED);
		t->failed += __atomic_load_n(&s->failed, __ATOMIC_RELAXED);
	}
}

/*
 * While the workers send, the main lcore prints a line a second on
 * stderr (stdout keeps the summary): what was sent in that second, in
 * packets and L2 bits (frames with the FCS, as the summary counts).
 */
static void
progress(struct app *a, const unsigned int *lcores, unsigned int n)
{
	const uint64_t hz = gpuapp_tsc_hz();
	uint64_t next = a->tsc_start + hz, prev_tsc = a->tsc_start;
	struct tx_stats prev = { 0 }, now;
	uint64_t prev_s[GPUTX_LINE_STREAMS] = { 0 };
	uint64_t prev_g[MAX_QUEUES] = { 0 };
	char by_stream[256], by_gpu[MAX_QUEUES * 32];

	for (;;) {
		unsigned int running = 0;

		for (unsigned int i = 0; i < n; i++)
			if (rte_eal_get_lcore_state(lcores[i]) == RUNNING)
				running++;
		if (running == 0)
			return;
		rte_delay_us_sleep(20000);
		uint64_t t = rte_rdtsc();
		if (t < next)
			continue;
		double dt = (double)(t - prev_tsc) / hz;

		gputx_sent_so_far(a, &now);
		gputx_streams_line(a, prev_s, dt, by_stream, sizeof(by_stream));
		/* Several GPUs: each one's share of the second. */
		by_gpu[0] = '\0';
		for (unsigned int k = 0, len = 0; a->n_gpus > 1 &&
				k < a->n_gpus && len < sizeof(by_gpu); k++) {
			uint64_t g = gputx_gpu_pkts(a, &a->gpu[k]);

			len += snprintf(by_gpu + len, sizeof(by_gpu) - len,
				"%s GPU %d %.0f pps", k == 0 ? " |" : ",",
				a->gpu[k].id, (double)(g - prev_g[k]) / dt);
			prev_g[k] = g;
		}
		fprintf(stderr, "[%7.1fs] tx %.0f pps %.3f Mbps | retries %"
			PRIu64 " | not sent %" PRIu64 "%s%s\n",
			(double)(t - a->tsc_start) / hz,
			(double)(now.pkts - prev.pkts) / dt,
			gputx_l2_bits(now.bytes - prev.bytes,
				now.pkts - prev.pkts) / dt / 1e6,
			now.retries, now.failed, by_gpu, by_stream);
		prev = now;
		prev_tsc = t;
		next += hz;
	}
}

struct floor_arg {
	struct app *a;
	int rc;
	char err[256];
};

/* On queue 0's lcore: the floor its posts have under them. */
static int
floor_lcore(void *arg)
{
	struct floor_arg *fa = arg;
	struct app *a = fa->a;
	const struct txq *T = &a->txq[0];

	fa->rc = gpugen_fill_floor(T->g->fill, T->ring, a->floor_cycles,
		GPUTX_BD_FLOOR_WARMUP + GPUTX_BD_FLOOR_ROUNDS, &a->floor_in_gpu,
		fa->err, sizeof(fa->err));
	return fa->rc;
}

int
gputx_bd_floor(struct app *a)
{
	struct floor_arg fa = { .a = a };
	unsigned int lc;

	if (!a->o.build_breakdown)
		return 0;
	a->floor_cycles = rte_zmalloc("gputx_floor", sizeof(uint64_t) *
		(GPUTX_BD_FLOOR_WARMUP + GPUTX_BD_FLOOR_ROUNDS), 0);
	if (a->floor_cycles == NULL) {
		GPUTX_LOG(ERR, "error: --build-breakdown: out of memory\n");
		return -1;
	}
	/* Queue 0 runs on the first worker, or here without one
	 * (gputx_run). */
	if (rte_lcore_count() == 1) {
		floor_lcore(&fa);
	} else {
		lc = rte_get_next_lcore(-1, 1, 0);
		if (rte_eal_remote_launch(floor_lcore, &fa, lc) != 0) {
			GPUTX_LOG(ERR, "error: lcore %u: launch failed\n", lc);
			return -1;
		}
		rte_eal_wait_lcore(lc);
	}
	if (fa.rc != 0) {
		GPUTX_LOG(ERR, "error: --build-breakdown: %s\n", fa.err);
		return -1;
	}
	return 0;
}

int
gputx_bd_collect(struct app *a)
{
	struct gpugen_fill_times *t;
	struct gputx_bd_burst *b;
	size_t n = 0;
	int rc = 0;

	if (!a->o.build_breakdown || a->floor_cycles == NULL)
		return 0;
	t = malloc(GPUTX_BD_LOG * sizeof(*t));
	b = malloc((size_t)a->o.queues * GPUTX_BD_LOG * sizeof(*b));
	if (t == NULL || b == NULL) {
		GPUTX_LOG(ERR, "error: --build-breakdown: out of memory\n");
		rc = -1;
		goto out;
	}
	for (uint16_t q = 0; q < a->o.queues; q++) {
		const struct txq *T = &a->txq[q];

		rc = gpugen_fill_times(T->g->fill, T->ring, t, GPUTX_BD_LOG);
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: --build-breakdown: queue %u: the "
				"GPU's times: %s\n", q, rte_strerror(-rc));
			rc = -1;
			goto out;
		}
		for (uint32_t k = 0; k < GPUTX_BD_LOG; k++) {
			const uint64_t s = t[k].seq1 - 1;
			const uint64_t *w = T->bd_tsc + 3 * k;

			/* Both sides keep a burst's times in the slot of its
			 * number: the lcore's are those of s unless a later
			 * burst of the slot was collected. */
			if (t[k].seq1 == 0 || s >= T->built ||
					s + GPUTX_BD_LOG < T->built)
				continue;
			b[n++] = (struct gputx_bd_burst){
				.post = w[0], .posted = w[1], .seen = w[2],
				.g_seen = t[k].seen, .g_loaded = t[k].loaded,
				.g_built = t[k].built, .g_done = t[k].done,
			};
		}
	}
	if (n == 0) {
		GPUTX_LOG(WARNING, "warning: --build-breakdown: no burst was "
			"built\n");
		goto out;
	}
	rc = gputx_bd_compute(b, n, a->floor_cycles + GPUTX_BD_FLOOR_WARMUP,
		GPUTX_BD_FLOOR_ROUNDS, (double)gpuapp_tsc_hz(), &a->bd);
	if (rc != 0) {
		GPUTX_LOG(ERR, "error: --build-breakdown: %s\n", strerror(-rc));
		rc = -1;
		goto out;
	}
	a->bd.floor_in_gpu = a->floor_in_gpu;
	a->bd.per_burst = a->o.launch_per_burst;
	a->bd_ok = 1;
out:
	free(t);
	free(b);
	return rc;
}

/*
 * The queues on worker lcores, or a single one on this (main) lcore when
 * there is no worker. 0, or -1 when a queue failed.
 */
int
gputx_run(struct app *a)
{
	/* Measured here, once, not by the first lcore to pace. */
	const uint64_t hz = gpuapp_tsc_hz();
	unsigned int lc, q = 0, launched[RTE_MAX_LCORE];
	int rc = 0;

	a->tsc_start = rte_rdtsc();
	if (a->o.duration > 0)
		a->end_tsc = a->tsc_start + (uint64_t)(a->o.duration * hz);
	if (rte_lcore_count() == 1) {
		rc = tx_lcore(&a->txq[0]);
	} else {
		RTE_LCORE_FOREACH_WORKER(lc) {
			if (q == a->o.queues)
				break;
			if (rte_eal_remote_launch(tx_lcore, &a->txq[q], lc) != 0) {
				GPUTX_LOG(ERR, "error: lcore %u: launch failed\n", lc);
				gputx_quit = 1;
				rc = -1;
				break;
			}
			launched[q++] = lc;
		}
		if (!a->o.quiet && rc == 0)
			progress(a, launched, q);
		rte_eal_mp_wait_lcore();
	}
	a->tsc_end = rte_rdtsc();
	gputx_streams_so_far(a, a->s_pkts, a->s_bytes);
	for (q = 0; q < a->o.queues; q++) {
		const struct tx_stats *s = &a->txq[q].st;

		if (a->txq[q].rc != 0)
			rc = -1;
		a->st.pkts += s->pkts;
		a->st.bytes += s->bytes;
		a->st.retries += s->retries;
		a->st.failed += s->failed;
		a->st.wait_gpu_tsc += s->wait_gpu_tsc;
		a->st.wait_mbuf_tsc += s->wait_mbuf_tsc;
		a->st.posts += s->posts;
		a->st.inflight_sum += s->inflight_sum;
		if (s->first_tx_ns != 0 && (a->st.first_tx_ns == 0 ||
				s->first_tx_ns < a->st.first_tx_ns))
			a->st.first_tx_ns = s->first_tx_ns;
		if (s->last_tx_ns > a->st.last_tx_ns)
			a->st.last_tx_ns = s->last_tx_ns;
	}
	return rc;
}
