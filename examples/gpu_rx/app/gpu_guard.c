/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>

#include <rte_gpudev.h>
#include <rte_memcpy.h>

#include "gpu_guard.h"

int
gpurx_readable_add_pool(struct gpurx_readable *r, const struct rte_mempool *mp)
{
	if (r->n_pools == RTE_DIM(r->pool))
		return -ENOSPC;
	r->pool[r->n_pools++] = mp;
	return 0;
}

int
gpurx_readable_add_span(struct gpurx_readable *r, const void *addr, size_t len)
{
	if (r->n_spans == RTE_DIM(r->span))
		return -ENOSPC;
	r->span[r->n_spans].lo = (uintptr_t)addr;
	r->span[r->n_spans].hi = (uintptr_t)addr + len;
	r->n_spans++;
	return 0;
}

int
gpurx_pkt_copy(const struct rte_mbuf *m, uint32_t cap, uint8_t *dst)
{
	const void *src;

	/* rte_pktmbuf_read() checks only the first segment's length when
	 * that holds the bytes: the packet's own length is checked here. */
	if (cap > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	src = rte_pktmbuf_read(m, 0, cap, dst);
	if (src == NULL)
		return -EINVAL;
	if (src != dst)
		rte_memcpy(dst, src, cap);
	return 0;
}

const char *
gpurx_wmb_refusal(enum gpurx_mem_mode mem, int rc)
{
	if (!gpurx_mem_needs_gpu_wmb(mem) || rc == 0)
		return NULL;
	if (rc == -ENOTSUP)
		return "the GPU can neither order nor flush the NIC's GPUDirect "
			"RDMA writes (rte_gpu_wmb: not supported), so the kernel "
			"could read packet bytes not yet written; use --mem "
			"host-mapped or staged";
	return "rte_gpu_wmb failed: GPUDirect RDMA writes cannot be ordered "
		"before the kernel reads them; use --mem host-mapped or staged";
}

const char *
gpurx_persistent_refusal(const struct gpurx_gpu_props *p)
{
	if (p->exec_timeout)
		return "the GPU has a kernel execution timeout (a display "
			"watchdog): it would kill the persistent kernel mid-capture; "
			"use --launch-per-burst, or a GPU that drives no display";
	if (!p->coop_launch)
		return "the GPU cannot launch cooperatively, so the persistent "
			"kernel's blocks cannot be made resident together (a block "
			"never scheduled would leave its queue unserved); use "
			"--launch-per-burst";
	return NULL;
}
