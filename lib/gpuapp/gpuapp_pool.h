/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_POOL_H
#define GPUAPP_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

/*
 * Mbuf pools for GPU work, shared by dpdk-gpu-rx and dpdk-gpu-tx: a pool
 * whose data buffers are GPU memory (the port DMAs them), and the
 * registration of a host pool's memory with the GPU (host-mapped mode).
 */

/* Devices a pool is mapped for besides its first port's, at most. */
#define GPUAPP_EXT_POOL_MAX_MORE 15

struct gpuapp_ext_pool {
	struct rte_mempool *mp;
	void *mem;		/* GPU memory behind the data buffers */
	size_t len;
	int16_t gpu_id;
	struct rte_device *dev;	/* the port's device, mapped for DMA */
	uint8_t registered;	/* rte_extmem_register done */
	uint8_t mapped;		/* rte_dev_dma_map done */
	/* Other ports' devices, mapped too (gpuapp_ext_pool_map_port()). */
	uint8_t n_more;
	struct rte_device *more[GPUAPP_EXT_POOL_MAX_MORE];
};

/*
 * n mbufs of data_room bytes in GPU memory of gpu_id: allocated with
 * rte_gpu_mem_alloc, registered with EAL as external memory, mapped for
 * port's DMA, and an extbuf pool over it. Returns 0; 1 when the port
 * refused the DMA mapping (rte_errno holds why), everything released, so
 * the caller may fall back to host memory; -errno on any other failure,
 * released too. err says what.
 */
int gpuapp_ext_pool_create(struct gpuapp_ext_pool *p, const char *name,
		int16_t gpu_id, uint16_t port, uint32_t n, unsigned int cache,
		uint16_t data_room, int socket, char *err, size_t errlen);
/*
 * The pool's memory mapped for the DMA of another port too, so that
 * ports share one pool of GPU memory (a port of a device already mapped:
 * nothing to do). 0; 1 when the port refused (rte_errno holds why, the
 * pool as it was); -ENOSPC past GPUAPP_EXT_POOL_MAX_MORE devices, or
 * -errno. err says what.
 */
int gpuapp_ext_pool_map_port(struct gpuapp_ext_pool *p, uint16_t port,
		char *err, size_t errlen);

/*
 * Undo the DMA mapping for the port(s), once stopped and before they are
 * closed: a closed port's device no longer knows the mapping (net_gpudma
 * answers ENODEV; mlx5 has dropped its memory regions). Safe to call
 * twice; gpuapp_ext_pool_free() does it if it was not done.
 */
void gpuapp_ext_pool_unmap(struct gpuapp_ext_pool *p);

/* Pool first (its buffers are the memory), then unmap, unregister, free. */
void gpuapp_ext_pool_free(struct gpuapp_ext_pool *p);

/*
 * Register every memory chunk of host pool mp with gpu_id
 * (rte_gpu_mem_register), calling cb for each one registered so the
 * caller can track and later unregister it; cb returning nonzero stops
 * (that chunk is then cb's to release, having said why). 0, or -1 with
 * err set; every chunk registered before a failure was passed to cb.
 */
int gpuapp_pool_register(int16_t gpu_id, struct rte_mempool *mp,
		int (*cb)(void *opaque, void *addr, size_t len), void *opaque,
		char *err, size_t errlen);

#endif /* GPUAPP_POOL_H */
