/* SPDX-License-Identifier: BSD-3-Clause */

/* The port's wire: frames read from rx_pcap, frames written to tx_pcap. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "gpudma.h"

#define PAGE 4096u

struct gpudma_pcap_out {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	rte_spinlock_t lock;     /* queues share the file */
	int64_t good;            /* the file's end after the last whole flush */
	int err;                 /* the write error that stopped the file */
};

/* Grows the frame store to hold need bytes (page multiples: the store is
 * pinned whole later). */
static int
store_reserve(struct gpudma_source *s, size_t used, size_t need)
{
	size_t len = s->data_len == 0 ? (size_t)1 << 20 : s->data_len;
	uint8_t *p;

	if (need <= s->data_len)
		return 0;
	while (len < need)
		len *= 2;
	p = aligned_alloc(PAGE, len);
	if (p == NULL)
		return -ENOMEM;
	if (used > 0)
		memcpy(p, s->data, used);
	free(s->data);
	s->data = p;
	s->data_len = len;
	return 0;
}

int
gpudma_source_load(struct gpudma_source *s, const char *path, uint64_t loop)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *bytes;
	uint32_t cap_frames = 0;
	size_t used = 0;
	uint32_t empty = 0;
	pcap_t *pc;
	int ret = 0, rc;

	memset(s, 0, sizeof(*s));
	s->loop = loop;
	pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		GPUDMA_LOG(ERR, "rx_pcap %s: %s", path, err);
		return -ENOENT;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		GPUDMA_LOG(ERR, "rx_pcap %s: link type %s, not Ethernet",
			path, pcap_datalink_val_to_name(pcap_datalink(pc)));
		ret = -EINVAL;
		goto out;
	}
	while ((rc = pcap_next_ex(pc, &hdr, &bytes)) == 1) {
		/* No byte to receive: no NIC delivers an empty frame. */
		if (hdr->caplen == 0) {
			empty++;
			continue;
		}
		if (hdr->caplen > GPUDMA_MAX_FRAME) {
			GPUDMA_LOG(ERR, "rx_pcap %s: frame %u is %u bytes, more than the %u the port receives",
				path, s->nb_frames + 1, hdr->caplen,
				GPUDMA_MAX_FRAME);
			ret = -EINVAL;
			goto out;
		}
		if (s->nb_frames == cap_frames) {
			uint32_t n = cap_frames == 0 ? 1024 : cap_frames * 2;
			struct gpudma_frame *f = NULL;

			if (n > cap_frames)
				f = realloc(s->frames, (size_t)n * sizeof(*f));
			if (f == NULL) {
				ret = -ENOMEM;
				goto nomem;
			}
			s->frames = f;
			cap_frames = n;
		}
		/* 64-byte aligned frames: copies of whole cache lines. */
		if (store_reserve(s, used, RTE_ALIGN_CEIL(used + hdr->caplen,
				64)) != 0) {
			ret = -ENOMEM;
			goto nomem;
		}
		memcpy(s->data + used, bytes, hdr->caplen);
		s->frames[s->nb_frames].off = used;
		s->frames[s->nb_frames].len = hdr->caplen;
		s->nb_frames++;
		used = RTE_ALIGN_CEIL(used + hdr->caplen, 64);
	}
	if (rc == PCAP_ERROR) {
		GPUDMA_LOG(ERR, "rx_pcap %s: %s", path, pcap_geterr(pc));
		ret = -EIO;
	}
	if (ret == 0 && empty > 0)
		GPUDMA_LOG(WARNING, "rx_pcap %s: %u record(s) with no captured byte (caplen 0) skipped; %u frames to receive",
			path, empty, s->nb_frames);
	goto out;
nomem:
	GPUDMA_LOG(ERR, "rx_pcap %s: out of memory after %u frames",
		path, s->nb_frames);
out:
	pcap_close(pc);
	if (ret != 0)
		gpudma_source_free(s);
	return ret;
}

int
gpudma_source_group(struct gpudma_source *s, uint16_t nb_queues)
{
	uint8_t *p;
	uint64_t used = 0;
	uint32_t q, i;

	if (nb_queues < 2 || s->nb_frames == 0)
		return 0;
	p = aligned_alloc(PAGE, s->data_len);
	if (p == NULL)
		return -ENOMEM;
	/* The same frames, 64-byte aligned as before: they fit the same
	 * length whatever the order. */
	for (q = 0; q < nb_queues; q++) {
		for (i = q; i < s->nb_frames; i += nb_queues) {
			struct gpudma_frame *f = &s->frames[i];

			memcpy(p + used, s->data + f->off, f->len);
			f->off = used;
			used = RTE_ALIGN_CEIL(used + f->len, 64);
		}
	}
	free(s->data);
	s->data = p;
	return 0;
}

void
gpudma_source_free(struct gpudma_source *s)
{
	free(s->data);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

void
gpudma_cursor_init(struct gpudma_cursor *c, const struct gpudma_source *s,
		uint16_t qid, uint16_t nb_queues)
{
	memset(c, 0, sizeof(*c));
	c->first = qid;
	c->stride = nb_queues;
	if (s->nb_frames <= qid)
		return;          /* end 0: this queue gets nothing */
	c->per_round = (s->nb_frames - qid + nb_queues - 1) / nb_queues;
	if (s->loop == 0 || s->loop > UINT64_MAX / c->per_round)
		c->end = UINT64_MAX;
	else
		c->end = (uint64_t)c->per_round * s->loop;
}

int
gpudma_pcap_out_open(struct gpudma_pcap_out **outp, const char *path)
{
	struct gpudma_pcap_out *out;

	out = rte_zmalloc("gpudma_pcap_out", sizeof(*out), 0);
	if (out == NULL)
		return -ENOMEM;
	rte_spinlock_init(&out->lock);
	out->dead = pcap_open_dead(DLT_EN10MB, GPUDMA_MAX_FRAME);
	if (out->dead == NULL) {
		GPUDMA_LOG(ERR, "tx_pcap %s: pcap_open_dead failed", path);
		rte_free(out);
		return -ENOMEM;
	}
	out->dumper = pcap_dump_open(out->dead, path);
	if (out->dumper == NULL) {
		GPUDMA_LOG(ERR, "tx_pcap %s: %s", path, pcap_geterr(out->dead));
		pcap_close(out->dead);
		rte_free(out);
		return -EIO;
	}
	out->good = pcap_dump_ftell64(out->dumper);
	*outp = out;
	return 0;
}

/*
 * Stops the file after a failed write: cuts it back to the end of the last
 * burst written whole, so that readers see whole records, each of them a
 * frame counted as sent, and never a record cut off by a full disk. A
 * device (/dev/full) cannot be cut and has no records to protect.
 */
static void
pcap_out_fail(struct gpudma_pcap_out *out, int err)
{
	int fd = fileno(pcap_dump_file(out->dumper)), null;
	struct stat st;

	out->err = err;
	GPUDMA_LOG(ERR, "tx_pcap: writing the file failed: %s; frames from now on are counted in oerrors, not written",
		strerror(err));
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
			ftruncate(fd, (off_t)out->good) != 0)
		GPUDMA_LOG(ERR, "tx_pcap: cutting the file back to its last whole record failed: %s",
			strerror(errno));
	/* stdio keeps what it could not write and writes it at close, past
	 * the cut; the descriptor now points where those bytes are lost. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || null < 0 || dup2(null, fd) < 0)
		GPUDMA_LOG(ERR, "tx_pcap: detaching the failed file: %s",
			strerror(errno));
	if (null >= 0)
		close(null);
}

uint16_t
gpudma_pcap_out_write(struct gpudma_pcap_out *out, uint8_t *const *frames,
		const uint32_t *lens, uint16_t n)
{
	struct pcap_pkthdr h;
	int64_t end;
	uint16_t i;

	if (n == 0)
		return 0;
	gettimeofday(&h.ts, NULL);
	rte_spinlock_lock(&out->lock);
	if (out->err != 0) {
		rte_spinlock_unlock(&out->lock);
		return 0;
	}
	errno = 0;
	for (i = 0; i < n; i++) {
		h.caplen = lens[i];
		h.len = lens[i];
		pcap_dump((u_char *)out->dumper, &h, frames[i]);
	}
	/*
	 * pcap_dump() reports nothing: its stdio buffer meets the disk later.
	 * Flushed per burst, a failure is known while this burst's frames can
	 * still be counted as not sent, and the burst before it is whole.
	 * A burst larger than the buffer meets the disk inside pcap_dump()
	 * already: stdio then keeps only its error flag, and the flush after
	 * it finds nothing left to fail on.
	 */
	if (ferror(pcap_dump_file(out->dumper)) ||
			pcap_dump_flush(out->dumper) != 0 ||
			(end = pcap_dump_ftell64(out->dumper)) < 0) {
		pcap_out_fail(out, errno != 0 ? errno : EIO);
		n = 0;
	} else {
		out->good = end;
	}
	rte_spinlock_unlock(&out->lock);
	return n;
}

void
gpudma_pcap_out_close(struct gpudma_pcap_out *out)
{
	if (out == NULL)
		return;
	/* Every burst was flushed: this reports only what the close finds. */
	if (out->err == 0 && pcap_dump_flush(out->dumper) != 0)
		GPUDMA_LOG(ERR, "tx_pcap: writing the file failed: %s",
			strerror(errno));
	pcap_dump_close(out->dumper);
	pcap_close(out->dead);
	rte_free(out);
}
