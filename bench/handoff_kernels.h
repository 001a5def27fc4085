/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef BENCH_HANDOFF_KERNELS_H
#define BENCH_HANDOFF_KERNELS_H

/*
 * C view of the CUDA side of bench-handoff. Every function returns 0 or a
 * cudaError_t value (gpucuda_strerror() names it). The handoff runs through
 * the ring library (lib/gpucomm): its layout mirror, its lcore side and
 * its persistent kernel, with the per-item body here (a byte sum of every
 * packet), so that the benchmark measures the ring that ships.
 */

#include <stddef.h>
#include <stdint.h>

#include "gpucomm_kernel.h"
#include "gpucuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per worker block, a warp per packet: a 32-packet burst is one
 * packet per warp. */
#define HK_THREADS 1024

enum hk_state {
	HK_STATE_IDLE = 0,
	HK_STATE_OK = 1,
};

/* Written by the per-item body before the item is DONE, one per round:
 * in GPU memory (persistent kernel), in mapped host memory (launch). */
struct hk_report {
	uint64_t checksum;	/* sum of every packet byte */
	uint64_t round;		/* which handoff this was (0, 1, ...) */
	uint32_t num_pkts;
	uint32_t state;		/* enum hk_state */
	/* GPU clock (%globaltimer, ns) at: the dispatcher seeing READY (0
	 * launched per burst), the worker holding the count and the
	 * descriptors, the worker about to store DONE. Where the round's time
	 * goes on the GPU. */
	uint64_t t_seen;
	uint64_t t_loaded;
	uint64_t t_done;
	/* 1: the count and descriptors were loaded while polling for READY
	 * (lap tags), none after it. */
	uint32_t prefetched;
	uint32_t reserved;
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
};

/* True for errors that mean "no usable GPU/driver here" (a skip). */
int hk_error_is_no_gpu(int err);

/* Selects the CUDA device at PCI address pci (or the only one) and fills
 * gi. */
int hk_device_init(const char *pci, struct hk_gpu_info *gi);

/*
 * The ring library's persistent kernel (kp from gpucomm_kernel_setup,
 * one ring) with the byte-sum body: for each item it loads the count and
 * up to `burst` descriptors in one round trip, sums every byte of every
 * packet, and stores the round's report in GPU memory (reports[seq],
 * seq < n_rounds) before the skeleton releases DONE. kp->bpq is lowered
 * to what fits.
 */
struct hk_ring;

int hk_ring_start(struct gpucomm_kparams *kp, uint32_t burst,
		uint64_t n_rounds, struct hk_ring **r);
/* After the quit flag: waits up to timeout_ms for the kernel to end, copies
 * the reports of rounds 0 .. n - 1 into reports (if not NULL) and releases
 * r. cudaErrorNotReady when it still runs: then nothing is released (it
 * may still read the list and the packets). */
int hk_ring_finish(struct hk_ring *r, struct hk_report *reports, uint64_t n,
		uint32_t timeout_ms);
/* cudaErrorNotReady, the value hk_ring_finish() returns for a kernel that
 * did not quit. */
int hk_error_not_ready(void);

/* Launch-per-burst baseline: the same body in the ring library's item
 * kernel, one launch + stream sync per burst. */
struct hk_launcher;

int hk_launcher_create(struct hk_launcher **l);
/* The dispatch state of kp set (gpucomm_cuda_state_init) before the
 * first hk_launch_item with it. */
int hk_launcher_prepare(struct hk_launcher *l, const struct gpucomm_kparams *kp);
/* Item idx of ring 0 (published READY, sequence number seq) summed by one
 * kernel launch, waited for; the report's checksum in *checksum. */
int hk_launch_item(struct hk_launcher *l, const struct gpucomm_kparams *kp,
		uint32_t idx, uint64_t seq, uint32_t burst, uint64_t *checksum);
/* An empty kernel, then the stream sync. */
int hk_launch_empty(struct hk_launcher *l);
void hk_launcher_destroy(struct hk_launcher *l);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_HANDOFF_KERNELS_H */
