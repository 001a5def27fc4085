/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes of dpdk-gpu-rx: the RX lcores' hot loop on the gpudev rings
 * (set up by gpu_setup.c, buffers from gpu_mem.c).
 *
 * Per RX queue, a rte_gpu_comm_list of --ring-items items used as a ring
 * of the ring library (lib/gpucomm, gpucomm_ring.h): the lcore fills the
 * head item and publishes it READY, the kernel (per queue one dispatcher
 * and up to 64 worker blocks, see gpu_body.cuh) processes items,
 * several at once, and marks them DONE, the lcore collects the tail item
 * once DONE (so the output keeps the RX order), writes the captured
 * bytes, frees the mbufs (--mem staged: freed once copied, at publish)
 * and releases the item to FREE.
 *
 * Per-item inputs (struct gpurx_item_in: a timestamp, and flags saying
 * which per-packet side data, timestamps or wire lengths, the item has)
 * and the results (an item summary of matches and malformed kinds, the
 * verdicts of matched packets, captured bytes) live in mapped pinned memory
 * described by struct gpurx_gq. An item holds at most --burst
 * packets and at most item_bytes of packet data, so every packet has
 * reserved room in the capture arena: a burst that does not fit spills
 * into the next item, and only a ring with no FREE item drops packets.
 *
 * Items are filled by hand in one pass, then published by the library
 * with the ordering of rte_gpu_comm_populate_list_pkts(): entries and
 * num_pkts first, then a CPU write barrier and, packets in GPU memory,
 * rte_gpu_wmb(), then the READY store. Chained mbufs (which populate refuses), and mbufs whose
 * bytes the GPU cannot read where they are (foreign: external buffers or
 * indirect mbufs outside registered memory), are copied into the item's
 * bounce buffer on the way. With --split the entry points at the header
 * buffer (host memory) and the item's split side data at the rest (GPU
 * memory): the kernel reads both where the port wrote them.
 *
 * The main lcore watches the kernel and each queue's progress
 * (gpurx_gpu_watch, liveness.h): a dead kernel or a stalled queue stops
 * the run at once rather than turning every later burst into "ring full".
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_memory.h>
#include <rte_prefetch.h>

#include "flow_export.h"
#include "gpu_path.h"
#include "gpu_priv.h"
#include "gpuapp_lat_hist.h"
#include "log.h"
#include "stamps.h"

_Static_assert(GPURX_MAX_BURST <= RTE_GPU_COMM_LIST_PKTS_MAX, "burst");
_Static_assert(GPURX_SUM_MATCH_WORDS * 32 == GPURX_MAX_BURST, "match bits");
_Static_assert(GPURX_MAL_COUNT <= GPURX_SUM_MAL, "malformed kinds");

/* Copy a chain segment by segment to device memory (--mem gpu). */
static int
chain_to_device(const struct rte_mbuf *m, uint8_t *dst, uint32_t cap,
		void *stream)
{
	uint32_t pos = 0;

	for (; m != NULL && pos < cap; m = m->next) {
		uint32_t len = RTE_MIN((uint32_t)m->data_len, cap - pos);
		int rc = gpucuda_copy_async(dst + pos,
			rte_pktmbuf_mtod(m, const void *), len, stream);

		if (rc != 0)
			return gpurx_gpu_cuda_fail("chained packet copy", rc);
		pos += len;
	}
	return 0;
}

/* An mbuf with fewer bytes in its segments than its pkt_len says. */
static int
pkt_short(uint16_t q, const struct rte_mbuf *m, uint32_t cap)
{
	GPURX_LOG(ERR, "error: queue %u: mbuf of pkt_len %u, %u segment(s), "
		"holds fewer than %u bytes\n", q, rte_pktmbuf_pkt_len(m),
		m->nb_segs, cap);
	return -1;
}

/*
 * The mbufs of a collected item (--mem staged: of one just published)
 * back to their pool, without sending the lcore's mempool cache down the
 * pool's shared ring. A put that would take the cache past its flush
 * threshold moves the whole cache into the ring, and a burst that finds
 * it empty refills it from the ring: from the far end of a ring as long
 * as the idle pool, mbufs that another lcore, or this one long ago, last
 * wrote, which the PMD then misses on in the next RX burst. The
 * source's free-after-RX never leaves its cache; GPU items do when they
 * come back several at once (the kernel finished later items while the
 * tail was still in flight) or in-flight packets swing by more than a
 * cache. Such a bunch waits in the queue's stash, and stash_to_cache()
 * hands it to the cache before each RX burst as far as the threshold
 * allows, so that the burst allocates them from the cache. plain: the
 * pool all of m are plain mbufs of (gpurx_mbufs_free), else NULL.
 */
static inline void
mbufs_release(struct gpu_queue *Q, struct rte_mbuf **m, uint32_t n,
		struct rte_mempool *plain)
{
	struct rte_mempool_cache *c;

	if (plain == NULL) {
		rte_pktmbuf_free_bulk(m, n);
		return;
	}
	c = rte_mempool_default_cache(plain, rte_lcore_id());
	if (likely(Q->stash_n == 0) &&
			(c == NULL || c->len + n <= c->flushthresh)) {
		rte_mempool_generic_put(plain, (void *const *)m, n, c);
		return;
	}
	if (Q->stash_n != 0 && (plain != Q->stash_pool ||
			Q->stash_n + n > GPURX_STASH_MBUFS)) {
		/* Another pool's, or the stash is full: the older ones go
		 * back (a flush, as without the stash). */
		rte_mempool_put_bulk(Q->stash_pool, (void *const *)Q->stash,
			Q->stash_n);
		Q->stash_n = 0;
	}
	if (c == NULL || n > GPURX_STASH_MBUFS) {
		rte_mempool_generic_put(plain, (void *const *)m, n, c);
		return;
	}
	memcpy(Q->stash + Q->stash_n, m, n * sizeof(*m));
	Q->stash_n += n;
	Q->stash_pool = plain;
}

/* The mbufs item it holds in its list's mbufs[]: its packets', but
 * with --mem staged, whose mbufs went back at publish (fill_item_with). */
static inline uint16_t
item_held(const struct gpurx_app *a, const struct gpu_item *it)
{
	return a->mem == GPURX_MEM_STAGED ? 0 : it->n;
}

/*
 * --mem staged: a packet's bytes into the staging buffer as its whole
 * arena span (gpurx_arena_span), in fixed-size moves: the kernel pulls
 * whole spans anyway, and the up to 15 bytes past the packet are its
 * mbuf's own room (the caller checked that they lie in its buffer).
 * rte_pktmbuf_read() and a length-generic copy per packet cost more than
 * the copy of a small packet itself.
 */
static __rte_always_inline void
stage_span(uint8_t *dst, const uint8_t *src, uint32_t span)
{
	uint32_t j = 0;

	for (; j + 64 <= span; j += 64)
		rte_mov64(dst + j, src + j);
	for (; j < span; j += 16)
		rte_mov16(dst + j, src + j);
}

/* Packets ahead whose bytes the staged loop asks for while copying. */
#define STAGE_PREFETCH 4

/*
 * Whether packet m (wire bytes) takes fill_item_with()'s short path:
 * plain, whole in its one segment, and (in_place) readable by the GPU
 * where it lies or (staged) its whole span inside its buffer: what the
 * general path would find for it, cap = wire (not short, not truncated),
 * with nothing to count.
 */
static __rte_always_inline int
pkt_fast(const struct rte_mbuf *m, const struct rte_mempool *pool,
		uint32_t wire, const int staged)
{
	return likely(gpurx_mbuf_plain(m, pool)) &&
		likely(m->data_len >= wire) &&
		likely(wire <= GPURX_SCRATCH_BYTES) &&
		(!staged || likely((uint32_t)m->data_off +
			gpurx_arena_span(wire) <= m->buf_len));
}

/* The entry address of short-path packet k of pkts[0..max): its bytes
 * where they lie, or (staged) copied at stage + off, the GPU's copy at
 * stage_dev + off. */
static __rte_always_inline uintptr_t
pkt_fast_addr(struct rte_mbuf **pkts, uint32_t k, uint32_t max,
		uint8_t *stage, uint8_t *stage_dev, uint32_t off, uint32_t span,
		const int staged)
{
	if (!staged)
		return rte_pktmbuf_mtod(pkts[k], uintptr_t);
	if (k + STAGE_PREFETCH < max)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[k + STAGE_PREFETCH],
			const void *));
	stage_span(stage + off, rte_pktmbuf_mtod(pkts[k], const uint8_t *),
		span);
	return (uintptr_t)(stage_dev + off);
}

/*
 * Fill ring item `head` from pkts[0..n) and publish it. Returns how many
 * packets it took (the rest goes to the next item), or -1 on error.
 * split: a->split != 0; staged: a->mem == GPURX_MEM_STAGED (never with
 * split); constants in each of fill_item()'s three copies, so that each
 * mode's loop carries only its own work.
 */
static __rte_always_inline int
fill_item_with(struct gpurx_app *a, uint16_t q, struct rte_mbuf **pkts,
		uint16_t n, uint64_t rx_ns, const int split, const int staged)
{
	struct gpurx_gpu *g = gpurx_queue_gpu(a, q);
	struct gpu_queue *Q = &g->q[a->q_ring[q]];
	struct gpurx_gq *gq = &g->gq[a->q_ring[q]];
	struct gpurx_qstats *qs = &a->qs[q];
	uint32_t idx = Q->ring.head, base = idx * gq->burst, off = 0, k;
	struct rte_gpu_comm_list *ci = &Q->list[idx];
	size_t ioff = (size_t)idx * gq->item_bytes;
	struct rte_mempool *pool = pkts[0]->pool;
	/* Loop invariants in locals: the loop's stores into the item's
	 * arrays could alias these fields, and the compiler would load
	 * them again for every packet. */
	const enum gpurx_mem_mode mem = staged ? GPURX_MEM_STAGED : a->mem;
	const uint32_t item_bytes = gq->item_bytes;
	const uint32_t max = RTE_MIN((uint32_t)n, gq->burst);
	const int pmd_ts = a->ts_off >= 0;
	uint64_t *ts = gq->ts + base;
	uint32_t *wirelen = gq->wirelen + base;
	/* Per-packet side data only where the item needs it (struct
	 * gpurx_item_in says why). */
	uint32_t in_flags = pmd_ts ? GPURX_IN_TS : 0;
	struct gpurx_split_pkt *side = split ? gq->split + base : NULL;
	struct rte_gpu_comm_pkt *entry = ci->pkt_list;
	/* The entries' lap tag (gpucomm_ring_put_pkt; publish stores entry
	 * 0's count). A fill that fails stops the program: nothing is
	 * filled twice in a lap. */
	const uint64_t tag = gpucomm_ring_tag_word(&Q->ring, 0);
	struct rte_mbuf **held = ci->mbufs;
	const struct gpurx_readable *rd = &g->rd;
	uint64_t bytes = 0;
	uint32_t chained = 0, truncated = 0, short_chains = 0, foreign = 0;
	int copies = 0, plain = 1, rc;
	/*
	 * The GPU reads a plain mbuf of the burst's pool where it lies when
	 * it reads that pool (gpurx_mbuf_gpu_readable: direct, not external,
	 * a known pool), found once per item rather than per packet; such an
	 * mbuf, whole in its segment, takes the short path below, with
	 * nothing to count. Staged, such an mbuf takes it too: its span is
	 * copied there.
	 */
	const int in_place = staged || (!split &&
		gpurx_readable_has_pool(rd, pool));
	uint8_t *const stage = staged ? Q->host_buf + ioff : NULL;
	uint8_t *const stage_dev = staged ? Q->dev_buf + ioff : NULL;

	/*
	 * One pass per packet fills the kernel's inputs and the comm list
	 * entry together (rte_gpu_comm_populate_list_pkts would walk the
	 * mbufs a second time, and cannot point an entry at a bounce copy).
	 *
	 * First the leading run of short-path packets (pkt_fast), usually
	 * the whole burst, in a loop with nothing else live: the general
	 * loop's counters and branches, its variables spilled to the stack,
	 * cost a 64-byte packet about as much again (perf annotate,
	 * bench/rx-lcore-cost.sh). It stops at the first other packet, or
	 * at one that does not fit (which the general loop finds again and
	 * stops at); the general loop goes on from there. No wire lengths
	 * yet: only the general path cuts a packet short.
	 */
	k = 0;
	if (likely(in_place)) {
		for (; k < max; k++) {
			struct rte_mbuf *m = pkts[k];
			const uint32_t wire = rte_pktmbuf_pkt_len(m);
			const uint32_t need = gpurx_arena_span(wire);

			if (unlikely(!pkt_fast(m, pool, wire, staged)) ||
					unlikely(need > item_bytes - off))
				break;
			if (pmd_ts)
				ts[k] = gpurx_pkt_ts(a, m, rx_ns);
			bytes += wire;
			gpucomm_ring_put_pkt(&entry[k], pkt_fast_addr(pkts, k,
				max, stage, stage_dev, off, need, staged), wire,
				tag);
			if (!staged)
				held[k] = m;
			off += need;
		}
	}
	for (; k < max; k++) {
		struct rte_mbuf *m = pkts[k];
		uint32_t wire = rte_pktmbuf_pkt_len(m);
		const int fast = likely(in_place) &&
			pkt_fast(m, pool, wire, staged);
		int short_chain = 0;
		uint32_t cap = fast ? wire : gpurx_pkt_linear_len(m, &short_chain);
		uint32_t need = gpurx_arena_span(cap);
		uintptr_t addr;

		if (need > item_bytes - off)
			break;
		if (pmd_ts)
			ts[k] = gpurx_pkt_ts(a, m, rx_ns);
		bytes += wire;
		if (unlikely(!fast)) {
			plain &= gpurx_mbuf_plain(m, pool);
			chained += m->nb_segs > 1;
			short_chains += short_chain;
			truncated += !short_chain && cap < wire;
			if (cap < wire && !(in_flags & GPURX_IN_WIRE)) {
				/* The item's first packet cut short: wire
				 * lengths per packet from here on, the
				 * earlier packets' being their sizes. */
				for (uint32_t j = 0; j < k; j++)
					wirelen[j] = (uint32_t)entry[j].size;
				in_flags |= GPURX_IN_WIRE;
			}
		}
		if (unlikely(in_flags & GPURX_IN_WIRE))
			wirelen[k] = wire;
		if (likely(fast)) {
			addr = pkt_fast_addr(pkts, k, max, stage, stage_dev,
				off, need, staged);
		} else if (mem == GPURX_MEM_STAGED) {
			if (gpurx_pkt_copy(m, cap, Q->host_buf + ioff + off) != 0)
				return pkt_short(q, m, cap);
			addr = (uintptr_t)(Q->dev_buf + ioff + off);
		} else if (split) {
			/* The header buffer where the port wrote it; the rest
			 * in GPU memory where it lies, or gathered there
			 * (GPU memory to GPU memory). */
			enum gpurx_split_how how = gpurx_split_place(rd, m, cap,
				(uintptr_t)g->ext, g->ext_len, &side[k]);
			uint8_t *dst = Q->dev_buf + ioff + off;

			addr = rte_pktmbuf_mtod(m, uintptr_t);
			if (unlikely(how == GPURX_SPLIT_GATHER)) {
				if (chain_to_device(m->next, dst,
						cap - side[k].len0, Q->stream) != 0)
					return -1;
				side[k].tail = (uintptr_t)dst;
				copies = 1;
			} else if (unlikely(how == GPURX_SPLIT_COPY)) {
				foreign += m->nb_segs == 1;
				if (chain_to_device(m, dst, cap, Q->stream) != 0)
					return -1;
				addr = (uintptr_t)dst;
				copies = 1;
			}
		} else if (likely(m->nb_segs == 1) &&
				likely(gpurx_mbuf_gpu_readable(rd, m, cap))) {
			addr = rte_pktmbuf_mtod(m, uintptr_t);
		} else if (mem == GPURX_MEM_HOST_MAPPED) {
			/* A chain, or bytes outside registered memory (an
			 * external buffer or indirect mbuf of the PMD's, a
			 * pool we did not register): the bounce buffer. */
			foreign += m->nb_segs == 1;
			if (gpurx_pkt_copy(m, cap, Q->host_buf + ioff + off) != 0)
				return pkt_short(q, m, cap);
			addr = (uintptr_t)(Q->host_buf + ioff + off);
		} else {
			/* A chain, or bytes outside the GPU pool: copied into
			 * device memory by the stream. */
			foreign += m->nb_segs == 1;
			if (chain_to_device(m, Q->dev_buf + ioff + off, cap,
					Q->stream) != 0)
				return -1;
			addr = (uintptr_t)(Q->dev_buf + ioff + off);
			copies = 1;
		}
		gpucomm_ring_put_pkt(&entry[k], addr, cap, tag);
		if (!staged)
			held[k] = m;
		off += need;
	}
	if (unlikely(chained != 0))
		GPURX_STAT_ADD(qs, chained, chained);
	if (unlikely(truncated != 0))
		GPURX_STAT_ADD(qs, truncated, truncated);
	if (unlikely(short_chains != 0))
		GPURX_STAT_ADD(qs, short_chain, short_chains);
	if (unlikely(foreign != 0))
		GPURX_STAT_ADD(qs, foreign, foreign);
	if (k == 0)
		return -1;	/* cannot happen: see ITEM_BYTES_MIN */
	gq->in[idx].ts = rx_ns;
	gq->in[idx].flags = in_flags;
	/* staged: the kernel pulls the off bytes copied above into GPU
	 * memory itself (struct gpurx_gq, pull_src): no CUDA call here. */
	gq->in[idx].pull = mem == GPURX_MEM_STAGED ? off : 0;
	/* Tagged: the same words in the item's side slots, which the
	 * workers load with their poll (gpurx_in_side1). Every publish
	 * writes both, once: a failed publish ends the run (no retry). */
	if (Q->ring.side) {
		gpucomm_ring_set_side(&Q->ring, 0, rx_ns);
		gpucomm_ring_set_side(&Q->ring, 1,
			gpurx_in_side1(in_flags, gq->in[idx].pull));
	}
	Q->items[idx].n = (uint16_t)k;
	Q->items[idx].bytes = bytes;
	Q->items[idx].plain_pool = plain ? pool : NULL;
	/*
	 * Count, then rte_wmb: entries, count, bounce and staged bytes and
	 * side data are globally visible before READY (rte_wmb also drains
	 * memcpy's streaming stores); with packets in GPU memory,
	 * rte_gpu_wmb() orders the NIC's writes there the same way (the ring
	 * was set up with GPUCOMM_RING_GPU_WMB only then:
	 * gpurx_mem_needs_gpu_wmb; a GPU that cannot was refused at
	 * start-up). Then READY.
	 *
	 * With a copy on the stream (bytes gathered into GPU memory, --mem
	 * gpu) and few queues (GPURX_STREAM_READY_QUEUES_MAX says why),
	 * READY is the stream's to store, after the copy: the lcore goes on
	 * receiving instead of waiting for it. t_ready below is then when the
	 * copy was queued.
	 */
	if (copies && g->nq <= GPURX_STREAM_READY_QUEUES_MAX) {
		rc = gpucomm_ring_publish_on_stream(&Q->ring, k, Q->stream);
	} else {
		/* The kernel may see READY as soon as it is stored. */
		if (copies && (rc = gpucuda_stream_sync(Q->stream)) != 0)
			return gpurx_gpu_cuda_fail("staged copy wait", rc);
		rc = gpucomm_ring_publish(&Q->ring, k);
	}
	if (rc != 0) {
		GPURX_LOG(ERR, "error: queue %u: ring item publish (rte_gpu_wmb, "
			"READY store): %s\n", q, rte_strerror(-rc));
		return -1;
	}
	Q->items[idx].t_ready = rte_get_tsc_cycles();
	GPURX_STAT_ADD(&Q->live, published, 1);
	GPURX_STAT_ADD(&Q->live, inflight_pkts, k);
	/*
	 * staged: the GPU reads only the copies, and nothing after this
	 * reads the mbufs (collect_item captures from the arena, the rest
	 * from the item's results), so they go back now, while the lcore's
	 * mempool cache still has the room the RX burst took out of it: the
	 * next burst reuses them warm, as the bare RX loop does, and no
	 * mbuf of the queue waits on the GPU. Not before the publish: on an
	 * error the caller frees pkts[0..n).
	 */
	if (staged)
		mbufs_release(Q, pkts, k, plain ? pool : NULL);
	return (int)k;
}

static int
fill_item(struct gpurx_app *a, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
		uint64_t rx_ns)
{
	if (a->split != 0)
		return fill_item_with(a, q, pkts, n, rx_ns, 1, 0);
	if (a->mem == GPURX_MEM_STAGED)
		return fill_item_with(a, q, pkts, n, rx_ns, 0, 1);
	return fill_item_with(a, q, pkts, n, rx_ns, 0, 0);
}

/*
 * --launch-per-burst: the kernel for the item just published, waited for.
 * On error the item stays in flight (drain_queue frees its mbufs).
 */
static int
launch_item(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = gpurx_queue_gpu(a, q);
	struct gpu_queue *Q = &g->q[a->q_ring[q]];
	const uint32_t n = Q->ring.n_items;
	int rc;

	rc = gpurx_cuda_launch_item(&g->ck.kp, &g->kp, a->q_ring[q],
		Q->ring.head == 0 ? n - 1 : Q->ring.head - 1,
		Q->ring.published - 1, Q->stream);
	if (rc == 0)
		rc = gpucuda_stream_sync(Q->stream);
	if (rc != 0) {
		/* No kernel will finish the item: drain does not wait. */
		g->dead = 1;
		GPURX_LOG(ERR, "error: queue %u: per-burst kernel on GPU %d: "
			"%s\n", q, g->id, gpucuda_strerror(rc));
		return -1;
	}
	return 0;
}

/* The stash (mbufs_release) into this lcore's mempool cache up to its
 * flush threshold, the latest collected first. all: every one, past the
 * threshold too (the lcore ends). */
static inline void
stash_to_cache(struct gpu_queue *Q, int all)
{
	struct rte_mempool_cache *c;
	uint32_t k;

	if (likely(Q->stash_n == 0))
		return;
	c = rte_mempool_default_cache(Q->stash_pool, rte_lcore_id());
	k = Q->stash_n;
	if (!all && c != NULL)
		k = c->len >= c->flushthresh ? 0 :
			RTE_MIN(k, c->flushthresh - c->len);
	if (k == 0)
		return;
	Q->stash_n -= k;
	rte_mempool_generic_put(Q->stash_pool,
		(void *const *)(Q->stash + Q->stash_n), k, c);
}

/*
 * --stamps: the stamps the kernel read of the matched packets of word w
 * of an item (bits: those counted), in RX order, each with the RX time
 * the lcore gave the packet: the accounting --cpu does, on the lcore that
 * owns queue q's table.
 */
static void
item_stamps(struct gpurx_app *a, uint16_t q, const struct gpurx_gq *gq,
		const struct gpurx_item_in *in, uint32_t base, uint32_t w,
		uint32_t bits)
{
	for (; bits != 0; bits &= bits - 1) {
		uint32_t at = base + w * 32 + (uint32_t)__builtin_ctz(bits);
		const volatile struct gpurx_stamp_out *o = &gq->stamp[at];
		uint64_t ts = gpurx_in_ts(in->flags, in->ts, gq->ts, at);
		struct gpugen_stamp st;

		if (o->found == 0) {
			gpurx_stamps_add(a->stamps, q, NULL, ts);
			continue;
		}
		st.stream = o->stream;
		st.seq = o->seq;
		st.tx_ns = o->tx_ns;
		gpurx_stamps_add(a->stamps, q, &st, ts);
	}
}

/* Collect the tail item if DONE. Returns 1 collected, 0 not yet, -1
 * error. */
static int
collect_item(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = gpurx_queue_gpu(a, q);
	struct gpu_queue *Q = &g->q[a->q_ring[q]];
	struct gpurx_gq *gq = &g->gq[a->q_ring[q]];
	struct gpurx_qstats *qs = &a->qs[q];
	uint32_t idx = Q->ring.tail, base = idx * gq->burst;
	/* The item collect returns, when it does. */
	struct rte_gpu_comm_list *ci = &Q->list[idx];
	struct gpu_item *it = &Q->items[idx];
	const uint8_t *arena = gq->arena + (size_t)idx * gq->item_bytes;
	const struct gpurx_split_pkt *side = gq->split;
	const struct gpurx_item_in *in = &gq->in[idx];
	int rc;

	/* DONE (ERROR: -EIO), then the read barrier pairing with the
	 * kernel's release of DONE: the results are read after it. */
	rc = gpucomm_ring_collect(&Q->ring, &ci);
	if (rc <= 0)
		return rc < 0 ? -1 : 0;
	/* Items are collected in RX order: every packet up to this one's
	 * last is in the flow table. */
	gpurx_flow_note(q, gpurx_in_ts(in->flags, in->ts, gq->ts,
		base + it->n - 1));
	if (Q->lat_hist != NULL)
		gpuapp_lat_hist_add(Q->lat_hist, LAT_BUCKETS,
			(rte_get_tsc_cycles() - it->t_ready) * 1000000 /
			a->clk.hz);
	{
		/* Counted here, published once per item: the stats are
		 * read by other threads, so each update is an atomic store
		 * the compiler cannot merge. */
		const struct gpurx_item_sum *sum = &gq->sum[idx];
		uint64_t matched = 0, from_hdr = 0;
		/* Arena offset of packet `at` (the spans before it). */
		uint32_t at = 0, off = 0;

		/* The GPU's writes left these lines out of the CPU caches:
		 * ask for both at once rather than miss on each in turn. */
		rte_prefetch0(sum->match);
		rte_prefetch0(sum->mal);
		for (uint32_t w = 0; w * 32 < it->n; w++) {
			uint32_t bits = gpurx_sum_match_word(sum, w, it->n);
			uint32_t k = (uint32_t)__builtin_popcount(bits);
			uint32_t take = gpurx_take_matches(a, k);

			matched += k;
			/* Past -c: the item was classified whole on the GPU
			 * (counted), its later matches are not captured. */
			for (; take < k; k--)
				bits &= ~(UINT32_C(1) << (31 - __builtin_clz(bits)));
			if (unlikely(a->stamps != NULL))
				item_stamps(a, q, gq, in, base, w, bits);
			for (; a->cap != NULL && bits != 0; bits &= bits - 1) {
				uint32_t i = w * 32 + (uint32_t)__builtin_ctz(bits);
				uint32_t v = RTE_GPU_VOLATILE(gq->verdict[base + i]);
				const uint32_t size = (uint32_t)ci->pkt_list[i].size;
				uint32_t cap = size;
				const uint8_t *src;
				int hdr = 0;

				for (; at < i; at++)
					off += gpurx_arena_span((uint32_t)
						ci->pkt_list[at].size);
				src = arena + off;

				/* Counted by the writer (captured or dropped). */
				cap = RTE_MIN(cap, RTE_MIN(v, a->opt.snaplen));
				/* --split: a capture within the header buffer
				 * is written from it (the kernel copied none). */
				if (unlikely(side != NULL) && side[base + i].host &&
						cap <= side[base + i].len0) {
					src = (const uint8_t *)(uintptr_t)
						ci->pkt_list[i].addr;
					hdr = 1;
				}
				if (gpurx_capture_write(a->cap, q, src, cap,
						gpurx_in_wirelen(in->flags,
							gq->wirelen, base + i, size),
						gpurx_in_ts(in->flags, in->ts,
							gq->ts, base + i)) == 0)
					from_hdr += hdr;
			}
		}
		GPURX_STAT_ADD(qs, rx_pkts, it->n);
		GPURX_STAT_ADD(qs, rx_bytes, it->bytes);
		GPURX_STAT_ADD(qs, matched, matched);
		if (from_hdr != 0)
			GPURX_STAT_ADD(qs, cap_from_hdr, from_hdr);
		for (uint32_t m = GPURX_MAL_NONE + 1; m < GPURX_MAL_COUNT; m++) {
			uint32_t c = RTE_GPU_VOLATILE(sum->mal[m]);

			if (c != 0)
				GPURX_STAT_ADD(qs, malformed[m], c);
		}
	}
	/* Busy share of the queue's blocks (a sum over all of them): every
	 * 64 items is often enough for a per-second report. */
	if ((++Q->collected & 63) == 0 || a->stop) {
		uint64_t busy = 0;

		for (uint32_t b = 0; b < GPURX_BLOCKS_PER_QUEUE_MAX; b++)
			busy += RTE_GPU_VOLATILE(gq->busy_ns[b]);
		__atomic_store_n(&qs->gpu_busy_ns, busy / g->ck.kp.bpq,
			__ATOMIC_RELAXED);
	}
	if (item_held(a, it) != 0)
		mbufs_release(Q, ci->mbufs, item_held(a, it), it->plain_pool);
	GPURX_STAT_ADD(&Q->live, collected, 1);
	GPURX_STAT_ADD(&Q->live, inflight_pkts, -(uint64_t)it->n);
	it->n = 0;
	/* Back to FREE, count 0, tail on (no per-entry cleanup: the next
	 * fill overwrites what the kernel reads). */
	rc = gpucomm_ring_release(&Q->ring);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: queue %u: rte_gpu_comm_set_status: %s\n",
			q, rte_strerror(-rc));
		return -1;
	}
	return 1;
}

/*
 * Wait (bounded) for every published item of queue q to come back; not
 * at all once the kernel is dead, past the items it finished. What never
 * comes back is freed and counted lost.
 */
static int
drain_queue(struct gpurx_app *a, uint16_t q)
{
	struct gpurx_gpu *g = gpurx_queue_gpu(a, q);
	struct gpu_queue *Q = &g->q[a->q_ring[q]];
	uint64_t deadline = rte_get_tsc_cycles() +
		DRAIN_TIMEOUT_S * a->clk.hz;
	uint64_t lost = 0;
	uint32_t items;
	int rc;

	while (gpucomm_ring_inflight(&Q->ring) > 0) {
		rc = collect_item(a, q);
		if (rc < 0 || (rc == 0 && (g->dead ||
				rte_get_tsc_cycles() >= deadline)))
			break;
	}
	items = gpucomm_ring_inflight(&Q->ring);
	if (items == 0)
		return 0;
	for (uint32_t i = 0; i < items; i++) {
		struct rte_gpu_comm_list *ci = gpucomm_ring_inflight_item(&Q->ring, i);
		struct gpu_item *it = &Q->items[ci - Q->list];

		rte_pktmbuf_free_bulk(ci->mbufs, item_held(a, it));
		lost += it->n;
		it->n = 0;
	}
	gpucomm_ring_abandon(&Q->ring);
	GPURX_STAT_ADD(&a->qs[q], gpu_lost, lost);
	__atomic_store_n(&Q->live.inflight_pkts, 0, __ATOMIC_RELAXED);
	GPURX_LOG(ERR, "error: queue %u: %u ring items, %" PRIu64 " packets, "
		"never came back from GPU %d (%s): mbufs freed, packets counted "
		"lost\n", q, items, lost, g->id, g->dead ? "the kernel is dead" :
		"not DONE within " RTE_STR(DRAIN_TIMEOUT_S) " s");
	return -1;
}

/*
 * --backpressure: waits until the GPU hands an item back (1), the
 * application stops (0) or the GPU has not answered for 5 s (-1).
 */
static int
wait_item(struct gpurx_app *a, uint16_t q)
{
	const uint64_t limit = rte_get_tsc_cycles() + 5 * a->clk.hz;
	int rc;

	while (!a->stop) {
		rc = collect_item(a, q);
		if (rc != 0)
			return rc;
		if (rte_get_tsc_cycles() > limit) {
			GPURX_LOG(ERR, "error: queue %u: GPU %d returned no ring "
				"item for 5 s\n", q, gpurx_queue_gpu(a, q)->id);
			return -1;
		}
		rte_pause();
	}
	return 0;
}

/*
 * The head item's entries and mbuf pointers asked for, for writing,
 * before the RX burst that fills them. The kernel read the entries last
 * (over PCIe, or the stand-in's thread on another core) and the lcore
 * wrote both a whole ring ago, so their lines are reads for ownership or
 * misses; asked for here they come while the PMD fills the burst, rather
 * than in the fill loop, where the stores wait on them a few lines at a
 * time. A hint only: nothing is stored, no ordering changes (and a
 * no-op on write-combined GPU memory). Not for an item in flight (the
 * ring full): the kernel may be reading it.
 */
static inline void
prefetch_head(struct gpu_queue *Q, uint32_t burst)
{
	struct rte_gpu_comm_list *ci = gpucomm_ring_next(&Q->ring);
	const char *e, *m;

	if (ci == NULL)
		return;
	e = (const char *)ci->pkt_list;
	m = (const char *)ci->mbufs;
	for (uint32_t o = 0; o < burst * sizeof(*ci->pkt_list);
			o += RTE_CACHE_LINE_SIZE)
		rte_prefetch0_write(e + o);
	for (uint32_t o = 0; o < burst * sizeof(*ci->mbufs);
			o += RTE_CACHE_LINE_SIZE)
		rte_prefetch0_write(m + o);
}

/*
 * The oldest item in flight's status word and summary, asked for before
 * the burst is filled: the GPU's DONE and summary writes left them out of
 * the CPU caches, and the next collect reads them first thing, one after
 * the other. Fetched now, they arrive during the fill; should DONE land
 * after, the collect only misses as it would have. A hint only: nothing
 * is read here, no ordering changes (collect's load and rte_rmb do).
 */
static inline void
prefetch_tail(const struct gpu_queue *Q, const struct gpurx_gq *gq)
{
	const struct gpucomm_ring *r = &Q->ring;

	if (r->inflight == 0 || r->tail_done)
		return;
	rte_prefetch0(r->list[r->tail].status_h);
	rte_prefetch0(gq->sum + r->tail);
}

int
gpurx_rx_gpu_lcore(void *arg)
{
	struct gpurx_app *a = &gpurx_app;
	uint16_t q = (uint16_t)(uintptr_t)arg;
	struct gpu_queue *Q = &gpurx_queue_gpu(a, q)->q[a->q_ring[q]];
	struct gpurx_qstats *qs = &a->qs[q];
	const uint16_t port = a->q_port[q], qid = a->q_qid[q];
	struct rte_mbuf *pkts[GPURX_MAX_BURST];
	const struct gpurx_gq *gq = &gpurx_queue_gpu(a, q)->gq[a->q_ring[q]];
	/* Entries a burst fills in the head item at most. */
	const uint32_t fill_max = RTE_MIN((uint32_t)a->opt.burst, gq->burst);
	int status = 0;

	/* This lcore's copies and launches go to its queue's GPU. */
	if (gpurx_gpu_use(gpurx_queue_gpu(a, q)) != 0) {
		a->stop = 1;
		return -1;
	}

	while (!a->stop) {
		uint64_t rx_ns;
		uint16_t n, take, i = 0;
		int rc;

		while ((rc = collect_item(a, q)) == 1)
			;
		if (rc < 0) {
			status = -1;
			break;
		}
		if (a->cap != NULL)
			gpurx_capture_poll(a->cap, q);
		stash_to_cache(Q, 0);
		prefetch_head(Q, fill_max);
		n = rte_eth_rx_burst(port, qid, pkts, a->opt.burst);
		if (n == 0)
			continue;
		prefetch_tail(Q, gq);
		rx_ns = a->opt.ts_source == GPURX_TS_NONE ? 0 :
			gpuapp_tsc_ns(&a->clk, rte_get_tsc_cycles());
		take = gpurx_admit(a, n);
		if (take < n)
			rte_pktmbuf_free_bulk(pkts + take, n - take);
		GPURX_STAT_ADD(qs, bursts, 1);
		while (i < take) {
			if (gpucomm_ring_next(&Q->ring) == NULL &&
					collect_item(a, q) != 1) {
				/* The main lcore looks at the GPU at once. */
				__atomic_store_n(&Q->live.ring_full, 1,
					__ATOMIC_RELAXED);
				if (a->opt.backpressure) {
					rc = wait_item(a, q);
					if (rc == 1)
						continue;
					if (rc < 0) {
						status = -1;
						a->stop = 1;
					}
				}
				/* Never wait on the GPU with RX pending. */
				GPURX_STAT_ADD(qs, drop_ring, take - i);
				rte_pktmbuf_free_bulk(pkts + i, take - i);
				break;
			}
			rc = fill_item(a, q, pkts + i, take - i, rx_ns);
			if (rc < 0) {
				rte_pktmbuf_free_bulk(pkts + i, take - i);
				status = -1;
				a->stop = 1;
				break;
			}
			i += (uint16_t)rc;
			if (a->opt.launch_per_burst && launch_item(a, q) != 0) {
				rte_pktmbuf_free_bulk(pkts + i, take - i);
				status = -1;
				a->stop = 1;
				break;
			}
		}
	}
	if (drain_queue(a, q) != 0)
		status = -1;
	stash_to_cache(Q, 1);
	return status;
}

