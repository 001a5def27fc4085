/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipfix_target.h"

static int
bad(char *err, size_t len, const char *arg, const char *why)
{
	snprintf(err, len, "'%s': %s (expected [udp://|tcp://]HOST:PORT, "
		"e.g. udp://192.0.2.10:4739 or tcp://[2001:db8::1]:4739)",
		arg, why);
	return -1;
}

int
gpurx_ipfix_target_parse(const char *arg, struct gpurx_ipfix_target *t,
		char *err, size_t err_len)
{
	const char *p = arg, *colon;
	size_t host_len;
	char *end;
	unsigned long port;

	memset(t, 0, sizeof(*t));
	if (strncmp(p, "udp://", 6) == 0) {
		p += 6;
	} else if (strncmp(p, "tcp://", 6) == 0) {
		t->proto = GPURX_IPFIX_TCP;
		p += 6;
	} else if (strstr(p, "://") != NULL) {
		return bad(err, err_len, arg, "the transport is not udp or tcp");
	}
	if (*p == '[') {
		const char *close = strchr(p, ']');

		if (close == NULL)
			return bad(err, err_len, arg, "no ']' after the IPv6 address");
		if (close[1] != ':')
			return bad(err, err_len, arg, "no ':PORT' after ']'");
		host_len = (size_t)(close - p - 1);
		colon = close + 1;
		p++;
	} else {
		colon = strrchr(p, ':');
		if (colon == NULL)
			return bad(err, err_len, arg, "no ':PORT'");
		if (memchr(p, ':', (size_t)(colon - p)) != NULL)
			return bad(err, err_len, arg,
				"an IPv6 address needs brackets");
		host_len = (size_t)(colon - p);
	}
	if (host_len == 0)
		return bad(err, err_len, arg, "no host");
	if (host_len >= sizeof(t->host))
		return bad(err, err_len, arg, "host name too long");
	memcpy(t->host, p, host_len);
	t->host[host_len] = '\0';
	if (colon[1] < '0' || colon[1] > '9')
		return bad(err, err_len, arg, "the port is not a number");
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port == 0 || port > 65535)
		return bad(err, err_len, arg, "the port is not in 1..65535");
	snprintf(t->port, sizeof(t->port), "%lu", port);
	return 0;
}
