/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pattern.h"
#include "tg.h"

static enum tg_status
tg_verdict(struct tg_result *res, enum tg_status st, const char *fmt,
		va_list ap)
{
	res->status = st;
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	return st;
}

enum tg_status
tg_fail(struct tg_result *res, const char *fmt, ...)
{
	enum tg_status st;
	va_list ap;

	/* Keep the first reason: later ones are usually its consequences. */
	if (res->status == TG_FAIL)
		return TG_FAIL;
	va_start(ap, fmt);
	st = tg_verdict(res, TG_FAIL, fmt, ap);
	va_end(ap);
	return st;
}

enum tg_status
tg_skip(struct tg_result *res, const char *fmt, ...)
{
	enum tg_status st;
	va_list ap;

	va_start(ap, fmt);
	st = tg_verdict(res, TG_SKIP, fmt, ap);
	va_end(ap);
	return st;
}

enum tg_status
tg_pass(struct tg_result *res, const char *fmt, ...)
{
	enum tg_status st;
	va_list ap;

	va_start(ap, fmt);
	st = tg_verdict(res, TG_PASS, fmt, ap);
	va_end(ap);
	return st;
}

uint64_t
tg_seed(const struct tg_env *env, uint64_t salt)
{
	/* Distinct, non-zero seeds per use: xorshift state must not be 0. */
	return tg_pattern_word(env->seed, salt) | 1;
}

const char *
tg_errno_str(int err)
{
	/* gpudev stores -EPERM in rte_errno on some driver failures. */
	return strerror(err < 0 ? -err : err);
}
