/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdk-gpu-tx's options: the usage text, the parsing of the options
 * after EAL's (numbers, rates, memory modes, their limits and
 * combinations) and the names of the modes they select.
 */

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_config.h>
#include <rte_log.h>

#include "gpuapp_opts.h"
#include "tx_opts.h"

/* Every message of dpdk-gpu-tx goes through it: --log-level=app.gpu_tx:LEVEL. */
RTE_LOG_REGISTER(gputx_logtype, app.gpu_tx, INFO);

/* The help below spells these out. */
static_assert(MAX_BURST == 512 && DEFAULT_RING_ITEMS == 32,
	"the --help text of dpdk-gpu-tx");

static const char *const mem_names[] = {
	"cpu", "host-mapped", "gpu", NULL,
};

static int
parse_rate(const struct gpuapp_opt *opt, const char *s, int logtype)
{
	struct opts *o = opt->dst;
	char *end;
	double v, mult = 1;

	RTE_SET_USED(logtype);
	/* A plain number: strtod also takes inf, nan, hex and spaces. */
	if (((*s < '0' || *s > '9') && *s != '.') || strpbrk(s, "xX") != NULL)
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !(v > 0) || !isfinite(v))
		goto bad;
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
		goto bad;
	o->rate = v * mult;
	if (isfinite(o->rate))
		return 0;
bad:
	GPUTX_LOG(ERR, "error: --rate %s: want N[k|M|G]pps, "
		"N[k|M|G]bps or N%% (0 < N <= 100)\n", s);
	return -EINVAL;
}

/* --stream SPEC and --pcap FILE, in the order given. */
static int
add_stream(struct opts *o, const char *spec, int is_pcap)
{
	if (o->n_streams == MAX_STREAM_ARGS) {
		GPUTX_LOG(ERR, "error: more than %d --stream/--pcap\n",
			MAX_STREAM_ARGS);
		return -E2BIG;
	}
	if (is_pcap) {
		size_t n = strlen(spec) + 6;
		char *s = malloc(n);

		if (s == NULL) {
			GPUTX_LOG(ERR, "error: --pcap %s: out of memory\n",
				spec);
			return -ENOMEM;
		}
		snprintf(s, n, "pcap=%s", spec);
		o->pcap_specs[o->n_streams] = s;
		o->streams[o->n_streams++] = s;
	} else {
		o->streams[o->n_streams++] = spec;
	}
	return 0;
}

static int
parse_stream(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	RTE_SET_USED(logtype);
	return add_stream(opt->dst, arg, 0);
}

static int
parse_pcap(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	RTE_SET_USED(logtype);
	return add_stream(opt->dst, arg, 1);
}

static int
parse_gpus(const struct gpuapp_opt *opt, const char *arg, int logtype)
{
	struct opts *o = opt->dst;
	char err[256];

	RTE_SET_USED(logtype);
	if (gpuapp_gpus_parse(arg, &o->gpus, err, sizeof(err)) != 0) {
		GPUTX_LOG(ERR, "error: %s\n", err);
		return -1;
	}
	return 0;
}

int
gputx_parse_opts(int argc, char **argv, struct opts *o)
{
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_CALLBACK_ENTRY("stream", parse_stream, o, "SPEC",
			"a stream (repeatable; syntax in doc/gpu_tx.md)"),
		GPUAPP_OPT_CALLBACK_ENTRY("pcap", parse_pcap, o, "FILE",
			"a stream from the file's first packet\n"
			"(--stream pcap=FILE,all for all of them)"),
		GPUAPP_OPT_UINT_ENTRY("port", &o->port, 0, RTE_MAX_ETHPORTS - 1,
			"N", "port to send on (default 0)"),
		GPUAPP_OPT_CALLBACK_ENTRY("rate", parse_rate, o, "R",
			"N[k|M|G]pps, N[k|M|G]bps (frame bits with FCS)\n"
			"or N% of the link (on-wire); default: as fast\n"
			"as the port takes"),
		GPUAPP_OPT_UINT_ENTRY("count", &o->count, 1, UINT64_MAX, "N",
			"stop after N packets"),
		{ .name = "duration", .kind = GPUAPP_OPT_DOUBLE,
		  .flags = GPUAPP_OPT_F_MIN_OPEN, .dst = &o->duration,
		  /* Bounded: it becomes a TSC count. */
		  .dmin = 0, .dmax = 1e9, .arg_name = "S",
		  .help = "stop after S seconds" },
		GPUAPP_OPT_CHOICE_ENTRY("mem", &o->mem, MEM_CPU, mem_names,
			"MODE", "cpu (CPU build, no GPU), host-mapped, gpu\n"
			"(default cpu)"),
		GPUAPP_OPT_UINT_ENTRY("burst", &o->burst, 1, MAX_BURST, "N",
			"packets per burst (default 32, max 512)"),
		GPUAPP_OPT_UINT_ENTRY("queues", &o->queues, 1, MAX_QUEUES, "N",
			"TX queues, each sent by a worker lcore of\n"
			"its own (default 1; one queue runs on the\n"
			"main lcore when there is no worker)"),
		GPUAPP_OPT_CALLBACK_ENTRY("gpus", parse_gpus, o, "LIST",
			"GPU modes: the GPU building each queue's\n"
			"frames: auto (default: the GPU nearest the\n"
			"port), all (queues round robin over every\n"
			"GPU), or a list: 0,1 (queue q on the\n"
			"(q mod n)th), q1=1, p0:q1=1 (doc/gpu_tx.md)"),
		GPUAPP_OPT_UINT_ENTRY("ring-items", &o->ring_items, 2, 1024, "N",
			"GPU: bursts in flight per queue (default 32)"),
		GPUAPP_OPT_FLAG_ENTRY("launch-per-burst", &o->launch_per_burst,
			"GPU: a kernel launch per burst instead of\n"
			"the persistent kernel"),
		GPUAPP_OPT_FLAG_ENTRY("no-lap-tags", &o->no_lap_tags,
			"GPU, for A/B: rings without lap tags (the\n"
			"fill loads each burst's inputs after READY)"),
		GPUAPP_OPT_FLAG_ENTRY("build-breakdown", &o->build_breakdown,
			"GPU: time where each burst's build goes\n"
			"(post, handoff, load, build, publish) and\n"
			"measure the flag floor first (doc/gpu_tx.md)"),
		GPUAPP_OPT_FLAG_ENTRY("no-build", &o->no_build,
			"benchmark baseline (with --mem cpu): send the\n"
			"streams' lengths unbuilt, the TX lcore's own\n"
			"ceiling"),
		GPUAPP_OPT_FLAG_ENTRY("table-in-host", &o->table_in_host,
			"GPU builds read the streams (templates, field\n"
			"engine) from host memory, not GPU memory\n"
			"(for comparison)"),
		GPUAPP_OPT_FLAG_ENTRY("csum-offload", &o->csum_offload,
			"leave IPv4, UDP and TCP checksums to the\n"
			"port's TX checksum offload"),
		GPUAPP_OPT_FLAG_ENTRY("no-fast-free", &o->no_fast_free,
			"benchmark baseline: do not ask the port for\n"
			"bulk frees of sent mbufs (MBUF_FAST_FREE)"),
		GPUAPP_OPT_UINT_ENTRY("seed", &o->seed, 0, UINT64_MAX, "N",
			"default seed of the streams (default 1)"),
		GPUAPP_OPT_UINT_ENTRY("mbufs", &o->mbufs, 64, UINT32_MAX, "N",
			"mbuf pool size"),
		GPUAPP_OPT_DOUBLE_ENTRY("wait-link", &o->wait_link, 0, 86400,
			"S", "wait up to S s for the link to come up\n"
			"(default 10; 0: do not wait)"),
		GPUAPP_OPT_DOUBLE_ENTRY("linger", &o->linger, 0, 86400, "S",
			"keep the port up S s after the last burst,\n"
			"or until its link goes down (default 0)"),
		GPUAPP_OPT_STRING_ENTRY("json", &o->json, "FILE",
			"summary as JSON ('-' for stdout)"),
		GPUAPP_OPT_FLAG_ENTRY("strict-rate", &o->strict_rate,
			"exit 1 when the measured rate falls more\n"
			"than 1% short of --rate (always warned)"),
		{ .name = "quiet", .letter = 'q', .kind = GPUAPP_OPT_FLAG,
		  .dst = &o->quiet, .help = "no per-second line on stderr" },
		GPUAPP_OPT_HELP_ENTRY('h'),
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->burst = 32;
	o->seed = 1;
	o->mem = MEM_CPU;
	o->wait_link = 10;
	o->queues = 1;
	o->ring_items = DEFAULT_RING_ITEMS;
	ret = gpuapp_opts_parse(table, RTE_DIM(table),
		"usage: %s [EAL options] -- [options]", gputx_logtype,
		argc, argv);
	if (ret != 0)
		return ret > 0 ? 1 : -1;
	if (o->n_streams == 0) {
		GPUTX_LOG(ERR, "error: no stream: give --stream SPEC or --pcap "
			"FILE\n");
		return -1;
	}
	if (o->build_breakdown && o->mem == MEM_CPU) {
		GPUTX_LOG(ERR, "error: --build-breakdown times the GPU's builds: "
			"with --mem host-mapped or gpu only\n");
		return -1;
	}
	if (o->no_build && o->mem != MEM_CPU) {
		GPUTX_LOG(ERR, "error: --no-build is the CPU lcore's baseline: "
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
