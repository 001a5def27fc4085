/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The list kernel reads struct rte_gpu_comm_list through its own mirror
 * (gpu_kernels.h); a DPDK whose layout differs must not build.
 */

#include <stddef.h>

#include <rte_gpudev.h>

#include "gpu_kernels.h"

#define SAME_FIELD(a, b, f) \
	_Static_assert(offsetof(struct a, f) == offsetof(struct b, f) && \
		sizeof(((struct a *)0)->f) == sizeof(((struct b *)0)->f), \
		#a "." #f " differs from the kernel's mirror")

_Static_assert(sizeof(struct rte_gpu_comm_pkt) == sizeof(struct gk_comm_pkt),
	"struct rte_gpu_comm_pkt size");
SAME_FIELD(rte_gpu_comm_pkt, gk_comm_pkt, addr);
SAME_FIELD(rte_gpu_comm_pkt, gk_comm_pkt, size);

_Static_assert(sizeof(struct rte_gpu_comm_list) == sizeof(struct gk_comm_item),
	"struct rte_gpu_comm_list size");
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, dev_id);
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, mbufs);
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, pkt_list);
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, num_pkts);
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, status_h);
SAME_FIELD(rte_gpu_comm_list, gk_comm_item, status_d);

_Static_assert(sizeof(enum rte_gpu_comm_list_status) == sizeof(int),
	"status enum is not int-sized");
_Static_assert(RTE_GPU_COMM_LIST_FREE == GK_COMM_FREE &&
	RTE_GPU_COMM_LIST_READY == GK_COMM_READY &&
	RTE_GPU_COMM_LIST_DONE == GK_COMM_DONE, "status values");
