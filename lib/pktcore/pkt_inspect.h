/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet's filter verdict and parse in one pass, the part of the
 * pipeline's per-packet work that needs no flow table
 * (flow_classify.h adds the flow). One definition for the CPU reference
 * and the GPU kernel.
 */
#ifndef GPURX_PKT_INSPECT_H
#define GPURX_PKT_INSPECT_H

#include "gpurx_portable.h"
#include "pkt_parse.h"
#include "bpf_vm.h"

/*
 * Filter and parse of a packet of caplen captured bytes from only the
 * first `have` of them (have <= caplen), for a reader that fetches
 * headers first: from memory behind PCIe every read is a request of its
 * own, and most packets need no more than their first 64 bytes.
 * Returns 1 when *verdict and *pi are exactly those of all caplen bytes
 * (no filter load and no header reached past `have`), 0 when they may
 * not be: then run it again with more bytes. The bytes are seen through
 * pkt: one run, or the two of a packet received with buffer split.
 */
GPURX_FN int
gpurx_classify_inspect_view(struct gpurx_pkt_view pkt, uint32_t have,
		uint32_t caplen, uint32_t wirelen, const struct bpf_vm_insn *prog,
		uint32_t prog_len, uint32_t *verdict, struct gpurx_pkt_info *pi)
{
	int cut = 0;

	*verdict = bpf_vm_run_view(prog, prog_len, pkt, wirelen, have, &cut);
	gpurx_pkt_parse_view(pkt, have, wirelen, pi);
	/* Every read of both is bounded by `have`: a run that neither cut a
	 * load nor stopped the parser short read only what it would have
	 * read from caplen bytes (malformed packets included: their other
	 * verdicts come from bytes read). The parser takes a wire length
	 * below the capture as the capture's: then the two runs differ. */
	return have >= caplen || (!cut && !gpurx_mal_is_truncated(pi->malformed) &&
		wirelen >= caplen);
}

/* gpurx_classify_inspect_view() over one run of bytes. */
GPURX_FN int
gpurx_classify_inspect(const uint8_t *pkt, uint32_t have, uint32_t caplen,
		uint32_t wirelen, const struct bpf_vm_insn *prog,
		uint32_t prog_len, uint32_t *verdict, struct gpurx_pkt_info *pi)
{
	return gpurx_classify_inspect_view(gpurx_view_linear(pkt), have, caplen,
		wirelen, prog, prog_len, verdict, pi);
}

#endif /* GPURX_PKT_INSPECT_H */
