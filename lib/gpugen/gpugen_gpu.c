/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU build's memory, all through gpudev: the stream table in GPU
 * memory (rte_gpu_mem_alloc) or in host pages registered with the GPU
 * (rte_gpu_mem_register), the kernel's build scratch in GPU memory, and
 * the per-burst address array in registered host pages. The CUDA
 * runtime only copies and launches (gpugen_kernels.cu).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include "gpugen.h"
#include "gpugen_cuda.h"
#include "gpugen_gpu_priv.h"
#include "gpugen_priv.h"

void *
gpugen_pinned(int16_t gpu_id, size_t *len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	*len = (*len + pg - 1) / pg * pg;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		rte_errno = errno;
		return NULL;
	}
	if (rte_gpu_mem_register(gpu_id, *len, m) != 0) {
		int e = rte_errno;

		munmap(m, *len);
		rte_errno = e;
		return NULL;
	}
	return m;
}

void
gpugen_unpin(int16_t gpu_id, void *m, size_t len)
{
	if (m == NULL)
		return;
	/* Still mapped for the GPU when this fails: the pages must stay. */
	if (rte_gpu_mem_unregister(gpu_id, m) != 0)
		fprintf(stderr, "gpugen: rte_gpu_mem_unregister: %s\n",
			rte_strerror(rte_errno));
	else
		munmap(m, len);
}

/*
 * Size and allocate gg's build scratch for a GPU of sms multiprocessors
 * (0 when gpudev does not say).
 */
static int
scratch_alloc(struct gpugen_gpu *gg, uint32_t sms, char *err, size_t errlen)
{
	struct gpugen_cuda_scratch sc;
	size_t len = gpugen_cuda_scratch_shape(gg->max_len, sms, &sc);

	sc.base = rte_gpu_mem_alloc(gg->gpu_id, len, 16);
	if (sc.base == NULL) {
		/* A failure must not read as success should rte_errno be
		 * left unset. */
		int e = rte_errno != 0 ? rte_errno : ENOMEM;

		return gpugen_fail(err, errlen, -e, "build scratch: %zu bytes "
			"of GPU memory: %s", len, rte_strerror(e));
	}
	gg->scratch = sc;
	return 0;
}

void
gpugen_gpu_close(struct gpugen_gpu *gg)
{
	int rc;

	if (gg == NULL)
		return;
	rc = gpucuda_stream_destroy(gg->stream);
	if (rc != 0)
		fprintf(stderr, "gpugen: stream destroy: %s\n",
			gpucuda_strerror(rc));
	if (gg->where == GPUGEN_TABLE_DEVICE) {
		if (gg->table != NULL && rte_gpu_mem_free(gg->gpu_id,
				gg->table) != 0)
			fprintf(stderr, "gpugen: rte_gpu_mem_free: %s\n",
				rte_strerror(rte_errno));
	} else {
		gpugen_unpin(gg->gpu_id, gg->table, gg->table_len);
	}
	if (gg->scratch.base != NULL && rte_gpu_mem_free(gg->gpu_id,
			gg->scratch.base) != 0)
		fprintf(stderr, "gpugen: rte_gpu_mem_free (scratch): %s\n",
			rte_strerror(rte_errno));
	gpugen_unpin(gg->gpu_id, gg->addrs, gg->addrs_len);
	free(gg);
}

int
gpugen_gpu_open(struct gpugen *g, int16_t gpu_id, uint32_t max_burst,
		enum gpugen_gpu_mem where, struct gpugen_gpu **out, char *err,
		size_t errlen)
{
	struct rte_gpu_info info;
	struct gpugen_gpu *gg;
	const void *t;
	size_t len;
	int rc;

	*out = NULL;
	if (max_burst == 0 || gpugen_n_streams(g) == 0)
		return gpugen_fail(err, errlen, -EINVAL, "no streams, or a burst of 0");
	rc = rte_gpu_info_get(gpu_id, &info);
	if (rc != 0)
		return gpugen_fail(err, errlen, rc, "GPU %d: rte_gpu_info_get: %s",
			gpu_id, rte_strerror(-rc));
	/* The runtime must launch on the device gpudev allocates from. */
	rc = gpucuda_select(info.name, NULL);
	if (rc != 0)
		return gpugen_fail(err, errlen, -ENODEV, "GPU %d (%s): CUDA runtime: %s",
			gpu_id, info.name, gpucuda_strerror(rc));
	gg = calloc(1, sizeof(*gg));
	if (gg == NULL)
		return -ENOMEM;
	gg->g = g;
	gg->gpu_id = gpu_id;
	gg->max_burst = max_burst;
	gg->max_len = gpugen_max_len(g);
	gg->where = where;
	t = gpugen_table(g, &len);
	if (where == GPUGEN_TABLE_DEVICE) {
		gg->table = rte_gpu_mem_alloc(gpu_id, len, 0);
		if (gg->table == NULL) {
			rc = gpugen_fail(err, errlen, -rte_errno, "table: %zu bytes of "
				"GPU memory: %s", len, rte_strerror(rte_errno));
			goto fail;
		}
		rc = gpucuda_copy(gg->table, t, len);
		if (rc != 0) {
			rc = gpugen_fail(err, errlen, -EIO, "table copy: %s",
				gpucuda_strerror(rc));
			goto fail;
		}
	} else {
		gg->table_len = len;
		gg->table = gpugen_pinned(gpu_id, &gg->table_len);
		if (gg->table == NULL) {
			rc = gpugen_fail(err, errlen, -rte_errno, "table: %zu bytes of "
				"registered host memory: %s", len,
				rte_strerror(rte_errno));
			goto fail;
		}
		memcpy(gg->table, t, len);
	}
	rc = scratch_alloc(gg, info.processor_count, err, errlen);
	if (rc != 0)
		goto fail;
	gg->addrs_len = (size_t)max_burst * sizeof(void *);
	gg->addrs = gpugen_pinned(gpu_id, &gg->addrs_len);
	if (gg->addrs == NULL) {
		rc = gpugen_fail(err, errlen, -rte_errno, "address array: %s",
			rte_strerror(rte_errno));
		goto fail;
	}
	rc = gpucuda_stream_create(&gg->stream);
	if (rc != 0) {
		rc = gpugen_fail(err, errlen, -EIO, "CUDA stream: %s",
			gpucuda_strerror(rc));
		goto fail;
	}
	*out = gg;
	return 0;
fail:
	gpugen_gpu_close(gg);
	return rc;
}

void **
gpugen_gpu_addrs(struct gpugen_gpu *gg)
{
	return gg->addrs;
}

int
gpugen_gpu_build(struct gpugen_gpu *gg, uint64_t first, uint32_t n,
		uint64_t tx_ns, char *err, size_t errlen)
{
	struct gpugen_cuda_dst dst = { .addrs = (void *const *)gg->addrs };
	int rc;

	if (n > gg->max_burst)
		return gpugen_fail(err, errlen, -EINVAL, "burst of %u beyond the %u "
			"opened for", n, gg->max_burst);
	if (n == 0)
		return 0;
	/* Either kernel is right for any memory; the first destination
	 * says which is fast for the burst (one pool feeds a burst). */
	rc = gpugen_cuda_mem_in_gpu(gg->addrs[0], &dst.in_gpu);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EINVAL, "packet address %p: %s",
			gg->addrs[0], gpucuda_strerror(rc));
	/* The addresses are plain stores to registered host memory; the
	 * launch that follows orders them before the kernel reads them. */
	rc = gpugen_cuda_build(gg->table, &dst, &gg->scratch, first, n, tx_ns,
		gg->stream);
	/* Stream completion orders the kernel's writes, as in
	 * gpugen_gpu_wait(). */
	if (rc == 0)
		rc = gpucuda_stream_sync(gg->stream);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "build kernel: %s",
			gpucuda_strerror(rc));
	return 0;
}

int
gpugen_gpu_build_ring(struct gpugen_gpu *gg, void *ring, uint32_t stride,
		uint32_t slots, uint64_t first, uint32_t n, uint64_t tx_ns,
		char *err, size_t errlen)
{
	struct gpugen_cuda_dst dst = {
		.ring = ring,
		.stride = stride,
		.slots = slots,
	};
	int rc;

	if (ring == NULL || slots == 0)
		return gpugen_fail(err, errlen, -EINVAL, "no ring, or a ring of "
			"0 slots");
	if (n > slots)
		return gpugen_fail(err, errlen, -EINVAL, "a build of %u packets "
			"into a ring of %u slots: two of them would write one "
			"slot at once; queue builds of at most %u", n, slots, slots);
	if (stride < gg->max_len)
		return gpugen_fail(err, errlen, -EINVAL, "ring slots of %u bytes "
			"cannot hold the longest frame (%u bytes)", stride,
			gg->max_len);
	rc = gpugen_cuda_mem_in_gpu(ring, &dst.in_gpu);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EINVAL, "ring %p: %s", ring,
			gpucuda_strerror(rc));
	dst.slot0 = (uint32_t)(first % slots);
	rc = gpugen_cuda_build(gg->table, &dst, &gg->scratch, first, n, tx_ns,
		gg->stream);
	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "build kernel: %s",
			gpucuda_strerror(rc));
	return 0;
}

int
gpugen_gpu_wait(struct gpugen_gpu *gg, char *err, size_t errlen)
{
	/*
	 * Kernel completion orders every write of the builds queued before
	 * this returns: host-mapped frames are then visible to the CPU and
	 * to a NIC reading host memory, and GPU-memory frames to a peer
	 * reading through the BAR (the kernel's writes are flushed at
	 * completion).
	 */
	int rc = gpucuda_stream_sync(gg->stream);

	if (rc != 0)
		return gpugen_fail(err, errlen, -EIO, "build kernel: %s",
			gpucuda_strerror(rc));
	return 0;
}
