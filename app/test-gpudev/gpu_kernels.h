/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef TG_GPU_KERNELS_H
#define TG_GPU_KERNELS_H

/*
 * C view of the CUDA kernels. Every launcher returns 0 or a cudaError_t
 * value (gk_strerror() names it) and runs in the CUDA context current on
 * the calling thread, so a pushed child context is honoured.
 */

#include <stddef.h>
#include <stdint.h>

#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *gk_strerror(int err);

/* Clock cycles of the current device for a wall-clock duration. */
int gk_cycles_for_ms(unsigned int ms, uint64_t *cycles);

/* Write tg_pattern over buf (device or registered host memory), then wait. */
int gk_pattern_fill(void *buf, size_t len, uint64_t seed);

/* Count on the GPU the bytes of buf that differ from tg_pattern. */
int gk_pattern_check(const void *buf, size_t len, uint64_t seed,
		uint64_t *bad, uint64_t *first_bad);

/*
 * Flag probe: a kernel spins on *flag (CPU memory registered for the GPU)
 * until it reads `want`, records it, answers by storing `reply` in the
 * flag and ends. It gives up after timeout_cycles so a bug cannot hang.
 */
struct gk_flag_probe;

struct gk_flag_result {
	uint32_t started;
	uint32_t done;
	uint32_t timed_out;
	uint32_t seen;
};

int gk_flag_probe_start(uint32_t *flag, uint32_t want, uint32_t reply,
		uint64_t timeout_cycles, struct gk_flag_probe **probe);
/* Snapshot of what the kernel reported so far, without waiting. */
void gk_flag_probe_peek(const struct gk_flag_probe *probe,
		struct gk_flag_result *res);
/* Wait for the kernel, report, release the probe (even on error). */
int gk_flag_probe_finish(struct gk_flag_probe *probe,
		struct gk_flag_result *res);

/*
 * Mirror of struct rte_gpu_comm_list / rte_gpu_comm_pkt for the kernel,
 * which is not built against DPDK headers; the C side checks the layout
 * with static assertions (comm_layout.c).
 */
struct gk_comm_pkt {
	uintptr_t addr;
	size_t size;
};

struct gk_comm_item {
	uint16_t dev_id;
	void **mbufs;
	struct gk_comm_pkt *pkt_list;
	uint32_t num_pkts;
	int *status_h;
	int *status_d;
};

#define GK_COMM_FREE 0
#define GK_COMM_READY 1
#define GK_COMM_DONE 2

enum gk_item_state {
	GK_ITEM_PENDING = 0,
	GK_ITEM_DONE = 1,
	GK_ITEM_TIMEOUT = 2,
};

struct gk_item_report {
	uint64_t checksum;
	uint64_t bytes;
	uint32_t num_pkts;
	uint32_t state; /* enum gk_item_state */
};

/* Checksum of one packet byte, summed over a list item (order-free). */
static inline TG_HOST_DEVICE uint64_t
gk_checksum_term(uint32_t pkt_idx, uint64_t byte_idx, uint8_t byte)
{
	return ((uint64_t)byte + 1) *
		(((uint64_t)pkt_idx << 16) + byte_idx + 1);
}

/*
 * Persistent list walker: for each of n_items in order, waits for READY,
 * checksums the packets, stores the report then sets DONE.
 */
struct gk_list_walker;

int gk_list_walker_start(struct gk_comm_item *items, uint32_t n_items,
		uint64_t timeout_cycles, struct gk_list_walker **walker);
/* Reports live in mapped host memory the kernel updates as it goes. */
const volatile struct gk_item_report *
gk_list_walker_reports(const struct gk_list_walker *walker);
int gk_list_walker_finish(struct gk_list_walker *walker);

#ifdef __cplusplus
}
#endif

#endif /* TG_GPU_KERNELS_H */
