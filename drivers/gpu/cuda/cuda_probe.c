/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Finding GPUs: on the PCI bus (every NVIDIA display/3D controller, whatever
 * its device ID) or as a virtual device (--vdev gpu_cuda0,dev=<ordinal or PCI
 * address>) where the PCI bus is not scanned. Also turns the child devices
 * applications add with rte_gpu_add_child into devices of this driver, when
 * asked to (rte_pmd_gpu_cuda_child_attach). The top of the driver: it reads
 * what a GPU is and can do, and hands the device to cuda_dev.c for the rest.
 * In a secondary process it attaches to the primary's device (gpudev's
 * shared device data) with a context, memory and streams of its own.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_pci_driver.h>
#include <bus_vdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_spinlock.h>

#include "dpdk_compat.h"
#include "pmd_info.h"
#include "cuda_dev.h"
#include "cuda_devargs.h"
#include "cuda_gdr.h"
#include "cuda_gpu.h"
#include "cuda_log.h"
#include "rte_pmd_gpu_cuda.h"

RTE_LOG_REGISTER(gpu_cuda_logtype, pmd.gpu.cuda, NOTICE);

#define NVIDIA_VENDOR_ID 0x10de
/* PCI class codes (class, subclass, prog-if) of GPUs. */
#define PCI_CLASS_DISPLAY_VGA 0x030000
#define PCI_CLASS_DISPLAY_3D 0x030200

static rte_spinlock_t probe_lock = RTE_SPINLOCK_INITIALIZER;

/*
 * What a secondary process cannot learn from gpudev's shared data: which
 * GPU a device is and the devargs the primary probed it with (the vdev bus
 * hands a secondary its devices' names only). The primary writes a slot
 * per device at probe, under probe_lock; secondaries only read.
 */
#define GPU_CUDA_MP_MZ "gpu_cuda_mp"
#define GPU_CUDA_MP_SLOTS 64

struct gpu_cuda_mp_slot {
	char name[RTE_DEV_NAME_MAX_LEN];
	char bus_id[GPU_CUDA_BUS_ID_LEN];
	struct gpu_cuda_devargs da;
};

static int
mp_publish(const char *name, const char *bus_id,
		const struct gpu_cuda_devargs *da)
{
	const struct rte_memzone *mz = rte_memzone_lookup(GPU_CUDA_MP_MZ);
	struct gpu_cuda_mp_slot *slot, *use = NULL;
	unsigned int i;

	if (mz == NULL) {
		mz = rte_memzone_reserve(GPU_CUDA_MP_MZ,
			sizeof(*slot) * GPU_CUDA_MP_SLOTS, SOCKET_ID_ANY, 0);
		if (mz == NULL)
			return -rte_errno;
		memset(mz->addr, 0, mz->len);
	}
	slot = mz->addr;
	/* A name probed again (removed, then added) takes its old slot. */
	for (i = 0; i < GPU_CUDA_MP_SLOTS; i++) {
		if (strcmp(slot[i].name, name) == 0) {
			use = &slot[i];
			break;
		}
		if (use == NULL && slot[i].name[0] == '\0')
			use = &slot[i];
	}
	if (use == NULL)
		return -ENOSPC;
	snprintf(use->bus_id, sizeof(use->bus_id), "%s", bus_id);
	use->da = *da;
	snprintf(use->name, sizeof(use->name), "%s", name);
	return 0;
}

void
gpu_cuda_mp_forget(const char *name)
{
	const struct rte_memzone *mz;
	struct gpu_cuda_mp_slot *slot;
	unsigned int i;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return;
	mz = rte_memzone_lookup(GPU_CUDA_MP_MZ);
	if (mz == NULL)
		return;
	slot = mz->addr;
	rte_spinlock_lock(&probe_lock);
	for (i = 0; i < GPU_CUDA_MP_SLOTS; i++)
		if (strcmp(slot[i].name, name) == 0)
			memset(&slot[i], 0, sizeof(slot[i]));
	rte_spinlock_unlock(&probe_lock);
}

/* In a secondary: the GPU and devargs the primary probed name with. */
static int
mp_lookup(const char *name, char *bus_id, size_t len,
		struct gpu_cuda_devargs *da)
{
	const struct rte_memzone *mz = rte_memzone_lookup(GPU_CUDA_MP_MZ);
	const struct gpu_cuda_mp_slot *slot;
	unsigned int i;

	if (mz == NULL)
		return -ENOENT;
	slot = mz->addr;
	for (i = 0; i < GPU_CUDA_MP_SLOTS; i++) {
		if (strcmp(slot[i].name, name) == 0) {
			snprintf(bus_id, len, "%s", slot[i].bus_id);
			*da = slot[i].da;
			return 0;
		}
	}
	return -ENOENT;
}

/* In a secondary: the CUDA device the primary probed as name, with its
 * devargs; 1 when the primary has no such GPU (not for this process). */
static int
secondary_device(const char *name, CUdevice *d, struct gpu_cuda_devargs *da)
{
	char bus_id[GPU_CUDA_BUS_ID_LEN];
	int ret;

	ret = mp_lookup(name, bus_id, sizeof(bus_id), da);
	if (ret != 0) {
		CUDA_LOG(INFO, "%s: not a GPU of the primary process: not attached",
			name);
		return 1;
	}
	ret = GPU_CUDA_CALL(name, cuDeviceGetByPCIBusId, d, bus_id);
	if (ret != 0)
		CUDA_LOG(ERR, "%s: the primary's GPU %s is unknown to CUDA in this process (CUDA_VISIBLE_DEVICES?)",
			name, bus_id);
	return ret;
}

static int
query_attr(CUdevice d, CUdevice_attribute attr, const char *attr_name,
		int *value, bool required)
{
	CUresult res = gpu_cuda.cuDeviceGetAttribute(value, attr, d);

	if (res == CUDA_SUCCESS)
		return 0;
	*value = 0;
	if (required) {
		gpu_cuda_log_error(attr_name, "cuDeviceGetAttribute", res);
		return gpu_cuda_errno(res);
	}
	/* Older drivers do not know newer attributes: report the feature as
	 * absent rather than failing the probe. */
	CUDA_LOG(INFO, "attribute %s unavailable (error %d): assuming 0",
		attr_name, (int)res);
	return 0;
}

static int
read_caps(CUdevice d, struct gpu_cuda_caps *caps, int *sm_count)
{
	int unified = 0;
	int ret = 0;

#define ATTR(a, v, req) \
	if (ret == 0) \
		ret = query_attr(d, CU_DEVICE_ATTRIBUTE_ ## a, #a, v, req)
	ATTR(MULTIPROCESSOR_COUNT, sm_count, true);
	ATTR(COMPUTE_CAPABILITY_MAJOR, &caps->cc_major, true);
	ATTR(COMPUTE_CAPABILITY_MINOR, &caps->cc_minor, true);
	ATTR(UNIFIED_ADDRESSING, &unified, true);
	ATTR(CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, &caps->host_ptr_is_dev_ptr, true);
	ATTR(GPU_DIRECT_RDMA_SUPPORTED, &caps->rdma_supported, false);
	ATTR(GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, &caps->rdma_flush_options, false);
	ATTR(GPU_DIRECT_RDMA_WRITES_ORDERING, &caps->rdma_writes_ordering, false);
	ATTR(DMA_BUF_SUPPORTED, &caps->dmabuf_supported, false);
#undef ATTR
	if (ret == 0 && !unified) {
		CUDA_LOG(ERR, "GPU has no unified addressing: not supported");
		ret = -ENOTSUP;
	}
	return ret;
}

static const char *
ordering_name(int ordering)
{
	if (ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES)
		return "all devices";
	if (ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER)
		return "owner";
	return "none";
}

static int16_t
numa_node_of(const char *bus_id)
{
	char path[128], lower[GPU_CUDA_BUS_ID_LEN];
	unsigned int i;
	FILE *f;
	int node = -1;

	for (i = 0; bus_id[i] != '\0' && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)bus_id[i]);
	lower[i] = '\0';
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", lower);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return (int16_t)node;
}

/* Is this CUDA device already a GPU of this driver (probed twice, through
 * PCI and vdev)? */
static const char *
already_probed(CUdevice d)
{
	int16_t id;

	RTE_GPU_FOREACH(id) {
		struct rte_gpu_info info;
		struct rte_gpu *g;

		if (rte_gpu_info_get(id, &info) != 0 || info.parent != RTE_GPU_ID_NONE)
			continue;
		g = rte_gpu_get_by_name(info.name);
		if (g != NULL && g->ops.dev_close == gpu_cuda_dev_close &&
				g->process_private != NULL &&
				((struct gpu_cuda_ctx *)g->process_private)->cu_dev == d)
			return info.name;
	}
	return NULL;
}

static int
gpu_create(struct rte_device *rte_dev, const char *name, CUdevice d,
		const struct gpu_cuda_devargs *da, int16_t numa_node)
{
	bool secondary = rte_eal_process_type() == RTE_PROC_SECONDARY;
	struct gpu_cuda_ctx *c;
	struct rte_gpu *dev;
	const char *dup;
	char model[128];
	size_t total_mem;
	int sm_count = 0;
	int ret;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->cu_dev = d;
	c->use_gdrcopy = da->gdrcopy;
	c->reg_cache_on = da->reg_cache;
	c->reg_cache_max = da->reg_cache_max;
	snprintf(c->name, sizeof(c->name), "%s", name);

	ret = GPU_CUDA_CALL(name, cuDeviceGetPCIBusId, c->bus_id,
			(int)sizeof(c->bus_id), d);
	if (ret == 0)
		ret = GPU_CUDA_CALL(name, cuDeviceGetName, model,
				(int)sizeof(model), d);
	if (ret == 0)
		ret = GPU_CUDA_CALL(name, cuDeviceTotalMem, &total_mem, d);
	if (ret == 0)
		ret = read_caps(d, &c->caps, &sm_count);
	if (ret != 0)
		goto free_ctx;
	if (numa_node < 0)
		numa_node = numa_node_of(c->bus_id);
	/*
	 * A GPU whose RDMA write ordering is at least "owner" makes NIC writes
	 * into its memory visible to its own kernels in order, without a
	 * flush (CUDA: writes "do not need to be flushed for consumers within
	 * the scope indicated"). Only GPUs that do not, and can flush from the
	 * host, pay for cuFlushGPUDirectRDMAWrites in every rte_gpu_wmb.
	 */
	c->flush_on_wmb = (c->caps.rdma_flush_options &
			CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) != 0 &&
		c->caps.rdma_writes_ordering < CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER;

	ret = GPU_CUDA_CALL(name, cuDevicePrimaryCtxRetain, &c->ctx, d);
	if (ret != 0)
		goto free_ctx;
	c->primary = true;
	ret = gpu_cuda_dev_setup(c);
	if (ret != 0)
		goto release_ctx;

	rte_spinlock_lock(&probe_lock);
	dup = already_probed(d);
	if (dup != NULL) {
		rte_spinlock_unlock(&probe_lock);
		CUDA_LOG(ERR, "%s: GPU %s is already probed as %s", name,
			c->bus_id, dup);
		ret = -EEXIST;
		goto teardown;
	}
	if (secondary) {
		/*
		 * The device and its info are the primary's, in gpudev's shared
		 * memory: left as they are. This process works in its own
		 * context (c) and its own memory table, so it can neither see
		 * nor free the primary's memory.
		 */
		dev = rte_gpu_attach(name);
		if (dev == NULL) {
			rte_spinlock_unlock(&probe_lock);
			CUDA_LOG(ERR, "%s: secondary process: the primary has no such GPU (%s)",
				name, rte_strerror(rte_errno));
			ret = -rte_errno;
			goto teardown;
		}
		dev->device = rte_dev;
		dev->process_private = c;
		gpu_cuda_set_ops(dev);
		rte_gpu_complete_new(dev);
		rte_spinlock_unlock(&probe_lock);
		CUDA_LOG(INFO, "%s: %s (PCI %s) attached as gpudev %d in a secondary process, own context",
			name, model, c->bus_id, dev->mpshared->info.dev_id);
		return 0;
	}
	dev = rte_gpu_allocate(name);
	if (dev == NULL) {
		rte_spinlock_unlock(&probe_lock);
		CUDA_LOG(ERR, "%s: gpudev refused a new device: %s", name,
			rte_strerror(rte_errno));
		ret = -rte_errno;
		goto teardown;
	}
	dev->device = rte_dev;
	dev->mpshared->info.context = (uint64_t)(uintptr_t)c->ctx;
	dev->mpshared->info.processor_count = (uint32_t)sm_count;
	dev->mpshared->info.total_memory = total_mem;
	dev->mpshared->info.page_size = GPU_CUDA_PAGE_SIZE;
	dev->mpshared->info.numa_node = numa_node;
	dev->process_private = c;
	ret = mp_publish(name, c->bus_id, da);
	if (ret != 0)
		CUDA_LOG(WARNING, "%s: not recorded for secondary processes, which will not see it: %s",
			name, strerror(-ret));
	gpu_cuda_set_ops(dev);
	rte_gpu_complete_new(dev);
	rte_spinlock_unlock(&probe_lock);

	CUDA_LOG(INFO, "%s: %s (PCI %s, sm_%d%d, %d SMs, %zu MiB, NUMA %d) as gpudev %d",
		name, model, c->bus_id, c->caps.cc_major, c->caps.cc_minor,
		sm_count, total_mem >> 20, numa_node, dev->mpshared->info.dev_id);
	CUDA_LOG(INFO, "%s: GPUDirect RDMA %s, flush %s%s, write ordering %s (%d), dma-buf %s; rte_gpu_wmb %s",
		name, c->caps.rdma_supported ? "supported" : "NOT supported",
		(c->caps.rdma_flush_options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) ?
			"host" : "",
		(c->caps.rdma_flush_options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS) ?
			"+memops" : (c->caps.rdma_flush_options == 0 ? "none" : ""),
		ordering_name(c->caps.rdma_writes_ordering),
		c->caps.rdma_writes_ordering,
		c->caps.dmabuf_supported ? "supported" : "not supported",
		c->flush_on_wmb ? "flushes RDMA writes" :
		c->caps.rdma_writes_ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER ?
			"is a CPU barrier (the GPU orders RDMA writes for its kernels)" :
			"returns -ENOTSUP (RDMA writes neither ordered nor flushable)");
	if (c->use_gdrcopy)
		gpu_cuda_gdr_probe(); /* logs whether cpu_map will work */
	return 0;

teardown:
	if (gpu_cuda_dev_teardown(c) != 0)
		CUDA_LOG(ERR, "%s: context teardown failed", name);
release_ctx:
	if (GPU_CUDA_CALL(name, cuDevicePrimaryCtxRelease, d) != 0)
		CUDA_LOG(ERR, "%s: primary context reference leaked", name);
free_ctx:
	free(c);
	return ret;
}

int
rte_pmd_gpu_cuda_child_attach(int16_t dev_id)
{
	struct gpu_cuda_ctx *parent_ctx, *c;
	struct rte_gpu_info info, pinfo;
	struct rte_gpu *parent, *child;
	CUdevice d;
	int ret;

	if (rte_gpu_info_get(dev_id, &info) != 0) {
		CUDA_LOG(ERR, "child attach: no GPU %d", dev_id);
		return -ENODEV;
	}
	child = rte_gpu_get_by_name(info.name);
	if (info.parent == RTE_GPU_ID_NONE || child == NULL ||
			rte_gpu_info_get(info.parent, &pinfo) != 0 ||
			(parent = rte_gpu_get_by_name(pinfo.name)) == NULL) {
		CUDA_LOG(ERR, "child attach: GPU %d (%s) is not a child device",
			dev_id, info.name);
		return -EINVAL;
	}
	if (parent->ops.dev_close != gpu_cuda_dev_close ||
			parent->process_private == NULL) {
		CUDA_LOG(ERR, "child attach: parent of %s is not a GPU of this driver",
			info.name);
		return -EINVAL;
	}
	if (child->process_private != NULL)
		return -EEXIST;
	parent_ctx = parent->process_private;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	/* The parent's GPU, capabilities and devargs; the rest its own. */
	c->cu_dev = parent_ctx->cu_dev;
	c->use_gdrcopy = parent_ctx->use_gdrcopy;
	c->reg_cache_on = parent_ctx->reg_cache_on;
	c->reg_cache_max = parent_ctx->reg_cache_max;
	c->flush_on_wmb = parent_ctx->flush_on_wmb;
	c->caps = parent_ctx->caps;
	memcpy(c->bus_id, parent_ctx->bus_id, sizeof(c->bus_id));
	snprintf(c->name, sizeof(c->name), "%s", info.name);
	c->ctx = (CUcontext)(uintptr_t)info.context;
	c->primary = false;
	/* The context must be a live context of the parent's GPU. */
	ret = c->ctx == NULL ? -EINVAL : gpu_cuda_ctx_enter(c, info.name);
	if (ret == 0) {
		ret = GPU_CUDA_CALL(info.name, cuCtxGetDevice, &d);
		if (gpu_cuda_ctx_leave(info.name) != 0 && ret == 0)
			ret = -EIO;
		if (ret == 0 && d != parent_ctx->cu_dev)
			ret = -EXDEV;
	}
	if (ret != 0) {
		CUDA_LOG(ERR, "child %s: context %#" PRIx64 " is not a usable CUDA context of %s (%s)",
			info.name, info.context, pinfo.name, strerror(-ret));
		free(c);
		return ret;
	}
	ret = gpu_cuda_dev_setup(c);
	if (ret != 0) {
		free(c);
		return ret;
	}
	child->device = parent->device;
	child->mpshared->info.processor_count = pinfo.processor_count;
	child->mpshared->info.total_memory = pinfo.total_memory;
	child->mpshared->info.page_size = pinfo.page_size;
	child->mpshared->info.numa_node = pinfo.numa_node;
	child->process_private = c;
	gpu_cuda_set_ops(child);
	CUDA_LOG(INFO, "child %s: context %#" PRIx64 " on %s", info.name,
		info.context, pinfo.name);
	return 0;
}

const char *
rte_pmd_gpu_cuda_version(void)
{
	return "librte_gpu_cuda " GPU_CUDA_VERSION " (DPDK " GPU_CUDA_DPDK_VERSION ")";
}

static int
gpu_remove(const char *name)
{
	struct rte_gpu *dev = rte_gpu_get_by_name(name);

	if (dev == NULL)
		return -ENODEV;
	return rte_gpu_close(dev->mpshared->info.dev_id);
}

/* ---- PCI bus ------------------------------------------------------------ */

static int
pci_probe(struct rte_pci_driver *drv, struct rte_pci_device *pci_dev)
{
	const char *name = pci_dev->device.name;
	struct gpu_cuda_devargs da;
	CUdevice d;
	int ret;

	RTE_SET_USED(drv);
	if (gpu_cuda_api_get() == NULL)
		return 1; /* not for us without CUDA; the reason is logged */
	if (rte_eal_process_type() == RTE_PROC_SECONDARY) {
		ret = secondary_device(name, &d, &da);
		return ret != 0 ? ret : gpu_create(&pci_dev->device, name, d,
			&da, (int16_t)pci_dev->device.numa_node);
	}
	ret = gpu_cuda_devargs_parse(name, pci_dev->device.devargs != NULL ?
			pci_dev->device.devargs->args : NULL, false, &da);
	if (ret != 0)
		return ret;
	ret = GPU_CUDA_CALL(name, cuDeviceGetByPCIBusId, &d, name);
	if (ret != 0) {
		CUDA_LOG(ERR, "%s: NVIDIA PCI device unknown to CUDA (hidden by CUDA_VISIBLE_DEVICES, or not a CUDA GPU)",
			name);
		return 1;
	}
	return gpu_create(&pci_dev->device, name, d, &da,
			(int16_t)pci_dev->device.numa_node);
}

static int
pci_remove(struct rte_pci_device *pci_dev)
{
	return gpu_remove(pci_dev->device.name);
}

static const struct rte_pci_id pci_ids[] = {
	{
		.class_id = PCI_CLASS_DISPLAY_3D,
		.vendor_id = NVIDIA_VENDOR_ID,
		.device_id = RTE_PCI_ANY_ID,
		.subsystem_vendor_id = RTE_PCI_ANY_ID,
		.subsystem_device_id = RTE_PCI_ANY_ID,
	},
	{
		.class_id = PCI_CLASS_DISPLAY_VGA,
		.vendor_id = NVIDIA_VENDOR_ID,
		.device_id = RTE_PCI_ANY_ID,
		.subsystem_vendor_id = RTE_PCI_ANY_ID,
		.subsystem_device_id = RTE_PCI_ANY_ID,
	},
	{ .vendor_id = 0 },
};

/* No RTE_PCI_DRV_NEED_MAPPING: the nvidia kernel driver keeps the device;
 * this driver talks to it through CUDA only. */
static struct rte_pci_driver pci_driver = {
	.id_table = pci_ids,
	.probe = pci_probe,
	.remove = pci_remove,
};

RTE_PMD_REGISTER_PCI(gpu_cuda, pci_driver);
RTE_PMD_REGISTER_PCI_TABLE(gpu_cuda, pci_ids);
#define GPU_CUDA_KMOD "* nvidia"
RTE_PMD_REGISTER_KMOD_DEP(gpu_cuda, GPU_CUDA_KMOD);

/* ---- virtual device ----------------------------------------------------- */

static int
vdev_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct gpu_cuda_devargs da;
	CUdevice d;
	int count = 0;
	int ret;

	if (gpu_cuda_api_get() == NULL) {
		CUDA_LOG(ERR, "%s: CUDA is not usable (see above): no GPU", name);
		return -ENODEV;
	}
	if (rte_eal_process_type() == RTE_PROC_SECONDARY) {
		/* The vdev bus gives a secondary the name, not the devargs. */
		ret = secondary_device(name, &d, &da);
		if (ret > 0)
			return -ENODEV;
		return ret != 0 ? ret : gpu_create(&vdev->device, name, d, &da, -1);
	}
	ret = gpu_cuda_devargs_parse(name, rte_vdev_device_args(vdev), true, &da);
	if (ret != 0)
		return ret;
	if (da.ordinal >= 0) {
		ret = GPU_CUDA_CALL(name, cuDeviceGetCount, &count);
		if (ret != 0)
			return ret;
		if (da.ordinal >= count) {
			CUDA_LOG(ERR, "%s: devarg %s=%d but CUDA sees %d GPU(s)",
				name, GPU_CUDA_DEVARG_DEV, da.ordinal, count);
			return -ENODEV;
		}
		ret = GPU_CUDA_CALL(name, cuDeviceGet, &d, da.ordinal);
	} else {
		ret = GPU_CUDA_CALL(name, cuDeviceGetByPCIBusId, &d, da.bus_id);
		if (ret != 0)
			CUDA_LOG(ERR, "%s: devarg %s=%s: no CUDA GPU at that PCI address",
				name, GPU_CUDA_DEVARG_DEV, da.bus_id);
	}
	if (ret != 0)
		return ret;
	return gpu_create(&vdev->device, name, d, &da, -1);
}

static int
vdev_remove(struct rte_vdev_device *vdev)
{
	return gpu_remove(rte_vdev_device_name(vdev));
}

static struct rte_vdev_driver vdev_driver = {
	.probe = vdev_probe,
	.remove = vdev_remove,
};

GPU_COMPAT_PMD_REGISTER_VDEV_AFTER_PCI(gpu_cuda, vdev_driver);
#define GPU_CUDA_PARAMS \
	GPU_CUDA_DEVARG_DEV "=<CUDA ordinal|PCI address> " \
	GPU_CUDA_DEVARG_GDRCOPY "=<0|1> " \
	GPU_CUDA_DEVARG_REG_CACHE "=<0|1> " \
	GPU_CUDA_DEVARG_REG_CACHE_MAX "=<bytes[K|M|G]>"
RTE_PMD_REGISTER_PARAM_STRING(gpu_cuda, GPU_CUDA_PARAMS);
/* The PCI table as pmdinfo lists it: vendor, device and subsystem IDs.
 * Its two rows differ only in the class code (VGA or 3D controller),
 * which pmdinfo's format leaves out, so they are one row here. */
_Static_assert(NVIDIA_VENDOR_ID == 4318, "the PCI IDs below name 0x10de");
GPU_PMD_INFO(gpu_cuda, GPU_CUDA_PARAMS, GPU_CUDA_KMOD,
	"[[4318, 65535, 65535, 65535]]");
