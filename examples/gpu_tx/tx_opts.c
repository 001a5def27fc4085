/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's options: the usage text, the parsing of the options
 * after EAL's (numbers, rates, memory modes, their limits and
 * combinations) and the names of the modes they select.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_config.h>

#include "tx_opts.h"

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
		"  --stream SPEC     a stream (repeatable; syntax in doc/gpu_tx.md)\n"
		"  --pcap FILE       a stream from the file's first packet\n"
		"                    (--stream pcap=FILE,all for all of them)\n"
		"  --port N          port to send on (default 0)\n"
		"  --rate R          N[k|M|G]pps, N[k|M|G]bps (frame bits with FCS)\n"
		"                    or N%% of the link (on-wire); default: as fast\n"
		"                    as the port takes\n"
		"  --count N         stop after N packets\n"
		"  --duration S      stop after S seconds\n"
		"  --mem MODE        cpu (CPU build, no GPU), host-mapped, gpu\n"
		"                    (default cpu)\n"
		"  --burst N         packets per burst (default 32, max %d)\n"
		"  --queues N        TX queues, each sent by a worker lcore of\n"
		"                    its own (default 1; one queue runs on the\n"
		"                    main lcore when there is no worker)\n"
		"  --ring-items N    GPU: bursts in flight per queue (default %d)\n"
		"  --launch-per-burst GPU: a kernel launch per burst instead of\n"
		"                    the persistent kernel\n"
		"  --no-build        benchmark baseline (with --mem cpu): send the\n"
		"                    streams' lengths unbuilt, the TX lcore's own\n"
		"                    ceiling\n"
		"  --table-in-host   GPU builds read the streams (templates, field\n"
		"                    engine) from host memory, not GPU memory\n"
		"                    (for comparison)\n"
		"  --csum-offload    leave IPv4, UDP and TCP checksums to the\n"
		"                    port's TX checksum offload\n"
		"  --no-fast-free    benchmark baseline: do not ask the port for\n"
		"                    bulk frees of sent mbufs (MBUF_FAST_FREE)\n"
		"  --seed N          default seed of the streams (default 1)\n"
		"  --mbufs N         mbuf pool size\n"
		"  --wait-link S     wait up to S s for the link to come up\n"
		"                    (default 10; 0: do not wait)\n"
		"  --linger S        keep the port up S s after the last burst,\n"
		"                    or until its link goes down (default 0)\n"
		"  --json FILE       summary as JSON ('-' for stdout)\n",
		prog, MAX_BURST, DEFAULT_RING_ITEMS);
}

static int
parse_u64_arg(const char *s, uint64_t *v)
{
	char *end;

	/* Decimal digits only: strtoull would read 010 as eight, 0x40 as
	 * 64 and " -1" as 2^64 - 1. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

/* --name's value, a number in lo..hi; else said, -1. */
static int
parse_range(const char *name, const char *s, uint64_t lo, uint64_t hi,
		uint64_t *v)
{
	if (parse_u64_arg(s, v) == 0 && *v >= lo && *v <= hi)
		return 0;
	fprintf(stderr, "error: --%s %s: %" PRIu64 "..%" PRIu64 "\n", name, s,
		lo, hi);
	return -1;
}

static int
parse_rate(const char *s, struct opts *o)
{
	char *end;
	double v, mult = 1;

	/* A plain number: strtod also takes inf, nan, hex and spaces, and
	 * nan compares false with everything (it paced nothing). */
	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !isfinite(v) || !(v > 0))
		return -1;
	if (*end == 'k' || *end == 'K')
		mult = 1e3, end++;
	else if (*end == 'M')
		mult = 1e6, end++;
	else if (*end == 'G')
		mult = 1e9, end++;
	if (*end == '\0' || strcmp(end, "pps") == 0)
		o->unit = RATE_PPS;
	else if (strcmp(end, "bps") == 0)
		o->unit = RATE_BPS;
	else if (strcmp(end, "%") == 0 && mult == 1 && v <= 100)
		o->unit = RATE_PCT;
	else
		return -1;
	o->rate = v * mult;
	return isfinite(o->rate) ? 0 : -1;
}

int
gputx_parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "stream", required_argument, NULL, 's' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "port", required_argument, NULL, 'P' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mem", required_argument, NULL, 'm' },
		{ "burst", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'S' },
		{ "mbufs", required_argument, NULL, 'M' },
		{ "json", required_argument, NULL, 'j' },
		{ "wait-link", required_argument, NULL, 'W' },
		{ "linger", required_argument, NULL, 'L' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "ring-items", required_argument, NULL, 'I' },
		{ "launch-per-burst", no_argument, NULL, 'B' },
		{ "no-build", no_argument, NULL, 'N' },
		{ "no-fast-free", no_argument, NULL, 'F' },
		{ "csum-offload", no_argument, NULL, 'C' },
		{ "table-in-host", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	char *end;
	double d;
	int c;

	memset(o, 0, sizeof(*o));
	o->burst = 32;
	o->seed = 1;
	o->mem = MEM_CPU;
	o->wait_link = 10;
	o->queues = 1;
	o->ring_items = DEFAULT_RING_ITEMS;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'p':
			if (o->n_streams == MAX_STREAM_ARGS) {
				fprintf(stderr, "error: more than %d --stream/--pcap\n",
					MAX_STREAM_ARGS);
				return -1;
			}
			if (c == 'p') {
				size_t n = strlen(optarg) + 6;
				char *s = malloc(n);

				if (s == NULL)
					return -1;
				snprintf(s, n, "pcap=%s", optarg);
				o->pcap_specs[o->n_streams] = s;
				o->streams[o->n_streams++] = s;
			} else {
				o->streams[o->n_streams++] = optarg;
			}
			break;
		case 'P':
			if (parse_u64_arg(optarg, &v) != 0 || v >= RTE_MAX_ETHPORTS) {
				fprintf(stderr, "error: --port %s: not a port number\n",
					optarg);
				return -1;
			}
			o->port = (uint16_t)v;
			break;
		case 'r':
			if (parse_rate(optarg, o) != 0) {
				fprintf(stderr, "error: --rate %s: want N[k|M|G]pps, "
					"N[k|M|G]bps or N%% (0 < N <= 100)\n", optarg);
				return -1;
			}
			break;
		case 'c':
			if (parse_u64_arg(optarg, &o->count) != 0 || o->count == 0) {
				fprintf(stderr, "error: --count %s: a number >= 1\n",
					optarg);
				return -1;
			}
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			/* Finite and bounded: it becomes a TSC count (inf
			 * made that conversion undefined and sent nothing). */
			if (errno != 0 || *end != '\0' || end == optarg ||
					((*optarg < '0' || *optarg > '9') &&
					 *optarg != '.') ||
					!(o->duration > 0 && o->duration <= 1e9)) {
				fprintf(stderr, "error: --duration %s: seconds, more "
					"than 0 and at most 1e9\n", optarg);
				return -1;
			}
			break;
		case 'm':
			if (strcmp(optarg, "cpu") == 0)
				o->mem = MEM_CPU;
			else if (strcmp(optarg, "host-mapped") == 0)
				o->mem = MEM_HOST_MAPPED;
			else if (strcmp(optarg, "gpu") == 0)
				o->mem = MEM_GPU;
			else {
				fprintf(stderr, "error: --mem %s: cpu, host-mapped or "
					"gpu\n", optarg);
				return -1;
			}
			break;
		case 'b':
			if (parse_range("burst", optarg, 1, MAX_BURST, &v) != 0)
				return -1;
			o->burst = (uint32_t)v;
			break;
		case 'S':
			if (parse_u64_arg(optarg, &o->seed) != 0) {
				fprintf(stderr, "error: --seed %s: a number\n", optarg);
				return -1;
			}
			break;
		case 'M':
			if (parse_u64_arg(optarg, &v) != 0 || v < 64 ||
					v > UINT32_MAX) {
				fprintf(stderr, "error: --mbufs %s: 64 or more\n",
					optarg);
				return -1;
			}
			o->mbufs = (uint32_t)v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'Q':
			if (parse_range("queues", optarg, 1, MAX_QUEUES, &v) != 0)
				return -1;
			o->queues = (uint16_t)v;
			break;
		case 'I':
			if (parse_range("ring-items", optarg, 2, 1024, &v) != 0)
				return -1;
			o->ring_items = (uint32_t)v;
			break;
		case 'B':
			o->launch_per_burst = 1;
			break;
		case 'N':
			o->no_build = 1;
			break;
		case 'F':
			o->no_fast_free = 1;
			break;
		case 'C':
			o->csum_offload = 1;
			break;
		case 'T':
			o->table_in_host = 1;
			break;
		case 'W':
		case 'L':
			errno = 0;
			d = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg ||
					((*optarg < '0' || *optarg > '9') &&
					 *optarg != '.') ||
					!(d >= 0 && d <= 86400)) {
				fprintf(stderr, "error: --%s %s: seconds, 0 to 86400\n",
					c == 'W' ? "wait-link" : "linger", optarg);
				return -1;
			}
			if (c == 'W')
				o->wait_link = d;
			else
				o->linger = d;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->n_streams == 0) {
		fprintf(stderr, "error: no stream: give --stream SPEC or --pcap "
			"FILE\n");
		return -1;
	}
	if (o->no_build && o->mem != MEM_CPU) {
		fprintf(stderr, "error: --no-build is the CPU lcore's baseline: "
			"with --mem cpu only\n");
		return -1;
	}
	return 0;
}

const char *
gputx_mem_str(enum mem_mode m)
{
	return m == MEM_CPU ? "cpu" : m == MEM_HOST_MAPPED ? "host-mapped" :
		"gpu";
}

const char *
gputx_build_str(const struct opts *o)
{
	return o->no_build ? "none" : o->mem == MEM_CPU ? "cpu" :
		o->launch_per_burst ? "launch-per-burst" : "persistent";
}
