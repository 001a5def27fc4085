/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU path's edge cases, apart from the CUDA calls so that the CPU
 * tests can drive them: which mbufs the GPU can read where they are,
 * copying an odd chain, a comm list's statuses set before the kernel
 * starts, and the checks that refuse a mode the GPU cannot run safely.
 */
#ifndef GPURX_APP_GPU_GUARD_H
#define GPURX_APP_GPU_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "gpu_kernels.h"
#include "opts.h"

struct rte_gpu_comm_list;

/* Memory the GPU reads in place: whole pools and address ranges. */
#define GPURX_READABLE_SPANS 256
struct gpurx_readable {
	const struct rte_mempool *pool[GPURX_MAX_QUEUES];
	unsigned int n_pools;
	struct {
		uintptr_t lo, hi;	/* [lo, hi) */
	} span[GPURX_READABLE_SPANS];
	unsigned int n_spans;
};

/* 0, or -ENOSPC when every slot is taken. */
int gpurx_readable_add_pool(struct gpurx_readable *r,
		const struct rte_mempool *mp);
int gpurx_readable_add_span(struct gpurx_readable *r, const void *addr,
		size_t len);

/* Whether the GPU reads every direct mbuf of mp in place. */
static inline int
gpurx_readable_has_pool(const struct gpurx_readable *r,
		const struct rte_mempool *mp)
{
	for (unsigned int i = 0; i < r->n_pools; i++)
		if (mp == r->pool[i])
			return 1;
	return 0;
}

/*
 * Whether the GPU can read len bytes at rte_pktmbuf_mtod(m) (one
 * segment). A direct mbuf of a known pool, or one carrying that pool's
 * own pinned external buffer, has its data in the pool's memory: no
 * address check. Any other (indirect, external buffer attached by the
 * PMD, unknown pool) is readable only inside a known range; else it is
 * foreign and must be copied where the GPU can read it.
 */
static inline int
gpurx_mbuf_gpu_readable(const struct gpurx_readable *r,
		const struct rte_mbuf *m, uint32_t len)
{
	uintptr_t p;

	if (!(m->ol_flags & RTE_MBUF_F_INDIRECT) &&
			(!(m->ol_flags & RTE_MBUF_F_EXTERNAL) ||
			RTE_MBUF_HAS_PINNED_EXTBUF(m)) &&
			gpurx_readable_has_pool(r, m->pool))
		return 1;
	p = rte_pktmbuf_mtod(m, uintptr_t);
	for (unsigned int i = 0; i < r->n_spans; i++)
		if (p >= r->span[i].lo && p < r->span[i].hi &&
				len <= r->span[i].hi - p)
			return 1;
	return 0;
}

/* --split: how a packet reaches the kernel (gpurx_split_place). */
enum gpurx_split_how {
	/* The header buffer in place, the rest (if any) at sp->tail: both
	 * where the port wrote them. */
	GPURX_SPLIT_IN_PLACE,
	/* The header buffer in place; the rest, in several buffers (a jumbo
	 * frame's payload) or in one the GPU cannot read, is to be gathered
	 * into GPU memory from m->next on, and sp->tail set there. */
	GPURX_SPLIT_GATHER,
	/* The header buffer is not GPU-readable: the whole packet is to be
	 * copied into GPU memory (sp: all of it there, not host memory). */
	GPURX_SPLIT_COPY,
};

/*
 * --split: where the kernel finds packet m, of cap bytes (what
 * gpurx_pkt_linear_len() said), filled into *sp. gpu_lo, gpu_len: the
 * GPU memory of the payload pool; any other header buffer is host memory,
 * from which the CPU writes a capture that fits in it.
 */
static inline enum gpurx_split_how
gpurx_split_place(const struct gpurx_readable *rd, const struct rte_mbuf *m,
		uint32_t cap, uintptr_t gpu_lo, size_t gpu_len,
		struct gpurx_split_pkt *sp)
{
	const uint32_t len0 = RTE_MIN((uint32_t)m->data_len, cap);
	const uintptr_t addr = rte_pktmbuf_mtod(m, uintptr_t);

	sp->tail = 0;
	if (!gpurx_mbuf_gpu_readable(rd, m, len0)) {
		sp->len0 = cap;
		sp->host = 0;
		return GPURX_SPLIT_COPY;
	}
	sp->len0 = len0;
	sp->host = addr - gpu_lo >= gpu_len;
	/* cap > len0 only with a next segment: cap is at most what the
	 * chain holds. */
	if (cap == len0)
		return GPURX_SPLIT_IN_PLACE;
	if (m->nb_segs == 2 && gpurx_mbuf_gpu_readable(rd, m->next, cap - len0)) {
		sp->tail = rte_pktmbuf_mtod(m->next, uintptr_t);
		return GPURX_SPLIT_IN_PLACE;
	}
	return GPURX_SPLIT_GATHER;
}

/*
 * The first cap bytes of m (cap <= pkt_len) into dst, whatever the chain
 * looks like: rte_pktmbuf_read() returns a pointer into the first
 * segment, not dst, whenever that segment holds them all (empty trailing
 * segments, a pkt_len below the segments' sum). 0, or -EINVAL when m has
 * fewer than cap bytes.
 */
int gpurx_pkt_copy(const struct rte_mbuf *m, uint32_t cap, uint8_t *dst);

/*
 * Whether rte_gpu_wmb() is needed before READY in this mode: only when
 * the NIC writes packets into GPU memory (--mem gpu). host-mapped: the
 * NIC wrote host memory, and the CPU saw the descriptor's completion
 * after those writes; its rte_wmb() before READY orders them for the
 * kernel's system-scope acquire. staged: the CPU copies the bytes into
 * pinned host memory before READY, as host-mapped's bounce copies, and
 * the kernel pulls them into GPU memory after its acquire.
 */
static inline int
gpurx_mem_needs_gpu_wmb(enum gpurx_mem_mode mem)
{
	return mem == GPURX_MEM_GPU;
}

/*
 * What rte_gpu_wmb() answered at start-up (rc), for mode mem. NULL when
 * the mode may run, else why not.
 */
const char *gpurx_wmb_refusal(enum gpurx_mem_mode mem, int rc);

/* The GPU's properties the persistent kernel depends on. */
struct gpurx_gpu_props {
	int exec_timeout;	/* kernels killed after a few seconds */
	int coop_launch;	/* blocks launched co-resident or not at all */
};

/* NULL when the persistent kernel may run on this GPU, else why not. */
const char *gpurx_persistent_refusal(const struct gpurx_gpu_props *p);

#endif /* GPURX_APP_GPU_GUARD_H */
