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

#endif /* GPUAPP_PORT_H */
