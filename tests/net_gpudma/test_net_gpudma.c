/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Host tests of net_gpudma against the fake CUDA library: devargs, the
 * descriptor ring (completion order, chains up to 262144 bytes, missed
 * frames), DMA mappings (pool refusal, EBUSY unmap), TX to pcap, stats,
 * frames from another port (rx_port: net_ring, net_pcap) and its
 * ownership, and fault injection of every CUDA call the port makes.
 *
 * Usage: test-net-gpudma host|gpu|multi|persistent|faults FAKE_LIBCUDA WORKDIR
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <pcap/pcap.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_tcp.h>
#include <rte_udp.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "fake_cuda.h"
#include "gpudma_frames.h"
#include "rte_pmd_net_gpudma.h"
#include "check.h"


#define MAX_FRAME GPUDMA_FRAMES_MAX
#define SEG_ROOM 2048u       /* data room past the headroom, every pool */
#define GPU_MEM_LEN (32u << 20)
#define PAGE 4096u

static const char *workdir;

/* ---- frames and pcap files ------------------------------------------------ */

/* Frame lengths of the test capture: around a segment's edges, jumbo,
 * around 64 KiB (where DPDK 22.11's net_pcap truncates) and 262144. */
static const uint32_t frame_lens[] = {
	60, 64, 128, 1500, 2047, 2048, 2049, 4096, 9000, 65535, 65536,
	65549, 100000, 262144, 1514, 60, 262143, 300, 4097, 1,
};
#define NB_FRAMES RTE_DIM(frame_lens)

static void
path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", workdir, name);
}

/* Frame k of a pcap file compared with expected lens/bytes; returns the
 * number of frames read, or -1 on a mismatch (printed). */
static int
check_pcap(const char *path, const uint32_t *lens, unsigned int n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	unsigned int k = 0;
	pcap_t *p;
	uint32_t j;
	int rc, ret = 0;

	p = pcap_open_offline(path, err);
	if (p == NULL) {
		printf("  %s: %s\n", path, err);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &h, &b)) == 1) {
		if (k >= n || h->caplen != lens[k % n] || h->len != lens[k % n]) {
			printf("  %s: frame %u is %u bytes, expected %u\n", path,
				k, h->caplen, k < n ? lens[k] : 0);
			ret = -1;
			break;
		}
		for (j = 0; j < h->caplen; j++) {
			if (b[j] != gpudma_frame_byte(k, j)) {
				printf("  %s: frame %u differs at byte %u\n",
					path, k, j);
				ret = -1;
				break;
			}
		}
		if (ret != 0)
			break;
		k++;
	}
	pcap_close(p);
	return ret == 0 ? (int)k : -1;
}

/* 0 if chain m holds frame k whole: lengths consistent, bytes equal. */
static int
check_chain(const struct rte_mbuf *m, uint32_t k, uint32_t len)
{
	const struct rte_mbuf *s;
	const char *why;
	uint32_t off = 0, sum = 0, segs = 0, j;

	if (m->pkt_len != len) {
		printf("  frame %u: pkt_len %u, expected %u\n", k, m->pkt_len, len);
		return -1;
	}
	for (s = m; s != NULL; s = s->next) {
		const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);

		for (j = 0; j < s->data_len; j++) {
			if (d[j] != gpudma_frame_byte(k, off + j)) {
				printf("  frame %u: byte %u differs (a buffer handed out before its copy completed?)\n",
					k, off + j);
				return -1;
			}
		}
		off += s->data_len;
		sum += s->data_len;
		segs++;
	}
	if (sum != m->pkt_len || segs != m->nb_segs) {
		printf("  frame %u: data_len sum %u, pkt_len %u, %u segments, nb_segs %u\n",
			k, sum, m->pkt_len, segs, m->nb_segs);
		return -1;
	}
	/* The port receives into raw buffers: every field a received
	 * buffer shows must be set fresh, nothing left of its last use. */
	if (rte_mbuf_check(m, 1, &why) != 0) {
		printf("  frame %u: %s\n", k, why);
		return -1;
	}
	for (s = m; s != NULL; s = s->next) {
		if ((s->ol_flags & ~RTE_MBUF_F_EXTERNAL) != 0 ||
				s->packet_type != RTE_PTYPE_UNKNOWN ||
				s->vlan_tci != 0 || rte_mbuf_refcnt_read(s) != 1 ||
				(s != m && s->nb_segs != 1)) {
			printf("  frame %u: a segment has ol_flags %#" PRIx64 ", packet_type %#x, vlan_tci %u, refcnt %u, nb_segs %u\n",
				k, s->ol_flags, s->packet_type, s->vlan_tci,
				rte_mbuf_refcnt_read(s), s->nb_segs);
			return -1;
		}
	}
	return 0;
}

/* ---- log capture ------------------------------------------------------------ */

static FILE *log_file;
static long log_mark;

static void
log_begin(void)
{
	fflush(log_file);
	log_mark = ftell(log_file);
}

/* 1 if the log since log_begin() holds s. */
static int
log_has(const char *s)
{
	static char buf[1 << 16];
	size_t n;

	fflush(log_file);
	if (fseek(log_file, log_mark, SEEK_SET) != 0)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, log_file);
	buf[n] = '\0';
	fseek(log_file, 0, SEEK_END);
	return strstr(buf, s) != NULL;
}

/* ---- the test's own GPU memory, from the fake --------------------------------- */

extern CUresult cuGetProcAddress_v2(const char *name, void **pfn, int version,
	cuuint64_t flags, CUdriverProcAddressQueryResult *status);

static struct {
	PFN_cuInit_v2000 init;
	PFN_cuDevicePrimaryCtxRetain_v7000 retain;
	PFN_cuCtxPushCurrent_v4000 push;
	PFN_cuCtxPopCurrent_v4000 pop;
	PFN_cuMemAlloc_v3020 alloc;
} cu;

static void *gpu_mem;        /* GPU_MEM_LEN bytes of GPU 0, page aligned */
static void *gpu_mem1;       /* the same of GPU 1 (mode "multi") */

/* GPU_MEM_LEN bytes of GPU ordinal, page aligned and registered with EAL
 * once: pools come and go. */
static int
gpu_mem_on(int ordinal, void **mem)
{
	CUdeviceptr p;
	CUcontext ctx, c;

	if (cu.retain(&ctx, ordinal) != CUDA_SUCCESS ||
			cu.push(ctx) != CUDA_SUCCESS)
		return -1;
	if (cu.alloc(&p, GPU_MEM_LEN + PAGE) != CUDA_SUCCESS) {
		cu.pop(&c);
		return -1;
	}
	cu.pop(&c);
	*mem = (void *)RTE_ALIGN_CEIL((uintptr_t)p, PAGE);
	return rte_extmem_register(*mem, GPU_MEM_LEN, NULL, 0, PAGE) == 0 ?
		0 : -1;
}

static int
gpu_mem_init(void)
{
	CUdriverProcAddressQueryResult st;

#define RESOLVE(field, sym, ver) \
	if (cuGetProcAddress_v2(#sym, (void **)&cu.field, ver, \
			CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || \
			cu.field == NULL) \
		return -1
	RESOLVE(init, cuInit, 2000);
	RESOLVE(retain, cuDevicePrimaryCtxRetain, 7000);
	RESOLVE(push, cuCtxPushCurrent, 4000);
	RESOLVE(pop, cuCtxPopCurrent, 4000);
	RESOLVE(alloc, cuMemAlloc, 3020);
#undef RESOLVE
	if (cu.init(0) != CUDA_SUCCESS)
		return -1;
	return gpu_mem_on(0, &gpu_mem);
}

/* ---- ports and pools ------------------------------------------------------- */

static struct rte_mempool *
host_pool(const char *name, unsigned int n)
{
	return rte_pktmbuf_pool_create(name, n, 0, 0,
		SEG_ROOM + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
}

static struct rte_mempool *
gpu_pool_in(void *mem, const char *name, unsigned int n)
{
	struct rte_pktmbuf_extmem ext = {
		.buf_ptr = mem,
		.buf_iova = RTE_BAD_IOVA,
		.buf_len = GPU_MEM_LEN,
		.elt_size = SEG_ROOM + RTE_PKTMBUF_HEADROOM,
	};

	/* Poison: a buffer handed out before its copy landed shows it. */
	memset(mem, 0xee, GPU_MEM_LEN);
	return rte_pktmbuf_pool_create_extbuf(name, n, 0, 0, ext.elt_size,
		SOCKET_ID_ANY, &ext, 1);
}

static struct rte_mempool *
gpu_pool(const char *name, unsigned int n)
{
	return gpu_pool_in(gpu_mem, name, n);
}

/* How ports fill GPU memory: GPUDMA_TEST_SCATTER=0 copy-engine copies
 * (scatter=0), =1 the scatter kernel asked for (scatter=1), unset the
 * port's default (the scatter kernel). */
static bool scatter;
static const char *scatter_arg = "";
/* GPUDMA_TEST_FILL=persistent: ports get fill=persistent ("" otherwise). */
static char fill_arg[32];

static int
port_create(const char *name, const char *args, uint16_t *port)
{
	char all[1400];

	snprintf(all, sizeof(all), "%s%s%s%s%s", args,
		scatter_arg[0] != '\0' && args[0] != '\0' ? "," : "",
		scatter_arg,
		fill_arg[0] != '\0' && (args[0] != '\0' || scatter_arg[0] != '\0') ?
		"," : "", fill_arg);
	if (rte_vdev_init(name, all) != 0)
		return -1;
	if (rte_eth_dev_get_port_by_name(name, port) != 0 ||
			rte_pmd_gpudma_is_port(*port) != 1) {
		rte_vdev_uninit(name);
		return -1;
	}
	return 0;
}

static void
port_destroy(const char *name, uint16_t port)
{
	(void)rte_eth_dev_stop(port);
	(void)rte_eth_dev_close(port);
	(void)rte_vdev_uninit(name);
}

/* Configures nq queues on pool mp (NULL: set RX up later). */
static int
port_setup(uint16_t port, uint16_t nq, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;
	int ret;

	ret = rte_eth_dev_configure(port, nq, nq, &conf);
	for (q = 0; q < nq && ret == 0 && mp != NULL; q++)
		ret = rte_eth_rx_queue_setup(port, q, 256, SOCKET_ID_ANY, NULL, mp);
	for (q = 0; q < nq && ret == 0; q++)
		ret = rte_eth_tx_queue_setup(port, q, 256, SOCKET_ID_ANY, NULL);
	return ret;
}

static struct rte_device *
port_dev(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return NULL;
	return info.device;
}

static uint64_t
xstat(uint16_t port, const char *name)
{
	uint64_t id, v = UINT64_MAX;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
			rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

/* Receives from queue q until it has given nothing for a while; each
 * frame is checked against frame_lens (frame k of the queue is global
 * frame first + k * stride) and kept in out[] if out is not NULL, else
 * freed. Returns the number received or -1 on a bad frame. */
static int
rx_all(uint16_t port, uint16_t q, unsigned int first, unsigned int stride,
		struct rte_mbuf **out, unsigned int max)
{
	/* The fake runs launched fills as they are enqueued; the
	 * persistent kernel's stand-in is a thread of its own, which may
	 * take a while to be scheduled. */
	const uint64_t wait = fill_arg[0] != '\0' ? rte_get_timer_hz() / 20 : 0;
	uint64_t last = rte_get_timer_cycles();
	struct rte_mbuf *pkts[32];
	unsigned int got = 0, idle = 0, i;

	while (idle < 16 || rte_get_timer_cycles() - last < wait) {
		uint16_t n = rte_eth_rx_burst(port, q, pkts, RTE_DIM(pkts));

		idle = n == 0 ? idle + 1 : 0;
		if (n > 0)
			last = rte_get_timer_cycles();
		else if (wait > 0)
			rte_delay_us_sleep(20);
		for (i = 0; i < n; i++, got++) {
			unsigned int k = (first + got * stride) % NB_FRAMES;

			/* stride 0: frames may be missing, order unknown */
			if (stride > 0 &&
					check_chain(pkts[i], k, frame_lens[k]) != 0) {
				rte_pktmbuf_free_bulk(pkts + i, n - i);
				return -1;
			}
			if (out != NULL && got < max) {
				out[got] = pkts[i];
			} else {
				/* Marks a consumer may leave: the port must
				 * not hand them out again (check_chain). */
				for (struct rte_mbuf *s = pkts[i]; s != NULL;
						s = s->next) {
					s->ol_flags |= RTE_MBUF_F_RX_VLAN;
					s->packet_type = RTE_PTYPE_L2_ETHER;
					s->vlan_tci = 7;
				}
				rte_pktmbuf_free(pkts[i]);
			}
		}
	}
	return (int)got;
}

static uint64_t
total_bytes(void)
{
	uint64_t b = 0;
	unsigned int i;

	for (i = 0; i < NB_FRAMES; i++)
		b += frame_lens[i];
	return b;
}

static uint32_t
total_segs(void)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i < NB_FRAMES; i++)
		s += (frame_lens[i] + SEG_ROOM - 1) / SEG_ROOM;
	return s;
}

static char in_pcap[512];

/* ---- cases: devargs -------------------------------------------------------- */

static void
bad_devargs(void)
{
	static const struct {
		const char *args;
		const char *named;
	} bad[] = {
		{ "foo=1", "devarg foo" },
		{ "rx_pcap=x.pcap,colour=blue", "devarg colour" },
		{ "loop=abc", "devarg loop" },
		{ "loop=-1", "devarg loop" },
		{ "queues=0", "devarg queues" },
		{ "queues=17", "devarg queues" },
		{ "gpu=x", "devarg gpu" },
		{ "batch=2", "devarg batch" },
		{ "batch=yes", "devarg batch" },
		{ "scatter=yes", "devarg scatter" },
		{ "loop=1,loop=2", "devarg loop" },
		{ "rx_pcap=", "devarg rx_pcap" },
		{ "rx_pcap=/nonexistent/in.pcap", "rx_pcap /nonexistent/in.pcap" },
		/* Each refusal names the known fill modes or the clash. */
		{ "fill=sometimes", "\"sometimes\" is not a fill mode (known: launch, persistent)" },
		{ "fill=", "is not a fill mode (known: launch, persistent)" },
		{ "fill=Persistent", "devarg fill" },
		{ "fill=persistent,scatter=0", "persistent runs the scatter kernel, which scatter=0 turns off" },
		{ "fill=persistent,bulk=1", "devarg bulk: 1 is a copy-engine copy a burst" },
		{ "fill=launch,fill=persistent", "devarg fill: given more than once" },
		{ "fill_idle_us=100", "devarg fill_idle_us: times the persistent fill kernel, which fill=persistent asks for" },
		{ "fill=launch,fill_idle_us=100", "which fill=persistent asks for" },
		{ "fill=persistent,fill_idle_us=0", "devarg fill_idle_us: \"0\" is not a number from 1 to 10000000" },
		{ "fill=persistent,fill_idle_us=10000001", "devarg fill_idle_us" },
	};
	unsigned int i;
	char args[600];
	uint16_t port;

	for (i = 0; i < RTE_DIM(bad); i++) {
		log_begin();
		CHECK(rte_vdev_init("net_gpudma_bad", bad[i].args) != 0,
			"\"%s\" accepted", bad[i].args);
		CHECK(log_has(bad[i].named), "\"%s\": no log line naming %s",
			bad[i].args, bad[i].named);
		(void)rte_vdev_uninit("net_gpudma_bad");
	}
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=0,queues=16,gpu=0", in_pcap);
	CHECK(port_create("net_gpudma_good", args, &port) == 0, "%s refused", args);
	port_destroy("net_gpudma_good", port);
}

/* ---- cases: host memory ------------------------------------------------------- */

/*
 * rx_pcap deals its frames over queues= queues: an application that sets
 * up fewer is refused, naming both numbers, rather than never receiving
 * the rest. Records with no captured byte are skipped with a count.
 */
static void
host_rx_pcap_queues_and_empty_records(void)
{
	struct rte_eth_conf conf = { 0 };
	struct pcap_pkthdr h = { .caplen = 0, .len = 60 };
	char args[700], path[512];
	uint8_t frame[60] = { 0 };
	pcap_dumper_t *d;
	pcap_t *dead;
	uint16_t port;

	snprintf(args, sizeof(args), "rx_pcap=%s,queues=2", in_pcap);
	if (port_create("net_gpudma_q2", args, &port) != 0) {
		CHECK(0, "port not created");
		return;
	}
	log_begin();
	CHECK(rte_eth_dev_configure(port, 1, 1, &conf) != 0,
		"1 of queues=2 configured");
	CHECK(log_has("1 rx queue(s) configured, but queues=2"),
		"no log line naming the queues");
	CHECK(rte_eth_dev_configure(port, 2, 2, &conf) == 0, "2 of 2 refused");
	CHECK(rte_eth_dev_configure(port, 0, 1, &conf) == 0,
		"TX only refused");
	port_destroy("net_gpudma_q2", port);

	/* Two frames around a record of caplen 0. */
	path_in(path, sizeof(path), "empty-record.pcap");
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = dead != NULL ? pcap_dump_open(dead, path) : NULL;
	CHECK(d != NULL, "cannot write %s", path);
	if (d == NULL) {
		if (dead != NULL)
			pcap_close(dead);
		return;
	}
	pcap_dump((u_char *)d, &h, frame);
	h.caplen = 60;
	pcap_dump((u_char *)d, &h, frame);
	h.caplen = 0;
	pcap_dump((u_char *)d, &h, frame);
	pcap_dump_close(d);
	pcap_close(dead);
	snprintf(args, sizeof(args), "rx_pcap=%s", path);
	log_begin();
	if (port_create("net_gpudma_empty", args, &port) != 0) {
		CHECK(0, "port not created");
		return;
	}
	CHECK(log_has("2 record(s) with no captured byte (caplen 0) skipped; 1 frames"),
		"empty records not counted in the log");
	port_destroy("net_gpudma_empty", port);
}

/*
 * Every frame of the pcap, loops times, into a pool of n buffers, each
 * chain checked. With fewer buffers than the run takes, they come back
 * to the port: after rx_all marked them as a consumer might, which the
 * port must not hand out again.
 */
static void
host_rx_chains(unsigned int n, unsigned int loops)
{
	struct rte_mempool *mp = host_pool("host_chains", n);
	struct rte_eth_stats st;
	char args[600];
	uint16_t port;
	int got;

	CHECK(mp != NULL, "pool: %s", rte_strerror(rte_errno));
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=%u", in_pcap, loops);
	if (mp == NULL || port_create("net_gpudma_h", args, &port) != 0) {
		CHECK(0, "port not created");
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 1, mp) == 0, "setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	got = rx_all(port, 0, 0, 1, NULL, 0);
	CHECK(got == (int)(loops * NB_FRAMES), "received %d of %u", got,
		loops * (unsigned int)NB_FRAMES);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(st.ipackets == loops * NB_FRAMES &&
		st.ibytes == loops * total_bytes() &&
		st.imissed == 0 && st.ierrors == 0,
		"ipackets %" PRIu64 " ibytes %" PRIu64 " imissed %" PRIu64 " ierrors %" PRIu64,
		st.ipackets, st.ibytes, st.imissed, st.ierrors);
	CHECK(xstat(port, "rx_copy_bytes") == loops * total_bytes(),
		"rx_copy_bytes %" PRIu64, xstat(port, "rx_copy_bytes"));
	CHECK(xstat(port, "rx_copy_ops") == loops * total_segs(),
		"rx_copy_ops %" PRIu64 " for %u segments",
		xstat(port, "rx_copy_ops"), loops * total_segs());
	port_destroy("net_gpudma_h", port);
	CHECK(rte_mempool_avail_count(mp) == n, "%u of %u mbufs back",
		rte_mempool_avail_count(mp), n);
	rte_mempool_free(mp);
}

static void
host_multi_queue_and_loop_forever(void)
{
	struct rte_mempool *mp = host_pool("host_mq", 8191);
	struct rte_mbuf *pkts[32];
	struct rte_eth_stats st;
	char args[600];
	uint16_t port, q;
	unsigned int forever = 0;
	int got[3];

	snprintf(args, sizeof(args), "rx_pcap=%s,queues=3", in_pcap);
	if (mp == NULL || port_create("net_gpudma_mq", args, &port) != 0) {
		CHECK(0, "port not created");
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 3, mp) == 0, "setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	for (q = 0; q < 3; q++) {
		got[q] = rx_all(port, q, q, 3, NULL, 0);
		CHECK(got[q] == (int)(NB_FRAMES - q + 2) / 3,
			"queue %u received %d", q, got[q]);
	}
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(st.ipackets == NB_FRAMES && st.q_ipackets[1] == (uint64_t)got[1],
		"ipackets %" PRIu64 ", queue 1 %" PRIu64, st.ipackets,
		st.q_ipackets[1]);
	port_destroy("net_gpudma_mq", port);

	/* loop=0 replays until stopped. */
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=0", in_pcap);
	if (port_create("net_gpudma_mq", args, &port) != 0) {
		CHECK(0, "loop=0 port not created");
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 1, mp) == 0, "setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	while (forever < 10 * NB_FRAMES) {
		uint16_t n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));

		if (n == 0)
			break;
		forever += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	CHECK(forever >= 10 * NB_FRAMES, "loop=0 stopped after %u frames",
		forever);
	port_destroy("net_gpudma_mq", port);
	CHECK(rte_mempool_avail_count(mp) == 8191, "%u of 8191 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

/* Twice through, fewer buffers than that takes. */
static void
host_rx_chains_twice(void)
{
	host_rx_chains(4095, 2);
}

/* Eight times through 1024 buffers: each comes back several times. */
static void
host_rx_reused_buffers(void)
{
	host_rx_chains(1024, 8);
}

static void
host_imissed_when_pool_empty(void)
{
	static struct rte_mbuf *held[NB_FRAMES];
	struct rte_mempool *mp = host_pool("host_small", 64);
	struct rte_eth_stats st;
	char args[600];
	uint16_t port;
	int got;

	snprintf(args, sizeof(args), "rx_pcap=%s", in_pcap);
	if (mp == NULL || port_create("net_gpudma_m", args, &port) != 0) {
		CHECK(0, "port not created");
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 1, mp) == 0, "setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	/* All kept: the 64 buffers run out, as a ring nobody refills. */
	got = rx_all(port, 0, 0, 0, held, NB_FRAMES);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(got > 0 && st.imissed > 0 && st.ipackets + st.imissed == NB_FRAMES,
		"received %d, ipackets %" PRIu64 " imissed %" PRIu64, got,
		st.ipackets, st.imissed);
	if (got > 0)
		rte_pktmbuf_free_bulk(held, RTE_MIN((unsigned int)got, NB_FRAMES));
	port_destroy("net_gpudma_m", port);
	CHECK(rte_mempool_avail_count(mp) == 64, "%u of 64 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

/* RX then TX of every frame: tx_pcap holds rx_pcap's bytes. */
static void
loop_rx_to_tx(const char *what, bool gpu)
{
	static struct rte_mbuf *held[NB_FRAMES];
	char args[1200], out[512];
	struct rte_mempool *mp;
	struct rte_eth_stats st;
	uint16_t port, sent;
	int got, n;

	path_in(out, sizeof(out), gpu ? "tx-gpu.pcap" : "tx-host.pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s", in_pcap, out);
	mp = gpu ? gpu_pool("tx_pool", 2048) : host_pool("tx_pool", 2048);
	if (mp == NULL || port_create("net_gpudma_tx", args, &port) != 0) {
		CHECK(0, "%s: port not created", what);
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	if (gpu)
		CHECK(rte_dev_dma_map(port_dev(port), gpu_mem,
			RTE_BAD_IOVA, GPU_MEM_LEN) == 0, "dma map: %s",
			rte_strerror(rte_errno));
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, mp) == 0,
		"rx setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	got = rx_all(port, 0, 0, 1, held, NB_FRAMES);
	CHECK(got == (int)NB_FRAMES, "%s: received %d", what, got);
	sent = got > 0 ? rte_eth_tx_burst(port, 0, held, (uint16_t)got) : 0;
	CHECK(sent == got, "%s: sent %u of %d", what, sent, got);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(st.opackets == NB_FRAMES && st.obytes == total_bytes() &&
		st.oerrors == 0, "%s: opackets %" PRIu64 " obytes %" PRIu64 " oerrors %" PRIu64,
		what, st.opackets, st.obytes, st.oerrors);
	if (gpu)
		CHECK(xstat(port, "tx_copy_ops") == total_segs() &&
			xstat(port, "tx_copy_bytes") == total_bytes(),
			"%s: tx_copy_ops %" PRIu64 " tx_copy_bytes %" PRIu64, what,
			xstat(port, "tx_copy_ops"), xstat(port, "tx_copy_bytes"));
	(void)rte_eth_dev_stop(port);
	if (gpu)
		CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem,
			RTE_BAD_IOVA, GPU_MEM_LEN) == 0, "unmap: %s",
			rte_strerror(rte_errno));
	port_destroy("net_gpudma_tx", port);
	n = check_pcap(out, frame_lens, NB_FRAMES);
	CHECK(n == (int)NB_FRAMES, "%s: tx_pcap has %d good frames", what, n);
	CHECK(rte_mempool_avail_count(mp) == 2048, "%s: %u of 2048 mbufs back",
		what, rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

static void
host_tx_pcap_identical(void)
{
	loop_rx_to_tx("host memory", false);
}

/* A chain whose pkt_len disagrees with its segments is dropped, counted. */
static void
host_tx_bad_chain_counted(void)
{
	struct rte_mempool *mp = host_pool("tx_bad", 64);
	struct rte_eth_stats st;
	struct rte_mbuf *m[2];
	char args[600], out[512];
	uint16_t port;

	path_in(out, sizeof(out), "tx-bad.pcap");
	snprintf(args, sizeof(args), "tx_pcap=%s", out);
	if (mp == NULL || port_create("net_gpudma_txb", args, &port) != 0 ||
			rte_pktmbuf_alloc_bulk(mp, m, 2) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	CHECK(port_setup(port, 1, NULL) == 0 && rte_eth_dev_start(port) == 0,
		"setup");
	memset(rte_pktmbuf_append(m[0], 100), 1, 100);
	m[0]->pkt_len = 200;                  /* says more than it holds */
	memset(rte_pktmbuf_append(m[1], 60), 2, 60);
	CHECK(rte_eth_tx_burst(port, 0, m, 2) == 2, "tx");
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.oerrors == 1 &&
		st.opackets == 1 && st.obytes == 60,
		"oerrors %" PRIu64 " opackets %" PRIu64, st.oerrors, st.opackets);
	port_destroy("net_gpudma_txb", port);
	CHECK(rte_mempool_avail_count(mp) == 64, "%u of 64 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

/* Whole records in a pcap file, -1 when it is unreadable or cut off. */
static int
count_pcap(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	pcap_t *p;
	int rc, k = 0;

	p = pcap_open_offline(path, err);
	if (p == NULL)
		return -1;
	while ((rc = pcap_next_ex(p, &h, &b)) == 1)
		k++;
	pcap_close(p);
	return rc == PCAP_ERROR_BREAK ? k : -1;
}

/*
 * Sends bursts x 16 frames of 100 bytes to tx_pcap=out; returns the
 * port's stats in st. fsize > 0: writes past fsize bytes of any file fail
 * (EFBIG, as a full disk fails them) while the bursts go out.
 */
static int
tx_to_file(const char *out, rlim_t fsize, unsigned int bursts,
		uint16_t len, struct rte_eth_stats *st)
{
	struct rte_mempool *mp = host_pool("tx_werr", 512);
	struct rte_mbuf *m[16];
	struct rlimit old, lim;
	char args[600];
	unsigned int b, i;
	uint16_t port;
	int ret = 0;

	snprintf(args, sizeof(args), "tx_pcap=%s", out);
	if (mp == NULL || port_create("net_gpudma_werr", args, &port) != 0) {
		rte_mempool_free(mp);
		return -1;
	}
	if (port_setup(port, 1, NULL) != 0 || rte_eth_dev_start(port) != 0 ||
			getrlimit(RLIMIT_FSIZE, &old) != 0)
		ret = -1;
	lim = old;
	lim.rlim_cur = fsize;
	if (ret == 0 && fsize > 0 && (signal(SIGXFSZ, SIG_IGN) == SIG_ERR ||
			setrlimit(RLIMIT_FSIZE, &lim) != 0))
		ret = -1;
	for (b = 0; ret == 0 && b < bursts; b++) {
		if (rte_pktmbuf_alloc_bulk(mp, m, RTE_DIM(m)) != 0) {
			ret = -1;
			break;
		}
		for (i = 0; i < RTE_DIM(m); i++)
			memset(rte_pktmbuf_append(m[i], len), (int)(b * 16 + i),
				len);
		if (rte_eth_tx_burst(port, 0, m, RTE_DIM(m)) != RTE_DIM(m))
			ret = -1;
	}
	if (fsize > 0 && (setrlimit(RLIMIT_FSIZE, &old) != 0 ||
			signal(SIGXFSZ, SIG_DFL) == SIG_ERR))
		ret = -1;
	if (rte_eth_stats_get(port, st) != 0)
		ret = -1;
	port_destroy("net_gpudma_werr", port);
	if (rte_mempool_avail_count(mp) != 512)
		ret = -1;
	rte_mempool_free(mp);
	return ret;
}

/*
 * Write errors on tx_pcap are frames not sent: counted in oerrors, never
 * in opackets, and the file keeps only whole records, each one counted.
 */
static void
host_tx_write_errors_counted(void)
{
	const uint64_t rec = 16 + 100, burst = 16 * rec;
	struct rte_eth_stats st;
	char out[512];
	struct stat sb;
	int n;

	log_begin();
	CHECK(tx_to_file("/dev/full", 0, 4, 100, &st) == 0, "/dev/full: set-up");
	CHECK(st.opackets == 0 && st.obytes == 0 && st.oerrors == 64,
		"/dev/full: opackets %" PRIu64 " obytes %" PRIu64 " oerrors %" PRIu64,
		st.opackets, st.obytes, st.oerrors);
	CHECK(log_has("tx_pcap: writing the file failed: No space left on device"),
		"/dev/full: the error is not logged with its reason");

	/* Room for the file header, 3 bursts and part of the 4th. */
	path_in(out, sizeof(out), "tx-full.pcap");
	CHECK(tx_to_file(out, 24 + 3 * burst + burst / 2, 8, 100, &st) == 0,
		"limited file: set-up");
	CHECK(st.opackets == 48 && st.obytes == 4800 && st.oerrors == 80,
		"limited file: opackets %" PRIu64 " obytes %" PRIu64 " oerrors %" PRIu64,
		st.opackets, st.obytes, st.oerrors);
	CHECK(stat(out, &sb) == 0 && (uint64_t)sb.st_size == 24 + 3 * burst,
		"limited file: %lld bytes, not the 3 bursts written whole",
		(long long)sb.st_size);
	n = count_pcap(out);
	CHECK(n == 48, "limited file: %d whole records, opackets 48", n);

	/* Bursts larger than stdio's buffer: the write fails inside
	 * pcap_dump(), before the flush, and is counted all the same. */
	log_begin();
	CHECK(tx_to_file("/dev/full", 0, 2, 1500, &st) == 0,
		"/dev/full, 1500 B: set-up");
	CHECK(st.opackets == 0 && st.obytes == 0 && st.oerrors == 32,
		"/dev/full, 1500 B: opackets %" PRIu64 " obytes %" PRIu64
		" oerrors %" PRIu64, st.opackets, st.obytes, st.oerrors);
	CHECK(log_has("tx_pcap: writing the file failed: No space left on device"),
		"/dev/full, 1500 B: the error is not logged with its reason");
}

/*
 * Frame k of the checksum case into f: Ethernet (+ VLAN for odd k), then
 * IPv4/UDP, IPv4/TCP, IPv6/UDP or IPv6/TCP by k % 4, 40 + 13 k payload
 * bytes (the shortest padded to 60 bytes: the checksum must stop at the
 * IP length). Checksums as DPDK's helpers compute them (ref: complete;
 * else as DPDK's TX checksum offload wants: IPv4 0, the L4 field the
 * pseudo-header's sum). Returns the length; l2, l3 and the mbuf flags.
 */
static uint32_t
csum_frame(uint8_t *f, unsigned int k, bool ref, uint16_t *l2,
		uint16_t *l3, uint64_t *fl)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	const bool v6 = (k % 4) >= 2, udp = (k % 2) == 0;
	const uint32_t pay = k == 0 ? 4 : 40 + 13 * k;
	const uint32_t l4h = udp ? sizeof(struct rte_udp_hdr) :
		sizeof(struct rte_tcp_hdr);
	uint8_t *ip, *l4;
	uint32_t len, j;
	uint16_t cs;

	memset(f, 0, 2048);
	memset(eth->dst_addr.addr_bytes, 0x02, 6);
	memset(eth->src_addr.addr_bytes, 0x04, 6);
	*l2 = sizeof(*eth);
	if (k % 3 == 1) {
		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		f[14] = 0;
		f[15] = 100;
		*l2 += 4;
	}
	f[*l2 - 2] = v6 ? 0x86 : 0x08;
	f[*l2 - 1] = v6 ? 0xdd : 0x00;
	ip = f + *l2;
	*l3 = v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
	l4 = ip + *l3;
	for (j = 0; j < pay; j++)
		l4[l4h + j] = (uint8_t)(k * 7 + j * 3);
	if (udp) {
		struct rte_udp_hdr *u = (struct rte_udp_hdr *)l4;

		u->src_port = rte_cpu_to_be_16(1000 + k);
		u->dst_port = rte_cpu_to_be_16(53);
		u->dgram_len = rte_cpu_to_be_16(l4h + pay);
	} else {
		struct rte_tcp_hdr *t = (struct rte_tcp_hdr *)l4;

		t->src_port = rte_cpu_to_be_16(2000 + k);
		t->dst_port = rte_cpu_to_be_16(443);
		t->sent_seq = rte_cpu_to_be_32(0x01020304u * k);
		t->data_off = 5 << 4;
		t->tcp_flags = RTE_TCP_ACK_FLAG;
		t->rx_win = rte_cpu_to_be_16(65535);
	}
	if (v6) {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

		h->vtc_flow = rte_cpu_to_be_32(6u << 28);
		h->payload_len = rte_cpu_to_be_16(l4h + pay);
		h->proto = udp ? IPPROTO_UDP : IPPROTO_TCP;
		h->hop_limits = 64;
		/* An array in 22.11, struct rte_ipv6_addr from 24.11:
		 * the same 16 bytes. */
		for (j = 0; j < 16; j++) {
			((uint8_t *)&h->src_addr)[j] = (uint8_t)(0x20 + j + k);
			((uint8_t *)&h->dst_addr)[j] = (uint8_t)(0xf0 - j);
		}
		cs = ref ? rte_ipv6_udptcp_cksum(h, l4) :
			rte_ipv6_phdr_cksum(h, 0);
		*fl = RTE_MBUF_F_TX_IPV6;
	} else {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		h->version_ihl = RTE_IPV4_VHL_DEF;
		h->total_length = rte_cpu_to_be_16(*l3 + l4h + pay);
		h->packet_id = rte_cpu_to_be_16(k);
		h->time_to_live = 64;
		h->next_proto_id = udp ? IPPROTO_UDP : IPPROTO_TCP;
		h->src_addr = rte_cpu_to_be_32(0x0a000001u + k);
		h->dst_addr = rte_cpu_to_be_32(0xc0a80101u);
		cs = ref ? rte_ipv4_udptcp_cksum(h, l4) :
			rte_ipv4_phdr_cksum(h, 0);
		h->hdr_checksum = ref ? rte_ipv4_cksum(h) : 0;
		*fl = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	}
	/* Stored as computed: DPDK's sums are of the bytes as stored. */
	memcpy(l4 + (udp ? 6 : 16), &cs, sizeof(cs));
	*fl |= udp ? RTE_MBUF_F_TX_UDP_CKSUM : RTE_MBUF_F_TX_TCP_CKSUM;
	len = *l2 + *l3 + l4h + pay;
	return len < 60 ? 60 : len;
}

/*
 * TX checksum offload into tx_pcap: every frame written with the
 * checksums DPDK's own helpers compute; a frame whose L4 field lacks the
 * pseudo-header's sum goes out wrong, as from a NIC; flags that do not
 * describe the frame drop it into oerrors.
 */
static void
host_tx_csum_offload(void)
{
	enum { N = 16 };
	struct rte_mempool *mp = host_pool("tx_csum", 64);
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_stats st;
	struct rte_mbuf *m[N + 2];
	static uint8_t want[N + 1][2048], f[2048];
	uint32_t wlen[N + 1];
	char args[600], out[512], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	unsigned int k, got = 0, same = 0;
	uint16_t port, l2, l3;
	uint64_t fl;
	pcap_t *pc;

	path_in(out, sizeof(out), "tx-csum.pcap");
	snprintf(args, sizeof(args), "tx_pcap=%s", out);
	if (mp == NULL || port_create("net_gpudma_cs", args, &port) != 0 ||
			rte_pktmbuf_alloc_bulk(mp, m, N + 2) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
		RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	CHECK(rte_eth_dev_configure(port, 1, 1, &conf) == 0 &&
		rte_eth_tx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL) == 0 &&
		rte_eth_dev_start(port) == 0, "offloads refused");
	for (k = 0; k <= N; k++) {
		struct rte_mbuf *x = m[k];
		uint32_t len;

		wlen[k] = csum_frame(want[k], k, true, &l2, &l3, &fl);
		len = csum_frame(f, k, false, &l2, &l3, &fl);
		if (k == N) {
			/* No pseudo-header sum in the field: sent wrong. */
			memset(f + l2 + l3 + (fl & RTE_MBUF_F_TX_UDP_CKSUM ?
				6 : 16), 0, 2);
		}
		memcpy(rte_pktmbuf_append(x, len), f, len);
		x->ol_flags = fl;
		x->l2_len = l2;
		x->l3_len = l3;
	}
	/* An L4 checksum asked for without saying IPv4 or IPv6. */
	csum_frame(f, 1, false, &l2, &l3, &fl);
	memcpy(rte_pktmbuf_append(m[N + 1], 100), f, 100);
	m[N + 1]->ol_flags = RTE_MBUF_F_TX_TCP_CKSUM;
	m[N + 1]->l2_len = l2;
	m[N + 1]->l3_len = l3;
	CHECK(rte_eth_tx_burst(port, 0, m, N + 2) == N + 2, "tx");
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.opackets == N + 1 &&
		st.oerrors == 1, "opackets %" PRIu64 " oerrors %" PRIu64,
		st.opackets, st.oerrors);
	port_destroy("net_gpudma_cs", port);
	pc = pcap_open_offline(out, err);
	CHECK(pc != NULL, "%s: %s", out, err);
	while (pc != NULL && pcap_next_ex(pc, &h, &b) == 1 && got <= N) {
		bool eq = h->caplen == wlen[got] &&
			memcmp(b, want[got], wlen[got]) == 0;

		CHECK(eq || got == N, "frame %u (%s, %s): checksums differ from "
			"DPDK's", got, got % 4 >= 2 ? "IPv6" : "IPv4",
			got % 2 ? "TCP" : "UDP");
		same += eq;
		got++;
	}
	if (pc != NULL)
		pcap_close(pc);
	CHECK(got == N + 1 && same == N, "%u frames read, %u as DPDK computes",
		got, same);
	CHECK(rte_mempool_avail_count(mp) == 64, "%u of 64 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

/*
 * Without tx_pcap, with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE: sent mbufs go
 * back to their pool in bulk; mbufs that break the offload's promise (a
 * chain, a second reference, another pool, a clone) are still freed the
 * ordinary way: every pool full again, nothing freed twice.
 */
static void
host_tx_fast_free(void)
{
	struct rte_mempool *a = host_pool("tx_ff_a", 256);
	struct rte_mempool *b = host_pool("tx_ff_b", 64);
	struct rte_mempool *cl = rte_pktmbuf_pool_create("tx_ff_cl", 64, 0, 0,
		0, SOCKET_ID_ANY);
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_eth_stats st;
	struct rte_mbuf *m[40], *keep, *first_b;
	uint64_t bytes = 0;
	uint16_t port, n = 0;

	if (a == NULL || b == NULL || cl == NULL ||
			port_create("net_gpudma_ff", "", &port) != 0) {
		CHECK(0, "set-up");
		goto out;
	}
	CHECK(rte_eth_dev_info_get(port, &info) == 0 &&
		(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE),
		"fast free not offered");
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	CHECK(rte_eth_dev_configure(port, 1, 1, &conf) == 0 &&
		rte_eth_tx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL) == 0 &&
		rte_eth_dev_start(port) == 0, "setup");
	/* Twice: first a burst led by a good mbuf of a, then one led by an
	 * mbuf of b (the bulk pool is the first frame's). */
	for (int round = 0; round < 2; round++) {
		n = 0;
		first_b = rte_pktmbuf_alloc(b);
		if (round == 1 && first_b != NULL)
			m[n++] = first_b;
		for (int i = 0; i < 30; i++) {
			struct rte_mbuf *x = rte_pktmbuf_alloc(a);

			if (x == NULL)
				break;
			rte_pktmbuf_append(x, 60 + i);
			m[n++] = x;
		}
		/* A chain of two. */
		m[n] = rte_pktmbuf_alloc(a);
		keep = rte_pktmbuf_alloc(a);
		if (m[n] == NULL || keep == NULL) {
			CHECK(0, "alloc");
			break;
		}
		rte_pktmbuf_append(m[n], 100);
		rte_pktmbuf_append(keep, 50);
		CHECK(rte_pktmbuf_chain(m[n], keep) == 0, "chain");
		n++;
		/* A second reference, kept by the test. */
		keep = rte_pktmbuf_alloc(a);
		rte_pktmbuf_append(keep, 70);
		rte_mbuf_refcnt_update(keep, 1);
		m[n++] = keep;
		/* A clone (indirect mbufs of cl on a's data). */
		m[n] = rte_pktmbuf_clone(m[0], cl);
		CHECK(m[n] != NULL, "clone");
		if (m[n] != NULL)
			n++;
		if (round == 0 && first_b != NULL) {
			rte_pktmbuf_append(first_b, 80);
			m[n++] = first_b;
		}
		for (uint16_t i = 0; i < n; i++)
			bytes += m[i]->pkt_len;
		CHECK(rte_eth_tx_burst(port, 0, m, n) == n, "tx");
		CHECK(rte_mbuf_refcnt_read(keep) == 1, "round %d: refcnt %u",
			round, rte_mbuf_refcnt_read(keep));
		rte_pktmbuf_free(keep);
		CHECK(rte_mempool_avail_count(a) == 256 &&
			rte_mempool_avail_count(b) == 64 &&
			rte_mempool_avail_count(cl) == 64,
			"round %d: mbufs back: %u/256, %u/64, %u/64", round,
			rte_mempool_avail_count(a), rte_mempool_avail_count(b),
			rte_mempool_avail_count(cl));
	}
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.opackets == 2u * n &&
		st.obytes == bytes && st.oerrors == 0,
		"opackets %" PRIu64 " obytes %" PRIu64 " (%" PRIu64 ")",
		st.opackets, st.obytes, bytes);
	port_destroy("net_gpudma_ff", port);
out:
	rte_mempool_free(cl);
	rte_mempool_free(b);
	rte_mempool_free(a);
}

/* ---- cases: GPU memory -------------------------------------------------------- */

static unsigned int streams0, events0, regs0, allocs0, refs0, modules0;
static uint64_t batch_faults0;

static void
cuda_baseline(void)
{
	streams0 = fake_cuda_live_streams();
	events0 = fake_cuda_live_events();
	regs0 = fake_cuda_live_registrations();
	allocs0 = fake_cuda_live_allocs();
	refs0 = fake_cuda_live_primary_refs();
	modules0 = fake_cuda_live_modules();
	/* A case that faulted must not fail the next ones. */
	fake_cuda_clear_sticky_error();
	batch_faults0 = fake_cuda_batch_faults();
}

/* Everything the port took from CUDA given back (what the fake dropped on
 * a release made to fail counts as given back). */
static void
check_cuda_released(const char *what)
{
	CHECK(fake_cuda_live_streams() == streams0 &&
		fake_cuda_live_events() == events0 &&
		fake_cuda_live_registrations() == regs0 &&
		fake_cuda_live_allocs() == allocs0 &&
		fake_cuda_live_primary_refs() == refs0 &&
		fake_cuda_live_modules() == modules0 &&
		fake_cuda_kernel_errors() == 0 &&
		fake_cuda_batch_faults() == batch_faults0 &&
		fake_cuda_sticky_error() == CUDA_SUCCESS &&
		fake_cuda_ctx_depth() == 0,
		"%s: streams %u/%u events %u/%u registrations %u/%u allocations %u/%u context refs %u/%u modules %u/%u, %" PRIu64 " bad scatter descriptors, %" PRIu64 " batched copies the SMs cannot reach, context error %d, depth %u",
		what, fake_cuda_live_streams(), streams0, fake_cuda_live_events(),
		events0, fake_cuda_live_registrations(), regs0,
		fake_cuda_live_allocs(), allocs0, fake_cuda_live_primary_refs(),
		refs0, fake_cuda_live_modules(), modules0,
		fake_cuda_kernel_errors(),
		fake_cuda_batch_faults() - batch_faults0,
		(int)fake_cuda_sticky_error(), fake_cuda_ctx_depth());
}

static void
gpu_pool_refused_until_mapped(void)
{
	struct rte_mempool *mp = gpu_pool("gpu_pool_unmapped", 1024);
	struct rte_mempool *hp = host_pool("host_pool_ok", 512);
	struct rte_device *dev;
	char args[600];
	uint16_t port;

	cuda_baseline();
	snprintf(args, sizeof(args), "rx_pcap=%s", in_pcap);
	if (mp == NULL || hp == NULL ||
			port_create("net_gpudma_map", args, &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		rte_mempool_free(hp);
		return;
	}
	dev = port_dev(port);
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	log_begin();
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, mp) != 0,
		"a pool in unmapped external memory accepted");
	CHECK(log_has("mempool gpu_pool_unmapped"), "refusal does not name the pool");
	/* EAL memory needs no mapping. */
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, hp) == 0,
		"EAL-memory pool refused");
	CHECK(rte_dev_dma_map(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0,
		"dma map: %s", rte_strerror(rte_errno));
	CHECK(rte_dev_dma_map(dev, (char *)gpu_mem + PAGE, RTE_BAD_IOVA, PAGE) != 0 &&
		rte_errno == EEXIST, "an overlapping mapping accepted");
	log_begin();
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, mp) == 0,
		"mapped GPU pool refused");
	CHECK(log_has("DMA-mapped GPU memory"), "queue not in GPU mode");
	CHECK(rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA, PAGE) != 0 &&
		rte_errno == ENOENT, "unmap of what was not mapped accepted");
	/* Started, the queue may post there at any poll. */
	CHECK(rte_eth_dev_start(port) == 0, "start");
	log_begin();
	CHECK(rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) != 0 &&
		rte_errno == EBUSY && log_has("pool gpu_pool_unmapped"),
		"unmap under a started queue's pool: %s", rte_strerror(rte_errno));
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	CHECK(rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0,
		"unmap of a stopped port: %s", rte_strerror(rte_errno));
	/* Unmapped since setup: the port does not start on it. */
	log_begin();
	CHECK(rte_eth_dev_start(port) != 0 && log_has("mempool gpu_pool_unmapped"),
		"started on a pool no longer mapped");
	port_destroy("net_gpudma_map", port);
	check_cuda_released("after close");
	rte_mempool_free(mp);
	rte_mempool_free(hp);
}

/* Segments frame k takes. */
static uint32_t
segs_of(unsigned int k)
{
	return (frame_lens[k] + SEG_ROOM - 1) / SEG_ROOM;
}

/* Stops a started GPU-memory port, unmaps gpu_mem (nothing posted holds
 * it now), closes the port and checks that CUDA and the pool have
 * everything back (nb mbufs), then frees the pool. */
static void
gpu_port_finish(uint16_t port, const char *name, struct rte_mempool *mp,
		unsigned int nb)
{
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
		GPU_MEM_LEN) == 0, "unmap after stop: %s", rte_strerror(rte_errno));
	port_destroy(name, port);
	check_cuda_released("after close");
	CHECK(rte_mempool_avail_count(mp) == nb, "%u of %u mbufs back",
		rte_mempool_avail_count(mp), nb);
	rte_mempool_free(mp);
}

static void
gpu_rx_completion_order_on(bool no_batch)
{
	struct rte_mempool *mp = gpu_pool("gpu_order", 2048);
	uint64_t batches0 = fake_cuda_batch_calls();
	uint64_t launches0 = fake_cuda_kernel_launches();
	struct rte_mbuf *pkts[32];
	struct rte_eth_stats st;
	struct rte_device *dev;
	uint32_t first_batch;
	unsigned int i, got = 0, ran = 0, copied = 0, segs_done = 0;
	char args[600];
	uint16_t port, n;
	int rest;

	cuda_baseline();
	/* batch=0 as the fake hiding cuMemcpyBatchAsync would. */
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=3%s", in_pcap,
		no_batch ? ",batch=0" : "");
	if (mp == NULL || port_create("net_gpudma_ord", args, &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	dev = port_dev(port);
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	CHECK(rte_dev_dma_map(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0,
		"dma map: %s", rte_strerror(rte_errno));
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, mp) == 0,
		"rx setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");

	fake_cuda_set_async_manual(1);
	/* The ring is posted ahead at the first poll, a run of descriptors a
	 * fill; none filled yet: nothing comes back, however often polled. */
	for (i = 0; i < 3; i++) {
		n = rte_eth_rx_burst(port, 0, pkts, 4);
		CHECK(n == 0, "burst %u: %u buffers handed out before any copy ran", i, n);
	}
	/* Operations of the first fill: a copy a segment, or one launch. */
	first_batch = scatter ? 1 :
		segs_of(0) + segs_of(1) + segs_of(2) + segs_of(3);
	CHECK(fake_cuda_async_pending() > first_batch, "%" PRIu64 " operations pending",
		fake_cuda_async_pending());
	/* Posted ahead: far more than the three polls' 12 frames asked. */
	CHECK(2048 - rte_mempool_avail_count(mp) > segs_of(0) + segs_of(1) +
		segs_of(2) + segs_of(3) + 100, "only %u buffers posted",
		2048 - rte_mempool_avail_count(mp));
	/* Unmapping memory posted descriptors use fails. */
	CHECK(rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) != 0 &&
		rte_errno == EBUSY, "unmap with descriptors in flight: %s",
		rte_strerror(rte_errno));
	/* One operation at a time: every chain handed out is whole and in
	 * order (a buffer still being written shows the pool's poison), and
	 * never more frames than those whose every copy ran (copies: an
	 * operation a segment, the fill's event one more). */
	while (got < 3 * NB_FRAMES && fake_cuda_async_pending() > 0 &&
			!check_case_failed()) {
		CHECK(fake_cuda_async_complete(1) == 1, "ran");
		ran++;
		while (copied < 3 * NB_FRAMES &&
				segs_done + segs_of(copied % NB_FRAMES) <= ran)
			segs_done += segs_of(copied++ % NB_FRAMES);
		do {
			n = rte_eth_rx_burst(port, 0, pkts, 4);
			for (i = 0; i < n; i++, got++)
				CHECK(check_chain(pkts[i], got % NB_FRAMES,
					frame_lens[got % NB_FRAMES]) == 0,
					"frame %u", got);
			rte_pktmbuf_free_bulk(pkts, n);
		} while (n > 0);
		if (!scatter)
			CHECK(got <= copied, "%u frames handed out, %u copied after %u operations",
				got, copied, ran);
	}
	CHECK(got > 0, "nothing handed out in manual completion");
	/* The rest, copies running as they are enqueued. */
	fake_cuda_set_async_manual(0);
	rest = rx_all(port, 0, got, 1, NULL, 0);
	CHECK(rest >= 0 && got + (unsigned int)rest == 3 * NB_FRAMES,
		"received %u + %d of %u", got, rest, 3 * (unsigned int)NB_FRAMES);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(st.ipackets == 3 * NB_FRAMES && st.ibytes == 3 * total_bytes() &&
		st.ierrors == 0, "ipackets %" PRIu64 " ibytes %" PRIu64 " ierrors %" PRIu64,
		st.ipackets, st.ibytes, st.ierrors);
	/* Fills cover runs of frames, not a poll's burst of 4: at least
	 * twice fewer fills than polls of 4 frames would make. */
	CHECK(xstat(port, "rx_copy_ops") == 3 * total_segs() &&
		xstat(port, "rx_copy_bytes") == 3 * total_bytes() &&
		xstat(port, "rx_copy_batches") > 0 &&
		xstat(port, "rx_copy_batches") <= 3 * NB_FRAMES / 8,
		"rx_copy_ops %" PRIu64 " rx_copy_bytes %" PRIu64 " rx_copy_batches %" PRIu64,
		xstat(port, "rx_copy_ops"), xstat(port, "rx_copy_bytes"),
		xstat(port, "rx_copy_batches"));
	if (scatter)
		CHECK(fake_cuda_kernel_launches() > launches0 &&
			fake_cuda_batch_calls() == batches0,
			"scatter=1 and no kernel launched, or batched copies");
	else if (!no_batch && getenv("FAKE_CUDA_HIDE_SYMBOL") == NULL)
		CHECK(fake_cuda_batch_calls() > batches0,
			"no cuMemcpyBatchAsync though the driver has it");
	else
		CHECK(fake_cuda_batch_calls() == batches0,
			"cuMemcpyBatchAsync called though hidden");
	/* Stopped, the port holds nothing: the mapping can go. */
	gpu_port_finish(port, "net_gpudma_ord", mp, 2048);
}

static void
gpu_rx_completion_order(void)
{
	gpu_rx_completion_order_on(false);
}

static void
gpu_rx_completion_order_batch0(void)
{
	gpu_rx_completion_order_on(true);
}

/*
 * A poll that finds the oldest fill still running makes no CUDA call: its
 * completion is a word in host memory the stream writes, so lcores polling
 * their queues do not contend for the driver's context lock. Now and then
 * (every few thousand such polls) the fill's event is asked once, which
 * alone would report it failed. Without stream memory operations
 * (FAKE_CUDA_HIDE_SYMBOL=cuStreamWriteValue32) every such poll asks it.
 * Either way the frames come out whole and in order once filled.
 */
static void gpu_port_start(uint16_t port, struct rte_mempool *mp);

static void
gpu_rx_polls_without_cuda(void)
{
	const char *hidden = getenv("FAKE_CUDA_HIDE_SYMBOL");
	bool words = hidden == NULL || strcmp(hidden, "cuStreamWriteValue32") != 0;
	struct rte_mempool *mp = gpu_pool("gpu_polls", 4095);
	struct rte_mbuf *pkts[8];
	uint64_t c0, c;
	unsigned int i, got = 0;
	char args[600];
	uint16_t port;
	int rest;

	cuda_baseline();
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=3", in_pcap);
	if (mp == NULL || port_create("net_gpudma_polls", args, &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	gpu_port_start(port, mp);
	fake_cuda_set_async_manual(1);
	/* The first poll posts the ring (CUDA calls), nothing is filled. */
	got += rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
	c0 = fake_cuda_calls();
	for (i = 0; i < 100; i++)
		got += rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
	c = fake_cuda_calls() - c0;
	CHECK(got == 0, "%u frames handed out before their fill ran", got);
	if (words) {
		CHECK(c == 0, "%" PRIu64 " CUDA calls in 100 polls of a running fill",
			c);
		c0 = fake_cuda_calls();
		for (i = 0; i < 5000; i++)
			got += rte_eth_rx_burst(port, 0, pkts,
				RTE_DIM(pkts));
		c = fake_cuda_calls() - c0;
		/* Once, perhaps twice, in 5000 polls: context in, query, out. */
		CHECK(got == 0 && c >= 3 && c <= 6,
			"%" PRIu64 " CUDA calls in 5000 polls of a running fill (the event asked once every few thousand)",
			c);
	} else {
		CHECK(c >= 100, "%" PRIu64 " CUDA calls in 100 polls without completion words",
			c);
	}
	CHECK(fake_cuda_async_complete(fake_cuda_async_pending()) > 0, "ran");
	fake_cuda_set_async_manual(0);
	rest = rx_all(port, 0, 0, 1, NULL, 0);
	CHECK(rest == 3 * (int)NB_FRAMES, "received %d of %u", rest,
		3 * (unsigned int)NB_FRAMES);
	gpu_port_finish(port, "net_gpudma_polls", mp, 4095);
}

/* One queue of 1024 descriptors on mp, in gpu_mem (mapped), started. */
static void
gpu_port_start(uint16_t port, struct rte_mempool *mp)
{
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	CHECK(rte_dev_dma_map(port_dev(port), gpu_mem, RTE_BAD_IOVA,
		GPU_MEM_LEN) == 0, "dma map: %s", rte_strerror(rte_errno));
	CHECK(rte_eth_rx_queue_setup(port, 0, 1024, SOCKET_ID_ANY, NULL, mp) == 0,
		"rx setup");
	CHECK(rte_eth_dev_start(port) == 0, "start");
}

/*
 * 1024 frames of len bytes through a ring of 1024, polled 32 at a time:
 * the ring is refilled in runs of a quarter ring, so a fill (one launch,
 * or one batch of copies) covers 256 frames, not a poll's 32. With the
 * kernel, bulk= says whether a fill's bytes cross PCIe as copies of whole
 * runs first (want_bulk: every fill did; else none).
 */
static void
fill_runs_on(uint32_t len, const char *bulk, bool want_bulk)
{
	struct rte_mempool *mp = gpu_pool("gpu_runs", 4095);
	uint64_t launches0 = fake_cuda_kernel_launches();
	struct rte_mbuf *pkts[32];
	char args[600], pcap[512];
	unsigned int got = 0, i, idle = 0, bad = 0;
	uint16_t port, n;

	path_in(pcap, sizeof(pcap), "runs.pcap");
	CHECK(gpudma_frames_write(pcap, &len, 1, 1024) == 0, "pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s%s%s", pcap,
		bulk != NULL ? ",bulk=" : "", bulk != NULL ? bulk : "");
	if (mp == NULL || port_create("net_gpudma_runs", args, &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	gpu_port_start(port, mp);
	while (idle < 16 && got < 1024) {
		n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
		idle = n == 0 ? idle + 1 : 0;
		for (i = 0; i < n; i++, got++) {
			const uint8_t *d = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
			uint32_t j;

			for (j = 0; j < len && pkts[i]->pkt_len == len; j++)
				if (d[j] != gpudma_frame_byte(got, j))
					break;
			bad += pkts[i]->pkt_len != len || j != len;
		}
		rte_pktmbuf_free_bulk(pkts, n);
	}
	CHECK(got == 1024 && bad == 0, "%u B bulk=%s: received %u of 1024, %u wrong",
		len, bulk != NULL ? bulk : "(default)", got, bad);
	CHECK(xstat(port, "rx_copy_batches") <= 5,
		"%" PRIu64 " fills for 1024 frames polled 32 at a time",
		xstat(port, "rx_copy_batches"));
	if (scatter) {
		CHECK(fake_cuda_kernel_launches() - launches0 <= 5,
			"%" PRIu64 " launches for 1024 frames",
			fake_cuda_kernel_launches() - launches0);
		CHECK(xstat(port, "rx_bulk_batches") == (want_bulk ?
			xstat(port, "rx_copy_batches") : 0),
			"%u B bulk=%s: %" PRIu64 " of %" PRIu64 " fills bulk", len,
			bulk != NULL ? bulk : "(default)",
			xstat(port, "rx_bulk_batches"),
			xstat(port, "rx_copy_batches"));
	} else {
		CHECK(xstat(port, "rx_bulk_batches") == 0, "bulk without the kernel");
	}
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
		GPU_MEM_LEN) == 0, "unmap: %s", rte_strerror(rte_errno));
	port_destroy("net_gpudma_runs", port);
	CHECK(rte_mempool_avail_count(mp) == 4095, "%u of 4095 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

static void
gpu_rx_fill_covers_runs(void)
{
	/* bulk=auto (the default): small frames read by the kernel over
	 * PCIe, large ones copied across in bulk; 0 and 1 force it. */
	fill_runs_on(64, NULL, false);
	fill_runs_on(1500, NULL, true);
	fill_runs_on(64, "1", true);
	fill_runs_on(1500, "0", false);
	fill_runs_on(1514, "1", true);
}

/*
 * Batched copies (scatter=0, batch=1), as bench-gpudma's consumer check
 * runs them on the H100: chains of frames up to 262144 bytes into GPU
 * memory, one cuMemcpyBatchAsync a fill of thousands of segments. The
 * driver may run such a batch on the SMs, which read the frame store only
 * through its GPU mapping: stored registered without one, every fill
 * faulted (CUDA_ERROR_LAUNCH_FAILED) and nothing was received. The store
 * is mapped, and the batch asks for the copy engine; TX's staging alike.
 */
static void
gpu_batch_copies_reach_host(void)
{
	static const uint32_t lens[] = { 60, 1500, 2049, 9000, 65549, 262144 };
	struct rte_mempool *mp = gpu_pool("gpu_batch_sm", 4095);
	uint64_t batches0 = fake_cuda_batch_calls();
	uint64_t hint0 = fake_cuda_batch_no_overlap_hint();
	struct rte_mbuf *pkts[32];
	struct rte_eth_stats st;
	char args[600], pcap[512];
	unsigned int got = 0, idle = 0, bad = 0, i;
	uint16_t port, n;

	cuda_baseline();
	if (getenv("FAKE_CUDA_HIDE_SYMBOL") != NULL) {
		rte_mempool_free(mp);
		return;  /* no cuMemcpyBatchAsync to ask for */
	}
	path_in(pcap, sizeof(pcap), "batch-sm.pcap");
	CHECK(gpudma_frames_write(pcap, lens, RTE_DIM(lens), 60) == 0, "pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s,batch=1,scatter=0", pcap);
	if (mp == NULL || rte_vdev_init("net_gpudma_bsm", args) != 0 ||
			rte_eth_dev_get_port_by_name("net_gpudma_bsm", &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(mp);
		return;
	}
	gpu_port_start(port, mp);
	while (idle < 16 && got < 60) {
		n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));
		idle = n == 0 ? idle + 1 : 0;
		for (i = 0; i < n; i++, got++) {
			const struct rte_mbuf *s;
			uint32_t off = 0, j;

			bad += pkts[i]->pkt_len != lens[got % RTE_DIM(lens)];
			for (s = pkts[i]; s != NULL; s = s->next) {
				const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);

				for (j = 0; j < s->data_len; j++)
					if (d[j] != gpudma_frame_byte(got, off + j))
						break;
				bad += j != s->data_len;
				off += s->data_len;
			}
		}
		rte_pktmbuf_free_bulk(pkts, n);
	}
	CHECK(got == 60 && bad == 0, "received %u of 60 frames, %u wrong", got, bad);
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.ierrors == 0,
		"ierrors %" PRIu64, st.ierrors);
	CHECK(fake_cuda_batch_calls() > batches0, "no cuMemcpyBatchAsync");
	CHECK(fake_cuda_batch_faults() == batch_faults0 &&
		fake_cuda_sticky_error() == CUDA_SUCCESS,
		"%" PRIu64 " batched copies from host memory the GPU has no mapping of: context error %d",
		fake_cuda_batch_faults() - batch_faults0,
		(int)fake_cuda_sticky_error());
	CHECK(fake_cuda_batch_no_overlap_hint() == hint0,
		"%" PRIu64 " batches without CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (copy engine)",
		fake_cuda_batch_no_overlap_hint() - hint0);
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
		GPU_MEM_LEN) == 0, "unmap: %s", rte_strerror(rte_errno));
	port_destroy("net_gpudma_bsm", port);
	check_cuda_released("after close");
	CHECK(rte_mempool_avail_count(mp) == 4095, "%u of 4095 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
}

/* batch=1 asks for cuMemcpyBatchAsync: where the driver lacks it the
 * mapping (which opens CUDA) fails with ENOTSUP, saying why; auto and 0
 * work either way. */
static void
gpu_batch_required(void)
{
	bool hidden = getenv("FAKE_CUDA_HIDE_SYMBOL") != NULL &&
		strcmp(getenv("FAKE_CUDA_HIDE_SYMBOL"), "cuMemcpyBatchAsync") == 0;
	static const char *const modes[] = { "batch=1", "batch=auto", "batch=0" };
	unsigned int i;
	uint16_t port;
	int ret;

	cuda_baseline();
	for (i = 0; i < RTE_DIM(modes); i++) {
		if (port_create("net_gpudma_b", modes[i], &port) != 0) {
			CHECK(0, "%s: port not created", modes[i]);
			continue;
		}
		log_begin();
		ret = rte_dev_dma_map(port_dev(port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN);
		if (hidden && i == 0)
			CHECK(ret != 0 && rte_errno == ENOTSUP &&
				log_has("no cuMemcpyBatchAsync"),
				"batch=1 without cuMemcpyBatchAsync: %d (%s)", ret,
				rte_strerror(rte_errno));
		else
			CHECK(ret == 0, "%s: dma map: %s", modes[i],
				rte_strerror(rte_errno));
		if (ret == 0)
			CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem,
				RTE_BAD_IOVA, GPU_MEM_LEN) == 0, "unmap");
		port_destroy("net_gpudma_b", port);
	}
	check_cuda_released("after close");
}

/*
 * The scatter kernel is the default fill of GPU memory, and only GPU
 * memory loads it: a port receiving into mapped host memory (as CI
 * without a GPU, or a host pool of an application that also maps GPU
 * memory later) never loads its module; the first GPU-memory mapping
 * does, and RX into GPU memory then launches it.
 */
static void
gpu_scatter_default_loaded_for_gpu_memory(void)
{
	const size_t host_len = 8u << 20;
	void *host = aligned_alloc(PAGE, host_len);
	struct rte_pktmbuf_extmem ext = {
		.buf_ptr = host, .buf_iova = RTE_BAD_IOVA, .buf_len = host_len,
		.elt_size = SEG_ROOM + RTE_PKTMBUF_HEADROOM,
	};
	struct rte_mempool *hp = NULL, *gp = NULL;
	uint64_t launches0 = fake_cuda_kernel_launches();
	uint64_t batches0 = fake_cuda_batch_calls();
	struct rte_device *dev = NULL;
	bool registered = false;
	char args[600];
	uint16_t port;
	int got;

	cuda_baseline();
	snprintf(args, sizeof(args), "rx_pcap=%s", in_pcap);
	if (host == NULL || rte_extmem_register(host, host_len, NULL, 0,
			PAGE) != 0) {
		CHECK(0, "host memory: %s", rte_strerror(rte_errno));
		free(host);
		return;
	}
	registered = true;
	/* No scatter= devarg: the default. */
	if (rte_vdev_init("net_gpudma_lazy", args) != 0 ||
			rte_eth_dev_get_port_by_name("net_gpudma_lazy", &port) != 0) {
		CHECK(0, "port not created");
		goto out;
	}
	dev = port_dev(port);
	hp = rte_pktmbuf_pool_create_extbuf("lazy_host", 1024, 0, 0,
		ext.elt_size, SOCKET_ID_ANY, &ext, 1);
	CHECK(hp != NULL, "host pool: %s", rte_strerror(rte_errno));
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	CHECK(rte_dev_dma_map(dev, host, RTE_BAD_IOVA, host_len) == 0,
		"host map: %s", rte_strerror(rte_errno));
	CHECK(fake_cuda_live_modules() == modules0,
		"mapping host memory loaded the scatter kernel's module");
	if (hp == NULL)
		goto out_port;
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL, hp) == 0,
		"rx setup, host pool");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	got = rx_all(port, 0, 0, 1, NULL, 0);
	CHECK(got == (int)NB_FRAMES, "received %d into host memory", got);
	CHECK(fake_cuda_live_modules() == modules0 &&
		fake_cuda_kernel_launches() == launches0,
		"RX into host memory loaded or launched the scatter kernel");
	CHECK(rte_eth_dev_stop(port) == 0, "stop");

	/* GPU memory: the kernel loads with the mapping and fills it. */
	gp = gpu_pool("lazy_gpu", 1024);
	log_begin();
	CHECK(rte_dev_dma_map(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0,
		"gpu map: %s", rte_strerror(rte_errno));
	CHECK(fake_cuda_live_modules() == modules0 + 1 &&
		log_has("by the scatter kernel"),
		"the first GPU-memory mapping did not load the scatter kernel");
	CHECK(gp != NULL && rte_eth_rx_queue_setup(port, 0, 256,
		SOCKET_ID_ANY, NULL, gp) == 0, "rx setup, GPU pool");
	CHECK(rte_eth_dev_start(port) == 0, "start");
	got = rx_all(port, 0, 0, 1, NULL, 0);
	CHECK(got == (int)NB_FRAMES, "received %d into GPU memory", got);
	CHECK(fake_cuda_kernel_launches() > launches0 &&
		fake_cuda_batch_calls() == batches0,
		"RX into GPU memory by default: %" PRIu64 " launches, %" PRIu64
		" batches", fake_cuda_kernel_launches() - launches0,
		fake_cuda_batch_calls() - batches0);
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	CHECK(rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0,
		"gpu unmap: %s", rte_strerror(rte_errno));
out_port:
	CHECK(rte_dev_dma_unmap(dev, host, RTE_BAD_IOVA, host_len) == 0,
		"host unmap: %s", rte_strerror(rte_errno));
	port_destroy("net_gpudma_lazy", port);
	check_cuda_released("after close");
out:
	if (hp != NULL) {
		CHECK(rte_mempool_avail_count(hp) == 1024, "host pool: %u back",
			rte_mempool_avail_count(hp));
		rte_mempool_free(hp);
	}
	if (gp != NULL) {
		CHECK(rte_mempool_avail_count(gp) == 1024, "GPU pool: %u back",
			rte_mempool_avail_count(gp));
		rte_mempool_free(gp);
	}
	if (registered)
		rte_extmem_unregister(host, host_len);
	free(host);
}

static void
gpu_tx_pcap_identical(void)
{
	cuda_baseline();
	loop_rx_to_tx("GPU memory", true);
	check_cuda_released("after close");
}

/* ---- RX buffer split -------------------------------------------------------------- */

#define SPLIT_HEAD 64u

/* rc: the first SPLIT_HEAD bytes into head, the rest into body. */
static void
split_conf(struct rte_eth_rxconf *rc, union rte_eth_rxseg segs[2],
		struct rte_mempool *head, struct rte_mempool *body)
{
	memset(segs, 0, 2 * sizeof(segs[0]));
	segs[0].split.mp = head;
	segs[0].split.length = SPLIT_HEAD;
	segs[1].split.mp = body;
	memset(rc, 0, sizeof(*rc));
	rc->rx_seg = segs;
	rc->rx_nseg = 2;
	rc->offloads = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
}

/* Chain m as split puts it: the first SPLIT_HEAD bytes in a head buffer
 * after the headroom, the rest in body buffers from their start. */
static int
check_split(const struct rte_mbuf *m, const struct rte_mempool *head,
		const struct rte_mempool *body)
{
	const struct rte_mbuf *s;

	if (m->pool != head || m->data_off != RTE_PKTMBUF_HEADROOM ||
			m->data_len != RTE_MIN(m->pkt_len, SPLIT_HEAD) ||
			(m->pkt_len <= SPLIT_HEAD) != (m->next == NULL))
		return -1;
	for (s = m->next; s != NULL; s = s->next)
		if (s->pool != body || s->data_off != 0)
			return -1;
	return 0;
}

/* Headers into a host pool, the rest into host or GPU memory; the chains
 * received, checked, then sent to tx_pcap (segments of both kinds). */
static void
split_case(bool gpu)
{
	static struct rte_mbuf *held[NB_FRAMES];
	struct rte_mempool *head = host_pool("split_head", 1024);
	struct rte_mempool *body = gpu ? gpu_pool("split_body", 1024) :
		host_pool("split_body", 1024);
	union rte_eth_rxseg segs[2];
	struct rte_eth_rxconf rc;
	struct rte_eth_stats st;
	char args[1200], out[512];
	unsigned int i, bad = 0;
	uint16_t port;
	int got;

	cuda_baseline();
	path_in(out, sizeof(out), gpu ? "tx-split-gpu.pcap" : "tx-split-host.pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s", in_pcap, out);
	if (head == NULL || body == NULL ||
			port_create("net_gpudma_split", args, &port) != 0) {
		CHECK(0, "set-up");
		rte_mempool_free(head);
		rte_mempool_free(body);
		return;
	}
	split_conf(&rc, segs, head, body);
	CHECK(port_setup(port, 1, NULL) == 0, "setup");
	if (gpu) {
		log_begin();
		CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, &rc,
			NULL) != 0 && log_has("mempool split_body"),
			"a split onto unmapped GPU memory accepted, or the pool not named");
		CHECK(rte_dev_dma_map(port_dev(port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) == 0, "dma map: %s", rte_strerror(rte_errno));
	}
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, &rc, NULL) == 0,
		"split setup: %s", rte_strerror(rte_errno));
	CHECK(rte_eth_dev_start(port) == 0, "start");
	if (gpu) {
		/* Copies held back: the burst holds frames with a body in GPU
		 * memory, so nothing of it comes, not even the frames whole
		 * in their head (in order). */
		fake_cuda_set_async_manual(1);
		got = rx_all(port, 0, 0, 1, held, NB_FRAMES);
		CHECK(got == 0, "%d frames handed out with copies pending", got);
		if (got > 0)
			rte_pktmbuf_free_bulk(held, (unsigned int)got);
		fake_cuda_set_async_manual(0);
	}
	got = rx_all(port, 0, 0, 1, held, NB_FRAMES);
	CHECK(got == (int)NB_FRAMES, "received %d of %u", got,
		(unsigned int)NB_FRAMES);
	for (i = 0; got == (int)NB_FRAMES && i < NB_FRAMES; i++)
		if (check_split(held[i], head, body) != 0)
			bad++;
	CHECK(bad == 0, "%u chains not split as configured", bad);
	if (got == (int)NB_FRAMES)
		CHECK(rte_eth_tx_burst(port, 0, held, NB_FRAMES) == NB_FRAMES,
			"tx");
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.oerrors == 0 &&
		st.ierrors == 0, "ierrors %" PRIu64 " oerrors %" PRIu64,
		st.ierrors, st.oerrors);
	(void)rte_eth_dev_stop(port);
	if (gpu)
		CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) == 0, "unmap: %s", rte_strerror(rte_errno));
	port_destroy("net_gpudma_split", port);
	CHECK(check_pcap(out, frame_lens, NB_FRAMES) == (int)NB_FRAMES,
		"tx_pcap of split chains");
	CHECK(rte_mempool_avail_count(head) == 1024 &&
		rte_mempool_avail_count(body) == 1024,
		"%u + %u of 1024 + 1024 mbufs back",
		rte_mempool_avail_count(head), rte_mempool_avail_count(body));
	if (gpu)
		check_cuda_released("after close");
	rte_mempool_free(head);
	rte_mempool_free(body);
}

static void
host_split(void)
{
	split_case(false);
}

static void
gpu_split_header_host_payload_gpu(void)
{
	split_case(true);
}

/* ---- fault injection ------------------------------------------------------------ */

/* Calls whose failure the port can only log: releases, leaving the
 * context, and entering it in a release (tried twice, then logged). */
static bool
release_call(const char *name)
{
	static const char *const names[] = {
		"cuCtxPopCurrent", "cuStreamDestroy", "cuEventDestroy",
		"cuMemHostUnregister", "cuDevicePrimaryCtxRelease",
		"cuCtxPushCurrent", "cuModuleUnload", "cuMemFree",
		/* Asking whether the persistent fill kernel ended, while
		 * stopping it: retried. */
		"cuEventQuery",
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static int ring_port(const char *name, unsigned int nq, struct rte_ring **rings,
	uint16_t *port);
static void ring_port_free(const char *name, struct rte_ring **rings,
	unsigned int nq);
static int feed(struct rte_ring *r, struct rte_mempool *src,
	unsigned int first, unsigned int n);

/* rx_port's wire in the fault runs (NULL: rx_pcap's): a net_ring port fed
 * the capture before each run, from this pool. */
static struct rte_mempool *fault_feed;
#define FAULT_FEED_MBUFS 2047u
/* Two GPUs in the fault runs (NULL: one): the port has a second queue,
 * on this pool in GPU 1's memory. */
static struct rte_mempool *fault_mp1;

/*
 * The GPU-memory life of a port, each step's failure noted: map, queues,
 * receive everything, send it to tx_pcap, stop, unmap, close. Returns 1
 * if an error was visible (a call failed, or error counters moved).
 */
static int
gpu_scenario(struct rte_mempool *mp, struct rte_mempool *head, const char *out)
{
	union rte_eth_rxseg segs[2];
	struct rte_eth_rxconf rc;
	static struct rte_mbuf *held[2][NB_FRAMES];
	struct rte_eth_stats st = { 0 };
	struct rte_device *dev;
	bool mapped = false;
	int failed = 0, got = 0;
	char args[1200];
	struct rte_ring *rings[1];
	uint16_t port, sub;

	const uint16_t nq = fault_mp1 != NULL ? 2 : 1;
	bool mapped1 = false;
	uint16_t q;

	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s,queues=%u", in_pcap,
		out, nq);
	if (fault_feed != NULL) {
		if (ring_port("f", 1, rings, &sub) != 0) {
			CHECK(0, "net_ring port");
			return 1;
		}
		if (feed(rings[0], fault_feed, 0, NB_FRAMES) != 0)
			CHECK(0, "feeding net_ring");
		snprintf(args, sizeof(args), "rx_port=net_ring_f,tx_pcap=%s", out);
	}
	if (port_create("net_gpudma_f", args, &port) != 0) {
		if (fault_feed != NULL)
			ring_port_free("net_ring_f", rings, 1);
		return 1;
	}
	dev = port_dev(port);
	failed |= port_setup(port, nq, NULL) != 0;
	if (rte_dev_dma_map(dev, gpu_mem, RTE_BAD_IOVA, GPU_MEM_LEN) == 0)
		mapped = true;
	else
		failed = 1;
	if (nq > 1 && !failed) {
		if (rte_dev_dma_map(dev, gpu_mem1, RTE_BAD_IOVA,
				GPU_MEM_LEN) == 0)
			mapped1 = true;
		else
			failed = 1;
	}
	/* head: headers split into it, the rest into mp. */
	split_conf(&rc, segs, head, mp);
	if (!failed && rte_eth_rx_queue_setup(port, 0, 64, SOCKET_ID_ANY,
			head != NULL ? &rc : NULL, head != NULL ? NULL : mp) != 0)
		failed = 1;
	if (nq > 1 && !failed && rte_eth_rx_queue_setup(port, 1, 64,
			SOCKET_ID_ANY, NULL, fault_mp1) != 0)
		failed = 1;
	if (!failed && rte_eth_dev_start(port) != 0)
		failed = 1;
	if (!failed) {
		/* Frames lost to a failed fill are counted: which ones
		 * arrive is not known, stride 0. */
		int n[2] = { 0, 0 }, i;

		for (q = 0; q < nq; q++) {
			n[q] = rx_all(port, q, 0, 0, held[q], NB_FRAMES);
			got = RTE_MAX(got, n[q]);
		}
		/* Sent a frame at a time, queue after queue: the file's
		 * order when nothing was lost (rx_pcap deals frame k to
		 * queue k % nq). */
		for (i = 0; i < got; i++)
			for (q = 0; q < nq; q++)
				if (i < n[q] && rte_eth_tx_burst(port, q,
						&held[q][i], 1) != 1)
					failed = 1;
		(void)rte_eth_stats_get(port, &st);
		failed |= st.ierrors + st.oerrors + st.imissed > 0;
		failed |= st.ipackets != NB_FRAMES;
	}
	(void)rte_eth_dev_stop(port);
	if (mapped && rte_dev_dma_unmap(dev, gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) != 0) {
		CHECK(0, "unmap after stop: %s", rte_strerror(rte_errno));
		failed = 1;
	}
	if (mapped1 && rte_dev_dma_unmap(dev, gpu_mem1, RTE_BAD_IOVA,
			GPU_MEM_LEN) != 0) {
		CHECK(0, "unmap of GPU 1's memory after stop: %s",
			rte_strerror(rte_errno));
		failed = 1;
	}
	port_destroy("net_gpudma_f", port);
	if (fault_feed != NULL)
		ring_port_free("net_ring_f", rings, 1);
	return failed;
}

static int
run_faults_on(struct rte_mempool *mp, struct rte_mempool *head)
{
	char out[512], names[1024] = "";
	uint64_t n;
	unsigned int hit = 0;

	path_in(out, sizeof(out), "tx-faults.pcap");
	cuda_baseline();
	/* No fault: the scenario runs clean and the capture is exact. */
	check_case_begin();
	fake_cuda_reset_faults();
	CHECK(gpu_scenario(mp, head, out) == 0, "clean run failed");
	CHECK(check_pcap(out, frame_lens, NB_FRAMES) == (int)NB_FRAMES,
		"clean run's tx_pcap");
	for (n = 1; n < 10000; n++) {
		const char *name;
		int visible;

		fake_cuda_fail_call(n, CUDA_ERROR_UNKNOWN);
		log_begin();
		visible = gpu_scenario(mp, head, out);
		name = fake_cuda_failed_call(NULL);
		fake_cuda_reset_faults();
		if (name == NULL)
			break;           /* the scenario has fewer calls */
		hit++;
		if (strstr(names, name) == NULL &&
				strlen(names) + strlen(name) + 2 < sizeof(names)) {
			strcat(names, " ");
			strcat(names, name);
		}
		/* Every failure is logged; those the caller can act on are
		 * returned or counted. */
		CHECK(log_has(name), "call %" PRIu64 " (%s): no log line",
			n, name);
		CHECK(visible || release_call(name),
			"call %" PRIu64 " (%s) failed unseen", n, name);
		check_cuda_released(name);
		CHECK(rte_mempool_avail_count(mp) == 1024 && (head == NULL ||
			rte_mempool_avail_count(head) == 1024),
			"call %" PRIu64 " (%s): %u of 1024 mbufs back", n, name,
			rte_mempool_avail_count(mp));
		CHECK(fault_mp1 == NULL ||
			rte_mempool_avail_count(fault_mp1) == 1024,
			"call %" PRIu64 " (%s): %u of GPU 1's 1024 mbufs back", n,
			name, rte_mempool_avail_count(fault_mp1));
		CHECK(fault_feed == NULL ||
			rte_mempool_avail_count(fault_feed) == FAULT_FEED_MBUFS,
			"call %" PRIu64 " (%s): %u of rx_port's %u mbufs back", n,
			name, rte_mempool_avail_count(fault_feed),
			FAULT_FEED_MBUFS);
		if (check_case_failed())
			break;
	}
	CHECK(hit > 20, "only %u CUDA calls", hit);
	printf("%s faults%s%s%s: %u CUDA calls made to fail one at a time, of:%s\n",
		check_case_failed() ? "FAIL" : "PASS",
		fault_mp1 != NULL ? " (queues on two GPUs)" : "",
		head != NULL ? " (buffer split)" : "",
		fault_feed != NULL ? " (rx_port)" : "", hit, names);
	return check_case_failed();
}

static int
run_faults(void)
{
	struct rte_mempool *mp = gpu_pool("gpu_faults", 1024);
	struct rte_mempool *head = host_pool("head_faults", 1024);
	int ret = 1;

	fault_feed = host_pool("feed_faults", FAULT_FEED_MBUFS);
	if (mp != NULL && head != NULL && fault_feed != NULL) {
		struct rte_mempool *f = fault_feed;

		fault_feed = NULL;
		ret = run_faults_on(mp, NULL);
		/* With split, and from rx_port (its staging ring pinned
		 * and mapped, the fill reading it): the same fill calls,
		 * run once, by the launched kernel (the persistent one
		 * makes no call a burst, only its start and stop). */
		if (fill_arg[0] == '\0') {
			ret |= run_faults_on(mp, head);
			fault_feed = f;
			ret |= run_faults_on(mp, NULL);
		}
		fault_feed = f;
	} else {
		printf("FAIL faults: pools\n");
	}
	rte_mempool_free(mp);
	rte_mempool_free(head);
	rte_mempool_free(fault_feed);
	fault_feed = NULL;
	return ret;
}

/* The fault runs with the port's second queue in GPU 1's memory: every
 * CUDA call of the two GPUs' life (opening GPU 1, mapping the frame
 * store for it, its queue's stream and kernel) made to fail in turn. */
static int
run_faults_two_gpus(void)
{
	struct rte_mempool *mp = gpu_pool("gpu_faults", 1024);
	int ret = 1;

	fault_mp1 = gpu_pool_in(gpu_mem1, "gpu1_faults", 1024);
	if (mp != NULL && fault_mp1 != NULL)
		ret = run_faults_on(mp, NULL);
	else
		printf("FAIL faults (queues on two GPUs): pools\n");
	rte_mempool_free(mp);
	rte_mempool_free(fault_mp1);
	fault_mp1 = NULL;
	return ret;
}

/* ---- cases: rx_port ------------------------------------------------------- */

/* A net_ring port of nq queues over rings the test feeds: what the test
 * enqueues into rings[q] is what the port's RX queue q receives. Its
 * name is net_ring_NAME (rte_eth_from_rings puts the prefix). */
static int
ring_port(const char *name, unsigned int nq, struct rte_ring **rings,
		uint16_t *port)
{
	char rname[RTE_RING_NAMESIZE];
	unsigned int q;
	int id;

	for (q = 0; q < nq; q++) {
		snprintf(rname, sizeof(rname), "rg_%s_%u", name, q);
		rings[q] = rte_ring_create(rname, 1024, SOCKET_ID_ANY,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rings[q] == NULL)
			return -1;
	}
	id = rte_eth_from_rings(name, rings, nq, rings, nq, SOCKET_ID_ANY);
	if (id < 0)
		return -1;
	*port = (uint16_t)id;
	return 0;
}

static void
ring_port_free(const char *name, struct rte_ring **rings, unsigned int nq)
{
	unsigned int q;
	void *m;

	(void)rte_vdev_uninit(name);
	/* What the port did not take goes back to its pool. */
	for (q = 0; q < nq; q++) {
		while (rte_ring_dequeue(rings[q], &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(rings[q]);
	}
}

/* Enqueues frames first .. first + n - 1 into ring r; 0 or -1. */
static int
feed(struct rte_ring *r, struct rte_mempool *src, unsigned int first,
		unsigned int n)
{
	unsigned int k;

	for (k = first; k < first + n; k++) {
		struct rte_mbuf *m = gpudma_frame_mbufs(src, k % NB_FRAMES,
			frame_lens[k % NB_FRAMES], SEG_ROOM);

		if (m == NULL || rte_ring_enqueue(r, m) != 0) {
			rte_pktmbuf_free(m);
			return -1;
		}
	}
	return 0;
}

/*
 * Frames another port receives (net_ring, the frames chained as a NIC
 * hands jumbo frames over) come out of net_gpudma whole and byte-identical,
 * each queue from rx_port's same queue, into host or GPU memory; rx_port's
 * mbufs all go back to their pool; stats count them like the pcap wire's.
 */
static void
rx_port_ring_on(bool gpu)
{
	struct rte_mempool *src = host_pool("sub_src", 2047);
	struct rte_mempool *mp = gpu ? gpu_pool("rxport_gpu", 2048) :
		host_pool("rxport_host", 2048);
	struct rte_ring *rings[2];
	struct rte_eth_stats st;
	struct rte_eth_dev_owner owner;
	uint16_t sub, port;
	int got0, got1;

	cuda_baseline();
	if (src == NULL || mp == NULL ||
			ring_port("sub", 2, rings, &sub) != 0) {
		CHECK(0, "set-up");
		goto out_pools;
	}
	if (port_create("net_gpudma_rp", "rx_port=net_ring_sub,queues=2",
			&port) != 0) {
		CHECK(0, "port not created");
		goto out_ring;
	}
	CHECK(rte_eth_dev_owner_get(sub, &owner) == 0 &&
		owner.id != RTE_ETH_DEV_NO_OWNER &&
		strcmp(owner.name, "net_gpudma_rp") == 0,
		"rx_port not owned by the port (owner \"%s\")", owner.name);
	CHECK(port_setup(port, 2, gpu ? NULL : mp) == 0, "setup");
	if (gpu) {
		CHECK(rte_dev_dma_map(port_dev(port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) == 0, "dma map: %s", rte_strerror(rte_errno));
		CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL,
			mp) == 0 && rte_eth_rx_queue_setup(port, 1, 256,
			SOCKET_ID_ANY, NULL, mp) == 0, "rx setup");
	}
	CHECK(rte_eth_dev_start(port) == 0, "start");
	/* Queue 0 gets the capture twice, queue 1 frames 1, 2, ...: each
	 * queue's frames in their order. */
	CHECK(feed(rings[0], src, 0, NB_FRAMES) == 0 &&
		feed(rings[1], src, 1, NB_FRAMES - 1) == 0, "feed");
	got0 = rx_all(port, 0, 0, 1, NULL, 0);
	CHECK(feed(rings[0], src, 0, NB_FRAMES) == 0, "feed");
	got0 += rx_all(port, 0, 0, 1, NULL, 0);
	got1 = rx_all(port, 1, 1, 1, NULL, 0);
	CHECK(got0 == 2 * (int)NB_FRAMES && got1 == (int)NB_FRAMES - 1,
		"received %d and %d", got0, got1);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(st.ipackets == 3 * NB_FRAMES - 1 &&
		st.ibytes == 3 * total_bytes() - frame_lens[0] &&
		st.imissed == 0 && st.ierrors == 0 &&
		st.q_ipackets[1] == NB_FRAMES - 1,
		"ipackets %" PRIu64 " ibytes %" PRIu64 " imissed %" PRIu64 " ierrors %" PRIu64,
		st.ipackets, st.ibytes, st.imissed, st.ierrors);
	CHECK(xstat(port, "rx_copy_bytes") == st.ibytes, "rx_copy_bytes %" PRIu64,
		xstat(port, "rx_copy_bytes"));
	CHECK(rte_mempool_avail_count(src) == 2047,
		"%u of rx_port's 2047 mbufs back", rte_mempool_avail_count(src));
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	if (gpu)
		CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) == 0, "unmap: %s", rte_strerror(rte_errno));
	port_destroy("net_gpudma_rp", port);
	/* Closed with the port that took it over. */
	CHECK(!rte_eth_dev_is_valid_port(sub), "rx_port still open");
	check_cuda_released("after close");
	CHECK(rte_mempool_avail_count(mp) == 2048, "%u of 2048 mbufs back",
		rte_mempool_avail_count(mp));
out_ring:
	ring_port_free("net_ring_sub", rings, 2);
out_pools:
	rte_mempool_free(mp);
	rte_mempool_free(src);
}

static void
host_rx_port_ring(void)
{
	rx_port_ring_on(false);
}

static void
gpu_rx_port_ring(void)
{
	rx_port_ring_on(true);
}

/* imissed: frames rx_port hands over while the application holds every
 * buffer are dropped and counted, as from the pcap wire. */
static void
host_rx_port_imissed(void)
{
	static struct rte_mbuf *held[2 * NB_FRAMES];
	struct rte_mempool *src = host_pool("sub_src_m", 2047);
	struct rte_mempool *mp = host_pool("rxport_small", 16);
	struct rte_ring *rings[1];
	struct rte_eth_stats st;
	uint16_t sub, port;
	int got;

	if (src == NULL || mp == NULL ||
			ring_port("m", 1, rings, &sub) != 0) {
		CHECK(0, "set-up");
		goto out_pools;
	}
	if (port_create("net_gpudma_rpm", "rx_port=net_ring_m", &port) != 0) {
		CHECK(0, "port not created");
		goto out_ring;
	}
	CHECK(port_setup(port, 1, mp) == 0 && rte_eth_dev_start(port) == 0,
		"setup");
	CHECK(feed(rings[0], src, 0, NB_FRAMES) == 0, "feed");
	/* All kept: the 16 buffers run out; each poll with none left and
	 * none posted drops what arrived, until the ring is empty. */
	got = rx_all(port, 0, 0, 0, held, RTE_DIM(held));
	got += rx_all(port, 0, 0, 0, held + got, RTE_DIM(held) - (unsigned int)got);
	CHECK(rte_eth_stats_get(port, &st) == 0, "stats");
	CHECK(got > 0 && st.imissed > 0 && st.ipackets == (uint64_t)got &&
		st.ipackets + st.imissed == NB_FRAMES && rte_ring_count(rings[0]) == 0,
		"received %d, ipackets %" PRIu64 " imissed %" PRIu64 ", %u still in the ring",
		got, st.ipackets, st.imissed, rte_ring_count(rings[0]));
	if (got > 0)
		rte_pktmbuf_free_bulk(held, RTE_MIN((unsigned int)got, RTE_DIM(held)));
	port_destroy("net_gpudma_rpm", port);
	CHECK(rte_mempool_avail_count(mp) == 16, "%u of 16 mbufs back",
		rte_mempool_avail_count(mp));
out_ring:
	ring_port_free("net_ring_m", rings, 1);
	CHECK(src == NULL || rte_mempool_avail_count(src) == 2047,
		"%u of rx_port's 2047 mbufs back",
		src != NULL ? rte_mempool_avail_count(src) : 0);
out_pools:
	rte_mempool_free(mp);
	rte_mempool_free(src);
}

/* A net_pcap port as the wire: the frames of its file, byte-identical. */
static void
host_rx_port_pcap(void)
{
	static const uint32_t lens[] = { 60, 64, 1500, 1514, 2049, 9000, 4097 };
	struct rte_mempool *mp = host_pool("rxport_pcap", 2048);
	struct rte_mbuf *pkts[32];
	char pcap[512], args[700];
	unsigned int got = 0, idle = 0, i, bad = 0;
	uint16_t port, sub;

	path_in(pcap, sizeof(pcap), "sub.pcap");
	CHECK(gpudma_frames_write(pcap, lens, RTE_DIM(lens), 700) == 0, "pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s", pcap);
	if (mp == NULL || rte_vdev_init("net_pcap_sub", args) != 0 ||
			rte_eth_dev_get_port_by_name("net_pcap_sub", &sub) != 0) {
		CHECK(0, "net_pcap port");
		rte_mempool_free(mp);
		return;
	}
	/* By port id this time. */
	snprintf(args, sizeof(args), "rx_port=%u", sub);
	if (port_create("net_gpudma_rpp", args, &port) != 0) {
		CHECK(0, "port not created");
		goto out;
	}
	CHECK(port_setup(port, 1, mp) == 0 && rte_eth_dev_start(port) == 0,
		"setup");
	while (idle < 64 && got < 700) {
		uint16_t n = rte_eth_rx_burst(port, 0, pkts, RTE_DIM(pkts));

		idle = n == 0 ? idle + 1 : 0;
		for (i = 0; i < n; i++, got++) {
			const struct rte_mbuf *s;
			uint32_t off = 0, j;

			if (pkts[i]->pkt_len != lens[got % RTE_DIM(lens)])
				bad++;
			for (s = pkts[i]; s != NULL; s = s->next) {
				const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);

				for (j = 0; j < s->data_len; j++)
					if (d[j] != gpudma_frame_byte(got, off + j))
						break;
				if (j != s->data_len) {
					bad++;
					break;
				}
				off += s->data_len;
			}
		}
		rte_pktmbuf_free_bulk(pkts, n);
	}
	CHECK(got == 700 && bad == 0, "received %u of 700, %u wrong", got, bad);
	port_destroy("net_gpudma_rpp", port);
	CHECK(rte_mempool_avail_count(mp) == 2048, "%u of 2048 mbufs back",
		rte_mempool_avail_count(mp));
out:
	(void)rte_vdev_uninit("net_pcap_sub");
	rte_mempool_free(mp);
}

/* rx_port's bad values, each refused naming the key; ownership refused to
 * a second user while the port has it, and given back when it is gone. */
static void
rx_port_refused(void)
{
	char both[600];
	const struct {
		const char *args, *named, *why;
	} bad[] = {
		{ "rx_port=net_nosuch", "devarg rx_port", "no port" },
		{ "rx_port=999", "devarg rx_port", "no port" },
		{ "rx_port=net_gpudma_bad", "devarg rx_port", "itself" },
		{ both, "devarg rx_port", "not both" },
		{ "rx_port=net_ring_own,loop=2", "devarg loop", "rx_port" },
		{ "rx_port=net_ring_own,queues=2", "devarg rx_port", "rx queues" },
	};
	struct rte_ring *rings[1];
	struct rte_eth_dev_owner other = { 0 };
	uint16_t sub, port, p;
	bool listed = false;
	unsigned int i;

	snprintf(both, sizeof(both), "rx_port=net_ring_own,rx_pcap=%s", in_pcap);
	if (ring_port("own", 1, rings, &sub) != 0) {
		CHECK(0, "set-up");
		return;
	}
	for (i = 0; i < RTE_DIM(bad); i++) {
		log_begin();
		CHECK(rte_vdev_init("net_gpudma_bad", bad[i].args) != 0 &&
			log_has(bad[i].named) && log_has(bad[i].why),
			"\"%s\" accepted, or no log line naming %s (%s)",
			bad[i].args, bad[i].named, bad[i].why);
		(void)rte_vdev_uninit("net_gpudma_bad");
	}
	/* Refused probes left it unowned. */
	CHECK(rte_eth_dev_owner_get(sub, &other) == 0 &&
		other.id == RTE_ETH_DEV_NO_OWNER, "owned after refused probes");

	if (port_create("net_gpudma_own", "rx_port=net_ring_own", &port) != 0) {
		CHECK(0, "port not created");
		ring_port_free("net_ring_own", rings, 1);
		return;
	}
	/* A second port, and an application, cannot have it too. */
	log_begin();
	CHECK(rte_vdev_init("net_gpudma_bad", "rx_port=net_ring_own") != 0 &&
		log_has("devarg rx_port") && log_has("owned by net_gpudma_own"),
		"a second user accepted");
	(void)rte_vdev_uninit("net_gpudma_bad");
	CHECK(rte_eth_dev_owner_new(&other.id) == 0, "owner id");
	snprintf(other.name, sizeof(other.name), "the application");
	CHECK(rte_eth_dev_owner_set(sub, &other) != 0,
		"the application took the port's rx_port");
	/* Applications iterating ports do not see it. */
	RTE_ETH_FOREACH_DEV(p)
		listed |= p == sub;
	CHECK(!listed, "rx_port listed by RTE_ETH_FOREACH_DEV");
	port_destroy("net_gpudma_own", port);
	ring_port_free("net_ring_own", rings, 1);
}


/* ---- several ports on several GPUs (mode "multi", two fake GPUs) ---------- */

#define MULTI_PORTS 3
#define MULTI_MBUFS 2048u

/*
 * Three ports in one process: gpu=0, gpu=1 and gpu=0 again, each with a
 * pool in its own GPU's memory, all started before any is polled, then
 * polled in turn. Each port fills its memory with its own GPU's context
 * (another GPU's memory would be said in the log), and hands back every
 * frame whole and in order, and sends them out to its own file.
 */
static void
gpu_ports_on_two_gpus(void)
{
	static struct rte_mbuf *held[MULTI_PORTS][NB_FRAMES];
	const size_t half = GPU_MEM_LEN / 2;
	struct {
		const char *name;
		int gpu;
		void *mem;
		struct rte_mempool *mp;
		uint16_t port;
		bool up;
		unsigned int got;
		char out[512];
	} pt[MULTI_PORTS] = {
		{ "net_gpudma_g0a", 0, gpu_mem, NULL, 0, false, 0, "" },
		{ "net_gpudma_g1", 1, gpu_mem1, NULL, 0, false, 0, "" },
		{ "net_gpudma_g0b", 0, (char *)gpu_mem + half, NULL, 0, false, 0, "" },
	};
	struct rte_pktmbuf_extmem ext = {
		.buf_iova = RTE_BAD_IOVA,
		.buf_len = half,
		.elt_size = SEG_ROOM + RTE_PKTMBUF_HEADROOM,
	};
	struct rte_eth_stats st;
	unsigned int i, k, idle = 0;
	char args[1200], pool[32], want[64];

	cuda_baseline();
	log_begin();
	for (i = 0; i < MULTI_PORTS; i++) {
		snprintf(pool, sizeof(pool), "multi_pool%u", i);
		path_in(pt[i].out, sizeof(pt[i].out), pt[i].name);
		snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s,gpu=%d",
			in_pcap, pt[i].out, pt[i].gpu);
		memset(pt[i].mem, 0xee, half);
		ext.buf_ptr = pt[i].mem;
		pt[i].mp = rte_pktmbuf_pool_create_extbuf(pool, MULTI_MBUFS, 0, 0,
			ext.elt_size, SOCKET_ID_ANY, &ext, 1);
		if (pt[i].mp == NULL ||
				port_create(pt[i].name, args, &pt[i].port) != 0) {
			CHECK(0, "port %s on GPU %d not created", pt[i].name, pt[i].gpu);
			break;
		}
		pt[i].up = true;
		CHECK(port_setup(pt[i].port, 1, NULL) == 0, "%s: setup", pt[i].name);
		CHECK(rte_dev_dma_map(port_dev(pt[i].port), pt[i].mem, RTE_BAD_IOVA,
			half) == 0, "%s: dma map: %s", pt[i].name,
			rte_strerror(rte_errno));
		CHECK(rte_eth_rx_queue_setup(pt[i].port, 0, 256, SOCKET_ID_ANY,
			NULL, pt[i].mp) == 0, "%s: rx setup", pt[i].name);
		CHECK(rte_eth_dev_start(pt[i].port) == 0, "%s: start", pt[i].name);
	}
	for (k = 0; k < 2; k++) {
		snprintf(want, sizeof(want), "copy engine of GPU %u", k);
		CHECK(log_has(want), "no port on GPU %u", k);
	}
	CHECK(!log_has("the copy engine GPU"),
		"a port fills another GPU's memory than its own");

	/* Polled in turn: every port's frames arrive, each in its order. */
	while (!check_case_failed() && idle < 64) {
		bool any = false;

		for (i = 0; i < MULTI_PORTS && pt[i].up; i++) {
			struct rte_mbuf *pkts[8];
			uint16_t n = rte_eth_rx_burst(pt[i].port, 0, pkts,
				RTE_DIM(pkts));

			for (k = 0; k < n; k++, pt[i].got++) {
				unsigned int f = pt[i].got;

				any = true;
				if (f >= NB_FRAMES) {
					CHECK(0, "%s: frame %u beyond the file", pt[i].name, f);
					rte_pktmbuf_free(pkts[k]);
					continue;
				}
				CHECK(check_chain(pkts[k], f, frame_lens[f]) == 0,
					"%s: frame %u", pt[i].name, f);
				held[i][f] = pkts[k];
			}
		}
		idle = any ? 0 : idle + 1;
		/* The persistent kernels' stand-ins are threads of their
		 * own (rx_all says more). */
		if (!any && fill_arg[0] != '\0')
			rte_delay_us_sleep(1000);
	}
	for (i = 0; i < MULTI_PORTS && pt[i].up; i++) {
		uint16_t sent = 0;

		CHECK(pt[i].got == NB_FRAMES, "%s: received %u of %u", pt[i].name,
			pt[i].got, (unsigned int)NB_FRAMES);
		if (pt[i].got == NB_FRAMES)
			sent = rte_eth_tx_burst(pt[i].port, 0, held[i], NB_FRAMES);
		CHECK(sent == pt[i].got, "%s: sent %u of %u", pt[i].name, sent,
			pt[i].got);
		rte_pktmbuf_free_bulk(held[i] + sent, RTE_MIN(pt[i].got,
			NB_FRAMES) - sent);
		CHECK(rte_eth_stats_get(pt[i].port, &st) == 0 &&
			st.ipackets == NB_FRAMES && st.opackets == NB_FRAMES &&
			st.ierrors == 0 && st.oerrors == 0,
			"%s: ipackets %" PRIu64 " opackets %" PRIu64, pt[i].name,
			st.ipackets, st.opackets);
		CHECK(xstat(pt[i].port, "rx_copy_bytes") == total_bytes() &&
			xstat(pt[i].port, "tx_copy_bytes") == total_bytes(),
			"%s: rx_copy_bytes %" PRIu64 " tx_copy_bytes %" PRIu64,
			pt[i].name, xstat(pt[i].port, "rx_copy_bytes"),
			xstat(pt[i].port, "tx_copy_bytes"));
	}
	for (i = 0; i < MULTI_PORTS; i++) {
		if (pt[i].up) {
			CHECK(rte_eth_dev_stop(pt[i].port) == 0, "%s: stop", pt[i].name);
			CHECK(rte_dev_dma_unmap(port_dev(pt[i].port), pt[i].mem,
				RTE_BAD_IOVA, half) == 0, "%s: unmap: %s", pt[i].name,
				rte_strerror(rte_errno));
			port_destroy(pt[i].name, pt[i].port);
			CHECK(check_pcap(pt[i].out, frame_lens, NB_FRAMES) ==
				(int)NB_FRAMES, "%s: tx_pcap not the input", pt[i].name);
		}
		if (pt[i].mp != NULL) {
			CHECK(rte_mempool_avail_count(pt[i].mp) == MULTI_MBUFS,
				"%s: %u of %u mbufs back", pt[i].name,
				rte_mempool_avail_count(pt[i].mp), MULTI_MBUFS);
			rte_mempool_free(pt[i].mp);
		}
	}
	check_cuda_released("after closing the ports of two GPUs");
}

/*
 * One port (gpu=0) of two queues, queue 0's pool in GPU 0's memory and
 * queue 1's in GPU 1's, as dpdk-gpu-rx --mem gpu --gpus 0,1 sets it up:
 * each queue is filled and drained by its own GPU (its context, stream
 * and kernel), none touching the other's memory, the two queues polled
 * at once by two lcores; every frame whole, tx_pcap the input, a frame
 * of GPU 1 on GPU 0's TX queue dropped, a queue whose segments are on
 * two GPUs refused, everything given back.
 */
struct gq_rx {
	uint16_t port, q;
	int got;
	struct rte_mbuf *held[NB_FRAMES];
};

static int
gq_rx_lcore(void *arg)
{
	struct gq_rx *r = arg;

	r->got = rx_all(r->port, r->q, r->q, 2, r->held, NB_FRAMES);
	return 0;
}

/* Stream work each fake GPU was given so far. */
static uint64_t
gpu_work(int g)
{
	return fake_cuda_kernel_launches_on(g) + fake_cuda_async_copies_on(g);
}

static void
gpu_queues_of_one_port_on_two_gpus(void)
{
	const size_t half = GPU_MEM_LEN / 2;
	void *mem[2] = { gpu_mem, gpu_mem1 };
	struct rte_mempool *mp[2] = { NULL, NULL };
	struct rte_pktmbuf_extmem ext = {
		.buf_iova = RTE_BAD_IOVA,
		.buf_len = half,
		.elt_size = SEG_ROOM + RTE_PKTMBUF_HEADROOM,
	};
	static struct gq_rx rx[2];
	union rte_eth_rxseg segs[2];
	struct rte_eth_rxconf rc;
	struct rte_eth_stats st;
	uint64_t work0[2], cross0 = fake_cuda_cross_gpu_accesses();
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	char args[1200], out[512], name[32], want[96];
	uint16_t port, sent = 0;
	unsigned int g, k;

	cuda_baseline();
	log_begin();
	path_in(out, sizeof(out), "two-gpu-queues.pcap");
	for (g = 0; g < 2; g++) {
		snprintf(name, sizeof(name), "gq_pool%u", g);
		memset(mem[g], 0xee, half);
		ext.buf_ptr = mem[g];
		mp[g] = rte_pktmbuf_pool_create_extbuf(name, MULTI_MBUFS, 0, 0,
			ext.elt_size, SOCKET_ID_ANY, &ext, 1);
	}
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s,queues=2,gpu=0",
		in_pcap, out);
	if (mp[0] == NULL || mp[1] == NULL ||
			port_create("net_gpudma_gq", args, &port) != 0) {
		CHECK(0, "pools or port not created");
		goto free_pools;
	}
	CHECK(port_setup(port, 2, NULL) == 0, "setup");
	for (g = 0; g < 2; g++)
		CHECK(rte_dev_dma_map(port_dev(port), mem[g], RTE_BAD_IOVA,
			half) == 0, "dma map of GPU %u's memory: %s", g,
			rte_strerror(rte_errno));
	/* A queue is one GPU's: segments on both, or a pool over both, are
	 * refused, saying so. */
	split_conf(&rc, segs, mp[0], mp[1]);
	CHECK(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, &rc,
		NULL) != 0 && log_has("segments in GPU 0's and GPU 1's memory"),
		"a queue split over two GPUs' memory accepted");
	{
		/* The halves of both GPUs' memory the pools above leave. */
		struct rte_pktmbuf_extmem both[2] = { ext, ext };
		struct rte_mempool *mix;

		both[0].buf_ptr = (char *)gpu_mem + half;
		both[1].buf_ptr = (char *)gpu_mem1 + half;
		/* Room for a hundred buffers in GPU 0's: the rest in GPU 1's. */
		both[0].buf_len = 100 * ext.elt_size;
		mix = rte_pktmbuf_pool_create_extbuf("gq_pool_mix", 256, 0, 0,
			ext.elt_size, SOCKET_ID_ANY, both, 2);
		CHECK(mix != NULL, "a pool over both GPUs' memory");
		CHECK(mix == NULL || (rte_dev_dma_map(port_dev(port),
			both[0].buf_ptr, RTE_BAD_IOVA, both[0].buf_len) == 0 &&
			rte_dev_dma_map(port_dev(port), both[1].buf_ptr,
			RTE_BAD_IOVA, half) == 0 &&
			rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, NULL,
			mix) != 0 && log_has("has buffers in the memory of two GPUs")),
			"a pool over two GPUs' memory accepted");
		for (g = 0; g < 2; g++)
			(void)rte_dev_dma_unmap(port_dev(port), both[g].buf_ptr,
				RTE_BAD_IOVA, both[g].buf_len);
		rte_mempool_free(mix);
	}
	for (g = 0; g < 2; g++) {
		CHECK(rte_eth_rx_queue_setup(port, g, 256, SOCKET_ID_ANY, NULL,
			mp[g]) == 0, "rx queue %u setup", g);
		snprintf(want, sizeof(want), "rx queue %u: 256 descriptors, 1 segment(s), filled by GPU %u",
			g, g);
		CHECK(log_has(want), "no '%s'", want);
	}
	CHECK(rte_eth_dev_start(port) == 0, "start");

	/* Both queues at once, queue 1 on another lcore where there is one:
	 * each lcore makes its own queue's GPU current. */
	for (g = 0; g < 2; g++) {
		work0[g] = gpu_work(g);
		rx[g] = (struct gq_rx){ .port = port, .q = (uint16_t)g };
	}
	if (worker < RTE_MAX_LCORE &&
			rte_eal_remote_launch(gq_rx_lcore, &rx[1], worker) == 0) {
		gq_rx_lcore(&rx[0]);
		rte_eal_wait_lcore(worker);
	} else {
		gq_rx_lcore(&rx[0]);
		gq_rx_lcore(&rx[1]);
	}
	for (g = 0; g < 2; g++) {
		CHECK(rx[g].got == (int)(NB_FRAMES - g + 1) / 2,
			"queue %u received %d of %u (or a bad frame)", g, rx[g].got,
			(unsigned int)(NB_FRAMES - g + 1) / 2);
		CHECK(gpu_work(g) > work0[g], "GPU %u did not fill queue %u", g,
			g);
		/* TX moves frames by copies alone. */
		work0[g] = fake_cuda_async_copies_on(g);
	}
	CHECK(fake_cuda_cross_gpu_accesses() == cross0,
		"%" PRIu64 " accesses of one GPU's memory by another GPU",
		fake_cuda_cross_gpu_accesses() - cross0);

	/* Sent in the file's order, each frame on its queue's TX queue: each
	 * TX queue drained by its GPU. */
	for (k = 0; k < NB_FRAMES && rx[k % 2].got > (int)(k / 2); k++)
		sent += rte_eth_tx_burst(port, k % 2, &rx[k % 2].held[k / 2], 1);
	CHECK(sent == NB_FRAMES, "sent %u of %u", sent, (unsigned int)NB_FRAMES);
	for (g = 0; g < 2; g++)
		CHECK(fake_cuda_async_copies_on(g) > work0[g],
			"GPU %u did not drain tx queue %u", g, g);
	CHECK(fake_cuda_cross_gpu_accesses() == cross0,
		"TX: %" PRIu64 " accesses of one GPU's memory by another GPU",
		fake_cuda_cross_gpu_accesses() - cross0);
	/* GPU 0's TX queue does not read GPU 1's memory. */
	if (rx[1].got > 0) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp[1]);

		CHECK(m != NULL && rte_pktmbuf_append(m, 60) != NULL &&
			rte_eth_tx_burst(port, 0, &m, 1) == 1 &&
			log_has("tx queue 0: a frame in GPU 1's memory, the queue is GPU 0's"),
			"GPU 1's frame on GPU 0's TX queue not refused");
	}
	CHECK(rte_eth_stats_get(port, &st) == 0 && st.ipackets == NB_FRAMES &&
		st.opackets == NB_FRAMES && st.ierrors == 0 && st.oerrors == 1,
		"ipackets %" PRIu64 " opackets %" PRIu64 " ierrors %" PRIu64
		" oerrors %" PRIu64, st.ipackets, st.opackets, st.ierrors,
		st.oerrors);
	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	for (g = 0; g < 2; g++)
		CHECK(rte_dev_dma_unmap(port_dev(port), mem[g], RTE_BAD_IOVA,
			half) == 0, "unmap of GPU %u's memory: %s", g,
			rte_strerror(rte_errno));
	port_destroy("net_gpudma_gq", port);
	CHECK(check_pcap(out, frame_lens, NB_FRAMES) == (int)NB_FRAMES,
		"tx_pcap not the input");
free_pools:
	for (g = 0; g < 2; g++) {
		if (mp[g] == NULL)
			continue;
		CHECK(rte_mempool_avail_count(mp[g]) == MULTI_MBUFS,
			"GPU %u's pool: %u of %u mbufs back", g,
			rte_mempool_avail_count(mp[g]), MULTI_MBUFS);
		rte_mempool_free(mp[g]);
	}
	check_cuda_released("after closing a port of queues on two GPUs");
}

/* ---- cases: the persistent fill (fill=persistent) ----------------------- */

/* Frame lengths of the persistent cases: around a chunk's 16 bytes, a
 * segment's 2048 and a few jumbo frames, in an order no fill repeats. */
static const uint32_t pf_lens[] = {
	60, 64, 17, 1500, 2048, 61, 2049, 127, 1514, 9000, 128, 1, 4097, 63,
	65, 300, 2047, 15, 16, 33,
};
#define PF_FRAMES 1200u
#define PF_DESC 64u          /* a fill a quarter ring: 16 frames */
/* fill= of the cases that count launches: a kernel that does not park
 * when idle (it still parks once past its life, GPUDMA_FILL_LIFE_NS, so
 * launches are counted less the parks). */
#define PF_NO_IDLE "persistent,fill_idle_us=10000000"

/* Launches of the persistent kernel not explained by a park: those of a
 * queue's first fill and of a start. */
static uint64_t
pf_cold_launches(void)
{
	return fake_cuda_fill_launches() - fake_cuda_fills_parked();
}

/* A GPU-memory port of one queue of PF_DESC descriptors on pf.pcap
 * (PF_FRAMES frames of pf_lens, replayed loop times, 0 forever), with
 * fill= fill, started. */
static int
pf_port(const char *name, const char *fill, unsigned int loop,
		struct rte_mempool *mp, uint16_t *port)
{
	char args[800], pcap[512];

	path_in(pcap, sizeof(pcap), "pf.pcap");
	snprintf(args, sizeof(args), "rx_pcap=%s,loop=%u,scatter=1,fill=%s",
		pcap, loop, fill);
	if (rte_vdev_init(name, args) != 0 ||
			rte_eth_dev_get_port_by_name(name, port) != 0) {
		(void)rte_vdev_uninit(name);
		return -1;
	}
	if (port_setup(*port, 1, NULL) != 0 ||
			rte_dev_dma_map(port_dev(*port), gpu_mem, RTE_BAD_IOVA,
			GPU_MEM_LEN) != 0 ||
			rte_eth_rx_queue_setup(*port, 0, PF_DESC, SOCKET_ID_ANY,
			NULL, mp) != 0 ||
			rte_eth_dev_start(*port) != 0) {
		port_destroy(name, *port);
		return -1;
	}
	return 0;
}

/* pf_port on a pool of its own, pool_name: 0, or -1 (a failed check,
 * nothing left). */
static int
pf_setup(const char *pool_name, const char *name, const char *fill,
		unsigned int loop, struct rte_mempool **mp, uint16_t *port)
{
	cuda_baseline();
	*mp = gpu_pool(pool_name, 4095);
	if (*mp == NULL || pf_port(name, fill, loop, *mp, port) != 0) {
		CHECK(0, "%s: set-up", name);
		rte_mempool_free(*mp);
		return -1;
	}
	return 0;
}

static void
pf_port_down(const char *name, uint16_t port)
{
	CHECK(rte_eth_dev_stop(port) == 0, "%s: stop", name);
	CHECK(rte_dev_dma_unmap(port_dev(port), gpu_mem, RTE_BAD_IOVA,
		GPU_MEM_LEN) == 0, "%s: unmap: %s", name, rte_strerror(rte_errno));
	port_destroy(name, port);
}

/* Whether chain m is frame k of pf.pcap, byte for byte. */
static bool
pf_frame_is(const struct rte_mbuf *m, uint32_t k)
{
	uint32_t len = pf_lens[k % RTE_DIM(pf_lens)], off = 0, j;

	if (m->pkt_len != len)
		return false;
	for (; m != NULL; m = m->next) {
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

		for (j = 0; j < m->data_len; j++)
			if (d[j] != gpudma_frame_byte(k, off + j))
				return false;
		off += m->data_len;
	}
	return off == len;
}

/* Up to max chains from queue 0, until it gives nothing for a while. */
static unsigned int
pf_rx(uint16_t port, struct rte_mbuf **out, unsigned int max)
{
	unsigned int got = 0, idle = 0;

	while (got < max && idle < 2000) {
		uint16_t n = rte_eth_rx_burst(port, 0, out + got,
			(uint16_t)RTE_MIN(max - got, 32u));

		got += n;
		idle = n == 0 ? idle + 1 : 0;
		if (n == 0)
			rte_delay_us_sleep(10);
	}
	return got;
}

/*
 * The same frames through a launch-mode port and a persistent one: every
 * chain of mixed lengths (one to five segments) byte for byte the same
 * and the wire's, in order, over 75 fills (the ring of 8 slots wrapping
 * nine times); one launch of the persistent kernel for all of them, no
 * scatter launch, and fewer CUDA calls than fills.
 */
static void
persistent_exact_as_launch(void)
{
	static struct rte_mbuf *a[PF_FRAMES], *b[PF_FRAMES];
	struct rte_mempool *mpa = gpu_pool("pf_launch", 4095);
	struct rte_mempool *mpb = gpu_pool("pf_pers", 4095);
	uint64_t launches0, fills0, served0, parked0, calls;
	unsigned int na = 0, nb = 0, i, bad = 0;
	struct rte_mbuf *first[1];
	char pcap[512];
	uint16_t pa, pb;

	cuda_baseline();
	path_in(pcap, sizeof(pcap), "pf.pcap");
	CHECK(gpudma_frames_write(pcap, pf_lens, RTE_DIM(pf_lens), PF_FRAMES) == 0,
		"pcap");
	if (mpa == NULL || mpb == NULL ||
			pf_port("net_gpudma_pfa", "launch", 1, mpa, &pa) != 0) {
		CHECK(0, "set-up");
		goto free;
	}
	launches0 = fake_cuda_kernel_launches();
	fills0 = fake_cuda_fill_launches();
	na = pf_rx(pa, a, PF_FRAMES);
	CHECK(fake_cuda_kernel_launches() > launches0 &&
		fake_cuda_fill_launches() == fills0,
		"fill=launch: %" PRIu64 " scatter launches, %" PRIu64 " persistent",
		fake_cuda_kernel_launches() - launches0,
		fake_cuda_fill_launches() - fills0);
	if (pf_port("net_gpudma_pfb", PF_NO_IDLE, 1, mpb, &pb) != 0) {
		CHECK(0, "persistent port set-up");
		pf_port_down("net_gpudma_pfa", pa);
		goto free_a;
	}
	launches0 = fake_cuda_kernel_launches();
	fills0 = pf_cold_launches();
	served0 = fake_cuda_fills_served();
	parked0 = fake_cuda_fills_parked();
	/* The first burst launches the kernel; the rest make no call
	 * but the odd query of a fill that is slow to complete. */
	nb = pf_rx(pb, first, 1);
	b[0] = first[0];
	calls = fake_cuda_calls();
	nb += pf_rx(pb, b + nb, PF_FRAMES - nb);
	calls = fake_cuda_calls() - calls;
	CHECK(na == PF_FRAMES && nb == PF_FRAMES, "received %u (launch) and %u (persistent) of %u",
		na, nb, PF_FRAMES);
	for (i = 0; i < RTE_MIN(na, nb); i++) {
		const struct rte_mbuf *x = a[i], *y = b[i];

		if (!pf_frame_is(x, i) || !pf_frame_is(y, i)) {
			bad++;
			continue;
		}
		/* The same chains: segment for segment. */
		for (; x != NULL && y != NULL; x = x->next, y = y->next)
			if (x->data_len != y->data_len ||
					memcmp(rte_pktmbuf_mtod(x, const void *),
					rte_pktmbuf_mtod(y, const void *),
					x->data_len) != 0)
				break;
		bad += x != NULL || y != NULL;
	}
	CHECK(bad == 0, "%u of %u frames differ from the wire or between the modes",
		bad, RTE_MIN(na, nb));
	CHECK(pf_cold_launches() == fills0 + 1 &&
		fake_cuda_kernel_launches() == launches0,
		"fill=persistent: %" PRIu64 " persistent launches not after a park, %" PRIu64 " scatter launches",
		pf_cold_launches() - fills0,
		fake_cuda_kernel_launches() - launches0);
	CHECK(xstat(pb, "rx_copy_batches") >= 8 * 8 &&
		fake_cuda_fills_served() - served0 == xstat(pb, "rx_copy_batches"),
		"%" PRIu64 " fills, %" PRIu64 " served by the kernel",
		xstat(pb, "rx_copy_batches"), fake_cuda_fills_served() - served0);
	CHECK(calls < xstat(pb, "rx_copy_batches"),
		"%" PRIu64 " CUDA calls for %" PRIu64 " fills after the first",
		calls, xstat(pb, "rx_copy_batches"));
	CHECK(xstat(pb, "rx_bulk_batches") == 0, "bulk fills with fill=persistent");
	CHECK(fake_cuda_kernel_errors() == 0, "%" PRIu64 " bad descriptors",
		fake_cuda_kernel_errors());
	rte_pktmbuf_free_bulk(b, nb);
	nb = 0;
	/* One kernel, still running unless it parked (past its life). */
	CHECK(fake_cuda_fills_running() == 1 ||
		(fake_cuda_fills_running() == 0 &&
		 fake_cuda_fills_parked() > parked0),
		"%u persistent kernels running, %" PRIu64 " parks",
		fake_cuda_fills_running(), fake_cuda_fills_parked() - parked0);
	pf_port_down("net_gpudma_pfb", pb);
	CHECK(fake_cuda_fills_running() == 0, "kernel still running after stop");
	pf_port_down("net_gpudma_pfa", pa);
free_a:
	rte_pktmbuf_free_bulk(a, na);
	rte_pktmbuf_free_bulk(b, nb);
	check_cuda_released("persistent and launch ports closed");
free:
	CHECK(mpa == NULL || rte_mempool_avail_count(mpa) == 4095, "launch pool: %u of 4095 back",
		rte_mempool_avail_count(mpa));
	CHECK(mpb == NULL || rte_mempool_avail_count(mpb) == 4095, "persistent pool: %u of 4095 back",
		rte_mempool_avail_count(mpb));
	rte_mempool_free(mpa);
	rte_mempool_free(mpb);
}

/*
 * A fill's buffers are handed out only after the kernel's DONE: with the
 * stand-in holding its fills back (manual mode), however often polled,
 * nothing comes, and the polls make no CUDA call; released, every frame
 * comes whole and in order.
 */
static void
persistent_held_until_done(void)
{
	static struct rte_mbuf *b[PF_FRAMES];
	unsigned int i, got = 0, bad = 0;
	struct rte_mempool *mp;
	uint64_t calls;
	uint16_t port;

	if (pf_setup("pf_held", "net_gpudma_pfh", PF_NO_IDLE, 1, &mp, &port) != 0)
		return;
	fake_cuda_set_async_manual(1);
	got = rte_eth_rx_burst(port, 0, b, 32);
	calls = fake_cuda_calls();
	for (i = 0; i < 1000; i++)
		got += rte_eth_rx_burst(port, 0, b + got, 32);
	calls = fake_cuda_calls() - calls;
	CHECK(got == 0, "%u frames handed out before DONE", got);
	CHECK(calls == 0, "%" PRIu64 " CUDA calls in 1000 polls of a held fill", calls);
	CHECK(4095 - rte_mempool_avail_count(mp) >= PF_DESC / 4,
		"only %u buffers posted", 4095 - rte_mempool_avail_count(mp));
	fake_cuda_set_async_manual(0);
	got = pf_rx(port, b, PF_FRAMES);
	for (i = 0; i < got; i++)
		bad += !pf_frame_is(b[i], i);
	CHECK(got == PF_FRAMES && bad == 0, "received %u of %u, %u wrong", got,
		PF_FRAMES, bad);
	rte_pktmbuf_free_bulk(b, got);
	pf_port_down("net_gpudma_pfh", port);
	CHECK(rte_mempool_avail_count(mp) == 4095, "%u of 4095 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
	check_cuda_released("persistent port closed");
}

/* Receives about n chains (replayed forever), each the next frame of the
 * file after the last one seen or a later one (a stop drops what was
 * posted): the number not the wire's bytes. */
static unsigned int
pf_rx_frames(uint16_t port, unsigned int n, uint32_t *k)
{
	struct rte_mbuf *b[64];
	unsigned int got = 0, bad = 0, i, d;

	while (got < n) {
		unsigned int m = pf_rx(port, b, RTE_DIM(b));

		if (m == 0) {
			bad++;
			break;
		}
		for (i = 0; i < m; i++) {
			for (d = 0; d < 2 * PF_DESC; d++)
				if (pf_frame_is(b[i], (*k + d) % PF_FRAMES))
					break;
			bad += d == 2 * PF_DESC;
			*k = (*k + d + 1) % PF_FRAMES;
		}
		got += m;
		rte_pktmbuf_free_bulk(b, m);
	}
	return bad;
}

/*
 * Port stop ends the kernel (every buffer back, nothing running); start
 * launches it again at the first fill; so does a queue set up again. The
 * frames stay the wire's throughout.
 */
static void
persistent_stop_restart(void)
{
	uint64_t fills0 = pf_cold_launches();
	struct rte_mempool *mp;
	uint32_t k = 0;
	unsigned int round;
	uint16_t port;

	if (pf_setup("pf_restart", "net_gpudma_pfr", PF_NO_IDLE, 0, &mp, &port) != 0)
		return;
	CHECK(fake_cuda_fills_running() == 0, "kernel running before the first fill");
	for (round = 0; round < 3 && !check_case_failed(); round++) {
		CHECK(pf_rx_frames(port, 200, &k) == 0, "round %u: frames not the wire's",
			round);
		CHECK(pf_cold_launches() == fills0 + round + 1,
			"round %u: %" PRIu64 " launches not after a park", round,
			pf_cold_launches() - fills0);
		CHECK(rte_eth_dev_stop(port) == 0, "stop");
		CHECK(fake_cuda_fills_running() == 0, "round %u: kernel running after stop",
			round);
		CHECK(rte_mempool_avail_count(mp) == 4095, "round %u: %u of 4095 mbufs back after stop",
			round, rte_mempool_avail_count(mp));
		/* The last round sets the queue up again first: its wire
		 * starts over at the file's first frame. */
		if (round == 1) {
			CHECK(rte_eth_rx_queue_setup(port, 0, PF_DESC, SOCKET_ID_ANY,
				NULL, mp) == 0, "queue set up again");
			k = 0;
		}
		CHECK(rte_eth_dev_start(port) == 0, "start");
	}
	CHECK(fake_cuda_kernel_errors() == 0, "%" PRIu64 " kernel errors",
		fake_cuda_kernel_errors());
	pf_port_down("net_gpudma_pfr", port);
	CHECK(fake_cuda_fills_running() == 0, "kernel running after close");
	CHECK(rte_mempool_avail_count(mp) == 4095, "%u of 4095 mbufs back",
		rte_mempool_avail_count(mp));
	rte_mempool_free(mp);
	check_cuda_released("persistent port stopped and started three times");
}

/*
 * fill_idle_us: a queue left unpolled longer parks its kernel, and the
 * next burst launches it again; with a 1 us idle the kernel parks between
 * almost every two fills while the lcore keeps posting, so that fills are
 * posted as it parks (the CPU relaunches it at the first one it did not
 * serve). Every frame the wire's, in order and once; every launch after
 * the first explained by a park; a stop with fills posted to a parked
 * kernel serves them (every buffer back, nothing running).
 */
static void
persistent_parks_when_idle(void)
{
	static struct rte_mbuf *b[PF_FRAMES];
	static const char *const fills[] = {
		"persistent,fill_idle_us=200", "persistent,fill_idle_us=1",
	};
	const struct timespec gap = { .tv_sec = 0, .tv_nsec = 20000000 };
	unsigned int v, i, got, bad;
	uint64_t cold0, parked0;
	struct rte_mempool *mp;
	uint16_t port;

	for (v = 0; v < RTE_DIM(fills) && !check_case_failed(); v++) {
		if (pf_setup("pf_park", "net_gpudma_pfp", fills[v], 1, &mp,
				&port) != 0)
			return;
		cold0 = pf_cold_launches();
		parked0 = fake_cuda_fills_parked();
		got = pf_rx(port, b, 100);
		/* Unpolled: nothing posted, the kernel parks. */
		nanosleep(&gap, NULL);
		nanosleep(&gap, NULL);
		CHECK(fake_cuda_fills_parked() > parked0,
			"%s: no park in 40 ms unpolled", fills[v]);
		got += pf_rx(port, b + got, PF_FRAMES - got);
		for (i = 0, bad = 0; i < got; i++)
			bad += !pf_frame_is(b[i], i);
		CHECK(got == PF_FRAMES && bad == 0, "%s: received %u of %u, %u not the wire's",
			fills[v], got, PF_FRAMES, bad);
		/* The first; less one if the last parked unrelaunched. */
		CHECK(pf_cold_launches() - cold0 <= 1,
			"%s: %" PRIu64 " launches not after a park",
			fills[v], pf_cold_launches() - cold0);
		CHECK(xstat(port, "rx_fill_launches") ==
			1 + fake_cuda_fills_parked() - parked0 ||
			xstat(port, "rx_fill_launches") ==
			fake_cuda_fills_parked() - parked0,
			"%s: rx_fill_launches %" PRIu64 " for %" PRIu64 " parks",
			fills[v], xstat(port, "rx_fill_launches"),
			fake_cuda_fills_parked() - parked0);
		rte_pktmbuf_free_bulk(b, got);
		CHECK(fake_cuda_kernel_errors() == 0, "%s: %" PRIu64 " kernel errors",
			fills[v], fake_cuda_kernel_errors());
		pf_port_down("net_gpudma_pfp", port);
		CHECK(fake_cuda_fills_running() == 0, "%s: kernel running after close",
			fills[v]);
		CHECK(rte_mempool_avail_count(mp) == 4095, "%s: %u of 4095 mbufs back",
			fills[v], rte_mempool_avail_count(mp));
		rte_mempool_free(mp);
		check_cuda_released("persistent port that parked, closed");
	}
}

/* ---- main ------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	char *eal_argv[] = {
		argv[0], (char *)"--no-huge", (char *)"-m", (char *)"512",
		(char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
		(char *)"--log-level=pmd.net.gpudma:info", NULL,
	};
	const char *mode;
	int ret = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s host|gpu|multi|persistent|faults FAKE_LIBCUDA WORKDIR\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	if (getenv("GPUDMA_TEST_SCATTER") != NULL &&
			strcmp(getenv("GPUDMA_TEST_SCATTER"), "0") == 0)
		scatter_arg = "scatter=0";
	else if (getenv("GPUDMA_TEST_SCATTER") != NULL &&
			strcmp(getenv("GPUDMA_TEST_SCATTER"), "1") == 0)
		scatter_arg = "scatter=1";
	scatter = strcmp(scatter_arg, "scatter=0") != 0;
	if (getenv("GPUDMA_TEST_FILL") != NULL)
		snprintf(fill_arg, sizeof(fill_arg), "fill=%s",
			getenv("GPUDMA_TEST_FILL"));
	setenv("GPU_CUDA_LIBCUDA", argv[2], 1);
	workdir = argv[3];
	path_in(in_pcap, sizeof(in_pcap), "in.pcap");
	if (mkdir(workdir, 0755) != 0 && errno != EEXIST) {
		printf("FAIL cannot create %s: %s\n", workdir, strerror(errno));
		return 1;
	}
	if (gpudma_frames_write(in_pcap, frame_lens, NB_FRAMES, NB_FRAMES) != 0) {
		printf("FAIL cannot write %s\n", in_pcap);
		return 1;
	}
	if (rte_eal_init(RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		printf("FAIL eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	log_file = tmpfile();
	if (log_file == NULL || rte_openlog_stream(log_file) != 0) {
		printf("FAIL log capture\n");
		return 1;
	}
	if (strcmp(mode, "host") == 0) {
		CHECK_CASE(bad_devargs);
		CHECK_CASE(host_rx_chains_twice);
		CHECK_CASE(host_rx_reused_buffers);
		CHECK_CASE(host_multi_queue_and_loop_forever);
		CHECK_CASE(host_rx_pcap_queues_and_empty_records);
		CHECK_CASE(host_imissed_when_pool_empty);
		CHECK_CASE(host_tx_pcap_identical);
		CHECK_CASE(host_tx_bad_chain_counted);
		CHECK_CASE(host_tx_write_errors_counted);
		CHECK_CASE(host_tx_fast_free);
		CHECK_CASE(host_tx_csum_offload);
		CHECK_CASE(host_split);
		CHECK_CASE(rx_port_refused);
		CHECK_CASE(host_rx_port_ring);
		CHECK_CASE(host_rx_port_imissed);
		CHECK_CASE(host_rx_port_pcap);
	} else if (gpu_mem_init() != 0) {
		printf("FAIL GPU memory from the fake CUDA\n");
		ret = 1;
	} else if (strcmp(mode, "gpu") == 0) {
		CHECK_CASE(gpu_pool_refused_until_mapped);
		CHECK_CASE(gpu_rx_completion_order);
		CHECK_CASE(gpu_rx_completion_order_batch0);
		CHECK_CASE(gpu_rx_polls_without_cuda);
		CHECK_CASE(gpu_rx_fill_covers_runs);
		CHECK_CASE(gpu_rx_port_ring);
		CHECK_CASE(gpu_tx_pcap_identical);
		CHECK_CASE(gpu_split_header_host_payload_gpu);
		CHECK_CASE(gpu_batch_required);
		CHECK_CASE(gpu_batch_copies_reach_host);
		CHECK_CASE(gpu_scatter_default_loaded_for_gpu_memory);
	} else if (strcmp(mode, "multi") == 0) {
		if (gpu_mem_on(1, &gpu_mem1) != 0) {
			printf("FAIL GPU 1 memory from the fake CUDA (FAKE_CUDA_GPUS names two?)\n");
			ret = 1;
		} else {
			CHECK_CASE(gpu_ports_on_two_gpus);
			CHECK_CASE(gpu_queues_of_one_port_on_two_gpus);
			ret = run_faults_two_gpus();
		}
	} else if (strcmp(mode, "persistent") == 0) {
		CHECK_CASE(persistent_exact_as_launch);
		CHECK_CASE(persistent_held_until_done);
		CHECK_CASE(persistent_stop_restart);
		CHECK_CASE(persistent_parks_when_idle);
	} else if (strcmp(mode, "faults") == 0) {
		ret = run_faults();
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		ret = 2;
	}
	/* The log is in a temporary file: show it where a case failed. */
	if (check_any_failed() || ret != 0) {
		char buf[4096];
		size_t k;

		fflush(log_file);
		rewind(log_file);
		printf("---- log ----\n");
		while ((k = fread(buf, 1, sizeof(buf), log_file)) > 0)
			fwrite(buf, 1, k, stdout);
	}
	rte_openlog_stream(NULL);
	rte_eal_cleanup();
	if (ret != 0 || strcmp(mode, "faults") == 0)
		return ret;
	return check_finish("net_gpudma");
}
