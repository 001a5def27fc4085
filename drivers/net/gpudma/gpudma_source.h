/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUDMA_SOURCE_H
#define GPUDMA_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_spinlock.h>

/* Longest frame the port receives or transmits whole. */
#define GPUDMA_MAX_FRAME 262144u

struct gpudma_frame {
	uint64_t off;            /* in gpudma_source.data */
	uint32_t len;
};

/*
 * The frames of rx_pcap, read once at probe into one buffer: the "wire".
 * The copy engine reads straight from it (it is pinned once a GPU is in
 * use), so a received frame is copied once, into its mbufs.
 */
struct gpudma_source {
	uint8_t *data;
	size_t data_len;         /* allocated length, page multiple */
	struct gpudma_frame *frames;
	uint32_t nb_frames;
	uint64_t loop;           /* 0: forever */
};

/* Which frames a queue receives: those whose index is the queue's id
 * modulo the number of queues, replayed loop times. */
struct gpudma_cursor {
	uint32_t first, stride, per_round;
	uint32_t idx;            /* k % per_round, kept without a division */
	uint64_t k, end;         /* frames delivered; end UINT64_MAX: forever */
};

int gpudma_source_load(struct gpudma_source *s, const char *path,
	uint64_t loop);
/* Lays the frames out queue by queue (the order cursors of nb_queues
 * queues take them in), so that a queue's consecutive frames are
 * contiguous in the store: a fill then copies a run of them at once. */
int gpudma_source_group(struct gpudma_source *s, uint16_t nb_queues);
void gpudma_source_free(struct gpudma_source *s);

void gpudma_cursor_init(struct gpudma_cursor *c, const struct gpudma_source *s,
	uint16_t qid, uint16_t nb_queues);

/* The queue's next frame, NULL once its frames are all delivered. */
static inline const struct gpudma_frame *
gpudma_cursor_peek(const struct gpudma_cursor *c, const struct gpudma_source *s)
{
	if (c->k >= c->end)
		return NULL;
	return &s->frames[c->first + c->idx * c->stride];
}

static inline void
gpudma_cursor_next(struct gpudma_cursor *c)
{
	c->k++;
	if (++c->idx == c->per_round)
		c->idx = 0;
}

/* tx_pcap: frames written whole, by any queue. */
struct gpudma_pcap_out;

int gpudma_pcap_out_open(struct gpudma_pcap_out **out, const char *path);
/*
 * Writes frames[0..n) (lens[i] bytes each) as one burst, flushed to the
 * file. Returns n, or 0 when the burst could not be written whole: the
 * file is then cut back to its last whole burst, the error logged once,
 * and every later call returns 0 (frames the caller counts as oerrors).
 */
uint16_t gpudma_pcap_out_write(struct gpudma_pcap_out *out,
	uint8_t *const *frames, const uint32_t *lens, uint16_t n);
void gpudma_pcap_out_close(struct gpudma_pcap_out *out);

#endif /* GPUDMA_SOURCE_H */
