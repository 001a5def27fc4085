/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_COPY_H
#define GPUDMA_COPY_H

/*
 * The copy engine: the GPU's DMA engine standing in for a NIC's, through
 * the CUDA driver API the gpudev driver loads (cuda_api.h). One stream per
 * queue; the copies of one burst go as one cuMemcpyBatchAsync where the
 * driver has it (CUDA 12.8+), else as asynchronous copies on the stream,
 * and one event marks the burst's completion.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#define GPUDMA_COPY_MAX_SLOTS 8
/* Bulk fills: a slot's bytes in GPU memory, and the contiguous runs of
 * host memory one may gather (a batch from a ring wraps once). */
#define GPUDMA_BULK_SLOT ((size_t)2 << 20)
#define GPUDMA_BULK_RUNS 8u
/* Copies in one cuMemcpyBatchAsync call (gpudma_copy.c says why). */
#define GPUDMA_BATCH_CALL_MAX 256

/* bulk=auto: frames of at least this many bytes on average cross PCIe as
 * one copy; smaller ones are read over PCIe by the kernel itself. */
#define GPUDMA_BULK_MIN_AVG 512u

/* One GPU of a port: the queues whose buffers are in its memory are
 * filled (RX) and drained (TX) through its context, as by a NIC of its
 * own. */
struct gpudma_cuda {
	bool ok;                 /* CUDA loaded and the GPU's context held */
	bool batch;              /* cuMemcpyBatchAsync available */
	int ordinal;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;            /* the scatter kernel's: loaded at the first
				  * GPU-memory mapping (scatter=1) */
	CUfunction scatter;
	CUfunction fill;         /* the persistent fill kernel, same module */
	/* The pinned frame store as this GPU addresses it (scatter). */
	uintptr_t store_host;
	CUdeviceptr store_dev;
};

struct gpudma_event {
	CUevent ev;
};

struct gpudma_scatter_desc;
struct gpudma_fill_ring;

struct gpudma_copier {
	struct gpudma_cuda *cuda;
	CUstream stream;
	/* Scatter kernel: a pinned descriptor array a batch slot, kept until
	 * that slot's burst completed. */
	uint32_t nb_slots;
	struct gpudma_scatter_desc *descs[GPUDMA_COPY_MAX_SLOTS];
	CUdeviceptr descs_dev[GPUDMA_COPY_MAX_SLOTS];
	/* The burst being built: copy i moves sizes[i] bytes srcs -> dsts. */
	CUdeviceptr *dsts, *srcs;
	size_t *sizes;
	uint32_t n, cap;
	uint64_t bytes;          /* of the burst being built */
	/* Where the burst's sources are (the frame store, or a queue's
	 * staging ring): win_host as the GPU addresses it, for the kernel. */
	uintptr_t win_host;
	CUdeviceptr win_dev;
	/* Bulk fills (bulk=1|auto with the kernel): a GPUDMA_BULK_SLOT of GPU
	 * memory a slot, where the burst's bytes land by one copy-engine
	 * copy a contiguous run before the kernel scatters them from there. */
	CUdeviceptr bulk_dev;
	int bulk;                /* GPUDMA_BULK_* */
	uint64_t bulk_batches;   /* bursts that went so */
	/*
	 * Completion word (gpudma_copier_done_init): the stream writes each
	 * burst's sequence number into it after the burst's copies, so that
	 * whoever polls for completion reads host memory instead of calling
	 * CUDA (cuEventQuery and the context switch around it take the
	 * driver's context lock, which several lcores polling at once
	 * contend for). NULL: completion is known from the events alone.
	 */
	uint32_t *done_word;
	CUdeviceptr done_dev;
	/*
	 * fill=persistent (gpudma_copier_fill_init): the queue's ring, which
	 * the persistent kernel serves from the first fill on (its DONE is
	 * the completion word then: no CUDA call a burst), and an event
	 * recorded after the kernel's launch, complete once it has ended.
	 */
	struct gpudma_fill_ring *ring;
	CUdeviceptr ring_dev;
	struct gpudma_event fill_end;
	uint64_t fill_idle_ns;   /* the kernel parks after this long idle */
	uint32_t fill_posted;    /* the last fill made READY */
	uint32_t fill_voided;    /* the last fill dropped unserved */
	uint64_t fill_launches;  /* the kernel's launches (its first and
				  * each after it parked) */
	bool fill_running;       /* launched, not yet seen to end */
	bool fill_stuck;         /* did not end when asked: ring kept */
};

/* 1 if a CUDA driver could be loaded (logged once if not). */
int gpudma_cuda_present(void);
/* Retains GPU ordinal's primary context; batch: whether to use
 * cuMemcpyBatchAsync (GPUDMA_BATCH_*; ON without it in the driver:
 * -ENOTSUP). */
int gpudma_cuda_open(struct gpudma_cuda *c, int ordinal, int batch);
/* Loads the scatter kernel (once; 0 when it is already). Host memory
 * alone never needs it: called when GPU memory is mapped. */
int gpudma_cuda_load_scatter(struct gpudma_cuda *c);
void gpudma_cuda_close(struct gpudma_cuda *c);
/* Make the GPU's context current on this thread / undo it. */
int gpudma_cuda_enter(struct gpudma_cuda *c, const char *what);
void gpudma_cuda_leave(struct gpudma_cuda *c, const char *what);
/* gpudma_cuda_enter for release paths: tried twice. */
int gpudma_cuda_enter_teardown(struct gpudma_cuda *c, const char *what);
/* *ordinal = the CUDA ordinal of the GPU whose memory addr is, -1 for
 * host memory (asked through c, whichever GPU that is). */
int gpudma_cuda_mem_gpu(struct gpudma_cuda *c, uintptr_t addr, int *ordinal);
/* Page-locks host memory the copy engine reads or writes, mapped for the
 * GPU (cuMemcpyBatchAsync may run on the SMs, which need the mapping). */
int gpudma_cuda_pin(struct gpudma_cuda *c, void *p, size_t len);
int gpudma_cuda_unpin(struct gpudma_cuda *c, void *p);
/* Pins the frame store, mapped for the GPU (the scatter kernel reads it):
 * once a port, by whichever of its GPUs meets GPU memory first; portable,
 * so that its other GPUs only ask for their address of it
 * (gpudma_cuda_map_store). */
int gpudma_cuda_pin_store(struct gpudma_cuda *c, void *p, size_t len);
int gpudma_cuda_map_store(struct gpudma_cuda *c, void *p);
/* Pins host memory the copy engine or the kernel reads; *dev: its GPU
 * address. */
int gpudma_cuda_pin_mapped(struct gpudma_cuda *c, void *p, size_t len,
	uint64_t *dev);

/* The calls below want the context current (gpudma_cuda_enter). */
/* nb_slots: batch slots of a queue filled by the scatter kernel (0: copies
 * only, or when the port has no kernel). */
int gpudma_copier_init(struct gpudma_copier *cp, struct gpudma_cuda *c,
	uint32_t cap, int socket, uint32_t nb_slots);
void gpudma_copier_fini(struct gpudma_copier *cp);
/* Bulk fills for this copier's kernel slots (GPUDMA_BULK_*; OFF: none):
 * their GPU memory. */
int gpudma_copier_bulk_init(struct gpudma_copier *cp, int bulk);
/* Whether a burst of bytes so far, plus len, still fits a bulk slot (or
 * bulk fills are off). */
static inline int
gpudma_copier_bulk_room(const struct gpudma_copier *cp, size_t len)
{
	return cp->bulk_dev == 0 || cp->bytes + len <= GPUDMA_BULK_SLOT;
}
/* The completion word, where the driver has stream memory operations
 * (cuStreamWriteValue32, tried once here): 0, or -ENOTSUP (the copier
 * goes on with events alone) or another negative errno. */
int gpudma_copier_done_init(struct gpudma_copier *cp);
/*
 * Whether the burst submitted with sequence number seq has completed, by
 * the completion word (copier with one; seq counts bursts from 1 and
 * wraps). Acquire: pairs with the fence the stream's write carries, so
 * the burst's writes are visible to whoever sees the word (and, by
 * cumulativity, to GPU work this thread then publishes something to).
 */
static inline int
gpudma_copier_done(const struct gpudma_copier *cp, uint32_t seq)
{
	uint32_t w = __atomic_load_n(cp->done_word, __ATOMIC_ACQUIRE);

	return (int32_t)(w - seq) >= 0;
}
/*
 * fill=persistent: the ring (pinned, mapped for the GPU) and the end
 * event; the copier's completion word becomes the ring's DONE. Needs the
 * fill kernel loaded (gpudma_cuda_load_scatter) and the descriptor slots.
 * idle_us: how long the kernel polls an empty ring before it parks.
 */
int gpudma_copier_fill_init(struct gpudma_copier *cp, uint64_t idle_us);
/* Whether the persistent kernel has parked (or is parking): it serves
 * nothing more until gpudma_copier_fill_resume launches it again. A read
 * of the line the CPU polls DONE on anyway; acquire, so that DONE read
 * after it is the kernel's last. */
bool gpudma_copier_fill_parked(const struct gpudma_copier *cp);
/* The burst being built dropped, not submitted as fill seq: for the
 * persistent kernel seq is made READY empty, since it serves fills in
 * order and would wait for it. */
void gpudma_copier_skip(struct gpudma_copier *cp, uint32_t seq);
/* Fill seq, posted and not served, dropped (its buffers go back to their
 * pool) while no kernel runs, the oldest such: the next launch starts
 * after it, so that no kernel writes those buffers. */
void gpudma_copier_fill_void(struct gpudma_copier *cp, uint32_t seq);
/* Whether the persistent kernel runs, or fills wait that a parked one did
 * not serve: what gpudma_copier_fill_stop has to end or serve. */
bool gpudma_copier_fill_pending(const struct gpudma_copier *cp);
/* Whether submitting a burst calls CUDA (and so wants the context): not
 * while the persistent kernel runs. */
static inline bool
gpudma_copier_needs_ctx(const struct gpudma_copier *cp)
{
	return cp->ring == NULL || !cp->fill_running ||
		gpudma_copier_fill_parked(cp);
}
/* The persistent kernel: 1 running, 0 ended (or never started), < 0 its
 * end event reports a failure. Context current. */
int gpudma_copier_fill_alive(struct gpudma_copier *cp);
/* A parked kernel, once it has ended, launched again at the first fill it
 * did not serve where one is posted: 0 (done so, or nothing posted: the
 * next post launches it), 1 (still ending: ask again) or < 0 (its end
 * event reports a failure, or the launch failed). Context current. */
int gpudma_copier_fill_resume(struct gpudma_copier *cp);
/* Sets QUIT and waits (bounded) for the kernel to serve what was posted
 * and end (launching a parked one again where fills wait): 0, or
 * -ETIMEDOUT (still running: the ring and the posted
 * buffers must stay) or the failure the end event reports. Context
 * current. */
int gpudma_copier_fill_stop(struct gpudma_copier *cp);
int gpudma_event_init(struct gpudma_event *e);
void gpudma_event_fini(struct gpudma_event *e);

static inline void
gpudma_copier_add(struct gpudma_copier *cp, uintptr_t dst, uintptr_t src,
		size_t len)
{
	cp->dsts[cp->n] = (CUdeviceptr)dst;
	cp->srcs[cp->n] = (CUdeviceptr)src;
	cp->sizes[cp->n] = len;
	cp->n++;
	cp->bytes += len;
}

/* Forgets the burst being built (nothing of it was enqueued). */
static inline void
gpudma_copier_discard(struct gpudma_copier *cp)
{
	cp->n = 0;
	cp->bytes = 0;
}

/*
 * Enqueues the burst's copies (to_device: host to GPU, else GPU to host;
 * with the scatter kernel, descriptor slot slot's launch; with the
 * persistent one, the burst posted into its ring as fill seq, the kernel
 * launched first if it does not run yet, and nothing more), then the write
 * of seq into the completion word (where there is one), and records ev
 * after them; the burst is emptied either way. On failure
 * nothing of the burst is still running when it returns (what was
 * enqueued has been waited for), or -EFAULT if even that wait failed: the
 * buffers may still be written and must not be reused.
 */
int gpudma_copier_submit(struct gpudma_copier *cp, bool to_device,
	struct gpudma_event *ev, uint32_t slot, uint32_t seq);
/* 1: the copies before ev have completed; 0: not yet; <0: failed. */
int gpudma_event_query(struct gpudma_event *e);
/* Waits for ev; on failure for the whole stream; -EFAULT if both fail. */
int gpudma_event_wait(struct gpudma_copier *cp, struct gpudma_event *e);

#endif /* GPUDMA_COPY_H */
