/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU build against the CPU reference, byte for byte: frames built by
 * the kernel into host memory registered with the GPU (host-mapped) and
 * into GPU memory (rte_gpu_mem_alloc, copied back), with the table in
 * each kind of memory, several bursts, every stream kind. Frames start
 * at every offset modulo 16 and bursts are not all whole warps, so the
 * kernel's copy-out (16-byte pieces between a head and a tail of bytes)
 * is checked at each alignment; the bytes around each frame must stay as
 * they were. A replay stream (pcap=FILE,all) of 150 frames of four
 * kinds, most stamped, with a variable, is among the streams. Then jumbo
 * frames, a 64/1500/9000-byte mix and random sizes up to 9216, in slots
 * of their size. Exit 77 when gpudev finds no GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>

#include "check.h"
#include "gpugen.h"
#include "gpugen_build.h"
#include "gpugen_cuda.h"
#include "gpuapp_eal.h"

#define BURST 256
#define SLOT 2048
/* The largest frame at offset 15, rounded up to 16. */
#define JUMBO_SLOT 9232
#define BURSTS 6
#define GUARD 0xa5	/* what the slots hold outside the frames */

/* Frame k of burst b: at every offset modulo 16 across a burst. */
static size_t
frame_off(uint64_t b, uint32_t k, size_t slot)
{
	return (size_t)k * slot + (size_t)((b * 5 + k) % 16);
}

/* Slot bytes [from, to) all GUARD. */
static int
guarded(const uint8_t *slot, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (slot[i] != GUARD)
			return 0;
	return 1;
}

static const char *const specs[] = {
	"ipv4,udp,var=ipv4.src:inc:10.1.0.1-10.1.0.200,"
		"var=udp.sport:random:1024-65535,var=ipv4.tos:random:0-255,"
		"size=70-1518:random",
	"vlan=100,ipv6,tcp,var=tcp.sport:dec:1000-2000:step=7,"
		"var=ipv6.src:random:0-0xffffffff,size=120-1500:step=13",
	"vlan=10,vlan=20,ipv4,tcp,tuple=ipv4.dst:tcp.dport:10.9.0.1-10.9.0.50:"
		"80-90,var=ipv4.ttl:inc:1-64:burst,size=200",
	"imix,ipv4,udp,stamp=off,var=udp.dport:inc:1-65535,seed=99",
};

/* 150 frames into a new pcap file at path (a mkstemp template). */
static int
write_replay(char *path)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;
	int fd = mkstemp(path);

	if (fd < 0 || p == NULL) {
		if (p != NULL)
			pcap_close(p);
		return -1;
	}
	close(fd);
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		pcap_close(p);
		return -1;
	}
	for (uint32_t k = 0; k < 150; k++) {
		struct gpugen_pkt_spec s;
		struct gpugen_pkt_layout lay;
		struct pcap_pkthdr h;
		uint8_t f[1600];

		memset(&s, 0, sizeof(s));
		s.ip_version = k % 4 == 3 ? 6 : 4;
		s.src[0] = 10;
		s.dst[0] = 10;
		s.dst[3] = (uint8_t)k;
		s.proto = k % 2 ? GPURX_IPPROTO_TCP : GPURX_IPPROTO_UDP;
		s.sport = (uint16_t)(2000 + k);
		s.dport = 443;
		/* Some too short for the stamp: they go unstamped. */
		s.payload_len = (k * 37) % 1400;
		memset(&h, 0, sizeof(h));
		h.caplen = h.len = gpugen_pkt_build(&s, f, sizeof(f), &lay);
		pcap_dump((u_char *)d, &h, f);
	}
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}

static const char *const jumbo_specs[] = {
	"ipv4,udp,size=9000,var=udp.sport:inc:1-100",
	"ipv4,udp,size=64,stamp=off,weight=4",
	"ipv6,tcp,size=1500,weight=2,var=tcp.sport:random:1-65535",
	"vlan=5,ipv4,tcp,size=64-9216:random,stamp=off,"
		"var=ipv4.src:random:1-0xfffffffe",
};

/* Each build's frames in slots of slot bytes. */
static void
run_mode(struct gpugen *g, int16_t gpu, enum gpugen_gpu_mem where,
		int gpu_frames, size_t slot)
{
	static uint8_t ref[JUMBO_SLOT], got[JUMBO_SLOT],
		fill[(size_t)BURST * JUMBO_SLOT];
	struct gpugen_gpu *gg;
	char err[256];
	uint8_t *frames;
	size_t len = (size_t)BURST * slot;
	const unsigned int failed_before = check_failures();
	int bad = 0;

	if (gpu_frames) {
		frames = rte_gpu_mem_alloc(gpu, len, 0);
	} else {
		frames = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (frames == MAP_FAILED)
			frames = NULL;
		else if (rte_gpu_mem_register(gpu, len, frames) != 0) {
			munmap(frames, len);
			frames = NULL;
		}
	}
	CHECK(frames != NULL, "frame memory: %s", rte_strerror(rte_errno));
	if (frames == NULL)
		return;
	if (gpugen_gpu_open(g, gpu, BURST, where, &gg, err, sizeof(err)) != 0) {
		CHECK(0, "gpugen_gpu_open: %s", err);
		goto out;
	}
	/* Two packets of one build into one slot: refused, nothing queued. */
	CHECK(gpugen_gpu_build_ring(gg, frames, slot, BURST, 0, BURST + 1, 1,
		err, sizeof(err)) == -EINVAL,
		"a build of %d packets into %d slots was not refused",
		BURST + 1, BURST);
	bad = check_failures() != failed_before;
	memset(fill, GUARD, len);
	for (uint64_t b = 0; b < BURSTS && !bad; b++) {
		uint64_t first = b * BURST + (b ? 7 : 0), tx_ns = 1000 * b + 5;
		/* Some bursts end in a part of a warp. */
		uint32_t n_burst = BURST - (uint32_t)(b % 3) * 13;

		if (gpu_frames) {
			if (gpucuda_copy(frames, fill, len) != 0) {
				CHECK(0, "filling GPU frames");
				break;
			}
		} else {
			memset(frames, GUARD, len);
		}
		for (uint32_t k = 0; k < n_burst; k++)
			gpugen_gpu_addrs(gg)[k] = frames + frame_off(b, k, slot);
		if (gpugen_gpu_build(gg, first, n_burst, tx_ns, err,
				sizeof(err)) != 0) {
			CHECK(0, "build: %s", err);
			break;
		}
		for (uint32_t k = 0; k < BURST; k++) {
			uint32_t n = k < n_burst ? gpugen_build_cpu(g, first + k,
				tx_ns, ref, sizeof(ref), NULL, NULL) : 0;
			size_t off = frame_off(b, k, slot) % slot;
			const uint8_t *p = frames + (size_t)k * slot;
			int rc = 0;

			if (gpu_frames) {
				rc = gpucuda_copy(got, p, slot);
				p = got;
			}
			CHECK(rc == 0 && (k >= n_burst || n != 0) &&
				memcmp(p + off, ref, n) == 0 &&
				guarded(p, 0, off) && guarded(p, off + n, slot),
				"%s frames, table in %s: packet %lu differs from "
				"the CPU build, or bytes around it changed",
				gpu_frames ? "GPU" : "host-mapped",
				where == GPUGEN_TABLE_DEVICE ? "GPU" : "host",
				(unsigned long)(first + k));
		}
		bad = check_failures() != failed_before;
	}
	gpugen_gpu_close(gg);
out:
	if (gpu_frames) {
		rte_gpu_mem_free(gpu, frames);
	} else if (rte_gpu_mem_unregister(gpu, frames) == 0) {
		munmap(frames, len);
	}
	if (check_failures() == failed_before)
		printf("ok: %s frames, table in %s: %d bursts identical%s\n",
			gpu_frames ? "GPU" : "host-mapped",
			where == GPUGEN_TABLE_DEVICE ? "GPU" : "host", BURSTS,
			slot > SLOT ? " (jumbo)" : "");
}

/* A generator of the n specs with conf c; NULL (a failed check) if not. */
static struct gpugen *
gen_of(const struct gpugen_conf *c, const char *const *sp, size_t n)
{
	struct gpugen *g;
	char err[256];

	if (gpugen_create(&g, c) != 0) {
		CHECK(0, "gpugen_create");
		return NULL;
	}
	for (size_t k = 0; k < n; k++)
		if (gpugen_add_spec(g, sp[k], err, sizeof(err)) < 0) {
			CHECK(0, "%s: %s", sp[k], err);
			gpugen_free(g);
			return NULL;
		}
	return g;
}

int
main(int argc, char **argv)
{
	/* With the PCI scan: gpudev finds the GPUs there. */
	char *eal[] = { argv[0], "--no-huge", "-m", "512", "--no-shconf",
		"--log-level=lib.eal:warning", NULL };
	struct gpugen_conf c = { .burst = 32, .seed = 7 };
	char err[256], replay[] = "/tmp/gputx-replay-XXXXXX", spec[128];
	struct gpugen *g;
	int16_t gpu;
	int rc;

	(void)argc;
	if (gpuapp_eal_init(6, eal) < 0) {
		CHECK(0, "EAL: %s", rte_strerror(rte_errno));
		return check_finish("gputx-gpu-build");
	}
	gpu = rte_gpu_find_next(0, RTE_GPU_ID_ANY);
	if (rte_gpu_count_avail() == 0 || gpu < 0) {
		printf("SKIP: no GPU probed by gpudev (%s)\n", gpuapp_gpu_driver());
		rte_eal_cleanup();
		return 77;
	}
	g = gen_of(&c, specs, sizeof(specs) / sizeof(specs[0]));
	if (g == NULL)
		return check_finish("gputx-gpu-build");
	if (write_replay(replay) != 0) {
		CHECK(0, "cannot write %s", replay);
		return check_finish("gputx-gpu-build");
	}
	snprintf(spec, sizeof(spec), "pcap=%s,all,stamp=on,weight=3,"
		"var=@26/4:random:0-0xffffffff", replay);
	rc = gpugen_add_spec(g, spec, err, sizeof(err));
	unlink(replay);
	if (rc != 1) {
		CHECK(0, "%s: %s", spec, err);
		return check_finish("gputx-gpu-build");
	}
	run_mode(g, gpu, GPUGEN_TABLE_HOST, 0, SLOT);
	run_mode(g, gpu, GPUGEN_TABLE_DEVICE, 0, SLOT);
	run_mode(g, gpu, GPUGEN_TABLE_DEVICE, 1, SLOT);
	run_mode(g, gpu, GPUGEN_TABLE_HOST, 1, SLOT);
	gpugen_free(g);
	c.data_room = GPUGEN_FRAME_MAX - 4;
	g = gen_of(&c, jumbo_specs, sizeof(jumbo_specs) /
		sizeof(jumbo_specs[0]));
	if (g == NULL)
		return check_finish("gputx-gpu-build");
	run_mode(g, gpu, GPUGEN_TABLE_DEVICE, 0, JUMBO_SLOT);
	run_mode(g, gpu, GPUGEN_TABLE_DEVICE, 1, JUMBO_SLOT);
	gpugen_free(g);
	rte_eal_cleanup();
	return check_finish("gputx-gpu-build");
}
