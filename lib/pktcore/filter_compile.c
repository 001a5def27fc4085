/* SPDX-License-Identifier: BSD-3-Clause */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcap/pcap.h>

#include "filter_compile.h"

/* The VM runs libpcap's instruction array in place of its own type. */
_Static_assert(sizeof(struct bpf_insn) == sizeof(struct bpf_vm_insn),
	"bpf_insn size");
_Static_assert(offsetof(struct bpf_insn, code) ==
	offsetof(struct bpf_vm_insn, code), "bpf_insn.code");
_Static_assert(offsetof(struct bpf_insn, jt) ==
	offsetof(struct bpf_vm_insn, jt), "bpf_insn.jt");
_Static_assert(offsetof(struct bpf_insn, jf) ==
	offsetof(struct bpf_vm_insn, jf), "bpf_insn.jf");
_Static_assert(offsetof(struct bpf_insn, k) ==
	offsetof(struct bpf_vm_insn, k), "bpf_insn.k");
_Static_assert(BPF_MEMWORDS == BPF_VM_MEMWORDS, "scratch size");

static void
set_err(char *errbuf, size_t errlen, const char *msg)
{
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s", msg);
}

int
gpurx_filter_compile(const char *expr, int linktype, int snaplen,
		struct gpurx_filter *out, char *errbuf, size_t errlen)
{
	struct bpf_program bp;
	pcap_t *p;
	uint32_t bad_pc;
	int rc;

	out->insns = NULL;
	out->len = 0;
	p = pcap_open_dead(linktype, snaplen);
	if (p == NULL) {
		set_err(errbuf, errlen, "pcap_open_dead failed");
		return -1;
	}
	if (pcap_compile(p, &bp, expr != NULL ? expr : "", 1,
			PCAP_NETMASK_UNKNOWN) != 0) {
		set_err(errbuf, errlen, pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_close(p);

	out->insns = calloc(bp.bf_len ? bp.bf_len : 1, sizeof(*out->insns));
	if (out->insns == NULL) {
		pcap_freecode(&bp);
		set_err(errbuf, errlen, "out of memory");
		return -1;
	}
	for (u_int i = 0; i < bp.bf_len; i++) {
		out->insns[i].code = bp.bf_insns[i].code;
		out->insns[i].jt = bp.bf_insns[i].jt;
		out->insns[i].jf = bp.bf_insns[i].jf;
		out->insns[i].k = bp.bf_insns[i].k;
	}
	out->len = bp.bf_len;
	pcap_freecode(&bp);

	/* The device trusts validated programs; never hand it anything else. */
	rc = bpf_vm_validate(out->insns, out->len, &bad_pc);
	if (rc != BPF_VM_OK) {
		if (errbuf != NULL && errlen > 0)
			snprintf(errbuf, errlen,
				"compiled filter rejected at instruction %u: %s",
				bad_pc, bpf_vm_verr_str(rc));
		gpurx_filter_free(out);
		return -1;
	}
	return 0;
}

void
gpurx_filter_free(struct gpurx_filter *f)
{
	free(f->insns);
	f->insns = NULL;
	f->len = 0;
}
