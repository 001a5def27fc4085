/* SPDX-License-Identifier: BSD-3-Clause */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "capture.h"
#include "gpuapp_opts.h"
#include "ipfix_target.h"
#include "ipfix_writer.h"
#include "log.h"
#include "opts.h"

/* The help below spells these out. */
static_assert(GPURX_DEFAULT_SNAPLEN == 262144 && GPURX_SPLIT_MIN == 16 &&
	GPURX_SPLIT_MAX == 2048 && GPURX_SPLIT_ALIGN == 16 &&
	GPURX_MAX_BURST == 512 && RTE_MEMPOOL_CACHE_MAX_SIZE == 512,
	"the --help text of dpdk-gpu-rx");

static const char *const format_names[] = { "pcapng", "pcap", NULL };
static const char *const mem_names[] = {
	"gpu", "host-mapped", "staged", NULL,
};
static const char *const ts_names[] = { "rx", "port", "none", NULL };

static int
parse_flows(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	uint64_t v;
	int ret = gpuapp_opt_uint(opt, arg, logtype, &v);

	if (ret != 0)
		return ret;
	if ((v & (v - 1)) != 0) {
		GPURX_LOG(ERR, "--flows: %s is not a power of two\n", arg);
		return -EINVAL;
	}
	*(uint32_t *)opt->dst = (uint32_t)v;
	return 0;
}

static int
parse_split(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	uint32_t *split = opt->dst;
	uint64_t v;
	int ret;

	if (strcmp(arg, "auto") == 0) {
		*split = GPURX_SPLIT_AUTO;
		return 0;
	}
	if (strcmp(arg, "off") == 0) {
		*split = GPURX_SPLIT_OFF;
		return 0;
	}
	if (arg[0] < '0' || arg[0] > '9') {
		GPURX_LOG(ERR, "--split: '%s' is not auto, off or "
			"a number of bytes in [%u, %u]\n", arg,
			GPURX_SPLIT_MIN, GPURX_SPLIT_MAX);
		return -EINVAL;
	}
	ret = gpuapp_opt_uint(opt, arg, logtype, &v);
	if (ret != 0)
		return ret;
	if (v % GPURX_SPLIT_ALIGN != 0) {
		GPURX_LOG(ERR, "--split: %s is not a multiple of %u "
			"(the GPU copies captures in %u-byte words)\n",
			arg, GPURX_SPLIT_ALIGN, GPURX_SPLIT_ALIGN);
		return -EINVAL;
	}
	*split = (uint32_t)v;
	return 0;
}

/*
 * --port N[,N..]: ethdev ports, each at most once; whether each exists
 * is known once EAL has probed them (port.c).
 */
static int
parse_ports(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	struct gpurx_opts *o = opt->dst;
	const char *s = arg;

	RTE_SET_USED(logtype);
	o->n_ports = 0;
	for (;;) {
		unsigned long v = 0;
		const char *d = s;

		while (*s >= '0' && *s <= '9' && v < UINT16_MAX)
			v = v * 10 + (unsigned long)(*s++ - '0');
		if (s == d || v >= UINT16_MAX || (*s != ',' && *s != '\0')) {
			GPURX_LOG(ERR, "--port: '%s' is not a list of ethdev "
				"port ids (0-%u), comma-separated\n", arg,
				UINT16_MAX - 1);
			return -EINVAL;
		}
		for (uint16_t i = 0; i < o->n_ports; i++)
			if (o->ports[i] == v) {
				GPURX_LOG(ERR, "--port: port %lu is listed twice "
					"in '%s'\n", v, arg);
				return -EINVAL;
			}
		if (o->n_ports == GPURX_MAX_QUEUES) {
			GPURX_LOG(ERR, "--port: '%s' lists more than %u ports\n",
				arg, GPURX_MAX_QUEUES);
			return -EINVAL;
		}
		o->ports[o->n_ports++] = (uint16_t)v;
		if (*s == '\0')
			return 0;
		s++;
	}
}

static int
parse_gpus(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	char err[256];

	RTE_SET_USED(logtype);
	if (gpuapp_gpus_parse(arg, opt->dst, err, sizeof(err)) != 0) {
		GPURX_LOG(ERR, "%s\n", err);
		return -1;
	}
	return 0;
}

static int
parse_secs(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	double v;
	int ret = gpuapp_opt_double(opt, arg, logtype, &v);

	if (ret != 0)
		return ret;
	/* A value that rounds to 0 ns would mean the 0 refused above. */
	if ((opt->flags & GPUAPP_OPT_F_MIN_OPEN) && v * 1e9 < 0.5) {
		GPURX_LOG(ERR, "--%s: '%s' is less than 1 ns\n", opt->name, arg);
		return -ERANGE;
	}
	*(uint64_t *)opt->dst = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* The collector's address is checked now, where a typo is cheap. */
static int
parse_ipfix(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	struct gpurx_ipfix_target t;
	char why[512];

	RTE_SET_USED(logtype);
	if (gpurx_ipfix_target_parse(arg, &t, why, sizeof(why)) != 0) {
		GPURX_LOG(ERR, "--ipfix: %s\n", why);
		return -EINVAL;
	}
	*(const char **)opt->dst = arg;
	return 0;
}

/*
 * --ipfix-rate N[k|M]: records/s. The suffixes are decimal (a rate, not
 * a size: 10k is 10000); 0 is unpaced.
 */
static int
parse_rate(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	uint64_t mult = 1, v = 0;
	size_t len = strlen(arg), i;

	RTE_SET_USED(logtype);
	if (len > 1 && (arg[len - 1] == 'k' || arg[len - 1] == 'K')) {
		mult = 1000;
		len--;
	} else if (len > 1 && arg[len - 1] == 'M') {
		mult = 1000000;
		len--;
	}
	for (i = 0; i < len && arg[i] >= '0' && arg[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(arg[i] - '0');
		if (v > opt->max)
			break;
	}
	if (len == 0 || i < len || v > opt->max / mult) {
		GPURX_LOG(ERR, "--ipfix-rate: '%s' is not a rate in records/s "
			"from 0 (unpaced) to %" PRIu64 "M: digits, then k "
			"(x 1000) or M (x 1000000) if you like\n", arg,
			opt->max / 1000000);
		return i < len || len == 0 ? -EINVAL : -ERANGE;
	}
	*(uint64_t *)opt->dst = v * mult;
	return 0;
}

/* --mtu max|keep|N: N in the range every port accepts at most. */
static int
parse_mtu(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	uint64_t v;
	int ret;

	if (strcmp(arg, "max") == 0) {
		*(uint32_t *)opt->dst = GPURX_MTU_MAX;
		return 0;
	}
	if (strcmp(arg, "keep") == 0) {
		*(uint32_t *)opt->dst = GPURX_MTU_KEEP;
		return 0;
	}
	ret = gpuapp_opt_uint(opt, arg, logtype, &v);
	if (ret != 0)
		return ret;
	*(uint32_t *)opt->dst = (uint32_t)v;
	return 0;
}

/* OPEN: 0 s refused, (0, MAX]; else [0, MAX]. */
#define SECS_ENTRY(N, P, OPEN, MAX, H) \
	{ .name = (N), .kind = GPUAPP_OPT_CALLBACK, .cb = parse_secs, \
	  .dst = (P), .flags = (OPEN) ? GPUAPP_OPT_F_MIN_OPEN : 0, \
	  .dmin = 0, .dmax = (MAX), .arg_name = "S", .help = (H) }

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

/*
 * The filter as tcpdump takes it, the arguments after the options joined
 * by spaces. Static: the options live for the whole run, and a filter
 * longer than this is no filter anyone types.
 */
static int
filter_operands(struct gpurx_opts *o, int n, char **args)
{
	static char buf[16384];
	size_t len = 0;

	if (o->filter != NULL) {
		GPURX_LOG(ERR, "the filter is given twice: --filter '%s' and "
			"'%s...' after the options\n", o->filter, args[0]);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		size_t l = strlen(args[i]);

		if (len + l + 2 > sizeof(buf)) {
			GPURX_LOG(ERR, "the filter after the options is longer "
				"than %zu bytes\n", sizeof(buf) - 1);
			return -E2BIG;
		}
		if (i > 0)
			buf[len++] = ' ';
		memcpy(buf + len, args[i], l);
		len += l;
	}
	buf[len] = '\0';
	o->filter = buf;
	return 0;
}

int
gpurx_opts_parse(int argc, char **argv, struct gpurx_opts *o)
{
	const struct gpuapp_opt table[] = {
		{ .name = "filter", .kind = GPUAPP_OPT_STRING,
		  .flags = GPUAPP_OPT_F_EMPTY_OK, .dst = &o->filter,
		  .arg_name = "EXPR",
		  .help = "tcpdump filter (default: everything)" },
		{ .name = "write", .letter = 'w', .kind = GPUAPP_OPT_STRING,
		  .dst = &o->write_path, .arg_name = "FILE",
		  .help = "capture matching packets to FILE; %q in\n"
			"FILE: a file per RX queue (%q its number,\n"
			"%% a %), which scales with the queues" },
		GPUAPP_OPT_UINT_ENTRY("rotate-seconds", &o->rotate_seconds, 1,
			GPURX_ROTATE_MAX_SECONDS, "N",
			"a new capture file every N seconds\n"
			"(dumpcap -b duration; names: FILE's\n"
			"PREFIX_NNNNN_YYYYmmddHHMMSS.EXT)"),
		GPUAPP_OPT_SIZE_ENTRY("rotate-size", &o->rotate_size, 1,
			UINT64_MAX >> 30, "SIZE",
			"a new capture file before one passes\n"
			"SIZE bytes (k, M, G: x 1024^n)"),
		GPUAPP_OPT_UINT_ENTRY("rotate-files", &o->rotate_files, 1,
			GPURX_ROTATE_MAX_FILES, "N",
			"keep only the last N rotated files"),
		GPUAPP_OPT_UINT_ENTRY("capture-writers", &o->capture_writers,
			0, GPURX_CAPTURE_MAX_WRITERS, "N",
			"N threads write the capture, not the RX\n"
			"lcores (default 0: the lcores; each\n"
			"needs a CPU of its own, outside -l)"),
		GPUAPP_OPT_CHOICE_ENTRY("format", &o->format, GPURX_FMT_PCAPNG,
			format_names, "pcapng|pcap",
			"capture file format (default pcapng)"),
		{ .name = "snaplen", .letter = 's', .kind = GPUAPP_OPT_UINT,
		  .dst = &o->snaplen, .dst_size = sizeof(o->snaplen),
		  .min = 1, .max = GPURX_DEFAULT_SNAPLEN, .arg_name = "N",
		  .help = "bytes kept per packet (default 262144)" },
		{ .name = "count", .letter = 'c', .kind = GPUAPP_OPT_UINT,
		  .dst = &o->count, .dst_size = sizeof(o->count),
		  .min = 1, .max = UINT64_MAX, .arg_name = "N",
		  .help = "stop after N matched packets (tcpdump -c)" },
		GPUAPP_OPT_UINT_ENTRY("count-received", &o->count_received, 1,
			UINT64_MAX, "N", "stop after N received packets"),
		{ .name = "duration", .kind = GPUAPP_OPT_DOUBLE,
		  .flags = GPUAPP_OPT_F_MIN_OPEN, .dst = &o->duration_s,
		  .dmin = 0, .dmax = 1e9, .arg_name = "S",
		  .help = "stop after S seconds" },
		GPUAPP_OPT_UINT_ENTRY("idle-exit", &o->idle_exit_ms, 1,
			3600 * 1000, "MS",
			"stop when nothing arrived for MS ms\n"
			"(end of a net_pcap input file)"),
		GPUAPP_OPT_STRING_ENTRY("json", &o->json_path, "FILE",
			"write the summary as JSON"),
		GPUAPP_OPT_UINT_ENTRY("top", &o->top_n, 0, 1000, "N",
			"flows listed in the summary (default 10)"),
		GPUAPP_OPT_CHOICE_ENTRY("mem", &o->mem, GPURX_MEM_GPU,
			mem_names, "gpu|host-mapped|staged",
			"packet memory (default: gpu if\n"
			"the port can DMA into GPU memory)"),
		{ .name = "split", .kind = GPUAPP_OPT_CALLBACK,
		  .cb = parse_split, .dst = &o->split,
		  .min = GPURX_SPLIT_MIN, .max = GPURX_SPLIT_MAX,
		  .arg_name = "N|auto|off",
		  .help = "RX buffer split: the first N bytes (16-2048,\n"
			"a multiple of 16) into host memory, the\n"
			"rest into GPU memory (default auto: with\n"
			"--mem gpu where the port offers it)" },
		GPUAPP_OPT_FLAG_ENTRY("cpu", &o->cpu,
			"process on the CPU, no GPU needed"),
		GPUAPP_OPT_CALLBACK_ENTRY("gpus", parse_gpus, &o->gpus,
			"LIST", "GPU of each RX queue: auto (default,\n"
			"the port's nearest), all, or G,G..\n"
			"qQ=G pP=G pP:qQ=G"),
		GPUAPP_OPT_CALLBACK_ENTRY("port", parse_ports, o, "LIST",
			"ethdev port(s), N[,N..] (default 0)"),
		GPUAPP_OPT_UINT_ENTRY("queues", &o->queues, 1, GPURX_MAX_QUEUES,
			"N", "RX queues of each port, one lcore\n"
			"each (default 1; ports x N at most 16)"),
		GPUAPP_OPT_UINT_ENTRY("burst", &o->burst, 1, GPURX_MAX_BURST,
			"N", "RX burst size (default 32, max 512)"),
		GPUAPP_OPT_UINT_ENTRY("ring-items", &o->ring_items, 2, 4096, "N",
			"GPU ring items per queue (default 64)"),
		GPUAPP_OPT_FLAG_ENTRY("launch-per-burst", &o->launch_per_burst,
			"one kernel launch per burst instead of\n"
			"the persistent kernel"),
		GPUAPP_OPT_FLAG_ENTRY("no-lap-tags", &o->no_lap_tags,
			"rings without lap tags: the kernel loads an\n"
			"item's entries after READY (A/B benchmarks)"),
		GPUAPP_OPT_FLAG_ENTRY("backpressure", &o->backpressure,
			"GPU ring full: wait for the GPU instead of\n"
			"dropping (file input; a live port then\n"
			"drops in the NIC, counted as imissed)"),
		GPUAPP_OPT_UINT_ENTRY("stall-ms", &o->stall_ms, 0, 3600 * 1000,
			"MS", "a queue whose ring items stay READY\n"
			"this long is stalled: stop (default\n"
			"2000, 0: never)"),
		GPUAPP_OPT_UINT_ENTRY("rxd", &o->nb_rxd, 32, 32768, "N",
			"RX descriptors per queue (default 1024)"),
		GPUAPP_OPT_UINT_ENTRY("mbufs", &o->mbufs, 64, 1u << 26, "N",
			"mbufs in the pool, or in each with\n"
			"--pool-per-queue (default: sized)"),
		GPUAPP_OPT_FLAG_ENTRY("pool-per-queue", &o->pool_per_queue,
			"an mbuf pool per RX queue (host memory)"),
		GPUAPP_OPT_UINT_ENTRY("mbuf-cache", &o->mbuf_cache, 0,
			RTE_MEMPOOL_CACHE_MAX_SIZE, "N",
			"per-lcore mempool cache, mbufs (0..512;\n"
			"default min(512, pool size / 4))"),
		{ .name = "flows", .kind = GPUAPP_OPT_CALLBACK,
		  .cb = parse_flows, .dst = &o->flow_capacity,
		  .min = 1, .max = 1u << 26, .arg_name = "N",
		  .help = "flow table slots, power of two (65536)" },
		{ .name = "mtu", .kind = GPUAPP_OPT_CALLBACK, .cb = parse_mtu,
		  .dst = &o->mtu, .min = RTE_ETHER_MIN_MTU, .max = UINT16_MAX,
		  .arg_name = "max|keep|N",
		  .help = "the port's MTU: its largest (default, so\n"
			"jumbo frames arrive whole; kernel-backed\n"
			"ports keep theirs), as it is, or N" },
		GPUAPP_OPT_CHOICE_ENTRY("ts", &o->ts_source, GPURX_TS_RX,
			ts_names, "rx|port|none",
			"timestamp: TSC at RX (default), the port's\n"
			"RX timestamp, or 0 (reproducible output)"),
		{ .name = "quiet", .letter = 'q', .kind = GPUAPP_OPT_FLAG,
		  .dst = &o->quiet, .help = "no per-second stats line" },
		GPUAPP_OPT_FLAG_ENTRY("stamps", &o->stamps,
			"per generator stream (stamped packets):\n"
			"received, lost, reordered, duplicates,\n"
			"latency, jitter"),
		GPUAPP_OPT_CALLBACK_ENTRY("ipfix", parse_ipfix, &o->ipfix,
			"[udp://|tcp://]HOST:PORT",
			"export flow records to an\n"
			"IPFIX collector (UDP by default)"),
		GPUAPP_OPT_STRING_ENTRY("ipfix-file", &o->ipfix_file, "FILE",
			"write flow records to an IPFIX file"),
		{ .name = "ipfix-rate", .kind = GPUAPP_OPT_CALLBACK,
		  .cb = parse_rate, .dst = &o->ipfix_rate, .max = 1000000000,
		  .arg_name = "N[k|M]",
		  .help = "UDP collectors: at most N records/s\n"
			"(default 100k; 0: unpaced). UDP has no\n"
			"flow control: loss shows only in the\n"
			"collector's sequence check" },
		GPUAPP_OPT_UINT_ENTRY("ipfix-encoders", &o->ipfix_encoders, 1,
			GPURX_IPFIX_ENCODERS_MAX, "N",
			"threads that encode IPFIX messages at\n"
			"once, one stream still (default 4)"),
		GPUAPP_OPT_UINT_ENTRY("ipfix-domain", &o->ipfix_domain, 0,
			UINT32_MAX - UINT16_MAX, "N",
			"observation domain of port 0; port P\n"
			"exports as N + P (default 1)"),
		SECS_ENTRY("flow-idle", &o->flow_idle_ns, 1, 86400,
			"with an export, a flow record ends S s\n"
			"after its last packet (default 15)"),
		SECS_ENTRY("flow-active", &o->flow_active_ns, 0, 86400,
			"... S s after its first packet, the flow\n"
			"going on in a new record (default 60, 0:\n"
			"never)"),
		SECS_ENTRY("flow-linger", &o->flow_linger_ns, 0, 3600,
			"... S s after its last packet once a TCP\n"
			"FIN or RST was seen (default 1)"),
		GPUAPP_OPT_HELP_ENTRY('h'),
	};
	int ret, first;

	memset(o, 0, sizeof(*o));
	o->snaplen = GPURX_DEFAULT_SNAPLEN;
	o->top_n = 10;
	o->n_ports = 1;		/* port 0 */
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
	o->ipfix_rate = GPURX_IPFIX_RATE_DEFAULT;
	o->ipfix_encoders = GPURX_IPFIX_ENCODERS_DEFAULT;

	ret = gpuapp_opts_parse_operands(table, RTE_DIM(table),
		"Usage: %s [EAL options] -- [options] [filter expression]",
		gpurx_logtype, argc, argv, &first);
	if (ret != 0)
		return ret > 0 ? 1 : -1;
	if (first < argc && filter_operands(o, argc - first, argv + first) != 0)
		return -1;
	if (o->capture_writers != 0 && o->write_path == NULL) {
		GPURX_LOG(ERR, "--capture-writers: there is no capture to "
			"write: add --write FILE\n");
		return -1;
	}
	if (o->rotate_seconds != 0 || o->rotate_size != 0 ||
			o->rotate_files != 0) {
		struct gpurx_capture_rotate rot = {
			.seconds = o->rotate_seconds,
			.size = o->rotate_size,
			.files = o->rotate_files,
		};
		char why[256];

		if (o->write_path == NULL) {
			GPURX_LOG(ERR, "--rotate-%s: there is no capture to "
				"rotate: add --write FILE\n",
				o->rotate_seconds != 0 ? "seconds" :
				o->rotate_size != 0 ? "size" : "files");
			return -1;
		}
		if (gpurx_capture_rotate_check(o->write_path, &rot, why,
				sizeof(why)) != 0) {
			GPURX_LOG(ERR, "%s\n", why);
			return -1;
		}
	}
	if (o->cpu && o->mem != GPURX_MEM_AUTO) {
		GPURX_LOG(ERR, "--cpu and --mem %s exclude each other\n",
			gpurx_mem_mode_str(o->mem));
		return -1;
	}
	if ((unsigned int)o->n_ports * o->queues > GPURX_MAX_QUEUES) {
		GPURX_LOG(ERR, "--port and --queues: %u ports x %u queues is "
			"more than the %u RX queues a run has at most\n",
			o->n_ports, o->queues, GPURX_MAX_QUEUES);
		return -1;
	}
	if (o->cpu && o->launch_per_burst) {
		GPURX_LOG(ERR, "--launch-per-burst needs the GPU (drop --cpu)\n");
		return -1;
	}
	return 0;
}
