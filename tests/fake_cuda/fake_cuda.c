/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A fake CUDA driver library: the entry points the gpu_cuda driver uses,
 * with host memory standing in for GPU memory, strict checks of how they are
 * called (a context must be current, pointers must be live), resource
 * accounting and fault injection. See fake_cuda.h.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "gpudma_fill.h"

#define EXPORT __attribute__((visibility("default")))
#define RTE_MIN_(a, b) ((a) < (b) ? (a) : (b))
#define MAX_GPUS 8
#define MAX_CTX_STACK 16
#define CTX_MAGIC 0x43545846u /* "FXTC" */
#define MAX_DMABUFS 256
#define HOST_PAGE 4096

struct fake_ctx {
	uint32_t magic;
	int ordinal;
	bool primary;
};

struct fake_gpu {
	char bus_id[32];
	struct fake_ctx primary;
	unsigned int primary_refs;
};

struct region {
	struct region *next;
	uintptr_t start;
	size_t len;
	void *mem;          /* what free() takes */
	CUcontext ctx;
	bool mapped;        /* registration: CU_MEMHOSTREGISTER_DEVICEMAP */
};

/* dma-buf fds handed out: a memfd each, known by its inode so that a
 * closed fd whose number was reused is not mistaken for it. */
struct fake_dmabuf {
	int fd;
	ino_t ino;
	uintptr_t start;
	size_t len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_gpu gpus[MAX_GPUS];
static int nb_gpus;
static int driver_version = 13000;
static CUresult init_error;
static char hidden_symbol[64];
static size_t mem_limit = (size_t)1 << 30;
static size_t mem_used;
static bool initialised;
static struct region *allocs, *registrations;
static unsigned int abandoned, abi_errors;
static bool devptr_differs;
static int rdma_ordering; /* none: wmb must flush */
static int rdma_flush_options = CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST;
static uint64_t flush_calls;
static size_t alloc_offset;
static int dmabuf_supported = 1;
static struct fake_dmabuf dmabufs[MAX_DMABUFS];
static unsigned int nb_dmabufs;
static uint64_t p2p_token_queries, legacy_stream_memsets;

static uint64_t calls, fail_at;
static CUresult fail_err;
static const char *failed_name;
static int failed_attr;

static __thread CUcontext ctx_stack[MAX_CTX_STACK];
static __thread unsigned int ctx_depth;

/* ---- configuration ------------------------------------------------------ */

__attribute__((constructor)) static void
fake_configure(void)
{
	const char *s;

	s = getenv("FAKE_CUDA_GPUS");
	if (s == NULL)
		s = "0000:01:00.0";
	while (*s != '\0' && nb_gpus < MAX_GPUS) {
		size_t n = strcspn(s, ",");

		if (n > 0 && n < sizeof(gpus[0].bus_id)) {
			memcpy(gpus[nb_gpus].bus_id, s, n);
			gpus[nb_gpus].primary.magic = CTX_MAGIC;
			gpus[nb_gpus].primary.ordinal = nb_gpus;
			gpus[nb_gpus].primary.primary = true;
			nb_gpus++;
		}
		s += n;
		if (*s == ',')
			s++;
	}
	if ((s = getenv("FAKE_CUDA_DRIVER_VERSION")) != NULL)
		driver_version = atoi(s);
	if ((s = getenv("FAKE_CUDA_INIT_ERROR")) != NULL)
		init_error = (CUresult)atoi(s);
	if ((s = getenv("FAKE_CUDA_HIDE_SYMBOL")) != NULL)
		snprintf(hidden_symbol, sizeof(hidden_symbol), "%s", s);
	if ((s = getenv("FAKE_CUDA_MEM_LIMIT")) != NULL)
		mem_limit = strtoull(s, NULL, 0);
}

/* ---- fault injection ------------------------------------------------------ */

/* Counts the call; true if this one must fail with *err. Called with the
 * lock held. */
static bool
inject(const char *name, int attr, CUresult *err)
{
	calls++;
	if (fail_at == 0 || calls != fail_at)
		return false;
	failed_name = name;
	failed_attr = attr;
	*err = fail_err;
	return true;
}

#define ENTER_ATTR(attr) \
	CUresult inj_; \
	pthread_mutex_lock(&lock); \
	if (inject(__func__ + 5, attr, &inj_)) { \
		pthread_mutex_unlock(&lock); \
		return inj_; \
	}
#define ENTER() ENTER_ATTR(-1)
#define RETURN(v) do { \
	CUresult r_ = (v); \
	pthread_mutex_unlock(&lock); \
	return r_; \
} while (0)

/* Release calls made to fail still drop the resource from the books: the
 * caller cannot release it any more, and the tests check that nothing else
 * leaks. */
#define ENTER_RELEASE(drop) \
	CUresult inj_; \
	pthread_mutex_lock(&lock); \
	if (inject(__func__ + 5, -1, &inj_)) { \
		if (drop) \
			abandoned++; \
		pthread_mutex_unlock(&lock); \
		return inj_; \
	}

/* ---- helpers (lock held) ------------------------------------------------- */

static bool
ctx_valid(CUcontext c)
{
	const struct fake_ctx *f = (const struct fake_ctx *)c;

	return f != NULL && f->magic == CTX_MAGIC;
}

static CUcontext
current(void)
{
	return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

static struct region *
find_region(struct region *list, uintptr_t p, size_t len)
{
	for (; list != NULL; list = list->next)
		if (p >= list->start && len <= list->len &&
				p - list->start <= list->len - len)
			return list;
	return NULL;
}

static struct region *
unlink_region(struct region **list, uintptr_t start)
{
	for (; *list != NULL; list = &(*list)->next) {
		struct region *r = *list;

		if (r->start == start) {
			*list = r->next;
			return r;
		}
	}
	return NULL;
}

static bool
overlaps(struct region *list, uintptr_t p, size_t len)
{
	for (; list != NULL; list = list->next)
		if (p < list->start + list->len && list->start < p + len)
			return true;
	return false;
}

#define NEED_INIT() do { if (!initialised) RETURN(CUDA_ERROR_NOT_INITIALIZED); } while (0)
#define NEED_CTX() do { \
	NEED_INIT(); \
	if (!ctx_valid(current())) RETURN(CUDA_ERROR_INVALID_CONTEXT); \
} while (0)
#define NEED_DEV(d) do { \
	NEED_INIT(); \
	if ((d) < 0 || (d) >= nb_gpus) RETURN(CUDA_ERROR_INVALID_DEVICE); \
} while (0)

/* ---- the entry points ------------------------------------------------------ */

static CUresult fake_cuGetErrorName(CUresult e, const char **s)
{
	static __thread char buf[48];

	if (s == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(buf, sizeof(buf), "FAKE_CUDA_ERROR_%d", (int)e);
	*s = buf;
	return CUDA_SUCCESS;
}

static CUresult fake_cuGetErrorString(CUresult e, const char **s)
{
	if (s == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*s = e == CUDA_SUCCESS ? "no error" : "injected or simulated failure";
	return CUDA_SUCCESS;
}

static CUresult fake_cuInit(unsigned int flags)
{
	ENTER();
	if (flags != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (init_error != CUDA_SUCCESS)
		RETURN(init_error);
	if (nb_gpus == 0)
		RETURN(CUDA_ERROR_NO_DEVICE);
	initialised = true;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGetCount(int *n)
{
	ENTER();
	NEED_INIT();
	*n = nb_gpus;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGet(CUdevice *d, int ordinal)
{
	ENTER();
	NEED_DEV(ordinal);
	*d = ordinal;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice d)
{
	ENTER();
	NEED_DEV(d);
	if (name == NULL || len <= 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	snprintf(name, (size_t)len, "Fake GPU %d", d);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGetByPCIBusId(CUdevice *d, const char *bus_id)
{
	int i;

	ENTER();
	NEED_INIT();
	for (i = 0; i < nb_gpus; i++) {
		if (strcasecmp(gpus[i].bus_id, bus_id) == 0) {
			*d = i;
			RETURN(CUDA_SUCCESS);
		}
	}
	RETURN(CUDA_ERROR_INVALID_DEVICE);
}

static CUresult fake_cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice d)
{
	ENTER();
	NEED_DEV(d);
	if (bus_id == NULL || len < 13)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	snprintf(bus_id, (size_t)len, "%s", gpus[d].bus_id);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
	ENTER();
	NEED_DEV(d);
	*bytes = mem_limit;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	ENTER_ATTR((int)a);
	NEED_DEV(d);
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: *v = rdma_flush_options; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: *v = rdma_ordering; break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: *v = dmabuf_supported; break;
	default: RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	ENTER();
	NEED_DEV(d);
	gpus[d].primary_refs++;
	*c = (CUcontext)&gpus[d].primary;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuDevicePrimaryCtxRelease(CUdevice d)
{
	ENTER_RELEASE(d >= 0 && d < nb_gpus && gpus[d].primary_refs > 0 &&
		(gpus[d].primary_refs--, true));
	NEED_DEV(d);
	if (gpus[d].primary_refs == 0)
		RETURN(CUDA_ERROR_INVALID_CONTEXT);
	gpus[d].primary_refs--;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuCtxPushCurrent(CUcontext c)
{
	ENTER();
	NEED_INIT();
	if (!ctx_valid(c))
		RETURN(CUDA_ERROR_INVALID_CONTEXT);
	if (ctx_depth == MAX_CTX_STACK)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	ctx_stack[ctx_depth++] = c;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuCtxPopCurrent(CUcontext *c)
{
	/* A failed pop still pops, as other failed releases still release:
	 * the caller cannot retry it. */
	ENTER_RELEASE(ctx_depth > 0 && (ctx_depth--, true));
	NEED_INIT();
	if (ctx_depth == 0)
		RETURN(CUDA_ERROR_INVALID_CONTEXT);
	ctx_depth--;
	if (c != NULL)
		*c = ctx_stack[ctx_depth];
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuCtxGetDevice(CUdevice *d)
{
	ENTER();
	NEED_CTX();
	*d = ((struct fake_ctx *)current())->ordinal;
	RETURN(CUDA_SUCCESS);
}

/* CUDA 13's form. Called through the old one-argument type, ctx is junk. */
static CUresult fake_cuCtxGetDevice_v13000(CUdevice *d, CUcontext ctx)
{
	ENTER();
	NEED_INIT();
	if (ctx == NULL)
		ctx = current();
	if (!ctx_valid(ctx)) {
		abi_errors++;
		RETURN(CUDA_ERROR_INVALID_CONTEXT);
	}
	*d = ((struct fake_ctx *)ctx)->ordinal;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemAlloc(CUdeviceptr *p, size_t size)
{
	struct region *r;
	size_t len;

	ENTER();
	NEED_CTX();
	if (p == NULL || size == 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (size > mem_limit - mem_used)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	r = calloc(1, sizeof(*r));
	len = (size + 255) & ~(size_t)255;
	if (alloc_offset != 0) {
		/* At a chosen distance past a 64 KiB boundary, as a real
		 * allocator may place small allocations. */
		len = (len + alloc_offset + 65535) & ~(size_t)65535;
		if (r != NULL)
			r->mem = aligned_alloc(65536, len);
	} else if (r != NULL) {
		r->mem = aligned_alloc(256, len);
	}
	if (r == NULL || r->mem == NULL) {
		free(r);
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	memset(r->mem, FAKE_CUDA_STALE_BYTE, len);
	r->start = (uintptr_t)r->mem + alloc_offset;
	r->len = size;
	r->ctx = current();
	r->next = allocs;
	allocs = r;
	mem_used += size;
	*p = (CUdeviceptr)r->start;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemFree(CUdeviceptr p)
{
	struct region *r;

	ENTER_RELEASE((r = unlink_region(&allocs, (uintptr_t)p)) != NULL &&
		(mem_used -= r->len, free(r->mem), free(r), true));
	NEED_CTX();
	r = unlink_region(&allocs, (uintptr_t)p);
	if (r == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	mem_used -= r->len;
	free(r->mem);
	free(r);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
	struct region *r;

	ENTER();
	NEED_CTX();
	if (p == NULL || size == 0 ||
			(flags & ~(unsigned int)(CU_MEMHOSTREGISTER_PORTABLE |
				CU_MEMHOSTREGISTER_DEVICEMAP)) != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (overlaps(registrations, (uintptr_t)p, size))
		RETURN(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	r->start = (uintptr_t)p;
	r->len = size;
	r->ctx = current();
	r->mapped = (flags & CU_MEMHOSTREGISTER_DEVICEMAP) != 0;
	r->next = registrations;
	registrations = r;
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemHostUnregister(void *p)
{
	struct region *r;

	ENTER_RELEASE((r = unlink_region(&registrations, (uintptr_t)p)) != NULL &&
		(free(r), true));
	NEED_CTX();
	r = unlink_region(&registrations, (uintptr_t)p);
	if (r == NULL)
		RETURN(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	free(r);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
	ENTER();
	NEED_CTX();
	if (flags != 0 || find_region(registrations, (uintptr_t)p, 1) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	*d = (CUdeviceptr)(uintptr_t)p + (devptr_differs ? 4096 : 0);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuPointerSetAttribute(const void *v, CUpointer_attribute a, CUdeviceptr p)
{
	ENTER();
	NEED_CTX();
	if (a != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS || *(const unsigned int *)v != 1 ||
			find_region(allocs, (uintptr_t)p, 1) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuPointerGetAttribute(void *v, CUpointer_attribute a, CUdeviceptr p)
{
	struct region *r;

	ENTER();
	NEED_CTX();
	r = find_region(allocs, (uintptr_t)p, 1);
	if (r == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (a == CU_POINTER_ATTRIBUTE_P2P_TOKENS)
		p2p_token_queries++;
	switch (a) {
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)v = r->start;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)v = r->len;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)v = CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)v = ((struct fake_ctx *)r->ctx)->ordinal;
		break;
	default:
		RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget t,
		CUflushGPUDirectRDMAWritesScope s)
{
	ENTER();
	NEED_CTX();
	if (t != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
			(s != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
			 s != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
		RETURN(CUDA_ERROR_INVALID_VALUE);
	flush_calls++;
	RETURN(CUDA_SUCCESS);
}

/* ---- streams, events and asynchronous copies -------------------------------
 *
 * A stream is a FIFO of copies and event records. By default an operation
 * runs as soon as it is enqueued; in manual mode (fake_cuda_set_async_manual)
 * it waits until the test completes it, so a test can see what a driver does
 * with a buffer whose copy has not landed yet. Synchronize calls complete
 * what they wait for, as the real ones block until it is done. Copies must
 * go between a device allocation and registered (pinned) host memory: an
 * asynchronous copy from pageable memory is not asynchronous on a real GPU.
 */

#define MAX_STREAMS 64
#define STREAM_MAGIC 0x4d525453u /* "STRM" */
#define EVENT_MAGIC 0x544e5645u  /* "EVNT" */

struct fill_standin;

/* A copy, or (descs != NULL) a launch of the scatter kernel, or (fill !=
 * NULL) one of the persistent fill kernel. fault: a copy whose SMs cannot
 * reach its host memory (see cuMemcpyBatchAsync). */
struct fake_op {
	void *dst;
	const void *src;
	size_t len;
	const struct gpudma_scatter_desc *descs;
	unsigned int n;
	struct fill_standin *fill;
	bool fault;
	uint32_t *word;        /* cuStreamWriteValue32: value into *word */
	uint32_t value;
	int gpu;               /* the ordinal of the stream's context */
};

struct fake_stream {
	uint32_t magic;
	CUcontext ctx;
	struct fake_op *ops;   /* ops[seq - base] for seq in [base, tail) */
	size_t cap;
	uint64_t base, done, tail;
};

struct fake_event {
	uint32_t magic;
	int stream;            /* -1: never recorded */
	uint64_t seq;          /* complete once the stream's done reaches it */
};

static struct fake_stream streams[MAX_STREAMS];
static bool async_manual;
static unsigned int live_events, live_modules;
static uint64_t async_copies, batch_calls, kernel_launches, kernel_errors;
/* The persistent fill kernel: launches, stand-ins running now, fills
 * served, stand-ins that parked. */
static uint64_t fill_launches, fills_served, fills_parked;
static unsigned int fills_running;
static uint64_t batch_faults, batch_no_overlap_hint;
/* Work of each GPU (by its stream's context), and device memory of one
 * GPU that another GPU's work touched. */
static uint64_t launches_on[MAX_GPUS], copies_on[MAX_GPUS], cross_gpu;
/* A fault of work on the GPU: as the real context's, sticky; what later
 * waits for or queries its work returns it. */
static CUresult sticky_error;

static bool copy_valid(const void *dst, const void *src, size_t len);

static int
ctx_ordinal(CUcontext c)
{
	return ((const struct fake_ctx *)c)->ordinal;
}

/* Whether [p, p + len), where it is device memory, is GPU gpu's own: a
 * GPU reaches another's memory only by peer access, which nothing here
 * enables (counted either way). */
static bool
own_memory(int gpu, uintptr_t p, size_t len)
{
	const struct region *r = find_region(allocs, p, len);

	if (r == NULL || ctx_ordinal(r->ctx) == gpu)
		return true;
	cross_gpu++;
	return false;
}

/* Whether the kernel of GPU gpu may copy descriptor d: into device
 * memory, from mapped host memory or (bulk fills) from device memory; the
 * kernel's own GPU's, without peer access (a fault on a GPU: nothing
 * written here). Lock held. */
static bool
desc_ok(int gpu, const struct gpudma_scatter_desc *d)
{
	return find_region(allocs, d->dst, d->len) != NULL &&
		own_memory(gpu, d->dst, d->len) &&
		own_memory(gpu, d->src, d->len) &&
		(find_region(registrations, d->src, d->len) != NULL ||
		find_region(allocs, d->src, d->len) != NULL);
}

/* n descriptors at descs, copied by the kernels' own routine
 * (gpudma_fill.h) after the checks a GPU would fault on. Lock held. */
static void
run_descs(int gpu, const struct gpudma_scatter_desc *descs, unsigned int n)
{
	unsigned int i;

	if (find_region(registrations, (uintptr_t)descs,
			(size_t)n * sizeof(*descs)) == NULL) {
		kernel_errors++;
		return;
	}
	for (i = 0; i < n; i++) {
		if (desc_ok(gpu, &descs[i]))
			gpudma_copy_desc(&descs[i], 0, 1);
		else
			kernel_errors++;
	}
}

/* What the scatter kernel does, when its stream reaches it: it reads the
 * descriptors then, as the GPU would. */
static void
run_scatter(const struct fake_op *op)
{
	run_descs(op->gpu, op->descs, op->n);
}

/*
 * The persistent fill kernel, as a thread polling its ring the way the
 * kernel does, through the same protocol routines (gpudma_fill.h): it
 * serves fills seq, seq + 1, ... until QUIT or until it parks (idle, or
 * past its life, by the CPU's clock), each copied under the lock
 * (the checks read the books) and published by DONE after it. Manual mode
 * holds the fills back, as it holds copies.
 */
struct fill_standin {
	struct gpudma_fill_ring *ring;
	uint32_t seq;
	uint64_t idle_ns;
	int gpu;
	bool started;
	int ended;               /* the thread's last write */
	pthread_t thread;
};

static void *
fill_standin_main(void *arg)
{
	struct fill_standin *f = arg;
	const struct timespec pause = { .tv_sec = 0, .tv_nsec = 20000 };
	const uint64_t deadline = gpudma_fill_now_ns() + GPUDMA_FILL_LIFE_NS;
	uint32_t seq, n;

	for (seq = f->seq;; seq++) {
		n = gpudma_fill_wait(f->ring, seq, f->idle_ns, deadline);
		if (n == GPUDMA_FILL_PARK) {
			pthread_mutex_lock(&lock);
			fills_parked++;
			pthread_mutex_unlock(&lock);
			gpudma_fill_park(f->ring);
			break;
		}
		if (n == GPUDMA_FILL_QUIT)
			break;
		while (__atomic_load_n(&async_manual, __ATOMIC_RELAXED))
			nanosleep(&pause, NULL);
		pthread_mutex_lock(&lock);
		run_descs(f->gpu, (const struct gpudma_scatter_desc *)(uintptr_t)
			f->ring->descs[seq % GPUDMA_FILL_SLOTS], n);
		fills_served++;
		pthread_mutex_unlock(&lock);
		gpudma_fill_finish(f->ring, seq);
	}
	/* Release: the stream that joins it sees everything it did. */
	__atomic_store_n(&f->ended, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Runs a fill kernel's operation: false while it is still running (the
 * stream waits behind it). Lock held. */
static bool
run_fill(struct fake_op *op)
{
	struct fill_standin *f = op->fill;

	if (!f->started) {
		if (pthread_create(&f->thread, NULL, fill_standin_main, f) != 0) {
			kernel_errors++;
			sticky_error = CUDA_ERROR_LAUNCH_FAILED;
			free(f);
			op->fill = NULL;
			return true;
		}
		f->started = true;
		fills_running++;
	}
	if (!__atomic_load_n(&f->ended, __ATOMIC_ACQUIRE))
		return false;
	pthread_join(f->thread, NULL);
	fills_running--;
	free(f);
	op->fill = NULL;
	return true;
}

static struct fake_stream *
stream_get(CUstream h)
{
	struct fake_stream *s = (struct fake_stream *)h;

	if (s < streams || s >= streams + MAX_STREAMS || s->magic != STREAM_MAGIC)
		return NULL;
	return s;
}

/* A stream work is put on: one of the current context, as the driver
 * wants (another context's is an invalid handle there). */
static struct fake_stream *
stream_here(CUstream h)
{
	struct fake_stream *s = stream_get(h);

	return s != NULL && s->ctx == current() ? s : NULL;
}

/* Runs the stream's operations up to (not including) sequence number end. */
static void
stream_run(struct fake_stream *s, uint64_t end)
{
	while (s->done < end && s->done < s->tail) {
		struct fake_op *op = &s->ops[s->done - s->base];

		if (op->fill != NULL) {
			if (!run_fill(op))
				break;
		} else if (op->word != NULL)
			/* The real write follows a fence of the stream's
			 * earlier work: here it follows their memcpy. */
			__atomic_store_n(op->word, op->value, __ATOMIC_RELEASE);
		else if (op->descs != NULL)
			run_scatter(op);
		else if (op->fault)
			sticky_error = CUDA_ERROR_LAUNCH_FAILED;
		else if (op->len > 0)
			memcpy(op->dst, op->src, op->len);
		s->done++;
	}
	if (s->done == s->tail) {
		s->base = s->tail;
	}
}

/* Runs the stream up to end as a blocking call does, waiting for fill
 * kernels to end (the lock released meanwhile: their stand-ins take it). */
static void
stream_finish(struct fake_stream *s, uint64_t end)
{
	const struct timespec pause = { .tv_sec = 0, .tv_nsec = 50000 };

	for (;;) {
		stream_run(s, end);
		if (s->done >= end || s->done >= s->tail)
			return;
		pthread_mutex_unlock(&lock);
		nanosleep(&pause, NULL);
		pthread_mutex_lock(&lock);
		if (s->magic != STREAM_MAGIC)
			return;
	}
}

static CUresult
stream_push(struct fake_stream *s, const struct fake_op *op)
{
	if (s->tail - s->base == s->cap) {
		size_t cap = s->cap == 0 ? 256 : s->cap * 2;
		struct fake_op *ops;

		/* Compact the done prefix away before growing. */
		if (s->done > s->base) {
			memmove(s->ops, s->ops + (s->done - s->base),
				(s->tail - s->done) * sizeof(*ops));
			s->base = s->done;
		}
		if (s->tail - s->base < s->cap)
			goto room;
		ops = realloc(s->ops, cap * sizeof(*ops));
		if (ops == NULL)
			return CUDA_ERROR_OUT_OF_MEMORY;
		s->ops = ops;
		s->cap = cap;
	}
room:
	s->ops[s->tail - s->base] = *op;
	s->ops[s->tail - s->base].gpu = ctx_ordinal(s->ctx);
	s->tail++;
	if (!async_manual)
		stream_run(s, s->tail);
	return CUDA_SUCCESS;
}

/* A copy between device memory and pinned host memory, either way. */
static bool
copy_valid(const void *dst, const void *src, size_t len)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	if (len == 0)
		return true;
	return (find_region(allocs, d, len) != NULL &&
			find_region(registrations, s, len) != NULL) ||
		(find_region(registrations, d, len) != NULL &&
			find_region(allocs, s, len) != NULL);
}

static CUresult fake_cuStreamCreate(CUstream *h, unsigned int flags)
{
	int i;

	ENTER();
	NEED_CTX();
	if (h == NULL || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING) != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	for (i = 0; i < MAX_STREAMS; i++) {
		if (streams[i].magic != STREAM_MAGIC) {
			memset(&streams[i], 0, sizeof(streams[i]));
			streams[i].magic = STREAM_MAGIC;
			streams[i].ctx = current();
			*h = (CUstream)&streams[i];
			RETURN(CUDA_SUCCESS);
		}
	}
	RETURN(CUDA_ERROR_OUT_OF_MEMORY);
}

static void
stream_drop(struct fake_stream *s)
{
	/* Like the real driver, destroying a stream lets its work finish;
	 * a fill kernel still running then never will (nobody can ask it
	 * to quit any more): a fault of the driver under test, its
	 * stand-in left polling memory that is about to go. */
	stream_run(s, s->tail);
	if (s->done < s->tail)
		kernel_errors++;
	free(s->ops);
	s->ops = NULL;
	s->magic = 0;
}

static CUresult fake_cuStreamDestroy(CUstream h)
{
	struct fake_stream *s;

	ENTER_RELEASE((s = stream_get(h)) != NULL && (stream_drop(s), true));
	NEED_CTX();
	s = stream_get(h);
	if (s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	stream_drop(s);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuStreamSynchronize(CUstream h)
{
	struct fake_stream *s;

	ENTER();
	NEED_CTX();
	s = stream_get(h);
	if (s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	stream_finish(s, s->tail);
	RETURN(sticky_error);
}

static CUresult fake_cuEventCreate(CUevent *h, unsigned int flags)
{
	struct fake_event *e;

	ENTER();
	NEED_CTX();
	if (h == NULL || (flags & ~(unsigned int)(CU_EVENT_BLOCKING_SYNC |
			CU_EVENT_DISABLE_TIMING)) != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	e->magic = EVENT_MAGIC;
	e->stream = -1;
	live_events++;
	*h = (CUevent)e;
	RETURN(CUDA_SUCCESS);
}

static struct fake_event *
event_get(CUevent h)
{
	struct fake_event *e = (struct fake_event *)h;

	return e != NULL && e->magic == EVENT_MAGIC ? e : NULL;
}

static bool
event_drop(struct fake_event *e)
{
	e->magic = 0;
	free(e);
	live_events--;
	return true;
}

static bool
event_done(const struct fake_event *e)
{
	const struct fake_stream *s;

	if (e->stream < 0)
		return true;
	s = &streams[e->stream];
	return s->magic != STREAM_MAGIC || s->done >= e->seq;
}

enum event_op { EV_DESTROY, EV_QUERY, EV_SYNC };

/* The calls on one event (lock held, context checked). */
static CUresult
event_call(CUevent h, enum event_op op)
{
	struct fake_event *e = event_get(h);

	if (e == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	switch (op) {
	case EV_DESTROY:
		event_drop(e);
		return CUDA_SUCCESS;
	case EV_QUERY:
		if (sticky_error != CUDA_SUCCESS)
			return sticky_error;
		/* What waits behind a fill kernel goes on once it ended. */
		if (!event_done(e) && !async_manual)
			stream_run(&streams[e->stream], e->seq);
		return event_done(e) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	default:
		if (!event_done(e))
			stream_finish(&streams[e->stream], e->seq);
		return sticky_error;
	}
}

static CUresult fake_cuEventDestroy(CUevent h)
{
	struct fake_event *e;

	ENTER_RELEASE((e = event_get(h)) != NULL && event_drop(e));
	NEED_CTX();
	RETURN(event_call(h, EV_DESTROY));
}

static CUresult fake_cuEventQuery(CUevent h)
{
	ENTER();
	NEED_CTX();
	RETURN(event_call(h, EV_QUERY));
}

static CUresult fake_cuEventSynchronize(CUevent h)
{
	ENTER();
	NEED_CTX();
	RETURN(event_call(h, EV_SYNC));
}

static CUresult fake_cuEventRecord(CUevent h, CUstream sh)
{
	struct fake_event *e;
	struct fake_stream *s;

	ENTER();
	NEED_CTX();
	e = event_get(h);
	s = stream_here(sh);
	if (e == NULL || s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	e->stream = (int)(s - streams);
	e->seq = s->tail;
	RETURN(CUDA_SUCCESS);
}

/* One asynchronous copy (lock held, context checked). */
static CUresult
copy_async(CUstream h, void *dst, const void *src, size_t len)
{
	struct fake_stream *s = stream_here(h);

	if (s == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!copy_valid(dst, src, len))
		return CUDA_ERROR_INVALID_VALUE;
	/* A copy engine reaches another GPU's memory by its unified
	 * address: it runs, counted. */
	(void)own_memory(ctx_ordinal(s->ctx), (uintptr_t)dst, len);
	(void)own_memory(ctx_ordinal(s->ctx), (uintptr_t)src, len);
	copies_on[ctx_ordinal(s->ctx)]++;
	async_copies++;
	return stream_push(s, &(struct fake_op){ .dst = dst, .src = src,
		.len = len });
}

static CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
		size_t len, CUstream h)
{
	ENTER();
	NEED_CTX();
	if (find_region(allocs, (uintptr_t)dst, len) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	RETURN(copy_async(h, (void *)(uintptr_t)dst, src, len));
}

static CUresult fake_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src,
		size_t len, CUstream h)
{
	ENTER();
	NEED_CTX();
	if (find_region(allocs, (uintptr_t)src, len) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	RETURN(copy_async(h, dst, (const void *)(uintptr_t)src, len));
}

static uint64_t stream_writes;

/* Stream memory operations: the word must be registered host memory
 * mapped for the GPU (its device address, as cuMemHostGetDevicePointer
 * gave it) or device memory. */
static CUresult fake_cuStreamWriteValue32(CUstream h, CUdeviceptr addr,
		cuuint32_t value, unsigned int flags)
{
	struct fake_stream *s;
	uintptr_t p = (uintptr_t)addr;

	ENTER();
	NEED_CTX();
	s = stream_here(h);
	if (s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	if (flags & ~(unsigned int)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER ||
			(addr & 3) != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (find_region(allocs, p, 4) == NULL) {
		if (devptr_differs)
			p -= 4096;
		if (find_region(registrations, p, 4) == NULL)
			RETURN(CUDA_ERROR_INVALID_VALUE);
	}
	stream_writes++;
	RETURN(stream_push(s, &(struct fake_op){ .word = (uint32_t *)p,
		.value = value }));
}

/* Modules: any image loads; the functions there are the scatter kernel
 * and the persistent fill kernel, which the fake runs on the CPU. */
#define MODULE_MAGIC 0x444f4d46u /* "FMOD" */
static const char scatter_fn = 1, fill_fn = 2;

static CUresult fake_cuModuleLoadData(CUmodule *m, const void *image)
{
	uint32_t *mod;

	ENTER();
	NEED_CTX();
	if (m == NULL || image == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	mod = malloc(sizeof(*mod));
	if (mod == NULL)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	*mod = MODULE_MAGIC;
	live_modules++;
	*m = (CUmodule)mod;
	RETURN(CUDA_SUCCESS);
}

static bool
module_drop(CUmodule m)
{
	uint32_t *mod = (uint32_t *)m;

	if (mod == NULL || *mod != MODULE_MAGIC)
		return false;
	*mod = 0;
	free(mod);
	live_modules--;
	return true;
}

static CUresult fake_cuModuleUnload(CUmodule m)
{
	ENTER_RELEASE(module_drop(m));
	NEED_CTX();
	RETURN(module_drop(m) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

static CUresult fake_cuModuleGetFunction(CUfunction *f, CUmodule m,
		const char *name)
{
	ENTER();
	NEED_CTX();
	if (f == NULL || m == NULL || *(uint32_t *)m != MODULE_MAGIC ||
			name == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (strcmp(name, GPUDMA_SCATTER_KERNEL) == 0)
		*f = (CUfunction)(uintptr_t)&scatter_fn;
	else if (strcmp(name, GPUDMA_FILL_KERNEL) == 0)
		*f = (CUfunction)(uintptr_t)&fill_fn;
	else
		RETURN(CUDA_ERROR_NOT_FOUND);
	RETURN(CUDA_SUCCESS);
}

/* The persistent fill kernel: one block of whole warps, its ring mapped
 * host memory (by its device address), started when its stream reaches it.
 * Lock held, context checked. */
static CUresult
launch_fill(struct fake_stream *s, unsigned int gx, unsigned int bx,
		unsigned int by, unsigned int bz, unsigned int shmem, void **params,
		void **extra)
{
	struct fill_standin *f;
	uintptr_t ring;
	CUresult res;

	if (params == NULL || extra != NULL || gx != 1 || bx == 0 ||
			bx % 32 != 0 || bx > 1024 || by != 1 || bz != 1 ||
			shmem != 0)
		return CUDA_ERROR_INVALID_VALUE;
	ring = (uintptr_t)*(const CUdeviceptr *)params[0];
	if (devptr_differs &&
			find_region(registrations, ring, sizeof(struct gpudma_fill_ring)) == NULL)
		ring -= 4096;
	if (find_region(registrations, ring, sizeof(struct gpudma_fill_ring)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->ring = (struct gpudma_fill_ring *)ring;
	f->seq = *(const uint32_t *)params[1];
	f->idle_ns = *(const uint64_t *)params[2];
	f->gpu = ctx_ordinal(s->ctx);
	res = stream_push(s, &(struct fake_op){ .fill = f });
	if (res != CUDA_SUCCESS) {
		free(f);
		return res;
	}
	fill_launches++;
	launches_on[ctx_ordinal(s->ctx)]++;
	return CUDA_SUCCESS;
}

static CUresult fake_cuLaunchKernel(CUfunction f, unsigned int gx,
		unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
		unsigned int bz, unsigned int shmem, CUstream h, void **params,
		void **extra)
{
	struct fake_stream *s;
	struct fake_op op = { 0 };

	ENTER();
	NEED_CTX();
	s = stream_here(h);
	if (s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	if (f == (CUfunction)(uintptr_t)&fill_fn)
		RETURN(launch_fill(s, gx, bx, by, bz, shmem, params, extra));
	if (f != (CUfunction)(uintptr_t)&scatter_fn || params == NULL ||
			extra != NULL || gx == 0 || gy != 1 || gz != 1 ||
			bx == 0 || bx > 1024 || by != 1 || bz != 1 || shmem != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	op.descs = *(const struct gpudma_scatter_desc **)params[0];
	op.n = *(const unsigned int *)params[1];
	/* Whole warps: the kernel gives each a descriptor. */
	if (op.descs == NULL || op.n == 0 || bx % 32 != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	kernel_launches++;
	launches_on[ctx_ordinal(s->ctx)]++;
	RETURN(stream_push(s, &op));
}

/* Synchronous copies (the benchmarks' reference and read-back): any host
 * memory, after the work of every stream, as the legacy stream waits. */
static void
run_all_streams(void)
{
	int i;

	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i].magic == STREAM_MAGIC)
			stream_run(&streams[i], streams[i].tail);
}

static CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t len)
{
	ENTER();
	NEED_CTX();
	if (find_region(allocs, (uintptr_t)dst, len) == NULL || src == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	run_all_streams();
	memcpy((void *)(uintptr_t)dst, src, len);
	RETURN(CUDA_SUCCESS);
}

static CUresult fake_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t len)
{
	ENTER();
	NEED_CTX();
	if (find_region(allocs, (uintptr_t)src, len) == NULL || dst == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	run_all_streams();
	memcpy(dst, (const void *)(uintptr_t)src, len);
	RETURN(CUDA_SUCCESS);
}

/*
 * Whether the SMs reach the host side of a batched copy: the driver may run
 * a batch as a copy kernel rather than on a copy engine
 * (CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE is only a hint), and a kernel
 * reaches registered host memory only through its GPU mapping
 * (CU_MEMHOSTREGISTER_DEVICEMAP). One that does not faults when it runs,
 * as the H100 did: CUDA_ERROR_LAUNCH_FAILED from then on.
 */
static bool
batch_copy_reachable(uintptr_t d, uintptr_t s, size_t len)
{
	const struct region *r = find_region(registrations, s, len);

	if (r == NULL)
		r = find_region(registrations, d, len);
	return len == 0 || (r != NULL && r->mapped);
}

/* CUDA 12.8's form, with failIdx. */
static CUresult fake_cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs,
		size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
		size_t *attr_idxs, size_t nb_attrs, size_t *fail_idx, CUstream h)
{
	struct fake_stream *s;
	CUresult res;
	size_t i;

	ENTER();
	NEED_CTX();
	if (fail_idx != NULL)
		*fail_idx = SIZE_MAX;
	s = stream_here(h);
	/* The legacy default stream is not allowed for batches. */
	if (s == NULL)
		RETURN(CUDA_ERROR_INVALID_HANDLE);
	if (count == 0 || dsts == NULL || srcs == NULL || sizes == NULL ||
			attrs == NULL || attr_idxs == NULL || nb_attrs == 0 ||
			nb_attrs > count || attr_idxs[0] != 0)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	for (i = 0; i < nb_attrs; i++) {
		if (attrs[i].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_INVALID ||
				(attrs[i].flags &
				~(unsigned int)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) != 0)
			RETURN(CUDA_ERROR_INVALID_VALUE);
		if (!(attrs[i].flags & CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE))
			batch_no_overlap_hint++;
	}
	for (i = 0; i < count; i++) {
		if (!copy_valid((void *)(uintptr_t)dsts[i],
				(const void *)(uintptr_t)srcs[i], sizes[i])) {
			if (fail_idx != NULL)
				*fail_idx = i;
			RETURN(CUDA_ERROR_INVALID_VALUE);
		}
	}
	for (i = 0; i < count; i++) {
		bool fault = !batch_copy_reachable(dsts[i], srcs[i], sizes[i]);

		(void)own_memory(ctx_ordinal(s->ctx), dsts[i], sizes[i]);
		(void)own_memory(ctx_ordinal(s->ctx), srcs[i], sizes[i]);
		batch_faults += fault;
		res = stream_push(s, &(struct fake_op){
			.dst = (void *)(uintptr_t)dsts[i],
			.src = (const void *)(uintptr_t)srcs[i], .len = sizes[i],
			.fault = fault });
		if (res != CUDA_SUCCESS)
			RETURN(res);
	}
	batch_calls++;
	async_copies += count;
	copies_on[ctx_ordinal(s->ctx)] += count;
	RETURN(CUDA_SUCCESS);
}

/* A stream of the driver must belong to the current context; NULL is the
 * legacy stream, which a persistent kernel may occupy forever: counted. */
#define NEED_STREAM(s) do { \
	if ((s) == NULL) \
		legacy_stream_memsets++; \
	else if (stream_get(s) == NULL || \
			((struct fake_stream *)(s))->ctx != current()) \
		RETURN(CUDA_ERROR_INVALID_HANDLE); \
} while (0)

/* Runs at once, after what the stream holds: the driver waits for it. */
static CUresult fake_cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
	ENTER();
	NEED_CTX();
	NEED_STREAM(s);
	if (n == 0 || find_region(allocs, (uintptr_t)p, n) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	if (s != NULL)
		stream_run(stream_get(s), stream_get(s)->tail);
	memset((void *)(uintptr_t)p, v, n);
	RETURN(CUDA_SUCCESS);
}

/* Forgets dma-bufs whose fd was closed (lock held). */
static void
prune_dmabufs(void)
{
	unsigned int i = 0;
	struct stat st;

	while (i < nb_dmabufs) {
		if (fstat(dmabufs[i].fd, &st) == 0 && st.st_ino == dmabufs[i].ino) {
			i++;
			continue;
		}
		dmabufs[i] = dmabufs[--nb_dmabufs];
	}
}

static CUresult fake_cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p,
		size_t size, CUmemRangeHandleType type, unsigned long long flags)
{
	struct stat st;
	int fd;

	ENTER();
	NEED_CTX();
	if (handle == NULL || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
			flags != 0 || size == 0 || p % HOST_PAGE != 0 ||
			size % HOST_PAGE != 0 ||
			find_region(allocs, (uintptr_t)p, size) == NULL)
		RETURN(CUDA_ERROR_INVALID_VALUE);
	prune_dmabufs();
	if (nb_dmabufs == MAX_DMABUFS)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (fd < 0)
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	if (ftruncate(fd, (off_t)size) != 0 || fstat(fd, &st) != 0) {
		close(fd);
		RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	dmabufs[nb_dmabufs++] = (struct fake_dmabuf){
		.fd = fd, .ino = st.st_ino, .start = (uintptr_t)p, .len = size,
	};
	*(int *)handle = fd;
	RETURN(CUDA_SUCCESS);
}

/* ---- symbol lookup ------------------------------------------------------- */

struct symbol {
	const char *name;
	int since;       /* first CUDA version with this ABI */
	void *fn;
};

/* Newest ABI first for symbols that have several. */
static const struct symbol symbols[] = {
#define S(n, v) { #n, v, (void *)fake_ ## n }
	S(cuGetErrorName, 6000), S(cuGetErrorString, 6000), S(cuInit, 2000),
	S(cuDeviceGet, 2000), S(cuDeviceGetCount, 2000),
	S(cuDeviceGetName, 2000), S(cuDeviceGetByPCIBusId, 4010),
	S(cuDeviceGetPCIBusId, 4010), S(cuDeviceTotalMem, 3020),
	S(cuDeviceGetAttribute, 2000), S(cuDevicePrimaryCtxRetain, 7000),
	S(cuDevicePrimaryCtxRelease, 11000), S(cuCtxPushCurrent, 4000),
	S(cuCtxPopCurrent, 4000),
	{ "cuCtxGetDevice", 13000, (void *)fake_cuCtxGetDevice_v13000 },
	S(cuCtxGetDevice, 2000),
	S(cuMemAlloc, 3020), S(cuMemFree, 3020), S(cuMemHostRegister, 6050),
	S(cuMemHostUnregister, 4000), S(cuMemHostGetDevicePointer, 3020),
	S(cuPointerSetAttribute, 6000), S(cuPointerGetAttribute, 4000),
	S(cuFlushGPUDirectRDMAWrites, 11030),
	S(cuStreamCreate, 2000), S(cuStreamDestroy, 4000),
	S(cuStreamSynchronize, 2000), S(cuMemsetD8Async, 3020),
	S(cuMemGetHandleForAddressRange, 11070), S(cuEventCreate, 2000),
	S(cuEventDestroy, 4000), S(cuEventRecord, 2000), S(cuEventQuery, 2000),
	S(cuEventSynchronize, 2000), S(cuMemcpyHtoDAsync, 3020),
	S(cuMemcpyDtoHAsync, 3020), S(cuMemcpyBatchAsync, 12080),
	S(cuMemcpyHtoD, 3020), S(cuMemcpyDtoH, 3020),
	S(cuModuleLoadData, 2000), S(cuModuleUnload, 2000),
	S(cuModuleGetFunction, 2000), S(cuLaunchKernel, 4000),
	S(cuStreamWriteValue32, 11070),
#undef S
};

static CUresult
lookup(const char *name, void **pfn, int version)
{
	size_t i;

	*pfn = NULL;
	if (strcmp(name, hidden_symbol) == 0)
		return CUDA_ERROR_NOT_FOUND;
	for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		if (strcmp(symbols[i].name, name) == 0 &&
				symbols[i].since <= version &&
				symbols[i].since <= driver_version) {
			*pfn = symbols[i].fn;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult
cuGetProcAddress_v2(const char *name, void **pfn, int version, cuuint64_t flags,
		CUdriverProcAddressQueryResult *status)
{
	CUresult res;

	if (name == NULL || pfn == NULL || flags != CU_GET_PROC_ADDRESS_DEFAULT)
		return CUDA_ERROR_INVALID_VALUE;
	res = lookup(name, pfn, version);
	if (status != NULL)
		*status = res == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS :
			CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	/* Like the real driver: a missing symbol is reported in status. */
	return CUDA_SUCCESS;
}

EXPORT CUresult
cuDriverGetVersion(int *v)
{
	if (v == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*v = driver_version;
	return CUDA_SUCCESS;
}

/* ---- control interface ------------------------------------------------------ */

EXPORT void
fake_cuda_reset_faults(void)
{
	pthread_mutex_lock(&lock);
	calls = 0;
	fail_at = 0;
	failed_name = NULL;
	failed_attr = -1;
	pthread_mutex_unlock(&lock);
}

EXPORT void
fake_cuda_fail_call(uint64_t n, CUresult err)
{
	pthread_mutex_lock(&lock);
	calls = 0;
	fail_at = n;
	fail_err = err;
	failed_name = NULL;
	failed_attr = -1;
	pthread_mutex_unlock(&lock);
}

#define GETTER(type, fn, expr) \
	EXPORT type fn(void) \
	{ \
		type v_; \
		pthread_mutex_lock(&lock); \
		v_ = (expr); \
		pthread_mutex_unlock(&lock); \
		return v_; \
	}

static unsigned int
count(const struct region *r)
{
	unsigned int n = 0;

	for (; r != NULL; r = r->next)
		n++;
	return n;
}

static unsigned int
primary_refs(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < nb_gpus; i++)
		n += gpus[i].primary_refs;
	return n;
}

static unsigned int
live_dmabufs(void)
{
	prune_dmabufs();
	return nb_dmabufs;
}

GETTER(uint64_t, fake_cuda_calls, calls)
GETTER(unsigned int, fake_cuda_live_dmabufs, live_dmabufs())
GETTER(uint64_t, fake_cuda_p2p_token_queries, p2p_token_queries)
GETTER(uint64_t, fake_cuda_legacy_stream_uses, legacy_stream_memsets)
GETTER(unsigned int, fake_cuda_live_allocs, count(allocs))
GETTER(unsigned int, fake_cuda_live_registrations, count(registrations))
GETTER(unsigned int, fake_cuda_live_primary_refs, primary_refs())
GETTER(unsigned int, fake_cuda_abandoned, abandoned)
GETTER(uint64_t, fake_cuda_flush_calls, flush_calls)
GETTER(unsigned int, fake_cuda_abi_errors, abi_errors)

EXPORT const char *
fake_cuda_failed_call(int *attr)
{
	const char *n;

	pthread_mutex_lock(&lock);
	n = failed_name;
	if (attr != NULL)
		*attr = failed_attr;
	pthread_mutex_unlock(&lock);
	return n;
}

EXPORT unsigned int
fake_cuda_ctx_depth(void)
{
	return ctx_depth;
}

EXPORT int
fake_cuda_is_device_range(const void *p, size_t len)
{
	int ret;

	pthread_mutex_lock(&lock);
	ret = find_region(allocs, (uintptr_t)p, len) != NULL;
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT CUcontext
fake_cuda_alloc_ctx(const void *p)
{
	struct region *r;
	CUcontext c;

	pthread_mutex_lock(&lock);
	r = find_region(allocs, (uintptr_t)p, 1);
	c = r != NULL ? r->ctx : NULL;
	pthread_mutex_unlock(&lock);
	return c;
}

EXPORT int
fake_cuda_is_registered(const void *p, size_t len)
{
	int ret;

	pthread_mutex_lock(&lock);
	ret = find_region(registrations, (uintptr_t)p, len) != NULL;
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT CUcontext
fake_cuda_ctx_create(int ordinal)
{
	struct fake_ctx *c;

	if (ordinal < 0 || ordinal >= nb_gpus)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->magic = CTX_MAGIC;
	c->ordinal = ordinal;
	return (CUcontext)c;
}

EXPORT void
fake_cuda_ctx_destroy(CUcontext ctx)
{
	struct fake_ctx *c = (struct fake_ctx *)ctx;

	if (c == NULL || c->primary)
		return;
	c->magic = 0;
	free(c);
}

EXPORT void
fake_cuda_set_rdma_ordering(int ordering)
{
	pthread_mutex_lock(&lock);
	rdma_ordering = ordering;
	pthread_mutex_unlock(&lock);
}

EXPORT void
fake_cuda_set_async_manual(int on)
{
	pthread_mutex_lock(&lock);
	async_manual = on != 0;
	if (!async_manual)
		run_all_streams();
	pthread_mutex_unlock(&lock);
}

EXPORT uint64_t
fake_cuda_async_complete(uint64_t n)
{
	uint64_t ran = 0;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_STREAMS && ran < n; i++) {
		struct fake_stream *s = &streams[i];
		uint64_t k;

		if (s->magic != STREAM_MAGIC)
			continue;
		k = RTE_MIN_(s->tail - s->done, n - ran);
		stream_run(s, s->done + k);
		ran += k;
	}
	pthread_mutex_unlock(&lock);
	return ran;
}

EXPORT uint64_t
fake_cuda_async_pending(void)
{
	uint64_t n = 0;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i].magic == STREAM_MAGIC)
			n += streams[i].tail - streams[i].done;
	pthread_mutex_unlock(&lock);
	return n;
}

static unsigned int
live_streams(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < MAX_STREAMS; i++)
		n += streams[i].magic == STREAM_MAGIC;
	return n;
}

GETTER(unsigned int, fake_cuda_live_streams, live_streams())
GETTER(unsigned int, fake_cuda_live_events, live_events)
GETTER(uint64_t, fake_cuda_async_copies, async_copies)
GETTER(uint64_t, fake_cuda_batch_calls, batch_calls)
GETTER(unsigned int, fake_cuda_live_modules, live_modules)
GETTER(uint64_t, fake_cuda_kernel_launches, kernel_launches)
GETTER(uint64_t, fake_cuda_kernel_errors, kernel_errors)
GETTER(uint64_t, fake_cuda_fill_launches, fill_launches)
GETTER(uint64_t, fake_cuda_fills_served, fills_served)
GETTER(uint64_t, fake_cuda_fills_parked, fills_parked)
GETTER(unsigned int, fake_cuda_fills_running, fills_running)
GETTER(uint64_t, fake_cuda_batch_faults, batch_faults)
GETTER(uint64_t, fake_cuda_batch_no_overlap_hint, batch_no_overlap_hint)
GETTER(CUresult, fake_cuda_sticky_error, sticky_error)
GETTER(uint64_t, fake_cuda_cross_gpu_accesses, cross_gpu)

/* A per-GPU counter, 0 for an ordinal out of range. */
static uint64_t
gpu_counter(const uint64_t *per_gpu, int ordinal)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = ordinal >= 0 && ordinal < MAX_GPUS ? per_gpu[ordinal] : 0;
	pthread_mutex_unlock(&lock);
	return n;
}

EXPORT uint64_t
fake_cuda_kernel_launches_on(int ordinal)
{
	return gpu_counter(launches_on, ordinal);
}

EXPORT uint64_t
fake_cuda_async_copies_on(int ordinal)
{
	return gpu_counter(copies_on, ordinal);
}

EXPORT void
fake_cuda_clear_sticky_error(void)
{
	pthread_mutex_lock(&lock);
	sticky_error = CUDA_SUCCESS;
	pthread_mutex_unlock(&lock);
}

EXPORT void
fake_cuda_set_devptr_differs(int on)
{
	pthread_mutex_lock(&lock);
	devptr_differs = on != 0;
	pthread_mutex_unlock(&lock);
}

EXPORT void
fake_cuda_set_rdma_flush_options(int options)
{
	pthread_mutex_lock(&lock);
	rdma_flush_options = options;
	pthread_mutex_unlock(&lock);
}

EXPORT void
fake_cuda_set_alloc_offset(size_t offset)
{
	pthread_mutex_lock(&lock);
	alloc_offset = offset;
	pthread_mutex_unlock(&lock);
}

EXPORT int
fake_cuda_dmabuf_range(int fd, uintptr_t *start, size_t *len)
{
	unsigned int i;
	int ret = -1;

	pthread_mutex_lock(&lock);
	prune_dmabufs();
	for (i = 0; i < nb_dmabufs; i++) {
		if (dmabufs[i].fd == fd) {
			*start = dmabufs[i].start;
			*len = dmabufs[i].len;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

EXPORT void
fake_cuda_set_dmabuf_supported(int on)
{
	pthread_mutex_lock(&lock);
	dmabuf_supported = on;
	pthread_mutex_unlock(&lock);
}

/*
 * FAKE_CUDA_EXIT_REPORT=1: at exit, what a program run by a script left
 * allocated or registered, for the scripts that cannot call the getters
 * (a program that links the real driver API and is given this library).
 */
__attribute__((destructor)) static void
fake_exit_report(void)
{
	const char *s = getenv("FAKE_CUDA_EXIT_REPORT");
	int i;

	if (s == NULL || strcmp(s, "1") != 0)
		return;
	fprintf(stderr, "fake_cuda: at exit: %u allocations, %u "
		"registrations live\n", fake_cuda_live_allocs(),
		fake_cuda_live_registrations());
	/* With several GPUs, whose work was each GPU's, and whether one
	 * touched another's memory. */
	if (nb_gpus < 2)
		return;
	fprintf(stderr, "fake_cuda: at exit:");
	for (i = 0; i < nb_gpus; i++)
		fprintf(stderr, " GPU %d: %" PRIu64 " launches, %" PRIu64
			" copies;", i, launches_on[i], copies_on[i]);
	fprintf(stderr, " %" PRIu64 " cross-GPU accesses\n", cross_gpu);
}
