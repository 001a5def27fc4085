/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-reg-cache: what the driver's registration cache (devarg
 * reg_cache=1) saves, and a check of its dma-buf export. On the first GPU,
 * which must have been probed with reg_cache=1:
 *  - dma-buf check: a GPU allocation exported with
 *    rte_pmd_gpu_cuda_dmabuf_export must give an fd whose size (fstat,
 *    lseek SEEK_END) is the exported range's, the inner range's offset must
 *    be right, and freeing the allocation must close the fds;
 *  - rte_gpu_mem_register / rte_gpu_mem_unregister cycles of EAL memory of
 *    each size (2 MiB and 64 MiB by default) with and without the cache,
 *    alternating: "uncached" flushes the cache after each unregister
 *    (rte_pmd_gpu_cuda_reg_cache_flush, timed with the unregister: that is
 *    what an unregister without the cache does), so every register pins;
 *    "cached" reuses the kept registration.
 * Medians and p99 of each operation alone, timed with rte_rdtsc_precise().
 *
 * Usage: bench-reg-cache [EAL options] -- [--reps N] [--sizes B[,B...]]
 *        [--out DIR]
 *        bench-reg-cache --self-test
 * Exit: 0 done, 1 a call or check failed, 2 usage, 77 no GPU (skipped).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>

#include "bench_common.h"
#include "rte_pmd_gpu_cuda.h"

#define MAX_SIZES 8

struct opts {
	uint64_t reps;
	uint64_t sizes[MAX_SIZES];
	unsigned int n_sizes;
	const char *out;
};

static int
parse_args(int argc, char **argv, void *opts)
{
	struct opts *o = opts;
	struct bench_opt_list sizes = {
		.v = o->sizes, .max_n = MAX_SIZES, .n = &o->n_sizes,
	};
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 10000000, "N",
			"registrations timed per size (default 200)"),
		BENCH_OPT_LIST_ENTRY("sizes", &sizes, 1, 1ULL << 34,
			"BYTES[,BYTES...]",
			"buffer sizes, at most 8 (default 2097152,67108864)"),
		BENCH_OPT_OUT_ENTRY(&o->out, "write reg_cache.json there"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options, GPU probed with devarg reg_cache=1] "
		"-- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

/* --- dma-buf check ------------------------------------------------------- */

static bool
fd_size_is(int fd, size_t want)
{
	struct stat st;
	off_t end = lseek(fd, 0, SEEK_END);

	if (fstat(fd, &st) != 0 || end < 0) {
		printf("FAIL dmabuf: fstat/lseek of fd %d: %s\n", fd, strerror(errno));
		return false;
	}
	/* A dma-buf's size is what lseek(SEEK_END) tells; st_size may be 0
	 * on kernels that do not fill it in. */
	if ((size_t)end != want || (st.st_size != 0 && (size_t)st.st_size != want)) {
		printf("FAIL dmabuf: fd %d: lseek end %jd, st_size %jd, expected %zu\n",
			fd, (intmax_t)end, (intmax_t)st.st_size, want);
		return false;
	}
	return true;
}

static int
check_dmabuf(int16_t dev_id, size_t page)
{
	const size_t size = 4 << 20;
	uint8_t *p = rte_gpu_mem_alloc(dev_id, size, (unsigned int)page);
	int fd = -1, fd2 = -1, ret;
	uint64_t off = 1, off2 = 0;
	bool ok = true;

	if (p == NULL) {
		printf("FAIL dmabuf: rte_gpu_mem_alloc(%zu, %zu): %s\n", size, page,
			rte_strerror(rte_errno));
		return BENCH_EXIT_FAIL;
	}
	ret = rte_pmd_gpu_cuda_dmabuf_export(dev_id, p, size, &fd, &off);
	if (ret == -ENOTSUP) {
		printf("SKIP dmabuf: not supported by this GPU or CUDA driver (see the driver's log)\n");
		rte_gpu_mem_free(dev_id, p);
		return BENCH_EXIT_OK;
	}
	if (ret != 0 || fd < 0 || off != 0) {
		printf("FAIL dmabuf: export of %zu bytes: %d (fd %d, offset %" PRIu64 ")\n",
			size, ret, fd, off);
		rte_gpu_mem_free(dev_id, p);
		return BENCH_EXIT_FAIL;
	}
	ok = fd_size_is(fd, size);
	/* 100 bytes one page and a bit in: its page alone, at that offset. */
	ret = rte_pmd_gpu_cuda_dmabuf_export(dev_id, p + page + 1000, 100, &fd2, &off2);
	if (ret != 0 || off2 != 1000 || !fd_size_is(fd2, page)) {
		printf("FAIL dmabuf: inner range: %d, offset %" PRIu64 "\n", ret, off2);
		ok = false;
	}
	if (ret == 0 && rte_pmd_gpu_cuda_dmabuf_close(dev_id, fd2) != 0) {
		printf("FAIL dmabuf: close of fd %d\n", fd2);
		ok = false;
	}
	if (rte_gpu_mem_free(dev_id, p) != 0) {
		printf("FAIL dmabuf: rte_gpu_mem_free: %s\n", rte_strerror(rte_errno));
		ok = false;
	} else if (rte_pmd_gpu_cuda_dmabuf_close(dev_id, fd) != -EINVAL) {
		printf("FAIL dmabuf: fd %d not closed with its allocation\n", fd);
		ok = false;
	}
	printf("%s dmabuf: %zu bytes of GPU memory as fd %d (lseek/fstat size right), inner range at offset %" PRIu64 ", fds closed with the allocation\n",
		ok ? "PASS" : "FAIL", size, fd, off2);
	return ok ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
}

/* --- register/unregister cycles ------------------------------------------ */

/* Cached first in each round: it reuses what the previous round parked. */
enum variant { V_CACHED, V_UNCACHED, V_MAX };
static const char *const variant_names[V_MAX] = { "cached", "uncached" };

static int
bench_size(int16_t dev_id, const struct opts *o, size_t size,
		struct bench_json *j, uint64_t *rng)
{
	struct bench_stats st_r[V_MAX], st_u[V_MAX];
	double *r[V_MAX] = { NULL }, *u[V_MAX] = { NULL };
	struct rte_pmd_gpu_cuda_reg_cache_stats before, after;
	uint8_t *buf = rte_malloc("bench-reg-cache", size, 4096);
	int status = BENCH_EXIT_FAIL;
	unsigned int v;
	uint64_t i, t0, t1;

	if (buf == NULL) {
		BENCH_LOG(ERR, "rte_malloc(%zu): %s\n", size, rte_strerror(rte_errno));
		return BENCH_EXIT_FAIL;
	}
	/* Backed by real pages before anyone pins them. */
	rand64_fill(buf, size, rng);
	for (v = 0; v < V_MAX; v++) {
		r[v] = calloc(o->reps, sizeof(double));
		u[v] = calloc(o->reps, sizeof(double));
		if (r[v] == NULL || u[v] == NULL)
			goto out;
	}
	if (rte_pmd_gpu_cuda_reg_cache_flush(dev_id) < 0 ||
			rte_pmd_gpu_cuda_reg_cache_stats_get(dev_id, &before) != 0)
		goto out;
	/* Alternating, so that drift affects both alike. Each round starts
	 * with the registration parked, by an unmeasured cycle (a miss). */
	for (i = 0; i < o->reps; i++) {
		if (rte_gpu_mem_register(dev_id, size, buf) != 0 ||
				rte_gpu_mem_unregister(dev_id, buf) != 0)
			goto fail_call;
		for (v = 0; v < V_MAX; v++) {
			if (v == V_UNCACHED && rte_pmd_gpu_cuda_reg_cache_flush(dev_id) < 0)
				goto fail_call;
			t0 = rte_rdtsc_precise();
			if (rte_gpu_mem_register(dev_id, size, buf) != 0)
				goto fail_call;
			t1 = rte_rdtsc_precise();
			r[v][i] = bench_cycles_to_ns(t1 - t0);
			t0 = rte_rdtsc_precise();
			if (rte_gpu_mem_unregister(dev_id, buf) != 0 ||
					(v == V_UNCACHED && rte_pmd_gpu_cuda_reg_cache_flush(dev_id) != 1))
				goto fail_call;
			t1 = rte_rdtsc_precise();
			u[v][i] = bench_cycles_to_ns(t1 - t0);
		}
	}
	if (rte_pmd_gpu_cuda_reg_cache_stats_get(dev_id, &after) != 0 ||
			rte_pmd_gpu_cuda_reg_cache_flush(dev_id) < 0)
		goto out;
	for (v = 0; v < V_MAX; v++) {
		bench_stats_compute(r[v], o->reps, &st_r[v]);
		bench_stats_compute(u[v], o->reps, &st_u[v]);
		bench_json_obj_begin(j, NULL);
		bench_json_str(j, "variant", variant_names[v]);
		bench_json_int(j, "size", (int64_t)size);
		bench_json_stats(j, "register", &st_r[v]);
		bench_json_stats(j, "unregister", &st_u[v]);
		bench_json_obj_end(j);
	}
	printf("reg-cache size=%zu register: uncached_median=%.2fus cached_median=%.3fus ratio=%.0fx "
		"(p99 %.2fus / %.3fus); unregister: uncached_median=%.2fus cached_median=%.3fus ratio=%.0fx; "
		"hits=%" PRIu64 " misses=%" PRIu64 "\n", size,
		st_r[V_UNCACHED].median / 1e3, st_r[V_CACHED].median / 1e3,
		st_r[V_UNCACHED].median / st_r[V_CACHED].median,
		st_r[V_UNCACHED].p99 / 1e3, st_r[V_CACHED].p99 / 1e3,
		st_u[V_UNCACHED].median / 1e3, st_u[V_CACHED].median / 1e3,
		st_u[V_UNCACHED].median / st_u[V_CACHED].median,
		after.hits - before.hits, after.misses - before.misses);
	/* Every cached register a hit; every uncached one and every round's
	 * parking cycle a miss. */
	if (after.hits - before.hits != o->reps ||
			after.misses - before.misses != 2 * o->reps) {
		printf("FAIL reg-cache size=%zu: %" PRIu64 " hits and %" PRIu64 " misses, expected %" PRIu64 " and %" PRIu64 "\n",
			size, after.hits - before.hits, after.misses - before.misses,
			o->reps, 2 * o->reps);
		goto out;
	}
	status = BENCH_EXIT_OK;
	goto out;
fail_call:
	BENCH_LOG(ERR, "size %zu: a register/unregister/flush failed: %s\n", size,
		rte_strerror(rte_errno));
	rte_pmd_gpu_cuda_reg_cache_flush(dev_id);
out:
	for (v = 0; v < V_MAX; v++) {
		free(r[v]);
		free(u[v]);
	}
	rte_free(buf);
	return status;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.reps = 200,
		.sizes = { 2 << 20, 64 << 20 },
		.n_sizes = 2,
	};
	struct rte_pmd_gpu_cuda_reg_cache_stats st;
	struct rte_gpu_info info;
	struct bench_json j;
	int status, ret;
	int16_t dev_id;
	uint64_t rng = rand64_seed(1);
	unsigned int i;

	ret = bench_start(argc, argv, parse_args, &o);
	if (ret >= 0)
		return ret;
	ret = bench_first_gpu(&dev_id, &info);
	if (ret >= 0)
		return ret;
	if (rte_pmd_gpu_cuda_reg_cache_stats_get(dev_id, &st) != 0) {
		printf("FAIL: GPU %d (%s) was probed without the registration cache: "
			"pass devarg reg_cache=1 (-a <PCI>,reg_cache=1 or --vdev gpu_cuda0,dev=0,reg_cache=1)\n",
			dev_id, info.name);
		rte_eal_cleanup();
		return BENCH_EXIT_USAGE;
	}
	printf("# bench-reg-cache: gpudev %d (%s), cache limit %" PRIu64 " bytes, timer overhead %.0f ns\n",
		dev_id, info.name, st.bytes_limit, bench_timer_overhead_ns());
	status = check_dmabuf(dev_id, info.page_size != 0 ? info.page_size : 65536);

	if (bench_json_open(&j, o.out, "reg_cache.json") != 0) {
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	bench_json_obj_begin(&j, NULL);
	bench_json_str(&j, "bench", "reg_cache");
	bench_json_host(&j);
	bench_json_str(&j, "gpudev_name", info.name);
	bench_json_int(&j, "reps", (int64_t)o.reps);
	bench_json_arr_begin(&j, "cycles");
	for (i = 0; i < o.n_sizes; i++) {
		if (o.sizes[i] > st.bytes_limit) {
			printf("SKIP reg-cache size=%" PRIu64 ": above the cache limit (reg_cache_max)\n",
				o.sizes[i]);
			continue;
		}
		ret = bench_size(dev_id, &o, o.sizes[i], &j, &rng);
		if (ret != BENCH_EXIT_OK)
			status = ret;
		fflush(stdout);
	}
	bench_json_arr_end(&j);
	bench_json_str(&j, "status", status == BENCH_EXIT_OK ? "ok" : "failed");
	bench_json_obj_end(&j);
	if (bench_json_close(&j) != 0 && status == BENCH_EXIT_OK)
		status = BENCH_EXIT_FAIL;
	rte_eal_cleanup();
	return status;
}
