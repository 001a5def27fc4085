/* SPDX-License-Identifier: BSD-3-Clause */
/* --ipfix arguments (ipfix_target.h): what is taken, and what is refused
 * with which reason. */
#include <string.h>

#include "ipfix_target.h"
#include "check.h"

static void
good(const char *arg, enum gpurx_ipfix_proto proto, const char *host,
		const char *port)
{
	struct gpurx_ipfix_target t;
	char err[512] = "";

	CHECK(gpurx_ipfix_target_parse(arg, &t, err, sizeof(err)) == 0,
		"'%s' refused: %s", arg, err);
	CHECK(t.proto == proto && strcmp(t.host, host) == 0 &&
		strcmp(t.port, port) == 0, "'%s': proto %d host '%s' port '%s'",
		arg, t.proto, t.host, t.port);
}

static void
bad(const char *arg, const char *why)
{
	struct gpurx_ipfix_target t;
	char err[512] = "";

	CHECK(gpurx_ipfix_target_parse(arg, &t, err, sizeof(err)) == -1,
		"'%s' taken", arg);
	CHECK(strstr(err, why) != NULL && strstr(err, arg) != NULL,
		"'%s': message '%s' does not say '%s'", arg, err, why);
}

int
main(void)
{
	good("collector.example:4739", GPURX_IPFIX_UDP, "collector.example", "4739");
	good("udp://192.0.2.1:2055", GPURX_IPFIX_UDP, "192.0.2.1", "2055");
	good("tcp://192.0.2.1:4739", GPURX_IPFIX_TCP, "192.0.2.1", "4739");
	good("tcp://[2001:db8::1]:4739", GPURX_IPFIX_TCP, "2001:db8::1", "4739");
	good("[::1]:1", GPURX_IPFIX_UDP, "::1", "1");
	good("h:65535", GPURX_IPFIX_UDP, "h", "65535");
	bad("collector", "no ':PORT'");
	bad("sctp://h:4739", "not udp or tcp");
	bad("h:0", "not in 1..65535");
	bad("h:65536", "not in 1..65535");
	bad("h:47x", "not in 1..65535");
	bad("h:", "not a number");
	bad("h:-1", "not a number");
	bad(":4739", "no host");
	bad("udp://:4739", "no host");
	bad("::1:4739", "needs brackets");
	bad("[::1:4739", "no ']'");
	bad("[::1]4739", "no ':PORT' after ']'");
	bad("[]:4739", "no host");
	return check_finish("test_ipfix_target");
}
