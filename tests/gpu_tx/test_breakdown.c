/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx --build-breakdown's arithmetic, text and JSON
 * (examples/gpu_tx/tx_breakdown.c) on bursts and floor round trips made
 * up here. Runs without a GPU: the times themselves are what the lcore's
 * TSC and the kernel's %globaltimer give on one (the lead's GPU run,
 * doc/gpu_tx.md), and the option's refusals are run-tx-e2e.sh's.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tx_breakdown.h"

/* 2.5 cycles a ns: a conversion that is not the identity. */
#define HZ 2.5e9
#define N_BURSTS 200
#define N_FLOOR 10

static int
near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

/* One burst: each part from its own clock readings. */
static void
parts_one(void)
{
	const struct gputx_bd_burst b = {
		.post = 10000, .posted = 10000 + 500, .seen = 10000 + 62500,
		.g_seen = 5000000000ULL, .g_loaded = 5000002000ULL,
		.g_built = 5000005000ULL, .g_done = 5000006500ULL,
	};
	double p[GPUTX_BD_PARTS];

	gputx_bd_parts(&b, HZ, p);
	CHECK(near(p[GPUTX_BD_TOTAL], 25000), "total %f", p[GPUTX_BD_TOTAL]);
	CHECK(near(p[GPUTX_BD_POST], 200), "post %f", p[GPUTX_BD_POST]);
	CHECK(near(p[GPUTX_BD_LOAD], 2000), "load %f", p[GPUTX_BD_LOAD]);
	CHECK(near(p[GPUTX_BD_BUILD], 3000), "build %f", p[GPUTX_BD_BUILD]);
	CHECK(near(p[GPUTX_BD_PUBLISH], 1500), "publish %f",
		p[GPUTX_BD_PUBLISH]);
	/* 25000 - 200 - 6500 (the GPU's span). */
	CHECK(near(p[GPUTX_BD_HANDOFF], 18300), "handoff %f",
		p[GPUTX_BD_HANDOFF]);
}

/* A GPU span longer than the host's total (the two clocks' jitter)
 * gives a negative handoff, not a wrapped one. */
static void
parts_negative(void)
{
	const struct gputx_bd_burst b = {
		.post = 0, .posted = 0, .seen = 2500,
		.g_seen = 100, .g_loaded = 600, .g_built = 1100, .g_done = 1300,
	};
	double p[GPUTX_BD_PARTS];

	gputx_bd_parts(&b, HZ, p);
	CHECK(near(p[GPUTX_BD_HANDOFF], -200), "handoff %f",
		p[GPUTX_BD_HANDOFF]);
}

/*
 * Bursts whose parts are known multiples of r = 1 .. 200 (r dealt out in
 * the order (7 i) % 200 + 1, so that nothing arrives sorted): total r us,
 * post 100 ns, load 10 r ns, build 20 r ns, publish 50 ns, so handoff
 * 970 r - 150 ns. Nearest rank over 200: the median is r = 100, the p99
 * r = 198. The floor: 2000 + 100 ((3 k) % 10) ns, median 2400 (the 5th
 * of 10), p99 2900 (the 10th).
 */
static void
fill(struct gputx_bd_burst *b, uint64_t *fl)
{
	for (unsigned int i = 0; i < N_BURSTS; i++) {
		const uint64_t r = (7 * i) % N_BURSTS + 1;
		const uint64_t t0 = 1000000 + 1000 * (uint64_t)i;
		const uint64_t g0 = 7000000000ULL + 999 * (uint64_t)i;

		b[i].post = t0;
		b[i].posted = t0 + 250;			/* 100 ns */
		b[i].seen = t0 + 2500 * r;		/* r us */
		b[i].g_seen = g0;
		b[i].g_loaded = g0 + 10 * r;
		b[i].g_built = b[i].g_loaded + 20 * r;
		b[i].g_done = b[i].g_built + 50;
	}
	for (unsigned int k = 0; k < N_FLOOR; k++)
		fl[k] = (uint64_t)((2000 + 100 * ((3 * k) % 10)) * 2.5);
}

static void
stats(void)
{
	struct gputx_bd_burst b[N_BURSTS];
	uint64_t fl[N_FLOOR];
	struct gputx_bd bd;

	memset(&bd, 0, sizeof(bd));
	fill(b, fl);
	CHECK_EQ(gputx_bd_compute(b, N_BURSTS, fl, N_FLOOR, HZ, &bd), 0);
	CHECK_EQ(bd.bursts, N_BURSTS);
	CHECK_EQ(bd.floor_rounds, N_FLOOR);
	CHECK(near(bd.floor.median, 2400) && near(bd.floor.p99, 2900),
		"floor %f / %f", bd.floor.median, bd.floor.p99);
	CHECK(near(bd.part[GPUTX_BD_TOTAL].median, 100000) &&
		near(bd.part[GPUTX_BD_TOTAL].p99, 198000), "total %f / %f",
		bd.part[GPUTX_BD_TOTAL].median, bd.part[GPUTX_BD_TOTAL].p99);
	CHECK(near(bd.part[GPUTX_BD_HANDOFF].median, 96850) &&
		near(bd.part[GPUTX_BD_HANDOFF].p99, 191910), "handoff %f / %f",
		bd.part[GPUTX_BD_HANDOFF].median,
		bd.part[GPUTX_BD_HANDOFF].p99);
	CHECK(near(bd.part[GPUTX_BD_LOAD].median, 1000) &&
		near(bd.part[GPUTX_BD_LOAD].p99, 1980), "load");
	CHECK(near(bd.part[GPUTX_BD_BUILD].median, 2000) &&
		near(bd.part[GPUTX_BD_BUILD].p99, 3960), "build");
	CHECK(near(bd.part[GPUTX_BD_POST].median, 100) &&
		near(bd.part[GPUTX_BD_PUBLISH].p99, 50), "post, publish");
	/* Nothing to take a median of. */
	CHECK_EQ(gputx_bd_compute(b, 0, fl, N_FLOOR, HZ, &bd), -EINVAL);
	CHECK_EQ(gputx_bd_compute(b, N_BURSTS, fl, 0, HZ, &bd), -EINVAL);
}

static char *
slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return strcpy(buf, "(unreadable)");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The summary's object, member by member, figures and ratios rounded
 * as the document states them. */
static void
json(void)
{
	static const char want[] =
		"{\"build_breakdown_us\": {\"bursts\": 200, \"ready_seen\": "
		"\"READY poll\", \"floor\": {\"median\": 2.4, \"p99\": 2.9, "
		"\"rounds\": 10, \"memory\": \"host\"}, "
		"\"total\": {\"median\": 100.0, \"p99\": 198.0, "
		"\"median_vs_floor\": 41.667, \"p99_vs_floor\": 68.276}, "
		"\"post\": {\"median\": 0.1, \"p99\": 0.1, "
		"\"median_vs_floor\": 0.042, \"p99_vs_floor\": 0.034}, "
		"\"handoff\": {\"median\": 96.85, \"p99\": 191.91, "
		"\"median_vs_floor\": 40.354, \"p99_vs_floor\": 66.176}, "
		"\"load\": {\"median\": 1.0, \"p99\": 1.98, "
		"\"median_vs_floor\": 0.417, \"p99_vs_floor\": 0.683}, "
		"\"build\": {\"median\": 2.0, \"p99\": 3.96, "
		"\"median_vs_floor\": 0.833, \"p99_vs_floor\": 1.366}, "
		"\"publish\": {\"median\": 0.05, \"p99\": 0.05, "
		"\"median_vs_floor\": 0.021, \"p99_vs_floor\": 0.017}}}\n";
	struct gputx_bd_burst b[N_BURSTS];
	uint64_t fl[N_FLOOR];
	struct gputx_bd bd;
	struct gpuapp_json *j;
	char path[256];
	const char *dir = getenv("TMPDIR");

	memset(&bd, 0, sizeof(bd));
	fill(b, fl);
	CHECK_EQ(gputx_bd_compute(b, N_BURSTS, fl, N_FLOOR, HZ, &bd), 0);
	j = gpuapp_json_create();
	CHECK(j != NULL, "create");
	if (j == NULL)
		return;
	gpuapp_json_obj_begin(j, NULL);
	gputx_bd_json(&bd, j);
	gpuapp_json_obj_end(j);
	snprintf(path, sizeof(path), "%s/gputx-breakdown-%d.json",
		dir != NULL ? dir : "/tmp", (int)getpid());
	CHECK(gpuapp_json_write(j, path, 0) == 0, "write %s", path);
	CHECK(strcmp(slurp(path), want) == 0, "got:\n%s", slurp(path));
	unlink(path);
	gpuapp_json_free(j);
}

/* The text: the floor's line and a part's, ratios to it; launched per
 * burst it says what stands for READY seen. */
static void
text(void)
{
	struct gputx_bd_burst b[N_BURSTS];
	uint64_t fl[N_FLOOR];
	struct gputx_bd bd;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	memset(&bd, 0, sizeof(bd));
	fill(b, fl);
	CHECK_EQ(gputx_bd_compute(b, N_BURSTS, fl, N_FLOOR, HZ, &bd), 0);
	bd.floor_in_gpu = 1;
	bd.per_burst = 1;
	f = open_memstream(&out, &len);
	CHECK(f != NULL, "open_memstream");
	if (f == NULL)
		return;
	gputx_bd_text(&bd, f);
	fclose(f);
	CHECK(strstr(out, "GPU build breakdown: 200 bursts") != NULL &&
		strstr(out, "  floor      2.400 /    2.900  flag ping-pong "
			"lcore <-> GPU, GPU (GDRCopy) memory, 10 rounds\n") != NULL &&
		strstr(out, "  total    100.000 /  198.000   41.67x /  68.28x") !=
			NULL &&
		strstr(out, "  handoff   96.850 /  191.910   40.35x /  66.18x") !=
			NULL &&
		strstr(out, "launch per burst") != NULL, "got:\n%s", out);
	free(out);
}

int
main(void)
{
	CHECK_CASE(parts_one);
	CHECK_CASE(parts_negative);
	CHECK_CASE(stats);
	CHECK_CASE(json);
	CHECK_CASE(text);
	return check_finish("gputx-breakdown");
}
