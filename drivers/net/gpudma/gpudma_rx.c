/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Receive: a NIC's descriptor ring in software. rx_burst posts buffers
 * from the queue's pool for the frames the wire has for this queue, has
 * them filled (one batch of copy-engine copies per burst when the data
 * room is GPU memory, memcpy otherwise), and hands back, in arrival order,
 * the chains whose fill has completed.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

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
	q->ring = rte_zmalloc_socket("gpudma_rx_ring",
		q->ring_size * sizeof(*q->ring), RTE_CACHE_LINE_SIZE, socket);
	if (q->ring == NULL)
		return -ENOMEM;
	gpudma_cursor_init(&q->cursor, &port->src, qid, port->args.queues);
	if (!q->gpu)
		return 0;

	/* Room for a full ring of single-segment frames, and for a burst of
	 * one frame as long as the port receives. */
	cap = RTE_MAX(q->ring_size, frame_segs(q, GPUDMA_MAX_FRAME));
	ret = gpudma_cuda_enter(&port->cuda, "net_gpudma: rx queue setup");
	if (ret != 0)
		goto fail_ring;
	ret = gpudma_copier_init(&q->copier, &port->cuda, cap, socket,
		GPUDMA_MAX_BATCHES);
	if (ret != 0)
		goto fail_ctx;
	for (i = 0; i < GPUDMA_MAX_BATCHES; i++) {
		ret = gpudma_event_init(&q->batches[i].ev);
		if (ret != 0)
			goto fail_events;
	}
	gpudma_cuda_leave(&port->cuda, "net_gpudma: rx queue setup");
	return 0;
fail_events:
	while (i-- > 0)
		gpudma_event_fini(&q->batches[i].ev);
	gpudma_copier_fini(&q->copier);
fail_ctx:
	gpudma_cuda_leave(&port->cuda, "net_gpudma: rx queue setup");
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

void
gpudma_rxq_drain(struct gpudma_rxq *q)
{
	bool ctx = false;

	rte_spinlock_lock(&q->lock);
	if (q->gpu && q->b_head != q->b_tail)
		ctx = gpudma_cuda_enter_teardown(&q->port->cuda,
			"net_gpudma: rx queue drain") == 0;
	while (q->b_head != q->b_tail) {
		struct gpudma_batch *b =
			&q->batches[q->b_head % GPUDMA_MAX_BATCHES];

		if (!b->done && !b->failed) {
			int ret = ctx ? gpudma_event_wait(&q->copier, &b->ev) :
				-EFAULT;

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
		q->b_head++;
	}
	if (ctx)
		gpudma_cuda_leave(&q->port->cuda, "net_gpudma: rx queue drain");
	rte_spinlock_unlock(&q->lock);
}

void
gpudma_rxq_fini(struct gpudma_rxq *q)
{
	uint32_t i;

	gpudma_rxq_drain(q);
	if (q->gpu && gpudma_cuda_enter_teardown(&q->port->cuda,
			"net_gpudma: rx queue release") == 0) {
		for (i = 0; i < GPUDMA_MAX_BATCHES; i++)
			gpudma_event_fini(&q->batches[i].ev);
		gpudma_copier_fini(&q->copier);
		gpudma_cuda_leave(&q->port->cuda, "net_gpudma: rx queue release");
	}
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

/*
 * Takes the buffers of one frame from the pool and chains them, filling
 * them (memcpy) or queuing their fill (copy engine). Returns the head or
 * NULL when the pool ran dry.
 */
static struct rte_mbuf *
post_frame(struct gpudma_rxq *q, const struct gpudma_frame *f)
{
	/* The last segment takes at least 64 bytes a buffer (queue setup). */
	struct rte_mbuf *segs[GPUDMA_MAX_FRAME / 64 + GPUDMA_MAX_RX_SEGS];
	const uint8_t *src = q->port->src.data + f->off;
	uint32_t nseg = frame_segs(q, f->len), i, got = 0, left = f->len;

	/* A buffer from each head segment's pool, the rest from the last. */
	for (i = 0; i < q->nb_seg && got < nseg; i++) {
		uint32_t cnt = i + 1u < q->nb_seg ? 1 : nseg - got;

		if (rte_pktmbuf_alloc_bulk(q->seg[i].mp, segs + got, cnt) != 0) {
			if (got > 0)
				rte_pktmbuf_free_bulk(segs, got);
			return NULL;
		}
		got += cnt;
	}
	for (i = 0; i < nseg; i++) {
		const struct gpudma_rx_seg *sg =
			&q->seg[RTE_MIN(i, q->nb_seg - 1u)];
		struct rte_mbuf *m = segs[i];
		uint32_t len = RTE_MIN(left, sg->len);

		m->data_off = sg->off;
		m->data_len = (uint16_t)len;
		m->next = i + 1 < nseg ? segs[i + 1] : NULL;
		if (sg->gpu)
			gpudma_copier_add(&q->copier,
				rte_pktmbuf_mtod(m, uintptr_t), (uintptr_t)src,
				len);
		else
			memcpy(rte_pktmbuf_mtod(m, void *), src, len);
		src += len;
		left -= len;
	}
	q->st.copy_ops += nseg;
	segs[0]->nb_segs = (uint16_t)nseg;
	segs[0]->pkt_len = f->len;
	segs[0]->port = q->port->port_id;
	segs[0]->packet_type = RTE_PTYPE_UNKNOWN;
	return segs[0];
}

/* Posts descriptors for up to want frames as one batch. */
static void
submit(struct gpudma_rxq *q, uint16_t want)
{
	const struct gpudma_source *src = &q->port->src;
	uint32_t room = q->ring_size - (q->head - q->tail);
	uint32_t start = q->head, n;
	uint64_t bytes = 0;
	struct gpudma_batch *b;
	int ret;

	if (q->b_tail - q->b_head == GPUDMA_MAX_BATCHES)
		return;
	for (n = 0; n < RTE_MIN(room, (uint32_t)want); n++) {
		const struct gpudma_frame *f = gpudma_cursor_peek(&q->cursor, src);
		struct rte_mbuf *m;

		if (f == NULL)
			break;
		if (q->gpu && q->copier.n + frame_segs(q, f->len) > q->copier.cap)
			break;
		m = post_frame(q, f);
		if (m == NULL) {
			/* No buffer for this frame: the wire does not wait,
			 * as it would not for a NIC whose ring is empty. */
			q->st.missed++;
			gpudma_cursor_next(&q->cursor);
			break;
		}
		q->ring[q->head & (q->ring_size - 1)] = m;
		q->head++;
		bytes += f->len;
		gpudma_cursor_next(&q->cursor);
	}
	if (q->head == start)
		return;
	b = &q->batches[q->b_tail % GPUDMA_MAX_BATCHES];
	b->end = q->head;
	/* Filled already unless the copy engine has work: memcpy only, or
	 * split frames that all fit their host-memory head. */
	b->done = q->copier.n == 0;
	b->failed = false;
	q->st.copy_batches++;
	q->st.copy_bytes += bytes;
	if (!b->done) {
		ret = gpudma_copier_submit(&q->copier, true, &b->ev,
			q->b_tail % GPUDMA_MAX_BATCHES);
		if (ret == -EFAULT) {
			/* Unknown state of the copy engine: the buffers stay
			 * out of the pool rather than be reused mid-write. */
			GPUDMA_LOG(ERR, "rx queue %u: %u buffers of a failed fill kept out of pool %s",
				q->qid, q->head - start, q->seg[0].mp->name);
			q->head = start;
			return;
		}
		b->failed = ret != 0;
	}
	q->b_tail++;
}

/* Hands back up to n chains whose fill completed, in order. */
static uint16_t
harvest(struct gpudma_rxq *q, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb = 0;

	while (nb < n && q->b_head != q->b_tail) {
		struct gpudma_batch *b =
			&q->batches[q->b_head % GPUDMA_MAX_BATCHES];

		if (!b->done && !b->failed) {
			/* The event completes after every copy (or the
			 * kernel) enqueued before it, and GPU work the
			 * consumer launches later sees their writes: that is
			 * the whole ordering a GPU-memory buffer needs, since
			 * the CPU never reads it. */
			int ret = gpudma_event_query(&b->ev);

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
		q->b_head++;
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
	if (q->gpu && gpudma_cuda_enter(&q->port->cuda,
			"net_gpudma: rx_burst") != 0) {
		q->st.errors++;
		rte_spinlock_unlock(&q->lock);
		return 0;
	}
	/* Post first: in host memory the new frames are ready at once; on
	 * the copy engine this burst's fill overlaps the next poll. */
	submit(q, n);
	nb = harvest(q, pkts, n);
	if (q->gpu)
		gpudma_cuda_leave(&q->port->cuda, "net_gpudma: rx_burst");
	rte_spinlock_unlock(&q->lock);
	return nb;
}
