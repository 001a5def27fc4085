/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK-free GPU build's handle (gpugen_frames.h), shared by the
 * stream builds (gpugen_frames.c) and the persistent fill over plain
 * memory (gpugen_frames_ring.c).
 */
#ifndef GPUGEN_FRAMES_PRIV_H
#define GPUGEN_FRAMES_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "gpugen.h"
#include "gpugen_cuda.h"

struct gpugen_frames {
	const struct gpugen *g;
	uint32_t max_len;
	int dev;
	void *table;		/* device memory */
	struct gpugen_cuda_scratch scratch;
};

/* 0 when the calling thread's current CUDA device is f's: the table and
 * scratch are there, and a launch on another device would read memory
 * that is not; else -EINVAL or -EIO, said in err. */
int gpugen_frames_on_dev(const struct gpugen_frames *f, char *err,
		size_t errlen);

/* A persistent fill's shape, for both fills (gpugen_fill.c over gpudev,
 * gpugen_frames_ring.c over plain memory): 1 to GPUCOMM_MAX_RINGS rings
 * of 2 to 1024 items, unit ("bursts", "batches") of 1 to
 * GPUCOMM_PKTS_MAX packets. 0, or -EINVAL said in err. */
int gpugen_fill_conf_check(uint32_t rings, uint32_t items, uint32_t per_item,
		const char *unit, char *err, size_t errlen);

#endif /* GPUGEN_FRAMES_PRIV_H */
