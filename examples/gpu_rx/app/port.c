/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "app.h"
#include "gpu_kernels.h"
#include "gpu_path.h"
#include "gpuapp_port.h"
#include "log.h"

static int
probe_one(struct gpurx_app *a, struct gpurx_port *p, uint16_t id)
{
	struct rte_eth_dev_info di;
	int rc;

	p->id = id;
	if (!rte_eth_dev_is_valid_port(id)) {
		GPURX_LOG(ERR, "error: port %u does not exist (%u ports probed; "
			"add one with -a PCI_ADDR or --vdev)\n", id,
			rte_eth_dev_count_avail());
		return -1;
	}
	rc = rte_eth_dev_info_get(id, &di);
	if (rc != 0) {
		GPURX_LOG(ERR, "error: port %u: rte_eth_dev_info_get: %s\n",
			id, rte_strerror(-rc));
		return -1;
	}
	snprintf(p->driver, sizeof(p->driver), "%s", di.driver_name);
	/* lib/gpuapp's rule, explained there. */
	rc = gpuapp_port_gpu_dma(id);
	if (rc < 0) {
		GPURX_LOG(ERR, "error: port %u (%s): cannot tell whether it can "
			"DMA into GPU memory: %s\n", id, p->driver,
			rte_strerror(-rc));
		return -1;
	}
	p->sw_port = rc == 0;
	if (a->opt.queues > di.max_rx_queues) {
		GPURX_LOG(ERR, "error: port %u (%s) has at most %u RX queues, %u asked\n",
			id, p->driver, di.max_rx_queues, a->opt.queues);
		return -1;
	}
	p->socket = rte_eth_dev_socket_id(id);
	if (p->socket < 0)
		p->socket = (int)rte_socket_id();
	return 0;
}

int
gpurx_port_probe(struct gpurx_app *a)
{
	const uint16_t nq = a->opt.queues;

	a->n_ports = a->opt.n_ports;
	a->nq = (uint16_t)(a->n_ports * nq);
	for (uint16_t i = 0; i < a->n_ports; i++) {
		if (probe_one(a, &a->ports[i], a->opt.ports[i]) != 0)
			return -1;
		a->sw_port |= a->ports[i].sw_port;
	}
	for (uint16_t q = 0; q < a->nq; q++) {
		a->q_port[q] = a->ports[q / nq].id;
		a->q_qid[q] = q % nq;
	}
	a->port = a->ports[0].id;
	a->socket = a->ports[0].socket;
	a->driver = a->ports[0].driver;
	return 0;
}

int
gpurx_mbuf_cache(const struct gpurx_app *a)
{
	/*
	 * The largest cache by default: an mbuf comes back 20-50 us after
	 * RX took it, thousands of mbufs later, and a smaller cache sends
	 * most of them through the pool's shared ring, from which they come
	 * back cold on another lcore (64 B, 128-packet items, side by side:
	 * +39 % on one lcore, +14 % on 4, +8 % on 8 against a 256 cache:
	 * doc/perf/ab/mbuf-cache-512.md).
	 */
	if (a->opt.mbuf_cache < 0)
		return (int)RTE_MIN((unsigned int)RTE_MEMPOOL_CACHE_MAX_SIZE,
			a->pool_size / 4);
	/* rte_mempool_create's own limit, said here with the numbers. */
	if ((uint64_t)a->opt.mbuf_cache * 3 / 2 > a->pool_size) {
		GPURX_LOG(ERR, "error: --mbuf-cache %d: at most 2/3 of the "
			"pool's %u mbufs\n", a->opt.mbuf_cache, a->pool_size);
		return -1;
	}
	return a->opt.mbuf_cache;
}

static int
create_host_pools(struct gpurx_app *a, uint16_t n)
{
	int cache = gpurx_mbuf_cache(a);
	char name[RTE_MEMPOOL_NAMESIZE];

	if (cache < 0)
		return -1;

	a->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	for (uint16_t q = 0; q < a->nq; q++)
		a->q_pool[q] = n == 1 ? 0 : a->opt.pool_per_queue ? q :
			a->q_gpu[q];
	for (uint16_t q = 0; q < n; q++) {
		int socket = a->socket;

		/* On the NUMA node of the port of its first queue. */
		for (uint16_t i = 0; i < a->nq; i++)
			if (a->q_pool[i] == q) {
				socket = gpurx_queue_port(a, i)->socket;
				break;
			}
		if (n == 1)
			snprintf(name, sizeof(name), "gpurx_mbufs");
		else if (a->opt.pool_per_queue)
			snprintf(name, sizeof(name), "gpurx_mbufs_q%u", q);
		else
			snprintf(name, sizeof(name), "gpurx_mbufs_g%u", q);
		a->pools[q] = rte_pktmbuf_pool_create(name, a->pool_size,
			(unsigned int)cache, 0, a->data_room, socket);
		if (a->pools[q] == NULL) {
			GPURX_LOG(ERR, "error: mbuf pool %s of %u: %s\n",
				name, a->pool_size, rte_strerror(rte_errno));
			while (q-- > 0) {
				rte_mempool_free(a->pools[q]);
				a->pools[q] = NULL;
			}
			return -1;
		}
	}
	a->n_pools = n;
	return 0;
}

/* Host pools: one, one per queue (--pool-per-queue), or one per GPU (each
 * registered with its GPU alone). */
static uint16_t
host_pools(const struct gpurx_app *a)
{
	if (a->opt.pool_per_queue)
		return a->nq;
	return a->n_gpus > 1 ? a->n_gpus : 1;
}

static uint32_t
pool_size(const struct gpurx_app *a)
{
	uint32_t per_q, nq = a->nq;

	if (a->opt.mbufs != 0)
		return a->opt.mbufs;
	/* Descriptors, bursts held in ring items, jumbo chains (5 each).
	 * --mem staged holds none in ring items: they go back once copied
	 * (gpu_path.c, fill_item_with). */
	per_q = a->opt.nb_rxd + 4u * a->opt.burst;
	if (!a->opt.cpu && a->mem != GPURX_MEM_STAGED)
		per_q += a->opt.ring_items * a->opt.burst;
	/* Several GPUs: a pool each, for the most queues one GPU serves. */
	if (a->n_gpus > 1) {
		uint32_t on[GPURX_MAX_QUEUES] = { 0 };

		nq = 0;
		for (uint16_t q = 0; q < a->nq; q++)
			nq = RTE_MAX(nq, ++on[a->q_gpu[q]]);
	}
	return (a->opt.pool_per_queue ? 1u : nq) * per_q * 2 + 2048;
}

/* Buffer split by length into two pools, as --split configures it. */
static int
port_can_split(const struct rte_eth_dev_info *di)
{
	return (di->rx_queue_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT) &&
		di->rx_seg_capa.max_nseg >= 2 && di->rx_seg_capa.multi_pools;
}

/*
 * --split against the memory mode and the port, said in one line. The
 * default N is what the kernel stages of every packet (GPURX_STAGE_HEAD,
 * 128 bytes): the filter and the parser decide almost every packet from
 * those bytes, so with a header buffer of exactly that the kernel reads
 * it whole in its one coalesced request of host memory, and a packet that
 * needs more reads only GPU memory (the payload) past it, no PCIe round
 * trip; a capture of up to 128 bytes (a headers-only snaplen) is written
 * from host memory with no copy-out. A larger N moves more of every
 * packet into host memory for nothing the filter reads; a smaller one
 * leaves IPv6 and tunnelled headers straddling the two buffers.
 */
static int
choose_split(struct gpurx_app *a, const struct gpurx_port *np)
{
	const uint32_t want = a->opt.split;
	const int can = np == NULL;

	a->split = 0;
	if (want == GPURX_SPLIT_OFF) {
		printf("split: off: asked with --split off\n");
		return 0;
	}
	if (want == GPURX_SPLIT_AUTO) {
		if (a->opt.cpu)
			printf("split: off: default with --cpu (--split N splits "
				"there too, through a port that offers it)\n");
		else if (a->mem != GPURX_MEM_GPU)
			printf("split: off: default with --mem %s (packets are in "
				"host memory whole)\n", gpurx_mem_mode_str(a->mem));
		else if (!can)
			printf("split: off: default, port %u (%s) offers no RX "
				"buffer split\n", np->id, np->driver);
		else
			a->split = GPURX_STAGE_HEAD;
		if (a->split == 0)
			return 0;
		if (a->n_ports == 1)
			printf("split: the first %u bytes of each packet (headers) "
				"into host memory, the rest into GPU memory: default "
				"with --mem gpu, port %u (%s) offers RX buffer "
				"split\n", a->split, a->port, a->driver);
		else
			printf("split: the first %u bytes of each packet (headers) "
				"into host memory, the rest into GPU memory: default "
				"with --mem gpu, every port offers RX buffer split\n",
				a->split);
		return 0;
	}
	if (!a->opt.cpu && a->mem != GPURX_MEM_GPU) {
		GPURX_LOG(ERR, "error: --split %u puts the payload into GPU memory: "
			"it needs --mem gpu, and --mem is %s here (%s); drop --split "
			"or give --split off\n", want, gpurx_mem_mode_str(a->mem),
			a->mem_why);
		return -1;
	}
	if (!can) {
		GPURX_LOG(ERR, "error: --split %u: port %u (%s) offers no RX buffer "
			"split (RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT, 2 segments from 2 "
			"pools); give --split off\n", want, np->id, np->driver);
		return -1;
	}
	a->split = want;
	printf("split: the first %u bytes of each packet (headers) into host "
		"memory, the rest into %s: asked with --split %u\n", a->split,
		a->opt.cpu ? "a second host pool (the CPU reads the two buffers "
		"in place)" : "GPU memory", want);
	return 0;
}

/*
 * The pools of header buffers, each buffer the headroom and a->split
 * bytes: one per GPU (each registered with its GPU alone, as that GPU's
 * payload pool is its own), one with --cpu; each as large as a payload
 * pool, a header for every payload buffer.
 */
static int
create_hdr_pools(struct gpurx_app *a)
{
	const uint16_t n = a->opt.cpu ? 1 : a->n_gpus;
	int cache = gpurx_mbuf_cache(a);

	if (cache < 0)
		return -1;
	for (uint16_t k = 0; k < n; k++) {
		char name[RTE_MEMPOOL_NAMESIZE];
		struct rte_mempool *mp;

		snprintf(name, sizeof(name), "gpurx_hdrs%u", k);
		mp = rte_pktmbuf_pool_create(name, a->pool_size,
			(unsigned int)cache, 0,
			(uint16_t)(RTE_PKTMBUF_HEADROOM + a->split), a->socket);
		if (mp == NULL) {
			GPURX_LOG(ERR, "error: header mbuf pool of %u x %u B: "
				"%s\n", a->pool_size, a->split,
				rte_strerror(rte_errno));
			return -1;
		}
		a->hdr_pools[a->n_hdr_pools++] = mp;
	}
	return 0;
}

/* RX queue q: one pool, or with --split the header pool then the others. */
static int
rx_queue_setup(struct gpurx_app *a, uint16_t q, uint16_t nb_rxd,
		const struct rte_eth_rxconf *base)
{
	const struct gpurx_port *p = gpurx_queue_port(a, q);
	struct rte_eth_rxconf rxq = *base;
	union rte_eth_rxseg seg[2];

	if (a->split == 0)
		return rte_eth_rx_queue_setup(p->id, a->q_qid[q], nb_rxd,
			p->socket, &rxq, gpurx_queue_pool(a, q));
	memset(seg, 0, sizeof(seg));
	seg[0].split.mp = gpurx_queue_hdr_pool(a, q);
	seg[0].split.length = (uint16_t)a->split;
	/* Length 0: the rest of each buffer, this pool for every buffer past
	 * the first. */
	seg[1].split.mp = gpurx_queue_pool(a, q);
	rxq.rx_seg = seg;
	rxq.rx_nseg = RTE_DIM(seg);
	rxq.offloads |= RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
	return rte_eth_rx_queue_setup(p->id, a->q_qid[q], nb_rxd, p->socket,
		&rxq, NULL);
}

/*
 * --ts port, once the port has started. A port that offers the timestamp
 * offload registers the rx-timestamp field when it is enabled; others
 * stamp without offering it, registering the field themselves when they
 * are probed or started: DPDK 22.11's net_pcap stamps every packet it
 * reads from a file with the file's time, in microseconds.
 */
static int
port_timestamps(struct gpurx_app *a, const struct gpurx_port *p)
{
	const int in_us = strcmp(p->driver, "net_pcap") == 0;
	int bit;

	if (a->ts_off < 0) {
		a->ts_off = rte_mbuf_dynfield_lookup(
			RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
		bit = rte_mbuf_dynflag_lookup(
			RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
		if (a->ts_off < 0 || bit < 0) {
			a->ts_off = -1;
			GPURX_LOG(ERR, "error: port %u (%s) has no RX timestamps "
				"(no timestamp offload, and the port registered no "
				"rx-timestamp field): use --ts rx\n", p->id,
				p->driver);
			return -1;
		}
		a->ts_flag = RTE_BIT64(bit);
	}
	/* net_pcap copies the file's struct timeval in microseconds; one
	 * unit for every port, which the packets' paths read. */
	if (p != &a->ports[0] && in_us != a->ts_in_us) {
		GPURX_LOG(ERR, "error: --ts port: port %u (%s) stamps in %s, "
			"port %u (%s) in %s: one unit for all ports; use --ts rx\n",
			a->port, a->driver, a->ts_in_us ? "microseconds" :
			"nanoseconds", p->id, p->driver, in_us ? "microseconds" :
			"nanoseconds");
		return -1;
	}
	a->ts_in_us = in_us;
	printf("timestamps: port %u's RX timestamps (%s)\n", p->id,
		a->ts_in_us ? "microseconds, the pcap file's own" :
		"nanoseconds, the port's clock");
	return 0;
}

/*
 * --mtu: by default the port's largest, so that jumbo frames arrive whole
 * rather than dropped by the port (a NIC's default is 1500); without RX
 * scatter, the largest one mbuf holds. Ports over a kernel interface
 * (af_packet, tap) keep theirs: it is the system's, and a change would
 * outlive the run. A port with no MTU to set keeps its own, unless N was
 * asked. 0, or -1 (said).
 */
static int
set_mtu(struct gpurx_app *a, const struct gpurx_port *p,
		const struct rte_eth_dev_info *di, int scatter)
{
	const int dflt = a->opt.mtu == GPURX_MTU_MAX;
	uint32_t want = a->opt.mtu, overhead, room;
	const char *why = "";
	uint16_t cur;
	int rc;

	if (want == GPURX_MTU_KEEP || (dflt &&
			(strcmp(p->driver, "net_af_packet") == 0 ||
			 strcmp(p->driver, "net_tap") == 0)))
		return 0;
	/* ethdev's own rule for a frame's bytes beyond the MTU. */
	overhead = di->max_mtu != UINT16_MAX && di->max_rx_pktlen > di->max_mtu ?
		di->max_rx_pktlen - di->max_mtu :
		RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
	if (dflt) {
		want = di->max_mtu;
		why = " (its largest, so that jumbo frames arrive whole; "
			"--mtu keep leaves it)";
		room = rte_pktmbuf_data_room_size(a->pools[0]) -
			RTE_PKTMBUF_HEADROOM;
		if (!scatter && room > overhead && room - overhead < want) {
			want = room - overhead;
			why = " (the largest one mbuf holds: the port offers no "
				"RX scatter; --mtu keep leaves it)";
		}
	}
	if (rte_eth_dev_get_mtu(p->id, &cur) == 0 && cur == want)
		return 0;
	rc = rte_eth_dev_set_mtu(p->id, (uint16_t)want);
	if (rc == 0) {
		printf("mtu: port %u set to %u%s\n", p->id, want, why);
		return 0;
	}
	if (dflt) {
		if (rc != -ENOTSUP)
			GPURX_LOG(WARNING, "warning: port %u (%s) kept its MTU: "
				"%u refused: %s\n", p->id, p->driver, want,
				rte_strerror(-rc));
		return 0;
	}
	GPURX_LOG(ERR, "error: --mtu %u: port %u (%s) refused it: %s (its "
		"range: %u to %u)\n", want, p->id, p->driver,
		rc == -ENOTSUP ? "it has no MTU to set" : rte_strerror(-rc),
		di->min_mtu, di->max_mtu);
	return -1;
}

/* Port p configured with its --queues RX queues, started: 0 or -1
 * (said). */
static int
setup_one(struct gpurx_app *a, const struct gpurx_port *p, uint16_t first_q)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	struct rte_eth_rxconf rxq;
	const uint16_t nq = a->opt.queues;
	uint16_t nb_rxd = (uint16_t)a->opt.nb_rxd, nb_txd = 0;
	int rc;

	rc = rte_eth_dev_info_get(p->id, &di);
	if (rc != 0)
		goto fail_rc;
	memset(&conf, 0, sizeof(conf));
	if (nq > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP |
			RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
		conf.rx_adv_conf.rss_conf.rss_hf &= di.flow_type_rss_offloads;
		if (conf.rx_adv_conf.rss_conf.rss_hf == 0)
			GPURX_LOG(WARNING, "warning: port %u (%s) offers no IP RSS: "
				"queues other than 0 may stay idle\n",
				p->id, p->driver);
	}
	/* Frames longer than one mbuf arrive chained rather than dropped. */
	if (di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	if (a->opt.ts_source == GPURX_TS_PORT &&
			(di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	rc = rte_eth_dev_configure(p->id, nq, 0, &conf);
	if (rc != 0)
		goto fail_rc;
	if (set_mtu(a, p, &di, (conf.rxmode.offloads &
			RTE_ETH_RX_OFFLOAD_SCATTER) != 0) != 0)
		return -1;
	/* One field for every port: registered once. */
	if ((conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP) &&
			a->ts_off < 0) {
		rc = rte_mbuf_dyn_rx_timestamp_register(&a->ts_off, &a->ts_flag);
		if (rc != 0) {
			rc = -rte_errno;
			goto fail_rc;
		}
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &nb_rxd, &nb_txd);
	if (rc != 0)
		goto fail_rc;
	rxq = di.default_rxconf;
	rxq.offloads = conf.rxmode.offloads;
	for (uint16_t q = first_q; q < first_q + nq; q++) {
		rc = rx_queue_setup(a, q, nb_rxd, &rxq);
		/* ethdev checks the header pool's room; the port its own
		 * rules for a split (its log says which). */
		if (rc != 0 && a->split != 0)
			GPURX_LOG(ERR, "error: port %u (%s) refused RX queue %u "
				"split at %u bytes: %s; another --split N, or "
				"--split off\n", p->id, p->driver, a->q_qid[q],
				a->split, rte_strerror(-rc));
		if (rc != 0)
			goto fail_rc;
	}
	rc = rte_eth_promiscuous_enable(p->id);
	if (rc != 0 && rc != -ENOTSUP)
		GPURX_LOG(WARNING, "warning: port %u: promiscuous mode: %s\n",
			p->id, rte_strerror(-rc));
	rc = rte_eth_dev_start(p->id);
	if (rc != 0)
		goto fail_rc;
	if (a->opt.ts_source == GPURX_TS_PORT && port_timestamps(a, p) != 0) {
		rc = rte_eth_dev_stop(p->id);
		if (rc != 0)
			GPURX_LOG(WARNING, "warning: port %u stop: %s\n", p->id,
				rte_strerror(-rc));
		return -1;
	}
	return 0;
fail_rc:
	GPURX_LOG(ERR, "error: port %u (%s) setup: %s\n", p->id, p->driver,
		rte_strerror(-rc));
	return -1;
}

int
gpurx_port_setup(struct gpurx_app *a)
{
	const struct gpurx_port *nosplit = NULL;
	int rc;

	/* --split: every port must split, all queues share the pools. */
	for (uint16_t i = 0; i < a->n_ports && nosplit == NULL; i++) {
		struct rte_eth_dev_info di;

		rc = rte_eth_dev_info_get(a->ports[i].id, &di);
		if (rc != 0) {
			GPURX_LOG(ERR, "error: port %u (%s) setup: %s\n",
				a->ports[i].id, a->ports[i].driver,
				rte_strerror(-rc));
			return -1;
		}
		if (!port_can_split(&di))
			nosplit = &a->ports[i];
	}
	if (a->mem == GPURX_MEM_GPU && a->opt.pool_per_queue) {
		GPURX_LOG(ERR, "error: --pool-per-queue: --mem gpu has one pool "
			"of GPU memory\n");
		return -1;
	}
	a->pool_size = pool_size(a);
	rc = a->mem == GPURX_MEM_GPU ? gpurx_gpu_create_pool(a) : 1;
	if (rc > 0) {
		/* Host pools: asked, or --mem auto and the port refused to
		 * map GPU memory (said there). */
		if (a->mem == GPURX_MEM_GPU) {
			a->mem = GPURX_MEM_HOST_MAPPED;
			a->mem_why = "default: the port refused to map GPU memory "
				"for DMA";
		}
		rc = create_host_pools(a, host_pools(a));
	}
	if (rc != 0)
		return -1;
	/* After the pools: --mem auto may have fallen back to host memory. */
	if (choose_split(a, nosplit) != 0)
		return -1;
	if (a->split != 0 && create_hdr_pools(a) != 0)
		return -1;
	a->ts_off = -1;
	for (uint16_t i = 0; i < a->n_ports; i++) {
		/* gpurx_port_close() stops and closes them all. */
		if (setup_one(a, &a->ports[i], i * a->opt.queues) != 0)
			return -1;
	}
	return 0;
}

void
gpurx_port_close(struct gpurx_app *a)
{
	int rc;

	/* Stop and close give back every mbuf the RX descriptors hold. */
	for (uint16_t i = 0; i < a->n_ports; i++) {
		rc = rte_eth_dev_stop(a->ports[i].id);
		if (rc != 0)
			GPURX_LOG(WARNING, "warning: port %u stop: %s\n",
				a->ports[i].id, rte_strerror(-rc));
	}
	gpurx_gpu_port_unmap(a);
	for (uint16_t i = 0; i < a->n_ports; i++) {
		rc = rte_eth_dev_close(a->ports[i].id);
		if (rc != 0)
			GPURX_LOG(WARNING, "warning: port %u close: %s\n",
				a->ports[i].id, rte_strerror(-rc));
	}
}

int
gpurx_flow_queue_ports(const struct gpurx_app *a, const uint16_t *queues,
		uint16_t n, struct gpurx_flow_table *ft, const char *who)
{
	uint16_t port[GPURX_MAX_QUEUES];

	for (uint16_t r = 0; r < n && r < GPURX_MAX_QUEUES; r++)
		port[r] = (uint16_t)(gpurx_queue_port(a, queues != NULL ?
			queues[r] : r) - a->ports);
	if (n > GPURX_MAX_QUEUES ||
			gpurx_flow_table_set_queue_ports(ft, port, n) != 0) {
		GPURX_LOG(ERR, "error: %s: %u queues of %u ports: a flow's key "
			"tells %u ports apart over %u queues at most\n", who, n,
			a->n_ports, GPURX_FLOW_KEY_PORTS, GPURX_FLOW_KEY_PORTS);
		return -1;
	}
	return 0;
}
