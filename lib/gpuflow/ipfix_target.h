/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collector an --ipfix argument names: [udp://|tcp://]HOST:PORT,
 * HOST a name, an IPv4 address or an IPv6 address in brackets.
 */
#ifndef GPURX_APP_IPFIX_TARGET_H
#define GPURX_APP_IPFIX_TARGET_H

#include <stddef.h>

enum gpurx_ipfix_proto {
	GPURX_IPFIX_UDP = 0,	/* the default, what every collector takes */
	GPURX_IPFIX_TCP,
};

struct gpurx_ipfix_target {
	enum gpurx_ipfix_proto proto;
	char host[256];
	char port[8];
};

/*
 * Parse arg into *t. Returns 0, or -1 with what is wrong in err (the
 * caller prints it after the option's name).
 */
int gpurx_ipfix_target_parse(const char *arg, struct gpurx_ipfix_target *t,
		char *err, size_t err_len);

#endif /* GPURX_APP_IPFIX_TARGET_H */
