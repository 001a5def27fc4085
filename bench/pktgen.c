/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_common.h"
#include "gpurx_portable.h"
#include "pktgen.h"

#define ETH_HLEN 14
#define IP4_HLEN 20
#define IP6_HLEN 40
#define TCP_HLEN 20
#define UDP_HLEN 8
#define ICMP_HLEN 8
#define PKTGEN_HUGE_ALIGN ((size_t)2 << 20)

static uint16_t
pick_len(uint64_t *rng)
{
	unsigned int r = bench_rand(rng) % 100;
	unsigned int lo, hi;

	if (r < 40) {
		lo = 64;
		hi = 127;
	} else if (r < 60) {
		lo = 128;
		hi = 575;
	} else if (r < 75) {
		lo = 576;
		hi = 1023;
	} else {
		lo = 1024;
		hi = PKTGEN_MAX_LEN;
	}
	return (uint16_t)(lo + bench_rand(rng) % (hi - lo + 1));
}

uint32_t
pktgen_pick_ip4(uint64_t *rng)
{
	uint64_t r = bench_rand(rng);

	if (r % 100 < 50) {
		if ((r >> 8) % 100 < 2)
			return 0x0A010203; /* 10.1.2.3 */
		return 0x0A000000 | (uint32_t)((r >> 16) & 0xFFFFFF);
	}
	return (uint32_t)(r >> 32);
}

uint16_t
pktgen_pick_dport(uint64_t *rng)
{
	uint64_t r = bench_rand(rng);
	unsigned int c = r % 100;

	if (c < 30)
		return 443;
	if (c < 45)
		return 80;
	if (c < 55)
		return 53;
	return (uint16_t)(1 + (r >> 16) % 65535);
}

/* L4 header at p (room checked by the caller); returns its length. */
static unsigned int
put_l4(uint8_t *p, uint8_t proto, uint16_t l4_len, uint64_t *rng)
{
	uint16_t sport = (uint16_t)(1024 + bench_rand(rng) % 64512);

	switch (proto) {
	case 6: /* TCP */
		gpurx_put_be16(p, sport);
		gpurx_put_be16(p + 2, pktgen_pick_dport(rng));
		gpurx_put_be32(p + 4, (uint32_t)bench_rand(rng));	/* seq */
		gpurx_put_be32(p + 8, (uint32_t)bench_rand(rng));	/* ack */
		p[12] = 5 << 4;					/* data offset */
		p[13] = 0x18;					/* PSH|ACK */
		gpurx_put_be16(p + 14, 65535);				/* window */
		gpurx_put_be16(p + 16, (uint16_t)bench_rand(rng));	/* checksum */
		gpurx_put_be16(p + 18, 0);
		return TCP_HLEN;
	case 17: /* UDP */
		gpurx_put_be16(p, sport);
		gpurx_put_be16(p + 2, pktgen_pick_dport(rng));
		gpurx_put_be16(p + 4, l4_len);
		gpurx_put_be16(p + 6, (uint16_t)bench_rand(rng));
		return UDP_HLEN;
	default: /* ICMP echo */
		p[0] = 8;
		p[1] = 0;
		gpurx_put_be16(p + 2, (uint16_t)bench_rand(rng));
		gpurx_put_be32(p + 4, (uint32_t)bench_rand(rng));
		return ICMP_HLEN;
	}
}

static uint8_t
pick_proto(uint64_t *rng)
{
	unsigned int c = bench_rand(rng) % 100;

	return c < 70 ? 6 : c < 95 ? 17 : 1;
}

static void
make_packet(uint8_t *p, uint16_t len, uint64_t *rng)
{
	unsigned int c = bench_rand(rng) % 100;
	uint8_t *l3 = p + ETH_HLEN;

	/* Random bytes everywhere first; headers are written over them. */
	bench_fill_random(p, len, rng);
	p[0] &= 0xFE; /* unicast destination MAC */
	if (c < 88) {
		uint8_t proto = pick_proto(rng);
		bool frag = bench_rand(rng) % 100 == 0;

		gpurx_put_be16(p + 12, 0x0800);
		l3[0] = 0x45;
		l3[1] = 0;
		gpurx_put_be16(l3 + 2, (uint16_t)(len - ETH_HLEN));
		gpurx_put_be16(l3 + 4, (uint16_t)bench_rand(rng));		/* id */
		/* DF, or a non-first fragment (offset in 8-byte units). */
		gpurx_put_be16(l3 + 6, frag ? (uint16_t)(1 + bench_rand(rng) % 1000) :
			0x4000);
		l3[8] = 64;
		l3[9] = frag ? 6 : proto;
		gpurx_put_be16(l3 + 10, (uint16_t)bench_rand(rng));		/* checksum */
		gpurx_put_be32(l3 + 12, pktgen_pick_ip4(rng));
		gpurx_put_be32(l3 + 16, pktgen_pick_ip4(rng));
		if (!frag)
			put_l4(l3 + IP4_HLEN, proto,
				(uint16_t)(len - ETH_HLEN - IP4_HLEN), rng);
	} else if (c < 97 && len >= ETH_HLEN + IP6_HLEN + TCP_HLEN) {
		uint8_t proto = pick_proto(rng);

		gpurx_put_be16(p + 12, 0x86DD);
		gpurx_put_be32(l3, 0x60000000 | (uint32_t)(bench_rand(rng) & 0xFFFFF));
		gpurx_put_be16(l3 + 4, (uint16_t)(len - ETH_HLEN - IP6_HLEN));
		l3[6] = proto == 1 ? 58 : proto;	/* ICMPv6 */
		l3[7] = 64;
		/* Addresses stay random (2001:db8::/32 prefix). */
		gpurx_put_be32(l3 + 8, 0x20010DB8);
		gpurx_put_be32(l3 + 24, 0x20010DB8);
		put_l4(l3 + IP6_HLEN, proto,
			(uint16_t)(len - ETH_HLEN - IP6_HLEN), rng);
	} else {
		gpurx_put_be16(p + 12, 0x0806);	/* ARP request */
		gpurx_put_be16(l3, 1);
		gpurx_put_be16(l3 + 2, 0x0800);
		l3[4] = 6;
		l3[5] = 4;
		gpurx_put_be16(l3 + 6, 1);
	}
}

int
pktgen_generate(struct pktgen_set *set, uint32_t n, uint64_t seed)
{
	uint64_t rng = bench_seed(seed);
	uint64_t off = 0;
	uint32_t i;

	memset(set, 0, sizeof(*set));
	set->off = malloc(sizeof(*set->off) * (n ? n : 1));
	set->len = malloc(sizeof(*set->len) * (n ? n : 1));
	if (set->off == NULL || set->len == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		set->len[i] = pick_len(&rng);
		set->off[i] = off;
		off += (set->len[i] + PKTGEN_ALIGN - 1) & ~(uint64_t)(PKTGEN_ALIGN - 1);
		set->total_bytes += set->len[i];
	}
	set->buf_size = off ? off : PKTGEN_ALIGN;
	/* 2 MiB-aligned and, where the kernel allows, backed by transparent
	 * huge pages: like a capture application's hugepage mempools, the
	 * filters then pay cache misses, not TLB misses on 4 KiB pages. */
	set->buf = aligned_alloc(PKTGEN_HUGE_ALIGN,
		(set->buf_size + PKTGEN_HUGE_ALIGN - 1) & ~(size_t)(PKTGEN_HUGE_ALIGN - 1));
	if (set->buf == NULL)
		goto fail;
	(void)madvise(set->buf, set->buf_size, MADV_HUGEPAGE); /* best effort */
	for (i = 0; i < n; i++)
		make_packet(set->buf + set->off[i], set->len[i], &rng);
	set->n = n;
	return 0;
fail:
	pktgen_free(set);
	return -1;
}

void
pktgen_free(struct pktgen_set *set)
{
	free(set->buf);
	free(set->off);
	free(set->len);
	memset(set, 0, sizeof(*set));
}
