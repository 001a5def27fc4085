/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The gpu_cuda driver, linked in as the project's programs link it, driven
 * through the gpudev API against the fake CUDA library (tests/fake_cuda).
 * No GPU needed.
 *
 * Usage: test-driver-fake MODE FAKE_LIBCUDA
 *   functional  every operation, its error cases, child contexts, threads
 *   faults      fail each CUDA call of a whole device lifetime in turn
 *   no-gpu      EAL starts and probes no GPU (CUDA missing or unusable)
 *   gdrcopy     CPU mappings through the fake GDRCopy (GPU_CUDA_LIBGDRAPI)
 *   dmabuf-nosym  the CUDA driver lacks cuMemGetHandleForAddressRange
 *               (FAKE_CUDA_HIDE_SYMBOL): probe works, export says ENOTSUP
 *
 * EAL's memory events are replaced by this program's own
 * rte_mem_event_callback_register (see "EAL memory events" below): CI runs
 * EAL without hugepages, where EAL never frees memory and has no events.
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_pause.h>

#include <gpudev_driver.h>

#include "fake_cuda.h"
#include "fake_gdrapi.h"
#include "rte_pmd_gpu_cuda.h"
#include "check.h"


static const char *gpu_args = "dev=0";
static unsigned int vdev_seq;
/* The driver is linked in: its own API, under short names. */
static int (*const child_attach)(int16_t child) = rte_pmd_gpu_cuda_child_attach;
static int (*const rc_stats)(int16_t dev_id,
		struct rte_pmd_gpu_cuda_reg_cache_stats *st) =
	rte_pmd_gpu_cuda_reg_cache_stats_get;
static int (*const rc_flush)(int16_t dev_id) = rte_pmd_gpu_cuda_reg_cache_flush;
static int (*const dmabuf_export)(int16_t dev_id, const void *ptr, size_t size,
		int *fd, uint64_t *offset) = rte_pmd_gpu_cuda_dmabuf_export;
static int (*const dmabuf_close)(int16_t dev_id, int fd) =
	rte_pmd_gpu_cuda_dmabuf_close;

/* ---- EAL memory events ------------------------------------------------------
 *
 * The driver watches EAL memory through rte_mem_event_callback_register.
 * This program defines that function (and its unregister) itself, exported
 * dynamically, so the plugin's calls land here: the tests then announce
 * EAL freeing memory (ev_fire) as EAL does before it unmaps hugepages, or
 * answer ENOTSUP as EAL does with legacy memory (ev_legacy).
 */

#define EV_MAX 8

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t ev_run_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	char name[RTE_MEMZONE_NAMESIZE * 2];
	rte_mem_event_callback_t cb;
	void *arg;
} ev_cbs[EV_MAX];
static bool ev_legacy;

int
rte_mem_event_callback_register(const char *name, rte_mem_event_callback_t clb,
		void *arg)
{
	unsigned int i;
	int ret = -1;

	if (ev_legacy) {
		rte_errno = ENOTSUP;
		return -1;
	}
	/* Like EAL: no change while a callback runs. */
	pthread_rwlock_wrlock(&ev_run_lock);
	pthread_mutex_lock(&ev_lock);
	rte_errno = ENOSPC;
	for (i = 0; i < EV_MAX; i++) {
		if (ev_cbs[i].cb != NULL && strcmp(ev_cbs[i].name, name) == 0) {
			rte_errno = EEXIST;
			break;
		}
	}
	for (i = 0; i < EV_MAX && rte_errno != EEXIST; i++) {
		if (ev_cbs[i].cb == NULL) {
			snprintf(ev_cbs[i].name, sizeof(ev_cbs[i].name), "%s", name);
			ev_cbs[i].cb = clb;
			ev_cbs[i].arg = arg;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ev_lock);
	pthread_rwlock_unlock(&ev_run_lock);
	return ret;
}

int
rte_mem_event_callback_unregister(const char *name, void *arg)
{
	unsigned int i;
	int ret = -1;

	pthread_rwlock_wrlock(&ev_run_lock);
	pthread_mutex_lock(&ev_lock);
	rte_errno = ENOENT;
	for (i = 0; i < EV_MAX; i++) {
		if (ev_cbs[i].cb != NULL && ev_cbs[i].arg == arg &&
				strcmp(ev_cbs[i].name, name) == 0) {
			ev_cbs[i].cb = NULL;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ev_lock);
	pthread_rwlock_unlock(&ev_run_lock);
	return ret;
}

static unsigned int
ev_registered(void)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&ev_lock);
	for (i = 0; i < EV_MAX; i++)
		n += ev_cbs[i].cb != NULL;
	pthread_mutex_unlock(&ev_lock);
	return n;
}

/* EAL is about to give [addr, addr + len) back. */
static void
ev_fire(const void *addr, size_t len)
{
	unsigned int i;

	pthread_rwlock_rdlock(&ev_run_lock);
	for (i = 0; i < EV_MAX; i++)
		if (ev_cbs[i].cb != NULL)
			ev_cbs[i].cb(RTE_MEM_EVENT_FREE, addr, len, ev_cbs[i].arg);
	pthread_rwlock_unlock(&ev_run_lock);
}

/*
 * gpudev 22.11 turns every driver error into -EPERM (rte_errno EPERM). The
 * driver's own error codes are checked by calling its operations directly.
 */
static struct rte_gpu *
gpu_of(int16_t id)
{
	struct rte_gpu_info info;

	return rte_gpu_info_get(id, &info) == 0 ? rte_gpu_get_by_name(info.name) : NULL;
}

static int
drv_free(int16_t id, void *p)
{
	struct rte_gpu *g = gpu_of(id);

	return g == NULL ? -ENODEV : g->ops.mem_free(g, p);
}

static int
drv_register(int16_t id, size_t size, void *p)
{
	struct rte_gpu *g = gpu_of(id);

	return g == NULL ? -ENODEV : g->ops.mem_register(g, size, p);
}

static int
drv_unregister(int16_t id, void *p)
{
	struct rte_gpu *g = gpu_of(id);

	return g == NULL ? -ENODEV : g->ops.mem_unregister(g, p);
}

static int
drv_alloc(int16_t id, size_t size, unsigned int align)
{
	struct rte_gpu *g = gpu_of(id);
	void *p = NULL;

	return g == NULL ? -ENODEV : g->ops.mem_alloc(g, size, align, &p);
}

/* rte_gpu_add_child, then the driver's attach (gpudev 22.11 gives children
 * no operations by itself). Returns the child id or -1; *attach_ret gets
 * the attach result. */
static int16_t
add_cuda_child(const char *name, int16_t parent, const void *ctx, int *attach_ret)
{
	int16_t child = rte_gpu_add_child(name, parent, (uint64_t)(uintptr_t)ctx);

	*attach_ret = child < 0 ? -ENODEV : child_attach(child);
	return child;
}

/* Hot-plugs a vdev of the driver; returns its gpudev id or -1. */
static int16_t
probe_gpu(const char *args, char *name, size_t name_len, int *err)
{
	int16_t id;
	int ret;

	snprintf(name, name_len, "gpu_cuda_t%u", vdev_seq++);
	ret = rte_eal_hotplug_add("vdev", name, args);
	if (err != NULL)
		*err = ret;
	if (ret != 0)
		return -1;
	RTE_GPU_FOREACH(id) {
		struct rte_gpu_info info;

		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, name) == 0)
			return id;
	}
	return -1;
}

static int
remove_gpu(const char *name)
{
	return rte_eal_hotplug_remove("vdev", name);
}

static bool
no_cuda_leaks(void)
{
	return fake_cuda_live_allocs() == 0 && fake_cuda_live_registrations() == 0 &&
		fake_cuda_live_primary_refs() == 0 && fake_cuda_ctx_depth() == 0 &&
		fake_cuda_live_streams() == 0 && fake_cuda_live_dmabufs() == 0 &&
		ev_registered() == 0;
}

#define CHECK_NO_LEAKS() CHECK(no_cuda_leaks(), \
	"CUDA resources left: %u allocs, %u registrations, %u ctx refs, ctx depth %u, %u streams, %u dma-bufs, %u EAL callbacks", \
	fake_cuda_live_allocs(), fake_cuda_live_registrations(), \
	fake_cuda_live_primary_refs(), fake_cuda_ctx_depth(), \
	fake_cuda_live_streams(), fake_cuda_live_dmabufs(), ev_registered())

/* ---- functional ------------------------------------------------------------ */

static void
probe_info_remove(void)
{
	struct rte_gpu_info info;
	char name[32];
	int16_t id;
	int err;

	id = probe_gpu(gpu_args, name, sizeof(name), &err);
	CHECK(id >= 0, "probe failed: %d", err);
	if (id < 0)
		return;
	CHECK(rte_gpu_is_valid(id), "valid");
	CHECK(rte_gpu_info_get(id, &info) == 0, "info");
	CHECK(strcmp(info.name, name) == 0, "name %s", info.name);
	CHECK(info.total_memory == ((size_t)1 << 30), "total memory %zu", info.total_memory);
	CHECK(info.processor_count == 132, "SMs %u", info.processor_count);
	CHECK(info.page_size == 65536, "page size %zu", info.page_size);
	CHECK(info.parent == RTE_GPU_ID_NONE, "no parent");
	CHECK(info.context != 0, "context set");
	CHECK(fake_cuda_live_primary_refs() == 1, "one primary ctx reference");
	CHECK(fake_cuda_abi_errors() == 0, "an entry point was called with the wrong ABI");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK(!rte_gpu_is_valid(id), "gone after remove");
	CHECK_NO_LEAKS();

	/* By PCI address too. */
	id = probe_gpu("dev=0000:01:00.0", name, sizeof(name), &err);
	CHECK(id >= 0, "probe by PCI address failed: %d", err);
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

static void
bad_devargs(void)
{
	static const char *const bad[] = {
		"foo=1", "dev=7", "dev=0000:99:00.0", "dev=zz", "dev=-1",
		"gdrcopy=maybe", "dev=", "dev=0,gdrcopy",
		"dev=0,reg_cache=2", "dev=0,reg_cache_max=0",
		"dev=0,reg_cache_max=abc", "dev=0,reg_cache_max=-1",
		"dev=0,reg_cache_max=1T", "dev=0,reg_cache_max=99999999999G",
		"dev=0,dev=1", "dev=0,gdrcopy=0,gdrcopy=1",
	};
	char name[32];
	unsigned int i;
	int16_t id;
	int err;

	for (i = 0; i < RTE_DIM(bad); i++) {
		id = probe_gpu(bad[i], name, sizeof(name), &err);
		CHECK(id < 0 && err != 0, "devargs \"%s\" accepted", bad[i]);
		CHECK(rte_gpu_count_avail() == 0, "a GPU appeared for \"%s\"", bad[i]);
		CHECK_NO_LEAKS();
	}
	/* The same GPU twice. */
	id = probe_gpu("dev=0,gdrcopy=0", name, sizeof(name), &err);
	CHECK(id >= 0, "probe: %d", err);
	{
		char name2[32];

		CHECK(probe_gpu("dev=0000:01:00.0", name2, sizeof(name2), &err) < 0,
			"probed the same GPU twice");
	}
	CHECK(rte_gpu_count_avail() == 1, "one GPU");
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

static void
alloc_free(void)
{
	static const size_t sizes[] = { 1, 255, 4096 + 3, 1 << 20 };
	static const unsigned int aligns[] = { 0, 8, 256, 4096, 65536, 1 << 21 };
	char name[32];
	unsigned int i, j;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		for (j = 0; j < RTE_DIM(aligns); j++) {
			uint8_t *p = rte_gpu_mem_alloc(id, sizes[i], aligns[j]);

			CHECK(p != NULL, "alloc %zu align %u: %s", sizes[i],
				aligns[j], rte_strerror(rte_errno));
			if (p == NULL)
				continue;
			CHECK(aligns[j] == 0 || ((uintptr_t)p & (aligns[j] - 1)) == 0,
				"%p not aligned to %u", (void *)p, aligns[j]);
			CHECK(fake_cuda_is_device_range(p, sizes[i]),
				"[%p, +%zu) not inside a CUDA allocation", (void *)p, sizes[i]);
			/* the fake's device memory is host memory: ASan checks this */
			memset(p, 0xa5, sizes[i]);
			CHECK(rte_gpu_mem_free(id, p) == 0, "free");
		}
	}
	CHECK(fake_cuda_live_allocs() == 0, "all freed");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

static void
alloc_errors(void)
{
	char name[32];
	uint8_t *keep, *p;
	uint8_t host[64];
	/* volatile: keeps the compiler from flagging the deliberate
	 * impossible sizes */
	volatile size_t huge = SIZE_MAX;
	unsigned int i;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	keep = rte_gpu_mem_alloc(id, 4096, 0);
	CHECK(keep != NULL, "alloc");
	if (keep == NULL)
		goto out;
	memset(keep, 0x5a, 4096);

	CHECK(rte_gpu_mem_alloc(id, 100, 3) == NULL && rte_errno == EINVAL,
		"non power of two alignment: %d", rte_errno);
	CHECK(rte_gpu_mem_alloc(id, huge, 0) == NULL && rte_errno == E2BIG,
		"SIZE_MAX: %d", rte_errno);
	CHECK(rte_gpu_mem_alloc(id, huge - 4096, 1 << 21) == NULL &&
		rte_errno == E2BIG, "overflowing alignment: %d", rte_errno);
	CHECK(rte_gpu_mem_alloc(id, (size_t)2 << 30, 0) == NULL &&
		rte_errno == ENOMEM, "more than the GPU has: %d", rte_errno);
	CHECK(rte_gpu_mem_free(id, NULL) == 0, "free(NULL) is a no-op");
	CHECK(rte_gpu_mem_free(id, host) == -EPERM && rte_errno == EPERM,
		"gpudev reports driver errors as EPERM");
	CHECK(drv_free(id, host) == -EINVAL, "free of unknown pointer");
	CHECK(drv_free(id, keep + 16) == -EINVAL, "free inside an allocation");
	CHECK(drv_alloc(id, 0, 0) == -EINVAL, "size 0 reaching the driver");
	CHECK(drv_alloc(id, 10, 3) == -EINVAL, "bad alignment reaching the driver");
	p = rte_gpu_mem_alloc(id, 128, 0);
	CHECK(p != NULL, "alloc");
	CHECK(rte_gpu_mem_free(id, p) == 0, "free");
	CHECK(drv_free(id, p) == -EINVAL, "double free");
	CHECK(rte_gpu_mem_free(id, p) != 0, "double free through gpudev");
	CHECK(drv_unregister(id, keep) == -EINVAL, "unregister of GPU memory");
	CHECK(rte_gpu_mem_cpu_map(id, 4096, keep) == NULL,
		"cpu_map without GDRCopy must fail");
	CHECK(rte_gpu_mem_cpu_unmap(id, keep) != 0, "cpu_unmap of unmapped memory");
	CHECK(rte_gpu_mem_alloc(RTE_GPU_ID_NONE, 10, 0) == NULL && rte_errno == ENODEV,
		"invalid device");
	CHECK(rte_gpu_mem_free(INT16_MAX, keep) == -ENODEV, "invalid device");

	for (i = 0; i < 4096; i++)
		if (keep[i] != 0x5a)
			break;
	CHECK(i == 4096, "live allocation disturbed at byte %u", i);
	CHECK(fake_cuda_live_allocs() == 1, "%u live allocations",
		fake_cuda_live_allocs());
	CHECK(rte_gpu_mem_free(id, keep) == 0, "free");
out:
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

static void
register_unregister(void)
{
	char name[32];
	uint8_t *buf, *zbuf;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	buf = aligned_alloc(4096, 1 << 16);
	zbuf = rte_zmalloc(NULL, 10000, 64);
	CHECK(buf != NULL && zbuf != NULL, "host memory");
	if (buf == NULL || zbuf == NULL)
		goto out;
	CHECK(rte_gpu_mem_register(id, 1 << 16, buf) == 0, "register");
	CHECK(fake_cuda_is_registered(buf, 1 << 16), "registered with CUDA");
	CHECK(rte_gpu_mem_register(id, 10000, zbuf) == 0, "register rte_zmalloc memory");
	CHECK(drv_register(id, 1 << 16, buf) == -EEXIST, "register twice");
	CHECK(rte_gpu_mem_register(id, 1 << 16, buf) == -EPERM, "register twice (gpudev)");
	CHECK(drv_register(id, 100, buf + 100) == -EEXIST, "overlapping registration");
	CHECK(drv_free(id, buf) == -EINVAL, "mem_free of registered memory");
	CHECK(fake_cuda_is_registered(buf, 1 << 16), "still registered after bad free");
	CHECK(drv_unregister(id, buf + 64) == -EINVAL, "unregister inside");
	CHECK(drv_register(id, SIZE_MAX, buf) == -EINVAL, "wrapping range");
	CHECK(drv_register(id, 0, buf) == -EINVAL, "size 0 reaching the driver");
	CHECK(drv_register(id, 10, NULL) == -EINVAL, "NULL reaching the driver");
	CHECK(rte_gpu_mem_unregister(id, buf) == 0, "unregister");
	CHECK(!fake_cuda_is_registered(buf, 1), "unregistered in CUDA");
	CHECK(drv_unregister(id, buf) == -EINVAL, "unregister twice");
	CHECK(rte_gpu_mem_unregister(id, buf) == -EPERM && rte_errno == EPERM,
		"unregister twice (gpudev)");
	CHECK(rte_gpu_mem_unregister(id, zbuf) == 0, "unregister");

	/* A GPU that would map registered memory at another address. */
	fake_cuda_set_devptr_differs(1);
	CHECK(drv_register(id, 1 << 16, buf) == -ENOTSUP,
		"device pointer != host pointer must be refused");
	fake_cuda_set_devptr_differs(0);
	CHECK(fake_cuda_live_registrations() == 0, "refused registration undone");
	CHECK(rte_gpu_mem_register(id, 1 << 16, buf) == 0, "register after refusal");
	CHECK(rte_gpu_mem_unregister(id, buf) == 0, "unregister");
out:
	CHECK(remove_gpu(name) == 0, "remove");
	free(buf);
	rte_free(zbuf);
	CHECK_NO_LEAKS();
}

static void
wmb_flushes(void)
{
	char name[32];
	uint64_t before;
	int16_t id;

	/* A GPU that does not order RDMA writes itself: every wmb flushes. */
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE);
	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	before = fake_cuda_flush_calls();
	CHECK(rte_gpu_wmb(id) == 0 && rte_gpu_wmb(id) == 0, "wmb");
	CHECK(fake_cuda_flush_calls() == before + 2,
		"wmb must flush GPUDirect RDMA writes on a GPU that needs it");
	CHECK(remove_gpu(name) == 0, "remove");

	/* A GPU that orders them for its own kernels: no flush needed. */
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER);
	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id >= 0) {
		before = fake_cuda_flush_calls();
		CHECK(rte_gpu_wmb(id) == 0, "wmb");
		CHECK(fake_cuda_flush_calls() == before,
			"wmb flushed although the GPU orders RDMA writes itself");
		CHECK(remove_gpu(name) == 0, "remove");
	}
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE);
	CHECK_NO_LEAKS();
}

/* What the driver logs between log_capture_start() and _stop(). */
static char log_text[4096];
static FILE *log_mem;

static void
log_capture_start(void)
{
	log_text[0] = '\0';
	log_mem = fmemopen(log_text, sizeof(log_text) - 1, "w");
	if (log_mem != NULL)
		rte_openlog_stream(log_mem);
}

static void
log_capture_stop(void)
{
	rte_openlog_stream(NULL);
	if (log_mem != NULL)
		fclose(log_mem);
	log_mem = NULL;
}

static void
comm_list_and_flag(void)
{
	struct rte_gpu_comm_list *list;
	struct rte_gpu_comm_flag flag;
	char name[32];
	uint32_t v = 0;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	CHECK(rte_gpu_comm_create_flag(id, &flag, RTE_GPU_COMM_FLAG_CPU) == 0, "flag");
	CHECK(fake_cuda_is_registered(flag.ptr, sizeof(uint32_t)), "flag registered");
	CHECK(rte_gpu_comm_set_flag(&flag, 7) == 0 &&
		rte_gpu_comm_get_flag_value(&flag, &v) == 0 && v == 7, "flag value");
	CHECK(rte_gpu_comm_destroy_flag(&flag) == 0, "destroy flag");

	list = rte_gpu_comm_create_list(id, 8);
	CHECK(list != NULL, "comm list: %s", rte_strerror(rte_errno));
	if (list != NULL) {
		CHECK(fake_cuda_is_registered(list, sizeof(*list) * 8), "list registered");
		CHECK(fake_cuda_is_registered(list[3].pkt_list,
			sizeof(struct rte_gpu_comm_pkt) * RTE_GPU_COMM_LIST_PKTS_MAX),
			"packet list registered");
		CHECK(rte_gpu_comm_destroy_list(list, 8) == 0, "destroy list");
	}
	CHECK(fake_cuda_live_registrations() == 0, "list registrations released");
	/* gpudev 22.11 loses the status array it allocated when cpu_map fails;
	 * closing the device must reclaim it, without calling it a leak of
	 * the application's. */
	log_capture_start();
	CHECK(remove_gpu(name) == 0, "remove");
	log_capture_stop();
	CHECK(strstr(log_text, "was never freed") == NULL,
		"the comm list's lost status array is not reported as a leak: %s",
		log_text);
	CHECK_NO_LEAKS();
}

static void
child_contexts(void)
{
	CUcontext ctx = fake_cuda_ctx_create(0);
	struct rte_gpu_info info;
	char name[32];
	int16_t id, child, bad;
	void *p;
	int ret;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0 && ctx != NULL, "probe");
	if (id < 0 || ctx == NULL)
		return;
	child = add_cuda_child("cuda_child0", id, ctx, &ret);
	CHECK(child >= 0 && ret == 0, "add child: %d, attach %d", rte_errno, ret);
	CHECK(child < 0 || child_attach(child) == -EEXIST, "attach twice");
	CHECK(child_attach(id) == -EINVAL, "attach of a parent");
	if (child >= 0) {
		CHECK(rte_gpu_info_get(child, &info) == 0 && info.parent == id &&
			info.context == (uint64_t)(uintptr_t)ctx &&
			info.total_memory == ((size_t)1 << 30), "child info");
		p = rte_gpu_mem_alloc(child, 1000, 0);
		CHECK(p != NULL, "alloc in child");
		CHECK(fake_cuda_alloc_ctx(p) == ctx, "allocated in the child's context");
		CHECK(drv_free(id, p) == -EINVAL,
			"the parent must not free the child's memory");
		CHECK(gpu_of(id)->ops.dev_close(gpu_of(id)) == -EBUSY,
			"close parent with child open");
		CHECK(rte_gpu_close(id) != 0, "close parent with child open (gpudev)");
		CHECK(rte_gpu_is_valid(id), "parent still there");
		CHECK(rte_gpu_mem_free(child, p) == 0, "free in child");
		(void)rte_gpu_mem_alloc(child, 1000, 0); /* leaked on purpose */
		CHECK(rte_gpu_close(child) == 0, "close child");
		CHECK(fake_cuda_live_allocs() == 0, "child close released its memory");
	}
	CHECK(fake_cuda_abi_errors() == 0, "cuCtxGetDevice called with the wrong ABI");
	/* A handle that is no CUDA context gets no operations. */
	bad = add_cuda_child("cuda_child_bad", id, &info, &ret);
	CHECK(bad >= 0 && ret == -EINVAL, "gpudev adds it, the driver refuses: %d", ret);
	if (bad >= 0) {
		CHECK(rte_gpu_mem_alloc(bad, 10, 0) == NULL && rte_errno == ENOTSUP,
			"unusable child: %d", rte_errno);
		CHECK(rte_gpu_close(bad) == 0, "close unusable child");
	}
	CHECK(remove_gpu(name) == 0, "remove");
	fake_cuda_ctx_destroy(ctx);
	CHECK_NO_LEAKS();
}

static void
close_releases_leaks(void)
{
	char name[32];
	void *host = aligned_alloc(4096, 8192);
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0 && host != NULL, "probe");
	if (id < 0 || host == NULL) {
		free(host);
		return;
	}
	CHECK(rte_gpu_mem_alloc(id, 5000, 0) != NULL, "alloc");
	CHECK(rte_gpu_mem_alloc(id, 70000, 65536) != NULL, "alloc");
	CHECK(rte_gpu_mem_register(id, 8192, host) == 0, "register");
	log_capture_start();
	CHECK(rte_gpu_close(id) == 0, "close");
	log_capture_stop();
	CHECK(strstr(log_text, "(5000 bytes) was never freed") != NULL &&
		strstr(log_text, "released 2 leaked GPU allocation(s) and 1 leaked host registration(s)") != NULL,
		"close names the application's leaks: %s", log_text);
	CHECK(!rte_gpu_is_valid(id), "closed");
	CHECK_NO_LEAKS();
	free(host);
	/* the vdev stays on its bus: remove it (the GPU is already gone) */
	remove_gpu(name);
}

struct stress_arg {
	int16_t id;
	unsigned int seed;
	unsigned int ops;
	unsigned int errors;
	void *data;         /* what the case shares between its threads */
};

#define MAX_THREADS 8

/* Runs fn in n threads on device id (seeds seed0, seed0 + 1...) and checks
 * that none counted an error. */
static void
run_threads(int16_t id, unsigned int n, void *(*fn)(void *), unsigned int seed0,
		unsigned int ops, void *data)
{
	struct stress_arg args[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	bool started[MAX_THREADS] = { false };
	unsigned int i;

	for (i = 0; i < n && i < MAX_THREADS; i++) {
		args[i] = (struct stress_arg){ .id = id, .seed = seed0 + i,
			.ops = ops, .data = data };
		started[i] = pthread_create(&th[i], NULL, fn, &args[i]) == 0;
		CHECK(started[i], "thread");
	}
	for (i = 0; i < n && i < MAX_THREADS; i++) {
		if (!started[i])
			continue;
		pthread_join(th[i], NULL);
		CHECK(args[i].errors == 0, "thread %u: %u errors", i, args[i].errors);
	}
}

static void *
stress_worker(void *p)
{
	struct stress_arg *a = p;
	enum { SLOTS = 16 };
	uint8_t *dev[SLOTS] = { NULL };
	uint8_t *host[SLOTS] = { NULL };
	size_t size[SLOTS] = { 0 };
	unsigned int i, s;

	for (i = 0; i < a->ops; i++) {
		s = rand_r(&a->seed) % SLOTS;
		if (rand_r(&a->seed) & 1) {
			if (dev[s] == NULL) {
				size[s] = 1 + rand_r(&a->seed) % 65536;
				dev[s] = rte_gpu_mem_alloc(a->id, size[s], 1u << (rand_r(&a->seed) % 13));
				if (dev[s] == NULL)
					a->errors++;
				else
					memset(dev[s], (int)(s + a->seed), size[s]);
			} else {
				if (!fake_cuda_is_device_range(dev[s], size[s]) ||
						rte_gpu_mem_free(a->id, dev[s]) != 0)
					a->errors++;
				dev[s] = NULL;
			}
		} else {
			if (host[s] == NULL) {
				host[s] = malloc(4096);
				if (host[s] == NULL ||
						rte_gpu_mem_register(a->id, 4096, host[s]) != 0)
					a->errors++;
			} else {
				if (rte_gpu_mem_unregister(a->id, host[s]) != 0)
					a->errors++;
				free(host[s]);
				host[s] = NULL;
			}
		}
	}
	for (s = 0; s < SLOTS; s++) {
		if (dev[s] != NULL && rte_gpu_mem_free(a->id, dev[s]) != 0)
			a->errors++;
		if (host[s] != NULL && rte_gpu_mem_unregister(a->id, host[s]) != 0)
			a->errors++;
		free(host[s]);
	}
	return NULL;
}

static void
threads_stress(void)
{
	char name[32];
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	run_threads(id, 8, stress_worker, 1234, 20000, NULL);
	CHECK(fake_cuda_live_allocs() == 0 && fake_cuda_live_registrations() == 0,
		"everything released");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

/* ---- issue 15: wmb, cleared memory, closing device ------------------------ */

static int
drv_wmb(int16_t id)
{
	struct rte_gpu *g = gpu_of(id);

	return g == NULL ? -ENODEV : g->ops.wmb(g);
}

static void
wmb_neither_ordered_nor_flushable(void)
{
	char name[32];
	uint64_t before;
	int16_t id;

	/* No ordering and no host flush: NIC writes into GPU memory may not
	 * be visible when wmb returns, and wmb must say so. */
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE);
	fake_cuda_set_rdma_flush_options(0);
	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id >= 0) {
		before = fake_cuda_flush_calls();
		CHECK(drv_wmb(id) == -ENOTSUP, "wmb with nothing to order or flush: %d",
			drv_wmb(id));
		CHECK(rte_gpu_wmb(id) != 0, "gpudev reports the failure");
		CHECK(fake_cuda_flush_calls() == before, "flushed without the option");
		CHECK(remove_gpu(name) == 0, "remove");
	}
	/* Ordered but not flushable: a CPU barrier is all it takes. */
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER);
	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id >= 0) {
		CHECK(drv_wmb(id) == 0, "ordered GPU without flush option");
		CHECK(remove_gpu(name) == 0, "remove");
	}
	fake_cuda_set_rdma_ordering(CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE);
	fake_cuda_set_rdma_flush_options(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST);
	CHECK_NO_LEAKS();
}

static void
alloc_returns_cleared_memory(void)
{
	static const size_t sizes[] = { 1, 4096 + 3, 70000, 1 << 20 };
	static const unsigned int aligns[] = { 0, 4096, 65536 };
	uint64_t legacy = fake_cuda_legacy_stream_uses();
	char name[32];
	unsigned int i, j;
	size_t k;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	for (i = 0; i < RTE_DIM(sizes); i++) {
		for (j = 0; j < RTE_DIM(aligns); j++) {
			uint8_t *p = rte_gpu_mem_alloc(id, sizes[i], aligns[j]);

			CHECK(p != NULL, "alloc");
			if (p == NULL)
				continue;
			/* The fake hands out memory full of stale bytes. */
			for (k = 0; k < sizes[i] && p[k] == 0; k++)
				;
			CHECK(k == sizes[i], "alloc %zu align %u: byte %zu is %#x, not 0",
				sizes[i], aligns[j], k, k < sizes[i] ? p[k] : 0);
			memset(p, 0x77, sizes[i]);
			CHECK(rte_gpu_mem_free(id, p) == 0, "free");
		}
	}
	CHECK(fake_cuda_legacy_stream_uses() == legacy,
		"cleared on the legacy stream, where a persistent kernel would block it");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

struct racer {
	int16_t id;
	unsigned int n;
	uint8_t *host[64];
	volatile bool *go;
	unsigned int done;
};

/* Allocates and registers, keeping everything, until the device is gone:
 * what it made before close, close must release; nothing made after. */
static void *
close_racer(void *p)
{
	struct racer *r = p;
	unsigned int i, fails = 0;

	while (!*r->go)
		rte_pause();
	for (i = 0; fails < 100 && i < 100000; i++) {
		if (i % 8 == 7 && r->n < RTE_DIM(r->host)) {
			uint8_t *h = malloc(4096);

			if (h != NULL && rte_gpu_mem_register(r->id, 4096, h) == 0)
				r->host[r->n++] = h;
			else
				fails++, free(h);
		} else if (rte_gpu_mem_alloc(r->id, 64, 0) == NULL) {
			fails++;
		}
		r->done++;
	}
	return NULL;
}

static void
close_racing_calls(void)
{
	enum { THREADS = 6, ROUNDS = 20 };
	struct racer r[THREADS];
	pthread_t th[THREADS];
	unsigned int round, i, j;
	char name[32];
	int16_t id;

	/* A driver that uses a closed table can spin forever on its lock:
	 * fail in bounded time rather than at the harness's timeout. */
	alarm(120);
	for (round = 0; round < ROUNDS; round++) {
		volatile bool go = false;
		unsigned int started;

		id = probe_gpu(gpu_args, name, sizeof(name), NULL);
		CHECK(id >= 0, "probe");
		if (id < 0)
			return;
		for (i = 0; i < THREADS; i++) {
			r[i] = (struct racer){ .id = id, .go = &go };
			CHECK(pthread_create(&th[i], NULL, close_racer, &r[i]) == 0,
				"thread");
		}
		go = true;
		/* Close while they are busy, a little later each round. */
		do {
			started = 0;
			for (i = 0; i < THREADS; i++)
				started += __atomic_load_n(&r[i].done, __ATOMIC_RELAXED);
		} while (started < 50 + round * 40);
		CHECK(rte_gpu_close(id) == 0, "close while calls are in flight");
		for (i = 0; i < THREADS; i++) {
			pthread_join(th[i], NULL);
			for (j = 0; j < r[i].n; j++)
				free(r[i].host[j]);
		}
		CHECK(fake_cuda_live_allocs() == 0 && fake_cuda_live_registrations() == 0,
			"round %u: %u allocations and %u registrations outlived close",
			round, fake_cuda_live_allocs(), fake_cuda_live_registrations());
		remove_gpu(name);
		CHECK_NO_LEAKS();
		if (check_case_failed())
			break;
	}
	alarm(0);
}

/* ---- issue 16: registration cache ---------------------------------------- */

static bool
stats_of(int16_t id, struct rte_pmd_gpu_cuda_reg_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	return rc_stats(id, st) == 0;
}

#define CHECK_STATS(id, h, m, u, ev, inv, n_parked) do { \
	struct rte_pmd_gpu_cuda_reg_cache_stats st_; \
	CHECK(stats_of(id, &st_) && st_.hits == (h) && st_.misses == (m) && \
		st_.uncached == (u) && st_.evictions == (ev) && \
		st_.invalidations == (inv) && st_.parked == (n_parked), \
		"hits %" PRIu64 " misses %" PRIu64 " uncached %" PRIu64 \
		" evictions %" PRIu64 " invalidations %" PRIu64 " parked %u", \
		st_.hits, st_.misses, st_.uncached, st_.evictions, \
		st_.invalidations, st_.parked); \
} while (0)

static void
reg_cache_hits_and_overlaps(void)
{
	struct rte_pmd_gpu_cuda_reg_cache_stats st;
	char name[32];
	uint8_t *buf, *big;
	uint64_t calls;
	int16_t id;

	id = probe_gpu("dev=0,reg_cache=1", name, sizeof(name), NULL);
	buf = rte_malloc(NULL, 1 << 20, 4096);
	big = rte_malloc(NULL, 2 << 20, 4096);
	CHECK(id >= 0 && buf != NULL && big != NULL, "probe, EAL memory");
	if (id < 0 || buf == NULL || big == NULL)
		goto out;
	CHECK(ev_registered() == 1, "the cache watches EAL memory events");
	CHECK(rte_gpu_mem_register(id, 1 << 20, buf) == 0, "register");
	CHECK(rte_gpu_mem_unregister(id, buf) == 0, "unregister");
	CHECK(fake_cuda_is_registered(buf, 1 << 20), "kept registered");
	CHECK_STATS(id, 0, 1, 0, 0, 0, 1);
	CHECK(stats_of(id, &st) && st.bytes_held == (1 << 20) &&
		st.bytes_limit == ((uint64_t)1 << 30) && st.in_use == 0,
		"bytes held %" PRIu64 ", limit %" PRIu64, st.bytes_held, st.bytes_limit);

	/* Same range, then a range inside it: no pinning at all. */
	calls = fake_cuda_calls();
	CHECK(rte_gpu_mem_register(id, 1 << 20, buf) == 0, "register again");
	CHECK(fake_cuda_calls() == calls, "%" PRIu64 " CUDA calls for a cache hit",
		fake_cuda_calls() - calls);
	/* Refused while in use, as without the cache (a miss that tried). */
	CHECK(drv_register(id, 100, buf + 4096) == -EEXIST,
		"overlapping registration still refused while in use");
	CHECK(rte_gpu_mem_unregister(id, buf) == 0, "unregister");
	calls = fake_cuda_calls();
	CHECK(rte_gpu_mem_register(id, 8192, buf + 4096) == 0, "register inside");
	CHECK(drv_unregister(id, buf) == -EINVAL, "unregister of what it was not");
	CHECK(rte_gpu_mem_unregister(id, buf + 4096) == 0, "unregister inside");
	CHECK(fake_cuda_calls() == calls, "%" PRIu64 " CUDA calls for cache hits",
		fake_cuda_calls() - calls);
	CHECK_STATS(id, 2, 2, 0, 0, 0, 1);

	/* A new registration overlapping a kept one: the kept one goes. */
	CHECK(rte_gpu_mem_register(id, 1 << 20, big) == 0 &&
		rte_gpu_mem_unregister(id, big) == 0, "first half of big");
	CHECK(rte_gpu_mem_register(id, 2 << 20, big) == 0,
		"register over a kept registration");
	CHECK_STATS(id, 2, 4, 0, 1, 0, 1);
	CHECK(rte_gpu_mem_unregister(id, big) == 0, "unregister");

	/* Another device (a child context): the parked registration must not
	 * make its registration of the same memory fail (CUDA's are per
	 * process). */
	{
		CUcontext ctx = fake_cuda_ctx_create(0);
		int ret;
		int16_t child = add_cuda_child("rc_child", id, ctx, &ret);

		CHECK(child >= 0 && ret == 0, "child");
		if (child >= 0) {
			CHECK(rte_gpu_mem_register(child, 1 << 20, buf) == 0,
				"child registers what the parent keeps");
			CHECK(fake_cuda_is_registered(big, 1),
				"an unrelated kept registration was evicted");
			CHECK(rte_gpu_mem_unregister(child, buf) == 0, "child unregister");
			CHECK(rte_gpu_close(child) == 0, "close child");
		}
		fake_cuda_ctx_destroy(ctx);
	}
	CHECK(rc_flush(id) >= 1, "flush");
	CHECK(fake_cuda_live_registrations() == 0, "flush unregistered everything");
	CHECK(stats_of(id, &st) && st.parked == 0 && st.bytes_held == 0, "empty");
	CHECK(rte_gpu_mem_register(id, 4096, buf) == 0, "kept at close");
	CHECK(rte_gpu_mem_unregister(id, buf) == 0, "unregister");
out:
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	CHECK(rc_stats(id, &st) == -ENODEV, "stats of a removed device");
	rte_free(buf);
	rte_free(big);
	CHECK_NO_LEAKS();
}

static void
reg_cache_uncached_memory(void)
{
	struct rte_pmd_gpu_cuda_reg_cache_stats st;
	char name[32];
	uint8_t *heap = aligned_alloc(4096, 1 << 16);
	uint8_t *ext = aligned_alloc(4096, 1 << 16);
	int16_t id;

	id = probe_gpu("dev=0,reg_cache=1", name, sizeof(name), NULL);
	CHECK(id >= 0 && heap != NULL && ext != NULL, "probe");
	if (id < 0 || heap == NULL || ext == NULL)
		goto out;
	/* malloc'd memory: free() and a new mapping at the same address
	 * would go unnoticed, so it is never kept. */
	CHECK(rte_gpu_mem_register(id, 1 << 16, heap) == 0 &&
		rte_gpu_mem_unregister(id, heap) == 0, "register malloc memory");
	CHECK(!fake_cuda_is_registered(heap, 1), "malloc memory was kept registered");
	/* External memory leaves EAL without an event either. */
	CHECK(rte_extmem_register(ext, 1 << 16, NULL, 0, 4096) == 0, "extmem");
	CHECK(rte_gpu_mem_register(id, 1 << 16, ext) == 0 &&
		rte_gpu_mem_unregister(id, ext) == 0, "register external memory");
	CHECK(!fake_cuda_is_registered(ext, 1), "external memory was kept registered");
	CHECK(rte_extmem_unregister(ext, 1 << 16) == 0, "extmem unregister");
	CHECK_STATS(id, 0, 0, 2, 0, 0, 0);
	CHECK(remove_gpu(name) == 0, "remove");
	/* Without the devarg there is no cache. */
	id = probe_gpu("dev=0,reg_cache=0", name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id >= 0) {
		CHECK(rc_stats(id, &st) == -ENOTSUP && rc_flush(id) == -ENOTSUP,
			"no cache without reg_cache=1");
		CHECK(rc_stats(id, NULL) == -EINVAL, "NULL stats");
		CHECK(ev_registered() == 0, "no EAL callback without the cache");
	}
out:
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	free(heap);
	free(ext);
	CHECK_NO_LEAKS();
}

static void
reg_cache_lru_and_limit(void)
{
	char name[32];
	uint8_t *a, *b, *c, *huge;
	int16_t id;

	id = probe_gpu("dev=0,reg_cache=1,reg_cache_max=64K", name, sizeof(name), NULL);
	a = rte_malloc(NULL, 32768, 4096);
	b = rte_malloc(NULL, 32768, 4096);
	c = rte_malloc(NULL, 32768, 4096);
	huge = rte_malloc(NULL, 1 << 17, 4096);
	CHECK(id >= 0 && a && b && c && huge, "probe, memory");
	if (id < 0 || !a || !b || !c || !huge)
		goto out;
#define CYCLE(p, n) (rte_gpu_mem_register(id, n, p) == 0 && \
		rte_gpu_mem_unregister(id, p) == 0)
	CHECK(CYCLE(a, 32768) && CYCLE(b, 32768), "a, b");
	CHECK(fake_cuda_is_registered(a, 32768) && fake_cuda_is_registered(b, 32768),
		"both kept (64 KiB)");
	CHECK(CYCLE(c, 32768), "c");
	CHECK(!fake_cuda_is_registered(a, 1), "a, least recently used, evicted");
	CHECK(fake_cuda_is_registered(b, 1) && fake_cuda_is_registered(c, 1), "b, c kept");
	CHECK(CYCLE(b, 32768), "b used again (hit)");
	CHECK(CYCLE(a, 32768), "a again (miss)");
	CHECK(!fake_cuda_is_registered(c, 1), "c now the least recently used");
	CHECK(fake_cuda_is_registered(a, 1) && fake_cuda_is_registered(b, 1), "a, b kept");
	CHECK_STATS(id, 1, 4, 0, 2, 0, 2);
	/* Larger than the whole cache: never kept. */
	CHECK(CYCLE(huge, 1 << 17), "huge");
	CHECK(!fake_cuda_is_registered(huge, 1), "a registration over the limit was kept");
#undef CYCLE
out:
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	rte_free(a);
	rte_free(b);
	rte_free(c);
	rte_free(huge);
	CHECK_NO_LEAKS();
}

static void
reg_cache_invalidation(void)
{
	char name[32];
	uint8_t *a, *b;
	int16_t id;

	id = probe_gpu("dev=0,reg_cache=1", name, sizeof(name), NULL);
	a = rte_malloc(NULL, 1 << 16, 4096);
	b = rte_malloc(NULL, 1 << 16, 4096);
	CHECK(id >= 0 && a != NULL && b != NULL, "probe, memory");
	if (id < 0 || a == NULL || b == NULL)
		goto out;
	CHECK(rte_gpu_mem_register(id, 1 << 16, a) == 0 &&
		rte_gpu_mem_unregister(id, a) == 0, "a kept");
	CHECK(fake_cuda_is_registered(a, 1), "kept");
	/* EAL gives back a page inside it: the registration goes at once. */
	ev_fire(a + 8192, 4096);
	CHECK(!fake_cuda_is_registered(a, 1), "kept registration of freed memory");
	CHECK_STATS(id, 0, 1, 0, 0, 1, 0);
	/* In use when EAL frees it (the application's bug): kept until the
	 * application unregisters, then not parked. */
	CHECK(rte_gpu_mem_register(id, 1 << 16, b) == 0, "b");
	ev_fire(b, 4096);
	CHECK(fake_cuda_is_registered(b, 1), "in-use registration undone under the application");
	CHECK(rte_gpu_mem_unregister(id, b) == 0, "unregister b");
	CHECK(!fake_cuda_is_registered(b, 1), "stale registration parked");
	/* Events elsewhere change nothing. */
	CHECK(rte_gpu_mem_register(id, 1 << 16, a) == 0 &&
		rte_gpu_mem_unregister(id, a) == 0, "a again");
	ev_fire(b, 1 << 16);
	CHECK(fake_cuda_is_registered(a, 1), "unrelated event evicted a");
	CHECK_STATS(id, 0, 3, 0, 0, 2, 1);
	CHECK(remove_gpu(name) == 0, "remove with a parked registration");
	CHECK(ev_registered() == 0, "EAL callback unregistered at close");
	CHECK(fake_cuda_live_registrations() == 0, "close undid the parked registration");

	/* Legacy memory: no events, and EAL never frees its own memory. */
	ev_legacy = true;
	id = probe_gpu("dev=0,reg_cache=1", name, sizeof(name), NULL);
	CHECK(id >= 0, "probe with legacy memory");
	if (id >= 0) {
		CHECK(rte_gpu_mem_register(id, 1 << 16, a) == 0 &&
			rte_gpu_mem_unregister(id, a) == 0 &&
			rte_gpu_mem_register(id, 1 << 16, a) == 0 &&
			rte_gpu_mem_unregister(id, a) == 0, "a twice");
		CHECK_STATS(id, 1, 1, 0, 0, 0, 1);
	}
	ev_legacy = false;
out:
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	rte_free(a);
	rte_free(b);
	CHECK_NO_LEAKS();
}

#define RC_BUFS 16
#define RC_BUF_SIZE 16384

static void *
rc_worker(void *p)
{
	struct stress_arg *w = p;
	uint8_t *bufs = w->data; /* shared by all workers: overlaps happen */
	unsigned int i;

	for (i = 0; i < w->ops; i++) {
		unsigned int k = rand_r(&w->seed) % RC_BUFS;
		size_t off = (rand_r(&w->seed) % 2) * 4096;
		uint8_t *q = bufs + k * RC_BUF_SIZE + off;
		int ret = rte_gpu_mem_register(w->id, RC_BUF_SIZE - off, q);

		/* Another worker may hold this buffer: refused, as without
		 * the cache. */
		if (ret == 0 && rte_gpu_mem_unregister(w->id, q) != 0)
			w->errors++;
		if (i % 64 == 0)
			ev_fire(bufs + (rand_r(&w->seed) % RC_BUFS) * RC_BUF_SIZE,
				4096);
		if (i % 500 == 0 && rc_flush(w->id) < 0)
			w->errors++;
	}
	return NULL;
}

static void
reg_cache_threads(void)
{
	char name[32];
	uint8_t *bufs;
	int16_t id;

	id = probe_gpu("dev=0,reg_cache=1,reg_cache_max=96K", name, sizeof(name), NULL);
	bufs = rte_malloc(NULL, RC_BUFS * RC_BUF_SIZE, 4096);
	CHECK(id >= 0 && bufs != NULL, "probe, memory");
	if (id >= 0 && bufs != NULL) {
		run_threads(id, 6, rc_worker, 77, 3000, bufs);
		{
			struct rte_pmd_gpu_cuda_reg_cache_stats st;

			CHECK(stats_of(id, &st) && st.in_use == 0 &&
				st.bytes_held <= 96 * 1024 && st.hits > 0,
				"in use %u, held %" PRIu64 ", hits %" PRIu64,
				st.in_use, st.bytes_held, st.hits);
		}
	}
	if (id >= 0)
		CHECK(remove_gpu(name) == 0, "remove");
	rte_free(bufs);
	CHECK_NO_LEAKS();
}

/* ---- issue 16: dma-buf export --------------------------------------------- */

static bool
fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void
dmabuf_export_lifecycle(void)
{
	uint8_t host[4096] __rte_aligned(4096);
	uint8_t *p, *small, *gone, *q;
	uintptr_t start;
	size_t len;
	uint64_t off;
	char name[32];
	int fd = -1, fd2 = -1, fd3 = -1, left = -1;
	struct stat st;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	p = rte_gpu_mem_alloc(id, 1 << 20, 65536);
	small = rte_gpu_mem_alloc(id, 1000, 0);
	CHECK(p != NULL && small != NULL, "alloc");
	if (p == NULL || small == NULL)
		goto out;

	CHECK(dmabuf_export(id, p, 1 << 20, &fd, &off) == 0 && fd >= 0 && off == 0,
		"export the whole allocation: fd %d offset %" PRIu64, fd, off);
	CHECK(lseek(fd, 0, SEEK_END) == (off_t)(1 << 20) &&
		fstat(fd, &st) == 0 && st.st_size == (1 << 20), "fd of the right size");
	CHECK(fake_cuda_dmabuf_range(fd, &start, &len) == 0 &&
		start == (uintptr_t)p && len == (1 << 20), "range");
	/* A range inside, widened to whole GPU pages. */
	CHECK(dmabuf_export(id, p + 100000, 5000, &fd2, &off) == 0 &&
		off == 100000 - 65536, "inner range: offset %" PRIu64, off);
	CHECK(fake_cuda_dmabuf_range(fd2, &start, &len) == 0 &&
		start == (uintptr_t)p + 65536 && len == 65536,
		"inner range exported as its GPU page");
	CHECK(dmabuf_export(id, p + (1 << 20) - 1, 1, &fd3, &off) == 0 &&
		off == 65535, "last byte");
	CHECK(dmabuf_close(id, fd2) == 0, "close");
	CHECK(!fd_is_open(fd2) || fake_cuda_dmabuf_range(fd2, &start, &len) != 0,
		"fd still open after close");
	CHECK(dmabuf_close(id, fd2) == -EINVAL, "close twice");
	CHECK(dmabuf_close(id, -1) == -EINVAL && dmabuf_close(id, 0) == -EINVAL,
		"close of an fd never exported");

	/* Refusals. */
	CHECK(dmabuf_export(id, p, 0, &fd2, &off) == -EINVAL, "size 0");
	CHECK(dmabuf_export(id, NULL, 10, &fd2, &off) == -EINVAL, "NULL");
	CHECK(dmabuf_export(id, p, 10, NULL, &off) == -EINVAL, "NULL fd");
	CHECK(dmabuf_export(id, p, (1 << 20) + 1, &fd2, &off) == -EINVAL,
		"past the end");
	CHECK(dmabuf_export(id, p + 10, 1 << 20, &fd2, &off) == -EINVAL,
		"past the end from inside");
	CHECK(dmabuf_export(id, host, 4096, &fd2, &off) == -EINVAL, "foreign pointer");
	CHECK(rte_gpu_mem_register(id, 4096, host) == 0, "register");
	CHECK(dmabuf_export(id, host, 4096, &fd2, &off) == -EINVAL,
		"registered host memory");
	CHECK(rte_gpu_mem_unregister(id, host) == 0, "unregister");
	fake_cuda_set_alloc_offset(256);
	q = rte_gpu_mem_alloc(id, 4096, 0);
	fake_cuda_set_alloc_offset(0);
	CHECK(q != NULL && dmabuf_export(id, q, 4096, &fd2, &off) == -EINVAL,
		"allocation not made of whole GPU pages");
	CHECK(q == NULL || rte_gpu_mem_free(id, q) == 0, "free");
	gone = rte_gpu_mem_alloc(id, 65536, 65536);
	CHECK(gone != NULL && rte_gpu_mem_free(id, gone) == 0, "alloc, free");
	CHECK(dmabuf_export(id, gone, 4096, &fd2, &off) == -EINVAL, "freed pointer");
	CHECK(dmabuf_export(INT16_MAX, p, 4096, &fd2, &off) == -ENODEV, "no device");
	fake_cuda_set_dmabuf_supported(0);
	{
		char n2[32];
		int16_t id2;

		CHECK(remove_gpu(name) == 0, "remove");
		CHECK(fake_cuda_live_dmabufs() == 0, "close closed the fds");
		CHECK(!fd_is_open(fd) || fake_cuda_dmabuf_range(fd, &start, &len) != 0,
			"fd open after close");
		p = small = NULL;
		id2 = probe_gpu(gpu_args, n2, sizeof(n2), NULL);
		q = id2 >= 0 ? rte_gpu_mem_alloc(id2, 65536, 65536) : NULL;
		CHECK(q != NULL && dmabuf_export(id2, q, 4096, &fd2, &off) == -ENOTSUP,
			"GPU without dma-buf support");
		fake_cuda_set_dmabuf_supported(1);
		if (id2 >= 0)
			CHECK(remove_gpu(n2) == 0, "remove");
		id = probe_gpu(gpu_args, name, sizeof(name), NULL);
		CHECK(id >= 0, "probe");
		if (id < 0)
			goto end;
	}
	/* Freeing the allocation closes its fds. */
	p = rte_gpu_mem_alloc(id, 1 << 17, 65536);
	CHECK(p != NULL && dmabuf_export(id, p, 1 << 17, &fd, &off) == 0 &&
		dmabuf_export(id, p, 4096, &fd2, &off) == 0, "two exports");
	CHECK(fake_cuda_live_dmabufs() == 2, "two fds");
	CHECK(rte_gpu_mem_free(id, p) == 0, "free");
	CHECK(fake_cuda_live_dmabufs() == 0, "free closed the fds");
	CHECK(dmabuf_close(id, fd) == -EINVAL, "closed with its allocation");
	/* One left open at close. */
	p = rte_gpu_mem_alloc(id, 1 << 16, 65536);
	CHECK(p != NULL && dmabuf_export(id, p, 1 << 16, &left, &off) == 0,
		"export left open");
	CHECK(fake_cuda_p2p_token_queries() == 0, "P2P tokens queried");
	p = small = NULL;
out:
	if (p != NULL)
		rte_gpu_mem_free(id, p);
	if (small != NULL)
		rte_gpu_mem_free(id, small);
	CHECK(remove_gpu(name) == 0, "remove");
end:
	CHECK_NO_LEAKS();
	RTE_SET_USED(left);
}

/* Exports, closes and frees with fds open, on its own allocations, while
 * other threads do the same. */
static void *
export_racer(void *arg)
{
	struct stress_arg *r = arg;
	unsigned int i;

	for (i = 0; i < r->ops; i++) {
		uint8_t *p = rte_gpu_mem_alloc(r->id, 1 << 17, 65536);
		uint64_t off;
		int fd;

		if (p == NULL) {
			r->errors++;
			continue;
		}
		if (dmabuf_export(r->id, p + 70000, 100, &fd, &off) != 0)
			r->errors++;
		else if (rand_r(&r->seed) % 2 && dmabuf_close(r->id, fd) != 0)
			r->errors++;
		if (rte_gpu_mem_free(r->id, p) != 0)
			r->errors++;
	}
	return NULL;
}

static void
dmabuf_threads(void)
{
	char name[32];
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	run_threads(id, 6, export_racer, 0, 400, NULL);
	CHECK(fake_cuda_live_dmabufs() == 0, "%u fds left", fake_cuda_live_dmabufs());
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

/* The CUDA driver lacks cuMemGetHandleForAddressRange (older than 11.7):
 * the GPU is probed all the same, only the export is not supported. */
static void
dmabuf_without_symbol(void)
{
	char name[32];
	uint64_t off;
	void *p;
	int16_t id;
	int fd;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe without cuMemGetHandleForAddressRange");
	if (id < 0)
		return;
	p = rte_gpu_mem_alloc(id, 65536, 65536);
	CHECK(p != NULL, "alloc");
	CHECK(dmabuf_export(id, p, 65536, &fd, &off) == -ENOTSUP, "ENOTSUP");
	CHECK(p == NULL || rte_gpu_mem_free(id, p) == 0, "free");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

/* ---- CPU mappings (fake GDRCopy) ------------------------------------------ */

static bool
no_gdr_leaks(void)
{
	return fake_gdr_live_pins() == 0 && fake_gdr_live_maps() == 0;
}

static void
cpu_map_unmap(void)
{
	struct rte_gpu *g;
	char name[32];
	uint8_t *p, *small, *cpu;
	void *out = NULL;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	g = gpu_of(id);
	p = rte_gpu_mem_alloc(id, 100000, 65536);
	small = rte_gpu_mem_alloc(id, 1000, 0);
	CHECK(p != NULL && small != NULL, "alloc");
	if (p == NULL || small == NULL)
		goto out;
	cpu = rte_gpu_mem_cpu_map(id, 100000, p);
	CHECK(cpu != NULL, "cpu_map: %s", rte_strerror(rte_errno));
	CHECK(fake_gdr_live_pins() == 1 && fake_gdr_live_maps() == 1, "one mapping");
	if (cpu != NULL) {
		memset(cpu, 0x3c, 100000);
		CHECK(p[99999] == 0x3c, "written through the mapping");
	}
	CHECK(g->ops.mem_cpu_map(g, 100000, p, &out) == -EEXIST, "mapped twice");
	CHECK(g->ops.mem_cpu_map(g, 100001, p, &out) == -EINVAL, "larger than the allocation");
	CHECK(g->ops.mem_cpu_map(g, 1000, small, &out) == -EINVAL,
		"an allocation not made of whole GPU pages cannot be mapped");
	CHECK(g->ops.mem_cpu_map(g, 10, p + 64, &out) == -EINVAL, "inside an allocation");
	CHECK(rte_gpu_mem_cpu_unmap(id, p) == 0, "unmap");
	CHECK(no_gdr_leaks(), "unpinned");
	CHECK(g->ops.mem_cpu_unmap(g, p) == -EINVAL, "unmap twice");
	/* Freeing a mapped allocation unmaps it first. */
	CHECK(rte_gpu_mem_cpu_map(id, 4096, p) != NULL, "map again");
	CHECK(rte_gpu_mem_free(id, p) == 0, "free while mapped");
	CHECK(no_gdr_leaks(), "free unmapped it");
	CHECK(rte_gpu_mem_free(id, small) == 0, "free");
	/* Closing with a mapping left unmaps it. */
	p = rte_gpu_mem_alloc(id, 65536, 65536);
	CHECK(p != NULL && rte_gpu_mem_cpu_map(id, 65536, p) != NULL, "map");
out:
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK(no_gdr_leaks(), "close unmapped everything");
	CHECK_NO_LEAKS();
}

/* Finding 9 of issue 15: with alignment >= 64 KiB, sizes just past a GPU
 * page from a base that is not page aligned left the last page outside the
 * allocation, and cpu_map of the whole buffer failed. */
static void
cpu_map_page_rounding(void)
{
	static const size_t sizes[] = { 1, 65535, 65536, 65537, 131073,
		3 * 65536 + 1, 100000 };
	static const size_t offsets[] = { 256, 4096, 65536 - 256 };
	char name[32];
	unsigned int i, j;
	uint8_t *p, *cpu;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	for (j = 0; j < RTE_DIM(offsets); j++) {
		fake_cuda_set_alloc_offset(offsets[j]);
		for (i = 0; i < RTE_DIM(sizes); i++) {
			p = rte_gpu_mem_alloc(id, sizes[i], 65536);
			CHECK(p != NULL, "alloc %zu", sizes[i]);
			if (p == NULL)
				continue;
			cpu = rte_gpu_mem_cpu_map(id, sizes[i], p);
			CHECK(cpu != NULL, "cpu_map of %zu bytes (base %zu past a page): %s",
				sizes[i], offsets[j], rte_strerror(rte_errno));
			if (cpu != NULL) {
				cpu[sizes[i] - 1] = 0x5e;
				CHECK(p[sizes[i] - 1] == 0x5e, "last byte through the mapping");
				CHECK(rte_gpu_mem_cpu_unmap(id, p) == 0, "unmap");
			}
			CHECK(rte_gpu_mem_free(id, p) == 0, "free");
		}
	}
	fake_cuda_set_alloc_offset(0);
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK(no_gdr_leaks(), "unpinned");
	CHECK_NO_LEAKS();
}

static void
cpu_map_disabled_by_devarg(void)
{
	char name[32];
	uint8_t *p;
	int16_t id;

	id = probe_gpu("dev=0,gdrcopy=0", name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	p = rte_gpu_mem_alloc(id, 65536, 65536);
	CHECK(p != NULL, "alloc");
	CHECK(rte_gpu_mem_cpu_map(id, 65536, p) == NULL, "gdrcopy=0 must refuse");
	{
		struct rte_gpu *g = gpu_of(id);
		void *out;

		CHECK(g->ops.mem_cpu_map(g, 65536, p, &out) == -ENOTSUP, "ENOTSUP");
	}
	CHECK(rte_gpu_mem_free(id, p) == 0, "free");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK(no_gdr_leaks(), "nothing pinned");
	CHECK_NO_LEAKS();
}

static void
comm_list_status_in_gpu_memory(void)
{
	struct rte_gpu_comm_list *list;
	enum rte_gpu_comm_list_status st;
	char name[32];
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	list = rte_gpu_comm_create_list(id, 4);
	CHECK(list != NULL, "comm list");
	if (list != NULL) {
		CHECK(fake_cuda_is_device_range(list[0].status_d,
			4 * sizeof(enum rte_gpu_comm_list_status)),
			"status array is GPU memory mapped for the CPU");
		CHECK(fake_gdr_live_maps() == 1, "one CPU mapping");
		CHECK(rte_gpu_comm_set_status(&list[2], RTE_GPU_COMM_LIST_DONE) == 0 &&
			rte_gpu_comm_get_status(&list[2], &st) == 0 &&
			st == RTE_GPU_COMM_LIST_DONE, "status through the mapping");
		CHECK(rte_gpu_comm_destroy_list(list, 4) == 0, "destroy");
	}
	CHECK(fake_cuda_live_allocs() == 0 && no_gdr_leaks(),
		"destroy released the mapped status array");
	CHECK(remove_gpu(name) == 0, "remove");
	CHECK_NO_LEAKS();
}

/* ---- fault injection ------------------------------------------------------- */

/* Failures the driver tolerates by design: attributes only used to report
 * optional features (absent on older drivers). */
static bool
optional_site(const char *fn, int attr)
{
	return fn != NULL && strcmp(fn, "cuDeviceGetAttribute") == 0 &&
		(attr == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED ||
		 attr == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS ||
		 attr == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING ||
		 attr == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
}

struct step_check {
	uint64_t fail_at;
	bool checked;   /* the step holding the failure was found */
	bool ok;
	char why[160];
};

/* Checks one step: if the injected failure happened inside it, the step
 * must have reported an error. */
static void
step_done(struct step_check *sc, const char *step, uint64_t before, bool failed)
{
	uint64_t after = fake_cuda_calls();
	int attr;
	const char *fn = fake_cuda_failed_call(&attr);

	if (sc->fail_at <= before || sc->fail_at > after || fn == NULL)
		return;
	sc->checked = true;
	if (!failed && !optional_site(fn, attr)) {
		sc->ok = false;
		snprintf(sc->why, sizeof(sc->why),
			"%s succeeded although its %s call failed", step, fn);
	}
}

/* A step that has no way to report a failure (EAL's memory event
 * callback returns nothing): the driver logs it, and the leak checks
 * after the lifetime still hold. */
static void
step_quiet(struct step_check *sc, uint64_t before)
{
	uint64_t after = fake_cuda_calls();

	if (sc->fail_at > before && sc->fail_at <= after &&
			fake_cuda_failed_call(NULL) != NULL)
		sc->checked = true;
}

#define STEP_QUIET(stmt) do { \
	uint64_t before_ = fake_cuda_calls(); \
	stmt; \
	step_quiet(&sc, before_); \
} while (0)

#define STEP(name, expr_failed) do { \
	uint64_t before_ = fake_cuda_calls(); \
	bool failed_ = (expr_failed); \
	step_done(&sc, name, before_, failed_); \
} while (0)

/* One device lifetime touching every operation; returns false with a reason
 * when the driver mishandled the injected failure. */
static bool
device_lifetime(uint64_t fail_at, char *why, size_t why_len, uint64_t *calls_made)
{
	const char *failed_fn;
	int failed_attr;
	struct step_check sc = { .fail_at = fail_at, .ok = true };
	CUcontext ctx = fake_cuda_ctx_create(0);
	static uint8_t host1[8192] __rte_aligned(4096);
	static uint8_t host2[8192] __rte_aligned(4096);
	void *a = NULL, *b = NULL, *c = NULL;
	uint8_t *ebuf = rte_malloc(NULL, 8192, 4096);
	bool reg1 = false, ereg = false;
	uint64_t off;
	int fd;
	char name[32];
	int16_t id = -1, child = -1;
	int err;

	fake_cuda_fail_call(fail_at, CUDA_ERROR_UNKNOWN);
	STEP("probe", (id = probe_gpu(gpu_args, name, sizeof(name), &err)) < 0);
	if (id >= 0) {
		STEP("alloc", (a = rte_gpu_mem_alloc(id, 4096, 0)) == NULL);
		STEP("aligned alloc", (b = rte_gpu_mem_alloc(id, 1000, 65536)) == NULL);
		STEP("register", !(reg1 = rte_gpu_mem_register(id, sizeof(host1), host1) == 0));
		STEP("wmb", rte_gpu_wmb(id) != 0);
		if (a != NULL)
			STEP("free", rte_gpu_mem_free(id, a) != 0);
		if (reg1)
			STEP("unregister", rte_gpu_mem_unregister(id, host1) != 0);
		STEP("child alloc", (child = add_cuda_child("fi_child", id, ctx,
			&err)) < 0 || err != 0 ||
			(c = rte_gpu_mem_alloc(child, 512, 0)) == NULL);
		if (c != NULL)
			STEP("child free", rte_gpu_mem_free(child, c) != 0);
		if (child >= 0)
			STEP("child close", rte_gpu_close(child) != 0);
		STEP("register 2", rte_gpu_mem_register(id, sizeof(host2), host2) != 0);
		if (b != NULL)
			STEP("dmabuf export", dmabuf_export(id, b, 1000, &fd, &off) != 0);
		/* EAL memory: kept and reused with reg_cache=1. */
		if (ebuf != NULL)
			STEP("EAL register",
				!(ereg = rte_gpu_mem_register(id, 8192, ebuf) == 0));
		if (ereg) {
			STEP("EAL unregister", rte_gpu_mem_unregister(id, ebuf) != 0);
			STEP("EAL register again",
				rte_gpu_mem_register(id, 8192, ebuf) != 0 ||
				rte_gpu_mem_unregister(id, ebuf) != 0);
			STEP_QUIET(ev_fire(ebuf, 4096));
			STEP("EAL register 3", rte_gpu_mem_register(id, 4096, ebuf) != 0);
		}
		STEP("remove", remove_gpu(name) != 0);
	} else if (rte_gpu_count_avail() != 0) {
		sc.ok = false;
		snprintf(sc.why, sizeof(sc.why), "failed probe left a GPU behind");
	}
	RTE_SET_USED(b);
	fake_cuda_ctx_destroy(ctx);
	rte_free(ebuf);
	*calls_made = fake_cuda_calls();
	failed_fn = fake_cuda_failed_call(&failed_attr);
	fake_cuda_fail_call(0, CUDA_SUCCESS);
	if (sc.ok && failed_fn != NULL && !sc.checked) {
		sc.ok = false;
		snprintf(sc.why, sizeof(sc.why), "failure of call %" PRIu64 " not attributed to a step",
			fail_at);
	}
	if (sc.ok && !no_cuda_leaks()) {
		sc.ok = false;
		snprintf(sc.why, sizeof(sc.why),
			"leaked %u allocs, %u registrations, %u ctx refs, ctx depth %u, %u streams, %u dma-bufs, %u callbacks",
			fake_cuda_live_allocs(), fake_cuda_live_registrations(),
			fake_cuda_live_primary_refs(), fake_cuda_ctx_depth(),
			fake_cuda_live_streams(), fake_cuda_live_dmabufs(),
			ev_registered());
	}
	if (sc.ok && rte_gpu_count_avail() != 0) {
		sc.ok = false;
		snprintf(sc.why, sizeof(sc.why), "a GPU is still there");
	}
	if (failed_fn != NULL && failed_attr >= 0)
		snprintf(why, why_len, "[%s(attr %d)] %s", failed_fn, failed_attr, sc.why);
	else
		snprintf(why, why_len, "[%s] %s", failed_fn != NULL ? failed_fn : "-", sc.why);
	return sc.ok;
}

/* Every CUDA call of one device lifetime fails in turn; the lifetime is run
 * for a GPU chosen by ordinal and by PCI address (different probe calls). */
static int
run_faults(void)
{
	static const char *const probes[] = { "dev=0", "dev=0000:01:00.0",
		"dev=0,reg_cache=1" };
	uint64_t n, total, used;
	unsigned int i;
	char why[224];

	for (i = 0; i < RTE_DIM(probes); i++) {
		gpu_args = probes[i];
		/* Reference run: how many CUDA calls one lifetime makes. */
		if (!device_lifetime(UINT64_MAX, why, sizeof(why), &total) || total < 20) {
			printf("FAIL reference_lifetime(%s): %s (%" PRIu64 " calls)\n",
				gpu_args, why, total);
			check_case_count(1);
			continue;
		}
		printf("lifetime with %s makes %" PRIu64 " CUDA calls\n", gpu_args, total);
		for (n = 1; n <= total; n++) {
			bool ok = device_lifetime(n, why, sizeof(why), &used);

			if (ok) {
				check_case_count(0);
				printf("PASS %s fail_call_%" PRIu64 " %s\n", gpu_args, n, why);
			} else {
				check_case_count(1);
				printf("FAIL %s fail_call_%" PRIu64 ": %s\n", gpu_args, n, why);
			}
			fflush(stdout);
		}
	}
	printf("%u resources abandoned by failed releases\n", fake_cuda_abandoned());
	return check_finish("driver_fake faults");
}

/* ---- main ----------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const char *mode, *fake;
	char *eal_argv[16];
	int eal_argc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s functional|faults|no-gpu|gdrcopy|dmabuf-nosym FAKE_LIBCUDA\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	fake = argv[2];
	if (strcmp(mode, "no-gpu") != 0 || getenv("GPU_CUDA_LIBCUDA") == NULL)
		setenv("GPU_CUDA_LIBCUDA", fake, 1);

	eal_argv[eal_argc++] = argv[0];
	eal_argv[eal_argc++] = (char *)"--no-huge";
	eal_argv[eal_argc++] = (char *)"-m";
	eal_argv[eal_argc++] = (char *)"256";
	eal_argv[eal_argc++] = (char *)"--no-pci";
	eal_argv[eal_argc++] = (char *)"--no-shconf";
	eal_argv[eal_argc++] = (char *)"--no-telemetry";
	eal_argv[eal_argc++] = (char *)"--log-level=pmd.gpu.cuda:info";
	if (strcmp(mode, "no-gpu") == 0) {
		/* ask for a GPU: EAL must still start, with none probed */
		eal_argv[eal_argc++] = (char *)"--vdev";
		eal_argv[eal_argc++] = (char *)"gpu_cuda0,dev=0";
	}
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		printf("FAIL eal_init: %s\n0 passed, 1 failed\n", rte_strerror(rte_errno));
		return 1;
	}

	if (strcmp(mode, "no-gpu") == 0) {
		check_case_begin();
		CHECK(rte_gpu_count_avail() == 0, "%u GPUs probed", rte_gpu_count_avail());
		check_case_end("eal_starts_without_gpu");
	} else if (strcmp(mode, "functional") == 0) {
		CHECK_CASE(probe_info_remove);
		CHECK_CASE(bad_devargs);
		CHECK_CASE(alloc_free);
		CHECK_CASE(alloc_errors);
		CHECK_CASE(register_unregister);
		CHECK_CASE(wmb_flushes);
		CHECK_CASE(comm_list_and_flag);
		CHECK_CASE(child_contexts);
		CHECK_CASE(close_releases_leaks);
		CHECK_CASE(threads_stress);
		CHECK_CASE(wmb_neither_ordered_nor_flushable);
		CHECK_CASE(alloc_returns_cleared_memory);
		CHECK_CASE(close_racing_calls);
		CHECK_CASE(reg_cache_hits_and_overlaps);
		CHECK_CASE(reg_cache_uncached_memory);
		CHECK_CASE(reg_cache_lru_and_limit);
		CHECK_CASE(reg_cache_invalidation);
		CHECK_CASE(reg_cache_threads);
		CHECK_CASE(dmabuf_export_lifecycle);
		CHECK_CASE(dmabuf_threads);
	} else if (strcmp(mode, "dmabuf-nosym") == 0) {
		CHECK_CASE(dmabuf_without_symbol);
	} else if (strcmp(mode, "gdrcopy") == 0) {
		CHECK_CASE(cpu_map_page_rounding);
		CHECK_CASE(cpu_map_unmap);
		CHECK_CASE(cpu_map_disabled_by_devarg);
		CHECK_CASE(comm_list_status_in_gpu_memory);
	} else if (strcmp(mode, "faults") == 0) {
		int ret = run_faults();

		rte_eal_cleanup();
		return ret;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	rte_eal_cleanup();
	return check_finish("driver_fake");
}
