/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow records' IPFIX data messages, built without libfixbuf's
 * per-record transcoding (ipfix_writer.c's internal part, not an API).
 *
 * Why: libfixbuf's fBufAppend() reads the internal template field by
 * field for every record (a transcode plan look-up, the offsets, one
 * encode call per element with its length checks): about 2,200
 * instructions a record, nine tenths of the exporter's cost, which held
 * it near 6.5 M records/s (issue 35). The two data templates are fixed
 * and every element has a fixed length, so a record's IPFIX encoding is
 * its fields in the templates' order, big-endian, without the internal
 * record's padding: written here directly, a few dozen instructions.
 *
 * What stays libfixbuf's: the information model and the templates (and
 * the template sets), the statistics' options records, and the
 * reference: ipfix_writer.c compares a set of records built here with
 * libfixbuf's own messages of them (gpurx_ipfix_enc_check()) when a
 * writer opens, and refuses to export when a byte differs; the test
 * test_ipfix_enc does the same over many random records and both MTUs.
 * The messages are cut as libfixbuf cuts them (fBufAppend() in manual
 * mode): a record goes in while the message has room for it, a new set
 * (on a change of template) only with room for its header and the
 * record, and the set and message lengths are written when the message
 * ends.
 */
#ifndef GPURX_IPFIX_ENC_H
#define GPURX_IPFIX_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "flow_ring.h"

/* The data templates' IDs (and set IDs). */
#define GPURX_IPFIX_TID_V4 0x0100
#define GPURX_IPFIX_TID_V6 0x0101
#define GPURX_IPFIX_TID_STATS 0x0102

/* Bytes of a record on the wire: the templates' element lengths. */
#define GPURX_IPFIX_V4_LEN 71
#define GPURX_IPFIX_V6_LEN 95
#define GPURX_IPFIX_MSG_HDR 16
#define GPURX_IPFIX_SET_HDR 4

/* A data message being built into buf (mtu bytes at most). */
struct gpurx_ipfix_mb {
	uint8_t *buf;
	uint32_t mtu;
	uint32_t len;		/* 0: no message begun */
	uint32_t set_off;	/* the open set's header; 0: none */
	uint16_t set_id;
	uint32_t records;
	uint32_t domain;
	/* 0: each message's export time is time(NULL) when its first
	 * record goes in, as libfixbuf's; else this (the check's). */
	uint32_t extime;
	uint32_t ingress;	/* ingressInterface of every record */
};

/*
 * Big-endian stores. The compiler's byte swaps rather than
 * rte_cpu_to_be_*(), whose x86 forms are asm the compiler cannot merge
 * with the store (a movbe) or schedule.
 */
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
#define GPURX_IPFIX_BE(bits, v) __builtin_bswap ## bits(v)
#else
#define GPURX_IPFIX_BE(bits, v) (v)
#endif

static __rte_always_inline void
gpurx_ipfix_be16(uint8_t *p, uint16_t v)
{
	const uint16_t b = GPURX_IPFIX_BE(16, v);

	memcpy(p, &b, sizeof(b));
}

static __rte_always_inline void
gpurx_ipfix_be32(uint8_t *p, uint32_t v)
{
	const uint32_t b = GPURX_IPFIX_BE(32, v);

	memcpy(p, &b, sizeof(b));
}

static __rte_always_inline void
gpurx_ipfix_be64(uint8_t *p, uint64_t v)
{
	const uint64_t b = GPURX_IPFIX_BE(64, v);

	memcpy(p, &b, sizeof(b));
}

/*
 * The fields after the addresses, at p, as both templates carry them
 * (spec_tail, spec_icmp4/6, spec_l2 in ipfix_writer.c): ingress, ports,
 * VLAN, TCP flags, protocol, end reason, ICMP type and code (the key's
 * dport for ICMP, whose ports are then 0), MACs, TOS, TTLs.
 */
static __rte_always_inline void
gpurx_ipfix_enc_tail(uint8_t *restrict p,
		const struct gpurx_flow_rec *restrict r, uint32_t ingress, int icmp)
{
	const struct gpurx_flow_key *k = &r->key;

	gpurx_ipfix_be32(p, ingress);
	gpurx_ipfix_be16(p + 4, k->sport);
	gpurx_ipfix_be16(p + 6, icmp ? 0 : k->dport);
	gpurx_ipfix_be16(p + 8, gpurx_flow_key_vlan(k));
	gpurx_ipfix_be16(p + 10, r->tcp_flags);
	p[12] = k->proto;
	p[13] = r->reason;
	gpurx_ipfix_be16(p + 14, icmp ? k->dport : 0);
	memcpy(p + 16, r->attr.src_mac, 6);
	memcpy(p + 22, r->attr.dst_mac, 6);
	p[28] = r->attr.tos;
	p[29] = r->ttl_min;
	p[30] = r->ttl_max;
}

/*
 * Record r as its template encodes it, at p (GPURX_IPFIX_V6_LEN bytes of
 * room): the template's ID in *tid, the bytes written returned. The
 * head: flowStart/EndMilliseconds, packet and octet counts; IPv4
 * addresses are the key's last four bytes (::ffff:a.b.c.d), already in
 * network order. restrict: the message is never the record's memory, so
 * the record's fields need not be read again after each store.
 */
static __rte_always_inline uint32_t
gpurx_ipfix_enc_rec(uint8_t *restrict p,
		const struct gpurx_flow_rec *restrict r, uint32_t ingress,
		uint16_t *tid)
{
	const struct gpurx_flow_key *k = &r->key;

	gpurx_ipfix_be64(p, r->first_ns / 1000000);
	gpurx_ipfix_be64(p + 8, r->last_ns / 1000000);
	gpurx_ipfix_be64(p + 16, r->packets);
	gpurx_ipfix_be64(p + 24, r->bytes);
	if (k->ip_version == 4) {
		memcpy(p + 32, &k->src[12], 4);
		memcpy(p + 36, &k->dst[12], 4);
		gpurx_ipfix_enc_tail(p + 40, r, ingress, k->proto == 1);
		*tid = GPURX_IPFIX_TID_V4;
		return GPURX_IPFIX_V4_LEN;
	}
	memcpy(p + 32, k->src, 16);
	memcpy(p + 48, k->dst, 16);
	gpurx_ipfix_enc_tail(p + 64, r, ingress, k->proto == 58);
	*tid = GPURX_IPFIX_TID_V6;
	return GPURX_IPFIX_V6_LEN;
}

/* The open set's length into its header. */
static __rte_always_inline void
gpurx_ipfix_mb_close_set(struct gpurx_ipfix_mb *m)
{
	if (m->set_off != 0)
		gpurx_ipfix_be16(m->buf + m->set_off + 2,
			(uint16_t)(m->len - m->set_off));
	m->set_off = 0;
}

/*
 * r into m's message, begun if need be. 0; 1 when the message has no
 * room for it (end it, begin another, put r again). The sequence number
 * is left 0: the sender sets it (seq_patch() in ipfix_writer.c).
 */
static __rte_always_inline int
gpurx_ipfix_mb_put(struct gpurx_ipfix_mb *m, const struct gpurx_flow_rec *r)
{
	const uint32_t need = r->key.ip_version == 4 ? GPURX_IPFIX_V4_LEN :
		GPURX_IPFIX_V6_LEN;
	const uint16_t set_id = r->key.ip_version == 4 ? GPURX_IPFIX_TID_V4 :
		GPURX_IPFIX_TID_V6;
	uint16_t tid;

	if (m->len == 0) {
		gpurx_ipfix_be16(m->buf, 10);
		gpurx_ipfix_be16(m->buf + 2, 0);
		gpurx_ipfix_be32(m->buf + 4, m->extime != 0 ? m->extime :
			(uint32_t)time(NULL));
		gpurx_ipfix_be32(m->buf + 8, 0);
		gpurx_ipfix_be32(m->buf + 12, m->domain);
		m->len = GPURX_IPFIX_MSG_HDR;
	}
	if (m->set_off == 0 || m->set_id != set_id) {
		/* libfixbuf closes the set when the template changes, even
		 * when the new one's set does not fit. */
		gpurx_ipfix_mb_close_set(m);
		if (m->mtu - m->len < GPURX_IPFIX_SET_HDR + need)
			return 1;
		m->set_off = m->len;
		m->set_id = set_id;
		gpurx_ipfix_be16(m->buf + m->len, set_id);
		gpurx_ipfix_be16(m->buf + m->len + 2, 0);
		m->len += GPURX_IPFIX_SET_HDR;
	} else if (m->mtu - m->len < need) {
		return 1;
	}
	m->len += gpurx_ipfix_enc_rec(m->buf + m->len, r, m->ingress, &tid);
	m->records++;
	return 0;
}

/* The message ends: its lengths written; its bytes returned (0: none),
 * m ready to begin the next. */
static __rte_always_inline uint32_t
gpurx_ipfix_mb_end(struct gpurx_ipfix_mb *m)
{
	const uint32_t len = m->len;

	if (len == 0)
		return 0;
	gpurx_ipfix_mb_close_set(m);
	gpurx_ipfix_be16(m->buf + 2, (uint16_t)len);
	m->len = 0;
	m->records = 0;
	return len;
}

/*
 * Whether this file's messages of recs[0, n) at mtu equal libfixbuf's
 * own of them, byte for byte (the same export time, libfixbuf's sequence
 * numbers), with the writer's templates in a session of model's.
 * 0; -1 with why (the first difference, or what failed).
 */
struct fbInfoModel_st;
int gpurx_ipfix_enc_check(struct fbInfoModel_st *model,
		const struct gpurx_flow_rec *recs, uint32_t n, uint32_t mtu,
		uint32_t domain, uint32_t ingress, char *why, size_t why_len);

#endif /* GPURX_IPFIX_ENC_H */
