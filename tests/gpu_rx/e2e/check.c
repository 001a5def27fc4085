/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compare a dpdk-gpu-rx capture with libpcap's own filtering of its
 * input: the packets libpcap's pcap_offline_filter() accepts, cut to
 * snaplen, must be exactly the capture's packets, in order, with the
 * same lengths (and timestamps to the microsecond with --ts).
 *
 * With --queues N the capture is a pcapng of N RX queues that each
 * received all of IN (one replay of it per queue): the packets of each
 * queue (its packet blocks' queue option), in the file's order, must be
 * IN's matches in order; the queues' blocks may interleave.
 *
 * With --iface I the capture is a pcapng of several ports: the packet
 * blocks of interface I (one port's, of one of its queues) must be IN's
 * matches in order; the other interfaces' blocks are not looked at.
 *
 * With --first N only IN's first N matches are expected (-c N).
 *
 * Usage: gpurx-e2e-check IN.pcap CAPTURE FILTER SNAPLEN
 *            [--ts | --queues N | --iface I | --first N]
 *        gpurx-e2e-check --valid CAPTURE   (reads to the end, prints count)
 * Exit: 0 equal, 1 different, 2 usage or unreadable input.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

static pcap_t *
open_file(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);

	if (p == NULL)
		fprintf(stderr, "check: %s\n", err);
	return p;
}

/* The whole file parses: a capture cut mid-block fails here. */
static int
check_valid(const char *path)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned long n = 0;
	pcap_t *p = open_file(path);
	int rc;

	if (p == NULL)
		return 1;
	while ((rc = pcap_next_ex(p, &h, &d)) == 1)
		n++;
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "check: %s: %s after %lu packets\n", path,
			pcap_geterr(p), n);
		return 1;
	}
	printf("check: %s is valid, %lu packets\n", path, n);
	pcap_close(p);
	return 0;
}

struct match {
	uint32_t caplen, len;
	u_char *data;
};

/* IN's packets the filter accepts, cut to snaplen. NULL on error. */
static struct match *
load_matches(const char *in_path, const char *filter, unsigned long snaplen,
		unsigned long *n)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	struct bpf_program prog;
	struct match *m = NULL;
	unsigned long cap = 0;
	pcap_t *in = open_file(in_path);
	int rc;

	*n = 0;
	if (in == NULL)
		return NULL;
	if (pcap_compile(in, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		fprintf(stderr, "check: filter: %s\n", pcap_geterr(in));
		pcap_close(in);
		return NULL;
	}
	while ((rc = pcap_next_ex(in, &h, &d)) == 1) {
		if (pcap_offline_filter(&prog, h, d) == 0)
			continue;
		if (*n == cap) {
			struct match *g;

			cap = cap ? cap * 2 : 1024;
			g = realloc(m, cap * sizeof(*m));
			if (g == NULL)
				break;
			m = g;
		}
		m[*n].caplen = h->caplen < snaplen ? h->caplen : (uint32_t)snaplen;
		m[*n].len = h->len;
		m[*n].data = malloc(m[*n].caplen);
		if (m[*n].data == NULL)
			break;
		memcpy(m[*n].data, d, m[*n].caplen);
		(*n)++;
	}
	pcap_freecode(&prog);
	pcap_close(in);
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "check: cannot read %s\n", in_path);
		return NULL;
	}
	return m;
}

/*
 * Each queue's packet blocks against IN's matches. Only what dpdk-gpu-rx
 * writes is read here: little-endian blocks, packet blocks of type 6 with
 * the queue in option 6; libpcap has validated the file before.
 */
static int
check_queues(const char *in_path, const char *cap_path, const char *filter,
		unsigned long snaplen, unsigned long nq, long iface)
{
	unsigned long n, idx[64] = { 0 }, blocks = 0;
	struct match *m = load_matches(in_path, filter, snaplen, &n);
	FILE *f = fopen(cap_path, "rb");
	uint8_t *buf = NULL;
	long size = -1, pos = 0;

	if (m == NULL || f == NULL || nq == 0 || nq > 64)
		return 2;
	if (fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	if (size > 0 && fseek(f, 0, SEEK_SET) == 0)
		buf = malloc((size_t)size);
	if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "check: cannot read %s\n", cap_path);
		return 2;
	}
	fclose(f);
	while (pos + 12 <= size) {
		uint32_t type, blen, caplen, len, q = UINT32_MAX, opt;
		const struct match *want;

		memcpy(&type, buf + pos, 4);
		memcpy(&blen, buf + pos + 4, 4);
		if (blen < 12 || blen > size - pos)
			break;
		if (type != 6 || blen < 32) {
			pos += blen;
			continue;
		}
		if (iface >= 0) {
			uint32_t i;

			memcpy(&i, buf + pos + 8, 4);
			if (i != (uint32_t)iface) {
				pos += blen;
				continue;
			}
		}
		memcpy(&caplen, buf + pos + 20, 4);
		memcpy(&len, buf + pos + 24, 4);
		for (opt = 28 + ((caplen + 3) & ~3u); opt + 4 <= blen - 4;) {
			uint16_t code, olen;

			memcpy(&code, buf + pos + opt, 2);
			memcpy(&olen, buf + pos + opt + 2, 2);
			if (code == 0)
				break;
			if (code == 6 && olen == 4)
				memcpy(&q, buf + pos + opt + 4, 4);
			opt += 4 + ((olen + 3u) & ~3u);
		}
		blocks++;
		/* One stream per interface, whichever of its queues. */
		if (iface >= 0)
			q = 0;
		if (q >= nq) {
			fprintf(stderr, "check: packet block %lu: queue %u, not "
				"one of %lu\n", blocks, q, nq);
			return 1;
		}
		if (idx[q] >= n) {
			fprintf(stderr, "check: queue %u has more than the %lu "
				"matching packets\n", q, n);
			return 1;
		}
		want = &m[idx[q]++];
		if (caplen != want->caplen || len != want->len ||
				memcmp(buf + pos + 28, want->data, caplen) != 0) {
			fprintf(stderr, "check: queue %u, its packet %lu (block "
				"%lu): caplen %u/%u len %u/%u or data differ "
				"(capture/expected)\n", q, idx[q], blocks, caplen,
				want->caplen, len, want->len);
			return 1;
		}
		pos += blen;
	}
	for (unsigned long q = 0; q < nq; q++)
		if (idx[q] != n) {
			fprintf(stderr, "check: queue %lu: %lu of %lu matching "
				"packets\n", q, idx[q], n);
			return 1;
		}
	if (iface >= 0)
		printf("check: interface %ld, %lu packets matching '%s' in "
			"order, identical\n", iface, n, filter);
	else
		printf("check: %lu queues, each %lu packets matching '%s' in "
			"order, identical\n", nq, n, filter);
	return 0;
}

int
main(int argc, char **argv)
{
	struct pcap_pkthdr *hi, *ho;
	const u_char *di, *dout;
	struct bpf_program prog;
	unsigned long idx = 0, matched = 0;
	unsigned long snaplen;
	pcap_t *in, *out;
	unsigned long first = 0;
	int check_ts, rc;

	if (argc == 3 && strcmp(argv[1], "--valid") == 0)
		return check_valid(argv[2]);
	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: %s IN CAPTURE FILTER SNAPLEN [--ts | "
			"--queues N | --iface I | --first N]\n", argv[0]);
		return 2;
	}
	if (argc == 7 && strcmp(argv[5], "--queues") == 0) {
		rc = check_valid(argv[2]);
		return rc != 0 ? rc : check_queues(argv[1], argv[2], argv[3],
			strtoul(argv[4], NULL, 0), strtoul(argv[6], NULL, 0), -1);
	}
	if (argc == 7 && strcmp(argv[5], "--iface") == 0) {
		rc = check_valid(argv[2]);
		return rc != 0 ? rc : check_queues(argv[1], argv[2], argv[3],
			strtoul(argv[4], NULL, 0), 1, strtol(argv[6], NULL, 0));
	}
	check_ts = argc == 6 && strcmp(argv[5], "--ts") == 0;
	if (argc == 7 && strcmp(argv[5], "--first") == 0)
		first = strtoul(argv[6], NULL, 10);
	snaplen = strtoul(argv[4], NULL, 0);
	in = open_file(argv[1]);
	out = open_file(argv[2]);
	if (in == NULL || out == NULL)
		return 2;
	if (pcap_compile(in, &prog, argv[3], 1, PCAP_NETMASK_UNKNOWN) != 0) {
		fprintf(stderr, "check: filter: %s\n", pcap_geterr(in));
		return 2;
	}
	while ((rc = pcap_next_ex(in, &hi, &di)) == 1) {
		uint32_t want;

		idx++;
		if (pcap_offline_filter(&prog, hi, di) == 0)
			continue;
		if (first != 0 && matched == first)
			break;
		matched++;
		want = hi->caplen < snaplen ? hi->caplen : (uint32_t)snaplen;
		if (pcap_next_ex(out, &ho, &dout) != 1) {
			fprintf(stderr, "check: capture ends after %lu packets; "
				"input packet %lu matches too\n", matched - 1, idx);
			return 1;
		}
		if (ho->caplen != want || ho->len != hi->len ||
				memcmp(dout, di, want) != 0) {
			fprintf(stderr, "check: match %lu (input packet %lu): "
				"caplen %u/%u len %u/%u or data differ "
				"(capture/expected)\n", matched, idx, ho->caplen,
				want, ho->len, hi->len);
			return 1;
		}
		if (check_ts && (ho->ts.tv_sec != hi->ts.tv_sec ||
				ho->ts.tv_usec != hi->ts.tv_usec)) {
			fprintf(stderr, "check: match %lu (input packet %lu): "
				"timestamp %ld.%06ld, expected %ld.%06ld\n",
				matched, idx, (long)ho->ts.tv_sec,
				(long)ho->ts.tv_usec, (long)hi->ts.tv_sec,
				(long)hi->ts.tv_usec);
			return 1;
		}
	}
	if (rc == -1) {
		fprintf(stderr, "check: reading %s: %s\n", argv[1],
			pcap_geterr(in));
		return 2;
	}
	if (pcap_next_ex(out, &ho, &dout) == 1) {
		fprintf(stderr, "check: capture has more than the %lu matching "
			"packets\n", matched);
		return 1;
	}
	printf("check: %lu of %lu packets match '%s', capture identical\n",
		matched, idx, argv[3]);
	pcap_freecode(&prog);
	pcap_close(in);
	pcap_close(out);
	return 0;
}
