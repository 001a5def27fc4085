/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libgpugen: the traffic generator's core. A generator holds a set of
 * streams (templates from a spec string or a pcap file, frame sizes,
 * field-engine variables, stamps) and builds any of its packets by
 * number, on the CPU (the reference) or on a GPU into mbuf data buffers
 * given by the caller. Stream spec syntax: doc/gpu_tx.md.
 *
 * Packets are numbered globally from 0: streams take turns, `weight`
 * packets each per round, in the order they were added. Packet n is a
 * pure function of the streams and n (and the stamp time), so a GPU
 * thread builds any packet byte-identical to the CPU.
 *
 * Errors: negative errno, with a message naming what and why in the
 * caller's buffer (err, errlen; err may be NULL).
 */
#ifndef GPUGEN_H
#define GPUGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; gpugen_version() gives the library's, which
 * a program loading it at run time compares with GPUGEN_VERSION. */
#define GPUGEN_VERSION_MAJOR 0
#define GPUGEN_VERSION_MINOR 1
#define GPUGEN_VERSION_PATCH 0
#define GPUGEN_VERSION "0.1.0"
/* One number that orders versions: (major << 16) | (minor << 8) | patch. */
#define GPUGEN_VERSION_NUM ((GPUGEN_VERSION_MAJOR << 16) | \
	(GPUGEN_VERSION_MINOR << 8) | GPUGEN_VERSION_PATCH)

/* "MAJOR.MINOR.PATCH" of the library linked or loaded. */
const char *gpugen_version(void);

struct gpugen;

/*
 * The longest frame a stream may make, FCS included as in a spec's
 * size= (9212 bytes built, the port adds the FCS): the jumbo frame
 * switches and NICs commonly take. gpugen_conf.data_room limits further.
 */
#define GPUGEN_FRAME_MAX 9216

struct gpugen_conf {
	uint32_t data_room;	/* bytes a frame may take (mbuf data room
				 * less headroom); 0: 2048; more than
				 * GPUGEN_FRAME_MAX - 4 counts as that */
	uint32_t burst;		/* packets per burst, for per-burst
				 * variables; 0: 32 */
	uint64_t seed;		/* default seed of every stream */
	/*
	 * Non-zero: leave the IPv4 header, UDP and TCP checksums to the
	 * port's TX checksum offload. Frames are built as DPDK's
	 * RTE_MBUF_F_TX_IP_CKSUM / _UDP_CKSUM / _TCP_CKSUM expect them (IPv4
	 * checksum 0, the pseudo-header's sum in the L4 field); the mbuf
	 * flags and lengths each stream needs are in its gpugen_stream_info.
	 * ICMP checksums stay computed (no port offloads them).
	 */
	int csum_offload;
};

/* gpugen_stream_info.csum_offload: what the port must compute. */
#define GPUGEN_CSUM_IP4 1u	/* IPv4 header checksum */
#define GPUGEN_CSUM_UDP 2u	/* UDP checksum (IPv4 or IPv6) */
#define GPUGEN_CSUM_TCP 4u	/* TCP checksum (IPv4 or IPv6) */

struct gpugen_stream_info {
	uint32_t id;		/* stream id (in stamps) */
	uint32_t weight;
	uint32_t len_min, len_max;	/* frame bytes without FCS */
	uint32_t stamp_off;	/* 0: not stamped */
	uint32_t n_vars;
	const char *desc;	/* the spec or pcap it came from */
	/* With gpugen_conf.csum_offload: GPUGEN_CSUM_* of every frame of
	 * the stream (0 without), and the mbuf's l2_len (Ethernet and VLAN
	 * tags) and l3_len (IP header with IPv6 extension headers). */
	uint32_t csum_offload;
	uint8_t ip_version;	/* 4, 6, or 0: not IP */
	uint16_t l2_len, l3_len;
};

int gpugen_create(struct gpugen **g, const struct gpugen_conf *conf);
void gpugen_free(struct gpugen *g);

/* One stream from a spec string (several for "imix"). Returns the number
 * of streams added (>= 1) or -errno; nothing is added on error. */
int gpugen_add_spec(struct gpugen *g, const char *spec, char *err,
		size_t errlen);

/* ---- Streams as C structs ----------------------------------------- */
/*
 * What a spec string says, as structs a program fills from its own
 * stream model: gpugen_add_spec() parses a spec into these and adds it
 * through gpugen_add_stream(), so both make the same frames. Start from
 * gpugen_stream_def_init() (a spec's defaults), then set what differs.
 */

#define GPUGEN_MAX_VARS 16	/* variables and tuples per stream */

/* gpugen_stream_def.proto */
#define GPUGEN_PROTO_TCP 6
#define GPUGEN_PROTO_UDP 17

/* gpugen_stream_def.size_mode (one size when size_min == size_max) */
#define GPUGEN_SIZES_FIXED 0	/* size_max alone */
#define GPUGEN_SIZES_STEP 1	/* min, min + step, ... up to max, again */
#define GPUGEN_SIZES_RANDOM 2	/* uniform in [min, max] */

/* gpugen_var_def.op */
#define GPUGEN_VAR_INC 0
#define GPUGEN_VAR_DEC 1
#define GPUGEN_VAR_RANDOM 2

/*
 * A field a variable writes: by name (the spec's FIELD: "ipv4.src",
 * "udp.sport", ..., doc/gpu_tx.md, or "@OFFSET[/BYTES]"), or with name
 * NULL at byte offset off of the frame, width 1, 2, 4 or 8 bytes.
 */
struct gpugen_field_ref {
	const char *name;
	uint32_t off;
	uint32_t width;
};

/* var=FIELD:OP:MIN-MAX[:step=N][:init=V][:burst], or with tuple set,
 * tuple=IPFIELD:PORTFIELD:IPMIN-IPMAX:PMIN-PMAX[:limit=N][:burst]. */
struct gpugen_var_def {
	int tuple;
	struct gpugen_field_ref field;	/* a tuple's address field */
	uint32_t op;			/* GPUGEN_VAR_*; not for tuples */
	uint64_t min, max;		/* a tuple's: IPv4 addresses, host order */
	uint64_t step;			/* >= 1 */
	int has_init;
	uint64_t init;			/* the first value (else min, max for dec) */
	/* Tuples: */
	struct gpugen_field_ref port_field;
	uint16_t port_min, port_max;
	uint64_t limit;			/* 0: none */
	int burst;			/* one value per burst (both kinds) */
};

struct gpugen_stream_def {
	/* Ethernet: addresses, up to 2 VLAN tags (two: QinQ, 802.1ad
	 * outer), the priority of every tag. */
	uint8_t eth_dst[6], eth_src[6];
	uint32_t n_vlans;
	uint16_t vid[2];		/* 0 .. 4095, outer first */
	uint8_t pcp;			/* 0 .. 7 */
	/* IP: version 4 or 6, addresses in network order (IPv4: the
	 * first 4 bytes). */
	uint8_t ip_version;
	uint8_t src[16], dst[16];
	uint8_t ttl;			/* 0: 64 */
	uint8_t tos;
	uint8_t proto;			/* GPUGEN_PROTO_UDP or _TCP */
	uint16_t sport, dport;
	uint8_t tcp_flags;		/* TCP's flags byte */
	uint8_t payload_byte;		/* what fills the payload */
	/* Frame sizes, with the FCS the port adds (as in size=). */
	uint32_t size_min, size_max;
	uint32_t size_step;		/* GPUGEN_SIZES_STEP: 1 .. 65535 (0 by
					 * default: set it with the mode) */
	uint32_t size_mode;		/* GPUGEN_SIZES_* */
	int stamp;			/* 1: stamped (a spec's default), 0 not */
	uint64_t seed;
	uint32_t weight;		/* packets per round, 1 .. 1000000 */
	uint32_t n_vars;
	struct gpugen_var_def vars[GPUGEN_MAX_VARS];
	const char *desc;		/* gpugen_stream_info()'s; NULL: "struct" */
};

/*
 * d set to what a spec of ip_version (4, 6) and proto (GPUGEN_PROTO_*)
 * gets by default: 02:00:00:00:00:02 from ...:01, 10.0.0.1 to 10.0.0.2
 * (2001:db8::1 to ::2), ports 1024, TCP flags ACK, 128-byte frames,
 * stamped, g's seed, weight 1, no variables. 0, or -EINVAL.
 */
int gpugen_stream_def_init(const struct gpugen *g, struct gpugen_stream_def *d,
		uint8_t ip_version, uint8_t proto);

/* One stream from d, checked as a spec is. Returns 1 (the streams added)
 * or -errno with err said why; nothing is added on error. */
int gpugen_add_stream(struct gpugen *g, const struct gpugen_stream_def *d,
		char *err, size_t errlen);

uint32_t gpugen_n_streams(const struct gpugen *g);
int gpugen_stream_info(const struct gpugen *g, uint32_t s,
		struct gpugen_stream_info *info);
/* The stream global packet n belongs to. */
uint32_t gpugen_stream_of(const struct gpugen *g, uint64_t n);
/* Every frame's length (no FCS) when all streams make one and the same,
 * else 0: a sender can then skip gpugen_len() per packet. */
uint32_t gpugen_fixed_len(const struct gpugen *g);
/* The longest frame any stream makes (no FCS). */
uint32_t gpugen_max_len(const struct gpugen *g);

/* Length (no FCS) of global packet n, without building it. */
uint32_t gpugen_len(const struct gpugen *g, uint64_t n);

/*
 * The CPU build: global packet n into buf (bufsz bytes), stamped with
 * tx_ns. Returns its length, or 0 when bufsz is too small. *stream, *idx
 * (may be NULL): which stream and its packet index there.
 */
uint32_t gpugen_build_cpu(const struct gpugen *g, uint64_t n, uint64_t tx_ns,
		uint8_t *buf, uint32_t bufsz, uint32_t *stream, uint64_t *idx);

/*
 * The table the per-packet code reads (gpugen_core.h: struct gpugen_table
 * followed by the templates), and its size in bytes: what a GPU build
 * copies to the device.
 */
const void *gpugen_table(const struct gpugen *g, size_t *len);

/* ---- GPU build for DPDK programs (libgpugen-dpdk) ------------------ */
/*
 * Over gpudev memory and mbufs, for programs with DPDK (pkg-config
 * libgpugen-dpdk; gpugen_fill.h: the persistent fill). A program with no
 * DPDK builds into its own CUDA buffers through libgpugen-cuda instead
 * (gpugen_frames.h).
 */

enum gpugen_gpu_mem {
	GPUGEN_TABLE_DEVICE,	/* the table in GPU memory */
	GPUGEN_TABLE_HOST,	/* the table in registered host memory */
};

struct gpugen_gpu;

/*
 * Ready g for builds on gpudev device gpu_id, for bursts of up to
 * max_burst packets: the table is copied (GPU memory or host memory
 * registered with the GPU), and an address array is registered for the
 * kernel to read. The generator's streams must not change afterwards.
 */
int gpugen_gpu_open(struct gpugen *g, int16_t gpu_id, uint32_t max_burst,
		enum gpugen_gpu_mem where, struct gpugen_gpu **gg, char *err,
		size_t errlen);
void gpugen_gpu_close(struct gpugen_gpu *gg);

/* The array to fill with the data address (GPU-usable) of each packet
 * of the next burst. */
void **gpugen_gpu_addrs(struct gpugen_gpu *gg);

/*
 * Build global packets first .. first + n - 1 into the addresses set in
 * gpugen_gpu_addrs(), stamped tx_ns; returns once they are written and
 * visible to the CPU and to a NIC reading that memory. 0 or -errno.
 */
int gpugen_gpu_build(struct gpugen_gpu *gg, uint64_t first, uint32_t n,
		uint64_t tx_ns, char *err, size_t errlen);

/*
 * Build global packets first .. first + n - 1 into a ring of frames:
 * packet p into slot p % slots, stride bytes each (at least
 * gpugen_max_len()), of ring, GPU-usable memory (rte_gpu_mem_alloc, or
 * host memory registered with rte_gpu_mem_register), stamped tx_ns. No
 * burst limit up to the ring's size: for a producer that fills a ring
 * ahead, and for measuring the build rate. n beyond slots is refused
 * (-EINVAL): two packets of one build would write one slot at once, in
 * no defined order, and the slot could hold pieces of both; queue builds
 * of at most slots packets instead (each build starts after the one
 * queued before it). Returns once the build is queued, before the frames
 * are written; gpugen_gpu_wait() waits for every queued build. The ring
 * must not be freed before. 0 or -errno.
 */
int gpugen_gpu_build_ring(struct gpugen_gpu *gg, void *ring, uint32_t stride,
		uint32_t slots, uint64_t first, uint32_t n, uint64_t tx_ns,
		char *err, size_t errlen);

/* Returns once every build queued on gg is written and visible to the
 * CPU and to a NIC reading that memory. 0 or -errno. */
int gpugen_gpu_wait(struct gpugen_gpu *gg, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPUGEN_H */
