/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --gpus auto|all|LIST: which gpudev GPU serves each queue of a port,
 * shared by the programs so that every one reads the option alike.
 *
 * LIST is a comma-separated list of items:
 *   G          a gpudev id; the plain items, in order, form a cycle:
 *              queue q gets the (q mod n)th ("0,1": even queues on GPU 0)
 *   qQ=G       queue Q of every port
 *   pP=G       every queue of port P
 *   pP:qQ=G    queue Q of port P
 * The most specific item naming a queue wins (pP:qQ, then qQ, then pP);
 * a queue no item names follows the cycle, or auto without one.
 *
 * auto gives a port's queues the GPU closest to it: one sharing a PCI
 * bridge below the host bridge with it (the same PCIe switch; the
 * deepest shared bridge wins), else one on its NUMA node, else the
 * lowest gpudev id; a virtual port (no PCI device) gets the lowest id.
 * all deals a port's queues round robin over every GPU.
 */
#ifndef GPUAPP_GPUS_H
#define GPUAPP_GPUS_H

#include <stddef.h>
#include <stdint.h>

#define GPUAPP_GPUS_MAX_ITEMS 64
#define GPUAPP_GPUS_MAX 32

enum gpuapp_gpus_mode {
	GPUAPP_GPUS_AUTO,
	GPUAPP_GPUS_ALL,
	GPUAPP_GPUS_LIST,
};

struct gpuapp_gpus_rule {
	int32_t port;	/* -1: every port */
	int32_t queue;	/* -1: every queue */
	int16_t gpu;
};

struct gpuapp_gpus {
	enum gpuapp_gpus_mode mode;
	unsigned int n_cycle, n_rules;
	int16_t cycle[GPUAPP_GPUS_MAX_ITEMS];
	struct gpuapp_gpus_rule rules[GPUAPP_GPUS_MAX_ITEMS];
};

/* The GPUs a mapping chooses from: gpudev ids, ascending, and where each
 * sits (PCI address, or "" for none; NUMA node, or -1). */
struct gpuapp_gpus_topo {
	unsigned int n;
	struct {
		int16_t id;
		int numa;
		char pci[64];
	} gpu[GPUAPP_GPUS_MAX];
};

/* --gpus's value into g: 0, or -EINVAL with err saying what is wrong. */
int gpuapp_gpus_parse(const char *s, struct gpuapp_gpus *g, char *err,
		size_t errlen);

/* Every top-level gpudev device into t: 0 (none is not an error). */
int gpuapp_gpus_topo_read(struct gpuapp_gpus_topo *t);

/*
 * The GPU of each of queues 0 .. nq - 1 of port into gpu[]: the port at
 * PCI address port_pci (NULL or "": virtual) on NUMA node port_numa (-1:
 * unknown), sysfs read below sysfs ("/sys"; tests give a tree of their
 * own). 0; -ENODEV when t holds no GPU; -EINVAL when the list names a
 * GPU not in t or a queue beyond nq; err says which.
 */
int gpuapp_gpus_resolve(const struct gpuapp_gpus *g,
		const struct gpuapp_gpus_topo *t, const char *sysfs, uint16_t port,
		const char *port_pci, int port_numa, uint16_t nq, int16_t *gpu,
		char *err, size_t errlen);

/* The same for an ethdev port, its PCI address and NUMA node read from
 * DPDK, over the GPUs gpudev probed. */
int gpuapp_gpus_map_port(const struct gpuapp_gpus *g, const char *sysfs,
		uint16_t port, uint16_t nq, int16_t *gpu, char *err,
		size_t errlen);

#endif /* GPUAPP_GPUS_H */
