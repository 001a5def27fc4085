/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test only: mbufs of the kinds a hardware PMD may deliver, made from
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

/* Reads the environment; with the hook on, creates its pools. 0 or -1. */
int gpurx_test_hooks_init(const struct gpurx_app *a);

/* Queue q's burst pkts[0..n), in place. */
void gpurx_test_mangle(uint16_t q, struct rte_mbuf **pkts, uint16_t n);

/* Frees the pools. -1 (said) if some of their mbufs were not returned. */
int gpurx_test_hooks_fini(void);

#endif /* GPURX_APP_TEST_HOOKS_H */
