/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-gpugen: the traffic generator's build rate alone (issue 13,
 * section 4): how many frames a second libgpugen's GPU build writes, by
 * field-engine complexity, against its CPU build (the reference) on one
 * core, in the same run. No port, no mbufs: frames go into a ring of
 * fixed slots through gpugen_gpu_build_ring(), the library's own build
 * kernel, into
 *   mem=gpu       GPU memory (rte_gpu_mem_alloc), the table there too,
 *   mem=host      host memory registered with gpudev (host-mapped: the
 *                 kernel writes over PCIe), the table in GPU memory,
 *   mem=host-all  the same with the table in registered host memory too,
 *                 as dpdk-gpu-tx --mem host-mapped opens it today.
 * Cases (doc/gpu_tx.md spec syntax): IPv4/UDP with 0, 2 and 8 field-
 * engine variables, every write fixing the IPv4 and UDP checksums
 * (incremental), unstamped (a stamp does not fit a 64-byte IPv4/UDP
 * frame); and IPv6/TCP with 2 variables and the stamp (sequence and
 * time, the TCP checksum fixed for it), which needs 102-byte frames.
 * Frame sizes count the FCS as testers do (64: 60 bytes written);
 * Gbit/s is frame bits with the FCS (no preamble or gap).
 *
 * The ring is larger than any GPU's L2 (--ring-mb, 256 MiB) so the writes
 * reach memory. Per configuration: warm-up passes, then >= 20 timed
 * passes of --packets frames each (builds of at most the ring's slots
 * queued, then gpugen_gpu_wait(); a pass of millions of frames makes the
 * launches and the wait a small part of it), median and p99 (slowest). The last
 * timed pass is then checked: a sample of its frames (--sample, spread
 * over the packets no later one overwrote, and a warp's worth in a row)
 * read back and compared byte for byte with the CPU build of the same
 * packet and stamp time; one difference fails the run, and no rate is
 * reported for it. The CPU rate: gpugen_build_cpu() into a ring of the
 * same size on the EAL main lcore, --cpu-reps passes, median.
 *
 * The unbuilt-frame ceiling of that lcore (mem=unbuilt), on the same
 * lcore in the same run: what dpdk-gpu-tx --mem cpu --no-build does per
 * burst of 32, frames handed out without a byte written. Mbufs from a
 * pool made as dpdk-gpu-tx makes its own (rte_mempool_get_bulk, its
 * alloc_raw), each made ready by gpugen_mbuf_ready() as dpdk-gpu-tx
 * makes it (the generator's fixed length, else gpugen_len()), then
 * handed back with rte_pktmbuf_free_bulk() where dpdk-gpu-tx gives them
 * to the port, whose send frees them. --cpu-packets frames a pass, --cpu-reps
 * passes, median: the rate no build on this lcore can beat.
 *
 * Usage: bench-gpugen [EAL args] -- [--packets N] [--reps N] [--warmup N]
 *        [--cpu-packets N] [--cpu-reps N] [--ring-mb N] [--sample N]
 *        [--budget-s N]
 *        [--sizes 64,512] [--cases v0,v2,v8,v2-ipv6-tcp-stamp]
 *        [--mem gpu,host,host-all] [--seed N] [--out DIR] [--cpu-only]
 *        [--tiny]
 *        bench-gpugen --self-test
 *
 * --budget-s: no new GPU configuration starts after that many seconds
 * (64-byte frames run first; a configuration cut is said so).
 * Without a GPU probed by gpudev the CPU part runs and the GPU part is
 * reported skipped (exit 77); --cpu-only runs the CPU part alone (exit 0).
 * Exit: 0 done, 1 failure (a frame differs, a gpudev or CUDA error),
 * 2 usage, 77 no GPU.
 */

#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "bench_common.h"
#include "gpugen.h"
#include "gpugen_cuda.h"
#include "gpugen_fill.h"
#include "gpuapp_eal.h"

#define DEFAULT_PACKETS (8u << 20)
#define DEFAULT_REPS 20
#define DEFAULT_WARMUP 3
#define DEFAULT_CPU_PACKETS (2u << 20)
#define DEFAULT_CPU_REPS 3
/* Past the 50 MB L2 of an H100 (and the H200's). */
#define DEFAULT_RING_MB 256
#define DEFAULT_SAMPLE 4096
#define DEFAULT_BUDGET_S 150
#define TINY_PACKETS 65536
#define TINY_RING_MB 8
#define MAX_SIZES 8
/* Slots start on 64-byte boundaries, as mbuf data would. */
#define SLOT_ALIGN 64
/* A warp's frames in a row are among the frames checked. */
#define CHECK_RUN 32
#define FRAME_MAX 2048
/* dpdk-gpu-tx's default burst, and its pool for one --mem cpu queue:
 * at least 8191 mbufs, a 256-mbuf lcore cache, default buffers. */
#define UNBUILT_BURST 32
#define UNBUILT_MBUFS 8191
#define UNBUILT_CACHE 256
/* Stamp times: fixed, different per pass, so a stale frame differs. */
#define TX_NS_BASE 1700000000000000000ull

struct gcase {
	const char *name;
	const char *spec;	/* "%u": the frame size */
	uint32_t n_vars;
	uint32_t min_size;	/* the smallest frame the spec fits */
	const char *what;
};

static const struct gcase cases[] = {
	{ "v0", "ipv4,udp,stamp=off,size=%u", 0, 64,
		"IPv4/UDP, the template as it is" },
	{ "v2", "ipv4,udp,stamp=off,size=%u,"
		"var=ipv4.src:inc:10.0.0.1-10.0.255.254,"
		"var=udp.sport:random:1024-65535", 2, 64,
		"IPv4/UDP, 2 variables, IPv4 + UDP checksums" },
	{ "v8", "ipv4,udp,stamp=off,size=%u,"
		"var=ipv4.src:inc:10.0.0.1-10.0.255.254,"
		"var=ipv4.dst:random:10.1.0.0-10.1.255.255,"
		"var=udp.sport:random:1024-65535,"
		"var=udp.dport:inc:1-65535:step=3,"
		"var=ipv4.id:inc:0-65535,"
		"var=ipv4.ttl:dec:1-64,"
		"var=eth.dst:random:0-0xffffffff,"
		"var=eth.src:random:0-0xffffffff", 8, 64,
		"IPv4/UDP, 8 variables, IPv4 + UDP checksums" },
	{ "v2-ipv6-tcp-stamp", "ipv6,tcp,size=%u,"
		"var=ipv6.src:random:0-0xffffffffffff,"
		"var=tcp.sport:inc:1024-65535", 2, 102,
		"IPv6/TCP, 2 variables, stamp, TCP checksum" },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

enum mem_kind { MEM_GPU, MEM_HOST, MEM_HOST_ALL, MEM_MAX };
static const char *const mem_names[MEM_MAX] = { "gpu", "host", "host-all" };

struct opts {
	uint64_t packets;
	uint64_t reps;
	uint64_t warmup;
	uint64_t cpu_packets;
	uint64_t cpu_reps;
	uint64_t ring_mb;
	uint64_t sample;
	uint64_t seed;
	uint64_t budget_s;
	uint64_t sizes[MAX_SIZES];
	unsigned int n_sizes;
	bool use_case[N_CASES];
	bool mem[MEM_MAX];
	const char *out;
	int cpu_only;
};

struct ctx {
	struct opts o;
	struct bench_json j;
	bool have_gpu;
	int16_t gpu_id;
	struct rte_gpu_info info;
	uint64_t deadline_ns;
	size_t ring_bytes;
	uint8_t *cpu_ring;	/* malloc'd, touched */
	uint8_t *gpu_ring;	/* rte_gpu_mem_alloc */
	uint8_t *host_ring;	/* mmap'd, registered with gpudev */
	struct rte_mempool *mp;	/* the unbuilt frames' mbufs */
	double *ns;		/* reps samples */
};

/* --tiny: every case and memory, small (CI, a first look). */
static void
set_tiny(void *opts)
{
	struct opts *o = opts;

	o->packets = TINY_PACKETS;
	o->cpu_packets = TINY_PACKETS;
	o->reps = 3;
	o->warmup = 1;
	o->cpu_reps = 1;
	o->ring_mb = TINY_RING_MB;
	o->sample = 512;
}

static int
parse_args(int argc, char **argv, void *arg)
{
	struct opts *o = arg;
	const char *case_names[N_CASES];
	struct bench_opt_list sizes = {
		.v = o->sizes, .max_n = MAX_SIZES, .n = &o->n_sizes,
	};
	struct bench_opt_names use_case = {
		.names = case_names, .sel = o->use_case, .n = N_CASES,
	};
	struct bench_opt_names mem = {
		.names = mem_names, .sel = o->mem, .n = MEM_MAX,
	};
	struct bench_opt_preset tiny_preset = { .apply = set_tiny, .opts = o };
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("packets", &o->packets, 1, UINT32_MAX, "N",
			"frames built per GPU pass (default 8388608)"),
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 100000, "N",
			"GPU passes timed (default 20)"),
		GPUAPP_OPT_UINT_ENTRY("warmup", &o->warmup, 0, 1000, "N",
			"GPU passes before them (default 3)"),
		GPUAPP_OPT_UINT_ENTRY("cpu-packets", &o->cpu_packets, 1,
			UINT32_MAX, "N",
			"frames built per CPU pass (default 2097152)"),
		GPUAPP_OPT_UINT_ENTRY("cpu-reps", &o->cpu_reps, 1, 1000, "N",
			"CPU passes timed (default 3)"),
		GPUAPP_OPT_UINT_ENTRY("ring-mb", &o->ring_mb, 1, 65536, "N",
			"MB of frame slots written round (default 256)"),
		GPUAPP_OPT_UINT_ENTRY("sample", &o->sample, 1, 1u << 24, "N",
			"frames checked against the CPU (default 4096)"),
		GPUAPP_OPT_UINT_ENTRY("budget-s", &o->budget_s, 0, 86400, "N",
			"time budget in s (default 150)"),
		BENCH_OPT_LIST_ENTRY("sizes", &sizes, 64, FRAME_MAX, "N[,N...]",
			"frame sizes, at most 8\n"
			"(default 64,512)"),
		BENCH_OPT_NAMES_ENTRY("cases", &use_case, "NAME[,NAME...]",
			"v0, v2, v8, v2-ipv6-tcp-stamp (default all)"),
		BENCH_OPT_NAMES_ENTRY("mem", &mem, "NAME[,NAME...]",
			"gpu, host, host-all (default all)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"seed of the streams (default 1)"),
		BENCH_OPT_OUT_ENTRY(&o->out, "where the JSON result goes"),
		GPUAPP_OPT_FLAG_ENTRY("cpu-only", &o->cpu_only,
			"the CPU part alone, no GPU"),
		BENCH_OPT_PRESET_ENTRY("tiny", &tiny_preset,
			"small runs of every case (CI)"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	for (size_t k = 0; k < N_CASES; k++)
		case_names[k] = cases[k].name;
	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

static char *
pps_str(double pps, char *buf, size_t len)
{
	if (pps >= 1e9)
		snprintf(buf, len, "%.2fGpps", pps / 1e9);
	else
		snprintf(buf, len, "%.1fMpps", pps / 1e6);
	return buf;
}

/* Frame bits a second, the FCS counted (as the sizes are). */
static double
gbps(double pps, uint32_t len)
{
	return pps * (len + 4.0) * 8 / 1e9;
}

/*
 * The CPU build on this lcore: n packets from first into the ring, once
 * per pass; the median pass as packets/s. 0 (with a FAIL line) when the
 * build refuses a packet.
 */
static double
cpu_rate(struct ctx *c, const struct gpugen *g, uint32_t stride,
		uint32_t slots)
{
	const struct opts *o = &c->o;
	double *v = c->ns, pps;
	struct bench_stats st;
	uint64_t first = 0;

	for (uint64_t r = 0; r < o->cpu_reps; r++) {
		uint64_t tx_ns = TX_NS_BASE + r, t0, t1;
		uint32_t slot = (uint32_t)(first % slots);

		t0 = bench_now_ns();
		for (uint64_t p = first; p < first + o->cpu_packets; p++) {
			if (gpugen_build_cpu(g, p, tx_ns, c->cpu_ring +
					(size_t)slot * stride, stride, NULL,
					NULL) == 0) {
				printf("FAIL: the CPU build refused packet %" PRIu64
					"\n", p);
				return 0;
			}
			if (++slot == slots)
				slot = 0;
		}
		t1 = bench_now_ns();
		v[r] = (double)(t1 - t0);
		first += o->cpu_packets;
	}
	bench_stats_compute(v, o->cpu_reps, &st);
	pps = (double)o->cpu_packets / (st.median * 1e-9);
	return pps;
}

/*
 * The unbuilt-frame ceiling on this lcore: the CPU rate's passes with
 * every frame handed out as dpdk-gpu-tx --no-build does, not built (see
 * the top of the file); the median pass as packets/s. 0 (with a FAIL
 * line) when the pool runs dry, which no pass of bursts freed at once
 * should.
 */
static double
unbuilt_rate(struct ctx *c, const struct gpugen *g)
{
	const struct opts *o = &c->o;
	const uint32_t fixed = gpugen_fixed_len(g);
	struct rte_mbuf *m[UNBUILT_BURST];
	struct bench_stats st;
	uint64_t first = 0;

	for (uint64_t r = 0; r < o->cpu_reps; r++) {
		const uint64_t end = first + o->cpu_packets;
		uint64_t t0, t1;

		t0 = bench_now_ns();
		for (uint64_t p = first; p < end; p += UNBUILT_BURST) {
			const uint32_t b = (uint32_t)RTE_MIN((uint64_t)UNBUILT_BURST,
				end - p);

			if (rte_mempool_get_bulk(c->mp, (void **)m, b) != 0) {
				printf("FAIL: unbuilt frames: the pool of %u mbufs "
					"ran dry\n", UNBUILT_MBUFS);
				return 0;
			}
			for (uint32_t i = 0; i < b; i++)
				gpugen_mbuf_ready(m[i], g, fixed, p + i);
			rte_pktmbuf_free_bulk(m, b);
		}
		t1 = bench_now_ns();
		c->ns[r] = (double)(t1 - t0);
		first = end;
	}
	bench_stats_compute(c->ns, o->cpu_reps, &st);
	return (double)o->cpu_packets / (st.median * 1e-9);
}

/*
 * The frames of the pass [first, first + n) still in the ring (those no
 * later packet of the pass overwrote) against the CPU build: a warp's
 * worth in a row, then samples spread over the rest. Returns how many
 * were checked, or -1 (FAIL lines printed) when any differs.
 */
static int64_t
check_pass(struct ctx *c, const struct gpugen *g, enum mem_kind m,
		const uint8_t *ring, uint32_t stride, uint32_t slots,
		uint64_t first, uint64_t n, uint64_t tx_ns)
{
	static uint8_t ref[FRAME_MAX], got[FRAME_MAX];
	uint64_t lo = first + (n > slots ? n - slots : 0);
	uint64_t cnt = first + n - lo, todo, k;
	uint64_t sample = c->o.sample;
	int64_t checked = 0;
	int bad = 0;

	todo = cnt < sample + CHECK_RUN ? cnt : sample + CHECK_RUN;
	for (k = 0; k < todo; k++) {
		/* The first CHECK_RUN in a row, then evenly spread. */
		uint64_t p = k < CHECK_RUN || todo == cnt ? lo + k :
			lo + CHECK_RUN + (cnt - CHECK_RUN) * (k - CHECK_RUN) /
				(todo - CHECK_RUN);
		const uint8_t *f = ring + (size_t)(p % slots) * stride;
		uint32_t len = gpugen_build_cpu(g, p, tx_ns, ref, sizeof(ref),
			NULL, NULL);

		if (len == 0) {
			printf("FAIL: the CPU build refused packet %" PRIu64 "\n", p);
			return -1;
		}
		if (m == MEM_GPU) {
			int rc = gpucuda_copy(got, f, len);

			if (rc != 0) {
				printf("FAIL: reading frame %" PRIu64 " back from "
					"GPU memory: %s\n", p, gpucuda_strerror(rc));
				return -1;
			}
			f = got;
		}
		if (memcmp(f, ref, len) != 0) {
			uint32_t b = 0;

			while (f[b] == ref[b])
				b++;
			if (bad++ < 5)
				printf("FAIL: mem=%s packet %" PRIu64 " differs from "
					"the CPU build at byte %u of %u (0x%02x, "
					"expected 0x%02x)\n", mem_names[m], p, b, len,
					f[b], ref[b]);
		}
		checked++;
	}
	if (bad) {
		printf("FAIL: mem=%s %d of %" PRId64 " frames checked differ\n",
			mem_names[m], bad, checked);
		return -1;
	}
	return checked;
}

struct gpu_result {
	struct bench_stats st;	/* ns a pass */
	double pps, pps_p99;
	int64_t checked;
};

/* One memory kind: warm-up, timed passes, the last one checked. */
static int
gpu_rate(struct ctx *c, struct gpugen *g, enum mem_kind m, uint32_t stride,
		uint32_t slots, struct gpu_result *res)
{
	const struct opts *o = &c->o;
	uint8_t *ring = m == MEM_GPU ? c->gpu_ring : c->host_ring;
	struct gpugen_gpu *gg;
	uint64_t first = 0, tx_ns = TX_NS_BASE;
	uint32_t n = (uint32_t)o->packets;
	char err[256];
	int rc = -1;

	if (gpugen_gpu_open(g, c->gpu_id, 1, m == MEM_HOST_ALL ?
			GPUGEN_TABLE_HOST : GPUGEN_TABLE_DEVICE, &gg, err,
			sizeof(err)) != 0) {
		printf("FAIL: mem=%s: gpugen_gpu_open: %s\n", mem_names[m], err);
		return -1;
	}
	for (uint64_t r = 0; r < o->warmup + o->reps; r++) {
		uint64_t t0, t1;

		tx_ns = TX_NS_BASE + r;
		t0 = bench_now_ns();
		/* A build is at most the ring's size (two packets of one
		 * build never share a slot); the stream runs them in order. */
		for (uint32_t done = 0, k; done < n; done += k) {
			k = RTE_MIN(n - done, slots);
			if (gpugen_gpu_build_ring(gg, ring, stride, slots,
					first + done, k, tx_ns, err,
					sizeof(err)) != 0) {
				printf("FAIL: mem=%s pass %" PRIu64 ": %s\n",
					mem_names[m], r, err);
				goto out;
			}
		}
		if (gpugen_gpu_wait(gg, err, sizeof(err)) != 0) {
			printf("FAIL: mem=%s pass %" PRIu64 ": %s\n", mem_names[m],
				r, err);
			goto out;
		}
		t1 = bench_now_ns();
		if (r >= o->warmup)
			c->ns[r - o->warmup] = (double)(t1 - t0);
		first += n;
	}
	res->checked = check_pass(c, g, m, ring, stride, slots, first - n, n,
		tx_ns);
	if (res->checked < 0)
		goto out;
	bench_stats_compute(c->ns, o->reps, &res->st);
	res->pps = n / (res->st.median * 1e-9);
	res->pps_p99 = n / (res->st.p99 * 1e-9);
	rc = 0;
out:
	gpugen_gpu_close(gg);
	return rc;
}

/* A result's start: which case, which frames. */
static void
json_case(struct ctx *c, const struct gcase *cs, const char *spec,
		uint32_t size, uint32_t len)
{
	bench_json_obj_begin(&c->j, NULL);
	bench_json_str(&c->j, "case", cs->name);
	bench_json_str(&c->j, "what", cs->what);
	bench_json_str(&c->j, "spec", spec);
	bench_json_int(&c->j, "vars", cs->n_vars);
	bench_json_int(&c->j, "size", size);
	bench_json_int(&c->j, "frame_len", len);
}

/* The packets of case cs at frame size size: CPU, then each memory. */
static int
run_case(struct ctx *c, const struct gcase *cs, uint32_t size)
{
	const struct opts *o = &c->o;
	struct gpugen_conf conf = { .seed = o->seed };
	char spec[512], err[256], s1[32], s2[32], s3[32];
	struct gpugen *g = NULL;
	uint32_t len, stride, slots;
	double cpu_pps, unbuilt_pps;
	int rc = -1, m;

	if (size < cs->min_size) {
		printf("gpugen case=%s size=%u: n/a (its headers need frames "
			"of %u bytes)\n", cs->name, size, cs->min_size);
		return 0;
	}
	snprintf(spec, sizeof(spec), cs->spec, size);
	if (gpugen_create(&g, &conf) != 0) {
		printf("FAIL: gpugen_create\n");
		return -1;
	}
	if (gpugen_add_spec(g, spec, err, sizeof(err)) < 0) {
		printf("FAIL: case %s: \"%s\": %s\n", cs->name, spec, err);
		goto out;
	}
	len = gpugen_max_len(g);
	stride = (len + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
	slots = (uint32_t)(c->ring_bytes / stride);
	/* Every variable must vary: packets 0 and 1 of a case with
	 * variables differ (a field engine that did nothing would be fast). */
	if (cs->n_vars > 0) {
		static uint8_t a[FRAME_MAX], b[FRAME_MAX];

		gpugen_build_cpu(g, 0, TX_NS_BASE, a, sizeof(a), NULL, NULL);
		gpugen_build_cpu(g, 1, TX_NS_BASE, b, sizeof(b), NULL, NULL);
		if (memcmp(a, b, len) == 0) {
			printf("FAIL: case %s: packets 0 and 1 are the same\n",
				cs->name);
			goto out;
		}
	}
	cpu_pps = cpu_rate(c, g, stride, slots);
	if (cpu_pps == 0)
		goto out;
	printf("gpugen-cpu case=%s size=%u cpu1=%s %.1fGbit/s\n", cs->name,
		size, pps_str(cpu_pps, s1, sizeof(s1)), gbps(cpu_pps, len));
	unbuilt_pps = unbuilt_rate(c, g);
	if (unbuilt_pps == 0)
		goto out;
	printf("gpugen-unbuilt case=%s size=%u unbuilt1=%s cpu1=%s "
		"cpu/unbuilt=%.2f\n", cs->name, size,
		pps_str(unbuilt_pps, s1, sizeof(s1)),
		pps_str(cpu_pps, s2, sizeof(s2)), cpu_pps / unbuilt_pps);
	if (!c->have_gpu) {
		json_case(c, cs, spec, size, len);
		bench_json_str(&c->j, "mem", "cpu");
		bench_json_num(&c->j, "cpu_pps", cpu_pps);
		bench_json_num(&c->j, "cpu_gbps", gbps(cpu_pps, len));
		bench_json_obj_end(&c->j);
	}
	for (m = 0; c->have_gpu && m < MEM_MAX; m++) {
		struct gpu_result r;

		if (!o->mem[m])
			continue;
		if (bench_now_ns() > c->deadline_ns) {
			printf("gpugen case=%s size=%u mem=%s SKIPPED (time budget "
				"of %" PRIu64 " s)\n", cs->name, size, mem_names[m],
				o->budget_s);
			continue;
		}
		memset(&r, 0, sizeof(r));
		if (gpu_rate(c, g, (enum mem_kind)m, stride, slots, &r) != 0)
			goto out;
		printf("gpugen case=%s size=%u mem=%s gpu=%s (p99 %s) "
			"%.1fGbit/s cpu1=%s ratio=%.1fx checked=%" PRId64 "\n",
			cs->name, size, mem_names[m],
			pps_str(r.pps, s1, sizeof(s1)),
			pps_str(r.pps_p99, s2, sizeof(s2)), gbps(r.pps, len),
			pps_str(cpu_pps, s3, sizeof(s3)), r.pps / cpu_pps,
			r.checked);
		fflush(stdout);
		json_case(c, cs, spec, size, len);
		bench_json_int(&c->j, "stride", stride);
		bench_json_int(&c->j, "slots", slots);
		bench_json_str(&c->j, "mem", mem_names[m]);
		bench_json_str(&c->j, "table", m == MEM_HOST_ALL ? "host" : "gpu");
		bench_json_int(&c->j, "packets", (int64_t)o->packets);
		bench_json_int(&c->j, "reps", (int64_t)o->reps);
		bench_json_stats(&c->j, "pass_ns", &r.st);
		bench_json_num(&c->j, "gpu_pps", r.pps);
		bench_json_num(&c->j, "gpu_pps_p99", r.pps_p99);
		bench_json_num(&c->j, "gpu_gbps", gbps(r.pps, len));
		bench_json_num(&c->j, "gpu_write_bytes_per_s", r.pps * len);
		bench_json_num(&c->j, "cpu_pps", cpu_pps);
		bench_json_num(&c->j, "cpu_gbps", gbps(cpu_pps, len));
		bench_json_num(&c->j, "ratio", r.pps / cpu_pps);
		bench_json_int(&c->j, "checked", r.checked);
		bench_json_bool(&c->j, "verified", true);
		bench_json_obj_end(&c->j);
	}
	/* After the builds' rows: a reader taking a case's first row for
	 * its CPU figures finds a build's. */
	json_case(c, cs, spec, size, len);
	bench_json_str(&c->j, "mem", "unbuilt");
	bench_json_str(&c->j, "path", "dpdk-gpu-tx --mem cpu --no-build: mbufs "
		"from the pool, lengths set, no frame bytes written, freed");
	bench_json_int(&c->j, "burst", UNBUILT_BURST);
	bench_json_int(&c->j, "packets", (int64_t)o->cpu_packets);
	bench_json_int(&c->j, "reps", (int64_t)o->cpu_reps);
	bench_json_int(&c->j, "lcore", rte_lcore_id());
	bench_json_num(&c->j, "pps", unbuilt_pps);
	bench_json_num(&c->j, "cpu_pps", cpu_pps);
	bench_json_num(&c->j, "cpu_gbps", gbps(cpu_pps, len));
	bench_json_obj_end(&c->j);
	rc = 0;
out:
	gpugen_free(g);
	return rc;
}

/* The rings: the CPU's always, the GPU's for the memories asked. */
static int
rings_alloc(struct ctx *c)
{
	c->cpu_ring = aligned_alloc(SLOT_ALIGN, c->ring_bytes);
	if (c->cpu_ring == NULL) {
		printf("FAIL: %zu bytes for the CPU ring\n", c->ring_bytes);
		return -1;
	}
	/* Touched: no page fault is timed. */
	memset(c->cpu_ring, 0, c->ring_bytes);
	if (!c->have_gpu)
		return 0;
	if (c->o.mem[MEM_GPU]) {
		c->gpu_ring = rte_gpu_mem_alloc(c->gpu_id, c->ring_bytes, 0);
		if (c->gpu_ring == NULL) {
			printf("FAIL: %zu bytes of GPU memory: %s\n", c->ring_bytes,
				rte_strerror(rte_errno));
			return -1;
		}
	}
	if (c->o.mem[MEM_HOST] || c->o.mem[MEM_HOST_ALL]) {
		void *h = mmap(NULL, c->ring_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (h == MAP_FAILED) {
			printf("FAIL: %zu bytes of host memory\n", c->ring_bytes);
			return -1;
		}
		if (rte_gpu_mem_register(c->gpu_id, c->ring_bytes, h) != 0) {
			printf("FAIL: rte_gpu_mem_register of %zu bytes: %s\n",
				c->ring_bytes, rte_strerror(rte_errno));
			munmap(h, c->ring_bytes);
			return -1;
		}
		c->host_ring = h;
	}
	return 0;
}

static void
rings_free(struct ctx *c)
{
	free(c->cpu_ring);
	if (c->gpu_ring != NULL && rte_gpu_mem_free(c->gpu_id, c->gpu_ring) != 0)
		printf("warning: rte_gpu_mem_free: %s\n", rte_strerror(rte_errno));
	if (c->host_ring != NULL) {
		/* Still mapped for the GPU when this fails: keep the pages. */
		if (rte_gpu_mem_unregister(c->gpu_id, c->host_ring) != 0)
			printf("warning: rte_gpu_mem_unregister: %s\n",
				rte_strerror(rte_errno));
		else
			munmap(c->host_ring, c->ring_bytes);
	}
}

int
main(int argc, char **argv)
{
	struct ctx c = {
		.o = {
			.packets = DEFAULT_PACKETS,
			.reps = DEFAULT_REPS,
			.warmup = DEFAULT_WARMUP,
			.cpu_packets = DEFAULT_CPU_PACKETS,
			.cpu_reps = DEFAULT_CPU_REPS,
			.ring_mb = DEFAULT_RING_MB,
			.sample = DEFAULT_SAMPLE,
			.seed = 1,
			.budget_s = DEFAULT_BUDGET_S,
			.sizes = { 64, 512 },
			.n_sizes = 2,
		},
	};
	struct opts *o = &c.o;
	int ret, status = BENCH_EXIT_FAIL;
	unsigned int si;
	size_t ci;

	for (ci = 0; ci < N_CASES; ci++)
		o->use_case[ci] = true;
	for (ci = 0; ci < MEM_MAX; ci++)
		o->mem[ci] = true;
	ret = bench_start(argc, argv, parse_args, o);
	if (ret >= 0)
		return ret;
	c.ring_bytes = (size_t)o->ring_mb << 20;
	c.deadline_ns = bench_now_ns() + o->budget_s * 1000000000ull;
	c.ns = calloc(o->reps > o->cpu_reps ? o->reps : o->cpu_reps,
		sizeof(*c.ns));
	if (c.ns == NULL) {
		printf("FAIL: out of memory\n");
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}

	if (!o->cpu_only) {
		c.gpu_id = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
		if (rte_gpu_count_avail() == 0 || c.gpu_id < 0) {
			printf("SKIP: GPU part: no GPU probed by gpudev (%s); the "
				"CPU part runs alone\n", gpuapp_gpu_driver());
		} else if (rte_gpu_info_get(c.gpu_id, &c.info) != 0) {
			printf("FAIL: rte_gpu_info_get(%d): %s\n", c.gpu_id,
				rte_strerror(rte_errno));
			goto out;
		} else {
			c.have_gpu = true;
			printf("# bench-gpugen: gpudev %d (%s), %u SMs, %zu MiB; "
				"ring %" PRIu64 " MiB, %" PRIu64 " packets x %" PRIu64
				" passes\n", c.gpu_id, c.info.name,
				c.info.processor_count, c.info.total_memory >> 20,
				o->ring_mb, o->packets, o->reps);
		}
	}
	if (rings_alloc(&c) != 0)
		goto out;
	c.mp = rte_pktmbuf_pool_create("bench_gpugen_mbufs", UNBUILT_MBUFS,
		UNBUILT_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (c.mp == NULL) {
		printf("FAIL: a pool of %u mbufs: %s\n", UNBUILT_MBUFS,
			rte_strerror(rte_errno));
		goto out;
	}
	if (bench_json_open(&c.j, o->out, c.have_gpu ? "gpugen.json" :
			"gpugen_cpu.json") != 0)
		goto out;
	bench_json_obj_begin(&c.j, NULL);
	bench_json_str(&c.j, "bench", "gpugen");
	bench_json_host(&c.j);
	if (c.have_gpu) {
		bench_json_obj_begin(&c.j, "gpu");
		bench_json_str(&c.j, "name", c.info.name);
		bench_json_int(&c.j, "sm_count", c.info.processor_count);
		bench_json_int(&c.j, "mem_bytes", (int64_t)c.info.total_memory);
		bench_json_obj_end(&c.j);
	}
	bench_json_obj_begin(&c.j, "config");
	bench_json_int(&c.j, "packets", (int64_t)o->packets);
	bench_json_int(&c.j, "reps", (int64_t)o->reps);
	bench_json_int(&c.j, "warmup", (int64_t)o->warmup);
	bench_json_int(&c.j, "cpu_packets", (int64_t)o->cpu_packets);
	bench_json_int(&c.j, "cpu_reps", (int64_t)o->cpu_reps);
	bench_json_int(&c.j, "ring_bytes", (int64_t)c.ring_bytes);
	bench_json_int(&c.j, "sample", (int64_t)o->sample);
	bench_json_int(&c.j, "seed", (int64_t)o->seed);
	bench_json_int(&c.j, "budget_s", (int64_t)o->budget_s);
	bench_json_int(&c.j, "lcore", rte_lcore_id());
	bench_json_bool(&c.j, "gpu_part", c.have_gpu);
	bench_json_obj_end(&c.j);
	bench_json_arr_begin(&c.j, "results");
	status = BENCH_EXIT_OK;
	/* The smallest frames first: the 1 Gpps goal is about them. */
	for (si = 0; si < o->n_sizes && status == BENCH_EXIT_OK; si++)
		for (ci = 0; ci < N_CASES && status == BENCH_EXIT_OK; ci++)
			if (o->use_case[ci] && run_case(&c, &cases[ci],
					(uint32_t)o->sizes[si]) != 0)
				status = BENCH_EXIT_FAIL;
	bench_json_arr_end(&c.j);
	bench_json_str(&c.j, "status", status == BENCH_EXIT_OK ? "ok" : "failed");
	bench_json_obj_end(&c.j);
	if (bench_json_close(&c.j) != 0)
		status = BENCH_EXIT_FAIL;
	if (status == BENCH_EXIT_OK && !c.have_gpu && !o->cpu_only)
		status = BENCH_EXIT_SKIP;
out:
	rte_mempool_free(c.mp);
	rings_free(&c);
	free(c.ns);
	rte_eal_cleanup();
	if (status == BENCH_EXIT_FAIL)
		printf("FAIL: bench-gpugen: see the FAIL lines above\n");
	return status;
}
