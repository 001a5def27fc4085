/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include "capture.h"
#include "dpdk_compat.h"
#include "gpuapp_clock.h"
#include "gpuapp_io.h"
#include "log.h"

/*
 * pcapng: rte_pcapng writes the section and interface blocks; the packet
 * blocks are written here. DPDK 22.11's rte_pcapng_copy() builds each
 * Enhanced Packet Block in one mbuf whose data room is 16 bits, so it
 * cannot hold a packet over about 64 KiB, and tcpdump's default snaplen
 * (262144) keeps whole 64 KiB+ loopback and GRO frames.
 */
#define EPB_TYPE 6u
#define EPB_OPT_FLAGS 2u
#define EPB_OPT_QUEUE 6u
#define EPB_FLAG_INBOUND 1u

struct epb_hdr {
	uint32_t type;
	uint32_t len;		/* whole block, trailer included */
	uint32_t iface;		/* index of the port's interface block */
	uint32_t ts_hi;
	uint32_t ts_lo;		/* ns: rte_pcapng's if_tsresol is 9 */
	uint32_t caplen;
	uint32_t wirelen;
};

/* Options after the padded data, then the block length again. */
struct epb_trailer {
	uint16_t flags_code, flags_len;
	uint32_t flags;
	uint16_t queue_code, queue_len;
	uint32_t queue;
	uint16_t end_code, end_len;
	uint32_t len;
};

/* The header's blocks: section, interface and its if_filter option. */
#define PCAPNG_SHB_TYPE 0x0a0d0d0au
#define PCAPNG_IDB_TYPE 1u
#define PCAPNG_IDB_OPT_FILTER 11u

/* Interface Statistics Block and its options (pcapng 4.6). */
#define ISB_TYPE 5u
#define ISB_OPT_STARTTIME 2u
#define ISB_OPT_ENDTIME 3u
#define ISB_OPT_IFRECV 4u
#define ISB_OPT_IFDROP 5u
#define ISB_OPT_FILTERACCEPT 6u
#define ISB_OPT_OSDROP 7u
#define ISB_OPT_USRDELIV 8u
#define ISB_MAX_BYTES (20 + 7 * 12 + 4 + 4)

#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_LINKTYPE_ETHERNET 1u

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_nsec;
	uint32_t incl_len;
	uint32_t orig_len;
};

/* The largest block fits a chunk whatever the snaplen. */
_Static_assert(sizeof(struct epb_hdr) + GPURX_DEFAULT_SNAPLEN +
	sizeof(struct epb_trailer) <= GPURX_CAPTURE_CHUNK_BYTES,
	"a chunk holds the largest packet block");

/* The test build (tests/gpu_rx/test_capture.c) swaps in a pwrite() that fails
 * or stalls on demand. */
#ifdef GPURX_CAPTURE_PWRITE
ssize_t GPURX_CAPTURE_PWRITE(int fd, const void *buf, size_t n, off_t off);
#else
#define GPURX_CAPTURE_PWRITE pwrite
#endif

#define OFF_NONE UINT64_MAX
/* Chunks a queue handed on that are not counted yet (see settle()). */
#define PENDING_MAX 64

/*
 * Why a failed write cuts the file back rather than patching the hole:
 * a chunk that failed (ENOSPC, EFBIG, EIO; a short write is retried
 * first) leaves its reserved range empty, partly written or beyond the
 * end, while chunks of other queues reserved after it may already be in
 * the file. Filling the range with a block readers skip would need space
 * the file system may not have, and pcap has no such block at all. So the
 * first failure stops the capture (later packets are counted as capture
 * drops, nothing waits), and close() truncates the file at the lowest
 * failed chunk's offset: shrinking needs no space, and what stays is the
 * header and whole blocks only. Packets of chunks past that offset,
 * written or not, are counted as drops; to count exactly, a queue counts
 * a written chunk as captured only once no chunk before it is still being
 * written (settle()), so every counter is final when published.
 * A process killed outright runs no close(): a reserved chunk not yet
 * written then stays zeros between written ones, where readers stop.
 * Serializing the writes would avoid that at the cost of the parallel
 * writes this design is for; doc/gpu_rx.md says so, and points to %q.
 *
 * Writer threads (gpurx_capture_start_writers()) change who writes, not
 * what: the lcore still reserves each chunk's range in the order it
 * fills them, so the file's layout and the rules above are the same; the
 * chunk then waits in the queue's record ring until its writer has
 * written it, and is settled from there.
 */
struct chunk_rec {
	/* Where the chunk went: set before the record is handed on (a
	 * range the lcore reserved) or, for a file written under its lock,
	 * by whoever wrote it. Read by other queues' settle(). */
	uint64_t off;
	uint64_t bytes;		/* packet bytes (caplen) */
	uint8_t *buf;		/* its blocks, len bytes */
	uint32_t len;
	uint32_t pkts;
	uint32_t seq;		/* number of the file it went to (rotation) */
	int rc;			/* the write's result: 0 or -errno */
};

/*
 * A queue's chunks, numbered from 0, go through rec[n % PENDING_MAX]:
 * the lcore fills chunk `posted` and hands it on by publishing posted + 1;
 * whoever writes it (the lcore itself, or the queue's writer thread)
 * publishes done; the lcore counts chunks from `head` once settled. So
 * head <= done <= posted, and the records between done and posted are the
 * queue's chunks not yet written: one producer and one consumer each way,
 * no lock.
 */
struct cap_queue {
	/* Owner (the queue's lcore) only. */
	uint8_t *buf;		/* the chunk being filled */
	uint32_t len;
	uint32_t pkts;		/* in buf */
	uint64_t bytes;		/* packet bytes in buf */
	uint32_t seen_gen;
	uint32_t head;		/* first chunk not settled */
	struct gpurx_qstats *qs;
	struct cap_file *f;	/* the file its chunks go to */
	uint32_t iface;		/* pcapng interface of its port */
	uint32_t qid;		/* its RX queue of that port */
	uint16_t pidx;		/* its port's index (set_ports) */
	uint8_t *pool[GPURX_CAPTURE_POOL];	/* chunk n's buffer: pool[n % npool] */
	uint32_t npool;
	struct chunk_rec rec[PENDING_MAX];
	/* Written by the lcore, read by its writer and the other queues. */
	uint32_t posted __rte_cache_aligned;
	/* A lower bound of the offset of the chunk whose range the lcore is
	 * reserving, OFF_NONE when none: the range is taken before the
	 * record holding it is handed on. */
	uint64_t resv_off;
	/* Written by whoever writes the chunks: their own line. */
	uint32_t done __rte_cache_aligned;
} __rte_cache_aligned;

/*
 * One output file: the capture's only one, or with %q in the path one
 * per queue, which only that queue's lcore writes. A shared file's writes
 * serialize in the kernel on its inode (2.7 GB/s at most on the H100
 * host whatever the number of queues); files of their own do not.
 */
struct cap_file {
	int fd;
	char *path;
	bool created;		/* a regular file this run opened: removed if
				 * the capture cannot start */
	bool stream;		/* standard output (--write -): written in
				 * order, one chunk at a time, under lock */
	pthread_mutex_t lock;
	/* Next free byte of the file: one atomic add per chunk, any queue
	 * writing it. */
	uint64_t end __rte_cache_aligned;
	/* Read by every packet; written on the first failure. */
	uint64_t fail_off __rte_cache_aligned;	/* lowest offset of a failed
						 * chunk, OFF_NONE */
	int fail_said;		/* the first failure was reported */
	int fail_errno;
	/*
	 * Rotation: the file's name split at its extension, the number of
	 * the file being written (from 1; read by settle()), when it is due
	 * by time (CLOCK_MONOTONIC_COARSE ns, read by every poll) and the
	 * name times of the last rot_files files, file n at (n - 1) %
	 * rot_files, so the oldest can be removed. Changed under lock.
	 */
	char *base;
	size_t ext_at;
	uint32_t seq;
	uint64_t deadline;
	time_t *ring;
} __rte_cache_aligned;

struct gpurx_capture {
	enum gpurx_format fmt;
	uint32_t snaplen;
	uint32_t iface;		/* pcapng interface of the port */
	uint16_t n_ports;	/* 1, or as gpurx_capture_set_ports() */
	uint8_t *hdr;		/* every file's header */
	uint32_t hdr_len;
	/* Rotation (gpurx_capture_rotate), all 0 without: a new file once
	 * one would pass rot_size bytes, every rot_ns ns; keep rot_files. */
	bool rotating;
	bool rot_times;
	uint32_t rot_files;
	uint64_t rot_size;
	uint32_t rot_tail;	/* bytes a file ends with: its ISB at most */
	uint64_t rot_ns;
	uint64_t start_ns;	/* real time at open, for the rotated files'
				 * statistics blocks */
	uint16_t nq;
	uint16_t nfiles;	/* 1, or nq with a file per queue */
	struct cap_file *files;
	/* Writer threads, 0: the lcores write their chunks themselves.
	 * Writer k writes the chunks of queues k, k + nwriters, ... */
	uint16_t nwriters;
	pthread_t *writers;
	/* Set once by close(): the writers write what is handed on, then
	 * return. */
	uint32_t writers_stop;
	/* Read by every poll; written once a second. */
	uint32_t flush_gen __rte_cache_aligned;
	struct cap_queue q[];
};

static void
set_err(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err != NULL && len > 0)
		snprintf(err, len, fmt, a, b);
}

/* Writes all of buf at off, retrying short writes. 0 or -errno. */
static int
pwrite_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = GPURX_CAPTURE_PWRITE(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;	/* no progress: as good as full */
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int rotate(struct gpurx_capture *c, struct cap_file *f);
static int rot_name(const struct cap_file *f, uint32_t seq, time_t t,
		char *out, size_t len);
static void fail_at(struct cap_file *f, uint64_t off, uint32_t len, int err);

/* Now, for rotation by time: cheap, a few ms coarse. */
static inline uint64_t
coarse_ns(void)
{
	return gpuapp_clock_ns(CLOCK_MONOTONIC_COARSE);
}

/* f, holding packets, would pass the size limit with len more bytes
 * (and the statistics block it ends with). */
static inline bool
size_due(const struct gpurx_capture *c, const struct cap_file *f,
		uint64_t len)
{
	return c->rot_size != 0 && f->end > c->hdr_len &&
		f->end + len + c->rot_tail > c->rot_size;
}

static inline bool
time_due(const struct gpurx_capture *c, const struct cap_file *f)
{
	return c->rot_ns != 0 &&
		coarse_ns() >= __atomic_load_n(&f->deadline, __ATOMIC_RELAXED);
}

/* A stream and a rotating file take their chunks one at a time, under
 * the file's lock; any other file at ranges reserved in parallel. */
static inline bool
locked_file(const struct gpurx_capture *c, const struct cap_file *f)
{
	return f->stream || c->rotating;
}

/*
 * len bytes to the end of a locked_file() f; *off: where they go, *seq: in
 * which file of a rotation. A stream (a pipe) takes whole chunks one at a
 * time, so a reader never sees two queues' blocks interleaved; a rotating
 * file too, so that every write has ended when it rotates: a chunk that
 * would pass the size limit goes to the next file, one written when the
 * time is up ends its file. A file that stopped takes nothing more
 * (-ECANCELED). 0 or -errno.
 */
static int
file_put(struct gpurx_capture *c, struct cap_file *f, const uint8_t *buf,
		uint32_t len, uint64_t *off, uint32_t *seq)
{
	bool live;
	int rc;

	pthread_mutex_lock(&f->lock);
	/* A file that failed stops the capture: it does not rotate, and
	 * nothing goes after the failed write. */
	live = __atomic_load_n(&f->fail_off, __ATOMIC_SEQ_CST) == OFF_NONE;
	if (!live) {
		*off = f->end;
		*seq = f->seq;
		pthread_mutex_unlock(&f->lock);
		return -ECANCELED;
	}
	if (size_due(c, f, len)) {
		rc = rotate(c, f);
		if (rc != 0) {
			*off = f->end;
			*seq = f->seq;
			fail_at(f, *off, len, -rc);
			pthread_mutex_unlock(&f->lock);
			return rc;
		}
	}
	*off = f->end;
	*seq = f->seq;
	rc = f->stream ? gpuapp_write_all(f->fd, buf, len) :
		pwrite_all(f->fd, buf, len, *off);
	/* A chunk the reader did not take whole leaves the stream cut
	 * there: nothing later goes after it. */
	__atomic_store_n(&f->end, f->end + len, __ATOMIC_SEQ_CST);
	/* Stopped before the lock is let go: no other queue may rotate the
	 * file this offset is of. */
	if (rc != 0)
		fail_at(f, *off, len, -rc);
	if (rc == 0 && time_due(c, f)) {
		int rrc = rotate(c, f);

		/* The chunk is in the file, the capture stops after it. */
		if (rrc != 0)
			fail_at(f, f->end, 0, -rrc);
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

/*
 * Creates (truncates) f's file with flags. A regular file is marked for
 * removal should the capture not start; a device such as /dev/null is
 * written but never removed, and has no offsets to keep.
 */
static int
create_file(struct cap_file *f, int flags, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(f->path, flags | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		set_err(err, errlen, "cannot create %s: %s", f->path,
			strerror(errno));
		return -1;
	}
	f->created = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	return fd;
}

/* The pcap file header every file of the capture starts with. */
static int
make_pcap_header(struct gpurx_capture *c, char *err, size_t errlen)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NS,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = c->snaplen,
		.linktype = PCAP_LINKTYPE_ETHERNET,
	};

	c->hdr = malloc(sizeof(h));
	if (c->hdr == NULL) {
		set_err(err, errlen, "%s%s", "out of memory", "");
		return -1;
	}
	memcpy(c->hdr, &h, sizeof(h));
	c->hdr_len = sizeof(h);
	return 0;
}

/*
 * One pcapng option at p (code, len bytes of v then v2), padded with
 * zeros to 32 bits. Returns the bytes written.
 */
static uint32_t
put_option(uint8_t *p, uint16_t code, const void *v, uint16_t vlen,
		const void *v2, uint16_t v2len)
{
	uint16_t h[2] = { code, (uint16_t)(vlen + v2len) };
	uint32_t padded = RTE_ALIGN_CEIL((uint32_t)vlen + v2len, 4);

	memcpy(p, h, sizeof(h));
	memcpy(p + 4, v, vlen);
	if (v2len != 0)
		memcpy(p + 4 + vlen, v2, v2len);
	memset(p + 4 + vlen + v2len, 0, padded - vlen - v2len);
	return 4 + padded;
}

/*
 * The header rte_pcapng_fdopen() wrote (in, len bytes), as the capture
 * writes it: into *out (malloc'd), *out_len bytes.
 *
 * DPDK 22.11 builds the interface blocks in uninitialized stack memory
 * and leaves option padding as it found it: stack bytes leak into the
 * file and two runs never produce the same bytes, so each option's
 * padding is zeroed. It also writes each interface's snaplen as 0 ("no
 * limit"): the capture's own goes there, so that readers know packets
 * were cut. And it has no if_filter: each interface block gets the
 * filter (a libpcap expression) there, where readers look for it
 * (capinfos -I, Wireshark's capture file properties).
 * 0, or -EINVAL for a block it cannot walk, -ENOMEM.
 */
static int
pcapng_fix_header(const uint8_t *in, uint32_t len, uint32_t snaplen,
		const char *filter, uint8_t **out, uint32_t *out_len)
{
	const uint8_t libpcap_syntax = 0;	/* if_filter's first byte */
	size_t flen = filter != NULL ? strlen(filter) : 0;
	uint32_t fopt = flen != 0 ? 4 + RTE_ALIGN_CEIL(1 + (uint32_t)flen, 4) :
		0;
	uint32_t pos = 0, o = 0;
	uint8_t *b;

	/* An option holds 65535 bytes: make_pcapng_header() says so. */
	if (flen >= UINT16_MAX)
		return -EINVAL;
	/* Each block at least 12 bytes, each gaining the option and an
	 * end of options at most. */
	b = malloc((size_t)len + (len / 12 + 1) * ((size_t)fopt + 4));
	if (b == NULL)
		return -ENOMEM;
	while (pos < len) {
		uint32_t type, blen, fixed, opt, oend, start = o;

		if (len - pos < 12)
			goto bad;
		memcpy(&type, in + pos, 4);
		memcpy(&blen, in + pos + 4, 4);
		if (blen < 12 || blen > len - pos || blen % 4 != 0)
			goto bad;
		/* Options follow the fixed part: 24 bytes SHB, 16 IDB. */
		fixed = type == PCAPNG_SHB_TYPE ? 24 : type == PCAPNG_IDB_TYPE ?
			16 : blen - 4;
		if (fixed > blen - 4)
			goto bad;
		memcpy(b + o, in + pos, fixed);
		if (type == PCAPNG_IDB_TYPE)
			memcpy(b + o + 12, &snaplen, 4);
		o += fixed;
		opt = pos + fixed;
		oend = pos + blen - 4;
		while (opt + 4 <= oend) {
			uint16_t code, olen;
			uint32_t padded;

			memcpy(&code, in + opt, 2);
			memcpy(&olen, in + opt + 2, 2);
			padded = RTE_ALIGN_CEIL((uint32_t)olen, 4);
			if (code == 0 || opt + 4 + padded > oend)
				break;
			o += put_option(b + o, code, in + opt + 4, olen, NULL, 0);
			opt += 4 + padded;
		}
		if (type == PCAPNG_IDB_TYPE && fopt != 0) {
			o += put_option(b + o, PCAPNG_IDB_OPT_FILTER,
				&libpcap_syntax, 1, filter, (uint16_t)flen);
			/* opt_endofopt */
			memset(b + o, 0, 4);
			o += 4;
		} else if (opt < oend) {
			/* opt_endofopt, as it was */
			memset(b + o, 0, oend - opt);
			o += oend - opt;
		}
		o += 4;
		blen = o - start;
		memcpy(b + start + 4, &blen, 4);
		memcpy(b + o - 4, &blen, 4);
		pos = oend + 4;
	}
	*out = b;
	*out_len = o;
	return 0;
bad:
	free(b);
	return -EINVAL;
}

/* Interface index the pcapng header gave the port: ports in order. */
static uint32_t
pcapng_iface_of(uint16_t port)
{
	uint32_t index = 0;
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p) {
		if (p == port)
			break;
		index++;
	}
	return index;
}

/*
 * The pcapng header every file of the capture starts with (the first
 * file's name in messages): made once, in memory, by rte_pcapng, so
 * that a rotated file costs its lcore no call into ethdev.
 */
static int
make_pcapng_header(struct gpurx_capture *c, uint16_t port,
		const char *filter, const char *path, char *err, size_t errlen)
{
	char osname[256], appname[64];
	uint8_t *buf = NULL;
	struct utsname u;
	rte_pcapng_t *png;
	int fd, hdr_fd, rc = -1;
	off_t end;

	if (filter != NULL && strlen(filter) >= UINT16_MAX) {
		set_err(err, errlen, "the filter of %s is longer than a pcapng "
			"if_filter option holds (%s)", path, "65534 bytes");
		return -1;
	}
	fd = memfd_create("gpurx-pcapng-header", MFD_CLOEXEC);
	if (fd < 0) {
		set_err(err, errlen, "memfd_create for %s: %s", path,
			strerror(errno));
		return -1;
	}
	/* rte_pcapng_close() closes the descriptor it was given. */
	hdr_fd = dup(fd);
	if (hdr_fd < 0) {
		set_err(err, errlen, "dup(%s): %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (uname(&u) == 0)
		snprintf(osname, sizeof(osname), "%s %s", u.sysname, u.release);
	else
		snprintf(osname, sizeof(osname), "unknown");
	snprintf(appname, sizeof(appname), "dpdk-gpu-rx (%s)", rte_version());
	/* DPDK 22.11's rte_pcapng_fdopen() leaves rte_errno as it was when
	 * its header write fails: the write's errno is the reason. The
	 * filter goes into if_filter (pcapng_fix_header()), not a comment. */
	errno = 0;
	rte_errno = 0;
	png = rte_pcapng_fdopen(hdr_fd, osname, NULL, appname, NULL);
	if (png == NULL) {
		set_err(err, errlen, "cannot write the pcapng header of %s: %s",
			path, errno != 0 ? strerror(errno) : rte_errno != 0 ?
			rte_strerror(rte_errno) : "rte_pcapng_fdopen failed");
		close(hdr_fd);
		close(fd);
		return -1;
	}
	/* 22.11's fdopen wrote the interface blocks itself. */
	if (gpu_compat_pcapng_add_ports(png) != 0) {
		set_err(err, errlen, "cannot write the pcapng interfaces of %s: %s",
			path, strerror(errno));
		rte_pcapng_close(png);
		close(fd);
		return -1;
	}
	rte_pcapng_close(png);
	/* Both descriptors shared one offset: fd is at the header's end. */
	end = lseek(fd, 0, SEEK_CUR);
	if (end <= 0 || end > (1 << 20) ||
			(buf = malloc((size_t)end)) == NULL ||
			pread(fd, buf, (size_t)end, 0) != end) {
		set_err(err, errlen, "cannot make the pcapng header of %s: %s",
			path, strerror(errno != 0 ? errno : EIO));
		goto out;
	}
	rc = pcapng_fix_header(buf, (uint32_t)end, c->snaplen, filter,
		&c->hdr, &c->hdr_len);
	if (rc != 0) {
		set_err(err, errlen, "cannot make the pcapng header of %s: %s",
			path, strerror(-rc));
		rc = -1;
		goto out;
	}
	c->iface = pcapng_iface_of(port);
out:
	free(buf);
	close(fd);
	return rc;
}

int
gpurx_capture_set_ports(struct gpurx_capture *c, const uint16_t *ports,
		uint16_t n_ports, const uint8_t *q_port, const uint16_t *q_qid)
{
	if (n_ports == 0 || n_ports > c->nq)
		return -EINVAL;
	for (uint16_t q = 0; q < c->nq; q++)
		if (q_port[q] >= n_ports)
			return -EINVAL;
	c->n_ports = n_ports;
	/* Every file's statistics blocks, one per port, fit its tail. */
	if (c->rotating && c->fmt == GPURX_FMT_PCAPNG)
		c->rot_tail = (uint32_t)n_ports * ISB_MAX_BYTES;
	for (uint16_t q = 0; q < c->nq; q++) {
		c->q[q].pidx = q_port[q];
		c->q[q].qid = q_qid[q];
		/* The header lists every probed port: pcapng's pick. */
		c->q[q].iface = c->fmt == GPURX_FMT_PCAPNG ?
			pcapng_iface_of(ports[q_port[q]]) : 0;
	}
	return 0;
}

/* Creates file f (a regular file or a device; standard output already
 * open) and writes the capture's header. */
static int
write_header(struct gpurx_capture *c, struct cap_file *f, char *err,
		size_t errlen)
{
	int rc;

	if (!f->stream) {
		f->fd = create_file(f, O_WRONLY, err, errlen);
		if (f->fd < 0)
			return -1;
	}
	rc = f->stream ? gpuapp_write_all(f->fd, c->hdr, c->hdr_len) :
		pwrite_all(f->fd, c->hdr, c->hdr_len, 0);
	if (rc != 0) {
		set_err(err, errlen, "cannot write %s: %s", f->path,
			strerror(-rc));
		return -1;
	}
	f->end = c->hdr_len;
	return 0;
}

static void
free_capture(struct gpurx_capture *c)
{
	for (uint16_t i = 0; c->files != NULL && i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].path);
		free(c->files[i].base);
		free(c->files[i].ring);
		pthread_mutex_destroy(&c->files[i].lock);
	}
	free(c->files);
	free(c->hdr);
	for (uint16_t q = 0; q < c->nq; q++)
		for (uint32_t i = 0; i < c->q[q].npool; i++)
			free(c->q[q].pool[i]);
	free(c->writers);
	free(c);
}

int
gpurx_capture_path(const char *pattern, int queue, char *out, size_t len)
{
	size_t n = 0;
	int per_queue = 0;

	for (const char *p = pattern; *p != '\0'; p++) {
		char num[12];
		const char *put = num;

		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else if (p[1] == 'q') {
			per_queue = 1;
			snprintf(num, sizeof(num), "%d", queue < 0 ? 0 : queue);
			p++;
		} else if (p[1] == '%') {
			put = "%";
			p++;
		} else {
			return -EINVAL;
		}
		for (; *put != '\0'; put++) {
			if (out != NULL && n + 1 < len)
				out[n] = *put;
			n++;
		}
	}
	if (out != NULL && len > 0)
		out[RTE_MIN(n, len - 1)] = '\0';
	if (n >= PATH_MAX || (out != NULL && n >= len))
		return -ENAMETOOLONG;
	return per_queue;
}

int
gpurx_capture_path_check(const char *pattern, char *err, size_t errlen)
{
	int rc = gpurx_capture_path(pattern, GPURX_MAX_QUEUES - 1, NULL, 0);

	/* Standard output, not a file named "-". */
	if (strcmp(pattern, "-") == 0)
		return 0;
	if (rc == -EINVAL)
		set_err(err, errlen, "bad file name pattern '%s': a %% is "
			"followed by something other than q (the RX queue's "
			"number) or %% (a %% sign)%s", pattern, "");
	else if (rc < 0)
		set_err(err, errlen, "file name '%s' too long%s", pattern, "");
	return rc;
}

/*
 * --write -: the capture's stream is standard output as it was at start,
 * and the program's own output (messages, summary) goes to stderr from
 * then on, as with tcpdump -w -. Before EAL starts, whose messages go to
 * stdout. 0 or -errno.
 */
static int cap_stdout_fd = -1;

int
gpurx_capture_take_stdout(void)
{
	int fd;

	if (cap_stdout_fd >= 0)
		return 0;
	fflush(stdout);
	fd = dup(STDOUT_FILENO);
	if (fd < 0)
		return -errno;
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	cap_stdout_fd = fd;
	return 0;
}

/* Creates file f (its path set) with the capture's header. */
static int
open_file(struct gpurx_capture *c, struct cap_file *f, char *err,
		size_t errlen)
{
	struct stat st;
	int rc;

	if (strcmp(f->path, "-") == 0) {
		rc = gpurx_capture_take_stdout();
		f->fd = rc == 0 ? dup(cap_stdout_fd) : -1;
		if (f->fd < 0) {
			set_err(err, errlen, "standard output: %s%s",
				strerror(rc != 0 ? -rc : errno), "");
			return -1;
		}
		f->stream = true;
		free(f->path);
		f->path = strdup("standard output");
		if (f->path == NULL) {
			set_err(err, errlen, "%s%s", "out of memory", "");
			return -1;
		}
		return write_header(c, f, err, errlen);
	}

	/* Not opened: opening a FIFO for writing waits for a reader. */
	if (stat(f->path, &st) == 0 && (S_ISFIFO(st.st_mode) ||
			S_ISSOCK(st.st_mode) || S_ISDIR(st.st_mode))) {
		set_err(err, errlen, "%s is not a file: the RX lcores write the "
			"capture in chunks at their own offsets, so it goes to a "
			"regular file (%s)", f->path, "on tmpfs to be fast");
		return -1;
	}
	return write_header(c, f, err, errlen);
}

int
gpurx_capture_rotate_check(const char *path,
		const struct gpurx_capture_rotate *rot, char *err, size_t errlen)
{
	if (rot == NULL || (rot->seconds == 0 && rot->size == 0 &&
			rot->files == 0))
		return 0;
	if (rot->files != 0 && rot->seconds == 0 && rot->size == 0) {
		set_err(err, errlen, "--rotate-files keeps a ring of files: it "
			"needs --rotate-seconds or --rotate-size to start %s%s",
			"each next one", "");
		return -EINVAL;
	}
	if (path != NULL && strcmp(path, "-") == 0) {
		set_err(err, errlen, "--rotate-%s: the capture goes to standard "
			"output (--write -), which cannot be rotated%s",
			rot->seconds != 0 ? "seconds" : rot->size != 0 ? "size" :
			"files", "");
		return -EINVAL;
	}
	return 0;
}

/* File f's first file of a rotation, its path the expanded --write name. */
static int
rotate_start(struct gpurx_capture *c, struct cap_file *f, time_t now)
{
	const char *slash = strrchr(f->path, '/');
	const char *dot = strrchr(f->path, '.');
	const char *name = slash != NULL ? slash + 1 : f->path;
	char *path = malloc(PATH_MAX);

	f->base = f->path;
	f->path = path;
	if (path == NULL)
		return -ENOMEM;
	/* As dumpcap: "cap.pcapng" is cap_..., .pcapng; ".x" is no
	 * extension. */
	f->ext_at = dot != NULL && dot > name ? (size_t)(dot - f->base) :
		strlen(f->base);
	if (c->rot_files != 0) {
		f->ring = calloc(c->rot_files, sizeof(*f->ring));
		if (f->ring == NULL)
			return -ENOMEM;
		f->ring[0] = now;
	}
	f->seq = 1;
	f->deadline = coarse_ns() + c->rot_ns;
	/* The longest number its names will have fits too. */
	if (rot_name(f, UINT32_MAX, now, path, PATH_MAX) != 0)
		return -ENAMETOOLONG;
	return rot_name(f, 1, now, path, PATH_MAX);
}

struct gpurx_capture *
gpurx_capture_open(const char *path, enum gpurx_format fmt, uint32_t snaplen,
		uint16_t port, uint16_t nq, struct gpurx_qstats *qs,
		const char *filter, char *err, size_t errlen)
{
	return gpurx_capture_open_rotate(path, fmt, snaplen, port, nq, qs,
		filter, NULL, err, errlen);
}

struct gpurx_capture *
gpurx_capture_open_rotate(const char *path, enum gpurx_format fmt,
		uint32_t snaplen, uint16_t port, uint16_t nq,
		struct gpurx_qstats *qs, const char *filter,
		const struct gpurx_capture_rotate *rot, char *err, size_t errlen)
{
	size_t size = RTE_ALIGN_CEIL(sizeof(struct gpurx_capture) +
		(size_t)nq * sizeof(struct cap_queue), RTE_CACHE_LINE_SIZE);
	time_t now = time(NULL);
	struct gpurx_capture *c;
	int rc, per_queue;
	uint16_t made = 0;

	if (nq == 0 || nq > GPURX_MAX_QUEUES || qs == NULL ||
			snaplen == 0 || snaplen > GPURX_DEFAULT_SNAPLEN) {
		set_err(err, errlen, "%s%s", "bad capture parameters (queues, "
			"counters or snaplen)", "");
		return NULL;
	}
	if (gpurx_capture_rotate_check(path, rot, err, errlen) != 0)
		return NULL;
	per_queue = gpurx_capture_path_check(path, err, errlen);
	if (per_queue < 0)
		return NULL;
	c = aligned_alloc(RTE_CACHE_LINE_SIZE, size);
	if (c == NULL) {
		set_err(err, errlen, "%s%s", "out of memory", "");
		return NULL;
	}
	memset(c, 0, size);
	c->fmt = fmt;
	c->snaplen = snaplen;
	c->nq = nq;
	c->nfiles = per_queue ? nq : 1;
	if (rot != NULL && (rot->seconds != 0 || rot->size != 0)) {
		c->rotating = true;
		c->rot_times = rot->times;
		c->rot_files = rot->files;
		c->rot_size = rot->size;
		c->rot_tail = fmt == GPURX_FMT_PCAPNG ? ISB_MAX_BYTES : 0;
		c->rot_ns = (uint64_t)rot->seconds * 1000000000ull;
		c->start_ns = gpuapp_real_ns();
	}
	c->files = aligned_alloc(RTE_CACHE_LINE_SIZE,
		c->nfiles * sizeof(*c->files));
	rc = c->files == NULL;
	for (uint16_t i = 0; rc == 0 && i < c->nfiles; i++) {
		memset(&c->files[i], 0, sizeof(c->files[i]));
		c->files[i].fd = -1;
	}
	for (uint16_t i = 0; rc == 0 && i < c->nfiles; i++)
		rc = pthread_mutex_init(&c->files[i].lock, NULL);
	for (uint16_t i = 0; rc == 0 && i < c->nfiles; i++) {
		char name[PATH_MAX];

		c->files[i].fail_off = OFF_NONE;
		gpurx_capture_path(path, i, name, sizeof(name));
		c->files[i].path = strdup(name);
		rc |= c->files[i].path == NULL;
	}
	if (rc != 0)
		c->nfiles = c->files == NULL ? 0 : c->nfiles;
	for (uint16_t q = 0; q < nq; q++) {
		/* Touched first by the queue's lcore: its NUMA node's pages. */
		c->q[q].buf = malloc(GPURX_CAPTURE_CHUNK_BYTES);
		c->q[q].qs = &qs[q];
		c->q[q].resv_off = OFF_NONE;
		c->q[q].pool[0] = c->q[q].buf;
		c->q[q].npool = 1;
		if (c->files != NULL)
			c->q[q].f = &c->files[per_queue ? q : 0];
		rc |= c->q[q].buf == NULL;
	}
	if (rc != 0) {
		set_err(err, errlen, "%s%s", "out of memory", "");
		free_capture(c);
		return NULL;
	}
	for (uint16_t i = 0; c->rotating && i < c->nfiles; i++) {
		rc = rotate_start(c, &c->files[i], now);
		if (rc != 0) {
			set_err(err, errlen, "rotating %s: %s", path,
				strerror(-rc));
			free_capture(c);
			return NULL;
		}
	}
	rc = c->fmt == GPURX_FMT_PCAP ? make_pcap_header(c, err, errlen) :
		make_pcapng_header(c, port, filter,
			strcmp(path, "-") == 0 ? "standard output" :
			c->files[0].path, err, errlen);
	if (rc != 0) {
		free_capture(c);
		return NULL;
	}
	c->n_ports = 1;
	for (uint16_t q = 0; q < nq; q++) {
		c->q[q].iface = c->iface;
		c->q[q].qid = q;
	}
	for (; made < c->nfiles; made++)
		if (open_file(c, &c->files[made], err, errlen) != 0)
			break;
	if (made < c->nfiles) {
		/* The files this run created hold a header at most: none
		 * is left behind to be taken for a capture. */
		for (uint16_t i = 0; i <= made; i++)
			if (c->files[i].created)
				unlink(c->files[i].path);
		free_capture(c);
		return NULL;
	}
	return c;
}

static inline int
stopped(const struct cap_file *f)
{
	return __atomic_load_n(&f->fail_off, __ATOMIC_RELAXED) != OFF_NONE;
}

/*
 * The lowest offset of a chunk of queue q not yet written whole, or of
 * one whose range q is reserving; OFF_NONE when none. For a chunk X of
 * another queue reserved before this call: a chunk Y of q below X was
 * reserved before X (one atomic add orders them), so q stored resv_off
 * (a lower bound of Y's offset) before X was reserved, and cleared it
 * only after publishing posted past Y. Every one of these stores and the
 * loads below is sequentially consistent: if the resv_off load misses Y,
 * the posted load sees Y handed on, and then either the done load says
 * Y is written (and its failure, recorded before done, is seen by the
 * caller's fail_off load), or Y's record is among those scanned. A
 * record reused meanwhile holds a later chunk's offset and was reused
 * only once Y was done: the acquire load of its offset, against the
 * release store, orders Y's failure before the caller's fail_off load.
 */
static uint64_t
queue_low(const struct cap_queue *q)
{
	uint64_t low = __atomic_load_n(&q->resv_off, __ATOMIC_SEQ_CST);
	uint32_t p = __atomic_load_n(&q->posted, __ATOMIC_SEQ_CST);
	uint32_t d = __atomic_load_n(&q->done, __ATOMIC_SEQ_CST);

	for (; (int32_t)(p - d) > 0; d++)
		low = RTE_MIN(low, __atomic_load_n(&q->rec[d % PENDING_MAX].off,
			__ATOMIC_ACQUIRE));
	return low;
}

/*
 * Count the queue's written chunks that became final: no chunk at a lower
 * offset is still being written (queue_low()), so the lowest failed
 * offset below them is known. A file written under its lock has no such
 * chunk: a chunk's range is taken and written in one hold of the lock,
 * after every earlier one's write (and failure) has ended.
 */
static void
settle(struct gpurx_capture *c, struct cap_queue *w)
{
	uint64_t low = OFF_NONE, fail, pkts = 0, bytes = 0, lost = 0;
	/* Acquire: the records below done are complete (the writer's
	 * release store of done). */
	uint32_t done = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
	uint32_t seq;

	if (w->head == done)
		return;
	/* A chunk of a file rotation has closed was written whole (no
	 * write is in flight when a file rotates, and a failed one does
	 * not rotate); offsets and failures are those of the file now. */
	seq = __atomic_load_n(&w->f->seq, __ATOMIC_SEQ_CST);
	/* Only the queues writing the same file (with a file per queue,
	 * none but w: all its chunks are final once written). */
	for (uint16_t q = 0; !locked_file(c, w->f) && q < c->nq; q++)
		if (c->q[q].f == w->f)
			low = RTE_MIN(low, queue_low(&c->q[q]));
	fail = __atomic_load_n(&w->f->fail_off, __ATOMIC_SEQ_CST);
	/* Rotated meanwhile: low and fail may be the next file's. */
	if (__atomic_load_n(&w->f->seq, __ATOMIC_SEQ_CST) != seq)
		return;
	for (; w->head != done; w->head++) {
		const struct chunk_rec *r = &w->rec[w->head % PENDING_MAX];

		if (r->rc == 0 && r->seq == seq && r->off >= low)
			break;
		if (r->rc == 0 && (r->seq != seq || r->off < fail)) {
			pkts += r->pkts;
			bytes += r->bytes;
		} else {
			lost += r->pkts;	/* failed, or cut off at close */
		}
	}
	if (pkts != 0) {
		GPURX_STAT_ADD(w->qs, captured, pkts);
		GPURX_STAT_ADD(w->qs, cap_bytes, bytes);
	}
	if (lost != 0)
		GPURX_STAT_ADD(w->qs, drop_capture, lost);
}

/* The first failure stops the capture and is said at once. */
static void
fail_at(struct cap_file *f, uint64_t off, uint32_t len, int err)
{
	uint64_t cur = __atomic_load_n(&f->fail_off, __ATOMIC_SEQ_CST);

	while (off < cur && !__atomic_compare_exchange_n(&f->fail_off, &cur,
			off, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	if (__atomic_exchange_n(&f->fail_said, 1, __ATOMIC_RELAXED) == 0) {
		f->fail_errno = err;
		GPURX_LOG(ERR, "error: capture %s: cannot write %u bytes at "
			"offset %" PRIu64 ": %s; capture stopped, later matches "
			"are counted as capture drops\n", f->path, len, off,
			strerror(err));
	}
}

/*
 * Writes chunk r of queue w: the lcore itself (no writers) or w's writer
 * thread. A chunk at or past a failed one is not written: close() cuts
 * the file there anyway (-ECANCELED, counted as dropped).
 */
static void
write_rec(struct gpurx_capture *c, struct cap_queue *w, struct chunk_rec *r)
{
	struct cap_file *f = w->f;
	uint64_t off;
	uint32_t seq;
	int rc;

	if (locked_file(c, f)) {
		rc = file_put(c, f, r->buf, r->len, &off, &seq);
		r->seq = seq;
		/* Release: pairs with queue_low()'s acquire (it is not
		 * scanned for a locked file; kept uniform). */
		__atomic_store_n(&r->off, off, __ATOMIC_RELEASE);
	} else if (r->off >= __atomic_load_n(&f->fail_off, __ATOMIC_SEQ_CST)) {
		rc = -ECANCELED;
	} else {
		rc = pwrite_all(f->fd, r->buf, r->len, r->off);
		/* Recorded before done is published (sequentially
		 * consistent): see queue_low(). */
		if (rc != 0)
			fail_at(f, r->off, r->len, -rc);
	}
	r->rc = rc;
}

/*
 * The queue's buffer to the file (or dropped, counted), then settle.
 * Without writers the lcore writes the chunk here; with them it hands the
 * record on and fills the next buffer of its pool, dropping the chunk
 * (counted) when no buffer would be left to fill: it never waits.
 */
static void
chunk_out(struct gpurx_capture *c, struct cap_queue *w)
{
	if (w->len != 0) {
		uint32_t n = w->posted;
		bool full;

		if (n - w->head == PENDING_MAX)
			settle(c, w);
		/* Acquire: a buffer whose chunk is done was read whole by
		 * its writer before it published done. */
		full = n - w->head == PENDING_MAX || (c->nwriters != 0 &&
			n + 1 - __atomic_load_n(&w->done, __ATOMIC_ACQUIRE) >=
			w->npool);
		if (stopped(w->f) || full) {
			/* Stopped, or PENDING_MAX chunks behind a write of
			 * another queue that does not end, or the writer
			 * behind: never wait. */
			GPURX_STAT_ADD(w->qs, drop_capture, w->pkts);
		} else {
			struct chunk_rec *r = &w->rec[n % PENDING_MAX];

			r->buf = w->buf;
			r->len = w->len;
			r->pkts = w->pkts;
			r->bytes = w->bytes;
			r->rc = 0;
			if (locked_file(c, w->f)) {
				/* Its writer takes the range under the lock. */
				r->seq = 0;
				__atomic_store_n(&r->off, OFF_NONE,
					__ATOMIC_RELAXED);
			} else {
				/* queue_low() says why these are sequentially
				 * consistent. */
				__atomic_store_n(&w->resv_off, __atomic_load_n(
					&w->f->end, __ATOMIC_SEQ_CST),
					__ATOMIC_SEQ_CST);
				r->seq = w->f->seq;
				__atomic_store_n(&r->off, __atomic_fetch_add(
					&w->f->end, w->len, __ATOMIC_SEQ_CST),
					__ATOMIC_RELEASE);
			}
			/* Hands the record on: its stores before it (release;
			 * sequentially consistent for queue_low()). */
			__atomic_store_n(&w->posted, n + 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&w->resv_off, OFF_NONE,
				__ATOMIC_SEQ_CST);
			if (c->nwriters == 0) {
				write_rec(c, w, r);
				/* The record is complete (release); after any
				 * failure it recorded (sequentially
				 * consistent, see queue_low()). */
				__atomic_store_n(&w->done, n + 1,
					__ATOMIC_SEQ_CST);
			} else {
				w->buf = w->pool[(n + 1) % w->npool];
			}
		}
		w->len = 0;
		w->pkts = 0;
		w->bytes = 0;
	}
	settle(c, w);
}

/* Chunks a writer takes from one queue before it looks at the next. */
#define WRITER_BATCH 2
/* Idle rounds a writer spins before it sleeps, and for how long. */
#define WRITER_SPINS 256
#define WRITER_NAP_NS 20000

/*
 * A writer thread: writes the chunks its queues hand on, in each queue's
 * order, and publishes done after each; naps when there are none (a chunk
 * takes hundreds of microseconds to fill, the pool holds several). Ends
 * once close() asked and every chunk handed on before is written.
 */
struct writer_arg {
	struct gpurx_capture *c;
	uint16_t k;		/* writes queues k, k + stride, ... */
	uint16_t stride;
};

static void *
writer_main(void *arg)
{
	struct writer_arg a = *(struct writer_arg *)arg;
	struct gpurx_capture *c = a.c;
	unsigned int idle = 0;

	free(arg);
	for (;;) {
		/* Acquire, before the scan: every chunk handed on before
		 * close() asked (its release store) is seen by this scan. */
		bool stop = __atomic_load_n(&c->writers_stop, __ATOMIC_ACQUIRE);
		bool work = false;

		for (uint16_t q = a.k; q < c->nq; q += a.stride) {
			struct cap_queue *w = &c->q[q];
			/* Only this thread writes done. */
			uint32_t d = __atomic_load_n(&w->done, __ATOMIC_RELAXED);
			/* Acquire: pairs with the lcore's store of posted, so
			 * the records below it are complete. */
			uint32_t p = __atomic_load_n(&w->posted,
				__ATOMIC_ACQUIRE);

			for (int b = 0; b < WRITER_BATCH && d != p; b++, d++) {
				write_rec(c, w, &w->rec[d % PENDING_MAX]);
				/* Release: the record's result, and the buffer
				 * read whole, before the lcore reuses them;
				 * sequentially consistent for queue_low(). */
				__atomic_store_n(&w->done, d + 1,
					__ATOMIC_SEQ_CST);
				work = true;
			}
		}
		if (work) {
			idle = 0;
			continue;
		}
		if (stop)
			break;
		if (++idle < WRITER_SPINS) {
			rte_pause();
		} else {
			struct timespec ts = { 0, WRITER_NAP_NS };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* close(): the writers write what was handed on, then end. */
static void
stop_writers(struct gpurx_capture *c)
{
	if (c->nwriters == 0)
		return;
	/* Release: the lcores have stopped; their last posted stores, seen
	 * by this thread, are seen by a writer that sees the flag. */
	__atomic_store_n(&c->writers_stop, 1, __ATOMIC_RELEASE);
	for (uint16_t k = 0; k < c->nwriters; k++)
		pthread_join(c->writers[k], NULL);
	c->nwriters = 0;
}

int
gpurx_capture_start_writers(struct gpurx_capture *c, unsigned int n,
		const rte_cpuset_t *cpus, char *err, size_t errlen)
{
	pthread_attr_t attr;
	int rc;

	if (c->nwriters != 0 || n == 0)
		return c->nwriters != 0 ? -EALREADY : 0;
	n = RTE_MIN(n, (unsigned int)c->nq);
	for (uint16_t q = 0; q < c->nq; q++) {
		struct cap_queue *w = &c->q[q];

		for (; w->npool < GPURX_CAPTURE_POOL; w->npool++) {
			w->pool[w->npool] = malloc(GPURX_CAPTURE_CHUNK_BYTES);
			if (w->pool[w->npool] == NULL) {
				set_err(err, errlen, "%s%s", "capture writers: "
					"out of memory for chunk buffers", "");
				return -ENOMEM;
			}
		}
	}
	c->writers = calloc(n, sizeof(*c->writers));
	if (c->writers == NULL) {
		set_err(err, errlen, "%s%s", "capture writers: out of memory",
			"");
		return -ENOMEM;
	}
	rc = pthread_attr_init(&attr);
	if (rc == 0 && cpus != NULL)
		rc = pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	for (unsigned int k = 0; rc == 0 && k < n; k++) {
		struct writer_arg *arg = malloc(sizeof(*arg));
		char name[16];

		if (arg == NULL) {
			rc = ENOMEM;
		} else {
			*arg = (struct writer_arg){ c, (uint16_t)k,
				(uint16_t)n };
			rc = pthread_create(&c->writers[k], &attr, writer_main,
				arg);
		}
		if (rc != 0) {
			free(arg);
			/* Those started end at once: nothing is handed on. */
			c->nwriters = (uint16_t)k;
			stop_writers(c);
			__atomic_store_n(&c->writers_stop, 0, __ATOMIC_RELAXED);
			break;
		}
		c->nwriters = (uint16_t)(k + 1);
		/* 15 characters at most: the kernel's limit. */
		snprintf(name, sizeof(name), "capwr-%hu", (uint16_t)k);
		pthread_setname_np(c->writers[k], name);
	}
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		set_err(err, errlen, "capture writers: cannot start a thread: %s%s",
			strerror(rc), "");
		c->nwriters = 0;
		free(c->writers);
		c->writers = NULL;
		return -rc;
	}
	return 0;
}

static inline uint32_t
put_pcapng(const struct gpurx_capture *c, uint8_t *p, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	uint32_t padded = RTE_ALIGN_CEIL(caplen, 4);
	uint32_t len = (uint32_t)(sizeof(struct epb_hdr) + padded +
		sizeof(struct epb_trailer));
	struct epb_hdr h = {
		.type = EPB_TYPE,
		.len = len,
		.iface = c->q[queue].iface,
		.ts_hi = (uint32_t)(ts_ns >> 32),
		.ts_lo = (uint32_t)ts_ns,
		.caplen = caplen,
		.wirelen = wirelen,
	};
	struct epb_trailer t = {
		.flags_code = EPB_OPT_FLAGS,
		.flags_len = 4,
		.flags = EPB_FLAG_INBOUND,
		.queue_code = EPB_OPT_QUEUE,
		.queue_len = 4,
		.queue = c->q[queue].qid,
		.len = len,
	};

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, data, caplen);
	memset(p + caplen, 0, padded - caplen);
	memcpy(p + padded, &t, sizeof(t));
	return len;
}

static inline uint32_t
put_pcap(uint8_t *p, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	struct pcap_rec_hdr h = {
		.ts_sec = (uint32_t)(ts_ns / 1000000000ull),
		.ts_nsec = (uint32_t)(ts_ns % 1000000000ull),
		.incl_len = caplen,
		.orig_len = wirelen,
	};

	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), data, caplen);
	return (uint32_t)sizeof(h) + caplen;
}

int
gpurx_capture_write(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	struct cap_queue *w = &c->q[queue];
	uint32_t need;

	if (caplen > c->snaplen)
		caplen = c->snaplen;
	if (wirelen < caplen)
		wirelen = caplen;
	need = c->fmt == GPURX_FMT_PCAP ?
		(uint32_t)sizeof(struct pcap_rec_hdr) + caplen :
		(uint32_t)(sizeof(struct epb_hdr) + RTE_ALIGN_CEIL(caplen, 4) +
			sizeof(struct epb_trailer));
	if (unlikely(need > GPURX_CAPTURE_CHUNK_BYTES - w->len))
		chunk_out(c, w);
	else if (unlikely(c->rot_size != 0) && w->len != 0 &&
			c->nwriters == 0 &&
			__atomic_load_n(&w->f->end, __ATOMIC_RELAXED) + w->len +
			need + c->rot_tail > c->rot_size)
		/* What the file still takes goes now: this packet starts the
		 * chunk that goes to the next file. */
		chunk_out(c, w);
	else if (unlikely(c->rot_size != 0) && w->len != 0 &&
			c->nwriters != 0 && w->len + need > c->rot_size / 4)
		/* With writers the file's end lags the chunks handed on, so
		 * it cannot say what the file still takes: chunks of a
		 * quarter of the size at most, and the writer starts the
		 * next file before one that does not fit (file_put()), so
		 * that each file is three quarters full at least. */
		chunk_out(c, w);
	if (unlikely(stopped(w->f))) {
		GPURX_STAT_ADD(w->qs, drop_capture, 1);
		return -1;
	}
	if (c->fmt == GPURX_FMT_PCAP)
		w->len += put_pcap(w->buf + w->len, data, caplen, wirelen,
			ts_ns);
	else
		w->len += put_pcapng(c, w->buf + w->len, queue, data, caplen,
			wirelen, ts_ns);
	w->pkts++;
	w->bytes += caplen;
	return 0;
}

void
gpurx_capture_poll(struct gpurx_capture *c, uint16_t queue)
{
	struct cap_queue *w = &c->q[queue];
	uint32_t gen = __atomic_load_n(&c->flush_gen, __ATOMIC_RELAXED);

	if (unlikely(c->rot_ns != 0) && time_due(c, w->f)) {
		struct cap_file *f = w->f;

		/* What arrived before the time goes to the file that ends:
		 * a chunk written rotates it, else it rotates here. */
		w->seen_gen = gen;
		chunk_out(c, w);
		pthread_mutex_lock(&f->lock);
		if (!stopped(f) && time_due(c, f)) {
			int rc = rotate(c, f);

			if (rc != 0)
				fail_at(f, f->end, 0, -rc);
		}
		pthread_mutex_unlock(&f->lock);
		return;
	}
	if (likely(gen == w->seen_gen)) {
		/* Chunks a writer finished are counted without waiting for
		 * the next one (the done load only while some are out). */
		if (c->nwriters != 0 && w->head != w->posted &&
				w->head != __atomic_load_n(&w->done,
					__ATOMIC_RELAXED))
			settle(c, w);
		return;
	}
	w->seen_gen = gen;
	chunk_out(c, w);
}

void
gpurx_capture_flush(struct gpurx_capture *c)
{
	__atomic_fetch_add(&c->flush_gen, 1, __ATOMIC_RELAXED);
}

static uint32_t
isb_opt_u64(uint8_t *p, uint16_t code, uint64_t v)
{
	uint16_t h[2] = { code, 8 };

	memcpy(p, h, sizeof(h));
	memcpy(p + 4, &v, 8);
	return 12;
}

/* A timestamp option: high then low 32 bits, as the block's own. */
static uint32_t
isb_opt_ts(uint8_t *p, uint16_t code, uint64_t ns)
{
	return isb_opt_u64(p, code, (ns >> 32) | (ns << 32));
}

/*
 * The interface statistics block of file f at its end: received,
 * accepted by the filter, lost on the way to the file (ring full,
 * capture drops) and written, over the queues writing f. rte_pcapng's
 * rte_pcapng_write_stats() needs the rte_pcapng handle, closed once the
 * header is written (the packets go by pwrite at reserved offsets), and
 * cannot say what the filter accepted or what reached the file.
 * 0, or -1 (said; the file is cut back to its packets).
 */
static int
write_isb_port(struct gpurx_capture *c, struct cap_file *f,
		const struct gpurx_capture_end *end, uint16_t pidx,
		uint32_t iface)
{
	uint64_t recv = 0, accept = 0, lost = 0, deliv = 0;
	uint64_t drops = c->n_ports == 1 ? end->port_drops :
		end->ports_drops != NULL ? end->ports_drops[pidx] : UINT64_MAX;
	uint8_t b[ISB_MAX_BYTES];
	uint32_t len = 20, blen;
	int rc;

	for (uint16_t q = 0; q < c->nq; q++) {
		const struct gpurx_qstats *qs = c->q[q].qs;

		if (c->q[q].f != f || c->q[q].pidx != pidx)
			continue;
		recv += GPURX_STAT_GET(qs, rx_pkts);
		accept += GPURX_STAT_GET(qs, matched);
		lost += GPURX_STAT_GET(qs, drop_ring) +
			GPURX_STAT_GET(qs, drop_capture);
		deliv += GPURX_STAT_GET(qs, captured);
	}
	if (end->end_ns != 0) {
		len += isb_opt_ts(b + len, ISB_OPT_STARTTIME, end->start_ns);
		len += isb_opt_ts(b + len, ISB_OPT_ENDTIME, end->end_ns);
	}
	len += isb_opt_u64(b + len, ISB_OPT_IFRECV, recv);
	/* The port counts its drops, not by queue. */
	if (c->nfiles == 1 && drops != UINT64_MAX)
		len += isb_opt_u64(b + len, ISB_OPT_IFDROP, drops);
	len += isb_opt_u64(b + len, ISB_OPT_FILTERACCEPT, accept);
	len += isb_opt_u64(b + len, ISB_OPT_OSDROP, lost);
	len += isb_opt_u64(b + len, ISB_OPT_USRDELIV, deliv);
	memset(b + len, 0, 4);			/* opt_endofopt */
	len += 4;
	blen = len + 4;
	{
		uint32_t hdr[5] = { ISB_TYPE, blen, iface,
			(uint32_t)(end->end_ns >> 32), (uint32_t)end->end_ns };

		memcpy(b, hdr, sizeof(hdr));
	}
	memcpy(b + len, &blen, 4);
	rc = f->stream ? gpuapp_write_all(f->fd, b, blen) :
		pwrite_all(f->fd, b, blen, f->end);
	if (rc == 0) {
		f->end += blen;
		return 0;
	}
	GPURX_LOG(ERR, "error: capture %s: cannot write its statistics "
		"block: %s\n", f->path, strerror(-rc));
	if (f->created && ftruncate(f->fd, (off_t)f->end) != 0)
		GPURX_LOG(ERR, "error: capture %s: cannot cut it back to %"
			PRIu64 " bytes: %s\n", f->path, f->end,
			strerror(errno));
	return -1;
}

/* The statistics blocks of file f at its end: one per port its queues
 * are of, in the order of the ports. */
static int
write_isb(struct gpurx_capture *c, struct cap_file *f,
		const struct gpurx_capture_end *end)
{
	for (uint16_t p = 0; p < c->n_ports; p++)
		for (uint16_t q = 0; q < c->nq; q++) {
			if (c->q[q].f != f || c->q[q].pidx != p)
				continue;
			if (write_isb_port(c, f, end, p, c->q[q].iface) != 0)
				return -1;
			break;
		}
	return 0;
}

/*
 * The name of file number seq of f's rotation, started at time t, as
 * dumpcap's ring buffer names them: the --write name split at its
 * extension, PREFIX_NNNNN_YYYYmmddHHMMSS.EXT (local time). 0, or
 * -ENAMETOOLONG.
 */
static int
rot_name(const struct cap_file *f, uint32_t seq, time_t t, char *out,
		size_t len)
{
	char stamp[32];
	struct tm tm;
	int n;

	if (localtime_r(&t, &tm) == NULL ||
			strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm) == 0)
		snprintf(stamp, sizeof(stamp), "%lld", (long long)t);
	n = snprintf(out, len, "%.*s_%05" PRIu32 "_%s%s", (int)f->ext_at,
		f->base, seq, stamp, f->base + f->ext_at);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Under f's lock, with no write in flight: ends f's current file (its
 * statistics block, with the counters so far) and goes on in the next,
 * removing the oldest beyond the ring. The next file is made first, so
 * that should it fail, the current one stays whole (no statistics
 * block: the capture stops there). 0 or -errno (said).
 */
static int
rotate(struct gpurx_capture *c, struct cap_file *f)
{
	struct gpurx_capture_end end = { .port_drops = UINT64_MAX };
	uint32_t seq = f->seq + 1;
	time_t now = time(NULL);
	char name[PATH_MAX];
	int fd = -1, rc;

	rc = rot_name(f, seq, now, name, sizeof(name));
	if (rc == 0) {
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		rc = fd < 0 ? -errno : pwrite_all(fd, c->hdr, c->hdr_len, 0);
	}
	if (rc != 0) {
		if (fd >= 0) {
			close(fd);
			unlink(name);
		}
		GPURX_LOG(ERR, "error: capture %s: cannot start the next file "
			"of the rotation (%" PRIu32 "): %s; capture stopped, "
			"later matches are counted as capture drops\n", f->path,
			seq, strerror(-rc));
		f->fail_errno = -rc;
		__atomic_store_n(&f->fail_said, 1, __ATOMIC_RELAXED);
		return rc;
	}
	if (c->rot_times) {
		end.start_ns = c->start_ns;
		end.end_ns = gpuapp_real_ns();
	}
	/* A failed one is said, and the file cut back to its packets. */
	if (c->fmt == GPURX_FMT_PCAPNG)
		write_isb(c, f, &end);
	if (close(f->fd) != 0)
		GPURX_LOG(ERR, "error: capture %s: close: %s\n", f->path,
			strerror(errno));
	f->fd = fd;
	__atomic_store_n(&f->end, c->hdr_len, __ATOMIC_SEQ_CST);
	snprintf(f->path, PATH_MAX, "%s", name);
	if (c->rot_files != 0) {
		time_t *slot = &f->ring[(seq - 1) % c->rot_files];
		char old[PATH_MAX];

		if (seq > c->rot_files && rot_name(f, seq - c->rot_files, *slot,
				old, sizeof(old)) == 0 &&
				unlink(old) != 0 && errno != ENOENT)
			GPURX_LOG(WARNING, "warning: capture: cannot remove %s, "
				"the oldest file of the ring: %s\n", old,
				strerror(errno));
		*slot = now;
	}
	__atomic_store_n(&f->deadline, coarse_ns() + c->rot_ns,
		__ATOMIC_RELAXED);
	__atomic_store_n(&f->seq, seq, __ATOMIC_SEQ_CST);
	return 0;
}

int
gpurx_capture_close(struct gpurx_capture *c,
		const struct gpurx_capture_end *end)
{
	uint64_t fail;
	int rc = 0;

	if (c == NULL)
		return 0;
	/* Every chunk handed on is written (or failed) once the writers
	 * have ended. */
	stop_writers(c);
	/* The lcores have stopped: every queue's state is ours now; the
	 * last chunks are written here. */
	for (uint16_t q = 0; q < c->nq; q++)
		chunk_out(c, &c->q[q]);
	/* Nothing is being written any more: every chunk settles. */
	for (uint16_t q = 0; q < c->nq; q++)
		settle(c, &c->q[q]);
	for (uint16_t i = 0; i < c->nfiles; i++) {
		struct cap_file *f = &c->files[i];

		fail = __atomic_load_n(&f->fail_off, __ATOMIC_SEQ_CST);
		if (fail != OFF_NONE) {
			rc = -1;
			if (f->stream)
				GPURX_LOG(NOTICE, "capture %s: stopped after %"
					PRIu64 " bytes, at the failed write (%s)\n",
					f->path, fail, strerror(f->fail_errno));
			else if (ftruncate(f->fd, (off_t)fail) != 0)
				GPURX_LOG(ERR, "error: capture %s: cannot cut it "
					"back to %" PRIu64 " bytes after the failed "
					"write: %s\n", f->path, fail,
					strerror(errno));
			else
				GPURX_LOG(NOTICE, "capture %s: cut back to %" PRIu64
					" bytes, its whole blocks before the failed "
					"write (%s)\n", f->path, fail,
					strerror(f->fail_errno));
		} else if (end != NULL && c->fmt == GPURX_FMT_PCAPNG &&
				write_isb(c, f, end) != 0) {
			rc = -1;
		}
		if (close(f->fd) != 0) {
			GPURX_LOG(ERR, "error: capture %s: close: %s\n",
				f->path, strerror(errno));
			rc = -1;
		}
		f->fd = -1;
	}
	free_capture(c);
	return rc;
}
