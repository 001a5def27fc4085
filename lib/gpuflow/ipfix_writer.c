/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPFIX with libfixbuf. libfixbuf holds the templates and builds the
 * template and statistics messages into a buffer exporter
 * (fbExporterAllocBuffer) in manual mode, so each message is known the
 * moment it is complete; the data messages are built as libfixbuf
 * builds them, without its per-record transcoding (ipfix_enc.h says why,
 * gpurx_ipfix_enc_check() checks it). This file moves the bytes: to a
 * file, a UDP socket (a datagram per message, one template's records
 * each, sent by ipfix_udp.c, paced to a rate of records, the templates
 * again every GPURX_IPFIX_TEMPLATE_S) and a TCP connection
 * (templates first on every connection, a lost one made again every
 * second). A destination
 * that cannot take a message has its records counted lost and warned
 * about; the caller never waits for it beyond a send timeout.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <fixbuf/public.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_log.h>

#include "gpuapp_clock.h"
#include "gpuapp_io.h"
#include "ipfix_enc.h"
#include "ipfix_log.h"
#include "ipfix_target.h"
#include "ipfix_udp.h"
#include "ipfix_writer.h"

/*
 * The flow library's logtype, lib.gpuflow (RTE_LOG_DEFAULT_LOGTYPE, from
 * lib/gpuflow/meson.build): the exporter's errors and warnings, so that
 * --log-level=lib.gpuflow:LEVEL reaches them. DPDK 22.11 writes them to
 * stderr with no prefix, as the fprintf calls before did.
 */
RTE_LOG_REGISTER_DEFAULT(gpuflow_logtype, INFO);

#define TID_V4 GPURX_IPFIX_TID_V4
#define TID_V6 GPURX_IPFIX_TID_V6
#define TID_STATS GPURX_IPFIX_TID_STATS
/* A message per datagram within a 1500-byte MTU; on a stream or in a
 * file, large messages (a write per 65 KB). */
#define MTU_DATAGRAM 1400
#define MTU_STREAM 65000
#define RECONNECT_MS 1000
#define CONNECT_TIMEOUT_MS 500
#define SEND_TIMEOUT_MS 500
#define WARN_EVERY_S 10
/* A chunk of a destination's thread (sink_main()): a file's writes, a
 * UDP socket's datagrams. */
#define SINK_CHUNK (1u << 20)

/* What libfixbuf reads per record (the reference the data messages are
 * checked against, gpurx_ipfix_enc_check()): the internal templates
 * below, field for field (paddingOctets where C aligns). The fields
 * after `reason` came later: appended, so that a reader of the older
 * fields finds them where they were. */
struct rec4 {
	uint64_t start_ms, end_ms, packets, octets;
	uint32_t src, dst, ingress;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint16_t icmp;		/* type * 256 + code; 0 unless ICMP */
	uint8_t src_mac[6], dst_mac[6];
	uint8_t tos, ttl_min, ttl_max;
	uint8_t pad[1];
};

struct rec6 {
	uint64_t start_ms, end_ms, packets, octets;
	uint8_t src[16], dst[16];
	uint32_t ingress;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint16_t icmp;		/* type * 256 + code; 0 unless ICMPv6 */
	uint8_t src_mac[6], dst_mac[6];
	uint8_t tos, ttl_min, ttl_max;
	uint8_t pad[1];
};

_Static_assert(sizeof(struct rec4) == 72, "rec4 layout");
_Static_assert(sizeof(struct rec6) == 96, "rec6 layout");
/* The wire's lengths (ipfix_enc.h): the internal records less padding. */
_Static_assert(sizeof(struct rec4) - 1 == GPURX_IPFIX_V4_LEN, "rec4 wire");
_Static_assert(sizeof(struct rec6) - 1 == GPURX_IPFIX_V6_LEN, "rec6 wire");

/* A template is the head, the addresses of its IP version, the tail.
 * Flag 1: the padding is in the internal template only; the messages
 * carry none. */
static fbInfoElementSpec_t spec_head[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec_addr4[] = {
	{ "sourceIPv4Address", 4, 0 },
	{ "destinationIPv4Address", 4, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec_addr6[] = {
	{ "sourceIPv6Address", 16, 0 },
	{ "destinationIPv6Address", 16, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec_tail[] = {
	{ "ingressInterface", 4, 0 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	FB_IESPEC_NULL
};

/*
 * The ICMP type and code of the IP version's template, then what both
 * carry. TTL as minimumTTL/maximumTTL over the record's packets rather
 * than ipTTL (192, one packet's): a range says more, is the same
 * whichever packet came first (so the GPU's record equals the CPU's),
 * and is what nfdump 1.7.2 and later read (1.7.1, Debian 12's, reads
 * neither). MACs and TOS are the flow's first packet's (flow_ring.h).
 */
static fbInfoElementSpec_t spec_icmp4[] = {
	{ "icmpTypeCodeIPv4", 2, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec_icmp6[] = {
	{ "icmpTypeCodeIPv6", 2, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec_l2[] = {
	{ "sourceMacAddress", 6, 0 },
	{ "destinationMacAddress", 6, 0 },
	{ "ipClassOfService", 1, 0 },
	{ "minimumTTL", 1, 0 },
	{ "maximumTTL", 1, 0 },
	{ "paddingOctets", 1, 1 },
	FB_IESPEC_NULL
};

/*
 * The exporter's statistics, an options record (RFC 7011 section 4.3)
 * scoped to the observation domain: what the exporter sent before it,
 * packets the meter could not account (no flow slot) and records not
 * sent (lost to a destination, or never written by a stopped GPU).
 */
struct rec_stats {
	uint32_t domain;
	uint32_t pad;
	uint64_t messages, records, octets, ignored_packets, not_sent;
};

_Static_assert(sizeof(struct rec_stats) == 48, "rec_stats layout");

static fbInfoElementSpec_t spec_stats[] = {
	{ "observationDomainId", 4, 0 },
	{ "paddingOctets", 4, 1 },
	{ "exportedMessageTotalCount", 8, 0 },
	{ "exportedFlowRecordTotalCount", 8, 0 },
	{ "exportedOctetTotalCount", 8, 0 },
	{ "ignoredPacketTotalCount", 8, 0 },
	{ "notSentFlowTotalCount", 8, 0 },
	FB_IESPEC_NULL
};

enum sink_kind { SINK_FILE, SINK_UDP, SINK_TCP };

struct sink {
	enum sink_kind kind;
	char name[300];		/* for messages */
	FILE *fp;
	int fd;
	struct addrinfo *addrs;	/* TCP: where to (re)connect */
	int need_templates;	/* TCP: connected, templates not yet sent */
	uint64_t next_try;	/* TCP: ns of the next connect attempt */
	struct gpurx_ipfix_udp udp;	/* UDP: its sending (ipfix_udp.h) */
	uint64_t messages, lost_records, lost_messages;
	uint64_t next_warn;	/* ns */
	char last_error[160];
	int failed;		/* file: a write failed, the file is incomplete */
	/*
	 * File or UDP, once its thread runs (sink_start()): the messages
	 * are copied into chunk[fill] (for UDP each after a struct
	 * gpurx_ipfix_udp_head), and a full chunk, or the one a tick
	 * finds, goes to the thread (sink_main()), which writes or sends
	 * it while the other fills, so that the kernel's work (a file's
	 * copy, about twice the encoding's CPU time; a datagram's way
	 * through the UDP stack, which bounded UDP export at 5 M
	 * records/s, run eeedb4f) is off the exporter thread. Under mu:
	 * wbuf, wlen, wrecords, wrate (the chunk handed over, while
	 * wbusy), wquit, and what the thread reports, werr, wlost and
	 * (UDP) wsent and wlost_msgs, which the exporter thread folds
	 * into failed (a file's), lost_records, messages and
	 * lost_messages (sink_fold()). udp is the thread's
	 * while it runs; every other field is the exporter thread's alone.
	 */
	uint8_t *chunk[2];
	unsigned int fill;
	size_t fill_len;
	uint64_t fill_records;
	uint64_t fill_rate;	/* UDP: the rate of the messages filled */
	pthread_t th;
	int th_on, th_failed, sync_on;
	pthread_mutex_t mu;
	pthread_cond_t work, idle;
	const uint8_t *wbuf;
	size_t wlen;
	uint64_t wrecords, wlost, wrate, wsent, wlost_msgs;
	int wbusy, wquit, werr;
};

/* A message an encoder built: in which of its out buffers and where,
 * its records. */
struct enc_msg {
	size_t off;
	uint32_t len, records;
	unsigned int b;
};

/*
 * Data message builders, a domain's and an encoder's: over UDP one a
 * template (mb_idx()), so that full messages have one length and go
 * out as one super-datagram (ipfix_udp.h). A template's records stay in
 * order; those of the two interleave by message, not by record, which
 * IPFIX leaves free (the sequence numbers count the records as sent).
 */
#define N_MB 2

/*
 * An encoder (gpurx_ipfix_set_encoders()): a message builder of its own
 * (ipfix_enc.h; the same MTU, the round's domain), so that it builds
 * whole data messages of a slice of a drain's records apart from the
 * others. The
 * messages are built in out, in order; the drain's thread sends them
 * after the slices before, and sets their sequence numbers
 * (seq_patch()).
 */
struct enc {
	/* mb[b]'s buf: in out[b], after its messages. */
	struct gpurx_ipfix_mb mb[N_MB];
	int failed;		/* memory: said, nothing more */
	/* The slice: set by the drain's thread before it starts the round. */
	const struct gpurx_flow_rec *const *recs;
	uint32_t n;
	/* What the slice gave. */
	uint8_t *out[N_MB];
	size_t out_len[N_MB], out_cap[N_MB];
	struct enc_msg *msgs;
	uint32_t n_msgs, msgs_cap;
	struct gpurx_ipfix_counts counts;
	/* Helpers (not encs[0], the drain's thread's own). */
	struct gpurx_ipfix *x;
	pthread_t th;
	int th_on;
	uint64_t round_done;	/* the last round it finished */
};

/*
 * One observation domain's stream (a port's: gpurx_ipfix_open_ports()).
 * RFC 7011 numbers the messages of each domain apart (section 3.1) and
 * scopes templates to the domain of the message that carries them: each
 * has its own messages, sequence, libfixbuf session (its templates and
 * statistics) and counts; the destinations are shared.
 */
struct dom {
	uint32_t domain;
	uint32_t ingress;	/* ingressInterface of its records */
	fbSession_t *session;	/* owned by fbuf once it exists */
	fbExporter_t *exporter;	/* likewise */
	fBuf_t *fbuf;
	uint8_t *msg;		/* where the exporter puts each message */
	uint16_t cur_tid;
	/* The data messages (ipfix_enc.h); libfixbuf's hold the templates
	 * or the statistics record alone. */
	struct gpurx_ipfix_mb mb[N_MB];
	int templates_in_msg;
	int stats_in_msg;	/* the statistics record */
	uint64_t msgs_out, octets_out;	/* messages built, their bytes */
	uint64_t records;	/* flow records built */
	/* IPFIX sequence number of the next message: data records sent
	 * before it. libfixbuf counts only its own session's; with
	 * encoders every message's header is set from this. */
	uint32_t seq;
};

struct gpurx_ipfix {
	fbInfoModel_t *model;
	/* doms[p]: the records whose key holds port index p
	 * (gpurx_flow_key_port()). */
	struct dom doms[GPURX_IPFIX_PORTS_MAX];
	unsigned int n_doms;
	uint64_t ignored_packets, not_sent;	/* the caller's, for stats */
	uint64_t last_stats;	/* ns */
	int has_udp;
	int lib_failed;		/* libfixbuf or memory failed: nothing more */
	uint64_t rate;		/* UDP: records/s, 0: unpaced */
	uint64_t last_templates;	/* ns */
	struct sink sinks[2];
	unsigned int n_sinks;
	/* Encoders (gpurx_ipfix_set_encoders()); n_enc < 2: none. The
	 * helpers start at the first drain that uses them, on the drain's
	 * thread's CPUs. Rounds: the drain's thread bumps round under mu,
	 * broadcasts go and waits on done until every helper of the round
	 * set its round_done. */
	struct enc *encs;
	unsigned int n_enc, n_helpers;
	int helpers_failed;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int sync_on;
	uint64_t round;
	unsigned int round_k;	/* slices of the current round */
	int quit;
	const struct gpurx_flow_rec **batch;	/* a drain's records */
	/* Several domains: batch's records by domain, each in ring order. */
	const struct gpurx_flow_rec **by_dom;
	uint32_t batch_cap;
	char describe[640];
	struct gpurx_ipfix_counts counts;
};

/* What libfixbuf said (err, freed), and where; *failed set. */
static void
lib_error_at(int *failed, const char *what, GError *err)
{
	FLOW_LOG(ERR, "error: flow export: %s: %s\n", what,
		err != NULL ? err->message : "unknown error");
	if (err != NULL)
		g_clear_error(&err);
	*failed = 1;
}

static void
lib_error(struct gpurx_ipfix *x, const char *what, GError *err)
{
	lib_error_at(&x->lib_failed, what, err);
}

/* --- Destinations ------------------------------------------------------- */

static void
sink_warn(struct sink *s, const char *why)
{
	uint64_t now = gpuapp_mono_ns();

	snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	if (now < s->next_warn)
		return;
	s->next_warn = now + WARN_EVERY_S * 1000000000ull;
	FLOW_LOG(WARNING, "warning: flow export to %s: %s; %" PRIu64 " records "
		"lost so far (the packet path goes on)\n", s->name, why,
		s->lost_records);
}

static void
sink_close_fd(struct sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Non-blocking connect with a timeout, then blocking sends with one. */
static int
tcp_connect(struct sink *s, char *why, size_t why_len)
{
	struct timeval tv = { SEND_TIMEOUT_MS / 1000,
		(SEND_TIMEOUT_MS % 1000) * 1000 };
	int err = ECONNREFUSED;

	for (struct addrinfo *ai = s->addrs; ai != NULL; ai = ai->ai_next) {
		struct pollfd pfd;
		socklen_t len = sizeof(err);
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
			SOCK_NONBLOCK, ai->ai_protocol);

		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
				errno != EINPROGRESS) {
			err = errno;
			close(fd);
			continue;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, CONNECT_TIMEOUT_MS) != 1) {
			err = ETIMEDOUT;
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
				err != 0 ||
				fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
				setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
					sizeof(tv)) != 0) {
			if (err == 0)
				err = errno;
			close(fd);
			continue;
		}
		s->fd = fd;
		return 0;
	}
	snprintf(why, why_len, "cannot connect: %s", strerror(err));
	return -1;
}

/* What the destination's thread reported into s (mu held): a failed
 * write ends a file, its records and those after it lost; a datagram
 * not sent is lost alone. */
static void
sink_fold(struct sink *s)
{
	char why[160];

	s->lost_records += s->wlost;
	s->wlost = 0;
	s->messages += s->wsent;
	s->wsent = 0;
	s->lost_messages += s->wlost_msgs;
	s->wlost_msgs = 0;
	if (s->werr == 0 || s->failed)
		return;
	if (s->kind == SINK_UDP) {
		snprintf(why, sizeof(why), "unreachable: %s", strerror(s->werr));
		s->werr = 0;
		sink_warn(s, why);
		return;
	}
	s->failed = 1;
	snprintf(why, sizeof(why), "write: %s", strerror(s->werr));
	sink_warn(s, why);
}

/* The filling chunk to the destination's thread, once it is done with
 * the one before (the chunk filled next). */
static void
sink_hand(struct sink *s)
{
	pthread_mutex_lock(&s->mu);
	while (s->wbusy)
		pthread_cond_wait(&s->idle, &s->mu);
	sink_fold(s);
	if (s->fill_len != 0 && s->failed) {
		s->lost_records += s->fill_records;
	} else if (s->fill_len != 0) {
		/* The mutex orders the chunk's bytes before the thread's
		 * reads of them. */
		s->wbuf = s->chunk[s->fill];
		s->wlen = s->fill_len;
		s->wrecords = s->fill_records;
		s->wrate = s->fill_rate;
		s->wbusy = 1;
		pthread_cond_signal(&s->work);
		s->fill ^= 1;
	}
	s->fill_len = 0;
	s->fill_records = 0;
	pthread_mutex_unlock(&s->mu);
}

static void *
sink_main(void *arg)
{
	struct sink *s = arg;
	const int fd = s->kind == SINK_FILE ? fileno(s->fp) : s->fd;
	int err = 0;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		const uint8_t *buf;
		size_t len;

		while (!s->wbusy && !s->wquit)
			pthread_cond_wait(&s->work, &s->mu);
		if (!s->wbusy)
			break;
		buf = s->wbuf;
		len = s->wlen;
		if (s->kind == SINK_UDP) {
			const uint64_t rate = s->wrate;
			struct gpurx_ipfix_udp_res res = { 0 };

			pthread_mutex_unlock(&s->mu);
			gpurx_ipfix_udp_send_chunk(&s->udp, buf, len, rate, &res);
			pthread_mutex_lock(&s->mu);
			s->wsent += res.sent;
			s->wlost += res.lost;
			s->wlost_msgs += res.lost_msgs;
			if (res.err != 0)
				s->werr = res.err;
		} else {
			pthread_mutex_unlock(&s->mu);
			/* After a failed write nothing more is written: the
			 * file would have a hole. */
			if (err == 0)
				err = -gpuapp_write_all(fd, buf, len);
			pthread_mutex_lock(&s->mu);
			if (err != 0) {
				s->werr = err;
				s->wlost += s->wrecords;
			}
		}
		/* The mutex orders the thread's reads of the chunk before
		 * the exporter's next writes into it. */
		s->wbusy = 0;
		pthread_cond_signal(&s->idle);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/*
 * The destination's thread (a file's or a UDP socket's), on the calling
 * (exporter) thread's CPUs; what stdio holds for a file is written
 * first. One that cannot start leaves the writes or sends to the
 * exporter thread (said once).
 */
static void
sink_start(struct sink *s)
{
	int rc;

	if (s->th_on || s->th_failed || s->failed)
		return;
	s->th_failed = 1;
	if (s->kind == SINK_FILE && fflush(s->fp) != 0) {
		char why[160];

		snprintf(why, sizeof(why), "write: %s", strerror(errno));
		s->failed = 1;
		sink_warn(s, why);
		return;
	}
	s->chunk[0] = malloc(SINK_CHUNK);
	s->chunk[1] = malloc(SINK_CHUNK);
	rc = s->chunk[0] == NULL || s->chunk[1] == NULL ? ENOMEM :
		pthread_mutex_init(&s->mu, NULL);
	if (rc == 0) {
		rc = pthread_cond_init(&s->work, NULL);
		if (rc != 0)
			pthread_mutex_destroy(&s->mu);
	}
	if (rc == 0) {
		rc = pthread_cond_init(&s->idle, NULL);
		if (rc != 0) {
			pthread_cond_destroy(&s->work);
			pthread_mutex_destroy(&s->mu);
		}
	}
	if (rc == 0) {
		s->sync_on = 1;
		rc = pthread_create(&s->th, NULL, sink_main, s);
	}
	if (rc != 0) {
		/* sink_stop() frees what was made. */
		FLOW_LOG(WARNING, "warning: flow export to %s: writer thread: "
			"%s; the exporter writes\n", s->name, strerror(rc));
		return;
	}
	pthread_setname_np(s->th, s->kind == SINK_FILE ? "gpurx-ipfix-fw" :
		"gpurx-ipfix-uw");
	s->th_on = 1;
	s->th_failed = 0;
}

/* Everything filled so far written or sent by the destination's thread,
 * and what it reported folded in (its losses counted). */
static void
sink_drain(struct sink *s)
{
	if (!s->th_on)
		return;
	sink_hand(s);
	pthread_mutex_lock(&s->mu);
	while (s->wbusy)
		pthread_cond_wait(&s->idle, &s->mu);
	sink_fold(s);
	pthread_mutex_unlock(&s->mu);
}

/* Everything handed to the destination's thread written or sent, the
 * thread ended. */
static void
sink_stop(struct sink *s)
{
	if (s->th_on) {
		sink_drain(s);
		pthread_mutex_lock(&s->mu);
		s->wquit = 1;
		pthread_cond_signal(&s->work);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
		s->th_on = 0;
	}
	if (s->sync_on) {
		pthread_cond_destroy(&s->idle);
		pthread_cond_destroy(&s->work);
		pthread_mutex_destroy(&s->mu);
		s->sync_on = 0;
	}
	free(s->chunk[0]);
	free(s->chunk[1]);
	s->chunk[0] = s->chunk[1] = NULL;
}

/* One whole message to s, or counted lost. */
static void
sink_send(struct sink *s, uint64_t rate, const uint8_t *msg, size_t len,
		uint32_t records, int templates)
{
	char why[160];
	size_t off = 0;
	ssize_t n = 0;

	switch (s->kind) {
	case SINK_FILE:
		if (s->th_on && s->fill_len + len > SINK_CHUNK)
			sink_hand(s);
		if (s->failed)
			break;
		if (s->th_on) {
			memcpy(s->chunk[s->fill] + s->fill_len, msg, len);
			s->fill_len += len;
			s->fill_records += records;
			s->messages++;
			return;
		}
		if (fwrite(msg, 1, len, s->fp) == len) {
			s->messages++;
			return;
		}
		snprintf(why, sizeof(why), "write: %s", strerror(errno));
		s->failed = 1;
		s->lost_records += records;
		sink_warn(s, why);
		return;
	case SINK_UDP:
		if (s->th_on) {
			if (s->fill_len + sizeof(struct gpurx_ipfix_udp_head) +
					len > SINK_CHUNK)
				sink_hand(s);
			s->fill_len = gpurx_ipfix_udp_put(s->chunk[s->fill],
				s->fill_len, msg, (uint32_t)len, records);
			s->fill_records += records;
			s->fill_rate = rate;
			return;
		}
		gpurx_ipfix_udp_pace(&s->udp, rate, records);
		/* Never waits on the socket: a full buffer drops the datagram.
		 * A collector that is not there shows as the ICMP error the
		 * kernel reports on a later send. */
		n = send(s->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n == (ssize_t)len) {
			s->messages++;
			return;
		}
		snprintf(why, sizeof(why), "unreachable: %s",
			n < 0 ? strerror(errno) : "datagram cut");
		break;
	case SINK_TCP:
		/* Templates alone: the connection gets its own when made. */
		if (s->fd < 0 && templates && records == 0)
			return;
		if (s->fd < 0) {
			/* Why, as the last connect attempt said. */
			snprintf(why, sizeof(why), "%s", s->last_error[0] ?
				s->last_error : "not connected");
			break;
		}
		if (s->need_templates && !templates) {
			snprintf(why, sizeof(why), "templates not yet sent");
			break;
		}
		while (off < len) {
			n = send(s->fd, msg + off, len - off, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off == len) {
			s->messages++;
			if (templates)
				s->need_templates = 0;
			return;
		}
		/* A message cut in the middle: the stream is out of step;
		 * connect again (templates first). */
		snprintf(why, sizeof(why), "send: %s", n < 0 ?
			strerror(errno) : "connection stalled");
		sink_close_fd(s);
		s->next_try = gpuapp_mono_ns() + RECONNECT_MS * 1000000ull;
		break;
	}
	s->lost_records += records;
	s->lost_messages++;
	sink_warn(s, why);
}

/* TCP destinations not connected: try again once their time has come.
 * Returns 1 when one was connected. */
static int
reconnect(struct gpurx_ipfix *x)
{
	uint64_t now = gpuapp_mono_ns();
	int connected = 0;

	for (unsigned int i = 0; i < x->n_sinks; i++) {
		struct sink *s = &x->sinks[i];
		char why[160];

		if (s->kind != SINK_TCP || s->fd >= 0 || now < s->next_try)
			continue;
		if (tcp_connect(s, why, sizeof(why)) != 0) {
			s->next_try = gpuapp_mono_ns() + RECONNECT_MS * 1000000ull;
			snprintf(s->last_error, sizeof(s->last_error), "%s", why);
			continue;
		}
		if (s->lost_records != 0)
			FLOW_LOG(NOTICE, "flow export to %s: connected again\n",
				s->name);
		s->need_templates = 1;
		connected = 1;
	}
	return connected;
}

/* The file and UDP destinations' threads, from the exporter thread. */
static void
sinks_start(struct gpurx_ipfix *x)
{
	for (unsigned int i = 0; i < x->n_sinks; i++)
		if (x->sinks[i].kind == SINK_FILE ||
				x->sinks[i].kind == SINK_UDP)
			sink_start(&x->sinks[i]);
}

/* --- Messages ------------------------------------------------------------ */

/*
 * Sets a message's IPFIX sequence number (header bytes 8-11, RFC 7011
 * section 3.1: the data records of its domain's stream before it) from
 * d->seq, and
 * counts its data records after it. Raw bytes because libfixbuf numbers a
 * session's messages by that session's records alone: with encoders
 * (gpurx_ipfix_set_encoders()) each session builds a part of the one
 * stream, and libfixbuf has no call that sets a session's count; the
 * data messages (ipfix_enc.h) are not libfixbuf's at all.
 */
static void
seq_patch(struct dom *d, uint8_t *msg, uint32_t seq_records)
{
	const rte_be32_t be = rte_cpu_to_be_32(d->seq);

	memcpy(msg + 8, &be, sizeof(be));
	d->seq += seq_records;
}

/* A whole message of d to every destination: seq_records data records
 * for the sequence, records of them flow records (for UDP pacing and
 * losses). */
static void
send_msg(struct gpurx_ipfix *x, struct dom *d, uint8_t *msg, size_t len,
		uint32_t seq_records, uint32_t records, int templates)
{
	seq_patch(d, msg, seq_records);
	d->msgs_out++;
	d->octets_out += len;
	for (unsigned int i = 0; i < x->n_sinks; i++)
		sink_send(&x->sinks[i], x->rate, msg, len, records, templates);
}

/* The builder of r's messages among N_MB. */
static __rte_always_inline unsigned int
mb_idx(const struct gpurx_ipfix *x, const struct gpurx_flow_rec *r)
{
	return x->has_udp && r->key.ip_version == 6;
}

/* The data message of d's builder m built so far, out to every
 * destination. */
static void
emit_mb(struct gpurx_ipfix *x, struct dom *d, struct gpurx_ipfix_mb *m)
{
	const uint32_t records = m->records;
	const uint32_t len = gpurx_ipfix_mb_end(m);

	if (len != 0)
		send_msg(x, d, m->buf, len, records, records, 0);
}

/* d's data messages built so far, out to every destination. */
static void
emit_data(struct gpurx_ipfix *x, struct dom *d)
{
	for (unsigned int b = 0; b < N_MB; b++)
		emit_mb(x, d, &d->mb[b]);
}

/* d's messages built so far, the data first, out to every destination. */
static void
emit(struct gpurx_ipfix *x, struct dom *d)
{
	GError *err = NULL;
	size_t len;

	if (x->lib_failed)
		return;
	emit_data(x, d);
	if (!d->templates_in_msg && !d->stats_in_msg)
		return;
	if (!fBufEmit(d->fbuf, &err)) {
		lib_error(x, "fBufEmit", err);
		return;
	}
	len = fbExporterGetMsgLen(d->exporter);
	/* The statistics record is a data record too (RFC 7011 3.1). */
	send_msg(x, d, d->msg, len, d->stats_in_msg, 0, d->templates_in_msg);
	d->templates_in_msg = 0;
	d->stats_in_msg = 0;
}

/* Every domain's messages built so far. */
static void
emit_all(struct gpurx_ipfix *x)
{
	for (unsigned int i = 0; i < x->n_doms; i++)
		emit(x, &x->doms[i]);
}

/* Each domain's templates in a message of their own, in that domain (its
 * messages before are sent first). */
static void
send_templates(struct gpurx_ipfix *x)
{
	for (unsigned int i = 0; i < x->n_doms && !x->lib_failed; i++) {
		struct dom *d = &x->doms[i];
		GError *err = NULL;

		emit(x, d);
		if (x->lib_failed)
			return;
		/* Manual mode: the first template set after data ends the
		 * message (FB_ERROR_EOM); the one before went out above:
		 * again. */
		if (!fbSessionExportTemplates(d->session, &err) &&
				g_error_matches(err, FB_ERROR_DOMAIN,
					FB_ERROR_EOM)) {
			g_clear_error(&err);
			fbSessionExportTemplates(d->session, &err);
		}
		if (err != NULL) {
			lib_error(x, "fbSessionExportTemplates", err);
			return;
		}
		d->templates_in_msg = 1;
		emit(x, d);
	}
	x->last_templates = gpuapp_mono_ns();
}

/*
 * rec (len bytes, template tid) into fbuf's message, whose template is
 * *cur_tid. 0; 1 when the message is full (manual mode: send it, put the
 * record again); -1 when libfixbuf failed (err says why).
 */
static __rte_always_inline int
fb_put(fBuf_t *fbuf, uint16_t *cur_tid, uint16_t tid, void *rec, size_t len,
		GError **err)
{
	if (*cur_tid != tid) {
		if (!fBufSetInternalTemplate(fbuf, tid, err) ||
				!fBufSetExportTemplate(fbuf, tid, err))
			return -1;
		*cur_tid = tid;
	}
	if (fBufAppend(fbuf, rec, len, err))
		return 0;
	if (!g_error_matches(*err, FB_ERROR_DOMAIN, FB_ERROR_EOM))
		return -1;
	g_clear_error(err);
	return 1;
}

/* A record into d's libfixbuf message (the statistics), the one before
 * sent once full. */
static int
put(struct gpurx_ipfix *x, struct dom *d, uint16_t tid, void *rec,
		size_t len)
{
	GError *err = NULL;
	int rc = fb_put(d->fbuf, &d->cur_tid, tid, rec, len, &err);

	if (rc == 1) {
		emit(x, d);
		if (x->lib_failed)
			return -1;
		/* A record always fits an empty message. */
		rc = fb_put(d->fbuf, &d->cur_tid, tid, rec, len, &err);
	}
	if (rc != 0) {
		lib_error(x, "writing a record", err);
		return -1;
	}
	return 0;
}

/* Whether the record is of its IP version's ICMP: then the key's dport
 * is type << 8 | code (flow_ring.h), exported as the version's
 * icmpTypeCode, and there are no ports. */
static int
rec_is_icmp(const struct gpurx_flow_key *k)
{
	return (k->ip_version == 4 && k->proto == 1) ||
		(k->ip_version == 6 && k->proto == 58);
}

/* The record libfixbuf reads for r, of either IP version: its template
 * and length. */
union rec_any {
	struct rec4 v4;
	struct rec6 v6;
};

/* The fields rec4 and rec6 share, from record r of key k. */
#define REC_COMMON(r, k, ingress, icmp) \
	.start_ms = (r)->first_ns / 1000000, \
	.end_ms = (r)->last_ns / 1000000, \
	.packets = (r)->packets, .octets = (r)->bytes, \
	.ingress = (ingress), \
	.sport = (k)->sport, .dport = (icmp) ? 0 : (k)->dport, \
	.vlan = gpurx_flow_key_vlan(k), .tcp_flags = (r)->tcp_flags, \
	.proto = (k)->proto, .reason = (r)->reason, \
	.icmp = (icmp) ? (k)->dport : 0, .tos = (r)->attr.tos, \
	.ttl_min = (r)->ttl_min, .ttl_max = (r)->ttl_max

/* The record libfixbuf reads for r: what the data messages' builder
 * (ipfix_enc.h) must encode as libfixbuf does. */
static __rte_always_inline size_t
rec_convert(const struct gpurx_flow_rec *r, uint32_t ingress,
		union rec_any *u, uint16_t *tid)
{
	const struct gpurx_flow_key *k = &r->key;
	const int icmp = rec_is_icmp(k);

	if (k->ip_version == 4) {
		struct rec4 *v = &u->v4;

		*v = (struct rec4){
			REC_COMMON(r, k, ingress, icmp),
			.src = ((uint32_t)k->src[12] << 24) |
				((uint32_t)k->src[13] << 16) |
				((uint32_t)k->src[14] << 8) | k->src[15],
			.dst = ((uint32_t)k->dst[12] << 24) |
				((uint32_t)k->dst[13] << 16) |
				((uint32_t)k->dst[14] << 8) | k->dst[15],
		};
		memcpy(v->src_mac, r->attr.src_mac, 6);
		memcpy(v->dst_mac, r->attr.dst_mac, 6);
		*tid = TID_V4;
		return sizeof(*v);
	}
	struct rec6 *v = &u->v6;

	*v = (struct rec6){ REC_COMMON(r, k, ingress, icmp) };
	memcpy(v->src_mac, r->attr.src_mac, 6);
	memcpy(v->dst_mac, r->attr.dst_mac, 6);
	memcpy(v->src, k->src, 16);
	memcpy(v->dst, k->dst, 16);
	*tid = TID_V6;
	return sizeof(*v);
}

static void
counts_add(struct gpurx_ipfix_counts *c, const struct gpurx_flow_rec *r)
{
	c->records++;
	c->packets += r->packets;
	c->bytes += r->bytes;
	c->by_reason[r->reason < GPURX_FLOW_END_KINDS ? r->reason : 0]++;
}

/* The domain of r: its port's (the first port's for an index past the
 * ports: the key of a table never told its queues' ports). */
static __rte_always_inline struct dom *
dom_of(struct gpurx_ipfix *x, const struct gpurx_flow_rec *r)
{
	const unsigned int p = gpurx_flow_key_port(&r->key);

	return &x->doms[p < x->n_doms ? p : 0];
}

/* r into its domain's data message, the one before sent once full. */
static __rte_always_inline void
add_one(struct gpurx_ipfix *x, const struct gpurx_flow_rec *r)
{
	struct dom *d = dom_of(x, r);
	struct gpurx_ipfix_mb *m = &d->mb[mb_idx(x, r)];

	if (gpurx_ipfix_mb_put(m, r) != 0) {
		emit_mb(x, d, m);
		/* A record always fits an empty message. */
		gpurx_ipfix_mb_put(m, r);
	}
	d->records++;
	counts_add(&x->counts, r);
}

void
gpurx_ipfix_add(struct gpurx_ipfix *x, const struct gpurx_flow_rec *r)
{
	if (!x->lib_failed)
		add_one(x, r);
}

/* --- Encoders -------------------------------------------------------------- */

static int add_templates(int *failed, fbInfoModel_t *model,
		fbSession_t *session, uint32_t domain);

/* Records a slice at least: fewer are not worth waking a thread. */
#define ENC_SLICE_MIN 256
/* Records a drain takes at most with encoders (its batch's pointers). */
#define ENC_BATCH_MAX 65536u

/* Grows *buf (*cap elements of size sz) to hold need; 0 or -1. */
static int
grow(void **buf, size_t *cap, size_t need, size_t sz, size_t min)
{
	size_t c = RTE_MAX(*cap, min);
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*buf, c * sz);
	if (p == NULL)
		return -1;
	*buf = p;
	*cap = c;
	return 0;
}

/* Room in the encoder's out[b] for a whole message after those it
 * holds: its builder b's buffer. 0; -1 (said, e->failed). */
static int
enc_room(struct enc *e, unsigned int b)
{
	if (grow((void **)&e->out[b], &e->out_cap[b],
			e->out_len[b] + e->mb[b].mtu, 1, 2 * MTU_STREAM) != 0) {
		FLOW_LOG(ERR, "error: flow export: encoder: out of memory "
			"for its messages\n");
		e->failed = 1;
		return -1;
	}
	e->mb[b].buf = e->out[b] + e->out_len[b];
	return 0;
}

/* The encoder's message of builder b ends where it was built, in
 * out[b]; room for the next after it. */
static int
enc_emit(struct enc *e, unsigned int b)
{
	const uint32_t records = e->mb[b].records;
	const uint32_t len = gpurx_ipfix_mb_end(&e->mb[b]);
	size_t msgs_cap = e->msgs_cap;

	if (len == 0)
		return 0;
	if (grow((void **)&e->msgs, &msgs_cap, e->n_msgs + 1,
			sizeof(*e->msgs), 64) != 0) {
		FLOW_LOG(ERR, "error: flow export: encoder: out of memory "
			"for its messages\n");
		e->failed = 1;
		return -1;
	}
	e->msgs_cap = (uint32_t)msgs_cap;
	e->msgs[e->n_msgs++] = (struct enc_msg){ e->out_len[b], len, records,
		b };
	e->out_len[b] += len;
	return enc_room(e, b);
}

/* The encoder's slice into whole messages (the last ones too). */
static void
enc_slice(struct enc *e)
{
	e->n_msgs = 0;
	memset(&e->counts, 0, sizeof(e->counts));
	for (unsigned int b = 0; b < N_MB; b++) {
		e->out_len[b] = 0;
		if (e->failed || enc_room(e, b) != 0)
			return;
	}
	for (uint32_t i = 0; i < e->n; i++) {
		const struct gpurx_flow_rec *r = e->recs[i];
		const unsigned int b = mb_idx(e->x, r);

		if (gpurx_ipfix_mb_put(&e->mb[b], r) != 0) {
			if (enc_emit(e, b) != 0)
				return;
			/* A record always fits an empty message. */
			gpurx_ipfix_mb_put(&e->mb[b], r);
		}
		counts_add(&e->counts, r);
	}
	for (unsigned int b = 0; b < N_MB; b++)
		if (enc_emit(e, b) != 0)
			return;
}

static void *
enc_main(void *arg)
{
	struct enc *e = arg;
	struct gpurx_ipfix *x = e->x;
	const unsigned int idx = (unsigned int)(e - x->encs);
	uint64_t seen = 0;

	pthread_mutex_lock(&x->mu);
	for (;;) {
		while (!x->quit && x->round == seen)
			pthread_cond_wait(&x->go, &x->mu);
		if (x->quit)
			break;
		seen = x->round;
		if (idx < x->round_k) {
			pthread_mutex_unlock(&x->mu);
			enc_slice(e);
			pthread_mutex_lock(&x->mu);
		}
		e->round_done = seen;
		pthread_cond_signal(&x->done);
	}
	pthread_mutex_unlock(&x->mu);
	return NULL;
}

/* The helper threads, on the calling (draining) thread's CPUs. A thread
 * that cannot start leaves the encoding to fewer (said once). */
static void
enc_start(struct gpurx_ipfix *x)
{
	if (x->helpers_failed || x->n_helpers + 1 >= x->n_enc)
		return;
	for (unsigned int i = x->n_helpers + 1; i < x->n_enc; i++) {
		struct enc *e = &x->encs[i];
		char name[16];
		int rc = pthread_create(&e->th, NULL, enc_main, e);

		if (rc != 0) {
			FLOW_LOG(WARNING, "warning: flow export: encoder thread "
				"%u: %s; %u encode\n", i, strerror(rc), i);
			x->helpers_failed = 1;
			return;
		}
		snprintf(name, sizeof(name), "gpurx-ipfix-%u", i % 100);
		pthread_setname_np(e->th, name);
		e->th_on = 1;
		x->n_helpers++;
	}
}

/*
 * n records of domain d, recs[0, n) (n >= 2 * ENC_SLICE_MIN), out
 * through the encoders: a slice each, encoded at once; each slice's
 * messages, in order and numbered in d's sequence, to the destinations
 * once it and the slices before it are done.
 */
static void
enc_round(struct gpurx_ipfix *x, struct dom *d,
		const struct gpurx_flow_rec **recs, uint32_t n)
{
	const unsigned int k = RTE_MIN(x->n_helpers + 1, n / ENC_SLICE_MIN);

	/* What d's own message holds came first. */
	emit(x, d);
	if (x->lib_failed)
		return;
	for (unsigned int i = 0; i < k; i++) {
		struct enc *e = &x->encs[i];
		const uint32_t from = (uint32_t)((uint64_t)n * i / k);

		e->recs = recs + from;
		e->n = (uint32_t)((uint64_t)n * (i + 1) / k) - from;
		for (unsigned int b = 0; b < N_MB; b++) {
			e->mb[b].domain = d->domain;
			e->mb[b].ingress = d->ingress;
		}
	}
	if (k > 1) {
		/* The mutex orders the slices' set-up before the helpers'
		 * reads, and their results before the reads below. */
		pthread_mutex_lock(&x->mu);
		x->round_k = k;
		x->round++;
		pthread_cond_broadcast(&x->go);
		pthread_mutex_unlock(&x->mu);
	}
	enc_slice(&x->encs[0]);
	for (unsigned int i = 0; i < k; i++) {
		struct enc *e = &x->encs[i];

		/* Slice i's messages go out while the slices after it are
		 * still being encoded: its helper alone is waited for. The
		 * mutex orders the helper's writes of its slice's results
		 * (out, msgs, counts, failed) before the reads below. Every
		 * helper is done before the round ends: the batch and the
		 * ring's records are not touched after. */
		if (i > 0) {
			pthread_mutex_lock(&x->mu);
			while (e->round_done != x->round)
				pthread_cond_wait(&x->done, &x->mu);
			pthread_mutex_unlock(&x->mu);
		}
		if (e->failed)
			x->lib_failed = 1;
		for (uint32_t m = 0; m < e->n_msgs && !x->lib_failed; m++)
			send_msg(x, d, e->out[e->msgs[m].b] + e->msgs[m].off,
				e->msgs[m].len, e->msgs[m].records,
				e->msgs[m].records, 0);
		d->records += e->counts.records;
		x->counts.records += e->counts.records;
		x->counts.packets += e->counts.packets;
		x->counts.bytes += e->counts.bytes;
		for (unsigned int r = 0; r < GPURX_FLOW_END_KINDS; r++)
			x->counts.by_reason[r] += e->counts.by_reason[r];
	}
}

/*
 * d's libfixbuf message builder into a buffer of its own (d->msg,
 * MTU_STREAM bytes): d->session (of x->model) holding the templates,
 * d->exporter and d->fbuf, in manual mode. 0; -1 after saying what
 * failed, what was made left in d for gpurx_ipfix_free().
 */
static int
fb_open(struct gpurx_ipfix *x, struct dom *d)
{
	d->msg = malloc(MTU_STREAM);
	d->session = fbSessionAlloc(x->model);
	if (d->msg == NULL || d->session == NULL) {
		FLOW_LOG(ERR, "error: flow export: out of memory\n");
		return -1;
	}
	if (add_templates(&x->lib_failed, x->model, d->session,
			d->domain) != 0)
		return -1;
	d->exporter = fbExporterAllocBuffer(d->msg, x->has_udp ?
		MTU_DATAGRAM : MTU_STREAM);
	d->fbuf = d->exporter != NULL ?
		fBufAllocForExport(d->session, d->exporter) : NULL;
	if (d->fbuf == NULL) {
		FLOW_LOG(ERR, "error: flow export: libfixbuf cannot make "
			"an export buffer\n");
		return -1;
	}
	fBufSetAutomaticMode(d->fbuf, FALSE);
	return 0;
}

/* A data message builder of x's MTU, d's domain and ingress. */
static struct gpurx_ipfix_mb
mb_of(const struct gpurx_ipfix *x, const struct dom *d, uint8_t *buf)
{
	return (struct gpurx_ipfix_mb){
		.buf = buf,
		.mtu = x->has_udp ? MTU_DATAGRAM : MTU_STREAM,
		.domain = d->domain,
		.ingress = d->ingress,
	};
}

static void
enc_free(struct gpurx_ipfix *x)
{
	if (x->sync_on) {
		pthread_mutex_lock(&x->mu);
		x->quit = 1;
		pthread_cond_broadcast(&x->go);
		pthread_mutex_unlock(&x->mu);
	}
	for (unsigned int i = 0; x->encs != NULL && i < x->n_enc; i++) {
		struct enc *e = &x->encs[i];

		if (e->th_on)
			pthread_join(e->th, NULL);
		for (unsigned int b = 0; b < N_MB; b++)
			free(e->out[b]);
		free(e->msgs);
	}
	if (x->sync_on) {
		pthread_mutex_destroy(&x->mu);
		pthread_cond_destroy(&x->go);
		pthread_cond_destroy(&x->done);
	}
	free(x->encs);
	free(x->batch);
	free(x->by_dom);
	x->encs = NULL;
	x->batch = NULL;
	x->by_dom = NULL;
	x->n_enc = 0;
	x->sync_on = 0;
}

int
gpurx_ipfix_set_encoders(struct gpurx_ipfix *x, unsigned int n)
{
	if (n < 1 || n > GPURX_IPFIX_ENCODERS_MAX) {
		FLOW_LOG(ERR, "error: flow export: %u encoders: from 1 to %u\n",
			n, GPURX_IPFIX_ENCODERS_MAX);
		return -EINVAL;
	}
	if (x->encs != NULL || x->counts.records != 0) {
		FLOW_LOG(ERR, "error: flow export: encoders are set once, "
			"before any record\n");
		return -EBUSY;
	}
	if (n == 1)
		return 0;
	x->encs = calloc(n, sizeof(*x->encs));
	x->batch = malloc(ENC_BATCH_MAX * sizeof(*x->batch));
	if (x->n_doms > 1)
		x->by_dom = malloc(ENC_BATCH_MAX * sizeof(*x->by_dom));
	if (x->encs == NULL || x->batch == NULL ||
			(x->n_doms > 1 && x->by_dom == NULL)) {
		FLOW_LOG(ERR, "error: flow export: out of memory\n");
		enc_free(x);
		return -ENOMEM;
	}
	x->n_enc = n;
	if (pthread_mutex_init(&x->mu, NULL) != 0) {
		enc_free(x);
		return -ENOMEM;
	}
	if (pthread_cond_init(&x->go, NULL) != 0) {
		pthread_mutex_destroy(&x->mu);
		enc_free(x);
		return -ENOMEM;
	}
	if (pthread_cond_init(&x->done, NULL) != 0) {
		pthread_cond_destroy(&x->go);
		pthread_mutex_destroy(&x->mu);
		enc_free(x);
		return -ENOMEM;
	}
	x->sync_on = 1;
	for (unsigned int i = 0; i < n; i++) {
		x->encs[i].x = x;
		for (unsigned int b = 0; b < N_MB; b++)
			x->encs[i].mb[b] = mb_of(x, &x->doms[0], NULL);
	}
	return 0;
}

unsigned int
gpurx_ipfix_encoders(const struct gpurx_ipfix *x)
{
	return x->n_enc < 2 ? 1 : x->n_enc;
}

/* n records of domain d, recs[0, n), through the encoders when there
 * are enough of them. */
static void
enc_dom(struct gpurx_ipfix *x, struct dom *d,
		const struct gpurx_flow_rec **recs, uint32_t n)
{
	if (n >= 2 * ENC_SLICE_MIN) {
		enc_round(x, d, recs, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		add_one(x, recs[i]);
}

/*
 * The n records of x->batch out, through the encoders where there are
 * enough: with several domains each domain's apart (an encoder's
 * messages are of one domain), each in the batch's order, which is all
 * a domain's sequence asks.
 */
static void
enc_batch(struct gpurx_ipfix *x, uint32_t n)
{
	uint32_t at[GPURX_IPFIX_PORTS_MAX + 1] = { 0 };

	if (x->n_doms == 1) {
		enc_dom(x, &x->doms[0], x->batch, n);
		return;
	}
	/* A counting sort by domain, stable. */
	for (uint32_t i = 0; i < n; i++)
		at[dom_of(x, x->batch[i]) - x->doms + 1]++;
	for (unsigned int k = 0; k < x->n_doms; k++)
		at[k + 1] += at[k];
	for (uint32_t i = 0; i < n; i++)
		x->by_dom[at[dom_of(x, x->batch[i]) - x->doms]++] = x->batch[i];
	/* at[k] is now where domain k + 1 begins. */
	for (unsigned int k = 0; k < x->n_doms && !x->lib_failed; k++) {
		const uint32_t from = k == 0 ? 0 : at[k - 1];

		enc_dom(x, &x->doms[k], x->by_dom + from, at[k] - from);
	}
}

uint32_t
gpurx_ipfix_drain(struct gpurx_ipfix *x, struct gpurx_flow_ring *ring,
		uint64_t *tail, uint32_t max)
{
	const struct gpurx_flow_rec *r;
	uint32_t n = 0, m = 0;

	sinks_start(x);
	if (x->n_enc >= 2 && !x->lib_failed)
		enc_start(x);
	if (x->n_helpers == 0 || x->lib_failed) {
		while (n < max && (r = gpurx_flow_ring_peek(ring, *tail)) != NULL) {
			/* An empty position: a reservation that ended nothing. */
			if (r->reason != GPURX_FLOW_END_NONE && !x->lib_failed)
				add_one(x, r);
			(*tail)++;
			n++;
		}
	} else {
		/* The records stay where they are until consumed (and, in
		 * GPU memory, until the next pull): pointers to them. */
		max = RTE_MIN(max, ENC_BATCH_MAX);
		while (n < max && (r = gpurx_flow_ring_peek(ring, *tail)) != NULL) {
			if (r->reason != GPURX_FLOW_END_NONE)
				x->batch[m++] = r;
			(*tail)++;
			n++;
		}
		enc_batch(x, m);
	}
	if (n != 0)
		gpurx_flow_ring_consumed(ring, *tail);
	return n;
}

void
gpurx_ipfix_add_many(struct gpurx_ipfix *x, const struct gpurx_flow_rec *recs,
		uint32_t n)
{
	uint32_t i = 0;

	sinks_start(x);
	if (x->n_enc >= 2 && !x->lib_failed)
		enc_start(x);
	while (x->n_helpers != 0 && !x->lib_failed &&
			n - i >= 2 * ENC_SLICE_MIN) {
		const uint32_t m = RTE_MIN(n - i, ENC_BATCH_MAX);

		for (uint32_t j = 0; j < m; j++)
			x->batch[j] = &recs[i + j];
		enc_batch(x, m);
		i += m;
	}
	for (; i < n && !x->lib_failed; i++)
		add_one(x, &recs[i]);
}

void
gpurx_ipfix_set_meter_counts(struct gpurx_ipfix *x, uint64_t ignored_packets,
		uint64_t not_sent)
{
	x->ignored_packets = ignored_packets;
	x->not_sent = not_sent;
}

/*
 * Each domain's statistics options record in a message of its own,
 * counting the domain's messages before it. The meter's counts and the
 * records a destination lost are not known by port: they go in the first
 * domain's record, the others' have 0 there.
 */
static void
send_stats(struct gpurx_ipfix *x)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < x->n_sinks; i++)
		lost = RTE_MAX(lost, x->sinks[i].lost_records);
	for (unsigned int i = 0; i < x->n_doms && !x->lib_failed; i++) {
		struct dom *d = &x->doms[i];
		struct rec_stats v = {
			.domain = d->domain,
			.records = d->records,
			.ignored_packets = i == 0 ? x->ignored_packets : 0,
		};

		emit(x, d);
		if (x->lib_failed)
			return;
		v.messages = d->msgs_out;
		v.octets = d->octets_out;
		v.not_sent = i == 0 ? x->not_sent + lost : 0;
		if (put(x, d, TID_STATS, &v, sizeof(v)) != 0)
			return;
		d->stats_in_msg = 1;
		emit(x, d);
	}
	x->last_stats = gpuapp_mono_ns();
}

void
gpurx_ipfix_connect(struct gpurx_ipfix *x)
{
	if (reconnect(x))
		send_templates(x);
}

void
gpurx_ipfix_tick(struct gpurx_ipfix *x)
{
	emit_all(x);
	/* Into the file within a tick too. */
	for (unsigned int i = 0; i < x->n_sinks; i++)
		if (x->sinks[i].th_on)
			sink_hand(&x->sinks[i]);
	if (reconnect(x) || (x->has_udp && gpuapp_mono_ns() - x->last_templates >=
			GPURX_IPFIX_TEMPLATE_S * 1000000000ull))
		send_templates(x);
	if (gpuapp_mono_ns() - x->last_stats >=
			GPURX_IPFIX_STATS_S * 1000000000ull)
		send_stats(x);
}

/* --- Set-up ---------------------------------------------------------------- */

/* The template of records with these addresses, as internal template
 * (padding included, flags 1) or as the one the messages carry. */
static int
append_specs(fbTemplate_t *t, fbInfoElementSpec_t *addr,
		fbInfoElementSpec_t *icmp, uint32_t flags, GError **err)
{
	return fbTemplateAppendSpecArray(t, spec_head, flags, err) &&
		fbTemplateAppendSpecArray(t, addr, flags, err) &&
		fbTemplateAppendSpecArray(t, spec_tail, flags, err) &&
		fbTemplateAppendSpecArray(t, icmp, flags, err) &&
		fbTemplateAppendSpecArray(t, spec_l2, flags, err);
}

/* addr NULL: the statistics options template (spec_stats, scope 1).
 * -1 with *failed set after saying why. */
static int
add_template(int *failed, fbInfoModel_t *model,
		fbSession_t *session, uint16_t tid, fbInfoElementSpec_t *addr,
		fbInfoElementSpec_t *icmp, size_t rec_len)
{
	fbTemplate_t *internal = fbTemplateAlloc(model);
	fbTemplate_t *external = fbTemplateAlloc(model);
	GError *err = NULL;

	if (addr == NULL) {
		if (!fbTemplateAppendSpecArray(internal, spec_stats, 1, &err) ||
				!fbTemplateAppendSpecArray(external, spec_stats,
					0, &err))
			goto fail_both;
		/* Scope: the first element, observationDomainId. */
		fbTemplateSetOptionsScope(internal, 1);
		fbTemplateSetOptionsScope(external, 1);
	} else if (!append_specs(internal, addr, icmp, 1, &err) ||
			!append_specs(external, addr, icmp, 0, &err)) {
		goto fail_both;
	}
	if (fbTemplateGetIELenOfMemBuffer(internal) != rec_len) {
		FLOW_LOG(ERR, "error: flow export: template %#x describes %u "
			"bytes, the record has %zu\n", tid,
			fbTemplateGetIELenOfMemBuffer(internal), rec_len);
		*failed = 1;
		goto fail_both;
	}
	if (!fbSessionAddTemplate(session, TRUE, tid, internal, &err))
		goto fail_both;
	if (!fbSessionAddTemplate(session, FALSE, tid, external, &err)) {
		fbTemplateFreeUnused(external);
		goto fail;
	}
	return 0;
fail_both:
	fbTemplateFreeUnused(internal);
	fbTemplateFreeUnused(external);
fail:
	if (err != NULL || !*failed)
		lib_error_at(failed, "templates", err);
	return -1;
}

/* Every template, into a session of observation domain `domain`. */
static int
add_templates(int *failed, fbInfoModel_t *model, fbSession_t *session,
		uint32_t domain)
{
	fbSessionSetDomain(session, domain);
	return add_template(failed, model, session, TID_V4, spec_addr4,
			spec_icmp4, sizeof(struct rec4)) != 0 ||
		add_template(failed, model, session, TID_V6, spec_addr6,
			spec_icmp6, sizeof(struct rec6)) != 0 ||
		add_template(failed, model, session, TID_STATS, NULL, NULL,
			sizeof(struct rec_stats)) != 0 ? -1 : 0;
}

static int
open_file(struct gpurx_ipfix *x, const char *path)
{
	struct sink *s = &x->sinks[x->n_sinks++];

	s->kind = SINK_FILE;
	snprintf(s->name, sizeof(s->name), "file %s", path);
	s->fp = fopen(path, "wb");
	if (s->fp == NULL) {
		FLOW_LOG(ERR, "error: --ipfix-file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int
open_collector(struct gpurx_ipfix *x, const char *arg)
{
	struct sink *s = &x->sinks[x->n_sinks++];
	struct gpurx_ipfix_target t;
	struct addrinfo hints, *ai;
	char why[512];
	int rc;

	if (gpurx_ipfix_target_parse(arg, &t, why, sizeof(why)) != 0) {
		FLOW_LOG(ERR, "error: --ipfix: %s\n", why);
		return -1;
	}
	s->kind = t.proto == GPURX_IPFIX_TCP ? SINK_TCP : SINK_UDP;
	snprintf(s->name, sizeof(s->name), "%s://%s%s%s:%s",
		s->kind == SINK_TCP ? "tcp" : "udp",
		strchr(t.host, ':') ? "[" : "", t.host,
		strchr(t.host, ':') ? "]" : "", t.port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = s->kind == SINK_TCP ? SOCK_STREAM : SOCK_DGRAM;
	rc = getaddrinfo(t.host, t.port, &hints, &s->addrs);
	if (rc != 0) {
		FLOW_LOG(ERR, "error: --ipfix %s: cannot resolve %s: %s\n",
			arg, t.host, gai_strerror(rc));
		s->addrs = NULL;
		return -1;
	}
	if (s->kind == SINK_TCP)
		return 0;
	x->has_udp = 1;
	/* Connected: the kernel reports an ICMP unreachable on a later
	 * send, so a collector that is not there shows. */
	ai = s->addrs;
	s->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		ai->ai_protocol);
	if (s->fd < 0 || connect(s->fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		FLOW_LOG(ERR, "error: --ipfix %s: %s\n", arg, strerror(errno));
		return -1;
	}
	gpurx_ipfix_udp_init(&s->udp, s->fd, s->name);
	return 0;
}

/* --- The data messages against libfixbuf's ------------------------------ */

/*
 * Ends both messages, libfixbuf's (ref: fbuf's, from its exporter's
 * buffer) and the builder's, and compares them; the builder's sequence
 * number set as seq_patch() sets it, from *seq. 0; -1 with why.
 */
static int
check_msg(fBuf_t *fbuf, fbExporter_t *exporter, const uint8_t *ref,
		struct gpurx_ipfix_mb *m, uint32_t *seq, uint32_t msg,
		char *why, size_t why_len)
{
	const uint32_t records = m->records;
	GError *err = NULL;
	uint32_t len, ref_len;

	if (!fBufEmit(fbuf, &err)) {
		snprintf(why, why_len, "fBufEmit: %s", err->message);
		g_clear_error(&err);
		return -1;
	}
	ref_len = (uint32_t)fbExporterGetMsgLen(exporter);
	len = gpurx_ipfix_mb_end(m);
	if (len != 0)
		gpurx_ipfix_be32(m->buf + 8, *seq);
	*seq += records;
	for (uint32_t i = 0; i < RTE_MIN(len, ref_len); i++) {
		if (m->buf[i] != ref[i]) {
			snprintf(why, why_len, "message %u, byte %u: libfixbuf "
				"wrote %#04x, the builder %#04x", msg, i, ref[i],
				m->buf[i]);
			return -1;
		}
	}
	if (len != ref_len) {
		snprintf(why, why_len, "message %u: libfixbuf wrote %u bytes, "
			"the builder %u", msg, ref_len, len);
		return -1;
	}
	return 0;
}

int
gpurx_ipfix_enc_check(fbInfoModel_t *model, const struct gpurx_flow_rec *recs,
		uint32_t n, uint32_t mtu, uint32_t domain, uint32_t ingress,
		char *why, size_t why_len)
{
	/* Any fixed time: libfixbuf's would be its clock's. */
	const uint32_t extime = 0x5a5b5c5d;
	uint8_t *ref = malloc(mtu);
	struct gpurx_ipfix_mb m = {
		.buf = malloc(mtu), .mtu = mtu, .domain = domain,
		.extime = extime, .ingress = ingress,
	};
	fbSession_t *session = fbSessionAlloc(model);
	fbExporter_t *exporter = NULL;
	fBuf_t *fbuf = NULL;
	GError *err = NULL;
	uint16_t cur_tid = 0;
	uint32_t seq = 0, msg = 0;
	int failed = 0, rc = -1;

	snprintf(why, why_len, "out of memory");
	if (ref == NULL || m.buf == NULL || session == NULL)
		goto out;
	if (add_templates(&failed, model, session, domain) != 0) {
		snprintf(why, why_len, "libfixbuf refused the templates");
		goto out;
	}
	exporter = fbExporterAllocBuffer(ref, mtu);
	fbuf = exporter != NULL ? fBufAllocForExport(session, exporter) : NULL;
	if (fbuf == NULL) {
		snprintf(why, why_len, "libfixbuf cannot make a buffer");
		goto out;
	}
	fBufSetAutomaticMode(fbuf, FALSE);
	fBufSetExportTime(fbuf, extime);
	for (uint32_t i = 0; i < n; i++) {
		union rec_any u;
		uint16_t tid;
		const size_t len = rec_convert(&recs[i], ingress, &u, &tid);
		int full = fb_put(fbuf, &cur_tid, tid, &u, len, &err);

		if (full < 0)
			break;
		if (gpurx_ipfix_mb_put(&m, &recs[i]) != full) {
			snprintf(why, why_len, "record %u: libfixbuf %s a message, "
				"the builder %s", i, full ? "ended" : "went on with",
				full ? "went on" : "ended it");
			goto out;
		}
		if (full == 0)
			continue;
		if (check_msg(fbuf, exporter, ref, &m, &seq, msg++, why,
				why_len) != 0)
			goto out;
		/* A record always fits an empty message. */
		if (fb_put(fbuf, &cur_tid, tid, &u, len, &err) != 0)
			break;
		gpurx_ipfix_mb_put(&m, &recs[i]);
	}
	if (err != NULL) {
		snprintf(why, why_len, "libfixbuf: %s", err->message);
		g_clear_error(&err);
		goto out;
	}
	rc = check_msg(fbuf, exporter, ref, &m, &seq, msg, why, why_len);
out:
	/* libfixbuf's API frees an exporter only with its buffer (never
	 * NULL: glib aborts when out of memory). */
	if (fbuf != NULL)
		fBufFree(fbuf);		/* and the session and exporter */
	else if (session != NULL)
		fbSessionFree(session);
	free(m.buf);
	free(ref);
	return rc;
}

/*
 * Record i of the opening check: every field a value of its own and no
 * byte 0 (a field put out of place shows), the versions, ICMP and not,
 * in runs and alternating (sets end and begin).
 */
static void
check_rec(struct gpurx_flow_rec *r, uint32_t i)
{
	uint8_t *b = (uint8_t *)r;

	for (size_t j = 0; j < sizeof(*r); j++)
		b[j] = (uint8_t)(1 + (i * 131 + j * 7) % 251);
	r->key.ip_version = (i % 7) < 3 || (i & 16) ? 4 : 6;
	if (i % 5 == 0)
		r->key.proto = r->key.ip_version == 4 ? 1 : 58;
}

/*
 * The builder against libfixbuf (the one this process runs) before any
 * message: a libfixbuf whose encoding differs (a version that encodes
 * these fixed-length elements otherwise) must not leave collectors with
 * records that only look right. 0; -1 after saying why.
 */
static int
enc_check(struct gpurx_ipfix *x)
{
	struct gpurx_flow_rec recs[64];
	char why[200];

	for (uint32_t i = 0; i < RTE_DIM(recs); i++)
		check_rec(&recs[i], i);
	/* At the datagrams' MTU: messages end among the records. */
	if (gpurx_ipfix_enc_check(x->model, recs, RTE_DIM(recs), MTU_DATAGRAM,
			x->doms[0].domain, x->doms[0].ingress, why,
			sizeof(why)) == 0)
		return 0;
	FLOW_LOG(ERR, "error: flow export: the data messages differ from "
		"libfixbuf's own (%s): this build does not match the libfixbuf "
		"it runs with\n", why);
	return -1;
}

struct gpurx_ipfix *
gpurx_ipfix_open_ports(const char *collector, const char *file,
		const struct gpurx_ipfix_port *ports, unsigned int n_ports)
{
	struct gpurx_ipfix *x;

	if (n_ports == 0 || n_ports > GPURX_IPFIX_PORTS_MAX) {
		FLOW_LOG(ERR, "error: flow export: %u ports: from 1 to %u\n",
			n_ports, GPURX_IPFIX_PORTS_MAX);
		return NULL;
	}
	for (unsigned int i = 0; i < n_ports; i++)
		for (unsigned int j = 0; j < i; j++)
			if (ports[i].domain == ports[j].domain) {
				FLOW_LOG(ERR, "error: flow export: ports %u and "
					"%u in one observation domain (%u): "
					"each port's records need their own\n",
					ports[j].ingress, ports[i].ingress,
					ports[i].domain);
				return NULL;
			}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		FLOW_LOG(ERR, "error: flow export: out of memory\n");
		return NULL;
	}
	for (unsigned int i = 0; i < 2; i++)
		x->sinks[i].fd = -1;
	x->n_doms = n_ports;
	for (unsigned int i = 0; i < n_ports; i++) {
		x->doms[i].domain = ports[i].domain;
		x->doms[i].ingress = ports[i].ingress;
	}
	x->rate = GPURX_IPFIX_RATE_DEFAULT;
	if ((file != NULL && open_file(x, file) != 0) ||
			(collector != NULL && open_collector(x, collector) != 0))
		goto fail;
	snprintf(x->describe, sizeof(x->describe), "%s%s%s",
		collector ? x->sinks[x->n_sinks - 1].name : "",
		collector && file ? " and " : "", file ? x->sinks[0].name : "");
	/* Sequence numbers and templates are per observation domain. */
	x->model = fbInfoModelAlloc();
	if (x->model == NULL) {
		FLOW_LOG(ERR, "error: flow export: out of memory\n");
		goto fail;
	}
	for (unsigned int i = 0; i < x->n_doms; i++) {
		struct dom *d = &x->doms[i];

		for (unsigned int b = 0; b < N_MB; b++) {
			d->mb[b] = mb_of(x, d, malloc(MTU_STREAM));
			if (d->mb[b].buf == NULL) {
				FLOW_LOG(ERR, "error: flow export: out of "
					"memory\n");
				goto fail;
			}
		}
		if (fb_open(x, d) != 0)
			goto fail;
	}
	if (enc_check(x) != 0)
		goto fail;
	send_templates(x);
	if (x->lib_failed)
		goto fail;
	/* The first statistics record one period from now. */
	x->last_stats = gpuapp_mono_ns();
	return x;
fail:
	gpurx_ipfix_free(x);
	return NULL;
}

struct gpurx_ipfix *
gpurx_ipfix_open(const char *collector, const char *file, uint32_t domain,
		uint32_t ingress)
{
	const struct gpurx_ipfix_port port = { domain, ingress };

	return gpurx_ipfix_open_ports(collector, file, &port, 1);
}

void
gpurx_ipfix_set_rate(struct gpurx_ipfix *x, uint64_t rate)
{
	x->rate = rate;
}

int
gpurx_ipfix_has_udp(const struct gpurx_ipfix *x)
{
	return x->has_udp;
}

const char *
gpurx_ipfix_describe(const struct gpurx_ipfix *x)
{
	return x->describe;
}

int
gpurx_ipfix_close(struct gpurx_ipfix *x)
{
	int rc = 0;

	/* The last statistics: every record counted (UDP's datagrams sent
	 * first, so that every one lost is). */
	for (unsigned int i = 0; i < x->n_sinks; i++)
		if (x->sinks[i].kind == SINK_UDP)
			sink_drain(&x->sinks[i]);
	send_stats(x);
	for (unsigned int i = 0; i < x->n_sinks; i++) {
		struct sink *s = &x->sinks[i];

		sink_stop(s);
		if (s->fp != NULL && fclose(s->fp) != 0 && !s->failed) {
			FLOW_LOG(ERR, "error: flow export to %s: %s\n", s->name,
				strerror(errno));
			s->failed = 1;
		}
		s->fp = NULL;
		sink_close_fd(s);
		if (s->failed) {
			FLOW_LOG(ERR, "error: flow export: %s is incomplete\n",
				s->name);
			rc = -1;
		}
	}
	return x->lib_failed ? -1 : rc;
}

void
gpurx_ipfix_free(struct gpurx_ipfix *x)
{
	if (x == NULL)
		return;
	enc_free(x);
	for (unsigned int i = 0; i < x->n_sinks; i++) {
		struct sink *s = &x->sinks[i];

		sink_stop(s);
		if (s->fp != NULL)
			fclose(s->fp);
		sink_close_fd(s);
		if (s->addrs != NULL)
			freeaddrinfo(s->addrs);
	}
	for (unsigned int i = 0; i < x->n_doms; i++) {
		struct dom *d = &x->doms[i];

		if (d->fbuf != NULL) {
			fBufFree(d->fbuf);	/* and the session and exporter */
		} else if (d->session != NULL) {
			fbSessionFree(d->session);
		}
		free(d->msg);
		for (unsigned int b = 0; b < N_MB; b++)
			free(d->mb[b].buf);
	}
	if (x->model != NULL)
		fbInfoModelFree(x->model);
	free(x);
}

const struct gpurx_ipfix_counts *
gpurx_ipfix_counts(const struct gpurx_ipfix *x)
{
	return &x->counts;
}

uint64_t
gpurx_ipfix_lost(const struct gpurx_ipfix *x)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < x->n_sinks; i++)
		lost += x->sinks[i].lost_records;
	return lost;
}

void
gpurx_ipfix_print_sinks(FILE *f, const struct gpurx_ipfix *x)
{
	for (unsigned int i = 0; i < x->n_sinks; i++) {
		const struct sink *s = &x->sinks[i];

		fprintf(f, "  -> %s: %" PRIu64 " messages, %" PRIu64
			" records lost%s%s%s\n", s->name, s->messages,
			s->lost_records, s->last_error[0] ? " (last: " : "",
			s->last_error[0] ? s->last_error : "",
			s->last_error[0] ? ")" : "");
	}
}

unsigned int
gpurx_ipfix_n_sinks(const struct gpurx_ipfix *x)
{
	return x->n_sinks;
}

const char *
gpurx_ipfix_sink(const struct gpurx_ipfix *x, unsigned int i,
		uint64_t *messages, uint64_t *lost_records)
{
	const struct sink *s = &x->sinks[i];

	*messages = s->messages;
	*lost_records = s->lost_records;
	return s->name;
}
