/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Transmit: each frame is read from its mbufs (memcpy from host memory, the
 * copy engine from GPU memory, into a pinned staging area) and written to
 * tx_pcap; without tx_pcap frames are counted and dropped unread.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "gpudma.h"

/* Frames gathered per round trip of the copy engine. */
#define TX_STAGING (4u * GPUDMA_MAX_FRAME)
#define TX_MAX_COPIES 4096u


int
gpudma_txq_init(struct gpudma_port *port, struct gpudma_txq *q, uint16_t qid)
{
	q->port = port;
	q->qid = qid;
	if (port->out == NULL)
		return 0;
	q->staging = aligned_alloc(4096, TX_STAGING);
	if (q->staging == NULL)
		return -ENOMEM;
	q->staging_len = TX_STAGING;
	return 0;
}

void
gpudma_txq_fini(struct gpudma_txq *q)
{
	struct gpudma_cuda *c = q->cuda;

	if (c != NULL && (q->event.ev != NULL || q->copier.stream != NULL)) {
		if (gpudma_cuda_enter_teardown(c,
				"net_gpudma: tx queue release") == 0) {
			gpudma_event_fini(&q->event);
			gpudma_copier_fini(&q->copier);
			gpudma_cuda_leave(c, "net_gpudma: tx queue release");
		}
	}
	if (q->pinned)
		(void)gpudma_cuda_unpin(c, q->staging);
	q->cuda = NULL;
	free(q->staging);
	q->staging = NULL;
}

/* The copy engine of a queue that meets GPU memory for the first time
 * (its GPU's context current). */
static int
txq_gpu_ready(struct gpudma_txq *q)
{
	struct gpudma_cuda *c = q->cuda;
	int ret;

	if (q->copier.stream != NULL)
		return 0;
	if (!q->pinned) {
		ret = gpudma_cuda_pin(c, q->staging, q->staging_len);
		if (ret != 0)
			return ret;
		q->pinned = true;
	}
	/* Copies only: the scatter kernel reads host memory, TX writes it. */
	ret = gpudma_copier_init(&q->copier, c, TX_MAX_COPIES,
		SOCKET_ID_ANY, 0);
	if (ret != 0)
		return ret;
	ret = gpudma_event_init(&q->event);
	if (ret != 0)
		gpudma_copier_fini(&q->copier);
	return ret;
}

/*
 * The queue is drained by the GPU whose memory holds its frames, as a NIC
 * next to that GPU would: the GPU of the first GPU segment it sends. A
 * frame in another GPU's memory is not sent (-EXDEV), so that no GPU
 * reads another's memory, which would need peer access the port does not
 * enable.
 */
static int
txq_gpu_of(struct gpudma_txq *q, struct gpudma_cuda *c)
{
	if (likely(q->cuda == c))
		return 0;
	if (q->cuda == NULL) {
		q->cuda = c;
		GPUDMA_LOG(INFO, "port %u tx queue %u: drained by GPU %d (its frames' memory)",
			q->port->port_id, q->qid, c->ordinal);
		return 0;
	}
	if (!q->other_gpu_said) {
		q->other_gpu_said = true;
		GPUDMA_LOG(ERR, "port %u tx queue %u: a frame in GPU %d's memory, the queue is GPU %d's: dropped (a TX queue for each GPU)",
			q->port->port_id, q->qid, c->ordinal, q->cuda->ordinal);
	}
	return -EXDEV;
}

/*
 * The TX checksum offload, as a NIC does it, on frame f (len bytes, its
 * mbuf m: l2_len, l3_len and the RTE_MBUF_F_TX_* flags): the IPv4 header
 * checksum over the header; the UDP or TCP checksum as the complement of
 * the segment's sum (its length from the IP header), the field's
 * contents included: DPDK's convention has the application put the
 * pseudo-header's sum there (rte_ipv4_phdr_cksum), and a NIC adds it, so
 * a frame that lacks it goes out with a wrong checksum here too. 0, or
 * -EINVAL when the lengths and flags do not describe the frame (dropped
 * into oerrors, as a NIC's malicious-driver check drops it).
 */
static int
tx_csum(uint8_t *f, uint32_t len, const struct rte_mbuf *m)
{
	const uint64_t l4 = m->ol_flags & RTE_MBUF_F_TX_L4_MASK;
	const uint32_t l2 = m->l2_len, l3 = m->l3_len;
	uint32_t l4_len, coff;
	uint16_t c;

	if (l3 == 0 || l2 + l3 > len)
		return -EINVAL;
	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + l2);

		if (!(m->ol_flags & RTE_MBUF_F_TX_IPV4) || l3 < sizeof(*ip) ||
				rte_ipv4_hdr_len(ip) != l3)
			return -EINVAL;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if (l4 == RTE_MBUF_F_TX_L4_NO_CKSUM)
		return 0;
	if (l4 != RTE_MBUF_F_TX_UDP_CKSUM && l4 != RTE_MBUF_F_TX_TCP_CKSUM)
		return -EINVAL;		/* SCTP: not offered */
	if (m->ol_flags & RTE_MBUF_F_TX_IPV4) {
		const struct rte_ipv4_hdr *ip =
			(const struct rte_ipv4_hdr *)(f + l2);

		if (rte_be_to_cpu_16(ip->total_length) < l3)
			return -EINVAL;
		l4_len = rte_be_to_cpu_16(ip->total_length) - l3;
	} else if (m->ol_flags & RTE_MBUF_F_TX_IPV6) {
		const struct rte_ipv6_hdr *ip =
			(const struct rte_ipv6_hdr *)(f + l2);

		if (l3 < sizeof(*ip) || rte_be_to_cpu_16(ip->payload_len) +
				sizeof(*ip) < l3)
			return -EINVAL;
		l4_len = rte_be_to_cpu_16(ip->payload_len) + sizeof(*ip) - l3;
	} else {
		return -EINVAL;
	}
	coff = l4 == RTE_MBUF_F_TX_UDP_CKSUM ? 6 : 16;
	if (l2 + l3 + l4_len > len || l4_len < coff + 2)
		return -EINVAL;
	/* rte_raw_cksum sums the bytes as stored: stored back as is, the
	 * complement lands in network order. */
	c = (uint16_t)~rte_raw_cksum(f + l2 + l3, l4_len);
	if (c == 0 && l4 == RTE_MBUF_F_TX_UDP_CKSUM)
		c = 0xffff;	/* UDP's 0 means "no checksum" */
	memcpy(f + l2 + l3 + coff, &c, sizeof(c));
	return 0;
}

/* Writes out (or, failed, drops) the gathered frames pkts[0..n). */
static void
flush(struct gpudma_txq *q, struct rte_mbuf **pkts, const uint32_t *off,
		uint16_t n, bool gpu)
{
	uint8_t *frames[GPUDMA_TX_MAX_BURST];
	uint32_t lens[GPUDMA_TX_MAX_BURST];
	uint16_t i, nb = 0, written;
	uint64_t bytes = 0;
	int ret = 0;

	if (gpu && q->copier.n > 0) {
		q->st.copy_batches++;
		q->st.copy_ops += q->copier.n;
		q->st.copy_bytes += q->copier.bytes;
		ret = gpudma_copier_submit(&q->copier, false, &q->event, 0, 0);
		/* Once the event is waited for, the device-to-host copies'
		 * bytes are in the staging area for this CPU to read. */
		if (ret == 0)
			ret = gpudma_event_wait(&q->copier, &q->event);
	}
	for (i = 0; i < n; i++) {
		if (ret == 0 && (pkts[i]->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM |
				RTE_MBUF_F_TX_L4_MASK)) != 0 &&
				tx_csum(q->staging + off[i], pkts[i]->pkt_len,
				pkts[i]) != 0) {
			q->st.errors++;
		} else if (ret == 0) {
			frames[nb] = q->staging + off[i];
			lens[nb] = pkts[i]->pkt_len;
			bytes += lens[nb++];
		} else {
			q->st.errors++;
		}
		/* -EFAULT: the copy engine may still be reading it; a buffer
		 * reused meanwhile would be sent half new, so it stays out. */
		if (ret != -EFAULT)
			rte_pktmbuf_free(pkts[i]);
	}
	/* The frames' bytes sit in staging, not in the freed mbufs. */
	written = gpudma_pcap_out_write(q->port->out, frames, lens, nb);
	if (written == nb) {
		q->st.packets += nb;
		q->st.bytes += bytes;
	} else {
		q->st.errors += nb;	/* the writer sends a burst whole or not */
	}
}

/*
 * Gathers frame m into the staging area at off: host segments by memcpy,
 * GPU segments as copies for the next flush. Returns the bytes gathered
 * or a negative errno (the frame cannot be sent, nothing of it queued).
 */
static int
gather(struct gpudma_txq *q, const struct rte_mbuf *m, uint32_t off,
		bool *ctx, bool *gpu)
{
	uint32_t n0 = q->copier.n, total = 0;
	uint64_t b0 = q->copier.bytes;
	const struct rte_mbuf *s;
	struct gpudma_cuda *c;
	int ret;

	for (s = m; s != NULL; s = s->next) {
		uintptr_t data = rte_pktmbuf_mtod(s, uintptr_t);
		enum gpudma_mem k;

		if (total + s->data_len > m->pkt_len) {
			ret = -EINVAL;
			goto undo;
		}
		k = gpudma_mem_kind(&q->port->maps, data, s->data_len, &c);
		if (k == GPUDMA_MEM_NONE) {
			ret = -EFAULT;
			goto undo;
		}
		if (k == GPUDMA_MEM_GPU) {
			ret = txq_gpu_of(q, c);
			if (ret != 0)
				goto undo;
			if (!*ctx) {
				ret = gpudma_cuda_enter(q->cuda,
					"net_gpudma: tx_burst");
				if (ret != 0)
					goto undo;
				*ctx = true;
			}
			ret = txq_gpu_ready(q);
			if (ret != 0)
				goto undo;
			if (q->copier.n == q->copier.cap) {
				ret = -E2BIG;
				goto undo;
			}
			gpudma_copier_add(&q->copier,
				(uintptr_t)q->staging + off + total, data,
				s->data_len);
			*gpu = true;
		} else {
			memcpy(q->staging + off + total, (const void *)data,
				s->data_len);
		}
		total += s->data_len;
	}
	if (total != m->pkt_len) {
		ret = -EINVAL;
		goto undo;
	}
	return (int)total;
undo:
	q->copier.n = n0;
	q->copier.bytes = b0;
	return ret;
}

/*
 * Frees the frames of a burst sent without tx_pcap. With
 * RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE the application promised mbufs of
 * one pool, refcnt 1, one segment each, none attached to another's data:
 * they go back with one mempool put, as a NIC frees completed
 * descriptors, without rte_pktmbuf_free's per-packet read of the second
 * cache line (next), which at 64 B was most of the TX lcore's time. What
 * the first cache line (read for the length anyway) shows breaking the
 * promise is freed the slow way rather than corrupting the pool.
 */
static void
tx_free(struct gpudma_txq *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mempool *mp;
	void *bulk[GPUDMA_TX_MAX_BURST];
	uint64_t bytes = 0;
	uint16_t i, k = 0;
	bool pinned;

	if (!q->fast_free || n == 0) {
		for (i = 0; i < n; i++) {
			bytes += pkts[i]->pkt_len;
			rte_pktmbuf_free(pkts[i]);
		}
		q->st.bytes += bytes;
		return;
	}
	mp = pkts[0]->pool;
	/* Mbufs of a pinned external buffer pool (GPU memory) keep their
	 * buffer across frees: raw-freeable like direct ones. A clone of
	 * one counts in the buffer's shared info, not in the first line:
	 * there only the offload's promise stands guard. */
	pinned = RTE_MBUF_HAS_PINNED_EXTBUF(pkts[0]);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		bytes += m->pkt_len;
		if (likely(m->pool == mp && m->nb_segs == 1 &&
				rte_mbuf_refcnt_read(m) == 1 &&
				!(m->ol_flags & RTE_MBUF_F_INDIRECT) &&
				(pinned || !(m->ol_flags & RTE_MBUF_F_EXTERNAL))))
			bulk[k++] = m;
		else
			rte_pktmbuf_free(m);
	}
	rte_mempool_put_bulk(mp, bulk, k);
	q->st.bytes += bytes;
}

uint16_t
gpudma_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct gpudma_txq *q = queue;
	uint32_t *off = q->off;
	uint16_t i, start = 0;
	bool ctx = false, gpu = false;
	uint32_t used = 0;
	int len;

	if (q->port->out == NULL) {
		n = RTE_MIN(n, (uint16_t)GPUDMA_TX_MAX_BURST);
		q->st.packets += n;
		tx_free(q, pkts, n);
		return n;
	}
	n = RTE_MIN(n, (uint16_t)GPUDMA_TX_MAX_BURST);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (used + m->pkt_len > q->staging_len ||
				(q->copier.cap > 0 &&
				 q->copier.n + m->nb_segs > q->copier.cap)) {
			flush(q, pkts + start, off, i - start, gpu);
			start = i;
			used = 0;
			gpu = false;
		}
		len = m->pkt_len <= q->staging_len ?
			gather(q, m, used, &ctx, &gpu) : -E2BIG;
		if (len < 0) {
			/* Dropped as a NIC drops a frame it cannot read;
			 * what was gathered before it goes first. */
			flush(q, pkts + start, off, i - start, gpu);
			q->st.errors++;
			rte_pktmbuf_free(m);
			start = i + 1;
			used = 0;
			gpu = false;
			continue;
		}
		off[i - start] = used;
		used += RTE_ALIGN_CEIL((uint32_t)len, 64);
	}
	flush(q, pkts + start, off, i - start, gpu);
	if (ctx)
		gpudma_cuda_leave(q->cuda, "net_gpudma: tx_burst");
	return n;
}
