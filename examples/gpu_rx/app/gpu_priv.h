/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU modes of dpdk-gpu-rx, shared by their files: gpu_mem.c (the GPU
 * and every buffer the app takes for it, through gpudev), gpu_setup.c
 * (rings, kernel start and stop, teardown), gpu_path.c (the RX lcores'
 * hot loop) and gpu_watch.c (the main lcore's watch, item statistics).
 */
#ifndef GPURX_APP_GPU_PRIV_H
#define GPURX_APP_GPU_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>

#include "app.h"
#include "gpucomm_ring.h"
#include "gpu_guard.h"
#include "gpu_kernels.h"
#include "gpucuda.h"
#include "gpuapp_pool.h"
#include "liveness.h"

#define ITEM_BYTES_MIN (256u * 1024)
_Static_assert(ITEM_BYTES_MIN >= GPURX_SCRATCH_BYTES,
	"an empty ring item holds the longest packet");
#define GPU_PAGE 65536u
#define DRAIN_TIMEOUT_S 5
#define KERNEL_QUIT_TIMEOUT_MS 1000
/*
 * Queues up to which an item's copy (--mem gpu: bytes gathered into GPU
 * memory) is followed by a READY the stream stores rather than waited
 * for. Measured on an H100 with the copies --mem staged made then (64 B,
 * bench/ab-capacity.sh): one RX lcore went from 9.9 to 16.2 Mpps, but 4
 * lcores from 30.7 to 19.2 and 8 from 16.0 to 5.2: every lcore then makes
 * CUDA calls as fast as it receives, and their calls, which the driver
 * serializes per context, crowd each other out; waiting paces them.
 */
#define GPURX_STREAM_READY_QUEUES_MAX 2

/* What a buffer in the registry is, so it is released the right way. */
enum gpurx_buf_kind {
	GPURX_BUF_PINNED,	/* host pages registered for the GPU */
	GPURX_BUF_DEVICE,	/* GPU memory */
	GPURX_BUF_CHUNK,	/* a mempool chunk registered (host-mapped) */
};

struct gpurx_gpu_buf {
	void *ptr;
	size_t len;
	enum gpurx_buf_kind kind;
};

/* The mbufs an item holds are in its comm list entry (mbufs[0..n); none
 * with --mem staged: item_held() in gpu_path.c). */
struct gpu_item {
	uint16_t n;
	uint64_t t_ready;		/* TSC when published READY */
	uint64_t bytes;			/* wire bytes of its packets */
	struct rte_mempool *plain_pool;	/* see gpurx_mbufs_free() */
};

/* Plain mbufs an RX lcore may hold back from its mempool cache
 * (gpu_path.c: mbufs_release): two items of the largest burst, or a
 * cache's whole flush threshold and more. */
#define GPURX_STASH_MBUFS (2u * RTE_MEMPOOL_CACHE_MAX_SIZE)

/* Item latency (READY stored -> DONE seen by the lcore) histogram: 1 us
 * buckets, the last one for everything longer. */
#define LAT_BUCKETS 4096

/* One per RX lcore, on its own cache lines: the ring's head, tail and
 * counts change on every item, and sharing a line with a neighbour
 * queue's would bounce it between lcores. */
struct gpu_queue {
	struct rte_gpu_comm_list *list;
	struct gpu_item *items;
	uint8_t *host_buf;	/* pinned: chained bounce, or staging */
	uint8_t *dev_buf;	/* device: staged copies, gpu-mode chains */
	void *stream;
	struct gpucomm_ring ring;	/* over list (lib/gpucomm) */
	uint32_t collected;	/* items, for the busy-share refresh */
	/* Collected plain mbufs of stash_pool not yet in its cache: a
	 * stack of GPURX_STASH_MBUFS (mbufs_release says why). */
	uint32_t stash_n;
	struct rte_mempool *stash_pool;
	struct rte_mbuf **stash;
	uint64_t *lat_hist;	/* [LAT_BUCKETS] */
	struct gpurx_qlive live;	/* progress, for the main lcore's watch */
} __rte_cache_aligned;

/* One GPU of the run and what it serves: its rings are numbered 0 .. nq
 * - 1 on it (the kernel's queues), ring r being RX queue queues[r]. */
struct gpurx_gpu {
	int16_t id;		/* gpudev */
	uint16_t idx;		/* in gpurx_app.gpus[] */
	int cuda_dev;
	char name[64];		/* PCI address, for the CUDA runtime */
	uint16_t nq;
	uint16_t queues[GPURX_MAX_QUEUES];
	struct gpurx_gq *gq;
	struct gpu_queue q[GPURX_MAX_QUEUES];
	void *kstream;
	int kernel_running;
	/* The ring library's kernel state (quit flag, dispatch state in GPU
	 * memory, its parameters ck.kp) and the app's parameters. */
	struct gpucomm_kernel ck;
	struct gpurx_kparams kp;
	void *d_prog;
	void *d_ft;
	void *d_flow_order;	/* flow export: gpurx_kparams.flow_order */
	/* Every buffer taken for the GPU (gpu_mem.c), released in reverse. */
	struct gpurx_gpu_buf *bufs;
	unsigned int n_bufs, bufs_cap;
	size_t pinned_bytes, dev_bytes;
	int chunks_failed;
	/* What the kernel may read in place; other mbufs are copied. */
	struct gpurx_readable rd;
	/* Main lcore's watch of the kernel and the queues; dead: the kernel
	 * ended with an error (RX lcores stop waiting for items); failed:
	 * the watch stopped the run. */
	struct gpurx_watch watch;
	volatile int dead;
	int watch_failed;
	/* Its copy of the flow table, back from the GPU (gpurx_app.ft for
	 * the first GPU; the others' are merged into that one after the
	 * flow export's last records); ft_back: the copy was made. */
	struct gpurx_flow_table *ft;
	int ft_back;
	/* --mem gpu: the pool (lib/gpuapp), its memory's span here */
	struct gpuapp_ext_pool extp;
	void *ext;
	size_t ext_len;
};

/* Prints what failed with the CUDA runtime's name of err; returns -1. */
int gpurx_gpu_cuda_fail(const char *what, int err);

/* The GPU of RX queue q, and q's ring on it. */
static inline struct gpurx_gpu *
gpurx_queue_gpu(const struct gpurx_app *a, uint16_t q)
{
	return a->gpus[a->q_gpu[q]];
}

/* Makes g the calling thread's current device for the CUDA runtime
 * (streams, copies and launches go to it). 0, or -1 after saying why. */
int gpurx_gpu_use(const struct gpurx_gpu *g);

/*
 * GPU g's buffers, all through gpudev (gpu_mem.c); each kept in g's
 * registry and released by gpurx_gpu_mem_release(), whatever happened
 * after. 0, or -1 after printing what could not be had.
 * *p: n bytes of zeroed host memory the GPU reads and writes at the same
 * address (rte_gpu_mem_register), counted as pinned.
 */
int gpurx_gpu_mem_pinned(struct gpurx_gpu *g, void *p, size_t n,
		const char *what);
/* *d: n bytes of GPU memory (rte_gpu_mem_alloc), counted as GPU memory. */
int gpurx_gpu_mem_device(struct gpurx_gpu *g, void *d, size_t n,
		const char *what);
/* *d: GPU memory holding a copy of src[0..n). */
int gpurx_gpu_mem_upload(struct gpurx_gpu *g, void *d, const void *src,
		size_t n, const char *what);
/* host-mapped: every chunk of the mbuf pools of g's queues registered
 * with g, so the kernel reads packets where the port wrote them. */
int gpurx_gpu_mem_register_pools(struct gpurx_app *a, struct gpurx_gpu *g);
/* One pool's chunks (--split: the header pool). */
int gpurx_gpu_mem_register_pool(struct gpurx_gpu *g, struct rte_mempool *mp);
/* Everything above, in reverse. */
void gpurx_gpu_mem_release(struct gpurx_gpu *g);
/* src's flows into dst (flow_merge.c): a key in both is one flow, its
 * sums added. */
void gpurx_flow_merge(struct gpurx_flow_table *dst,
		const struct gpurx_flow_table *src);
/* Every GPU's --mem gpu pool and its memory, and a->pools[] emptied of
 * them; nothing when there are none. */
void gpurx_gpu_release_pools(struct gpurx_app *a);

#endif /* GPURX_APP_GPU_PRIV_H */
