/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write a deterministic test pcap for the end-to-end runs: the core's
 * packet generator (every protocol the parser knows, truncated and
 * malformed frames) plus jumbo frames longer than one 2 KiB mbuf, so
 * net_pcap hands dpdk-gpu-rx chained mbufs, and optionally giant frames
 * over 64 KiB as a capture on Linux's loopback (MTU 65536) or a GRO'd
 * tap has them: 65549 bytes (an IPv4 or IPv6 packet of 65535 bytes) and
 * up to GIANT_MAX (default and at most 262144, tcpdump's default
 * snaplen), bytes past the IP packet.
 *
 * Usage: gpurx-e2e-genpcap OUT.pcap SEED COUNT JUMBO_EVERY
 *            [GIANT_EVERY [GIANT_MAX]]
 *        gpurx-e2e-genpcap --size BYTES OUT.pcap SEED COUNT
 *            (every frame BYTES long, 64 to 9000: IPv4 TCP or UDP to
 *            port 443 or 444 from many source ports, for sources such as
 *            net_gpudma that replay a file where net_null would give
 *            all-zero frames)
 * (JUMBO_EVERY 0: no jumbo frames; else one every JUMBO_EVERY packets;
 * GIANT_EVERY likewise, 0 by default)
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
#define GIANT_MAX 262144	/* the most libpcap reads back for Ethernet */
#define IP_MAX 65535
#define TS_BASE_SEC 1700000000u

/* A TCP or UDP flow of either IP version, as both frame kinds use. */
static void
big_spec(struct pktgen *g, struct gpugen_pkt_spec *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	if (pktgen_rand(g) % 3 == 0) {
		s->n_vlans = 1;
		s->vid[0] = 100;
	}
	s->ip_version = pktgen_rand(g) % 2 ? 4 : 6;
	if (s->ip_version == 4) {
		memcpy(s->src, "\x0a\x00\x00\x01", 4);
		memcpy(s->dst, "\x0a\x00\x01\x02", 4);
	} else {
		memcpy(s->src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s->dst, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	}
	s->ttl = 64;
	s->proto = pktgen_rand(g) % 2 ? GPURX_IPPROTO_TCP : GPURX_IPPROTO_UDP;
	s->sport = 9000;
	s->dport = (uint16_t)(443 + pktgen_rand(g) % 2);
	s->tcp_flags = 0x18;
	s->payload_byte = (uint8_t)pktgen_rand(g);
}

/*
 * Over 64 KiB, cycling through three lengths: 14 + 65535 (loopback's
 * largest; with a VLAN tag 4 more), a random length up to max, and max.
 * The IP packet is the largest its 16-bit length allows; the rest of the
 * frame follows it, as in a frame GRO merged past that length. Where max
 * is below the first length, every frame is the first.
 */
static uint32_t
build_giant(struct pktgen *g, uint8_t *buf, unsigned long nth, uint32_t max)
{
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	uint32_t len, want;

	big_spec(g, &s);
	s.payload_len = IP_MAX - (s.ip_version == 4 ? 20 : 40) -
		(s.proto == GPURX_IPPROTO_TCP ? 20 : 8);
	/* pktgen bounds the IPv6 header and payload together by IP_MAX. */
	len = gpugen_pkt_build(&s, buf, GIANT_MAX, &lay);
	if (len == 0 || max <= len + 1)
		return len;
	switch (nth % 3) {
	case 0:
		return len;
	case 1:
		want = len + 1 + (uint32_t)(pktgen_rand(g) % (max - len - 1));
		break;
	default:
		want = max;
		break;
	}
	for (uint32_t i = len; i < want; i++)
		buf[i] = (uint8_t)(i * 7 + s.payload_byte);
	return want;
}

static uint32_t
build_jumbo(struct pktgen *g, uint8_t *buf)
{
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;

	big_spec(g, &s);
	/* 2.1 KiB to 9 KiB: two to five 2 KiB segments. */
	s.payload_len = 2100 + (uint32_t)(pktgen_rand(g) % 7000);
	return gpugen_pkt_build(&s, buf, JUMBO_MAX, &lay);
}

/* The output file, Ethernet frames up to GIANT_MAX; NULL, said, if not. */
static pcap_dumper_t *
out_open(const char *path, pcap_t **dead)
{
	pcap_dumper_t *d;

	*dead = pcap_open_dead(DLT_EN10MB, GIANT_MAX);
	if (*dead == NULL) {
		fprintf(stderr, "%s: pcap_open_dead failed\n", path);
		return NULL;
	}
	d = pcap_dump_open(*dead, path);
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", path, pcap_geterr(*dead));
		pcap_close(*dead);
	}
	return d;
}

/* Frame i of the file: a thousand a second from TS_BASE_SEC, usec_add
 * microseconds into its millisecond. */
static void
out_frame(pcap_dumper_t *d, unsigned long i, uint32_t usec_add,
		const uint8_t *data, uint32_t len)
{
	struct pcap_pkthdr h;

	h.ts.tv_sec = TS_BASE_SEC + (time_t)(i / 1000);
	h.ts.tv_usec = (suseconds_t)((i % 1000) * 1000 + usec_add);
	h.caplen = h.len = len;
	pcap_dump((u_char *)d, &h, data);
}

static void
out_close(pcap_dumper_t *d, pcap_t *dead)
{
	pcap_dump_close(d);
	pcap_close(dead);
}

/* IPv4 TCP or UDP, no VLAN: fits 64 bytes with either transport. */
static uint32_t
build_sized(struct pktgen *g, uint8_t *buf, uint32_t size)
{
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	uint32_t hdr;

	big_spec(g, &s);
	s.n_vlans = 0;
	s.ip_version = 4;
	memcpy(s.src, "\x0a\x00\x00\x01", 4);
	memcpy(s.dst, "\x0a\x00\x01\x02", 4);
	s.sport = (uint16_t)(1024 + pktgen_rand(g) % 60000);
	hdr = 14 + 20 + (s.proto == GPURX_IPPROTO_TCP ? 20 : 8);
	s.payload_len = size - hdr;
	return gpugen_pkt_build(&s, buf, JUMBO_MAX, &lay);
}

static int
main_sized(int argc, char **argv)
{
	static uint8_t buf[JUMBO_MAX];
	unsigned long size, n;
	pcap_dumper_t *d;
	pcap_t *dead;
	struct pktgen g;

	if (argc != 6) {
		fprintf(stderr, "usage: %s --size BYTES OUT.pcap SEED COUNT\n",
			argv[0]);
		return 2;
	}
	size = strtoul(argv[2], NULL, 0);
	if (size < 64 || size > 9000) {
		fprintf(stderr, "--size %s: 64 to 9000 bytes\n", argv[2]);
		return 2;
	}
	pktgen_init(&g, strtoull(argv[4], NULL, 0));
	n = strtoul(argv[5], NULL, 0);
	d = out_open(argv[3], &dead);
	if (d == NULL)
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		uint32_t len = build_sized(&g, buf, (uint32_t)size);

		if (len != size) {
			fprintf(stderr, "frame %lu: built %u bytes, not %lu\n",
				i, len, size);
			out_close(d, dead);
			return 1;
		}
		out_frame(d, i, 0, buf, len);
	}
	out_close(d, dead);
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t big[GIANT_MAX];
	struct pktgen_pkt p;
	struct pktgen g;
	pcap_dumper_t *d;
	pcap_t *dead;
	unsigned long n, every, giant_every = 0, giants = 0;
	unsigned long giant_max = GIANT_MAX;

	if (argc > 1 && strcmp(argv[1], "--size") == 0)
		return main_sized(argc, argv);
	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: %s OUT.pcap SEED COUNT JUMBO_EVERY "
			"[GIANT_EVERY [GIANT_MAX]]\n", argv[0]);
		return 2;
	}
	if (argc >= 6)
		giant_every = strtoul(argv[5], NULL, 0);
	if (argc == 7)
		giant_max = strtoul(argv[6], NULL, 0);
	if (giant_max > GIANT_MAX) {
		fprintf(stderr, "GIANT_MAX %lu: at most %u (libpcap reads no "
			"longer Ethernet frame)\n", giant_max, GIANT_MAX);
		return 2;
	}
	pktgen_init(&g, strtoull(argv[2], NULL, 0));
	n = strtoul(argv[3], NULL, 0);
	every = strtoul(argv[4], NULL, 0);
	d = out_open(argv[1], &dead);
	if (d == NULL)
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		const uint8_t *data;
		uint32_t len;

		pktgen_next(&g, &p);
		if (giant_every != 0 && i % giant_every == giant_every - 1) {
			len = build_giant(&g, big, giants++,
				(uint32_t)giant_max);
			data = big;
		} else if (every != 0 && i % every == every - 1) {
			len = build_jumbo(&g, big);
			data = big;
		} else {
			len = p.caplen;
			data = p.data;
		}
		if (len == 0)
			continue;	/* a zero-length record says nothing */
		out_frame(d, i, (uint32_t)(p.ts % 1000), data, len);
	}
	out_close(d, dead);
	return 0;
}
