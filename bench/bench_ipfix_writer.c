/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-ipfix-writer: the flow exporter's writer alone (issue 35): how
 * many records a second dpdk-gpu-rx's IPFIX writer (ipfix_writer.c over
 * libfixbuf) takes from a host export ring into a file, with no table,
 * scan or GPU in the way. The records are synthetic (a mix of IPv4 and
 * IPv6, TCP, UDP and ICMP); each batch is put in the ring untimed, then
 * gpurx_ipfix_drain() takes it, timed, as the exporter thread does, with
 * gpurx_ipfix_tick() every GPURX_IPFIX_TICK_MS of writer time and
 * gpurx_ipfix_close() (the last flush) in the time. With --add-many each
 * batch goes through gpurx_ipfix_add_many() instead (the exit's path for
 * flows still live), straight from the ring's memory.
 *
 * With --udp the records go over UDP to a receiver of the bench's own
 * on 127.0.0.1 (a thread counting datagrams, recvmmsg() into a 64 MiB
 * socket buffer), unpaced unless --rate, instead of (or beside) --file:
 * the exporter's sends through the kernel's UDP stack, which a
 * collector's host adds to; datagrams the receiver's buffer dropped are
 * said, beside the records the exporter counted lost.
 *
 * Usage: bench-ipfix-writer {--file F | --udp} [--records N] [--v6 PCT]
 *        [--encoders N] [--add-many] [--rate N]
 * Prints one line: ipfix-writer: N records in S s = R records/s, with
 * the CPU time of the timed parts a record, user and system (the
 * kernel's writes into the file), all the writer's threads together.
 * Exit: 0; 1 failure; 2 usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_common.h"
#include "ipfix_writer.h"

#define RING_RECORDS (1u << 16)
#define BATCH 4096u	/* records a drain, as dpdk-gpu-rx's DRAIN_BATCH */

struct biw_opts {
	const char *file;
	uint64_t records, v6_pct, encoders, rate;
	int add_many, udp;
};

/* --udp's receiver: datagrams and bytes until told to stop. */
struct biw_rx {
	int fd;
	uint16_t port;
	volatile int stop;
	uint64_t datagrams, bytes;
	pthread_t th;
};

static int
parse(int argc, char **argv, struct biw_opts *o)
{
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_STRING_ENTRY("file", &o->file, "F",
			"the IPFIX file written (this or --udp; tmpfs "
			"measures the writer, not the disk)"),
		GPUAPP_OPT_FLAG_ENTRY("udp", &o->udp,
			"over UDP to a receiver of the bench's own on "
			"127.0.0.1"),
		GPUAPP_OPT_UINT_ENTRY("rate", &o->rate, 0, 1ull << 40, "N",
			"with --udp: records/s at most (default 0: unpaced)"),
		GPUAPP_OPT_UINT_ENTRY("records", &o->records, 1, 1ull << 40,
			"N", "records written (default 10000000)"),
		GPUAPP_OPT_UINT_ENTRY("v6", &o->v6_pct, 0, 100, "PCT",
			"percent of IPv6 records (default 10)"),
		GPUAPP_OPT_UINT_ENTRY("encoders", &o->encoders, 1,
			GPURX_IPFIX_ENCODERS_MAX, "N",
			"encoder threads (gpurx_ipfix_set_encoders(); "
			"default 1)"),
		GPUAPP_OPT_FLAG_ENTRY("add-many", &o->add_many,
			"batches through gpurx_ipfix_add_many(), not the "
			"ring's drain"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->records = 10000000;
	o->v6_pct = 10;
	o->encoders = 1;
	ret = bench_opts_parse(table, RTE_DIM(table), "usage: %s [options]",
		argc, argv);
	if (ret != 0)
		return ret;
	if (o->file == NULL && !o->udp) {
		BENCH_LOG(ERR, "--file F or --udp is needed: where the IPFIX "
			"goes\n");
		return -EINVAL;
	}
	if (o->rate != 0 && !o->udp) {
		BENCH_LOG(ERR, "--rate paces UDP only: give --udp too\n");
		return -EINVAL;
	}
	return 0;
}

static void *
rx_main(void *arg)
{
	enum { BATCH_RX = 64, DGRAM_MAX = 2048 };
	struct biw_rx *rx = arg;
	static uint8_t bufs[BATCH_RX][DGRAM_MAX];
	struct mmsghdr mh[BATCH_RX];
	struct iovec iov[BATCH_RX];

	for (unsigned int i = 0; i < BATCH_RX; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = DGRAM_MAX;
		memset(&mh[i], 0, sizeof(mh[i]));
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	while (!rx->stop) {
		/* The socket's receive timeout wakes the loop to see stop. */
		int n = recvmmsg(rx->fd, mh, BATCH_RX, 0, NULL);

		for (int i = 0; i < n; i++) {
			rx->datagrams++;
			rx->bytes += mh[i].msg_len;
		}
	}
	return NULL;
}

/* The receiver's socket on 127.0.0.1, a free port, and its thread. */
static int
rx_start(struct biw_rx *rx)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	socklen_t len = sizeof(a);
	int buf = 64 << 20, rc;

	memset(rx, 0, sizeof(*rx));
	rx->fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx->fd < 0) {
		BENCH_LOG(ERR, "UDP receiver: socket: %s\n", strerror(errno));
		return -errno;
	}
	/* SO_RCVBUFFORCE (root) past rmem_max, else what rmem_max allows. */
	if (setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
		(void)setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(rx->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
			bind(rx->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			getsockname(rx->fd, (struct sockaddr *)&a, &len) != 0) {
		rc = -errno;
		BENCH_LOG(ERR, "UDP receiver: %s\n", strerror(errno));
		close(rx->fd);
		return rc;
	}
	rx->port = ntohs(a.sin_port);
	rc = pthread_create(&rx->th, NULL, rx_main, rx);
	if (rc != 0) {
		BENCH_LOG(ERR, "UDP receiver: thread: %s\n", strerror(rc));
		close(rx->fd);
		return -rc;
	}
	return 0;
}

/* What was sent and is still in the socket received, then the end. */
static void
rx_stop(struct biw_rx *rx)
{
	uint64_t seen;

	do {
		seen = rx->datagrams;
		usleep(200000);
	} while (rx->datagrams != seen);
	rx->stop = 1;
	pthread_join(rx->th, NULL);
	close(rx->fd);
}

/* Record i of the run: its fields from i alone (a 64-bit mix), so every
 * run writes the same file. */
static void
make_rec(struct gpurx_flow_rec *r, uint64_t i, uint64_t v6_pct)
{
	static const uint8_t protos[] = { 6, 6, 6, 17, 17, 1 };
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
	uint64_t seq = r->seq;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	memset(r, 0, sizeof(*r));
	r->seq = seq;
	r->key.ip_version = (h % 100) < v6_pct ? 6 : 4;
	r->key.proto = protos[(h >> 8) % RTE_DIM(protos)];
	if (r->key.ip_version == 6) {
		r->key.src[0] = 0x20;
		r->key.src[1] = 0x01;
		r->key.dst[0] = 0x20;
		r->key.dst[1] = 0x01;
		if (r->key.proto == 1)
			r->key.proto = 58;
	} else {
		r->key.src[10] = r->key.src[11] = 0xff;
		r->key.dst[10] = r->key.dst[11] = 0xff;
		r->key.src[12] = 10;
		r->key.dst[12] = 192;
	}
	memcpy(&r->key.src[13], &h, 3);
	memcpy(&r->key.dst[13], (const uint8_t *)&h + 3, 3);
	r->key.sport = (uint16_t)(h >> 16);
	r->key.dport = r->key.proto == 1 || r->key.proto == 58 ?
		0x0800 : (uint16_t)(h >> 32);
	r->key.vlan_port = (uint16_t)((h >> 40) & 0xfff);
	r->packets = 1 + ((h >> 20) & 0xffff);
	r->bytes = r->packets * (64 + ((h >> 36) & 0x3ff));
	r->first_ns = 1700000000000000000ull + i * 100;
	r->last_ns = r->first_ns + ((h >> 12) & 0xffffff) * 1000;
	r->tcp_flags = r->key.proto == 6 ? (uint8_t)(h >> 44) : 0;
	r->reason = 1 + (uint8_t)((h >> 50) % 5);
	r->ttl_min = (uint8_t)(h >> 54);
	r->ttl_max = r->ttl_min + 3;
	memcpy(r->attr.src_mac, &h, 6);
	memcpy(r->attr.dst_mac, (const uint8_t *)&h + 2, 6);
	r->attr.tos = (uint8_t)(h >> 58);
}

/* The process's CPU time so far, user and system, in ns. */
static void
cpu_ns(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		memset(&ru, 0, sizeof(ru));
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		(uint64_t)ru.ru_utime.tv_usec * 1000;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		(uint64_t)ru.ru_stime.tv_usec * 1000;
}

int
main(int argc, char **argv)
{
	struct biw_opts o;
	struct gpurx_flow_ring *ring;
	struct gpurx_ipfix *x;
	uint64_t made = 0, tail = 0, ns = 0, last_tick = 0, t0;
	uint64_t user = 0, sys = 0, u0, s0, u1, s1;
	struct biw_rx rx;
	char target[64];
	int rc;

	rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
	ring = gpurx_flow_ring_init(malloc(gpurx_flow_ring_bytes(RING_RECORDS)),
		RING_RECORDS);
	if (ring == NULL) {
		BENCH_LOG(ERR, "out of memory for the ring\n");
		return BENCH_EXIT_FAIL;
	}
	if (o.udp) {
		if (rx_start(&rx) != 0) {
			free(ring);
			return BENCH_EXIT_FAIL;
		}
		snprintf(target, sizeof(target), "udp://127.0.0.1:%u", rx.port);
	}
	rc = BENCH_EXIT_FAIL;
	x = gpurx_ipfix_open(o.udp ? target : NULL, o.file, 1, 1);
	if (x != NULL && o.udp)
		gpurx_ipfix_set_rate(x, o.rate);
	if (x == NULL || gpurx_ipfix_set_encoders(x,
			(unsigned int)o.encoders) != 0)
		goto out;
	while (made < o.records) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)BATCH, o.records - made);

		/* Untimed: the producer's side. */
		for (uint32_t j = 0; j < n; j++, made++) {
			struct gpurx_flow_rec *r =
				&ring->recs[made & (RING_RECORDS - 1)];

			make_rec(r, made, o.v6_pct);
			r->seq = made + 1;
		}
		cpu_ns(&u0, &s0);
		t0 = bench_now_ns();
		if (o.add_many) {
			/* BATCH divides RING_RECORDS: a batch is contiguous. */
			gpurx_ipfix_add_many(x,
				&ring->recs[tail & (RING_RECORDS - 1)], n);
			tail += n;
			gpurx_flow_ring_consumed(ring, tail);
		} else if (gpurx_ipfix_drain(x, ring, &tail, n) != n) {
			BENCH_LOG(ERR, "the drain left records in the ring\n");
			goto out;
		}
		if (ns - last_tick >= GPURX_IPFIX_TICK_MS * 1000000ull) {
			last_tick = ns;
			gpurx_ipfix_tick(x);
		}
		ns += bench_now_ns() - t0;
		cpu_ns(&u1, &s1);
		user += u1 - u0;
		sys += s1 - s0;
	}
	cpu_ns(&u0, &s0);
	t0 = bench_now_ns();
	if (gpurx_ipfix_close(x) != 0 ||
			gpurx_ipfix_counts(x)->records != o.records) {
		BENCH_LOG(ERR, "the writer failed or lost records\n");
		goto out;
	}
	ns += bench_now_ns() - t0;
	cpu_ns(&u1, &s1);
	user += u1 - u0;
	sys += s1 - s0;
	printf("ipfix-writer: %" PRIu64 " encoders, %" PRIu64 " records in "
		"%.3f s = %.0f records/s (%.1f ns a record; CPU: user %.1f ns, "
		"system %.1f ns a record)\n", o.encoders, o.records, ns / 1e9,
		o.records / (ns / 1e9), (double)ns / o.records,
		(double)user / o.records, (double)sys / o.records);
	rc = BENCH_EXIT_OK;
out:
	if (o.udp) {
		uint64_t messages = 0, lost = 0;

		rx_stop(&rx);
		if (x != NULL && gpurx_ipfix_n_sinks(x) > 0)
			gpurx_ipfix_sink(x, 0, &messages, &lost);
		printf("ipfix-writer: UDP: %" PRIu64 " datagrams sent, %"
			PRIu64 " records lost by the exporter; the receiver "
			"got %" PRIu64 " datagrams (%.1f MB)\n", messages, lost,
			rx.datagrams, rx.bytes / 1e6);
	}
	gpurx_ipfix_free(x);
	free(ring);
	return rc;
}
