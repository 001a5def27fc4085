/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPFIX export of dpdk-gpu-rx's flow records with libfixbuf.
 *
 * libfixbuf builds every message (templates, data sets, sequence
 * numbers, export time, observation domain) into a buffer exporter
 * (fbExporterAllocBuffer) in manual mode, so each message is known the
 * moment it is complete; this file only moves the bytes: to a file, a
 * UDP socket (a datagram per message, templates again every
 * TEMPLATE_REFRESH_S) and a TCP connection (templates first on every
 * connection). The exporter thread never blocks the packet path: the
 * RX lcores and the GPU only write the export ring (flow_ring.h); when
 * the thread falls behind, the ring fills and flows stay in the table
 * longer (counted); when a collector cannot be reached, its records are
 * counted lost and the thread goes on (a TCP collector is retried every
 * second).
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
#include <unistd.h>

#include <fixbuf/public.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "app.h"
#include "flow_export.h"
#include "flow_gpu.h"
#include "ipfix_target.h"

struct gpurx_flow_clock gpurx_flow_clocks[GPURX_MAX_QUEUES];

#define TID_V4 0x0100
#define TID_V6 0x0101
/* A message per datagram within a 1500-byte MTU; on a stream, large
 * messages (a write per 65 KB). */
#define MTU_DATAGRAM 1400
#define MTU_STREAM 65000
#define TICK_MS 100
#define TEMPLATE_REFRESH_S 10
#define RECONNECT_MS 1000
#define CONNECT_TIMEOUT_MS 500
#define SEND_TIMEOUT_MS 500
#define WARN_EVERY_S 10
#define DRAIN_BATCH 4096
/* UDP pacing: at most this many datagrams a millisecond (about 1.6 M
 * records/s), so that a burst (the flows live at exit, many flows ending
 * at once) fits a collector's socket buffer (Linux's default, 208 KiB,
 * holds about 90 such datagrams) instead of being dropped there. */
#define UDP_PER_MS 64
/* Ring of at least a quarter of the table, within these bounds. */
#define RING_MIN (1u << 12)
#define RING_MAX (1u << 21)

/* What libfixbuf reads per record: the internal templates below, field
 * for field (paddingOctets where C aligns). */
struct rec4 {
	uint64_t start_ms, end_ms, packets, octets;
	uint32_t ingress, src, dst;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint8_t pad[2];
};

struct rec6 {
	uint64_t start_ms, end_ms, packets, octets;
	uint8_t src[16], dst[16];
	uint32_t ingress;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint8_t pad[2];
};

_Static_assert(sizeof(struct rec4) == 56, "rec4 layout");
_Static_assert(sizeof(struct rec6) == 80, "rec6 layout");

/* Flag 1: the padding is in the internal template only; the messages
 * carry no padding. */
static fbInfoElementSpec_t spec4[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	{ "ingressInterface", 4, 0 },
	{ "sourceIPv4Address", 4, 0 },
	{ "destinationIPv4Address", 4, 0 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 2, 1 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t spec6[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	{ "sourceIPv6Address", 16, 0 },
	{ "destinationIPv6Address", 16, 0 },
	{ "ingressInterface", 4, 0 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 2, 1 },
	FB_IESPEC_NULL
};

enum sink_kind { SINK_FILE, SINK_UDP, SINK_TCP };

struct sink {
	enum sink_kind kind;
	char name[300];		/* as the user wrote it, for messages */
	FILE *fp;
	int fd;
	struct addrinfo *addrs;	/* TCP: where to (re)connect */
	int need_templates;	/* TCP: connected, templates not yet sent */
	uint64_t next_try;	/* TCP: TSC of the next connect attempt */
	uint64_t messages, lost_records, lost_messages;
	uint64_t tokens_at;	/* UDP: TSC the pacing tokens were counted at */
	uint32_t tokens;
	uint64_t warned_lost;	/* lost_records when last said */
	uint64_t next_warn;	/* TSC */
	char last_error[160];
	int failed;		/* file: a write failed, the file is incomplete */
};

struct gpurx_flow_export {
	struct gpurx_app *a;
	struct gpurx_flow_ring *ring;
	int ring_gpu;		/* GPU memory registry owns the ring */
	uint64_t tail;		/* records taken from the ring */
	/* libfixbuf: the buffer owns the session and the exporter. */
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exporter;
	fBuf_t *fbuf;
	uint8_t *msg;		/* where the exporter puts each message */
	uint16_t cur_tid;
	uint32_t in_msg;	/* records in the message being built */
	int templates_in_msg;
	uint64_t last_templates;	/* TSC */
	int has_udp;
	struct sink sinks[2];
	unsigned int n_sinks;
	/* The thread. */
	pthread_t thread;
	int thread_on;
	volatile int stop;
	struct gpurx_flow_gpu gpu;
	int gpu_on, gpu_failed, gpu_stuck;
	uint32_t scan_pos;
	uint64_t hz;
	/* What went out. */
	uint64_t records, packets, bytes;
	uint64_t by_reason[GPURX_FLOW_END_KINDS];
	uint64_t ring_lost;	/* reserved but never written (a GPU fault) */
	uint64_t ring_full_said, next_ring_warn;
	int lib_failed;		/* libfixbuf refused: nothing more exported */
};

static uint64_t
ns_to_ms(uint64_t ns)
{
	return ns / 1000000;
}

static void
lib_error(struct gpurx_flow_export *fx, const char *what, GError *err)
{
	fprintf(stderr, "error: flow export: %s: %s\n", what,
		err != NULL ? err->message : "unknown error");
	if (err != NULL)
		g_clear_error(&err);
	fx->lib_failed = 1;
}

/* --- Sinks ------------------------------------------------------------- */

static void
sink_warn(struct gpurx_flow_export *fx, struct sink *s, const char *why)
{
	uint64_t now = rte_get_tsc_cycles();

	snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	if (now < s->next_warn)
		return;
	s->next_warn = now + WARN_EVERY_S * fx->hz;
	fprintf(stderr, "warning: flow export to %s: %s; %" PRIu64 " records "
		"lost so far (the packet path goes on)\n", s->name, why,
		s->lost_records);
	s->warned_lost = s->lost_records;
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

/* Waits, if need be, for the UDP sink's next datagram to be due. */
static void
udp_pace(struct gpurx_flow_export *fx, struct sink *s)
{
	const uint64_t per_ms = fx->hz / 1000;
	uint64_t now = rte_get_tsc_cycles();

	if (s->tokens == 0) {
		uint64_t ms = (now - s->tokens_at) / per_ms;

		if (ms == 0) {
			rte_delay_us_sleep((unsigned int)((s->tokens_at +
				per_ms - now) * 1000000 / fx->hz) + 1);
			ms = 1;
		}
		s->tokens = ms >= 1 ? UDP_PER_MS : 0;
		s->tokens_at = rte_get_tsc_cycles();
	}
	s->tokens--;
}

/* One whole message to s, or counted lost. */
static void
sink_send(struct gpurx_flow_export *fx, struct sink *s, const uint8_t *msg,
		size_t len, uint32_t records, int templates)
{
	char why[160];
	size_t off = 0;
	ssize_t n;

	switch (s->kind) {
	case SINK_FILE:
		if (s->failed)
			break;
		if (fwrite(msg, 1, len, s->fp) == len) {
			s->messages++;
			return;
		}
		snprintf(why, sizeof(why), "write: %s", strerror(errno));
		s->failed = 1;
		s->lost_records += records;
		sink_warn(fx, s, why);
		return;
	case SINK_UDP:
		udp_pace(fx, s);
		/* Never waits on the socket: a full buffer drops the datagram. */
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
		snprintf(why, sizeof(why), "send: %s", off == 0 && n < 0 ?
			strerror(errno) : "connection stalled");
		sink_close_fd(s);
		s->next_try = rte_get_tsc_cycles() + RECONNECT_MS * fx->hz / 1000;
		break;
	}
	s->lost_records += records;
	s->lost_messages++;
	sink_warn(fx, s, why);
}

/* TCP sinks not connected: try again once the retry time is there. */
static int
sinks_reconnect(struct gpurx_flow_export *fx)
{
	uint64_t now = rte_get_tsc_cycles();
	int connected = 0;

	for (unsigned int i = 0; i < fx->n_sinks; i++) {
		struct sink *s = &fx->sinks[i];
		char why[160];

		if (s->kind != SINK_TCP || s->fd >= 0 || now < s->next_try)
			continue;
		if (tcp_connect(s, why, sizeof(why)) != 0) {
			s->next_try = rte_get_tsc_cycles() +
				RECONNECT_MS * fx->hz / 1000;
			snprintf(s->last_error, sizeof(s->last_error), "%s", why);
			continue;
		}
		if (s->lost_records != 0)
			fprintf(stderr, "flow export to %s: connected again\n",
				s->name);
		s->need_templates = 1;
		connected = 1;
	}
	return connected;
}

/* --- Messages ---------------------------------------------------------- */

/* The message built so far, out to every sink. */
static void
emit(struct gpurx_flow_export *fx)
{
	GError *err = NULL;
	size_t len;

	if (fx->lib_failed || (fx->in_msg == 0 && !fx->templates_in_msg))
		return;
	if (!fBufEmit(fx->fbuf, &err)) {
		lib_error(fx, "fBufEmit", err);
		return;
	}
	len = fbExporterGetMsgLen(fx->exporter);
	for (unsigned int i = 0; i < fx->n_sinks; i++)
		sink_send(fx, &fx->sinks[i], fx->msg, len, fx->in_msg,
			fx->templates_in_msg);
	fx->in_msg = 0;
	fx->templates_in_msg = 0;
}

/* Templates in a message of their own (the one before is sent first). */
static void
send_templates(struct gpurx_flow_export *fx)
{
	GError *err = NULL;

	emit(fx);
	if (fx->lib_failed)
		return;
	/* Manual mode: the first template set after data ends the message
	 * (FB_ERROR_EOM); the one before went out above: again. */
	if (!fbSessionExportTemplates(fx->session, &err) &&
			g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOM)) {
		g_clear_error(&err);
		fbSessionExportTemplates(fx->session, &err);
	}
	if (err != NULL) {
		lib_error(fx, "fbSessionExportTemplates", err);
		return;
	}
	fx->templates_in_msg = 1;
	fx->last_templates = rte_get_tsc_cycles();
	emit(fx);
}

static int
set_templates(struct gpurx_flow_export *fx, uint16_t tid)
{
	GError *err = NULL;

	if (fx->cur_tid == tid)
		return 0;
	if (!fBufSetInternalTemplate(fx->fbuf, tid, &err) ||
			!fBufSetExportTemplate(fx->fbuf, tid, &err)) {
		lib_error(fx, "setting the record template", err);
		return -1;
	}
	fx->cur_tid = tid;
	return 0;
}

static int
append(struct gpurx_flow_export *fx, void *rec, size_t len)
{
	GError *err = NULL;

	if (fBufAppend(fx->fbuf, rec, len, &err))
		return 0;
	/* Manual mode: a full message says so; send it, start the next. */
	if (!g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOM)) {
		lib_error(fx, "fBufAppend", err);
		return -1;
	}
	g_clear_error(&err);
	emit(fx);
	if (fx->lib_failed)
		return -1;
	if (!fBufAppend(fx->fbuf, rec, len, &err)) {
		lib_error(fx, "fBufAppend", err);
		return -1;
	}
	return 0;
}

/* One flow record into the message being built. */
static void
export_rec(struct gpurx_flow_export *fx, const struct gpurx_flow_rec *r)
{
	const struct gpurx_flow_key *k = &r->key;
	const uint32_t ingress = fx->a->port;

	if (fx->lib_failed)
		return;
	if (k->ip_version == 4) {
		struct rec4 v = {
			.start_ms = ns_to_ms(r->first_ns),
			.end_ms = ns_to_ms(r->last_ns),
			.packets = r->packets, .octets = r->bytes,
			.ingress = ingress,
			.src = ((uint32_t)k->src[12] << 24) |
				((uint32_t)k->src[13] << 16) |
				((uint32_t)k->src[14] << 8) | k->src[15],
			.dst = ((uint32_t)k->dst[12] << 24) |
				((uint32_t)k->dst[13] << 16) |
				((uint32_t)k->dst[14] << 8) | k->dst[15],
			.sport = k->sport, .dport = k->dport,
			.vlan = k->vlan_id, .tcp_flags = r->tcp_flags,
			.proto = k->proto, .reason = r->reason,
		};

		if (set_templates(fx, TID_V4) != 0 ||
				append(fx, &v, sizeof(v)) != 0)
			return;
	} else {
		struct rec6 v = {
			.start_ms = ns_to_ms(r->first_ns),
			.end_ms = ns_to_ms(r->last_ns),
			.packets = r->packets, .octets = r->bytes,
			.ingress = ingress,
			.sport = k->sport, .dport = k->dport,
			.vlan = k->vlan_id, .tcp_flags = r->tcp_flags,
			.proto = k->proto, .reason = r->reason,
		};

		memcpy(v.src, k->src, 16);
		memcpy(v.dst, k->dst, 16);
		if (set_templates(fx, TID_V6) != 0 ||
				append(fx, &v, sizeof(v)) != 0)
			return;
	}
	fx->in_msg++;
	fx->records++;
	fx->packets += r->packets;
	fx->bytes += r->bytes;
	fx->by_reason[r->reason < GPURX_FLOW_END_KINDS ? r->reason : 0]++;
}

/* --- Set-up -------------------------------------------------------------- */

static int
add_template(struct gpurx_flow_export *fx, uint16_t tid,
		fbInfoElementSpec_t *spec, size_t rec_len)
{
	fbTemplate_t *internal = fbTemplateAlloc(fx->model);
	fbTemplate_t *external = fbTemplateAlloc(fx->model);
	GError *err = NULL;

	if (!fbTemplateAppendSpecArray(internal, spec, 1, &err) ||
			!fbTemplateAppendSpecArray(external, spec, 0, &err))
		goto fail_both;
	if (fbTemplateGetIELenOfMemBuffer(internal) != rec_len) {
		fprintf(stderr, "error: flow export: template %#x describes %u "
			"bytes, the record has %zu\n", tid,
			fbTemplateGetIELenOfMemBuffer(internal), rec_len);
		fx->lib_failed = 1;
		goto fail_both;
	}
	if (!fbSessionAddTemplate(fx->session, TRUE, tid, internal, &err))
		goto fail_both;
	if (!fbSessionAddTemplate(fx->session, FALSE, tid, external, &err)) {
		fbTemplateFreeUnused(external);
		goto fail;
	}
	return 0;
fail_both:
	fbTemplateFreeUnused(internal);
	fbTemplateFreeUnused(external);
fail:
	if (err != NULL || !fx->lib_failed)
		lib_error(fx, "templates", err);
	return -1;
}

static uint64_t
ring_size_for(uint32_t flows)
{
	uint64_t n = RING_MIN;

	while (n < flows / 4 && n < RING_MAX)
		n <<= 1;
	return n;
}

static int
open_sinks(struct gpurx_flow_export *fx)
{
	const struct gpurx_opts *o = &fx->a->opt;

	if (o->ipfix_file != NULL) {
		struct sink *s = &fx->sinks[fx->n_sinks++];

		s->kind = SINK_FILE;
		snprintf(s->name, sizeof(s->name), "file %s", o->ipfix_file);
		s->fp = fopen(o->ipfix_file, "wb");
		if (s->fp == NULL) {
			fprintf(stderr, "error: --ipfix-file %s: %s\n",
				o->ipfix_file, strerror(errno));
			return -1;
		}
	}
	if (o->ipfix != NULL) {
		struct sink *s = &fx->sinks[fx->n_sinks++];
		struct gpurx_ipfix_target t;
		struct addrinfo hints;
		char why[512];
		int rc;

		if (gpurx_ipfix_target_parse(o->ipfix, &t, why, sizeof(why)) != 0) {
			fprintf(stderr, "error: --ipfix: %s\n", why);
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
			fprintf(stderr, "error: --ipfix %s: cannot resolve %s: %s\n",
				o->ipfix, t.host, gai_strerror(rc));
			s->addrs = NULL;
			return -1;
		}
		if (s->kind == SINK_UDP) {
			struct addrinfo *ai = s->addrs;

			fx->has_udp = 1;
			/* Connected: the kernel reports an ICMP unreachable
			 * on the next send, so a missing collector shows. */
			s->fd = socket(ai->ai_family, ai->ai_socktype |
				SOCK_CLOEXEC, ai->ai_protocol);
			if (s->fd < 0 || connect(s->fd, ai->ai_addr,
					ai->ai_addrlen) != 0) {
				fprintf(stderr, "error: --ipfix %s: %s\n", o->ipfix,
					strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

static void
close_sinks(struct gpurx_flow_export *fx)
{
	for (unsigned int i = 0; i < fx->n_sinks; i++) {
		struct sink *s = &fx->sinks[i];

		if (s->fp != NULL && fclose(s->fp) != 0 && !s->failed) {
			fprintf(stderr, "error: flow export to %s: %s\n", s->name,
				strerror(errno));
			s->failed = 1;
		}
		s->fp = NULL;
		sink_close_fd(s);
		if (s->addrs != NULL)
			freeaddrinfo(s->addrs);
		s->addrs = NULL;
	}
}

int
gpurx_flow_export_init(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx;
	uint64_t rsize = ring_size_for(a->opt.flow_capacity);
	size_t rbytes = gpurx_flow_ring_bytes(rsize);
	void *mem = NULL;

	a->fx = NULL;
	if (a->opt.ipfix == NULL && a->opt.ipfix_file == NULL)
		return 0;
	fx = calloc(1, sizeof(*fx));
	if (fx == NULL) {
		fprintf(stderr, "error: flow export: out of memory\n");
		return -1;
	}
	/* Test only: a ring this small fills at once (the full-ring path). */
	if (getenv("GPURX_TEST_FLOW_RING") != NULL) {
		rsize = strtoull(getenv("GPURX_TEST_FLOW_RING"), NULL, 0);
		if (rsize == 0 || (rsize & (rsize - 1)) != 0) {
			fprintf(stderr, "error: GPURX_TEST_FLOW_RING: not a power "
				"of two\n");
			free(fx);
			return -1;
		}
		rbytes = gpurx_flow_ring_bytes(rsize);
		printf("test: flow export ring of %" PRIu64 " records "
			"(GPURX_TEST_FLOW_RING)\n", rsize);
	}
	a->fx = fx;
	fx->a = a;
	fx->hz = rte_get_tsc_hz();
	for (unsigned int i = 0; i < RTE_DIM(fx->sinks); i++)
		fx->sinks[i].fd = -1;
	memset(gpurx_flow_clocks, 0, sizeof(gpurx_flow_clocks));
	if (open_sinks(fx) != 0)
		return -1;
	/* The ring: host memory the GPU writes in GPU modes. */
	if (!a->opt.cpu) {
		if (gpurx_flow_gpu_ring(a, rbytes, &mem) != 0)
			return -1;
		fx->ring_gpu = 1;
	} else {
		mem = rte_zmalloc("gpurx_flow_ring", rbytes, 64);
		if (mem == NULL) {
			fprintf(stderr, "error: flow export ring: no memory for "
				"%" PRIu64 " records\n", rsize);
			return -1;
		}
	}
	fx->ring = gpurx_flow_ring_init(mem, rsize);
	gpurx_flow_table_set_expiry(a->ft, fx->ring, a->opt.flow_idle_ns,
		a->opt.flow_active_ns, a->opt.flow_linger_ns);

	fx->msg = malloc(MTU_STREAM);
	fx->model = fbInfoModelAlloc();
	fx->session = fbSessionAlloc(fx->model);
	if (fx->msg == NULL || fx->model == NULL || fx->session == NULL) {
		fprintf(stderr, "error: flow export: out of memory\n");
		return -1;
	}
	/* Sequence numbers and templates are per observation domain: one
	 * per port. Templates go into the session before it has a buffer,
	 * so that they are written by send_templates() alone. */
	fbSessionSetDomain(fx->session, a->opt.ipfix_domain + a->port);
	if (add_template(fx, TID_V4, spec4, sizeof(struct rec4)) != 0 ||
			add_template(fx, TID_V6, spec6, sizeof(struct rec6)) != 0)
		return -1;
	fx->exporter = fbExporterAllocBuffer(fx->msg, fx->has_udp ?
		MTU_DATAGRAM : MTU_STREAM);
	if (fx->exporter == NULL) {
		fprintf(stderr, "error: flow export: out of memory\n");
		return -1;
	}
	fx->fbuf = fBufAllocForExport(fx->session, fx->exporter);
	if (fx->fbuf == NULL) {
		fprintf(stderr, "error: flow export: fBufAllocForExport failed\n");
		return -1;
	}
	fBufSetAutomaticMode(fx->fbuf, FALSE);
	send_templates(fx);
	if (fx->lib_failed)
		return -1;
	printf("flow export: %s%s%s, observation domain %u; records end %.3g s "
		"idle, %.3g s after their first packet%s, %.3g s after a FIN/RST; "
		"ring of %" PRIu64 " records\n",
		a->opt.ipfix ? fx->sinks[fx->n_sinks - 1].name : "",
		a->opt.ipfix && a->opt.ipfix_file ? " and " : "",
		a->opt.ipfix_file ? fx->sinks[0].name : "",
		a->opt.ipfix_domain + a->port, a->opt.flow_idle_ns / 1e9,
		a->opt.flow_active_ns / 1e9,
		a->opt.flow_active_ns ? "" : " (never)",
		a->opt.flow_linger_ns / 1e9, rsize);
	if (a->opt.ts_source == GPURX_TS_NONE)
		printf("flow export: --ts none: every packet at time 0, no "
			"record ends before exit\n");
	return 0;
}

/* --- The exporter thread ------------------------------------------------ */

/* The time flows end by: see flow_export.h. */
static uint64_t
flow_now(const struct gpurx_app *a)
{
	uint64_t now = 0;

	switch (a->opt.ts_source) {
	case GPURX_TS_RX:
		return gpurx_tsclock_ns(&a->clk, rte_get_tsc_cycles());
	case GPURX_TS_NONE:
		return 0;
	default:
		for (uint16_t q = 0; q < a->nq; q++) {
			uint64_t t = __atomic_load_n(&gpurx_flow_clocks[q].ns,
				__ATOMIC_ACQUIRE);

			if (t > now)
				now = t;
		}
		return now;
	}
}

/* Up to max records from the ring into messages. Returns how many. */
static uint32_t
drain(struct gpurx_flow_export *fx, uint32_t max)
{
	const struct gpurx_flow_rec *r;
	uint32_t n = 0;

	while (n < max && (r = gpurx_flow_ring_peek(fx->ring, fx->tail)) != NULL) {
		if (r->reason != GPURX_FLOW_END_NONE)
			export_rec(fx, r);
		fx->tail++;
		n++;
	}
	if (n != 0)
		gpurx_flow_ring_consumed(fx->ring, fx->tail);
	return n;
}

static void
scan(struct gpurx_flow_export *fx)
{
	struct gpurx_app *a = fx->a;
	uint64_t now = flow_now(a);

	if (a->opt.cpu) {
		/* The whole table once a second, a slice a tick. */
		uint32_t cap = a->ft->capacity;
		uint32_t step = RTE_MAX(cap / (1000 / TICK_MS), 4096u);

		gpurx_flow_scan(a->ft, fx->scan_pos, fx->scan_pos + step, now);
		fx->scan_pos = fx->scan_pos + step >= cap ? 0 :
			fx->scan_pos + step;
		return;
	}
	if (!fx->gpu_on || fx->gpu_failed)
		return;
	if (gpurx_flow_gpu_tick(&fx->gpu, now) < 0) {
		fprintf(stderr, "error: flow export: no more scans of the flow "
			"table; idle flows end only at exit\n");
		fx->gpu_failed = 1;
	}
}

/* The table's counters: live on the CPU, as of the last scan on the GPU. */
static const struct gpurx_flow_table *
counters(const struct gpurx_flow_export *fx)
{
	return fx->a->opt.cpu || !fx->gpu_on ? fx->a->ft : &fx->gpu.hdr;
}

static void
warn_ring_full(struct gpurx_flow_export *fx)
{
	uint64_t full = __atomic_load_n(&counters(fx)->ring_full,
		__ATOMIC_RELAXED), now = rte_get_tsc_cycles();

	if (full == fx->ring_full_said || now < fx->next_ring_warn)
		return;
	fprintf(stderr, "warning: flow export: the export ring (%" PRIu64
		" records) was full: %" PRIu64 " flow ends put off so far (the "
		"flows stay in the table; the collector or file is slower than "
		"flows end)\n", fx->ring->size, full);
	fx->ring_full_said = full;
	fx->next_ring_warn = now + WARN_EVERY_S * fx->hz;
}

static void *
exporter_main(void *arg)
{
	struct gpurx_flow_export *fx = arg;
	const uint64_t tick = TICK_MS * fx->hz / 1000;
	uint64_t last_tick = 0;

	/* The CUDA runtime keeps the current device per thread. */
	if (fx->gpu_on && gpurx_flow_gpu_attach(&fx->gpu) != 0)
		fx->gpu_failed = 1;
	while (!fx->stop) {
		uint32_t n = drain(fx, DRAIN_BATCH);
		uint64_t t = rte_get_tsc_cycles();

		if (t - last_tick >= tick) {
			last_tick = t;
			scan(fx);
			/* Records wait at most a tick in a message. */
			emit(fx);
			if (sinks_reconnect(fx) || (fx->has_udp &&
					t - fx->last_templates >=
					TEMPLATE_REFRESH_S * fx->hz))
				send_templates(fx);
			warn_ring_full(fx);
		}
		if (n == 0)
			rte_delay_us_sleep(1000);
	}
	return NULL;
}

int
gpurx_flow_export_start(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;
	int rc;

	if (fx == NULL)
		return 0;
	if (!a->opt.cpu) {
		if (gpurx_flow_gpu_open(a, &fx->gpu) != 0)
			return -1;
		fx->gpu_on = 1;
	}
	/* Connect a TCP collector before traffic, so the first records do
	 * not wait a retry; not there yet is not an error. */
	if (sinks_reconnect(fx))
		send_templates(fx);
	rc = pthread_create(&fx->thread, NULL, exporter_main, fx);
	if (rc != 0) {
		fprintf(stderr, "error: flow export thread: %s\n", strerror(rc));
		return -1;
	}
	fx->thread_on = 1;
	return 0;
}

void
gpurx_flow_export_quiesce(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	if (fx->thread_on) {
		fx->stop = 1;
		pthread_join(fx->thread, NULL);
		fx->thread_on = 0;
	}
	if (fx->gpu_on && gpurx_flow_gpu_close(&fx->gpu) != 0)
		fx->gpu_stuck = 1;
}

int
gpurx_flow_export_finish(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;
	const struct gpurx_flow_entry *e;
	uint64_t now, head;
	uint32_t pos = 0;
	int rc = 0;

	if (fx == NULL)
		return 0;
	/* A scan the persistent kernel kept from starting ran when it quit,
	 * after the table was copied back: take the table again. */
	if (fx->gpu_stuck && gpurx_flow_gpu_settle(a, &fx->gpu) != 0)
		rc = -1;
	now = flow_now(a);
	/* Every producer is done: what was reserved is written, unless the
	 * GPU died holding it. */
	head = a->ft->ring_head;
	while (fx->tail < head) {
		if (drain(fx, DRAIN_BATCH) == 0) {
			fx->ring_lost = head - fx->tail;
			fprintf(stderr, "error: flow export: %" PRIu64 " flow "
				"records reserved in the ring were never written "
				"(the GPU stopped)\n", fx->ring_lost);
			rc = -1;
			break;
		}
	}
	/* Then every flow still live. */
	while ((e = gpurx_flow_table_next(a->ft, &pos)) != NULL) {
		struct gpurx_flow_rec r;

		memset(&r, 0, sizeof(r));
		r.key = e->key;
		r.packets = e->packets;
		r.bytes = e->bytes;
		r.first_ns = e->first_seen;
		r.last_ns = e->last_seen;
		r.queue = e->queue;
		r.tcp_flags = (uint8_t)e->tcp_flags;
		r.reason = (uint8_t)gpurx_flow_final_reason(a->ft, e, now);
		export_rec(fx, &r);
	}
	emit(fx);
	close_sinks(fx);
	if (fx->lib_failed)
		rc = -1;
	for (unsigned int i = 0; i < fx->n_sinks; i++)
		if (fx->sinks[i].failed) {
			fprintf(stderr, "error: flow export: %s is incomplete\n",
				fx->sinks[i].name);
			rc = -1;
		}
	return rc;
}

/* --- Reports -------------------------------------------------------------- */

void
gpurx_flow_export_print(FILE *f, const struct gpurx_app *a)
{
	const struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	fprintf(f, "flow export:   %" PRIu64 " records, %" PRIu64 " packets, %"
		PRIu64 " bytes; ended idle %" PRIu64 ", active %" PRIu64
		", FIN/RST %" PRIu64 ", at exit %" PRIu64 ", table full %" PRIu64
		"; ring full %" PRIu64 ", ring lost %" PRIu64 "\n", fx->records,
		fx->packets, fx->bytes, fx->by_reason[GPURX_FLOW_END_IDLE],
		fx->by_reason[GPURX_FLOW_END_ACTIVE],
		fx->by_reason[GPURX_FLOW_END_EOF],
		fx->by_reason[GPURX_FLOW_END_FORCED],
		fx->by_reason[GPURX_FLOW_END_PRESSURE], a->ft->ring_full,
		fx->ring_lost);
	for (unsigned int i = 0; i < fx->n_sinks; i++) {
		const struct sink *s = &fx->sinks[i];

		fprintf(f, "  -> %s: %" PRIu64 " messages, %" PRIu64
			" records lost%s%s%s\n", s->name, s->messages,
			s->lost_records, s->last_error[0] ? " (last: " : "",
			s->last_error[0] ? s->last_error : "",
			s->last_error[0] ? ")" : "");
	}
}

void
gpurx_flow_export_json(FILE *f, void *app)
{
	const struct gpurx_app *a = app;
	const struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	fprintf(f, "  \"flow_export\": {\"records\": %" PRIu64 ", \"packets\": %"
		PRIu64 ", \"bytes\": %" PRIu64 ", \"ended\": {\"idle\": %" PRIu64
		", \"active\": %" PRIu64 ", \"eof\": %" PRIu64 ", \"exit\": %"
		PRIu64 ", \"pressure\": %" PRIu64 "}, \"ring_full\": %" PRIu64
		", \"ring_lost\": %" PRIu64 ", \"to\": [", fx->records, fx->packets,
		fx->bytes, fx->by_reason[GPURX_FLOW_END_IDLE],
		fx->by_reason[GPURX_FLOW_END_ACTIVE],
		fx->by_reason[GPURX_FLOW_END_EOF],
		fx->by_reason[GPURX_FLOW_END_FORCED],
		fx->by_reason[GPURX_FLOW_END_PRESSURE], a->ft->ring_full,
		fx->ring_lost);
	for (unsigned int i = 0; i < fx->n_sinks; i++)
		fprintf(f, "%s{\"sink\": \"%s\", \"messages\": %" PRIu64
			", \"lost_records\": %" PRIu64 "}", i ? ", " : "",
			fx->sinks[i].name, fx->sinks[i].messages,
			fx->sinks[i].lost_records);
	fprintf(f, "]},\n");
}

void
gpurx_flow_export_free(struct gpurx_app *a)
{
	struct gpurx_flow_export *fx = a->fx;

	if (fx == NULL)
		return;
	gpurx_flow_export_quiesce(a);
	if (fx->gpu_on)
		gpurx_flow_gpu_close(&fx->gpu);
	close_sinks(fx);
	if (fx->fbuf != NULL)
		fBufFree(fx->fbuf);	/* and the session and exporter */
	else {
		if (fx->exporter != NULL)
			fbExporterClose(fx->exporter);
		if (fx->session != NULL)
			fbSessionFree(fx->session);
	}
	if (fx->model != NULL)
		fbInfoModelFree(fx->model);
	free(fx->msg);
	if (!fx->ring_gpu)
		rte_free(fx->ring);
	if (a->ft != NULL)
		gpurx_flow_table_set_expiry(a->ft, NULL, 0, 0, 0);
	free(fx);
	a->fx = NULL;
}
