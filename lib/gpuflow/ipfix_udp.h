/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A UDP destination's datagrams (ipfix_writer.c's internal part, not an
 * API): a chunk of IPFIX messages, each after a struct
 * gpurx_ipfix_udp_head, sent a datagram per message by sendmmsg(),
 * paced to a rate of records.
 *
 * Why GSO (UDP_SEGMENT, Linux 4.18): a datagram's way through the
 * kernel's UDP and IP stack (an skb, its route, the netfilter hooks, the
 * device), not the system call, bounded UDP export (issue 35, goal 4:
 * the sink thread's kernel time about 2 us a datagram on loopback).
 * Consecutive messages of one length go as one super-datagram the stack
 * carries once and the kernel cuts, where it can no later, into
 * datagrams identical to the messages; the writer builds messages of
 * one template each over UDP so that full ones have one length.
 */
#ifndef GPURX_IPFIX_UDP_H
#define GPURX_IPFIX_UDP_H

#include <stddef.h>
#include <stdint.h>

/* Before each message in a chunk. */
struct gpurx_ipfix_udp_head {
	uint32_t len;		/* the datagram's bytes, after this */
	uint32_t records;	/* its flow records, for pacing and losses */
};

enum gpurx_ipfix_gso {
	/* The kernel knows UDP_SEGMENT; no super-datagram sent yet. A
	 * refusal turns GSO off from here or from ON. */
	GPURX_IPFIX_GSO_UNKNOWN,
	GPURX_IPFIX_GSO_ON,	/* a super-datagram went out */
	GPURX_IPFIX_GSO_OFF,	/* a datagram a message, always */
};

/* A UDP destination's sending state, its thread's alone once it runs. */
struct gpurx_ipfix_udp {
	int fd;			/* connected: ICMP errors come back */
	enum gpurx_ipfix_gso gso;
	uint64_t due_ns;	/* when the next datagram may go */
	const char *name;	/* the destination, for messages */
};

/* What a chunk's sending did. */
struct gpurx_ipfix_udp_res {
	uint64_t sent;		/* datagrams */
	uint64_t lost;		/* flow records of the datagrams not sent */
	uint64_t lost_msgs;	/* datagrams not sent */
	int err;		/* the last send's errno; 0: none */
};

/* u for the connected socket fd: GSO unless the kernel refuses the
 * socket option (said at INFO level). */
void gpurx_ipfix_udp_init(struct gpurx_ipfix_udp *u, int fd,
		const char *name);

/* Message msg (len bytes, records flow records) into a chunk at off
 * (sizeof(struct gpurx_ipfix_udp_head) + len bytes of room); the offset
 * after it returned. */
size_t gpurx_ipfix_udp_put(uint8_t *chunk, size_t off, const uint8_t *msg,
		uint32_t len, uint32_t records);

/* Waits, if need be, for u's next datagram to be due at rate records/s
 * (0: never), then books its records (none counted as one). */
void gpurx_ipfix_udp_pace(struct gpurx_ipfix_udp *u, uint64_t rate,
		uint32_t records);

/* A chunk's len bytes of messages out to u, in order, paced to rate;
 * what was sent and lost added into *res. */
void gpurx_ipfix_udp_send_chunk(struct gpurx_ipfix_udp *u,
		const uint8_t *buf, size_t len, uint64_t rate,
		struct gpurx_ipfix_udp_res *res);

#endif /* GPURX_IPFIX_UDP_H */
