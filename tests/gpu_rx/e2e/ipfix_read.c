/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An IPFIX reader for the flow-export tests, with libfixbuf: prints
 * every flow record of an IPFIX file, or of the first connection to a
 * TCP port on the loopback, one CSV line each:
 *   domain,proto,src,sport,dst,dport,vlan,packets,bytes,start_ms,end_ms,
 *   tcp_flags,end_reason,ingress
 * Exits 1 when libfixbuf warned (a message out of sequence, a record
 * without a template) or failed, after printing what it read.
 *
 * Usage: gpurx-ipfix-read FILE
 *        gpurx-ipfix-read --tcp PORT READY_FILE   (READY_FILE is created
 *        once the port listens)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fixbuf/public.h>

#define TID_ALL 0x0200
#define ACCEPT_TIMEOUT_MS 60000

/* Every field either export template has, so one internal template reads
 * both; those a record lacks stay zero. */
struct rec {
	uint64_t start_ms, end_ms, packets, octets;
	uint8_t src6[16], dst6[16];
	uint32_t src4, dst4, ingress;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint8_t pad[6];
};

static fbInfoElementSpec_t spec[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	{ "sourceIPv6Address", 16, 0 },
	{ "destinationIPv6Address", 16, 0 },
	{ "sourceIPv4Address", 4, 0 },
	{ "destinationIPv4Address", 4, 0 },
	{ "ingressInterface", 4, 0 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "vlanId", 2, 0 },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 6, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t v4_spec = { "sourceIPv4Address", 4, 0 };

static unsigned int warnings;

static void
on_log(const gchar *domain, GLogLevelFlags level, const gchar *msg,
		gpointer data)
{
	(void)data;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL |
			G_LOG_LEVEL_WARNING)) {
		warnings++;
		fprintf(stderr, "libfixbuf%s%s: %s\n", domain ? " " : "",
			domain ? domain : "", msg);
	}
}

static int
fail(const char *what, GError *err)
{
	fprintf(stderr, "gpurx-ipfix-read: %s: %s\n", what,
		err != NULL ? err->message : strerror(errno));
	g_clear_error(&err);
	return 1;
}

/* The first connection to 127.0.0.1:port, as a stream. */
static FILE *
accept_one(const char *port, const char *ready)
{
	struct sockaddr_in sa;
	struct pollfd pfd;
	int one = 1, ls, fd;
	FILE *f;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		return NULL;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(port));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
			bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
			listen(ls, 1) != 0) {
		close(ls);
		return NULL;
	}
	f = fopen(ready, "w");
	if (f == NULL || fclose(f) != 0) {
		close(ls);
		return NULL;
	}
	/* Bounded: a test whose exporter never came must not hang. */
	pfd.fd = ls;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, ACCEPT_TIMEOUT_MS) != 1) {
		fprintf(stderr, "gpurx-ipfix-read: nobody connected to port %s "
			"within %d s\n", port, ACCEPT_TIMEOUT_MS / 1000);
		close(ls);
		return NULL;
	}
	fd = accept(ls, NULL, NULL);
	close(ls);
	return fd < 0 ? NULL : fdopen(fd, "rb");
}

int
main(int argc, char **argv)
{
	fbInfoModel_t *model;
	fbSession_t *session;
	fbCollector_t *coll;
	fbTemplate_t *tmpl;
	GError *err = NULL;
	fBuf_t *fbuf;
	uint64_t n = 0;
	struct rec r;
	size_t len;
	FILE *in = NULL;

	if (argc == 2) {
		in = NULL;
	} else if (argc == 4 && strcmp(argv[1], "--tcp") == 0) {
		in = accept_one(argv[2], argv[3]);
		if (in == NULL)
			return fail("listening", NULL);
	} else {
		fprintf(stderr, "usage: %s FILE | --tcp PORT READY_FILE\n", argv[0]);
		return 2;
	}
	g_log_set_default_handler(on_log, NULL);
	model = fbInfoModelAlloc();
	session = fbSessionAlloc(model);
	tmpl = fbTemplateAlloc(model);
	if (!fbTemplateAppendSpecArray(tmpl, spec, 0, &err) ||
			!fbSessionAddTemplate(session, TRUE, TID_ALL, tmpl, &err))
		return fail("template", err);
	coll = in != NULL ? fbCollectorAllocFP(NULL, in) :
		fbCollectorAllocFile(NULL, argv[1], &err);
	if (coll == NULL)
		return fail(argv[1], err);
	fbuf = fBufAllocForCollection(session, coll);
	if (!fBufSetInternalTemplate(fbuf, TID_ALL, &err))
		return fail("internal template", err);
	for (;;) {
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
		fbTemplate_t *ext;
		int v4;

		memset(&r, 0, sizeof(r));
		len = sizeof(r);
		if (!fBufNext(fbuf, (uint8_t *)&r, &len, &err)) {
			if (g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOF))
				break;
			fBufFree(fbuf);
			return fail("reading", err);
		}
		ext = fBufGetCollectionTemplate(fbuf, NULL);
		v4 = ext != NULL && fbTemplateContainsElementByName(ext, &v4_spec);
		if (v4) {
			uint32_t a = htonl(r.src4), b = htonl(r.dst4);

			inet_ntop(AF_INET, &a, s, sizeof(s));
			inet_ntop(AF_INET, &b, d, sizeof(d));
		} else {
			inet_ntop(AF_INET6, r.src6, s, sizeof(s));
			inet_ntop(AF_INET6, r.dst6, d, sizeof(d));
		}
		printf("%u,%u,%s,%u,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%u,%u,%u\n",
			fbSessionGetDomain(fBufGetSession(fbuf)), r.proto, s,
			r.sport, d, r.dport, r.vlan, r.packets, r.octets,
			r.start_ms, r.end_ms, r.tcp_flags, r.reason, r.ingress);
		n++;
	}
	g_clear_error(&err);
	fBufFree(fbuf);
	fbInfoModelFree(model);
	fprintf(stderr, "gpurx-ipfix-read: %" PRIu64 " records, %u warnings\n",
		n, warnings);
	return warnings != 0;
}
