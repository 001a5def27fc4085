/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-ipfix-writer: the flow exporter's writer alone (issue 35): how
 * many records a second dpdk-gpu-rx's IPFIX writer (ipfix_writer.c over
 * libfixbuf) takes from a host export ring into a file, with no table,
 * scan or GPU in the way. The records are synthetic (a mix of IPv4 and
 * IPv6, TCP, UDP and ICMP); each batch is put in the ring untimed, then
 * gpurx_ipfix_drain() takes it, timed, as the exporter thread does, with
 * gpurx_ipfix_tick() every GPURX_IPFIX_TICK_MS of writer time and
 * gpurx_ipfix_close() (the last flush) in the time. With --add-many each
 * batch goes through gpurx_ipfix_add_many() instead (the exit's path for
 * flows still live), straight from the ring's memory.
 *
 * Usage: bench-ipfix-writer --file F [--records N] [--v6 PCT] [--encoders N]
 *        [--add-many]
 * Prints one line: ipfix-writer: N records in S s = R records/s, with
 * the CPU time of the timed parts a record, user and system (the
 * kernel's writes into the file), all the writer's threads together.
 * Exit: 0; 1 failure; 2 usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "ipfix_writer.h"

#define RING_RECORDS (1u << 16)
#define BATCH 4096u	/* records a drain, as dpdk-gpu-rx's DRAIN_BATCH */

struct biw_opts {
	const char *file;
	uint64_t records, v6_pct, encoders;
	int add_many;
};

static int
parse(int argc, char **argv, struct biw_opts *o)
{
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_STRING_ENTRY("file", &o->file, "F",
			"the IPFIX file written (needed; tmpfs measures the "
			"writer, not the disk)"),
		GPUAPP_OPT_UINT_ENTRY("records", &o->records, 1, 1ull << 40,
			"N", "records written (default 10000000)"),
		GPUAPP_OPT_UINT_ENTRY("v6", &o->v6_pct, 0, 100, "PCT",
			"percent of IPv6 records (default 10)"),
		GPUAPP_OPT_UINT_ENTRY("encoders", &o->encoders, 1,
			GPURX_IPFIX_ENCODERS_MAX, "N",
			"encoder threads (gpurx_ipfix_set_encoders(); "
			"default 1)"),
		GPUAPP_OPT_FLAG_ENTRY("add-many", &o->add_many,
			"batches through gpurx_ipfix_add_many(), not the "
			"ring's drain"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->records = 10000000;
	o->v6_pct = 10;
	o->encoders = 1;
	ret = bench_opts_parse(table, RTE_DIM(table), "usage: %s [options]",
		argc, argv);
	if (ret != 0)
		return ret;
	if (o->file == NULL) {
		BENCH_LOG(ERR, "--file F is needed: where the IPFIX goes\n");
		return -EINVAL;
	}
	return 0;
}

/* Record i of the run: its fields from i alone (a 64-bit mix), so every
 * run writes the same file. */
static void
make_rec(struct gpurx_flow_rec *r, uint64_t i, uint64_t v6_pct)
{
	static const uint8_t protos[] = { 6, 6, 6, 17, 17, 1 };
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
	uint64_t seq = r->seq;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	memset(r, 0, sizeof(*r));
	r->seq = seq;
	r->key.ip_version = (h % 100) < v6_pct ? 6 : 4;
	r->key.proto = protos[(h >> 8) % RTE_DIM(protos)];
	if (r->key.ip_version == 6) {
		r->key.src[0] = 0x20;
		r->key.src[1] = 0x01;
		r->key.dst[0] = 0x20;
		r->key.dst[1] = 0x01;
		if (r->key.proto == 1)
			r->key.proto = 58;
	} else {
		r->key.src[10] = r->key.src[11] = 0xff;
		r->key.dst[10] = r->key.dst[11] = 0xff;
		r->key.src[12] = 10;
		r->key.dst[12] = 192;
	}
	memcpy(&r->key.src[13], &h, 3);
	memcpy(&r->key.dst[13], (const uint8_t *)&h + 3, 3);
	r->key.sport = (uint16_t)(h >> 16);
	r->key.dport = r->key.proto == 1 || r->key.proto == 58 ?
		0x0800 : (uint16_t)(h >> 32);
	r->key.vlan_id = (uint16_t)((h >> 40) & 0xfff);
	r->packets = 1 + ((h >> 20) & 0xffff);
	r->bytes = r->packets * (64 + ((h >> 36) & 0x3ff));
	r->first_ns = 1700000000000000000ull + i * 100;
	r->last_ns = r->first_ns + ((h >> 12) & 0xffffff) * 1000;
	r->tcp_flags = r->key.proto == 6 ? (uint8_t)(h >> 44) : 0;
	r->reason = 1 + (uint8_t)((h >> 50) % 5);
	r->ttl_min = (uint8_t)(h >> 54);
	r->ttl_max = r->ttl_min + 3;
	memcpy(r->attr.src_mac, &h, 6);
	memcpy(r->attr.dst_mac, (const uint8_t *)&h + 2, 6);
	r->attr.tos = (uint8_t)(h >> 58);
}

/* The process's CPU time so far, user and system, in ns. */
static void
cpu_ns(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		memset(&ru, 0, sizeof(ru));
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		(uint64_t)ru.ru_utime.tv_usec * 1000;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		(uint64_t)ru.ru_stime.tv_usec * 1000;
}

int
main(int argc, char **argv)
{
	struct biw_opts o;
	struct gpurx_flow_ring *ring;
	struct gpurx_ipfix *x;
	uint64_t made = 0, tail = 0, ns = 0, last_tick = 0, t0;
	uint64_t user = 0, sys = 0, u0, s0, u1, s1;
	int rc;

	rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
	ring = gpurx_flow_ring_init(malloc(gpurx_flow_ring_bytes(RING_RECORDS)),
		RING_RECORDS);
	if (ring == NULL) {
		BENCH_LOG(ERR, "out of memory for the ring\n");
		return BENCH_EXIT_FAIL;
	}
	x = gpurx_ipfix_open(NULL, o.file, 1, 1);
	if (x != NULL && gpurx_ipfix_set_encoders(x,
			(unsigned int)o.encoders) != 0) {
		gpurx_ipfix_free(x);
		x = NULL;
	}
	if (x == NULL) {
		free(ring);
		return BENCH_EXIT_FAIL;
	}
	while (made < o.records) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)BATCH, o.records - made);

		/* Untimed: the producer's side. */
		for (uint32_t j = 0; j < n; j++, made++) {
			struct gpurx_flow_rec *r =
				&ring->recs[made & (RING_RECORDS - 1)];

			make_rec(r, made, o.v6_pct);
			r->seq = made + 1;
		}
		cpu_ns(&u0, &s0);
		t0 = bench_now_ns();
		if (o.add_many) {
			/* BATCH divides RING_RECORDS: a batch is contiguous. */
			gpurx_ipfix_add_many(x,
				&ring->recs[tail & (RING_RECORDS - 1)], n);
			tail += n;
			gpurx_flow_ring_consumed(ring, tail);
		} else if (gpurx_ipfix_drain(x, ring, &tail, n) != n) {
			BENCH_LOG(ERR, "the drain left records in the ring\n");
			gpurx_ipfix_free(x);
			free(ring);
			return BENCH_EXIT_FAIL;
		}
		if (ns - last_tick >= GPURX_IPFIX_TICK_MS * 1000000ull) {
			last_tick = ns;
			gpurx_ipfix_tick(x);
		}
		ns += bench_now_ns() - t0;
		cpu_ns(&u1, &s1);
		user += u1 - u0;
		sys += s1 - s0;
	}
	cpu_ns(&u0, &s0);
	t0 = bench_now_ns();
	rc = gpurx_ipfix_close(x);
	ns += bench_now_ns() - t0;
	cpu_ns(&u1, &s1);
	user += u1 - u0;
	sys += s1 - s0;
	if (rc != 0 || gpurx_ipfix_counts(x)->records != o.records) {
		BENCH_LOG(ERR, "the writer failed or lost records\n");
		gpurx_ipfix_free(x);
		free(ring);
		return BENCH_EXIT_FAIL;
	}
	printf("ipfix-writer: %" PRIu64 " encoders, %" PRIu64 " records in "
		"%.3f s = %.0f records/s (%.1f ns a record; CPU: user %.1f ns, "
		"system %.1f ns a record)\n", o.encoders, o.records, ns / 1e9,
		o.records / (ns / 1e9), (double)ns / o.records,
		(double)user / o.records, (double)sys / o.records);
	gpurx_ipfix_free(x);
	free(ring);
	return BENCH_EXIT_OK;
}
