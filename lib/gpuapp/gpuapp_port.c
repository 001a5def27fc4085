/* SPDX-License-Identifier: BSD-3-Clause */

#include "rte_pmd_net_gpudma.h"
#include "gpuapp_port.h"

int
gpuapp_port_is_gpudma(uint16_t port_id)
{
	return rte_pmd_gpudma_is_port(port_id) == 1;
}
