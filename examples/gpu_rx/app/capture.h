/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture file writer shared by every RX lcore: pcapng (section and
 * interface blocks by DPDK's rte_pcapng, packet blocks written here, up
 * to 262144 bytes each) or classic pcap (nanosecond magic).
 * Callers hand over contiguous bytes, so the CPU path (mbuf data or a
 * linearized copy) and the GPU path (the kernel's capture ring) share it.
 */
#ifndef GPURX_APP_CAPTURE_H
#define GPURX_APP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "opts.h"

struct gpurx_capture;

/*
 * Open path for writing. port is the ethdev port whose interface block
 * the packets refer to (pcapng lists every probed port). The filter text
 * goes into the pcapng section comment. NULL with the reason in err.
 */
struct gpurx_capture *gpurx_capture_open(const char *path,
		enum gpurx_format fmt, uint32_t snaplen, uint16_t port,
		const char *filter, char *err, size_t errlen);

/*
 * Append one packet (thread-safe). caplen bytes at data (cut to the
 * snaplen), wirelen the packet's length on the wire, ts in ns since the
 * epoch.
 * Returns 0, or -1 when the packet could not be written (counted by the
 * caller as a capture drop; the file stays valid).
 */
int gpurx_capture_write(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns);

/* Push buffered packets to the file (thread-safe). Returns 0 or -1. */
int gpurx_capture_flush(struct gpurx_capture *c);

/* Flush and close. Returns 0, or -1 if anything failed to reach disk. */
int gpurx_capture_close(struct gpurx_capture *c);

#endif /* GPURX_APP_CAPTURE_H */
