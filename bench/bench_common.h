/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

/*
 * Helpers shared by the benchmarks: order statistics of latency samples,
 * a small JSON writer, time-stamp counter conversions and the machine
 * description every result file starts with. Plain C, no CUDA.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_log.h>

#include "gpuapp_opts.h"

/* Deterministic random numbers: rand64_next(), rand64_seed(),
 * rand64_fill(), the generator the traffic mix (pktgen_generate()) draws
 * from (tests/support), so one seed fixes a whole run. */
#include "rand64.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: 77 is "skipped" for meson and automake harnesses. */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1
#define BENCH_EXIT_USAGE 2
#define BENCH_EXIT_SKIP 77

/*
 * Order statistics of n samples. Quantiles use the nearest-rank
 * definition: the q-quantile is the smallest sample such that at least
 * q * n samples are <= it (p99 of 1..100 is 99). The median of an even
 * count is the mean of the two middle samples.
 */
struct bench_stats {
	size_t n;
	double min;
	double max;
	double mean;
	double stddev;
	double median;
	double p90;
	double p99;
	double p999;
};

/* Sorts v in place and fills st. Returns 0, or -1 when n is 0. */
int bench_stats_compute(double *v, size_t n, struct bench_stats *st);

/* Nearest-rank quantile of sorted samples (0 < q <= 1). */
double bench_quantile_sorted(const double *sorted, size_t n, double q);

/* Checks the statistics above on known data; prints and returns 0 or 1. */
int bench_stats_self_test(void);

/* Handles "--self-test" as the first argument: returns an exit code to
 * return from main, or -1 when the argument is not there. */
int bench_self_test_arg(int argc, char **argv);

struct rte_gpu_info;

/*
 * The benchmarks' diagnostics go through rte_log on one logtype, "bench",
 * so --log-level=bench:LEVEL filters them; results asked for (tables, the
 * JSON summary line) stay printf on stdout.
 */
extern int bench_logtype;

#define BENCH_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)bench_logtype, __VA_ARGS__)

/*
 * A benchmark's options: lib/gpuapp's parser (gpuapp_opts.h) on the
 * benchmarks' logtype. usage is --help's first line, a printf format with
 * the program's name for its one %s. Returns 0, 1 after --help (usage on
 * stdout), or a negative errno after saying what is wrong.
 */
int bench_opts_parse(const struct gpuapp_opt *table, size_t n,
		const char *usage, int argc, char **argv);

/*
 * Start-up shared by the benchmarks: --self-test, EAL, then the
 * benchmark's own options (after "--") through parse(argc, argv, opts),
 * which returns as bench_opts_parse() does (and may check more after it).
 * Returns -1 when the benchmark should go on (EAL is up), else the exit
 * status to return: BENCH_EXIT_OK after --help, BENCH_EXIT_USAGE on a bad
 * option.
 */
int bench_start(int argc, char **argv,
		int (*parse)(int argc, char **argv, void *opts), void *opts);

/*
 * CALLBACK entries for the values no kind of the parser takes whole: a
 * comma-separated list of numbers, each in the entry's [min, max], and a
 * comma-separated set of names. The entry's dst is the context below.
 */
struct bench_opt_list {
	uint64_t *v;		/* the numbers, in the order given */
	unsigned int max_n;	/* at most this many */
	unsigned int *n;	/* how many were given */
};

struct bench_opt_names {
	const char *const *names;	/* the names that may be given */
	bool *sel;			/* sel[i]: names[i] was given */
	unsigned int n;			/* entries of names[] and sel[] */
};

/*
 * A flag that sets several options at once (--tiny), where it stands on
 * the command line: options after it still change what it set.
 */
struct bench_opt_preset {
	void (*apply)(void *opts);
	void *opts;
};

int bench_opt_preset(const struct gpuapp_opt *opt, const char *arg,
		int logtype);
int bench_opt_u64_list(const struct gpuapp_opt *opt, const char *arg,
		int logtype);
int bench_opt_name_set(const struct gpuapp_opt *opt, const char *arg,
		int logtype);

/* --out DIR, where the JSON result goes; "" is no output, as no --out. */
#define BENCH_OPT_OUT_ENTRY(P, H) \
	{ .name = "out", .kind = GPUAPP_OPT_STRING, \
	  .flags = GPUAPP_OPT_F_EMPTY_OK, .dst = (P), .arg_name = "DIR", \
	  .help = (H) }
#define BENCH_OPT_PRESET_ENTRY(N, P, H) \
	GPUAPP_OPT_CALLBACK_ENTRY((N), bench_opt_preset, (P), NULL, (H))
#define BENCH_OPT_LIST_ENTRY(N, L, LO, HI, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_CALLBACK, \
	  .cb = bench_opt_u64_list, .dst = (L), .min = (LO), .max = (HI), \
	  .arg_name = (A), .help = (H) }
#define BENCH_OPT_NAMES_ENTRY(N, S, A, H) \
	{ .name = (N), .kind = GPUAPP_OPT_CALLBACK, \
	  .cb = bench_opt_name_set, .dst = (S), .arg_name = (A), .help = (H) }

/* The first GPU gpudev probed. Returns -1 with *dev_id and *info set, else
 * (EAL cleaned up) BENCH_EXIT_SKIP when there is none, BENCH_EXIT_FAIL. */
int bench_first_gpu(int16_t *dev_id, struct rte_gpu_info *info);

/* --- Time-stamp counter ------------------------------------------------- */

/* Cycles of rte_rdtsc_precise() per second (EAL must be initialised). */
uint64_t bench_tsc_hz(void);
double bench_cycles_to_ns(uint64_t cycles);
uint64_t bench_ns_to_cycles(uint64_t ns);
/* Median cost of one rte_rdtsc_precise() pair, in ns. */
double bench_timer_overhead_ns(void);

/* Monotonic clock in ns, for deadlines where the TSC is not known yet. */
uint64_t bench_now_ns(void);

/* --- JSON writer ------------------------------------------------------------ */

struct gpuapp_json;

/* Over lib/gpuapp's emitter (gpuapp_json.h): the same document built
 * member by member, written whole at bench_json_close(). */
struct bench_json {
	struct gpuapp_json *doc;	/* NULL: no output */
	char path[4096];
};

/* Creates dir (one level) if needed and checks dir/name can be written;
 * dir NULL or "" means no output (every call below is then a no-op). */
int bench_json_open(struct bench_json *j, const char *dir, const char *name);
/* key is NULL inside arrays and for the top-level object. */
void bench_json_obj_begin(struct bench_json *j, const char *key);
void bench_json_obj_end(struct bench_json *j);
void bench_json_arr_begin(struct bench_json *j, const char *key);
void bench_json_arr_end(struct bench_json *j);
void bench_json_str(struct bench_json *j, const char *key, const char *val);
void bench_json_num(struct bench_json *j, const char *key, double val);
void bench_json_int(struct bench_json *j, const char *key, int64_t val);
void bench_json_bool(struct bench_json *j, const char *key, bool val);
/* An object {n, min, max, mean, stddev, median, p90, p99, p999} in ns. */
void bench_json_stats(struct bench_json *j, const char *key,
		const struct bench_stats *st);
/* "host": {...} with date, host name, kernel, CPU model, TSC rate. */
void bench_json_host(struct bench_json *j);
/* Writes the file; 0, or -1 (with a message) if anything failed, the
 * document's building included. */
int bench_json_close(struct bench_json *j);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_COMMON_H */
