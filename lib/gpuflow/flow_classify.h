/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-packet work of the capture pipeline: filter and parse
 * (pkt_inspect.h), then account the packet's flow in the flow table.
 * One definition for the CPU reference and the GPU kernel so the two
 * can be compared bit for bit.
 */
#ifndef GPURX_FLOW_CLASSIFY_H
#define GPURX_FLOW_CLASSIFY_H

#include "gpurx_portable.h"
#include "pkt_inspect.h"
#include "flow_table.h"

/*
 * Whether a parsed packet is accounted as a flow: IP with a sound header
 * chain. A transport header cut short by the snapshot length still
 * counts when its ports were captured, as it would with a short snaplen.
 */
GPURX_FN int
gpurx_pkt_has_flow(const struct gpurx_pkt_info *pi)
{
	if (pi->ip_version == 0)
		return 0;
	return pi->malformed == GPURX_MAL_NONE ||
		(pi->malformed == GPURX_MAL_TRUNCATED_L4 &&
		 (pi->flags & GPURX_PF_L4));
}

/* What a packet's slot keeps if it inserts its key (flow_ring.h). */
GPURX_FN void
gpurx_flow_attr_from_pkt(const struct gpurx_pkt_info *pi,
		struct gpurx_flow_attr *attr)
{
	struct gpurx_flow_attr zero = GPURX_ZERO_INIT;

	*attr = zero;
	for (int i = 0; i < 6; i++) {
		attr->dst_mac[i] = pi->dst_mac[i];
		attr->src_mac[i] = pi->src_mac[i];
	}
	attr->tos = pi->tos;
}

/* Whether the packet's transport is its IP version's ICMP. */
GPURX_FN int
gpurx_pkt_is_icmp(const struct gpurx_pkt_info *pi)
{
	return (pi->ip_version == 4 && pi->l4_proto == GPURX_IPPROTO_ICMP) ||
		(pi->ip_version == 6 && pi->l4_proto == GPURX_IPPROTO_ICMPV6);
}

GPURX_FN void
gpurx_flow_key_from_pkt(const struct gpurx_pkt_info *pi,
		struct gpurx_flow_key *key)
{
	struct gpurx_flow_key zero = GPURX_ZERO_INIT;

	*key = zero;
	for (int i = 0; i < 16; i++) {
		key->src[i] = pi->src[i];
		key->dst[i] = pi->dst[i];
	}
	if (pi->flags & GPURX_PF_L4_PORTS) {
		key->sport = pi->sport;
		key->dport = pi->dport;
	} else if ((pi->flags & GPURX_PF_L4) && gpurx_pkt_is_icmp(pi)) {
		/* A header that was there, not a later fragment's bytes. */
		key->dport = (uint16_t)(pi->icmp_type << 8 | pi->icmp_code);
	}
	key->vlan_port = pi->vlan_id;
	key->proto = pi->l4_proto;
	key->ip_version = pi->ip_version;
}

/* The TCP flags a packet adds to its flow's union: none unless TCP. */
GPURX_FN uint8_t
gpurx_pkt_flow_tcp_flags(const struct gpurx_pkt_info *pi)
{
	return pi->l4_proto == GPURX_IPPROTO_TCP && (pi->flags & GPURX_PF_L4) ?
		pi->tcp_flags : 0;
}

/*
 * Whether a packet with this verdict, received on RX queue `queue`, is
 * accounted in a flow of ft (may be NULL): accepted and with a flow key,
 * put into *key with the queue's port (gpurx_flow_queue_port()).
 */
GPURX_FN int
gpurx_classify_flow_of(const struct gpurx_pkt_info *pi, uint32_t verdict,
		uint16_t queue, const struct gpurx_flow_table *ft,
		struct gpurx_flow_key *key)
{
	if (verdict == 0 || ft == NULL || !gpurx_pkt_has_flow(pi))
		return 0;
	gpurx_flow_key_from_pkt(pi, key);
	gpurx_flow_key_set_port(key, gpurx_flow_queue_port(ft, queue));
	return 1;
}

/*
 * Accounts an accepted packet with a flow in ft (may be NULL), received
 * on RX queue `queue`: its TCP flags go into the flow's union.
 */
GPURX_FN void
gpurx_classify_account_q(const struct gpurx_pkt_info *pi, uint32_t verdict,
		uint32_t wirelen, uint64_t ts, uint16_t queue,
		struct gpurx_flow_table *ft)
{
	struct gpurx_flow_key key;
	struct gpurx_flow_attr attr;

	if (!gpurx_classify_flow_of(pi, verdict, queue, ft, &key))
		return;
	gpurx_flow_attr_from_pkt(pi, &attr);
	gpurx_flow_update_pkt_attr(ft, &key, gpurx_flow_hash(&key), wirelen,
		ts, gpurx_pkt_flow_tcp_flags(pi), pi->ttl, &attr, queue);
}

/* The same on queue 0. */
GPURX_FN void
gpurx_classify_account(const struct gpurx_pkt_info *pi, uint32_t verdict,
		uint32_t wirelen, uint64_t ts, struct gpurx_flow_table *ft)
{
	gpurx_classify_account_q(pi, verdict, wirelen, ts, 0, ft);
}

/*
 * Returns the BPF verdict (0 = rejected, else bytes to keep). Accepted
 * packets with a flow are accounted in ft (may be NULL) as received on
 * RX queue `queue`. *pi gets the parse (pi->malformed: the parser's
 * verdict), for every packet, accepted or not.
 */
GPURX_FN uint32_t
gpurx_classify_pkt_view_info(struct gpurx_pkt_view pkt, uint32_t caplen,
		uint32_t wirelen, uint64_t ts, uint16_t queue,
		const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, struct gpurx_pkt_info *pi)
{
	uint32_t verdict;

	(void)gpurx_classify_inspect_view(pkt, caplen, caplen, wirelen, prog,
		prog_len, &verdict, pi);
	gpurx_classify_account_q(pi, verdict, wirelen, ts, queue, ft);
	return verdict;
}

/* The same, keeping only the parser's verdict (*malformed, may be NULL). */
GPURX_FN uint32_t
gpurx_classify_pkt_view_q(struct gpurx_pkt_view pkt, uint32_t caplen,
		uint32_t wirelen, uint64_t ts, uint16_t queue,
		const struct bpf_vm_insn *prog,
		uint32_t prog_len, struct gpurx_flow_table *ft, uint8_t *malformed)
{
	struct gpurx_pkt_info pi;
	uint32_t verdict = gpurx_classify_pkt_view_info(pkt, caplen, wirelen,
		ts, queue, prog, prog_len, ft, &pi);

	if (malformed != NULL)
		*malformed = pi.malformed;
	return verdict;
}

/* The same on queue 0. */
GPURX_FN uint32_t
gpurx_classify_pkt_view(struct gpurx_pkt_view pkt, uint32_t caplen,
		uint32_t wirelen, uint64_t ts, const struct bpf_vm_insn *prog,
		uint32_t prog_len, struct gpurx_flow_table *ft, uint8_t *malformed)
{
	return gpurx_classify_pkt_view_q(pkt, caplen, wirelen, ts, 0, prog,
		prog_len, ft, malformed);
}

/* gpurx_classify_pkt_view() over one run of bytes. */
GPURX_FN uint32_t
gpurx_classify_pkt(const uint8_t *pkt, uint32_t caplen, uint32_t wirelen,
		uint64_t ts, const struct bpf_vm_insn *prog, uint32_t prog_len,
		struct gpurx_flow_table *ft, uint8_t *malformed)
{
	return gpurx_classify_pkt_view(gpurx_view_linear(pkt), caplen, wirelen,
		ts, prog, prog_len, ft, malformed);
}

#endif /* GPURX_FLOW_CLASSIFY_H */
