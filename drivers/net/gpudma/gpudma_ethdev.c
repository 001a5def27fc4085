/* SPDX-License-Identifier: BSD-3-Clause */

/* net_gpudma's ethdev and vdev glue: probe, queues, stats, DMA mappings. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pmd_info.h"
#include "gpudma.h"
#include "rte_pmd_net_gpudma.h"

RTE_LOG_REGISTER(gpudma_logtype, pmd.net.gpudma, NOTICE);

static const struct rte_ether_addr gpudma_mac = {
	.addr_bytes = { 0x02, 0x67, 0x70, 0x75, 0x64, 0x00 } /* local "gpud" */
};

static struct gpudma_port *
port_of(struct rte_eth_dev *dev)
{
	return dev->data->dev_private;
}

/* rx_port's name, for messages. */
static const char *
sub_name(const struct gpudma_port *p)
{
	return rte_eth_devices[p->sub_port].data->name;
}

/*
 * rx_port follows the port's configuration: an RX queue for each of its
 * RX queues (queue q feeds queue q, so that each lcore polls its own and
 * the two never share one), no TX queue (the port transmits to tx_pcap),
 * scattered RX where it has it so that frames longer than its buffers
 * arrive whole.
 */
static int
gpudma_configure(struct rte_eth_dev *dev)
{
	struct gpudma_port *p = port_of(dev);
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	const uint16_t nq = dev->data->nb_rx_queues;
	int ret;

	/* rx_pcap deals its frames over queues= queues at probe: a queue
	 * left unconfigured would hold its share, never received. */
	if (!p->has_sub && p->src.nb_frames > 0 && nq > 0 &&
			nq < p->args.queues) {
		GPUDMA_LOG(ERR, "port %u: %u rx queue(s) configured, but queues=%u deals rx_pcap's frames over %u: configure %u or give queues=%u",
			p->port_id, nq, p->args.queues, p->args.queues,
			p->args.queues, nq);
		return -EINVAL;
	}
	if (!p->has_sub)
		return 0;
	ret = rte_eth_dev_info_get(p->sub_port, &info);
	if (ret != 0)
		return ret;
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	ret = rte_eth_dev_configure(p->sub_port, nq, 0, &conf);
	if (ret != 0)
		GPUDMA_LOG(ERR, "port %u: rx_port %s (port %u): configuring %u rx queues: %s",
			p->port_id, sub_name(p), p->sub_port, nq,
			rte_strerror(-ret));
	return ret;
}

static int
gpudma_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct gpudma_port *p = port_of(dev);

	info->max_mac_addrs = 1;
	info->max_rx_pktlen = GPUDMA_MAX_FRAME;
	info->max_mtu = UINT16_MAX;
	info->min_rx_bufsize = RTE_PKTMBUF_HEADROOM + 64;
	info->max_rx_queues = p->args.queues;
	info->max_tx_queues = p->args.queues;
	/* Frames longer than a buffer always come chained. Buffer split:
	 * up to GPUDMA_MAX_RX_SEGS segments of any pools, by length. */
	info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER |
		RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
	info->rx_queue_offload_capa = info->rx_offload_capa;
	info->rx_seg_capa.max_nseg = GPUDMA_MAX_RX_SEGS;
	info->rx_seg_capa.multi_pools = 1;
	/* Checksums are computed into the staged copy written to tx_pcap
	 * (gpudma_tx.c), as a NIC computes them on the wire. */
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS |
		RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE |
		RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
		RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	info->tx_queue_offload_capa = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	info->rx_desc_lim.nb_max = 32768;
	info->rx_desc_lim.nb_min = 32;
	info->rx_desc_lim.nb_align = 1;
	info->tx_desc_lim = info->rx_desc_lim;
	info->speed_capa = RTE_ETH_LINK_SPEED_100G;
	return 0;
}

struct pool_check {
	struct gpudma_port *port;
	enum gpudma_mem kind;    /* of the first buffer */
	struct gpudma_cuda *cuda; /* its GPU, for GPU memory */
	bool mixed;              /* GPU and host buffers */
	bool two_gpus;           /* buffers of two GPUs */
	uintptr_t bad;           /* first buffer the port cannot reach */
	uintptr_t lo, hi;        /* span of the buffers */
};

static void
check_mbuf(struct rte_mempool *mp, void *opaque, void *obj, unsigned int idx)
{
	struct pool_check *c = opaque;
	struct rte_mbuf *m = obj;
	struct gpudma_cuda *cuda;
	enum gpudma_mem k;

	RTE_SET_USED(mp);
	k = gpudma_mem_kind(&c->port->maps, (uintptr_t)m->buf_addr, m->buf_len,
		&cuda);
	if (k == GPUDMA_MEM_NONE && c->bad == 0)
		c->bad = (uintptr_t)m->buf_addr;
	if (idx == 0 || (uintptr_t)m->buf_addr < c->lo)
		c->lo = (uintptr_t)m->buf_addr;
	if ((uintptr_t)m->buf_addr + m->buf_len > c->hi)
		c->hi = (uintptr_t)m->buf_addr + m->buf_len;
	if (idx == 0) {
		c->kind = k;
		c->cuda = cuda;
	} else if ((k == GPUDMA_MEM_GPU) != (c->kind == GPUDMA_MEM_GPU)) {
		c->mixed = true;
	} else if (cuda != c->cuda) {
		/* No one GPU to fill the pool's buffers. */
		c->two_gpus = true;
	}
}

/* The port's IOMMU: every buffer of the segment's pool must be memory it
 * may write. Sets sg->gpu when the pool is GPU memory, and its span. */
static int
check_pool(struct gpudma_port *p, uint16_t qid, struct gpudma_rx_seg *sg)
{
	struct rte_mempool *mp = sg->mp;
	struct pool_check chk = { .port = p };

	rte_mempool_obj_iter(mp, check_mbuf, &chk);
	if (chk.bad != 0) {
		GPUDMA_LOG(ERR, "port %u rx queue %u: mempool %s has buffers (%#" PRIxPTR ") in %s: register it with rte_extmem_register and map it with rte_dev_dma_map first",
			p->port_id, qid, mp->name, chk.bad,
			gpudma_mem_name(GPUDMA_MEM_NONE));
		return -EFAULT;
	}
	if (chk.mixed) {
		GPUDMA_LOG(ERR, "port %u rx queue %u: mempool %s mixes GPU and host buffers",
			p->port_id, qid, mp->name);
		return -EINVAL;
	}
	if (chk.two_gpus) {
		GPUDMA_LOG(ERR, "port %u rx queue %u: mempool %s has buffers in the memory of two GPUs: one GPU fills a queue, put the pool on one",
			p->port_id, qid, mp->name);
		return -EINVAL;
	}
	sg->gpu = chk.kind == GPUDMA_MEM_GPU;
	sg->cuda = chk.cuda;
	/* EAL memory is never unmapped: no span to guard. */
	sg->lo = chk.kind == GPUDMA_MEM_EAL ? 0 : chk.lo;
	sg->hi = chk.kind == GPUDMA_MEM_EAL ? 0 : chk.hi;
	if (sg->gpu)
		GPUDMA_LOG(INFO, "port %u rx queue %u: pool %s in %s of GPU %d",
			p->port_id, qid, mp->name, gpudma_mem_name(chk.kind),
			sg->cuda->ordinal);
	else
		GPUDMA_LOG(INFO, "port %u rx queue %u: pool %s in %s",
			p->port_id, qid, mp->name, gpudma_mem_name(chk.kind));
	return 0;
}

static int
gpudma_start(struct rte_eth_dev *dev)
{
	struct gpudma_port *p = port_of(dev);
	uint16_t i, j;
	int ret;

	/* Mappings may have gone since queue setup. */
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct gpudma_rxq *q = p->rxq[i];
		struct gpudma_cuda *cuda;
		bool gpu;

		for (j = 0; q != NULL && j < q->nb_seg; j++) {
			gpu = q->seg[j].gpu;
			cuda = q->seg[j].cuda;
			ret = check_pool(p, i, &q->seg[j]);
			if (ret == 0 && (q->seg[j].gpu != gpu ||
					q->seg[j].cuda != cuda)) {
				GPUDMA_LOG(ERR, "port %u rx queue %u: pool %s changed memory kind or GPU since setup",
					p->port_id, i, q->seg[j].mp->name);
				q->seg[j].gpu = gpu;
				q->seg[j].cuda = cuda;
				ret = -EINVAL;
			}
			if (ret != 0)
				return ret;
		}
	}
	if (p->has_sub) {
		ret = rte_eth_dev_start(p->sub_port);
		if (ret != 0) {
			GPUDMA_LOG(ERR, "port %u: rx_port %s (port %u) does not start: %s",
				p->port_id, sub_name(p), p->sub_port,
				rte_strerror(-ret));
			return ret;
		}
	}
	p->started = true;

	dev->data->dev_link.link_status = RTE_ETH_LINK_UP;
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	return 0;
}

static int
gpudma_stop(struct rte_eth_dev *dev)
{
	struct gpudma_port *p = port_of(dev);
	uint16_t i;

	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	p->started = false;
	/* Nothing more arrives from rx_port; what it handed over and is not
	 * yet posted goes back with the ring below. */
	if (p->has_sub && rte_eth_dev_stop(p->sub_port) != 0)
		GPUDMA_LOG(ERR, "port %u: rx_port %s (port %u) does not stop",
			p->port_id, sub_name(p), p->sub_port);
	/* A stopped port holds no buffer: posted descriptors go back. */
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		if (p->rxq[i] != NULL)
			gpudma_rxq_drain(p->rxq[i]);
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

static int
gpudma_link_update(struct rte_eth_dev *dev, int wait)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wait);
	return 0;
}

/*
 * The queue's segments: one pool, or RX buffer split's list. As in
 * ethdev's rules, the first buffer's data starts after the headroom and
 * the others' at the start of the buffer; a length of 0 is the rest of
 * the buffer, and the last segment repeats for what the others leave.
 */
static int
rx_segs(struct gpudma_port *p, uint16_t qid, struct rte_mempool *mp,
		const struct rte_eth_rxconf *conf, struct gpudma_rxq *q)
{
	uint16_t i, n = mp != NULL ? 1 : (conf != NULL ? conf->rx_nseg : 0);
	int ret;

	if (n == 0 || n > GPUDMA_MAX_RX_SEGS) {
		GPUDMA_LOG(ERR, "port %u rx queue %u: a mempool, or 1 to %u buffer-split segments, is needed",
			p->port_id, qid, GPUDMA_MAX_RX_SEGS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct rte_eth_rxseg_split *sp =
			mp != NULL ? NULL : &conf->rx_seg[i].split;
		struct rte_mempool *pool = mp != NULL ? mp : sp->mp;
		uint32_t room = rte_pktmbuf_data_room_size(pool);
		uint32_t off = i == 0 ? RTE_PKTMBUF_HEADROOM : 0;
		uint32_t len = sp != NULL ? sp->length : 0;

		if (sp != NULL && (sp->offset != 0 || sp->proto_hdr != 0)) {
			GPUDMA_LOG(ERR, "port %u rx queue %u: split segment %u: offsets and protocol splits are not supported",
				p->port_id, qid, i);
			return -ENOTSUP;
		}
		if (room <= off || len > room - off) {
			GPUDMA_LOG(ERR, "port %u rx queue %u: segment %u: %u bytes do not fit pool %s's buffers",
				p->port_id, qid, i, len, pool->name);
			return -EINVAL;
		}
		q->seg[i] = (struct gpudma_rx_seg){ .mp = pool,
			.off = (uint16_t)off, .len = len != 0 ? len : room - off,
			.ol_flags = (rte_pktmbuf_priv_flags(pool) &
				RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) != 0 ?
				RTE_MBUF_F_EXTERNAL : 0 };
		ret = check_pool(p, qid, &q->seg[i]);
		if (ret != 0)
			return ret;
		/* One GPU fills the queue: its GPU segments' (a NIC next to
		 * each GPU, none writing another GPU's memory). */
		if (q->seg[i].gpu && q->cuda != NULL &&
				q->seg[i].cuda != q->cuda) {
			GPUDMA_LOG(ERR, "port %u rx queue %u: segments in GPU %d's and GPU %d's memory: one GPU fills a queue, put its pools on one",
				p->port_id, qid, q->cuda->ordinal,
				q->seg[i].cuda->ordinal);
			return -EINVAL;
		}
		if (q->seg[i].gpu)
			q->cuda = q->seg[i].cuda;
		q->gpu |= q->seg[i].gpu;
	}
	q->nb_seg = n;
	/* At least 64 bytes a buffer bounds a frame's chain. */
	if (q->seg[n - 1].len < 64) {
		GPUDMA_LOG(ERR, "port %u rx queue %u: the last segment takes %u bytes a buffer, fewer than 64",
			p->port_id, qid, q->seg[n - 1].len);
		return -EINVAL;
	}
	return 0;
}

static void
rxq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct gpudma_port *p = port_of(dev);
	struct gpudma_rxq *q = p->rxq[qid];

	if (q == NULL)
		return;
	gpudma_rxq_fini(q);
	rte_free(q);
	p->rxq[qid] = NULL;
	dev->data->rx_queues[qid] = NULL;
}

/*
 * rx_port's queue qid, receiving into a pool of host memory of its own
 * (a real NIC fills a ring of its own buffers; net_ring hands over the
 * producer's mbufs and never uses it), kept until rx_port is closed since
 * its queue may hold the pool's buffers until then.
 */
static int
sub_rxq_setup(struct gpudma_port *p, uint16_t qid, uint16_t nb_desc,
		unsigned int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_eth_dev_info info;
	int ret;

	/* As many descriptors as this queue's, within what it takes. */
	ret = rte_eth_dev_info_get(p->sub_port, &info);
	if (ret != 0)
		return ret;
	if (info.rx_desc_lim.nb_max != 0 && nb_desc > info.rx_desc_lim.nb_max)
		nb_desc = info.rx_desc_lim.nb_max;
	if (nb_desc < info.rx_desc_lim.nb_min)
		nb_desc = info.rx_desc_lim.nb_min;
	if (p->sub_mp[qid] == NULL) {
		snprintf(name, sizeof(name), "gpudma%u_sub%u", p->port_id, qid);
		/* Its ring, the frames being staged and the caches' slack. */
		p->sub_mp[qid] = rte_pktmbuf_pool_create(name,
			2u * rte_align32pow2(nb_desc) + 2u * GPUDMA_SUB_BURST + 1024u,
			256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)socket);
		if (p->sub_mp[qid] == NULL) {
			GPUDMA_LOG(ERR, "port %u rx queue %u: rx_port's pool %s: %s",
				p->port_id, qid, name, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	ret = rte_eth_rx_queue_setup(p->sub_port, qid, nb_desc, socket, NULL,
		p->sub_mp[qid]);
	if (ret != 0)
		GPUDMA_LOG(ERR, "port %u rx queue %u: rx_port %s (port %u) rx queue %u: %s",
			p->port_id, qid, sub_name(p), p->sub_port, qid,
			rte_strerror(-ret));
	return ret;
}

static int
gpudma_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		unsigned int socket, const struct rte_eth_rxconf *conf,
		struct rte_mempool *mp)
{
	struct gpudma_port *p = port_of(dev);
	struct gpudma_rxq *q;
	int ret;

	rxq_release(dev, qid);
	if (p->has_sub) {
		ret = sub_rxq_setup(p, qid, nb_desc, socket);
		if (ret != 0)
			return ret;
	}
	q = rte_zmalloc_socket("gpudma_rxq", sizeof(*q), RTE_CACHE_LINE_SIZE,
		socket);
	if (q == NULL)
		return -ENOMEM;
	ret = rx_segs(p, qid, mp, conf, q);
	if (ret == 0)
		ret = gpudma_rxq_init(p, q, qid, nb_desc, (int)socket);
	if (ret != 0) {
		rte_free(q);
		return ret;
	}
	if (q->gpu)
		GPUDMA_LOG(INFO, "port %u rx queue %u: %u descriptors, %u segment(s), filled by GPU %d (its pool's memory) by %s",
			p->port_id, qid, q->ring_size, q->nb_seg,
			q->cuda->ordinal, q->cuda->scatter == NULL ?
			"copy-engine copies" : q->copier.ring != NULL ?
			"the persistent fill kernel (fill=persistent)" :
			"the scatter kernel");
	else
		GPUDMA_LOG(INFO, "port %u rx queue %u: %u descriptors, %u segment(s), filled by memcpy (host memory)",
			p->port_id, qid, q->ring_size, q->nb_seg);
	p->rxq[qid] = q;
	dev->data->rx_queues[qid] = q;
	return 0;
}

static void
gpudma_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	rxq_release(dev, qid);
}

static void
txq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct gpudma_port *p = port_of(dev);
	struct gpudma_txq *q = p->txq[qid];

	if (q == NULL)
		return;
	gpudma_txq_fini(q);
	rte_free(q);
	p->txq[qid] = NULL;
	dev->data->tx_queues[qid] = NULL;
}

static int
gpudma_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct gpudma_port *p = port_of(dev);
	struct gpudma_txq *q;
	int ret;

	RTE_SET_USED(nb_desc);
	txq_release(dev, qid);
	q = rte_zmalloc_socket("gpudma_txq", sizeof(*q), RTE_CACHE_LINE_SIZE,
		socket);
	if (q == NULL)
		return -ENOMEM;
	ret = gpudma_txq_init(p, q, qid);
	if (ret != 0) {
		GPUDMA_LOG(ERR, "port %u tx queue %u: %s", p->port_id, qid,
			strerror(-ret));
		rte_free(q);
		return ret;
	}
	/* ethdev passes only the offloads this queue adds to the port's. */
	q->fast_free = ((conf != NULL ? conf->offloads : 0) |
		dev->data->dev_conf.txmode.offloads) &
		RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	p->txq[qid] = q;
	dev->data->tx_queues[qid] = q;
	return 0;
}

static void
gpudma_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	txq_release(dev, qid);
}

static int
gpudma_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *st)
{
	struct gpudma_port *p = port_of(dev);
	uint16_t i;

	/* Counters of other lcores' queues read without a lock: each is a
	 * 64-bit word written by one thread, so a read sees an old or a new
	 * value, never a torn one. */
	for (i = 0; i < GPUDMA_MAX_QUEUES; i++) {
		const struct gpudma_rxq *r = p->rxq[i];
		const struct gpudma_txq *t = p->txq[i];

		if (r != NULL) {
			st->ipackets += r->st.packets;
			st->ibytes += r->st.bytes;
			st->imissed += r->st.missed;
			st->ierrors += r->st.errors;
			if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
				st->q_ipackets[i] = r->st.packets;
				st->q_ibytes[i] = r->st.bytes;
				st->q_errors[i] = r->st.errors;
			}
		}
		if (t != NULL) {
			st->opackets += t->st.packets;
			st->obytes += t->st.bytes;
			st->oerrors += t->st.errors;
			if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
				st->q_opackets[i] = t->st.packets;
				st->q_obytes[i] = t->st.bytes;
			}
		}
	}
	return 0;
}

static int
gpudma_stats_reset(struct rte_eth_dev *dev)
{
	struct gpudma_port *p = port_of(dev);
	uint16_t i;

	for (i = 0; i < GPUDMA_MAX_QUEUES; i++) {
		if (p->rxq[i] != NULL)
			memset(&p->rxq[i]->st, 0, sizeof(p->rxq[i]->st));
		if (p->txq[i] != NULL)
			memset(&p->txq[i]->st, 0, sizeof(p->txq[i]->st));
	}
	return 0;
}

/* The extended counters: what the copy engine (or memcpy) moved. */
static const struct {
	const char *name;
	bool rx;
	size_t off;
} xstats[] = {
	{ "rx_copy_batches", true, offsetof(struct gpudma_queue_stats, copy_batches) },
	{ "rx_copy_ops", true, offsetof(struct gpudma_queue_stats, copy_ops) },
	{ "rx_copy_bytes", true, offsetof(struct gpudma_queue_stats, copy_bytes) },
	{ "rx_bulk_batches", true, offsetof(struct gpudma_queue_stats, bulk_batches) },
	{ "rx_fill_launches", true, offsetof(struct gpudma_queue_stats, fill_launches) },
	{ "tx_copy_batches", false, offsetof(struct gpudma_queue_stats, copy_batches) },
	{ "tx_copy_ops", false, offsetof(struct gpudma_queue_stats, copy_ops) },
	{ "tx_copy_bytes", false, offsetof(struct gpudma_queue_stats, copy_bytes) },
};

static int
gpudma_xstats_get_names(struct rte_eth_dev *dev,
		struct rte_eth_xstat_name *names, unsigned int size)
{
	unsigned int i;

	RTE_SET_USED(dev);
	if (names != NULL && size >= RTE_DIM(xstats))
		for (i = 0; i < RTE_DIM(xstats); i++)
			snprintf(names[i].name, sizeof(names[i].name), "%s",
				xstats[i].name);
	return RTE_DIM(xstats);
}

static int
gpudma_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *out,
		unsigned int n)
{
	struct gpudma_port *p = port_of(dev);
	unsigned int i, q;

	if (out == NULL || n < RTE_DIM(xstats))
		return RTE_DIM(xstats);
	for (i = 0; i < RTE_DIM(xstats); i++) {
		uint64_t v = 0;

		for (q = 0; q < GPUDMA_MAX_QUEUES; q++) {
			const struct gpudma_queue_stats *st =
				xstats[i].rx ?
				(p->rxq[q] != NULL ? &p->rxq[q]->st : NULL) :
				(p->txq[q] != NULL ? &p->txq[q]->st : NULL);

			if (st != NULL)
				v += *(const uint64_t *)((const char *)st +
					xstats[i].off);
		}
		out[i].id = i;
		out[i].value = v;
	}
	return RTE_DIM(xstats);
}

/* Gives rx_port back: closed when this port closes (it was taken over
 * whole: nobody else configured it), untouched when the probe failed. */
static void
sub_give_back(struct gpudma_port *p, bool close)
{
	uint16_t q;

	if (!p->has_sub)
		return;
	if (rte_eth_dev_owner_unset(p->sub_port, p->owner) != 0)
		GPUDMA_LOG(ERR, "port %u: rx_port (port %u): ownership not given back",
			p->port_id, p->sub_port);
	else if (close && (rte_eth_dev_stop(p->sub_port) != 0 ||
			rte_eth_dev_close(p->sub_port) != 0))
		GPUDMA_LOG(ERR, "port %u: rx_port (port %u) does not close",
			p->port_id, p->sub_port);
	/* After the close: its queues held their buffers until then. */
	for (q = 0; q < GPUDMA_MAX_QUEUES; q++) {
		rte_mempool_free(p->sub_mp[q]);
		p->sub_mp[q] = NULL;
	}
	p->has_sub = false;
}

static void
port_free(struct gpudma_port *p, bool close_sub)
{
	unsigned int i;

	sub_give_back(p, close_sub);
	gpudma_pcap_out_close(p->out);
	p->out = NULL;
	if (p->store_gpu != NULL &&
			gpudma_cuda_unpin(p->store_gpu, p->src.data) != 0)
		GPUDMA_LOG(ERR, "the frame store stays page-locked");
	p->store_gpu = NULL;
	gpudma_source_free(&p->src);
	for (i = 0; i < p->nb_gpus; i++)
		gpudma_cuda_close(&p->gpus[i]);
	p->nb_gpus = 0;
}

static int
gpudma_close(struct rte_eth_dev *dev)
{
	uint16_t i;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		rxq_release(dev, i);
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		txq_release(dev, i);
	port_free(port_of(dev), true);
	/* ethdev frees mac_addrs with the port's data. */
	return 0;
}

static const struct eth_dev_ops gpudma_ops = {
	.dev_configure = gpudma_configure,
	.dev_infos_get = gpudma_infos_get,
	.dev_start = gpudma_start,
	.dev_stop = gpudma_stop,
	.dev_close = gpudma_close,
	.link_update = gpudma_link_update,
	.rx_queue_setup = gpudma_rx_queue_setup,
	.rx_queue_release = gpudma_rx_queue_release,
	.tx_queue_setup = gpudma_tx_queue_setup,
	.tx_queue_release = gpudma_tx_queue_release,
	.stats_get = gpudma_stats_get,
	.stats_reset = gpudma_stats_reset,
	.xstats_get = gpudma_xstats_get,
	.xstats_get_names = gpudma_xstats_get_names,
	.xstats_reset = gpudma_stats_reset,
};

/*
 * rx_port=: the port named (an id or a name) becomes this port's wire. It
 * is taken over through ethdev's ownership, as failsafe and bonding take
 * theirs, so that applications iterating ports skip it and a second user
 * is refused; refused here, naming the key: an unknown port, this port,
 * a port someone owns already, one with fewer RX queues than queues=.
 */
static int
sub_take(struct gpudma_port *p, const char *self)
{
	const char *arg = p->args.rx_port;
	struct rte_eth_dev_owner cur, me = { 0 };
	struct rte_eth_dev_info info;
	uint16_t id;
	char *end;
	unsigned long v;
	int ret;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (arg[0] >= '0' && arg[0] <= '9' && *end == '\0' && errno == 0 &&
			v < RTE_MAX_ETHPORTS)
		id = (uint16_t)v;
	else if (rte_eth_dev_get_port_by_name(arg, &id) != 0)
		id = RTE_MAX_ETHPORTS;
	if (strcmp(arg, self) == 0 || id == p->port_id) {
		GPUDMA_LOG(ERR, "devarg rx_port: %s is this port itself", arg);
		return -EINVAL;
	}
	if (id == RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(id)) {
		GPUDMA_LOG(ERR, "devarg rx_port: no port %s (create it first: its --vdev before this one)",
			arg);
		return -ENODEV;
	}
	ret = rte_eth_dev_owner_get(id, &cur);
	if (ret == 0 && cur.id != RTE_ETH_DEV_NO_OWNER) {
		GPUDMA_LOG(ERR, "devarg rx_port: port %s (%u) is owned by %s already",
			arg, id, cur.name);
		return -EBUSY;
	}
	ret = rte_eth_dev_info_get(id, &info);
	if (ret == 0 && info.max_rx_queues < p->args.queues) {
		GPUDMA_LOG(ERR, "devarg rx_port: port %s (%u) has %u rx queues, queues=%u needs one each",
			arg, id, info.max_rx_queues, p->args.queues);
		return -EINVAL;
	}
	if (ret == 0)
		ret = rte_eth_dev_owner_new(&me.id);
	if (ret == 0) {
		snprintf(me.name, sizeof(me.name), "%s", self);
		ret = rte_eth_dev_owner_set(id, &me);
	}
	if (ret != 0) {
		GPUDMA_LOG(ERR, "devarg rx_port: port %s (%u) cannot be taken over: %s",
			arg, id, rte_strerror(-ret));
		return ret;
	}
	p->has_sub = true;
	p->sub_port = id;
	p->owner = me.id;
	GPUDMA_LOG(INFO, "%s: frames from port %u (%s), now owned by this port",
		self, id, rte_eth_devices[id].data->name);
	return 0;
}

static int
gpudma_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *dev;
	struct gpudma_port *p;
	struct gpudma_args args;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		GPUDMA_LOG(ERR, "%s: secondary processes are not supported", name);
		return -ENOTSUP;
	}
	ret = gpudma_args_parse(rte_vdev_device_args(vdev), &args);
	if (ret != 0) {
		GPUDMA_LOG(ERR, "%s: bad devargs, port not created", name);
		return ret;
	}
	dev = rte_eth_vdev_allocate(vdev, sizeof(*p));
	if (dev == NULL) {
		GPUDMA_LOG(ERR, "%s: cannot allocate the ethdev port", name);
		return -ENOMEM;
	}
	p = dev->data->dev_private;
	p->args = args;
	p->port_id = dev->data->port_id;
	gpudma_map_init(&p->maps);
	if (args.rx_port[0] != '\0') {
		ret = sub_take(p, name);
		if (ret != 0)
			goto fail;
	}
	if (args.rx_pcap[0] != '\0') {
		ret = gpudma_source_load(&p->src, args.rx_pcap, args.loop);
		if (ret == 0)
			ret = gpudma_source_group(&p->src, args.queues);
		if (ret != 0)
			goto fail;
	}
	if (args.tx_pcap[0] != '\0') {
		ret = gpudma_pcap_out_open(&p->out, args.tx_pcap);
		if (ret != 0)
			goto fail;
	}
	dev->data->mac_addrs = rte_zmalloc("gpudma_mac", sizeof(gpudma_mac), 0);
	if (dev->data->mac_addrs == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	rte_ether_addr_copy(&gpudma_mac, dev->data->mac_addrs);
	dev->data->mac_addrs->addr_bytes[5] = (uint8_t)p->port_id;
	dev->data->dev_link = (struct rte_eth_link){
		.link_speed = RTE_ETH_SPEED_NUM_100G,
		.link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_autoneg = RTE_ETH_LINK_FIXED,
	};
	dev->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	dev->dev_ops = &gpudma_ops;
	dev->rx_pkt_burst = gpudma_rx_burst;
	dev->tx_pkt_burst = gpudma_tx_burst;
	rte_eth_dev_probing_finish(dev);
	GPUDMA_LOG(INFO, "%s: port %u, %u frames from %s%s, %s", name,
		p->port_id, p->src.nb_frames,
		args.rx_pcap[0] != '\0' ? args.rx_pcap :
		args.rx_port[0] != '\0' ? "(all of) port " : "nowhere",
		args.rx_port,
		args.tx_pcap[0] != '\0' ? "transmits to a pcap file" :
		"transmit counts and drops");
	return 0;
fail:
	port_free(p, false);
	rte_eth_dev_release_port(dev);
	return ret;
}

static int
gpudma_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev;

	dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	if (dev == NULL)
		return 0;         /* closed already */
	gpudma_close(dev);
	return rte_eth_dev_release_port(dev);
}

static struct gpudma_port *
port_of_vdev(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev;

	dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));
	return dev != NULL ? dev->data->dev_private : NULL;
}

/*
 * The port's handle on GPU ordinal: the context, stream source and kernel
 * of the queues whose buffers are in that GPU's memory, opened at the
 * first mapping of its memory (the GPU of gpu= at the first mapping of
 * any memory: it is the one asked whose memory a mapping is).
 */
static int
port_gpu(struct gpudma_port *p, int ordinal, struct gpudma_cuda **out)
{
	unsigned int i;
	int ret;

	for (i = 0; i < p->nb_gpus; i++) {
		if (p->gpus[i].ordinal == ordinal) {
			*out = &p->gpus[i];
			return 0;
		}
	}
	if (p->nb_gpus == GPUDMA_MAX_GPUS) {
		GPUDMA_LOG(ERR, "port %u: memory of GPU %d: the port fills from %u GPUs already, its most",
			p->port_id, ordinal, GPUDMA_MAX_GPUS);
		return -ENOSPC;
	}
	ret = gpudma_cuda_open(&p->gpus[p->nb_gpus], ordinal, p->args.batch);
	if (ret != 0)
		return ret;
	*out = &p->gpus[p->nb_gpus++];
	return 0;
}

/*
 * GPU memory of GPU c mapped: c made ready to fill it (its scatter kernel
 * loaded unless scatter=0, the frame store pinned, or mapped for c where
 * another of the port's GPUs pinned it). Before the frame store is pinned
 * or mapped: the kernel reads it through the GPU mapping that makes.
 */
static int
gpu_ready(struct gpudma_port *p, struct gpudma_cuda *c)
{
	int ret;

	if (p->args.scatter) {
		ret = gpudma_cuda_load_scatter(c);
		if (ret != 0)
			return ret;
	}
	if (p->src.data == NULL || c->store_dev != 0)
		return 0;
	if (p->store_gpu != NULL)
		return gpudma_cuda_map_store(c, p->src.data);
	ret = gpudma_cuda_pin_store(c, p->src.data, p->src.data_len);
	if (ret == 0)
		p->store_gpu = c;
	return ret;
}

/*
 * rte_dev_dma_map: the memory becomes reachable by the port. GPU memory
 * brings up the GPU that holds it (gpu_ready), which fills (RX) and
 * drains (TX) the queues whose buffers are there: a port that never sees
 * GPU memory never loads the kernel, and without a CUDA driver never
 * touches CUDA.
 */
static int
gpudma_dma_map(struct rte_vdev_device *vdev, void *addr, uint64_t iova,
		size_t len)
{
	struct gpudma_port *p = port_of_vdev(vdev);
	struct gpudma_cuda *c = NULL;
	int ordinal = -1;
	int ret;

	if (p == NULL) {
		ret = -ENODEV;
		goto out;
	}
	/* Without a CUDA driver there is no GPU memory: the mapping is host
	 * memory. With one, a GPU that cannot be opened fails the mapping:
	 * memcpy into what may be GPU memory would fault. */
	if (p->nb_gpus == 0 && gpudma_cuda_present()) {
		ret = port_gpu(p, p->args.gpu, &c);
		if (ret != 0)
			goto out;
	}
	if (p->nb_gpus > 0) {
		ret = gpudma_cuda_mem_gpu(&p->gpus[0], (uintptr_t)addr,
			&ordinal);
		if (ret != 0)
			goto out;
	}
	c = NULL;
	if (ordinal >= 0) {
		ret = port_gpu(p, ordinal, &c);
		if (ret == 0)
			ret = gpu_ready(p, c);
		if (ret != 0)
			goto out;
	}
	ret = gpudma_map_add(&p->maps, (uintptr_t)addr, iova, len, c);
	if (ret == -EEXIST)
		GPUDMA_LOG(ERR, "port %u: [%p, +%zu) overlaps a mapping", p->port_id,
			addr, len);
	else if (ret == -ENOSPC)
		GPUDMA_LOG(ERR, "port %u: more than %u DMA mappings", p->port_id,
			GPUDMA_MAX_MAPS);
	else if (c != NULL)
		GPUDMA_LOG(INFO, "port %u: DMA map [%p, +%zu) (GPU %d's memory: GPU %d fills and drains the queues whose buffers are there)",
			p->port_id, addr, len, ordinal, ordinal);
	else
		GPUDMA_LOG(INFO, "port %u: DMA map [%p, +%zu) (host memory)",
			p->port_id, addr, len);
out:
	if (ret != 0) {
		rte_errno = -ret;
		return -1;
	}
	return 0;
}

static int
gpudma_dma_unmap(struct rte_vdev_device *vdev, void *addr, uint64_t iova,
		size_t len)
{
	struct gpudma_port *p = port_of_vdev(vdev);
	unsigned int i;
	int ret = 0;

	RTE_SET_USED(iova);
	if (p == NULL) {
		ret = -ENODEV;
		goto out;
	}
	for (i = 0; i < GPUDMA_MAX_QUEUES; i++) {
		const struct gpudma_rxq *q = p->rxq[i];
		unsigned int j;

		if (q != NULL && gpudma_rxq_uses(p->rxq[i], (uintptr_t)addr, len)) {
			GPUDMA_LOG(ERR, "port %u: cannot unmap [%p, +%zu): rx queue %u has descriptors posted in it (stop the port first)",
				p->port_id, addr, len, i);
			ret = -EBUSY;
			goto out;
		}
		/* A started queue posts from its pools at any poll. */
		for (j = 0; q != NULL && p->started && j < q->nb_seg; j++) {
			if (q->seg[j].lo < (uintptr_t)addr + len &&
					(uintptr_t)addr < q->seg[j].hi) {
				GPUDMA_LOG(ERR, "port %u: cannot unmap [%p, +%zu): started rx queue %u takes buffers from pool %s there (stop the port first)",
					p->port_id, addr, len, i,
					q->seg[j].mp->name);
				ret = -EBUSY;
				goto out;
			}
		}
	}
	ret = gpudma_map_remove(&p->maps, (uintptr_t)addr, len);
	if (ret != 0)
		GPUDMA_LOG(ERR, "port %u: [%p, +%zu) was not mapped", p->port_id,
			addr, len);
out:
	if (ret != 0) {
		rte_errno = -ret;
		return -1;
	}
	return 0;
}

int
rte_pmd_gpudma_is_port(uint16_t port_id)
{
	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	return rte_eth_devices[port_id].dev_ops == &gpudma_ops;
}

static struct rte_vdev_driver gpudma_driver = {
	.probe = gpudma_probe,
	.remove = gpudma_remove,
	.dma_map = gpudma_dma_map,
	.dma_unmap = gpudma_dma_unmap,
};

RTE_PMD_REGISTER_VDEV(net_gpudma, gpudma_driver);
#define GPUDMA_PARAMS "rx_pcap=<file> rx_port=<port id or name> " \
	"tx_pcap=<file> loop=<n, 0 forever> queues=<1-16> gpu=<CUDA ordinal> " \
	"batch=<0|1|auto> scatter=<0|1, default 1> bulk=<0|1|auto> " \
	"fill=<launch|persistent, default launch> " \
	"fill_idle_us=<1-10000000, default 1000>"
RTE_PMD_REGISTER_PARAM_STRING(net_gpudma, GPUDMA_PARAMS);
/* A virtual device: no PCI IDs; CUDA is reached through its library. */
GPU_PMD_INFO(net_gpudma, GPUDMA_PARAMS, "", "[]");
