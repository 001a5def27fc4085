/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_H
#define TG_H

/* What every test case shares: the device under test and the verdict. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_gpudev.h>

enum tg_status {
	TG_PASS,
	TG_FAIL,
	TG_SKIP,
};

struct tg_result {
	enum tg_status status;
	char msg[512];
};

struct tg_env {
	int16_t dev_id;		/* gpudev device under test */
	int cuda_dev;		/* CUDA runtime ordinal of the same GPU */
	struct rte_gpu_info info;
	uint64_t seed;		/* printed, so a failing run can be replayed */
	unsigned int stress_threads;
	unsigned int stress_ops;
};

typedef enum tg_status (tg_case_fn)(const struct tg_env *env,
		struct tg_result *res);

/* Record a verdict with its reason and return it (for `return tg_fail()`). */
enum tg_status tg_fail(struct tg_result *res, const char *fmt, ...)
	__rte_format_printf(2, 3);
enum tg_status tg_skip(struct tg_result *res, const char *fmt, ...)
	__rte_format_printf(2, 3);
/* PASS with a note shown after the name (measurements). */
enum tg_status tg_pass(struct tg_result *res, const char *fmt, ...)
	__rte_format_printf(2, 3);

/* Seed for one use inside a case, derived from the run seed. */
uint64_t tg_seed(const struct tg_env *env, uint64_t salt);

/* rte_errno as text, for messages. */
const char *tg_errno_str(int err);

tg_case_fn tg_case_info;
tg_case_fn tg_case_mem_alloc_kernel;
tg_case_fn tg_case_mem_register_kernel;
tg_case_fn tg_case_cpu_map;
tg_case_fn tg_case_wmb;
tg_case_fn tg_case_comm_flag;
tg_case_fn tg_case_comm_list;
tg_case_fn tg_case_errors;
tg_case_fn tg_case_child;
tg_case_fn tg_case_stress;
tg_case_fn tg_case_close;
/* Across the n GPUs under test (envs[0] current on return). */
enum tg_status tg_case_cross_gpu(const struct tg_env *envs, unsigned int n,
		struct tg_result *res);

#endif /* TG_H */
