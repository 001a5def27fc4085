/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generator stamps: what a transmitter writes at the start of the L4
 * payload so that a receiver can count loss, reordering and duplicates
 * per stream and measure latency. Wire layout (big-endian, 24 bytes at
 * payload_off + GPUGEN_STAMP_PAYLOAD_OFF):
 *
 *   0  magic     u32  GPUGEN_STAMP_MAGIC: tells stamped frames from others
 *   4  stream    u32  stream id
 *   8  seq       u64  packet index in the stream, from 0
 *  16  tx_ns     u64  transmit time in ns on the sender's clock
 *
 * The clock behind tx_ns is the sender's choice (the GPU's %globaltimer
 * or the CPU's CLOCK_REALTIME); a receiver compares it with its own clock
 * only where the two are known to be the same or offset-corrected.
 */
#ifndef GPUGEN_STAMP_H
#define GPUGEN_STAMP_H

#include "gpugen_build.h"

#define GPUGEN_STAMP_MAGIC 0x47505354u	/* "GPST" */
#define GPUGEN_STAMP_LEN 24
#define GPUGEN_STAMP_PAYLOAD_OFF 0

struct gpugen_stamp {
	uint32_t stream;
	uint64_t seq;
	uint64_t tx_ns;
};

GPURX_FN void
gpugen_stamp_put(uint8_t *p, uint32_t stream, uint64_t seq, uint64_t tx_ns)
{
	gpurx_put_be32(p, GPUGEN_STAMP_MAGIC);
	gpurx_put_be32(p + 4, stream);
	gpurx_put_be64(p + 8, seq);
	gpurx_put_be64(p + 16, tx_ns);
}

/*
 * The stamp of a parsed frame, read within the captured bytes and the IP
 * datagram (never from Ethernet padding), from a view: one run of bytes,
 * or a packet in two buffers (RX buffer split), the stamp possibly
 * straddling them. 0, or -1 when there is none.
 */
GPURX_FN int
gpugen_stamp_find_view(struct gpurx_pkt_view pkt, uint32_t caplen,
		const struct gpurx_pkt_info *pi, struct gpugen_stamp *st)
{
	uint32_t off = pi->payload_off + GPUGEN_STAMP_PAYLOAD_OFF;
	uint32_t end = pi->ip_end < caplen ? pi->ip_end : caplen;
	struct gpurx_pkt_view v;

	/* The parser ends ICMP's header before the echo identifier and
	 * sequence; the builder (and so the stamp) after them. */
	if (pi->l4_proto == GPURX_IPPROTO_ICMP ||
			pi->l4_proto == GPURX_IPPROTO_ICMPV6)
		off += 4;

	if (pi->ip_version == 0 || pi->malformed != GPURX_MAL_NONE ||
			(pi->flags & GPURX_PF_FRAG_LATER) || off >= end ||
			end - off < GPUGEN_STAMP_LEN)
		return -1;
	v = gpurx_view_at(pkt, off);
	if (gpurx_view_be32(v, 0) != GPUGEN_STAMP_MAGIC)
		return -1;
	st->stream = gpurx_view_be32(v, 4);
	st->seq = ((uint64_t)gpurx_view_be32(v, 8) << 32) |
		gpurx_view_be32(v, 12);
	st->tx_ns = ((uint64_t)gpurx_view_be32(v, 16) << 32) |
		gpurx_view_be32(v, 20);
	return 0;
}

/* gpugen_stamp_find_view() over one run of bytes. */
GPURX_FN int
gpugen_stamp_find(const uint8_t *frame, uint32_t caplen,
		const struct gpurx_pkt_info *pi, struct gpugen_stamp *st)
{
	return gpugen_stamp_find_view(gpurx_view_linear(frame), caplen, pi, st);
}

#endif /* GPUGEN_STAMP_H */
