/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-gpudma: net_gpudma's own rate into GPU memory, on the first GPU,
 * and a check that what it delivers there is the wire's bytes.
 *
 *  1. PCIe host-to-device bandwidth: cuMemcpyHtoD of a pinned buffer, the
 *     bound of any copy-engine or NIC write into GPU memory here;
 *  2. packets/s per queue with 64-byte frames and GB/s with 1500-byte
 *     frames, mbuf data in GPU memory (rte_gpu_mem_alloc, registered with
 *     rte_extmem_register, DMA-mapped to the port), each queue's lcore
 *     receiving and freeing; the same in host memory for reference;
 *  3. the consumer: frames of 60 to 262144 bytes received once into GPU
 *     memory, each chain copied back and compared with the pcap's bytes.
 *
 *  4. with --rx-port, frames from another port: the rate runs' frames come
 *     from a net_pcap port replaying the file forever (rx_port=, one of
 *     its queues a queue), and the consumer's from a net_ring port the
 *     benchmark feeds, chained as a NIC hands jumbo frames over.
 *
 * Usage: bench-gpudma [EAL options] -- [--queues N] [--seconds S]
 *        [--burst N] [--dir DIR] [--no-batch] [--scatter] [--bulk 0|1|auto]
 *        [--fill launch|persistent] [--rx-port]
 * (--no-batch: the port's batch=0, one cuMemcpyHtoDAsync per segment;
 * --scatter: scatter=1, RX by the kernel, one launch a fill; --bulk: the
 * port's bulk=, default auto; --fill persistent: fill=persistent, the
 * kernel running for the queue's life, fills posted to it, implies
 * --scatter)
 * Needs an lcore per queue besides the main one (-l 0-N).
 * Exit: 0 done, 1 a check or call failed, 2 usage, 77 no GPU.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bench_common.h"
#include "cuda_api.h"
#include "gpudma_frames.h"
#include "rte_pmd_net_gpudma.h"

#define GPU_PAGE (64u << 10)
#define ELT (2048u + RTE_PKTMBUF_HEADROOM)
#define MBUFS_PER_QUEUE 16384u
#define NB_DESC 4096u
#define MAX_QUEUES 16
#define H2D_BYTES (256u << 20)
#define MAX_FRAME GPUDMA_FRAMES_MAX

struct opts {
	unsigned int queues;
	unsigned int seconds;
	unsigned int burst;
	const char *dir;
	int no_batch;
	int scatter;
	int bulk;                /* bulk= devarg: an index of bulk_names[] */
	int fill;                /* fill= devarg: an index of fill_names[] */
	int rx_port;
};

static const char *const bulk_names[] = { "0", "1", "auto", NULL };
static const char *const fill_names[] = { "launch", "persistent", NULL };

struct env {
	struct opts o;
	int16_t dev_id;
	struct rte_gpu_info info;
	CUdevice cu_dev;
	CUcontext ctx;
	void *gpu_mem;           /* a pool's worth per queue */
	size_t gpu_len;
};

struct worker {
	uint16_t port, queue;
	uint64_t stop_tsc;
	uint64_t pkts, bytes;
	unsigned int burst;
} __rte_cache_aligned;

static struct worker workers[MAX_QUEUES];

static int
parse(int argc, char **argv, void *arg)
{
	struct opts *o = arg;
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("queues", &o->queues, 1, MAX_QUEUES, "N",
			"RX queues, one lcore each (default 1)"),
		GPUAPP_OPT_UINT_ENTRY("seconds", &o->seconds, 1, 3600, "S",
			"time of each rate run (default 5)"),
		GPUAPP_OPT_UINT_ENTRY("burst", &o->burst, 1, 4096, "N",
			"packets per RX burst (default 256)"),
		GPUAPP_OPT_STRING_ENTRY("dir", &o->dir, "DIR",
			"where the pcap file goes (default /tmp)"),
		GPUAPP_OPT_FLAG_ENTRY("no-batch", &o->no_batch,
			"the port's batch=0: one cuMemcpyHtoDAsync\n"
			"per segment"),
		GPUAPP_OPT_FLAG_ENTRY("scatter", &o->scatter,
			"the port's scatter=1: RX by the kernel, one\n"
			"launch a fill"),
		GPUAPP_OPT_CHOICE_ENTRY("bulk", &o->bulk, 0, bulk_names,
			"0|1|auto", "the port's bulk= (default auto)"),
		GPUAPP_OPT_CHOICE_ENTRY("fill", &o->fill, 0, fill_names,
			"launch|persistent",
			"the port's fill= (default launch);\n"
			"persistent implies --scatter"),
		GPUAPP_OPT_FLAG_ENTRY("rx-port", &o->rx_port,
			"frames from a net_pcap port replaying the\n"
			"file (rx_port=)"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	o->queues = 1;
	o->seconds = 5;
	o->burst = 256;
	o->dir = "/tmp";
	o->bulk = 2;
	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

/* cuMemcpyHtoD of a pinned buffer: GB/s, or < 0 on failure. */
static double
h2d_bandwidth(struct env *e)
{
	double best = -1;
	CUdeviceptr dst = 0;
	void *src = NULL;
	CUcontext c;
	int i;

	if (gpu_cuda.cuCtxPushCurrent(e->ctx) != CUDA_SUCCESS)
		return -1;
	src = aligned_alloc(4096, H2D_BYTES);
	if (src == NULL)
		goto out;
	memset(src, 1, H2D_BYTES);
	if (gpu_cuda.cuMemHostRegister(src, H2D_BYTES, CU_MEMHOSTREGISTER_PORTABLE) !=
			CUDA_SUCCESS)
		goto out_free;
	if (gpu_cuda.cuMemAlloc(&dst, H2D_BYTES) != CUDA_SUCCESS)
		goto out_unreg;
	for (i = 0; i < 11; i++) {
		uint64_t t0 = bench_now_ns(), t1;

		if (gpu_cuda.cuMemcpyHtoD(dst, src, H2D_BYTES) != CUDA_SUCCESS) {
			best = -1;
			break;
		}
		t1 = bench_now_ns();
		/* The first warms the path; then the best of ten. */
		if (i > 0 && (double)H2D_BYTES / (double)(t1 - t0) > best)
			best = (double)H2D_BYTES / (double)(t1 - t0);
	}
	/* A failed release fails the reference too: the run is suspect. */
	if (gpu_cuda.cuMemFree(dst) != CUDA_SUCCESS)
		best = -1;
out_unreg:
	if (gpu_cuda.cuMemHostUnregister(src) != CUDA_SUCCESS)
		best = -1;
out_free:
	free(src);
out:
	if (gpu_cuda.cuCtxPopCurrent(&c) != CUDA_SUCCESS)
		best = -1;
	return best;
}

static int
rx_worker(void *arg)
{
	struct worker *w = arg;
	struct rte_mbuf *pkts[4096];
	uint64_t pkts_n = 0, bytes = 0;
	uint16_t i, n;

	while (rte_rdtsc() < w->stop_tsc) {
		n = rte_eth_rx_burst(w->port, w->queue, pkts, (uint16_t)w->burst);
		for (i = 0; i < n; i++)
			bytes += pkts[i]->pkt_len;
		pkts_n += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	w->pkts = pkts_n;
	w->bytes = bytes;
	return 0;
}

/* A pool of queue q's share of the GPU memory, or of EAL memory. */
static struct rte_mempool *
make_pool(struct env *e, unsigned int q, bool gpu, const char *tag)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_pktmbuf_extmem ext = {
		.buf_ptr = (char *)e->gpu_mem + (size_t)q * MBUFS_PER_QUEUE * ELT,
		.buf_iova = RTE_BAD_IOVA,
		.buf_len = (size_t)MBUFS_PER_QUEUE * ELT,
		.elt_size = ELT,
	};

	snprintf(name, sizeof(name), "gd_%s_%u", tag, q);
	if (!gpu)
		return rte_pktmbuf_pool_create(name, MBUFS_PER_QUEUE - 1, 256, 0,
			ELT, (int)rte_socket_id());
	return rte_pktmbuf_pool_create_extbuf(name, MBUFS_PER_QUEUE - 1, 256, 0,
		ELT, (int)rte_socket_id(), &ext, 1);
}

struct port_run {
	uint16_t port;
	char name[32];
	char sub[32];            /* rx_port's vdev, "" : none */
	struct rte_ring *rings[1];
	struct rte_device *dev;
	struct rte_mempool *mp[MAX_QUEUES];
	bool mapped;
};

static void
port_down(struct env *e, struct port_run *r)
{
	unsigned int q;

	(void)rte_eth_dev_stop(r->port);
	if (r->mapped && rte_dev_dma_unmap(r->dev, e->gpu_mem, RTE_BAD_IOVA,
			e->gpu_len) != 0)
		BENCH_LOG(ERR, "dma unmap: %s\n", rte_strerror(rte_errno));
	(void)rte_eth_dev_close(r->port);
	(void)rte_vdev_uninit(r->name);
	/* Closed with the port that took it over; the vdev goes now. */
	if (r->sub[0] != '\0')
		(void)rte_vdev_uninit(r->sub);
	rte_ring_free(r->rings[0]);
	for (q = 0; q < RTE_DIM(r->mp); q++)
		rte_mempool_free(r->mp[q]);
	memset(r, 0, sizeof(*r));
}

/*
 * rx_port's wire for a run: a net_pcap port replaying pcap forever, one
 * RX queue a queue (pcap NULL: a net_ring port of one queue the caller
 * feeds through r->rings[0]). Its name into args.
 */
static int
sub_up(struct port_run *r, const char *pcap, unsigned int nq, const char *tag,
		char *args, size_t len)
{
	char sargs[4096];
	size_t off = 0;
	unsigned int q;
	int id;

	if (pcap == NULL) {
		snprintf(sargs, sizeof(sargs), "gdr_%s", tag);
		r->rings[0] = rte_ring_create(sargs, 4096, SOCKET_ID_ANY,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
		id = r->rings[0] == NULL ? -1 : rte_eth_from_rings(tag,
			r->rings, 1, r->rings, 1, SOCKET_ID_ANY);
		if (id < 0 || rte_eth_dev_get_name_by_port((uint16_t)id,
				r->sub) != 0) {
			BENCH_LOG(ERR, "net_ring port: %s\n", rte_strerror(rte_errno));
			return -1;
		}
	} else {
		snprintf(r->sub, sizeof(r->sub), "net_pcap_%s", tag);
		for (q = 0; q < nq && off < sizeof(sargs); q++)
			off += (size_t)snprintf(sargs + off, sizeof(sargs) - off,
				"rx_pcap=%s,", pcap);
		snprintf(sargs + off, sizeof(sargs) - RTE_MIN(off, sizeof(sargs)),
			"infinite_rx=1");
		if (off >= sizeof(sargs) || rte_vdev_init(r->sub, sargs) != 0) {
			BENCH_LOG(ERR, "%s %s: cannot create it\n", r->sub, sargs);
			r->sub[0] = '\0';
			return -1;
		}
	}
	snprintf(args, len, "rx_port=%s", r->sub);
	return 0;
}

/* A net_gpudma port on pcap (or, with --rx-port, on a port: see sub_up)
 * with nq queues, pools in GPU or host memory. */
static int
port_up(struct env *e, struct port_run *r, const char *pcap, uint64_t loop,
		unsigned int nq, bool gpu, const char *tag)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	char args[1024], wire[600];
	unsigned int q;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "net_gpudma_%s", tag);
	if (!e->o.rx_port)
		snprintf(wire, sizeof(wire), "rx_pcap=%s,loop=%" PRIu64, pcap,
			loop);
	else if (sub_up(r, loop == 0 ? pcap : NULL, nq, tag, wire,
			sizeof(wire)) != 0)
		goto fail_sub;
	snprintf(args, sizeof(args), "%s,queues=%u,gpu=%d,batch=%s,scatter=%d,bulk=%s,fill=%s",
		wire, nq, (int)e->cu_dev, e->o.no_batch ? "0" : "auto",
		e->o.scatter, bulk_names[e->o.bulk], fill_names[e->o.fill]);
	if (rte_vdev_init(r->name, args) != 0 ||
			rte_eth_dev_get_port_by_name(r->name, &r->port) != 0 ||
			rte_pmd_gpudma_is_port(r->port) != 1 ||
			rte_eth_dev_info_get(r->port, &info) != 0) {
		BENCH_LOG(ERR, "%s: cannot create the port\n", r->name);
		(void)rte_vdev_uninit(r->name);
		goto fail_sub;
	}
	r->dev = info.device;
	if (rte_eth_dev_configure(r->port, nq, 1, &conf) != 0 ||
			rte_eth_tx_queue_setup(r->port, 0, 512, SOCKET_ID_ANY, NULL) != 0)
		goto fail;
	if (gpu) {
		if (rte_dev_dma_map(r->dev, e->gpu_mem, RTE_BAD_IOVA,
				e->gpu_len) != 0) {
			BENCH_LOG(ERR, "dma map: %s\n", rte_strerror(rte_errno));
			goto fail;
		}
		r->mapped = true;
	}
	for (q = 0; q < nq; q++) {
		r->mp[q] = make_pool(e, q, gpu, tag);
		if (r->mp[q] == NULL || rte_eth_rx_queue_setup(r->port, q, NB_DESC,
				SOCKET_ID_ANY, NULL, r->mp[q]) != 0) {
			BENCH_LOG(ERR, "queue %u: %s\n", q, rte_strerror(rte_errno));
			goto fail;
		}
	}
	if (rte_eth_dev_start(r->port) != 0)
		goto fail;
	return 0;
fail:
	port_down(e, r);
	return -1;
fail_sub:
	if (r->sub[0] != '\0')
		(void)rte_vdev_uninit(r->sub);
	rte_ring_free(r->rings[0]);
	return -1;
}

/* --rx-port's consumer: the frames fed into the net_ring port as chains
 * of 2 KiB host buffers, as a NIC hands jumbo frames over. */
static int
feed_ring(struct rte_ring *ring, struct rte_mempool *mp, const uint32_t *lens,
		unsigned int nlens, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct rte_mbuf *m = gpudma_frame_mbufs(mp, k, lens[k % nlens],
			2048);

		if (m == NULL || rte_ring_enqueue(ring, m) != 0) {
			rte_pktmbuf_free(m);
			return -1;
		}
	}
	return 0;
}

static uint64_t
xstat(uint16_t port, const char *name)
{
	uint64_t id, v = 0;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
			rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return 0;
	return v;
}

/* Receives for the run's seconds on every queue; prints a line a queue
 * and the total. */
static int
rate_run(struct env *e, uint32_t frame, bool gpu, double h2d)
{
	char pcap[512], tag[32];
	struct port_run r;
	unsigned int q, lcore;
	uint64_t pkts = 0, bytes = 0, hz = bench_tsc_hz(), t0, t1;
	double secs;

	snprintf(pcap, sizeof(pcap), "%s/bench-gpudma-%u.pcap", e->o.dir, frame);
	snprintf(tag, sizeof(tag), "%s%u", gpu ? "g" : "h", frame);
	if (gpudma_frames_write(pcap, &frame, 1, 4096) != 0 ||
			port_up(e, &r, pcap, 0, e->o.queues, gpu, tag) != 0)
		return -1;
	t0 = rte_rdtsc();
	q = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (q == e->o.queues)
			break;
		workers[q] = (struct worker){ .port = r.port, .queue = (uint16_t)q,
			.stop_tsc = t0 + e->o.seconds * hz, .burst = e->o.burst };
		rte_eal_remote_launch(rx_worker, &workers[q], lcore);
		q++;
	}
	rte_eal_mp_wait_lcore();
	t1 = rte_rdtsc();
	secs = (double)(t1 - t0) / (double)hz;
	for (q = 0; q < e->o.queues; q++) {
		printf("gpudma %-4s %5u B queue %u: %8.2f Mpps %7.2f GB/s\n",
			gpu ? "gpu" : "host", frame, q,
			(double)workers[q].pkts / secs / 1e6,
			(double)workers[q].bytes / secs / 1e9);
		pkts += workers[q].pkts;
		bytes += workers[q].bytes;
	}
	printf("gpudma %-4s %5u B total:   %8.2f Mpps %7.2f GB/s", gpu ? "gpu" : "host",
		frame, (double)pkts / secs / 1e6, (double)bytes / secs / 1e9);
	if (gpu && h2d > 0)
		printf(" = %.0f%% of cuMemcpyHtoD's %.2f GB/s", 100.0 *
			((double)bytes / secs / 1e9) / h2d, h2d);
	printf("  (%" PRIu64 " fills, %.1f copies each, %" PRIu64 " bulk)\n",
		xstat(r.port, "rx_copy_batches"),
		(double)xstat(r.port, "rx_copy_ops") /
		(double)RTE_MAX(xstat(r.port, "rx_copy_batches"), (uint64_t)1),
		xstat(r.port, "rx_bulk_batches"));
	port_down(e, &r);
	return 0;
}

/* The consumer: every frame, read back from GPU memory, is the wire's. */
static int
verify(struct env *e)
{
	static const uint32_t lens[] = { 60, 64, 1500, 2048, 2049, 9000,
		65535, 65549, 100000, 262144, 1514, 262143 };
	static uint8_t host[MAX_FRAME];
	struct rte_mbuf *pkts[64];
	char pcap[512];
	struct port_run r;
	unsigned int got = 0, bad = 0, idle = 0, i, n_frames = 240;
	CUcontext c;

	struct rte_mempool *feed = NULL;

	snprintf(pcap, sizeof(pcap), "%s/bench-gpudma-mixed.pcap", e->o.dir);
	if (gpudma_frames_write(pcap, lens, RTE_DIM(lens), n_frames) != 0 ||
			port_up(e, &r, pcap, 1, 1, true, "verify") != 0)
		return -1;
	if (e->o.rx_port) {
		/* 240 frames of the lengths above: 7 640 buffers of 2 KiB. */
		feed = rte_pktmbuf_pool_create("gd_feed", 8191, 256, 0,
			2048 + RTE_PKTMBUF_HEADROOM, (int)rte_socket_id());
		if (feed == NULL || feed_ring(r.rings[0], feed, lens,
				RTE_DIM(lens), n_frames) != 0) {
			BENCH_LOG(ERR, "feeding net_ring: %s\n", rte_strerror(rte_errno));
			port_down(e, &r);
			rte_mempool_free(feed);
			return -1;
		}
	}
	if (gpu_cuda.cuCtxPushCurrent(e->ctx) != CUDA_SUCCESS) {
		port_down(e, &r);
		return -1;
	}
	while (idle < 1000 && got < n_frames) {
		uint16_t n = rte_eth_rx_burst(r.port, 0, pkts, 64);

		idle = n == 0 ? idle + 1 : 0;
		if (n == 0)
			rte_delay_us(100);
		for (i = 0; i < n; i++, got++) {
			const struct rte_mbuf *s;
			uint32_t off = 0, j;

			if (pkts[i]->pkt_len != lens[got % RTE_DIM(lens)])
				bad++;
			for (s = pkts[i]; s != NULL && off < MAX_FRAME; s = s->next) {
				if (off + s->data_len > MAX_FRAME ||
						gpu_cuda.cuMemcpyDtoH(host + off,
						rte_pktmbuf_mtod(s, CUdeviceptr),
						s->data_len) != CUDA_SUCCESS) {
					bad++;
					break;
				}
				off += s->data_len;
			}
			for (j = 0; j < off; j++)
				if (host[j] != gpudma_frame_byte(got, j)) {
					bad++;
					break;
				}
		}
		rte_pktmbuf_free_bulk(pkts, n);
	}
	if (gpu_cuda.cuCtxPopCurrent(&c) != CUDA_SUCCESS)
		bad++;
	port_down(e, &r);
	/* Every buffer net_ring handed over was freed by the port. */
	if (feed != NULL && rte_mempool_avail_count(feed) != 8191)
		bad++;
	rte_mempool_free(feed);
	printf("%s gpudma consumer%s: %u of %u frames (60 to 262144 B) read back from GPU memory, %u wrong\n",
		got == n_frames && bad == 0 ? "PASS" : "FAIL",
		e->o.rx_port ? " (rx_port=net_ring)" : "", got, n_frames, bad);
	return got == n_frames && bad == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct env e = { 0 };
	double h2d;
	int ret, failed = 0;

	ret = bench_start(argc, argv, parse, &e.o);
	if (ret >= 0)
		return ret;
	if (e.o.fill != 0)
		e.o.scatter = 1;
	if (rte_lcore_count() < e.o.queues + 1) {
		BENCH_LOG(ERR, "%u queues need %u lcores (-l 0-%u)\n", e.o.queues,
			e.o.queues + 1, e.o.queues);
		rte_eal_cleanup();
		return BENCH_EXIT_USAGE;
	}
	ret = bench_first_gpu(&e.dev_id, &e.info);
	if (ret >= 0)
		return ret;
	/* Loads libcuda and calls cuInit; logs why not (bench.cuda). */
	if (gpu_cuda_api_get() == NULL) {
		printf("SKIP: the CUDA driver cannot be used (the bench.cuda log says why)\n");
		rte_eal_cleanup();
		return BENCH_EXIT_SKIP;
	}
	if (gpu_cuda.cuDeviceGetByPCIBusId(&e.cu_dev, e.info.name) != CUDA_SUCCESS &&
			gpu_cuda.cuDeviceGet(&e.cu_dev, 0) != CUDA_SUCCESS) {
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	if (gpu_cuda.cuDevicePrimaryCtxRetain(&e.ctx, e.cu_dev) != CUDA_SUCCESS) {
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	printf("GPU %s (CUDA device %d), %u queue(s), burst %u, %u s a run, %s, bulk=%s%s\n",
		e.info.name, (int)e.cu_dev, e.o.queues, e.o.burst, e.o.seconds,
		e.o.fill != 0 ? "RX by the persistent fill kernel (fill=persistent)" :
		e.o.scatter ? "RX by the scatter kernel (scatter=1)" :
		e.o.no_batch ? "a copy per segment (batch=0)" :
		"batched copies where the driver has them",
		e.o.fill != 0 ? "0 (fill=persistent)" : bulk_names[e.o.bulk],
		e.o.rx_port ? ", frames from another port (rx_port=)" : "");

	e.gpu_len = RTE_ALIGN_CEIL((size_t)e.o.queues * MBUFS_PER_QUEUE * ELT,
		GPU_PAGE);
	e.gpu_mem = rte_gpu_mem_alloc(e.dev_id, e.gpu_len, GPU_PAGE);
	if (e.gpu_mem == NULL ||
			rte_extmem_register(e.gpu_mem, e.gpu_len, NULL, 0, GPU_PAGE) != 0) {
		BENCH_LOG(ERR, "GPU memory: %s\n", rte_strerror(rte_errno));
		failed = 1;
		goto out;
	}

	h2d = h2d_bandwidth(&e);
	printf("cuMemcpyHtoD, pinned, %u MiB: %.2f GB/s\n", H2D_BYTES >> 20, h2d);
	failed |= verify(&e) != 0;
	failed |= rate_run(&e, 64, true, h2d) != 0;
	failed |= rate_run(&e, 1500, true, h2d) != 0;
	failed |= rate_run(&e, 64, false, h2d) != 0;
	failed |= rate_run(&e, 1500, false, h2d) != 0;
	if (rte_extmem_unregister(e.gpu_mem, e.gpu_len) != 0)
		failed = 1;
out:
	if (e.gpu_mem != NULL)
		rte_gpu_mem_free(e.dev_id, e.gpu_mem);
	if (gpu_cuda.cuDevicePrimaryCtxRelease(e.cu_dev) != CUDA_SUCCESS)
		failed = 1;
	rte_eal_cleanup();
	return failed ? BENCH_EXIT_FAIL : 0;
}
