/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-side: turn a tcpdump filter expression into a validated program
 * for bpf_vm_run(), using libpcap's compiler so the accepted language
 * and the resulting verdicts are exactly tcpdump's.
 */
#ifndef GPURX_FILTER_COMPILE_H
#define GPURX_FILTER_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf_vm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpurx_filter {
	struct bpf_vm_insn *insns;	/* malloc'd */
	uint32_t len;
};

/*
 * Compile expr (NULL or "" accepts everything) for the given DLT_*
 * link type and snapshot length, optimized, netmask unknown.
 * Returns 0, or -1 with errbuf holding libpcap's pcap_geterr() text
 * verbatim (or why the result failed bpf_vm_validate()).
 */
int gpurx_filter_compile(const char *expr, int linktype, int snaplen,
		struct gpurx_filter *out, char *errbuf, size_t errlen);

void gpurx_filter_free(struct gpurx_filter *f);

#ifdef __cplusplus
}
#endif

#endif /* GPURX_FILTER_COMPILE_H */
