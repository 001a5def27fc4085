/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's port and mbufs: the GPU gpudev finds, the mbuf pool
 * (host memory, host memory registered for the GPU, or GPU memory mapped
 * for the port's DMA), the port's set-up with the checks that it can
 * send what is asked (DMA from GPU memory, TX queues, checksum offloads),
 * and the waits on its link before the first burst and after the last.
 */

#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>

#include "gpuapp_eal.h"
#include "gpuapp_pool.h"
#include "gpuapp_port.h"
#include "gpuapp_tsc.h"
#include "gpu_tx.h"

static int
track_chunk(void *opaque, void *addr, size_t len)
{
	struct chunk_list *l = opaque;

	(void)len;
	if (l->n == RTE_DIM(l->addr)) {
		GPUTX_LOG(ERR, "error: more than %zu mempool chunks\n",
			RTE_DIM(l->addr));
		return -1;
	}
	l->addr[l->n++] = addr;
	return 0;
}

int
gputx_setup_gpu(struct app *a)
{
	a->gpu_id = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (rte_gpu_count_avail() == 0 || a->gpu_id < 0) {
		GPUTX_LOG(ERR, "error: --mem %s: no GPU probed by DPDK gpudev "
			"(%s); it needs an NVIDIA GPU and its driver; or run with "
			"--mem cpu\n", gputx_mem_str(a->o.mem), gpuapp_gpu_driver());
		return -1;
	}
	return 0;
}

int
gputx_setup_pool(struct app *a, int socket)
{
	/* Per queue: the bursts in flight to the GPU, the port's ring, one
	 * burst being posted and the lcore's mempool cache. */
	uint64_t need = (uint64_t)a->o.queues * ((uint64_t)(a->o.mem ==
		MEM_CPU ? 1 : a->o.ring_items) * a->o.burst + 1024 +
		a->o.burst + 256);
	uint32_t n = a->o.mbufs ? a->o.mbufs :
		(uint32_t)RTE_MAX((uint64_t)8191, need + need / 4);
	char err[256];
	int rc;

	if (a->o.mem == MEM_GPU) {
		rc = gpuapp_ext_pool_create(&a->ext, "gputx_mbufs_gpu", a->gpu_id,
			a->o.port, n, 256, RTE_MBUF_DEFAULT_BUF_SIZE, socket,
			err, sizeof(err));
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: --mem gpu: port %u: %s%s\n",
				a->o.port, err, rc == 1 ? "; use --mem "
				"host-mapped" : "");
			return -1;
		}
		a->pool = a->ext.mp;
		return 0;
	}
	a->pool = rte_pktmbuf_pool_create("gputx_mbufs", n, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (a->pool == NULL) {
		GPUTX_LOG(ERR, "error: mbuf pool of %u: %s\n", n,
			rte_strerror(rte_errno));
		return -1;
	}
	if (a->o.mem == MEM_HOST_MAPPED &&
			gpuapp_pool_register(a->gpu_id, a->pool, track_chunk,
			&a->chunks, err, sizeof(err)) != 0) {
		GPUTX_LOG(ERR, "error: --mem host-mapped: %s\n", err);
		return -1;
	}
	return 0;
}

void
gputx_release_pool(struct app *a)
{
	for (unsigned int k = 0; k < a->chunks.n; k++)
		if (rte_gpu_mem_unregister(a->gpu_id, a->chunks.addr[k]) != 0)
			GPUTX_LOG(WARNING, "warning: rte_gpu_mem_unregister: %s\n",
				rte_strerror(rte_errno));
	a->chunks.n = 0;
	if (a->o.mem == MEM_GPU)
		gpuapp_ext_pool_free(&a->ext);
	else
		rte_mempool_free(a->pool);
	a->pool = NULL;
}

int
gputx_setup_port(struct app *a)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	uint16_t nb_rxd = 0, nb_txd = 1024;
	int rc;

	rc = rte_eth_dev_info_get(a->o.port, &di);
	if (rc != 0) {
		GPUTX_LOG(ERR, "error: port %u: %s\n", a->o.port,
			rte_strerror(-rc));
		return -1;
	}
	/* lib/gpuapp's rule, explained there. */
	rc = a->o.mem == MEM_GPU ? gpuapp_port_gpu_dma(a->o.port) : 1;
	if (rc < 0) {
		GPUTX_LOG(ERR, "error: --mem gpu: port %u (%s): cannot tell "
			"whether it can read GPU memory: %s\n", a->o.port,
			di.driver_name, rte_strerror(-rc));
		return -1;
	}
	if (rc == 0) {
		GPUTX_LOG(ERR, "error: --mem gpu: port %u (%s) moves frames with "
			"the CPU and cannot read GPU memory; use a NIC, net_gpudma, "
			"or --mem host-mapped\n", a->o.port, di.driver_name);
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	if (a->o.queues > di.max_tx_queues) {
		GPUTX_LOG(ERR, "error: --queues %u: port %u (%s) has at most %u "
			"TX queues\n", a->o.queues, a->o.port, di.driver_name,
			di.max_tx_queues);
		return -1;
	}
	if ((di.tx_offload_capa & a->ol_needed) != a->ol_needed) {
		uint64_t miss = a->ol_needed & ~di.tx_offload_capa;

		GPUTX_LOG(ERR, "error: --csum-offload: port %u (%s) offers no TX "
			"checksum offload for%s%s%s; without --csum-offload the "
			"generator computes them\n", a->o.port, di.driver_name,
			miss & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM ? " IPv4" : "",
			miss & RTE_ETH_TX_OFFLOAD_UDP_CKSUM ? " UDP" : "",
			miss & RTE_ETH_TX_OFFLOAD_TCP_CKSUM ? " TCP" : "");
		return -1;
	}
	conf.txmode.offloads |= a->ol_needed;
	/* Every mbuf comes from a->pool, one segment, refcnt 1, never
	 * attached: the port may free sent ones in bulk, as NICs do. */
	a->fast_free = !a->o.no_fast_free &&
		(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	if (a->fast_free)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	rc = rte_eth_dev_configure(a->o.port, 0, a->o.queues, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(a->o.port, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; rc == 0 && q < a->o.queues; q++)
		rc = rte_eth_tx_queue_setup(a->o.port, q, nb_txd,
			rte_eth_dev_socket_id(a->o.port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(a->o.port);
	if (rc != 0) {
		GPUTX_LOG(ERR, "error: port %u (%s) setup: %s\n", a->o.port,
			di.driver_name, rte_strerror(-rc));
		return -1;
	}
	if (rte_eth_link_get_nowait(a->o.port, &link) == 0 &&
			link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
			link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		a->link_mbps = link.link_speed;
	printf("port %u: %s, link %u Mb/s%s%s\n", a->o.port, di.driver_name,
		a->link_mbps, a->fast_free ? ", bulk TX frees" : "",
		a->ol_needed != 0 ? ", TX checksums offloaded" : "");
	return 0;
}

/*
 * Until the link is up a port may take nothing (net_memif before its
 * client connects) or drop what it takes: the run, its count and its
 * rate start once there is someone to send to.
 */
int
gputx_wait_link(struct app *a)
{
	uint64_t hz = gpuapp_tsc_hz(), start = rte_rdtsc();
	struct rte_eth_link link;
	int said = 0, rc;

	for (;;) {
		rc = rte_eth_link_get_nowait(a->o.port, &link);
		if (rc != 0) {
			/* A port that cannot tell is taken as up. */
			GPUTX_LOG(WARNING, "warning: port %u: link status: %s; sending "
				"without waiting\n", a->o.port, rte_strerror(-rc));
			return 0;
		}
		if (link.link_status == RTE_ETH_LINK_UP)
			break;
		if (gputx_quit)
			return -1;
		if ((double)(rte_rdtsc() - start) / hz >= a->o.wait_link) {
			GPUTX_LOG(ERR, "error: port %u: link still down after "
				"%g s (net_memif: no client connected; a cable, the "
				"peer?); --wait-link S waits longer, 0 sends anyway\n",
				a->o.port, a->o.wait_link);
			return -1;
		}
		if (!said) {
			/* Flushed: a script starts the peer on this line. */
			printf("port %u: waiting up to %g s for the link\n",
				a->o.port, a->o.wait_link);
			fflush(stdout);
			said = 1;
		}
		rte_delay_us_sleep(10 * 1000);
	}
	if (link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
			link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		a->link_mbps = link.link_speed;
	if (said)
		printf("port %u: link up, %u Mb/s\n", a->o.port, a->link_mbps);
	return 0;
}

/*
 * Frames a port has taken may still wait in it: net_memif's ring is read
 * by its client, which loses what is left there when the server stops.
 * A client that has stopped reading takes the link down and ends the
 * wait early.
 */
void
gputx_linger(struct app *a)
{
	uint64_t hz = gpuapp_tsc_hz(), start = rte_rdtsc();
	struct rte_eth_link link;

	while (!gputx_quit &&
			(double)(rte_rdtsc() - start) / hz < a->o.linger) {
		if (rte_eth_link_get_nowait(a->o.port, &link) == 0 &&
				link.link_status == RTE_ETH_LINK_DOWN)
			break;
		rte_delay_us_sleep(10 * 1000);
	}
}
