/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gputx-check: a pcap written by dpdk-gpu-tx against libgpugen's CPU
 * reference, frame by frame. Usage:
 *   gputx-check FILE COUNT SEED BURST SPEC...
 * The streams are made again from the same specs, seed and burst; frame n
 * must equal packet n byte for byte, with the transmit time of its stamp
 * (a stamped stream), stamps never going back in time; the file holds
 * exactly COUNT frames.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "gpugen.h"
#include "gpugen_core.h"

int
main(int argc, char **argv)
{
	struct gpugen_conf c = { 0 };
	char perr[PCAP_ERRBUF_SIZE], err[512];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0, count, last_ns = 0;
	static uint8_t ref[65536];
	struct gpugen *g;
	pcap_t *p;
	int r, bad = 0;

	if (argc < 6) {
		fprintf(stderr, "usage: %s FILE COUNT SEED BURST SPEC...\n",
			argv[0]);
		return 2;
	}
	count = strtoull(argv[2], NULL, 0);
	c.seed = strtoull(argv[3], NULL, 0);
	c.burst = (uint32_t)strtoul(argv[4], NULL, 0);
	c.data_room = 2048;	/* RTE_MBUF_DEFAULT_DATAROOM, as the app */
	if (gpugen_create(&g, &c) != 0)
		return 2;
	for (int k = 5; k < argc; k++)
		if (gpugen_add_spec(g, argv[k], err, sizeof(err)) < 0) {
			fprintf(stderr, "FAIL: spec '%s': %s\n", argv[k], err);
			return 1;
		}
	p = pcap_open_offline(argv[1], perr);
	if (p == NULL) {
		fprintf(stderr, "FAIL: %s: %s\n", argv[1], perr);
		return 1;
	}
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		struct gpugen_stream_info si;
		uint64_t tx_ns = 0, idx;
		uint32_t s, len;

		len = gpugen_build_cpu(g, n, 0, ref, sizeof(ref), &s, &idx);
		gpugen_stream_info(g, s, &si);
		if (si.stamp_off != 0 && h->caplen >= si.stamp_off + 24) {
			tx_ns = gpurx_be64(data + si.stamp_off + 16);
			if (tx_ns < last_ns) {
				fprintf(stderr, "FAIL: frame %" PRIu64 ": stamp %"
					PRIu64 " before the previous %" PRIu64 "\n", n,
					tx_ns, last_ns);
				bad++;
			}
			last_ns = tx_ns;
			len = gpugen_build_cpu(g, n, tx_ns, ref, sizeof(ref), NULL,
				NULL);
		}
		if (h->caplen != h->len || h->caplen != len ||
				memcmp(data, ref, len) != 0) {
			uint32_t k = 0;

			while (k < len && k < h->caplen && data[k] == ref[k])
				k++;
			if (bad++ < 10)
				fprintf(stderr, "FAIL: frame %" PRIu64 " (stream %u, "
					"packet %" PRIu64 "): %u bytes, reference %u, "
					"first difference at byte %u\n", n, s, idx,
					h->caplen, len, k);
		}
		n++;
	}
	if (r == -1) {
		fprintf(stderr, "FAIL: %s: %s\n", argv[1], pcap_geterr(p));
		bad++;
	}
	pcap_close(p);
	gpugen_free(g);
	if (n != count) {
		fprintf(stderr, "FAIL: %" PRIu64 " frames, %" PRIu64 " expected\n",
			n, count);
		bad++;
	}
	if (bad) {
		fprintf(stderr, "FAIL: %d differences\n", bad);
		return 1;
	}
	printf("ok: %" PRIu64 " frames equal to the CPU reference\n", n);
	return 0;
}
