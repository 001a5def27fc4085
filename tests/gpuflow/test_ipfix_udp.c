/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A UDP destination's sending (lib/gpuflow/ipfix_udp.c, the writer's
 * object itself) over the loopback: a chunk of messages of every kind
 * of run (equal lengths past a super-datagram's segments and bytes, a
 * shorter one ending a run, a longer one after, templates-only ones,
 * more entries than a sendmmsg() call takes) must reach a receiver
 * byte for byte and in order, with GSO, with it off, with it refused by
 * the kernel (a socket without UDP checksums: EINVAL, the datagrams sent
 * again one by one), and paced; to a port nobody listens on, the
 * datagrams the ICMP errors refuse are counted lost with all their
 * records.
 */

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "gpuapp_clock.h"
#include "ipfix_udp.h"

#define MAX_DGRAMS 512
#define DGRAM_MAX 1500

/* The chunk: datagram i's length and records, its bytes from i. */
static uint32_t lens[MAX_DGRAMS], recs[MAX_DGRAMS];
static unsigned int n_dgrams;
static uint64_t n_records;
static uint8_t *chunk;
static size_t chunk_len;

static uint8_t
byte_of(unsigned int i, uint32_t j)
{
	return (uint8_t)(i * 31 + j * 7 + 1);
}

static void
add(unsigned int times, uint32_t len, uint32_t records)
{
	uint8_t msg[DGRAM_MAX];

	for (unsigned int t = 0; t < times; t++) {
		const unsigned int i = n_dgrams++;

		for (uint32_t j = 0; j < len; j++)
			msg[j] = byte_of(i, j);
		lens[i] = len;
		recs[i] = records;
		n_records += records;
		chunk_len = gpurx_ipfix_udp_put(chunk, chunk_len, msg, len,
			records);
	}
}

/* Runs of every kind; uniform: datagrams of one length, 3 records. */
static void
make_chunk(int uniform)
{
	n_dgrams = 0;
	n_records = 0;
	chunk_len = 0;
	if (uniform) {
		add(200, 1369, 3);
		return;
	}
	/* Past 65000 bytes (47 of 1369), then a shorter last segment. */
	add(70, 1369, 19);
	add(1, 900, 12);
	add(5, 1350, 14);
	add(3, 1400, 19);	/* longer: a new super-datagram */
	add(2, 60, 0);		/* templates alone */
	add(1, 1400, 19);
	/* Past 64 segments. */
	add(130, 100, 1);
	/* Each longer than the one before: an entry each, more than a
	 * sendmmsg() call's. */
	for (unsigned int i = 0; i < 100; i++)
		add(1, 200 + i, 2);
}

struct rx {
	int fd;
	unsigned int got, bad_len, bad_byte, first_bad;
	pthread_t th;
};

/* Every datagram against the chunk's, in order, until as many came or
 * the socket's timeout found none. */
static void *
rx_main(void *arg)
{
	struct rx *rx = arg;
	uint8_t buf[DGRAM_MAX + 1];

	while (rx->got < n_dgrams) {
		const ssize_t n = recv(rx->fd, buf, sizeof(buf), 0);
		const unsigned int i = rx->got;

		if (n < 0)
			break;
		if ((uint32_t)n != lens[i]) {
			if (rx->bad_len++ == 0 && rx->bad_byte == 0)
				rx->first_bad = i;
		} else {
			for (uint32_t j = 0; j < lens[i]; j++)
				if (buf[j] != byte_of(i, j)) {
					if (rx->bad_byte++ == 0 && rx->bad_len == 0)
						rx->first_bad = i;
					break;
				}
		}
		rx->got++;
	}
	return NULL;
}

/* A socket on 127.0.0.1 (bound: a receiver, its port in *port; else a
 * sender connected to *port). -1 after saying why. */
static int
udp_socket(int bound, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 1 };
	socklen_t alen = sizeof(a);
	int buf = 8 << 20;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("socket");
		return -1;
	}
	if (bound) {
		/* Room for the whole chunk should the receiver lag; past
		 * rmem_max only as root, enough either way with its thread
		 * receiving. */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf,
				sizeof(buf)) != 0 &&
				setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf,
					sizeof(buf)) != 0)
			perror("SO_RCVBUF (going on)");
		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)) != 0 ||
				bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
				getsockname(fd, (struct sockaddr *)&a,
					&alen) != 0) {
			perror("receiver");
			close(fd);
			return -1;
		}
		*port = ntohs(a.sin_port);
		return fd;
	}
	a.sin_port = htons(*port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		close(fd);
		return -1;
	}
	return fd;
}

enum mode { GSO, GSO_OFF, GSO_REFUSED, PACED };

static const char *const mode_names[] = {
	"GSO", "GSO off", "GSO refused by the kernel", "paced, GSO"
};

/* The chunk to a receiver in mode m: every datagram, in order, bytes
 * intact, none counted lost; GSO's state as m makes it. */
static void
deliver(enum mode m)
{
	const uint64_t rate = m == PACED ? 1000000 : 0;
	struct gpurx_ipfix_udp_res res = { 0 };
	struct gpurx_ipfix_udp u;
	struct rx rx = { .fd = -1 };
	uint64_t t0, ns;
	uint16_t port;
	int fd, one = 1;

	check_case_begin();
	make_chunk(0);
	rx.fd = udp_socket(1, &port);
	fd = rx.fd >= 0 ? udp_socket(0, &port) : -1;
	CHECK(rx.fd >= 0 && fd >= 0, "%s: sockets", mode_names[m]);
	if (fd < 0)
		goto out;
	/* The kernel refuses GSO without UDP checksums (EINVAL), which
	 * it cannot tell before the first super-datagram. */
	CHECK(m != GSO_REFUSED ||
		setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0,
		"SO_NO_CHECK: %s", strerror(errno));
	gpurx_ipfix_udp_init(&u, fd, "the test's receiver");
	if (u.gso == GPURX_IPFIX_GSO_OFF && m != GSO_OFF) {
		printf("NOTE: %s: this kernel has no UDP_SEGMENT: the path "
			"without GSO alone\n", mode_names[m]);
	}
	if (m == GSO_OFF)
		u.gso = GPURX_IPFIX_GSO_OFF;
	if (pthread_create(&rx.th, NULL, rx_main, &rx) != 0) {
		CHECK(0, "receiver thread");
		goto out;
	}
	t0 = gpuapp_mono_ns();
	gpurx_ipfix_udp_send_chunk(&u, chunk, chunk_len, rate, &res);
	ns = gpuapp_mono_ns() - t0;
	pthread_join(rx.th, NULL);
	CHECK(res.sent == n_dgrams && res.lost == 0 && res.lost_msgs == 0 &&
		res.err == 0, "%s: %llu of %u datagrams sent, %llu records "
		"lost (%s)", mode_names[m], (unsigned long long)res.sent,
		n_dgrams, (unsigned long long)res.lost, strerror(res.err));
	CHECK(rx.got == n_dgrams && rx.bad_len == 0 && rx.bad_byte == 0,
		"%s: %u of %u datagrams received, %u of another length, %u "
		"with other bytes, the first at %u", mode_names[m], rx.got,
		n_dgrams, rx.bad_len, rx.bad_byte, rx.first_bad);
	switch (m) {
	case GSO:
	case PACED:
		CHECK(u.gso != GPURX_IPFIX_GSO_UNKNOWN,
			"%s: super-datagrams sent, GSO still unknown",
			mode_names[m]);
		break;
	case GSO_OFF:
	case GSO_REFUSED:
		CHECK(u.gso == GPURX_IPFIX_GSO_OFF, "%s: GSO state %d",
			mode_names[m], (int)u.gso);
		break;
	}
	/* A burst's worth ahead of the rate at most: the rest paced. */
	if (m == PACED)
		CHECK(ns + 1000000 >= (n_records * 1000000000ull / rate) * 9 / 10,
			"paced at %llu records/s: %llu records in %llu ns",
			(unsigned long long)rate, (unsigned long long)n_records,
			(unsigned long long)ns);
out:
	if (fd >= 0)
		close(fd);
	if (rx.fd >= 0)
		close(rx.fd);
	check_case_end(mode_names[m]);
}

/* To a port nobody listens on: an ICMP port unreachable refuses an entry
 * after it (ECONNREFUSED; the kernel may take the ICMP in after the
 * chunk's last send: the chunk again, ROUNDS times); every datagram sent
 * or counted lost, a refused super-datagram's with all its segments'
 * records. */
#define ROUNDS 3

static void
unreachable(int gso)
{
	const char *name = gso ? "unreachable, GSO" : "unreachable, GSO off";
	struct gpurx_ipfix_udp_res res = { 0 };
	struct gpurx_ipfix_udp u;
	uint16_t port;
	int fd, gone;

	check_case_begin();
	make_chunk(1);
	/* A port that was free: bound, then closed. */
	gone = udp_socket(1, &port);
	if (gone >= 0)
		close(gone);
	fd = gone >= 0 ? udp_socket(0, &port) : -1;
	CHECK(fd >= 0, "%s: sockets", name);
	if (fd < 0) {
		check_case_end(name);
		return;
	}
	gpurx_ipfix_udp_init(&u, fd, "nobody");
	if (!gso)
		u.gso = GPURX_IPFIX_GSO_OFF;
	for (unsigned int r = 0; r < ROUNDS; r++) {
		gpurx_ipfix_udp_send_chunk(&u, chunk, chunk_len, 0, &res);
		usleep(10000);
	}
	CHECK(res.err == ECONNREFUSED, "%s: the error: %s", name,
		strerror(res.err));
	CHECK(res.lost_msgs != 0 &&
		res.sent + res.lost_msgs == ROUNDS * n_dgrams &&
		res.lost == 3 * res.lost_msgs, "%s: %llu datagrams sent, %llu "
		"lost with %llu records, of %u", name,
		(unsigned long long)res.sent, (unsigned long long)res.lost_msgs,
		(unsigned long long)res.lost, ROUNDS * n_dgrams);
	/* Refused whole: a super-datagram is 12 segments at least here
	 * (200 = 4 * 47 + 12). */
	CHECK(!gso || u.gso != GPURX_IPFIX_GSO_ON || res.lost_msgs >= 12,
		"%s: %llu datagrams lost", name,
		(unsigned long long)res.lost_msgs);
	close(fd);
	check_case_end(name);
}

int
main(void)
{
	chunk = malloc((size_t)MAX_DGRAMS *
		(DGRAM_MAX + sizeof(struct gpurx_ipfix_udp_head)));
	if (chunk == NULL) {
		fprintf(stderr, "FAIL: out of memory\n");
		return 1;
	}
	deliver(GSO);
	deliver(GSO_OFF);
	deliver(GSO_REFUSED);
	deliver(PACED);
	unreachable(1);
	unreachable(0);
	free(chunk);
	return check_finish("test_ipfix_udp");
}
