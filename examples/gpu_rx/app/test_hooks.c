/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "app.h"
#include "test_hooks.h"

#define HOOK_MBUFS 8191
#define EXT_BUF_BYTES 4096

uint32_t gpurx_test_mangle_every;
struct gpurx_test_switches gpurx_test;

/* Never registered with the GPU: what they hold is foreign to it. */
static struct rte_mempool *direct_pool;	/* pktmbufs */
static struct rte_mempool *ext_pool;	/* raw external buffers */

/* Per queue: received mbufs seen, to pick every Nth. */
static struct {
	uint64_t seen;
} __rte_cache_aligned hook_q[GPURX_MAX_QUEUES];

static int
test_switch(const char *name, const char *what)
{
	if (getenv(name) == NULL)
		return 0;
	printf("test: %s (%s)\n", what, name);
	return 1;
}

void
gpurx_test_switches_read(void)
{
	const char *v = getenv("GPURX_TEST_KERNEL_FAULT");

	if (v != NULL) {
		gpurx_test.kernel_fault_at = strtoull(v, NULL, 0);
		printf("test: the kernel faults on purpose at queue 0's item "
			"%llu (GPURX_TEST_KERNEL_FAULT)\n",
			gpurx_test.kernel_fault_at);
	}
	gpurx_test.kernel_hold = test_switch("GPURX_TEST_KERNEL_HOLD",
		"the kernel ignores the quit flag");
	gpurx_test.dirty_ring = test_switch("GPURX_TEST_DIRTY_RING",
		"every ring item READY before the ring is initialized");
	gpurx_test.dma_map_refused = test_switch("GPURX_TEST_DMA_MAP_REFUSED",
		"the port refuses to DMA-map GPU memory");
}

int
gpurx_test_hooks_init(const struct gpurx_app *a)
{
	const char *v = getenv("GPURX_TEST_MANGLE");

	if (v == NULL)
		return 0;
	gpurx_test_mangle_every = (uint32_t)strtoul(v, NULL, 0);
	if (gpurx_test_mangle_every == 0)
		return 0;
	direct_pool = rte_pktmbuf_pool_create("gpurx_t_direct", HOOK_MBUFS, 256,
		0, RTE_MBUF_DEFAULT_BUF_SIZE, a->socket);
	ext_pool = rte_mempool_create("gpurx_t_ext", HOOK_MBUFS, EXT_BUF_BYTES,
		256, 0, NULL, NULL, NULL, NULL, a->socket, 0);
	if (direct_pool == NULL || ext_pool == NULL) {
		fprintf(stderr, "error: GPURX_TEST_MANGLE: pools: %s\n",
			rte_strerror(rte_errno));
		gpurx_test_hooks_fini();
		return -1;
	}
	printf("test: one received mbuf in %u made external, indirect or "
		"chained with an empty segment (GPURX_TEST_MANGLE)\n",
		gpurx_test_mangle_every);
	return 0;
}

static void
ext_free(void *addr, void *opaque)
{
	rte_mempool_put(opaque, addr);
}

/* m's bytes moved to an unregistered external buffer attached to m. */
static void
to_extbuf(struct rte_mbuf *m)
{
	struct rte_mbuf_ext_shared_info *shinfo;
	uint16_t len = EXT_BUF_BYTES, dlen = m->data_len;
	void *buf;

	if (rte_mempool_get(ext_pool, &buf) != 0)
		return;
	shinfo = rte_pktmbuf_ext_shinfo_init_helper(buf, &len, ext_free,
		ext_pool);
	if (shinfo == NULL || dlen > len) {
		rte_mempool_put(ext_pool, buf);
		return;
	}
	rte_memcpy(buf, rte_pktmbuf_mtod(m, void *), dlen);
	rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, len, shinfo);
	m->data_len = dlen;
	m->pkt_len = dlen;
}

/* An indirect mbuf over a copy of m in the unregistered pool; m freed. */
static struct rte_mbuf *
to_indirect(struct rte_mbuf *m)
{
	struct rte_mbuf *d = rte_pktmbuf_alloc(direct_pool);
	struct rte_mbuf *mi = rte_pktmbuf_alloc(direct_pool);
	char *p = d == NULL ? NULL : rte_pktmbuf_append(d, m->data_len);

	if (mi == NULL || p == NULL) {
		rte_pktmbuf_free(d);
		rte_pktmbuf_free(mi);
		return m;
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

/* m followed by an empty segment of its own pool. */
static void
empty_tail(struct rte_mbuf *m)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(m->pool);

	if (t != NULL && rte_pktmbuf_chain(m, t) != 0)
		rte_pktmbuf_free(t);
}

void
gpurx_test_mangle(uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	const uint32_t every = gpurx_test_mangle_every;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint64_t k = hook_q[q].seen++;

		if (k % every != 0 || m->nb_segs != 1 || !RTE_MBUF_DIRECT(m) ||
				rte_mbuf_refcnt_read(m) != 1)
			continue;
		switch (k / every % 3) {
		case 0:
			to_extbuf(m);
			break;
		case 1:
			pkts[i] = to_indirect(m);
			break;
		default:
			empty_tail(m);
			break;
		}
	}
}

int
gpurx_test_hooks_fini(void)
{
	int rc = 0;

	if (direct_pool != NULL &&
			rte_mempool_avail_count(direct_pool) != direct_pool->size) {
		fprintf(stderr, "error: GPURX_TEST_MANGLE: %u mbufs not returned\n",
			direct_pool->size - rte_mempool_avail_count(direct_pool));
		rc = -1;
	}
	if (ext_pool != NULL &&
			rte_mempool_avail_count(ext_pool) != ext_pool->size) {
		fprintf(stderr, "error: GPURX_TEST_MANGLE: %u external buffers "
			"not returned\n",
			ext_pool->size - rte_mempool_avail_count(ext_pool));
		rc = -1;
	}
	rte_mempool_free(direct_pool);
	rte_mempool_free(ext_pool);
	direct_pool = NULL;
	ext_pool = NULL;
	return rc;
}
