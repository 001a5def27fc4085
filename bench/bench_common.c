/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>

#include "bench_common.h"
#include "gpuapp_clock.h"
#include "gpuapp_json.h"
#include "gpuapp_tsc.h"
#include "gpuapp_eal.h"

/*
 * One logtype for every benchmark, not one each: a process runs one
 * benchmark, so a name per program would filter nothing more, and the
 * harnesses pass one --log-level to all of them.
 */
RTE_LOG_REGISTER(bench_logtype, bench, INFO);

/* --- Statistics --------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
bench_quantile_sorted(const double *sorted, size_t n, double q)
{
	double rank;
	size_t idx;

	if (n == 0)
		return NAN;
	if (q <= 0)
		return sorted[0];
	/* Nearest rank: ceil(q * n), 1-based. The small epsilon keeps
	 * 0.99 * 100 from becoming 99.00000000000001 and rounding up. */
	rank = ceil(q * (double)n - 1e-9);
	if (rank < 1)
		rank = 1;
	idx = (size_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

int
bench_stats_compute(double *v, size_t n, struct bench_stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (n == 0) {
		st->min = st->max = st->mean = st->stddev = NAN;
		st->median = st->p90 = st->p99 = st->p999 = NAN;
		return -1;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	st->n = n;
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - st->mean) * (v[i] - st->mean);
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	st->min = v[0];
	st->max = v[n - 1];
	st->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	st->p90 = bench_quantile_sorted(v, n, 0.90);
	st->p99 = bench_quantile_sorted(v, n, 0.99);
	st->p999 = bench_quantile_sorted(v, n, 0.999);
	return 0;
}

static int
expect(const char *what, double got, double want, int *fails)
{
	if (fabs(got - want) > 1e-9 * (fabs(want) + 1)) {
		printf("self-test FAIL %s: got %.9g, want %.9g\n", what, got, want);
		(*fails)++;
		return 1;
	}
	return 0;
}

int
bench_stats_self_test(void)
{
	struct bench_stats st;
	double v[1000];
	uint64_t rng = rand64_seed(42);
	int fails = 0;
	size_t i;

	/* 1..100 shuffled. */
	for (i = 0; i < 100; i++)
		v[i] = (double)(i + 1);
	for (i = 99; i > 0; i--) {
		size_t k = rand64_next(&rng) % (i + 1);
		double t = v[i];

		v[i] = v[k];
		v[k] = t;
	}
	if (bench_stats_compute(v, 100, &st) != 0)
		fails++;
	expect("1..100 median", st.median, 50.5, &fails);
	expect("1..100 mean", st.mean, 50.5, &fails);
	expect("1..100 p90", st.p90, 90, &fails);
	expect("1..100 p99", st.p99, 99, &fails);
	expect("1..100 p99.9", st.p999, 100, &fails);
	expect("1..100 min", st.min, 1, &fails);
	expect("1..100 max", st.max, 100, &fails);
	expect("1..100 stddev", st.stddev, sqrt(100.0 * 101 / 12), &fails);

	/* Odd count, one outlier: the median ignores it, the mean does not. */
	v[0] = 3;
	v[1] = 1;
	v[2] = 1000;
	v[3] = 2;
	v[4] = 4;
	bench_stats_compute(v, 5, &st);
	expect("5 samples median", st.median, 3, &fails);
	expect("5 samples mean", st.mean, 202, &fails);
	expect("5 samples p99", st.p99, 1000, &fails);

	/* 1000 samples: 990 of 1.0 then 10 of 50.0: p99 is still 1.0 (990th
	 * sample), p99.9 is 50. */
	for (i = 0; i < 1000; i++)
		v[i] = i % 100 < 99 ? 1.0 : 50.0;
	bench_stats_compute(v, 1000, &st);
	expect("1000 samples p99", st.p99, 1.0, &fails);
	expect("1000 samples p99.9", st.p999, 50.0, &fails);
	expect("1000 samples median", st.median, 1.0, &fails);

	/* One sample. */
	v[0] = 7.5;
	bench_stats_compute(v, 1, &st);
	expect("1 sample median", st.median, 7.5, &fails);
	expect("1 sample p99", st.p99, 7.5, &fails);
	expect("1 sample stddev", st.stddev, 0, &fails);

	/* No sample. */
	if (bench_stats_compute(v, 0, &st) != -1 || !isnan(st.median)) {
		printf("self-test FAIL: empty sample set not refused\n");
		fails++;
	}

	/* Random bytes are never all zero. */
	{
		unsigned char buf[64];
		unsigned int nz = 0;

		rng = rand64_seed(0);
		rand64_fill(buf, sizeof(buf), &rng);
		for (i = 0; i < sizeof(buf); i++)
			nz += buf[i] != 0;
		if (nz < 32) {
			printf("self-test FAIL: random fill has %u non-zero bytes of 64\n",
				nz);
			fails++;
		}
	}

	printf("stats self-test: %s (%d failure(s))\n", fails ? "FAIL" : "PASS",
		fails);
	return fails ? 1 : 0;
}

int
bench_self_test_arg(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--self-test") == 0)
		return bench_stats_self_test() ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
	return -1;
}

/* --- Time ------------------------------------------------------------------- */

/* The measured rate (gpuapp_tsc.h): EAL's is rounded, up to 1500 ppm
 * off, and every rate and latency printed here divides by it. */
uint64_t
bench_tsc_hz(void)
{
	return gpuapp_tsc_hz();
}

double
bench_cycles_to_ns(uint64_t cycles)
{
	return (double)cycles * 1e9 / (double)gpuapp_tsc_hz();
}

uint64_t
bench_ns_to_cycles(uint64_t ns)
{
	return (uint64_t)((double)ns * (double)gpuapp_tsc_hz() / 1e9);
}

double
bench_timer_overhead_ns(void)
{
	double v[1001];
	struct bench_stats st;
	unsigned int i;

	for (i = 0; i < RTE_DIM(v); i++) {
		uint64_t t0 = rte_rdtsc_precise();
		uint64_t t1 = rte_rdtsc_precise();

		v[i] = bench_cycles_to_ns(t1 - t0);
	}
	bench_stats_compute(v, RTE_DIM(v), &st);
	return st.median;
}

uint64_t
bench_now_ns(void)
{
	return gpuapp_mono_ns();
}

/* --- JSON ----------------------------------------------------------------------- */

int
bench_json_open(struct bench_json *j, const char *dir, const char *name)
{
	int n;

	memset(j, 0, sizeof(*j));
	if (dir == NULL || dir[0] == '\0')
		return 0;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		BENCH_LOG(ERR, "cannot create output directory %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	n = snprintf(j->path, sizeof(j->path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(j->path)) {
		BENCH_LOG(ERR, "output path too long: %s/%s\n", dir, name);
		return -1;
	}
	/* The file is written at the end: say now, not after the run, that
	 * it cannot be. */
	if (access(dir, W_OK | X_OK) != 0) {
		BENCH_LOG(ERR, "cannot write %s: %s\n", j->path, strerror(errno));
		return -1;
	}
	j->doc = gpuapp_json_create();
	if (j->doc == NULL) {
		BENCH_LOG(ERR, "cannot write %s: out of memory\n", j->path);
		return -1;
	}
	return 0;
}

/* With no output (j->doc NULL) every member is dropped. */

void
bench_json_obj_begin(struct bench_json *j, const char *key)
{
	if (j->doc != NULL)
		gpuapp_json_obj_begin(j->doc, key);
}

void
bench_json_obj_end(struct bench_json *j)
{
	if (j->doc != NULL)
		gpuapp_json_obj_end(j->doc);
}

void
bench_json_arr_begin(struct bench_json *j, const char *key)
{
	if (j->doc != NULL)
		gpuapp_json_arr_begin(j->doc, key);
}

void
bench_json_arr_end(struct bench_json *j)
{
	if (j->doc != NULL)
		gpuapp_json_arr_end(j->doc);
}

void
bench_json_str(struct bench_json *j, const char *key, const char *val)
{
	if (j->doc != NULL)
		gpuapp_json_str(j->doc, key, val);
}

void
bench_json_num(struct bench_json *j, const char *key, double val)
{
	/* The resolution the results have always had: 1e-6 (of a ns, mostly). */
	if (j->doc != NULL)
		gpuapp_json_fixed(j->doc, key, val, 6);
}

void
bench_json_int(struct bench_json *j, const char *key, int64_t val)
{
	if (j->doc != NULL)
		gpuapp_json_i64(j->doc, key, val);
}

void
bench_json_bool(struct bench_json *j, const char *key, bool val)
{
	if (j->doc != NULL)
		gpuapp_json_bool(j->doc, key, val);
}

void
bench_json_stats(struct bench_json *j, const char *key,
		const struct bench_stats *st)
{
	bench_json_obj_begin(j, key);
	bench_json_int(j, "n", (int64_t)st->n);
	bench_json_num(j, "min_ns", st->min);
	bench_json_num(j, "max_ns", st->max);
	bench_json_num(j, "mean_ns", st->mean);
	bench_json_num(j, "stddev_ns", st->stddev);
	bench_json_num(j, "median_ns", st->median);
	bench_json_num(j, "p90_ns", st->p90);
	bench_json_num(j, "p99_ns", st->p99);
	bench_json_num(j, "p999_ns", st->p999);
	bench_json_obj_end(j);
}

/* First "model name" line of /proc/cpuinfo. */
static void
cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

void
bench_json_host(struct bench_json *j)
{
	char date[64], host[256], model[256], kernel[600];
	struct utsname un;
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm) == NULL ||
			strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(date, sizeof(date), "unknown");
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	if (uname(&un) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s", un.sysname, un.release);
	else
		snprintf(kernel, sizeof(kernel), "unknown");
	cpu_model(model, sizeof(model));

	bench_json_obj_begin(j, "host");
	bench_json_str(j, "date", date);
	bench_json_str(j, "hostname", host);
	bench_json_str(j, "kernel", kernel);
	bench_json_str(j, "cpu", model);
	bench_json_int(j, "online_cpus", sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_int(j, "tsc_hz", (int64_t)gpuapp_tsc_hz());
	bench_json_int(j, "tsc_hz_eal", (int64_t)rte_get_tsc_hz());
	bench_json_obj_end(j);
}

int
bench_json_close(struct bench_json *j)
{
	int ret;

	if (j->doc == NULL)
		return 0;
	/* Every member on its own line. */
	ret = gpuapp_json_write(j->doc, j->path, GPUAPP_JSON_EXPAND_ALL);
	gpuapp_json_free(j->doc);
	j->doc = NULL;
	if (ret != 0)
		BENCH_LOG(ERR, "writing %s failed\n", j->path);
	else
		printf("# wrote %s\n", j->path);
	return ret != 0 ? -1 : 0;
}

/* --- Options ----------------------------------------------------------------- */

int
bench_opts_parse(const struct gpuapp_opt *table, size_t n, const char *usage,
		int argc, char **argv)
{
	return gpuapp_opts_parse(table, n, usage, bench_logtype, argc, argv);
}

int
bench_start(int argc, char **argv,
		int (*parse)(int argc, char **argv, void *opts), void *opts)
{
	int ret = bench_self_test_arg(argc, argv);

	if (ret >= 0)
		return ret;
	ret = gpuapp_eal_init(argc, argv);
	if (ret < 0) {
		BENCH_LOG(ERR, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return BENCH_EXIT_USAGE;
	}
	argc -= ret;
	argv += ret;
	ret = parse(argc, argv, opts);
	if (ret == 0)
		return -1;
	rte_eal_cleanup();
	/* --help is an answer, not a failure. */
	return ret > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
}

int
bench_opt_preset(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	const struct bench_opt_preset *p = opt->dst;

	RTE_SET_USED(arg);
	RTE_SET_USED(logtype);
	p->apply(p->opts);
	return 0;
}

/*
 * Calls each(opt, item, k, logtype) for the k-th comma-separated item of
 * arg, empty items skipped as strtok() did. 0; each's error; or -EINVAL
 * after saying so when arg has no item or one too long. what names the
 * items in that message.
 */
static int
each_item(const struct gpuapp_opt *opt, const char *arg, int logtype,
		const char *what,
		int (*each)(const struct gpuapp_opt *opt, const char *item,
			unsigned int k, int logtype))
{
	const char *s = arg;
	unsigned int k = 0;
	char item[64];
	size_t len;
	int ret;

	for (;;) {
		s += strspn(s, ",");
		if (*s == '\0')
			break;
		len = strcspn(s, ",");
		if (len >= sizeof(item))
			goto bad;
		memcpy(item, s, len);
		item[len] = '\0';
		s += len;
		ret = each(opt, item, k++, logtype);
		if (ret != 0)
			return ret;
	}
	if (k != 0)
		return 0;
bad:
	rte_log(RTE_LOG_ERR, (uint32_t)logtype,
		"--%s: '%s' is not a list of %s\n", opt->name, arg, what);
	return -EINVAL;
}

static int
list_item(const struct gpuapp_opt *opt, const char *item, unsigned int k,
		int logtype)
{
	const struct bench_opt_list *l = opt->dst;

	if (k == l->max_n) {
		rte_log(RTE_LOG_ERR, (uint32_t)logtype,
			"--%s: more than %u numbers\n", opt->name, l->max_n);
		return -E2BIG;
	}
	*l->n = k + 1;
	return gpuapp_opt_uint(opt, item, logtype, &l->v[k]);
}

int
bench_opt_u64_list(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	return each_item(opt, arg, logtype, "numbers (N[,N...])", list_item);
}

/* The index of name among ns's names, or ns->n. */
static unsigned int
name_index(const struct bench_opt_names *ns, const char *name)
{
	unsigned int i;

	for (i = 0; i < ns->n && strcmp(name, ns->names[i]) != 0; i++)
		;
	return i;
}

/* First pass: every name checked before the set changes. */
static int
name_known(const struct gpuapp_opt *opt, const char *item, unsigned int k,
		int logtype)
{
	const struct bench_opt_names *ns = opt->dst;

	RTE_SET_USED(k);
	if (name_index(ns, item) < ns->n)
		return 0;
	rte_log(RTE_LOG_ERR, (uint32_t)logtype, "--%s: unknown name \"%s\"\n",
		opt->name, item);
	return -EINVAL;
}

static int
name_select(const struct gpuapp_opt *opt, const char *item, unsigned int k,
		int logtype)
{
	const struct bench_opt_names *ns = opt->dst;

	RTE_SET_USED(k);
	RTE_SET_USED(logtype);
	ns->sel[name_index(ns, item)] = true;
	return 0;
}

int
bench_opt_name_set(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	const struct bench_opt_names *ns = opt->dst;
	/* No name at all is refused: it would measure nothing. */
	int ret = each_item(opt, arg, logtype, "names (NAME[,NAME...])",
		name_known);

	if (ret != 0)
		return ret;
	memset(ns->sel, 0, ns->n * sizeof(*ns->sel));
	return each_item(opt, arg, logtype, "names", name_select);
}



int
bench_first_gpu(int16_t *dev_id, struct rte_gpu_info *info)
{
	if (rte_gpu_count_avail() == 0) {
		printf("SKIP: no GPU probed (load the CUDA gpudev plugin with -d, "
			"on a machine with an NVIDIA GPU)\n");
		rte_eal_cleanup();
		return BENCH_EXIT_SKIP;
	}
	*dev_id = rte_gpu_find_next(0, RTE_GPU_ID_NONE);
	if (*dev_id < 0 || rte_gpu_info_get(*dev_id, info) < 0 ||
			info->name == NULL) {
		BENCH_LOG(ERR, "rte_gpu_info_get(%d): %s\n", *dev_id,
			rte_strerror(rte_errno));
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	return -1;
}

