/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef RTE_PMD_NET_GPUDMA_H
#define RTE_PMD_NET_GPUDMA_H

/* What programs linking librte_net_gpudma.so may ask of it by name. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 1 if port_id is a net_gpudma port, 0 if it is another port, -ENODEV if
 * there is no such port. A program that links the driver calls this (at
 * least) so that the linker keeps the library, whose constructor
 * registers the vdev driver.
 */
__attribute__((visibility("default")))
int rte_pmd_gpudma_is_port(uint16_t port_id);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_NET_GPUDMA_H */
