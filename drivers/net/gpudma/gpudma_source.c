/* SPDX-License-Identifier: BSD-3-Clause */

/* The port's wire: frames read from rx_pcap, frames written to tx_pcap. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "gpudma.h"

#define PAGE 4096u

struct gpudma_pcap_out {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	rte_spinlock_t lock;     /* queues share the file */
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
		if (hdr->caplen == 0)
			continue;
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
	*outp = out;
	return 0;
}

void
gpudma_pcap_out_write(struct gpudma_pcap_out *out, const uint8_t *frame,
		uint32_t len)
{
	struct pcap_pkthdr h;

	gettimeofday(&h.ts, NULL);
	h.caplen = len;
	h.len = len;
	rte_spinlock_lock(&out->lock);
	pcap_dump((u_char *)out->dumper, &h, frame);
	rte_spinlock_unlock(&out->lock);
}

void
gpudma_pcap_out_close(struct gpudma_pcap_out *out)
{
	if (out == NULL)
		return;
	if (pcap_dump_flush(out->dumper) != 0)
		GPUDMA_LOG(ERR, "tx_pcap: writing the file failed: %s",
			strerror(errno));
	pcap_dump_close(out->dumper);
	pcap_close(out->dead);
	rte_free(out);
}
