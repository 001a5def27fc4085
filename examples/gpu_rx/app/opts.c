/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipfix_target.h"
#include "opts.h"

enum {
	OPT_FILTER = 256, OPT_WRITE, OPT_FORMAT, OPT_SNAPLEN, OPT_COUNT,
	OPT_DURATION, OPT_JSON, OPT_TOP, OPT_MEM, OPT_CPU, OPT_QUEUES,
	OPT_BURST, OPT_RING_ITEMS, OPT_LAUNCH_PER_BURST, OPT_PORT,
	OPT_IDLE_EXIT, OPT_RXD, OPT_MBUFS, OPT_FLOWS, OPT_TS, OPT_QUIET,
	OPT_BACKPRESSURE, OPT_POOL_PER_QUEUE, OPT_MBUF_CACHE, OPT_STALL_MS,
	OPT_SPLIT, OPT_FLOW_IDLE, OPT_FLOW_ACTIVE, OPT_FLOW_LINGER,
	OPT_IPFIX, OPT_IPFIX_FILE, OPT_IPFIX_DOMAIN, OPT_STAMPS, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "write", required_argument, NULL, OPT_WRITE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "snaplen", required_argument, NULL, OPT_SNAPLEN },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "cpu", no_argument, NULL, OPT_CPU },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "ring-items", required_argument, NULL, OPT_RING_ITEMS },
	{ "launch-per-burst", no_argument, NULL, OPT_LAUNCH_PER_BURST },
	{ "backpressure", no_argument, NULL, OPT_BACKPRESSURE },
	{ "stall-ms", required_argument, NULL, OPT_STALL_MS },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "idle-exit", required_argument, NULL, OPT_IDLE_EXIT },
	{ "rxd", required_argument, NULL, OPT_RXD },
	{ "mbufs", required_argument, NULL, OPT_MBUFS },
	{ "pool-per-queue", no_argument, NULL, OPT_POOL_PER_QUEUE },
	{ "mbuf-cache", required_argument, NULL, OPT_MBUF_CACHE },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "ts", required_argument, NULL, OPT_TS },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "flow-idle", required_argument, NULL, OPT_FLOW_IDLE },
	{ "flow-active", required_argument, NULL, OPT_FLOW_ACTIVE },
	{ "flow-linger", required_argument, NULL, OPT_FLOW_LINGER },
	{ "ipfix", required_argument, NULL, OPT_IPFIX },
	{ "ipfix-file", required_argument, NULL, OPT_IPFIX_FILE },
	{ "ipfix-domain", required_argument, NULL, OPT_IPFIX_DOMAIN },
	{ "stamps", no_argument, NULL, OPT_STAMPS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The long name of option value c, for error messages (found by value:
 * the table's order need not follow the enum's). */
static const char *
opt_name(int c)
{
	for (const struct option *o = long_opts; o->name != NULL; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [EAL options] -- [options]\n"
		"  --filter EXPR        tcpdump filter (default: everything)\n"
		"  --write FILE         capture matching packets to FILE; %%q in\n"
		"                       FILE: a file per RX queue (%%q its number,\n"
		"                       %%%% a %%), which scales with the queues\n"
		"  --format pcapng|pcap capture file format (default pcapng)\n"
		"  --snaplen N          bytes kept per packet (default %u)\n"
		"  --count N            stop after N received packets\n"
		"  --duration S         stop after S seconds\n"
		"  --idle-exit MS       stop when nothing arrived for MS ms\n"
		"                       (end of a net_pcap input file)\n"
		"  --json FILE          write the summary as JSON ('-': stdout)\n"
		"  --top N              flows listed in the summary (default 10)\n"
		"  --mem gpu|host-mapped|staged  packet memory (default: gpu if\n"
		"                       the port can DMA into GPU memory)\n"
		"  --split N|auto|off   RX buffer split: the first N bytes (%u-%u,\n"
		"                       a multiple of %u) into host memory, the\n"
		"                       rest into GPU memory (default auto: with\n"
		"                       --mem gpu where the port offers it)\n"
		"  --cpu                process on the CPU, no GPU needed\n"
		"  --port N             ethdev port (default 0)\n"
		"  --queues N           RX queues, one lcore each (default 1)\n"
		"  --burst N            RX burst size (default 32, max %u)\n"
		"  --ring-items N       GPU ring items per queue (default 64)\n"
		"  --launch-per-burst   one kernel launch per burst instead of\n"
		"                       the persistent kernel\n"
		"  --backpressure       GPU ring full: wait for the GPU instead of\n"
		"                       dropping (file input; a live port then\n"
		"                       drops in the NIC, counted as imissed)\n"
		"  --stall-ms MS        a queue whose ring items stay READY\n"
		"                       this long is stalled: stop (default\n"
		"                       2000, 0: never)\n"
		"  --rxd N              RX descriptors per queue (default 1024)\n"
		"  --mbufs N            mbufs in the pool, or in each with\n"
		"                       --pool-per-queue (default: sized)\n"
		"  --pool-per-queue     an mbuf pool per RX queue (host memory)\n"
		"  --mbuf-cache N       per-lcore mempool cache, mbufs (0..%u;\n"
		"                       default min(%u, pool size / 4))\n"
		"  --flows N            flow table slots, power of two (65536)\n"
		"  --ts rx|port|none    timestamp: TSC at RX (default), the port's\n"
		"                       RX timestamp, or 0 (reproducible output)\n"
		"  --quiet              no per-second stats line\n"
		"  --stamps             per generator stream (stamped packets):\n"
		"                       received, lost, reordered, duplicates,\n"
		"                       latency (with --cpu)\n"
		"  --ipfix [udp://|tcp://]HOST:PORT  export flow records to an\n"
		"                       IPFIX collector (UDP by default)\n"
		"  --ipfix-file FILE    write flow records to an IPFIX file\n"
		"  --ipfix-domain N     observation domain of port 0; port P\n"
		"                       exports as N + P (default 1)\n"
		"  --flow-idle S        with an export, a flow record ends S s\n"
		"                       after its last packet (default 15)\n"
		"  --flow-active S      ... S s after its first packet, the flow\n"
		"                       going on in a new record (default 60, 0:\n"
		"                       never)\n"
		"  --flow-linger S      ... S s after its last packet once a TCP\n"
		"                       FIN or RST was seen (default 1)\n",
		prog, GPURX_DEFAULT_SNAPLEN, GPURX_SPLIT_MIN, GPURX_SPLIT_MAX,
		GPURX_SPLIT_ALIGN, GPURX_MAX_BURST, RTE_MEMPOOL_CACHE_MAX_SIZE,
		RTE_MEMPOOL_CACHE_MAX_SIZE);
}

/* Whole-string unsigned parse with a range: no silent truncation. */
static int
parse_u64(const char *name, const char *s, uint64_t min, uint64_t max,
		uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* Decimal digits only: base 0 read 010 as eight and 0x40 as 64,
	 * and strtoull takes spaces and a sign (" -1" is 2^64 - 1). */
	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
	if (s[0] < '0' || s[0] > '9' || errno != 0 || *end != '\0' ||
			v < min || v > max) {
		fprintf(stderr, "--%s: '%s' is not a number in [%llu, %llu]\n",
			name, s, (unsigned long long)min,
			(unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Seconds (fractions allowed) to ns, in [0 or above, max_s]. */
static int
parse_secs(const char *name, const char *s, int zero_ok, double max_s,
		uint64_t *ns)
{
	char *end;
	double v;

	/* Plain numbers only (strtod takes inf, nan, hex and spaces); and
	 * a nonzero value that rounds to 0 ns is refused with 0. */
	errno = 0;
	v = (s[0] >= '0' && s[0] <= '9') || s[0] == '.' ? strtod(s, &end) : -1;
	if (v < 0 || errno != 0 || end == s || *end != '\0' || !(v >= 0) ||
			(v * 1e9 < 0.5 && !zero_ok) || v > max_s) {
		fprintf(stderr, "--%s: '%s' is not a number of seconds in %s, %.0f]\n",
			name, s, zero_ok ? "[0" : "(0", max_s);
		return -1;
	}
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

const char *
gpurx_mem_mode_str(enum gpurx_mem_mode m)
{
	switch (m) {
	case GPURX_MEM_GPU: return "gpu";
	case GPURX_MEM_HOST_MAPPED: return "host-mapped";
	case GPURX_MEM_STAGED: return "staged";
	default: return "auto";
	}
}

int
gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o)
{
	const char *prog = argc > 0 ? argv[0] : "dpdk-gpu-rx";
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->snaplen = GPURX_DEFAULT_SNAPLEN;
	o->top_n = 10;
	o->queues = 1;
	o->burst = 32;
	o->ring_items = 64;
	o->nb_rxd = 1024;
	o->mbuf_cache = -1;
	o->flow_capacity = 65536;
	o->stall_ms = 2000;
	o->split = GPURX_SPLIT_AUTO;
	o->flow_idle_ns = 15000000000ull;
	o->flow_active_ns = 60000000000ull;
	o->flow_linger_ns = 1000000000ull;
	o->ipfix_domain = 1;

	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		const char *name = opt_name(c);

		switch (c) {
		case OPT_FILTER:
			o->filter = optarg;
			break;
		case OPT_WRITE:
			o->write_path = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "pcapng") == 0)
				o->format = GPURX_FMT_PCAPNG;
			else if (strcmp(optarg, "pcap") == 0)
				o->format = GPURX_FMT_PCAP;
			else {
				fprintf(stderr, "--format: '%s' is not pcapng or pcap\n",
					optarg);
				return -1;
			}
			break;
		case OPT_SNAPLEN:
			if (parse_u64(name, optarg, 1, GPURX_DEFAULT_SNAPLEN, &v))
				return -1;
			o->snaplen = (uint32_t)v;
			break;
		case OPT_COUNT:
			if (parse_u64(name, optarg, 1, UINT64_MAX, &v))
				return -1;
			o->count = v;
			break;
		case OPT_DURATION: {
			char *end;

			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
					((optarg[0] < '0' || optarg[0] > '9') &&
					 optarg[0] != '.') ||
					!(o->duration_s > 0 && o->duration_s <= 1e9)) {
				fprintf(stderr, "--duration: '%s' is not a number of seconds in (0, 1e9]\n",
					optarg);
				return -1;
			}
			break;
		}
		case OPT_JSON:
			o->json_path = optarg;
			break;
		case OPT_TOP:
			if (parse_u64(name, optarg, 0, 1000, &v))
				return -1;
			o->top_n = (uint32_t)v;
			break;
		case OPT_MEM:
			if (strcmp(optarg, "gpu") == 0)
				o->mem = GPURX_MEM_GPU;
			else if (strcmp(optarg, "host-mapped") == 0)
				o->mem = GPURX_MEM_HOST_MAPPED;
			else if (strcmp(optarg, "staged") == 0)
				o->mem = GPURX_MEM_STAGED;
			else {
				fprintf(stderr, "--mem: '%s' is not gpu, host-mapped or staged\n",
					optarg);
				return -1;
			}
			break;
		case OPT_CPU:
			o->cpu = 1;
			break;
		case OPT_QUEUES:
			if (parse_u64(name, optarg, 1, GPURX_MAX_QUEUES, &v))
				return -1;
			o->queues = (uint16_t)v;
			break;
		case OPT_BURST:
			if (parse_u64(name, optarg, 1, GPURX_MAX_BURST, &v))
				return -1;
			o->burst = (uint16_t)v;
			break;
		case OPT_RING_ITEMS:
			if (parse_u64(name, optarg, 2, 4096, &v))
				return -1;
			o->ring_items = (uint32_t)v;
			break;
		case OPT_LAUNCH_PER_BURST:
			o->launch_per_burst = 1;
			break;
		case OPT_POOL_PER_QUEUE:
			o->pool_per_queue = 1;
			break;
		case OPT_BACKPRESSURE:
			o->backpressure = 1;
			break;
		case OPT_STALL_MS:
			if (parse_u64(name, optarg, 0, 3600 * 1000, &v))
				return -1;
			o->stall_ms = (uint32_t)v;
			break;
		case OPT_PORT:
			if (parse_u64(name, optarg, 0, UINT16_MAX - 1, &v))
				return -1;
			o->port = (uint16_t)v;
			break;
		case OPT_IDLE_EXIT:
			if (parse_u64(name, optarg, 1, 3600 * 1000, &v))
				return -1;
			o->idle_exit_ms = (uint32_t)v;
			break;
		case OPT_RXD:
			if (parse_u64(name, optarg, 32, 32768, &v))
				return -1;
			o->nb_rxd = (uint32_t)v;
			break;
		case OPT_MBUF_CACHE:
			if (parse_u64(name, optarg, 0, RTE_MEMPOOL_CACHE_MAX_SIZE, &v))
				return -1;
			o->mbuf_cache = (int)v;
			break;
		case OPT_MBUFS:
			if (parse_u64(name, optarg, 64, 1u << 26, &v))
				return -1;
			o->mbufs = (uint32_t)v;
			break;
		case OPT_FLOWS:
			if (parse_u64(name, optarg, 1, 1u << 26, &v))
				return -1;
			if ((v & (v - 1)) != 0) {
				fprintf(stderr, "--flows: %s is not a power of two\n",
					optarg);
				return -1;
			}
			o->flow_capacity = (uint32_t)v;
			break;
		case OPT_TS:
			if (strcmp(optarg, "rx") == 0)
				o->ts_source = GPURX_TS_RX;
			else if (strcmp(optarg, "port") == 0)
				o->ts_source = GPURX_TS_PORT;
			else if (strcmp(optarg, "none") == 0)
				o->ts_source = GPURX_TS_NONE;
			else {
				fprintf(stderr, "--ts: '%s' is not rx, port or none\n",
					optarg);
				return -1;
			}
			break;
		case OPT_QUIET:
			o->quiet = 1;
			break;
		case OPT_SPLIT:
			if (strcmp(optarg, "auto") == 0) {
				o->split = GPURX_SPLIT_AUTO;
				break;
			}
			if (strcmp(optarg, "off") == 0) {
				o->split = GPURX_SPLIT_OFF;
				break;
			}
			if (optarg[0] < '0' || optarg[0] > '9') {
				fprintf(stderr, "--split: '%s' is not auto, off or "
					"a number of bytes in [%u, %u]\n", optarg,
					GPURX_SPLIT_MIN, GPURX_SPLIT_MAX);
				return -1;
			}
			if (parse_u64(name, optarg, GPURX_SPLIT_MIN,
					GPURX_SPLIT_MAX, &v))
				return -1;
			if (v % GPURX_SPLIT_ALIGN != 0) {
				fprintf(stderr, "--split: %s is not a multiple of %u "
					"(the GPU copies captures in %u-byte words)\n",
					optarg, GPURX_SPLIT_ALIGN, GPURX_SPLIT_ALIGN);
				return -1;
			}
			o->split = (uint32_t)v;
			break;
		case OPT_FLOW_IDLE:
			if (parse_secs(name, optarg, 0, 86400, &o->flow_idle_ns))
				return -1;
			break;
		case OPT_FLOW_ACTIVE:
			if (parse_secs(name, optarg, 1, 86400, &o->flow_active_ns))
				return -1;
			break;
		case OPT_FLOW_LINGER:
			if (parse_secs(name, optarg, 1, 3600, &o->flow_linger_ns))
				return -1;
			break;
		case OPT_IPFIX: {
			struct gpurx_ipfix_target t;
			char why[512];

			if (gpurx_ipfix_target_parse(optarg, &t, why,
					sizeof(why)) != 0) {
				fprintf(stderr, "--ipfix: %s\n", why);
				return -1;
			}
			o->ipfix = optarg;
			break;
		}
		case OPT_IPFIX_FILE:
			if (optarg[0] == '\0') {
				fprintf(stderr, "--ipfix-file: empty file name\n");
				return -1;
			}
			o->ipfix_file = optarg;
			break;
		case OPT_IPFIX_DOMAIN:
			if (parse_u64(name, optarg, 0, UINT32_MAX - UINT16_MAX, &v))
				return -1;
			o->ipfix_domain = (uint32_t)v;
			break;
		case OPT_STAMPS:
			o->stamps = 1;
			break;
		case OPT_HELP:
			usage(prog);
			return 1;
		default:
			usage(prog);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		usage(prog);
		return -1;
	}
	if (o->cpu && o->mem != GPURX_MEM_AUTO) {
		fprintf(stderr, "--cpu and --mem %s exclude each other\n",
			gpurx_mem_mode_str(o->mem));
		return -1;
	}
	if (o->stamps && !o->cpu) {
		fprintf(stderr, "--stamps: the GPU modes do not read stamps yet: "
			"add --cpu\n");
		return -1;
	}
	if (o->cpu && o->launch_per_burst) {
		fprintf(stderr, "--launch-per-burst needs the GPU (drop --cpu)\n");
		return -1;
	}
	return 0;
}
