/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_H
#define GPUDMA_H

/*
 * net_gpudma: a software Ethernet port that behaves like a NIC owning DMA
 * descriptors. Receive buffers are posted from the queue's mempool and
 * filled asynchronously (by the GPU's copy engine when the mbuf data lives
 * in GPU memory, by memcpy otherwise); rx_burst hands back only buffers
 * whose fill has completed, in order. See doc/net_gpudma.md.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>
#include <rte_spinlock.h>

#include "gpudma_copy.h"
#include "gpudma_devargs.h"
#include "gpudma_dma_map.h"
#include "gpudma_source.h"

extern int gpudma_logtype;

#define GPUDMA_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, gpudma_logtype, \
		"net_gpudma: " fmt "\n", ## __VA_ARGS__)

#define GPUDMA_MAX_QUEUES 16
/* GPUs one port fills and drains through (a queue each at most, and the
 * GPU of gpu=). */
#define GPUDMA_MAX_GPUS 16
/* Batches a queue keeps in flight: deep enough that the copy engine works
 * on one while rx_burst hands out another. */
#define GPUDMA_MAX_BATCHES GPUDMA_COPY_MAX_SLOTS
/* Frames taken from rx_port's queue a call. */
#define GPUDMA_SUB_BURST 64u
/* Buffers a queue takes from its pool at a time (one pool, no split). */
#define GPUDMA_STASH 64u
/* Polls of a fill's completion word between two cuEventQuery calls on
 * it, which alone would report the fill failed (the word is then never
 * written): a few ms at rx_burst's pace, and no driver call otherwise. */
#define GPUDMA_STALL_CHECK 4096u
/* Frames one tx_burst call takes; the caller retries the rest. */
#define GPUDMA_TX_MAX_BURST 512u

struct gpudma_port;

/* One burst's worth of posted descriptors, filled by one batch of copies. */
struct gpudma_batch {
	uint32_t end;           /* ring index one past its last descriptor */
	uint64_t stage_end;     /* rx_port: staging bytes it used end here */
	bool done;              /* fill completed (event seen, or memcpy) */
	bool failed;            /* fill failed: its buffers are dropped */
	uint32_t seq;           /* its number for the completion word */
	struct gpudma_event ev; /* completion of the copy engine's fill */
};

struct gpudma_queue_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t missed;        /* RX: no buffer in the pool for a frame */
	uint64_t errors;
	uint64_t copy_batches;  /* bursts moved by the copy engine */
	uint64_t copy_ops;      /* segments those bursts copied */
	uint64_t copy_bytes;
	uint64_t bulk_batches;  /* RX bursts crossing PCIe as bulk copies */
	uint64_t fill_launches; /* RX: launches of the persistent fill kernel */
};

/*
 * Where a received frame's bytes go: buffer i of a chain comes from
 * seg[i] (the last one repeating), as RX buffer split configures it; one
 * segment without split.
 */
struct gpudma_rx_seg {
	struct rte_mempool *mp;
	uint16_t off;           /* where the data starts in the buffer */
	uint32_t len;           /* bytes one buffer of this segment takes */
	bool gpu;               /* the pool's buffers are GPU memory */
	struct gpudma_cuda *cuda; /* and the GPU whose memory they are */
	uintptr_t lo, hi;       /* span of the pool's buffers */
	/* ol_flags of a buffer of the pool as rte_pktmbuf_reset leaves it:
	 * RTE_MBUF_F_EXTERNAL for pinned external buffers (GPU memory). */
	uint64_t ol_flags;
};

#define GPUDMA_MAX_RX_SEGS 4

struct gpudma_rxq {
	struct gpudma_port *port;
	uint16_t qid;
	struct gpudma_rx_seg seg[GPUDMA_MAX_RX_SEGS];
	uint16_t nb_seg;
	bool gpu;               /* a segment in GPU memory: copy engine */
	/* The queue's GPU, whose memory its GPU segments are in: its
	 * context, stream and kernel fill them (NULL: host memory only). */
	struct gpudma_cuda *cuda;
	/*
	 * Descriptor ring: heads of posted chains in the order their frames
	 * arrived. [tail, head) are posted; batches[] say up to where each
	 * fill has completed. Only rx_burst and the unmap check touch it,
	 * both under lock.
	 */
	rte_spinlock_t lock;
	struct rte_mbuf **ring;
	uint32_t ring_size;     /* power of two */
	uint32_t head, tail;
	struct gpudma_batch batches[GPUDMA_MAX_BATCHES];
	uint32_t b_head, b_tail;
	/* Descriptors one batch posts at most, and the free run the ring
	 * waits for before posting again (as a NIC driver refills its ring
	 * in runs): one fill covers hundreds of frames. */
	uint32_t post_max;
	uint32_t fill_seq;      /* the last batch's seq */
	/* Polls that found the oldest fill's word not yet written: now and
	 * then the event is asked, which alone reports a fill that failed. */
	uint32_t stalls;
	bool in_ctx;            /* rx_burst made the context current */
	struct gpudma_copier copier;
	struct gpudma_cursor cursor;
	/* Buffers taken from a single pool ahead, in bulk. */
	struct rte_mbuf *stash[GPUDMA_STASH];
	uint32_t nb_stash;
	/*
	 * rx_port: frames received from the sub-port's queue not yet posted
	 * ([sub_i, sub_n); [sub_f, sub_i) posted, their mbufs not yet
	 * freed), and the staging ring their bytes are copied into for the
	 * fill: [s_tail, s_head) holds the bytes of batches not yet retired.
	 * Pinned (and mapped for the scatter kernel) when the queue fills
	 * GPU memory.
	 */
	struct rte_mbuf *sub[GPUDMA_SUB_BURST];
	uint16_t sub_f, sub_i, sub_n;
	uint8_t *stage;
	size_t stage_len;
	uint64_t s_head, s_tail;
	bool stage_pinned;
	uint64_t stage_dev;     /* the staging ring as the GPU addresses it */
	struct gpudma_queue_stats st;
};

struct gpudma_txq {
	struct gpudma_port *port;
	uint16_t qid;
	/* The queue's GPU: the one whose memory its first GPU segment was
	 * in; set then, with the copier. */
	struct gpudma_cuda *cuda;
	bool other_gpu_said;    /* a frame in another GPU's memory logged */
	struct gpudma_copier copier;  /* set up at the first GPU segment */
	struct gpudma_event event;
	uint8_t *staging;       /* frames gathered for tx_pcap */
	size_t staging_len;
	bool pinned;            /* staging page-locked for the copy engine */
	bool fast_free;         /* RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE */
	uint32_t off[GPUDMA_TX_MAX_BURST]; /* frames' places in staging */
	struct gpudma_queue_stats st;
};

struct gpudma_port {
	struct gpudma_args args;
	uint16_t port_id;
	struct gpudma_source src;
	struct gpudma_map_table maps;
	/* The GPUs the port fills and drains through, opened at the first
	 * DMA mapping (gpus[0]: gpu=, the default and the one that asks CUDA
	 * whose memory a mapping is) and at the first mapping of each other
	 * GPU's memory. */
	struct gpudma_cuda gpus[GPUDMA_MAX_GPUS];
	unsigned int nb_gpus;
	/* The GPU that pinned the frame store (NULL: not pinned). */
	struct gpudma_cuda *store_gpu;
	/* rx_port: the port frames come from, owned by this one (owner) while
	 * it exists; its queue q feeds queue q. sub_mp[q]: the pool its queue
	 * q receives into, freed once it is closed. */
	bool has_sub;
	uint16_t sub_port;
	uint64_t owner;
	struct rte_mempool *sub_mp[GPUDMA_MAX_QUEUES];
	bool started;
	struct gpudma_pcap_out *out;
	struct gpudma_rxq *rxq[GPUDMA_MAX_QUEUES];
	struct gpudma_txq *txq[GPUDMA_MAX_QUEUES];
};

uint16_t gpudma_rx_burst(void *q, struct rte_mbuf **pkts, uint16_t n);
uint16_t gpudma_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n);

/* q->seg, q->nb_seg, q->gpu and q->cuda are set (and checked) by the
 * caller. */
int gpudma_rxq_init(struct gpudma_port *port, struct gpudma_rxq *q,
	uint16_t qid, uint16_t nb_desc, int socket);
/* Waits for fills in flight and gives every posted buffer back. */
void gpudma_rxq_drain(struct gpudma_rxq *q);
void gpudma_rxq_fini(struct gpudma_rxq *q);
/* 1 if a posted descriptor's buffer lies in [addr, addr + len). */
int gpudma_rxq_uses(struct gpudma_rxq *q, uintptr_t addr, size_t len);

int gpudma_txq_init(struct gpudma_port *port, struct gpudma_txq *q,
	uint16_t qid);
void gpudma_txq_fini(struct gpudma_txq *q);

#endif /* GPUDMA_H */
