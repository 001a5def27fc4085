/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-flow-export: what flow expiry and IPFIX export cost the flow
 * table's packet rate, and how many records a second they get out, at
 * millions of concurrent flows with churn (issue 14).
 *
 * Packets come from flow_bench.h's model (`flows` flows live at once,
 * `churn` new ones a second, the oldest going idle as many) and update the
 * table with dpdk-gpu-rx's own code (flow_table.h): on the GPU a kernel a
 * thread per packet, chunk after chunk (each chunk's packets stamped with
 * the time it was queued, as an RX burst shares its time), or with --cpu
 * on CPU threads. With an export, the records end into a ring (its
 * records in GPU memory on the GPU, as dpdk-gpu-rx's in GPU modes; in
 * host memory with --cpu) and an exporter thread does what dpdk-gpu-rx's
 * does: the scan (the GPU kernel, or a slice of the table a tick), the
 * records copied over (gpurx_flow_cuda_pull()) and into libfixbuf
 * (ipfix_writer.c), the messages to a file or collector.
 * Without one (--export off) flows never end: the table is made large
 * enough for every flow of the run, so both runs see a table as full.
 *
 * Usage: bench-flow-export [--cpu [--threads N]] --flows F --churn C
 *            [--seconds S] [--idle S] [--active S] [--no-scan]
 *            [--export off|FILE|udp://HOST:PORT|tcp://HOST:PORT]
 *            [--encoders N] [--ipfix-rate N]
 *            [--json FILE]
 * Prints one line (flow-export: ...), with --cpu a second
 * (flow-export-cpu: the packet threads' CPU seconds and Mpps a CPU
 * second, which a shared host's other load does not move as it moves
 * the wall-clock rate), on the GPU with an export a second
 * (flow-export-exporter: scans launched, ticks that found the last one
 * still running, a scan's mean and longest time, the exporter's seconds
 * in pulls from the GPU and in libfixbuf), and, with --json, writes its
 * numbers.
 * Exit: 0; 1 failure; 2 usage; 77 no GPU (without --cpu).
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "flow_bench.h"
#include "flow_bench_kernels.h"
#include "gpucuda.h"
#include "flow_scan.h"
#include "ipfix_writer.h"

#define CHUNK (1u << 22)	/* packets a GPU launch */
#define CPU_CLOCK_EVERY 1024	/* packets between a CPU thread's clock reads */
#define RING_RECORDS (1u << 20)
#define PULL_RECORDS 4096	/* records a pull copies, as dpdk-gpu-rx */
#define MAX_THREADS 64

struct bfe_opts {
	int cpu, no_scan;
	uint64_t threads, flows, churn, encoders, ipfix_rate;
	double seconds, idle_s, active_s;
	const char *export;	/* NULL: off */
	const char *json;
};

struct bfe {
	struct bfe_opts o;
	struct gpurx_flow_table *ft;	/* CPU: the table; GPU: header copy */
	struct gpurx_flow_table *d_ft;	/* GPU */
	struct gpurx_flow_ring *ring;
	void *d_recs, *mirror, *pull_stream;	/* GPU: the ring's records */
	struct gpurx_ipfix *ipfix;
	size_t ft_bytes;
	uint64_t t0;			/* realtime ns of the start */
	volatile int stop, stop_export;
	uint64_t packets;		/* CPU threads add theirs */
	/* CPU threads' own CPU time, summed: on a shared host the packet
	 * rate a CPU-second compares runs that the wall clock cannot. */
	uint64_t cpu_ns;
	/* Exporter: records given to libfixbuf at the start of the steady
	 * window (once churned flows have had time to go idle) and when. */
	uint64_t warm_at, warm_records, tail;
	void *scan_stream;
	int failed;			/* the exporter could not go on */
	uint32_t scan_pos;
	/* Where the exporter's time goes (GPU): scans launched, ticks a
	 * scan was still running, the longest and the summed scan (launch to
	 * seen done, to the exporter loop's grain), and the loop's time in
	 * pulls (copies from the GPU) and in libfixbuf. */
	uint64_t scans, scans_busy, scan_t0, scan_ns, scan_max_ns;
	uint64_t pull_ns, ipfix_ns;
	uint64_t slack;			/* GPU: the ring's */
};

/* Packet times as ns since the epoch (the records' times are real), on
 * the monotonic clock: bench_now_ns() plus the offset taken at start. */
static uint64_t epoch_offset;

static uint64_t
realtime_ns(void)
{
	return bench_now_ns() + epoch_offset;
}

/* The first flow of the window at time t. */
static uint64_t
window_base(const struct bfe *b, uint64_t t)
{
	return (uint64_t)((double)(t - b->t0) * (double)b->o.churn / 1e9);
}

/*
 * 0; 1 after --help; a negative errno after saying why. No EAL: the
 * benchmark starts CUDA itself.
 */
static int
parse(int argc, char **argv, struct bfe_opts *o)
{
	const struct gpuapp_opt table[] = {
		GPUAPP_OPT_FLAG_ENTRY("cpu", &o->cpu,
			"the table in host memory, CPU threads"),
		GPUAPP_OPT_FLAG_ENTRY("no-scan", &o->no_scan,
			"with an export, no expiry scan: flows end only\n"
			"by their packets (the per-packet cost of the\n"
			"export's protocol without the scan's)"),
		GPUAPP_OPT_UINT_ENTRY("threads", &o->threads, 1, MAX_THREADS,
			"N", "--cpu: threads (default 1)"),
		GPUAPP_OPT_UINT_ENTRY("flows", &o->flows, 1, 1ull << 30, "F",
			"flows live at once (needed)"),
		GPUAPP_OPT_UINT_ENTRY("churn", &o->churn, 0, 1ull << 30, "C",
			"new flows a second"),
		/* Bounded: each becomes a count of ns. */
		{ .name = "seconds", .kind = GPUAPP_OPT_DOUBLE,
		  .flags = GPUAPP_OPT_F_MIN_OPEN, .dst = &o->seconds,
		  .dmin = 0, .dmax = 1e9, .arg_name = "S",
		  .help = "run time (default 5)" },
		{ .name = "idle", .kind = GPUAPP_OPT_DOUBLE,
		  .flags = GPUAPP_OPT_F_MIN_OPEN, .dst = &o->idle_s,
		  .dmin = 0, .dmax = 1e9, .arg_name = "S",
		  .help = "idle timeout of a flow (default 1)" },
		GPUAPP_OPT_DOUBLE_ENTRY("active", &o->active_s, 0, 1e9, "S",
			"active timeout of a flow (default 60)"),
		GPUAPP_OPT_STRING_ENTRY("export", &o->export, "TARGET",
			"off, FILE, udp://HOST:PORT or tcp://HOST:PORT\n"
			"(default off)"),
		GPUAPP_OPT_UINT_ENTRY("encoders", &o->encoders, 1,
			GPURX_IPFIX_ENCODERS_MAX, "N",
			"the writer's encoder threads, as dpdk-gpu-rx's\n"
			"--ipfix-encoders (default 4)"),
		/* The writer paces UDP to a collector at 100 k records/s
		 * unless told otherwise: a capacity search over UDP must set
		 * a rate above its churn, or it measures the pacing. */
		GPUAPP_OPT_UINT_ENTRY("ipfix-rate", &o->ipfix_rate, 0,
			1ull << 40, "N",
			"over UDP at most N records/s, as dpdk-gpu-rx's\n"
			"--ipfix-rate (default 100000, 0: unpaced)"),
		GPUAPP_OPT_STRING_ENTRY("json", &o->json, "FILE",
			"the numbers as JSON"),
		GPUAPP_OPT_HELP_ENTRY(0),
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->encoders = GPURX_IPFIX_ENCODERS_DEFAULT;
	o->ipfix_rate = GPURX_IPFIX_RATE_DEFAULT;
	o->seconds = 5;
	o->idle_s = 1;
	o->active_s = 60;
	ret = bench_opts_parse(table, RTE_DIM(table),
		"usage: %s [options]", argc, argv);
	if (ret != 0)
		return ret;
	if (o->flows == 0) {
		BENCH_LOG(ERR, "--flows F is needed: how many flows live at once\n");
		return -EINVAL;
	}
	if (o->export != NULL && strcmp(o->export, "off") == 0)
		o->export = NULL;
	return 0;
}

/* --- CPU ------------------------------------------------------------------- */

struct cpu_thread {
	struct bfe *b;
	uint32_t id;
	pthread_t th;
};

static void *
cpu_main(void *arg)
{
	struct cpu_thread *t = arg;
	struct bfe *b = t->b;
	const uint64_t stride = b->o.threads;
	uint64_t i = t->id, n = 0;

	struct timespec c0, c1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	while (!b->stop) {
		uint64_t ts = realtime_ns(), base = window_base(b, ts);

		for (uint32_t k = 0; k < CPU_CLOCK_EVERY; k++, i += stride, n++)
			flow_bench_update(b->ft, i, base, b->o.flows, ts);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	__atomic_fetch_add(&b->packets, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&b->cpu_ns, (uint64_t)((c1.tv_sec - c0.tv_sec) *
		1000000000ll + (c1.tv_nsec - c0.tv_nsec)), __ATOMIC_RELAXED);
	return NULL;
}

/* --- The exporter thread ----------------------------------------------------- */

static int
scan(struct bfe *b)
{
	uint64_t now = realtime_ns();
	int rc;

	if (b->o.no_scan)
		return 0;
	if (b->o.cpu) {
		/* The whole table a second, a tenth a tick, as dpdk-gpu-rx. */
		uint32_t cap = b->ft->capacity, step = cap / 10 + 1;

		gpurx_flow_scan(b->ft, b->scan_pos, b->scan_pos + step, now);
		b->scan_pos = b->scan_pos + step >= cap ? 0 : b->scan_pos + step;
		return 0;
	}
	rc = gpucuda_stream_busy(b->scan_stream);
	if (rc == -1) {
		b->scans_busy++;
		return 0;
	}
	if (rc == 0)
		rc = gpurx_flow_cuda_scan(b->d_ft, b->ft->capacity, now,
			b->scan_stream);
	if (rc == 0) {
		b->scans++;
		b->scan_t0 = realtime_ns();
	}
	if (rc != 0)
		BENCH_LOG(ERR, "scan: %s\n", gpucuda_strerror(rc));
	return rc;
}

/* Records from the ring into libfixbuf: how many, or -1 (said why). */
static int64_t
drain(struct bfe *b, uint32_t max)
{
	uint64_t t = realtime_ns(), u;
	int64_t n;

	if (!b->o.cpu) {
		int rc = gpurx_flow_cuda_pull(b->ring, &b->d_ft->ring_head,
			b->tail, b->pull_stream);

		if (rc != 0) {
			BENCH_LOG(ERR, "records from the GPU: %s\n",
				gpucuda_strerror(rc));
			return -1;
		}
	}
	u = realtime_ns();
	b->pull_ns += u - t;
	n = gpurx_ipfix_drain(b->ipfix, b->ring, &b->tail, max);
	b->ipfix_ns += realtime_ns() - u;
	return n;
}

static void *
export_main(void *arg)
{
	struct bfe *b = arg;
	const double warm_s = b->o.idle_s + 1 < b->o.seconds / 2 ?
		b->o.idle_s + 1 : b->o.seconds / 2;
	const uint64_t warm = b->t0 + (uint64_t)(warm_s * 1e9);
	uint64_t last_tick = 0;

	while (!b->stop_export) {
		int64_t n = drain(b, PULL_RECORDS);
		uint64_t t = realtime_ns();

		if (n < 0) {
			b->failed = 1;
			break;
		}
		if (b->scan_t0 != 0 &&
				gpucuda_stream_busy(b->scan_stream) == 0) {
			const uint64_t d = t - b->scan_t0;

			b->scan_ns += d;
			if (d > b->scan_max_ns)
				b->scan_max_ns = d;
			b->scan_t0 = 0;
		}
		if (b->warm_at == 0 && t >= warm) {
			b->warm_at = t;
			b->warm_records = gpurx_ipfix_counts(b->ipfix)->records;
		}
		if (t - last_tick >= GPURX_IPFIX_TICK_MS * 1000000ull) {
			last_tick = t;
			if (!b->stop && scan(b) != 0)
				break;
			gpurx_ipfix_tick(b->ipfix);
		}
		if (n == 0)
			usleep(200);
	}
	return NULL;
}

/* --- Set-up ------------------------------------------------------------------ */

static uint32_t
capacity_for(const struct bfe_opts *o)
{
	/* Every flow of the run at a load of 0.8 at most. */
	double need = ((double)o->flows + (double)o->churn * o->seconds) * 1.25;
	uint64_t cap = 1024;

	while ((double)cap < need && cap < (1ull << 31))
		cap <<= 1;
	return (uint32_t)cap;
}

static int
setup(struct bfe *b)
{
	uint32_t cap = capacity_for(&b->o);
	size_t rbytes = gpurx_flow_ring_bytes(RING_RECORDS);
	uint64_t rsize = RING_RECORDS;
	void *rmem = NULL;
	int rc;

	b->ft_bytes = gpurx_flow_table_bytes(cap);
	if (b->o.export != NULL) {
		const int file = strstr(b->o.export, "://") == NULL;

		b->ipfix = gpurx_ipfix_open(file ? NULL : b->o.export,
			file ? b->o.export : NULL, 1, 0);
		if (b->ipfix == NULL)
			return -1;
		if (gpurx_ipfix_set_encoders(b->ipfix,
				(unsigned int)b->o.encoders) != 0)
			return -1;
		gpurx_ipfix_set_rate(b->ipfix, b->o.ipfix_rate);
		if (b->o.cpu) {
			rmem = aligned_alloc(64, rbytes);
			b->ring = gpurx_flow_ring_init(rmem, RING_RECORDS);
		} else {
			/* As dpdk-gpu-rx in GPU modes: the header and the host
			 * copies in mapped host memory, the records in GPU
			 * memory, copied over on a stream of their own. */
			rc = gpurx_flow_cuda_ring_slack(&b->slack);
			rsize = gpurx_flow_ring_size_for(RING_RECORDS, b->slack);
			if (rc == 0)
				rc = gpurx_flow_cuda_host_alloc(&rmem,
					sizeof(struct gpurx_flow_ring));
			if (rc == 0)
				rc = gpurx_flow_cuda_host_alloc(&b->mirror,
					gpurx_flow_ring_mirror_bytes(PULL_RECORDS));
			if (rc == 0)
				rc = gpurx_flow_cuda_dev_zalloc(&b->d_recs,
					(size_t)rsize *
					sizeof(struct gpurx_flow_rec));
			if (rc == 0)
				rc = gpucuda_stream_create(&b->pull_stream);
			if (rc != 0) {
				BENCH_LOG(ERR, "export ring: %s\n",
					gpucuda_strerror(rc));
				return -1;
			}
			b->ring = gpurx_flow_ring_init_dev(rmem, b->d_recs,
				rsize, b->mirror, PULL_RECORDS);
		}
		if (b->ring == NULL) {
			BENCH_LOG(ERR, "no memory for the export ring\n");
			return -1;
		}
	}
	if (b->o.cpu) {
		/* The table lives here; zeroed by the kernel, page by page. */
		b->ft = aligned_alloc(64, (b->ft_bytes + 63) & ~(size_t)63);
		if (b->ft == NULL || gpurx_flow_table_init(b->ft, cap, 64) == NULL) {
			BENCH_LOG(ERR, "no memory for %u flow slots\n", cap);
			return -1;
		}
	} else {
		/* Only the header is made here; the entries are zeroed where
		 * they live. */
		b->ft = calloc(1, sizeof(*b->ft));
		if (b->ft == NULL)
			return -1;
		b->ft->capacity = cap;
		b->ft->max_probe = 64;
		rc = gpurx_flow_cuda_dev_alloc((void **)&b->d_ft, b->ft_bytes);
		if (rc == 0)
			rc = fbk_memset(b->d_ft, b->ft_bytes);
		if (rc != 0) {
			BENCH_LOG(ERR, "%u flow slots in GPU memory: %s\n", cap,
				gpucuda_strerror(rc));
			return -1;
		}
	}
	if (b->ring != NULL)
		gpurx_flow_table_set_expiry(b->ft, b->ring,
			(uint64_t)(b->o.idle_s * 1e9),
			(uint64_t)(b->o.active_s * 1e9), 1000000000ull);
	/* As dpdk-gpu-rx: RING_RECORDS may wait, the GPU's reservations
	 * by fetch_add. */
	if (b->slack != 0 && gpurx_flow_table_set_ring_slack(b->ft,
			RING_RECORDS, b->slack) != 0) {
		BENCH_LOG(ERR, "export ring: no room for the slack\n");
		return -1;
	}
	if (!b->o.cpu) {
		rc = gpucuda_copy(b->d_ft, b->ft, sizeof(*b->ft));
		if (rc == 0 && b->ring != NULL)
			rc = gpurx_flow_cuda_stream(&b->scan_stream);
		if (rc != 0) {
			BENCH_LOG(ERR, "GPU set-up: %s\n", gpucuda_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* The GPU run: chunks on two streams, one queued while the other runs. */
static int
run_gpu(struct bfe *b, uint64_t *packets)
{
	void *s[2] = { NULL, NULL };
	uint64_t first = 0;
	int rc = 0;

	for (int i = 0; i < 2 && rc == 0; i++)
		rc = gpucuda_stream_create(&s[i]);
	for (uint64_t k = 0; rc == 0; k++) {
		uint64_t ts = realtime_ns();

		if (ts - b->t0 >= (uint64_t)(b->o.seconds * 1e9))
			break;
		rc = gpucuda_stream_sync(s[k & 1]);
		if (rc == 0)
			rc = fbk_updates(b->d_ft, first, CHUNK,
				window_base(b, ts), b->o.flows, ts, s[k & 1]);
		first += CHUNK;
	}
	for (int i = 0; i < 2; i++) {
		if (s[i] != NULL && rc == 0)
			rc = gpucuda_stream_sync(s[i]);
		if (s[i] != NULL)
			gpucuda_stream_destroy(s[i]);
	}
	if (rc != 0)
		BENCH_LOG(ERR, "updates: %s\n", gpucuda_strerror(rc));
	*packets = first;
	return rc == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct cpu_thread th[MAX_THREADS];
	pthread_t exporter;
	struct bench_json j;
	struct bfe b;
	uint64_t packets = 0, t_end, records = 0, lost = 0, warm_rec;
	double elapsed, mpps, rec_s;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	rc = parse(argc, argv, &b.o);
	if (rc != 0)
		return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
	epoch_offset = (uint64_t)time(NULL) * 1000000000ull - bench_now_ns();

	if (!b.o.cpu && fbk_gpu_count() == 0) {
		printf("SKIP: no usable GPU (bench-flow-export --cpu runs without)\n");
		return 77;
	}
	if (setup(&b) != 0)
		return 1;
	b.t0 = realtime_ns();
	if (b.ipfix != NULL && pthread_create(&exporter, NULL, export_main, &b)) {
		BENCH_LOG(ERR, "cannot start the exporter thread\n");
		return 1;
	}
	if (b.o.cpu) {
		for (uint32_t i = 0; i < b.o.threads; i++) {
			th[i].b = &b;
			th[i].id = i;
			pthread_create(&th[i].th, NULL, cpu_main, &th[i]);
		}
		usleep((useconds_t)(b.o.seconds * 1e6));
		b.stop = 1;
		for (uint32_t i = 0; i < b.o.threads; i++)
			pthread_join(th[i].th, NULL);
		packets = b.packets;
	} else if (run_gpu(&b, &packets) != 0) {
		rc = 1;
	}
	t_end = realtime_ns();
	b.stop = 1;
	if (b.ipfix != NULL) {
		b.stop_export = 1;
		pthread_join(exporter, NULL);
		records = gpurx_ipfix_counts(b.ipfix)->records;
		warm_rec = b.warm_at ? b.warm_records : 0;
		rec_s = b.warm_at && t_end > b.warm_at ?
			(double)(records - warm_rec) * 1e9 / (double)(t_end - b.warm_at) : 0;
		if (!b.o.cpu) {
			if (gpucuda_stream_sync(b.scan_stream) != 0)
				rc = 1;
			gpucuda_stream_destroy(b.scan_stream);
		}
	} else {
		rec_s = 0;
	}
	if (!b.o.cpu && gpucuda_copy(b.ft, b.d_ft, sizeof(*b.ft)) != 0)
		rc = 1;
	if (b.ipfix != NULL) {
		/* What ended by the end; the flows still live are not this
		 * benchmark's business. */
		int64_t n;

		while ((n = drain(&b, 1u << 16)) > 0)
			;
		if (n < 0 || b.failed)
			rc = 1;
		records = gpurx_ipfix_counts(b.ipfix)->records;
		lost = gpurx_ipfix_lost(b.ipfix);
		if (gpurx_ipfix_close(b.ipfix) != 0)
			rc = 1;
	}
	elapsed = (double)(t_end - b.t0) / 1e9;
	mpps = (double)packets / elapsed / 1e6;
	printf("flow-export: mode=%s flows=%" PRIu64 " churn=%" PRIu64
		" export=%s seconds=%.2f slots=%u mpps=%.2f records=%" PRIu64
		" records_per_s=%.0f started_per_s=%.0f ring_full=%" PRIu64
		" overflow=%" PRIu64 " lost=%" PRIu64 "\n",
		b.o.cpu ? "cpu" : "gpu", b.o.flows, b.o.churn,
		b.o.export ? b.o.export : "off", elapsed, b.ft->capacity, mpps,
		records, rec_s, (double)b.ft->n_flows / elapsed, b.ft->ring_full,
		b.ft->overflow_pkts, lost);
	if (b.o.cpu)
		printf("flow-export-cpu: thread_cpu_s=%.3f mpps_per_cpu_s=%.3f\n",
			(double)b.cpu_ns / 1e9, b.cpu_ns ?
			(double)packets * 1e3 / (double)b.cpu_ns : 0.0);
	if (!b.o.cpu && b.ipfix != NULL)
		printf("flow-export-exporter: scans=%" PRIu64 " scan_busy_ticks=%"
			PRIu64 " scan_ms_mean=%.2f scan_ms_max=%.2f pull_s=%.3f"
			" ipfix_s=%.3f\n", b.scans, b.scans_busy,
			b.scans ? (double)b.scan_ns / 1e6 / (double)b.scans : 0.0,
			(double)b.scan_max_ns / 1e6, (double)b.pull_ns / 1e9,
			(double)b.ipfix_ns / 1e9);
	if (b.o.json != NULL) {
		char dir[4096], *slash;

		snprintf(dir, sizeof(dir), "%s", b.o.json);
		slash = strrchr(dir, '/');
		if (slash != NULL)
			*slash = '\0';
		if (bench_json_open(&j, slash ? dir : ".", slash ? slash + 1 :
				b.o.json) != 0)
			return 1;
		bench_json_obj_begin(&j, NULL);
		bench_json_str(&j, "mode", b.o.cpu ? "cpu" : "gpu");
		bench_json_int(&j, "flows", (int64_t)b.o.flows);
		bench_json_int(&j, "churn", (int64_t)b.o.churn);
		bench_json_str(&j, "export", b.o.export ? b.o.export : "off");
		bench_json_int(&j, "no_scan", b.o.no_scan);
		bench_json_int(&j, "threads", b.o.cpu ? (int64_t)b.o.threads : 0);
		bench_json_int(&j, "encoders", (int64_t)b.o.encoders);
		bench_json_int(&j, "ipfix_rate", (int64_t)b.o.ipfix_rate);
		bench_json_int(&j, "slots", b.ft->capacity);
		bench_json_num(&j, "seconds", elapsed);
		bench_json_int(&j, "packets", (int64_t)packets);
		bench_json_num(&j, "mpps", mpps);
		if (b.o.cpu) {
			bench_json_num(&j, "thread_cpu_s",
				(double)b.cpu_ns / 1e9);
			bench_json_num(&j, "mpps_per_cpu_s", b.cpu_ns ?
				(double)packets * 1e3 / (double)b.cpu_ns : 0.0);
		}
		bench_json_int(&j, "records", (int64_t)records);
		bench_json_num(&j, "records_per_s", rec_s);
		bench_json_num(&j, "started_per_s", (double)b.ft->n_flows / elapsed);
		bench_json_int(&j, "ring_full", (int64_t)b.ft->ring_full);
		bench_json_int(&j, "overflow_packets", (int64_t)b.ft->overflow_pkts);
		bench_json_int(&j, "lost_records", (int64_t)lost);
		if (!b.o.cpu && b.ipfix != NULL) {
			bench_json_int(&j, "scans", (int64_t)b.scans);
			bench_json_int(&j, "scan_busy_ticks",
				(int64_t)b.scans_busy);
			bench_json_num(&j, "scan_ms_max",
				(double)b.scan_max_ns / 1e6);
			bench_json_num(&j, "pull_s", (double)b.pull_ns / 1e9);
			bench_json_num(&j, "ipfix_s", (double)b.ipfix_ns / 1e9);
		}
		bench_json_host(&j);
		bench_json_obj_end(&j);
		if (bench_json_close(&j) != 0)
			rc = 1;
	}
	gpurx_ipfix_free(b.ipfix);
	if (b.o.cpu) {
		free(b.ring);
		free(b.ft);
	} else {
		if (b.ring != NULL) {
			gpucuda_stream_destroy(b.pull_stream);
			gpurx_flow_cuda_dev_free(b.d_recs);
			gpurx_flow_cuda_host_free(b.mirror);
			gpurx_flow_cuda_host_free(b.ring);
		}
		gpurx_flow_cuda_dev_free(b.d_ft);
		free(b.ft);
	}
	return rc;
}
