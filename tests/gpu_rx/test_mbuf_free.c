/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpurx_mbuf_plain() / gpurx_mbufs_free() (app.h): only mbufs that
 * rte_pktmbuf_free() would return to their pool unchanged may take the
 * rte_mempool_put_bulk() path, and either path must return every mbuf
 * exactly once. Pools without a per-lcore cache, so that the number of
 * mbufs that can still be allocated is exactly what came back.
 */

#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "app.h"
#include "check.h"
#include "test_eal.h"

#define POOL_N 256
#define BURST 32

static struct rte_mempool *
pool_create(const char *name)
{
	return test_pool_create(name, POOL_N);
}

/* Every mbuf of mp is back, once: all POOL_N can be taken, then none. */
static void
check_all_back(struct rte_mempool *mp, const char *what)
{
	struct rte_mbuf *m[POOL_N + 1];
	int i;

	CHECK(rte_mempool_avail_count(mp) == POOL_N, "%s: %u of %u available",
		what, rte_mempool_avail_count(mp), POOL_N);
	CHECK(rte_pktmbuf_alloc_bulk(mp, m, POOL_N) == 0, "%s: cannot take all",
		what);
	CHECK(rte_pktmbuf_alloc(mp) == NULL, "%s: more than the pool holds",
		what);
	for (i = 0; i < POOL_N; i++) {
		const char *reason = NULL;

		CHECK(rte_mbuf_check(m[i], 1, &reason) == 0,
			"%s: mbuf %d inconsistent after reuse: %s", what, i,
			reason != NULL ? reason : "?");
	}
	rte_pktmbuf_free_bulk(m, POOL_N);
}

static void
test_plain(struct rte_mempool *a)
{
	struct rte_mbuf *m[BURST];

	CHECK(rte_pktmbuf_alloc_bulk(a, m, BURST) == 0, "alloc");
	for (int i = 0; i < BURST; i++)
		CHECK(rte_pktmbuf_append(m[i], 60 + i) != NULL, "append");
	CHECK(gpurx_mbufs_plain_pool(m, BURST) == a, "fresh mbufs are plain");
	gpurx_mbufs_free(m, BURST, gpurx_mbufs_plain_pool(m, BURST));
	check_all_back(a, "plain");
}

static void
test_two_pools(struct rte_mempool *a, struct rte_mempool *b)
{
	struct rte_mbuf *m[BURST];

	CHECK(rte_pktmbuf_alloc_bulk(a, m, BURST - 1) == 0, "alloc a");
	m[BURST - 1] = rte_pktmbuf_alloc(b);
	CHECK(m[BURST - 1] != NULL, "alloc b");
	CHECK(gpurx_mbuf_plain(m[0], a), "plain in its own pool");
	CHECK(!gpurx_mbuf_plain(m[BURST - 1], a), "not plain in another pool");
	CHECK(gpurx_mbufs_plain_pool(m, BURST) == NULL, "two pools");
	gpurx_mbufs_free(m, BURST, gpurx_mbufs_plain_pool(m, BURST));
	check_all_back(a, "two pools, a");
	check_all_back(b, "two pools, b");
}

static void
test_chained(struct rte_mempool *a)
{
	struct rte_mbuf *m[2], *head, *tail;

	CHECK(rte_pktmbuf_alloc_bulk(a, m, 2) == 0, "alloc");
	head = m[0];
	tail = m[1];
	CHECK(rte_pktmbuf_append(head, 100) != NULL &&
		rte_pktmbuf_append(tail, 100) != NULL, "append");
	CHECK(rte_pktmbuf_chain(head, tail) == 0, "chain");
	CHECK(!gpurx_mbuf_plain(head, a), "a chain is not plain");
	CHECK(gpurx_mbufs_plain_pool(&head, 1) == NULL, "chain: no plain pool");
	gpurx_mbufs_free(&head, 1, gpurx_mbufs_plain_pool(&head, 1));
	check_all_back(a, "chained");
}

static void
test_shared_and_clone(struct rte_mempool *a, struct rte_mempool *clones)
{
	struct rte_mbuf *m[BURST], *clone;

	CHECK(rte_pktmbuf_alloc_bulk(a, m, BURST) == 0, "alloc");
	/* Held twice: the fast path must not return it while held. */
	rte_mbuf_refcnt_update(m[3], 1);
	CHECK(!gpurx_mbuf_plain(m[3], a), "refcnt 2 is not plain");
	CHECK(gpurx_mbufs_plain_pool(m, BURST) == NULL, "shared: no plain pool");
	gpurx_mbufs_free(m, BURST, gpurx_mbufs_plain_pool(m, BURST));
	CHECK(rte_mempool_avail_count(a) == POOL_N - 1,
		"the shared mbuf stays out: %u", rte_mempool_avail_count(a));
	rte_pktmbuf_free(m[3]);
	check_all_back(a, "shared");

	/* An indirect mbuf pointing at another one's data. */
	m[0] = rte_pktmbuf_alloc(a);
	CHECK(m[0] != NULL && rte_pktmbuf_append(m[0], 64) != NULL, "alloc");
	clone = rte_pktmbuf_clone(m[0], clones);
	CHECK(clone != NULL, "clone");
	CHECK(!gpurx_mbuf_plain(clone, clones), "a clone is not plain");
	CHECK(!gpurx_mbuf_plain(m[0], a), "a cloned mbuf is shared");
	m[1] = clone;
	gpurx_mbufs_free(m, 2, gpurx_mbufs_plain_pool(m, 2));
	check_all_back(a, "clone, original");
	check_all_back(clones, "clone, clones");
}

static unsigned int ext_freed;

static void
ext_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
	ext_freed++;
}

static void
test_extbuf(struct rte_mempool *a)
{
	static uint8_t ext[4096] __rte_aligned(64);
	struct rte_mbuf_ext_shared_info *shinfo;
	struct rte_mbuf *m = rte_pktmbuf_alloc(a);
	uint16_t len = sizeof(ext);

	CHECK(m != NULL, "alloc");
	shinfo = rte_pktmbuf_ext_shinfo_init_helper(ext, &len, ext_free, NULL);
	CHECK(shinfo != NULL, "shinfo");
	if (m == NULL || shinfo == NULL)
		return;
	rte_pktmbuf_attach_extbuf(m, ext, 0, len, shinfo);
	CHECK(!gpurx_mbuf_plain(m, a), "an external buffer is not plain");
	CHECK(gpurx_mbufs_plain_pool(&m, 1) == NULL, "extbuf: no plain pool");
	gpurx_mbufs_free(&m, 1, gpurx_mbufs_plain_pool(&m, 1));
	CHECK(ext_freed == 1, "the external buffer was released %u times",
		ext_freed);
	check_all_back(a, "extbuf");
}

int
main(int argc, char **argv)
{
	struct rte_mempool *a, *b, *clones;

	(void)argc;
	if (test_eal_init(argv[0], "test-mbuf-free") != 0)
		return 1;
	a = pool_create("test_a");
	b = pool_create("test_b");
	clones = pool_create("test_clones");
	if (a == NULL || b == NULL || clones == NULL)
		return 1;
	test_plain(a);
	test_two_pools(a, b);
	test_chained(a);
	test_shared_and_clone(a, clones);
	test_extbuf(a);
	rte_mempool_free(a);
	rte_mempool_free(b);
	rte_mempool_free(clones);
	rte_eal_cleanup();
	return check_finish("test_mbuf_free");
}
