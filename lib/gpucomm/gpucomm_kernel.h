/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent kernel of the GPU communication ring as host C code and
 * nvcc both see it (no DPDK headers here): its parameters, the dispatch
 * state it keeps in GPU memory, how many worker blocks fit, and the C
 * entry points of the library's CUDA half. The kernel itself is a
 * template over the program's per-item code: gpucomm_persistent.cuh.
 *
 * Per ring (one per queue) the kernel runs a dispatcher warp, the only
 * reader of the ring's status words over PCIe, and bpq worker blocks;
 * worker j takes the ring's items j, j + bpq, j + 2 bpq, ... so that up to
 * bpq items are processed at once (each costs PCIe round trips whatever
 * its size), and the CPU still collects them in ring order.
 */
#ifndef GPUCOMM_KERNEL_H
#define GPUCOMM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "gpucomm_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rings one kernel serves (kernel parameter space holds their lists). */
#define GPUCOMM_MAX_RINGS 32
/* Worker blocks per ring. Measured with dpdk-gpu-rx on an H100 at 64 B
 * (git show 405aef3:doc/performance.md): 16 blocks each polling its own
 * item 11.6 Mpps, 64 such blocks 8.7 Mpps (the polls crowd out the packet
 * reads), one dispatcher + 64 workers 12.5 Mpps, 42 Mpps after the
 * host-line fixes. */
#define GPUCOMM_WORKERS_MAX 64
/* Dispatcher poll back-off: low latency when busy, little PCIe chatter
 * when idle. */
#define GPUCOMM_POLL_NS_MIN 32
#define GPUCOMM_POLL_NS_MAX 512
/* A slot's hand-over word once the kernel quits. */
#define GPUCOMM_SEQ_QUIT (~0ULL)

/*
 * Dispatch state in GPU memory, n = rings * items per ring words of each
 * array, slot q * items + i for item i of ring q. Set up by the
 * initialisation kernel (gpucomm_cuda_state_init) before the first launch.
 */
struct gpucomm_kstate {
	/* seq + 1 of the last item the dispatcher handed to the slot's
	 * worker (GPUCOMM_SEQ_QUIT: quit) */
	unsigned long long *ready_seq;
	/* seq + 1 of the last item of the slot a worker finished (DONE) */
	unsigned long long *done_seq;
	/* %globaltimer when the dispatcher saw the slot's current item READY */
	unsigned long long *ready_ns;
	/* Each item's packet list and status word (gpudev's pointers, fixed
	 * for the list's life), read here in GPU memory, not from the item in
	 * host memory: a round trip each on the item's critical path. */
	struct gpucomm_pkt **pkt_list;
	uint32_t **status;
};

/* Kernel parameters (passed by value: keep small). */
struct gpucomm_kparams {
	struct gpucomm_item *items[GPUCOMM_MAX_RINGS];	/* each ring's list */
	uint32_t n_rings;
	uint32_t n_items;	/* items per ring, every ring alike */
	uint32_t bpq;		/* worker blocks per ring */
	uint32_t poll_ns_min;	/* dispatcher back-off bounds */
	uint32_t poll_ns_max;
	/* Non-zero: every ring tags its entries (GPUCOMM_RING_TAGS), and
	 * the workers of a body that asks for it load an item's first
	 * entries while they poll (gpucomm_persistent.cuh). */
	uint32_t lap_tags;
	const uint32_t *quit;	/* rte_gpu_comm_flag memory: non-zero ends it */
	struct gpucomm_kstate st;	/* GPU memory */
};

/* Bytes of GPU memory the dispatch state of n_rings x n_items needs. */
static inline size_t
gpucomm_kstate_bytes(uint32_t n_rings, uint32_t n_items)
{
	return (size_t)n_rings * n_items * (3 * sizeof(unsigned long long) +
		sizeof(struct gpucomm_pkt *) + sizeof(uint32_t *));
}

/* Points kp->st into mem (gpucomm_kstate_bytes() of GPU memory). */
static inline void
gpucomm_kstate_bind(struct gpucomm_kparams *kp, void *mem)
{
	const size_t n = (size_t)kp->n_rings * kp->n_items;
	unsigned long long *w = (unsigned long long *)mem;

	kp->st.ready_seq = w;
	kp->st.done_seq = w + n;
	kp->st.ready_ns = w + 2 * n;
	kp->st.pkt_list = (struct gpucomm_pkt **)(w + 3 * n);
	kp->st.status = (uint32_t **)(kp->st.pkt_list + n);
}

/*
 * Blocks the persistent kernel may take of the resident blocks the GPU has
 * for it: half, so that other kernels of the process find SMs beside it
 * (a port's fill kernel, the flow exporter's scan, the generator's build;
 * measured on an H100 with dpdk-gpu-rx --mem gpu through net_gpudma: 8
 * rings of 65 blocks took every SM and the port's fills waited for them,
 * 47 Mpps on 4 RX lcores fell to 12.6 on 8). All of them where half
 * would not give each ring a dispatcher and one worker.
 */
static inline uint32_t
gpucomm_kernel_share(uint32_t n_rings, uint32_t resident)
{
	return resident / 2 >= 2 * n_rings ? resident / 2 : resident;
}

/*
 * Worker blocks per ring so that every block of the kernel is resident at
 * once (a dispatcher block per ring besides): want, at most n_items and
 * GPUCOMM_WORKERS_MAX, lowered until n_rings * (bpq + 1) <= resident.
 * 0 when not even one worker per ring fits (or an argument is 0).
 */
static inline uint32_t
gpucomm_fit_workers(uint32_t n_rings, uint32_t n_items, uint32_t want,
		uint32_t resident)
{
	uint32_t bpq = want;

	if (n_rings == 0 || n_items == 0 || want == 0 ||
			resident / n_rings < 2)
		return 0;
	if (bpq > n_items)
		bpq = n_items;
	if (bpq > GPUCOMM_WORKERS_MAX)
		bpq = GPUCOMM_WORKERS_MAX;
	if (bpq > resident / n_rings - 1)
		bpq = resident / n_rings - 1;
	return bpq;
}

/*
 * The CUDA half (gpucomm_cuda.cu). Each returns 0 or a cudaError_t value;
 * stream is a cudaStream_t.
 */
/* Queue the dispatch state's initialisation (sequence words zeroed, each
 * item's packet list and status pointers read once from the lists) on
 * stream: before any launch, persistent or per item, that uses it. */
int gpucomm_cuda_state_init(const struct gpucomm_kparams *kp, void *stream);
/* Waits up to timeout_ms for the work on stream to end (after the quit
 * flag was raised): 0, cudaErrorNotReady when it still runs, or the error
 * it ended with. */
int gpucomm_cuda_wait(void *stream, uint32_t timeout_ms);
/* Queue on stream the store of READY into an item's status (its
 * device-side address, status_d): after whatever was queued before it. */
int gpucomm_cuda_queue_ready(void *stream, uint32_t *status_d);

/*
 * The flag echo: the bare round trip of one 32-bit word in memory both
 * sides see (registered host memory, or GPU memory the CPU maps), the
 * floor under the ring's READY -> DONE handoff. A one-thread kernel
 * answers every odd value v the CPU stores with v + 1 in the same word,
 * relaxed both ways (the word carries nothing else), until `rounds`
 * answers (0: no limit), GPUCOMM_ECHO_QUIT in the word, or timeout_ns
 * (GPU clock) without a new ask. Shared by dpdk-test-gpudev (the values
 * travel both ways) and bench-handoff (the floor's latency).
 */
#define GPUCOMM_ECHO_QUIT 0xFFFFFFFFu

struct gpucomm_echo;

/* What the kernel did, as the CPU last read it. */
struct gpucomm_echo_state {
	uint32_t started;	/* the kernel runs */
	uint32_t done;		/* it ended */
	uint32_t timed_out;	/* it ended on timeout_ns */
	uint32_t seen;		/* the last ask it answered */
	uint32_t rounds;	/* asks answered */
};

/* Launches the echo on a stream of its own; flag is the address the GPU
 * uses. 0 or a cudaError_t value (nothing kept). */
int gpucomm_echo_start(uint32_t *flag, uint32_t rounds, uint64_t timeout_ns,
		struct gpucomm_echo **e);
/*
 * The echo with one dependent load between ask and answer: on ask v the
 * kernel reads the first word w of line (v >> 1) % n_lines of lines
 * (n_lines lines of line_bytes, a multiple of 4, at the address the GPU
 * uses) and answers v + 1 + 2 * w, even, so never an ask; the CPU checks
 * w. A new line each ask: the floor of a handoff whose kernel must read
 * packets from host memory after it sees the flag. lines NULL: the bare
 * echo. 0 or a cudaError_t value (nothing kept).
 */
int gpucomm_echo_start_load(uint32_t *flag, uint32_t rounds,
		uint64_t timeout_ns, const uint32_t *lines, uint32_t n_lines,
		uint32_t line_bytes, struct gpucomm_echo **e);
/* What the kernel reported so far, without waiting. */
void gpucomm_echo_peek(const struct gpucomm_echo *e,
		struct gpucomm_echo_state *st);
/* Waits for the kernel to end (store GPUCOMM_ECHO_QUIT first unless it
 * ends by itself), reports into st (may be NULL) and frees e, even on
 * error. 0 or a cudaError_t value. */
int gpucomm_echo_finish(struct gpucomm_echo *e, struct gpucomm_echo_state *st);

#ifdef __cplusplus
}
#endif

#endif /* GPUCOMM_KERNEL_H */
