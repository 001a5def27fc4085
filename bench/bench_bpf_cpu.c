/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-bpf-cpu: the CPU baselines of the GPU kernel-rate benchmark. One
 * core runs three packet filters over the same generated packets (more
 * bytes than the caches hold) with
 *   - libpcap's bpf_filter() (classic BPF interpreter),
 *   - DPDK's rte_bpf interpreter (rte_bpf_exec_burst) on the program
 *     rte_bpf_convert() made from the same classic BPF,
 *   - DPDK's rte_bpf JIT (rte_bpf_get_jit) of that program,
 * checks that all three accept the same packets and reports packets/s
 * (median over repetitions).
 *
 * Usage: bench-bpf-cpu [EAL options] -- [--packets N] [--reps N]
 *        [--seed N] [--out DIR] [--tiny]
 *        bench-bpf-cpu --self-test
 */

#include <inttypes.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench_common.h"
#include "pktgen.h"

#define BURST 64
#define DEFAULT_PACKETS (1u << 20)
#define DEFAULT_REPS 7
#define TINY_PACKETS 4096
#define TINY_REPS 3

struct filter_def {
	const char *name;
	const char *expr;
};

static const struct filter_def filters[] = {
	{ "empty", "" },
	{ "tcp443", "tcp port 443" },
	{ "complex", "(tcp port 80 or tcp port 443 or udp port 53 or udp port 123) and "
		"net 10.0.0.0/8 and not host 10.1.2.3 and not ip[6:2] & 0x1fff != 0" },
};

enum engine {
	ENG_PCAP,
	ENG_RTE_INTERP,
	ENG_RTE_JIT,
	ENG_MAX,
};

static const char *const engine_names[ENG_MAX] = {
	"pcap_bpf_filter", "rte_bpf_interp", "rte_bpf_jit",
};

struct opts {
	uint64_t packets;
	uint64_t reps;
	uint64_t seed;
	const char *out;
};

struct prog {
	struct bpf_program cbpf;
	struct rte_bpf *bpf;
	struct rte_bpf_jit jit;
	uint32_t ebpf_insns;
};

static volatile uint64_t sink;

/* --tiny: the CI's quick run. */
static void
set_tiny(void *opts)
{
	struct opts *o = opts;

	o->packets = TINY_PACKETS;
	o->reps = TINY_REPS;
}

static int
parse_args(int argc, char **argv, void *opts)
{
	struct opts *o = opts;
	struct bench_opt_preset tiny_preset = { .apply = set_tiny, .opts = o };
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("packets", &o->packets, 1, UINT32_MAX, "N",
			"packets generated (default 1048576)"),
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 10000, "N",
			"repetitions, the median reported (default 7)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"seed of the traffic mix (default 1)"),
		BENCH_OPT_OUT_ENTRY(&o->out, "write bpf_cpu.json there"),
		BENCH_OPT_PRESET_ENTRY("tiny", &tiny_preset,
			"4096 packets, 3 repetitions"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

static int
prog_build(pcap_t *dead, const struct filter_def *fd, struct prog *pg)
{
	struct rte_bpf_prm *prm;

	memset(pg, 0, sizeof(*pg));
	if (pcap_compile(dead, &pg->cbpf, fd->expr, 1,
			PCAP_NETMASK_UNKNOWN) != 0) {
		BENCH_LOG(ERR, "pcap_compile(\"%s\"): %s\n", fd->expr,
			pcap_geterr(dead));
		return -1;
	}
	prm = rte_bpf_convert(&pg->cbpf);
	if (prm == NULL) {
		BENCH_LOG(ERR, "rte_bpf_convert(\"%s\"): %s\n", fd->expr,
			rte_strerror(rte_errno));
		return -1;
	}
	pg->ebpf_insns = prm->nb_ins;
	pg->bpf = rte_bpf_load(prm);
	rte_free(prm);
	if (pg->bpf == NULL) {
		BENCH_LOG(ERR, "rte_bpf_load(\"%s\"): %s\n", fd->expr,
			rte_strerror(rte_errno));
		return -1;
	}
	if (rte_bpf_get_jit(pg->bpf, &pg->jit) != 0 || pg->jit.func == NULL) {
		BENCH_LOG(ERR, "rte_bpf_get_jit(\"%s\"): no JIT code on this CPU\n",
			fd->expr);
		pg->jit.func = NULL;
	}
	return 0;
}

static void
prog_free(struct prog *pg)
{
	if (pg->bpf != NULL)
		rte_bpf_destroy(pg->bpf);
	pcap_freecode(&pg->cbpf);
}

/* One pass of engine e over every packet; returns the accepted count. */
static uint64_t
run_pass(enum engine e, const struct prog *pg, const struct pktgen_set *set,
		struct rte_mbuf **mbufs)
{
	uint64_t rc[BURST];
	uint64_t matched = 0;
	uint32_t i, k, n;

	switch (e) {
	case ENG_PCAP:
		for (i = 0; i < set->n; i++)
			matched += bpf_filter(pg->cbpf.bf_insns,
				pktgen_set_pkt(set, i), set->len[i], set->len[i]) != 0;
		break;
	case ENG_RTE_INTERP:
		for (i = 0; i < set->n; i += n) {
			n = RTE_MIN((uint32_t)BURST, set->n - i);
			k = rte_bpf_exec_burst(pg->bpf, (void **)&mbufs[i], rc, n);
			/* The interpreter stops a burst on a faulting program:
			 * unprocessed packets count as rejected. */
			while (k-- > 0)
				matched += rc[k] != 0;
		}
		break;
	case ENG_RTE_JIT:
		for (i = 0; i < set->n; i++)
			matched += pg->jit.func(mbufs[i]) != 0;
		break;
	default:
		break;
	}
	return matched;
}

/* Packet descriptors the DPDK BPF programs read (a converted classic
 * program takes an mbuf): single-segment mbufs pointing at the packets. */
static struct rte_mbuf **
make_mbufs(const struct pktgen_set *set, struct rte_mbuf **storage)
{
	struct rte_mbuf **v;
	struct rte_mbuf *m;
	uint32_t i;

	v = malloc(sizeof(*v) * set->n);
	m = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*m) * set->n);
	if (v == NULL || m == NULL) {
		free(v);
		free(m);
		return NULL;
	}
	memset(m, 0, sizeof(*m) * set->n);
	for (i = 0; i < set->n; i++) {
		m[i].buf_addr = (void *)(uintptr_t)pktgen_set_pkt(set, i);
		m[i].buf_len = set->len[i];
		m[i].data_off = 0;
		m[i].data_len = set->len[i];
		m[i].pkt_len = set->len[i];
		m[i].nb_segs = 1;
		m[i].next = NULL;
		v[i] = &m[i];
	}
	*storage = m;
	return v;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.packets = DEFAULT_PACKETS,
		.reps = DEFAULT_REPS,
		.seed = 1,
	};
	struct pktgen_set set;
	struct rte_mbuf **mbufs = NULL, *mbuf_storage = NULL;
	struct bench_json j;
	pcap_t *dead = NULL;
	double *pps[ENG_MAX] = { NULL };
	int ret, status = BENCH_EXIT_OK;
	size_t f;

	ret = bench_start(argc, argv, parse_args, &o);
	if (ret >= 0)
		return ret;

	if (pktgen_generate(&set, (uint32_t)o.packets, o.seed) != 0) {
		BENCH_LOG(ERR, "out of memory for %" PRIu64 " packets\n",
			o.packets);
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	mbufs = make_mbufs(&set, &mbuf_storage);
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	for (f = 0; f < ENG_MAX; f++)
		pps[f] = calloc(o.reps, sizeof(double));
	if (mbufs == NULL || dead == NULL || pps[0] == NULL || pps[1] == NULL ||
			pps[2] == NULL) {
		BENCH_LOG(ERR, "setup failed (out of memory)\n");
		status = BENCH_EXIT_FAIL;
		goto out;
	}
	printf("# bpf-cpu: %u packets, %.1f MB (mean %.0f B), %" PRIu64
		" repetitions, seed %" PRIu64 "\n", set.n,
		(double)set.buf_size / 1e6, (double)set.total_bytes / set.n,
		o.reps, o.seed);

	if (bench_json_open(&j, o.out, "bpf_cpu.json") != 0) {
		status = BENCH_EXIT_FAIL;
		goto out;
	}
	bench_json_obj_begin(&j, NULL);
	bench_json_str(&j, "bench", "bpf_cpu");
	bench_json_host(&j);
	bench_json_obj_begin(&j, "config");
	bench_json_int(&j, "packets", set.n);
	bench_json_int(&j, "bytes", (int64_t)set.total_bytes);
	bench_json_int(&j, "buffer_bytes", (int64_t)set.buf_size);
	bench_json_int(&j, "reps", (int64_t)o.reps);
	bench_json_int(&j, "seed", (int64_t)o.seed);
	bench_json_int(&j, "lcore", rte_lcore_id());
	bench_json_obj_end(&j);
	bench_json_arr_begin(&j, "results");

	for (f = 0; f < RTE_DIM(filters); f++) {
		const struct filter_def *fd = &filters[f];
		uint64_t matched[ENG_MAX] = { 0 };
		struct bench_stats st[ENG_MAX];
		struct prog pg;
		unsigned int e;
		uint64_t r;

		if (prog_build(dead, fd, &pg) != 0) {
			prog_free(&pg);
			status = BENCH_EXIT_FAIL;
			continue;
		}
		/* Warm-up pass, which also checks the engines agree. */
		for (e = 0; e < ENG_MAX; e++) {
			if (e == ENG_RTE_JIT && pg.jit.func == NULL)
				continue;
			matched[e] = run_pass(e, &pg, &set, mbufs);
		}
		if (matched[ENG_RTE_INTERP] != matched[ENG_PCAP] ||
				(pg.jit.func != NULL &&
				 matched[ENG_RTE_JIT] != matched[ENG_PCAP])) {
			BENCH_LOG(ERR, "filter %s: engines disagree: pcap %" PRIu64
				", rte_bpf %" PRIu64 ", jit %" PRIu64 " accepted\n",
				fd->name, matched[0], matched[1], matched[2]);
			status = BENCH_EXIT_FAIL;
		}
		/* Engines take turns within each repetition so that drift
		 * (frequency, other load) hits all of them alike. */
		for (r = 0; r < o.reps; r++) {
			for (e = 0; e < ENG_MAX; e++) {
				uint64_t t0, t1, m;

				if (e == ENG_RTE_JIT && pg.jit.func == NULL) {
					pps[e][r] = NAN;
					continue;
				}
				t0 = rte_rdtsc_precise();
				m = run_pass(e, &pg, &set, mbufs);
				t1 = rte_rdtsc_precise();
				sink += m;
				pps[e][r] = (double)set.n * 1e9 /
					bench_cycles_to_ns(t1 - t0);
			}
		}
		for (e = 0; e < ENG_MAX; e++)
			bench_stats_compute(pps[e],
				pg.jit.func == NULL && e == ENG_RTE_JIT ? 0 : o.reps,
				&st[e]);

		printf("bpf-cpu filter=%s cbpf_insns=%u ebpf_insns=%u accept=%.1f%% "
			"pcap=%.2fMpps rte_bpf=%.2fMpps rte_bpf_jit=%.2fMpps\n",
			fd->name, pg.cbpf.bf_len, pg.ebpf_insns,
			100.0 * (double)matched[ENG_PCAP] / set.n,
			st[ENG_PCAP].median / 1e6, st[ENG_RTE_INTERP].median / 1e6,
			st[ENG_RTE_JIT].median / 1e6);

		bench_json_obj_begin(&j, NULL);
		bench_json_str(&j, "filter", fd->name);
		bench_json_str(&j, "expr", fd->expr);
		bench_json_int(&j, "cbpf_insns", pg.cbpf.bf_len);
		bench_json_int(&j, "ebpf_insns", pg.ebpf_insns);
		bench_json_int(&j, "accepted", (int64_t)matched[ENG_PCAP]);
		bench_json_obj_begin(&j, "pps");
		for (e = 0; e < ENG_MAX; e++) {
			bench_json_obj_begin(&j, engine_names[e]);
			bench_json_num(&j, "median", st[e].median);
			bench_json_num(&j, "min", st[e].min);
			bench_json_num(&j, "max", st[e].max);
			bench_json_num(&j, "mean", st[e].mean);
			bench_json_obj_end(&j);
		}
		bench_json_obj_end(&j);
		bench_json_obj_end(&j);
		prog_free(&pg);
	}
	bench_json_arr_end(&j);
	bench_json_obj_end(&j);
	if (bench_json_close(&j) != 0)
		status = BENCH_EXIT_FAIL;

out:
	for (f = 0; f < ENG_MAX; f++)
		free(pps[f]);
	if (dead != NULL)
		pcap_close(dead);
	free(mbufs);
	free(mbuf_storage);
	pktgen_free(&set);
	rte_eal_cleanup();
	return status;
}
