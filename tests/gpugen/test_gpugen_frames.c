/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen-cuda's DPDK-free entry point (gpugen_frames.h): bad
 * arguments refused with their errno and a message, before and after a
 * device is involved; on a GPU, frames built into device memory in place
 * and into mapped host memory through the scratch, both strided, against
 * the CPU reference byte for byte (examples/gpugen_frames does it through
 * the installed libraries, with an address array); and the persistent
 * fill over plain memory: its refusals, batches on two rings into device
 * and mapped host memory against the CPU build, a full ring, and a close
 * with batches in flight. With no GPU, opening says -ENODEV and the rest
 * is left out. Named *gpu-test so scripts/run-gpu-suite.sh runs it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "check.h"
#include "gpugen.h"
#include "gpugen_frames.h"

/* g's frames handle, or NULL after freeing g: no GPU (-ENODEV, said with
 * its reason, the rest of the case left out) or a failed check. */
static struct gpugen_frames *
open_or_skip(struct gpugen *g)
{
	struct gpugen_frames *f;
	char err[256] = "";
	int rc;

	rc = gpugen_frames_open(g, &f, err, sizeof(err));
	if (rc == -ENODEV) {
		CHECK(f == NULL && err[0] != '\0', "no GPU: '%s'", err);
		printf("no CUDA device (%s): the checks of an open handle "
			"left out\n", err);
	} else {
		CHECK(rc == 0, "gpugen_frames_open: %d %s", rc, err);
	}
	if (rc != 0) {
		gpugen_free(g);
		return NULL;
	}
	return f;
}

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

	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK(gpugen_add_spec(g, "ipv4,udp,size=64-1518,stamp=off", err,
		sizeof(err)) == 1, "spec: %s", err);
	f = open_or_skip(g);
	if (f == NULL)
		return;
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

/* N frames of device memory and N of mapped host memory. */
struct bufs {
	uint8_t *dev;
	uint8_t *mapped;
};

/* 0, or -1 after a failed check (what was taken is freed by bufs_done). */
static int
bufs_alloc(struct bufs *b)
{
	if (cudaMalloc((void **)&b->dev, (size_t)N * STRIDE) == cudaSuccess &&
			cudaHostAlloc((void **)&b->mapped, (size_t)N * STRIDE,
			cudaHostAllocMapped) == cudaSuccess)
		return 0;
	CHECK(0, "cudaMalloc or cudaHostAlloc of %d frames", N);
	return -1;
}

/* The end of a case on a GPU: everything it took given back. */
static void
bufs_done(struct bufs *b, struct gpugen *g, struct gpugen_frames *f)
{
	CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
	gpugen_frames_close(f);
	(void)cudaFreeHost(b->mapped);
	(void)cudaFree(b->dev);
	gpugen_free(g);
}

static void
test_frames(void)
{
	static uint8_t host[(size_t)N * STRIDE];
	struct gpugen_frames *f;
	struct bufs b = { NULL, NULL };
	struct gpugen *g;
	char err[256] = "";

	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK(gpugen_add_spec(g, "ipv4,udp,var=udp.sport:inc:1-9,"
		"tuple=ipv4.src:udp.dport:10.0.0.1-10.0.0.77:5-50,"
		"size=100-1518:random", err, sizeof(err)) == 1, "%s", err);
	CHECK(gpugen_add_spec(g, "imix,tcp,vlan=5", err,
		sizeof(err)) == 3, "%s", err);
	f = open_or_skip(g);
	if (f == NULL)
		return;
	if (bufs_alloc(&b) == 0) {
		gpu_vs_cpu(g, f, b.dev, host, GPUGEN_FRAMES_IN_GPU, 1000003);
		gpu_vs_cpu(g, f, b.mapped, b.mapped, 0, 5);
	}
	bufs_done(&b, g, f);
}

#define RINGS 2
#define ITEMS 4
#define BATCH 64

/* Batches of BATCH on each of RINGS rings into frames (device memory
 * when in_gpu, copied back to host; else mapped host memory host), until
 * N frames, against the CPU build. Ring r's batch k holds packets
 * base + (k * RINGS + r) * BATCH onwards. */
static void
ring_vs_cpu(struct gpugen *g, struct gpugen_frames *f, uint8_t *frames,
		uint8_t *host, int in_gpu)
{
	const struct gpugen_frames_ring_conf c = { .rings = RINGS,
		.items = ITEMS, .batch = BATCH,
		.flags = in_gpu ? GPUGEN_FRAMES_IN_GPU : 0 };
	static void *addrs[N];
	static uint8_t ref[STRIDE];
	const uint64_t base = 900001;
	struct gpugen_frames_ring *fr;
	uint32_t posted[RINGS] = { 0 }, polled[RINGS] = { 0 }, done = 0;
	uint64_t bad = 0;
	char err[256] = "";
	int rc;

	rc = gpugen_frames_ring_open(f, &c, &fr, err, sizeof(err));
	CHECK(rc == 0, "ring open: %d %s", rc, err);
	if (rc != 0)
		return;
	for (uint32_t k = 0; k < N; k++)
		addrs[k] = frames + (size_t)k * STRIDE;
	/* Round robin over the rings, ITEMS in flight each at most. */
	while (done < N / BATCH) {
		for (uint32_t r = 0; r < RINGS; r++) {
			uint32_t k = posted[r] * RINGS + r, n = 0;
			uint64_t first = 0;

			if (k < N / BATCH && gpugen_frames_ring_inflight(fr, r) <
					ITEMS) {
				rc = gpugen_frames_ring_post(fr, r,
					addrs + (size_t)k * BATCH, BATCH,
					base + (uint64_t)k * BATCH, 77);
				CHECK(rc == 0, "post ring %u batch %u: %d", r, k, rc);
				if (rc != 0)
					goto out;
				posted[r]++;
			}
			rc = gpugen_frames_ring_poll(fr, r, &first, &n);
			CHECK(rc >= 0, "poll ring %u: %d", r, rc);
			if (rc < 0)
				goto out;
			if (rc == 1) {
				k = polled[r]++ * RINGS + r;
				CHECK(first == base + (uint64_t)k * BATCH &&
					n == BATCH, "ring %u: batch %lu+%u, "
					"want %lu+%u: not in post order", r,
					(unsigned long)first, n,
					(unsigned long)(base + (uint64_t)k * BATCH),
					BATCH);
				done++;
			}
		}
	}
	if (in_gpu)
		CHECK(cudaMemcpy(host, frames, (size_t)N * STRIDE,
			cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
	for (uint32_t k = 0; k < N; k++) {
		uint32_t len = gpugen_build_cpu(g, base + k, 77, ref,
			sizeof(ref), NULL, NULL);

		bad += len == 0 || memcmp(host + (size_t)k * STRIDE, ref,
			len) != 0;
	}
	CHECK(bad == 0, "ring, %s: %lu of %d frames differ", in_gpu ?
		"device memory" : "mapped host memory", (unsigned long)bad, N);
	/* Full: ITEMS in flight on ring 0, the next refused. */
	for (uint32_t i = 0; i < ITEMS; i++)
		CHECK_EQ(gpugen_frames_ring_post(fr, 0, addrs, BATCH, 5, 0), 0);
	CHECK_EQ(gpugen_frames_ring_post(fr, 0, addrs, BATCH, 5, 0), -ENOSPC);
	CHECK_EQ(gpugen_frames_ring_inflight(fr, 0), ITEMS);
out:
	/* Closed with batches in flight: they are waited for. */
	rc = gpugen_frames_ring_close(fr, err, sizeof(err));
	CHECK(rc == 0, "ring close: %d %s", rc, err);
}

static void
test_ring(void)
{
	static uint8_t host[(size_t)N * STRIDE];
	struct gpugen_frames_ring_conf c = { .rings = 1, .items = 2,
		.batch = 1 };
	struct gpugen_frames_ring *fr = (struct gpugen_frames_ring *)&c;
	void *one[1] = { NULL };
	struct bufs b = { NULL, NULL };
	struct gpugen_frames *f;
	struct gpugen *g;
	char err[256] = "";
	int rc;

	CHECK_EQ(gpugen_frames_ring_open(NULL, &c, &fr, err, sizeof(err)),
		-EINVAL);
	CHECK(fr == NULL && err[0] != '\0', "no frames handle: '%s'", err);
	CHECK_EQ(gpugen_frames_ring_post(NULL, 0, one, 1, 0, 0), -EINVAL);
	CHECK_EQ(gpugen_frames_ring_poll(NULL, 0, NULL, NULL), -EINVAL);
	CHECK_EQ(gpugen_frames_ring_inflight(NULL, 0), 0);
	CHECK_EQ(gpugen_frames_ring_close(NULL, NULL, 0), 0);
	CHECK_EQ(gpugen_create(&g, NULL), 0);
	CHECK(gpugen_add_spec(g, "ipv4,udp,var=udp.sport:inc:1-9,"
		"size=100-1400:random,stamp=on", err, sizeof(err)) == 1, "%s", err);
	CHECK(gpugen_add_spec(g, "ipv6,tcp,vlan=7,size=1500", err,
		sizeof(err)) == 1, "%s", err);
	f = open_or_skip(g);
	if (f == NULL)
		return;
	/* Refusals, each naming what is wrong; nothing is opened. */
	{
		static const struct gpugen_frames_ring_conf bad[] = {
			{ 0, 4, 32, 0 }, { 33, 4, 32, 0 }, { 1, 1, 32, 0 },
			{ 1, 1025, 32, 0 }, { 1, 4, 0, 0 }, { 1, 4, 1025, 0 },
			{ 1, 4, 32, 0x80 },
		};

		for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			err[0] = '\0';
			rc = gpugen_frames_ring_open(f, &bad[i], &fr, err,
				sizeof(err));
			CHECK(rc == -EINVAL && fr == NULL && err[0] != '\0',
				"conf %u: %d '%s'", i, rc, err);
		}
	}
	c.rings = 1;
	c.items = 2;
	c.batch = 1;
	rc = gpugen_frames_ring_open(f, &c, &fr, err, sizeof(err));
	CHECK(rc == 0, "ring open: %d %s", rc, err);
	if (rc == 0) {
		CHECK_EQ(gpugen_frames_ring_post(fr, 1, one, 1, 0, 0), -EINVAL);
		CHECK_EQ(gpugen_frames_ring_post(fr, 0, one, 2, 0, 0), -EINVAL);
		CHECK_EQ(gpugen_frames_ring_post(fr, 0, one, 0, 0, 0), -EINVAL);
		/* A NULL buffer: refused, nothing posted. */
		CHECK_EQ(gpugen_frames_ring_post(fr, 0, one, 1, 0, 0), -EINVAL);
		CHECK_EQ(gpugen_frames_ring_inflight(fr, 0), 0);
		CHECK_EQ(gpugen_frames_ring_poll(fr, 0, NULL, NULL), 0);
		CHECK_EQ(gpugen_frames_ring_poll(fr, 1, NULL, NULL), -EINVAL);
		rc = gpugen_frames_ring_close(fr, err, sizeof(err));
		CHECK(rc == 0, "idle ring close: %d %s", rc, err);
	}
	if (bufs_alloc(&b) == 0) {
		ring_vs_cpu(g, f, b.dev, host, 1);
		ring_vs_cpu(g, f, b.mapped, b.mapped, 0);
	}
	bufs_done(&b, g, f);
}

int
main(void)
{
	CHECK_CASE(test_open);
	CHECK_CASE(test_build_args);
	CHECK_CASE(test_frames);
	CHECK_CASE(test_ring);
	return check_finish("gpugen-frames");
}
