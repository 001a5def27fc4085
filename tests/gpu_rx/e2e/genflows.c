/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write a pcap of known flows for the flow-export tests, over a
 * compressed timeline of about 240 s (replayed in milliseconds, the
 * timestamps kept with --ts port):
 * - TCP connections ended by FIN (the last ACK within the linger) or
 *   RST, a third of them with the same ports again a few seconds later;
 * - UDP flows that burst, fall silent longer than the idle timeout (15 s)
 *   and burst again;
 * - long flows, a packet every 2 s for 200 s: split by the active
 *   timeout (60 s);
 * - short flows of one to three packets;
 * - ICMP and ICMPv6 flows: echo requests and replies, port and host
 *   unreachables (one sender's two codes: two flows);
 * IPv4 and IPv6, a quarter of them in a VLAN, each flow with its own
 * MACs and TOS, the TTL of its packets varying from 60 to 64 (a record's
 * minimum and maximum differ), and an ARP frame (no
 * flow) every 50 ms, so that packets of one flow a record boundary
 * separates (3 s or more apart) have more than a GPU ring item's worth
 * of other packets between them, whatever the item size up to 64.
 *
 * Usage: gpurx-e2e-genflows OUT.pcap SEED
 *        gpurx-e2e-genflows --dense OUT.pcap SEED
 *        gpurx-e2e-genflows --many N OUT.pcap [FIRST]
 * (--dense: the opposite of the ARP spacing above: few flows that send
 * only at ticks 5 to 25 s apart, so one flow's record boundaries (idle,
 * active, FIN then the same ports again) lie a few packets apart, often
 * several within one 32-packet GPU chunk, where its lanes are decided
 * together; --many: N flows of a 64-byte packet each,
 * flow_stress_key()'s first N (or N from FIRST on: one file per RX queue,
 * none sharing a flow, as RSS would spread them), for a replay that
 * keeps N flows live: bench/flow-export.sh)
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "flow_stress.h"
#include "gpugen_build.h"
#include "pkt_parse.h"

#define TS_BASE_SEC 1700000000ull
#define SPAN_US (240ull * 1000000)
#define MAX_PKTS 16384
#define FRAME_MAX 2048

struct gpkt {
	uint64_t us;		/* time from TS_BASE_SEC */
	struct gpugen_pkt_spec s;
};

static struct gpkt pkts[MAX_PKTS];
static uint32_t n_pkts;
static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Endpoints of flow number f: distinct for every flow. */
static void
flow_spec(struct gpugen_pkt_spec *s, uint32_t f, uint8_t proto)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	s->eth_dst[3] = (uint8_t)(f >> 8);
	s->eth_dst[4] = (uint8_t)f;
	s->eth_src[3] = (uint8_t)(f >> 16);
	s->eth_src[4] = (uint8_t)(f >> 8);
	s->eth_src[5] = (uint8_t)f;
	s->tos = (uint8_t)(f % 8 << 5 | f % 3);
	if (f % 4 == 3) {
		s->n_vlans = 1;
		s->vid[0] = (uint16_t)(100 + f % 3);
	}
	s->ip_version = f % 3 == 2 ? 6 : 4;
	if (s->ip_version == 4) {
		s->src[0] = 10;
		s->src[1] = (uint8_t)(f >> 16);
		s->src[2] = (uint8_t)(f >> 8);
		s->src[3] = (uint8_t)f;
		memcpy(s->dst, "\xc0\x00\x02\x07", 4);
	} else {
		memcpy(s->src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0", 16);
		s->src[13] = (uint8_t)(f >> 16);
		s->src[14] = (uint8_t)(f >> 8);
		s->src[15] = (uint8_t)f;
		memcpy(s->dst, "\x20\x01\x0d\xb8\0\x01\0\0\0\0\0\0\0\0\0\x07", 16);
	}
	s->ttl = 64;
	s->proto = proto;
	s->sport = (uint16_t)(20000 + f);
	s->dport = proto == GPURX_IPPROTO_TCP ? 443 : 53;
	s->payload_byte = (uint8_t)f;
}

static void
add(uint64_t us, const struct gpugen_pkt_spec *s, uint8_t tcp_flags,
		uint32_t payload)
{
	struct gpkt *p;

	if (n_pkts == MAX_PKTS || us >= SPAN_US)
		return;
	p = &pkts[n_pkts++];
	p->us = us;
	p->s = *s;
	p->s.tcp_flags = tcp_flags;
	p->s.payload_len = payload;
	/* Not from rnd(): the flows' times stay as they were. */
	p->s.ttl = (uint8_t)(60 + n_pkts % 5);
}

/* ICMP flow f from t0: n packets of this type and code, 1 s apart. */
static void
icmp_flow(uint32_t f, uint64_t t0, uint32_t n, uint8_t type4, uint8_t type6,
		uint8_t code)
{
	struct gpugen_pkt_spec s;

	flow_spec(&s, f, 0);
	s.proto = s.ip_version == 4 ? GPURX_IPPROTO_ICMP : GPURX_IPPROTO_ICMPV6;
	s.sport = 0;
	s.dport = 0;
	s.icmp_type = s.ip_version == 4 ? type4 : type6;
	s.icmp_code = code;
	for (uint32_t k = 0; k < n; k++)
		add(t0 + k * 1000000ull, &s, 0, 32);
}

/* A TCP connection from t0: SYN, data, FIN (or RST), the last ACK. */
static uint64_t
tcp_conn(uint32_t f, uint64_t t0, int rst)
{
	struct gpugen_pkt_spec s;
	uint32_t data = 3 + rnd(6);
	uint64_t t = t0;

	flow_spec(&s, f, GPURX_IPPROTO_TCP);
	add(t, &s, 0x02, 0);
	for (uint32_t i = 0; i < data; i++) {
		t += 40000 + rnd(20000);
		add(t, &s, 0x18, 100 + rnd(1200));
	}
	t += 30000;
	if (rst) {
		add(t, &s, 0x04, 0);
		return t;
	}
	add(t, &s, 0x11, 0);
	t += 100000;		/* within the 1 s linger */
	add(t, &s, 0x10, 0);
	return t;
}

static int
by_time(const void *a, const void *b)
{
	const struct gpkt *x = a, *y = b;

	return x->us < y->us ? -1 : x->us > y->us;
}

/* Packet i of --many: flow many_first + i, at microsecond i. */
static uint64_t many_first;

static void
many_pkt(uint64_t i, struct gpugen_pkt_spec *s, uint64_t *us)
{
	struct gpurx_flow_key k;

	flow_stress_key((uint32_t)(many_first + i), &k);
	memset(s, 0, sizeof(*s));
	memcpy(s->eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	s->ip_version = k.ip_version;
	/* The builder wants IPv4 addresses in the first 4 bytes. */
	memcpy(s->src, k.ip_version == 4 ? k.src + 12 : k.src,
		k.ip_version == 4 ? 4 : 16);
	memcpy(s->dst, k.ip_version == 4 ? k.dst + 12 : k.dst,
		k.ip_version == 4 ? 4 : 16);
	s->ttl = 64;
	s->proto = k.proto;
	s->sport = k.sport;
	s->dport = k.dport;
	s->tcp_flags = k.proto == GPURX_IPPROTO_TCP ? 0x10 : 0;
	if (gpurx_flow_key_vlan(&k) != 0) {
		s->n_vlans = 1;
		s->vid[0] = gpurx_flow_key_vlan(&k);
	}
	*us = i;
}

/* Packet i of the known flows (sorted). */
static void
flows_pkt(uint64_t i, struct gpugen_pkt_spec *s, uint64_t *us)
{
	*s = pkts[i].s;
	*us = pkts[i].us;
}

/* n packets, what at() says each is, into a pcap. 0, or 1 (said why). */
static int
dump_all(const char *path, uint64_t n,
		void (*at)(uint64_t i, struct gpugen_pkt_spec *s, uint64_t *us))
{
	static uint8_t buf[FRAME_MAX];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = dead != NULL ? pcap_dump_open(dead, path) : NULL;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", path, dead != NULL ?
			pcap_geterr(dead) : "pcap_open_dead failed");
		if (dead != NULL)
			pcap_close(dead);
		return 1;
	}
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		struct gpugen_pkt_layout lay;
		struct gpugen_pkt_spec s;
		struct pcap_pkthdr h;
		uint64_t us;

		at(i, &s, &us);
		h.caplen = h.len = gpugen_pkt_build(&s, buf, sizeof(buf), &lay);
		h.ts.tv_sec = (time_t)(TS_BASE_SEC + us / 1000000);
		h.ts.tv_usec = (suseconds_t)(us % 1000000);
		if (h.len == 0) {
			fprintf(stderr, "packet %" PRIu64 " does not fit\n", i);
			rc = 1;
		} else {
			pcap_dump((u_char *)d, &h, buf);
		}
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return rc;
}

/* --dense: 16 flows over the timeline, each at a tick with probability
 * 1/2 (or 1/8: a sparse tick), one to three packets; a TCP flow's burst ends with FIN (then ACK)
 * one time in three, and its next packet opens the same ports again. */
static void
dense_flows(void)
{
	struct gpugen_pkt_spec s;

	for (uint64_t t = 0; t < SPAN_US; t += (5 + rnd(21)) * 1000000ull) {
		/* Some ticks sparse: a flow's next packets, past a
		 * boundary, then follow a few packets on. */
		const uint32_t odds = rnd(2) ? 2 : 8;

		for (uint32_t f = 1; f <= 16; f++) {
			const uint8_t proto = f % 2 ? GPURX_IPPROTO_UDP :
				GPURX_IPPROTO_TCP;
			uint32_t n = 1 + rnd(3);
			uint64_t u = t + f * 100;

			if (rnd(odds) != 0)
				continue;
			flow_spec(&s, f, proto);
			for (uint32_t k = 0; k < n; k++, u += 1000)
				add(u, &s, proto == GPURX_IPPROTO_TCP ? 0x18 : 0,
					60 + rnd(1000));
			if (proto == GPURX_IPPROTO_TCP && rnd(3) == 0) {
				add(u, &s, 0x11, 0);
				add(u + 1000, &s, 0x10, 0);
			}
		}
	}
}

int
main(int argc, char **argv)
{
	struct gpugen_pkt_spec s;
	uint32_t f = 1;

	if ((argc == 4 || argc == 5) && strcmp(argv[1], "--many") == 0) {
		char *end;
		const uint64_t n = strtoull(argv[2], &end, 0);

		if (argc == 5)
			many_first = strtoull(argv[4], NULL, 0);
		/* flow_stress_key() numbers flows in 32 bits. */
		if (*end != '\0' || n == 0 || many_first + n > UINT32_MAX) {
			fprintf(stderr, "--many %s %s: N must be 1 or more and "
				"FIRST + N at most %u\n", argv[2],
				argc == 5 ? argv[4] : "0", UINT32_MAX);
			return 2;
		}
		return dump_all(argv[3], n, many_pkt);
	}
	if (argc == 4 && strcmp(argv[1], "--dense") == 0) {
		rng = strtoull(argv[3], NULL, 0) * 2654435761u + 1;
		dense_flows();
		qsort(pkts, n_pkts, sizeof(pkts[0]), by_time);
		if (dump_all(argv[2], n_pkts, flows_pkt) != 0)
			return 1;
		printf("%u packets, 16 flows\n", n_pkts);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap SEED | --dense OUT.pcap SEED "
			"| --many N OUT.pcap [FIRST]\n", argv[0]);
		return 2;
	}
	rng = strtoull(argv[2], NULL, 0) * 2654435761u + 1;
	/* FIN and RST ends, a third with the same ports 3-5 s later. */
	for (uint32_t i = 0; i < 60; i++, f++) {
		uint64_t t0 = (uint64_t)rnd(200) * 1000000 + rnd(1000000);
		uint64_t end = tcp_conn(f, t0, i % 5 == 4);

		if (i % 3 == 0)
			tcp_conn(f, end + 3000000 + rnd(2000000), 0);
	}
	/* Idle: a burst, 20-40 s of silence, a burst. */
	for (uint32_t i = 0; i < 50; i++, f++) {
		uint64_t t = (uint64_t)rnd(150) * 1000000 + rnd(1000000);

		flow_spec(&s, f, GPURX_IPPROTO_UDP);
		for (int burst = 0; burst < 2; burst++) {
			uint32_t n = 4 + rnd(6);

			for (uint32_t k = 0; k < n; k++) {
				add(t, &s, 0, 40 + rnd(900));
				t += 150000 + rnd(100000);
			}
			t += (20 + rnd(20)) * 1000000ull;
		}
	}
	/* Long: a packet every 4 s for 200 s. */
	for (uint32_t i = 0; i < 12; i++, f++) {
		uint64_t t = (uint64_t)rnd(20) * 1000000 + rnd(1000000);

		flow_spec(&s, f, i % 2 ? GPURX_IPPROTO_UDP : GPURX_IPPROTO_TCP);
		for (uint32_t k = 0; k < 50; k++, t += 4000000)
			add(t, &s, i % 2 ? 0 : 0x10, 200 + rnd(1000));
	}
	/* Short: one to three packets. */
	for (uint32_t i = 0; i < 300; i++, f++) {
		uint64_t t = (uint64_t)rnd(235) * 1000000 + rnd(1000000);
		uint32_t n = 1 + rnd(3);

		flow_spec(&s, f, i % 2 ? GPURX_IPPROTO_UDP : GPURX_IPPROTO_TCP);
		for (uint32_t k = 0; k < n; k++, t += 10000 + rnd(100000))
			add(t, &s, i % 2 ? 0 : 0x18, rnd(1400));
	}
	/* ICMP: echo request, echo reply, port unreachable, and host
	 * unreachable with port unreachable from the same sender. */
	for (uint32_t i = 0; i < 12; i++, f++) {
		const uint64_t t0 = (5 + 18 * (uint64_t)i) * 1000000ull + 500;

		switch (i % 4) {
		case 0:
			icmp_flow(f, t0, 4, 8, 128, 0);
			break;
		case 1:
			icmp_flow(f, t0, 4, 0, 129, 0);
			break;
		case 2:
			icmp_flow(f, t0, 2, 3, 1, 3);
			break;
		default:
			icmp_flow(f, t0, 2, 3, 1, 1);
			icmp_flow(f, t0 + 300000, 1, 3, 1, 3);
			break;
		}
	}
	/* ARP: counted, no flow. */
	memset(&s, 0, sizeof(s));
	memcpy(s.eth_dst, "\xff\xff\xff\xff\xff\xff", 6);
	memcpy(s.eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	s.ethertype = 0x0806;
	s.l2_body_len = 28;
	for (uint64_t t = 0; t < SPAN_US; t += 50000)
		add(t + rnd(1000), &s, 0, 0);

	/* One order, each packet at its own microsecond. */
	qsort(pkts, n_pkts, sizeof(pkts[0]), by_time);
	for (uint32_t i = 1; i < n_pkts; i++)
		if (pkts[i].us <= pkts[i - 1].us)
			pkts[i].us = pkts[i - 1].us + 1;

	if (dump_all(argv[1], n_pkts, flows_pkt) != 0)
		return 1;
	printf("%u packets, %u flows\n", n_pkts, f - 1);
	return 0;
}
