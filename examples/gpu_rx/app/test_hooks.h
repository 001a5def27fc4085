/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test only, every switch in one place, read once from the environment
 * at start (gpurx_test_switches_read), each said on stdout when on, for the
 * e2e scripts that make the program meet what a run on real hardware
 * may: a kernel fault or a kernel that never quits, a ring as a previous
 * run left it, a port refusing the DMA mapping of GPU memory, and mbufs of
 * the kinds a hardware PMD may deliver, made from
 * what a software port receives, so that the GPU tests meet them on
 * net_pcap. GPURX_TEST_MANGLE=N: every Nth received one-segment direct
 * mbuf becomes in turn
 *   - an mbuf with an external buffer in memory the GPU has not
 *     registered, as mlx5's multi-packet RQ attaches its stride buffers;
 *   - an indirect mbuf attached to a direct mbuf of an unregistered pool;
 *   - a chain whose trailing segment is empty (rte_pktmbuf_read() then
 *     returns a pointer into the first segment).
 * The bytes and the metadata stay the same: the output must be too.
 */
#ifndef GPURX_APP_TEST_HOOKS_H
#define GPURX_APP_TEST_HOOKS_H

#include <stdint.h>

struct gpurx_app;
struct rte_mbuf;

extern uint32_t gpurx_test_mangle_every;	/* 0: off */

struct gpurx_test_switches {
	/* GPURX_TEST_KERNEL_FAULT=N: queue 0's first worker faults (an
	 * illegal address) on taking its item of sequence number N. */
	unsigned long long kernel_fault_at;	/* 0: off */
	/* GPURX_TEST_KERNEL_HOLD: the dispatchers never see the quit flag. */
	int kernel_hold;
	/* GPURX_TEST_DIRTY_RING: every comm list item READY before the
	 * ring is initialized, as a crashed run could leave its memory. */
	int dirty_ring;
	/* GPURX_TEST_DMA_MAP_REFUSED: rte_dev_dma_map fails (ENOTSUP) as
	 * on a port without peer-memory support. */
	int dma_map_refused;
};
extern struct gpurx_test_switches gpurx_test;

/* gpurx_test from the environment; before any setup. */
void gpurx_test_switches_read(void);

/* GPURX_TEST_MANGLE from the environment; with it on, creates its pools.
 * 0 or -1. */
int gpurx_test_hooks_init(const struct gpurx_app *a);

/* Queue q's burst pkts[0..n), in place. */
void gpurx_test_mangle(uint16_t q, struct rte_mbuf **pkts, uint16_t n);

/* Frees the pools. -1 (said) if some of their mbufs were not returned. */
int gpurx_test_hooks_fini(void);

#endif /* GPURX_APP_TEST_HOOKS_H */
