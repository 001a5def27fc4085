/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Field engine: per-packet variation of a template frame, in the spirit
 * of TRex STL's field engine, shared by the CPU and GPU.
 *
 * A program holds variables and writes. A variable has 1, 2, 4 or 8
 * bytes and an operation over [min, max]:
 *   inc     v(i) = min + (init - min + i * step) mod (max - min + 1)
 *   dec     v(i) = min + (init - min - i * step) mod (max - min + 1)
 *   random  v(i) = min + H(seed, stream, var, i) mod (max - min + 1)
 *   tuple   flow k = i mod flows (flows = n_ip * n_port, or limit):
 *           ip = ip_min + k mod n_ip, port = port_min + k / n_ip
 * where i is the packet index in the stream, or the burst index
 * (i / burst) for a per-burst variable. Every value is a closed form of
 * i, so packet i of a stream is a pure function of (template, program,
 * i): any GPU thread builds any packet, byte-identical to the CPU.
 *
 * A write stores a variable's value plus a constant, big-endian, at a
 * byte offset or a named field (gpugen_fe_write_field()); sub-byte fields
 * (VLAN id, IPv6 traffic class) are masked in. After each write the
 * IPv4 header and L4 checksums are adjusted incrementally (RFC 1624), as
 * is the stamp's when the program stamps (gpugen_stamp.h). Writes may not
 * touch a checksum, a length, a protocol field or the stamp: the engine
 * keeps those consistent itself.
 *
 * The program is plain data (no pointers): copy it to GPU memory as is.
 */
#ifndef GPUGEN_FE_H
#define GPUGEN_FE_H

#include "gpugen_build.h"
#include "gpugen_stamp.h"

#define GPUGEN_FE_MAX_VARS 16
#define GPUGEN_FE_MAX_WRITES 32

#define GPUGEN_FE_INC 0
#define GPUGEN_FE_DEC 1
#define GPUGEN_FE_RANDOM 2
#define GPUGEN_FE_TUPLE 3

/* Which part of a variable a write takes. */
#define GPUGEN_FE_PART_VALUE 0	/* the value (inc, dec, random) */
#define GPUGEN_FE_PART_IP 1	/* a tuple's address, 4 bytes */
#define GPUGEN_FE_PART_PORT 2	/* a tuple's port, 2 bytes */

struct gpugen_fe_var {
	uint64_t init, min, max, step;
	uint32_t ip_min, ip_max;	/* tuple */
	uint64_t flows;			/* tuple: flows before it repeats */
	uint16_t port_min, port_max;	/* tuple */
	uint8_t size;
	uint8_t op;
	uint8_t per_burst;
};

struct gpugen_fe_write {
	uint64_t add;
	uint64_t mask;		/* 0: the whole field */
	uint32_t off;
	uint8_t var;
	uint8_t width;		/* bytes written */
	uint8_t part;
	uint8_t shift;
};

struct gpugen_fe_prog {
	uint64_t seed;
	uint32_t stream;
	uint32_t burst;		/* packets per burst, >= 1 */
	uint32_t tmpl_len;
	uint32_t stamp_off;	/* 0: no stamp */
	/* Checksummed regions of the template; csum 0: none. */
	uint32_t ip4_start, ip4_end, ip4_csum;
	uint32_t l4_start, l4_end, l4_csum;
	uint32_t ph_start, ph_end;	/* addresses in the L4 pseudo-header */
	uint8_t l4_udp;
	/* TX checksum offload (gpugen_fe_csum_offload): the IPv4 header
	 * checksum stays 0; l4_phdr: the L4 field holds the pseudo-header's
	 * sum, which only writes to the addresses change. */
	uint8_t csum_offload;
	uint8_t l4_phdr;
	uint32_t n_vars, n_writes;
	struct gpugen_pkt_layout lay;	/* for named fields, host side */
	struct gpugen_fe_var vars[GPUGEN_FE_MAX_VARS];
	struct gpugen_fe_write writes[GPUGEN_FE_MAX_WRITES];
};

/* ---- Per packet: portable ------------------------------------------- */

/* splitmix64's finaliser: a bijection that mixes every input bit. */
GPURX_FN uint64_t
gpugen_fe_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Counter-based random: a key from (seed, stream, var), then splitmix64
 * at position i, so value i needs no state from value i - 1.
 */
GPURX_FN uint64_t
gpugen_fe_hash(uint64_t seed, uint32_t stream, uint32_t var, uint64_t i)
{
	uint64_t key = gpugen_fe_mix64(seed ^
		gpugen_fe_mix64((((uint64_t)stream << 8) | var) +
			0x9e3779b97f4a7c15ull));

	return gpugen_fe_mix64(key + (i + 1) * 0x9e3779b97f4a7c15ull);
}

/* (a + b) mod r for a, b < r; r == 0 stands for 2^64. */
GPURX_FN uint64_t
gpugen_fe_addmod(uint64_t a, uint64_t b, uint64_t r)
{
	if (r == 0)
		return a + b;
	return a >= r - b ? a - (r - b) : a + b;
}

/* (a * b) mod r without 128-bit arithmetic; r == 0 stands for 2^64. */
GPURX_FN uint64_t
gpugen_fe_mulmod(uint64_t a, uint64_t b, uint64_t r)
{
	uint64_t res = 0;

	if (r == 0)
		return a * b;
	/* The common step of 1: one remainder, not three (64-bit ones are a
	 * long software sequence on the GPU). */
	if (b == 1)
		return a % r;
	a %= r;
	b %= r;
	if (a <= 0xffffffffull && b <= 0xffffffffull)
		return (a * b) % r;
	/* Double and add: only ranges over 2^32 with large steps get here. */
	while (b != 0) {
		if (b & 1)
			res = gpugen_fe_addmod(res, a, r);
		a = gpugen_fe_addmod(a, a, r);
		b >>= 1;
	}
	return res;
}

/* Variable v's value for packet i (before a write's part selection). */
GPURX_FN uint64_t
gpugen_fe_value(const struct gpugen_fe_prog *p, uint32_t v, uint64_t i)
{
	const struct gpugen_fe_var *x = &p->vars[v];
	uint64_t r = x->max - x->min + 1;	/* 0: the full 2^64 */
	uint64_t idx = x->per_burst ? i / p->burst : i;
	uint64_t a, b;

	switch (x->op) {
	case GPUGEN_FE_INC:
		a = x->init - x->min;
		b = gpugen_fe_mulmod(idx, x->step, r);
		return x->min + gpugen_fe_addmod(a, b, r);
	case GPUGEN_FE_DEC:
		a = x->init - x->min;
		b = gpugen_fe_mulmod(idx, x->step, r);
		/* a - b mod r = a + (r - b) mod r */
		return x->min + (b == 0 ? a : gpugen_fe_addmod(a, r - b, r));
	case GPUGEN_FE_RANDOM: {
		uint64_t h = gpugen_fe_hash(p->seed, p->stream, v, idx);

		return x->min + (r != 0 ? h % r : h);
	}
	default: {	/* GPUGEN_FE_TUPLE */
		uint64_t n_ip = (uint64_t)x->ip_max - x->ip_min + 1;
		uint64_t k = idx % x->flows;

		return ((uint64_t)(x->ip_min + (uint32_t)(k % n_ip)) << 16) |
			(uint16_t)(x->port_min + (uint16_t)(k / n_ip));
	}
	}
}

/* Checksum sums over the bytes [off, off + len): m (or m') per region. */
GPURX_FN void
gpugen_fe_sums(const struct gpugen_fe_prog *p, const uint8_t *pkt, uint32_t off,
		uint32_t len, uint32_t s[2])
{
	s[0] = 0;
	s[1] = 0;
	if (p->ip4_csum != 0 && !p->csum_offload)
		s[0] = gpugen_csum_span(pkt, p->ip4_start, p->ip4_end, off, len);
	if (p->l4_csum != 0)
		s[1] = (p->l4_phdr ? 0 : gpugen_csum_span(pkt, p->l4_start,
			p->l4_end, off, len)) +
			gpugen_csum_span(pkt, p->ph_start, p->ph_end, off, len);
}

/*
 * gpugen_csum_span() of region [rs, re) over [off, off + len), those
 * bytes holding the n (<= 3) big-endian values v of w (<= 8) bytes each
 * (n * w == len, w even when n > 1): the same sum, from the values rather
 * than the bytes; the bytes that share the span's end words are read from
 * frame. The span lies wholly in the region or wholly out of it.
 */
GPURX_FN uint32_t
gpugen_csum_span_val(const uint8_t *frame, uint32_t rs, uint32_t re,
		uint32_t off, uint32_t len, const uint64_t *v, uint32_t n,
		uint32_t w)
{
	const uint64_t lane = 0x00ff00ff00ff00ffull;
	uint64_t e = 0, o = 0, keep = w < 8 ? (1ull << (8 * w)) - 1 : ~0ull;
	uint32_t se, so, sum;

	if (off + len <= rs || off >= re)
		return 0;
	/* The bytes at even and at odd places from each value's last, one
	 * a 16-bit lane (at most 3 x 255 in one), the lanes then summed by
	 * one multiply: a few operations a value, not a load and an add a
	 * byte. */
	for (uint32_t k = 0; k < n; k++) {
		e += v[k] & keep & lane;
		o += ((v[k] & keep) >> 8) & lane;
	}
	se = (uint32_t)((e * 0x0001000100010001ull) >> 48);
	so = (uint32_t)((o * 0x0001000100010001ull) >> 48);
	/* A value's last byte is the high half of its word when it ends an
	 * odd number of bytes past a word's start. */
	sum = ((off + len - rs) & 1) ? (se << 8) + so : se + (so << 8);
	if ((off - rs) & 1)
		sum += (uint32_t)frame[off - 1] << 8;
	if (((off + len - rs) & 1) && off + len < re)
		sum += frame[off + len];
	return sum;
}

/* Whether [off, off + len) lies wholly in or out of each summed region. */
GPURX_FN int
gpugen_fe_span_whole(const struct gpugen_fe_prog *p, uint32_t off,
		uint32_t len)
{
	uint32_t e = off + len;

#define GPUGEN_FE_WHOLE(a, b) \
	(e <= (a) || off >= (b) || ((a) <= off && e <= (b)))
	return GPUGEN_FE_WHOLE(p->ip4_start, p->ip4_end) &&
		GPUGEN_FE_WHOLE(p->l4_start, p->l4_end) &&
		GPUGEN_FE_WHOLE(p->ph_start, p->ph_end);
#undef GPUGEN_FE_WHOLE
}

/*
 * gpugen_fe_sums() of [off, off + len) holding the values v (as
 * gpugen_csum_span_val()), for a span gpugen_fe_span_whole() accepts.
 */
GPURX_FN void
gpugen_fe_sums_val(const struct gpugen_fe_prog *p, const uint8_t *pkt,
		uint32_t off, uint32_t len, const uint64_t *v, uint32_t n,
		uint32_t w, uint32_t s[2])
{
	s[0] = 0;
	s[1] = 0;
	if (p->ip4_csum != 0 && !p->csum_offload)
		s[0] = gpugen_csum_span_val(pkt, p->ip4_start, p->ip4_end, off,
			len, v, n, w);
	if (p->l4_csum != 0)
		s[1] = (p->l4_phdr ? 0 : gpugen_csum_span_val(pkt, p->l4_start,
			p->l4_end, off, len, v, n, w)) +
			gpugen_csum_span_val(pkt, p->ph_start, p->ph_end, off,
				len, v, n, w);
}

GPURX_FN void
gpugen_fe_fix(const struct gpugen_fe_prog *p, uint8_t *pkt,
		const uint32_t m[2], const uint32_t m2[2])
{
	uint16_t c;

	if (p->ip4_csum != 0 && m[0] != m2[0]) {
		c = gpurx_be16(pkt + p->ip4_csum);
		gpurx_put_be16(pkt + p->ip4_csum, gpugen_csum_adjust(c, m[0], m2[0]));
	}
	if (p->l4_csum != 0 && m[1] != m2[1] && p->l4_phdr) {
		/* A sum, not its complement: S' = ~adjust(~S, m, m'). */
		c = gpurx_be16(pkt + p->l4_csum);
		gpurx_put_be16(pkt + p->l4_csum,
			(uint16_t)~gpugen_csum_adjust((uint16_t)~c, m[1], m2[1]));
	} else if (p->l4_csum != 0 && m[1] != m2[1]) {
		c = gpurx_be16(pkt + p->l4_csum);
		c = gpugen_csum_adjust(c, m[1], m2[1]);
		/* UDP sends a computed 0 as 0xffff: 0 means "none". */
		if (c == 0 && p->l4_udp)
			c = 0xffff;
		gpurx_put_be16(pkt + p->l4_csum, c);
	}
}

/*
 * A packet's checksum changes, summed: gpugen_fe_fix() per change reads,
 * adjusts and writes each checksum field again, a chain through memory
 * from one write to the next (on a GPU thread, a dependent load and
 * store per write). Summing the RFC 1624 terms (~m + m') and adjusting
 * once gives the same bytes: a change whose sum stays as it was adds no
 * term, as gpugen_fe_fix() skips it, and only a field no change touched
 * is left as it stands (a stored 0xffff among them).
 */
struct gpugen_fe_acc {
	uint32_t sum[2];	/* per region, as gpugen_fe_sums() */
	uint32_t changed[2];
};

GPURX_FN void
gpugen_fe_acc_add(struct gpugen_fe_acc *a, const uint32_t m[2],
		const uint32_t m2[2])
{
	/* At most GPUGEN_FE_MAX_WRITES + 1 terms of 17 bits: no overflow. */
	for (int r = 0; r < 2; r++) {
		if (m[r] == m2[r])
			continue;
		a->sum[r] += (uint16_t)~gpugen_csum_fold(m[r]) +
			gpugen_csum_fold(m2[r]);
		a->changed[r] = 1;
	}
}

/* gpugen_fe_fix() for the changes summed in a. */
GPURX_FN void
gpugen_fe_acc_fix(const struct gpugen_fe_prog *p, uint8_t *pkt,
		const struct gpugen_fe_acc *a)
{
	uint16_t c;

	if (p->ip4_csum != 0 && a->changed[0]) {
		c = gpurx_be16(pkt + p->ip4_csum);
		gpurx_put_be16(pkt + p->ip4_csum,
			(uint16_t)~gpugen_csum_fold((uint16_t)~c + a->sum[0]));
	}
	if (p->l4_csum == 0 || !a->changed[1])
		return;
	c = gpurx_be16(pkt + p->l4_csum);
	if (p->l4_phdr) {
		/* A sum, not its complement: S' = S + the terms. */
		c = gpugen_csum_fold(c + a->sum[1]);
	} else {
		c = (uint16_t)~gpugen_csum_fold((uint16_t)~c + a->sum[1]);
		/* UDP sends a computed 0 as 0xffff: 0 means "none". */
		if (c == 0 && p->l4_udp)
			c = 0xffff;
	}
	gpurx_put_be16(pkt + p->l4_csum, c);
}

/*
 * Apply the program to a copy of the template in pkt, as packet i, its
 * stamp numbered seq (a replay stream numbers only its stamped frames,
 * so that the receiver counts no unstamped one as lost). pkt never lies
 * in the program: restrict lets the compiler keep the program's fields
 * in registers across the byte stores to pkt, which would otherwise
 * reload them after every store (a uint8_t store may alias anything).
 */
GPURX_FN void
gpugen_fe_apply_seq(const struct gpugen_fe_prog *GPURX_RESTRICT p,
		uint8_t *GPURX_RESTRICT pkt, uint64_t i, uint64_t seq,
		uint64_t tx_ns)
{
	struct gpugen_fe_acc acc = {{0, 0}, {0, 0}};
	uint32_t m[2], m2[2];

	for (uint32_t w = 0; w < p->n_writes; w++) {
		const struct gpugen_fe_write *x = &p->writes[w];
		uint64_t v = gpugen_fe_value(p, x->var, i);
		uint8_t *d = pkt + x->off;

		if (x->part == GPUGEN_FE_PART_IP)
			v >>= 16;
		else if (x->part == GPUGEN_FE_PART_PORT)
			v &= 0xffff;
		v += x->add;
		gpugen_fe_sums(p, pkt, x->off, x->width, m);
		if (x->mask != 0)
			v = (gpurx_get_ben(d, x->width) & ~x->mask) |
				((v << x->shift) & x->mask);
		gpurx_put_ben(d, x->width, v);
		gpugen_fe_sums(p, pkt, x->off, x->width, m2);
		gpugen_fe_acc_add(&acc, m, m2);
	}
	if (p->stamp_off != 0) {
		/* The stamp's sums from its three words, old and new: no
		 * byte of it is read back after it is written, and no byte
		 * of its 24 summed one at a time (a dependent step each on a
		 * GPU thread). gpugen_fe_set_stamp() keeps the stamp wholly
		 * in or out of each summed region. */
		uint8_t *d = pkt + p->stamp_off;
		uint64_t o[3], n[3];

		o[0] = gpurx_be64(d);
		o[1] = gpurx_be64(d + 8);
		o[2] = gpurx_be64(d + 16);
		n[0] = ((uint64_t)GPUGEN_STAMP_MAGIC << 32) | p->stream;
		n[1] = seq;
		n[2] = tx_ns;
		gpugen_fe_sums_val(p, pkt, p->stamp_off, GPUGEN_STAMP_LEN, o, 3,
			8, m);
		gpugen_fe_sums_val(p, pkt, p->stamp_off, GPUGEN_STAMP_LEN, n, 3,
			8, m2);
		gpugen_stamp_put(d, p->stream, seq, tx_ns);
		gpugen_fe_acc_add(&acc, m, m2);
	}
	gpugen_fe_acc_fix(p, pkt, &acc);
}

/* Apply the program to a copy of the template in pkt, as packet i. */
GPURX_FN void
gpugen_fe_apply(const struct gpugen_fe_prog *p, uint8_t *pkt, uint64_t i,
		uint64_t tx_ns)
{
	gpugen_fe_apply_seq(p, pkt, i, i, tx_ns);
}

/* Packet i of the stream: the template copied to out, then the program. */
GPURX_FN void
gpugen_fe_make(const struct gpugen_fe_prog *p, const uint8_t *tmpl, uint8_t *out,
		uint64_t i, uint64_t tx_ns)
{
	gpugen_pb_copy(out, tmpl, p->tmpl_len);
	gpugen_fe_apply(p, out, i, tx_ns);
}

/* ---- Building a program: host only ----------------------------------- */
#ifndef __CUDA_ARCH__
#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * Start a program for a template built with layout lay (len bytes).
 * burst: packets per burst for per-burst variables (>= 1).
 */
static inline int
gpugen_fe_init(struct gpugen_fe_prog *p, const struct gpugen_pkt_layout *lay,
		uint64_t seed, uint32_t stream, uint32_t burst)
{
	memset(p, 0, sizeof(*p));
	if (burst == 0 || lay->len == 0)
		return -EINVAL;
	p->seed = seed;
	p->stream = stream;
	p->burst = burst;
	p->tmpl_len = lay->len;
	p->lay = *lay;
	if (lay->ip4_csum_off != 0) {
		p->ip4_start = lay->l3_off;
		p->ip4_end = lay->l3_off + lay->l3_hlen;
		p->ip4_csum = lay->ip4_csum_off;
	}
	if (lay->l4_csum_off != 0) {
		p->l4_start = lay->l4_off;
		p->l4_end = lay->ip_end;
		p->l4_csum = lay->l4_csum_off;
		p->l4_udp = lay->l4_proto == GPURX_IPPROTO_UDP;
		if (lay->l4_proto != GPURX_IPPROTO_ICMP) {
			p->ph_start = lay->l3_off + (lay->ip_version == 4 ? 12 : 8);
			p->ph_end = p->ph_start + (lay->ip_version == 4 ? 8 : 32);
		}
	}
	return 0;
}

/*
 * The program of a template readied by gpugen_pkt_csum_offload(): the
 * IPv4 header checksum is left at 0 and a UDP or TCP checksum field kept
 * as the pseudo-header's sum (writes to the addresses adjust it; the
 * segment's bytes are the port's to sum). ICMP's is kept whole as before.
 */
static inline void
gpugen_fe_csum_offload(struct gpugen_fe_prog *p)
{
	p->csum_offload = 1;
	p->l4_phdr = p->l4_csum != 0 && p->ph_start != 0 &&
		(p->lay.l4_proto == GPURX_IPPROTO_UDP ||
		 p->lay.l4_proto == GPURX_IPPROTO_TCP);
}

static inline int
gpugen_fe_size_ok(uint8_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * An inc, dec or random variable. Returns its index, -EINVAL for a bad
 * size, op or range (init outside [min, max], max beyond the size),
 * -ENOSPC when the program is full.
 */
static inline int
gpugen_fe_add_var(struct gpugen_fe_prog *p, uint8_t size, uint8_t op,
		uint64_t min, uint64_t max, uint64_t init, uint64_t step,
		int per_burst)
{
	struct gpugen_fe_var *x;
	uint64_t lim;

	if (!gpugen_fe_size_ok(size) || op > GPUGEN_FE_RANDOM)
		return -EINVAL;
	lim = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
	if (min > max || max > lim || init < min || init > max)
		return -EINVAL;
	if (p->n_vars >= GPUGEN_FE_MAX_VARS)
		return -ENOSPC;
	x = &p->vars[p->n_vars];
	memset(x, 0, sizeof(*x));
	x->size = size;
	x->op = op;
	x->min = min;
	x->max = max;
	x->init = init;
	x->step = step;
	x->per_burst = per_burst != 0;
	return (int)p->n_vars++;
}

/*
 * An address x port tuple over [ip_min, ip_max] x [port_min, port_max];
 * limit > 0 stops after that many flows. Returns its index or -errno.
 */
static inline int
gpugen_fe_add_tuple(struct gpugen_fe_prog *p, uint32_t ip_min, uint32_t ip_max,
		uint16_t port_min, uint16_t port_max, uint64_t limit,
		int per_burst)
{
	struct gpugen_fe_var *x;
	uint64_t flows;

	if (ip_min > ip_max || port_min > port_max)
		return -EINVAL;
	if (p->n_vars >= GPUGEN_FE_MAX_VARS)
		return -ENOSPC;
	flows = ((uint64_t)ip_max - ip_min + 1) *
		((uint64_t)port_max - port_min + 1);
	x = &p->vars[p->n_vars];
	memset(x, 0, sizeof(*x));
	x->op = GPUGEN_FE_TUPLE;
	x->size = 6;
	x->ip_min = ip_min;
	x->ip_max = ip_max;
	x->port_min = port_min;
	x->port_max = port_max;
	x->flows = limit != 0 && limit < flows ? limit : flows;
	x->per_burst = per_burst != 0;
	return (int)p->n_vars++;
}

static inline int
gpugen_fe_overlap(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
	return a < b + blen && b < a + alen;
}

/* Whether [off, off + len) touches what the engine keeps consistent. */
static inline int
gpugen_fe_protected(const struct gpugen_fe_prog *p, uint32_t off, uint32_t len)
{
	const struct gpugen_pkt_layout *l = &p->lay;

	if (p->ip4_csum && gpugen_fe_overlap(off, len, p->ip4_csum, 2))
		return 1;
	if (p->l4_csum && gpugen_fe_overlap(off, len, p->l4_csum, 2))
		return 1;
	if (p->stamp_off &&
			gpugen_fe_overlap(off, len, p->stamp_off, GPUGEN_STAMP_LEN))
		return 1;
	/* Version and IHL, total length, protocol; not the TOS byte
	 * between them: it is a field like any other, in the checksummed
	 * header. */
	if (l->ip_version == 4 &&
			(gpugen_fe_overlap(off, len, l->l3_off, 1) ||
			gpugen_fe_overlap(off, len, l->l3_off + 2, 2) ||
			gpugen_fe_overlap(off, len, l->l3_off + 9, 1)))
		return 1;
	if (l->ip_version == 6 &&
			gpugen_fe_overlap(off, len, l->l3_off + 4, 3))
		return 1;	/* payload length, next header */
	if (l->l4_off && l->l4_proto == GPURX_IPPROTO_UDP &&
			gpugen_fe_overlap(off, len, l->l4_off + 4, 2))
		return 1;	/* UDP length */
	return 0;
}

static inline int
gpugen_fe_add_write(struct gpugen_fe_prog *p, uint32_t off, uint32_t width,
		uint64_t mask, uint8_t shift, int var, uint8_t part,
		uint64_t add)
{
	struct gpugen_fe_write *w;
	const struct gpugen_fe_var *x;

	if (var < 0 || (uint32_t)var >= p->n_vars)
		return -EINVAL;
	x = &p->vars[var];
	if ((x->op == GPUGEN_FE_TUPLE) != (part != GPUGEN_FE_PART_VALUE) ||
			part > GPUGEN_FE_PART_PORT)
		return -EINVAL;
	if (off > p->tmpl_len || width > p->tmpl_len - off)
		return -ERANGE;
	if (gpugen_fe_protected(p, off, width))
		return -EPERM;
	if (p->n_writes >= GPUGEN_FE_MAX_WRITES)
		return -ENOSPC;
	w = &p->writes[p->n_writes];
	memset(w, 0, sizeof(*w));
	w->off = off;
	w->width = (uint8_t)width;
	w->mask = mask;
	w->shift = shift;
	w->var = (uint8_t)var;
	w->part = part;
	w->add = add;
	return (int)p->n_writes++;
}

static inline uint32_t
gpugen_fe_part_size(const struct gpugen_fe_prog *p, int var, uint8_t part)
{
	if (part == GPUGEN_FE_PART_IP)
		return 4;
	if (part == GPUGEN_FE_PART_PORT)
		return 2;
	return var >= 0 && (uint32_t)var < p->n_vars ? p->vars[var].size : 0;
}

/*
 * Write variable var (its part) plus add at byte offset off, as many
 * bytes as it has. Returns the write's index, -EINVAL (bad var or part),
 * -ERANGE (past the template), -EPERM (a field the engine keeps) or
 * -ENOSPC.
 */
static inline int
gpugen_fe_write_off(struct gpugen_fe_prog *p, uint32_t off, int var,
		uint8_t part, uint64_t add)
{
	uint32_t n = gpugen_fe_part_size(p, var, part);

	if (n == 0)
		return -EINVAL;
	return gpugen_fe_add_write(p, off, n, 0, 0, var, part, add);
}

struct gpugen_fe_field {
	uint32_t off;
	uint32_t width;
	uint64_t mask;
	uint8_t shift;
};

/*
 * Resolve a field name against the template's layout. 0, -ENOENT for an
 * unknown name, -ENXIO for a header the template does not have.
 */
static inline int
gpugen_fe_field_find(const struct gpugen_pkt_layout *l, const char *name,
		struct gpugen_fe_field *f)
{
	uint32_t n_vlans = (l->l3_off - 14) / 4;
	uint32_t l3 = l->l3_off, l4 = l->l4_off;
	int v4 = l->ip_version == 4, v6 = l->ip_version == 6;
	uint8_t pr = l->l4_proto;
	int have = 1;

	memset(f, 0, sizeof(*f));
	if (strncmp(name, "ip.", 3) == 0 && (v4 || v6)) {
		char alias[24];

		if (strlen(name) + 2 >= sizeof(alias))
			return -ENOENT;
		snprintf(alias, sizeof(alias), "ipv%c.%s", v4 ? '4' : '6',
			name + 3);
		if (v6 && strcmp(name + 3, "ttl") == 0)
			return gpugen_fe_field_find(l, "ipv6.hlim", f);
		if (v6 && strcmp(name + 3, "tos") == 0)
			return gpugen_fe_field_find(l, "ipv6.tc", f);
		return gpugen_fe_field_find(l, alias, f);
	}
#define GPUGEN_FE_F(nm, cond, o, w, m, s) \
	if (strcmp(name, nm) == 0) { \
		have = (cond); \
		f->off = (o); f->width = (w); f->mask = (m); f->shift = (s); \
		goto found; \
	}
	GPUGEN_FE_F("eth.dst", 1, 0, 6, 0, 0)
	GPUGEN_FE_F("eth.src", 1, 6, 6, 0, 0)
	GPUGEN_FE_F("vlan.id", n_vlans >= 1, 14, 2, 0x0fff, 0)
	GPUGEN_FE_F("vlan.pcp", n_vlans >= 1, 14, 2, 0xe000, 13)
	GPUGEN_FE_F("vlan.inner.id", n_vlans >= 2, 18, 2, 0x0fff, 0)
	GPUGEN_FE_F("ipv4.tos", v4, l3 + 1, 1, 0, 0)
	GPUGEN_FE_F("ipv4.id", v4, l3 + 4, 2, 0, 0)
	GPUGEN_FE_F("ipv4.ttl", v4, l3 + 8, 1, 0, 0)
	GPUGEN_FE_F("ipv4.src", v4, l3 + 12, 4, 0, 0)
	GPUGEN_FE_F("ipv4.dst", v4, l3 + 16, 4, 0, 0)
	GPUGEN_FE_F("ipv6.tc", v6, l3, 2, 0x0ff0, 4)
	GPUGEN_FE_F("ipv6.flow", v6, l3 + 1, 3, 0x0fffff, 0)
	GPUGEN_FE_F("ipv6.hlim", v6, l3 + 7, 1, 0, 0)
	GPUGEN_FE_F("ipv6.src", v6, l3 + 8, 16, 0, 0)
	GPUGEN_FE_F("ipv6.dst", v6, l3 + 24, 16, 0, 0)
	GPUGEN_FE_F("udp.sport", l4 && pr == GPURX_IPPROTO_UDP, l4, 2, 0, 0)
	GPUGEN_FE_F("udp.dport", l4 && pr == GPURX_IPPROTO_UDP, l4 + 2, 2, 0, 0)
	GPUGEN_FE_F("tcp.sport", l4 && pr == GPURX_IPPROTO_TCP, l4, 2, 0, 0)
	GPUGEN_FE_F("tcp.dport", l4 && pr == GPURX_IPPROTO_TCP, l4 + 2, 2, 0, 0)
	GPUGEN_FE_F("tcp.seq", l4 && pr == GPURX_IPPROTO_TCP, l4 + 4, 4, 0, 0)
	GPUGEN_FE_F("tcp.ack", l4 && pr == GPURX_IPPROTO_TCP, l4 + 8, 4, 0, 0)
	GPUGEN_FE_F("icmp.id", l4 && (pr == GPURX_IPPROTO_ICMP ||
		pr == GPURX_IPPROTO_ICMPV6), l4 + 4, 2, 0, 0)
	GPUGEN_FE_F("icmp.seq", l4 && (pr == GPURX_IPPROTO_ICMP ||
		pr == GPURX_IPPROTO_ICMPV6), l4 + 6, 2, 0, 0)
#undef GPUGEN_FE_F
	return -ENOENT;
found:
	return have ? 0 : -ENXIO;
}

/*
 * Write variable var (its part) plus add into a named field. A value
 * narrower than the field goes in its last bytes (the low bits of an
 * address); a wider one is refused (-EINVAL). A masked field (VLAN id
 * and priority, IPv6 traffic class and flow label) takes values up to its
 * bits' maximum, whatever the variable's size: a larger maximum (plus
 * add) is refused (-ERANGE). Returns the write's index or -errno as
 * gpugen_fe_write_off() and gpugen_fe_field_find().
 */
static inline int
gpugen_fe_write_field(struct gpugen_fe_prog *p, const char *name, int var,
		uint8_t part, uint64_t add)
{
	struct gpugen_fe_field f;
	uint32_t n = gpugen_fe_part_size(p, var, part);
	int rc = gpugen_fe_field_find(&p->lay, name, &f);

	if (rc != 0)
		return rc;
	if (n == 0)
		return -EINVAL;
	if (f.mask != 0) {
		/* Bits, not bytes, bound a masked field: a value past them
		 * would wrap into the field's low bits, silently. */
		uint64_t room = f.mask >> f.shift, top;

		if (var < 0 || (uint32_t)var >= p->n_vars)
			return -EINVAL;
		top = part == GPUGEN_FE_PART_IP ? p->vars[var].ip_max :
			part == GPUGEN_FE_PART_PORT ? p->vars[var].port_max :
			p->vars[var].max;
		if (top > room || add > room - top)
			return -ERANGE;
		return gpugen_fe_add_write(p, f.off, f.width, f.mask, f.shift,
			var, part, add);
	}
	if (n > f.width)
		return -EINVAL;
	return gpugen_fe_add_write(p, f.off + f.width - n, n, 0, 0, var, part,
		add);
}

/*
 * Stamp every packet (gpugen_stamp.h) at the start of the L4 payload.
 * -EMSGSIZE when the template's payload is shorter than a stamp, -EPERM
 * when a write already covers it.
 */
static inline int
gpugen_fe_set_stamp(struct gpugen_fe_prog *p)
{
	const struct gpugen_pkt_layout *l = &p->lay;
	uint32_t off = l->payload_off + GPUGEN_STAMP_PAYLOAD_OFF;

	if (l->ip_version == 0 || off >= l->ip_end ||
			l->ip_end - off < GPUGEN_STAMP_LEN ||
			(l->frag && l->l4_off == 0))
		return -EMSGSIZE;
	for (uint32_t w = 0; w < p->n_writes; w++)
		if (gpugen_fe_overlap(p->writes[w].off, p->writes[w].width, off,
				GPUGEN_STAMP_LEN))
			return -EPERM;
	/* The payload lies past the IPv4 header and the addresses, and in
	 * the L4 segment: gpugen_fe_apply_seq() sums the stamp from its
	 * values, which needs it wholly in or out of each region. */
	if (!gpugen_fe_span_whole(p, off, GPUGEN_STAMP_LEN))
		return -EMSGSIZE;
	p->stamp_off = off;
	return 0;
}
#endif /* !__CUDA_ARCH__ */

#endif /* GPUGEN_FE_H */
