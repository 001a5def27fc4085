/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU's view of a gpudev communication list (struct rte_gpu_comm_list
 * and struct rte_gpu_comm_pkt, DPDK 22.11), for code nvcc compiles
 * without DPDK's headers (nvcc takes none of DPDK's compiler flags). The
 * one mirror of that layout in the project: gpucomm_ring.c checks it
 * against rte_gpudev.h field by field, so a DPDK whose layout differs
 * does not build.
 */
#ifndef GPUCOMM_LAYOUT_H
#define GPUCOMM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values of enum rte_gpu_comm_list_status. */
#define GPUCOMM_STATUS_FREE 0u
#define GPUCOMM_STATUS_READY 1u
#define GPUCOMM_STATUS_DONE 2u
#define GPUCOMM_STATUS_ERROR 3u

/* RTE_GPU_COMM_LIST_PKTS_MAX: entries of every item's packet list. */
#define GPUCOMM_PKTS_MAX 1024u

/* struct rte_gpu_comm_pkt: one packet's bytes, where the GPU reads them. */
struct gpucomm_pkt {
	uintptr_t addr;
	size_t size;
};

/* struct rte_gpu_comm_list: one item of a list (the list is an array of
 * them, in host memory registered for the GPU). The status word is
 * status_h[0] for the CPU and status_d[0] for the GPU: the same word,
 * in registered host memory or, where the driver can map GPU memory for
 * the CPU (GDRCopy), in GPU memory. gpudev allocates the statuses of a
 * list as one array: item i's is status_d[0] of the first item plus i. */
struct gpucomm_item {
	uint16_t dev_id;
	void **mbufs;
	struct gpucomm_pkt *pkt_list;
	uint32_t num_pkts;
	uint32_t *status_h;
	uint32_t *status_d;
};

#ifdef __cplusplus
}
#endif

#endif /* GPUCOMM_LAYOUT_H */
