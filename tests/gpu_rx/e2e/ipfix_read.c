/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An IPFIX reader for the flow-export tests, with libfixbuf: prints
 * every flow record of an IPFIX file, or of the first connection to a
 * TCP port on the loopback, one CSV line each:
 *   domain,proto,src,sport,dst,dport,vlan,packets,bytes,start_ms,end_ms,
 *   tcp_flags,end_reason,ingress,icmp,src_mac,dst_mac,tos,ttl_min,ttl_max
 * (icmp: icmpTypeCodeIPv4 or IPv6, type * 256 + code), and each
 * exporter statistics options record (RFC 7011 section 4.3) on stderr:
 *   stats: domain D, messages M, records R, octets O, ignored packets I,
 *   not sent N
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
#define TID_STATS 0x0201
#define ACCEPT_TIMEOUT_MS 60000

/* Every field either export template has, so one internal template reads
 * both; those a record lacks stay zero. */
struct rec {
	uint64_t start_ms, end_ms, packets, octets;
	uint8_t src6[16], dst6[16];
	uint32_t src4, dst4, ingress;
	uint16_t sport, dport, vlan, tcp_flags;
	uint8_t proto, reason;
	uint16_t icmp4, icmp6;
	uint8_t src_mac[6], dst_mac[6];
	uint8_t tos, ttl_min, ttl_max;
	uint8_t pad[3];
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
	{ "icmpTypeCodeIPv4", 2, 0 },
	{ "icmpTypeCodeIPv6", 2, 0 },
	{ "sourceMacAddress", 6, 0 },
	{ "destinationMacAddress", 6, 0 },
	{ "ipClassOfService", 1, 0 },
	{ "minimumTTL", 1, 0 },
	{ "maximumTTL", 1, 0 },
	{ "paddingOctets", 3, 0 },
	FB_IESPEC_NULL
};

static fbInfoElementSpec_t v4_spec = { "sourceIPv4Address", 4, 0 };

struct stats {
	uint32_t domain, pad;
	uint64_t messages, records, octets, ignored, not_sent;
};

static fbInfoElementSpec_t stats_spec[] = {
	{ "observationDomainId", 4, 0 },
	{ "paddingOctets", 4, 0 },
	{ "exportedMessageTotalCount", 8, 0 },
	{ "exportedFlowRecordTotalCount", 8, 0 },
	{ "exportedOctetTotalCount", 8, 0 },
	{ "ignoredPacketTotalCount", 8, 0 },
	{ "notSentFlowTotalCount", 8, 0 },
	FB_IESPEC_NULL
};

static unsigned int warnings;

static const char *
mac_str(const uint8_t *m, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		m[3], m[4], m[5]);
	return out;
}

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
	tmpl = fbTemplateAlloc(model);
	if (!fbTemplateAppendSpecArray(tmpl, stats_spec, 0, &err) ||
			!fbSessionAddTemplate(session, TRUE, TID_STATS, tmpl,
				&err))
		return fail("options template", err);
	coll = in != NULL ? fbCollectorAllocFP(NULL, in) :
		fbCollectorAllocFile(NULL, argv[1], &err);
	if (coll == NULL)
		return fail(argv[1], err);
	fbuf = fBufAllocForCollection(session, coll);
	if (!fBufSetInternalTemplate(fbuf, TID_ALL, &err))
		return fail("internal template", err);
	for (;;) {
		char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], sm[18], dm[18];
		fbTemplate_t *ext;
		int v4;

		ext = fBufNextCollectionTemplate(fbuf, NULL, &err);
		if (ext == NULL) {
			if (g_error_matches(err, FB_ERROR_DOMAIN, FB_ERROR_EOF))
				break;
			fBufFree(fbuf);
			return fail("reading", err);
		}
		if (fbTemplateGetOptionsScope(ext) != 0) {
			struct stats st;

			memset(&st, 0, sizeof(st));
			len = sizeof(st);
			if (!fBufSetInternalTemplate(fbuf, TID_STATS, &err) ||
					!fBufNext(fbuf, (uint8_t *)&st, &len,
						&err) ||
					!fBufSetInternalTemplate(fbuf, TID_ALL,
						&err)) {
				fBufFree(fbuf);
				return fail("reading an options record", err);
			}
			fprintf(stderr, "stats: domain %u, messages %" PRIu64
				", records %" PRIu64 ", octets %" PRIu64
				", ignored packets %" PRIu64 ", not sent %"
				PRIu64 "\n", st.domain, st.messages,
				st.records, st.octets, st.ignored,
				st.not_sent);
			continue;
		}
		memset(&r, 0, sizeof(r));
		len = sizeof(r);
		if (!fBufNext(fbuf, (uint8_t *)&r, &len, &err)) {
			fBufFree(fbuf);
			return fail("reading", err);
		}
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
			",%" PRIu64 ",%u,%u,%u,%u,%s,%s,%u,%u,%u\n",
			fbSessionGetDomain(fBufGetSession(fbuf)), r.proto, s,
			r.sport, d, r.dport, r.vlan, r.packets, r.octets,
			r.start_ms, r.end_ms, r.tcp_flags, r.reason, r.ingress,
			v4 ? r.icmp4 : r.icmp6, mac_str(r.src_mac, sm),
			mac_str(r.dst_mac, dm), r.tos, r.ttl_min, r.ttl_max);
		n++;
	}
	g_clear_error(&err);
	fBufFree(fbuf);
	fbInfoModelFree(model);
	fprintf(stderr, "gpurx-ipfix-read: %" PRIu64 " records, %u warnings\n",
		n, warnings);
	return warnings != 0;
}
