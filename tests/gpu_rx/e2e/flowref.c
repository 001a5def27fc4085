/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow records dpdk-gpu-rx must export for a pcap, computed the
 * plain way: packets in file order, one live record per key in a hash
 * map, each rule of flow_table.h written out again (a record ends at
 * the earliest of: its last packet + linger once a FIN or RST was seen,
 * its last packet + idle, its first packet + active; ties in that
 * order; checked when the key's next packet comes, and for every record
 * at the last packet's time when the file ends; still live then: ended
 * by its FIN/RST, else forced). What a packet's flow key is, and whether
 * it has one, comes from the shared parser.
 *
 * Prints one CSV line per record, as gpurx-ipfix-read does:
 *   domain,proto,src,sport,dst,dport,vlan,packets,bytes,start_ms,end_ms,
 *   tcp_flags,end_reason,ingress,icmp,src_mac,dst_mac,tos,ttl_min,ttl_max
 * (ICMP: the key's type << 8 | code as icmp, no ports; MACs and TOS of
 * the key's first packet: the tests' flows keep theirs; TTLs over the
 * record's packets).
 *
 * Usage: gpurx-flowref PCAP IDLE_S ACTIVE_S LINGER_S DOMAIN INGRESS
 *            [--time-zero]
 *        gpurx-flowref --split PCAP OUT0.pcap OUT1.pcap [OUT2.pcap ..]
 * (--time-zero: every packet at time 0, as dpdk-gpu-rx --ts none sees it;
 * --split: PCAP's packets in N files (2 to 16), each flow key's in one,
 * file hash mod N, as RSS keeps a flow on one queue, packets without a
 * key in the first; a file per queue of the runs over several queues)
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "flow_classify.h"

struct ref {
	int used, live;
	struct gpurx_flow_key key;
	uint64_t first, last, packets, bytes;
	uint8_t flags;
	uint8_t ttl_min, ttl_max;
	struct gpurx_flow_attr attr;	/* the key's first packet's */
};

static struct ref *map;
static size_t map_size;
static uint64_t idle, active, linger;
static uint32_t domain, ingress;
static int time_zero;
static uint64_t n_records, by_reason[8];

static uint64_t
secs(const char *s)
{
	return (uint64_t)(strtod(s, NULL) * 1e9 + 0.5);
}

static uint32_t
why_ended(const struct ref *r, uint64_t now)
{
	uint64_t fin = (r->flags & 0x05) ? r->last + linger : UINT64_MAX;
	uint64_t idl = idle ? r->last + idle : UINT64_MAX;
	uint64_t act = active ? r->first + active : UINT64_MAX;
	uint64_t first = fin;

	if (idl < first)
		first = idl;
	if (act < first)
		first = act;
	if (now < first)
		return 0;
	return first == fin ? 3 : first == idl ? 1 : 2;
}

static void
emit(struct ref *r, uint32_t why)
{
	const struct gpurx_flow_key *k = &r->key;
	const int icmp = (k->ip_version == 4 && k->proto == 1) ||
		(k->ip_version == 6 && k->proto == 58);
	const uint8_t *sm = r->attr.src_mac, *dm = r->attr.dst_mac;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	if (k->ip_version == 4) {
		inet_ntop(AF_INET, k->src + 12, s, sizeof(s));
		inet_ntop(AF_INET, k->dst + 12, d, sizeof(d));
	} else {
		inet_ntop(AF_INET6, k->src, s, sizeof(s));
		inet_ntop(AF_INET6, k->dst, d, sizeof(d));
	}
	printf("%u,%u,%s,%u,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
		PRIu64 ",%u,%u,%u,%u,%02x:%02x:%02x:%02x:%02x:%02x,"
		"%02x:%02x:%02x:%02x:%02x:%02x,%u,%u,%u\n", domain, k->proto, s,
		k->sport, d, icmp ? 0 : k->dport, gpurx_flow_key_vlan(k), r->packets,
		r->bytes, r->first / 1000000, r->last / 1000000, r->flags, why,
		ingress, icmp ? k->dport : 0, sm[0], sm[1], sm[2], sm[3], sm[4],
		sm[5], dm[0], dm[1], dm[2], dm[3], dm[4], dm[5], r->attr.tos,
		r->ttl_min, r->ttl_max);
	r->live = 0;
	n_records++;
	by_reason[why]++;
}

static struct ref *
lookup(const struct gpurx_flow_key *k, const struct gpurx_pkt_info *pi)
{
	size_t i = gpurx_flow_hash(k) & (map_size - 1);

	while (map[i].used && memcmp(&map[i].key, k, sizeof(*k)) != 0)
		i = (i + 1) & (map_size - 1);
	if (!map[i].used) {
		map[i].used = 1;
		map[i].key = *k;
		gpurx_flow_attr_from_pkt(pi, &map[i].attr);
	}
	return &map[i];
}

/* --split: the keys' packets by their flow hash mod the number of files. */
static int
split(const char *in, char **outs, int n)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_dumper_t *d[16] = { NULL };
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int rc = -1;

	p = pcap_open_offline(in, err);
	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", in, err);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		d[i] = pcap_dump_open(p, outs[i]);
		if (d[i] == NULL) {
			fprintf(stderr, "%s\n", pcap_geterr(p));
			goto out;
		}
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct gpurx_pkt_info pi;
		struct gpurx_flow_key k;
		unsigned int to = 0;

		gpurx_pkt_parse(data, h->caplen, h->len, &pi);
		if (gpurx_pkt_has_flow(&pi)) {
			gpurx_flow_key_from_pkt(&pi, &k);
			to = gpurx_flow_hash(&k) % (unsigned int)n;
		}
		pcap_dump((u_char *)d[to], h, data);
	}
	if (rc != PCAP_ERROR_BREAK)
		fprintf(stderr, "%s: %s\n", in, pcap_geterr(p));
out:
	for (int i = 0; i < n; i++) {
		if (d[i] == NULL)
			continue;
		if (pcap_dump_flush(d[i]) != 0) {
			fprintf(stderr, "%s: write failed\n", outs[i]);
			rc = -1;
		}
		pcap_dump_close(d[i]);
	}
	pcap_close(p);
	return rc == PCAP_ERROR_BREAK ? 0 : 1;
}

int
main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t now = 0, pkts = 0;
	pcap_t *p;
	int rc;

	if (argc >= 2 && strcmp(argv[1], "--split") == 0) {
		if (argc < 5 || argc > 19) {
			fprintf(stderr, "usage: %s --split PCAP OUT0.pcap "
				"OUT1.pcap [..]: 2 to 16 files\n", argv[0]);
			return 2;
		}
		return split(argv[2], argv + 3, argc - 3);
	}
	if (argc < 7 || argc > 8 || (argc == 8 &&
			strcmp(argv[7], "--time-zero") != 0)) {
		fprintf(stderr, "usage: %s PCAP IDLE_S ACTIVE_S LINGER_S DOMAIN "
			"INGRESS [--time-zero]\n", argv[0]);
		return 2;
	}
	time_zero = argc == 8;
	idle = secs(argv[2]);
	active = secs(argv[3]);
	linger = secs(argv[4]);
	domain = (uint32_t)strtoul(argv[5], NULL, 0);
	ingress = (uint32_t)strtoul(argv[6], NULL, 0);
	p = pcap_open_offline(argv[1], err);
	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	map_size = 1 << 20;
	map = calloc(map_size, sizeof(*map));
	if (map == NULL)
		return 1;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct gpurx_pkt_info pi;
		struct gpurx_flow_key k;
		struct ref *r;
		uint32_t why;
		/* As net_pcap stamps it (microseconds), in ns. */
		uint64_t ts = time_zero ? 0 : ((uint64_t)h->ts.tv_sec * 1000000 +
			(uint64_t)h->ts.tv_usec) * 1000;

		pkts++;
		now = ts > now ? ts : now;
		gpurx_pkt_parse(data, h->caplen, h->len, &pi);
		if (!gpurx_pkt_has_flow(&pi))
			continue;
		gpurx_flow_key_from_pkt(&pi, &k);
		r = lookup(&k, &pi);
		if (r->live && (why = why_ended(r, ts)) != 0)
			emit(r, why);
		if (!r->live) {
			r->live = 1;
			r->first = r->last = ts;
			r->packets = r->bytes = 0;
			r->flags = 0;
			r->ttl_min = 255;
			r->ttl_max = 0;
		}
		r->ttl_min = pi.ttl < r->ttl_min ? pi.ttl : r->ttl_min;
		r->ttl_max = pi.ttl > r->ttl_max ? pi.ttl : r->ttl_max;
		r->first = ts < r->first ? ts : r->first;
		r->last = ts > r->last ? ts : r->last;
		r->packets++;
		r->bytes += h->len;
		r->flags |= gpurx_pkt_flow_tcp_flags(&pi);
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "%s: %s\n", argv[1], pcap_geterr(p));
		return 1;
	}
	for (size_t i = 0; i < map_size; i++) {
		uint32_t why;

		if (!map[i].live)
			continue;
		why = why_ended(&map[i], now);
		if (why == 0)
			why = map[i].flags & 0x05 ? 3 : 4;
		emit(&map[i], why);
	}
	fprintf(stderr, "flowref: %" PRIu64 " packets, %" PRIu64 " records: "
		"idle %" PRIu64 ", active %" PRIu64 ", FIN/RST %" PRIu64
		", at the end %" PRIu64 "\n", pkts, n_records, by_reason[1],
		by_reason[2], by_reason[3], by_reason[4]);
	pcap_close(p);
	free(map);
	return 0;
}
