/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plugin's self-description for dpdk-pmdinfo.py: a string
 * "PMD_INFO_STRING= {json}" in .rodata naming the driver, its devargs,
 * the kernel modules it needs and the PCI IDs it binds. DPDK's own build
 * writes it with buildtools/pmdinfogen from the RTE_PMD_REGISTER_*
 * markers, a step an out-of-tree driver does not get, so each driver of
 * this tree states it with the same macros it registers with.
 *
 * PARAMS and KMOD are string literals without '"' or '\\' (they become
 * JSON strings as they are); PCI_IDS a JSON array of
 * [vendor, device, subsystem vendor, subsystem device], 65535 for any.
 */
#ifndef GPU_DRIVERS_PMD_INFO_H
#define GPU_DRIVERS_PMD_INFO_H

#include <rte_common.h>

#define GPU_PMD_INFO(name, params, kmod, pci_ids) \
	static const char name ## _pmd_info[] __rte_used = \
		"PMD_INFO_STRING= {\"name\": \"" RTE_STR(name) "\", " \
		"\"params\": \"" params "\", \"kmod\": \"" kmod "\", " \
		"\"pci_ids\": " pci_ids "}"

#endif /* GPU_DRIVERS_PMD_INFO_H */
