/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include <rte_atomic.h>

#include "cuda_api.h"
#include "gpudma.h"
#include "gpudma_fill.h"

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
		/* Both kernels now, whichever fill= asks for: under lazy
		 * loading this loads the function, which a later first fill
		 * beside another process's or the application's persistent
		 * kernel might otherwise have to. */
		if (ret == 0)
			ret = GPU_CUDA_CALL("net_gpudma: the persistent fill kernel",
				cuModuleGetFunction, &c->fill, c->mod,
				GPUDMA_FILL_KERNEL);
		if (ret != 0) {
			(void)GPU_CUDA_CALL("net_gpudma: scatter kernel",
				cuModuleUnload, c->mod);
			c->mod = NULL;
			c->scatter = NULL;
			c->fill = NULL;
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

int
gpudma_copier_fill_init(struct gpudma_copier *cp, uint64_t idle_us)
{
	const size_t len = RTE_ALIGN_CEIL(sizeof(*cp->ring), 4096);
	uint64_t dev;
	uint32_t i;
	int ret;

	if (cp->cuda->fill == NULL || cp->nb_slots != GPUDMA_FILL_SLOTS) {
		GPUDMA_LOG(ERR, "fill=persistent: the fill kernel is not loaded, or the queue has %u descriptor slots where it needs %u",
			cp->nb_slots, GPUDMA_FILL_SLOTS);
		return -EINVAL;
	}
	cp->ring = aligned_alloc(4096, len);
	if (cp->ring == NULL)
		return -ENOMEM;
	memset(cp->ring, 0, len);
	ret = pin(cp->ring, len, (CUdeviceptr *)&dev);
	if (ret != 0)
		goto fail_free;
	cp->ring_dev = (CUdeviceptr)dev;
	for (i = 0; i < GPUDMA_FILL_SLOTS; i++)
		cp->ring->descs[i] = cp->descs_dev[i];
	ret = gpudma_event_init(&cp->fill_end);
	if (ret != 0)
		goto fail_unpin;
	cp->done_word = &cp->ring->done;
	cp->done_dev = 0;
	cp->fill_idle_ns = idle_us * 1000;
	cp->fill_posted = 0;
	cp->fill_voided = 0;
	return 0;
fail_unpin:
	(void)GPU_CUDA_CALL("net_gpudma: persistent fill ring",
		cuMemHostUnregister, cp->ring);
fail_free:
	free(cp->ring);
	cp->ring = NULL;
	return ret;
}

/* After a failure (ret) with work perhaps enqueued on the stream: waits
 * for it, so that nothing it touches is reused while it runs; ret, or
 * -EFAULT if even the wait fails. */
static int
failed_wait(struct gpudma_copier *cp, const char *what, int ret)
{
	if (GPU_CUDA_CALL(what, cuStreamSynchronize, cp->stream) != 0)
		return -EFAULT;
	return ret;
}

/* The last fill the kernel served. Acquire: its writes are visible. */
static uint32_t
fill_done(const struct gpudma_copier *cp)
{
	return __atomic_load_n(&cp->ring->done, __ATOMIC_ACQUIRE);
}

/* The last fill that needs no kernel: served, or dropped unserved while
 * none ran (gpudma_copier_fill_void: always the oldest ones). The next
 * launch starts after it, so that no kernel reads a dropped fill's slot,
 * which a later fill may have taken. */
static uint32_t
fill_settled(const struct gpudma_copier *cp)
{
	uint32_t done = fill_done(cp);

	return (int32_t)(cp->fill_voided - done) > 0 ? cp->fill_voided : done;
}

/* The kernel, serving fills seq, seq + 1, ... (the ring's DONE is seq - 1:
 * every earlier fill completed). */
static int
fill_start(struct gpudma_copier *cp, uint32_t seq)
{
	CUdeviceptr ring = cp->ring_dev;
	uint64_t idle_ns = cp->fill_idle_ns;
	void *params[] = { &ring, &seq, &idle_ns };
	int ret;

	/* Slots of an earlier run hold older sequence numbers, which the
	 * kernel waits past; QUIT and PARKED are cleared for this run (the
	 * slots' addresses are gpudma_copier_fill_init's). */
	cp->ring->quit = 0;
	cp->ring->parked = 0;
	/* The ring's words reach memory before the launch's doorbell. */
	rte_wmb();
	ret = GPU_CUDA_CALL("net_gpudma: launching the persistent fill kernel",
		cuLaunchKernel, cp->cuda->fill, 1, 1, 1, GPUDMA_FILL_THREADS,
		1, 1, 0, cp->stream, params, NULL);
	if (ret == 0)
		ret = GPU_CUDA_CALL("net_gpudma: the persistent fill kernel's end",
			cuEventRecord, cp->fill_end.ev, cp->stream);
	if (ret == 0) {
		cp->fill_running = true;
		cp->fill_launches++;
		return 0;
	}
	/* Launched perhaps, but not known to end: asked to (release, after
	 * the ring's words), and waited for. */
	__atomic_store_n(&cp->ring->quit, 1, __ATOMIC_RELEASE);
	return failed_wait(cp, "net_gpudma: waiting for a failed fill kernel",
		ret);
}

int
gpudma_copier_fill_alive(struct gpudma_copier *cp)
{
	int ret;

	if (cp->ring == NULL || !cp->fill_running)
		return 0;
	ret = gpudma_event_query(&cp->fill_end);
	if (ret == 0)
		return 1;
	/* A failed query says nothing of whether it still runs. */
	if (ret > 0)
		cp->fill_running = false;
	return ret > 0 ? 0 : ret;
}

/* With no kernel running: one launched at the first fill that needs one,
 * where a posted fill does; 0 when none does. */
static int
fill_restart(struct gpudma_copier *cp)
{
	const uint32_t settled = fill_settled(cp);

	return settled == cp->fill_posted ? 0 : fill_start(cp, settled + 1);
}

bool
gpudma_copier_fill_parked(const struct gpudma_copier *cp)
{
	return cp->ring != NULL && cp->fill_running &&
		__atomic_load_n(&cp->ring->parked, __ATOMIC_ACQUIRE) != 0;
}

/* Fill seq READY with no descriptor. Release, like any READY: ordered
 * after the earlier fills'. */
static void
post_empty(struct gpudma_copier *cp, uint32_t seq)
{
	__atomic_store_n(&cp->ring->post[seq % GPUDMA_FILL_SLOTS].ready,
		(uint64_t)seq << 32, __ATOMIC_RELEASE);
}

void
gpudma_copier_skip(struct gpudma_copier *cp, uint32_t seq)
{
	gpudma_copier_discard(cp);
	if (cp->ring == NULL)
		return;
	post_empty(cp, seq);
	cp->fill_posted = seq;
}

void
gpudma_copier_fill_void(struct gpudma_copier *cp, uint32_t seq)
{
	/* A running kernel may be reading the slot already. */
	if (cp->ring == NULL || cp->fill_running ||
			(int32_t)(fill_settled(cp) - seq) >= 0)
		return;
	cp->fill_voided = seq;
}

bool
gpudma_copier_fill_pending(const struct gpudma_copier *cp)
{
	return cp->ring != NULL &&
		(cp->fill_running || fill_settled(cp) != cp->fill_posted);
}

int
gpudma_copier_fill_resume(struct gpudma_copier *cp)
{
	int ret = gpudma_copier_fill_alive(cp);

	/* Ended, PARKED before: DONE is its last word. Fills posted since
	 * it last looked wait in their slots. */
	return ret != 0 ? ret : fill_restart(cp);
}

/* How long a kernel asked to quit may take: a poll of QUIT every
 * GPUDMA_FILL_QUIT_POLLS PCIe round trips, after the fills posted. */
#define FILL_STOP_US 2000000u
/* Failed queries of the end event in a row that make the kernel taken
 * for ended: the context's fault, which ended it too. */
#define FILL_STOP_ERRORS 3

int
gpudma_copier_fill_stop(struct gpudma_copier *cp)
{
	const uint64_t limit = rte_get_timer_cycles() +
		(uint64_t)FILL_STOP_US * rte_get_timer_hz() / 1000000;
	int ret, errors = 0;

	if (cp->ring == NULL)
		return 0;
	for (;;) {
		if (!cp->fill_running) {
			/* Ended (QUIT, or parked): done unless it parked
			 * before fills posted since, which a kernel launched
			 * again serves before it sees QUIT. */
			ret = fill_restart(cp);
			if (ret != 0 || !cp->fill_running)
				return ret;
		}
		/* Release: ordered after every READY this CPU wrote, so that
		 * the kernel, reading QUIT with acquire, sees them too and
		 * serves them before it ends. Again after each launch, which
		 * clears it. */
		__atomic_store_n(&cp->ring->quit, 1, __ATOMIC_RELEASE);
		ret = gpudma_copier_fill_alive(cp);
		if (ret == 0)
			continue;
		if (ret < 0 && ++errors == FILL_STOP_ERRORS) {
			cp->fill_running = false;
			return ret;
		}
		if (ret > 0)
			errors = 0;
		if (rte_get_timer_cycles() > limit) {
			GPUDMA_LOG(ERR, "the persistent fill kernel did not end within %u ms of QUIT",
				FILL_STOP_US / 1000);
			return -ETIMEDOUT;
		}
		rte_delay_us_sleep(100);
	}
}

void
gpudma_copier_fini(struct gpudma_copier *cp)
{
	if (cp->ring != NULL && gpudma_copier_fill_stop(cp) == -ETIMEDOUT) {
		/* The kernel still polls the ring and may still read the
		 * descriptor slots: both stay, as a fill's buffers that may
		 * still be written stay out of their pool. */
		GPUDMA_LOG(ERR, "the persistent fill kernel did not end: its ring and descriptor slots stay pinned");
		cp->fill_stuck = true;
	}
	gpudma_event_fini(&cp->fill_end);
	if (cp->ring != NULL && !cp->fill_stuck) {
		(void)GPU_CUDA_CALL("net_gpudma: persistent fill ring",
			cuMemHostUnregister, cp->ring);
		free(cp->ring);
	}
	if (cp->fill_stuck)
		cp->nb_slots = 0;  /* not freed by free_slots below */
	if (cp->ring != NULL)
		cp->done_word = NULL;  /* the ring's DONE */
	cp->ring = NULL;
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

/* The burst's descriptors in slot's array, sources in the window (frame
 * store or staging ring), which the GPU reads through its mapping. */
static void
window_descs(struct gpudma_copier *cp, uint32_t slot)
{
	struct gpudma_scatter_desc *d = cp->descs[slot];
	uint32_t i;

	for (i = 0; i < cp->n; i++)
		d[i] = (struct gpudma_scatter_desc){ .dst = cp->dsts[i],
			.src = cp->win_dev + (cp->srcs[i] - cp->win_host),
			.len = (uint32_t)cp->sizes[i] };
}

/*
 * The burst as fill seq of the persistent kernel: its descriptors in the
 * slot of seq, whose previous fill (seq - 8) has completed since (no more
 * than 8 fills are in flight), then READY; then the kernel launched where
 * it does not run (the queue's first fill, the first after a stop, or
 * after it parked), at the first fill it has not served.
 */
static int
enqueue_fill(struct gpudma_copier *cp, uint32_t seq)
{
	const uint32_t slot = seq % GPUDMA_FILL_SLOTS;
	uint64_t *ready = &cp->ring->post[slot].ready;
	int ret = 0;

	window_descs(cp, slot);
	/* Orders the descriptors (and the frames staged before them) before
	 * READY for the GPU's PCIe reads, which follow its acquire of READY;
	 * the release store keeps the compiler from moving them past it. */
	rte_wmb();
	__atomic_store_n(ready, (uint64_t)seq << 32 | cp->n, __ATOMIC_RELEASE);
	cp->fill_posted = seq;
	if (gpudma_copier_fill_parked(cp)) {
		/* Still ending perhaps: the harvest asks again. */
		ret = gpudma_copier_fill_resume(cp);
		if (ret > 0)
			ret = 0;
	} else if (!cp->fill_running) {
		ret = fill_restart(cp);
	}
	/* No kernel runs (a parked one reads the ring no more, a failed
	 * launch was waited for): the fill stays in the sequence, empty, so
	 * that the next launch serves those after it and writes none of the
	 * buffers the caller now drops. */
	if (ret != 0 && ret != -EFAULT)
		post_empty(cp, seq);
	return ret;
}

/* The burst as one launch of the scatter kernel, its descriptors in
 * slot's array (which nothing touches again before the burst completed). */
static int
enqueue_kernel(struct gpudma_copier *cp, uint32_t slot)
{
	const struct gpudma_cuda *c = cp->cuda;
	unsigned int n = cp->n, blocks;
	CUdeviceptr descs = cp->descs_dev[slot];
	void *params[] = { &descs, &n };
	int ret = enqueue_bulk(cp, slot);

	if (ret < 0)
		return ret;
	if (ret > 0)
		window_descs(cp, slot);
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

	if (to_device && cp->ring != NULL) {
		ret = enqueue_fill(cp, seq);
		gpudma_copier_discard(cp);
		return ret;
	}
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
	return failed_wait(cp, "net_gpudma: waiting for a failed burst", ret);
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
