/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks of every C test, one dialect:
 *
 *   CHECK(cond, fmt, ...)   a failed cond is counted and said on stderr
 *                           with file:line, the condition and the message
 *   CHECK_EQ(a, b)          the same for a == b, with both values
 *   CHECK_CASE(fn)          runs void fn(void) and says PASS or FAIL fn
 *   check_finish(name)      the closing line; the exit status (0 or 1)
 *
 * A case is any stretch between check_case_begin() and check_case_end()
 * (CHECK_CASE is the common one); check_case_failed() tells whether a
 * check of the running case failed, for cases that skip their later steps
 * once an earlier one did. A case whose verdict is its own, not a check's,
 * is counted with check_case_count(). The state is static: a test keeps
 * its checks in one translation unit.
 */
#ifndef TESTS_SUPPORT_CHECK_H
#define TESTS_SUPPORT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

/* Failures past this many are counted, not said: a check in a loop over
 * a million packets must not bury the first ones. */
#define CHECK_SAY_MAX 50

static struct {
	unsigned int failed;		/* checks, since the start */
	unsigned int case_start;	/* failed when the running case began */
	unsigned int cases_passed;
	unsigned int cases_failed;
} check_state;

static inline void __attribute__((format(printf, 4, 5)))
check_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	if (++check_state.failed > CHECK_SAY_MAX)
		return;
	/* After what the test said on stdout so far, not before it. */
	fflush(stdout);
	fprintf(stderr, "%s:%d: CHECK(%s) failed: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond, ...) do { \
	if (!(cond)) \
		check_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
} while (0)

#define CHECK_EQ(a, b) CHECK((a) == (b), "%s = %llu, %s = %llu", \
	#a, (unsigned long long)(a), #b, (unsigned long long)(b))

/* Checks failed so far, all cases together. */
static inline unsigned int
check_failures(void)
{
	return check_state.failed;
}

static inline void
check_case_begin(void)
{
	check_state.case_start = check_state.failed;
}

/* Non-zero once a check of the running case failed. */
static inline int
check_case_failed(void)
{
	return check_state.failed != check_state.case_start;
}

/* Counts a case as passed (failed 0) or failed, saying nothing. */
static inline void
check_case_count(int failed)
{
	if (failed)
		check_state.cases_failed++;
	else
		check_state.cases_passed++;
}

/* Says PASS or FAIL name and counts it; returns check_case_failed(). */
static inline int
check_case_end(const char *name)
{
	const int failed = check_case_failed();

	check_case_count(failed);
	printf("%s %s\n", failed ? "FAIL" : "PASS", name);
	fflush(stdout);
	return failed;
}

#define CHECK_CASE(fn) do { \
	check_case_begin(); \
	fn(); \
	check_case_end(#fn); \
} while (0)

/* Non-zero once a check or a counted case failed. */
static inline int
check_any_failed(void)
{
	return check_state.failed != 0 || check_state.cases_failed != 0;
}

/* The closing line of test name; 0 when nothing failed, else 1. */
static inline int
check_finish(const char *name)
{
	const unsigned int cases = check_state.cases_passed +
		check_state.cases_failed;

	fflush(stdout);
	if (cases != 0)
		printf("%s: %u case(s) passed, %u failed\n", name,
			check_state.cases_passed, check_state.cases_failed);
	if (check_any_failed()) {
		fprintf(stderr, "%s: %u check(s) failed\n", name,
			check_state.failed);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

#endif /* TESTS_SUPPORT_CHECK_H */
