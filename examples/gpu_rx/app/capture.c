/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include "capture.h"

#define PCAPNG_BATCH 32
/* Batch plus one source mbuf per copy, rounded to 2^n - 1 for the pool. */
#define PCAPNG_POOL_SIZE 63
/* Trailing EPB options (flags, queue, maybe RSS hash) and block length. */
#define PCAPNG_EPB_TRAILER 64

/* Enhanced Packet Block fields rte_pcapng_copy() fills and we correct. */
#define EPB_TYPE 6u
#define EPB_OFF_TYPE 0
#define EPB_OFF_TS_HI 12
#define EPB_OFF_TS_LO 16
#define EPB_OFF_ORIG_LEN 24

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

struct gpurx_capture {
	pthread_mutex_t lock;
	enum gpurx_format fmt;
	uint16_t port;
	uint32_t max_caplen;
	int failed;		/* a write error happened: report at close */
	/* pcapng */
	int fd;
	rte_pcapng_t *png;
	struct rte_mempool *pool;
	struct rte_mbuf *batch[PCAPNG_BATCH];
	unsigned int n_batch;
	/* pcap */
	FILE *fp;
	char *fbuf;
};

static void
set_err(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err != NULL && len > 0)
		snprintf(err, len, fmt, a, b);
}

static int
open_pcap(struct gpurx_capture *c, const char *path, uint32_t snaplen,
		char *err, size_t errlen)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NS,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = snaplen,
		.linktype = PCAP_LINKTYPE_ETHERNET,
	};
	const size_t bufsz = 1 << 20;

	c->fp = fopen(path, "wb");
	if (c->fp == NULL) {
		set_err(err, errlen, "cannot create %s: %s", path,
			strerror(errno));
		return -1;
	}
	/* Large stdio buffer: one write(2) per MiB, not per packet. */
	c->fbuf = malloc(bufsz);
	if (c->fbuf != NULL && setvbuf(c->fp, c->fbuf, _IOFBF, bufsz) != 0) {
		free(c->fbuf);
		c->fbuf = NULL;
	}
	if (fwrite(&h, sizeof(h), 1, c->fp) != 1) {
		set_err(err, errlen, "cannot write %s: %s", path,
			strerror(errno));
		return -1;
	}
	c->max_caplen = snaplen;
	return 0;
}

/*
 * DPDK 22.11 builds the interface blocks in uninitialized stack memory
 * and leaves option padding as it found it: stack bytes leak into the
 * file and two runs never produce the same bytes. Walk the blocks
 * rte_pcapng_fdopen() wrote and zero each option's padding.
 */
static int
pcapng_scrub_header(int fd)
{
	off_t end = lseek(fd, 0, SEEK_CUR);
	uint8_t *buf;
	uint32_t pos = 0;
	int rc = -1;

	if (end <= 0 || end > (1 << 20))
		return -1;
	buf = malloc((size_t)end);
	if (buf == NULL || pread(fd, buf, (size_t)end, 0) != end)
		goto out;
	while (pos + 12 <= (uint32_t)end) {
		uint32_t type, blen, opt, oend;

		memcpy(&type, buf + pos, 4);
		memcpy(&blen, buf + pos + 4, 4);
		if (blen < 12 || blen > (uint32_t)end - pos)
			goto out;
		/* Options follow the fixed part: 24 bytes SHB, 16 IDB. */
		opt = pos + (type == 0x0a0d0d0a ? 24 : type == 1 ? 16 : blen);
		oend = pos + blen - 4;
		while (opt + 4 <= oend) {
			uint16_t code, olen;
			uint32_t padded;

			memcpy(&code, buf + opt, 2);
			memcpy(&olen, buf + opt + 2, 2);
			padded = RTE_ALIGN_CEIL((uint32_t)olen, 4);
			if (opt + 4 + padded > oend)
				break;
			memset(buf + opt + 4 + olen, 0, padded - olen);
			opt += 4 + padded;
			if (code == 0)
				break;
		}
		pos += blen;
	}
	if (pwrite(fd, buf, (size_t)end, 0) == end)
		rc = 0;
out:
	free(buf);
	return rc;
}

static int
open_pcapng(struct gpurx_capture *c, const char *path, uint32_t snaplen,
		const char *filter, int socket, char *err, size_t errlen)
{
	char osname[256], appname[64], pool_name[RTE_MEMPOOL_NAMESIZE];
	struct utsname u;
	uint32_t room;

	/*
	 * Every copy must be one segment: rte_pcapng_copy() pads only the
	 * first segment, so a chained copy would corrupt the block. The data
	 * room is 16 bits, which bounds the longest packet in pcapng.
	 */
	room = RTE_PKTMBUF_HEADROOM + RTE_ALIGN_CEIL(snaplen, 4) +
		PCAPNG_EPB_TRAILER;
	if (room > UINT16_MAX) {
		room = UINT16_MAX;
		c->max_caplen = RTE_ALIGN_FLOOR(UINT16_MAX -
			RTE_PKTMBUF_HEADROOM - PCAPNG_EPB_TRAILER, 4);
	} else {
		c->max_caplen = snaplen;
	}
	snprintf(pool_name, sizeof(pool_name), "gpurx_png_%u", c->port);
	c->pool = rte_pktmbuf_pool_create(pool_name, PCAPNG_POOL_SIZE, 0, 0,
		(uint16_t)room, socket);
	if (c->pool == NULL) {
		set_err(err, errlen, "pcapng copy pool: %s%s",
			rte_strerror(rte_errno), "");
		return -1;
	}
	/* Read access too: the header is scrubbed after it is written. */
	c->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (c->fd < 0) {
		set_err(err, errlen, "cannot create %s: %s", path,
			strerror(errno));
		return -1;
	}
	if (uname(&u) == 0)
		snprintf(osname, sizeof(osname), "%s %s", u.sysname, u.release);
	else
		snprintf(osname, sizeof(osname), "unknown");
	snprintf(appname, sizeof(appname), "dpdk-gpu-rx (%s)", rte_version());
	c->png = rte_pcapng_fdopen(c->fd, osname, NULL, appname,
		filter != NULL && filter[0] != '\0' ? filter : NULL);
	if (c->png == NULL) {
		set_err(err, errlen, "rte_pcapng_fdopen(%s): %s", path,
			rte_strerror(rte_errno));
		return -1;
	}
	/* rte_pcapng_close() owns the descriptor from here on. */
	if (pcapng_scrub_header(c->fd) != 0) {
		set_err(err, errlen, "cannot rewrite the header of %s: %s",
			path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
free_capture(struct gpurx_capture *c)
{
	if (c->png != NULL)
		rte_pcapng_close(c->png);
	else if (c->fd >= 0)
		close(c->fd);
	if (c->fp != NULL)
		fclose(c->fp);
	free(c->fbuf);
	rte_mempool_free(c->pool);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct gpurx_capture *
gpurx_capture_open(const char *path, enum gpurx_format fmt, uint32_t snaplen,
		uint16_t port, const char *filter, int socket, char *err,
		size_t errlen)
{
	struct gpurx_capture *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		set_err(err, errlen, "%s%s", "out of memory", "");
		return NULL;
	}
	c->fd = -1;
	c->fmt = fmt;
	c->port = port;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		set_err(err, errlen, "%s%s", "pthread_mutex_init failed", "");
		return NULL;
	}
	if (fmt == GPURX_FMT_PCAP)
		rc = open_pcap(c, path, snaplen, err, errlen);
	else
		rc = open_pcapng(c, path, snaplen, filter, socket, err, errlen);
	if (rc != 0) {
		free_capture(c);
		return NULL;
	}
	return c;
}

uint32_t
gpurx_capture_max_caplen(const struct gpurx_capture *c)
{
	return c->max_caplen;
}

/* Caller holds the lock. */
static int
pcapng_flush_locked(struct gpurx_capture *c)
{
	ssize_t n;
	int rc = 0;

	if (c->n_batch == 0)
		return 0;
	n = rte_pcapng_write_packets(c->png, c->batch, (uint16_t)c->n_batch);
	if (n < 0) {
		c->failed = 1;
		rc = -1;
	}
	rte_pktmbuf_free_bulk(c->batch, c->n_batch);
	c->n_batch = 0;
	return rc;
}

static int
pcapng_put_u32(struct rte_mbuf *m, uint32_t off, uint32_t v)
{
	uint8_t *p = rte_pktmbuf_mtod_offset(m, uint8_t *, off);

	memcpy(p, &v, sizeof(v));
	return 0;
}

/* Caller holds the lock. */
static int
pcapng_write_locked(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	struct rte_mbuf *src, *mc;
	uint32_t type;
	char *dst;

	if (c->n_batch == PCAPNG_BATCH && pcapng_flush_locked(c) != 0)
		return -1;
	src = rte_pktmbuf_alloc(c->pool);
	if (src == NULL)
		return -1;
	dst = rte_pktmbuf_append(src, (uint16_t)caplen);
	if (dst == NULL) {
		rte_pktmbuf_free(src);
		return -1;
	}
	memcpy(dst, data, caplen);
	mc = rte_pcapng_copy(c->port, queue, src, c->pool, caplen, 0,
		RTE_PCAPNG_DIRECTION_IN);
	rte_pktmbuf_free(src);
	if (mc == NULL)
		return -1;
	/*
	 * rte_pcapng_copy() stamps the block from a TSC value with its own
	 * calibration and takes the original length from the copy; the RX
	 * timestamp and wire length we carry are the truth, so overwrite
	 * those EPB fields (layout fixed by the pcapng specification).
	 */
	memcpy(&type, rte_pktmbuf_mtod_offset(mc, void *, EPB_OFF_TYPE),
		sizeof(type));
	if (type != EPB_TYPE || rte_pktmbuf_data_len(mc) < 28) {
		rte_pktmbuf_free(mc);
		return -1;
	}
	pcapng_put_u32(mc, EPB_OFF_TS_HI, (uint32_t)(ts_ns >> 32));
	pcapng_put_u32(mc, EPB_OFF_TS_LO, (uint32_t)ts_ns);
	pcapng_put_u32(mc, EPB_OFF_ORIG_LEN, wirelen);
	c->batch[c->n_batch++] = mc;
	return 0;
}

static int
pcap_write_locked(struct gpurx_capture *c, const uint8_t *data,
		uint32_t caplen, uint32_t wirelen, uint64_t ts_ns)
{
	struct pcap_rec_hdr h = {
		.ts_sec = (uint32_t)(ts_ns / 1000000000ull),
		.ts_nsec = (uint32_t)(ts_ns % 1000000000ull),
		.incl_len = caplen,
		.orig_len = wirelen,
	};

	if (fwrite(&h, sizeof(h), 1, c->fp) != 1 ||
			fwrite(data, 1, caplen, c->fp) != caplen) {
		c->failed = 1;
		return -1;
	}
	return 0;
}

int
gpurx_capture_write(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	int rc;

	if (caplen > c->max_caplen)
		caplen = c->max_caplen;
	if (wirelen < caplen)
		wirelen = caplen;
	pthread_mutex_lock(&c->lock);
	if (c->fmt == GPURX_FMT_PCAP)
		rc = pcap_write_locked(c, data, caplen, wirelen, ts_ns);
	else
		rc = pcapng_write_locked(c, queue, data, caplen, wirelen, ts_ns);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int
gpurx_capture_flush(struct gpurx_capture *c)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	if (c->fmt == GPURX_FMT_PCAP)
		rc = fflush(c->fp) == 0 ? 0 : -1;
	else
		rc = pcapng_flush_locked(c);
	if (rc != 0)
		c->failed = 1;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int
gpurx_capture_close(struct gpurx_capture *c)
{
	int rc;

	if (c == NULL)
		return 0;
	rc = gpurx_capture_flush(c);
	if (c->fmt == GPURX_FMT_PCAP) {
		if (fclose(c->fp) != 0)
			rc = -1;
		c->fp = NULL;
	}
	if (c->failed)
		rc = -1;
	free_capture(c);
	return rc;
}
