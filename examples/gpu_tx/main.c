/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx: the traffic generator over libgpugen. Streams from specs
 * or pcap files; each burst's frames built by the CPU reference (--mem
 * cpu) or by the GPU into host-mapped or GPU-memory mbufs, then posted to
 * any DPDK port at a rate the CPU paces, from one or more TX lcores (a TX
 * queue each). On the GPU a persistent kernel builds the bursts the TX
 * lcores post to it through gpudev communication lists (gpugen_fill.h),
 * or a kernel is launched per burst (--launch-per-burst). Usage:
 * doc/gpu_tx.md.
 *
 * This file: EAL's start, the generator and its streams, the GPU build,
 * the wiring of the other files' parts in order, and the teardown.
 * Options in tx_opts.c, port and mbuf pool in tx_port.c, the TX lcores
 * and their pacing in tx_lcore.c, the report in tx_summary.c; the state
 * they share in gpu_tx.h.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "gpugen.h"
#include "gpugen_fill.h"
#include "gpuapp_eal.h"
#include "gpuapp_json.h"
#include "gpu_tx.h"

volatile sig_atomic_t gputx_quit;

static void
on_signal(int sig)
{
	(void)sig;
	gputx_quit = 1;
}

/* A GPU's persistent fill (or per-burst launches): a ring for each
 * queue it serves. */
static int
open_fill(struct app *a, struct tx_gpu *g, char *err, size_t errlen)
{
	struct gpugen_fill_conf fc = {
		.rings = g->n_queues,
		.items = a->o.ring_items,
		.burst = a->o.burst,
		.frames_in_gpu = a->o.mem == MEM_GPU,
		.launch_per_burst = a->o.launch_per_burst,
		/* --burst (at most MAX_BURST) is within the side records'
		 * room (gpugen_fill_open checks). */
		.lap_tags = !a->o.no_lap_tags,
		.times = a->o.build_breakdown ? GPUTX_BD_LOG : 0,
	};

	return gpugen_fill_open(g->gg, &fc, &g->fill, err, errlen);
}

/*
 * Each GPU's generator context and fill. The streams go to GPU memory
 * whatever the frames' memory: each packet's build reads them (program,
 * template) in dependent steps, each a PCIe round trip from host memory.
 * Host-mapped, 32-packet bursts, posted to built: 39 -> 28 us for one
 * 100-byte stream, 58 -> 48 us for the memif loop's streams. 0, or -1
 * (said); what was opened is closed by close_gpus().
 */
static int
open_gpus(struct app *a)
{
	char err[512];
	int rc;

	for (unsigned int k = 0; k < a->n_gpus; k++) {
		struct tx_gpu *g = &a->gpu[k];
		/* Which GPU, where there are several to tell apart. */
		char which[32] = "";

		if (a->n_gpus > 1)
			snprintf(which, sizeof(which), " (GPU %d)", g->id);
		rc = gpugen_gpu_open(a->gen, g->id, a->o.burst,
			a->o.table_in_host ? GPUGEN_TABLE_HOST :
			GPUGEN_TABLE_DEVICE, &g->gg, err, sizeof(err));
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: GPU build%s: %s\n", which, err);
			return -1;
		}
		rc = open_fill(a, g, err, sizeof(err));
		if (rc != 0) {
			GPUTX_LOG(ERR, "error: GPU fill%s: %s\n", which, err);
			return -1;
		}
	}
	return 0;
}

static void
close_gpus(struct app *a)
{
	for (unsigned int k = 0; k < a->n_gpus; k++) {
		gpugen_fill_close(a->gpu[k].fill);
		a->gpu[k].fill = NULL;
		gpugen_gpu_close(a->gpu[k].gg);
		a->gpu[k].gg = NULL;
	}
}

/* Every GPU's fill started, or stopped: 0, or -1 (said). A stop goes on
 * over the others after one failed: each must give its mbufs back. */
static int
fills(struct app *a, int start)
{
	char err[512];
	int rc = 0;

	for (unsigned int k = 0; k < a->n_gpus; k++) {
		struct tx_gpu *g = &a->gpu[k];

		if (g->fill == NULL)
			continue;
		if ((start ? gpugen_fill_start(g->fill, err, sizeof(err)) :
				gpugen_fill_stop(g->fill, err, sizeof(err))) == 0)
			continue;
		if (a->n_gpus > 1)
			GPUTX_LOG(ERR, "error: GPU fill (GPU %d): %s\n", g->id, err);
		else
			GPUTX_LOG(ERR, "error: GPU fill: %s\n", err);
		rc = -1;
		if (start)
			break;
	}
	return rc;
}

/* The mbuf flags and lengths stream s's frames need for the port to
 * compute what the generator left out (--csum-offload). */
static void
stream_offload(struct app *a, uint32_t s, const struct gpugen_stream_info *si)
{
	uint64_t fl = 0;

	if (si->csum_offload != 0)
		fl |= si->ip_version == 4 ? RTE_MBUF_F_TX_IPV4 :
			RTE_MBUF_F_TX_IPV6;
	if (si->csum_offload & GPUGEN_CSUM_IP4) {
		fl |= RTE_MBUF_F_TX_IP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	}
	if (si->csum_offload & GPUGEN_CSUM_UDP) {
		fl |= RTE_MBUF_F_TX_UDP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	}
	if (si->csum_offload & GPUGEN_CSUM_TCP) {
		fl |= RTE_MBUF_F_TX_TCP_CKSUM;
		a->ol_needed |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	}
	a->ol_flags[s] = fl;
	a->tx_offload[s] = fl != 0 ? rte_mbuf_tx_offload(si->l2_len,
		si->l3_len, 0, 0, 0, 0, 0) : 0;
	a->one_ol = s == 0 || (a->one_ol && fl == a->ol_flags[0] &&
		a->tx_offload[s] == a->tx_offload[0]);
}

/* The generator and its streams, each said; the offload flags of each
 * with --csum-offload. 0, or -1 (said). */
static int
setup_gen(struct app *a)
{
	struct gpugen_conf gc = { 0 };
	char err[512];
	int rc;

	/* Any frame up to the generator's largest: the pools' data room is
	 * sized after the streams are parsed (gputx_setup_pool). */
	gc.data_room = GPUGEN_FRAME_MAX - RTE_ETHER_CRC_LEN;
	gc.burst = a->o.burst;
	gc.seed = a->o.seed;
	gc.csum_offload = a->o.csum_offload;
	rc = gpugen_create(&a->gen, &gc);
	if (rc != 0) {
		GPUTX_LOG(ERR, "error: generator: %s\n", strerror(-rc));
		return -1;
	}
	for (unsigned int k = 0; k < a->o.n_streams; k++) {
		rc = gpugen_add_spec(a->gen, a->o.streams[k], err, sizeof(err));
		if (rc < 0) {
			GPUTX_LOG(ERR, "error: stream '%s': %s\n",
				a->o.streams[k], err);
			return -1;
		}
	}
	a->fixed_len = gpugen_fixed_len(a->gen);
	a->ol_flags = calloc(gpugen_n_streams(a->gen), sizeof(*a->ol_flags));
	a->tx_offload = calloc(gpugen_n_streams(a->gen),
		sizeof(*a->tx_offload));
	if (a->ol_flags == NULL || a->tx_offload == NULL) {
		GPUTX_LOG(ERR, "error: out of memory\n");
		return -1;
	}
	for (uint32_t s = 0; s < gpugen_n_streams(a->gen); s++) {
		struct gpugen_stream_info si;

		gpugen_stream_info(a->gen, s, &si);
		stream_offload(a, s, &si);
		printf("stream %u: %s: %u-%u bytes, weight %u, %u variables, "
			"%s\n", s, si.desc, si.len_min + 4, si.len_max + 4,
			si.weight, si.n_vars, si.stamp_off ? "stamped" :
			"no stamp");
	}
	return 0;
}

static int
print_help(void *o)
{
	char *help[] = { (char *)"dpdk-gpu-tx", (char *)"--help", NULL };

	return gputx_parse_opts(2, help, o) > 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct app a;
	int rc, ret = 1, port_started = 0;

	memset(&a, 0, sizeof(a));
	/* --help and --version need no EAL (nor hugepages, nor a GPU). */
	rc = gpuapp_early_answer(argc, argv, "dpdk-gpu-tx", print_help, &a.o);
	if (rc >= 0)
		return rc;
	rc = gpuapp_eal_init(argc, argv);
	if (rc < 0) {
		GPUTX_LOG(ERR, "error: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)"dpdk-gpu-tx";
	rc = gputx_parse_opts(argc, argv, &a.o);
	if (rc > 0)
		ret = 0;
	if (rc != 0)
		goto out;
	/* The summary's file is written at the end: a typo must not cost
	 * the run. */
	if (a.o.json != NULL && gpuapp_json_check_target(a.o.json) != 0)
		goto out;
	if (setup_gen(&a) != 0)
		goto out;
	if (!rte_eth_dev_is_valid_port(a.o.port)) {
		GPUTX_LOG(ERR, "error: port %u does not exist (%u ports probed; "
			"add one with -a PCI_ADDR or --vdev)\n", a.o.port,
			rte_eth_dev_count_avail());
		goto out;
	}
	if (rte_lcore_count() > 1 && rte_lcore_count() - 1 < a.o.queues) {
		GPUTX_LOG(ERR, "error: --queues %u: a worker lcore each, and EAL "
			"has %u (-l 0-%u gives %u)\n", a.o.queues,
			rte_lcore_count() - 1, a.o.queues, a.o.queues);
		goto out;
	}
	if (rte_lcore_count() == 1 && a.o.queues > 1) {
		GPUTX_LOG(ERR, "error: --queues %u: a worker lcore each, and EAL "
			"has none (-l 0-%u)\n", a.o.queues, a.o.queues);
		goto out;
	}
	if (gputx_txq_setup(&a) != 0 || gputx_streams_setup(&a) != 0)
		goto out;
	if (gputx_setup_gpu(&a) != 0)
		goto out;
	if (a.o.build_breakdown && a.n_gpus > 1) {
		GPUTX_LOG(ERR, "error: --build-breakdown: one GPU at a time (the "
			"floor it compares with is one GPU's); %u in use\n",
			a.n_gpus);
		goto out;
	}
	if (gputx_setup_pool(&a, rte_eth_dev_socket_id(a.o.port)) != 0)
		goto out;
	if (a.o.mem != MEM_CPU && open_gpus(&a) != 0)
		goto out;
	if (gputx_setup_port(&a) != 0)
		goto out;
	port_started = 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (a.o.wait_link > 0 && gputx_wait_link(&a) != 0)
		goto out;
	if (gputx_set_rate(&a) != 0)
		goto out;
	/* Telemetry is a view: a run goes on without it, and says so. */
	rc = gputx_telemetry_register(&a);
	if (rc != 0)
		GPUTX_LOG(WARNING, "warning: telemetry /gpu_tx/stats: %s\n",
			rte_strerror(-rc));
	printf("memory: %s; build: %s; %u TX queue%s, burst %u%s\n",
		gputx_mem_str(a.o.mem), gputx_build_str(&a.o), a.o.queues,
		a.o.queues > 1 ? "s" : "", a.o.burst, a.gpu[0].fill == NULL ?
		"" : ", bursts in flight per queue up to --ring-items");
	/* The floor before the fill's kernel starts: that persistent kernel
	 * may hold every multiprocessor, and the echo's one block would then
	 * wait behind it for good (seen on an H200: the run hung here). */
	if (gputx_bd_floor(&a) != 0)
		goto out;
	if (fills(&a, 1) != 0) {
		/* Those started must give back what they hold. */
		fills(&a, 0);
		goto out;
	}
	rc = gputx_run(&a);
	if (fills(&a, 0) != 0)
		rc = -1;
	else if (rc == 0 && gputx_bd_collect(&a) != 0)
		rc = -1;
	if (rc == 0 && a.o.linger > 0)
		gputx_linger(&a);
	if (gputx_report(&a) != 0)
		rc = -1;
	/* Frames the port dropped are frames not sent, as those it refused. */
	ret = rc == 0 && a.st.failed == 0 && a.port_oerrors == 0 &&
		!(a.o.strict_rate && a.rate_short) ? 0 : 1;
out:
	if (port_started) {
		/* Stop and close: the port gives back the mbufs it holds. */
		if (rte_eth_dev_stop(a.o.port) != 0)
			GPUTX_LOG(WARNING, "warning: port %u stop failed\n", a.o.port);
		gputx_unmap_pools(&a);
		if (rte_eth_dev_close(a.o.port) != 0)
			GPUTX_LOG(WARNING, "warning: port %u close failed\n", a.o.port);
	}
	close_gpus(&a);
	gputx_release_pool(&a);
	gputx_telemetry_detach();
	gputx_streams_release(&a);
	gputx_txq_release(&a);
	gpugen_free(a.gen);
	free(a.ol_flags);
	free(a.tx_offload);
	for (unsigned int k = 0; k < a.o.n_streams; k++)
		free(a.o.pcap_specs[k]);
	rte_eal_cleanup();
	return ret;
}
