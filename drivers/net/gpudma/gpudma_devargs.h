/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_DEVARGS_H
#define GPUDMA_DEVARGS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* batch=: off, where the driver has it (default), or required. */
#define GPUDMA_BATCH_OFF 0
#define GPUDMA_BATCH_ON 1
#define GPUDMA_BATCH_AUTO 2

/* bulk=: never, for large frames (default), always. */
#define GPUDMA_BULK_OFF 0
#define GPUDMA_BULK_ON 1
#define GPUDMA_BULK_AUTO 2

/* fill=: how the scatter kernel runs (gpudma_fill.h). */
#define GPUDMA_FILL_LAUNCH 0      /* one launch a burst (default) */
#define GPUDMA_FILL_PERSISTENT 1  /* one kernel a queue, bursts posted */
/* fill_idle_us=: its default and bounds, in microseconds. */
#define GPUDMA_FILL_IDLE_US 1000u
#define GPUDMA_FILL_IDLE_MAX_US 10000000u

struct gpudma_args {
	char rx_pcap[PATH_MAX];  /* "" : no frames received */
	/* Another ethdev port the frames come from (its id or name), taken
	 * over by this one; "" : none. Not with rx_pcap. */
	char rx_port[64];
	char tx_pcap[PATH_MAX];  /* "" : frames sent are counted and dropped */
	uint64_t loop;           /* times rx_pcap is replayed, 0 forever */
	uint16_t queues;         /* RX and TX queues offered */
	int gpu;                 /* CUDA ordinal whose copy engine fills */
	int batch;               /* cuMemcpyBatchAsync: GPUDMA_BATCH_* */
	bool scatter;            /* RX into GPU memory by the scatter kernel
				  * (default), else by copy-engine copies */
	int bulk;                /* GPUDMA_BULK_*: a batch's frames cross PCIe
				  * as one copy, the kernel scattering them
				  * from GPU memory */
	int fill;                /* GPUDMA_FILL_* */
	/* fill=persistent: how long its kernel polls an empty ring before
	 * it ends (parks), launched again at the next burst. */
	uint64_t fill_idle_us;
};

/* Parses "key=value,..." into *a; an unknown key or a bad value is
 * rejected with a log line naming the key. Returns 0 or -EINVAL. */
int gpudma_args_parse(const char *params, struct gpudma_args *a);

#endif /* GPUDMA_DEVARGS_H */
