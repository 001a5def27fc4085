/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU build of gpugen_build.h and gpugen_fe.h against the CPU build: the
 * same streams (templates, field programs, stamps) and the same random
 * specs built by kernels and by the host, byte for byte. Exits 77
 * (skipped) without a GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_kernels.h"
#include "pb_specs.h"
#include "gpugen_build.h"
#include "pkt_build_kernels.h"
#include "gpugen_fe.h"
#include "check.h"

#define EXIT_SKIP 77
#define STRIDE 2048
#define N_STREAM 65536
#define N_SPECS 20000

/* One stream on both sides, from packet index first. */
static void
compare_stream(const char *name, const struct gpugen_fe_prog *p,
		const uint8_t *tmpl, uint64_t first)
{
	uint8_t *gpu = malloc((size_t)N_STREAM * STRIDE);
	uint8_t cpu[STRIDE];
	char why[256] = "";
	uint32_t bad = 0;

	CHECK(gpu != NULL, "out of memory");
	if (gpu == NULL)
		return;
	if (gpugen_pb_gpu_stream(p, tmpl, first, N_STREAM, STRIDE, 123456789,
			gpu, why, sizeof(why)) != 0) {
		CHECK(0, "%s: %s", name, why);
		free(gpu);
		return;
	}
	for (uint32_t k = 0; k < N_STREAM; k++) {
		gpugen_fe_make(p, tmpl, cpu, first + k, 123456789);
		if (memcmp(cpu, gpu + (size_t)k * STRIDE, p->tmpl_len) != 0 &&
				bad++ < 5)
			CHECK(0, "%s: packet %llu differs", name,
				(unsigned long long)(first + k));
	}
	CHECK_EQ(bad, 0);
	printf("%s: %u packets from %llu compared\n", name, N_STREAM,
		(unsigned long long)first);
	free(gpu);
}

static int
add_vars(struct gpugen_fe_prog *p)
{
	int v[6];

	v[0] = gpugen_fe_add_var(p, 4, GPUGEN_FE_INC, 0x0a000001, 0x0a00ffff,
		0x0a000010, 3, 0);
	v[1] = gpugen_fe_add_var(p, 2, GPUGEN_FE_RANDOM, 1024, 65535, 1024, 1, 0);
	/* Masked fields take values within their bits, the write's add
	 * (the field's index here) included: 12 for the VLAN id. */
	v[2] = gpugen_fe_add_var(p, 2, GPUGEN_FE_DEC, 1, 4090, 4090, 1, 1);
	v[3] = gpugen_fe_add_var(p, 8, GPUGEN_FE_INC, 5, (1ull << 62) + 5, 5,
		(1ull << 61) + 3, 0);
	v[4] = gpugen_fe_add_tuple(p, 0xc0000201, 0xc00002ff, 1000, 1063, 5000, 0);
	/* One byte: the TTL and the traffic class take no wider value. */
	v[5] = gpugen_fe_add_var(p, 1, GPUGEN_FE_DEC, 1, 250, 64, 1, 0);
	for (int k = 0; k < 6; k++)
		if (v[k] != k)
			return -EINVAL;
	return 0;
}

static void
stream_case(const char *name, int ipv, int vlans, uint8_t proto,
		const char *const *fields, const int *vars, const uint8_t *parts,
		int n_fields)
{
	static uint8_t tmpl[STRIDE];
	struct gpugen_pkt_layout lay;
	struct gpugen_pkt_spec s;
	struct gpugen_fe_prog p;
	int rc;

	pb_base_spec(&s, ipv, vlans, proto);
	s.payload_len = 200;
	s.payload_pattern = GPUGEN_PB_PAY_INC;
	if (gpugen_pkt_build(&s, tmpl, sizeof(tmpl), &lay) == 0 ||
			gpugen_fe_init(&p, &lay, 42, 7, 32) != 0 ||
			add_vars(&p) != 0) {
		CHECK(0, "%s: setup", name);
		return;
	}
	for (int k = 0; k < n_fields; k++) {
		rc = gpugen_fe_write_field(&p, fields[k], vars[k], parts[k], k);
		CHECK(rc >= 0, "%s: %s: %d", name, fields[k], rc);
	}
	/* The write's index is the count before it. */
	int want = (int)p.n_writes;

	rc = gpugen_fe_write_off(&p, lay.payload_off + 40, 3, 0, 0);
	CHECK_EQ(rc, want);
	CHECK_EQ(gpugen_fe_set_stamp(&p), 0);
	compare_stream(name, &p, tmpl, 0);
	/* Far into the stream: no state carried from packet to packet. */
	compare_stream(name, &p, tmpl, (1ull << 40) + 12345);
}

static void
compare_specs(void)
{
	struct gpugen_pkt_spec *specs = calloc(N_SPECS, sizeof(*specs));
	uint8_t *gpu = malloc((size_t)N_SPECS * STRIDE);
	uint32_t *lens = calloc(N_SPECS, sizeof(*lens));
	struct gpugen_pkt_layout lay;
	uint8_t cpu[STRIDE];
	char why[256] = "";
	uint32_t bad = 0;

	CHECK(specs != NULL && gpu != NULL && lens != NULL, "out of memory");
	if (specs == NULL || gpu == NULL || lens == NULL)
		goto out;
	pb_seed(2024);
	for (uint32_t k = 0; k < N_SPECS; k++)
		pb_random_spec(&specs[k]);
	if (gpugen_pb_gpu_build(specs, N_SPECS, STRIDE, gpu, lens, why,
			sizeof(why)) != 0) {
		CHECK(0, "build: %s", why);
		goto out;
	}
	for (uint32_t k = 0; k < N_SPECS; k++) {
		uint32_t len = gpugen_pkt_build(&specs[k], cpu, STRIDE, &lay);

		if ((len != lens[k] || memcmp(cpu, gpu + (size_t)k * STRIDE,
				len) != 0) && bad++ < 5)
			CHECK(0, "spec %u: CPU %u bytes, GPU %u bytes or differ",
				k, len, lens[k]);
	}
	CHECK_EQ(bad, 0);
	printf("builder: %u random specs compared\n", N_SPECS);
out:
	free(specs);
	free(gpu);
	free(lens);
}

int
main(void)
{
	static const char *const f4[] = {"ipv4.src", "udp.sport", "vlan.id",
		"ip.ttl", "eth.dst", "ipv4.dst", "udp.dport"};
	/* eth.dst: the 4-byte variable in the address's last 4 bytes. */
	static const int v4v[] = {0, 1, 2, 5, 0, 4, 4};
	static const uint8_t p4[] = {0, 0, 0, 0, 0, GPUGEN_FE_PART_IP,
		GPUGEN_FE_PART_PORT};
	static const char *const f6[] = {"ipv6.src", "tcp.sport", "vlan.inner.id",
		"ip.tos", "tcp.seq", "ipv6.dst", "tcp.dport"};
	static const int v6v[] = {0, 1, 2, 5, 0, 4, 4};
	static const uint8_t p6[] = {0, 0, 0, 0, 0, GPUGEN_FE_PART_IP,
		GPUGEN_FE_PART_PORT};
	char why[256] = "";
	int n = gpurx_core_gpu_count(why, sizeof(why));

	if (n <= 0) {
		printf("SKIP: no usable CUDA GPU: %s\n", why);
		return EXIT_SKIP;
	}
	stream_case("v4-udp-vlan", 4, 1, GPURX_IPPROTO_UDP, f4, v4v, p4, 7);
	stream_case("v6-tcp-qinq", 6, 2, GPURX_IPPROTO_TCP, f6, v6v, p6, 7);
	compare_specs();
	return check_finish("gpurx-pkt-build-gpu-test");
}
