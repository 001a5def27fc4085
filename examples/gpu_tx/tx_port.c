/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's port and mbufs: the GPU gpudev finds, the mbuf pool
 * (host memory, host memory registered for the GPU, or GPU memory mapped
 * for the port's DMA), the port's set-up with the checks that it can
 * send what is asked (DMA from GPU memory, TX queues, checksum offloads),
 * and the waits on its link before the first burst and after the last.
 */

#include <errno.h>
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

/* The GPU entry of gpudev id, added in first-queue order. */
static struct tx_gpu *
gpu_of(struct app *a, int16_t id)
{
	struct tx_gpu *g;

	for (unsigned int k = 0; k < a->n_gpus; k++)
		if (a->gpu[k].id == id)
			return &a->gpu[k];
	g = &a->gpu[a->n_gpus++];
	g->id = id;
	return g;
}

int
gputx_setup_gpu(struct app *a)
{
	int16_t map[MAX_QUEUES];
	char err[256];
	int rc;

	if (a->o.mem == MEM_CPU) {
		/* No GPU: gpu[0] only holds the one pool. */
		a->n_gpus = 1;
		a->gpu[0].id = -1;
		a->gpu[0].n_queues = a->o.queues;
		for (uint16_t q = 0; q < a->o.queues; q++) {
			a->txq[q].g = &a->gpu[0];
			a->txq[q].ring = q;
		}
		return 0;
	}
	if (rte_gpu_count_avail() == 0 || rte_gpu_find_next(0,
			RTE_GPU_ID_ANY) < 0) {
		GPUTX_LOG(ERR, "error: --mem %s: no GPU probed by DPDK gpudev "
			"(%s); it needs an NVIDIA GPU and its driver; or run with "
			"--mem cpu\n", gputx_mem_str(a->o.mem), gpuapp_gpu_driver());
		return -1;
	}
	rc = gpuapp_gpus_map_port(&a->o.gpus, "/sys", a->o.port, a->o.queues,
		map, err, sizeof(err));
	if (rc != 0) {
		GPUTX_LOG(ERR, "error: %s\n", err);
		return -1;
	}
	for (uint16_t q = 0; q < a->o.queues; q++) {
		struct tx_gpu *g = gpu_of(a, map[q]);

		a->txq[q].g = g;
		a->txq[q].ring = g->n_queues++;
	}
	/* One GPU says nothing more than before several were possible. */
	for (unsigned int k = 0; a->n_gpus > 1 && k < a->n_gpus; k++) {
		char qs[MAX_QUEUES * 4] = "";
		size_t len = 0;

		for (uint16_t q = 0; q < a->o.queues; q++)
			if (a->txq[q].g == &a->gpu[k] && len < sizeof(qs))
				len += snprintf(qs + len, sizeof(qs) - len, "%s%u",
					len > 0 ? "," : "", q);
		printf("GPU %d: queue%s %s\n", a->gpu[k].id,
			a->gpu[k].n_queues > 1 ? "s" : "", qs);
	}
	return 0;
}

uint64_t
gputx_gpu_pkts(const struct app *a, const struct tx_gpu *g)
{
	uint64_t n = 0;

	for (uint16_t q = 0; q < a->o.queues; q++)
		if (a->txq[q].g == g)
			n += __atomic_load_n(&a->txq[q].st.pkts, __ATOMIC_RELAXED);
	return n;
}

/*
 * Every mbuf's buffer (headroom and data room): room for the longest
 * frame the streams make, so a frame is always one segment, and never
 * less than DPDK's default, so pools for ordinary frames stay as they
 * were. One segment rather than chained mbufs for jumbo frames: the
 * builders (CPU reference, the per-burst kernels, the persistent fill)
 * write a frame as one run of bytes at one address, a GPU-memory pool's
 * elements are fixed slices of one allocation, and bulk frees
 * (RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) need single-segment mbufs; the
 * cost is memory, 9.3 KiB a buffer at most (GPUGEN_FRAME_MAX). Whole
 * cache lines, so that every buffer of a GPU-memory pool, a slice of
 * this size, stays aligned.
 */
static uint16_t
pool_buf_size(const struct app *a)
{
	uint32_t room = RTE_MAX(gpugen_max_len(a->gen),
		(uint32_t)RTE_MBUF_DEFAULT_DATAROOM);

	return (uint16_t)RTE_ALIGN_CEIL(RTE_PKTMBUF_HEADROOM + room,
		RTE_CACHE_LINE_SIZE);
}

/*
 * The lcores' mempool caches: the largest there is (a quarter of a small
 * --mbufs pool, which rte_mempool_create would refuse a cache above 2/3
 * of). A GPU queue's lcore gets a burst a post and puts back whole bursts
 * as the port frees them once built, not in strict turns; with a cache of
 * one burst (256) the turns that did not alternate went to the pool's
 * ring, which every queue of the GPU shares: a CPU profile of 4 queues on
 * the H200 had the ring at 12 % of each TX lcore. 512 against 256, 64 B
 * into GPU memory, 3 runs alternated (doc/perf/ab/tx-mbuf-cache-512.md):
 * +10 / +15 / +16 % (medians) on 1 / 2 / 4 queues, every run faster.
 */
#define POOL_CACHE RTE_MEMPOOL_CACHE_MAX_SIZE

/* GPU g's pool: its queues' share, named apart from the others'. */
static int
setup_gpu_pool(struct app *a, struct tx_gpu *g, unsigned int k, int socket)
{
	/* Per queue: the bursts in flight to the GPU, the port's ring, one
	 * burst being posted and the lcore's mempool cache (1.5 times its
	 * size before it flushes). */
	uint64_t need = (uint64_t)g->n_queues * ((uint64_t)(a->o.mem ==
		MEM_CPU ? 1 : a->o.ring_items) * a->o.burst + 1024 +
		a->o.burst + POOL_CACHE * 3 / 2);
	uint32_t n = a->o.mbufs ? a->o.mbufs :
		(uint32_t)RTE_MAX((uint64_t)8191, need + need / 4);
	const unsigned int cache = RTE_MIN((uint32_t)POOL_CACHE, n / 4);
	const uint16_t buf_size = pool_buf_size(a);
	char name[RTE_MEMPOOL_NAMESIZE], err[256];
	int rc;

	if (a->o.mem == MEM_GPU) {
		snprintf(name, sizeof(name), k == 0 ? "gputx_mbufs_gpu" :
			"gputx_mbufs_gpu%u", k);
		rc = gpuapp_ext_pool_create(&g->ext, name, g->id, a->o.port, n,
			cache, buf_size, socket, err, sizeof(err));
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: --mem gpu: port %u: GPU %d: %s%s\n",
				a->o.port, g->id, err, rc == 1 ? "; use --mem "
				"host-mapped" : "");
			return -1;
		}
		g->pool = g->ext.mp;
		return 0;
	}
	snprintf(name, sizeof(name), k == 0 ? "gputx_mbufs" : "gputx_mbufs%u",
		k);
	g->pool = rte_pktmbuf_pool_create(name, n, cache, 0, buf_size, socket);
	if (g->pool == NULL) {
		GPUTX_LOG(ERR, "error: mbuf pool of %u of %u bytes: %s\n", n,
			buf_size, rte_strerror(rte_errno));
		return -1;
	}
	if (a->o.mem == MEM_HOST_MAPPED &&
			gpuapp_pool_register(g->id, g->pool, track_chunk,
			&g->chunks, err, sizeof(err)) != 0) {
		GPUTX_LOG(ERR, "error: --mem host-mapped: GPU %d: %s\n", g->id,
			err);
		return -1;
	}
	return 0;
}

int
gputx_setup_pool(struct app *a, int socket)
{
	for (unsigned int k = 0; k < a->n_gpus; k++)
		if (setup_gpu_pool(a, &a->gpu[k], k, socket) != 0)
			return -1;
	return 0;
}

/* Every GPU pool's DMA mapping undone: the port stopped, not yet closed
 * (gpuapp_ext_pool_unmap()). */
void
gputx_unmap_pools(struct app *a)
{
	for (unsigned int k = 0; a->o.mem == MEM_GPU && k < a->n_gpus; k++)
		gpuapp_ext_pool_unmap(&a->gpu[k].ext);
}

/* Every GPU's pool, whatever was set up of it. */
void
gputx_release_pool(struct app *a)
{
	for (unsigned int k = 0; k < a->n_gpus; k++) {
		struct tx_gpu *g = &a->gpu[k];

		for (unsigned int c = 0; c < g->chunks.n; c++)
			if (rte_gpu_mem_unregister(g->id, g->chunks.addr[c]) != 0)
				GPUTX_LOG(WARNING, "warning: "
					"rte_gpu_mem_unregister: %s\n",
					rte_strerror(rte_errno));
		g->chunks.n = 0;
		if (a->o.mem == MEM_GPU)
			gpuapp_ext_pool_free(&g->ext);
		else
			rte_mempool_free(g->pool);
		g->pool = NULL;
	}
}

/*
 * The MTU the streams' frames need: the most bytes any frame carries past
 * its Ethernet header and VLAN tags (what the MTU counts), and *frame,
 * that frame's size with FCS. A stream not IP is counted past an
 * untagged header; a replay stream by its first frame's tags, its
 * longest frame may have fewer (the MTU then asked is a tag short).
 */
static uint32_t
frames_mtu(const struct app *a, uint32_t *frame)
{
	uint32_t mtu = 0;

	*frame = 0;
	for (uint32_t s = 0; s < gpugen_n_streams(a->gen); s++) {
		struct gpugen_stream_info si;
		uint32_t l2, need;

		if (gpugen_stream_info(a->gen, s, &si) != 0)
			continue;
		l2 = si.ip_version != 0 && si.l2_len >= RTE_ETHER_HDR_LEN ?
			si.l2_len : RTE_ETHER_HDR_LEN;
		need = si.len_max > l2 ? si.len_max - l2 : 0;
		if (need > mtu) {
			mtu = need;
			*frame = si.len_max + RTE_ETHER_CRC_LEN;
		}
	}
	return mtu;
}

/* The largest MTU the port takes, as ethdev checks it: its max_mtu, and
 * its longest frame less its overhead (its own, or Ethernet's 18 bytes
 * where it tells none). */
static uint32_t
port_mtu_max(const struct rte_eth_dev_info *di)
{
	uint32_t overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	uint32_t max = di->max_mtu;

	if (di->max_mtu != UINT16_MAX && di->max_rx_pktlen > di->max_mtu)
		overhead = di->max_rx_pktlen - di->max_mtu;
	if (di->max_rx_pktlen < overhead)
		return 0;
	return RTE_MIN(max, di->max_rx_pktlen - overhead);
}

/*
 * The port's MTU raised for jumbo frames, which a NIC drops past its MTU
 * (mlx5 among them); ports the standard MTU serves are left as before.
 * Through rxmode.mtu at configure and rte_eth_dev_set_mtu() after it:
 * some drivers apply the one, some the other. 0, or -1 (said).
 */
static int
check_mtu(struct app *a, const struct rte_eth_dev_info *di,
		struct rte_eth_conf *conf, uint32_t *mtu)
{
	uint32_t frame, need = frames_mtu(a, &frame), max = port_mtu_max(di);

	*mtu = 0;
	if (need <= RTE_ETHER_MTU)
		return 0;
	if (need > max) {
		GPUTX_LOG(ERR, "error: port %u (%s): frames of %u bytes (with "
			"FCS) need an MTU of %u, and the port takes %u at most "
			"(max_mtu %u, max_rx_pktlen %u); send shorter frames\n",
			a->o.port, di->driver_name, frame, need, max, di->max_mtu,
			di->max_rx_pktlen);
		return -1;
	}
	conf->rxmode.mtu = need;
	*mtu = need;
	return 0;
}

/* After configure: the MTU check_mtu() chose set on the port. A port
 * with no MTU to set (software ports) sends any frame it takes. */
static int
set_mtu(struct app *a, const struct rte_eth_dev_info *di, uint32_t mtu)
{
	int rc;

	if (mtu == 0)
		return 0;
	rc = rte_eth_dev_set_mtu(a->o.port, (uint16_t)mtu);
	if (rc == 0 || rc == -ENOTSUP)
		return 0;
	GPUTX_LOG(ERR, "error: port %u (%s): MTU %u for jumbo frames: %s\n",
		a->o.port, di->driver_name, mtu, rte_strerror(-rc));
	return -1;
}

int
gputx_setup_port(struct app *a)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	struct rte_eth_link link;
	uint16_t nb_rxd = 0, nb_txd = 1024;
	uint32_t mtu;
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
	if (check_mtu(a, &di, &conf, &mtu) != 0)
		return -1;
	conf.txmode.offloads |= a->ol_needed;
	/* A queue's mbufs all come from its GPU's pool, one segment,
	 * refcnt 1, never attached: the port may free sent ones in bulk,
	 * as NICs do. */
	a->fast_free = !a->o.no_fast_free &&
		(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	if (a->fast_free)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	rc = rte_eth_dev_configure(a->o.port, 0, a->o.queues, &conf);
	if (rc == 0 && set_mtu(a, &di, mtu) != 0)
		return -1;
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
	printf("port %u: %s, link %u Mb/s%s%s", a->o.port, di.driver_name,
		a->link_mbps, a->fast_free ? ", bulk TX frees" : "",
		a->ol_needed != 0 ? ", TX checksums offloaded" : "");
	if (mtu != 0)
		printf(", MTU %u", mtu);
	printf("\n");
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
