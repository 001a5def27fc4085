/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main lcore's watch of the GPU side (liveness.h), on made-up
 * samples with a 1 MHz clock: a failed or ended kernel is reported at
 * the first look; a queue whose published items stop coming back is
 * stalled after --stall-ms and not before; idle queues, queues that
 * progress, and a stall time of 0 never are; a full ring makes a look
 * due at once.
 */

#include <string.h>

#include "liveness.h"
#include "check.h"

#define HZ 1000000ull		/* 1 cycle = 1 us */
#define MS (HZ / 1000)

static struct gpurx_qlive live[GPURX_MAX_QUEUES];

static enum gpurx_watch_verdict
look(struct gpurx_watch *w, uint64_t now, enum gpurx_kstate ks, uint16_t *q,
		uint64_t *age)
{
	*q = 0xffff;
	*age = 0;
	return gpurx_watch_decide(w, now, ks, live, q, age);
}

static void
test_kernel(void)
{
	struct gpurx_watch w;
	uint16_t q;
	uint64_t age;

	memset(live, 0, sizeof(live));
	gpurx_watch_init(&w, 2, HZ, 2000, 0);
	CHECK_EQ(look(&w, 100 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_OK);
	CHECK_EQ(look(&w, 200 * MS, GPURX_KSTATE_FAILED, &q, &age),
		GPURX_WATCH_KERNEL_FAILED);
	CHECK_EQ(look(&w, 300 * MS, GPURX_KSTATE_ENDED, &q, &age),
		GPURX_WATCH_KERNEL_ENDED);
	/* A dead kernel comes before a stalled queue. */
	live[1].published = 5;
	CHECK_EQ(look(&w, 10000 * MS, GPURX_KSTATE_FAILED, &q, &age),
		GPURX_WATCH_KERNEL_FAILED);
	/* Launch per burst: no kernel to look at, queues still watched. */
	live[1].published = 0;
	CHECK_EQ(look(&w, 10100 * MS, GPURX_KSTATE_NONE, &q, &age),
		GPURX_WATCH_OK);
}

static void
test_stall(void)
{
	struct gpurx_watch w;
	uint16_t q;
	uint64_t age, t;

	memset(live, 0, sizeof(live));
	gpurx_watch_init(&w, 3, HZ, 1000, 0);
	/* Idle for a long time: never stalled. */
	for (t = 100; t <= 5000; t += 100)
		CHECK_EQ(look(&w, t * MS, GPURX_KSTATE_RUNNING, &q, &age),
			GPURX_WATCH_OK);
	/* Queue 2 publishes, nothing comes back: stalled 1000 ms after the
	 * last look that saw it idle, not before. */
	live[2].published = 4;
	live[2].inflight_pkts = 128;
	for (t = 5100; t < 6000; t += 100)
		CHECK_EQ(look(&w, t * MS, GPURX_KSTATE_RUNNING, &q, &age),
			GPURX_WATCH_OK);
	CHECK_EQ(look(&w, 6000 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_STALLED);
	CHECK_EQ(q, 2);
	CHECK_EQ(age, 1000 * MS);
	/* One item back: the clock starts again. */
	live[2].collected = 1;
	CHECK_EQ(look(&w, 6100 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_OK);
	CHECK_EQ(look(&w, 7000 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_OK);
	CHECK_EQ(look(&w, 7100 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_STALLED);
	CHECK_EQ(q, 2);
	/* A queue that keeps progressing with items always out is fine. */
	gpurx_watch_init(&w, 1, HZ, 1000, 0);
	memset(live, 0, sizeof(live));
	for (t = 1; t <= 100; t++) {
		live[0].published = 10 * t + 5;
		live[0].collected = 10 * t;
		CHECK_EQ(look(&w, t * 100 * MS, GPURX_KSTATE_RUNNING, &q, &age),
			GPURX_WATCH_OK);
	}
	/* ... and the last look that saw progress is kept for the report. */
	CHECK_EQ(w.progress, 100 * 100 * MS);
	/* Stall detection off. */
	gpurx_watch_init(&w, 1, HZ, 0, 0);
	live[0].published = 9;
	live[0].collected = 0;
	CHECK_EQ(look(&w, 1000000 * MS, GPURX_KSTATE_RUNNING, &q, &age),
		GPURX_WATCH_OK);
}

static void
test_due(void)
{
	struct gpurx_watch w;
	uint16_t q;
	uint64_t age;

	gpurx_watch_init(&w, 1, HZ, 2000, 1000 * MS);
	CHECK(!gpurx_watch_due(&w, 1000 * MS + 1, 0), "just looked");
	CHECK(gpurx_watch_due(&w, 1000 * MS + 1, 1), "ring full: now");
	CHECK(!gpurx_watch_due(&w, (1000 + GPURX_WATCH_PERIOD_MS) * MS - 1, 0),
		"before the period");
	CHECK(gpurx_watch_due(&w, (1000 + GPURX_WATCH_PERIOD_MS) * MS, 0),
		"a period later");
	/* A look restarts the period; the period is under a second. */
	look(&w, 1050 * MS, GPURX_KSTATE_RUNNING, &q, &age);
	CHECK(!gpurx_watch_due(&w, 1100 * MS, 0), "restarted");
	CHECK(GPURX_WATCH_PERIOD_MS < 1000, "a look at least every second");
	/* More queues than the app has: capped. */
	gpurx_watch_init(&w, 1000, HZ, 2000, 0);
	CHECK_EQ(w.nq, GPURX_MAX_QUEUES);
}

int
main(void)
{
	test_kernel();
	test_stall();
	test_due();
	return check_finish("test_liveness");
}
