/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gputx-check: a pcap written by dpdk-gpu-tx against libgpugen's CPU
 * reference, frame by frame. Usage:
 *   gputx-check FILE[,FILE...] COUNT SEED BURST SPEC...
 * The streams are made again from the same specs, seed and burst; frame n
 * must equal packet n byte for byte, with the transmit time of its stamp
 * (a stamped stream), stamps never going back in time within a file; the
 * files hold exactly COUNT frames. Several files are the TX queues' of
 * one run (--queues), which deals bursts out round robin: burst b of the
 * sequence is the next burst of file b % files.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "gpugen.h"
#include "gpugen_core.h"

#define MAX_FILES 32
/* A transmit time no run stamps: the reference built with it shows
 * whether, and where, a frame is stamped. */
#define MARK_NS 0x0123456789abcdefULL

/*
 * Whether packet n is stamped (*tx_ns then the time frame data carries):
 * its reference frame, built into ref with MARK_NS, parsed for the
 * stamp, as each frame of a replay stream has its own layout (and may
 * carry an old stamp the replay leaves as it was).
 */
static bool
stamped(const struct gpugen *g, uint64_t n, uint8_t *ref, uint32_t refsz,
		const uint8_t *data, uint32_t caplen, uint64_t *tx_ns)
{
	uint32_t len = gpugen_build_cpu(g, n, MARK_NS, ref, refsz, NULL, NULL);
	struct gpurx_pkt_info pi;
	struct gpugen_stamp st;

	*tx_ns = 0;
	if (len == 0 || gpurx_pkt_parse(ref, len, len, &pi) != GPURX_MAL_NONE ||
			gpugen_stamp_find(ref, len, &pi, &st) != 0 ||
			st.tx_ns != MARK_NS)
		return false;
	/* Where the frame differs from the reference, it is reported so. */
	if (gpurx_pkt_parse(data, caplen, caplen, &pi) == GPURX_MAL_NONE &&
			gpugen_stamp_find(data, caplen, &pi, &st) == 0)
		*tx_ns = st.tx_ns;
	return true;
}

int
main(int argc, char **argv)
{
	struct gpugen_conf c = { 0 };
	char perr[PCAP_ERRBUF_SIZE], err[512];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0, count, last_ns[MAX_FILES] = { 0 };
	static uint8_t ref[65536];
	pcap_t *p[MAX_FILES];
	bool ended[MAX_FILES] = { false };
	unsigned int nf = 0;
	char *names, *tok, *save = NULL;
	struct gpugen *g;
	int r, bad = 0;

	if (argc < 6) {
		fprintf(stderr, "usage: %s FILE[,FILE...] COUNT SEED BURST SPEC...\n",
			argv[0]);
		return 2;
	}
	count = strtoull(argv[2], NULL, 0);
	c.seed = strtoull(argv[3], NULL, 0);
	c.burst = (uint32_t)strtoul(argv[4], NULL, 0);
	c.data_room = GPUGEN_FRAME_MAX - GPUGEN_FCS;	/* as the app */
	if (c.burst == 0 || gpugen_create(&g, &c) != 0)
		return 2;
	for (int k = 5; k < argc; k++)
		if (gpugen_add_spec(g, argv[k], err, sizeof(err)) < 0) {
			fprintf(stderr, "FAIL: spec '%s': %s\n", argv[k], err);
			return 1;
		}
	names = strdup(argv[1]);
	if (names == NULL)
		return 2;
	for (tok = strtok_r(names, ",", &save); tok != NULL;
			tok = strtok_r(NULL, ",", &save)) {
		if (nf == MAX_FILES) {
			fprintf(stderr, "FAIL: more than %d files\n", MAX_FILES);
			return 2;
		}
		p[nf] = pcap_open_offline(tok, perr);
		if (p[nf] == NULL) {
			fprintf(stderr, "FAIL: %s: %s\n", tok, perr);
			return 1;
		}
		nf++;
	}
	free(names);
	if (nf == 0)
		return 2;
	for (;; n++) {
		unsigned int f = (unsigned int)((n / c.burst) % nf);
		uint64_t tx_ns = 0, idx;
		uint32_t s, len;

		if (ended[f])
			break;	/* this file's turn and it has no more */
		r = pcap_next_ex(p[f], &h, &data);
		if (r != 1) {
			if (r == -1) {
				fprintf(stderr, "FAIL: file %u: %s\n", f,
					pcap_geterr(p[f]));
				bad++;
			}
			ended[f] = true;
			break;
		}
		len = gpugen_build_cpu(g, n, 0, ref, sizeof(ref), &s, &idx);
		if (stamped(g, n, ref, sizeof(ref), data, h->caplen, &tx_ns)) {
			if (tx_ns < last_ns[f]) {
				fprintf(stderr, "FAIL: frame %" PRIu64 ": stamp %"
					PRIu64 " before the previous %" PRIu64 "\n", n,
					tx_ns, last_ns[f]);
				bad++;
			}
			last_ns[f] = tx_ns;
		}
		/* Again: stamped() wrote its own time into ref. */
		len = gpugen_build_cpu(g, n, tx_ns, ref, sizeof(ref), NULL, NULL);
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
	}
	/* Whatever follows in any file is beyond the sequence's order. */
	for (unsigned int f = 0; f < nf; f++) {
		if (!ended[f] && pcap_next_ex(p[f], &h, &data) == 1) {
			fprintf(stderr, "FAIL: file %u holds frames past frame %"
				PRIu64 " out of turn\n", f, n);
			bad++;
		}
		pcap_close(p[f]);
	}
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
	printf("ok: %" PRIu64 " frames in %u file%s equal to the CPU reference\n",
		n, nf, nf > 1 ? "s" : "");
	return 0;
}
