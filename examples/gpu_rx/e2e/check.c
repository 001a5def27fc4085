/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compare a dpdk-gpu-rx capture with libpcap's own filtering of its
 * input: the packets libpcap's pcap_offline_filter() accepts, cut to
 * snaplen, must be exactly the capture's packets, in order, with the
 * same lengths (and timestamps to the microsecond with --ts).
 *
 * Usage: gpurx-e2e-check IN.pcap CAPTURE FILTER SNAPLEN [--ts]
 *        gpurx-e2e-check --valid CAPTURE   (reads to the end, prints count)
 * Exit: 0 equal, 1 different, 2 usage or unreadable input.
 */

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

int
main(int argc, char **argv)
{
	struct pcap_pkthdr *hi, *ho;
	const u_char *di, *dout;
	struct bpf_program prog;
	unsigned long idx = 0, matched = 0;
	unsigned long snaplen;
	pcap_t *in, *out;
	int check_ts, rc;

	if (argc == 3 && strcmp(argv[1], "--valid") == 0)
		return check_valid(argv[2]);
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: %s IN CAPTURE FILTER SNAPLEN [--ts]\n",
			argv[0]);
		return 2;
	}
	check_ts = argc == 6 && strcmp(argv[5], "--ts") == 0;
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
