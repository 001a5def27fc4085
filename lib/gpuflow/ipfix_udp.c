/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A UDP destination's datagrams (ipfix_udp.h): sendmmsg() batches, each
 * entry a datagram or, with GSO, a super-datagram of equal-length
 * messages; paced, and every datagram not sent counted with its records.
 */

#include <errno.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <rte_common.h>

#include "gpuapp_clock.h"
#include "ipfix_log.h"
#include "ipfix_udp.h"

/* sendmmsg() entries a call at most. */
#define UDP_BATCH 64
/* Datagrams a call at most: an iovec each, the heads between them left
 * out, so that a super-datagram needs no copy into one buffer. */
#define UDP_IOVS 512
/* Segments a super-datagram at most: the kernel's UDP_MAX_SEGMENTS
 * since 4.18 (more: EINVAL; later kernels take 128). */
#define UDP_GSO_SEGS 64
/* A super-datagram's bytes at most: one IP packet's payload (64 KiB
 * less IPv4's or IPv6's headers), with room to spare. */
#define UDP_GSO_BYTES 65000u
/* UDP pacing: datagrams go out ahead of the rate by this much at most,
 * so a burst (the flows live at exit, many flows ending at once) never
 * arrives faster than the rate for longer. */
#define UDP_BURST_NS 1000000ull

/* A sendmmsg() entry: a datagram, or segs datagrams of seg bytes (the
 * last may be shorter) that the kernel cuts from one. */
struct udp_ent {
	size_t at;		/* its first head in the chunk */
	uint64_t records;
	uint32_t bytes, seg, segs;
	int open;		/* another segment may join */
};

void
gpurx_ipfix_udp_init(struct gpurx_ipfix_udp *u, int fd, const char *name)
{
	int no_seg = 0;

	u->fd = fd;
	u->due_ns = 0;
	u->name = name;
	/* A kernel without UDP_SEGMENT passes over a control message of a
	 * level it does not know and would send a super-datagram whole, IP
	 * fragments to the collector: the socket option, which came with
	 * it, tells. 0 leaves the socket's sends unsegmented; each
	 * super-datagram says its own size. */
	if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &no_seg, sizeof(no_seg)) == 0) {
		u->gso = GPURX_IPFIX_GSO_UNKNOWN;
		return;
	}
	u->gso = GPURX_IPFIX_GSO_OFF;
	FLOW_LOG(INFO, "flow export to %s: no UDP segmentation offload "
		"(UDP_SEGMENT: %s): a send a datagram\n", name, strerror(errno));
}

size_t
gpurx_ipfix_udp_put(uint8_t *chunk, size_t off, const uint8_t *msg,
		uint32_t len, uint32_t records)
{
	const struct gpurx_ipfix_udp_head h = { len, records };

	memcpy(chunk + off, &h, sizeof(h));
	memcpy(chunk + off + sizeof(h), msg, len);
	return off + sizeof(h) + len;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
		(long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* A collector that cannot keep up drops datagrams in its socket buffer,
 * where the exporter never sees it: the rate is all that protects it. */
void
gpurx_ipfix_udp_pace(struct gpurx_ipfix_udp *u, uint64_t rate,
		uint32_t records)
{
	uint64_t now;

	if (rate == 0)
		return;
	now = gpuapp_mono_ns();
	/* Time not used (an idle exporter) is not saved up beyond a burst. */
	if (u->due_ns + UDP_BURST_NS < now)
		u->due_ns = now - UDP_BURST_NS;
	if (u->due_ns > now)
		sleep_ns(u->due_ns - now);
	u->due_ns += (uint64_t)(records != 0 ? records : 1) * 1000000000ull /
		rate;
}

/* The errors of a kernel or route that cannot segment (no checksum
 * offload: EIO; a size or socket it refuses: EINVAL; no UDP_SEGMENT:
 * ENOPROTOOPT, EOPNOTSUPP), not of the collector. */
static int
gso_refused(int err)
{
	return err == EIO || err == EINVAL || err == ENOPROTOOPT ||
		err == EOPNOTSUPP;
}

/* Whether a datagram of len bytes may join e as its next segment. */
static int
gso_joins(const struct gpurx_ipfix_udp *u, const struct udp_ent *e,
		uint32_t len)
{
	return u->gso != GPURX_IPFIX_GSO_OFF && e->open && len <= e->seg &&
		e->segs < UDP_GSO_SEGS && e->bytes + len <= UDP_GSO_BYTES;
}

/*
 * A batch at a time: at most UDP_BATCH entries of UDP_IOVS datagrams,
 * and at most the records the rate allows in UDP_BURST_NS (one datagram
 * at least), so that batches keep the pacing of one datagram at a time.
 * Never waits on the socket: an entry the kernel does not take is lost
 * (all its datagrams' records counted), as is one a collector's ICMP
 * error refuses (reported on a later send). A super-datagram's refusal
 * turns GSO off, its datagrams and those after it sent again one by
 * one.
 */
void
gpurx_ipfix_udp_send_chunk(struct gpurx_ipfix_udp *u, const uint8_t *buf,
		size_t len, uint64_t rate, struct gpurx_ipfix_udp_res *res)
{
	const uint64_t cap = rate == 0 ? UINT64_MAX :
		RTE_MAX(rate * UDP_BURST_NS / 1000000000ull, 1ull);
	struct mmsghdr mh[UDP_BATCH];
	struct iovec iov[UDP_IOVS];
	struct udp_ent ent[UDP_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl[UDP_BATCH];
	size_t off = 0;

	while (off < len) {
		unsigned int k = 0, v = 0, i = 0;
		uint64_t booked = 0;

		while (off < len && v < UDP_IOVS) {
			struct udp_ent *e = k != 0 ? &ent[k - 1] : NULL;
			struct gpurx_ipfix_udp_head h;
			/* A templates-only datagram is booked as one record,
			 * as gpurx_ipfix_udp_pace() does. */
			uint64_t b;

			memcpy(&h, buf + off, sizeof(h));
			b = h.records != 0 ? h.records : 1;
			if (v != 0 && booked + b > cap)
				break;
			if (e != NULL && gso_joins(u, e, h.len)) {
				e->segs++;
				e->bytes += h.len;
				e->records += h.records;
				/* The kernel cuts at seg bytes: only the last
				 * segment may be shorter. */
				e->open = h.len == e->seg;
			} else if (k == UDP_BATCH) {
				break;
			} else {
				e = &ent[k];
				*e = (struct udp_ent){ off, h.records, h.len, h.len,
					1, 1 };
				memset(&mh[k], 0, sizeof(mh[k]));
				mh[k].msg_hdr.msg_iov = &iov[v];
				k++;
			}
			iov[v].iov_base = (void *)(uintptr_t)(buf + off + sizeof(h));
			iov[v].iov_len = h.len;
			v++;
			mh[e - ent].msg_hdr.msg_iovlen++;
			booked += b;
			off += sizeof(h) + h.len;
		}
		for (unsigned int j = 0; j < k; j++) {
			const uint16_t seg = (uint16_t)ent[j].seg;
			struct cmsghdr *c;

			if (ent[j].segs < 2)
				continue;
			mh[j].msg_hdr.msg_control = ctl[j].buf;
			mh[j].msg_hdr.msg_controllen = sizeof(ctl[j].buf);
			c = CMSG_FIRSTHDR(&mh[j].msg_hdr);
			c->cmsg_level = SOL_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		}
		gpurx_ipfix_udp_pace(u, rate,
			(uint32_t)RTE_MIN(booked, (uint64_t)UINT32_MAX));
		while (i < k) {
			int n = sendmmsg(u->fd, mh + i, k - i,
				MSG_DONTWAIT | MSG_NOSIGNAL);

			if (n <= 0) {
				const int err = n < 0 ? errno : EIO;

				if (ent[i].segs > 1 && gso_refused(err)) {
					/* Nothing of entry i went: from it on
					 * again, without GSO (their records
					 * paced twice, once). Also after GSO
					 * worked: a route that changed since
					 * (a smaller path MTU, a device
					 * without checksum offload) refuses
					 * it the same way. */
					u->gso = GPURX_IPFIX_GSO_OFF;
					FLOW_LOG(INFO, "flow export to %s: the "
						"kernel refused UDP segmentation "
						"offload (%s): a send a datagram\n",
						u->name, strerror(err));
					off = ent[i].at;
					break;
				}
				res->err = err;
				res->lost += ent[i].records;
				res->lost_msgs += ent[i].segs;
				i++;
				continue;
			}
			for (int j = 0; j < n; j++, i++) {
				if (mh[i].msg_len == ent[i].bytes) {
					res->sent += ent[i].segs;
					if (ent[i].segs > 1)
						u->gso = GPURX_IPFIX_GSO_ON;
				} else {
					res->err = EMSGSIZE;
					res->lost += ent[i].records;
					res->lost_msgs += ent[i].segs;
				}
			}
		}
	}
}
