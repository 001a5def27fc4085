/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A queue's flow order on the GPU: where flows end (flow export), a
 * queue's packets of one flow must be decided in arrival order, as one
 * CPU thread per queue decides them (flow_record.h's plan and commit).
 * The kernel runs a queue's items side by side, so each item says in an
 * order slot of its own how far its packets have got with the flow table
 * (pinned, decided), and an item that shares a flow with an earlier one
 * in flight waits for it there (gpu_body.cuh, account_decide).
 *
 * The slots: per queue from q * stride, item seq at seq % n_items,
 * holding 2 seq + 1 once pinned and 2 seq + 2 once decided (0 never:
 * zeroed device memory). An item reuses a slot only after the item
 * n_items before it is done, so a slot holding more than item j's mark
 * says j is past it too.
 */
#ifndef GPURX_FLOW_ORDER_H
#define GPURX_FLOW_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* A queue's slots start on a 128-byte line of their own. */
#define GPURX_FLOW_ORDER_ALIGN 16

#define GPURX_FLOW_ORDER_PINNED 1ull
#define GPURX_FLOW_ORDER_DECIDED 2ull

struct gpurx_flow_order {
	unsigned long long *slots;	/* device memory; NULL: no order */
	uint32_t stride;		/* slots between queues */
};

/* The slots' stride between queues, for ring_items items a queue. */
static inline uint32_t
gpurx_flow_order_stride(uint32_t ring_items)
{
	return (ring_items + GPURX_FLOW_ORDER_ALIGN - 1) /
		GPURX_FLOW_ORDER_ALIGN * GPURX_FLOW_ORDER_ALIGN;
}

#ifdef __CUDACC__
#include "gpucomm_dev.cuh"

static __device__ __forceinline__ unsigned long long *
gpurx_flow_order_slot(const struct gpurx_flow_order *o, uint32_t q,
		uint32_t n_items, unsigned long long seq)
{
	return &o->slots[(size_t)q * o->stride + seq % n_items];
}

/* Item seq of queue q has got as far as `what`. */
static __device__ __forceinline__ void
gpurx_flow_order_mark(const struct gpurx_flow_order *o, uint32_t q,
		uint32_t n_items, unsigned long long seq, unsigned long long what)
{
	/* Release: the item's pins (PINNED) or commits (DECIDED), seen by
	 * this thread through a barrier, before. */
	gpucomm_st_release_gpu_u64(gpurx_flow_order_slot(o, q, n_items, seq),
		2 * seq + what);
}

/* Every lane of a warp: wait until every earlier item of the queue has got
 * as far as `what`; acquire (each lane its slots, the syncwarp for all). */
static __device__ void
gpurx_flow_order_wait_earlier(const struct gpurx_flow_order *o, uint32_t q,
		uint32_t n_items, unsigned long long seq, unsigned long long what)
{
	const unsigned long long lo = seq >= n_items ? seq - n_items + 1 : 0;

	for (unsigned long long j = lo + threadIdx.x % 32; j < seq; j += 32)
		while (gpucomm_ld_acquire_gpu_u64(gpurx_flow_order_slot(o, q,
				n_items, j)) < 2 * j + what)
			/* Spaced out: the L2 serves the table first. */
			__nanosleep(64);
	__syncwarp();
}
#endif /* __CUDACC__ */

#endif /* GPURX_FLOW_ORDER_H */
