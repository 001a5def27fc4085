/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal assertions: report every failure, exit non-zero at the end. */
#ifndef GPURX_TEST_COMMON_H
#define GPURX_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		test_failures++; \
		if (test_failures <= 50) { \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", \
				__FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} \
} while (0)

#define CHECK_EQ(a, b) CHECK((a) == (b), "%s = %llu, %s = %llu", \
	#a, (unsigned long long)(a), #b, (unsigned long long)(b))

static inline int
test_finish(const char *name)
{
	if (test_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

#endif /* GPURX_TEST_COMMON_H */
