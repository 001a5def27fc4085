/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen-cuda's DPDK-free entry point (gpugen_frames.h): bad
 * arguments refused with their errno and a message, before and after a
 * device is involved. With no GPU, opening says -ENODEV and the checks
 * that need an open handle are left out; the frames themselves are
 * compared with the CPU reference by examples/gpugen_frames on a GPU.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "gpugen.h"
#include "gpugen_frames.h"

static void
test_open(void)
{
	struct gpugen_frames *f = (struct gpugen_frames *)&f;
	struct gpugen_frames_dst dst = { .base = &dst, .stride = 4096 };
	struct gpugen *g;
	char err[256] = "";

	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK_EQ(gpugen_frames_open(g, NULL, err, sizeof(err)), -EINVAL);
	CHECK_EQ(gpugen_frames_open(g, &f, err, sizeof(err)), -EINVAL);
	CHECK(f == NULL && err[0] != '\0', "no streams: handle %p, '%s'",
		(void *)f, err);
	CHECK_EQ(gpugen_frames_open(NULL, &f, NULL, 0), -EINVAL);
	CHECK_EQ(gpugen_frames_build(NULL, &dst, 0, 1, 0, NULL, NULL, NULL, 0),
		-EINVAL);
	gpugen_frames_close(NULL);
	gpugen_free(g);
}

static void
test_build_args(void)
{
	struct gpugen_frames *f;
	struct gpugen_frames_dst dst = { 0 };
	struct gpugen *g;
	char err[256] = "";
	int rc;

	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK(gpugen_add_spec(g, "ipv4,udp,size=64-1518,stamp=off", err,
		sizeof(err)) == 1, "spec: %s", err);
	rc = gpugen_frames_open(g, &f, err, sizeof(err));
	if (rc == -ENODEV) {
		CHECK(f == NULL && err[0] != '\0', "no GPU: '%s'", err);
		printf("no CUDA device (%s): the checks of an open handle "
			"left out\n", err);
		gpugen_free(g);
		return;
	}
	CHECK(rc == 0, "gpugen_frames_open: %d %s", rc, err);
	if (rc != 0) {
		gpugen_free(g);
		return;
	}
	CHECK_EQ(gpugen_frames_build(f, NULL, 0, 1, 0, NULL, NULL, NULL, 0),
		-EINVAL);
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 1, 0, NULL, NULL, NULL, 0),
		-EINVAL);
	dst.base = &dst;
	dst.stride = 1514;
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 0, 0, NULL, NULL, NULL, 0),
		-EINVAL);
	dst.flags = 0x80;
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 1, 0, NULL, NULL, NULL, 0),
		-EINVAL);
	dst.flags = 0;
	dst.stride = 1513;
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 1, 0, NULL, NULL, err,
		sizeof(err)), -EMSGSIZE);
	dst.base = (void *)(UINTPTR_MAX - 4096);
	dst.stride = 2048;
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 3, 0, NULL, NULL, err,
		sizeof(err)), -EINVAL);
	dst.base = NULL;
	dst.addrs = (void *const *)&dst;
	dst.room = 100;
	CHECK_EQ(gpugen_frames_build(f, &dst, 0, 1, 0, NULL, NULL, err,
		sizeof(err)), -EMSGSIZE);
	gpugen_frames_close(f);
	gpugen_free(g);
}

int
main(void)
{
	CHECK_CASE(test_open);
	CHECK_CASE(test_build_args);
	return check_finish("gpugen-frames");
}
