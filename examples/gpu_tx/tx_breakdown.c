/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx --build-breakdown's arithmetic and report
 * (tx_breakdown.h): parts of each burst, their medians and p99s, their
 * ratios to the flag floor, as text and JSON.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "tx_breakdown.h"

/* Each part's name (text and JSON) and what it spans (text). */
static const struct {
	const char *name;
	const char *what;
} parts[GPUTX_BD_PARTS] = {
	[GPUTX_BD_TOTAL] = { "total", "post begun -> DONE seen by the lcore" },
	[GPUTX_BD_POST] = { "post",
		"the lcore's post: descriptors, barrier, READY" },
	[GPUTX_BD_HANDOFF] = { "handoff",
		"post -> READY seen + DONE -> seen: two flag trips" },
	[GPUTX_BD_LOAD] = { "load", "READY seen -> descriptors held (GPU)" },
	[GPUTX_BD_BUILD] = { "build", "-> frames written (GPU)" },
	[GPUTX_BD_PUBLISH] = { "publish",
		"-> DONE released, frames drained (GPU)" },
};

const char *
gputx_bd_part_name(enum gputx_bd_part p)
{
	return p < GPUTX_BD_PARTS ? parts[p].name : "?";
}

/* b - a of one clock, as a signed number: a part is never negative, but
 * a sum of two clocks' parts may be, by their jitter. */
static double
diff(uint64_t b, uint64_t a)
{
	return b >= a ? (double)(b - a) : -(double)(a - b);
}

void
gputx_bd_parts(const struct gputx_bd_burst *b, double tsc_hz,
		double part[GPUTX_BD_PARTS])
{
	const double ns = 1e9 / tsc_hz;

	part[GPUTX_BD_TOTAL] = diff(b->seen, b->post) * ns;
	part[GPUTX_BD_POST] = diff(b->posted, b->post) * ns;
	part[GPUTX_BD_LOAD] = diff(b->g_loaded, b->g_seen);
	part[GPUTX_BD_BUILD] = diff(b->g_built, b->g_loaded);
	part[GPUTX_BD_PUBLISH] = diff(b->g_done, b->g_built);
	part[GPUTX_BD_HANDOFF] = part[GPUTX_BD_TOTAL] - part[GPUTX_BD_POST] -
		diff(b->g_done, b->g_seen);
}

static int
cmp_double(const void *x, const void *y)
{
	const double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Nearest rank: the smallest value with at least q of them at or below. */
static double
rank(const double *sorted, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	return sorted[k == 0 ? 0 : k - 1];
}

static void
stat_of(double *v, size_t n, struct gputx_bd_stat *st)
{
	qsort(v, n, sizeof(*v), cmp_double);
	st->median = rank(v, n, 0.5);
	st->p99 = rank(v, n, 0.99);
}

int
gputx_bd_compute(const struct gputx_bd_burst *b, size_t n,
		const uint64_t *floor_cycles, size_t nf, double tsc_hz,
		struct gputx_bd *bd)
{
	double *v;

	if (n == 0 || nf == 0 || !(tsc_hz > 0))
		return -EINVAL;
	v = malloc(sizeof(*v) * (n > nf ? n : nf) * GPUTX_BD_PARTS);
	if (v == NULL)
		return -ENOMEM;
	/* Part p of burst i at v[p * n + i]: each part sorted alone. */
	for (size_t i = 0; i < n; i++) {
		double part[GPUTX_BD_PARTS];

		gputx_bd_parts(&b[i], tsc_hz, part);
		for (unsigned int p = 0; p < GPUTX_BD_PARTS; p++)
			v[p * n + i] = part[p];
	}
	for (unsigned int p = 0; p < GPUTX_BD_PARTS; p++)
		stat_of(v + p * n, n, &bd->part[p]);
	for (size_t i = 0; i < nf; i++)
		v[i] = (double)floor_cycles[i] * 1e9 / tsc_hz;
	stat_of(v, nf, &bd->floor);
	bd->bursts = n;
	bd->floor_rounds = (uint32_t)nf;
	free(v);
	return 0;
}

static double
ratio(double v, double floor)
{
	return floor > 0 ? v / floor : 0;
}

void
gputx_bd_text(const struct gputx_bd *bd, FILE *f)
{
	fprintf(f, "GPU build breakdown: %" PRIu64 " bursts (us, median / p99; "
		"x the flag floor)\n  floor   %8.3f / %8.3f  flag ping-pong "
		"lcore <-> GPU, %s memory, %u rounds\n", bd->bursts,
		bd->floor.median / 1e3, bd->floor.p99 / 1e3,
		bd->floor_in_gpu ? "GPU (GDRCopy)" : "host", bd->floor_rounds);
	for (unsigned int p = 0; p < GPUTX_BD_PARTS; p++)
		fprintf(f, "  %-7s %8.3f / %8.3f  %6.2fx / %6.2fx  %s\n",
			parts[p].name, bd->part[p].median / 1e3,
			bd->part[p].p99 / 1e3,
			ratio(bd->part[p].median, bd->floor.median),
			ratio(bd->part[p].p99, bd->floor.p99), parts[p].what);
	if (bd->per_burst)
		fprintf(f, "  (launch per burst: READY seen is the item kernel's "
			"start)\n");
}

void
gputx_bd_json(const struct gputx_bd *bd, struct gpuapp_json *j)
{
	gpuapp_json_obj_begin(j, "build_breakdown_us");
	gpuapp_json_u64(j, "bursts", bd->bursts);
	gpuapp_json_str(j, "ready_seen", bd->per_burst ? "kernel start" :
		"READY poll");
	gpuapp_json_obj_begin(j, "floor");
	gpuapp_json_fixed(j, "median", bd->floor.median / 1e3, 3);
	gpuapp_json_fixed(j, "p99", bd->floor.p99 / 1e3, 3);
	gpuapp_json_u64(j, "rounds", bd->floor_rounds);
	gpuapp_json_str(j, "memory", bd->floor_in_gpu ? "gpu" : "host");
	gpuapp_json_obj_end(j);
	for (unsigned int p = 0; p < GPUTX_BD_PARTS; p++) {
		gpuapp_json_obj_begin(j, parts[p].name);
		gpuapp_json_fixed(j, "median", bd->part[p].median / 1e3, 3);
		gpuapp_json_fixed(j, "p99", bd->part[p].p99 / 1e3, 3);
		gpuapp_json_fixed(j, "median_vs_floor",
			ratio(bd->part[p].median, bd->floor.median), 3);
		gpuapp_json_fixed(j, "p99_vs_floor",
			ratio(bd->part[p].p99, bd->floor.p99), 3);
		gpuapp_json_obj_end(j);
	}
	gpuapp_json_obj_end(j);
}
