/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen's structured streams: a stream built from struct
 * gpugen_stream_def makes the very frames of its spec-string twin, byte
 * for byte, and bad structs are refused with a message, adding nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpugen.h"

#define ROOM 2048
#define PACKETS 2000

static struct gpugen *
new_gen(void)
{
	struct gpugen_conf c = { .data_room = ROOM, .burst = 8, .seed = 42 };
	struct gpugen *g;

	if (gpugen_create(&g, &c) != 0) {
		fprintf(stderr, "gpugen_create failed\n");
		exit(1);
	}
	return g;
}

/* g and h make the same packets 0 .. PACKETS - 1, stamps and all. */
static void
same_frames(const struct gpugen *g, const struct gpugen *h)
{
	static uint8_t a[ROOM], b[ROOM];
	struct gpugen_stream_info ia, ib;

	CHECK_EQ(gpugen_n_streams(g), gpugen_n_streams(h));
	CHECK_EQ(gpugen_max_len(g), gpugen_max_len(h));
	for (uint32_t s = 0; s < gpugen_n_streams(g); s++) {
		CHECK(gpugen_stream_info(g, s, &ia) == 0 &&
			gpugen_stream_info(h, s, &ib) == 0, "stream %u info", s);
		CHECK_EQ(ia.stamp_off, ib.stamp_off);
		CHECK_EQ(ia.n_vars, ib.n_vars);
		CHECK_EQ(ia.weight, ib.weight);
	}
	for (uint64_t n = 0; n < PACKETS; n++) {
		uint32_t la = gpugen_build_cpu(g, n, 5000 + n, a, ROOM, NULL,
			NULL);
		uint32_t lb = gpugen_build_cpu(h, n, 5000 + n, b, ROOM, NULL,
			NULL);

		CHECK(la != 0 && la == lb && memcmp(a, b, la) == 0,
			"packet %lu differs (%u vs %u bytes)", (unsigned long)n,
			la, lb);
	}
}

static int
add_spec(struct gpugen *g, const char *spec)
{
	char err[256] = "";
	int rc = gpugen_add_spec(g, spec, err, sizeof(err));

	CHECK(rc >= 1, "spec '%s': %s", spec, err);
	return rc;
}

static int
add_def(struct gpugen *g, const struct gpugen_stream_def *d)
{
	char err[256] = "";
	int rc = gpugen_add_stream(g, d, err, sizeof(err));

	CHECK(rc == 1, "struct stream: %d %s", rc, err);
	return rc;
}

/* IPv4/UDP in QinQ, random sizes, a variable and a tuple. */
static void
test_ipv4_udp(void)
{
	static const uint8_t dmac[6] = { 0x00, 0x1b, 0x21, 0x0a, 0x0b, 0x0c };
	struct gpugen *g = new_gen(), *h = new_gen();
	struct gpugen_stream_def d;

	add_spec(g, "ipv4,udp,dmac=00:1b:21:0a:0b:0c,src=192.168.1.1,"
		"dst=198.18.0.1,sport=5000,dport=53,ttl=33,tos=4,payload=0xab,"
		"vlan=100,vlan=200,pcp=3,size=90-1518:random,"
		"var=udp.sport:inc:1024-1087:step=3,"
		"tuple=ipv4.src:udp.dport:10.0.0.1-10.0.0.9:100-200:limit=50,"
		"seed=9,weight=3");
	CHECK_EQ(gpugen_stream_def_init(h, &d, 4, GPUGEN_PROTO_UDP), 0);
	memcpy(d.eth_dst, dmac, 6);
	inet_pton(AF_INET, "192.168.1.1", d.src);
	inet_pton(AF_INET, "198.18.0.1", d.dst);
	d.sport = 5000;
	d.dport = 53;
	d.ttl = 33;
	d.tos = 4;
	d.payload_byte = 0xab;
	d.n_vlans = 2;
	d.vid[0] = 100;
	d.vid[1] = 200;
	d.pcp = 3;
	d.size_min = 90;
	d.size_max = 1518;
	d.size_mode = GPUGEN_SIZES_RANDOM;
	d.seed = 9;
	d.weight = 3;
	d.n_vars = 2;
	d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.sport",
		.op = GPUGEN_VAR_INC, .min = 1024, .max = 1087, .step = 3 };
	d.vars[1] = (struct gpugen_var_def){ .tuple = 1,
		.field.name = "ipv4.src", .port_field.name = "udp.dport",
		.min = 0x0a000001, .max = 0x0a000009, .port_min = 100,
		.port_max = 200, .limit = 50 };
	add_def(h, &d);
	same_frames(g, h);
	gpugen_free(g);
	gpugen_free(h);
}

/* IPv6/TCP, stepped sizes, no stamp, writes by offset; beside a second
 * stream with defaults, so weights and stream order count too. */
static void
test_ipv6_tcp(void)
{
	struct gpugen *g = new_gen(), *h = new_gen();
	struct gpugen_stream_def d;

	add_spec(g, "ipv6,tcp,flags=SA,size=100-300:step=7,stamp=off,"
		"var=@60/2:dec:1-500:init=77,var=ipv6.flow:random:0-1048575:burst,"
		"weight=2");
	add_spec(g, "ipv4");
	CHECK_EQ(gpugen_stream_def_init(h, &d, 6, GPUGEN_PROTO_TCP), 0);
	d.tcp_flags = 0x12;
	d.size_min = 100;
	d.size_max = 300;
	d.size_step = 7;
	d.size_mode = GPUGEN_SIZES_STEP;
	d.stamp = 0;
	d.weight = 2;
	d.n_vars = 2;
	d.vars[0] = (struct gpugen_var_def){ .field = { NULL, 60, 2 },
		.op = GPUGEN_VAR_DEC, .min = 1, .max = 500, .step = 1,
		.has_init = 1, .init = 77 };
	d.vars[1] = (struct gpugen_var_def){ .field.name = "ipv6.flow",
		.op = GPUGEN_VAR_RANDOM, .max = 1048575, .step = 1,
		.burst = 1 };
	add_def(h, &d);
	CHECK_EQ(gpugen_stream_def_init(h, &d, 4, GPUGEN_PROTO_UDP), 0);
	add_def(h, &d);
	same_frames(g, h);
	gpugen_free(g);
	gpugen_free(h);
}

/* A struct that breaks one rule: refused with rc and a message, and
 * nothing added. */
static void
bad(struct gpugen *g, const struct gpugen_stream_def *d, int rc,
		const char *what)
{
	char err[256] = "";
	uint32_t before = gpugen_n_streams(g);
	int got = gpugen_add_stream(g, d, err, sizeof(err));

	CHECK(got == rc && err[0] != '\0', "%s: %d (%s), wanted %d", what, got,
		err, rc);
	CHECK(gpugen_n_streams(g) == before, "%s: a stream was added", what);
}

static void
test_bad(void)
{
	struct gpugen *g = new_gen();
	struct gpugen_stream_def ok, d;

	CHECK_EQ(gpugen_stream_def_init(g, &ok, 5, GPUGEN_PROTO_UDP), -EINVAL);
	CHECK_EQ(gpugen_stream_def_init(g, &ok, 4, 1), -EINVAL);
	CHECK_EQ(gpugen_stream_def_init(g, NULL, 4, 6), -EINVAL);
	CHECK_EQ(gpugen_stream_def_init(g, &ok, 4, GPUGEN_PROTO_UDP), 0);
	CHECK_EQ(gpugen_add_stream(g, NULL, NULL, 0), -EINVAL);
	CHECK_EQ(gpugen_add_stream(NULL, &ok, NULL, 0), -EINVAL);
#define BAD(rc, what, change) do { d = ok; change; bad(g, &d, rc, what); } \
	while (0)
	BAD(-EINVAL, "IP version 5", d.ip_version = 5);
	BAD(-EINVAL, "protocol ICMP", d.proto = 1);
	BAD(-EINVAL, "weight 0", d.weight = 0);
	BAD(-EINVAL, "3 VLAN tags", d.n_vlans = 3);
	BAD(-EINVAL, "VLAN 5000", (d.n_vlans = 1, d.vid[0] = 5000));
	BAD(-EINVAL, "pcp 8", d.pcp = 8);
	BAD(-EINVAL, "min > max", (d.size_min = 200, d.size_max = 100));
	BAD(-EINVAL, "below the Ethernet minimum", d.size_min = 60);
	BAD(-EMSGSIZE, "beyond the data room", d.size_max = ROOM + 5);
	BAD(-EMSGSIZE, "beyond the largest frame",
		d.size_max = GPUGEN_FRAME_MAX + 1);
	BAD(-EINVAL, "size mode 3", (d.size_max = 200, d.size_mode = 3));
	BAD(-EINVAL, "size step 0", (d.size_max = 200,
		d.size_mode = GPUGEN_SIZES_STEP, d.size_step = 0));
	BAD(-EINVAL, "stamp 2", d.stamp = 2);
	BAD(-ENOSPC, "17 variables", d.n_vars = GPUGEN_MAX_VARS + 1);
	BAD(-ENOENT, "unknown field", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.nope",
			.max = 5, .step = 1 }));
	BAD(-ENXIO, "a TCP field in a UDP frame", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "tcp.seq",
			.max = 5, .step = 1 }));
	BAD(-EINVAL, "var min > max", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.sport",
			.min = 9, .max = 5, .step = 1 }));
	BAD(-EINVAL, "var step 0", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.sport",
			.max = 5 }));
	BAD(-EINVAL, "var op 7", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.sport",
			.op = 7, .max = 5, .step = 1 }));
	BAD(-ERANGE, "var wider than its field", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field.name = "udp.sport",
			.max = 70000, .step = 1 }));
	BAD(-EINVAL, "a 3-byte write", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field = { NULL, 40, 3 },
			.max = 5, .step = 1 }));
	BAD(-ERANGE, "a write past the frame", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .field = { NULL, 4000, 2 },
			.max = 5, .step = 1 }));
	BAD(-EINVAL, "tuple beyond IPv4", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .tuple = 1,
			.field.name = "ipv4.src", .port_field.name = "udp.sport",
			.max = 1ull << 32, .port_max = 5 }));
	BAD(-EINVAL, "tuple ports min > max", (d.n_vars = 1,
		d.vars[0] = (struct gpugen_var_def){ .tuple = 1,
			.field.name = "ipv4.src", .port_field.name = "udp.sport",
			.max = 5, .port_min = 9, .port_max = 5 }));
#undef BAD
	CHECK_EQ(gpugen_n_streams(g), 0u);
	/* The good one after all the bad. */
	CHECK_EQ(gpugen_add_stream(g, &ok, NULL, 0), 1);
	gpugen_free(g);
}

int
main(void)
{
	CHECK_CASE(test_ipv4_udp);
	CHECK_CASE(test_ipv6_tcp);
	CHECK_CASE(test_bad);
	return check_finish("gpugen-struct");
}
