/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL and mbuf pools for the host tests that need real mempools: no
 * hugepages, no devices, one lcore.
 */
#ifndef GPURX_TEST_EAL_H
#define GPURX_TEST_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

/* 0, or -1 after saying why. name: the file prefix's stem. */
static inline int
test_eal_init(char *argv0, const char *name)
{
	static char prefix[64];
	/* Its own file prefix: the plain and the sanitized build may run at
	 * the same time. */
	char *eal[] = { argv0, "--no-huge", "-m", "256", "--no-pci",
		"--no-shconf", "--no-telemetry", "-l", "0",
		"--log-level", "lib.eal:error", "--file-prefix", prefix, NULL };

	snprintf(prefix, sizeof(prefix), "%s-%d", name, (int)getpid());
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* n mbufs, no per-lcore cache: what can be allocated is exactly what
 * came back. */
static inline struct rte_mempool *
test_pool_create(const char *name, unsigned int n)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);

	if (mp == NULL)
		fprintf(stderr, "rte_pktmbuf_pool_create(%s): %s\n", name,
			rte_strerror(rte_errno));
	return mp;
}

#endif /* GPURX_TEST_EAL_H */
