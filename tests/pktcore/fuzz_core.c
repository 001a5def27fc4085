/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the core on arbitrary bytes:
 *   mode 0: parse the input as a frame (checking the parser's own
 *           invariants) and run fixed filters, comparing each verdict
 *           with libpcap's bpf_filter();
 *   mode 1: take the input as a cBPF program; whatever the validator
 *           accepts must run safely (and match bpf_filter());
 *   mode 2: like 1, but first bend the program into a valid one so the
 *           interpreter itself gets deep coverage.
 * In modes 1 and 2 the packet is also classified split in two buffers
 * (RX buffer split, through the two-run view), each an exact copy of its
 * bytes, which must give what the packet in one buffer gives.
 * ASan sees every out-of-bounds read since libFuzzer hands us a buffer
 * of exactly the input size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "filter_compile.h"
#include "flow_classify.h"

static const char *const fuzz_filters[] = {
	"tcp port 443",
	"vlan and udp",
	"ip[6:2] & 0x1fff != 0",
	"icmp or icmp6",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
	"ip6 net 2001:db8::/32 or len < 100",
	"vlan and vlan and ip6 and tcp",
};
#define N_FILTERS (sizeof(fuzz_filters) / sizeof(fuzz_filters[0]))

static struct gpurx_filter filters[N_FILTERS];
static struct gpurx_flow_table *ft;

#define FAIL() __builtin_trap()

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[PCAP_ERRBUF_SIZE];

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < N_FILTERS; i++)
		if (gpurx_filter_compile(fuzz_filters[i], DLT_EN10MB, 65535,
				&filters[i], err, sizeof(err)) != 0)
			abort();
	ft = gpurx_flow_table_init(aligned_alloc(64,
		gpurx_flow_table_bytes(256)), 256, 16);
	return 0;
}

static void
check_parse(const uint8_t *pkt, uint32_t caplen, uint32_t wirelen)
{
	struct gpurx_pkt_info pi;
	int rc = gpurx_pkt_parse(pkt, caplen, wirelen, &pi);

	if (rc != pi.malformed || rc >= GPURX_MAL_COUNT)
		FAIL();
	if (rc == GPURX_MAL_NONE && pi.ip_version != 0) {
		if (pi.l3_off > pi.l4_off || pi.l4_off > pi.ip_end ||
				pi.payload_off < pi.l4_off ||
				pi.payload_off > pi.ip_end ||
				pi.ip_end > (wirelen > caplen ? wirelen : caplen))
			FAIL();
		if ((pi.flags & GPURX_PF_L4) && pi.payload_off > caplen)
			FAIL();
	}
}

static void
run_fixed_filters(const uint8_t *pkt, uint32_t caplen, uint32_t wirelen,
		uint64_t ts)
{
	for (size_t i = 0; i < N_FILTERS; i++) {
		const struct gpurx_filter *f = &filters[i];
		uint32_t want = bpf_filter((const struct bpf_insn *)f->insns,
			pkt, wirelen, caplen);
		uint8_t mal;

		if (gpurx_classify_pkt(pkt, caplen, wirelen, ts, f->insns,
				f->len, ft, &mal) != want)
			FAIL();
	}
}

/* Does the program read scratch memory? libpcap leaves it uninitialised. */
static int
reads_mem(const struct bpf_vm_insn *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i].code == (BPF_VM_LD | BPF_VM_MEM) ||
				p[i].code == (BPF_VM_LDX | BPF_VM_MEM))
			return 1;
	return 0;
}

static const uint16_t known_codes[] = {
	0x20, 0x28, 0x30, 0x40, 0x48, 0x50, 0x80, 0x00, 0x60, 0x81, 0x01,
	0x61, 0xb1, 0x02, 0x03, 0x05, 0x15, 0x25, 0x35, 0x45, 0x1d, 0x2d,
	0x3d, 0x4d, 0x06, 0x16, 0x84, 0x07, 0x87, 0x04, 0x14, 0x24, 0x34,
	0x44, 0x54, 0x64, 0x74, 0x94, 0xa4, 0x0c, 0x1c, 0x2c, 0x3c, 0x4c,
	0x5c, 0x6c, 0x7c, 0x9c, 0xac,
};

static void
repair(struct bpf_vm_insn *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct bpf_vm_insn *in = &p[i];
		uint32_t left = n - i - 1;
		uint16_t op;

		in->code = known_codes[in->code % (sizeof(known_codes) /
			sizeof(known_codes[0]))];
		op = in->code & 0xf0;
		switch (BPF_VM_CLASS(in->code)) {
		case BPF_VM_LD:
		case BPF_VM_LDX:
			if ((in->code & 0xe0) == BPF_VM_MEM)
				in->k &= 15;
			break;
		case BPF_VM_ST:
		case BPF_VM_STX:
			in->k &= 15;
			break;
		case BPF_VM_ALU:
			if (in->code & BPF_VM_X)
				break;
			if ((op == BPF_VM_DIV || op == BPF_VM_MOD) && in->k == 0)
				in->k = 1;
			if (op == BPF_VM_LSH || op == BPF_VM_RSH)
				in->k &= 31;
			break;
		case BPF_VM_JMP:
			if (left == 0) {
				in->code = BPF_VM_RET | BPF_VM_A;
			} else if (op == BPF_VM_JA) {
				in->k %= left;
			} else {
				in->jt %= left;
				in->jf %= left;
			}
			break;
		default:
			break;
		}
	}
	if (BPF_VM_CLASS(p[n - 1].code) != BPF_VM_RET)
		p[n - 1].code = BPF_VM_RET | BPF_VM_A;
}

/* The packet in two buffers of exactly n0 and caplen - n0 bytes. */
static void
check_split(const uint8_t *pkt, uint32_t caplen, uint32_t n0,
		const struct bpf_vm_insn *prog, uint32_t n, uint32_t v_full,
		const struct gpurx_pkt_info *full)
{
	uint8_t *p0 = malloc(n0 ? n0 : 1), *p1 = malloc(caplen - n0 ?
		caplen - n0 : 1);
	struct gpurx_pkt_info pi;
	uint32_t v;

	if (p0 == NULL || p1 == NULL)
		abort();
	memcpy(p0, pkt, n0);
	memcpy(p1, pkt + n0, caplen - n0);
	if (!gpurx_classify_inspect_view(gpurx_view_split(p0, n0, p1), caplen,
			caplen, caplen + 17, prog, n, &v, &pi) ||
			v != v_full || !gpurx_pkt_info_same(&pi, full))
		FAIL();
	free(p0);
	free(p1);
}

static void
fuzz_program(const uint8_t *data, size_t size, int fix)
{
	struct bpf_vm_insn prog[64];
	uint32_t n = (uint32_t)(size / 8);
	const uint8_t *pkt;
	uint32_t caplen;

	if (n == 0)
		return;
	if (n > 64)
		n = 64;
	memcpy(prog, data, n * sizeof(prog[0]));
	pkt = data + n * 8;
	caplen = (uint32_t)(size - n * 8);
	if (fix)
		repair(prog, n);
	if (bpf_vm_validate(prog, n, NULL) != BPF_VM_OK)
		return;
	/* Anything we accept, libpcap's validator accepts too. */
	if (!bpf_validate((const struct bpf_insn *)prog, (int)n))
		FAIL();
	{
		uint32_t got = bpf_vm_run(prog, n, pkt, caplen + 17, caplen);
		struct gpurx_pkt_info full, part;
		uint32_t v_full, v_part;

		if (!reads_mem(prog, n) &&
				got != bpf_filter((const struct bpf_insn *)prog,
					pkt, caplen + 17, caplen))
			FAIL();
		/* From a prefix: final means the same as from all of it. */
		gpurx_classify_inspect(pkt, caplen, caplen, caplen + 17, prog,
			n, &v_full, &full);
		for (uint32_t have = 0; have < caplen; have += 1 + have / 2)
			if (gpurx_classify_inspect(pkt, have, caplen,
					caplen + 17, prog, n, &v_part, &part) &&
					(v_part != v_full ||
					 !gpurx_pkt_info_same(&part, &full)))
				FAIL();
		/* Split where the program's first instruction says. */
		check_split(pkt, caplen, caplen == 0 ? 0 : prog[0].k % (caplen + 1),
			prog, n, v_full, &full);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mode;

	if (size == 0)
		return 0;
	mode = data[0] % 3;
	data++;
	size--;
	if (size > 65535)
		return 0;
	switch (mode) {
	case 0:
		check_parse(data, (uint32_t)size, (uint32_t)size);
		/* Wire longer than capture: a snapped packet. */
		check_parse(data, (uint32_t)size, (uint32_t)size + 1000);
		run_fixed_filters(data, (uint32_t)size, (uint32_t)size, size);
		break;
	case 1:
		fuzz_program(data, size, 0);
		break;
	default:
		fuzz_program(data, size, 1);
		break;
	}
	return 0;
}
