/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen-cuda's DPDK-free entry point (gpugen_frames.h): bad
 * arguments refused with their errno and a message, before and after a
 * device is involved; on a GPU, frames built into device memory in place
 * and into mapped host memory through the scratch, both strided, against
 * the CPU reference byte for byte (examples/gpugen_frames does it through
 * the installed libraries, with an address array). With no GPU, opening
 * says -ENODEV and the rest is left out. Named *gpu-test so
 * scripts/run-gpu-suite.sh runs it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

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

#define N 4096
#define STRIDE 1536

/* Packets first .. first + N - 1 of g built into buf (mapped host memory,
 * or device memory copied to host) against the CPU build. */
static void
gpu_vs_cpu(struct gpugen *g, struct gpugen_frames *f, uint8_t *buf,
		uint8_t *host, uint32_t flags, uint64_t first)
{
	static uint32_t lens[N];
	static uint8_t ref[STRIDE];
	struct gpugen_frames_dst dst = { .base = buf, .stride = STRIDE,
		.flags = flags };
	char err[256] = "";
	uint64_t bad = 0;

	CHECK(gpugen_frames_build(f, &dst, first, N, 77, lens, NULL, err,
		sizeof(err)) == 0, "build: %s", err);
	if (host != buf)
		CHECK(cudaMemcpy(host, buf, (size_t)N * STRIDE,
			cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
	else
		CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
	for (uint32_t k = 0; k < N; k++) {
		uint32_t len = gpugen_build_cpu(g, first + k, 77, ref,
			sizeof(ref), NULL, NULL);

		bad += len == 0 || lens[k] != len ||
			memcmp(host + (size_t)k * STRIDE, ref, len) != 0;
	}
	CHECK(bad == 0, "%s: %lu of %d frames differ", flags ?
		"device memory" : "mapped host memory", (unsigned long)bad, N);
}

static void
test_frames(void)
{
	static uint8_t host[(size_t)N * STRIDE];
	struct gpugen_frames *f;
	uint8_t *dev = NULL, *mapped = NULL;
	struct gpugen *g;
	char err[256] = "";
	int rc;

	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK(gpugen_add_spec(g, "ipv4,udp,var=udp.sport:inc:1-9,"
		"tuple=ipv4.src:udp.dport:10.0.0.1-10.0.0.77:5-50,"
		"size=100-1518:random", err, sizeof(err)) == 1, "%s", err);
	CHECK(gpugen_add_spec(g, "imix,tcp,vlan=5", err,
		sizeof(err)) == 3, "%s", err);
	rc = gpugen_frames_open(g, &f, err, sizeof(err));
	if (rc != 0) {
		CHECK(rc == -ENODEV, "gpugen_frames_open: %d %s", rc, err);
		gpugen_free(g);
		return;
	}
	if (cudaMalloc((void **)&dev, (size_t)N * STRIDE) == cudaSuccess &&
			cudaHostAlloc((void **)&mapped, (size_t)N * STRIDE,
			cudaHostAllocMapped) == cudaSuccess) {
		gpu_vs_cpu(g, f, dev, host, GPUGEN_FRAMES_IN_GPU, 1000003);
		gpu_vs_cpu(g, f, mapped, mapped, 0, 5);
	} else {
		CHECK(0, "cudaMalloc or cudaHostAlloc of %d frames", N);
	}
	CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
	gpugen_frames_close(f);
	(void)cudaFreeHost(mapped);
	(void)cudaFree(dev);
	gpugen_free(g);
}

int
main(void)
{
	CHECK_CASE(test_open);
	CHECK_CASE(test_build_args);
	CHECK_CASE(test_frames);
	return check_finish("gpugen-frames");
}
