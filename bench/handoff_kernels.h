/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_HANDOFF_KERNELS_H
#define BENCH_HANDOFF_KERNELS_H

/*
 * C view of the CUDA side of bench-handoff. Every function returns 0 or a
 * cudaError_t value (hk_strerror() names it). The kernels are built by
 * nvcc without DPDK headers: the comm list structures are mirrored here
 * and checked against DPDK's with static assertions in bench_handoff.c.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Mirror of struct rte_gpu_comm_pkt. */
struct hk_comm_pkt {
	uintptr_t addr;
	size_t size;
};

/* Mirror of struct rte_gpu_comm_list. */
struct hk_comm_item {
	uint16_t dev_id;
	void **mbufs;
	struct hk_comm_pkt *pkt_list;
	uint32_t num_pkts;
	int *status_h;
	int *status_d;
};

/* enum rte_gpu_comm_list_status */
#define HK_FREE 0
#define HK_READY 1
#define HK_DONE 2
#define HK_ERROR 3	/* also: "stop" for the persistent kernel */

/* Items of the comm list the persistent kernel cycles through. */
#define HK_MAX_ITEMS 8
/* Threads per block; one warp per packet: a 32-packet burst fits one
 * block, which then needs no hand-over to other blocks. */
#define HK_THREADS 1024
#define HK_MAX_BLOCKS 1024

enum hk_state {
	HK_STATE_IDLE = 0,
	HK_STATE_OK = 1,
	HK_STATE_TIMEOUT = 2,
};

/* Written by the persistent kernel, in GPU memory, before it sets an item
 * DONE; one per round. */
struct hk_report {
	uint64_t checksum;	/* sum of every packet byte */
	uint64_t round;		/* which handoff this was (0, 1, ...) */
	uint32_t num_pkts;
	uint32_t state;		/* enum hk_state */
	/* GPU clock (%globaltimer, ns) at: block 0 seeing READY, block 0
	 * holding the count and its descriptors, the last block about to
	 * store DONE. Where the round's time goes on the GPU. */
	uint64_t t_seen;
	uint64_t t_loaded;
	uint64_t t_done;
};

struct hk_gpu_info {
	int cuda_dev;
	char name[256];
	int sm_count;
	int cc_major;
	int cc_minor;
	int driver_version;
	int runtime_version;
	int rdma_flush_options;	/* cudaDevAttrGPUDirectRDMAFlushWritesOptions */
	int rdma_writes_ordering;	/* cudaDevAttrGPUDirectRDMAWritesOrdering */
	int spin_sched;		/* cudaDeviceScheduleSpin was accepted */
	int max_blocks;		/* co-resident blocks of the persistent kernel */
};

const char *hk_strerror(int err);
/* True for errors that mean "no usable GPU/driver here" (a skip). */
int hk_error_is_no_gpu(int err);

/* Selects the CUDA device at PCI address pci (or the only one) and fills
 * gi. */
int hk_device_init(const char *pci, struct hk_gpu_info *gi);

/* Blocks for a burst of n packets (one warp per packet, at most what
 * can be co-resident). */
uint32_t hk_blocks_for(const struct hk_gpu_info *gi, uint32_t n);

/* Copies n bytes from host memory to GPU memory (synchronous): packet
 * data the CPU cannot write directly without GDRCopy. */
int hk_copy_to_device(void *dst, const void *src, size_t n);

/*
 * Persistent handoff kernel: for round = 0, 1, ... it waits for item
 * round % n_items to be READY, sums every byte of its packets (the blocks
 * needed share the packets), stores the round's report in GPU memory,
 * then sets the item DONE. It ends when it finds an item in HK_ERROR
 * state, or after timeout_ns without any READY item.
 */
struct hk_persist;

int hk_persist_start(struct hk_comm_item *items, uint32_t n_items,
		uint32_t blocks, uint64_t timeout_ns, uint64_t n_rounds,
		struct hk_persist **p);
/* True once the kernel gave up waiting for a READY item. */
int hk_persist_timed_out(const struct hk_persist *p);
/* Waits for the kernel (tell it to stop first), copies the reports of
 * rounds 0 .. n - 1 into reports (if not NULL) and releases p. */
int hk_persist_finish(struct hk_persist *p, struct hk_report *reports,
		uint64_t n);

/*
 * Ping-pong of one 32-bit flag in CPU-visible memory (registered host
 * memory, or GPU memory the CPU maps): the CPU writes 2k+1, the kernel
 * answers 2k+2. HK_PP_QUIT ends it.
 */
#define HK_PP_QUIT 0xFFFFFFFFu

struct hk_pingpong;

int hk_pingpong_start(uint32_t *flag, uint64_t timeout_ns,
		struct hk_pingpong **pp);
/* Waits for the kernel (write HK_PP_QUIT first); *timed_out set if it
 * gave up waiting. */
int hk_pingpong_finish(struct hk_pingpong *pp, int *timed_out);

/* Launch-per-burst baseline: one kernel launch + stream sync per burst. */
struct hk_launcher;

int hk_launcher_create(struct hk_launcher **l);
/* Sums every byte of n packets with `blocks` blocks; waits for the end. */
int hk_launch_burst(struct hk_launcher *l, const struct hk_comm_pkt *pkts,
		uint32_t n, uint32_t blocks, uint64_t *checksum);
/* An empty kernel, then the stream sync. */
int hk_launch_empty(struct hk_launcher *l);
void hk_launcher_destroy(struct hk_launcher *l);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_HANDOFF_KERNELS_H */
