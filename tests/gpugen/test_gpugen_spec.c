/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen's spec parser and CPU build: frames checked field by field
 * through the parser, checksums summed to 0xffff, variables, sizes,
 * IMIX, stamps, pcap templates; every bad spec refused with a message
 * naming it, adding nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "check.h"
#include "gpugen.h"
#include "gpugen_core.h"

static struct gpugen *
new_gen(uint64_t seed)
{
	struct gpugen_conf c = { .data_room = 2048, .burst = 4, .seed = seed };
	struct gpugen *g;

	if (gpugen_create(&g, &c) != 0) {
		fprintf(stderr, "gpugen_create failed\n");
		exit(1);
	}
	return g;
}

static int
add(struct gpugen *g, const char *spec)
{
	char err[256] = "";
	int rc = gpugen_add_spec(g, spec, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "  (spec '%s': %s)\n", spec, err);
	return rc;
}

/* Every checksum of the frame sums to 0xffff (one's complement). */
static int
csums_ok(const uint8_t *f, uint32_t len)
{
	struct gpurx_pkt_info pi;
	uint32_t sum;

	if (gpurx_pkt_parse(f, len, len, &pi) != GPURX_MAL_NONE)
		return 0;
	if (pi.ip_version == 4) {
		sum = gpugen_csum_add(0, f + pi.l3_off, (f[pi.l3_off] & 15) * 4u);
		if (gpugen_csum_fold(sum) != 0xffff)
			return 0;
	}
	if (pi.ip_version != 0 && (pi.l4_proto == GPURX_IPPROTO_UDP ||
			pi.l4_proto == GPURX_IPPROTO_TCP)) {
		uint32_t l4len = pi.ip_end - pi.l4_off;

		sum = gpugen_csum_pseudo(f + pi.l3_off, pi.ip_version,
			pi.l4_proto, l4len);
		sum = gpugen_csum_add(sum, f + pi.l4_off, l4len);
		if (gpugen_csum_fold(sum) != 0xffff)
			return 0;
	}
	return 1;
}

static uint32_t
build(struct gpugen *g, uint64_t n, uint8_t *buf, struct gpurx_pkt_info *pi)
{
	uint32_t len = gpugen_build_cpu(g, n, 1000 + n, buf, 2048, NULL, NULL);

	CHECK(len == gpugen_len(g, n), "packet %lu: %u vs gpugen_len %u",
		(unsigned long)n, len, gpugen_len(g, n));
	CHECK(gpurx_pkt_parse(buf, len, len, pi) == GPURX_MAL_NONE,
		"packet %lu does not parse", (unsigned long)n);
	CHECK(csums_ok(buf, len), "packet %lu: bad checksum", (unsigned long)n);
	return len;
}

/* The library linked is the header's version, in both spellings. */
static void
test_version(void)
{
	char v[32];

	snprintf(v, sizeof(v), "%d.%d.%d", GPUGEN_VERSION_MAJOR,
		GPUGEN_VERSION_MINOR, GPUGEN_VERSION_PATCH);
	CHECK(strcmp(gpugen_version(), GPUGEN_VERSION) == 0, "%s",
		gpugen_version());
	CHECK(strcmp(v, GPUGEN_VERSION) == 0, "%s", v);
	CHECK(GPUGEN_VERSION_NUM == ((GPUGEN_VERSION_MAJOR << 16) |
		(GPUGEN_VERSION_MINOR << 8) | GPUGEN_VERSION_PATCH), "num");
}

static void
test_defaults(void)
{
	struct gpugen *g = new_gen(1);
	struct gpurx_pkt_info pi;
	struct gpugen_stamp st;
	uint8_t buf[2048];
	uint32_t len;

	CHECK(add(g, "ipv4") == 1, "default stream");
	len = build(g, 0, buf, &pi);
	CHECK(len == 124, "default size 128 with FCS: %u", len);
	CHECK(pi.ip_version == 4 && pi.l4_proto == GPURX_IPPROTO_UDP,
		"ipv4/udp");
	CHECK(pi.sport == 1024 && pi.dport == 1024, "ports");
	CHECK(memcmp(pi.src + 12, "\x0a\x00\x00\x01", 4) == 0, "src 10.0.0.1");
	CHECK(gpugen_stamp_find(buf, len, &pi, &st) == 0 && st.stream == 0 &&
		st.seq == 0 && st.tx_ns == 1000, "stamp on by default");
	len = build(g, 5, buf, &pi);
	CHECK(gpugen_stamp_find(buf, len, &pi, &st) == 0 && st.seq == 5 &&
		st.tx_ns == 1005, "stamp of packet 5");
	gpugen_free(g);

	/* Numbers are decimal, or hex after 0x: 010 is ten, not eight. */
	g = new_gen(1);
	CHECK(add(g, "udp,ttl=010,sport=0x50") == 1, "ttl=010");
	build(g, 0, buf, &pi);
	CHECK(pi.ttl == 10 && pi.sport == 80, "ttl %u sport %u", pi.ttl,
		pi.sport);
	gpugen_free(g);
}

/* flags= as a number or tcpdump's letters. */
static void
test_tcp_flags(void)
{
	static const struct {
		const char *v;
		int flags;	/* -1: refused */
	} c[] = {
		{ "S", 0x02 }, { "SA", 0x12 }, { "AS", 0x12 }, { "FA", 0x11 },
		{ "R", 0x04 }, { "PA", 0x18 }, { ".", 0x10 }, { "UEC", 0xe0 },
		{ "FSRPAUEC", 0xff }, { "24", 24 }, { "0x12", 0x12 },
		{ "s", -1 }, { "SS", -1 }, { "A.", -1 }, { "X", -1 },
		{ "", -1 }, { "256", -1 },
	};
	struct gpurx_pkt_info pi;
	uint8_t buf[2048];
	char spec[64];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gpugen *g = new_gen(1);

		snprintf(spec, sizeof(spec), "ipv4,tcp,flags=%s", c[i].v);
		if (c[i].flags < 0) {
			CHECK(add(g, spec) < 0, "'%s' accepted", spec);
		} else if (add(g, spec) != 1) {
			CHECK(0, "'%s' refused", spec);
		} else {
			build(g, 0, buf, &pi);
			CHECK(pi.tcp_flags == c[i].flags, "%s: flags %#x, want %#x",
				spec, pi.tcp_flags, c[i].flags);
		}
		gpugen_free(g);
	}
}

static void
test_ipv6_tcp_vlan(void)
{
	struct gpugen *g = new_gen(1);
	struct gpurx_pkt_info pi;
	uint8_t buf[2048];
	uint32_t len;

	CHECK(add(g, "eth,vlan=100,vlan=200,ipv6,tcp,src=2001:db8::5,"
		"dst=2001:db8::6,sport=5,dport=443,size=200,dmac=00:11:22:33:44:55")
		== 1, "ipv6 tcp qinq");
	len = build(g, 3, buf, &pi);
	CHECK(len == 196, "size 200: %u", len);
	CHECK(pi.vlan_count == 2 && pi.vlan_id == 100 &&
		pi.inner_vlan_id == 200, "two tags %u %u %u", pi.vlan_count,
		pi.vlan_id, pi.inner_vlan_id);
	CHECK(pi.ip_version == 6 && pi.l4_proto == GPURX_IPPROTO_TCP &&
		pi.dport == 443 && pi.sport == 5, "ipv6 tcp 5->443");
	CHECK(pi.src[15] == 5 && pi.dst[15] == 6, "addresses");
	CHECK(memcmp(buf, "\x00\x11\x22\x33\x44\x55", 6) == 0, "dmac");
	gpugen_free(g);
}

static void
test_vars(void)
{
	struct gpugen *g = new_gen(7);
	struct gpurx_pkt_info pi;
	uint8_t buf[2048];
	int seen_other = 0;

	CHECK(add(g, "udp,var=udp.sport:inc:1000-1002,"
		"var=ipv4.dst:dec:10.0.0.1-10.0.0.3,"
		"var=udp.dport:random:100-199,var=ipv4.ttl:inc:1-255:step=2:burst")
		== 1, "vars");
	for (uint64_t n = 0; n < 40; n++) {
		build(g, n, buf, &pi);
		CHECK(pi.sport == 1000 + n % 3, "sport inc %lu: %u",
			(unsigned long)n, pi.sport);
		CHECK(pi.dst[15] == 3 - n % 3, "dst dec %lu: %u",
			(unsigned long)n, pi.dst[15]);
		CHECK(pi.dport >= 100 && pi.dport <= 199, "dport random %u",
			pi.dport);
		seen_other |= pi.dport != 100 + 0;
		CHECK(pi.ttl == 1 + 2 * (n / 4) % 255, "ttl per burst of 4, "
			"packet %lu: %u", (unsigned long)n, pi.ttl);
	}
	CHECK(seen_other, "random dport varies");
	gpugen_free(g);

	/*
	 * The TOS byte sits between the IPv4 header's version/IHL byte and
	 * its total length, both the engine's: it alone is written, and
	 * the header checksum follows it (build() checks every checksum).
	 */
	g = new_gen(7);
	CHECK(add(g, "udp,tos=0x10,var=ipv4.tos:inc:0-255:init=250:step=3,"
		"var=ip.ttl:dec:1-9") == 1, "tos");
	for (uint64_t n = 0; n < 300; n++) {
		uint32_t len = build(g, n, buf, &pi);
		const uint8_t *ip = buf + pi.l3_off;

		CHECK(ip[1] == (250 + 3 * n) % 256, "tos inc %lu: %u",
			(unsigned long)n, ip[1]);
		CHECK(ip[0] == 0x45 && gpurx_be16(ip + 2) == len - pi.l3_off,
			"tos %lu: version, IHL or total length changed: %02x %u",
			(unsigned long)n, ip[0], gpurx_be16(ip + 2));
		CHECK(pi.ttl == 9 - n % 9, "ttl dec %lu: %u",
			(unsigned long)n, pi.ttl);
	}
	gpugen_free(g);

	/*
	 * Masked fields take every value of their bits and only those:
	 * the VLAN id to 4095 beside the priority to 7 in the same two
	 * bytes, the flow label to 2^20 - 1 in its three bytes and a half
	 * (the traffic class's low bits beside it untouched).
	 */
	g = new_gen(7);
	CHECK(add(g, "vlan=1,udp,var=vlan.id:inc:4093-4095,"
		"var=vlan.pcp:dec:0-7") == 1, "vlan id and pcp");
	for (uint64_t n = 0; n < 24; n++) {
		build(g, n, buf, &pi);
		CHECK(pi.vlan_id == 4093 + n % 3 && buf[14] >> 5 == 7 - n % 8,
			"vlan %lu: id %u pcp %u", (unsigned long)n, pi.vlan_id,
			buf[14] >> 5);
	}
	gpugen_free(g);
	g = new_gen(7);
	CHECK(add(g, "ipv6,udp,tos=0xff,var=ipv6.flow:inc:0xffffe-0xfffff")
		== 1, "flow label");
	for (uint64_t n = 0; n < 4; n++) {
		const uint8_t *ip;

		build(g, n, buf, &pi);
		ip = buf + pi.l3_off;
		CHECK((gpurx_be32(ip) & 0xfffff) == 0xffffe + n % 2 &&
			(gpurx_be32(ip) >> 20) == 0x6ff,
			"flow label %lu: word %08x", (unsigned long)n,
			gpurx_be32(ip));
	}
	gpugen_free(g);

	/* A tuple: address varies fastest, then the port. */
	g = new_gen(7);
	CHECK(add(g, "tuple=ipv4.src:udp.sport:10.1.0.1-10.1.0.2:5000-5001")
		== 1, "tuple");
	for (uint64_t n = 0; n < 8; n++) {
		build(g, n, buf, &pi);
		CHECK(pi.src[15] == 1 + n % 2 && pi.sport == 5000 + (n / 2) % 2,
			"tuple %lu: .%u:%u", (unsigned long)n, pi.src[15],
			pi.sport);
	}
	gpugen_free(g);
}

static void
test_sizes(void)
{
	struct gpugen *g = new_gen(3);
	struct gpurx_pkt_info pi;
	uint8_t buf[2048];
	uint32_t len, lens[64];
	int differ = 0;

	CHECK(add(g, "size=100-120:step=10,var=udp.sport:inc:1-100") == 1,
		"stepped size");
	for (uint64_t n = 0; n < 7; n++) {
		len = build(g, n, buf, &pi);
		CHECK(len == 96 + 10 * (n % 3), "stepped %lu: %u",
			(unsigned long)n, len);
		CHECK(pi.sport == 1 + n, "sport with size %lu", (unsigned long)n);
		CHECK(pi.ip_end == len, "IP length follows the size");
	}
	CHECK(gpugen_fixed_len(g) == 0, "stepped sizes: fixed length %u",
		gpugen_fixed_len(g));
	gpugen_free(g);

	/* One length for every stream, or none. */
	g = new_gen(3);
	CHECK(add(g, "size=200") == 1 && add(g, "ipv6,tcp,size=200") == 1,
		"two streams of 200");
	CHECK(gpugen_fixed_len(g) == 196, "fixed length %u, want 196",
		gpugen_fixed_len(g));
	CHECK(add(g, "size=300") == 1, "a third stream");
	CHECK(gpugen_fixed_len(g) == 0, "mixed lengths: fixed length %u",
		gpugen_fixed_len(g));
	gpugen_free(g);

	g = new_gen(3);
	CHECK(add(g, "size=70-1518:random") == 1, "random size");
	for (uint64_t n = 0; n < 64; n++) {
		lens[n] = build(g, n, buf, &pi);
		CHECK(lens[n] >= 66 && lens[n] <= 1514, "random size %u", lens[n]);
		differ |= n > 0 && lens[n] != lens[0];
	}
	CHECK(differ, "random sizes vary");
	gpugen_free(g);
	/* Same seed, same sizes; another seed, others. */
	g = new_gen(3);
	add(g, "size=70-1518:random");
	differ = 0;
	for (uint64_t n = 0; n < 64; n++)
		CHECK(gpugen_len(g, n) == lens[n], "repeatable with the seed");
	gpugen_free(g);
	g = new_gen(4);
	add(g, "size=70-1518:random");
	for (uint64_t n = 0; n < 64; n++)
		differ |= gpugen_len(g, n) != lens[n];
	CHECK(differ, "another seed, other sizes");
	gpugen_free(g);
}

static void
test_imix(void)
{
	struct gpugen *g = new_gen(1);
	static const uint32_t want[12] = { 60, 60, 60, 60, 60, 60, 60,
		590, 590, 590, 590, 1514 };
	struct gpugen_stream_info si;
	struct gpurx_pkt_info pi;
	struct gpugen_stamp st;
	uint8_t buf[2048];
	uint32_t len;

	CHECK(add(g, "imix,stamp=off") == 3, "imix: 3 streams");
	CHECK(add(g, "size=100,weight=2") == 1, "a fourth stream");
	CHECK(gpugen_n_streams(g) == 4, "4 streams");
	CHECK(gpugen_stream_info(g, 1, &si) == 0 && si.weight == 4 &&
		si.len_min == 590 && si.stamp_off == 0, "imix stream 1");
	for (uint64_t n = 0; n < 28; n++) {
		uint32_t exp = n % 14 < 12 ? want[n % 14] : 96;
		uint32_t s;
		uint64_t idx;

		len = gpugen_build_cpu(g, n, 0, buf, sizeof(buf), &s, &idx);
		CHECK(len == exp, "imix packet %lu: %u, want %u",
			(unsigned long)n, len, exp);
		if (s == 3) {
			gpurx_pkt_parse(buf, len, len, &pi);
			CHECK(gpugen_stamp_find(buf, len, &pi, &st) == 0 &&
				st.stream == 3 && st.seq == idx && idx ==
				(n / 14) * 2 + n % 14 - 12, "stream 3 seq");
		}
	}
	CHECK(gpugen_max_len(g) == 1514, "max len");
	gpugen_free(g);

	/* As documented, plain "imix": the stamp where it fits (594 and
	 * 1518 B), left out of the 64 B frames and said by stream_info;
	 * stamp=on insists and is refused. */
	g = new_gen(1);
	CHECK(add(g, "imix") == 3, "plain imix: 3 streams");
	CHECK(gpugen_stream_info(g, 0, &si) == 0 && si.stamp_off == 0,
		"imix 64 B: no stamp");
	for (uint32_t k = 1; k < 3; k++) {
		CHECK(gpugen_stream_info(g, k, &si) == 0 && si.stamp_off != 0,
			"imix stream %u: stamped", k);
		len = gpugen_build_cpu(g, 7 + (k - 1) * 4, 5, buf, sizeof(buf),
			NULL, NULL);
		gpurx_pkt_parse(buf, len, len, &pi);
		CHECK(gpugen_stamp_find(buf, len, &pi, &st) == 0 &&
			st.stream == k, "imix stream %u: stamp read back", k);
	}
	gpugen_free(g);
	g = new_gen(1);
	CHECK(add(g, "imix,stamp=on") < 0, "imix,stamp=on refused");
	gpugen_free(g);
}

/* Each bad spec: refused with rc, a message holding what, nothing added. */
static void
test_bad(void)
{
	static const struct {
		const char *spec;
		int rc;
		const char *what;
	} bad[] = {
		{ "ipv4,foo=1", -EINVAL, "unknown key" },
		{ "ipv4,bar", -EINVAL, "unknown word" },
		{ "", -EINVAL, "empty" },
		{ "ipv4,,udp", -EINVAL, "empty item" },
		{ "size=3000", -EMSGSIZE, "data room" },
		{ "size=80-70", -EINVAL, "min > max" },
		{ "size=40,stamp=off", -EINVAL, "Ethernet minimum" },
		{ "size=64", -EMSGSIZE, "stamp" },
		{ "size=abc", -EINVAL, "size" },
		{ "size=0", -EINVAL, "below the Ethernet minimum" },
		{ "size=1", -EINVAL, "below the Ethernet minimum" },
		{ "var=udp.sport:inc:0-99999999999999999999999", -ERANGE,
			"range '0-99999999999999999999999' holds a number above" },
		{ "var=udp.sport:inc: 1-5", -EINVAL, "is not MIN-MAX" },
		{ "var=udp.sport:inc:+1-5", -EINVAL, "is not MIN-MAX" },
		{ "sport=0x", -EINVAL, "0..65535" },
		{ "size=100-200:step=0", -EINVAL, "step" },
		{ "size=100-200:bogus", -EINVAL, "size option" },
		{ "var=udp.sport:inc:10-5", -EINVAL, "min > max" },
		{ "var=udp.sport:inc:0-70000", -ERANGE, "does not fit" },
		{ "var=udp.sport:jump:1-2", -EINVAL, "operation" },
		{ "var=udp.sport:inc", -EINVAL, "FIELD:OP:MIN-MAX" },
		{ "var=udp.sport:inc:1-5:init=9", -EINVAL, "init outside" },
		{ "var=udp.sport:inc:1-5:wat", -EINVAL, "option" },
		{ "var=@200/2:inc:0-10", -ERANGE, "past the end" },
		{ "size=128-1000,var=@200/2:inc:0-10", -ERANGE, "past the end" },
		{ "var=@24/2:inc:0-10", -EPERM, "engine keeps" },
		{ "var=@50/4:inc:0-10", -EPERM, "engine keeps" },
		{ "var=@14/1:inc:0-10", -EPERM, "header length" },
		{ "var=@15/2:inc:0-10", -EPERM, "engine keeps" },
		{ "var=@16/2:inc:0-10", -EPERM, "engine keeps" },
		{ "var=udp.len:inc:0-10", -ENOENT, "unknown field" },
		{ "ipv6,var=ipv4.src:inc:1-2", -ENXIO, "no such header" },
		{ "tcp,var=udp.sport:inc:1-2", -ENXIO, "no such header" },
		{ "tuple=ipv4.src:udp.sport:10.0.0.2-10.0.0.1:1-2", -EINVAL,
			"min > max" },
		{ "tuple=ipv4.src:udp.sport:1-2", -EINVAL, "wanted" },
		{ "src=10.0.0.1,dst=2001:db8::1", -EINVAL, "IPv6 address" },
		{ "src=10.0.0.300", -EINVAL, "not an IPv4" },
		{ "ipv6,ipv4", -EINVAL, "already" },
		{ "udp,tcp", -EINVAL, "udp and tcp" },
		{ "vlan=5000", -EINVAL, "0..4095" },
		{ "vlan=1,vlan=2,vlan=3", -EINVAL, "at most 2" },
		{ "vlan=1,var=vlan.id:inc:0-4096", -ERANGE, "12 bits (0-4095)" },
		{ "vlan=1,var=vlan.pcp:inc:0-9", -ERANGE, "3 bits (0-7)" },
		{ "ipv6,var=ipv6.tc:inc:0-256", -ERANGE, "8 bits (0-255)" },
		{ "ipv6,var=ipv6.flow:random:0-0x100000", -ERANGE,
			"20 bits (0-1048575)" },
		{ "dmac=00:11:22", -EINVAL, "MAC" },
		{ "sport=65536", -EINVAL, "0..65535" },
		{ "weight=0", -EINVAL, "weight" },
		{ "stamp=maybe", -EINVAL, "on or off" },
		{ "imix,size=100", -EINVAL, "imix" },
		{ "all", -EINVAL, "pcap" },
		{ "pcap=/nonexistent/x.pcap", -ENOENT, "pcap=" },
		{ "pcap=/dev/null,ipv4", -EINVAL, "comes from the file" },
		{ "imix,stamp=on", -EMSGSIZE, "stamp" },	/* 64-byte frames */
	};
	struct gpugen *g = new_gen(1);
	char err[512];

	CHECK(add(g, "ipv4") == 1, "a good stream first");
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int rc;

		err[0] = '\0';
		rc = gpugen_add_spec(g, bad[k].spec, err, sizeof(err));
		CHECK(rc == bad[k].rc && strstr(err, bad[k].what) != NULL,
			"'%s': rc %d (want %d), message '%s' (want '%s')",
			bad[k].spec, rc, bad[k].rc, err, bad[k].what);
		CHECK(gpugen_n_streams(g) == 1, "'%s' added a stream",
			bad[k].spec);
	}
	gpugen_free(g);
}

/* A new pcap file at path, to dump into; NULL (a failed check) if not. */
static pcap_dumper_t *
dump_open(const char *path, pcap_t **p)
{
	pcap_dumper_t *d;

	*p = pcap_open_dead(DLT_EN10MB, 65535);
	d = *p != NULL ? pcap_dump_open(*p, path) : NULL;
	if (d == NULL) {
		CHECK(0, "cannot write %s", path);
		if (*p != NULL)
			pcap_close(*p);
		*p = NULL;
	}
	return d;
}

static void
test_pcap(const char *dir)
{
	char path[512], spec[600];
	struct gpugen_pkt_spec s;
	struct gpugen_pkt_layout lay;
	struct gpurx_pkt_info pi;
	struct pcap_pkthdr h;
	uint8_t buf[2048], frames[3][256];
	uint32_t lens[3];
	pcap_t *p;
	pcap_dumper_t *d;
	struct gpugen *g;

	snprintf(path, sizeof(path), "%s/gpugen-spec-test.pcap", dir);
	d = dump_open(path, &p);
	if (d == NULL)
		return;
	for (int k = 0; k < 3; k++) {
		memset(&s, 0, sizeof(s));
		s.ip_version = k == 2 ? 6 : 4;
		s.src[0] = 10;
		s.dst[0] = 10;
		s.dst[3] = (uint8_t)k;
		s.proto = k == 1 ? GPURX_IPPROTO_TCP : GPURX_IPPROTO_UDP;
		s.sport = 7;
		s.dport = (uint16_t)(80 + k);
		s.payload_len = 40 + 10u * k;
		lens[k] = gpugen_pkt_build(&s, frames[k], 256, &lay);
		/* A broken checksum, as offloaded captures have. */
		frames[k][lay.l4_csum_off] ^= 0x55;
		memset(&h, 0, sizeof(h));
		h.caplen = h.len = lens[k];
		pcap_dump((u_char *)d, &h, frames[k]);
	}
	pcap_dump_close(d);
	pcap_close(p);

	g = new_gen(1);
	snprintf(spec, sizeof(spec), "pcap=%s", path);
	CHECK(add(g, spec) == 1, "pcap first packet");
	/* all: one replay stream, the file's frames in turn; its variable
	 * counts the stream's packets. */
	snprintf(spec, sizeof(spec), "pcap=%s,all,var=@34/2:inc:1-3", path);
	CHECK(add(g, spec) == 1, "pcap all packets: one stream");
	snprintf(spec, sizeof(spec), "pcap=%s,stamp=on", path);
	CHECK(add(g, spec) == 1, "pcap stamped");
	for (uint64_t n = 0; n < 30; n++) {
		uint32_t len = build(g, n, buf, &pi);
		uint64_t i = n / 3;
		uint32_t k = n % 3 == 1 ? (uint32_t)(i % 3) : 0;

		CHECK(len == lens[k], "pcap packet %lu: len %u want %u",
			(unsigned long)n, len, lens[k]);
		CHECK(pi.dport == 80 + k, "pcap packet %lu: dport %u",
			(unsigned long)n, pi.dport);
		CHECK(gpugen_stream_of(g, n) == n % 3, "pcap packet %lu: stream",
			(unsigned long)n);
		if (n % 3 == 1 && k != 2)	/* the IPv4 ones */
			CHECK(pi.sport == 1 + i % 3, "pcap var on %lu: sport %u",
				(unsigned long)n, pi.sport);
	}
	snprintf(spec, sizeof(spec), "pcap=%s,all,var=udp.sport:inc:1-3", path);
	CHECK(gpugen_add_spec(g, spec, NULL, 0) == -ENXIO,
		"a name the TCP packet lacks");
	CHECK(gpugen_n_streams(g) == 3, "nothing added");
	gpugen_free(g);

	/* More frames than streams: 300 frames, sizes 60..359, one stream,
	 * every frame whole and in order, with and without a stamp. */
	d = dump_open(path, &p);
	if (d == NULL)
		return;
	for (uint32_t k = 0; k < 300; k++) {
		uint8_t f[400];

		memset(&s, 0, sizeof(s));
		s.ip_version = 4;
		s.src[0] = 10;
		s.dst[0] = 10;
		s.proto = GPURX_IPPROTO_UDP;
		s.sport = (uint16_t)(1000 + k);
		s.dport = 53;
		s.payload_len = 60 + k - 42;
		memset(&h, 0, sizeof(h));
		h.caplen = h.len = gpugen_pkt_build(&s, f, sizeof(f), &lay);
		pcap_dump((u_char *)d, &h, f);
	}
	pcap_dump_close(d);
	pcap_close(p);
	for (int stamp = 0; stamp < 2; stamp++) {
		struct gpugen_stream_info si;

		g = new_gen(1);
		snprintf(spec, sizeof(spec), "pcap=%s,all%s", path,
			stamp ? ",stamp=on" : "");
		CHECK(add(g, spec) == 1, "300 frames: one stream");
		CHECK(gpugen_stream_info(g, 0, &si) == 0 && si.len_min == 60 &&
			si.len_max == 359, "300 frames: sizes %u..%u", si.len_min,
			si.len_max);
		for (uint64_t n = 0; n < 650; n++) {
			uint32_t len = build(g, n, buf, &pi);

			CHECK(len == 60 + n % 300 && pi.sport == 1000 + n % 300,
				"replay packet %lu: len %u sport %u",
				(unsigned long)n, len, pi.sport);
			/* 42 bytes of headers: the stamp fits from 66 bytes,
			 * in 294 of the 300 frames; their numbers run on
			 * without gaps. */
			if (stamp) {
				struct gpugen_stamp gs;
				int found = gpugen_stamp_find(buf, len, &pi,
					&gs) == 0;
				uint64_t want = n / 300 * 294 + (n % 300 - 6);

				CHECK(found == (len >= 66) && (!found ||
					(gs.stream == 0 && gs.seq == want)),
					"replay packet %lu (%u bytes): stamp %d "
					"seq %lu", (unsigned long)n, len, found,
					found ? (unsigned long)gs.seq : 0UL);
			}
		}
		gpugen_free(g);
	}
	/* With no frame that has room for the stamp, stamp=on is refused. */
	d = dump_open(path, &p);
	if (d != NULL) {
		uint8_t f[64];
		char err[256] = "";

		memset(&s, 0, sizeof(s));
		s.ip_version = 4;
		s.proto = GPURX_IPPROTO_UDP;
		s.payload_len = 18;
		memset(&h, 0, sizeof(h));
		h.caplen = h.len = gpugen_pkt_build(&s, f, sizeof(f), &lay);
		pcap_dump((u_char *)d, &h, f);
		pcap_dump((u_char *)d, &h, f);
		pcap_dump_close(d);
		g = new_gen(1);
		snprintf(spec, sizeof(spec), "pcap=%s,all,stamp=on", path);
		CHECK(gpugen_add_spec(g, spec, err, sizeof(err)) == -EMSGSIZE &&
			strstr(err, "no frame has room") != NULL &&
			gpugen_n_streams(g) == 0, "unstampable replay: '%s'", err);
		gpugen_free(g);
		pcap_close(p);
	}

	/* A record that claims more bytes captured than the packet had. */
	d = dump_open(path, &p);
	if (d == NULL)
		return;
	memset(&h, 0, sizeof(h));
	h.caplen = lens[0];
	h.len = 20;
	pcap_dump((u_char *)d, &h, frames[0]);
	pcap_dump_close(d);
	pcap_close(p);
	g = new_gen(1);
	snprintf(spec, sizeof(spec), "pcap=%s", path);
	{
		char err[256] = "", want[64];

		snprintf(want, sizeof(want), "malformed: %u bytes captured of a "
			"20-byte packet", lens[0]);
		CHECK(gpugen_add_spec(g, spec, err, sizeof(err)) == -EINVAL &&
			strstr(err, want) != NULL, "caplen > len: '%s'", err);
	}
	gpugen_free(g);
	unlink(path);
}

/* A pcap file at path of one UDP frame of len bytes (no FCS). */
static int
dump_one(const char *path, uint32_t len)
{
	static uint8_t f[GPUGEN_FRAME_MAX + 64];
	struct gpugen_pkt_spec s;
	struct gpugen_pkt_layout lay;
	struct pcap_pkthdr h;
	pcap_dumper_t *d;
	pcap_t *p;

	d = dump_open(path, &p);
	if (d == NULL)
		return -1;
	memset(&s, 0, sizeof(s));
	s.ip_version = 4;
	s.proto = GPURX_IPPROTO_UDP;
	s.payload_len = len - 42;
	memset(&h, 0, sizeof(h));
	h.caplen = h.len = gpugen_pkt_build(&s, f, sizeof(f), &lay);
	pcap_dump((u_char *)d, &h, f);
	pcap_dump_close(d);
	pcap_close(p);
	return h.caplen == len ? 0 : -1;
}

/*
 * Jumbo frames: up to GPUGEN_FRAME_MAX with the FCS where the data room
 * holds them (a larger room counts as that), a mix of 64, 1500 and 9000
 * bytes as a tester sends it, checksums over the whole frame, stamps and
 * variables in place; a byte more refused, from a spec and from a pcap
 * file, naming the limit; the default room refuses what passes it.
 */
static void
test_jumbo(const char *dir)
{
	struct gpugen_conf c = { .data_room = UINT32_MAX, .burst = 4,
		.seed = 3 };
	static uint8_t buf[GPUGEN_FRAME_MAX];
	static const uint32_t sizes[] = { 64, 1500, 9000, 9216 };
	uint32_t seen[4] = { 0 };
	char path[512], spec[600], err[512];
	struct gpurx_pkt_info pi;
	struct gpugen *g;

	if (gpugen_create(&g, &c) != 0) {
		CHECK(0, "gpugen_create");
		return;
	}
	CHECK(add(g, "ipv4,udp,size=64,stamp=off,weight=4") == 1 &&
		add(g, "ipv4,tcp,size=1500,weight=2") == 1 &&
		add(g, "ipv4,udp,size=9000,var=udp.sport:inc:1-100") == 1 &&
		add(g, "vlan=7,ipv6,tcp,size=9216,var=ipv6.src:random:0-0xffff") == 1,
		"jumbo streams");
	CHECK(gpugen_max_len(g) == GPUGEN_FRAME_MAX - 4 &&
		gpugen_fixed_len(g) == 0, "max len %u", gpugen_max_len(g));
	for (uint64_t n = 0; n < 800; n++) {
		uint32_t len = gpugen_build_cpu(g, n, 1000 + n, buf, sizeof(buf),
			NULL, NULL);
		uint32_t st = gpugen_stream_of(g, n);
		struct gpugen_stamp gs;

		CHECK(len == sizes[st] - 4 && len == gpugen_len(g, n) &&
			gpurx_pkt_parse(buf, len, len, &pi) == GPURX_MAL_NONE &&
			csums_ok(buf, len), "jumbo packet %lu: %u bytes, or bad",
			(unsigned long)n, len);
		CHECK(st == 0 || (gpugen_stamp_find(buf, len, &pi, &gs) == 0 &&
			gs.stream == st && gs.tx_ns == 1000 + n),
			"jumbo packet %lu: stamp", (unsigned long)n);
		seen[st]++;
	}
	CHECK(seen[0] == 400 && seen[1] == 200 && seen[2] == 100 &&
		seen[3] == 100, "jumbo mix %u/%u/%u/%u", seen[0], seen[1],
		seen[2], seen[3]);
	/* A buffer a byte short of the frame: nothing built. */
	CHECK(gpugen_build_cpu(g, 2 * 8 + 6, 0, buf, 8995, NULL, NULL) == 0 &&
		gpugen_stream_of(g, 22) == 2, "a short buffer took a jumbo frame");
	CHECK(gpugen_add_spec(g, "ipv4,size=9217", err, sizeof(err)) ==
		-EMSGSIZE && strstr(err, "size 9217 beyond the largest frame "
		"the generator makes (9216 bytes with FCS") != NULL,
		"size=9217: '%s'", err);
	CHECK(gpugen_add_spec(g, "ipv4,size=64-99999:random", err,
		sizeof(err)) == -EMSGSIZE && strstr(err, "largest frame") != NULL,
		"size=64-99999: '%s'", err);
	snprintf(path, sizeof(path), "%s/gpugen-jumbo-test.pcap", dir);
	snprintf(spec, sizeof(spec), "pcap=%s,all", path);
	if (dump_one(path, GPUGEN_FRAME_MAX - 4) == 0) {
		CHECK(add(g, spec) == 1 && gpugen_build_cpu(g, 10, 0, buf,
			sizeof(buf), NULL, NULL) != 0, "a 9212-byte pcap frame");
	} else {
		CHECK(0, "cannot write %s", path);
	}
	if (dump_one(path, GPUGEN_FRAME_MAX - 3) == 0) {
		CHECK(gpugen_add_spec(g, spec, err, sizeof(err)) == -EMSGSIZE &&
			strstr(err, "packet 1 of 9213 bytes (9217 with FCS) beyond "
			"the largest frame") != NULL, "9213-byte pcap: '%s'", err);
	} else {
		CHECK(0, "cannot write %s", path);
	}
	CHECK(gpugen_n_streams(g) == 5, "%u streams", gpugen_n_streams(g));
	gpugen_free(g);
	/* The room given (2048 bytes) still bounds frames below the most. */
	g = new_gen(1);
	CHECK(gpugen_add_spec(g, "ipv4,size=9000", err, sizeof(err)) ==
		-EMSGSIZE && strstr(err, "data room (2048 bytes") != NULL,
		"size=9000 in 2048 bytes: '%s'", err);
	CHECK(gpugen_add_spec(g, spec, err, sizeof(err)) == -EMSGSIZE &&
		strstr(err, "largest frame") != NULL, "9213-byte pcap in 2048: "
		"'%s'", err);
	gpugen_free(g);
	unlink(path);
}

/* One's complement sum of len bytes, big-endian words: the test's own. */
static uint32_t
ones_sum(const uint8_t *p, uint32_t len, uint32_t sum)
{
	for (uint32_t k = 0; k < len; k += 2)
		sum += (uint32_t)p[k] << 8 | (k + 1 < len ? p[k + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/*
 * What a NIC's TX checksum offload does to a frame, from the mbuf's
 * l2_len and l3_len and the flags: the IPv4 header checksum computed
 * over the header; the L4 segment (its length from the IP header) summed
 * as it is, the pseudo-header's sum the field holds included, and
 * complemented, UDP's 0 sent as 0xffff.
 */
static void
nic_offload(uint8_t *f, uint32_t what, uint16_t l2, uint16_t l3, int v)
{
	uint8_t *ip = f + l2, *l4 = f + l2 + l3;
	uint32_t l4_len, coff = what & GPUGEN_CSUM_UDP ? 6 : 16;
	uint16_t c;

	if (what & GPUGEN_CSUM_IP4) {
		c = (uint16_t)~ones_sum(ip, l3, 0);
		ip[10] = c >> 8;
		ip[11] = c & 0xff;
	}
	if (!(what & (GPUGEN_CSUM_UDP | GPUGEN_CSUM_TCP)))
		return;
	l4_len = v == 4 ? ((uint32_t)ip[2] << 8 | ip[3]) - l3 :
		((uint32_t)ip[4] << 8 | ip[5]) + 40 - l3;
	c = (uint16_t)~ones_sum(l4, l4_len, 0);
	if (c == 0 && (what & GPUGEN_CSUM_UDP))
		c = 0xffff;
	l4[coff] = c >> 8;
	l4[coff + 1] = c & 0xff;
}

/*
 * gpugen_conf.csum_offload: each frame, once a NIC's offload has done
 * its part, is byte for byte the frame built with every checksum; before
 * it, the IPv4 checksum is 0 and the L4 field holds the pseudo-header's
 * sum. Variables on the addresses (in the pseudo-header) and the ports,
 * stamps, sizes rebuilt per packet, VLAN tags, IPv6 and IMIX.
 */
static void
test_csum_offload(void)
{
	static const char *const specs[] = {
		"ipv4,udp,var=ipv4.src:inc:10.1.0.1-10.1.0.200,"
			"var=udp.sport:random:1024-65535,size=70-1518:random",
		"vlan=100,ipv6,tcp,dport=443,var=tcp.sport:dec:1000-2000:step=7,"
			"var=ipv6.src:random:0-0xffffffff,size=120-1500:step=13",
		"vlan=10,vlan=20,ipv4,tcp,tuple=ipv4.dst:tcp.dport:"
			"10.9.0.1-10.9.0.50:80-90,var=ipv4.ttl:inc:1-64,size=200",
		"ipv6,udp,var=ipv6.dst:inc:1-1000,stamp=off,size=80",
		"ipv4,tcp,var=ipv4.src:random:1-0xfffffffe,var=ipv4.dst:dec:1-300,"
			"size=100-1518:step=5",
		"imix,ipv4,udp,stamp=off,var=udp.dport:inc:1-65535",
	};
	uint8_t a[2048], b[2048];

	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		struct gpugen_conf c = { .data_room = 2048, .burst = 4,
			.seed = 7 };
		struct gpugen *ga = new_gen(7), *gb;
		uint32_t diff = 0, zero_ip = 0;

		c.csum_offload = 1;
		if (gpugen_create(&gb, &c) != 0) {
			CHECK(0, "gpugen_create");
			gpugen_free(ga);
			return;
		}
		CHECK(add(ga, specs[k]) > 0 && add(gb, specs[k]) > 0, "%s",
			specs[k]);
		for (uint64_t n = 0; n < 3000; n++) {
			struct gpugen_stream_info si;
			uint32_t la = gpugen_build_cpu(ga, n, 5 + n, a, sizeof(a),
				NULL, NULL);
			uint32_t lb = gpugen_build_cpu(gb, n, 5 + n, b, sizeof(b),
				NULL, NULL);

			if (gpugen_stream_info(gb, gpugen_stream_of(gb, n), &si) != 0 ||
					la == 0 || la != lb) {
				diff++;
				continue;
			}
			if (n == 0)
				CHECK(si.csum_offload == ((si.ip_version == 4 ?
					GPUGEN_CSUM_IP4 : 0) |
					(strstr(specs[k], "tcp") ? GPUGEN_CSUM_TCP :
					GPUGEN_CSUM_UDP)) && si.l2_len == 14 +
					4 * (strstr(specs[k], "vlan=20") ? 2 :
					strstr(specs[k], "vlan") ? 1 : 0) &&
					si.l3_len == (si.ip_version == 4 ? 20 : 40),
					"%s: offload %#x, l2 %u, l3 %u", specs[k],
					si.csum_offload, si.l2_len, si.l3_len);
			if (si.ip_version == 4)
				zero_ip += b[si.l2_len + 10] == 0 &&
					b[si.l2_len + 11] == 0;
			nic_offload(b, si.csum_offload, si.l2_len, si.l3_len,
				si.ip_version);
			diff += memcmp(a, b, la) != 0;
		}
		CHECK(diff == 0, "%s: %u of 3000 frames differ from the full "
			"build once offloaded", specs[k], diff);
		CHECK(zero_ip == (strstr(specs[k], "ipv6") ? 0 : 3000),
			"%s: IPv4 checksum 0 in %u of 3000", specs[k], zero_ip);
		gpugen_free(gb);
		gpugen_free(ga);
	}
}

int
main(int argc, char **argv)
{
	test_version();
	test_defaults();
	test_ipv6_tcp_vlan();
	test_tcp_flags();
	test_vars();
	test_sizes();
	test_imix();
	test_bad();
	test_csum_offload();
	test_pcap(argc > 1 ? argv[1] : ".");
	test_jumbo(argc > 1 ? argv[1] : ".");
	return check_finish("gpugen spec tests");
}
