/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpugen-embed: how a program with its own DPDK set-up (a TRex-like
 * tester) embeds the generator through the installed libraries only
 * (pkg-config libgpugen libgpugen-dpdk librte_gpu_cuda): it builds each
 * burst with the CPU reference, where gpudev has a GPU also on the GPU,
 * compares the two byte for byte, and sends the CPU's frames to port 0.
 *
 *   gpugen-embed EAL-ARGS -- [--spec SPEC] [--count N] [--burst B]
 *                [--seed S] [--cpu]
 *
 * --cpu: no GPU build even where there is a GPU. Exit 0 when every frame
 * was sent (and, on a GPU, matched), 1 otherwise.
 */
/* gpudev's API is experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#include <rte_pmd_gpu_cuda.h>

#include <gpugen.h>

#define MAX_BURST 256

struct embed {
	const char *spec;
	uint64_t count, seed;
	uint32_t burst;
	int cpu_only;
	struct gpugen *g;
	struct gpugen_gpu *gg;	/* NULL: CPU only */
	int16_t gpu;
	uint8_t *slots;		/* the GPU's frames: host pages it maps */
	size_t slots_len;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
parse(struct embed *e, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "spec", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "burst", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'r' },
		{ "cpu", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	optind = 1;	/* after EAL's own getopt */
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 's': e->spec = optarg; break;
		case 'n': e->count = strtoull(optarg, NULL, 0); break;
		case 'b': e->burst = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': e->seed = strtoull(optarg, NULL, 0); break;
		case 'c': e->cpu_only = 1; break;
		default: return -EINVAL;
		}
	}
	if (optind != argc || e->burst == 0 || e->burst > MAX_BURST) {
		fprintf(stderr, "gpugen-embed: bad arguments (burst 1..%d)\n",
			MAX_BURST);
		return -EINVAL;
	}
	return 0;
}

/* A frame's place in the GPU's burst, cache-line aligned. */
static size_t
slot(const struct embed *e)
{
	return RTE_ALIGN_CEIL((size_t)gpugen_max_len(e->g), RTE_CACHE_LINE_SIZE);
}

/* The GPU build into host pages registered with the GPU, so the CPU
 * reads its frames for the comparison without a copy. */
static int
gpu_open(struct embed *e)
{
	char err[256];
	int rc;

	e->slots_len = (size_t)e->burst * slot(e);
	e->slots = mmap(NULL, e->slots_len, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->slots == MAP_FAILED) {
		e->slots = NULL;
		return -errno;
	}
	if (rte_gpu_mem_register(e->gpu, e->slots_len, e->slots) != 0) {
		rc = -rte_errno;
		fprintf(stderr, "gpugen-embed: rte_gpu_mem_register: %s\n",
			rte_strerror(rte_errno));
		munmap(e->slots, e->slots_len);
		e->slots = NULL;
		return rc;
	}
	rc = gpugen_gpu_open(e->g, e->gpu, e->burst, GPUGEN_TABLE_DEVICE,
		&e->gg, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "gpugen-embed: gpugen_gpu_open: %s\n", err);
	return rc;
}

static void
gpu_close(struct embed *e)
{
	gpugen_gpu_close(e->gg);
	/* Pages the GPU may still map are leaked rather than unmapped. */
	if (e->slots != NULL && rte_gpu_mem_unregister(e->gpu, e->slots) == 0)
		munmap(e->slots, e->slots_len);
}

/* One burst: CPU build into the mbufs, the GPU's beside it. Returns the
 * number of frames the GPU built differently, or -errno. */
static int
build(struct embed *e, struct rte_mbuf **m, uint64_t first, uint32_t n)
{
	size_t max = slot(e);
	uint64_t tx_ns = now_ns();
	char err[256];
	int diff = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t len = gpugen_len(e->g, first + k);
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[k], (uint16_t)len);

		if (d == NULL || gpugen_build_cpu(e->g, first + k, tx_ns, d,
				len, NULL, NULL) != len)
			return -ENOSPC;
		if (e->gg != NULL)
			gpugen_gpu_addrs(e->gg)[k] = e->slots + k * max;
	}
	if (e->gg == NULL)
		return 0;
	if (gpugen_gpu_build(e->gg, first, n, tx_ns, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpugen-embed: gpugen_gpu_build: %s\n", err);
		return -EIO;
	}
	for (uint32_t k = 0; k < n; k++)
		diff += memcmp(rte_pktmbuf_mtod(m[k], void *),
			e->slots + k * max, m[k]->data_len) != 0;
	return diff;
}

static int
run(struct embed *e, struct rte_mempool *mp, uint16_t port)
{
	struct rte_mbuf *m[MAX_BURST];
	uint64_t sent = 0, bytes = 0, differ = 0;
	struct rte_eth_stats st;

	while (sent < e->count) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)e->burst,
			e->count - sent), done = 0, idle = 0;
		int rc;

		if (rte_pktmbuf_alloc_bulk(mp, m, n) != 0) {
			fprintf(stderr, "gpugen-embed: no mbufs\n");
			return 1;
		}
		rc = build(e, m, sent, n);
		if (rc < 0) {
			fprintf(stderr, "gpugen-embed: burst at packet %" PRIu64
				": %s\n", sent, strerror(-rc));
			rte_pktmbuf_free_bulk(m, n);
			return 1;
		}
		differ += (uint64_t)rc;
		for (uint32_t k = 0; k < n; k++)
			bytes += m[k]->data_len;
		/* A port full for a moment is retried; one that takes
		 * nothing for long is given up on. */
		while (done < n && idle < 1000000) {
			uint16_t k = rte_eth_tx_burst(port, 0, m + done,
				(uint16_t)(n - done));

			done += k;
			idle = k != 0 ? 0 : idle + 1;
		}
		if (done < n) {
			fprintf(stderr, "gpugen-embed: port %u takes no frames\n",
				port);
			rte_pktmbuf_free_bulk(m + done, n - done);
			return 1;
		}
		sent += n;
	}
	if (rte_eth_stats_get(port, &st) != 0)
		memset(&st, 0, sizeof(st));
	printf("sent %" PRIu64 " frames, %" PRIu64 " bytes on port %u "
		"(port counts %" PRIu64 " frames, %" PRIu64 " bytes)\n",
		sent, bytes, port, st.opackets, st.obytes);
	if (e->gg != NULL)
		printf("GPU build: %" PRIu64 " of %" PRIu64 " frames differ "
			"from the CPU reference\n", differ, sent);
	return differ != 0;
}

static int
port_start(uint16_t port, struct rte_mempool **mp)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	*mp = rte_pktmbuf_pool_create("gpugen_embed", 2 * MAX_BURST - 1, 0,
		0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (*mp == NULL)
		return -rte_errno;
	/* Transmit only: no RX queue. */
	rc = rte_eth_dev_configure(port, 0, 1, &conf);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, 512,
			(unsigned int)rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

int
main(int argc, char **argv)
{
	struct embed e = { .spec = "ipv4,udp,dst=198.18.0.1,"
		"var=udp.sport:inc:1024-1087,size=100-1518:random,stamp=on",
		.count = 1000, .seed = 1, .burst = 32, .gpu = -1 };
	struct gpugen_conf conf = { 0 };
	struct gpugen_stream_info si;
	struct rte_mempool *mp = NULL;
	char err[256];
	int rc, ret = 1, n;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "gpugen-embed: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (parse(&e, argc - rc, argv + rc) != 0)
		goto out;
	printf("%s, gpudev GPUs: %u\n", rte_pmd_gpu_cuda_version(),
		rte_gpu_count_avail());
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "gpugen-embed: no port (try --vdev net_null0)\n");
		goto out;
	}
	conf.data_room = RTE_MBUF_DEFAULT_DATAROOM;
	conf.burst = e.burst;
	conf.seed = e.seed;
	rc = gpugen_create(&e.g, &conf);
	if (rc != 0) {
		fprintf(stderr, "gpugen-embed: gpugen_create: %s\n", strerror(-rc));
		goto out;
	}
	n = gpugen_add_spec(e.g, e.spec, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "gpugen-embed: stream \"%s\": %s\n", e.spec, err);
		goto out;
	}
	for (uint32_t s = 0; s < gpugen_n_streams(e.g); s++)
		if (gpugen_stream_info(e.g, s, &si) == 0)
			printf("stream %u: %u-%u bytes, %u variables, %s\n",
				si.id, si.len_min, si.len_max, si.n_vars,
				si.stamp_off ? "stamped" : "no stamp");
	e.gpu = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (!e.cpu_only && e.gpu >= 0 && gpu_open(&e) != 0)
		goto out;
	printf("build: CPU reference%s\n", e.gg != NULL ?
		" and GPU, compared" : " only");
	rc = port_start(0, &mp);
	if (rc != 0) {
		fprintf(stderr, "gpugen-embed: port 0: %s\n", rte_strerror(-rc));
		goto out;
	}
	ret = run(&e, mp, 0);
	if (rte_eth_dev_stop(0) != 0 || rte_eth_dev_close(0) != 0)
		fprintf(stderr, "gpugen-embed: port 0 did not stop cleanly\n");
out:
	if (e.gpu >= 0 && (e.gg != NULL || e.slots != NULL))
		gpu_close(&e);
	gpugen_free(e.g);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return ret;
}
