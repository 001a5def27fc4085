/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU build over the caller's buffers and stream (gpugen_frames.h):
 * the table and scratch in device memory of the CUDA runtime, the build
 * kernel of gpugen_kernels.cu. No DPDK.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpugen.h"
#include "gpugen_cuda.h"
#include "gpugen_frames.h"
#include "gpugen_frames_priv.h"
#include "gpugen_priv.h"

void
gpugen_frames_close(struct gpugen_frames *f)
{
	void *mem[2];

	if (f == NULL)
		return;
	mem[0] = f->table;
	mem[1] = f->scratch.base;
	for (unsigned int i = 0; i < 2; i++) {
		int rc = gpugen_cuda_dev_free(mem[i]);

		if (rc != 0)
			fprintf(stderr, "gpugen: %s: cudaFree: %s\n",
				i == 0 ? "table" : "build scratch",
				gpucuda_strerror(rc));
	}
	free(f);
}

int
gpugen_frames_open(const struct gpugen *g, struct gpugen_frames **out,
		char *err, size_t errlen)
{
	struct gpugen_frames *f;
	const void *t;
	size_t len, slen;
	int rc, sms;

	if (out == NULL)
		return gpugen_fail(err, errlen, -EINVAL, "no handle to return");
	*out = NULL;
	if (g == NULL || gpugen_n_streams(g) == 0)
		return gpugen_fail(err, errlen, -EINVAL, "no generator, or one "
			"with no streams");
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return gpugen_fail(err, errlen, -ENOMEM, "handle: out of memory");
	f->g = g;
	f->max_len = gpugen_max_len(g);
	rc = gpugen_cuda_current(&f->dev, &sms);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -ENODEV, "CUDA runtime: no "
			"device: %s", gpucuda_strerror(rc));
		goto fail;
	}
	t = gpugen_table(g, &len);
	rc = gpugen_cuda_dev_alloc(&f->table, len);
	if (rc != 0) {
		f->table = NULL;
		rc = gpugen_fail(err, errlen, -ENOMEM, "table: %zu bytes of "
			"device memory: %s", len, gpucuda_strerror(rc));
		goto fail;
	}
	rc = gpucuda_copy(f->table, t, len);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -EIO, "table copy: %s",
			gpucuda_strerror(rc));
		goto fail;
	}
	slen = gpugen_cuda_scratch_shape(f->max_len,
		sms > 0 ? (uint32_t)sms : 0, &f->scratch);
	rc = gpugen_cuda_dev_alloc((void **)&f->scratch.base, slen);
	if (rc != 0) {
		f->scratch.base = NULL;
		rc = gpugen_fail(err, errlen, -ENOMEM, "build scratch: %zu "
			"bytes of device memory: %s", slen, gpucuda_strerror(rc));
		goto fail;
	}
	*out = f;
	return 0;
fail:
	gpugen_frames_close(f);
	return rc;
}

int
gpugen_frames_on_dev(const struct gpugen_frames *f, char *err, size_t errlen)
{
	int dev, rc = gpugen_cuda_current(&dev, NULL);

	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "CUDA runtime: %s",
			gpucuda_strerror(rc));
	if (dev != f->dev)
		return gpugen_fail(err, errlen, -EINVAL, "the thread's current "
			"CUDA device is %d, the handle's %d", dev, f->dev);
	return 0;
}

int
gpugen_fill_conf_check(uint32_t rings, uint32_t items, uint32_t per_item,
		const char *unit, char *err, size_t errlen)
{
	if (rings == 0 || rings > GPUCOMM_MAX_RINGS)
		return gpugen_fail(err, errlen, -EINVAL, "%u rings: 1 to %u",
			rings, GPUCOMM_MAX_RINGS);
	if (items < 2 || items > 1024)
		return gpugen_fail(err, errlen, -EINVAL, "%u items a ring: 2 to "
			"1024 (one in flight while the next is posted)", items);
	if (per_item == 0 || per_item > GPUCOMM_PKTS_MAX)
		return gpugen_fail(err, errlen, -EINVAL, "%s of %u: 1 to %u",
			unit, per_item, GPUCOMM_PKTS_MAX);
	return 0;
}

int
gpugen_frames_build(struct gpugen_frames *f,
		const struct gpugen_frames_dst *dst, uint64_t first, uint32_t n,
		uint64_t tx_ns, uint32_t *lens, gpugen_cuda_stream_t stream,
		char *err, size_t errlen)
{
	struct gpugen_cuda_dst d = { .addrs = NULL };
	uint32_t room;
	int rc;

	if (f == NULL || dst == NULL)
		return gpugen_fail(err, errlen, -EINVAL, "no handle or no "
			"destination");
	if (n == 0)
		return gpugen_fail(err, errlen, -EINVAL, "a build of 0 packets");
	if ((dst->flags & ~GPUGEN_FRAMES_IN_GPU) != 0)
		return gpugen_fail(err, errlen, -EINVAL, "flags %#x: unknown "
			"bits %#x", dst->flags, dst->flags & ~GPUGEN_FRAMES_IN_GPU);
	if (dst->addrs != NULL) {
		room = dst->room;
		d.addrs = dst->addrs;
	} else if (dst->base != NULL) {
		room = dst->stride;
		/* The last frame's end must be an address. */
		if ((uint64_t)(n - 1) * dst->stride + dst->stride >
				UINTPTR_MAX - (uintptr_t)dst->base)
			return gpugen_fail(err, errlen, -EINVAL, "%u frames of "
				"%u bytes from %p pass the end of the address "
				"space", n, dst->stride, dst->base);
		/* The ring form with as many slots as packets: slot k. */
		d.ring = dst->base;
		d.stride = dst->stride;
		d.slots = n;
		d.slot0 = 0;
	} else {
		return gpugen_fail(err, errlen, -EINVAL, "no frame buffers: "
			"neither addrs nor base");
	}
	if (room < f->max_len)
		return gpugen_fail(err, errlen, -EMSGSIZE, "frame buffers of %u "
			"bytes cannot hold the longest frame (%u bytes)", room,
			f->max_len);
	rc = gpugen_frames_on_dev(f, err, errlen);
	if (rc != 0)
		return rc;
	d.in_gpu = (dst->flags & GPUGEN_FRAMES_IN_GPU) != 0;
	rc = gpugen_cuda_build(f->table, &d, &f->scratch, first, n, tx_ns,
		stream);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "build kernel launch on "
			"device %d: %s", f->dev, gpucuda_strerror(rc));
	if (lens != NULL)
		for (uint32_t k = 0; k < n; k++)
			lens[k] = gpugen_len(f->g, first + k);
	return 0;
}
