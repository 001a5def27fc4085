/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write a deterministic test pcap for the end-to-end runs: the core's
 * packet generator (every protocol the parser knows, truncated and
 * malformed frames) plus jumbo frames longer than one 2 KiB mbuf, so
 * net_pcap hands dpdk-gpu-rx chained mbufs.
 *
 * Usage: gpurx-e2e-genpcap OUT.pcap SEED COUNT JUMBO_EVERY
 * (JUMBO_EVERY 0: no jumbo frames; else one every JUMBO_EVERY packets)
 *
 * Every record has caplen == len: what net_pcap delivers is all the port
 * knows, so the wire length seen by BPF "len" must be the same bytes.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "pktgen.h"
#include "pkt_parse.h"

#define JUMBO_MAX 16384
#define TS_BASE_SEC 1700000000u

static uint32_t
build_jumbo(struct pktgen *g, uint8_t *buf)
{
	struct pkt_layout lay;
	struct pkt_spec s;

	memset(&s, 0, sizeof(s));
	memcpy(s.eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s.eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	if (pktgen_rand(g) % 3 == 0) {
		s.n_vlans = 1;
		s.vid[0] = 100;
	}
	s.ip_version = pktgen_rand(g) % 2 ? 4 : 6;
	if (s.ip_version == 4) {
		memcpy(s.src, "\x0a\x00\x00\x01", 4);
		memcpy(s.dst, "\x0a\x00\x01\x02", 4);
	} else {
		memcpy(s.src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s.dst, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	s.ttl = 64;
	s.proto = pktgen_rand(g) % 2 ? GPURX_IPPROTO_TCP : GPURX_IPPROTO_UDP;
	s.sport = 9000;
	s.dport = (uint16_t)(443 + pktgen_rand(g) % 2);
	s.tcp_flags = 0x18;
	/* 2.1 KiB to 9 KiB: two to five 2 KiB segments. */
	s.payload_len = 2100 + (uint32_t)(pktgen_rand(g) % 7000);
	s.payload_byte = (uint8_t)pktgen_rand(g);
	return pktgen_build(&s, buf, JUMBO_MAX, &lay);
}

int
main(int argc, char **argv)
{
	static uint8_t jumbo[JUMBO_MAX];
	struct pktgen_pkt p;
	struct pktgen g;
	pcap_dumper_t *d;
	pcap_t *dead;
	unsigned long n, every;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OUT.pcap SEED COUNT JUMBO_EVERY\n",
			argv[0]);
		return 2;
	}
	pktgen_init(&g, strtoull(argv[2], NULL, 0));
	n = strtoul(argv[3], NULL, 0);
	every = strtoul(argv[4], NULL, 0);
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (dead == NULL)
		return 1;
	d = pcap_dump_open(dead, argv[1]);
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", argv[1], pcap_geterr(dead));
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		struct pcap_pkthdr h;
		const uint8_t *data;
		uint32_t len;

		pktgen_next(&g, &p);
		if (every != 0 && i % every == every - 1) {
			len = build_jumbo(&g, jumbo);
			data = jumbo;
		} else {
			len = p.caplen;
			data = p.data;
		}
		if (len == 0)
			continue;	/* a zero-length record says nothing */
		h.ts.tv_sec = TS_BASE_SEC + (time_t)(i / 1000);
		h.ts.tv_usec = (suseconds_t)((i % 1000) * 1000 + p.ts % 1000);
		h.caplen = h.len = len;
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}
