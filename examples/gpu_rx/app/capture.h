/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture file writer of the RX lcores: pcapng (section and interface
 * blocks by DPDK's rte_pcapng, packet blocks written here, up to 262144
 * bytes each) or classic pcap (nanosecond magic).
 *
 * No lock per packet: each RX queue has its own buffer of complete
 * packet blocks, written by its lcore alone. A full buffer goes to the
 * file in one pwrite() at a range reserved with one atomic add on the
 * file's end, so the file is one valid capture whose packets are in
 * arrival order per queue (the chunks of different queues interleave).
 * With "%q" in the path each queue writes a file of its own instead
 * (e.g. cap-q%q.pcapng: cap-q0.pcapng, cap-q1.pcapng, ...), each a valid
 * capture with its own header, holding that queue's packets in arrival
 * order: writes to one file serialize on its inode in the kernel, so
 * only files of their own let the capture scale with the RX lcores.
 * Callers hand over contiguous bytes, so the CPU path (mbuf data or a
 * linearized copy) and the GPU path (the kernel's capture arena) share it.
 *
 * The writer counts into each queue's statistics itself: `captured` and
 * `cap_bytes` once a packet's chunk is in the file and no failed write
 * lies before it, `drop_capture` for every packet that will not be in
 * the file. After close, the file holds exactly `captured` packets.
 */
#ifndef GPURX_APP_CAPTURE_H
#define GPURX_APP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_os.h>

#include "opts.h"
#include "stats.h"

struct gpurx_capture;

/* Bytes of packet blocks each queue buffers before writing them. */
#define GPURX_CAPTURE_CHUNK_BYTES (1u << 20)
/* Chunk buffers of each queue with writer threads: the one its lcore
 * fills and those its writer has yet to write. 16 MiB a queue: at
 * 2-3 GB/s a queue, some 5 ms of a writer's stall (a page-cache
 * reclaim, a slow disk write) before its lcore drops. */
#define GPURX_CAPTURE_POOL 16u

/*
 * File name of queue `queue` from a --write pattern into out (len bytes):
 * "%q" the queue's number, "%%" a '%'. Returns 1 when the pattern holds
 * "%q" (a file per queue), 0 when not (one file, the name with "%%"
 * undone), -EINVAL for a '%' followed by anything else, -ENAMETOOLONG.
 * out may be NULL (len 0) to check the pattern only.
 */
int gpurx_capture_path(const char *pattern, int queue, char *out,
		size_t len);

/* gpurx_capture_path()'s check, the reason in err when it fails. */
int gpurx_capture_path_check(const char *pattern, char *err, size_t errlen);

/*
 * --write - (path "-"): the capture goes to standard output as it is at
 * this call, written in order by one lcore at a time, and stdout becomes
 * stderr for the rest of the program (messages and summary), as with
 * tcpdump -w -. Call it before anything is printed (EAL's messages go to
 * stdout); opening "-" calls it if nobody did. 0 or -errno.
 */
int gpurx_capture_take_stdout(void);

/*
 * Open path (a pattern, see gpurx_capture_path()) for writing, for RX queues 0..nq-1 whose counters are
 * qs[0..nq-1]. port is the ethdev port whose interface block the packets
 * refer to (pcapng lists every probed port). The filter text goes into
 * each pcapng interface block's if_filter. NULL with the reason in err.
 */
struct gpurx_capture *gpurx_capture_open(const char *path,
		enum gpurx_format fmt, uint32_t snaplen, uint16_t port,
		uint16_t nq, struct gpurx_qstats *qs, const char *filter,
		char *err, size_t errlen);

/*
 * Rotation, as dumpcap's ring buffer (-b duration, filesize, files):
 * each file (each queue's, with %q) goes on in a new one every `seconds`,
 * or before a chunk would take it past `size` bytes (a file holds one
 * packet at least), keeping the last `files` (0: all). The files are
 * named from the --write name split at its extension,
 * PREFIX_NNNNN_YYYYmmddHHMMSS.EXT, NNNNN from 00001; each is a complete
 * capture, pcapng ending with an interface statistics block (the
 * counters so far, since the start). No packet is lost or split at a
 * rotation. All 0: no rotation.
 */
struct gpurx_capture_rotate {
	uint32_t seconds;
	uint64_t size;
	uint32_t files;
	bool times;		/* the statistics blocks carry start and end
				 * times (the packets have real times) */
};

/* The rotation's own checks (files without seconds or size, standard
 * output): 0, or -EINVAL with the reason, naming the option, in err. */
int gpurx_capture_rotate_check(const char *path,
		const struct gpurx_capture_rotate *rot, char *err, size_t errlen);

/* gpurx_capture_open(), rotating as rot says (NULL: no rotation). */
struct gpurx_capture *gpurx_capture_open_rotate(const char *path,
		enum gpurx_format fmt, uint32_t snaplen, uint16_t port,
		uint16_t nq, struct gpurx_qstats *qs, const char *filter,
		const struct gpurx_capture_rotate *rot, char *err,
		size_t errlen);

/*
 * Queues of several ports, before any is written: queue q's packets are
 * those of port ports[q_port[q]] (an index into ports[0..n_ports)), its
 * own RX queue q_qid[q]. Each packet block then names its port's
 * interface and that queue; each file ends with an interface statistics
 * block per port it holds. Without this call every queue is the `port`
 * of open, the queue its own index. 0, or -EINVAL (bad indexes).
 */
int gpurx_capture_set_ports(struct gpurx_capture *c, const uint16_t *ports,
		uint16_t n_ports, const uint8_t *q_port, const uint16_t *q_qid);

/*
 * Writer threads (--capture-writers): n threads (at most one per queue)
 * do the capture's writes instead of the RX lcores, writer k those of
 * queues k, k + n, ... Each lcore still fills its chunk and reserves its
 * range of the file, then hands the chunk to its writer and fills the
 * next of a pool of GPURX_CAPTURE_POOL buffers; with none free (the writer
 * behind) the chunk's packets are counted as capture drops, the lcore
 * never waits. The file's bytes, the counters and the failure rules are
 * those without writers. cpus: where the threads run (NULL: where the
 * calling thread may). Call once, after open and before any lcore
 * writes; close() ends them. 0, or -errno with the reason in err (no
 * thread left running; the capture goes on without writers).
 */
int gpurx_capture_start_writers(struct gpurx_capture *c, unsigned int n,
		const rte_cpuset_t *cpus, char *err, size_t errlen);

/*
 * Append one packet of RX queue `queue`: caplen bytes at data (cut to the
 * snaplen), wirelen the packet's length on the wire, ts in ns since the
 * epoch. The bytes are copied: data may be reused on return. Only the
 * queue's own lcore calls this for a queue (one thread at a time).
 * Returns 0 (buffered), or -1 when the packet was dropped (counted) since
 * the capture stopped after a failed write.
 */
int gpurx_capture_write(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns);

/*
 * The queue's lcore, once per loop: writes its buffer when
 * gpurx_capture_flush() asked, and publishes its counters. Cheap when
 * there is nothing to do (one load of a shared line).
 */
void gpurx_capture_poll(struct gpurx_capture *c, uint16_t queue);

/* Any thread: asks every queue to write what it buffered at its next
 * gpurx_capture_poll(). */
void gpurx_capture_flush(struct gpurx_capture *c);

/*
 * Writes every queue's buffer, settles the counters and closes. Call once
 * no lcore uses c any more. Returns 0, or -1 if packets could not be
 * written (said on stderr; the file is then cut back to the last whole
 * block before the first failed write).
 */
/*
 * What a pcapng capture's interface statistics block says at close, as
 * dumpcap writes one: the port's received, dropped and filter-accepted
 * packets, those lost on the way to the file and those written.
 */
struct gpurx_capture_end {
	uint64_t start_ns, end_ns;	/* the run's; both 0: no times
					 * (--ts none) */
	uint64_t port_drops;		/* the port's imissed + rx_nombuf;
					 * UINT64_MAX: not known */
	/* Several ports (gpurx_capture_set_ports()): each one's drops, in
	 * the order given there; NULL: not known. */
	const uint64_t *ports_drops;
};

/*
 * Writes what is buffered and closes the file(s): 0, or -1 when the
 * capture is incomplete (said). With end and pcapng, each file ends with
 * an interface statistics block of the queues it holds (the port's drops
 * only where one file holds every queue); NULL: none (a failed start).
 */
int gpurx_capture_close(struct gpurx_capture *c,
		const struct gpurx_capture_end *end);

#endif /* GPURX_APP_CAPTURE_H */
