/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * dpdk-test-gpudev: functional test of every gpudev API through the CUDA
 * gpudev driver, on every probed GPU (or the one of --gpu). One line per case
 * and GPU (PASS/FAIL/SKIP name [gpu N]), then a summary.
 * Exit: 0 all passed or skipped, 1 a case failed, 2 usage or setup error,
 * 77 nothing to test (no GPU probed, no CUDA device).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_log.h>

#include <cuda_runtime_api.h>

#include "cuda_drv.h"
#include "gpuapp_eal.h"
#include "gpuapp_opts.h"
#include "tg.h"

#define EXIT_SKIP 77
#define EXIT_USAGE 2

struct tg_case {
	const char *name;
	/* Run on each GPU in turn; NULL: tg_case_cross_gpu, once over all. */
	tg_case_fn *fn;
};

/* Order matters: close ends the devices, so it runs last. */
static const struct tg_case tg_cases[] = {
	{ "info", tg_case_info },
	{ "mem_alloc_kernel", tg_case_mem_alloc_kernel },
	{ "mem_register_kernel", tg_case_mem_register_kernel },
	{ "cpu_map", tg_case_cpu_map },
	{ "wmb", tg_case_wmb },
	{ "comm_flag", tg_case_comm_flag },
	{ "comm_list", tg_case_comm_list },
	{ "errors", tg_case_errors },
	{ "child", tg_case_child },
	{ "stress", tg_case_stress },
	{ "cross_gpu", NULL },
	{ "close", tg_case_close },
};

#define TG_NB_CASES RTE_DIM(tg_cases)

struct tg_opts {
	int gpu;			/* -1: every probed GPU */
	bool selected[TG_NB_CASES];	/* all false: run every case */
	bool any_selected;
	unsigned int stress_threads;
	unsigned int stress_ops;
	uint64_t seed;
	bool seed_given;
};

/* Every diagnostic of the test: --log-level=app.test_gpudev:LEVEL. The
 * case lines and the tally are its results: printf on stdout. */
RTE_LOG_REGISTER(tg_logtype, app.test_gpudev, INFO);
#define TG_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, (uint32_t)tg_logtype, __VA_ARGS__)

static int
select_cases(struct tg_opts *o, const char *list)
{
	char buf[256], *tok, *save = NULL;
	size_t i;

	if (strlen(list) >= sizeof(buf)) {
		TG_LOG(ERR, "--case: list longer than %zu characters\n",
			sizeof(buf) - 1);
		return -1;
	}
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
			tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < TG_NB_CASES; i++)
			if (strcmp(tok, tg_cases[i].name) == 0)
				break;
		if (i == TG_NB_CASES) {
			TG_LOG(ERR, "--case: unknown case '%s'\n", tok);
			return -1;
		}
		o->selected[i] = true;
		o->any_selected = true;
	}
	return 0;
}

static int
parse_case(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	RTE_SET_USED(logtype);
	return select_cases(opt->dst, arg) < 0 ? -EINVAL : 0;
}

static int
parse_seed(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	struct tg_opts *o = opt->dst;
	uint64_t v;
	int ret = gpuapp_opt_uint(opt, arg, logtype, &v);

	if (ret != 0)
		return ret;
	o->seed = v;
	o->seed_given = true;
	return 0;
}

/* 0, 1 after --help, or a negative errno with the reason said. */
static int
parse_args(int argc, char **argv, struct tg_opts *o)
{
	char cases[512];
	size_t len;
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_UINT_ENTRY("gpu", &o->gpu, 0, INT16_MAX, "ID",
			"gpudev device only (default: every probed GPU)"),
		GPUAPP_OPT_CALLBACK_ENTRY("case", parse_case, o,
			"NAME[,NAME...]", cases),
		GPUAPP_OPT_UINT_ENTRY("stress-threads", &o->stress_threads, 1,
			1024, "N", "threads of the stress case (default 8)"),
		GPUAPP_OPT_UINT_ENTRY("stress-ops", &o->stress_ops, 1,
			100000000, "N",
			"operations per stress thread (default 2000)"),
		{ .name = "seed", .kind = GPUAPP_OPT_CALLBACK, .cb = parse_seed,
		  .dst = o, .min = 0, .max = UINT64_MAX, .arg_name = "N",
		  .help = "random seed (default: from the clock)" },
		GPUAPP_OPT_HELP_ENTRY('h'),
	};

	/* The case list in --help follows tg_cases[]. */
	len = (size_t)snprintf(cases, sizeof(cases), "cases to run (default all):");
	for (size_t i = 0; i < TG_NB_CASES && len < sizeof(cases); i++)
		len += (size_t)snprintf(cases + len, sizeof(cases) - len, "%s%s",
			i % 4 == 0 ? "\n" : " ", tg_cases[i].name);
	return gpuapp_opts_parse(table, RTE_DIM(table),
		"Usage: %s [EAL options] -- [options]", tg_logtype, argc, argv);
}

static int
print_help(void *o)
{
	char *help[] = { (char *)"dpdk-test-gpudev", (char *)"--help", NULL };

	return parse_args(2, help, o) > 0 ? 0 : 1;
}

/* The CUDA runtime ordinal of the GPU behind a gpudev device. */
static int
find_cuda_device(const struct rte_gpu_info *info, int cuda_count, int *cuda_dev)
{
	/* PCI-probed devices are named by their PCI address. */
	if (cudaDeviceGetByPCIBusId(cuda_dev, info->name) == cudaSuccess)
		return 0;
	(void)cudaGetLastError();
	/* A vdev has another name; its context tells the device, in the
	 * primary only: in a secondary it is the primary's context. */
	if (rte_eal_process_type() == RTE_PROC_PRIMARY &&
			info->context != 0 && gd_init() == 0 &&
			gd_ctx_device(info->context, cuda_dev) == 0)
		return 0;
	if (cuda_count == 1) {
		*cuda_dev = 0;
		return 0;
	}
	return -1;
}

/* One GPU's environment: 0, or the exit status after saying why not. */
static int
env_setup(struct tg_env *env, int16_t dev_id, int cuda_count,
		const struct tg_opts *o, uint64_t seed)
{
	cudaError_t cerr;

	memset(env, 0, sizeof(*env));
	env->dev_id = dev_id;
	if (rte_gpu_info_get(dev_id, &env->info) < 0) {
		printf("FAIL setup [gpu %d]: rte_gpu_info_get: %s\n", dev_id,
			tg_errno_str(rte_errno));
		return 1;
	}
	if (env->info.name == NULL ||
			find_cuda_device(&env->info, cuda_count, &env->cuda_dev) < 0) {
		printf("FAIL setup [gpu %d]: cannot tell which CUDA device it is (%s)\n",
			dev_id, env->info.name ? env->info.name : "no name");
		return 1;
	}
	cerr = cudaSetDevice(env->cuda_dev);
	if (cerr != cudaSuccess) {
		printf("FAIL setup [gpu %d]: cudaSetDevice(%d): %s\n", dev_id,
			env->cuda_dev, cudaGetErrorString(cerr));
		return 1;
	}
	env->seed = seed;
	env->stress_threads = o->stress_threads;
	env->stress_ops = o->stress_ops;
	printf("# gpudev %d '%s', CUDA device %d\n", dev_id, env->info.name,
		env->cuda_dev);
	return 0;
}

/* The case's line, naming the GPU it ran on ("all": across GPUs). */
static void
report(const struct tg_case *c, const char *gpu, const struct tg_result *res,
		unsigned int *passed, unsigned int *failed, unsigned int *skipped)
{
	switch (res->status) {
	case TG_PASS:
		(*passed)++;
		if (res->msg[0] != '\0')
			printf("PASS %s [gpu %s] (%s)\n", c->name, gpu, res->msg);
		else
			printf("PASS %s [gpu %s]\n", c->name, gpu);
		break;
	case TG_SKIP:
		(*skipped)++;
		printf("SKIP %s [gpu %s]: %s\n", c->name, gpu, res->msg);
		break;
	default:
		(*failed)++;
		printf("FAIL %s [gpu %s]: %s\n", c->name, gpu, res->msg);
		break;
	}
	/* Case lines interleave with driver logs on stderr. */
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct tg_opts o = {
		.gpu = -1,
		.stress_threads = 8,
		.stress_ops = 2000,
	};
	struct tg_env envs[RTE_GPU_DEFAULT_MAX];
	int16_t ids[RTE_GPU_DEFAULT_MAX];
	unsigned int passed = 0, failed = 0, skipped = 0;
	unsigned int nb_envs, g;
	int ret, cuda_count = 0;
	cudaError_t cerr;
	uint64_t seed;
	size_t i;

	/* --help and --version need no EAL (nor hugepages, nor a GPU). */
	ret = gpuapp_early_answer(argc, argv, "dpdk-test-gpudev", print_help,
		&o);
	if (ret >= 0)
		return ret;
	ret = gpuapp_eal_init(argc, argv);
	if (ret < 0) {
		TG_LOG(ERR, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return EXIT_USAGE;
	}
	argc -= ret;
	argv += ret;
	ret = parse_args(argc, argv, &o);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret > 0 ? 0 : EXIT_USAGE;
	}

	if (rte_gpu_count_avail() == 0) {
		printf("SKIP: no GPU probed by %s (let the PCI scan find "
			"an NVIDIA GPU, or add --vdev gpu_cuda0,dev=0)\n",
			gpuapp_gpu_driver());
		rte_eal_cleanup();
		return EXIT_SKIP;
	}
	cerr = cudaGetDeviceCount(&cuda_count);
	if (cerr != cudaSuccess || cuda_count == 0) {
		printf("SKIP: CUDA runtime reports no device (%s)\n",
			cerr != cudaSuccess ? cudaGetErrorString(cerr) : "count 0");
		rte_eal_cleanup();
		return EXIT_SKIP;
	}

	nb_envs = 0;
	if (o.gpu >= 0) {
		if (!rte_gpu_is_valid((int16_t)o.gpu)) {
			TG_LOG(ERR, "--gpu %d: not a valid gpudev device\n", o.gpu);
			rte_eal_cleanup();
			return EXIT_USAGE;
		}
		ids[nb_envs++] = (int16_t)o.gpu;
	} else {
		int16_t id;

		/* Parents only: children are the child case's own. */
		for (id = rte_gpu_find_next(0, RTE_GPU_ID_NONE);
				id >= 0 && nb_envs < RTE_DIM(ids);
				id = rte_gpu_find_next(id + 1, RTE_GPU_ID_NONE))
			ids[nb_envs++] = id;
	}
	seed = o.seed_given ? o.seed : (uint64_t)time(NULL) ^
		((uint64_t)rte_rdtsc() << 20);
	for (i = 0; i < nb_envs; i++) {
		ret = env_setup(&envs[i], ids[i], cuda_count, &o, seed);
		if (ret != 0) {
			rte_eal_cleanup();
			return ret;
		}
	}
	printf("# %u GPU(s), seed %" PRIu64 "\n", nb_envs, seed);
	fflush(stdout);

	for (i = 0; i < TG_NB_CASES; i++) {
		if (o.any_selected && !o.selected[i])
			continue;
		if (tg_cases[i].fn == NULL) {
			struct tg_result res = { .status = TG_PASS };

			if (cudaSetDevice(envs[0].cuda_dev) != cudaSuccess)
				tg_fail(&res, "cudaSetDevice(%d) failed", envs[0].cuda_dev);
			else
				tg_case_cross_gpu(envs, nb_envs, &res);
			report(&tg_cases[i], "all", &res, &passed, &failed, &skipped);
			continue;
		}
		for (g = 0; g < nb_envs; g++) {
			struct tg_result res = { .status = TG_PASS };
			cudaError_t e = cudaSetDevice(envs[g].cuda_dev);
			char label[16];

			/* A case runs with its own GPU current. */
			if (e != cudaSuccess)
				tg_fail(&res, "cudaSetDevice(%d): %s", envs[g].cuda_dev,
					cudaGetErrorString(e));
			else
				tg_cases[i].fn(&envs[g], &res);
			snprintf(label, sizeof(label), "%d", envs[g].dev_id);
			report(&tg_cases[i], label, &res, &passed, &failed, &skipped);
		}
	}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	fflush(stdout);

	rte_eal_cleanup();
	return failed != 0 ? 1 : 0;
}
