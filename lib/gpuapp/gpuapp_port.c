/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ethdev.h>

#include "rte_pmd_net_gpudma.h"
#include "gpuapp_port.h"

int
gpuapp_port_is_gpudma(uint16_t port_id)
{
	return rte_pmd_gpudma_is_port(port_id) == 1;
}

/* Drivers that move frames with the CPU, whatever bus they sit on. */
static const char *const cpu_drivers[] = {
	"net_pcap", "net_null", "net_ring", "net_tap", "net_af_packet",
	"net_af_xdp", "net_memif", "net_vhost", "net_virtio_user",
	"net_bonding", "net_failsafe", "net_kni",
};

int
gpuapp_port_gpu_dma(uint16_t port_id)
{
	struct rte_eth_dev_info di;
	const struct rte_bus *bus;
	int rc;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	if (gpuapp_port_is_gpudma(port_id))
		return 1;
	rc = rte_eth_dev_info_get(port_id, &di);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < RTE_DIM(cpu_drivers); i++)
		if (strcmp(di.driver_name, cpu_drivers[i]) == 0)
			return 0;
	bus = di.device != NULL ? rte_dev_bus(di.device) : NULL;
	if (bus == NULL || strcmp(rte_bus_name(bus), "vdev") == 0)
		return 0;
	return 1;
}
