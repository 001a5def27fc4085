/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_FRAMES_H
#define GPUDMA_FRAMES_H

/*
 * The frames net_gpudma's tests and bench-gpudma feed the port: byte j of
 * frame k is gpudma_frame_byte(k, j), so a consumer checks what it got
 * without the file.
 */

#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

#include <rte_mbuf.h>

#define GPUDMA_FRAMES_MAX 262144u

static inline uint8_t
gpudma_frame_byte(uint32_t frame, uint32_t off)
{
	return (uint8_t)(frame * 151u + off * 7u + (off >> 8));
}

/* Writes n frames, frame k lens[k % nlens] bytes long. Returns 0 or -1. */
static inline int
gpudma_frames_write(const char *path, const uint32_t *lens, unsigned int nlens,
		unsigned int n)
{
	static uint8_t data[GPUDMA_FRAMES_MAX];
	struct pcap_pkthdr h = { 0 };
	pcap_dumper_t *d;
	pcap_t *p;
	unsigned int i;
	uint32_t j;

	p = pcap_open_dead(DLT_EN10MB, GPUDMA_FRAMES_MAX);
	d = p != NULL ? pcap_dump_open(p, path) : NULL;
	if (d == NULL) {
		fprintf(stderr, "cannot write %s\n", path);
		if (p != NULL)
			pcap_close(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		h.caplen = h.len = lens[i % nlens];
		h.ts.tv_sec = i;
		for (j = 0; j < h.caplen; j++)
			data[j] = gpudma_frame_byte(i, j);
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}

/* Frame k of len bytes as a chain of mp's buffers, seg bytes each, the
 * way another port hands frames over (rx_port's tests and benchmark);
 * NULL when mp runs dry. */
static inline struct rte_mbuf *
gpudma_frame_mbufs(struct rte_mempool *mp, uint32_t k, uint32_t len,
		uint32_t seg)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = len - off < seg ? len - off : seg, j;
		uint8_t *d = m != NULL ?
			(uint8_t *)rte_pktmbuf_append(m, (uint16_t)n) : NULL;

		if (d == NULL) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		for (j = 0; j < n; j++)
			d[j] = gpudma_frame_byte(k, off + j);
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		last = m;
		off += n;
	} while (off < len);
	return head;
}

#endif /* GPUDMA_FRAMES_H */
