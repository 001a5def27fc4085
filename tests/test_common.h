/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPU_CUDA_TEST_COMMON_H
#define GPU_CUDA_TEST_COMMON_H

/* Minimal case/check bookkeeping for the host tests: one line per case,
 * a closing "N passed, N failed" line. */

#include <stdio.h>

extern unsigned int test_passed, test_failed;
extern int test_case_failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("  check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		fflush(stdout); \
		test_case_failed = 1; \
	} \
} while (0)

#define RUN_CASE(fn) do { \
	test_case_failed = 0; \
	fn(); \
	if (test_case_failed) { \
		test_failed++; \
		printf("FAIL %s\n", #fn); \
	} else { \
		test_passed++; \
		printf("PASS %s\n", #fn); \
	} \
	fflush(stdout); \
} while (0)

#define TEST_SUMMARY_AND_EXIT() do { \
	printf("%u passed, %u failed\n", test_passed, test_failed); \
	return test_failed == 0 ? 0 : 1; \
} while (0)

#define TEST_GLOBALS \
	unsigned int test_passed, test_failed; \
	int test_case_failed

#endif /* GPU_CUDA_TEST_COMMON_H */
