/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --stamps in the GPU modes: a matched packet's stamp as the kernel
 * (gpu_body.cuh) hands it to the RX lcore, in one place for the kernel
 * and the CPU thread that plays it in tests (the same code --cpu reads
 * stamps with: gpugen_stamp_find_view).
 */
#ifndef GPURX_APP_GPU_STAMP_H
#define GPURX_APP_GPU_STAMP_H

#include "gpu_kernels.h"
#include "gpugen_stamp.h"

/* The stamp of the packet seen through view (caplen bytes, parsed as
 * pi) into o, or o->found 0 when it has none. */
GPURX_FN void
gpurx_stamp_out_put(struct gpurx_stamp_out *o, struct gpurx_pkt_view view,
		uint32_t caplen, const struct gpurx_pkt_info *pi)
{
	struct gpugen_stamp st;

	if (gpugen_stamp_find_view(view, caplen, pi, &st) != 0) {
		o->found = 0;
		return;
	}
	o->seq = st.seq;
	o->tx_ns = st.tx_ns;
	o->stream = st.stream;
	o->found = 1;
}

#endif /* GPURX_APP_GPU_STAMP_H */
