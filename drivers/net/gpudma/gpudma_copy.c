/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include <rte_atomic.h>

#include "cuda_api.h"
#include "gpudma.h"
#include "gpudma_scatter.h"

/* The scatter kernel's image (gpudma_scatter.cu, embedded at build). */
extern const unsigned char gpudma_scatter_image[];
extern const size_t gpudma_scatter_image_len;

/* What the loader (cuda_api.c) logs to in this plugin. */
RTE_LOG_REGISTER(gpu_cuda_logtype, pmd.net.gpudma.cuda, NOTICE);

int
gpudma_cuda_present(void)
{
	static int said;

	if (gpu_cuda_api_get() != NULL)
		return 1;
	if (!said) {
		said = 1;
		GPUDMA_LOG(INFO, "no usable CUDA driver: DMA mappings are host memory, filled by memcpy");
	}
	return 0;
}

int
gpudma_cuda_load_scatter(struct gpudma_cuda *c)
{
	int ret;

	if (c->scatter != NULL)
		return 0;
	ret = gpudma_cuda_enter(c, "net_gpudma: scatter kernel");
	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL("net_gpudma: loading the scatter kernel",
		cuModuleLoadData, &c->mod, gpudma_scatter_image);
	if (ret == 0) {
		ret = GPU_CUDA_CALL("net_gpudma: the scatter kernel",
			cuModuleGetFunction, &c->scatter, c->mod,
			GPUDMA_SCATTER_KERNEL);
		if (ret != 0) {
			(void)GPU_CUDA_CALL("net_gpudma: scatter kernel",
				cuModuleUnload, c->mod);
			c->mod = NULL;
			c->scatter = NULL;
		}
	}
	gpudma_cuda_leave(c, "net_gpudma: scatter kernel");
	if (ret != 0)
		GPUDMA_LOG(ERR, "GPU %d: the scatter kernel does not load (scatter=0 fills GPU memory with copy-engine copies instead)",
			c->ordinal);
	else
		GPUDMA_LOG(INFO, "GPU %d: RX into GPU memory by the scatter kernel (scatter=1)",
			c->ordinal);
	return ret;
}

int
gpudma_cuda_open(struct gpudma_cuda *c, int ordinal, int batch)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->ordinal = ordinal;
	if (batch == GPUDMA_BATCH_ON && gpu_cuda.cuMemcpyBatchAsync == NULL) {
		GPUDMA_LOG(ERR, "batch=1: this CUDA driver (%d.%d) has no cuMemcpyBatchAsync (CUDA 12.8 and later); batch=auto falls back to a copy a segment",
			gpu_cuda.driver_version / 1000,
			gpu_cuda.driver_version % 1000 / 10);
		return -ENOTSUP;
	}
	ret = GPU_CUDA_CALL("net_gpudma: GPU", cuDeviceGet, &c->dev, ordinal);
	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL("net_gpudma: GPU context", cuDevicePrimaryCtxRetain,
		&c->ctx, c->dev);
	if (ret != 0)
		return ret;
	c->batch = batch != GPUDMA_BATCH_OFF &&
		gpu_cuda.cuMemcpyBatchAsync != NULL;
	c->ok = true;
	GPUDMA_LOG(INFO, "copy engine of GPU %d, %s", ordinal,
		c->batch ? "batched copies (cuMemcpyBatchAsync)" :
		batch == GPUDMA_BATCH_OFF ?
		"one asynchronous copy per segment (batch=0)" :
		"one asynchronous copy per segment (no cuMemcpyBatchAsync before CUDA 12.8)");
	return 0;
}

void
gpudma_cuda_close(struct gpudma_cuda *c)
{
	if (!c->ok)
		return;
	if (c->mod != NULL && gpudma_cuda_enter_teardown(c,
			"net_gpudma: closing") == 0) {
		(void)GPU_CUDA_CALL("net_gpudma: closing", cuModuleUnload,
			c->mod);
		gpudma_cuda_leave(c, "net_gpudma: closing");
	}
	c->mod = NULL;
	(void)GPU_CUDA_CALL("net_gpudma: closing", cuDevicePrimaryCtxRelease,
		c->dev);
	c->ok = false;
}

int
gpudma_cuda_enter(struct gpudma_cuda *c, const char *what)
{
	return GPU_CUDA_CALL(what, cuCtxPushCurrent, c->ctx);
}

int
gpudma_cuda_enter_teardown(struct gpudma_cuda *c, const char *what)
{
	/* Once more before giving up: what the queue holds from CUDA (and
	 * the buffers of a fill that cannot be waited for) would leak. */
	if (gpudma_cuda_enter(c, what) == 0)
		return 0;
	return gpudma_cuda_enter(c, what);
}

void
gpudma_cuda_leave(struct gpudma_cuda *c, const char *what)
{
	CUcontext popped;

	RTE_SET_USED(c);
	(void)GPU_CUDA_CALL(what, cuCtxPopCurrent, &popped);
}

int
gpudma_cuda_mem_gpu(struct gpudma_cuda *c, uintptr_t addr, int *ordinal)
{
	unsigned int type = 0;
	CUresult res;
	int ret;

	*ordinal = -1;
	ret = gpudma_cuda_enter(c, "net_gpudma: memory type");
	if (ret != 0)
		return ret;
	res = gpu_cuda.cuPointerGetAttribute(&type,
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)addr);
	/* CUDA does not know memory it did not allocate or register:
	 * INVALID_VALUE then means plain host memory. */
	if (res == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE) {
		int dev = -1;

		/* Unified addressing: any GPU's context answers for every
		 * GPU's memory, so the port's first context finds the GPU
		 * that is to fill it. */
		ret = GPU_CUDA_CALL("net_gpudma: which GPU holds the memory",
			cuPointerGetAttribute, &dev,
			CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)addr);
		if (ret == 0 && dev < 0) {
			GPUDMA_LOG(ERR, "GPU memory at %#" PRIxPTR ": CUDA names no GPU that holds it (ordinal %d)",
				addr, dev);
			ret = -EINVAL;
		}
		if (ret == 0)
			*ordinal = dev;
	} else if (res != CUDA_SUCCESS && res != CUDA_ERROR_INVALID_VALUE) {
		gpu_cuda_log_error("net_gpudma: memory type",
			"cuPointerGetAttribute", res);
		ret = gpu_cuda_errno(res);
	}
	gpudma_cuda_leave(c, "net_gpudma: memory type");
	return ret;
}

/* Page-locks len bytes at p, always mapped for the GPU: not only the
 * scatter kernel reads host memory through that mapping, the driver may
 * run a cuMemcpyBatchAsync on the SMs as well (its copy-engine flag is a
 * hint), and an SM copy of unmapped host memory faults the context
 * (CUDA_ERROR_LAUNCH_FAILED: every fill lost). *dev (unless NULL) gets the
 * GPU's address of p. Context current. */
static int
pin(void *p, size_t len, CUdeviceptr *dev)
{
	int ret = GPU_CUDA_CALL("net_gpudma: pinning the copy engine's host memory",
		cuMemHostRegister, p, len, CU_MEMHOSTREGISTER_PORTABLE |
		CU_MEMHOSTREGISTER_DEVICEMAP);

	if (ret != 0 || dev == NULL)
		return ret;
	ret = GPU_CUDA_CALL("net_gpudma: mapping pinned memory for the GPU",
		cuMemHostGetDevicePointer, dev, p, 0);
	if (ret != 0)
		(void)GPU_CUDA_CALL("net_gpudma: unpinning", cuMemHostUnregister,
			p);
	return ret;
}

int
gpudma_cuda_pin(struct gpudma_cuda *c, void *p, size_t len)
{
	int ret = gpudma_cuda_enter(c, "net_gpudma: pinning");

	if (ret != 0)
		return ret;
	ret = pin(p, len, NULL);
	gpudma_cuda_leave(c, "net_gpudma: pinning");
	return ret;
}

int
gpudma_cuda_pin_mapped(struct gpudma_cuda *c, void *p, size_t len,
		uint64_t *dev)
{
	CUdeviceptr d = 0;
	int ret = gpudma_cuda_enter(c, "net_gpudma: pinning");

	if (ret != 0)
		return ret;
	ret = pin(p, len, &d);
	gpudma_cuda_leave(c, "net_gpudma: pinning");
	*dev = ret == 0 ? (uint64_t)d : 0;
	return ret;
}

int
gpudma_cuda_pin_store(struct gpudma_cuda *c, void *p, size_t len)
{
	uint64_t dev;
	int ret = gpudma_cuda_pin_mapped(c, p, len, &dev);

	if (ret == 0) {
		c->store_host = (uintptr_t)p;
		c->store_dev = (CUdeviceptr)dev;
	}
	return ret;
}

int
gpudma_cuda_map_store(struct gpudma_cuda *c, void *p)
{
	CUdeviceptr d = 0;
	int ret = gpudma_cuda_enter(c, "net_gpudma: mapping the frame store");

	if (ret != 0)
		return ret;
	/* Pinned portable by another GPU's context: registered for every
	 * context, but each has its own address of it. */
	ret = GPU_CUDA_CALL("net_gpudma: mapping the frame store for the GPU",
		cuMemHostGetDevicePointer, &d, p, 0);
	gpudma_cuda_leave(c, "net_gpudma: mapping the frame store");
	if (ret == 0) {
		c->store_host = (uintptr_t)p;
		c->store_dev = d;
	}
	return ret;
}

int
gpudma_cuda_unpin(struct gpudma_cuda *c, void *p)
{
	int ret = gpudma_cuda_enter_teardown(c, "net_gpudma: unpinning");

	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL("net_gpudma: unpinning", cuMemHostUnregister, p);
	gpudma_cuda_leave(c, "net_gpudma: unpinning");
	return ret;
}

static void
free_slots(struct gpudma_copier *cp)
{
	uint32_t i;

	for (i = 0; i < cp->nb_slots; i++) {
		if (cp->descs_dev[i] != 0)
			(void)GPU_CUDA_CALL("net_gpudma: scatter descriptors",
				cuMemHostUnregister, cp->descs[i]);
		free(cp->descs[i]);
	}
	cp->nb_slots = 0;
}

/* A pinned, GPU-mapped descriptor array a slot. */
static int
alloc_slots(struct gpudma_copier *cp, uint32_t nb_slots)
{
	size_t len = RTE_ALIGN_CEIL(cp->cap * sizeof(struct gpudma_scatter_desc),
		4096);
	int ret;

	for (cp->nb_slots = 0; cp->nb_slots < nb_slots; cp->nb_slots++) {
		uint32_t i = cp->nb_slots;

		cp->descs[i] = aligned_alloc(4096, len);
		if (cp->descs[i] == NULL)
			return -ENOMEM;
		ret = pin(cp->descs[i], len, &cp->descs_dev[i]);
		if (ret != 0) {
			cp->descs_dev[i] = 0;
			cp->nb_slots++;  /* freed with the others */
			return ret;
		}
	}
	return 0;
}

int
gpudma_copier_init(struct gpudma_copier *cp, struct gpudma_cuda *c,
		uint32_t cap, int socket, uint32_t nb_slots)
{
	int ret;

	memset(cp, 0, sizeof(*cp));
	cp->cuda = c;
	cp->cap = cap;
	if (c->scatter != NULL && nb_slots > 0) {
		ret = alloc_slots(cp, RTE_MIN(nb_slots,
			(uint32_t)GPUDMA_COPY_MAX_SLOTS));
		if (ret != 0)
			goto fail;
	}
	cp->dsts = rte_malloc_socket("gpudma_copy", cap * sizeof(*cp->dsts),
		0, socket);
	cp->srcs = rte_malloc_socket("gpudma_copy", cap * sizeof(*cp->srcs),
		0, socket);
	cp->sizes = rte_malloc_socket("gpudma_copy", cap * sizeof(*cp->sizes),
		0, socket);
	if (cp->dsts == NULL || cp->srcs == NULL || cp->sizes == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	/* Non-blocking: the queue's copies need not wait for work others
	 * put on the legacy default stream. */
	ret = GPU_CUDA_CALL("net_gpudma: queue stream", cuStreamCreate,
		&cp->stream, CU_STREAM_NON_BLOCKING);
	if (ret != 0)
		goto fail;
	return 0;
fail:
	free_slots(cp);
	rte_free(cp->dsts);
	rte_free(cp->srcs);
	rte_free(cp->sizes);
	memset(cp, 0, sizeof(*cp));
	return ret;
}

int
gpudma_copier_bulk_init(struct gpudma_copier *cp, int bulk)
{
	int ret;

	if (bulk == GPUDMA_BULK_OFF || cp->nb_slots == 0)
		return 0;
	ret = GPU_CUDA_CALL("net_gpudma: bulk fill buffer", cuMemAlloc,
		&cp->bulk_dev, GPUDMA_BULK_SLOT * cp->nb_slots);
	if (ret != 0) {
		cp->bulk_dev = 0;
		return ret;
	}
	cp->bulk = bulk;
	return 0;
}

int
gpudma_copier_done_init(struct gpudma_copier *cp)
{
	uint64_t dev;
	int ret;

	if (gpu_cuda.cuStreamWriteValue32 == NULL)
		return -ENOTSUP;
	/* A page of its own: pinning works on whole pages, and nothing else
	 * shares its line with the GPU's writes. */
	cp->done_word = aligned_alloc(4096, 4096);
	if (cp->done_word == NULL)
		return -ENOMEM;
	*cp->done_word = 0;
	ret = pin(cp->done_word, 4096, (CUdeviceptr *)&dev);
	if (ret != 0)
		goto fail_free;
	cp->done_dev = (CUdeviceptr)dev;
	/* Tried once: a driver may refuse stream memory operations on this
	 * GPU or host memory (CUDA_ERROR_NOT_SUPPORTED or _NOT_PERMITTED:
	 * -ENOTSUP, events alone then); any other failure is the queue's. */
	ret = GPU_CUDA_CALL("net_gpudma: trying the completion word",
		cuStreamWriteValue32, cp->stream, cp->done_dev, 0,
		CU_STREAM_WRITE_VALUE_DEFAULT);
	if (ret == 0)
		ret = GPU_CUDA_CALL("net_gpudma: trying the completion word",
			cuStreamSynchronize, cp->stream);
	if (ret == 0)
		return 0;
	(void)GPU_CUDA_CALL("net_gpudma: completion word", cuMemHostUnregister,
		cp->done_word);
fail_free:
	free(cp->done_word);
	cp->done_word = NULL;
	cp->done_dev = 0;
	return ret;
}

void
gpudma_copier_fini(struct gpudma_copier *cp)
{
	if (cp->bulk_dev != 0)
		(void)GPU_CUDA_CALL("net_gpudma: bulk fill buffer", cuMemFree,
			cp->bulk_dev);
	if (cp->stream != NULL)
		(void)GPU_CUDA_CALL("net_gpudma: queue stream", cuStreamDestroy,
			cp->stream);
	/* After the stream: its last write may be to the word. */
	if (cp->done_word != NULL) {
		(void)GPU_CUDA_CALL("net_gpudma: completion word",
			cuMemHostUnregister, cp->done_word);
		free(cp->done_word);
	}
	free_slots(cp);
	rte_free(cp->dsts);
	rte_free(cp->srcs);
	rte_free(cp->sizes);
	memset(cp, 0, sizeof(*cp));
}

int
gpudma_event_init(struct gpudma_event *e)
{
	/* No timing: cheaper to record and query. */
	return GPU_CUDA_CALL("net_gpudma: completion event", cuEventCreate,
		&e->ev, CU_EVENT_DISABLE_TIMING);
}

void
gpudma_event_fini(struct gpudma_event *e)
{
	if (e->ev != NULL)
		(void)GPU_CUDA_CALL("net_gpudma: completion event",
			cuEventDestroy, e->ev);
	e->ev = NULL;
}

static int
enqueue_batch(struct gpudma_copier *cp)
{
	/* The sources are the port's frame store or mbufs nobody writes
	 * while the burst is in flight: stream order is all that is
	 * needed. The copy engine, not the SMs, as a NIC's DMA leaves the
	 * consumer's kernels their SMs (a hint: the host memory is mapped
	 * for the SMs all the same, see pin()). */
	CUmemcpyAttributes attr = {
		.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
		.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE,
	};
	size_t attr_idx = 0, fail_idx = SIZE_MAX;
	uint32_t at, k;
	CUresult res;

	/*
	 * At most GPUDMA_BATCH_CALL_MAX copies a call: a fill of a quarter
	 * ring is thousands of segments, and on the H100 (driver 580) such
	 * a batch faulted in the driver's copy (CUDA_ERROR_LAUNCH_FAILED)
	 * where batches of a burst's size never did.
	 */
	for (at = 0; at < cp->n; at += k) {
		k = RTE_MIN(cp->n - at, (uint32_t)GPUDMA_BATCH_CALL_MAX);
		res = gpu_cuda.cuMemcpyBatchAsync(cp->dsts + at, cp->srcs + at,
			cp->sizes + at, k, &attr, &attr_idx, 1, &fail_idx,
			cp->stream);
		if (res != CUDA_SUCCESS) {
			gpu_cuda_log_error("net_gpudma: a burst's copies",
				"cuMemcpyBatchAsync", res);
			if (fail_idx != SIZE_MAX)
				GPUDMA_LOG(ERR, "copy %zu of %u failed (%zu bytes)",
					at + fail_idx, cp->n,
					cp->sizes[at + fail_idx]);
			return gpu_cuda_errno(res);
		}
	}
	return 0;
}

static int
enqueue_each(struct gpudma_copier *cp, bool to_device)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < cp->n && ret == 0; i++) {
		if (to_device)
			ret = GPU_CUDA_CALL("net_gpudma: a burst's copies",
				cuMemcpyHtoDAsync, cp->dsts[i],
				(const void *)(uintptr_t)cp->srcs[i],
				cp->sizes[i], cp->stream);
		else
			ret = GPU_CUDA_CALL("net_gpudma: a burst's copies",
				cuMemcpyDtoHAsync,
				(void *)(uintptr_t)cp->dsts[i], cp->srcs[i],
				cp->sizes[i], cp->stream);
	}
	return ret;
}

/*
 * Bulk: the burst's sources as at most GPUDMA_BULK_RUNS contiguous runs of
 * host memory (a frame's segments follow each other; frames follow each
 * other 64-byte aligned in the frame store and the staging ring), each
 * copied by the copy engine into slot's GPU memory with one operation
 * large enough to reach the link's bandwidth; the descriptors then point
 * there. 0, 1 (not worth it, or not contiguous enough: the kernel reads
 * the window instead) or a negative errno.
 */
static int
enqueue_bulk(struct gpudma_copier *cp, uint32_t slot)
{
	CUdeviceptr base = cp->bulk_dev + (CUdeviceptr)slot * GPUDMA_BULK_SLOT;
	struct gpudma_scatter_desc *d = cp->descs[slot];
	uintptr_t start[GPUDMA_BULK_RUNS], end[GPUDMA_BULK_RUNS];
	size_t at[GPUDMA_BULK_RUNS], used = 0;
	uint32_t i, r, nr = 0;
	int ret;

	if (cp->bulk_dev == 0 || (cp->bulk == GPUDMA_BULK_AUTO &&
			cp->bytes < (uint64_t)GPUDMA_BULK_MIN_AVG * cp->n))
		return 1;
	for (i = 0; i < cp->n; i++) {
		uintptr_t s = cp->srcs[i];

		if (nr == 0 || s < end[nr - 1] ||
				s > RTE_ALIGN_CEIL(end[nr - 1], 64)) {
			if (nr == GPUDMA_BULK_RUNS)
				return 1;
			/* Runs start 64-byte aligned in the slot, as in host
			 * memory: the kernel's 16-byte accesses stay so. */
			at[nr] = used = RTE_ALIGN_CEIL(used, 64);
			start[nr] = s;
			end[nr++] = s;
		}
		used += s + cp->sizes[i] - end[nr - 1];
		end[nr - 1] = s + cp->sizes[i];
		if (used > GPUDMA_BULK_SLOT)
			return 1;
		d[i] = (struct gpudma_scatter_desc){ .dst = cp->dsts[i],
			.src = base + at[nr - 1] + (s - start[nr - 1]),
			.len = (uint32_t)cp->sizes[i] };
	}
	for (r = 0; r < nr; r++) {
		ret = GPU_CUDA_CALL("net_gpudma: a burst's bulk copy",
			cuMemcpyHtoDAsync, base + at[r],
			(const void *)start[r], end[r] - start[r], cp->stream);
		if (ret != 0)
			return ret;
	}
	cp->bulk_batches++;
	return 0;
}

/* The burst as one launch of the scatter kernel, its descriptors in
 * slot's array (which nothing touches again before the burst completed). */
static int
enqueue_kernel(struct gpudma_copier *cp, uint32_t slot)
{
	struct gpudma_scatter_desc *d = cp->descs[slot];
	const struct gpudma_cuda *c = cp->cuda;
	unsigned int n = cp->n, blocks;
	CUdeviceptr descs = cp->descs_dev[slot];
	void *params[] = { &descs, &n };
	uint32_t i;
	int ret = enqueue_bulk(cp, slot);

	if (ret < 0)
		return ret;
	/* Not bulk: the sources are in the window (frame store or staging
	 * ring), the GPU reads them through its mapping. */
	for (i = 0; ret > 0 && i < n; i++)
		d[i] = (struct gpudma_scatter_desc){ .dst = cp->dsts[i],
			.src = cp->win_dev + (cp->srcs[i] - cp->win_host),
			.len = (uint32_t)cp->sizes[i] };
	/* The descriptors reach memory before the launch's doorbell (the
	 * kernel reads them over PCIe when it runs). */
	rte_wmb();
	blocks = (n + GPUDMA_SCATTER_THREADS / 32 - 1) /
		(GPUDMA_SCATTER_THREADS / 32);
	return GPU_CUDA_CALL("net_gpudma: a burst's scatter", cuLaunchKernel,
		c->scatter, blocks, 1, 1, GPUDMA_SCATTER_THREADS, 1, 1, 0,
		cp->stream, params, NULL);
}

int
gpudma_copier_submit(struct gpudma_copier *cp, bool to_device,
		struct gpudma_event *ev, uint32_t slot, uint32_t seq)
{
	int ret;

	if (to_device && slot < cp->nb_slots)
		ret = enqueue_kernel(cp, slot);
	else if (cp->cuda->batch)
		ret = enqueue_batch(cp);
	else
		ret = enqueue_each(cp, to_device);
	/* Without NO_MEMORY_BARRIER the write is preceded by a fence of the
	 * stream's work (like __threadfence_system()): the burst's bytes are
	 * visible before seq is. Before the event: an event seen complete
	 * means the word was written too. */
	if (ret == 0 && cp->done_word != NULL)
		ret = GPU_CUDA_CALL("net_gpudma: a burst's completion word",
			cuStreamWriteValue32, cp->stream, cp->done_dev, seq,
			CU_STREAM_WRITE_VALUE_DEFAULT);
	if (ret == 0)
		ret = GPU_CUDA_CALL("net_gpudma: a burst's completion",
			cuEventRecord, ev->ev, cp->stream);
	cp->n = 0;
	cp->bytes = 0;
	if (ret == 0)
		return 0;
	/* Part of the burst may be running: wait for it before its buffers
	 * go back to a pool. */
	if (GPU_CUDA_CALL("net_gpudma: waiting for a failed burst",
			cuStreamSynchronize, cp->stream) != 0)
		return -EFAULT;
	return ret;
}

int
gpudma_event_query(struct gpudma_event *e)
{
	CUresult res = gpu_cuda.cuEventQuery(e->ev);

	if (res == CUDA_SUCCESS)
		return 1;
	if (res == CUDA_ERROR_NOT_READY)
		return 0;
	gpu_cuda_log_error("net_gpudma: a burst's completion", "cuEventQuery",
		res);
	return gpu_cuda_errno(res);
}

int
gpudma_event_wait(struct gpudma_copier *cp, struct gpudma_event *e)
{
	int ret = GPU_CUDA_CALL("net_gpudma: waiting for a burst",
		cuEventSynchronize, e->ev);

	if (ret == 0)
		return 0;
	if (GPU_CUDA_CALL("net_gpudma: waiting for the queue's copies",
			cuStreamSynchronize, cp->stream) != 0)
		return -EFAULT;
	return ret;
}
