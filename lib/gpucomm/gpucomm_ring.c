/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU communication ring's host code that is not on the per-burst
 * path: the layout checks of its GPU-side mirror, ring initialisation,
 * and the persistent kernel's quit flag and dispatch state.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_log.h>
#include <rte_memory.h>

#include "gpucomm_ring.h"

RTE_LOG_REGISTER_DEFAULT(gpucomm_logtype, NOTICE);
#define GPUCOMM_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, gpucomm_logtype, "gpucomm: " __VA_ARGS__)

/* The kernels read gpudev's lists through gpucomm_layout.h: same layout,
 * field by field, or no build. */
#define SAME_FIELD(a, b, f) \
	_Static_assert(offsetof(struct a, f) == offsetof(struct b, f) && \
		sizeof(((struct a *)0)->f) == sizeof(((struct b *)0)->f), \
		#a "." #f " differs from its mirror " #b)
_Static_assert(sizeof(struct rte_gpu_comm_pkt) == sizeof(struct gpucomm_pkt),
	"struct rte_gpu_comm_pkt size");
SAME_FIELD(rte_gpu_comm_pkt, gpucomm_pkt, addr);
SAME_FIELD(rte_gpu_comm_pkt, gpucomm_pkt, size);
_Static_assert(sizeof(struct rte_gpu_comm_list) == sizeof(struct gpucomm_item),
	"struct rte_gpu_comm_list size");
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, dev_id);
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, mbufs);
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, pkt_list);
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, num_pkts);
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, status_h);
SAME_FIELD(rte_gpu_comm_list, gpucomm_item, status_d);
_Static_assert(sizeof(enum rte_gpu_comm_list_status) == sizeof(uint32_t),
	"status word");
_Static_assert(RTE_GPU_COMM_LIST_FREE == GPUCOMM_STATUS_FREE &&
	RTE_GPU_COMM_LIST_READY == GPUCOMM_STATUS_READY &&
	RTE_GPU_COMM_LIST_DONE == GPUCOMM_STATUS_DONE &&
	RTE_GPU_COMM_LIST_ERROR == GPUCOMM_STATUS_ERROR, "status values");
_Static_assert(RTE_GPU_COMM_LIST_PKTS_MAX == GPUCOMM_PKTS_MAX,
	"packet list entries");
/* Lap tags (gpucomm_layout.h): the high half of a 64-bit size word holds
 * the tag, its count field any item's count. */
_Static_assert(sizeof(((struct rte_gpu_comm_pkt *)0)->size) == 8,
	"64-bit size word: room for the lap tag");
_Static_assert(RTE_GPU_COMM_LIST_PKTS_MAX <= GPUCOMM_TAG_COUNT_MASK &&
	GPUCOMM_TAG_WINDOW <= RTE_GPU_COMM_LIST_PKTS_MAX &&
	GPUCOMM_TAG_REFRESH * 2 <= GPUCOMM_TAG_LAP_MASK + 1u, "lap tag fields");
/* The flag the kernel polls is a 32-bit word. */
_Static_assert(sizeof(*((struct rte_gpu_comm_flag *)0)->ptr) == sizeof(uint32_t),
	"comm flag word");

int
gpucomm_ring_init(struct gpucomm_ring *r, int16_t dev_id,
		struct rte_gpu_comm_list *list, uint32_t n_items, unsigned int flags)
{
	enum rte_gpu_comm_list_status st;
	int rc;

	if (r == NULL || list == NULL || n_items == 0 ||
			(flags & ~(GPUCOMM_RING_GPU_WMB | GPUCOMM_RING_TAGS |
			GPUCOMM_RING_SIDE)) != 0 ||
			(flags & (GPUCOMM_RING_TAGS | GPUCOMM_RING_SIDE)) ==
			GPUCOMM_RING_SIDE) {
		GPUCOMM_LOG(ERR, "ring init: %s\n", r == NULL ? "no ring" :
			list == NULL ? "no comm list" : n_items == 0 ?
			"no items" : (flags & GPUCOMM_RING_SIDE) &&
			!(flags & GPUCOMM_RING_TAGS) ?
			"side records need lap tags" : "unknown flags");
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	for (uint32_t i = 0; i < n_items; i++) {
		if (list[i].status_h == NULL || list[i].pkt_list == NULL) {
			GPUCOMM_LOG(ERR, "ring init: item %u has no %s\n", i,
				list[i].status_h == NULL ? "status" : "packet list");
			return -EINVAL;
		}
		RTE_GPU_VOLATILE(list[i].num_pkts) = 0;
		/* No window entry is taken for current: those of an earlier
		 * user of the list carry the tags of its laps, which this
		 * ring counts again from 0 (gpucomm_layout.h). Made visible
		 * by the fence below, before any kernel is launched on it. */
		for (uint32_t j = 0; (flags & GPUCOMM_RING_TAGS) &&
				j < GPUCOMM_TAG_WINDOW; j++)
			list[i].pkt_list[j].size =
				(uint32_t)list[i].pkt_list[j].size;
		/* Nor any side slot (the words of an earlier user). */
		for (uint32_t j = 0; (flags & GPUCOMM_RING_SIDE) &&
				j < GPUCOMM_SIDE_MAX; j++)
			list[i].pkt_list[GPUCOMM_SIDE_ENTRY(j)].size = 0;
		rc = rte_gpu_comm_set_status(&list[i], RTE_GPU_COMM_LIST_FREE);
		if (rc != 0)
			return rc;
	}
	/*
	 * Store fence: statuses in GPU memory mapped through the BAR
	 * (GDRCopy) are write-combined, their stores held in the CPU's WC
	 * buffers until drained; this issues them before anything stored
	 * later, a kernel launch's doorbell included. In host memory it is
	 * the release of plain stores.
	 */
	rte_wmb();
	/*
	 * Read back: a load through the BAR completes only after the posted
	 * writes before it on the same path (PCIe ordering), so every status
	 * is in GPU memory once this reads FREE; it also catches a mapping
	 * that does not take the stores.
	 */
	for (uint32_t i = 0; i < n_items; i++) {
		rc = rte_gpu_comm_get_status(&list[i], &st);
		if (rc != 0)
			return rc;
		if (st != RTE_GPU_COMM_LIST_FREE) {
			GPUCOMM_LOG(ERR, "ring init: item %u reads back status %d "
				"after FREE was stored\n", i, (int)st);
			return -EIO;
		}
	}
	r->list = list;
	r->n_items = n_items;
	r->dev_id = dev_id;
	r->gpu_wmb = (flags & GPUCOMM_RING_GPU_WMB) != 0;
	r->tags = (flags & GPUCOMM_RING_TAGS) != 0;
	r->side = (flags & GPUCOMM_RING_SIDE) != 0;
	/* gpudev puts the statuses in EAL memory (rte_zmalloc) unless it
	 * could map GPU memory for the CPU (GDRCopy: write-combined). */
	r->wc_status = rte_mem_virt2memseg(list[0].status_h, NULL) == NULL;
	return 0;
}

int
gpucomm_kernel_setup(struct gpucomm_kernel *k, int16_t dev_id,
		struct rte_gpu_comm_list *const *lists, uint32_t n_rings,
		uint32_t n_items, uint32_t bpq)
{
	int rc;

	if (k == NULL || lists == NULL || n_rings == 0 ||
			n_rings > GPUCOMM_MAX_RINGS || n_items == 0 || bpq == 0) {
		GPUCOMM_LOG(ERR, "kernel setup: %s\n", k == NULL ? "no kernel" :
			lists == NULL ? "no lists" : n_rings == 0 ? "no ring" :
			n_rings > GPUCOMM_MAX_RINGS ?
			"more rings than GPUCOMM_MAX_RINGS" : n_items == 0 ?
			"no items" : "no worker block");
		return -EINVAL;
	}
	memset(k, 0, sizeof(*k));
	k->dev_id = dev_id;
	for (uint32_t r = 0; r < n_rings; r++) {
		if (lists[r] == NULL) {
			GPUCOMM_LOG(ERR, "kernel setup: ring %u has no list\n", r);
			return -EINVAL;
		}
		k->kp.items[r] = (struct gpucomm_item *)lists[r];
	}
	rc = rte_gpu_comm_create_flag(dev_id, &k->quit, RTE_GPU_COMM_FLAG_CPU);
	if (rc != 0) {
		GPUCOMM_LOG(ERR, "quit flag on GPU %d: %s\n", dev_id,
			rte_strerror(-rc));
		return rc;
	}
	k->quit_ok = 1;
	rc = rte_gpu_comm_set_flag(&k->quit, 0);
	if (rc != 0) {
		GPUCOMM_LOG(ERR, "quit flag reset: %s\n", rte_strerror(-rc));
		gpucomm_kernel_teardown(k);
		return rc;
	}
	k->state_bytes = gpucomm_kstate_bytes(n_rings, n_items);
	k->state = rte_gpu_mem_alloc(dev_id, k->state_bytes, 0);
	if (k->state == NULL) {
		rc = -rte_errno;
		GPUCOMM_LOG(ERR, "dispatch state, %zu bytes of GPU %d memory: %s\n",
			k->state_bytes, dev_id, rte_strerror(rte_errno));
		gpucomm_kernel_teardown(k);
		return rc != 0 ? rc : -ENOMEM;
	}
	k->kp.n_rings = n_rings;
	k->kp.n_items = n_items;
	k->kp.bpq = bpq;
	k->kp.poll_ns_min = GPUCOMM_POLL_NS_MIN;
	k->kp.poll_ns_max = GPUCOMM_POLL_NS_MAX;
	k->kp.quit = k->quit.ptr;
	gpucomm_kstate_bind(&k->kp, k->state);
	return 0;
}

int
gpucomm_kernel_quit(struct gpucomm_kernel *k)
{
	int rc;

	if (k == NULL || !k->quit_ok)
		return -EINVAL;
	rc = rte_gpu_comm_set_flag(&k->quit, 1);
	/* Out to memory now, not when the store buffer drains by itself. */
	rte_wmb();
	return rc;
}

int
gpucomm_kernel_rearm(struct gpucomm_kernel *k)
{
	if (k == NULL || !k->quit_ok)
		return -EINVAL;
	return rte_gpu_comm_set_flag(&k->quit, 0);
}

void
gpucomm_kernel_teardown(struct gpucomm_kernel *k)
{
	if (k == NULL)
		return;
	if (k->state != NULL && rte_gpu_mem_free(k->dev_id, k->state) != 0)
		GPUCOMM_LOG(WARNING, "dispatch state free: %s\n",
			rte_strerror(rte_errno));
	k->state = NULL;
	if (k->quit_ok && rte_gpu_comm_destroy_flag(&k->quit) != 0)
		GPUCOMM_LOG(WARNING, "quit flag destroy: %s\n",
			rte_strerror(rte_errno));
	k->quit_ok = 0;
	memset(&k->kp, 0, sizeof(k->kp));
}
