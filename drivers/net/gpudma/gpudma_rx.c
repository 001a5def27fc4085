/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Receive: a NIC's descriptor ring in software. rx_burst keeps the ring
 * posted ahead, as a NIC driver refills its ring: whenever a run of at
 * least post_max descriptors is free it takes buffers from the queue's
 * pool for the next frames the wire (rx_pcap's store, or rx_port's queue
 * through a staging ring) has for this queue and has them filled as one
 * batch (one scatter launch, or one batch of copy-engine copies, when the
 * data room is GPU memory; memcpy otherwise), then hands back, in arrival
 * order, the chains whose fill has completed. Nothing on this path waits
 * for the GPU: completions are polled events.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "gpudma.h"

/* Buffers a frame of len bytes takes. */
static inline uint32_t
frame_segs(const struct gpudma_rxq *q, uint32_t len)
{
	const struct gpudma_rx_seg *last = &q->seg[q->nb_seg - 1];
	uint32_t n = 0;

	/* The segments before the last take a buffer each, while the frame
	 * goes on past them. */
	while (n + 1u < q->nb_seg && len > q->seg[n].len)
		len -= q->seg[n++].len;
	if (n + 1u < q->nb_seg)
		return n + 1;
	return n + (len == 0 ? 1 : (len + last->len - 1) / last->len);
}

/*
 * rx_port's staging ring: room for a full ring of frames of up to 2 KiB
 * and one of the longest, so that it rarely is what stops a fill. Pinned
 * (mapped for the kernel) when the copy engine or the kernel reads it.
 */
static int
stage_init(struct gpudma_rxq *q)
{
	size_t len = RTE_ALIGN_CEIL(RTE_MAX((size_t)q->ring_size * 2048,
		(size_t)1 << 20) + GPUDMA_MAX_FRAME, 4096);
	int ret;

	q->stage = aligned_alloc(4096, len);
	if (q->stage == NULL)
		return -ENOMEM;
	q->stage_len = len;
	q->s_head = q->s_tail = 0;
	if (!q->gpu)
		return 0;
	ret = gpudma_cuda_pin_mapped(q->cuda, q->stage, len,
		&q->stage_dev);
	if (ret != 0) {
		free(q->stage);
		q->stage = NULL;
		return ret;
	}
	q->stage_pinned = true;
	return 0;
}

static void
stage_fini(struct gpudma_rxq *q)
{
	/* As the frame store: logged, and freed all the same (nothing of
	 * the queue reads it any more). */
	if (q->stage_pinned &&
			gpudma_cuda_unpin(q->cuda, q->stage) != 0)
		GPUDMA_LOG(ERR, "rx queue %u: the staging ring stays page-locked",
			q->qid);
	free(q->stage);
	q->stage = NULL;
	q->stage_pinned = false;
}

/* Room for len bytes in the staging ring, contiguous; NULL when the
 * batches not yet retired hold too much of it. */
static uint8_t *
stage_alloc(struct gpudma_rxq *q, uint32_t len)
{
	uint64_t need = RTE_ALIGN_CEIL((uint64_t)len, 64);
	uint64_t pos = q->s_head % q->stage_len;
	uint64_t skip = pos + need > q->stage_len ? q->stage_len - pos : 0;
	uint8_t *p;

	if (q->s_head + skip + need - q->s_tail > q->stage_len)
		return NULL;
	q->s_head += skip;
	p = q->stage + q->s_head % q->stage_len;
	q->s_head += need;
	return p;
}

int
gpudma_rxq_init(struct gpudma_port *port, struct gpudma_rxq *q, uint16_t qid,
		uint16_t nb_desc, int socket)
{
	uint32_t i, cap;
	int ret;

	q->port = port;
	q->qid = qid;
	rte_spinlock_init(&q->lock);
	q->ring_size = rte_align32pow2(nb_desc);
	/* A quarter ring a batch: four fills in flight keep the ring full
	 * while the consumer takes bursts from the oldest. */
	q->post_max = RTE_MAX(q->ring_size / 4, 1u);
	q->ring = rte_zmalloc_socket("gpudma_rx_ring",
		q->ring_size * sizeof(*q->ring), RTE_CACHE_LINE_SIZE, socket);
	if (q->ring == NULL)
		return -ENOMEM;
	gpudma_cursor_init(&q->cursor, &port->src, qid, port->args.queues);
	if (port->has_sub) {
		ret = stage_init(q);
		if (ret != 0)
			goto fail_ring;
	}
	if (!q->gpu)
		return 0;

	/* Room for a full ring of single-segment frames, and for a burst of
	 * one frame as long as the port receives. */
	cap = RTE_MAX(q->ring_size, frame_segs(q, GPUDMA_MAX_FRAME));
	ret = gpudma_cuda_enter(q->cuda, "net_gpudma: rx queue setup");
	if (ret != 0)
		goto fail_stage;
	ret = gpudma_copier_init(&q->copier, q->cuda, cap, socket,
		GPUDMA_MAX_BATCHES);
	if (ret != 0)
		goto fail_ctx;
	/* The persistent kernel reads every frame over PCIe itself: a bulk
	 * copy would be a CUDA call a burst. */
	ret = gpudma_copier_bulk_init(&q->copier,
		port->args.fill == GPUDMA_FILL_PERSISTENT ? GPUDMA_BULK_OFF :
		port->args.bulk);
	if (ret != 0) {
		gpudma_copier_fini(&q->copier);
		goto fail_ctx;
	}
	q->fill_seq = 0;
	q->stalls = 0;
	if (port->args.fill == GPUDMA_FILL_PERSISTENT &&
			q->cuda->scatter != NULL) {
		ret = gpudma_copier_fill_init(&q->copier,
			port->args.fill_idle_us);
		if (ret != 0) {
			GPUDMA_LOG(ERR, "rx queue %u: fill=persistent: no ring for the persistent kernel: %s",
				qid, rte_strerror(-ret));
			gpudma_copier_fini(&q->copier);
			goto fail_ctx;
		}
	} else if ((ret = gpudma_copier_done_init(&q->copier)) == -ENOTSUP) {
		GPUDMA_LOG(INFO, "rx queue %u: no stream memory operations in this CUDA driver: fills are polled with cuEventQuery",
			qid);
		ret = 0;
	} else if (ret != 0) {
		gpudma_copier_fini(&q->copier);
		goto fail_ctx;
	}
	for (i = 0; i < GPUDMA_MAX_BATCHES; i++) {
		ret = gpudma_event_init(&q->batches[i].ev);
		if (ret != 0)
			goto fail_events;
	}
	gpudma_cuda_leave(q->cuda, "net_gpudma: rx queue setup");
	return 0;
fail_events:
	while (i-- > 0)
		gpudma_event_fini(&q->batches[i].ev);
	gpudma_copier_fini(&q->copier);
fail_ctx:
	gpudma_cuda_leave(q->cuda, "net_gpudma: rx queue setup");
fail_stage:
	stage_fini(q);
fail_ring:
	rte_free(q->ring);
	q->ring = NULL;
	return ret;
}

/* Gives back the descriptors of batches that can no longer complete: their
 * buffers were written wrong or not at all. */
static void
drop_batch(struct gpudma_rxq *q, struct gpudma_batch *b)
{
	while (q->tail != b->end) {
		rte_pktmbuf_free(q->ring[q->tail & (q->ring_size - 1)]);
		q->tail++;
		q->st.errors++;
	}
}

/* The batch's buffers are no longer read or written by a fill: its bytes
 * in the staging ring may be reused. */
static inline void
retire_batch(struct gpudma_rxq *q, const struct gpudma_batch *b)
{
	q->s_tail = b->stage_end;
	q->b_head++;
}

/* Frees rx_port's mbufs whose bytes have been copied out. */
static inline void
sub_release(struct gpudma_rxq *q)
{
	if (q->sub_i > q->sub_f)
		rte_pktmbuf_free_bulk(q->sub + q->sub_f, q->sub_i - q->sub_f);
	q->sub_f = q->sub_i;
}

void
gpudma_rxq_drain(struct gpudma_rxq *q)
{
	bool ctx = false;
	int stopped = 0;

	rte_spinlock_lock(&q->lock);
	if (q->gpu && (q->b_head != q->b_tail ||
			gpudma_copier_fill_pending(&q->copier)))
		ctx = gpudma_cuda_enter_teardown(q->cuda,
			"net_gpudma: rx queue drain") == 0;
	/* The persistent kernel ends with the queue's start: it serves
	 * what was posted first, and the next start's first fill launches
	 * it again. */
	if (gpudma_copier_fill_pending(&q->copier)) {
		uint64_t l0 = q->copier.fill_launches;

		stopped = ctx ? gpudma_copier_fill_stop(&q->copier) : -EFAULT;
		q->st.fill_launches += q->copier.fill_launches - l0;
	}
	while (q->b_head != q->b_tail) {
		struct gpudma_batch *b =
			&q->batches[q->b_head % GPUDMA_MAX_BATCHES];

		if (!b->done && !b->failed) {
			int ret;

			if (q->copier.ring == NULL)
				ret = ctx ? gpudma_event_wait(&q->copier,
					&b->ev) : -EFAULT;
			else if (gpudma_copier_done(&q->copier, b->seq))
				ret = 0;
			else
				/* Not served: by a kernel that ended, or one
				 * that may still write it. */
				ret = stopped == -ETIMEDOUT || stopped == -EFAULT ?
					-EFAULT : -EIO;
			if (ret == -EIO)
				gpudma_copier_fill_void(&q->copier, b->seq);

			if (ret == -EFAULT) {
				/* The copy engine may still be writing them:
				 * they stay out of the pool. */
				GPUDMA_LOG(ERR, "rx queue %u: %u buffers of an unfinished fill kept out of pool %s",
					q->qid, b->end - q->tail, q->seg[0].mp->name);
				q->tail = b->end;
			}
		}
		/* Filled but never handed out: as a NIC stopped with frames
		 * in its ring, they are dropped. */
		while (q->tail != b->end) {
			rte_pktmbuf_free(q->ring[q->tail & (q->ring_size - 1)]);
			q->tail++;
		}
		retire_batch(q, b);
	}
	if (ctx)
		gpudma_cuda_leave(q->cuda, "net_gpudma: rx queue drain");
	/* Taken ahead and never posted. */
	if (q->nb_stash > 0)
		rte_pktmbuf_free_bulk(q->stash, q->nb_stash);
	q->nb_stash = 0;
	/* Received from rx_port and not yet posted: dropped with the ring,
	 * as frames a stopped NIC had in its FIFO. */
	q->sub_i = q->sub_n;
	sub_release(q);
	q->sub_f = q->sub_i = q->sub_n = 0;
	rte_spinlock_unlock(&q->lock);
}

void
gpudma_rxq_fini(struct gpudma_rxq *q)
{
	uint32_t i;

	gpudma_rxq_drain(q);
	if (q->gpu && gpudma_cuda_enter_teardown(q->cuda,
			"net_gpudma: rx queue release") == 0) {
		for (i = 0; i < GPUDMA_MAX_BATCHES; i++)
			gpudma_event_fini(&q->batches[i].ev);
		gpudma_copier_fini(&q->copier);
		gpudma_cuda_leave(q->cuda, "net_gpudma: rx queue release");
	}
	stage_fini(q);
	rte_free(q->ring);
	q->ring = NULL;
}

int
gpudma_rxq_uses(struct gpudma_rxq *q, uintptr_t addr, size_t len)
{
	uint32_t i;
	int used = 0;

	rte_spinlock_lock(&q->lock);
	for (i = q->tail; i != q->head && !used; i++) {
		const struct rte_mbuf *m = q->ring[i & (q->ring_size - 1)];

		for (; m != NULL && !used; m = m->next)
			used = (uintptr_t)m->buf_addr < addr + len &&
				addr < (uintptr_t)m->buf_addr + m->buf_len;
	}
	rte_spinlock_unlock(&q->lock);
	return used;
}

/* Frames ahead of the one being posted whose buffers are prefetched. */
#define STASH_PREFETCH 8

/* The first line (the fields post_frame writes) and the second (next,
 * which the consumer's free reads) of a buffer posted soon. */
static inline void
stash_prefetch(const struct rte_mbuf *m)
{
	rte_prefetch0(m);
	rte_prefetch0(RTE_PTR_ADD(m, RTE_CACHE_LINE_SIZE));
}

/*
 * cnt buffers of the queue's single pool, from the stash, which is
 * refilled in bulk (one mempool operation for GPUDMA_STASH buffers rather
 * than one a frame). Raw buffers, as the pool keeps them (one segment,
 * next NULL, refcnt 1): post_frame writes the rest. Not
 * rte_pktmbuf_alloc_bulk, whose reset reads each buffer's first line and
 * writes its second: buffers come back to this queue through the pool's
 * ring, long after they were last touched, and a profile on the H200
 * (64 B, one queue) had 22 % of the lcore's time on the reset's first
 * access to each buffer, one miss after another. Here the buffers of the
 * frames STASH_PREFETCH ahead are prefetched, so their misses overlap.
 * 0, or -ENOBUFS when the pool has fewer left.
 */
static int
stash_take(struct gpudma_rxq *q, struct rte_mbuf **m, uint32_t cnt)
{
	struct rte_mempool *mp = q->seg[0].mp;

	if (cnt > q->nb_stash) {
		uint32_t want = GPUDMA_STASH - q->nb_stash, i;

		if (rte_mempool_get_bulk(mp, (void **)(q->stash + q->nb_stash),
				want) == 0) {
			q->nb_stash += want;
		} else {
			/* The pool is nearly dry: what it still has. */
			while (q->nb_stash < GPUDMA_STASH &&
					rte_mempool_get(mp,
					(void **)&q->stash[q->nb_stash]) == 0)
				q->nb_stash++;
		}
		if (cnt > q->nb_stash)
			return -ENOBUFS;
		/* The stash is used from its top. */
		for (i = 1; i <= RTE_MIN(q->nb_stash, STASH_PREFETCH + cnt); i++)
			stash_prefetch(q->stash[q->nb_stash - i]);
	}
	/* The stash is used from its top: the most recently cached. */
	q->nb_stash -= cnt;
	memcpy(m, q->stash + q->nb_stash, cnt * sizeof(*m));
	if (q->nb_stash > STASH_PREFETCH)
		stash_prefetch(q->stash[q->nb_stash - 1 - STASH_PREFETCH]);
	return 0;
}

/* The buffers of a frame of nseg segments: a buffer from each head
 * segment's pool, the rest from the last. */
static int
take_buffers(struct gpudma_rxq *q, struct rte_mbuf **segs, uint32_t nseg)
{
	uint32_t i, got = 0;

	if (q->nb_seg == 1 && nseg <= GPUDMA_STASH)
		return stash_take(q, segs, nseg);
	for (i = 0; i < q->nb_seg && got < nseg; i++) {
		uint32_t cnt = i + 1u < q->nb_seg ? 1 : nseg - got;

		/* Raw, as from the stash: post_frame sets every field. */
		if (rte_mempool_get_bulk(q->seg[i].mp, (void **)(segs + got),
				cnt) != 0) {
			if (got > 0)
				rte_pktmbuf_free_bulk(segs, got);
			return -ENOBUFS;
		}
		got += cnt;
	}
	return 0;
}

/*
 * Takes the buffers of one frame of len bytes at src and chains them,
 * filling them (memcpy) or queuing their fill (copy engine or kernel).
 * Returns the head or NULL when the pool ran dry.
 */
static struct rte_mbuf *
post_frame(struct gpudma_rxq *q, const uint8_t *src, uint32_t len)
{
	/* The last segment takes at least 64 bytes a buffer (queue setup). */
	struct rte_mbuf *segs[GPUDMA_MAX_FRAME / 64 + GPUDMA_MAX_RX_SEGS];
	uint32_t nseg = frame_segs(q, len), i, left = len;

	if (take_buffers(q, segs, nseg) != 0)
		return NULL;
	for (i = 0; i < nseg; i++) {
		const struct gpudma_rx_seg *sg =
			&q->seg[RTE_MIN(i, q->nb_seg - 1u)];
		struct rte_mbuf *m = segs[i];
		uint32_t n = RTE_MIN(left, sg->len);

		/*
		 * What rte_pktmbuf_reset sets in the first line, by stores
		 * alone (no read of a line that may still be on its way),
		 * and the frame's lengths. The second line is left as the
		 * pool gives it (next NULL) but in a chain, and tx_offload
		 * is not cleared: as NIC drivers receive into raw buffers.
		 */
		m->data_off = sg->off;
		rte_mbuf_refcnt_set(m, 1);
		m->nb_segs = 1;
		m->port = q->port->port_id;
		m->ol_flags = sg->ol_flags;
		m->packet_type = RTE_PTYPE_UNKNOWN;
		m->pkt_len = 0;         /* the head's: below */
		m->data_len = (uint16_t)n;
		m->vlan_tci = 0;
		m->vlan_tci_outer = 0;
		if (i + 1 < nseg)
			m->next = segs[i + 1];
		if (sg->gpu)
			gpudma_copier_add(&q->copier,
				rte_pktmbuf_mtod(m, uintptr_t), (uintptr_t)src,
				n);
		else
			memcpy(rte_pktmbuf_mtod(m, void *), src, n);
		src += n;
		left -= n;
	}
	q->st.copy_ops += nseg;
	segs[0]->nb_segs = (uint16_t)nseg;
	segs[0]->pkt_len = len;
	return segs[0];
}

/*
 * The wire: the next frame for this queue, its bytes at *src, without
 * taking it (wire_next does). From rx_pcap's store, or from rx_port's
 * queue: its bytes copied into the staging ring unless a host-memory
 * queue can copy them straight out of a one-segment mbuf. 0 when the wire
 * has nothing now (or the staging ring is full: the frame waits).
 */
static int
wire_peek(struct gpudma_rxq *q, const uint8_t **src, uint32_t *len)
{
	const struct gpudma_port *p = q->port;
	struct rte_mbuf *m;
	uint8_t *dst;

	if (!p->has_sub) {
		const struct gpudma_frame *f =
			gpudma_cursor_peek(&q->cursor, &p->src);

		if (f == NULL)
			return 0;
		*src = p->src.data + f->off;
		*len = f->len;
		return 1;
	}
	for (;;) {
		if (q->sub_i == q->sub_n) {
			sub_release(q);
			q->sub_f = q->sub_i = 0;
			q->sub_n = rte_eth_rx_burst(p->sub_port, q->qid, q->sub,
				GPUDMA_SUB_BURST);
			if (q->sub_n == 0)
				return 0;
		}
		m = q->sub[q->sub_i];
		if (m->pkt_len != 0 && m->pkt_len <= GPUDMA_MAX_FRAME)
			break;
		/* Not a frame the port receives: as a NIC's length error. */
		q->st.errors++;
		q->sub_i++;
	}
	*len = m->pkt_len;
	if (!q->gpu && m->nb_segs == 1) {
		*src = rte_pktmbuf_mtod(m, const uint8_t *);
		return 1;
	}
	dst = stage_alloc(q, m->pkt_len);
	if (dst == NULL)
		return 0;
	*src = rte_pktmbuf_read(m, 0, m->pkt_len, dst);
	if (*src != dst)
		memcpy(dst, *src, m->pkt_len);
	*src = dst;
	return 1;
}

/* The frame wire_peek gave is taken (posted or dropped). */
static inline void
wire_next(struct gpudma_rxq *q)
{
	if (q->port->has_sub)
		q->sub_i++;
	else
		gpudma_cursor_next(&q->cursor);
}

/*
 * The queue's GPU's context current on this lcore for the rest of the
 * rx_burst call, made so at the first need only: most polls need none
 * (the completion word is host memory), and every driver call takes the
 * context's lock, which the lcores of the other queues on that GPU want
 * too. Each lcore pushes its own queue's context: queues on other GPUs
 * polled at the same time by other lcores never share one.
 */
static int
ctx_need(struct gpudma_rxq *q)
{
	int ret;

	if (q->in_ctx)
		return 0;
	/* Never -EFAULT (which says a fill may still be running). */
	ret = gpudma_cuda_enter(q->cuda, "net_gpudma: rx_burst");
	if (ret != 0) {
		q->st.errors++;
		return ret;
	}
	q->in_ctx = true;
	return 0;
}

/*
 * Posts descriptors for up to want frames as one batch. Returns how many
 * were posted; 0 when the wire has none, the copier's room is used up, or
 * the pool ran dry.
 */
static uint32_t
post_batch(struct gpudma_rxq *q, uint32_t want)
{
	uint32_t start = q->head, n;
	uint64_t bytes = 0, s_head;
	struct gpudma_batch *b;
	const uint8_t *src;
	uint32_t len;
	int ret;

	for (n = 0; n < want; n++) {
		struct rte_mbuf *m;

		s_head = q->s_head;
		if (!wire_peek(q, &src, &len))
			break;
		if (q->gpu && (q->copier.n + frame_segs(q, len) > q->copier.cap ||
				(n > 0 && !gpudma_copier_bulk_room(&q->copier, len)))) {
			q->s_head = s_head;  /* staged again next batch */
			break;
		}
		m = post_frame(q, src, len);
		if (m == NULL) {
			q->s_head = s_head;
			/* No buffer for this frame. With descriptors still
			 * posted the ring is merely full: the frame waits.
			 * With none, the wire does not wait, as it would not
			 * for a NIC whose ring is empty. */
			if (q->head == q->tail) {
				q->st.missed++;
				wire_next(q);
			}
			break;
		}
		q->ring[q->head & (q->ring_size - 1)] = m;
		q->head++;
		bytes += len;
		wire_next(q);
	}
	/* Their bytes are in the mbufs or the staging ring now. */
	if (q->port->has_sub)
		sub_release(q);
	if (q->head == start)
		return 0;
	b = &q->batches[q->b_tail % GPUDMA_MAX_BATCHES];
	b->end = q->head;
	b->stage_end = q->s_head;
	/* Filled already unless the copy engine has work: memcpy only, or
	 * split frames that all fit their host-memory head. */
	b->done = q->copier.n == 0;
	b->failed = false;
	q->st.copy_batches++;
	q->st.copy_bytes += bytes;
	if (!b->done) {
		uint64_t bulk0, launches0;

		if (q->port->has_sub) {
			q->copier.win_host = (uintptr_t)q->stage;
			q->copier.win_dev = (CUdeviceptr)q->stage_dev;
		} else {
			q->copier.win_host = q->cuda->store_host;
			q->copier.win_dev = q->cuda->store_dev;
		}
		bulk0 = q->copier.bulk_batches;
		launches0 = q->copier.fill_launches;
		b->seq = ++q->fill_seq;
		ret = gpudma_copier_needs_ctx(&q->copier) ? ctx_need(q) : 0;
		if (ret == 0)
			ret = gpudma_copier_submit(&q->copier, true, &b->ev,
				q->b_tail % GPUDMA_MAX_BATCHES, b->seq);
		else
			gpudma_copier_skip(&q->copier, b->seq);
		q->st.bulk_batches += q->copier.bulk_batches - bulk0;
		q->st.fill_launches += q->copier.fill_launches - launches0;
		if (ret == -EFAULT) {
			/* Unknown state of the copy engine: the buffers stay
			 * out of the pool rather than be reused mid-write. */
			GPUDMA_LOG(ERR, "rx queue %u: %u buffers of a failed fill kept out of pool %s",
				q->qid, q->head - start, q->seg[0].mp->name);
			q->head = start;
			return 0;
		}
		b->failed = ret != 0;
	}
	q->b_tail++;
	return q->head - start;
}

/*
 * Keeps the ring posted ahead: a batch whenever a run of post_max
 * descriptors is free (or the ring is empty), as long as a batch slot is.
 */
static void
refill(struct gpudma_rxq *q)
{
	while (q->b_tail - q->b_head < GPUDMA_MAX_BATCHES) {
		uint32_t room = q->ring_size - (q->head - q->tail);

		if (room < q->post_max && q->head != q->tail)
			break;
		if (post_batch(q, RTE_MIN(room, q->post_max)) == 0)
			break;
	}
}

/* Hands back up to n chains whose fill completed, in order. */
static uint16_t
harvest(struct gpudma_rxq *q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb = 0;

	while (nb < n && q->b_head != q->b_tail) {
		struct gpudma_batch *b =
			&q->batches[q->b_head % GPUDMA_MAX_BATCHES];

		if (!b->done && !b->failed && q->copier.done_word != NULL) {
			/* The word is written after the fill's copies (or
			 * kernel) with a fence before it, and the consumer's
			 * GPU work, published after this acquire, sees their
			 * writes: the whole ordering a GPU-memory buffer
			 * needs, since the CPU never reads it. */
			if (gpudma_copier_done(&q->copier, b->seq)) {
				b->done = true;
				q->stalls = 0;
			} else if (gpudma_copier_fill_parked(&q->copier)) {
				/* The persistent kernel parked before this
				 * fill: launched again once it has ended. */
				uint64_t l0 = q->copier.fill_launches;
				int ret = ctx_need(q) != 0 ? 1 :
					gpudma_copier_fill_resume(&q->copier);

				q->st.fill_launches +=
					q->copier.fill_launches - l0;
				/* A failure: counted, asked again. */
				if (ret < 0)
					q->st.errors++;
				break;
			} else if (++q->stalls < GPUDMA_STALL_CHECK) {
				break;  /* still being written */
			} else {
				q->stalls = 0;
			}
		}
		if (!b->done && !b->failed && q->copier.ring != NULL) {
			/* The persistent kernel: a fill not served while it
			 * runs is still being written; one it ended without
			 * (a fault) never will be. Acquire again after its
			 * end, which may have come after it served this. */
			int ret = ctx_need(q) != 0 ? 1 :
				gpudma_copier_fill_alive(&q->copier);

			/* A failed query: not known to have ended, so it
			 * may still write the buffers (counted, retried). */
			if (ret < 0)
				q->st.errors++;
			if (ret != 0)
				break;
			b->done = gpudma_copier_done(&q->copier, b->seq);
			b->failed = !b->done;
			if (b->failed) {
				gpudma_copier_fill_void(&q->copier, b->seq);
				GPUDMA_LOG(ERR, "rx queue %u: the persistent fill kernel ended with fill %u not served: its frames are dropped",
					q->qid, b->seq);
			}
		}
		if (!b->done && !b->failed) {
			/* The event completes after every copy (or the
			 * kernel) enqueued before it, with the same
			 * ordering as the word. */
			int ret = ctx_need(q) != 0 ? 0 :
				gpudma_event_query(&b->ev);

			if (ret == 0)
				break;  /* still being written */
			if (ret < 0 &&
					gpudma_event_wait(&q->copier, &b->ev) ==
					-EFAULT) {
				GPUDMA_LOG(ERR, "rx queue %u: %u buffers of an unfinished fill kept out of pool %s",
					q->qid, b->end - q->tail, q->seg[0].mp->name);
				q->tail = b->end;
			}
			b->done = ret > 0;
			b->failed = ret < 0;
		}
		if (b->failed) {
			drop_batch(q, b);
		} else {
			while (q->tail != b->end && nb < n) {
				struct rte_mbuf *m =
					q->ring[q->tail & (q->ring_size - 1)];

				q->tail++;
				q->st.packets++;
				q->st.bytes += m->pkt_len;
				pkts[nb++] = m;
			}
		}
		if (q->tail != b->end)
			break;
		retire_batch(q, b);
	}
	return nb;
}

uint16_t
gpudma_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct gpudma_rxq *q = queue;
	uint16_t nb;

	/* Only the unmap check contends, and briefly: a busy lock costs this
	 * poll, not a wait. The lock also orders the ring's updates with that
	 * check's reads (acquire here, release on unlock). */
	if (!rte_spinlock_trylock(&q->lock))
		return 0;
	q->in_ctx = false;
	/* Hand out what completed, then post into the runs that frees: in
	 * host memory the new frames are ready at the next poll; on the GPU
	 * their fill overlaps the consumer's work. */
	nb = harvest(q, pkts, n);
	refill(q);
	if (nb < n)
		nb += harvest(q, pkts + nb, n - nb);
	if (q->in_ctx)
		gpudma_cuda_leave(q->cuda, "net_gpudma: rx_burst");
	rte_spinlock_unlock(&q->lock);
	return nb;
}
