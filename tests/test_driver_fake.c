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
 */

#include <errno.h>
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
#include <rte_malloc.h>

#include <gpudev_driver.h>

#include "fake_cuda.h"
#include "fake_gdrapi.h"
#include "rte_pmd_gpu_cuda.h"
#include "test_common.h"

TEST_GLOBALS;

static const char *gpu_args = "dev=0";
static unsigned int vdev_seq;
static int (*const child_attach)(int16_t child) = rte_pmd_gpu_cuda_child_attach;

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
		fake_cuda_live_primary_refs() == 0 && fake_cuda_ctx_depth() == 0;
}

#define CHECK_NO_LEAKS() CHECK(no_cuda_leaks(), \
	"CUDA resources left: %u allocs, %u registrations, %u ctx refs, ctx depth %u", \
	fake_cuda_live_allocs(), fake_cuda_live_registrations(), \
	fake_cuda_live_primary_refs(), fake_cuda_ctx_depth())

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
	 * closing the device must reclaim it. */
	CHECK(remove_gpu(name) == 0, "remove");
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
	CHECK(rte_gpu_close(id) == 0, "close");
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
};

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
	enum { THREADS = 8 };
	struct stress_arg args[THREADS];
	pthread_t th[THREADS];
	char name[32];
	unsigned int i;
	int16_t id;

	id = probe_gpu(gpu_args, name, sizeof(name), NULL);
	CHECK(id >= 0, "probe");
	if (id < 0)
		return;
	for (i = 0; i < THREADS; i++) {
		args[i] = (struct stress_arg){ .id = id, .seed = 1234 + i, .ops = 20000 };
		CHECK(pthread_create(&th[i], NULL, stress_worker, &args[i]) == 0, "thread");
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK(args[i].errors == 0, "thread %u: %u errors", i, args[i].errors);
	}
	CHECK(fake_cuda_live_allocs() == 0 && fake_cuda_live_registrations() == 0,
		"everything released");
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
	bool reg1 = false;
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
		STEP("remove", remove_gpu(name) != 0);
	} else if (rte_gpu_count_avail() != 0) {
		sc.ok = false;
		snprintf(sc.why, sizeof(sc.why), "failed probe left a GPU behind");
	}
	RTE_SET_USED(b);
	fake_cuda_ctx_destroy(ctx);
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
			"leaked %u allocs, %u registrations, %u ctx refs, ctx depth %u",
			fake_cuda_live_allocs(), fake_cuda_live_registrations(),
			fake_cuda_live_primary_refs(), fake_cuda_ctx_depth());
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
	static const char *const probes[] = { "dev=0", "dev=0000:01:00.0" };
	uint64_t n, total, used;
	unsigned int i;
	char why[224];

	for (i = 0; i < RTE_DIM(probes); i++) {
		gpu_args = probes[i];
		/* Reference run: how many CUDA calls one lifetime makes. */
		if (!device_lifetime(UINT64_MAX, why, sizeof(why), &total) || total < 20) {
			printf("FAIL reference_lifetime(%s): %s (%" PRIu64 " calls)\n",
				gpu_args, why, total);
			test_failed++;
			continue;
		}
		printf("lifetime with %s makes %" PRIu64 " CUDA calls\n", gpu_args, total);
		for (n = 1; n <= total; n++) {
			bool ok = device_lifetime(n, why, sizeof(why), &used);

			if (ok) {
				test_passed++;
				printf("PASS %s fail_call_%" PRIu64 " %s\n", gpu_args, n, why);
			} else {
				test_failed++;
				printf("FAIL %s fail_call_%" PRIu64 ": %s\n", gpu_args, n, why);
			}
			fflush(stdout);
		}
	}
	printf("%u resources abandoned by failed releases\n", fake_cuda_abandoned());
	printf("%u passed, %u failed\n", test_passed, test_failed);
	return test_failed == 0 ? 0 : 1;
}

/* ---- main ----------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const char *mode, *fake;
	char *eal_argv[16];
	int eal_argc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s functional|faults|no-gpu|gdrcopy FAKE_LIBCUDA\n",
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
		CHECK(rte_gpu_count_avail() == 0, "%u GPUs probed", rte_gpu_count_avail());
		printf("%s eal_starts_without_gpu\n", test_case_failed ? "FAIL" : "PASS");
		test_case_failed ? test_failed++ : test_passed++;
	} else if (strcmp(mode, "functional") == 0) {
		RUN_CASE(probe_info_remove);
		RUN_CASE(bad_devargs);
		RUN_CASE(alloc_free);
		RUN_CASE(alloc_errors);
		RUN_CASE(register_unregister);
		RUN_CASE(wmb_flushes);
		RUN_CASE(comm_list_and_flag);
		RUN_CASE(child_contexts);
		RUN_CASE(close_releases_leaks);
		RUN_CASE(threads_stress);
	} else if (strcmp(mode, "gdrcopy") == 0) {
		RUN_CASE(cpu_map_unmap);
		RUN_CASE(cpu_map_disabled_by_devarg);
		RUN_CASE(comm_list_status_in_gpu_memory);
	} else if (strcmp(mode, "faults") == 0) {
		int ret = run_faults();

		rte_eal_cleanup();
		return ret;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	rte_eal_cleanup();
	TEST_SUMMARY_AND_EXIT();
}
