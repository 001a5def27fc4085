/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_PORT_H
#define GPUAPP_PORT_H

#include <stdint.h>

/*
 * Whether port_id is a net_gpudma port (drivers/net/gpudma): a vdev, yet
 * one whose receive path writes the mbufs' memory the way a NIC's DMA
 * does, GPU memory included, honouring rte_dev_dma_map(). Programs that
 * call this link librte_net_gpudma.so and so need no EAL -d for it.
 */
int gpuapp_port_is_gpudma(uint16_t port_id);

/*
 * The one rule for "can this port DMA into (RX) or out of (TX) GPU
 * memory?", that is, can its mbufs live in GPU memory (--mem gpu):
 *
 * - net_gpudma: yes. A vdev, but its queues move frames with the GPU's
 *   copy engine into memory mapped with rte_dev_dma_map(), as a NIC's DMA.
 * - the software PMDs (net_pcap, net_null, net_ring, net_tap, net_af_packet,
 *   net_af_xdp, net_memif, net_vhost, net_virtio_user, net_bonding,
 *   net_failsafe, net_kni): no. The CPU copies their frames, and the CPU
 *   cannot load or store GPU memory that is not mapped for it.
 * - any other port on a bus that does DMA (PCI, auxiliary): yes, given
 *   GPUDirect RDMA (nvidia-peermem or dma-buf); whether the mapping then
 *   works is the pool's to find out (rte_dev_dma_map refuses).
 * - a port without a device, or on the vdev bus: no.
 *
 * 1 yes, 0 no, or a negative errno (-ENODEV: no such port, or what
 * rte_eth_dev_info_get() returns).
 */
int gpuapp_port_gpu_dma(uint16_t port_id);

#endif /* GPUAPP_PORT_H */
