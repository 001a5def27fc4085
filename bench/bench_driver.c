/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench-driver: what the CUDA gpudev driver adds to the CUDA calls it
 * makes. In one run, on the first GPU:
 *  - rte_gpu_mem_alloc / rte_gpu_mem_free against cuMemAlloc +
 *    cuPointerSetAttribute(SYNC_MEMOPS) + the clear (cuMemsetD8Async on a
 *    stream, then cuStreamSynchronize) / cuMemFree (what the driver
 *    calls), with the context already current ("raw") and with the
 *    cuCtxPushCurrent/cuCtxPopCurrent pair the driver wraps them in
 *    ("raw_ctx");
 *  - rte_gpu_mem_register / rte_gpu_mem_unregister against
 *    cuMemHostRegister(PORTABLE|DEVICEMAP) / cuMemHostUnregister;
 *  - rte_gpu_wmb against cuFlushGPUDirectRDMAWrites (where the GPU has
 *    it) and against the CPU store fence alone;
 *  - rte_gpu_mem_free and rte_gpu_mem_unregister with 1, 1000 and 100000
 *    live allocations/registrations (a random one freed, then replaced),
 *    beside the raw calls with as many live.
 * Every operation is timed alone with rte_rdtsc_precise(); medians and
 * p99 over many repetitions, alternating the variants.
 * The raw calls go through the driver's own CUDA loader (cuda_api.h):
 * the same entry points at the same ABI versions as the driver's, from
 * libcuda.so.1 or $GPU_CUDA_LIBCUDA.
 *
 * Usage: bench-driver [EAL options] -- [--reps N] [--wmb-reps N]
 *        [--size BYTES] [--live N[,N...]] [--live-reps N] [--seed N]
 *        [--out DIR]
 *        bench-driver --self-test
 * Exit: 0 done, 1 a call failed, 2 usage, 77 no GPU (skipped).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>

#include "bench_common.h"
#include "cuda_api.h"

#define PAGE 4096
#define LIVE_BLOCK 4096
#define MAX_LIVE_SIZES 8

struct opts {
	uint64_t reps;
	uint64_t wmb_reps;
	uint64_t size;
	uint64_t live[MAX_LIVE_SIZES];
	unsigned int n_live;
	uint64_t live_reps;
	uint64_t seed;
	const char *out;
};

struct env {
	int16_t dev_id;
	struct rte_gpu_info info;
	CUdevice cu_dev;
	CUcontext ctx;
	bool retained;		/* ctx is a primary context we retained */
	CUstream stream;	/* the raw variants clear on it, as the driver */
	bool flush_host;	/* cuFlushGPUDirectRDMAWrites has an effect */
	struct bench_json j;
	bool quiet;		/* warm-up: no summary lines */
	int status;
};

/* Logs a failed CUDA call and marks the run failed; true on success. */
#define CU_OK(env, call) __extension__ ({ \
	CUresult r_ = (call); \
	if (r_ != CUDA_SUCCESS) { \
		gpu_cuda_log_error(__func__, #call, r_); \
		(env)->status = BENCH_EXIT_FAIL; \
	} \
	r_ == CUDA_SUCCESS; \
})

/* Same for a DPDK call returning < 0 on failure. */
#define RTE_OK(env, call) __extension__ ({ \
	int r_ = (call); \
	if (r_ < 0) { \
		BENCH_LOG(ERR, "%s:%d: %s failed: %s\n", __func__, __LINE__, \
			#call, rte_strerror(rte_errno)); \
		(env)->status = BENCH_EXIT_FAIL; \
	} \
	r_ >= 0; \
})

static int
parse_args(int argc, char **argv, void *opts)
{
	struct opts *o = opts;
	struct bench_opt_list live = {
		.v = o->live, .max_n = MAX_LIVE_SIZES, .n = &o->n_live,
	};
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("reps", &o->reps, 1, 100000000, "N",
			"calls timed per case (default 2000)"),
		GPUAPP_OPT_UINT_ENTRY("wmb-reps", &o->wmb_reps, 1, 100000000, "N",
			"write barriers timed (default 20000)"),
		GPUAPP_OPT_UINT_ENTRY("size", &o->size, 1, 1ULL << 34, "BYTES",
			"buffer size of the allocation cases\n(default 65536)"),
		BENCH_OPT_LIST_ENTRY("live", &live, 1, 10000000, "N[,N...]",
			"allocations held live, at most 8\n(default 1,1000,100000)"),
		GPUAPP_OPT_UINT_ENTRY("live-reps", &o->live_reps, 1, 100000000,
			"N", "calls timed per live count (default 1000)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"seed of the random data and order\n(default 1)"),
		BENCH_OPT_OUT_ENTRY(&o->out, "write driver.json there"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};

	return bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]\n"
		"       (or --self-test alone: the statistics' self-test)",
		argc, argv);
}

static inline double
elapsed_ns(uint64_t t0, uint64_t t1)
{
	return bench_cycles_to_ns(t1 - t0);
}

/* --- One sample of each operation ------------------------------------- */

enum variant {
	V_RTE,
	V_RAW,
	V_RAW_CTX,
	V_MAX,
};

static const char *const variant_names[V_MAX] = { "rte", "raw", "raw_ctx" };

/* The raw calls of one allocation as the driver makes them, clear included. */
static bool
raw_alloc(struct env *e, size_t size, CUdeviceptr *d)
{
	unsigned int one = 1;

	return CU_OK(e, gpu_cuda.cuMemAlloc(d, size)) &&
		CU_OK(e, gpu_cuda.cuPointerSetAttribute(&one,
			CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, *d)) &&
		CU_OK(e, gpu_cuda.cuMemsetD8Async(*d, 0, size, e->stream)) &&
		CU_OK(e, gpu_cuda.cuStreamSynchronize(e->stream));
}

/* Allocates like the driver does; the time of the allocation in *ns. */
static bool
do_alloc(struct env *e, enum variant v, size_t size, void **ptr, double *ns)
{
	CUdeviceptr d = 0;
	uint64_t t0, t1;
	bool ok;

	t0 = rte_rdtsc_precise();
	switch (v) {
	case V_RTE:
		*ptr = rte_gpu_mem_alloc(e->dev_id, size, 0);
		t1 = rte_rdtsc_precise();
		if (*ptr == NULL) {
			BENCH_LOG(ERR, "rte_gpu_mem_alloc(%zu) failed: %s\n",
				size, rte_strerror(rte_errno));
			e->status = BENCH_EXIT_FAIL;
			return false;
		}
		break;
	case V_RAW_CTX:
		ok = CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx));
		ok = ok && raw_alloc(e, size, &d);
		{
			CUcontext popped;

			ok = CU_OK(e, gpu_cuda.cuCtxPopCurrent(&popped)) && ok;
		}
		t1 = rte_rdtsc_precise();
		if (!ok)
			return false;
		*ptr = (void *)(uintptr_t)d;
		break;
	default:
		ok = raw_alloc(e, size, &d);
		t1 = rte_rdtsc_precise();
		if (!ok)
			return false;
		*ptr = (void *)(uintptr_t)d;
		break;
	}
	*ns = elapsed_ns(t0, t1);
	return true;
}

static bool
do_free(struct env *e, enum variant v, void *ptr, double *ns)
{
	CUcontext popped;
	uint64_t t0, t1;
	bool ok;

	t0 = rte_rdtsc_precise();
	switch (v) {
	case V_RTE:
		ok = RTE_OK(e, rte_gpu_mem_free(e->dev_id, ptr));
		break;
	case V_RAW_CTX:
		ok = CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx));
		ok = ok && CU_OK(e, gpu_cuda.cuMemFree((CUdeviceptr)(uintptr_t)ptr));
		ok = CU_OK(e, gpu_cuda.cuCtxPopCurrent(&popped)) && ok;
		break;
	default:
		ok = CU_OK(e, gpu_cuda.cuMemFree((CUdeviceptr)(uintptr_t)ptr));
		break;
	}
	t1 = rte_rdtsc_precise();
	*ns = elapsed_ns(t0, t1);
	return ok;
}

static bool
do_register(struct env *e, enum variant v, void *p, size_t size, double *ns)
{
	const unsigned int flags = CU_MEMHOSTREGISTER_PORTABLE |
		CU_MEMHOSTREGISTER_DEVICEMAP;
	CUcontext popped;
	uint64_t t0, t1;
	bool ok;

	t0 = rte_rdtsc_precise();
	switch (v) {
	case V_RTE:
		ok = RTE_OK(e, rte_gpu_mem_register(e->dev_id, size, p));
		break;
	case V_RAW_CTX:
		ok = CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx));
		ok = ok && CU_OK(e, gpu_cuda.cuMemHostRegister(p, size, flags));
		ok = CU_OK(e, gpu_cuda.cuCtxPopCurrent(&popped)) && ok;
		break;
	default:
		ok = CU_OK(e, gpu_cuda.cuMemHostRegister(p, size, flags));
		break;
	}
	t1 = rte_rdtsc_precise();
	*ns = elapsed_ns(t0, t1);
	return ok;
}

static bool
do_unregister(struct env *e, enum variant v, void *p, double *ns)
{
	CUcontext popped;
	uint64_t t0, t1;
	bool ok;

	t0 = rte_rdtsc_precise();
	switch (v) {
	case V_RTE:
		ok = RTE_OK(e, rte_gpu_mem_unregister(e->dev_id, p));
		break;
	case V_RAW_CTX:
		ok = CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx));
		ok = ok && CU_OK(e, gpu_cuda.cuMemHostUnregister(p));
		ok = CU_OK(e, gpu_cuda.cuCtxPopCurrent(&popped)) && ok;
		break;
	default:
		ok = CU_OK(e, gpu_cuda.cuMemHostUnregister(p));
		break;
	}
	t1 = rte_rdtsc_precise();
	*ns = elapsed_ns(t0, t1);
	return ok;
}

/* --- Reporting ------------------------------------------------------------ */

static void
report_op(struct env *e, const char *op, const char *variant, size_t size,
		double *v, size_t n, struct bench_stats *st)
{
	bench_stats_compute(v, n, st);
	bench_json_obj_begin(&e->j, NULL);
	bench_json_str(&e->j, "op", op);
	bench_json_str(&e->j, "variant", variant);
	bench_json_int(&e->j, "size", (int64_t)size);
	bench_json_stats(&e->j, "latency", st);
	bench_json_obj_end(&e->j);
}

/* One summary line: the driver against the raw calls. */
static void
print_compare(const struct env *e, const char *op, size_t size,
		const struct bench_stats *st)
{
	if (e->quiet)
		return;
	printf("driver op=%s size=%zu rte_median=%.2fus raw_median=%.2fus "
		"raw_ctx_median=%.2fus overhead=%+.1f%% overhead_vs_ctx=%+.1f%% "
		"rte_p99=%.2fus raw_p99=%.2fus\n", op, size,
		st[V_RTE].median / 1e3, st[V_RAW].median / 1e3,
		st[V_RAW_CTX].median / 1e3,
		100.0 * (st[V_RTE].median / st[V_RAW].median - 1),
		100.0 * (st[V_RTE].median / st[V_RAW_CTX].median - 1),
		st[V_RTE].p99 / 1e3, st[V_RAW].p99 / 1e3);
}

/* --- Sections ---------------------------------------------------------------- */

static void
bench_alloc_free(struct env *e, const struct opts *o)
{
	struct bench_stats st_a[V_MAX], st_f[V_MAX];
	double *a[V_MAX] = { NULL }, *f[V_MAX] = { NULL };
	size_t n = 0;
	unsigned int v;
	uint64_t r;

	for (v = 0; v < V_MAX; v++) {
		a[v] = calloc(o->reps, sizeof(double));
		f[v] = calloc(o->reps, sizeof(double));
		if (a[v] == NULL || f[v] == NULL)
			goto out;
	}
	/* Variants alternate so that drift affects them alike. */
	for (r = 0; r < o->reps && e->status == BENCH_EXIT_OK; r++) {
		for (v = 0; v < V_MAX; v++) {
			void *p;

			if (!do_alloc(e, v, o->size, &p, &a[v][r]))
				break;
			if (!do_free(e, v, p, &f[v][r]))
				break;
		}
		if (v == V_MAX)
			n = r + 1;
	}
	if (n == 0)
		goto out;
	for (v = 0; v < V_MAX; v++) {
		report_op(e, "mem_alloc", variant_names[v], o->size, a[v], n,
			&st_a[v]);
		report_op(e, "mem_free", variant_names[v], o->size, f[v], n,
			&st_f[v]);
	}
	print_compare(e, "mem_alloc", o->size, st_a);
	print_compare(e, "mem_free", o->size, st_f);
out:
	for (v = 0; v < V_MAX; v++) {
		free(a[v]);
		free(f[v]);
	}
}

static void
bench_register(struct env *e, const struct opts *o, uint64_t *rng)
{
	struct bench_stats st_r[V_MAX], st_u[V_MAX];
	double *a[V_MAX] = { NULL }, *u[V_MAX] = { NULL };
	size_t size = RTE_ALIGN_CEIL(o->size, PAGE), n = 0;
	void *buf = aligned_alloc(PAGE, size);
	unsigned int v;
	uint64_t r;

	if (buf == NULL)
		goto out;
	/* Backed by real pages before anyone pins them. */
	rand64_fill(buf, size, rng);
	for (v = 0; v < V_MAX; v++) {
		a[v] = calloc(o->reps, sizeof(double));
		u[v] = calloc(o->reps, sizeof(double));
		if (a[v] == NULL || u[v] == NULL)
			goto out;
	}
	for (r = 0; r < o->reps && e->status == BENCH_EXIT_OK; r++) {
		for (v = 0; v < V_MAX; v++) {
			if (!do_register(e, v, buf, size, &a[v][r]))
				break;
			if (!do_unregister(e, v, buf, &u[v][r]))
				break;
		}
		if (v == V_MAX)
			n = r + 1;
	}
	if (n == 0)
		goto out;
	for (v = 0; v < V_MAX; v++) {
		report_op(e, "mem_register", variant_names[v], size, a[v], n,
			&st_r[v]);
		report_op(e, "mem_unregister", variant_names[v], size, u[v], n,
			&st_u[v]);
	}
	print_compare(e, "mem_register", size, st_r);
	print_compare(e, "mem_unregister", size, st_u);
out:
	for (v = 0; v < V_MAX; v++) {
		free(a[v]);
		free(u[v]);
	}
	free(buf);
}

enum wmb_variant {
	W_RTE,		/* rte_gpu_wmb() */
	W_RAW,		/* cuFlushGPUDirectRDMAWrites, context current */
	W_RAW_CTX,	/* same inside push/pop, as the driver does */
	W_FENCE,	/* rte_wmb() alone: what is left without the flush */
	W_MAX,
};

static void
bench_wmb(struct env *e, const struct opts *o)
{
	static const char *const names[W_MAX] = {
		"rte", "raw", "raw_ctx", "cpu_fence"
	};
	struct bench_stats st[W_MAX];
	double *v[W_MAX] = { NULL };
	unsigned int w;
	size_t n = 0;
	uint64_t r;

	for (w = 0; w < W_MAX; w++) {
		v[w] = calloc(o->wmb_reps, sizeof(double));
		if (v[w] == NULL)
			goto out;
	}
	for (r = 0; r < o->wmb_reps && e->status == BENCH_EXIT_OK; r++) {
		for (w = 0; w < W_MAX; w++) {
			CUcontext popped;
			uint64_t t0, t1;
			bool ok = true;

			if (!e->flush_host && (w == W_RAW || w == W_RAW_CTX))
				continue;
			t0 = rte_rdtsc_precise();
			switch (w) {
			case W_RTE:
				ok = RTE_OK(e, rte_gpu_wmb(e->dev_id));
				break;
			case W_RAW:
				ok = CU_OK(e, gpu_cuda.cuFlushGPUDirectRDMAWrites(
					CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
					CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
				break;
			case W_RAW_CTX:
				ok = CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx));
				ok = ok && CU_OK(e, gpu_cuda.cuFlushGPUDirectRDMAWrites(
					CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
					CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
				ok = CU_OK(e, gpu_cuda.cuCtxPopCurrent(&popped)) && ok;
				break;
			default:
				/* The store fence rte_gpu_wmb starts with. */
				rte_wmb();
				break;
			}
			t1 = rte_rdtsc_precise();
			if (!ok)
				break;
			v[w][r] = elapsed_ns(t0, t1);
		}
		if (e->status == BENCH_EXIT_OK)
			n = r + 1;
	}
	if (n == 0)
		goto out;
	for (w = 0; w < W_MAX; w++) {
		if (!e->flush_host && (w == W_RAW || w == W_RAW_CTX))
			continue;
		report_op(e, "wmb", names[w], 0, v[w], n, &st[w]);
	}
	if (e->quiet)
		goto out;
	if (e->flush_host)
		printf("driver op=wmb rte_median=%.3fus raw_flush_median=%.3fus "
			"raw_ctx_median=%.3fus cpu_fence_median=%.3fus "
			"overhead=%+.1f%% rte_p99=%.3fus raw_p99=%.3fus\n",
			st[W_RTE].median / 1e3, st[W_RAW].median / 1e3,
			st[W_RAW_CTX].median / 1e3, st[W_FENCE].median / 1e3,
			100.0 * (st[W_RTE].median / st[W_RAW].median - 1),
			st[W_RTE].p99 / 1e3, st[W_RAW].p99 / 1e3);
	else
		printf("driver op=wmb rte_median=%.3fus cpu_fence_median=%.3fus "
			"rte_p99=%.3fus (GPU has no host-side GPUDirect RDMA flush: "
			"rte_gpu_wmb is the CPU fence only)\n",
			st[W_RTE].median / 1e3, st[W_FENCE].median / 1e3,
			st[W_RTE].p99 / 1e3);
out:
	for (w = 0; w < W_MAX; w++)
		free(v[w]);
}

/*
 * Live-set scaling: keeps `live` allocations (kind "alloc") or page
 * registrations (kind "register") of variant v, frees or unregisters a
 * random one reps times (timed), replacing it each time (not timed).
 * Returns the count reached, 0 on failure.
 */
static size_t
live_run(struct env *e, bool reg, enum variant v, size_t live, size_t reps,
		uint64_t *rng, double *samples, size_t *n_samples)
{
	void **slot = calloc(live, sizeof(*slot));
	uint8_t *pages = NULL;
	size_t have = 0, i, r;
	double ns;

	*n_samples = 0;
	if (slot == NULL)
		return 0;
	if (reg) {
		pages = aligned_alloc(PAGE, live * PAGE);
		if (pages == NULL) {
			free(slot);
			return 0;
		}
		rand64_fill(pages, live * PAGE, rng);
	}
	for (have = 0; have < live; have++) {
		void *p = reg ? pages + have * PAGE : NULL;
		bool ok = reg ? do_register(e, v, p, PAGE, &ns) :
			do_alloc(e, v, LIVE_BLOCK, &p, &ns);

		if (!ok)
			break;
		slot[have] = p;
	}
	if (have < live) {
		BENCH_LOG(ERR, "live set: only %zu of %zu %s made (%s)\n", have,
			live, reg ? "registrations" : "allocations",
			variant_names[v]);
		goto release;
	}
	for (r = 0; r < reps; r++) {
		size_t k = rand64_next(rng) % live;
		void *p = slot[k];
		bool ok = reg ? do_unregister(e, v, p, &samples[r]) :
			do_free(e, v, p, &samples[r]);

		if (!ok) {
			slot[k] = NULL;
			break;
		}
		if (!(reg ? do_register(e, v, p, PAGE, &ns) :
				do_alloc(e, v, LIVE_BLOCK, &slot[k], &ns))) {
			slot[k] = NULL;
			break;
		}
		*n_samples = r + 1;
	}
release:
	for (i = 0; i < have; i++) {
		if (slot[i] == NULL)
			continue;
		if (reg)
			do_unregister(e, v, slot[i], &ns);
		else
			do_free(e, v, slot[i], &ns);
	}
	free(pages);
	free(slot);
	return have == live && *n_samples == reps ? live : 0;
}

/*
 * Each point runs the variants alternately, LIVE_ROUNDS times each (rte,
 * raw, rte, raw), with a live set of their own every time, and takes the
 * median over all of a variant's samples: run one after the other, the
 * second variant met the process as the first left it, and the 100 000
 * point moved by a third between two starts (run eeedb4f: rte 63 us
 * against raw 48, where the previous start had 49 against 46, with no
 * change to the driver).
 */
#define LIVE_ROUNDS 2

static void
bench_live(struct env *e, const struct opts *o, uint64_t *rng)
{
	const size_t per = o->live_reps;
	double *samples[2] = {
		calloc(LIVE_ROUNDS * per, sizeof(double)),
		calloc(LIVE_ROUNDS * per, sizeof(double)),
	};
	/* Medians at the first and last live count, for the growth line. */
	double first[2][2] = { { NAN, NAN }, { NAN, NAN } };
	double last[2][2] = { { NAN, NAN }, { NAN, NAN } };
	unsigned int i, kind, v, round;

	if (samples[0] == NULL || samples[1] == NULL)
		goto out;
	bench_json_arr_begin(&e->j, "live");
	for (i = 0; i < o->n_live; i++) {
		for (kind = 0; kind < 2; kind++) {
			const char *op = kind ? "mem_unregister" : "mem_free";
			size_t have[2] = { 0, 0 };
			bool complete[2] = { true, true };
			double secs[2] = { 0, 0 };

			for (round = 0; round < LIVE_ROUNDS; round++) {
				for (v = V_RTE; v <= V_RAW; v++) {
					uint64_t t0 = rte_rdtsc_precise();
					size_t n = 0;

					if (!complete[v])
						continue;
					if (live_run(e, kind == 1, v, o->live[i],
							per, rng, samples[v] + have[v],
							&n) == 0)
						complete[v] = false;
					have[v] += n;
					secs[v] += bench_cycles_to_ns(
						rte_rdtsc_precise() - t0) / 1e9;
				}
			}
			for (v = V_RTE; v <= V_RAW; v++) {
				struct bench_stats st;

				bench_stats_compute(samples[v], have[v], &st);
				bench_json_obj_begin(&e->j, NULL);
				bench_json_str(&e->j, "op", op);
				bench_json_str(&e->j, "variant", variant_names[v]);
				bench_json_int(&e->j, "live", (int64_t)o->live[i]);
				bench_json_int(&e->j, "rounds", LIVE_ROUNDS);
				bench_json_bool(&e->j, "complete", complete[v]);
				bench_json_stats(&e->j, "latency", &st);
				bench_json_obj_end(&e->j);
				printf("driver live op=%s variant=%s live=%" PRIu64
					" median=%.2fus p99=%.2fus samples=%zu%s "
					"(%.1fs)\n", op, variant_names[v], o->live[i],
					st.median / 1e3, st.p99 / 1e3, have[v],
					complete[v] ? "" : " INCOMPLETE", secs[v]);
				fflush(stdout);
				if (i == 0)
					first[kind][v] = st.median;
				last[kind][v] = st.median;
			}
		}
	}
	bench_json_arr_end(&e->j);
	if (o->n_live > 1) {
		for (kind = 0; kind < 2; kind++)
			printf("driver live-growth op=%s live=%" PRIu64 "->%" PRIu64
				" rte=%.2fx raw=%.2fx\n",
				kind ? "mem_unregister" : "mem_free", o->live[0],
				o->live[o->n_live - 1],
				last[kind][V_RTE] / first[kind][V_RTE],
				last[kind][V_RAW] / first[kind][V_RAW]);
	}
out:
	free(samples[0]);
	free(samples[1]);
}

/* --- Setup ------------------------------------------------------------------ */

static int
setup_cuda(struct env *e)
{
	int opts = 0;

	/* Loads libcuda and calls cuInit; logs why not (bench.cuda). */
	if (gpu_cuda_api_get() == NULL) {
		printf("SKIP: the CUDA driver cannot be used (the bench.cuda log says why)\n");
		return BENCH_EXIT_SKIP;
	}
	/* PCI-probed gpudev devices are named by their PCI address. */
	if (gpu_cuda.cuDeviceGetByPCIBusId(&e->cu_dev, e->info.name) != CUDA_SUCCESS) {
		BENCH_LOG(WARNING, "gpudev %d '%s' is not a PCI address CUDA knows: using CUDA device 0\n",
			e->dev_id, e->info.name);
		if (!CU_OK(e, gpu_cuda.cuDeviceGet(&e->cu_dev, 0)))
			return BENCH_EXIT_FAIL;
	}
	/* The driver's own context when it says which (the primary one). */
	if (e->info.context != 0) {
		e->ctx = (CUcontext)(uintptr_t)e->info.context;
	} else {
		if (!CU_OK(e, gpu_cuda.cuDevicePrimaryCtxRetain(&e->ctx, e->cu_dev)))
			return BENCH_EXIT_FAIL;
		e->retained = true;
	}
	/* Current on this thread for the "raw" variants. */
	if (!CU_OK(e, gpu_cuda.cuCtxPushCurrent(e->ctx)))
		return BENCH_EXIT_FAIL;
	/* Non-blocking, as the driver's own. */
	if (!CU_OK(e, gpu_cuda.cuStreamCreate(&e->stream, CU_STREAM_NON_BLOCKING)))
		return BENCH_EXIT_FAIL;
	if (gpu_cuda.cuDeviceGetAttribute(&opts,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
			e->cu_dev) != CUDA_SUCCESS)
		opts = 0;
	e->flush_host = (opts & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) != 0;
	return BENCH_EXIT_OK;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.reps = 2000,
		.wmb_reps = 20000,
		.size = 65536,
		.live = { 1, 1000, 100000 },
		.n_live = 3,
		.live_reps = 1000,
		.seed = 1,
	};
	struct env e = { .status = BENCH_EXIT_OK };
	char gpu_name[256] = "unknown";
	uint64_t rng;
	int ret;

	ret = bench_start(argc, argv, parse_args, &o);
	if (ret >= 0)
		return ret;
	rng = rand64_seed(o.seed);

	ret = bench_first_gpu(&e.dev_id, &e.info);
	if (ret >= 0)
		return ret;
	ret = setup_cuda(&e);
	if (ret != BENCH_EXIT_OK) {
		rte_eal_cleanup();
		return ret;
	}
	if (gpu_cuda.cuDeviceGetName(gpu_name, sizeof(gpu_name), e.cu_dev) !=
			CUDA_SUCCESS)
		snprintf(gpu_name, sizeof(gpu_name), "unknown");
	printf("# bench-driver: gpudev %d (%s, %s), CUDA driver %d.%d, "
		"GPUDirect RDMA host flush %s, timer overhead %.0f ns\n",
		e.dev_id, e.info.name, gpu_name, gpu_cuda.driver_version / 1000,
		gpu_cuda.driver_version % 1000 / 10, e.flush_host ? "yes" : "no",
		bench_timer_overhead_ns());
	fflush(stdout);

	if (bench_json_open(&e.j, o.out, "driver.json") != 0) {
		rte_eal_cleanup();
		return BENCH_EXIT_FAIL;
	}
	bench_json_obj_begin(&e.j, NULL);
	bench_json_str(&e.j, "bench", "driver");
	bench_json_host(&e.j);
	bench_json_obj_begin(&e.j, "gpu");
	bench_json_str(&e.j, "name", gpu_name);
	bench_json_str(&e.j, "gpudev_name", e.info.name);
	bench_json_int(&e.j, "cuda_driver_version", gpu_cuda.driver_version);
	bench_json_bool(&e.j, "rdma_flush_host", e.flush_host);
	bench_json_obj_end(&e.j);
	bench_json_obj_begin(&e.j, "config");
	bench_json_int(&e.j, "reps", (int64_t)o.reps);
	bench_json_int(&e.j, "wmb_reps", (int64_t)o.wmb_reps);
	bench_json_int(&e.j, "size", (int64_t)o.size);
	bench_json_int(&e.j, "live_block_size", LIVE_BLOCK);
	bench_json_int(&e.j, "live_reps", (int64_t)o.live_reps);
	bench_json_num(&e.j, "timer_overhead_ns", bench_timer_overhead_ns());
	bench_json_obj_end(&e.j);

	bench_json_arr_begin(&e.j, "ops");
	/* A few unmeasured rounds first: the first calls set up driver
	 * state. Their results go nowhere (no JSON file, lines tagged). */
	{
		struct opts warm = o;
		struct bench_json saved = e.j;

		warm.reps = 20;
		warm.wmb_reps = 100;
		e.j.doc = NULL;
		e.quiet = true;
		bench_alloc_free(&e, &warm);
		bench_register(&e, &warm, &rng);
		bench_wmb(&e, &warm);
		e.j = saved;
		e.quiet = false;
	}
	printf("# warm-up done\n");
	if (e.status == BENCH_EXIT_OK)
		bench_alloc_free(&e, &o);
	if (e.status == BENCH_EXIT_OK)
		bench_register(&e, &o, &rng);
	if (e.status == BENCH_EXIT_OK)
		bench_wmb(&e, &o);
	bench_json_arr_end(&e.j);
	if (e.status == BENCH_EXIT_OK)
		bench_live(&e, &o, &rng);
	bench_json_str(&e.j, "status", e.status == BENCH_EXIT_OK ? "ok" : "failed");
	bench_json_obj_end(&e.j);
	if (bench_json_close(&e.j) != 0 && e.status == BENCH_EXIT_OK)
		e.status = BENCH_EXIT_FAIL;

	if (e.stream != NULL)
		CU_OK(&e, gpu_cuda.cuStreamDestroy(e.stream));
	{
		CUcontext popped;

		CU_OK(&e, gpu_cuda.cuCtxPopCurrent(&popped));
	}
	if (e.retained)
		CU_OK(&e, gpu_cuda.cuDevicePrimaryCtxRelease(e.cu_dev));
	rte_eal_cleanup();
	return e.status;
}
