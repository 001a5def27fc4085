/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture writer (app/capture.c) with several threads writing one file
 * at once, as the RX lcores do: the file must read back whole with libpcap,
 * hold every packet (bytes, lengths, timestamps) and each queue's packets
 * in the order it wrote them, and the writer's counters must say exactly
 * what is in the file. Then failures: a file size limit reached mid-run
 * (RLIMIT_FSIZE, as a full file system: short write, then EFBIG), a write
 * that fails while other queues' later chunks are already written, and a
 * write that hangs while another queue keeps receiving: the file stays
 * valid, the capture drops are counted, and nobody waits.
 *
 * Built with GPURX_CAPTURE_PWRITE=test_pwrite, the writer's only
 * pwrite(), so the second and third cases can fail or stall one chosen
 * write; every other call is the real pwrite().
 *
 * Then the same cases with writer threads (gpurx_capture_start_writers()),
 * and what only they have: files byte for byte those written without
 * writers, a writer that stalls while its lcore goes on (drops counted,
 * no wait), and close() with chunks still handed on.
 */

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ethdev.h>

#include "capture.h"
#include "check.h"
#include "test_eal.h"

#define NQ_MAX 4

ssize_t test_pwrite(int fd, const void *buf, size_t n, off_t off);

/* --- the writer's pwrite(), with one failure or stall on demand --------- */

enum fault { FAULT_NONE, FAULT_FAIL_AFTER_LATER, FAULT_STALL_Q0,
	FAULT_FAIL_Q1 };

static struct {
	enum fault kind;
	int armed;		/* FAULT_STALL_Q0: queue 0's next write hangs */
	int calls;		/* FAULT_FAIL_AFTER_LATER: chunk writes so far */
	uint64_t hit_off;	/* offset of the write that was hit */
	uint64_t retry_off;	/* where the writer retries its rest */
	int hit;		/* set once it was hit */
	int later_writes;	/* chunks written past hit_off since */
	const int *stall_until;	/* queue 0's write waits for this flag */
	int stalled;		/* queue 0's write is waiting */
	int stall_released;	/* by the flag, not by the time limit */
	int q1_calls;		/* FAULT_FAIL_Q1: queue 1's writes so far */
} fault;

/* Writer threads for the capture open_capture() opens; 0: none. */
static unsigned int test_writers;

/*
 * The queue whose chunk a write carries, from its first block (a writer
 * thread writes for several queues): a packet block's data starts with
 * its queue (pkt_fill()). -1: a header or statistics block.
 */
static int
chunk_queue(const void *buf, size_t n)
{
	uint32_t w[8];

	if (n < 32)
		return -1;
	memcpy(w, buf, sizeof(w));
	if (w[0] == 6)			/* pcapng EPB: data at 28 */
		return (int)w[7];
	/* pcap: a record's seconds (pkt_ts()), not the file's magic */
	if (w[0] >= 1000000000u && w[0] != 0xa1b23c4du)
		return (int)w[4];
	return -1;
}

static int
wait_until(const int *flag, int secs)
{
	for (int i = 0; i < secs * 1000; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return 0;
		usleep(1000);
	}
	return -1;
}

ssize_t
test_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	uint64_t o = (uint64_t)off;
	int tl_queue = chunk_queue(buf, n);

	if (fault.kind == FAULT_FAIL_AFTER_LATER) {
		/* The fifth chunk written: some before it stay. */
		if (tl_queue >= 0 && __atomic_add_fetch(&fault.calls, 1,
				__ATOMIC_ACQ_REL) == 5) {
			ssize_t half;

			fault.hit_off = o;
			__atomic_store_n(&fault.hit, 1, __ATOMIC_RELEASE);
			/* Other queues write chunks past this one meanwhile. */
			for (int i = 0; i < 10000 && __atomic_load_n(
					&fault.later_writes, __ATOMIC_ACQUIRE) < 3;
					i++)
				usleep(1000);
			/* Half of it lands; the retry of the rest fails. */
			half = pwrite(fd, buf, n / 2, off);
			if (half > 0)
				__atomic_store_n(&fault.retry_off,
					o + (uint64_t)half, __ATOMIC_RELEASE);
			return half;
		}
		if (__atomic_load_n(&fault.hit, __ATOMIC_ACQUIRE) &&
				o == __atomic_load_n(&fault.retry_off,
					__ATOMIC_ACQUIRE)) {
			errno = EIO;
			return -1;
		}
		if (__atomic_load_n(&fault.hit, __ATOMIC_ACQUIRE) &&
				o > fault.hit_off) {
			ssize_t r = pwrite(fd, buf, n, off);

			if (r == (ssize_t)n)
				__atomic_fetch_add(&fault.later_writes, 1,
					__ATOMIC_RELEASE);
			return r;
		}
	}
	/* Queue 1's third chunk fails outright. */
	if (fault.kind == FAULT_FAIL_Q1 && tl_queue == 1 &&
			++fault.q1_calls == 3) {
		fault.hit_off = o;
		fault.hit = 1;
		errno = EIO;
		return -1;
	}
	if (fault.kind == FAULT_STALL_Q0 && tl_queue == 0 &&
			__atomic_exchange_n(&fault.armed, 0, __ATOMIC_ACQ_REL)) {
		__atomic_store_n(&fault.stalled, 1, __ATOMIC_RELEASE);
		fault.stall_released = wait_until(fault.stall_until, 20) == 0;
	}
	return pwrite(fd, buf, n, off);
}

/* --- packets: (queue, seq) in their first bytes, the rest a pattern ---- */

static uint32_t
pkt_len(uint16_t q, uint32_t seq)
{
	RTE_SET_USED(q);
	if (seq % 1999 == 1998)
		return GPURX_DEFAULT_SNAPLEN;	/* the largest */
	if (seq % 499 == 498)
		return 70000;			/* over 64 KiB */
	return 14 + (seq * 97) % 1800;
}

typedef uint32_t len_fn(uint16_t q, uint32_t seq);

/* Some packets longer on the wire than their bytes. */
static uint32_t
pkt_wirelen(len_fn *len, uint16_t q, uint32_t seq)
{
	return len(q, seq) + (seq % 3 == 0 ? 10 : 0);
}

static uint64_t
pkt_ts(uint16_t q, uint32_t seq)
{
	return 1700000000ull * 1000000000ull + (uint64_t)seq * 1000 + q;
}

static void
pkt_fill(uint8_t *p, uint16_t q, uint32_t seq, uint32_t len)
{
	uint32_t v;

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(q * 31 + seq * 7 + i);
	v = q;
	memcpy(p, &v, 4);
	memcpy(p + 4, &seq, 4);
}

struct writer {
	struct gpurx_capture *c;
	uint16_t q;
	uint32_t n;
	len_fn *len;
	uint32_t accepted;
	int done;
	struct gpurx_qstats *qs;	/* with pace: the queue's counters */
	uint32_t pace;		/* see pace(); 0: none */
};

/*
 * With writers, a queue whose writer is behind drops chunks: to compare
 * files exactly, the producer waits while more than `most` of its
 * packets are not counted yet, polling as an lcore does, which settles
 * what the writer finished. Below two chunks in flight (the pool holds
 * four): 2000 where chunks go out full (about 1000 packets each), 100
 * where flushes and rotation make them small. Not once the failure of
 * test_fail_mid() was hit: what follows it in the file is cut anyway,
 * and waiting there could wait for the fault itself.
 */
#define PACE_FULL 2000u
#define PACE_FLUSHED 100u

static void
pace(struct gpurx_capture *c, uint16_t q, struct gpurx_qstats *qs,
		uint32_t handed, uint32_t most)
{
	if (test_writers == 0 || qs == NULL || most == 0)
		return;
	while (!(fault.kind == FAULT_FAIL_AFTER_LATER &&
			__atomic_load_n(&fault.hit, __ATOMIC_ACQUIRE)) &&
			handed - GPURX_STAT_GET(qs, captured) -
			GPURX_STAT_GET(qs, drop_capture) > most) {
		gpurx_capture_poll(c, q);
		usleep(50);
	}
}

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	uint8_t *buf = malloc(GPURX_DEFAULT_SNAPLEN);

	if (buf == NULL)
		return NULL;
	for (uint32_t seq = 0; seq < w->n; seq++) {
		uint32_t len = w->len(w->q, seq);

		pace(w->c, w->q, w->qs, seq, w->pace);
		pkt_fill(buf, w->q, seq, len);
		if (gpurx_capture_write(w->c, w->q, buf, len,
				pkt_wirelen(w->len, w->q, seq),
				pkt_ts(w->q, seq)) == 0)
			w->accepted++;
		if ((seq & 63) == 0)
			gpurx_capture_poll(w->c, w->q);
	}
	gpurx_capture_poll(w->c, w->q);
	free(buf);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* --- reading back ----------------------------------------------------------- */

struct readback {
	uint64_t n[NQ_MAX];		/* packets per queue */
	int64_t last[NQ_MAX];		/* last seq per queue */
	int ok;
};

/*
 * The whole file through libpcap (nanosecond timestamps): every packet one
 * the writers wrote, each queue's in increasing order, without gaps when
 * `contiguous`.
 */
static void
read_back_more(const char *path, uint16_t nq, uint32_t snaplen,
		len_fn *len, int contiguous, struct readback *rb)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p;
	int rc;

	p = pcap_open_offline_with_tstamp_precision(path,
		PCAP_TSTAMP_PRECISION_NANO, err);
	CHECK(p != NULL, "%s: %s", path, err);
	if (p == NULL)
		return;
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		uint32_t q, seq, want, i;
		uint64_t ts;

		CHECK(h->caplen >= 8, "a packet of %u bytes", h->caplen);
		if (h->caplen < 8)
			break;
		memcpy(&q, d, 4);
		memcpy(&seq, d + 4, 4);
		CHECK(q < nq, "queue %u", q);
		if (q >= nq)
			break;
		CHECK((int64_t)seq > rb->last[q], "queue %u: seq %u after %lld",
			q, seq, (long long)rb->last[q]);
		if (contiguous)
			CHECK((int64_t)seq == rb->last[q] + 1,
				"queue %u: seq %u after %lld", q, seq,
				(long long)rb->last[q]);
		rb->last[q] = seq;
		rb->n[q]++;
		want = RTE_MIN(len((uint16_t)q, seq), snaplen);
		CHECK(h->caplen == want &&
			h->len == pkt_wirelen(len, (uint16_t)q, seq),
			"queue %u seq %u: caplen %u len %u, want %u %u", q, seq,
			h->caplen, h->len, want,
			pkt_wirelen(len, (uint16_t)q, seq));
		ts = (uint64_t)h->ts.tv_sec * 1000000000ull +
			(uint64_t)h->ts.tv_usec;
		CHECK(ts == pkt_ts((uint16_t)q, seq),
			"queue %u seq %u: timestamp %llu", q, seq,
			(unsigned long long)ts);
		for (i = 8; i < RTE_MIN(h->caplen, want); i++)
			if (d[i] != (uint8_t)(q * 31 + seq * 7 + i))
				break;
		CHECK(i >= RTE_MIN(h->caplen, want),
			"queue %u seq %u: byte %u differs", q, seq, i);
	}
	CHECK(rc == PCAP_ERROR_BREAK, "%s: %s", path,
		rc == PCAP_ERROR ? pcap_geterr(p) : "stopped early");
	rb->ok = rc == PCAP_ERROR_BREAK;
	pcap_close(p);
}

/* read_back_more() of one file from the start; files of a rotation
 * go on from where the one before ended. */
static void
read_back(const char *path, uint16_t nq, uint32_t snaplen,
		len_fn *len, int contiguous, struct readback *rb)
{
	memset(rb, 0, sizeof(*rb));
	for (int q = 0; q < NQ_MAX; q++)
		rb->last[q] = -1;
	read_back_more(path, nq, snaplen, len, contiguous, rb);
}

/* pcapng: each packet block's queue option is the queue in its bytes. */
static void
check_epb_queues(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;
	uint64_t epbs = 0;

	CHECK(f != NULL, "%s", path);
	if (f == NULL)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)size);
	CHECK(buf != NULL && fread(buf, 1, (size_t)size, f) == (size_t)size,
		"reading %s", path);
	fclose(f);
	for (long pos = 0; buf != NULL && pos + 12 <= size;) {
		uint32_t type, blen, qopt, qdata;

		memcpy(&type, buf + pos, 4);
		memcpy(&blen, buf + pos + 4, 4);
		if (blen < 12 || pos + blen > size)
			break;
		if (type == 6) {
			/* Trailer: flags option, queue option, end, length. */
			memcpy(&qopt, buf + pos + blen - 12, 4);
			memcpy(&qdata, buf + pos + 28, 4);
			CHECK(qopt == qdata, "block at %ld: queue option %u, "
				"packet of queue %u", pos, qopt, qdata);
			epbs++;
		}
		pos += blen;
	}
	CHECK(epbs > 0, "%s: no packet block", path);
	free(buf);
}

static long
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void
tmp_path(char *path, size_t len, const char *what)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/gpurx-test-capture-%s-XXXXXX",
		dir != NULL ? dir : "/tmp", what);
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
}

static void
start_writers(struct gpurx_capture *c)
{
	char err[256] = "";

	CHECK(gpurx_capture_start_writers(c, test_writers, NULL, err,
		sizeof(err)) == 0, "%u writers: %s", test_writers, err);
}

static struct gpurx_capture *
open_capture(const char *path, enum gpurx_format fmt, uint32_t snaplen,
		uint16_t nq, struct gpurx_qstats *qs)
{
	char err[256];
	struct gpurx_capture *c;

	memset(qs, 0, sizeof(*qs) * nq);
	c = gpurx_capture_open(path, fmt, snaplen, 0, nq, qs, "test", err,
		sizeof(err));
	CHECK(c != NULL, "open %s: %s", path, err);
	if (c != NULL)
		start_writers(c);
	return c;
}

/* nq writers of n packets each, the main thread asking for flushes. */
static void
run_writers(struct gpurx_capture *c, uint16_t nq, uint32_t n,
		len_fn *len, struct writer *w, struct gpurx_qstats *qs)
{
	pthread_t th[NQ_MAX];
	int running;

	for (uint16_t q = 0; q < nq; q++) {
		w[q] = (struct writer){ .c = c, .q = q, .n = n, .len = len,
			.qs = qs != NULL ? &qs[q] : NULL,
			.pace = qs != NULL ? PACE_FLUSHED : 0 };
		CHECK(pthread_create(&th[q], NULL, writer_main, &w[q]) == 0,
			"pthread_create");
	}
	do {
		usleep(500);
		gpurx_capture_flush(c);
		running = 0;
		for (uint16_t q = 0; q < nq; q++)
			running += !__atomic_load_n(&w[q].done, __ATOMIC_ACQUIRE);
	} while (running > 0);
	for (uint16_t q = 0; q < nq; q++)
		pthread_join(th[q], NULL);
}

/* What the counters say against what the file holds. */
static void
check_counts(const char *what, uint16_t nq, uint32_t n,
		const struct gpurx_qstats *qs, const struct writer *w,
		const struct readback *rb)
{
	for (uint16_t q = 0; q < nq; q++) {
		CHECK(qs[q].captured == rb->n[q], "%s: queue %u: %llu captured, "
			"%llu in the file", what, q,
			(unsigned long long)qs[q].captured,
			(unsigned long long)rb->n[q]);
		CHECK(qs[q].captured + qs[q].drop_capture == n,
			"%s: queue %u: %llu captured + %llu dropped of %u", what,
			q, (unsigned long long)qs[q].captured,
			(unsigned long long)qs[q].drop_capture, n);
		CHECK(w[q].accepted >= qs[q].captured, "%s: queue %u", what, q);
	}
}

/* The counters a run would have beside the writer's own: the ISB's. */
static void
set_run_counters(struct gpurx_qstats *qs, uint16_t nq, uint32_t n)
{
	for (uint16_t q = 0; q < nq; q++) {
		qs[q].rx_pkts = n + 100 + q;
		qs[q].matched = n + 10 + q;
		qs[q].drop_ring = 10 + q;
	}
}

/*
 * The file ends with one interface statistics block for interface 0
 * whose counters are those of the queues in [q0, q1): received,
 * accepted, lost (ring full and capture drops) and written; ifdrop and
 * the times only where given (ifdrop UINT64_MAX, end_ns 0: absent).
 */
static void
check_isb(const char *path, const struct gpurx_qstats *qs, uint16_t q0,
		uint16_t q1, uint64_t ifdrop, const struct gpurx_capture_end *e)
{
	uint64_t want[9] = { 0 }, got[9] = { 0 };
	int seen[9] = { 0 };
	uint32_t blk[5], blen = 0, trail;
	long size = file_size(path), pos = 0, last = -1;
	FILE *f = fopen(path, "rb");
	uint8_t opt[512];

	CHECK(f != NULL, "open %s", path);
	if (f == NULL)
		return;
	/* Walk the blocks to the last one. */
	while (pos + 12 <= size && fseek(f, pos, SEEK_SET) == 0 &&
			fread(blk, 4, 2, f) == 2 && blk[1] >= 12) {
		last = pos;
		blen = blk[1];
		pos += blk[1];
	}
	CHECK(pos == size && last > 0, "%s: blocks end at %ld of %ld", path,
		pos, size);
	CHECK(fseek(f, last, SEEK_SET) == 0 && fread(blk, 4, 5, f) == 5 &&
		blk[0] == 5 && blen >= 32 && blen - 24 <= sizeof(opt),
		"%s: last block is of type %u, not an ISB", path, blk[0]);
	if (blk[0] != 5 || blen < 32 || blen - 24 > sizeof(opt)) {
		fclose(f);
		return;
	}
	CHECK(blk[2] == 0, "%s: ISB of interface %u", path, blk[2]);
	CHECK(((uint64_t)blk[3] << 32 | blk[4]) == e->end_ns,
		"%s: ISB time", path);
	CHECK(fread(opt, 1, blen - 24, f) == blen - 24 &&
		fread(&trail, 4, 1, f) == 1 && trail == blen,
		"%s: ISB length %u, trailer %u", path, blen, trail);
	for (uint32_t o = 0; o + 4 <= blen - 24;) {
		uint16_t code, len;

		memcpy(&code, opt + o, 2);
		memcpy(&len, opt + o + 2, 2);
		if (code == 0)
			break;
		CHECK(code >= 2 && code <= 8 && len == 8, "%s: ISB option %u "
			"of %u bytes", path, code, len);
		if (code >= 2 && code <= 8 && len == 8) {
			memcpy(&got[code], opt + o + 4, 8);
			seen[code]++;
		}
		o += 4 + RTE_ALIGN_CEIL(len, 4u);
	}
	for (uint16_t q = q0; q < q1; q++) {
		want[4] += qs[q].rx_pkts;
		want[6] += qs[q].matched;
		want[7] += qs[q].drop_ring + qs[q].drop_capture;
		want[8] += qs[q].captured;
	}
	/* Times: high word first, as the block's own. */
	want[2] = e->start_ns >> 32 | e->start_ns << 32;
	want[3] = e->end_ns >> 32 | e->end_ns << 32;
	want[5] = ifdrop;
	for (int k = 2; k <= 8; k++) {
		int present = (k == 2 || k == 3) ? e->end_ns != 0 :
			k == 5 ? ifdrop != UINT64_MAX : 1;

		CHECK(seen[k] == present, "%s: ISB option %d seen %d times",
			path, k, seen[k]);
		CHECK(!present || got[k] == want[k], "%s: ISB option %d: %llu, "
			"want %llu", path, k, (unsigned long long)got[k],
			(unsigned long long)want[k]);
	}
	fclose(f);
}

/* Every packet of every queue, in order, counted; pcapng and pcap. */
static void
test_concurrent(enum gpurx_format fmt, uint32_t snaplen)
{
	const uint16_t nq = 4;
	const uint32_t n = 6000;
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[NQ_MAX];
	struct readback rb;
	/* One file of every queue: the port's drops and the times too. */
	const struct gpurx_capture_end end = { .start_ns = 1700000000123456789ull,
		.end_ns = 1700000005987654321ull, .port_drops = 42 };
	struct gpurx_capture *c;
	char path[256];
	uint64_t bytes = 0;

	tmp_path(path, sizeof(path), "mt");
	c = open_capture(path, fmt, snaplen, nq, qs);
	if (c == NULL)
		return;
	run_writers(c, nq, n, pkt_len, w, qs);
	set_run_counters(qs, nq, n);
	CHECK(gpurx_capture_close(c, &end) == 0, "close");
	read_back(path, nq, snaplen, pkt_len, 1, &rb);
	for (uint16_t q = 0; q < nq; q++) {
		CHECK(rb.n[q] == n, "queue %u: %llu of %u packets in the file",
			q, (unsigned long long)rb.n[q], n);
		CHECK(qs[q].drop_capture == 0, "queue %u: drops", q);
	}
	check_counts("concurrent", nq, n, qs, w, &rb);
	for (uint32_t s = 0; s < n; s++)
		bytes += RTE_MIN(pkt_len(0, s), snaplen);
	for (uint16_t q = 0; q < nq; q++)
		CHECK(qs[q].cap_bytes == bytes, "queue %u: %llu bytes, want %llu",
			q, (unsigned long long)qs[q].cap_bytes,
			(unsigned long long)bytes);
	if (fmt == GPURX_FMT_PCAPNG) {
		check_epb_queues(path);
		check_isb(path, qs, 0, nq, end.port_drops, &end);
	}
	printf("concurrent %s snaplen %u: %u queues x %u packets, %ld bytes\n",
		fmt == GPURX_FMT_PCAP ? "pcap" : "pcapng", snaplen, nq, n,
		file_size(path));
	unlink(path);
}

static uint32_t
small_len(uint16_t q, uint32_t seq)
{
	RTE_SET_USED(q);
	return 14 + (seq * 97) % 1800;
}

/*
 * The file may not grow past a limit (RLIMIT_FSIZE, no SIGXFSZ): the chunk
 * that crosses it is written short and its rest refused (EFBIG), as on a
 * full file system. The capture stops, close() says so and cuts the file
 * back to whole blocks; every queue's packets in it are its first ones.
 */
static void
test_size_limit(enum gpurx_format fmt)
{
	const uint16_t nq = 4;
	const uint32_t n = 5000;	/* 4 x ~4.5 MB */
	const rlim_t limit = 6u << 20;
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[NQ_MAX];
	struct rlimit old, lim;
	struct readback rb;
	struct gpurx_capture *c;
	uint64_t drops = 0;
	char path[256];
	int rc;

	tmp_path(path, sizeof(path), "limit");
	c = open_capture(path, fmt, GPURX_DEFAULT_SNAPLEN, nq, qs);
	if (c == NULL)
		return;
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
	lim = old;
	lim.rlim_cur = limit;
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %s",
		strerror(errno));
	run_writers(c, nq, n, small_len, w, qs);
	rc = gpurx_capture_close(c, NULL);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
	CHECK(rc == -1, "close said nothing of the failed write");
	CHECK(file_size(path) > 0 && file_size(path) <= (long)limit,
		"%ld bytes, limit %lu", file_size(path), (unsigned long)limit);
	read_back(path, nq, GPURX_DEFAULT_SNAPLEN, small_len, 1, &rb);
	check_counts("size limit", nq, n, qs, w, &rb);
	for (uint16_t q = 0; q < nq; q++)
		drops += qs[q].drop_capture;
	CHECK(drops > 0, "no capture drop counted");
	printf("size limit %s: %ld bytes kept, %llu packets dropped\n",
		fmt == GPURX_FMT_PCAP ? "pcap" : "pcapng", file_size(path),
		(unsigned long long)drops);
	unlink(path);
}

/*
 * One chunk's write fails (half written, then EIO) after other queues
 * wrote chunks past it: those are cut off too, and counted as drops, so
 * the counters still say exactly what the file holds.
 */
static void
test_fail_mid(void)
{
	const uint16_t nq = 4;
	const uint32_t n = 6000;
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[NQ_MAX];
	struct readback rb;
	struct gpurx_capture *c;
	uint64_t drops = 0;
	char path[256];

	tmp_path(path, sizeof(path), "mid");
	c = open_capture(path, GPURX_FMT_PCAPNG, GPURX_DEFAULT_SNAPLEN, nq, qs);
	if (c == NULL)
		return;
	memset(&fault, 0, sizeof(fault));
	fault.kind = FAULT_FAIL_AFTER_LATER;
	run_writers(c, nq, n, pkt_len, w, qs);
	CHECK(gpurx_capture_close(c, NULL) == -1, "close said nothing of the failure");
	CHECK(fault.hit, "no write was failed");
	CHECK(fault.later_writes >= 3, "only %d chunks written past the failed "
		"one: the case did not happen", fault.later_writes);
	CHECK(file_size(path) == (long)fault.hit_off,
		"%ld bytes, the failed chunk began at %llu", file_size(path),
		(unsigned long long)fault.hit_off);
	read_back(path, nq, GPURX_DEFAULT_SNAPLEN, pkt_len, 1, &rb);
	check_counts("failed mid-file", nq, n, qs, w, &rb);
	for (uint16_t q = 0; q < nq; q++)
		drops += qs[q].drop_capture;
	printf("failed write at %llu with %d chunks written past it: %llu "
		"packets dropped\n", (unsigned long long)fault.hit_off,
		fault.later_writes, (unsigned long long)drops);
	memset(&fault, 0, sizeof(fault));
	unlink(path);
}

/* Queue 0: small packets; queue 1: the largest. */
static uint32_t
stall_len(uint16_t q, uint32_t seq)
{
	return q == 0 ? small_len(q, seq) : GPURX_DEFAULT_SNAPLEN;
}

/* Every queue's packets the largest: 3 a chunk. */
static uint32_t
giant_len(uint16_t q, uint32_t seq)
{
	RTE_SET_USED(q);
	return stall_len(1, seq);
}

/*
 * Queue 0's write hangs; queue 1 goes on: it must not wait for queue 0,
 * its chunks past the hung one cannot be counted yet, and once it has too
 * many of them it drops (counted) rather than wait. The hung write ends
 * when queue 1 has written all its packets: then everything settles and
 * the file is whole.
 */
static void
test_stalled_queue(void)
{
	const uint32_t n1 = 3 * 80;	/* 80 chunks of 3 giant packets */
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[2];
	struct readback rb;
	struct gpurx_capture *c;
	pthread_t th[2];
	char path[256];

	tmp_path(path, sizeof(path), "stall");
	c = open_capture(path, GPURX_FMT_PCAPNG, GPURX_DEFAULT_SNAPLEN, 2, qs);
	if (c == NULL)
		return;
	memset(&fault, 0, sizeof(fault));
	fault.kind = FAULT_STALL_Q0;
	fault.armed = 1;
	fault.stall_until = &w[1].done;
	w[0] = (struct writer){ .c = c, .q = 0, .n = 1, .len = stall_len };
	w[1] = (struct writer){ .c = c, .q = 1, .n = n1, .len = stall_len };
	/* Queue 0 writes one packet and flushes: its write hangs. */
	gpurx_capture_flush(c);
	CHECK(pthread_create(&th[0], NULL, writer_main, &w[0]) == 0, "thread");
	CHECK(wait_until(&fault.stalled, 10) == 0, "queue 0 never wrote");
	CHECK(pthread_create(&th[1], NULL, writer_main, &w[1]) == 0, "thread");
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	/* After close: a writer thread ends the hung write. */
	CHECK(gpurx_capture_close(c, NULL) == 0, "close");
	CHECK(fault.stall_released, "queue 1 waited for queue 0's write");
	read_back(path, 2, GPURX_DEFAULT_SNAPLEN, stall_len, 0, &rb);
	CHECK(qs[1].drop_capture > 0, "queue 1 dropped nothing");
	CHECK(qs[0].captured == 1 && rb.n[0] == 1, "queue 0's packet");
	check_counts("stalled queue", 1, 1, qs, w, &rb);
	CHECK(qs[1].captured == rb.n[1] &&
		qs[1].captured + qs[1].drop_capture == n1,
		"queue 1: %llu captured, %llu dropped, %llu in the file",
		(unsigned long long)qs[1].captured,
		(unsigned long long)qs[1].drop_capture,
		(unsigned long long)rb.n[1]);
	printf("stalled queue 0: queue 1 went on, %llu captured, %llu dropped\n",
		(unsigned long long)qs[1].captured,
		(unsigned long long)qs[1].drop_capture);
	memset(&fault, 0, sizeof(fault));
	unlink(path);
}

/* The file of queue q of a %q pattern. */
static void
queue_file(char *out, size_t len, const char *pattern, uint16_t q)
{
	CHECK(gpurx_capture_path(pattern, q, out, len) == 1, "pattern %s",
		pattern);
}

/*
 * A file per queue ("%q"): each file read back by libpcap on its own
 * holds its queue's packets only, in order, and as many as the queue's
 * counter says; nothing is written to the pattern's name. With fail,
 * queue 1's third chunk cannot be written: its file is cut back to its
 * first two chunks and the rest of queue 1 counted as drops; the other
 * queues' files are whole, nothing of theirs dropped.
 */
static void
test_per_queue(enum gpurx_format fmt, int fail)
{
	const uint16_t nq = 4;
	const uint32_t n = 6000;
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[NQ_MAX];
	struct readback rb;
	/* --ts none: no times, the block's time 0. */
	const struct gpurx_capture_end end = { .port_drops = 42 };
	struct gpurx_capture *c;
	char base[256], pattern[300], path[320];

	tmp_path(base, sizeof(base), fail ? "pqfail" : "pq");
	snprintf(pattern, sizeof(pattern), "%s-q%%q.x", base);
	c = open_capture(pattern, fmt, GPURX_DEFAULT_SNAPLEN, nq, qs);
	if (c == NULL)
		return;
	CHECK(access(pattern, F_OK) != 0, "%s created", pattern);
	memset(&fault, 0, sizeof(fault));
	fault.kind = fail ? FAULT_FAIL_Q1 : FAULT_NONE;
	run_writers(c, nq, n, pkt_len, w, qs);
	set_run_counters(qs, nq, n);
	CHECK(gpurx_capture_close(c, &end) == (fail ? -1 : 0), "close");
	CHECK(fault.hit == fail, "the write of queue 1 %s failed",
		fail ? "was not" : "was");
	for (uint16_t q = 0; q < nq; q++) {
		int cut = fail && q == 1;

		queue_file(path, sizeof(path), pattern, q);
		read_back(path, nq, GPURX_DEFAULT_SNAPLEN, pkt_len, 1, &rb);
		for (uint16_t o = 0; o < nq; o++)
			CHECK(o == q || rb.n[o] == 0, "%s: %llu packets of "
				"queue %u", path, (unsigned long long)rb.n[o], o);
		CHECK(qs[q].captured == rb.n[q] &&
			qs[q].captured + qs[q].drop_capture == n &&
			(cut ? qs[q].drop_capture > 0 && rb.n[q] > 0 &&
				file_size(path) == (long)fault.hit_off :
				rb.n[q] == n),
			"queue %u: %llu captured + %llu dropped of %u, %llu in "
			"%s (%ld bytes)", q, (unsigned long long)qs[q].captured,
			(unsigned long long)qs[q].drop_capture, n,
			(unsigned long long)rb.n[q], path, file_size(path));
		if (fmt == GPURX_FMT_PCAPNG)
			check_epb_queues(path);
		/* A file per queue: its own counters, not the port's drops;
		 * the file cut back after its failed write has no ISB. */
		if (fmt == GPURX_FMT_PCAPNG && !cut)
			check_isb(path, qs, q, q + 1, UINT64_MAX, &end);
		unlink(path);
	}
	printf("per-queue files %s: %u queues x %u packets%s\n",
		fmt == GPURX_FMT_PCAP ? "pcap" : "pcapng", nq, n, fail ?
		", queue 1's write failed: its file cut back, the others whole" :
		"");
	memset(&fault, 0, sizeof(fault));
	unlink(base);
}

/* --- writer threads only ---------------------------------------------------- */

static uint8_t *
slurp(const char *path, long *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;

	*size = file_size(path);
	if (f != NULL && *size > 0 && (b = malloc((size_t)*size)) != NULL &&
			fread(b, 1, (size_t)*size, f) != (size_t)*size) {
		free(b);
		b = NULL;
	}
	if (f != NULL)
		fclose(f);
	CHECK(b != NULL, "reading %s", path);
	return b;
}

/*
 * One thread feeds nq queues in turn, chunks going out only when full:
 * the ranges are reserved in the same order whoever writes them, so the
 * files of 1, 2 and 4 writers must be those of none, byte for byte
 * (statistics blocks included), one file or a file per queue.
 */
static void
test_identical(enum gpurx_format fmt, int per_queue)
{
	static const unsigned int writers[] = { 0, 1, 2, 4 };
	const struct gpurx_capture_end end = { .start_ns = 11, .end_ns = 22,
		.port_drops = 42 };
	const uint16_t nq = 4;
	const uint32_t n = 3000;
	struct gpurx_qstats qs[NQ_MAX];
	uint8_t *want[NQ_MAX] = { NULL };
	long want_size[NQ_MAX] = { 0 };
	static uint8_t buf[GPURX_DEFAULT_SNAPLEN];
	char base[256], pattern[300], path[320];
	unsigned int saved = test_writers;
	uint16_t nfiles = per_queue ? nq : 1;

	tmp_path(base, sizeof(base), "same");
	snprintf(pattern, sizeof(pattern), "%s%s", base, per_queue ? "-q%q" :
		"-all");
	for (unsigned int k = 0; k < RTE_DIM(writers); k++) {
		struct gpurx_capture *c;

		test_writers = writers[k];
		c = open_capture(pattern, fmt, GPURX_DEFAULT_SNAPLEN, nq, qs);
		if (c == NULL)
			break;
		for (uint32_t seq = 0; seq < n; seq++)
			for (uint16_t q = 0; q < nq; q++) {
				uint32_t len = pkt_len(q, seq);

				pace(c, q, &qs[q], seq, PACE_FULL);
				pkt_fill(buf, q, seq, len);
				gpurx_capture_write(c, q, buf, len,
					pkt_wirelen(pkt_len, q, seq),
					pkt_ts(q, seq));
			}
		set_run_counters(qs, nq, n);
		CHECK(gpurx_capture_close(c, &end) == 0, "close");
		for (uint16_t q = 0; q < nq; q++)
			CHECK(qs[q].captured == n && qs[q].drop_capture == 0,
				"%u writers: queue %u: %llu captured, %llu "
				"dropped", writers[k], q,
				(unsigned long long)qs[q].captured,
				(unsigned long long)qs[q].drop_capture);
		for (uint16_t i = 0; i < nfiles; i++) {
			long size;
			uint8_t *got;

			gpurx_capture_path(pattern, i, path, sizeof(path));
			got = slurp(path, &size);
			if (k == 0) {
				want[i] = got;
				want_size[i] = size;
			} else {
				CHECK(got != NULL && want[i] != NULL &&
					size == want_size[i] &&
					memcmp(got, want[i], (size_t)size) == 0,
					"%u writers: %s differs from the file "
					"written without (%ld, %ld bytes)",
					writers[k], path, size, want_size[i]);
				free(got);
			}
			unlink(path);
		}
	}
	for (uint16_t i = 0; i < nfiles; i++)
		free(want[i]);
	unlink(base);
	test_writers = saved;
	printf("writers 1, 2, 4: %s%s byte for byte as without\n",
		fmt == GPURX_FMT_PCAP ? "pcap" : "pcapng",
		per_queue ? ", a file per queue," : ", one file,");
}

/* A pcapng capture of one queue whose first chunk write hangs until
 * *until is set. */
static struct gpurx_capture *
open_stalled(char *path, size_t len, const char *what,
		struct gpurx_qstats *qs, const int *until)
{
	struct gpurx_capture *c;

	tmp_path(path, len, what);
	c = open_capture(path, GPURX_FMT_PCAPNG, GPURX_DEFAULT_SNAPLEN, 1, qs);
	memset(&fault, 0, sizeof(fault));
	fault.kind = FAULT_STALL_Q0;
	fault.armed = 1;
	fault.stall_until = until;
	return c;
}

/*
 * The writer of queue 0 hangs on its first chunk while its lcore goes on:
 * the lcore must not wait (it ends while the write still hangs), it drops
 * the chunks no buffer is left for, counted; once the write ends,
 * everything settles: the file holds what the counters say.
 */
static void
test_stalled_writer(void)
{
	const uint32_t n = 3 * 40;	/* 40 chunks of 3 giant packets */
	struct gpurx_qstats qs[1];
	struct writer w[1] = { { .done = 0 } };
	struct readback rb;
	struct gpurx_capture *c;
	pthread_t th;
	char path[256];

	c = open_stalled(path, sizeof(path), "wstall", qs, &w[0].done);
	if (c == NULL)
		return;
	w[0] = (struct writer){ .c = c, .q = 0, .n = n, .len = giant_len };
	CHECK(pthread_create(&th, NULL, writer_main, &w[0]) == 0, "thread");
	pthread_join(th, NULL);
	CHECK(gpurx_capture_close(c, NULL) == 0, "close");
	CHECK(fault.stalled && fault.stall_released,
		"the lcore waited for its stalled writer");
	read_back(path, 1, GPURX_DEFAULT_SNAPLEN, giant_len, 0, &rb);
	CHECK(qs[0].drop_capture > 0, "nothing dropped");
	CHECK(qs[0].captured > 0 && qs[0].captured == rb.n[0] &&
		qs[0].captured + qs[0].drop_capture == n,
		"stalled writer: %llu captured, %llu dropped, %llu in the file",
		(unsigned long long)qs[0].captured,
		(unsigned long long)qs[0].drop_capture,
		(unsigned long long)rb.n[0]);
	printf("stalled writer: its lcore went on, %llu captured, %llu "
		"dropped\n", (unsigned long long)qs[0].captured,
		(unsigned long long)qs[0].drop_capture);
	memset(&fault, 0, sizeof(fault));
	unlink(path);
}

static int release_flag;

static void *
release_later(void *arg)
{
	RTE_SET_USED(arg);
	usleep(300 * 1000);
	__atomic_store_n(&release_flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * close() while the writer still has chunks: its first hangs for 300 ms,
 * the second waits behind it, the third is in the lcore's buffer. close()
 * waits for both, writes the third: every packet in the file, counted.
 */
static void
test_close_in_flight(void)
{
	const uint32_t n = 7;		/* chunks of 3, 3 and 1 */
	static uint8_t buf[GPURX_DEFAULT_SNAPLEN];
	struct gpurx_qstats qs[1];
	struct readback rb;
	struct gpurx_capture *c;
	pthread_t th;
	char path[256];

	release_flag = 0;
	c = open_stalled(path, sizeof(path), "inflight", qs, &release_flag);
	if (c == NULL)
		return;
	CHECK(pthread_create(&th, NULL, release_later, NULL) == 0, "thread");
	for (uint32_t seq = 0; seq < n; seq++) {
		pkt_fill(buf, 0, seq, GPURX_DEFAULT_SNAPLEN);
		gpurx_capture_write(c, 0, buf, GPURX_DEFAULT_SNAPLEN,
			pkt_wirelen(giant_len, 0, seq), pkt_ts(0, seq));
	}
	CHECK(!__atomic_load_n(&release_flag, __ATOMIC_ACQUIRE),
		"the writes took 300 ms: the case did not happen");
	CHECK(gpurx_capture_close(c, NULL) == 0, "close");
	pthread_join(th, NULL);
	CHECK(fault.stalled && fault.stall_released, "no write hung");
	read_back(path, 1, GPURX_DEFAULT_SNAPLEN, giant_len, 1, &rb);
	CHECK(rb.n[0] == n && qs[0].captured == n && qs[0].drop_capture == 0,
		"close with chunks in flight: %llu in the file, %llu captured, "
		"%llu dropped", (unsigned long long)rb.n[0],
		(unsigned long long)qs[0].captured,
		(unsigned long long)qs[0].drop_capture);
	printf("close with 2 chunks in flight: %u packets written\n", n);
	memset(&fault, 0, sizeof(fault));
	unlink(path);
}

/* Bad parameters are refused with a reason, nothing created. */
static void
test_refusals(void)
{
	struct gpurx_qstats qs[1];
	char err[256] = "", path[256];

	CHECK(gpurx_capture_open("/nonexistent-dir/x.pcapng",
		GPURX_FMT_PCAPNG, 65535, 0, 1, qs, NULL, err,
		sizeof(err)) == NULL && strstr(err, "cannot create") != NULL,
		"unwritable path: '%s'", err);
	CHECK(gpurx_capture_open("/tmp/never", GPURX_FMT_PCAP, 65535, 0, 0, qs,
		NULL, err, sizeof(err)) == NULL && err[0] != '\0',
		"no queues accepted");
	CHECK(access("/tmp/never", F_OK) != 0, "file created for bad parameters");
	/* A FIFO: refused at once, not opened (that would wait for a
	 * reader). */
	tmp_path(path, sizeof(path), "fifo");
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
	err[0] = '\0';
	CHECK(gpurx_capture_open(path, GPURX_FMT_PCAP, 65535, 0, 1, qs, NULL,
		err, sizeof(err)) == NULL && strstr(err, "not a file") != NULL,
		"FIFO: '%s'", err);
	unlink(path);
	/* Patterns: only %q and %% are expanded. */
	CHECK(gpurx_capture_path("a%%b-%q-%q", 12, path, sizeof(path)) == 1 &&
		strcmp(path, "a%b-12-12") == 0, "expanded to '%s'", path);
	CHECK(gpurx_capture_path("a%%b", 3, path, sizeof(path)) == 0 &&
		strcmp(path, "a%b") == 0, "expanded to '%s'", path);
	err[0] = '\0';
	CHECK(gpurx_capture_open("/tmp/never-%d", GPURX_FMT_PCAP, 65535, 0, 1,
		qs, NULL, err, sizeof(err)) == NULL &&
		strstr(err, "bad file name pattern '/tmp/never-%d'") != NULL,
		"%%d: '%s'", err);
	CHECK(gpurx_capture_path("x%", 0, NULL, 0) == -EINVAL, "trailing %%");
	/* Queue 1's file cannot be created (a directory has its name): the
	 * error names it, and queue 0's file, created first, is removed. */
	{
		struct gpurx_qstats q2[2];
		char base[256], pattern[300], f0[320], f1[320];

		tmp_path(base, sizeof(base), "pqbad");
		snprintf(pattern, sizeof(pattern), "%s-%%q", base);
		queue_file(f0, sizeof(f0), pattern, 0);
		queue_file(f1, sizeof(f1), pattern, 1);
		CHECK(mkdir(f1, 0700) == 0, "mkdir %s", f1);
		err[0] = '\0';
		CHECK(gpurx_capture_open(pattern, GPURX_FMT_PCAPNG, 65535, 0, 2,
			q2, NULL, err, sizeof(err)) == NULL &&
			strstr(err, f1) != NULL && strstr(err, "not a file"),
			"queue 1's file a directory: '%s'", err);
		CHECK(access(f0, F_OK) != 0, "%s left behind", f0);
		rmdir(f1);
		unlink(base);
	}
}

/*
 * pcapng: the interface block carries the capture's snaplen, not 0.
 * "--write -" is standard output as it was when first taken (here a
 * file put there), never a file named "-": written as a stream, it reads
 * back whole, with its statistics block.
 */
static void
test_idb_snaplen_and_stdout(void)
{
	const struct gpurx_capture_end end = { .start_ns = 5, .end_ns = 9,
		.port_drops = 3 };
	struct gpurx_qstats qs[1];
	struct writer w[1];
	struct readback rb;
	struct gpurx_capture *c;
	char path[256], err[256] = "";
	int fd, saved;
	uint32_t shb_len = 0, idb_type = 0, snap = 0;
	FILE *f;

	tmp_path(path, sizeof(path), "idb");
	c = gpurx_capture_open(path, GPURX_FMT_PCAPNG, 100, 0, 1, qs, NULL,
		err, sizeof(err));
	CHECK(c != NULL, "open: '%s'", err);
	if (c == NULL)
		return;
	CHECK(gpurx_capture_close(c, NULL) == 0, "close");
	f = fopen(path, "rb");
	CHECK(f != NULL && fseek(f, 4, SEEK_SET) == 0 &&
		fread(&shb_len, 4, 1, f) == 1 &&
		fseek(f, shb_len, SEEK_SET) == 0 &&
		fread(&idb_type, 4, 1, f) == 1 &&
		fseek(f, shb_len + 12, SEEK_SET) == 0 &&
		fread(&snap, 4, 1, f) == 1, "reading %s", path);
	if (f != NULL)
		fclose(f);
	CHECK(idb_type == 1 && snap == 100, "IDB type %u snaplen %u", idb_type,
		snap);
	unlink(path);

	tmp_path(path, sizeof(path), "stdout");
	fflush(stdout);
	fd = open(path, O_WRONLY | O_TRUNC);
	saved = dup(STDOUT_FILENO);
	CHECK(fd >= 0 && saved >= 0 && dup2(fd, STDOUT_FILENO) >= 0,
		"stdout to %s", path);
	if (fd >= 0)
		close(fd);
	c = open_capture("-", GPURX_FMT_PCAPNG, 100, 1, qs);
	/* Taken: stdout is stderr now; the test's own output goes back. */
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	if (c == NULL)
		return;
	run_writers(c, 1, 500, pkt_len, w, qs);
	set_run_counters(qs, 1, 500);
	CHECK(gpurx_capture_close(c, &end) == 0, "close");
	read_back(path, 1, 100, pkt_len, 1, &rb);
	CHECK(rb.n[0] == 500 && qs[0].captured == 500, "stdout: %llu packets "
		"read back, %llu captured", (unsigned long long)rb.n[0],
		(unsigned long long)qs[0].captured);
	check_isb(path, qs, 0, 1, end.port_drops, &end);
	CHECK(access("-", F_OK) != 0, "a file named - created");
	unlink(path);
}

/*
 * Devices and header writes: /dev/null takes either format (no seeking,
 * no read-back); a header that cannot be written names the write's
 * reason and leaves no file behind, per queue too.
 */
static void
test_header_errors(void)
{
	static const enum gpurx_format fmts[] = {
		GPURX_FMT_PCAPNG, GPURX_FMT_PCAP
	};
	struct gpurx_qstats qs[2];
	struct rlimit old, lim;
	struct stat st;
	char err[256], base[256], pattern[300], f0[320], f1[320];
	struct gpurx_capture *c;

	for (unsigned int k = 0; k < RTE_DIM(fmts); k++) {
		const char *name = fmts[k] == GPURX_FMT_PCAP ? "pcap" : "pcapng";

		err[0] = '\0';
		c = gpurx_capture_open("/dev/null", fmts[k], 65535, 0, 1, qs,
			"test", err, sizeof(err));
		CHECK(c != NULL, "%s to /dev/null: '%s'", name, err);
		if (c != NULL)
			CHECK(gpurx_capture_close(c, NULL) == 0, "%s: /dev/null close",
				name);
		err[0] = '\0';
		CHECK(gpurx_capture_open("/dev/full", fmts[k], 65535, 0, 1, qs,
			"test", err, sizeof(err)) == NULL &&
			strstr(err, strerror(ENOSPC)) != NULL,
			"%s to /dev/full: '%s'", name, err);
		/* As root, removing it would let the next open create a
		 * regular file in its place (the old cleanup did). */
		CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode),
			"/dev/full removed or replaced");

		/* No room for a header (EFBIG past RLIMIT_FSIZE, as on a
		 * full file system), a file per queue. */
		tmp_path(base, sizeof(base), "hdrfail");
		snprintf(pattern, sizeof(pattern), "%s-%%q", base);
		queue_file(f0, sizeof(f0), pattern, 0);
		queue_file(f1, sizeof(f1), pattern, 1);
		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
		lim = old;
		lim.rlim_cur = 0;
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
		err[0] = '\0';
		c = gpurx_capture_open(pattern, fmts[k], 65535, 0, 2, qs, NULL,
			err, sizeof(err));
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
		CHECK(c == NULL && strstr(err, strerror(EFBIG)) != NULL &&
			strstr(err, f0) != NULL, "%s, no room: '%s'", name, err);
		CHECK(access(f0, F_OK) != 0 && access(f1, F_OK) != 0,
			"%s: a file left behind", name);
		if (c != NULL)
			gpurx_capture_close(c, NULL);
		unlink(f0);
		unlink(f1);
	}
}

/* --- rotation ------------------------------------------------------------ */

/* The first IDB's if_filter (its libpcap string), "" when it has none. */
static void
idb_filter(const char *path, char *out, size_t len)
{
	uint8_t buf[4096];
	uint32_t shb, blen, o;
	FILE *f = fopen(path, "rb");
	size_t n = f != NULL ? fread(buf, 1, sizeof(buf), f) : 0;

	out[0] = '\0';
	if (f != NULL)
		fclose(f);
	if (n < 8)
		return;
	memcpy(&shb, buf + 4, 4);
	if (shb + 16 > n)
		return;
	memcpy(&blen, buf + shb + 4, 4);
	for (o = shb + 16; o + 4 <= shb + blen - 4 && o + 4 <= n;) {
		uint16_t code, olen;

		memcpy(&code, buf + o, 2);
		memcpy(&olen, buf + o + 2, 2);
		if (code == 0 || o + 4 + olen > n)
			break;
		if (code == 11 && olen >= 1 && buf[o + 4] == 0) {
			snprintf(out, len, "%.*s", olen - 1,
				(const char *)buf + o + 5);
			return;
		}
		o += 4 + RTE_ALIGN_CEIL(olen, 4u);
	}
}

/* The files of a rotation of name (one file's name, no %q), in order. */
static size_t
rotated_files(const char *name, const char *ext, glob_t *g)
{
	char pattern[512];

	snprintf(pattern, sizeof(pattern), "%.*s_[0-9][0-9][0-9][0-9][0-9]_"
		"[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]"
		"[0-9]%s", (int)(strlen(name) - strlen(ext)), name, ext);
	memset(g, 0, sizeof(*g));
	if (glob(pattern, 0, NULL, g) != 0)
		return 0;
	return g->gl_pathc;
}

static uint32_t
rot_len(uint16_t q, uint32_t seq)
{
	RTE_SET_USED(q);
	if (seq % 997 == 996)
		return 9000;
	return 60 + (seq * 13) % 1400;
}

/*
 * Rotation by size: every file a whole capture (read back, its ISB, the
 * filter in if_filter) of at most the size, the files in order holding
 * every packet of every queue, in order; with a ring, only the last N
 * files, numbered on to the end. A shared file and a file per queue.
 */
static void
test_rotate_size(enum gpurx_format fmt, int per_queue, uint32_t ring)
{
	const char *ext = fmt == GPURX_FMT_PCAP ? ".pcap" : ".pcapng";
	const uint16_t nq = 2;
	const uint32_t n = 3000;
	const uint64_t limit = 200 * 1024;
	const struct gpurx_capture_end end = { .port_drops = UINT64_MAX };
	struct gpurx_capture_rotate rot = { .size = limit, .files = ring };
	struct gpurx_qstats qs[NQ_MAX];
	struct writer w[NQ_MAX];
	struct readback rb;
	struct gpurx_capture *c;
	char base[256], pattern[320], name[320], filt[64], err[256] = "";
	uint64_t total = 0;
	size_t nfiles[NQ_MAX] = { 0 };

	tmp_path(base, sizeof(base), "rot");
	unlink(base);
	snprintf(pattern, sizeof(pattern), "%s%s%s", base,
		per_queue ? "-q%q" : "", ext);
	memset(qs, 0, sizeof(qs));
	c = gpurx_capture_open_rotate(pattern, fmt, GPURX_DEFAULT_SNAPLEN, 0,
		nq, qs, "udp or tcp", &rot, err, sizeof(err));
	CHECK(c != NULL, "rotate open %s: %s", pattern, err);
	if (c == NULL)
		return;
	start_writers(c);
	CHECK(access(pattern, F_OK) != 0, "%s itself created", pattern);
	run_writers(c, nq, n, rot_len, w, qs);
	CHECK(gpurx_capture_close(c, &end) == 0, "close");
	memset(&rb, 0, sizeof(rb));
	for (int q = 0; q < NQ_MAX; q++)
		rb.last[q] = -1;
	for (uint16_t q = 0; q < (per_queue ? nq : 1); q++) {
		glob_t g;

		if (per_queue)
			snprintf(name, sizeof(name), "%s-q%u%s", base, q, ext);
		else
			snprintf(name, sizeof(name), "%s%s", base, ext);
		nfiles[q] = rotated_files(name, ext, &g);
		for (size_t i = 0; i < nfiles[q]; i++) {
			const char *f = g.gl_pathv[i];

			CHECK(file_size(f) <= (long)limit, "%s: %ld bytes, "
				"over %llu", f, file_size(f),
				(unsigned long long)limit);
			/* A ring keeps the last files: those read back go on
			 * from the first of them. */
			if (ring != 0 && i == 0)
				for (int k = 0; k < NQ_MAX; k++)
					rb.last[k] = -1;
			read_back_more(f, nq, GPURX_DEFAULT_SNAPLEN, rot_len,
				ring == 0, &rb);
			if (fmt == GPURX_FMT_PCAPNG) {
				idb_filter(f, filt, sizeof(filt));
				CHECK(strcmp(filt, "udp or tcp") == 0,
					"%s: if_filter '%s'", f, filt);
				check_epb_queues(f);
			}
			unlink(f);
		}
		if (ring != 0 && nfiles[q] > 0) {
			const char *last = g.gl_pathv[nfiles[q] - 1];
			const char *num = last + strlen(name) - strlen(ext) + 1;

			CHECK(nfiles[q] == ring, "%s: %zu files, ring of %u",
				name, nfiles[q], ring);
			CHECK(atoi(num) > (int)ring, "%s: the last is number %d",
				name, atoi(num));
		}
		globfree(&g);
	}
	for (uint16_t q = 0; q < nq; q++) {
		CHECK(qs[q].drop_capture == 0 && qs[q].captured == n,
			"rotate: queue %u: %llu captured, %llu dropped", q,
			(unsigned long long)qs[q].captured,
			(unsigned long long)qs[q].drop_capture);
		if (ring == 0)
			CHECK(rb.n[q] == n, "rotate: queue %u: %llu of %u in "
				"the files", q, (unsigned long long)rb.n[q], n);
		/* The ring's last files may hold no packet of a queue that
		 * finished early. */
		CHECK(rb.last[q] == n - 1 || (ring != 0 && rb.last[q] == -1),
			"rotate: queue %u ends at %lld", q,
			(long long)rb.last[q]);
		total += rb.n[q];
	}
	CHECK(total > 0, "rotate: no packet read back");
	for (uint16_t q = 0; q < (per_queue ? nq : 1); q++)
		CHECK(nfiles[q] > 2, "rotate: %zu files", nfiles[q]);
	printf("rotate %s by size%s%s: %zu file(s), %llu packets read back\n",
		fmt == GPURX_FMT_PCAP ? "pcap" : "pcapng",
		per_queue ? ", a file per queue" : "", ring ? ", ring" : "",
		nfiles[0], (unsigned long long)total);
}

/* Rotation by time: a queue writing slowly for a few seconds, polling
 * as the RX lcores do, goes through several files and loses nothing. */
static void
test_rotate_time(void)
{
	struct gpurx_capture_rotate rot = { .seconds = 1 };
	const struct gpurx_capture_end end = { .port_drops = UINT64_MAX };
	struct gpurx_qstats qs[1];
	struct readback rb;
	struct gpurx_capture *c;
	char base[256], name[320], err[256] = "";
	static uint8_t buf[9216];
	uint32_t seq = 0;
	glob_t g;
	size_t nf;
	struct timespec t0, t;

	tmp_path(base, sizeof(base), "rot-time");
	unlink(base);
	snprintf(name, sizeof(name), "%s.pcapng", base);
	memset(qs, 0, sizeof(qs));
	c = gpurx_capture_open_rotate(name, GPURX_FMT_PCAPNG, 65535, 0, 1, qs,
		NULL, &rot, err, sizeof(err));
	CHECK(c != NULL, "rotate open %s: %s", name, err);
	if (c == NULL)
		return;
	start_writers(c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t len = rot_len(0, seq);

		pkt_fill(buf, 0, seq, len);
		gpurx_capture_write(c, 0, buf, len,
			pkt_wirelen(rot_len, 0, seq), pkt_ts(0, seq));
		seq++;
		gpurx_capture_poll(c, 0);
		usleep(2000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		(t.tv_nsec - t0.tv_nsec) / 1000000 < 2300);
	CHECK(gpurx_capture_close(c, &end) == 0, "close");
	memset(&rb, 0, sizeof(rb));
	rb.last[0] = -1;
	nf = rotated_files(name, ".pcapng", &g);
	for (size_t i = 0; i < nf; i++) {
		read_back_more(g.gl_pathv[i], 1, 65535, rot_len, 1, &rb);
		unlink(g.gl_pathv[i]);
	}
	globfree(&g);
	CHECK(nf >= 2, "rotate by time: %zu file(s) in 2.3 s", nf);
	CHECK(rb.n[0] == seq && qs[0].captured == seq, "rotate by time: %llu "
		"of %u read back", (unsigned long long)rb.n[0], seq);
	printf("rotate by time: %zu files, %u packets\n", nf, seq);
}

/* Refused: a ring without a trigger, standard output. */
static void
test_rotate_refusals(void)
{
	struct gpurx_capture_rotate rot = { .files = 3 };
	struct gpurx_qstats qs[1];
	char err[256] = "";

	CHECK(gpurx_capture_open_rotate("/tmp/never.pcapng", GPURX_FMT_PCAPNG,
		65535, 0, 1, qs, NULL, &rot, err, sizeof(err)) == NULL &&
		strstr(err, "--rotate-files") != NULL, "ring alone: '%s'", err);
	rot.size = 1000;
	err[0] = '\0';
	CHECK(gpurx_capture_rotate_check("-", &rot, err, sizeof(err)) ==
		-EINVAL && strstr(err, "--rotate-size") != NULL,
		"rotate standard output: '%s'", err);
	CHECK(access("/tmp/never.pcapng", F_OK) != 0, "a file created");
}

int
main(int argc, char **argv)
{
	int rc;

	RTE_SET_USED(argc);
	if (test_eal_init(argv[0], "gpurx-test-capture") != 0)
		return 1;
	/* A port, so that rte_pcapng writes the interface block packets
	 * refer to. */
	rc = rte_eal_hotplug_add("vdev", "net_null0", "");
	if (rc != 0) {
		fprintf(stderr, "cannot add net_null0: %s\n", strerror(-rc));
		return 1;
	}
	/* Past RLIMIT_FSIZE a write fails with EFBIG, as dpdk-gpu-rx has it. */
	signal(SIGXFSZ, SIG_IGN);
	test_refusals();
	test_header_errors();
	test_idb_snaplen_and_stdout();
	test_concurrent(GPURX_FMT_PCAPNG, GPURX_DEFAULT_SNAPLEN);
	test_concurrent(GPURX_FMT_PCAP, GPURX_DEFAULT_SNAPLEN);
	test_concurrent(GPURX_FMT_PCAP, 100);
	test_size_limit(GPURX_FMT_PCAPNG);
	test_size_limit(GPURX_FMT_PCAP);
	test_fail_mid();
	test_stalled_queue();
	test_per_queue(GPURX_FMT_PCAPNG, 0);
	test_per_queue(GPURX_FMT_PCAP, 0);
	test_per_queue(GPURX_FMT_PCAPNG, 1);
	test_rotate_refusals();
	test_rotate_size(GPURX_FMT_PCAPNG, 0, 0);
	test_rotate_size(GPURX_FMT_PCAP, 0, 0);
	test_rotate_size(GPURX_FMT_PCAPNG, 1, 0);
	test_rotate_size(GPURX_FMT_PCAPNG, 0, 3);
	test_rotate_time();
	/* The same with writer threads, one per queue. */
	test_writers = 4;
	test_concurrent(GPURX_FMT_PCAPNG, GPURX_DEFAULT_SNAPLEN);
	test_size_limit(GPURX_FMT_PCAPNG);
	test_fail_mid();
	test_stalled_queue();
	test_per_queue(GPURX_FMT_PCAPNG, 0);
	test_per_queue(GPURX_FMT_PCAPNG, 1);
	test_rotate_size(GPURX_FMT_PCAPNG, 0, 0);
	test_rotate_size(GPURX_FMT_PCAPNG, 1, 0);
	test_rotate_time();
	/* One writer for every queue; what only writers have. */
	test_writers = 1;
	test_concurrent(GPURX_FMT_PCAP, 100);
	test_stalled_writer();
	test_close_in_flight();
	test_identical(GPURX_FMT_PCAPNG, 0);
	test_identical(GPURX_FMT_PCAPNG, 1);
	test_identical(GPURX_FMT_PCAP, 1);
	rte_eal_hotplug_remove("vdev", "net_null0");
	rte_eal_cleanup();
	return check_finish("test_capture");
}
