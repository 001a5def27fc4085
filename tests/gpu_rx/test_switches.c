/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test switches of dpdk-gpu-rx-test and dpdk-gpu-rx-standin: the
 * objects of dpdk-gpu-rx, unchanged, linked with this file and
 * -Wl,--wrap=SYMBOL for each seam below (gpurx_test_wraps in
 * tests/meson.build), so that the shipped program carries no test code:
 * no environment read, no check per burst. Each switch comes from the
 * environment once the command line is parsed and is said on stdout when
 * on, as the e2e scripts look for it. What they make the program meet is
 * what a run on real hardware may:
 *
 *   GPURX_TEST_MANGLE=N: every Nth received one-segment direct mbuf
 *     becomes in turn
 *       - an mbuf with an external buffer in memory the GPU has not
 *         registered, as mlx5's multi-packet RQ attaches its stride
 *         buffers;
 *       - an indirect mbuf attached to a direct mbuf of an unregistered
 *         pool;
 *       - a chain whose trailing segment is empty (rte_pktmbuf_read()
 *         then returns a pointer into the first segment).
 *     The bytes and the metadata stay the same: the output must be too.
 *     Seam: rte_eth_dev_start/stop, which add and remove an RX callback
 *     per queue (ethdev runs it inside rte_eth_rx_burst()).
 *   GPURX_TEST_KERNEL_FAULT=N: queue 0's first worker faults (an illegal
 *     address) on taking its item of sequence number N.
 *   GPURX_TEST_KERNEL_HOLD: the dispatchers never see the quit flag.
 *     Seam of both: gpurx_cuda_launch_persistent(), in whose place the
 *     persistent kernel with the faults is launched (kernel_faults.h).
 *   GPURX_TEST_DIRTY_RING: every comm list item READY before the ring is
 *     initialized, as a crashed run could leave its memory. Seam:
 *     gpucomm_ring_init().
 *   GPURX_TEST_DMA_MAP_REFUSED: rte_dev_dma_map() fails (ENOTSUP) as on
 *     a port without peer-memory support. Seam: rte_dev_dma_map().
 *   GPURX_TEST_FLOW_RING=N: a flow export ring of N records (a power of
 *     two), small enough to fill. Seam: gpurx_flow_export_ring_limit().
 *
 * --wrap redirects only what one object refers to in another: each seam
 * is a function the app's objects call but do not define.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "app.h"
#include "flow_export.h"
#include "gpu_kernels.h"
#include "gpucomm_ring.h"
#include "kernel_faults.h"

#define MANGLE_MBUFS 8191
#define EXT_BUF_BYTES 4096

static struct {
	uint32_t mangle_every;			/* 0: off */
	struct gpurx_test_faults kernel;	/* zero: off */
	int dirty_ring;
	int dma_map_refused;
	uint64_t flow_ring;			/* 0: the app's size */
} sw;

/* --- The switches ------------------------------------------------------- */

static int
test_switch(const char *name, const char *what)
{
	if (getenv(name) == NULL)
		return 0;
	printf("test: %s (%s)\n", what, name);
	return 1;
}

/* 0, or -1 after saying which switch is wrong. */
static int
switches_read(void)
{
	const char *v = getenv("GPURX_TEST_KERNEL_FAULT");

	if (v != NULL) {
		sw.kernel.fault_at = strtoull(v, NULL, 0);
		printf("test: the kernel faults on purpose at queue 0's item "
			"%llu (GPURX_TEST_KERNEL_FAULT)\n", sw.kernel.fault_at);
	}
	sw.kernel.hold = test_switch("GPURX_TEST_KERNEL_HOLD",
		"the kernel ignores the quit flag");
	sw.dirty_ring = test_switch("GPURX_TEST_DIRTY_RING",
		"every ring item READY before the ring is initialized");
	sw.dma_map_refused = test_switch("GPURX_TEST_DMA_MAP_REFUSED",
		"the port refuses to DMA-map GPU memory");
	v = getenv("GPURX_TEST_MANGLE");
	if (v != NULL)
		sw.mangle_every = (uint32_t)strtoul(v, NULL, 0);
	v = getenv("GPURX_TEST_FLOW_RING");
	if (v != NULL) {
		sw.flow_ring = strtoull(v, NULL, 0);
		if (sw.flow_ring == 0 ||
				(sw.flow_ring & (sw.flow_ring - 1)) != 0) {
			fprintf(stderr, "error: GPURX_TEST_FLOW_RING: not a power "
				"of two\n");
			return -1;
		}
	}
	return 0;
}

int __real_gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o);
int __wrap_gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o);

/* Where the app read them: once its options are known, before any port
 * or GPU is touched. A bad switch is a usage error. */
int
__wrap_gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o)
{
	int rc = __real_gpurx_opts_parse(argc, argv, o);

	if (rc != 0)
		return rc;
	return switches_read();
}

/* --- GPURX_TEST_MANGLE -------------------------------------------------- */

/* Never registered with the GPU: what they hold is foreign to it. Named
 * gpurx_ so that the app's check at exit (every gpurx memzone released)
 * fails a run that left one behind. */
static struct rte_mempool *direct_pool;	/* pktmbufs */
static struct rte_mempool *ext_pool;	/* raw external buffers */

/* Per queue: received mbufs seen, to pick every Nth, and the callback. */
static struct mangle_q {
	uint64_t seen;
	uint64_t mangled;
	const struct rte_eth_rxtx_callback *cb;
} __rte_cache_aligned mangle_q[GPURX_MAX_QUEUES];

static void
ext_free(void *addr, void *opaque)
{
	rte_mempool_put(opaque, addr);
}

/* m's bytes moved to an unregistered external buffer attached to m. 0,
 * or -1 with m as it was. */
static int
to_extbuf(struct rte_mbuf *m)
{
	struct rte_mbuf_ext_shared_info *shinfo;
	uint16_t len = EXT_BUF_BYTES, dlen = m->data_len;
	void *buf;

	if (rte_mempool_get(ext_pool, &buf) != 0)
		return -1;
	shinfo = rte_pktmbuf_ext_shinfo_init_helper(buf, &len, ext_free,
		ext_pool);
	if (shinfo == NULL || dlen > len) {
		rte_mempool_put(ext_pool, buf);
		return -1;
	}
	rte_memcpy(buf, rte_pktmbuf_mtod(m, void *), dlen);
	rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, len, shinfo);
	m->data_len = dlen;
	m->pkt_len = dlen;
	return 0;
}

/* An indirect mbuf over a copy of m in the unregistered pool, m freed;
 * NULL with m as it was. */
static struct rte_mbuf *
to_indirect(struct rte_mbuf *m)
{
	struct rte_mbuf *d = rte_pktmbuf_alloc(direct_pool);
	struct rte_mbuf *mi = rte_pktmbuf_alloc(direct_pool);
	char *p = d == NULL ? NULL : rte_pktmbuf_append(d, m->data_len);

	if (mi == NULL || p == NULL) {
		rte_pktmbuf_free(d);
		rte_pktmbuf_free(mi);
		return NULL;
	}
	rte_memcpy(p, rte_pktmbuf_mtod(m, void *), m->data_len);
	/* What the attach copies into mi: the RX metadata. */
	d->ol_flags = m->ol_flags;
	d->port = m->port;
	d->packet_type = m->packet_type;
	rte_mbuf_dynfield_copy(d, m);
	rte_pktmbuf_attach(mi, d);
	rte_pktmbuf_free(d);	/* mi holds the reference */
	rte_pktmbuf_free(m);
	return mi;
}

/* m followed by an empty segment of its own pool. 0 or -1, m as it was. */
static int
empty_tail(struct rte_mbuf *m)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(m->pool);

	if (t == NULL)
		return -1;
	if (rte_pktmbuf_chain(m, t) != 0) {
		rte_pktmbuf_free(t);
		return -1;
	}
	return 0;
}

/* RX callback: the burst pkts[0..n), in place, inside rte_eth_rx_burst()
 * on the queue's own lcore. */
static uint16_t
mangle_burst(uint16_t port __rte_unused, uint16_t queue __rte_unused,
		struct rte_mbuf *pkts[], uint16_t n, uint16_t max __rte_unused,
		void *arg)
{
	struct mangle_q *mq = arg;
	const uint32_t every = sw.mangle_every;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *mi;
		uint64_t k = mq->seen++;
		int rc;

		if (k % every != 0 || m->nb_segs != 1 || !RTE_MBUF_DIRECT(m) ||
				rte_mbuf_refcnt_read(m) != 1)
			continue;
		switch (k / every % 3) {
		case 0:
			rc = to_extbuf(m);
			break;
		case 1:
			mi = to_indirect(m);
			rc = mi == NULL ? -1 : 0;
			if (mi != NULL)
				pkts[i] = mi;
			break;
		default:
			rc = empty_tail(m);
			break;
		}
		if (rc == 0)
			mq->mangled++;
	}
	return n;
}

/* Callbacks removed (no burst runs: the port is stopped), then the
 * pools freed where every mbuf came back; a pool some did not come back
 * to stays (said), its mbufs still in use, and the app's check of its
 * memzones at exit fails the run. Returns the mbufs mangled. */
static uint64_t
mangle_release(uint16_t port)
{
	uint64_t mangled = 0;
	int rc;

	for (uint16_t q = 0; q < RTE_DIM(mangle_q); q++) {
		struct mangle_q *mq = &mangle_q[q];

		if (mq->cb == NULL)
			continue;
		rc = rte_eth_remove_rx_callback(port, q, mq->cb);
		if (rc != 0) {
			/* Still on the list: not ours to free. */
			fprintf(stderr, "error: GPURX_TEST_MANGLE: queue %u: "
				"rte_eth_remove_rx_callback: %s\n", q,
				rte_strerror(-rc));
		} else {
			/* ethdev's rte_zmalloc(); the user frees it. */
			rte_free((void *)(uintptr_t)mq->cb);
		}
		mq->cb = NULL;
		mangled += mq->mangled;
	}
	if (direct_pool != NULL &&
			rte_mempool_avail_count(direct_pool) != direct_pool->size) {
		fprintf(stderr, "error: GPURX_TEST_MANGLE: %u mbufs not returned\n",
			direct_pool->size - rte_mempool_avail_count(direct_pool));
		direct_pool = NULL;
	}
	if (ext_pool != NULL &&
			rte_mempool_avail_count(ext_pool) != ext_pool->size) {
		fprintf(stderr, "error: GPURX_TEST_MANGLE: %u external buffers "
			"not returned\n",
			ext_pool->size - rte_mempool_avail_count(ext_pool));
		ext_pool = NULL;
	}
	rte_mempool_free(direct_pool);
	rte_mempool_free(ext_pool);
	direct_pool = NULL;
	ext_pool = NULL;
	return mangled;
}

/* The pools, then a callback on each of the app's queues. 0, or a
 * negative errno after saying why, nothing left taken. */
static int
mangle_start(uint16_t port)
{
	const struct gpurx_app *a = &gpurx_app;
	int e;

	direct_pool = rte_pktmbuf_pool_create("gpurx_t_direct", MANGLE_MBUFS,
		256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, a->socket);
	e = rte_errno;
	ext_pool = rte_mempool_create("gpurx_t_ext", MANGLE_MBUFS,
		EXT_BUF_BYTES, 256, 0, NULL, NULL, NULL, NULL, a->socket, 0);
	if (direct_pool == NULL || ext_pool == NULL) {
		if (ext_pool == NULL)
			e = rte_errno;
		fprintf(stderr, "error: GPURX_TEST_MANGLE: pools: %s\n",
			rte_strerror(e));
		mangle_release(port);
		return -e;
	}
	for (uint16_t q = 0; q < a->nq; q++) {
		struct mangle_q *mq = &mangle_q[q];

		mq->seen = 0;
		mq->mangled = 0;
		mq->cb = rte_eth_add_rx_callback(port, q, mangle_burst, mq);
		if (mq->cb == NULL) {
			e = rte_errno;
			fprintf(stderr, "error: GPURX_TEST_MANGLE: queue %u: "
				"rte_eth_add_rx_callback: %s\n", q,
				rte_strerror(e));
			mangle_release(port);
			return -e;
		}
	}
	printf("test: one received mbuf in %u made external, indirect or "
		"chained with an empty segment (GPURX_TEST_MANGLE)\n",
		sw.mangle_every);
	return 0;
}

int __real_rte_eth_dev_start(uint16_t port);
int __wrap_rte_eth_dev_start(uint16_t port);
int __real_rte_eth_dev_stop(uint16_t port);
int __wrap_rte_eth_dev_stop(uint16_t port);

/* The app's port, once its queues are set up. */
int
__wrap_rte_eth_dev_start(uint16_t port)
{
	int rc;

	if (sw.mangle_every == 0 || port != gpurx_app.port)
		return __real_rte_eth_dev_start(port);
	rc = mangle_start(port);
	if (rc != 0)
		return rc;
	rc = __real_rte_eth_dev_start(port);
	if (rc != 0)
		mangle_release(port);
	return rc;
}

/* The app stops its port once its RX lcores returned every mbuf. */
int
__wrap_rte_eth_dev_stop(uint16_t port)
{
	int rc = __real_rte_eth_dev_stop(port);
	uint64_t mangled;

	if (port != gpurx_app.port || (direct_pool == NULL && ext_pool == NULL))
		return rc;
	mangled = mangle_release(port);
	/* What the e2e scripts tell the seam worked by. */
	printf("test: %" PRIu64 " received mbufs made external, indirect or "
		"chained (GPURX_TEST_MANGLE)\n", mangled);
	return rc;
}

/* --- GPURX_TEST_KERNEL_FAULT, GPURX_TEST_KERNEL_HOLD --------------------- */

int __wrap_gpurx_cuda_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, void *s);

/* The app's kernel from the test build (kernel_faults.cu; the stand-in's
 * thread in dpdk-gpu-rx-standin), which reads the faults: the shipped
 * one has neither the fields nor the code. */
int
__wrap_gpurx_cuda_launch_persistent(struct gpucomm_kparams *kp,
		const struct gpurx_kparams *p, void *s)
{
	return gpurx_test_launch_persistent(kp, p, &sw.kernel, s);
}

/* --- GPURX_TEST_DIRTY_RING ---------------------------------------------- */

int __real_gpucomm_ring_init(struct gpucomm_ring *r, int16_t dev_id,
		struct rte_gpu_comm_list *list, uint32_t n_items,
		unsigned int flags);
int __wrap_gpucomm_ring_init(struct gpucomm_ring *r, int16_t dev_id,
		struct rte_gpu_comm_list *list, uint32_t n_items,
		unsigned int flags);

/* Memory as a previous run could have left it, then the app's init. */
int
__wrap_gpucomm_ring_init(struct gpucomm_ring *r, int16_t dev_id,
		struct rte_gpu_comm_list *list, uint32_t n_items,
		unsigned int flags)
{
	int rc;

	for (uint32_t i = 0; sw.dirty_ring && list != NULL && i < n_items;
			i++) {
		rc = rte_gpu_comm_set_status(&list[i], RTE_GPU_COMM_LIST_READY);
		if (rc != 0) {
			fprintf(stderr, "error: GPURX_TEST_DIRTY_RING: item %u: "
				"rte_gpu_comm_set_status: %s\n", i,
				rte_strerror(-rc));
			return rc;
		}
	}
	return __real_gpucomm_ring_init(r, dev_id, list, n_items, flags);
}

/* --- GPURX_TEST_DMA_MAP_REFUSED ----------------------------------------- */

int __real_rte_dev_dma_map(struct rte_device *dev, void *addr, uint64_t iova,
		size_t len);
int __wrap_rte_dev_dma_map(struct rte_device *dev, void *addr, uint64_t iova,
		size_t len);

/* As a port without peer memory answers. */
int
__wrap_rte_dev_dma_map(struct rte_device *dev, void *addr, uint64_t iova,
		size_t len)
{
	if (sw.dma_map_refused) {
		rte_errno = ENOTSUP;
		return -1;
	}
	return __real_rte_dev_dma_map(dev, addr, iova, len);
}

/* --- GPURX_TEST_FLOW_RING ----------------------------------------------- */

uint64_t __real_gpurx_flow_export_ring_limit(uint32_t flows);
uint64_t __wrap_gpurx_flow_export_ring_limit(uint32_t flows);

/* A ring this small fills at once (the full-ring path). */
uint64_t
__wrap_gpurx_flow_export_ring_limit(uint32_t flows)
{
	if (sw.flow_ring == 0)
		return __real_gpurx_flow_export_ring_limit(flows);
	printf("test: flow export ring of %" PRIu64 " records "
		"(GPURX_TEST_FLOW_RING)\n", sw.flow_ring);
	return sw.flow_ring;
}
