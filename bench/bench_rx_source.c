/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-rx-source: what the software packet source of the capacity runs
 * costs alone. One RX lcore per queue of the first ethdev port does
 * nothing but rte_eth_rx_burst() and rte_pktmbuf_free_bulk() for the
 * given time; the rate it reaches is the ceiling of any pipeline fed by
 * that source on those lcores (bench/pipeline-capacity.sh), whatever the
 * pipeline does with the packets. With --gpu the mbufs' data lies in that
 * GPU's memory, as dpdk-gpu-rx --mem gpu has it (the same pool code,
 * lib/gpuapp): the bare loop of a port that writes into GPU memory
 * (net_gpudma, or a NIC with GPUDirect RDMA). With --gpus N queue q's
 * mbufs are in GPU q mod N's memory, a pool a GPU, as dpdk-gpu-rx
 * --mem gpu --gpus 0,..,N-1 has them (bench/gpus-scaling.sh).
 *
 * Usage: bench-rx-source [EAL options, one port, e.g. --vdev net_null0]
 *        -- [--queues N] [--burst N] [--seconds N] [--mbufs N]
 *        [--gpu ID | --gpus N] [--json FILE]
 *        bench-rx-source --self-test
 * Needs one lcore per queue besides the main lcore. Prints one line:
 *   rx-source: port=NAME[ (net_gpudma)] queues=N burst=N memory=host|gpu
 *   rate=X Mpps per_lcore=Y Mpps
 * and, with --json, writes rx_packets, rx_bytes and elapsed_s (the fields
 * of dpdk-gpu-rx's summary that bench/pipeline-capacity.sh reads).
 * Exit: 0, 1 failure, 2 usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bench_common.h"
#include "gpuapp_json.h"
#include "gpuapp_pool.h"
#include "gpuapp_port.h"

#define RXS_MAX_QUEUES 64
#define RXS_MAX_BURST 512
#define RXS_RING 1024
#define RXS_MAX_GPUS 16

struct rxs_opts {
	uint64_t queues;
	uint64_t burst;
	uint64_t seconds;
	uint64_t mbufs;
	int64_t gpu;		/* gpudev id of the mbufs' memory; -1: host */
	uint64_t gpus;		/* queues over gpudev ids 0..gpus-1; 0: --gpu */
	const char *json;
};

struct rxs_queue {
	uint16_t port;
	uint16_t queue;
	uint16_t burst;
	uint64_t packets;
	uint64_t bytes;
} __rte_cache_aligned;

static volatile int rxs_stop;
static struct rxs_queue rxs_q[RXS_MAX_QUEUES];

static int
parse(int argc, char **argv, void *arg)
{
	struct rxs_opts *o = arg;
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("queues", &o->queues, 1, RXS_MAX_QUEUES,
			"N", "RX queues, one lcore each (default 1)"),
		GPUAPP_OPT_UINT_ENTRY("burst", &o->burst, 1, RXS_MAX_BURST, "N",
			"packets per rte_eth_rx_burst() (default 32)"),
		GPUAPP_OPT_UINT_ENTRY("seconds", &o->seconds, 1, 3600, "N",
			"run time (default 3)"),
		GPUAPP_OPT_UINT_ENTRY("mbufs", &o->mbufs, 1, 1u << 24, "N",
			"mbuf pool size (default: the rings' fill)"),
		GPUAPP_OPT_UINT_ENTRY("gpu", &o->gpu, 0, INT16_MAX, "ID",
			"the mbufs' data in this gpudev's memory"),
		GPUAPP_OPT_UINT_ENTRY("gpus", &o->gpus, 1, RXS_MAX_GPUS, "N",
			"queue q's mbufs in gpudev q mod N's memory\n"
			"(a pool a GPU, as dpdk-gpu-rx --gpus 0,..,N-1)"),
		GPUAPP_OPT_STRING_ENTRY("json", &o->json, "FILE",
			"rx_packets, rx_bytes and elapsed_s as JSON"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options, one port] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

static int
rx_loop(void *arg)
{
	struct rxs_queue *q = arg;
	struct rte_mbuf *pkts[RXS_MAX_BURST];
	uint64_t n = 0, bytes = 0;

	while (!rxs_stop) {
		uint16_t got = rte_eth_rx_burst(q->port, q->queue, pkts, q->burst);

		if (got == 0)
			continue;
		/* The length is all a pipeline reads of every mbuf at least. */
		for (uint16_t i = 0; i < got; i++)
			bytes += rte_pktmbuf_pkt_len(pkts[i]);
		rte_pktmbuf_free_bulk(pkts, got);
		n += got;
	}
	q->packets = n;
	q->bytes = bytes;
	return 0;
}

/* Queue q takes its mbufs from mp[q % nmp]. */
static int
port_start(uint16_t port, uint16_t nq, struct rte_mempool *const *mp,
		unsigned int nmp)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, nq, 0, &conf);
	if (rc != 0) {
		BENCH_LOG(ERR, "rte_eth_dev_configure(%u RX queues): %s\n", nq,
			rte_strerror(-rc));
		return -1;
	}
	for (q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, RXS_RING,
			rte_eth_dev_socket_id(port), NULL, mp[q % nmp]);
		if (rc != 0) {
			BENCH_LOG(ERR, "rte_eth_rx_queue_setup(%u): %s\n", q,
				rte_strerror(-rc));
			return -1;
		}
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0) {
		BENCH_LOG(ERR, "rte_eth_dev_start: %s\n", rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/* GPU memory unmapped from the port while it exists (a closed vdev has
 * no device to unmap from); freed after the port closes. */
static void
unmap_gpu_pools(struct gpuapp_ext_pool *gp, unsigned int n)
{
	for (unsigned int g = 0; g < n; g++)
		gpuapp_ext_pool_unmap(&gp[g]);
}

int
main(int argc, char **argv)
{
	struct rxs_opts o = { .queues = 1, .burst = 32, .seconds = 3, .mbufs = 0,
		.gpu = -1 };
	struct gpuapp_ext_pool gp[RXS_MAX_GPUS];
	char err[256];
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	struct rte_mempool *mp[RXS_MAX_GPUS] = { NULL };
	uint64_t total = 0, bytes = 0, t0, t1;
	unsigned int lcore, nq, nmp = 1, g;
	uint16_t port = 0;
	int rc, status = BENCH_EXIT_FAIL;
	double secs;

	rc = bench_start(argc, argv, parse, &o);
	if (rc >= 0)
		return rc;
	memset(gp, 0, sizeof(gp));
	nq = (unsigned int)o.queues;
	if (rte_eth_dev_count_avail() == 0) {
		BENCH_LOG(ERR, "no ethdev port: give one, e.g. --vdev net_null0\n");
		goto out;
	}
	RTE_ETH_FOREACH_DEV(port)
		break;
	rte_eth_dev_get_name_by_port(port, name);
	if (rte_lcore_count() < nq + 1) {
		BENCH_LOG(ERR, "%u queues need %u lcores (-l 0-%u), have %u\n",
			nq, nq + 1, nq, rte_lcore_count());
		status = BENCH_EXIT_USAGE;
		goto out;
	}
	if (o.gpus > 0 && o.gpu >= 0) {
		BENCH_LOG(ERR, "--gpu and --gpus exclude each other\n");
		status = BENCH_EXIT_USAGE;
		goto out;
	}
	if (o.gpus > 0) {
		o.gpu = 0;
		nmp = (unsigned int)o.gpus;
		if (nmp > nq) {
			BENCH_LOG(ERR, "--gpus %u: more GPUs than the %u queues\n",
				nmp, nq);
			status = BENCH_EXIT_USAGE;
			goto out;
		}
	}
	/* Every RX ring full, every lcore's burst in hand, the caches: a
	 * pool's share of the queues. */
	if (o.mbufs == 0)
		o.mbufs = (nq + nmp - 1) / nmp * (RXS_RING + o.burst + 512) + 1024;
	for (g = 0; g < nmp; g++) {
		const int16_t id = (int16_t)(o.gpu + g);
		char pname[RTE_MEMPOOL_NAMESIZE];

		if (o.gpu < 0) {
			mp[g] = rte_pktmbuf_pool_create("rxs_pool",
				(unsigned int)o.mbufs, 256, 0,
				RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
			if (mp[g] == NULL) {
				BENCH_LOG(ERR, "rte_pktmbuf_pool_create(%" PRIu64
					"): %s\n", o.mbufs, rte_strerror(rte_errno));
				goto out;
			}
			break;
		}
		if (!rte_gpu_is_valid(id)) {
			BENCH_LOG(ERR, "GPU %d: no such GPU (%u probed; load the "
				"CUDA gpudev plugin with -d)\n", id,
				(unsigned int)rte_gpu_count_avail());
			status = BENCH_EXIT_USAGE;
			goto out;
		}
		snprintf(pname, sizeof(pname), "rxs_pool_gpu%d", id);
		rc = gpuapp_ext_pool_create(&gp[g], pname, id, port,
			(uint32_t)o.mbufs, 256, RTE_MBUF_DEFAULT_BUF_SIZE,
			rte_socket_id(), err, sizeof(err));
		if (rc != 0) {
			BENCH_LOG(ERR, "mbufs in GPU %d's memory: %s%s\n", id,
				rc == 1 ? "the port cannot DMA into it: " : "",
				rc == 1 ? rte_strerror(rte_errno) : err);
			goto out;
		}
		mp[g] = gp[g].mp;
	}
	if (port_start(port, (uint16_t)nq, mp, nmp) != 0) {
		/* Its queues may hold mbufs of mp: closed before mp goes. */
		unmap_gpu_pools(gp, nmp);
		rte_eth_dev_close(port);
		goto out;
	}

	t0 = rte_get_tsc_cycles();
	nq = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (nq == o.queues)
			break;
		rxs_q[nq] = (struct rxs_queue){ .port = port, .queue = (uint16_t)nq,
			.burst = (uint16_t)o.burst };
		rc = rte_eal_remote_launch(rx_loop, &rxs_q[nq], lcore);
		if (rc != 0) {
			BENCH_LOG(ERR, "rte_eal_remote_launch(lcore %u): %s\n",
				lcore, rte_strerror(-rc));
			rxs_stop = 1;
			break;
		}
		nq++;
	}
	if (!rxs_stop)
		rte_delay_us_sleep((unsigned int)(o.seconds * 1000000));
	rxs_stop = 1;
	rte_eal_mp_wait_lcore();
	t1 = rte_get_tsc_cycles();
	if (nq != o.queues)
		goto stop;
	for (unsigned int q = 0; q < nq; q++) {
		total += rxs_q[q].packets;
		bytes += rxs_q[q].bytes;
	}
	secs = (double)(t1 - t0) / bench_tsc_hz();
	if (total == 0) {
		/* A source that gives nothing is broken (a port whose copies
		 * failed, say), not a rate of zero. */
		BENCH_LOG(ERR, "no packet in %.1f s from %s: see its errors "
			"above\n", secs, name);
		goto stop;
	}
	/* What wrote the mbufs' data: for a net_gpudma port with --gpu, the
	 * port's own kernel or copies on the GPU, part of this loop's cost. */
	printf("rx-source: port=%s%s queues=%u burst=%" PRIu64 " memory=%s "
		"rate=%.2f Mpps per_lcore=%.2f Mpps\n", name,
		gpuapp_port_is_gpudma(port) ? " (net_gpudma)" : "", nq, o.burst,
		o.gpu >= 0 ? "gpu" : "host", total / secs / 1e6,
		total / secs / 1e6 / nq);
	status = BENCH_EXIT_OK;
	if (o.json != NULL) {
		struct gpuapp_json *j = gpuapp_json_create();

		if (j == NULL) {
			BENCH_LOG(ERR, "cannot write %s: out of memory\n", o.json);
			status = BENCH_EXIT_FAIL;
			goto stop;
		}
		gpuapp_json_obj_begin(j, NULL);
		gpuapp_json_str(j, "mode", "source");
		gpuapp_json_str(j, "port", name);
		gpuapp_json_str(j, "memory", o.gpu >= 0 ? "gpu" : "host");
		gpuapp_json_u64(j, "queues", nq);
		gpuapp_json_u64(j, "burst", o.burst);
		gpuapp_json_u64(j, "rx_packets", total);
		gpuapp_json_u64(j, "rx_bytes", bytes);
		gpuapp_json_fixed(j, "elapsed_s", secs, 6);
		gpuapp_json_obj_end(j);
		/* One line, as this file has always been. */
		if (gpuapp_json_write(j, o.json, 0) != 0)
			status = BENCH_EXIT_FAIL;
		gpuapp_json_free(j);
	}
stop:
	if (rte_eth_dev_stop(port) != 0)
		status = BENCH_EXIT_FAIL;
	unmap_gpu_pools(gp, nmp);
	rte_eth_dev_close(port);
out:
	/* A GPU pool's mempool goes with its memory, in that order. */
	for (g = 0; g < nmp; g++) {
		if (gp[g].mem != NULL)
			gpuapp_ext_pool_free(&gp[g]);
		else
			rte_mempool_free(mp[g]);
	}
	rte_eal_cleanup();
	return status;
}
