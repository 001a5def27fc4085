/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VM against libpcap's own bpf_filter(): compiled tcpdump filters over
 * generated traffic, hand-written programs for every opcode, and random
 * valid programs. Also the validator's refusals and the compile helper's
 * error reporting.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "bpf_vm.h"
#include "filter_compile.h"
#include "filters.h"
#include "pktgen.h"
#include "check.h"

#define SNAPLEN 65535
#define N_PKTS 20000

/* Packets in buffers of exactly caplen bytes, for the sanitizer build. */
struct pkt_set {
	uint8_t **data;
	uint32_t *caplen;
	uint32_t *wirelen;
	uint32_t n;
};

static void
make_pkts(struct pkt_set *ps, uint32_t n, uint64_t seed)
{
	static struct pktgen_pkt p;
	struct pktgen g;

	ps->data = calloc(n, sizeof(*ps->data));
	ps->caplen = calloc(n, sizeof(*ps->caplen));
	ps->wirelen = calloc(n, sizeof(*ps->wirelen));
	ps->n = n;
	pktgen_init(&g, seed);
	for (uint32_t i = 0; i < n; i++) {
		pktgen_next(&g, &p);
		ps->data[i] = malloc(p.caplen ? p.caplen : 1);
		memcpy(ps->data[i], p.data, p.caplen);
		ps->caplen[i] = p.caplen;
		ps->wirelen[i] = p.wirelen;
	}
}

static void
free_pkts(struct pkt_set *ps)
{
	for (uint32_t i = 0; i < ps->n; i++)
		free(ps->data[i]);
	free(ps->data);
	free(ps->caplen);
	free(ps->wirelen);
}

static int
pcap_compile_ref(const char *expr, struct bpf_program *bp, char *err)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, SNAPLEN);
	int rc = pcap_compile(p, bp, expr, 1, PCAP_NETMASK_UNKNOWN);

	if (rc != 0)
		snprintf(err, PCAP_ERRBUF_SIZE, "%s", pcap_geterr(p));
	pcap_close(p);
	return rc;
}

static void
test_filters_vs_libpcap(const struct pkt_set *ps)
{
	for (size_t f = 0; f < N_TEST_FILTERS; f++) {
		const char *expr = test_filters[f];
		struct gpurx_filter flt;
		struct bpf_program ref;
		char err[PCAP_ERRBUF_SIZE];
		uint32_t accepted = 0, mismatches = 0;

		if (gpurx_filter_compile(expr, DLT_EN10MB, SNAPLEN, &flt, err,
				sizeof(err)) != 0) {
			CHECK(0, "filter \"%s\" failed: %s", expr, err);
			continue;
		}
		if (pcap_compile_ref(expr, &ref, err) != 0) {
			CHECK(0, "reference compile of \"%s\": %s", expr, err);
			gpurx_filter_free(&flt);
			continue;
		}
		CHECK_EQ(flt.len, ref.bf_len);
		for (uint32_t i = 0; i < ps->n; i++) {
			uint32_t want = bpf_filter(ref.bf_insns, ps->data[i],
				ps->wirelen[i], ps->caplen[i]);
			uint32_t got = bpf_vm_run(flt.insns, flt.len,
				ps->data[i], ps->wirelen[i], ps->caplen[i]);

			if (got != want && mismatches++ < 3)
				CHECK(0, "\"%s\" packet %u: vm %u, bpf_filter %u",
					expr, i, got, want);
			accepted += want != 0;
		}
		CHECK(mismatches == 0, "\"%s\": %u mismatches", expr, mismatches);
		/* A filter that never or always matches tests nothing. */
		if (expr[0] != '\0')
			CHECK(accepted > 0 && accepted < ps->n,
				"\"%s\" accepted %u of %u", expr, accepted, ps->n);
		printf("  %-52s %5u/%u accepted\n", expr[0] ? expr : "(empty)",
			accepted, ps->n);
		pcap_freecode(&ref);
		gpurx_filter_free(&flt);
	}
}

#define I(c, t, f, kk) {(uint16_t)(c), (uint8_t)(t), (uint8_t)(f), (uint32_t)(kk)}

static uint64_t runs_total, runs_accepted;

/* Run one program through both interpreters on every packet. */
static void
compare_prog(const char *name, const struct bpf_vm_insn *prog, uint32_t len,
		const struct pkt_set *ps, uint32_t max_pkts)
{
	uint32_t bad_pc;
	int rc = bpf_vm_validate(prog, len, &bad_pc);

	CHECK(rc == BPF_VM_OK, "%s: validator: %s at %u", name,
		bpf_vm_verr_str(rc), bad_pc);
	CHECK(bpf_validate((const struct bpf_insn *)prog, (int)len),
		"%s: libpcap bpf_validate refuses it", name);
	if (rc != BPF_VM_OK)
		return;
	for (uint32_t i = 0; i < ps->n && i < max_pkts; i++) {
		uint32_t want = bpf_filter((const struct bpf_insn *)prog,
			ps->data[i], ps->wirelen[i], ps->caplen[i]);
		uint32_t got = bpf_vm_run(prog, len, ps->data[i],
			ps->wirelen[i], ps->caplen[i]);

		if (got != want) {
			CHECK(0, "%s packet %u (caplen %u): vm %u, bpf_filter %u",
				name, i, ps->caplen[i], got, want);
			return;
		}
		runs_total++;
		runs_accepted += got != 0;
	}
}

/* Every opcode at least once, including the edge cases of each. */
static void
test_handwritten(const struct pkt_set *ps)
{
	static const struct {
		const char *name;
		uint32_t len;
		struct bpf_vm_insn prog[12];
	} progs[] = {
		{"ld abs w/h/b", 7, {
			I(0x20, 0, 0, 26), I(0x02, 0, 0, 0), I(0x28, 0, 0, 12),
			I(0x0c, 0, 0, 0), I(0x30, 0, 0, 23), I(0x0c, 0, 0, 0),
			I(0x16, 0, 0, 0)}},
		{"ld abs at end of capture", 3, {
			I(0x20, 0, 0, 56), I(0x00, 0, 0, 0), I(0x16, 0, 0, 0)}},
		{"ld ind w/h/b", 8, {
			I(0x01, 0, 0, 14), I(0x40, 0, 0, 0), I(0x48, 0, 0, 2),
			I(0x50, 0, 0, 9), I(0x0c, 0, 0, 0), I(0x07, 0, 0, 0),
			I(0x48, 0, 0, 0), I(0x16, 0, 0, 0)}},
		{"ld ind huge x", 3, {
			I(0x01, 0, 0, 0xfffffff0), I(0x50, 0, 0, 0x20),
			I(0x06, 0, 0, 1)}},
		{"len, ldx len, msh", 6, {
			I(0x80, 0, 0, 0), I(0x81, 0, 0, 0), I(0x1c, 0, 0, 0),
			I(0xb1, 0, 0, 14), I(0x0c, 0, 0, 0), I(0x16, 0, 0, 0)}},
		{"msh out of bounds", 2, {
			I(0xb1, 0, 0, 100000), I(0x06, 0, 0, 7)}},
		{"st/stx/ld mem/ldx mem", 9, {
			I(0x00, 0, 0, 7), I(0x02, 0, 0, 15), I(0x01, 0, 0, 9),
			I(0x03, 0, 0, 3), I(0x60, 0, 0, 3), I(0x61, 0, 0, 15),
			I(0x2c, 0, 0, 0), I(0x04, 0, 0, 1), I(0x16, 0, 0, 0)}},
		{"alu k", 12, {
			I(0x80, 0, 0, 0), I(0x04, 0, 0, 1000), I(0x14, 0, 0, 3),
			I(0x24, 0, 0, 77), I(0x34, 0, 0, 5), I(0x94, 0, 0, 1009),
			I(0x44, 0, 0, 0x100), I(0x54, 0, 0, 0x1ff),
			I(0xa4, 0, 0, 0x5a), I(0x64, 0, 0, 31), I(0x74, 0, 0, 3),
			I(0x16, 0, 0, 0)}},
		{"alu x", 12, {
			I(0x81, 0, 0, 0), I(0x00, 0, 0, 123456), I(0x0c, 0, 0, 0),
			I(0x1c, 0, 0, 0), I(0x2c, 0, 0, 0), I(0x3c, 0, 0, 0),
			I(0x9c, 0, 0, 0), I(0x4c, 0, 0, 0), I(0x5c, 0, 0, 0),
			I(0xac, 0, 0, 0), I(0x84, 0, 0, 0), I(0x16, 0, 0, 0)}},
		{"shift x >= 32", 6, {
			I(0x00, 0, 0, 0xf0f0f0f0), I(0x01, 0, 0, 32),
			I(0x6c, 0, 0, 0), I(0x02, 0, 0, 0), I(0x7c, 0, 0, 0),
			I(0x16, 0, 0, 0)}},
		{"div x zero rejects", 4, {
			I(0x00, 0, 0, 5), I(0x01, 0, 0, 0), I(0x3c, 0, 0, 0),
			I(0x06, 0, 0, 1)}},
		{"mod x zero rejects", 4, {
			I(0x00, 0, 0, 5), I(0x01, 0, 0, 0), I(0x9c, 0, 0, 0),
			I(0x06, 0, 0, 1)}},
		{"jumps k", 11, {
			I(0x28, 0, 0, 12), I(0x15, 0, 3, 0x0800),
			I(0x25, 0, 1, 0x0700), I(0x06, 0, 0, 11),
			I(0x35, 0, 1, 0x86dd), I(0x06, 0, 0, 22),
			I(0x45, 0, 1, 0x0100), I(0x06, 0, 0, 33),
			I(0x05, 0, 0, 1), I(0x06, 0, 0, 44), I(0x06, 0, 0, 55)}},
		{"jumps x", 11, {
			I(0x80, 0, 0, 0), I(0x01, 0, 0, 200), I(0x1d, 0, 1, 0),
			I(0x06, 0, 0, 1), I(0x2d, 0, 1, 0), I(0x06, 0, 0, 2),
			I(0x3d, 0, 1, 0), I(0x06, 0, 0, 3), I(0x4d, 1, 0, 0),
			I(0x06, 0, 0, 4), I(0x06, 0, 0, 5)}},
		{"tax/txa/ret k 0", 5, {
			I(0x00, 0, 0, 9), I(0x07, 0, 0, 0), I(0x00, 0, 0, 0),
			I(0x87, 0, 0, 0), I(0x16, 0, 0, 0)}},
	};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		compare_prog(progs[i].name, progs[i].prog, progs[i].len, ps, 2000);
}

/*
 * Scratch words never stored read as 0 (libpcap leaves them undefined,
 * so not compared with it), words stored read back, the last store of a
 * word wins, and one run's stores are not seen by the next run.
 */
static void
test_scratch_defined(void)
{
	static const uint8_t pkt[64];
	/* a = M[k] + X, X = M[j]: ret a. */
	const struct bpf_vm_insn unset[] = {
		I(0x61, 0, 0, 9), I(0x60, 0, 0, 4), I(0x0c, 0, 0, 0),
		I(0x04, 0, 0, 5), I(0x16, 0, 0, 0)};
	const struct bpf_vm_insn stored[] = {
		I(0x00, 0, 0, 40), I(0x02, 0, 0, 4), I(0x00, 0, 0, 41),
		I(0x02, 0, 0, 4), I(0x01, 0, 0, 2), I(0x03, 0, 0, 9),
		I(0x61, 0, 0, 9), I(0x60, 0, 0, 4), I(0x0c, 0, 0, 0),
		I(0x16, 0, 0, 0)};
	uint32_t bad_pc;

	CHECK(bpf_vm_validate(unset, 5, &bad_pc) == BPF_VM_OK &&
		bpf_vm_validate(stored, 10, &bad_pc) == BPF_VM_OK,
		"scratch programs validate");
	CHECK(bpf_vm_run(unset, 5, pkt, 64, 64) == 5,
		"unset scratch words read as 0");
	CHECK(bpf_vm_run(stored, 10, pkt, 64, 64) == 43,
		"stored scratch words read back, the last store wins");
	CHECK(bpf_vm_run(unset, 5, pkt, 64, 64) == 5,
		"a run does not see the previous run's scratch");
}

static uint32_t
rnd32(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

/* Offsets mostly inside typical frames, sometimes far outside. */
static uint32_t
rnd_off(uint64_t *s)
{
	switch (rnd32(s) % 8) {
	case 0: return rnd32(s);
	case 1: return 60 + rnd32(s) % 1500;
	default: return rnd32(s) % 70;
	}
}

static struct bpf_vm_insn
rnd_insn(uint64_t *s, uint32_t left)
{
	static const uint16_t ld[] = {0x20, 0x28, 0x30, 0x40, 0x48, 0x50,
		0x80, 0x81, 0x00, 0x01, 0x60, 0x61, 0xb1, 0x02, 0x03,
		0x07, 0x87, 0x84};
	static const uint16_t alu_ops[] = {0x00, 0x10, 0x20, 0x30, 0x40,
		0x50, 0x60, 0x70, 0x90, 0xa0};
	static const uint16_t jmp_ops[] = {0x10, 0x20, 0x30, 0x40};
	struct bpf_vm_insn in = {0, 0, 0, 0};
	uint32_t r = rnd32(s) % 10;
	uint32_t maxj = left - 1 < 255 ? left - 1 : 255;

	if (r < 4) {
		in.code = ld[rnd32(s) % (sizeof(ld) / sizeof(ld[0]))];
		switch (in.code & 0xe0) {
		case 0x60:
			in.k = rnd32(s) % 16;
			break;
		default:
			in.k = (in.code & 0x07) >= 0x02 && (in.code & 0x07) <= 0x03 ?
				rnd32(s) % 16 : rnd_off(s);
		}
	} else if (r < 7) {
		uint16_t op = alu_ops[rnd32(s) % 10];

		in.code = (uint16_t)(0x04 | op | (rnd32(s) % 2 ? 0x08 : 0));
		in.k = rnd32(s) % 3 ? rnd32(s) % 64 : rnd32(s);
		if (!(in.code & 0x08)) {
			if ((op == 0x30 || op == 0x90) && in.k == 0)
				in.k = 3;
			if (op == 0x60 || op == 0x70)
				in.k %= 32;
		}
	} else if (r < 9) {
		in.code = (uint16_t)(0x05 | jmp_ops[rnd32(s) % 4] |
			(rnd32(s) % 2 ? 0x08 : 0));
		in.k = rnd32(s) % 2 ? rnd32(s) % 256 : rnd32(s);
		in.jt = (uint8_t)(rnd32(s) % (maxj + 1));
		in.jf = (uint8_t)(rnd32(s) % (maxj + 1));
	} else {
		in.code = 0x05;	/* ja */
		in.k = rnd32(s) % (maxj + 1);
	}
	return in;
}

static void
test_random_programs(const struct pkt_set *ps)
{
	uint64_t seed = 777;
	struct bpf_vm_insn prog[96];

	for (int n = 0; n < 4000; n++) {
		uint32_t len = 0, body = 1 + rnd32(&seed) % 48;
		char name[32];

		/*
		 * libpcap leaves scratch memory uninitialised; give every
		 * word a value first so the two interpreters can agree.
		 */
		for (uint32_t m = 0; m < 16; m++) {
			prog[len++] = (struct bpf_vm_insn)I(0x00, 0, 0, rnd32(&seed));
			prog[len++] = (struct bpf_vm_insn)I(0x02, 0, 0, m);
		}
		for (uint32_t i = 0; i < body; i++)
			prog[len++] = rnd_insn(&seed, body - i);
		prog[len++] = (struct bpf_vm_insn)I(rnd32(&seed) % 2 ? 0x16 : 0x06,
			0, 0, 0xffff);
		snprintf(name, sizeof(name), "random program %d", n);
		compare_prog(name, prog, len, ps, 200 + (n % 7) * 50);
	}
	/* Programs that reject everything early would compare nothing. */
	printf("random programs: %llu of %llu runs accepted\n",
		(unsigned long long)runs_accepted,
		(unsigned long long)runs_total);
	CHECK(runs_accepted * 5 > runs_total, "too few accepting runs");
}

static void
expect_reject(const char *name, const struct bpf_vm_insn *prog, uint32_t len,
		int want, int pcap_rejects_too)
{
	uint32_t bad_pc;
	int rc = bpf_vm_validate(prog, len, &bad_pc);

	CHECK(rc == want, "%s: got \"%s\", want \"%s\"", name,
		bpf_vm_verr_str(rc), bpf_vm_verr_str(want));
	if (pcap_rejects_too && len > 0)
		CHECK(!bpf_validate((const struct bpf_insn *)prog, (int)len),
			"%s: libpcap accepts it", name);
}

static void
test_validator(void)
{
	static struct bpf_vm_insn big[BPF_VM_MAX_INSNS + 1];
	struct bpf_vm_insn p[4];

	expect_reject("empty", NULL, 0, BPF_VM_ERR_EMPTY, 0);
	for (uint32_t i = 0; i <= BPF_VM_MAX_INSNS; i++)
		big[i] = (struct bpf_vm_insn)I(0x06, 0, 0, 1);
	expect_reject("too long", big, BPF_VM_MAX_INSNS + 1,
		BPF_VM_ERR_TOO_LONG, 0);
	CHECK_EQ(bpf_vm_validate(big, BPF_VM_MAX_INSNS, NULL), BPF_VM_OK);

	static const uint16_t bad_codes[] = {
		0xff, 0x0e /* ret x */, 0x08 /* ld h imm */, 0x8c /* neg x */,
		0xb4 /* alu op 0xb0 */, 0x55 /* jmp op 0x50 */, 0xa0 /* ld msh */,
		0x41 /* ldx ind */, 0x21 /* ldx abs */, 0x58 /* ld h|0x50 */,
		0x12 /* st with size */, 0x0f /* misc 0x08 */, 0x26 /* ret 0x20 */,
	};
	for (size_t i = 0; i < sizeof(bad_codes) / sizeof(bad_codes[0]); i++) {
		p[0] = (struct bpf_vm_insn)I(bad_codes[i], 0, 0, 0);
		p[1] = (struct bpf_vm_insn)I(0x06, 0, 0, 1);
		expect_reject("bad opcode", p, 2, BPF_VM_ERR_BAD_OPCODE, 0);
	}

	p[0] = (struct bpf_vm_insn)I(0x05, 0, 0, 1);	/* ja past the end */
	p[1] = (struct bpf_vm_insn)I(0x06, 0, 0, 1);
	expect_reject("ja out", p, 2, BPF_VM_ERR_BAD_JUMP, 1);
	p[0] = (struct bpf_vm_insn)I(0x05, 0, 0, 0xffffffff);	/* ja -1 */
	expect_reject("ja backward", p, 2, BPF_VM_ERR_BACKWARD_JUMP, 0);
	p[0] = (struct bpf_vm_insn)I(0x15, 1, 0, 0);
	expect_reject("jt out", p, 2, BPF_VM_ERR_BAD_JUMP, 1);
	p[0] = (struct bpf_vm_insn)I(0x15, 0, 1, 0);
	expect_reject("jf out", p, 2, BPF_VM_ERR_BAD_JUMP, 1);
	p[0] = (struct bpf_vm_insn)I(0x15, 0, 0, 0);
	CHECK_EQ(bpf_vm_validate(p, 2, NULL), BPF_VM_OK);

	static const uint16_t mem_codes[] = {0x60, 0x61, 0x02, 0x03};
	for (size_t i = 0; i < 4; i++) {
		p[0] = (struct bpf_vm_insn)I(mem_codes[i], 0, 0, 16);
		expect_reject("mem index 16", p, 2, BPF_VM_ERR_BAD_MEM, 1);
		p[0].k = 15;
		CHECK_EQ(bpf_vm_validate(p, 2, NULL), BPF_VM_OK);
	}
	p[0] = (struct bpf_vm_insn)I(0x34, 0, 0, 0);
	expect_reject("div k 0", p, 2, BPF_VM_ERR_DIV_ZERO, 1);
	p[0] = (struct bpf_vm_insn)I(0x94, 0, 0, 0);
	expect_reject("mod k 0", p, 2, BPF_VM_ERR_DIV_ZERO, 0);
	p[0] = (struct bpf_vm_insn)I(0x64, 0, 0, 32);
	expect_reject("lsh k 32", p, 2, BPF_VM_ERR_BAD_SHIFT, 0);
	p[0] = (struct bpf_vm_insn)I(0x74, 0, 0, 40);
	expect_reject("rsh k 40", p, 2, BPF_VM_ERR_BAD_SHIFT, 0);
	p[0] = (struct bpf_vm_insn)I(0x06, 0, 0, 1);
	p[1] = (struct bpf_vm_insn)I(0x00, 0, 0, 1);
	expect_reject("no final ret", p, 2, BPF_VM_ERR_NO_RET, 1);
}

static void
test_compile_helper(void)
{
	static const char *const bad[] = {
		"tcp port",
		"ip broadcast",	/* needs a netmask */
		"ip6 and tcp[tcpflags] & tcp-syn != 0",	/* rejects all */
		"ether host 00:11",
		"port 99999",
		"((tcp)",
	};
	struct gpurx_filter f;
	char err[PCAP_ERRBUF_SIZE], want[PCAP_ERRBUF_SIZE];
	struct bpf_program bp;

	/* Empty expression: libpcap's single "ret #snaplen". */
	CHECK_EQ(gpurx_filter_compile("", DLT_EN10MB, 1514, &f, err,
		sizeof(err)), 0);
	CHECK_EQ(f.len, 1);
	if (f.len == 1) {
		CHECK_EQ(f.insns[0].code, 0x06);
		CHECK_EQ(f.insns[0].k, 1514);
	}
	gpurx_filter_free(&f);
	CHECK_EQ(gpurx_filter_compile(NULL, DLT_EN10MB, 96, &f, err,
		sizeof(err)), 0);
	CHECK(f.len == 1 && f.insns[0].k == 96, "NULL accepts all");
	gpurx_filter_free(&f);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(gpurx_filter_compile(bad[i], DLT_EN10MB, SNAPLEN, &f, err,
			sizeof(err)) == -1, "\"%s\" compiled", bad[i]);
		CHECK(f.insns == NULL && f.len == 0, "no program on error");
		CHECK(pcap_compile_ref(bad[i], &bp, want) != 0,
			"reference accepted \"%s\"", bad[i]);
		CHECK(strcmp(err, want) == 0, "\"%s\": \"%s\" vs \"%s\"",
			bad[i], err, want);
	}

	/* protochain loops backwards: libpcap compiles it, we refuse it. */
	CHECK(gpurx_filter_compile("ip6 protochain 6", DLT_EN10MB, SNAPLEN, &f,
		err, sizeof(err)) == -1, "protochain accepted");
	CHECK(strstr(err, "backward jump") != NULL, "protochain: %s", err);
}

int
main(void)
{
	struct pkt_set ps;

	make_pkts(&ps, N_PKTS, 4242);
	test_compile_helper();
	test_validator();
	test_scratch_defined();
	test_handwritten(&ps);
	runs_total = runs_accepted = 0;
	test_random_programs(&ps);
	test_filters_vs_libpcap(&ps);
	free_pkts(&ps);
	return check_finish("test_bpf");
}
