/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * comm_flag: a communication flag carries values both ways between the
 * CPU (rte_gpu_comm_set_flag/get_flag_value) and a running kernel.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"
#include "tg_time.h"

/* Kernel's own give-up time: longer than any CPU wait below. */
#define KERNEL_TIMEOUT_NS (10ULL * 1000000000ULL)
#define CPU_WAIT_NS (5ULL * 1000000000ULL)

static enum tg_status
check_bad_args(const struct tg_env *env, struct tg_result *res)
{
	struct rte_gpu_comm_flag f;

	if (rte_gpu_comm_create_flag(env->dev_id, NULL, RTE_GPU_COMM_FLAG_CPU)
			!= -EINVAL || rte_errno != EINVAL)
		return tg_fail(res, "create_flag(NULL) did not fail with EINVAL");
	memset(&f, 0, sizeof(f));
	if (rte_gpu_comm_create_flag(env->dev_id, &f,
			(enum rte_gpu_comm_flag_type)1) != -EINVAL ||
			rte_errno != EINVAL)
		return tg_fail(res, "create_flag(unknown type) did not fail with EINVAL");
	if (rte_gpu_comm_set_flag(NULL, 1) != -EINVAL ||
			rte_gpu_comm_get_flag_value(NULL, NULL) != -EINVAL ||
			rte_gpu_comm_destroy_flag(NULL) != -EINVAL)
		return tg_fail(res, "flag calls on NULL did not fail with EINVAL");
	return TG_PASS;
}

/*
 * The ring library's flag echo (gpucomm_kernel.h) over the flag's memory:
 * the kernel must wait while the flag holds 0, see the CPU's value
 * through rte_gpu_comm_set_flag and answer through the same word, which
 * rte_gpu_comm_get_flag_value must return.
 */
static enum tg_status
run_handshake(const struct tg_env *env, struct tg_result *res,
		struct rte_gpu_comm_flag *f)
{
	uint64_t rnd = tg_seed(env, 400);
	/* An ask is odd, and the echo's quit value is no ask. */
	uint32_t want = ((uint32_t)rnd & 0x7ffffffeU) | 1, reply = want + 1;
	struct gpucomm_echo *echo = NULL;
	struct gpucomm_echo_state st;
	uint32_t v = 0;
	uint64_t deadline;
	int err;

	if (rte_gpu_comm_set_flag(f, 0) != 0)
		return tg_fail(res, "set_flag(0): %s", tg_errno_str(rte_errno));
	if (rte_gpu_comm_get_flag_value(f, &v) != 0 || v != 0)
		return tg_fail(res, "get_flag_value after set 0 gave %u", v);

	err = gpucomm_echo_start(f->ptr, 1, KERNEL_TIMEOUT_NS, &echo);
	if (err != 0)
		return tg_fail(res, "launch flag kernel: %s", gpucuda_strerror(err));

	deadline = tg_now_ns() + CPU_WAIT_NS;
	do {
		gpucomm_echo_peek(echo, &st);
	} while (!st.started && tg_now_ns() < deadline);
	if (!st.started) {
		tg_fail(res, "flag kernel did not start within 5 s");
		goto finish;
	}
	/* The flag still holds 0: the kernel must be waiting, not done. */
	tg_sleep_us(20000);
	gpucomm_echo_peek(echo, &st);
	if (st.done) {
		tg_fail(res, "kernel ended before the flag was set (saw %#x, "
			"timed out %u)", st.seen, st.timed_out);
		goto finish;
	}

	if (rte_gpu_comm_set_flag(f, want) != 0) {
		tg_fail(res, "set_flag(%#x): %s", want, tg_errno_str(rte_errno));
		goto finish;
	}
	/* The kernel answers through the same flag. */
	deadline = tg_now_ns() + CPU_WAIT_NS;
	do {
		if (rte_gpu_comm_get_flag_value(f, &v) != 0) {
			tg_fail(res, "get_flag_value: %s", tg_errno_str(rte_errno));
			goto finish;
		}
	} while (v != reply && tg_now_ns() < deadline);
	if (v != reply)
		tg_fail(res, "CPU read flag %#x, kernel should have answered %#x "
			"after seeing %#x", v, reply, want);

finish:
	/* Ends a kernel still waiting (a failure above) at once. */
	if (v != reply && rte_gpu_comm_set_flag(f, GPUCOMM_ECHO_QUIT) != 0)
		tg_fail(res, "set_flag(quit): %s", tg_errno_str(rte_errno));
	err = gpucomm_echo_finish(echo, &st);
	if (err != 0)
		return tg_fail(res, "flag kernel: %s", gpucuda_strerror(err));
	if (res->status == TG_FAIL)
		return TG_FAIL;
	if (st.timed_out)
		return tg_fail(res, "kernel timed out waiting for %#x, last saw %#x",
			want, st.seen);
	if (st.seen != want || st.rounds != 1)
		return tg_fail(res, "kernel saw %#x in %u rounds, CPU set %#x once",
			st.seen, st.rounds, want);
	return TG_PASS;
}

enum tg_status
tg_case_comm_flag(const struct tg_env *env, struct tg_result *res)
{
	struct rte_gpu_comm_flag f;

	if (check_bad_args(env, res) != TG_PASS)
		return TG_FAIL;
	memset(&f, 0, sizeof(f));
	if (rte_gpu_comm_create_flag(env->dev_id, &f, RTE_GPU_COMM_FLAG_CPU) != 0)
		return tg_fail(res, "create_flag: %s", tg_errno_str(rte_errno));
	if (f.ptr == NULL || f.dev_id != (uint16_t)env->dev_id ||
			f.mtype != RTE_GPU_COMM_FLAG_CPU)
		tg_fail(res, "create_flag filled ptr %p dev %u type %d",
			(void *)f.ptr, f.dev_id, (int)f.mtype);
	else
		run_handshake(env, res, &f);
	if (rte_gpu_comm_destroy_flag(&f) != 0)
		tg_fail(res, "destroy_flag: %s", tg_errno_str(rte_errno));
	return res->status == TG_FAIL ? TG_FAIL : TG_PASS;
}
