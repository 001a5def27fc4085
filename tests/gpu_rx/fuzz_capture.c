/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer over the capture writer (app/capture.c), the code that turns
 * what the RX lcores hand it into pcap or pcapng files. The input picks
 * the format, the snaplen, one file or a file per queue (%q), the number
 * of queues, and a list of packets (queue, bytes captured, length on the
 * wire, the bytes themselves), with flushes and polls in between, as the
 * lcores and the main lcore call them. Each file must then read back with
 * libpcap, record for record: every packet written is there once, cut to
 * the snaplen, with its wire length, its bytes and its timestamp, each
 * queue's packets in the order it wrote them; and the writer's counters
 * say exactly that.
 *
 * One thread writes every queue here: the threads are test_capture's
 * concern; this one is the formats, the lengths and the buffering.
 */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_eal.h>

#include "capture.h"
#include "test_eal.h"

#define NQ_MAX 4
#define PKTS_MAX 512

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void
remove_dir(void)
{
	rmdir(dir);
}

struct sent {
	uint16_t queue;
	uint32_t caplen, wirelen;	/* as given to the writer */
	uint64_t ts_ns;
	const uint8_t *bytes;
};

static struct sent sent[PKTS_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int rc;

	RTE_SET_USED(argc);
	if (test_eal_init((*argv)[0], "gpurx-fuzz-capture") != 0)
		abort();
	/* pcapng's interface block names a probed port. */
	rc = rte_eal_hotplug_add("vdev", "net_null0", "");
	if (rc != 0) {
		fprintf(stderr, "cannot add net_null0: %s\n", strerror(-rc));
		abort();
	}
	snprintf(dir, sizeof(dir), "/tmp/gpurx-fuzz-capture-XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(remove_dir);
	return 0;
}

static uint32_t
take(const uint8_t **p, size_t *left, unsigned int n)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < n && *left > 0; i++, (*p)++, (*left)--)
		v |= (uint32_t)**p << (8 * i);
	return v;
}

/* The index in sent[] of the record r read from queue q's file (or of any
 * queue, from the one file), -1 when none matches. Queues' packets keep
 * their order, so the next one not yet seen of some queue must match. */
static int
match(const struct pcap_pkthdr *h, const uint8_t *b, unsigned int n,
		const unsigned int *next, unsigned int nq, int per_queue, int q,
		uint32_t snaplen)
{
	for (unsigned int k = 0; k < nq; k++) {
		const struct sent *s;
		uint32_t want;

		if (per_queue && (int)k != q)
			continue;
		/* The next packet of queue k. */
		for (unsigned int i = next[k]; i < n; i++) {
			if (sent[i].queue != k)
				continue;
			s = &sent[i];
			want = RTE_MIN(s->caplen, snaplen);
			if (h->caplen == want && h->len == s->wirelen &&
					(uint64_t)h->ts.tv_sec == s->ts_ns / 1000000000u &&
					(uint64_t)h->ts.tv_usec ==
					s->ts_ns % 1000000000u / 1000u &&
					memcmp(b, s->bytes, want) == 0)
				return (int)i;
			break;
		}
	}
	return -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpurx_qstats qs[NQ_MAX];
	unsigned int next[NQ_MAX] = { 0 }, got = 0, n = 0;
	uint64_t want_bytes[NQ_MAX] = { 0 };
	char pattern[128], path[160], err[256];
	const uint8_t *p = data;
	size_t left = size;
	struct gpurx_capture *c;
	enum gpurx_format fmt;
	unsigned int nq, per_queue;
	uint32_t snaplen;
	uint8_t *seen;
	int rc;

	if (size < 4)
		return 0;
	uint32_t mode = take(&p, &left, 1);
	fmt = (mode & 1) ? GPURX_FMT_PCAP : GPURX_FMT_PCAPNG;
	nq = 1 + ((mode >> 1) & 3);
	per_queue = (mode >> 3) & 1;
	snaplen = take(&p, &left, 2);
	/* 0: the default, the largest the capture takes. */
	snaplen = snaplen == 0 ? GPURX_DEFAULT_SNAPLEN : snaplen;
	snprintf(pattern, sizeof(pattern), "%s/cap%s", dir,
		per_queue ? "-%q" : "");
	memset(qs, 0, sizeof(qs));
	c = gpurx_capture_open(pattern, fmt, snaplen, 0, (uint16_t)nq, qs,
		"fuzz", err, sizeof(err));
	if (c == NULL) {
		fprintf(stderr, "open %s: %s\n", pattern, err);
		abort();
	}
	while (left >= 4 && n < PKTS_MAX) {
		uint32_t ctl = take(&p, &left, 1);
		struct sent *s = &sent[n];

		s->queue = (uint16_t)((ctl & 3) % nq);
		/* Up to 64 KiB claimed, the input's bytes as far as they go:
		 * lengths past what is there are the fuzzer's to find too,
		 * so a missing byte is zero, never read past the input. */
		s->caplen = take(&p, &left, 2);
		s->caplen = RTE_MIN(s->caplen, (uint32_t)left);
		/* Wire length: the captured bytes or more (a cut packet). */
		s->wirelen = s->caplen + ((ctl >> 2) & 1 ? take(&p, &left, 1) * 97u : 0);
		s->caplen = RTE_MIN(s->caplen, (uint32_t)left);
		s->bytes = p;
		s->ts_ns = 1700000000ull * 1000000000u + (uint64_t)n * 1000003u;
		rc = gpurx_capture_write(c, s->queue, s->bytes, s->caplen,
			s->wirelen, s->ts_ns);
		if (rc != 0) {
			fprintf(stderr, "write of packet %u refused\n", n);
			abort();
		}
		want_bytes[s->queue] += RTE_MIN(s->caplen, snaplen);
		p += s->caplen;
		left -= s->caplen;
		n++;
		if (ctl & 0x40)
			gpurx_capture_flush(c);
		if (ctl & 0x80)
			gpurx_capture_poll(c, s->queue);
	}
	if (gpurx_capture_close(c, NULL) != 0)
		abort();

	/* Read back: each file, every record matched once, in order. */
	seen = calloc(n ? n : 1, 1);
	if (seen == NULL)
		abort();
	for (unsigned int q = 0; q < (per_queue ? nq : 1); q++) {
		char ebuf[PCAP_ERRBUF_SIZE];
		struct pcap_pkthdr *h;
		const u_char *b;
		pcap_t *pc;

		if (gpurx_capture_path(pattern, (int)q, path, sizeof(path)) < 0)
			abort();
		pc = pcap_open_offline(path, ebuf);
		if (pc == NULL) {
			fprintf(stderr, "%s: %s\n", path, ebuf);
			abort();
		}
		while ((rc = pcap_next_ex(pc, &h, &b)) == 1) {
			int i = match(h, b, n, next, nq, per_queue, (int)q,
				snaplen);

			if (i < 0 || seen[i]) {
				fprintf(stderr, "%s: record %u (caplen %u len %u) "
					"is no packet written, or one seen twice\n",
					path, got, h->caplen, h->len);
				abort();
			}
			seen[i] = 1;
			got++;
			/* Queue k's next is past i now. */
			for (unsigned int j = (unsigned int)i + 1;; j++) {
				if (j >= n || sent[j].queue == sent[i].queue) {
					next[sent[i].queue] = j;
					break;
				}
			}
		}
		if (rc != -2) {
			fprintf(stderr, "%s: read error after %u records: %s\n",
				path, got, pcap_geterr(pc));
			abort();
		}
		pcap_close(pc);
		unlink(path);
	}
	free(seen);
	if (got != n) {
		fprintf(stderr, "%u packets written, %u in the file(s)\n", n, got);
		abort();
	}
	for (unsigned int q = 0; q < nq; q++) {
		uint64_t pk = 0;

		for (unsigned int i = 0; i < n; i++)
			pk += sent[i].queue == q;
		if (qs[q].captured != pk || qs[q].cap_bytes != want_bytes[q] ||
				qs[q].drop_capture != 0) {
			fprintf(stderr, "queue %u: counters %llu packets %llu "
				"bytes %llu dropped, written %llu packets %llu bytes\n",
				q, (unsigned long long)qs[q].captured,
				(unsigned long long)qs[q].cap_bytes,
				(unsigned long long)qs[q].drop_capture,
				(unsigned long long)pk,
				(unsigned long long)want_bytes[q]);
			abort();
		}
	}
	return 0;
}
