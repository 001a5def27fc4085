/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The memory operations of the driver, on a context whose gate cuda_dev.c's
 * entry points passed: GPU allocations, host registrations and CPU mappings,
 * and the table entries that record them. Above the registration cache,
 * which registrations go through, and the dma-buf records, which go with
 * their allocation; neither calls back here.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "cuda_dmabuf.h"
#include "cuda_gdr.h"
#include "cuda_gpu.h"
#include "cuda_log.h"
#include "cuda_mem.h"
#include "cuda_reg_cache.h"

/* Explains, for the log, why ptr is not what the caller thought it was. */
static void
log_unknown_pointer(struct gpu_cuda_ctx *c, const char *dev_name,
		const char *op, const void *ptr)
{
	struct gpu_cuda_mem inside;

	if (gpu_cuda_mem_table_find_containing(&c->mem, (uintptr_t)ptr, &inside) == 0)
		CUDA_LOG(ERR, "%s(%p) on %s: pointer is inside the %s at %#" PRIxPTR " (%zu bytes), not its start",
			op, ptr, dev_name,
			inside.kind == GPU_CUDA_MEM_DEVICE ?
				"GPU allocation" : "host registration",
			inside.ptr, inside.size);
	else
		CUDA_LOG(ERR, "%s(%p) on %s: unknown pointer (never %s by this device, or already released)",
			op, ptr, dev_name,
			strcmp(op, "mem_free") == 0 ? "allocated" : "registered");
}

/*
 * Releases the CUDA resource behind m (GPU memory, CPU mapping, or host
 * registration). *held is set when nothing was released because the context
 * could not be made current, so that the caller can keep the entry.
 */
static int
release_mem(struct gpu_cuda_ctx *c, struct gpu_cuda_mem *m, const char *what,
		bool *held)
{
	int ret = 0;
	int r;

	if (m->kind != GPU_CUDA_MEM_DEVICE)
		return gpu_cuda_host_unregister_try(c, m->base, what, held);
	*held = false;
	/* Importers keep their own reference; the fds go with the
	 * allocation so that none names freed memory. */
	gpu_cuda_dmabuf_release_alloc(c, m->id);
	if (m->cpu_map != NULL) {
		ret = gpu_cuda_gdr_unmap(m->cpu_map);
		m->cpu_map = NULL;
	}
	r = gpu_cuda_ctx_enter(c, what);
	if (r != 0) {
		*held = true;
		return r;
	}
	r = GPU_CUDA_CALL(what, cuMemFree, (CUdeviceptr)m->base);
	if (r != 0 && ret == 0)
		ret = r;
	r = gpu_cuda_ctx_leave(what);
	return ret != 0 ? ret : r;
}

/* release_mem, tried once more if the context could not be entered: a
 * passing failure must not leak what is being undone or closed. Returns the
 * first attempt's result; *held says whether the resource is still held. */
static int
release_mem_retry(struct gpu_cuda_ctx *c, struct gpu_cuda_mem *m,
		const char *what, bool *held)
{
	int ret = release_mem(c, m, what, held);

	if (*held)
		release_mem(c, m, what, held);
	return ret;
}

/* Removes m from the table and releases it; if the release could not even
 * start, m goes back in the table (the caller may retry; dev_close reclaims
 * it). */
static int
release_entry(struct gpu_cuda_ctx *c, struct gpu_cuda_mem *m, const char *what)
{
	bool held;
	int ret = release_mem(c, m, what, &held);

	if (held && gpu_cuda_mem_table_insert(&c->mem, m) == 0)
		return ret;
	free(m);
	return ret;
}

/* Identifies allocations for the dma-buf records beyond their address,
 * which a later allocation may reuse. */
static uint64_t next_mem_id;

int
gpu_cuda_mem_alloc(struct gpu_cuda_ctx *c, size_t size, unsigned int align,
		void **ptr)
{
	const char *name = c->name;
	struct gpu_cuda_mem *m;
	CUdeviceptr base;
	size_t extra, base_size;
	unsigned int one = 1;
	bool held;
	int ret, r;

	if (ptr == NULL || size == 0) {
		CUDA_LOG(ERR, "mem_alloc on %s: %s", name,
			ptr == NULL ? "NULL result pointer" : "size 0");
		return -EINVAL;
	}
	if (align != 0 && !rte_is_power_of_2(align)) {
		CUDA_LOG(ERR, "mem_alloc on %s: alignment %u is not a power of two",
			name, align);
		return -EINVAL;
	}
	/* Alignments cuMemAlloc does not guarantee are made by over-allocating
	 * and rounding the pointer up. */
	extra = align > GPU_CUDA_ALLOC_ALIGN ? align - 1 : 0;
	if (size > SIZE_MAX - extra - GPU_CUDA_PAGE_SIZE) {
		CUDA_LOG(ERR, "mem_alloc on %s: size %zu with alignment %u overflows",
			name, size, align);
		return -E2BIG;
	}
	/* Whole GPU pages for callers that ask for page alignment: they mean
	 * to map the buffer for a NIC or the CPU, which pin whole pages. The
	 * pointer is then page aligned, so the pages it spans end at most
	 * size rounded up to a page after it, wherever cuMemAlloc put the
	 * base: rounding size + extra instead falls a page short when the
	 * base is not page aligned. */
	if (align >= GPU_CUDA_PAGE_SIZE)
		base_size = RTE_ALIGN_CEIL(size, (size_t)GPU_CUDA_PAGE_SIZE) + extra;
	else
		base_size = size + extra;

	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		CUDA_LOG(ERR, "mem_alloc on %s: out of host memory for bookkeeping",
			name);
		return -ENOMEM;
	}
	ret = gpu_cuda_ctx_enter(c, "mem_alloc");
	if (ret != 0)
		goto free_entry;
	ret = GPU_CUDA_CALL("mem_alloc", cuMemAlloc, &base, base_size);
	if (ret != 0) {
		CUDA_LOG(ERR, "mem_alloc on %s: %zu bytes (alignment %u) not allocated",
			name, size, align);
		goto leave;
	}
	/* Synchronous CUDA copies must not overtake writes made by peers
	 * (NIC through GPUDirect RDMA, CPU through GDRCopy) into this range,
	 * and GDRCopy refuses to pin memory without this attribute. */
	ret = GPU_CUDA_CALL("mem_alloc", cuPointerSetAttribute, &one,
			CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, base);
	if (ret != 0)
		goto free_mem;
	/* The memory is returned cleared: cuMemAlloc hands back whatever
	 * the last user of that memory left, and structures placed in it
	 * (gpudev's comm-list status array) must not start with stale
	 * values. On the driver's own non-blocking stream, so that a
	 * persistent kernel on the legacy stream neither delays nor is
	 * overtaken by it, and complete before the CPU can write. */
	ret = GPU_CUDA_CALL("mem_alloc", cuMemsetD8Async, base, 0, base_size,
			c->stream);
	if (ret == 0)
		ret = GPU_CUDA_CALL("mem_alloc", cuStreamSynchronize, c->stream);
	if (ret != 0)
		goto free_mem;
	m->kind = GPU_CUDA_MEM_DEVICE;
	m->id = __atomic_add_fetch(&next_mem_id, 1, __ATOMIC_RELAXED);
	m->base = (uintptr_t)base;
	m->base_size = base_size;
	m->size = size;
	m->ptr = extra != 0 ? RTE_ALIGN_CEIL(m->base, (uintptr_t)align) : m->base;
	ret = gpu_cuda_ctx_leave("mem_alloc");
	if (ret == 0) {
		ret = gpu_cuda_mem_table_insert(&c->mem, m);
		if (ret != 0) {
			CUDA_LOG(ERR, "mem_alloc on %s: CUDA returned %#" PRIxPTR " which is still live in the table",
				name, m->ptr);
			ret = -EIO;
		}
	}
	if (ret != 0) {
		/* Undo with a fresh enter/leave: whether a failed pop left
		 * the context current is not known. */
		release_mem_retry(c, m, "mem_alloc", &held);
		if (held)
			CUDA_LOG(ERR, "mem_alloc on %s: %zu bytes of GPU memory leaked",
				name, base_size);
		goto free_entry;
	}
	*ptr = (void *)m->ptr;
	return 0;

free_mem:
	r = GPU_CUDA_CALL("mem_alloc", cuMemFree, base);
	RTE_SET_USED(r);
leave:
	r = gpu_cuda_ctx_leave("mem_alloc");
	RTE_SET_USED(r);
free_entry:
	free(m);
	return ret;
}

/*
 * The entry of ptr, of kind, taken out of the table for op to release;
 * NULL (said why: NULL, the other kind's release call, or unknown) when
 * there is none.
 */
static struct gpu_cuda_mem *
take_for_release(struct gpu_cuda_ctx *c, void *ptr, int kind, const char *op)
{
	struct gpu_cuda_mem *m;
	int other_kind;

	if (ptr == NULL) {
		CUDA_LOG(ERR, "%s on %s: NULL pointer", op, c->name);
		return NULL;
	}
	m = gpu_cuda_mem_table_remove(&c->mem, (uintptr_t)ptr, kind,
			&other_kind);
	if (m == NULL && other_kind)
		CUDA_LOG(ERR, "%s(%p) on %s: %s", op, ptr, c->name,
			kind == GPU_CUDA_MEM_DEVICE ?
			"this is registered host memory, release it with rte_gpu_mem_unregister" :
			"this is GPU memory from rte_gpu_mem_alloc, release it with rte_gpu_mem_free");
	else if (m == NULL)
		log_unknown_pointer(c, c->name, op, ptr);
	return m;
}

int
gpu_cuda_mem_free(struct gpu_cuda_ctx *c, void *ptr)
{
	const char *name = c->name;
	struct gpu_cuda_mem *m;

	m = take_for_release(c, ptr, GPU_CUDA_MEM_DEVICE, "mem_free");
	if (m == NULL)
		return -EINVAL;
	if (m->cpu_map != NULL)
		CUDA_LOG(WARNING, "mem_free(%p) on %s: still mapped for the CPU, unmapping",
			ptr, name);
	return release_entry(c, m, "mem_free");
}

/* Gives back what gpu_cuda_reg_cache_acquire handed out when the
 * registration goes no further. */
static void
cache_giveback(struct gpu_cuda_ctx *c, struct gpu_cuda_mem *m, bool hit)
{
	if (m->cache_ent == NULL)
		return;
	if (!hit)
		gpu_cuda_reg_cache_abort(c, m->cache_ent);
	else if (!gpu_cuda_reg_cache_release(c, m->cache_ent))
		gpu_cuda_host_unregister(c, m->base, "mem_register");
	m->cache_ent = NULL;
}

/* cuMemHostRegister; a registration the cache keeps that overlaps the
 * range (CUDA refuses overlaps) is undone and the call tried again. */
static int
host_register(void *ptr, size_t size)
{
	const unsigned int flags = CU_MEMHOSTREGISTER_PORTABLE |
		CU_MEMHOSTREGISTER_DEVICEMAP;
	CUresult res = gpu_cuda.cuMemHostRegister(ptr, size, flags);

	if (res == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED &&
			gpu_cuda_reg_cache_evict_overlapping((uintptr_t)ptr, size) != 0)
		res = gpu_cuda.cuMemHostRegister(ptr, size, flags);
	if (res != CUDA_SUCCESS) {
		gpu_cuda_log_error("mem_register", "cuMemHostRegister", res);
		return gpu_cuda_errno(res);
	}
	return 0;
}

int
gpu_cuda_mem_register(struct gpu_cuda_ctx *c, size_t size, void *ptr)
{
	const char *name = c->name;
	struct gpu_cuda_mem *m;
	CUdeviceptr dptr = 0;
	bool hit = false;
	int ret, r;

	if (ptr == NULL || size == 0 || (uintptr_t)ptr > UINTPTR_MAX - size) {
		CUDA_LOG(ERR, "mem_register(%p, %zu) on %s: %s", ptr, size, name,
			ptr == NULL ? "NULL pointer" :
			size == 0 ? "size 0" : "range wraps around the address space");
		return -EINVAL;
	}
	if (!c->caps.host_ptr_is_dev_ptr) {
		CUDA_LOG(ERR, "mem_register on %s: this GPU cannot use host pointers for registered memory (CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM=0), gpudev needs that",
			name);
		return -ENOTSUP;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->kind = GPU_CUDA_MEM_REGISTERED;
	m->ptr = (uintptr_t)ptr;
	m->size = size;
	m->base = (uintptr_t)ptr;
	m->base_size = size;
	/* A registration the cache kept, or the cache's record of the one
	 * made below; complete before the entry is visible to other lcores. */
	m->cache_ent = gpu_cuda_reg_cache_acquire(c, m->ptr, size, &hit,
			&m->base, &m->base_size);
	/* Claim the pointer before pinning, so that two lcores registering the
	 * same buffer cannot both pin it. */
	if (gpu_cuda_mem_table_insert(&c->mem, m) != 0) {
		CUDA_LOG(ERR, "mem_register(%p) on %s: already registered",
			ptr, name);
		cache_giveback(c, m, hit);
		free(m);
		return -EEXIST;
	}
	if (hit)
		return 0;

	ret = gpu_cuda_ctx_enter(c, "mem_register");
	if (ret != 0)
		goto unclaim;
	ret = host_register(ptr, size);
	if (ret != 0) {
		CUDA_LOG(ERR, "mem_register(%p, %zu) on %s: not registered%s",
			ptr, size, name, ret == -EEXIST ?
			" (overlaps memory registered before)" : "");
		goto leave;
	}
	/* GPU kernels get the very pointers the CPU uses (gpudev has no
	 * separate device address for registered memory): check it. */
	ret = GPU_CUDA_CALL("mem_register", cuMemHostGetDevicePointer, &dptr,
			ptr, 0);
	if (ret == 0 && dptr != (CUdeviceptr)(uintptr_t)ptr) {
		CUDA_LOG(ERR, "mem_register(%p) on %s: GPU address %#llx differs from the host address",
			ptr, name, (unsigned long long)dptr);
		ret = -ENOTSUP;
	}
	if (ret != 0)
		goto unregister;
	ret = gpu_cuda_ctx_leave("mem_register");
	if (ret != 0) {
		bool held;

		release_mem_retry(c, m, "mem_register", &held);
		if (held)
			CUDA_LOG(ERR, "mem_register(%p) on %s: registration leaked",
				ptr, name);
		goto unclaim;
	}
	return 0;

unregister:
	r = GPU_CUDA_CALL("mem_register", cuMemHostUnregister, ptr);
	RTE_SET_USED(r);
leave:
	r = gpu_cuda_ctx_leave("mem_register");
	RTE_SET_USED(r);
unclaim:
	m = gpu_cuda_mem_table_remove(&c->mem, (uintptr_t)ptr,
			GPU_CUDA_MEM_REGISTERED, &r);
	if (m != NULL)
		cache_giveback(c, m, false);
	free(m);
	return ret;
}

int
gpu_cuda_mem_unregister(struct gpu_cuda_ctx *c, void *ptr)
{
	struct gpu_cuda_mem *m;

	m = take_for_release(c, ptr, GPU_CUDA_MEM_REGISTERED, "mem_unregister");
	if (m == NULL)
		return -EINVAL;
	if (m->cache_ent != NULL) {
		bool parked = gpu_cuda_reg_cache_release(c, m->cache_ent);

		m->cache_ent = NULL;
		if (parked) {
			free(m);
			return 0;
		}
	}
	return release_entry(c, m, "mem_unregister");
}

struct cpu_map_request {
	size_t size;
	void *out;
	const char *name;
};

/* Runs under the table lock, so the allocation cannot be freed meanwhile. */
static int
cpu_map_locked(struct gpu_cuda_mem *m, void *arg)
{
	struct cpu_map_request *req = arg;
	int ret;

	if (m->kind != GPU_CUDA_MEM_DEVICE) {
		CUDA_LOG(ERR, "mem_cpu_map(%#" PRIxPTR ") on %s: registered host memory needs no CPU mapping",
			m->ptr, req->name);
		return -EINVAL;
	}
	if (req->size > m->size) {
		CUDA_LOG(ERR, "mem_cpu_map(%#" PRIxPTR ", %zu) on %s: larger than the allocation (%zu bytes)",
			m->ptr, req->size, req->name, m->size);
		m->cpu_map_refused = true;
		return -EINVAL;
	}
	if (m->cpu_map != NULL) {
		CUDA_LOG(ERR, "mem_cpu_map(%#" PRIxPTR ") on %s: already mapped",
			m->ptr, req->name);
		return -EEXIST;
	}
	ret = gpu_cuda_gdr_map(m->ptr, req->size, m->base, m->base_size,
			&req->out, &m->cpu_map);
	if (ret != 0)
		m->cpu_map_refused = true;
	return ret;
}

static int
mark_map_refused(struct gpu_cuda_mem *m, void *arg)
{
	RTE_SET_USED(arg);
	if (m->kind == GPU_CUDA_MEM_DEVICE)
		m->cpu_map_refused = true;
	return 0;
}

/* Remembers the refusal on the allocation (see cpu_map_refused). */
static int
cpu_map_refuse(struct gpu_cuda_ctx *c, void *ptr_in)
{
	(void)gpu_cuda_mem_table_with(&c->mem, (uintptr_t)ptr_in,
			mark_map_refused, NULL);
	return -ENOTSUP;
}

int
gpu_cuda_mem_cpu_map(struct gpu_cuda_ctx *c, size_t size, void *ptr_in,
		void **ptr_out)
{
	const char *name = c->name;
	struct cpu_map_request req = { .size = size, .name = name };
	int ret;

	if (ptr_in == NULL || ptr_out == NULL || size == 0) {
		CUDA_LOG(ERR, "mem_cpu_map on %s: NULL pointer or size 0", name);
		return -EINVAL;
	}
	if (!c->use_gdrcopy) {
		CUDA_LOG(ERR, "mem_cpu_map on %s: disabled by devarg gdrcopy=0",
			name);
		return cpu_map_refuse(c, ptr_in);
	}
	if (gpu_cuda_gdr_probe() != 0) {
		CUDA_LOG(DEBUG, "mem_cpu_map on %s: GDRCopy not available", name);
		return cpu_map_refuse(c, ptr_in);
	}
	ret = gpu_cuda_mem_table_with(&c->mem, (uintptr_t)ptr_in,
			cpu_map_locked, &req);
	if (ret == -ENOENT) {
		log_unknown_pointer(c, name, "mem_cpu_map", ptr_in);
		return -EINVAL;
	}
	if (ret == 0)
		*ptr_out = req.out;
	return ret;
}

static int
cpu_unmap_locked(struct gpu_cuda_mem *m, void *arg)
{
	void *handle = m->cpu_map;

	RTE_SET_USED(arg);
	if (m->kind != GPU_CUDA_MEM_DEVICE || handle == NULL)
		return -ENOENT;
	m->cpu_map = NULL;
	return gpu_cuda_gdr_unmap(handle);
}

int
gpu_cuda_mem_cpu_unmap(struct gpu_cuda_ctx *c, void *ptr)
{
	int ret;

	ret = gpu_cuda_mem_table_with(&c->mem, (uintptr_t)ptr,
			cpu_unmap_locked, NULL);
	if (ret == -ENOENT) {
		/* gpudev itself calls this on host memory to find out whether
		 * a comm list status array was CPU-mapped: no error log. */
		CUDA_LOG(DEBUG, "mem_cpu_unmap(%p) on %s: not a CPU-mapped GPU allocation",
			ptr, c->name);
		return -EINVAL;
	}
	return ret;
}


int
gpu_cuda_mem_release_all(struct gpu_cuda_ctx *c, const char *name)
{
	struct gpu_cuda_mem *m = gpu_cuda_mem_table_drain(&c->mem);
	unsigned int leaked_alloc = 0, leaked_reg = 0, dropped = 0;
	int ret = 0;
	int r;

	while (m != NULL) {
		struct gpu_cuda_mem *next = m->next;
		bool held;

		if (m->kind == GPU_CUDA_MEM_DEVICE && m->cpu_map_refused) {
			dropped++;
			CUDA_LOG(DEBUG, "close %s: GPU allocation %#" PRIxPTR " (%zu bytes), refused a CPU mapping, was never freed, freeing it",
				name, m->ptr, m->size);
		} else if (m->kind == GPU_CUDA_MEM_DEVICE) {
			leaked_alloc++;
			CUDA_LOG(WARNING, "close %s: GPU allocation %#" PRIxPTR " (%zu bytes) was never freed, freeing it",
				name, m->ptr, m->size);
		} else {
			leaked_reg++;
			CUDA_LOG(WARNING, "close %s: host memory %#" PRIxPTR " (%zu bytes) was never unregistered, unregistering it",
				name, m->ptr, m->size);
		}
		/* The cache's record goes with the cache, which dev_close
		 * tears down after this. */
		m->cache_ent = NULL;
		/* The first failure is reported even if the retry works. */
		r = release_mem_retry(c, m, "dev_close", &held);
		if (r != 0 && ret == 0)
			ret = r;
		if (held)
			CUDA_LOG(ERR, "close %s: %#" PRIxPTR " could not be released",
				name, m->ptr);
		free(m);
		m = next;
	}
	if (leaked_alloc + leaked_reg != 0)
		CUDA_LOG(WARNING, "close %s: released %u leaked GPU allocation(s) and %u leaked host registration(s)",
			name, leaked_alloc, leaked_reg);
	/* Without GDRCopy, every rte_gpu_comm_create_list leaves one: its
	 * status flags' GPU allocation, replaced by host memory when the
	 * CPU mapping fails and then forgotten (DPDK 22.11 to 25.07). */
	if (dropped != 0)
		CUDA_LOG(INFO, "close %s: freed %u GPU allocation(s) whose CPU mapping was refused and that were never freed (rte_gpu_comm_create_list leaves one per list without GDRCopy)",
			name, dropped);
	return ret;
}
