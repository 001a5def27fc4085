/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU path's edge cases without a GPU (gpu_guard.h), on real mbufs
 * under EAL without hugepages or devices:
 *   - foreign mbufs: which the GPU reads in place (a registered pool's
 *     direct mbufs, anything inside a registered range) and which must
 *     be copied (external buffers and indirect mbufs elsewhere, other
 *     pools), ranges checked to their last byte;
 *   - odd chains: the copy is right whatever rte_pktmbuf_read() returns
 *     (empty trailing segments, pkt_len below the segments' sum, bytes
 *     split across segments), and refuses an mbuf shorter than asked;
 *   - --split: where the kernel finds a packet (header buffer in place,
 *     the rest in place, gathered, or the whole packet copied), what the
 *     CPU may write a capture from;
 *   - the refusals: --mem gpu where rte_gpu_wmb() is not supported, the
 *     persistent kernel on a GPU with a kernel timeout or no cooperative
 *     launch.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "app.h"
#include "gpu_guard.h"
#include "check.h"
#include "test_eal.h"

#define POOL_N 128

static struct rte_mempool *
pool_create(const char *name)
{
	return test_pool_create(name, POOL_N);
}

static struct rte_mbuf *
pkt(struct rte_mempool *mp, uint16_t len, uint8_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p = m == NULL ? NULL :
		(uint8_t *)rte_pktmbuf_append(m, len);

	CHECK(p != NULL, "alloc %u bytes", len);
	for (uint16_t i = 0; p != NULL && i < len; i++)
		p[i] = (uint8_t)(seed + i);
	return m;
}

static void
add_chunk(struct rte_mempool *mp __rte_unused, void *opaque,
		struct rte_mempool_memhdr *hdr, unsigned int idx __rte_unused)
{
	CHECK(gpurx_readable_add_span(opaque, hdr->addr, hdr->len) == 0,
		"span");
}

static void
ext_free(void *addr __rte_unused, void *opaque)
{
	(*(int *)opaque)++;
}

static void
test_foreign(struct rte_mempool *reg, struct rte_mempool *other)
{
	static struct gpurx_readable rd;	/* zeroed: nothing readable */
	struct rte_mbuf *m = pkt(reg, 100, 1), *o = pkt(other, 100, 2);
	struct rte_mbuf *mi = rte_pktmbuf_alloc(other);
	struct rte_mbuf *mx = pkt(reg, 0, 0);
	struct rte_mbuf_ext_shared_info *shinfo;
	uint8_t *ext = rte_malloc("test_ext", 4096, 64);
	uint16_t len = 4096;
	int freed = 0;

	if (m == NULL || o == NULL || mi == NULL || mx == NULL || ext == NULL) {
		CHECK(0, "allocations");
		return;
	}
	CHECK(!gpurx_mbuf_gpu_readable(&rd, m, 100), "nothing registered yet");
	CHECK(gpurx_readable_add_pool(&rd, reg) == 0, "add pool");
	CHECK(gpurx_mbuf_gpu_readable(&rd, m, 100), "direct, registered pool");
	CHECK(!gpurx_mbuf_gpu_readable(&rd, o, 100), "direct, other pool");

	/* An indirect mbuf of the other pool over m: by the pool test
	 * foreign; readable once the registered pool's memory is a range. */
	rte_pktmbuf_attach(mi, m);
	CHECK(!gpurx_mbuf_gpu_readable(&rd, mi, 100),
		"indirect, pool only registered");
	rte_mempool_mem_iter(reg, add_chunk, &rd);
	CHECK(gpurx_mbuf_gpu_readable(&rd, mi, 100), "indirect into a range");
	CHECK(!gpurx_mbuf_gpu_readable(&rd, o, 100), "other pool, not a range");

	/* An external buffer (as mlx5's MPRQ attaches its strides) in
	 * memory nobody registered, on an mbuf of the registered pool. */
	shinfo = rte_pktmbuf_ext_shinfo_init_helper(ext, &len, ext_free, &freed);
	CHECK(shinfo != NULL, "shinfo");
	if (shinfo == NULL)
		return;
	rte_pktmbuf_attach_extbuf(mx, ext, RTE_BAD_IOVA, len, shinfo);
	mx->data_len = 100;
	mx->pkt_len = 100;
	CHECK(!gpurx_mbuf_gpu_readable(&rd, mx, 100), "extbuf, unregistered");
	/* Registered as a range: readable up to its last byte, not past. */
	CHECK(gpurx_readable_add_span(&rd, ext, 100) == 0, "span");
	CHECK(gpurx_mbuf_gpu_readable(&rd, mx, 100), "extbuf inside a range");
	CHECK(!gpurx_mbuf_gpu_readable(&rd, mx, 101), "extbuf past a range");
	rte_pktmbuf_free(mx);
	CHECK(freed == 1, "external buffer released %d times", freed);
	rte_pktmbuf_free(mi);
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(o);
	rte_free(ext);
	CHECK(rte_mempool_avail_count(reg) == POOL_N, "registered pool: %u back",
		rte_mempool_avail_count(reg));
	CHECK(rte_mempool_avail_count(other) == POOL_N, "other pool: %u back",
		rte_mempool_avail_count(other));

	/* Full table: refused, not overrun. */
	memset(&rd, 0, sizeof(rd));
	for (unsigned int i = 0; i < GPURX_READABLE_SPANS; i++)
		gpurx_readable_add_span(&rd, ext, 1);
	CHECK(gpurx_readable_add_span(&rd, ext, 1) == -ENOSPC, "span overflow");
	for (unsigned int i = 0; i < GPURX_MAX_QUEUES; i++)
		gpurx_readable_add_pool(&rd, reg);
	CHECK(gpurx_readable_add_pool(&rd, reg) == -ENOSPC, "pool overflow");
}

/* dst holds exactly the bytes seed, seed + 1, ... */
static void
check_bytes(const uint8_t *dst, uint32_t n, uint8_t seed, const char *what)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < n; i++)
		bad += dst[i] != (uint8_t)(seed + i);
	CHECK(bad == 0, "%s: %u bytes differ", what, bad);
}

static void
test_odd_chains(struct rte_mempool *mp)
{
	uint8_t dst[512];
	struct rte_mbuf *m, *t;

	/* Empty trailing segment: the read points into segment 0. */
	m = pkt(mp, 200, 3);
	t = pkt(mp, 0, 0);
	CHECK(m != NULL && t != NULL && rte_pktmbuf_chain(m, t) == 0, "chain");
	CHECK(m->nb_segs == 2 && rte_pktmbuf_read(m, 0, 200, dst) !=
		(const void *)dst, "the case rte_pktmbuf_read() does not copy");
	memset(dst, 0, sizeof(dst));
	CHECK(gpurx_pkt_copy(m, 200, dst) == 0, "empty tail copied");
	check_bytes(dst, 200, 3, "empty tail");
	rte_pktmbuf_free(m);

	/* pkt_len below the segments' sum: only pkt_len bytes, from the
	 * first segment. */
	m = pkt(mp, 150, 4);
	t = pkt(mp, 150, 99);
	CHECK(m != NULL && t != NULL && rte_pktmbuf_chain(m, t) == 0, "chain");
	m->pkt_len = 120;
	memset(dst, 0, sizeof(dst));
	CHECK(gpurx_pkt_copy(m, 120, dst) == 0, "short pkt_len copied");
	check_bytes(dst, 120, 4, "short pkt_len");
	/* More than pkt_len: refused, nothing read past it. */
	CHECK(gpurx_pkt_copy(m, 121, dst) == -EINVAL, "past pkt_len refused");
	m->pkt_len = 300;

	/* Bytes split across segments: copied into dst. */
	t->data_len = 150;
	for (uint16_t i = 0; i < 150; i++)
		rte_pktmbuf_mtod(t, uint8_t *)[i] = (uint8_t)(4 + 150 + i);
	memset(dst, 0, sizeof(dst));
	CHECK(gpurx_pkt_copy(m, 300, dst) == 0, "split copied");
	check_bytes(dst, 300, 4, "split");
	rte_pktmbuf_free(m);

	/* One segment: the same bytes. */
	m = pkt(mp, 64, 5);
	CHECK(m != NULL && gpurx_pkt_copy(m, 64, dst) == 0, "one segment");
	check_bytes(dst, 64, 5, "one segment");
	rte_pktmbuf_free(m);
	CHECK(rte_mempool_avail_count(mp) == POOL_N, "odd chains: %u back",
		rte_mempool_avail_count(mp));
}

/* A chain of segments of the given lengths, hdr's buffer then body's;
 * byte i of the packet is seed + i. */
static struct rte_mbuf *
split_chain(struct rte_mempool *hdr, struct rte_mempool *body,
		const uint16_t *lens, unsigned int nseg, uint8_t seed)
{
	struct rte_mbuf *m = NULL;
	uint32_t at = 0;

	for (unsigned int i = 0; i < nseg; i++) {
		struct rte_mbuf *s = pkt(i == 0 ? hdr : body, lens[i],
			(uint8_t)(seed + at));

		if (s == NULL)
			break;
		if (m == NULL)
			m = s;
		else
			CHECK(rte_pktmbuf_chain(m, s) == 0, "chain");
		at += lens[i];
	}
	return m;
}

/* Where the payload of a split packet is expected. */
enum tail_want { TAIL_NONE, TAIL_SEG1, TAIL_ANY };

static void
test_split_place(struct rte_mempool *hdr, struct rte_mempool *body,
		struct rte_mempool *other)
{
	static struct gpurx_readable rd;
	static const uint16_t one[] = { 100 }, two[] = { 128, 1400 },
		three[] = { 128, 2048, 900 }, empty_tail[] = { 90, 0 };
	/* hdr/body pools: 0 header pool, 1 payload pool ("GPU memory"),
	 * 2 a pool the GPU cannot read. pkt_len: 0, or what the chain says
	 * it holds (more: a short chain). */
	const struct {
		const char *what;
		int p0, p1;
		const uint16_t *lens;
		unsigned int nseg;
		uint32_t pkt_len;
		enum gpurx_split_how how;
		uint32_t len0;		/* UINT32_MAX: cap */
		uint32_t host;
		enum tail_want tail;
	} cases[] = {
		/* Within the header buffer: the CPU writes its capture. */
		{ "one segment", 0, 1, one, 1, 0, GPURX_SPLIT_IN_PLACE, 100, 1,
			TAIL_NONE },
		{ "header and payload buffers", 0, 1, two, 2, 0,
			GPURX_SPLIT_IN_PLACE, 128, 1, TAIL_SEG1 },
		{ "short chain: what it holds", 0, 1, two, 2, 4000,
			GPURX_SPLIT_IN_PLACE, 128, 1, TAIL_SEG1 },
		{ "jumbo payload in two buffers", 0, 1, three, 3, 0,
			GPURX_SPLIT_GATHER, 128, 1, TAIL_ANY },
		{ "payload buffer the GPU cannot read", 0, 2, two, 2, 0,
			GPURX_SPLIT_GATHER, 128, 1, TAIL_ANY },
		{ "first segment holds it all", 0, 1, empty_tail, 2, 0,
			GPURX_SPLIT_IN_PLACE, 90, 1, TAIL_NONE },
		/* The whole packet copied, its capture the kernel's. */
		{ "header buffer the GPU cannot read", 2, 1, two, 2, 0,
			GPURX_SPLIT_COPY, UINT32_MAX, 0, TAIL_NONE },
		/* A port that did not split: read in place, not by the CPU. */
		{ "first buffer in GPU memory", 1, 1, one, 1, 0,
			GPURX_SPLIT_IN_PLACE, 100, 0, TAIL_NONE },
	};
	struct rte_mempool *pools[] = { hdr, body, other };
	struct rte_mempool_memhdr *mh;
	uintptr_t body_lo;
	size_t body_len;

	/* The header and payload pools as --split registers them; the
	 * payload pool's one chunk (no hugepages) stands for GPU memory. */
	memset(&rd, 0, sizeof(rd));
	CHECK(gpurx_readable_add_pool(&rd, hdr) == 0 &&
		gpurx_readable_add_pool(&rd, body) == 0, "pools");
	CHECK(body->nb_mem_chunks == 1, "payload pool in %u chunks",
		body->nb_mem_chunks);
	mh = STAILQ_FIRST(&body->mem_list);
	body_lo = (uintptr_t)mh->addr;
	body_len = mh->len;
	for (size_t c = 0; c < RTE_DIM(cases); c++) {
		struct rte_mbuf *m = split_chain(pools[cases[c].p0],
			pools[cases[c].p1], cases[c].lens, cases[c].nseg,
			(uint8_t)c);
		struct gpurx_split_pkt sp;
		enum gpurx_split_how how;
		int short_chain;
		uint32_t cap;

		if (m == NULL)
			continue;
		if (cases[c].pkt_len != 0)
			m->pkt_len = cases[c].pkt_len;
		cap = gpurx_pkt_linear_len(m, &short_chain);
		how = gpurx_split_place(&rd, m, cap, body_lo, body_len, &sp);
		CHECK(how == cases[c].how && sp.len0 == (cases[c].len0 ==
			UINT32_MAX ? cap : cases[c].len0) &&
			sp.host == cases[c].host &&
			(cases[c].tail == TAIL_ANY ||
			 sp.tail == (cases[c].tail == TAIL_SEG1 ?
				rte_pktmbuf_mtod(m->next, uintptr_t) : 0)),
			"%s: how %d, len0 %u of %u, host %u, tail %#" PRIx64,
			cases[c].what, (int)how, sp.len0, cap, sp.host, sp.tail);
		rte_pktmbuf_free(m);
	}
	CHECK(rte_mempool_avail_count(hdr) == POOL_N &&
		rte_mempool_avail_count(body) == POOL_N &&
		rte_mempool_avail_count(other) == POOL_N, "split: mbufs back");
}

static void
test_refusals(void)
{
	struct gpurx_gpu_props ok = { .exec_timeout = 0, .coop_launch = 1 };
	struct gpurx_gpu_props tmo = { .exec_timeout = 1, .coop_launch = 1 };
	struct gpurx_gpu_props nocoop = { .exec_timeout = 0, .coop_launch = 0 };
	const char *why;

	CHECK(gpurx_mem_needs_gpu_wmb(GPURX_MEM_GPU), "gpu needs wmb");
	CHECK(!gpurx_mem_needs_gpu_wmb(GPURX_MEM_HOST_MAPPED), "host-mapped");
	CHECK(!gpurx_mem_needs_gpu_wmb(GPURX_MEM_STAGED), "staged");
	CHECK(gpurx_wmb_refusal(GPURX_MEM_GPU, 0) == NULL, "wmb works");
	why = gpurx_wmb_refusal(GPURX_MEM_GPU, -ENOTSUP);
	CHECK(why != NULL && strstr(why, "not supported") != NULL &&
		strstr(why, "host-mapped") != NULL, "gpu + ENOTSUP refused: %s",
		why ? why : "(accepted)");
	CHECK(gpurx_wmb_refusal(GPURX_MEM_GPU, -EIO) != NULL, "gpu + EIO");
	CHECK(gpurx_wmb_refusal(GPURX_MEM_HOST_MAPPED, -ENOTSUP) == NULL,
		"host-mapped does not need wmb");
	CHECK(gpurx_wmb_refusal(GPURX_MEM_STAGED, -ENOTSUP) == NULL,
		"staged does not need wmb");

	CHECK(gpurx_persistent_refusal(&ok) == NULL, "fit GPU");
	why = gpurx_persistent_refusal(&tmo);
	CHECK(why != NULL && strstr(why, "timeout") != NULL, "timeout refused");
	why = gpurx_persistent_refusal(&nocoop);
	CHECK(why != NULL && strstr(why, "cooperative") != NULL,
		"no cooperative launch refused");
}

int
main(int argc, char **argv)
{
	struct rte_mempool *reg, *other, *body;

	(void)argc;
	if (test_eal_init(argv[0], "test-gpu-guard") != 0)
		return 1;
	reg = pool_create("test_reg");
	other = pool_create("test_other");
	body = pool_create("test_body");
	if (reg == NULL || other == NULL || body == NULL)
		return 1;
	test_foreign(reg, other);
	test_odd_chains(reg);
	test_split_place(reg, body, other);
	test_refusals();
	rte_mempool_free(reg);
	rte_mempool_free(other);
	rte_mempool_free(body);
	rte_eal_cleanup();
	return check_finish("test_gpu_guard");
}
