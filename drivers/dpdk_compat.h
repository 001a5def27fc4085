/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place that knows which DPDK release the tree is built against.
 * The drivers and programs build unchanged against DPDK 22.11, 23.11,
 * 24.11 and 25.07; where an API they use changed between those releases,
 * the code calls the gpu_compat_* name below instead of testing
 * RTE_VERSION itself (doc/gpu_cuda.md, "Supported DPDK versions").
 *
 * Differences found by building against each release:
 * - 23.11 removed rte_ctrl_thread_create() (pthread_t, void * return),
 *   for rte_thread_create_control() (rte_thread_t, uint32_t return).
 * - From 23.03 rte_pcapng_fdopen() no longer writes an interface block
 *   per port; the caller adds them with rte_pcapng_add_interface().
 * - 25.07's RTE_PMD_EXPORT_NAME() lost its __COUNTER__ suffix: a file can
 *   no longer register one driver name on two buses.
 * - 23.03 renamed telemetry's rte_tel_data_add_{dict,array}_u64 to _uint
 *   and deprecated the old names.
 */
#ifndef GPU_DPDK_COMPAT_H
#define GPU_DPDK_COMPAT_H

#include <pthread.h>

#include <rte_version.h>
#include <rte_lcore.h>
#include <rte_thread.h>

#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#define GPU_COMPAT_THREAD_CONTROL 1
#endif
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define GPU_COMPAT_PCAPNG_ADD_INTERFACE 1
#endif

/* Telemetry's unsigned values (include rte_telemetry.h to use them). */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define gpu_compat_tel_dict_uint rte_tel_data_add_dict_uint
#define gpu_compat_tel_array_uint rte_tel_data_add_array_uint
#else
#define gpu_compat_tel_dict_uint rte_tel_data_add_dict_u64
#define gpu_compat_tel_array_uint rte_tel_data_add_array_u64
#endif

/*
 * A control thread (on the CPUs of no lcore). Its function is declared
 * as
 *     static gpu_compat_thread_ret_t fn(void *arg)
 * and returns 0. Create returns 0 or a negative errno, join waits for it.
 */
#ifdef GPU_COMPAT_THREAD_CONTROL
typedef rte_thread_t gpu_compat_thread_t;
typedef uint32_t gpu_compat_thread_ret_t;

static inline int
gpu_compat_ctrl_thread_create(gpu_compat_thread_t *thread, const char *name,
		gpu_compat_thread_ret_t (*fn)(void *), void *arg)
{
	return rte_thread_create_control(thread, name, fn, arg);
}

static inline int
gpu_compat_thread_join(gpu_compat_thread_t thread)
{
	/* A positive errno, as pthread_join(). */
	return -rte_thread_join(thread, NULL);
}
#else
typedef pthread_t gpu_compat_thread_t;
typedef void *gpu_compat_thread_ret_t;

static inline int
gpu_compat_ctrl_thread_create(gpu_compat_thread_t *thread, const char *name,
		gpu_compat_thread_ret_t (*fn)(void *), void *arg)
{
	return rte_ctrl_thread_create(thread, name, NULL, fn, arg);
}

static inline int
gpu_compat_thread_join(gpu_compat_thread_t thread)
{
	return -pthread_join(thread, NULL);
}
#endif

/*
 * The vdev registration of a driver whose PCI registration in the same
 * file has the same name (the CUDA driver: gpu_cuda on both buses). From
 * 25.07 both macros would define one this_pmd_name<nm>; the vdev side then
 * registers as RTE_PMD_REGISTER_VDEV() does, without that marker, which
 * only DPDK's own pmdinfogen reads (drivers/pmd_info.h describes ours).
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 7, 0, 0)
#define GPU_COMPAT_PMD_REGISTER_VDEV_AFTER_PCI(nm, vdrv) \
	RTE_INIT(vdrvinitfn_ ## vdrv) \
	{ \
		(vdrv).driver.name = RTE_STR(nm); \
		rte_vdev_register(&(vdrv)); \
	}
#else
#define GPU_COMPAT_PMD_REGISTER_VDEV_AFTER_PCI(nm, vdrv) \
	RTE_PMD_REGISTER_VDEV(nm, vdrv)
#endif

/*
 * After rte_pcapng_fdopen(): one interface block per ethdev port, in port
 * order, with DPDK's default name and description, as 22.11's fdopen
 * wrote them itself (same bytes). Returns 0, or -1 with errno set by the
 * failed write. Only for files that include rte_pcapng.h.
 */
#ifdef _RTE_PCAPNG_H_
#include <rte_ethdev.h>

static inline int
gpu_compat_pcapng_add_ports(rte_pcapng_t *png)
{
#ifdef GPU_COMPAT_PCAPNG_ADD_INTERFACE
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port) {
		if (rte_pcapng_add_interface(png, port, NULL, NULL, NULL) < 0)
			return -1;
	}
#else
	RTE_SET_USED(png);
#endif
	return 0;
}
#endif

#endif /* GPU_DPDK_COMPAT_H */
