/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's device code shared by its kernels (gpugen_kernels.cu,
 * built per launch; gpugen_fill.cu, the persistent fill): the staged
 * build of a warp's frames and their copy-out. nvcc only.
 *
 * The per-packet code (gpugen_core.h) writes a frame a byte at a time and
 * reads it back (field engine variables, checksum fixes). Into host
 * memory mapped for the GPU each of those accesses would cross PCIe on
 * its own, and in GPU memory each access of a warp touches 32 frames'
 * lines, so a thread builds in its slot (in shared memory where frames
 * are short, else a scratch area in GPU memory) and its warp then copies
 * the warp's frames out together: for one frame at a time, the 32 lanes
 * store consecutive pieces, so the destination sees whole coalesced
 * lines and is never read.
 */
#ifndef GPUGEN_DEV_CUH
#define GPUGEN_DEV_CUH

#include <stdint.h>

#include "gpugen_core.h"

#define GPUGEN_WARP 32
#define GPUGEN_FULL_MASK 0xffffffffu

/* The warp copies len bytes in pieces of T, each lane one piece in 32. */
template <typename T>
static __device__ void
gpugen_warp_copy_w(uint8_t *d, const uint8_t *s, uint32_t len, uint32_t lane)
{
	for (uint32_t k = lane * sizeof(T); k < len;
			k += GPUGEN_WARP * sizeof(T))
		*(T *)(d + k) = *(const T *)(s + k);
}

/*
 * The warp copies len bytes, s and d agreeing modulo sizeof(T): a head
 * of under sizeof(T) bytes up to d's alignment, one byte a lane, the body
 * in pieces of T consecutive across the lanes, then a tail of under
 * sizeof(T) bytes, one byte a lane; each one store instruction. T =
 * uint32_t serves a source only 4-byte aligned (a slot in shared memory,
 * gpugen_warp_build_smem): a frame of up to 128 bytes in one store.
 */
template <typename T>
static __device__ void
gpugen_warp_copy_ht(uint8_t *d, const uint8_t *s, uint32_t len, uint32_t lane)
{
	const uint32_t a = (uint32_t)sizeof(T);
	uint32_t head = (a - (uint32_t)((uintptr_t)d & (a - 1))) & (a - 1);
	uint32_t body;

	if (head > len)
		head = len;
	if (lane < head)
		d[lane] = s[lane];
	body = head + ((len - head) & ~(a - 1));
	gpugen_warp_copy_w<T>(d + head, s + head, body - head, lane);
	if (body + lane < len)
		d[body + lane] = s[body + lane];
}

/*
 * Copy len bytes from s to d with the whole warp, every lane calling with
 * the same arguments. s and d agree modulo 16 (the thread built at that
 * offset in its slot), so past a head of under 16 bytes both are 16-byte
 * aligned and the body moves as 16-byte stores, consecutive across the
 * lanes; head and tail are one byte a lane, still one store instruction
 * each. A short frame whose start and length are multiples of 4 or 8
 * goes out in one instruction of pieces that size instead: the head or
 * tail would otherwise write a second time into a line the body writes
 * (a 60-byte frame: 48 bytes, then 12), which over PCIe is a second
 * write request for the same line.
 */
static __device__ void
gpugen_warp_copy(uint8_t *d, const uint8_t *s, uint32_t len, uint32_t lane)
{
	uint32_t al = ((uint32_t)(uintptr_t)d | len) & 15u;

	if (al == 8 && len <= GPUGEN_WARP * 8u) {
		gpugen_warp_copy_w<unsigned long long>(d, s, len, lane);
		return;
	}
	if ((al == 4 || al == 12) && len <= GPUGEN_WARP * 4u) {
		gpugen_warp_copy_w<uint32_t>(d, s, len, lane);
		return;
	}
	gpugen_warp_copy_ht<uint4>(d, s, len, lane);
}

/*
 * One step of a warp's staged build, every lane calling: a lane with
 * out != NULL builds packet pkt in mine (its slot: the longest frame + A
 * bytes, A-byte aligned), at out's offset modulo A, then the warp copies
 * each lane's frame out to its out in turn, in pieces of up to A bytes.
 * mine is free for the next step once this returns.
 */
template <uint32_t A>
static __device__ void
gpugen_warp_build_in(const struct gpugen_table *t, uint8_t *out,
		uint64_t pkt, uint64_t tx_ns, uint8_t *mine, uint32_t lane)
{
	static_assert(A == 16 || A == 4, "a copy-out for 16 or 4 bytes");
	const uint8_t *src = mine;
	uint32_t len = 0, s;

	if (out != NULL) {
		src = mine + ((uintptr_t)out & (A - 1));
		len = gpugen_make_n(t, pkt, tx_ns, (uint8_t *)src, &s);
	}
	/* Orders each lane's slot writes before the other lanes read them
	 * below (__syncwarp orders memory among the lanes it joins). */
	__syncwarp();
	for (uint32_t j = 0; j < GPUGEN_WARP; j++) {
		uint32_t l = __shfl_sync(GPUGEN_FULL_MASK, len, j);
		uint8_t *d = (uint8_t *)__shfl_sync(GPUGEN_FULL_MASK,
			(unsigned long long)out, j);
		const uint8_t *from = (const uint8_t *)__shfl_sync(
			GPUGEN_FULL_MASK, (unsigned long long)src, j);

		if (l == 0)
			continue;
		if (A == 16)
			gpugen_warp_copy(d, from, l, lane);
		else
			gpugen_warp_copy_ht<uint32_t>(d, from, l, lane);
	}
	/* The next step's build overwrites the slots read above. */
	__syncwarp();
}

/* The staged build through a scratch slot in GPU memory, 16-byte
 * aligned: copied out in 16-byte pieces. */
static __device__ void
gpugen_warp_build_staged(const struct gpugen_table *t, uint8_t *out,
		uint64_t pkt, uint64_t tx_ns, uint8_t *mine, uint32_t lane)
{
	gpugen_warp_build_in<16>(t, out, pkt, tx_ns, mine, lane);
}

/*
 * The staged build with mine in shared memory, the lanes' slots a stride
 * of 4 x an odd number of bytes apart (gpugen_fill_smem_stride): the
 * per-packet code's byte accesses, every lane at the same offset of its
 * own frame, then fall into 32 different banks. With a stride of a
 * multiple of 128 bytes they would all fall into one, and each access of
 * the warp would be served 32 times over, as the same accesses to 32
 * frames in GPU memory are (32 lines): one warp's 100-byte frames took
 * 12.4 us to build in place and 13.8 us in 128-byte slots, 9.7 us in
 * these. Only 4-byte aligned, they are copied out in 4-byte pieces.
 */
static __device__ void
gpugen_warp_build_smem(const struct gpugen_table *t, uint8_t *out,
		uint64_t pkt, uint64_t tx_ns, uint8_t *mine, uint32_t lane)
{
	gpugen_warp_build_in<4>(t, out, pkt, tx_ns, mine, lane);
}

/*
 * The staged build of m frames (m <= blockDim.x) by a whole block, every
 * thread calling: thread k builds packet pkt0 + k, stamped tx_ns + k *
 * gap, in its slot (stage + k * slot, at addr[k]'s offset modulo A) and
 * leaves its length in len[k] (shared memory); then the block's warps
 * copy the frames out, warp w frames w, w + W, ... of the W warps. A
 * burst's latency is one lane's build plus its copy-out: with one warp
 * copying every frame in turn (gpugen_warp_build_in) the copy-out was a
 * serial loop of a step per frame, here it is m / W steps. The slots
 * are free again once this returns.
 */
template <uint32_t A>
static __device__ void
gpugen_block_build_in(const struct gpugen_table *t, const uintptr_t *addr,
		uint32_t *len, uint32_t m, uint64_t pkt0, uint64_t tx_ns,
		uint64_t gap, uint8_t *stage, uint32_t slot)
{
	static_assert(A == 16 || A == 4, "a copy-out for 16 or 4 bytes");
	const uint32_t lane = threadIdx.x % GPUGEN_WARP;
	const uint32_t warps = blockDim.x / GPUGEN_WARP;
	uint32_t s;

	if (threadIdx.x < m)
		len[threadIdx.x] = gpugen_make_n(t, pkt0 + threadIdx.x,
			tx_ns + threadIdx.x * gap, stage + threadIdx.x * slot +
			(addr[threadIdx.x] & (A - 1)), &s);
	/* Orders the slots' and len's writes (shared memory, or the
	 * scratch in GPU memory) before the other warps read them. */
	__syncthreads();
	for (uint32_t j = threadIdx.x / GPUGEN_WARP; j < m; j += warps) {
		uint8_t *d = (uint8_t *)addr[j];
		const uint8_t *from = stage + j * slot + (addr[j] & (A - 1));

		if (A == 16)
			gpugen_warp_copy(d, from, len[j], lane);
		else
			gpugen_warp_copy_ht<uint32_t>(d, from, len[j], lane);
	}
	/* The next call's builds overwrite the slots read above. */
	__syncthreads();
}

/*
 * Every thread of the block calling: the compact copy of table t (its
 * streams, then its templates: len bytes, gpugen_table_compact_len) into
 * dst, 16-byte aligned, ready once this returns. t is 16-byte aligned
 * (gpudev's allocations are), and so are its templates.
 */
static __device__ void
gpugen_block_table_compact(uint8_t *dst, const struct gpugen_table *t,
		uint32_t len)
{
	const uint32_t head = gpugen_table_compact_len(t->n_streams, 0);
	const uint32_t tb = len - head;
	const uint8_t *tmpl = (const uint8_t *)t + t->tmpl_at;

	for (uint32_t k = threadIdx.x * 16; k < head; k += blockDim.x * 16)
		*(uint4 *)(dst + k) = *(const uint4 *)((const uint8_t *)t + k);
	for (uint32_t k = threadIdx.x * 16; k + 16 <= tb; k += blockDim.x * 16)
		*(uint4 *)(dst + head + k) = *(const uint4 *)(tmpl + k);
	if (threadIdx.x < tb % 16)
		dst[head + tb / 16 * 16 + threadIdx.x] =
			tmpl[tb / 16 * 16 + threadIdx.x];
	/* Thread 0 copied the header's first 16 bytes itself, above. */
	if (threadIdx.x == 0)
		((struct gpugen_table *)dst)->tmpl_at = head;
	__syncthreads();
}

#endif /* GPUGEN_DEV_CUH */
