/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet's bytes as the parser and the filter read them: one run, or
 * the two runs of RX buffer split (the first n0 bytes, the headers, in
 * one buffer, the rest in another: host memory and GPU memory). Both read
 * a packet only through this view, so a split packet is classified where
 * its two buffers lie, by the CPU reference and by the GPU alike, and
 * never copied together first.
 *
 * Passed by value. With one run p1 is NULL, a constant wherever the view
 * is built from gpurx_view_linear() and the callee inlined (always, on the
 * GPU): the test then folds away and each read is the byte load of a
 * plain array it was before split existed.
 */
#ifndef GPURX_PKT_VIEW_H
#define GPURX_PKT_VIEW_H

#include "gpurx_portable.h"

struct gpurx_pkt_view {
	const uint8_t *p0;	/* bytes [0, n0); all of them when p1 is NULL */
	const uint8_t *p1;	/* bytes [n0, ...) */
	uint32_t n0;
};

GPURX_FN struct gpurx_pkt_view
gpurx_view_linear(const uint8_t *p)
{
	struct gpurx_pkt_view v = { p, NULL, 0 };

	return v;
}

/* p1 may be NULL only when nothing past n0 is ever read (caplen <= n0). */
GPURX_FN struct gpurx_pkt_view
gpurx_view_split(const uint8_t *p0, uint32_t n0, const uint8_t *p1)
{
	struct gpurx_pkt_view v = { p0, p1, n0 };

	return v;
}

/*
 * The view from byte off on, for reading a header at fixed offsets the way
 * `h = data + off; h[12]` does (one run: exactly that). Split: what is
 * left of the first run and the second, or only the second (one run
 * again) when off is past the first.
 */
GPURX_FN struct gpurx_pkt_view
gpurx_view_at(struct gpurx_pkt_view v, uint32_t off)
{
	if (v.p1 == NULL)
		return gpurx_view_linear(v.p0 + off);
	if (off < v.n0)
		return gpurx_view_split(v.p0 + off, v.n0 - off, v.p1);
	return gpurx_view_linear(v.p1 + (off - v.n0));
}

/*
 * Byte off of the packet; the caller has checked off against caplen.
 * size_t: one run, the address computed as the pointer arithmetic it
 * replaces computed it.
 */
GPURX_FN uint8_t
gpurx_view_u8(struct gpurx_pkt_view v, size_t off)
{
	if (v.p1 == NULL || off < v.n0)
		return v.p0[off];
	return v.p1[off - v.n0];
}

/* Network byte order. Split, a byte at a time: a field may straddle the
 * runs. */
GPURX_FN uint16_t
gpurx_view_be16(struct gpurx_pkt_view v, size_t off)
{
	if (v.p1 == NULL)
		return gpurx_be16(v.p0 + off);
	return (uint16_t)((gpurx_view_u8(v, off) << 8) |
		gpurx_view_u8(v, off + 1));
}

GPURX_FN uint32_t
gpurx_view_be32(struct gpurx_pkt_view v, size_t off)
{
	if (v.p1 == NULL)
		return gpurx_be32(v.p0 + off);
	return ((uint32_t)gpurx_view_u8(v, off) << 24) |
		((uint32_t)gpurx_view_u8(v, off + 1) << 16) |
		((uint32_t)gpurx_view_u8(v, off + 2) << 8) |
		(uint32_t)gpurx_view_u8(v, off + 3);
}

#endif /* GPURX_PKT_VIEW_H */
