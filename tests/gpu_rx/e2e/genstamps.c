/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stamped traffic with known loss, reordering, duplicates and latency,
 * for dpdk-gpu-rx --stamps: frames built with gpugen_build.h and stamped
 * with gpugen_stamp.h (as the generator stamps them), written to a pcap
 * whose record times are the RX times (net_pcap hands them to --ts port),
 * and the figures dpdk-gpu-rx must report, worked out here from the
 * scenario itself, as JSON.
 *
 * Streams:
 *   1  IPv4 UDP, seq 0..99: 10, 11 and 50 never sent (lost), 20 sent
 *      after 25 (reordered), 30 sent twice and 60 three times
 *      (duplicates); latency 10240 ns for seq % 10 == 0, else 5120 ns
 *   2  IPv6 TCP in a VLAN, seq 0..4999: 5 sent last (reordered, further
 *      below the highest than the duplicate window: late); latency
 *      2000 ns, 3145728 ns for seq 4999
 *   3  IPv4 UDP, seq 500..509 (a stream joined mid-way: nothing lost),
 *      tx_ns 1 us after the RX time (clocks differ: negative; jitter
 *      0, the offset constant)
 *   4  IPv4 TCP with 40 bytes of IP and 40 of TCP options, seq 0..19:
 *      the stamp past the first 128 bytes, which the GPU kernel stages
 *      (it reads it where the packet lies); latency 4096 ns, 8192 for
 *      odd seq
 * and 7 UDP frames without a stamp. Latencies are chosen on the bounds
 * of the receiver's histogram buckets, so its percentiles are exact.
 *
 * Usage: gpurx-e2e-genstamps OUT.pcap EXPECTED.json
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "gpuapp_json.h"
#include "gpugen_build.h"
#include "gpugen_stamp.h"
#include "stamps.h"	/* the receiver's duplicate window */

#define BASE_US 1700000000000000ull	/* RX time of the first frame */
#define MAX_PKTS 6000
#define N_STREAMS 4

struct sent {
	uint32_t stream;	/* 0: no stamp */
	uint64_t seq;
	int64_t lat;		/* ns, RX time minus tx_ns */
};

static struct sent pkts[MAX_PKTS];
static unsigned int n_pkts;

static void
add(uint32_t stream, uint64_t seq, int64_t lat)
{
	if (n_pkts < MAX_PKTS)
		pkts[n_pkts++] = (struct sent){ stream, seq, lat };
}

static int64_t
lat1(uint64_t seq)
{
	return seq % 10 == 0 ? 10240 : 5120;
}

static int64_t
lat2(uint64_t seq)
{
	return seq == 4999 ? 3145728 : 2000;
}

static void
scenario(void)
{
	uint64_t s1 = 0, s2 = 0, s3 = 500, s4 = 0;
	unsigned int unstamped = 0;

	/* Round robin over the streams while any has packets left. */
	while (s1 < 100 || s2 < 5000 || s3 < 510 || s4 < 20) {
		if (s1 < 100) {
			uint64_t q = s1++;

			if (q == 10 || q == 11 || q == 50 || q == 20) {
				/* lost, or (20) sent after 25 */
			} else {
				add(1, q, lat1(q));
				if (q == 25)
					add(1, 20, lat1(20));
				if (q == 30)
					add(1, 30, lat1(30));
				if (q == 60) {
					add(1, 60, lat1(60));
					add(1, 60, lat1(60));
				}
			}
		}
		if (s2 < 5000) {
			uint64_t q = s2++;

			if (q != 5)
				add(2, q, lat2(q));
		}
		if (s3 < 510) {
			add(3, s3, -1000);
			s3++;
		}
		if (s4 < 20) {
			add(4, s4, s4 % 2 ? 8192 : 4096);
			s4++;
		}
		if (unstamped < 7 && n_pkts % 11 == 3) {
			add(0, 0, 0);
			unstamped++;
		}
	}
	add(2, 5, lat2(5));
}

static uint32_t
build(const struct sent *p, unsigned int i, uint8_t *buf, uint64_t rx_ns)
{
	struct gpugen_pkt_spec s;
	struct gpugen_pkt_layout lay;
	uint32_t len;

	memset(&s, 0, sizeof(s));
	memcpy(s.eth_dst, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s.eth_src, "\x02\x00\x00\x00\x00\x02", 6);
	s.payload_len = 64;
	s.payload_byte = (uint8_t)i;
	s.payload_pattern = GPUGEN_PB_PAY_INC;
	if (p->stream == 2) {
		s.n_vlans = 1;
		s.vid[0] = 7;
		s.ip_version = 6;
		memcpy(s.src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(s.dst, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		s.proto = GPURX_IPPROTO_TCP;
		s.tcp_flags = 0x18;
	} else if (p->stream == 4) {
		s.ip_version = 4;
		memcpy(s.src, "\x0a\x00\x00\x01", 4);
		memcpy(s.dst, "\x0a\x00\x00\x02", 4);
		s.ip_opt_len = 40;
		s.proto = GPURX_IPPROTO_TCP;
		s.tcp_flags = 0x18;
		s.tcp_opt_len = 40;
	} else {
		s.ip_version = 4;
		memcpy(s.src, "\x0a\x00\x00\x01", 4);
		memcpy(s.dst, "\x0a\x00\x00\x02", 4);
		s.proto = GPURX_IPPROTO_UDP;
	}
	s.sport = (uint16_t)(1000 + p->stream);
	s.dport = 9;
	len = gpugen_pkt_build(&s, buf, 2048, &lay);
	if (len == 0)
		return 0;
	if (p->stream != 0)
		gpugen_stamp_put(buf + lay.payload_off + GPUGEN_STAMP_PAYLOAD_OFF,
			p->stream, p->seq, (uint64_t)((int64_t)rx_ns - p->lat));
	gpugen_pkt_csum_fill(buf, &lay);
	return len;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The figures of stream id, from the list of what was sent. */
static void
expect(struct gpuapp_json *j, uint32_t id)
{
	static int64_t lat[MAX_PKTS];
	static uint8_t seen[MAX_PKTS];
	uint64_t rec = 0, dup = 0, reo = 0, late = 0, neg = 0, nl = 0;
	uint64_t lo = UINT64_MAX, hi = 0, uniq = 0, max_seen = 0;
	int64_t last_lat = 0;
	double jit = 0;
	int any = 0;

	memset(seen, 0, sizeof(seen));
	for (unsigned int i = 0; i < n_pkts; i++) {
		const struct sent *p = &pkts[i];

		if (p->stream != id)
			continue;
		rec++;
		if (seen[p->seq]) {
			dup++;
		} else {
			seen[p->seq] = 1;
			uniq++;
			if (any && p->seq < max_seen) {
				reo++;
				if (max_seen - p->seq >= GPURX_STAMP_WINDOW)
					late++;
			}
		}
		/* RFC 3550: transit here is the latency itself (the RX
		 * time is the record's, tx_ns that minus lat). */
		if (any) {
			int64_t d = p->lat - last_lat;

			jit += ((double)(d < 0 ? -d : d) - jit) / 16.0;
		}
		last_lat = p->lat;
		if (!any || p->seq > max_seen)
			max_seen = p->seq;
		any = 1;
		lo = p->seq < lo ? p->seq : lo;
		hi = p->seq > hi ? p->seq : hi;
		if (p->lat < 0)
			neg++;
		else
			lat[nl++] = p->lat;
	}
	qsort(lat, nl, sizeof(lat[0]), cmp_i64);
	/* Nearest rank, 1-based: ceil(0.5 n) and ceil(0.99 n). */
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "stream", id);
	gpuapp_json_u64(j, "received", rec);
	gpuapp_json_u64(j, "lost", hi - lo + 1 - uniq);
	gpuapp_json_u64(j, "reordered", reo);
	gpuapp_json_u64(j, "late", late);
	gpuapp_json_u64(j, "duplicates", dup);
	gpuapp_json_obj_begin(j, "latency_ns");
	gpuapp_json_u64(j, "count", nl);
	gpuapp_json_u64(j, "negative", neg);
	gpuapp_json_i64(j, "min", nl ? lat[0] : 0);
	gpuapp_json_i64(j, "median", nl ? lat[(nl + 1) / 2 - 1] : 0);
	gpuapp_json_i64(j, "p99", nl ? lat[(nl * 99 + 99) / 100 - 1] : 0);
	gpuapp_json_i64(j, "max", nl ? lat[nl - 1] : 0);
	gpuapp_json_u64(j, "jitter", (uint64_t)(jit + 0.5));
	gpuapp_json_obj_end(j);
	/* By octave, from the sorted latencies: [2^e, 2^(e+1)), 0-1 in the
	 * first. */
	gpuapp_json_arr_begin(j, "latency_hist");
	for (uint64_t i = 0, k; i < nl; i = k) {
		uint64_t lo = lat[i] < 2 ? 0 : 1ull << (63 - __builtin_clzll(
			(uint64_t)lat[i]));

		for (k = i; k < nl && (uint64_t)lat[k] < (lo ? 2 * lo : 2); k++)
			;
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_u64(j, "from_ns", lo);
		gpuapp_json_u64(j, "count", k - i);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
}

int
main(int argc, char **argv)
{
	static uint8_t buf[2048];
	pcap_t *dead;
	pcap_dumper_t *d;
	struct gpuapp_json *j;
	int rc;
	uint64_t stamped = 0, unstamped = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap EXPECTED.json\n", argv[0]);
		return 2;
	}
	scenario();
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = dead != NULL ? pcap_dump_open(dead, argv[1]) : NULL;
	if (d == NULL) {
		fprintf(stderr, "genstamps: cannot write %s\n", argv[1]);
		return 1;
	}
	for (unsigned int i = 0; i < n_pkts; i++) {
		uint64_t rx_us = BASE_US + i;
		struct pcap_pkthdr h;
		uint32_t len = build(&pkts[i], i, buf, rx_us * 1000);

		if (len == 0) {
			fprintf(stderr, "genstamps: cannot build frame %u\n", i);
			return 1;
		}
		h.ts.tv_sec = (time_t)(rx_us / 1000000);
		h.ts.tv_usec = (suseconds_t)(rx_us % 1000000);
		h.caplen = h.len = len;
		pcap_dump((u_char *)d, &h, buf);
		if (pkts[i].stream != 0)
			stamped++;
		else
			unstamped++;
	}
	pcap_dump_close(d);
	pcap_close(dead);
	j = gpuapp_json_create();
	if (j == NULL) {
		fprintf(stderr, "genstamps: cannot write %s: out of memory\n",
			argv[2]);
		return 1;
	}
	gpuapp_json_obj_begin(j, NULL);
	gpuapp_json_u64(j, "stamped", stamped);
	gpuapp_json_u64(j, "unstamped", unstamped);
	gpuapp_json_u64(j, "untracked", 0);
	gpuapp_json_arr_begin(j, "streams");
	for (uint32_t id = 1; id <= N_STREAMS; id++)
		expect(j, id);
	gpuapp_json_arr_end(j);
	gpuapp_json_obj_end(j);
	rc = gpuapp_json_write(j, argv[2], 1);
	gpuapp_json_free(j);
	if (rc != 0)
		return 1;
	printf("genstamps: %u frames, %llu stamped in %u streams\n", n_pkts,
		(unsigned long long)stamped, N_STREAMS);
	return 0;
}
