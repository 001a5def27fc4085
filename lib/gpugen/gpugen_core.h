/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's per-packet code, one source for the CPU and the GPU:
 * which stream global packet n belongs to, its length, and its bytes.
 * The CPU build (gpugen_build_cpu) is the reference every GPU build is
 * compared against, byte for byte.
 *
 * The table is plain data (offsets, no pointers) so it is copied to GPU
 * memory, or read through host-mapped memory, as is.
 */
#ifndef GPUGEN_CORE_H
#define GPUGEN_CORE_H

#include <stddef.h>

#include "gpugen_build.h"
#include "gpugen_fe.h"
#include "gpugen_stamp.h"

#define GPUGEN_MAX_STREAMS 64
#define GPUGEN_FCS 4	/* sizes are given with the FCS the port adds */

/* gpugen_stream_dev.size_mode */
#define GPUGEN_SIZE_FIXED 0
#define GPUGEN_SIZE_STEP 1	/* min, min + step, ... wrapping at max */
#define GPUGEN_SIZE_RANDOM 2	/* uniform in [min, max] */
#define GPUGEN_SIZE_REPLAY 3	/* the frames of a file, one after another */

/*
 * One frame of a replay stream (pcap=FILE,all). The stream's template
 * bytes start with n_frames of these, then the frames, then, when the
 * stream has variables or a stamp, one program per frame (each frame has
 * its own layout): its packet idx is frame idx % n_frames, with idx for
 * the variables.
 */
struct gpugen_replay_frame {
	uint32_t off;		/* the frame, from the stream's tmpl_off */
	uint32_t len;		/* no FCS */
	uint32_t prog_off;	/* its program, from the stream's tmpl_off;
				 * GPUGEN_REPLAY_NO_PROG: none */
	uint32_t stamp_rank;	/* stamped frames before it in the file */
};
#define GPUGEN_REPLAY_NO_PROG UINT32_MAX

struct gpugen_stream_dev {
	struct gpugen_fe_prog prog;	/* compiled against the shortest frame */
	struct gpugen_pkt_spec spec;	/* spec streams: rebuilt per size */
	uint64_t seed;
	uint32_t tmpl_off;		/* into the table's template bytes */
	uint32_t tmpl_len;		/* the longest frame, no FCS */
	uint32_t hdr_len;		/* frame bytes before the payload */
	uint32_t len_min, len_max, len_step;	/* frame bytes, no FCS */
	uint32_t weight;		/* packets per round */
	uint32_t wstart;		/* packets of earlier streams per round */
	uint8_t size_mode;
	uint8_t from_spec;
	uint32_t csum_offload;		/* GPUGEN_CSUM_OFF_*: the port's part */
	uint32_t n_frames;		/* GPUGEN_SIZE_REPLAY: frames replayed, */
	uint32_t n_stamped;		/* and how many of them stamped */
	uint32_t area_len;		/* template bytes the stream owns */
};

struct gpugen_table {
	uint32_t n_streams;
	uint32_t round;			/* sum of the weights */
	uint32_t tmpl_bytes;
	/* Bytes from the table's start to its templates: sizeof(struct
	 * gpugen_table), or less in a compact copy that holds only s[0] to
	 * s[n_streams - 1] (gpugen_block_table_compact, gpugen_dev.cuh). */
	uint32_t tmpl_at;
	struct gpugen_stream_dev s[GPUGEN_MAX_STREAMS];
	/* Followed by tmpl_bytes of templates. */
};

/* The length of the table's compact copy: its streams, then its
 * templates, 16-byte aligned as in the table. */
GPURX_FN uint32_t
gpugen_table_compact_len(uint32_t n_streams, uint32_t tmpl_bytes)
{
	return (uint32_t)offsetof(struct gpugen_table, s) +
		n_streams * (uint32_t)sizeof(struct gpugen_stream_dev) +
		tmpl_bytes;
}

GPURX_FN const uint8_t *
gpugen_tmpl(const struct gpugen_table *t, const struct gpugen_stream_dev *st)
{
	return (const uint8_t *)t + t->tmpl_at + st->tmpl_off;
}

/*
 * Global packet n: streams take turns by weight, weight[s] packets of
 * stream s per round in stream order. *idx is the packet's index in its
 * stream. A closed form, so any thread places any packet.
 */
GPURX_FN uint32_t
gpugen_locate(const struct gpugen_table *t, uint64_t n, uint64_t *idx)
{
	uint64_t r;
	uint32_t pos, s = 0;

	/* One stream: packet n is its packet n. Spares the GPU a 64-bit
	 * division and remainder, a long software sequence there. */
	if (t->n_streams == 1) {
		*idx = n;
		return 0;
	}
	r = n / t->round;
	pos = (uint32_t)(n % t->round);
	while (s + 1 < t->n_streams && pos >= t->s[s + 1].wstart)
		s++;
	*idx = r * t->s[s].weight + (pos - t->s[s].wstart);
	return s;
}

/* The frame a replay stream's packet idx sends. */
GPURX_FN const struct gpugen_replay_frame *
gpugen_replay_frame(const struct gpugen_table *t,
		const struct gpugen_stream_dev *st, uint64_t idx)
{
	return (const struct gpugen_replay_frame *)gpugen_tmpl(t, st) +
		idx % st->n_frames;
}

/* Frame length (no FCS) of packet idx of stream st. */
GPURX_FN uint32_t
gpugen_stream_len(const struct gpugen_table *t,
		const struct gpugen_stream_dev *st, uint64_t idx)
{
	uint64_t r = (uint64_t)st->len_max - st->len_min + 1;

	switch (st->size_mode) {
	case GPUGEN_SIZE_REPLAY:
		return gpugen_replay_frame(t, st, idx)->len;
	case GPUGEN_SIZE_STEP: {
		/* Positions min, min + step, ... below max + 1, then again. */
		uint64_t n_pos = (r + st->len_step - 1) / st->len_step;

		return st->len_min + (uint32_t)((idx % n_pos) * st->len_step);
	}
	case GPUGEN_SIZE_RANDOM:
		/* The field engine's hash, keyed apart from its variables. */
		return st->len_min + (uint32_t)(gpugen_fe_hash(st->seed,
			st->prog.stream, 0xff, idx) % r);
	default:
		return st->len_max;
	}
}

/*
 * Packet idx of stream st into out (room for st->tmpl_len bytes), stamped
 * with tx_ns when the stream stamps. Returns its length. A frame shorter
 * than the template is built again from the spec (lengths and checksums
 * from scratch), then takes the same field-engine program: the program's
 * offsets all lie in the shortest frame, and its incremental checksum
 * fixes depend only on the bytes it changes.
 */
GPURX_FN uint32_t
gpugen_make(const struct gpugen_table *t, const struct gpugen_stream_dev *st,
		uint64_t idx, uint64_t tx_ns, uint8_t *out)
{
	uint32_t len = gpugen_stream_len(t, st, idx);

	if (st->size_mode == GPUGEN_SIZE_REPLAY) {
		const struct gpugen_replay_frame *f =
			gpugen_replay_frame(t, st, idx);

		gpugen_pb_copy(out, gpugen_tmpl(t, st) + f->off, len);
		if (f->prog_off != GPUGEN_REPLAY_NO_PROG)
			gpugen_fe_apply_seq((const struct gpugen_fe_prog *)
				(gpugen_tmpl(t, st) + f->prog_off), out, idx,
				idx / st->n_frames * st->n_stamped +
				f->stamp_rank, tx_ns);
		return len;
	}
	if (len == st->tmpl_len) {
		gpugen_pb_copy(out, gpugen_tmpl(t, st), len);
	} else {
		struct gpugen_pkt_spec sp = st->spec;
		struct gpugen_pkt_layout lay;

		sp.payload_len = len > st->hdr_len ? len - st->hdr_len : 0;
		if (gpugen_pkt_build(&sp, out, st->tmpl_len, &lay) != len)
			return 0;	/* cannot happen for a checked stream */
		if (st->prog.csum_offload)
			(void)gpugen_pkt_csum_offload(out, &lay);
	}
	gpugen_fe_apply(&st->prog, out, idx, tx_ns);
	return len;
}

/* Global packet n into out; its stream in *stream. */
GPURX_FN uint32_t
gpugen_make_n(const struct gpugen_table *t, uint64_t n, uint64_t tx_ns,
		uint8_t *out, uint32_t *stream)
{
	uint64_t idx;
	uint32_t s = gpugen_locate(t, n, &idx);

	*stream = s;
	return gpugen_make(t, &t->s[s], idx, tx_ns, out);
}

/* Global packet n's length, without building it. */
GPURX_FN uint32_t
gpugen_table_len(const struct gpugen_table *t, uint64_t n)
{
	uint64_t idx;
	uint32_t s = gpugen_locate(t, n, &idx);

	return gpugen_stream_len(t, &t->s[s], idx);
}

#endif /* GPUGEN_CORE_H */
