/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

/*
 * Control interface of the fake CUDA driver library (a test double of
 * libcuda.so.1 for machines without a GPU). The driver under test loads it
 * through GPU_CUDA_LIBCUDA; tests link it too and steer it from here.
 *
 * Environment read at load time:
 *   FAKE_CUDA_GPUS            comma-separated PCI bus ids (default one GPU,
 *                             0000:01:00.0); "" means no GPU
 *   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion reports (13000)
 *   FAKE_CUDA_INIT_ERROR      CUresult cuInit returns (0)
 *   FAKE_CUDA_HIDE_SYMBOL     a symbol cuGetProcAddress does not find
 *                             (cuMemcpyBatchAsync: a driver before 12.8)
 *   FAKE_CUDA_MEM_LIMIT       bytes of "GPU memory" (1 GiB)
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets call counting and injected faults (not the resources). */
void fake_cuda_reset_faults(void);

/* Makes the n-th counted call from now (1-based) return err. Every entry
 * point counts except cuGetErrorName/String. 0 disarms. */
void fake_cuda_fail_call(uint64_t n, CUresult err);

/* Counted calls since the last reset. */
uint64_t fake_cuda_calls(void);

/* Name of the entry point whose failure was injected, NULL if none yet;
 * for cuDeviceGetAttribute *attr gets the attribute asked for. */
const char *fake_cuda_failed_call(int *attr);

/* Live resources: device allocations, host registrations, references on
 * primary contexts, created contexts. */
unsigned int fake_cuda_live_allocs(void);
unsigned int fake_cuda_live_registrations(void);
unsigned int fake_cuda_live_primary_refs(void);

/* Resources whose release was made to fail by injection (they are dropped
 * from the live counts, as a real driver would lose track of them). */
unsigned int fake_cuda_abandoned(void);

/* Depth of the calling thread's context stack. */
unsigned int fake_cuda_ctx_depth(void);

/* 1 if [p, p + len) lies inside one live device allocation. */
int fake_cuda_is_device_range(const void *p, size_t len);

/* The context that was current when the allocation holding p was made. */
CUcontext fake_cuda_alloc_ctx(const void *p);

/* 1 if [p, p + len) is inside a live host registration. */
int fake_cuda_is_registered(const void *p, size_t len);

/* Contexts the tests hand to rte_gpu_add_child. */
CUcontext fake_cuda_ctx_create(int ordinal);
void fake_cuda_ctx_destroy(CUcontext ctx);

/* cuMemHostGetDevicePointer returns an address other than the host one. */
void fake_cuda_set_devptr_differs(int on);

/* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING reported from now on
 * (default 0: none, so wmb must flush). */
void fake_cuda_set_rdma_ordering(int ordering);

/* Calls of cuFlushGPUDirectRDMAWrites so far. */
uint64_t fake_cuda_flush_calls(void);

/* Calls made through an entry point of the wrong ABI version (e.g. the
 * CUDA 13 two-argument cuCtxGetDevice called as the one-argument one). */
unsigned int fake_cuda_abi_errors(void);

/* GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS reported from now on (default
 * CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST). */
void fake_cuda_set_rdma_flush_options(int options);

/* New allocations start offset bytes past a 64 KiB boundary (0, the
 * default: wherever aligned_alloc(256) puts them). */
void fake_cuda_set_alloc_offset(size_t offset);

/* Fresh allocations are filled with this byte (as a GPU hands back what
 * the memory's last user left). */
#define FAKE_CUDA_STALE_BYTE 0xa5

/* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED reported from now on (default 1). */
void fake_cuda_set_dmabuf_supported(int on);

/* dma-buf fds from cuMemGetHandleForAddressRange still open (each is a
 * memfd of the range's size). */
unsigned int fake_cuda_live_dmabufs(void);

/* The range an open dma-buf fd exports; 0, or -1 if fd is not one. */
int fake_cuda_dmabuf_range(int fd, uintptr_t *start, size_t *len);

/* cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_P2P_TOKENS) calls so far. */
uint64_t fake_cuda_p2p_token_queries(void);

/* Stream-ordered calls made on the legacy (NULL) stream, which a
 * persistent kernel may hold forever. */
uint64_t fake_cuda_legacy_stream_uses(void);

/* Streams and events (see fake_cuda.c). In manual mode an asynchronous
 * copy or event record waits in its stream until completed from here (or
 * by a synchronize call); off (the default) runs it at once, and turning
 * it off runs everything pending. */
void fake_cuda_set_async_manual(int on);

/* Runs up to n pending operations, oldest first, stream by stream; returns
 * how many ran. */
uint64_t fake_cuda_async_complete(uint64_t n);

/* Operations enqueued and not yet run. */
uint64_t fake_cuda_async_pending(void);

unsigned int fake_cuda_live_streams(void);
unsigned int fake_cuda_live_events(void);

/* Asynchronous copies enqueued (batched ones each count) and
 * cuMemcpyBatchAsync calls that succeeded, since load. */
uint64_t fake_cuda_async_copies(void);
uint64_t fake_cuda_batch_calls(void);

/* Modules loaded; launches of net_gpudma's scatter kernel (the only
 * kernel the fake knows, run in C when its stream reaches it) and the
 * descriptors it found bad (not device <- registered host memory). */
unsigned int fake_cuda_live_modules(void);
uint64_t fake_cuda_kernel_launches(void);
uint64_t fake_cuda_kernel_errors(void);

/* net_gpudma's persistent fill kernel (fill=persistent), run by a thread
 * polling its ring with the kernel's own protocol and copy routines
 * (gpudma_fill.h) from when its stream reaches the launch until it sees
 * QUIT or parks; its stream (and an event recorded after it) completes
 * when it ends. Manual mode holds its fills back. Launches since load (not
 * in fake_cuda_kernel_launches), fills served, stand-ins that parked,
 * stand-ins running now. A stream destroyed with one still running counts
 * a kernel error. */
uint64_t fake_cuda_fill_launches(void);
uint64_t fake_cuda_fills_served(void);
uint64_t fake_cuda_fills_parked(void);
unsigned int fake_cuda_fills_running(void);

/* cuMemcpyBatchAsync: copies enqueued whose host memory is registered
 * without CU_MEMHOSTREGISTER_DEVICEMAP (the driver may run a batch on the
 * SMs, which reach host memory only through its mapping: each faults when
 * it runs, making fake_cuda_sticky_error CUDA_ERROR_LAUNCH_FAILED, which
 * event queries and synchronize calls then return), and attribute entries
 * without CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (copy engine asked
 * for), since load. */
uint64_t fake_cuda_batch_faults(void);
uint64_t fake_cuda_batch_no_overlap_hint(void);
CUresult fake_cuda_sticky_error(void);
void fake_cuda_clear_sticky_error(void);

/* Work put on the streams of GPU ordinal's contexts since load: scatter
 * launches, and asynchronous copies (batched ones each count). */
uint64_t fake_cuda_kernel_launches_on(int ordinal);
uint64_t fake_cuda_async_copies_on(int ordinal);

/* Device memory of one GPU touched by another GPU's stream work (kernel
 * or copy) since load: nothing enables peer access, so a scatter kernel
 * writing or reading another GPU's memory writes nothing (a fault on a
 * GPU), a copy goes by the unified address. FAKE_CUDA_EXIT_REPORT=1
 * prints these with several GPUs. */
uint64_t fake_cuda_cross_gpu_accesses(void);

#ifdef __cplusplus
}
#endif

#endif /* FAKE_CUDA_H */
