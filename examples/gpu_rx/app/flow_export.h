/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow records out of dpdk-gpu-rx (--ipfix, --ipfix-file): the flow
 * table's records end (flow_table.h: idle, active, FIN/RST, pressure)
 * into the export ring, and an exporter thread takes them from it and
 * writes them as IPFIX with libfixbuf, to a collector over UDP or TCP
 * and/or to a file. It also runs the scan that ends idle flows (on the
 * GPU in GPU modes) and, at exit, exports every flow still live.
 *
 * The time flows end by is the packets' time: the largest timestamp the
 * RX lcores have accounted (gpurx_flow_note), so a replayed capture
 * keeps its own timeline; with --ts rx the wall clock; with --ts none
 * nothing times out before exit.
 */
#ifndef GPURX_APP_FLOW_EXPORT_H
#define GPURX_APP_FLOW_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "opts.h"

struct gpurx_app;

/* Per RX queue: the latest packet time whose flows are all accounted. */
struct gpurx_flow_clock {
	uint64_t ns;
	uint8_t pad[56];
};
extern struct gpurx_flow_clock gpurx_flow_clocks[GPURX_MAX_QUEUES];

/*
 * RX lcore of queue q: every packet up to time ns is in the flow table
 * (CPU: after classifying a burst; GPU: after collecting an item). One
 * writer per queue.
 */
static inline void
gpurx_flow_note(uint16_t q, uint64_t ns)
{
	if (ns > gpurx_flow_clocks[q].ns)
		/* Release: the exporter that reads it, then scans, scans a
		 * table holding those packets. */
		__atomic_store_n(&gpurx_flow_clocks[q].ns, ns, __ATOMIC_RELEASE);
}

/*
 * The records the export ring holds waiting, for a flow table of flows slots:
 * a power of two, at least a quarter of the table, within 4096 and 2^21.
 * In an object of its own (flow_ring_limit.c): the test variant wraps it
 * (-Wl,--wrap, which redirects only references between objects) for a
 * ring small enough to fill.
 */
uint64_t gpurx_flow_export_ring_limit(uint32_t flows);

/*
 * After the flow table a->ft is laid out (and the GPU chosen), before it
 * is used: with --ipfix or --ipfix-file, the export ring, the timeouts
 * and the IPFIX session (the collector is connected to later, by the
 * exporter). Nothing without them (a->fx stays NULL). 0, or -1 after
 * printing why.
 */
int gpurx_flow_export_init(struct gpurx_app *a);

/* After the GPU setup (the table in GPU memory exists): the exporter
 * thread. 0 or -1. */
int gpurx_flow_export_start(struct gpurx_app *a);

/* After the RX lcores returned, before the GPU table is copied back:
 * the exporter thread stops (no scan runs any more). */
void gpurx_flow_export_quiesce(struct gpurx_app *a);

/*
 * a->ft final on the host: every record left in the ring, then every
 * flow still live (reason: due at the last time, else FIN/RST seen, else
 * forced), written out; the collector connection and file closed. 0, or
 * -1 when records could not be written everywhere (said, counted).
 */
int gpurx_flow_export_finish(struct gpurx_app *a);

struct gpuapp_json;

/* Summary line(s), and the summary JSON's "flow_export" member; nothing
 * without an export. */
void gpurx_flow_export_print(FILE *f, const struct gpurx_app *a);
void gpurx_flow_export_json(struct gpuapp_json *j, const struct gpurx_app *a);
/* /gpu_rx/flow_export in DPDK's telemetry, where the export is on: 0, or
 * a negative errno. */
int gpurx_flow_export_telemetry_register(const struct gpurx_app *a);

/* Releases what init took (GPU memory goes with the GPU's teardown). */
void gpurx_flow_export_free(struct gpurx_app *a);

#endif /* GPURX_APP_FLOW_EXPORT_H */
