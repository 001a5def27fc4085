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
#include <rte_ethdev.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include "capture.h"

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

#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_LINKTYPE_ETHERNET 1u
#define FILE_BUF_BYTES (1u << 20)

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
	uint32_t snaplen;
	uint32_t iface;		/* pcapng interface of the port */
	int failed;		/* a write error happened: report at close */
	FILE *fp;
	char *fbuf;
};

static void
set_err(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err != NULL && len > 0)
		snprintf(err, len, fmt, a, b);
}

/* Large stdio buffer: one write(2) per MiB, not per packet. */
static void
big_buffer(struct gpurx_capture *c)
{
	c->fbuf = malloc(FILE_BUF_BYTES);
	if (c->fbuf != NULL &&
			setvbuf(c->fp, c->fbuf, _IOFBF, FILE_BUF_BYTES) != 0) {
		free(c->fbuf);
		c->fbuf = NULL;
	}
}

static int
open_pcap(struct gpurx_capture *c, const char *path, char *err,
		size_t errlen)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NS,
		.version_major = 2,
		.version_minor = 4,
		.snaplen = c->snaplen,
		.linktype = PCAP_LINKTYPE_ETHERNET,
	};

	c->fp = fopen(path, "wb");
	if (c->fp == NULL) {
		set_err(err, errlen, "cannot create %s: %s", path,
			strerror(errno));
		return -1;
	}
	big_buffer(c);
	if (fwrite(&h, sizeof(h), 1, c->fp) != 1) {
		set_err(err, errlen, "cannot write %s: %s", path,
			strerror(errno));
		return -1;
	}
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

/* Interface index rte_pcapng_fdopen() gave the port: ports in order. */
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

static int
open_pcapng(struct gpurx_capture *c, const char *path, uint16_t port,
		const char *filter, char *err, size_t errlen)
{
	char osname[256], appname[64];
	struct utsname u;
	rte_pcapng_t *png;
	int fd, hdr_fd;

	/* Read access too: the header is scrubbed after it is written. */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		set_err(err, errlen, "cannot create %s: %s", path,
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
	png = rte_pcapng_fdopen(hdr_fd, osname, NULL, appname,
		filter != NULL && filter[0] != '\0' ? filter : NULL);
	if (png == NULL) {
		set_err(err, errlen, "rte_pcapng_fdopen(%s): %s", path,
			rte_strerror(rte_errno));
		close(hdr_fd);
		close(fd);
		return -1;
	}
	rte_pcapng_close(png);
	if (pcapng_scrub_header(fd) != 0) {
		set_err(err, errlen, "cannot rewrite the header of %s: %s",
			path, strerror(errno));
		close(fd);
		return -1;
	}
	/* Both descriptors shared one offset: fd is at the header's end. */
	c->fp = fdopen(fd, "w");
	if (c->fp == NULL) {
		set_err(err, errlen, "fdopen(%s): %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	big_buffer(c);
	c->iface = pcapng_iface_of(port);
	return 0;
}

static void
free_capture(struct gpurx_capture *c)
{
	if (c->fp != NULL)
		fclose(c->fp);
	free(c->fbuf);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct gpurx_capture *
gpurx_capture_open(const char *path, enum gpurx_format fmt, uint32_t snaplen,
		uint16_t port, const char *filter, char *err, size_t errlen)
{
	struct gpurx_capture *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		set_err(err, errlen, "%s%s", "out of memory", "");
		return NULL;
	}
	c->fmt = fmt;
	c->snaplen = snaplen;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		set_err(err, errlen, "%s%s", "pthread_mutex_init failed", "");
		return NULL;
	}
	if (fmt == GPURX_FMT_PCAP)
		rc = open_pcap(c, path, err, errlen);
	else
		rc = open_pcapng(c, path, port, filter, err, errlen);
	if (rc != 0) {
		free_capture(c);
		return NULL;
	}
	return c;
}

/* Caller holds the lock. */
static int
pcapng_write_locked(struct gpurx_capture *c, uint16_t queue,
		const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		uint64_t ts_ns)
{
	static const uint8_t zeros[3];
	uint32_t pad = RTE_ALIGN_CEIL(caplen, 4) - caplen;
	uint32_t len = (uint32_t)(sizeof(struct epb_hdr) + caplen + pad +
		sizeof(struct epb_trailer));
	struct epb_hdr h = {
		.type = EPB_TYPE,
		.len = len,
		.iface = c->iface,
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
		.queue = queue,
		.len = len,
	};

	if (fwrite(&h, sizeof(h), 1, c->fp) != 1 ||
			fwrite(data, 1, caplen, c->fp) != caplen ||
			fwrite(zeros, 1, pad, c->fp) != pad ||
			fwrite(&t, sizeof(t), 1, c->fp) != 1) {
		c->failed = 1;
		return -1;
	}
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

	if (caplen > c->snaplen)
		caplen = c->snaplen;
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
	rc = fflush(c->fp) == 0 ? 0 : -1;
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
	if (fclose(c->fp) != 0)
		rc = -1;
	c->fp = NULL;
	if (c->failed)
		rc = -1;
	free_capture(c);
	return rc;
}
