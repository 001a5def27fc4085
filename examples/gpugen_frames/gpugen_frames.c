/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpugen-frames: how a program with no DPDK (a tester with its own
 * stream model and its own CUDA buffers) embeds the GPU generator through
 * the installed libraries only (pkg-config libgpugen-cuda):
 *
 *  1. its stream, mapped from "its model" onto struct gpugen_stream_def,
 *     checked against the spec-string twin on the CPU, frame by frame;
 *  2. on a GPU, frames built by libgpugen-cuda into its own buffers on
 *     its own CUDA stream, copied back and compared byte for byte with
 *     the CPU reference: into device memory (base + stride), then into
 *     mapped host memory through an address array in device memory.
 *
 *   gpugen-frames [--count N] [--seed S]
 *
 * Exit 0: both parts passed; 77: the CPU part passed, no GPU to run the
 * second (the reason is printed); 1: a check failed or an error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include <gpugen.h>
#include <gpugen_frames.h>

#define EXIT_SKIP 77
#define STAMP_NS 1700000000000000000ull	/* one stamp time for all */

/* The tester's own description of a flow: what its configuration says. */
struct my_flow {
	uint32_t src_ip, dst_ip;	/* host order */
	uint16_t dport;
	uint16_t sport_lo, sport_hi;	/* swept one by one */
	uint16_t vlan;
	uint32_t size_lo, size_hi;	/* random in between, FCS included */
	uint32_t share;			/* packets per round */
};

static const struct my_flow flow = {
	.src_ip = 0xc6120001, .dst_ip = 0xc6130001, .dport = 4789,
	.sport_lo = 1024, .sport_hi = 1087, .vlan = 42,
	.size_lo = 128, .size_hi = 1518, .share = 1,
};
/* The same flow as a spec string: the CPU part checks the two agree. */
static const char flow_spec[] = "ipv4,udp,src=198.18.0.1,dst=198.19.0.1,"
	"dport=4789,vlan=42,var=udp.sport:inc:1024-1087,size=128-1518:random";

static int
add_flow(struct gpugen *g, const struct my_flow *f, char *err, size_t errlen)
{
	struct gpugen_stream_def d;
	int rc = gpugen_stream_def_init(g, &d, 4, GPUGEN_PROTO_UDP);

	if (rc != 0)
		return rc;
	for (int i = 0; i < 4; i++) {
		d.src[i] = (uint8_t)(f->src_ip >> (24 - 8 * i));
		d.dst[i] = (uint8_t)(f->dst_ip >> (24 - 8 * i));
	}
	d.dport = f->dport;
	d.n_vlans = 1;
	d.vid[0] = f->vlan;
	d.size_min = f->size_lo;
	d.size_max = f->size_hi;
	d.size_mode = GPUGEN_SIZES_RANDOM;
	d.weight = f->share;
	d.n_vars = 1;
	d.vars[0].field.name = "udp.sport";
	d.vars[0].op = GPUGEN_VAR_INC;
	d.vars[0].min = f->sport_lo;
	d.vars[0].max = f->sport_hi;
	d.vars[0].step = 1;
	d.desc = "my_flow";
	return gpugen_add_stream(g, &d, err, errlen);
}

static struct gpugen *
new_gen(uint64_t seed)
{
	struct gpugen_conf c = { .seed = seed };
	struct gpugen *g;
	int rc = gpugen_create(&g, &c);

	if (rc != 0) {
		fprintf(stderr, "gpugen-frames: gpugen_create: %s\n",
			strerror(-rc));
		return NULL;
	}
	return g;
}

/* Part 1: the struct stream and its spec twin, on the CPU. */
static int
cpu_part(const struct gpugen *g, uint64_t seed, uint64_t count)
{
	static uint8_t a[2048], b[2048];
	struct gpugen *twin = new_gen(seed);
	char err[256] = "";
	uint64_t bad = 0;

	if (twin == NULL)
		return -ENOMEM;
	if (gpugen_add_spec(twin, flow_spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpugen-frames: spec: %s\n", err);
		gpugen_free(twin);
		return -EINVAL;
	}
	for (uint64_t n = 0; n < count; n++) {
		uint32_t la = gpugen_build_cpu(g, n, STAMP_NS, a, sizeof(a),
			NULL, NULL);
		uint32_t lb = gpugen_build_cpu(twin, n, STAMP_NS, b, sizeof(b),
			NULL, NULL);

		bad += la == 0 || la != lb || memcmp(a, b, la) != 0;
	}
	gpugen_free(twin);
	printf("CPU reference: struct stream vs spec: %" PRIu64 " of %" PRIu64
		" frames differ\n", bad, count);
	return bad == 0 ? 0 : -EIO;
}

/* The built frames (frame k at host copy + k * stride) against the CPU
 * reference; returns how many differ. */
static uint64_t
compare(const struct gpugen *g, const uint8_t *host, uint32_t stride,
		const uint32_t *lens, uint64_t count)
{
	static uint8_t ref[2048];
	uint64_t bad = 0;

	for (uint64_t k = 0; k < count; k++) {
		uint32_t len = gpugen_build_cpu(g, k, STAMP_NS, ref, sizeof(ref),
			NULL, NULL);

		if (len == 0 || lens[k] != len ||
				memcmp(host + k * stride, ref, len) != 0) {
			if (bad == 0)
				fprintf(stderr, "gpugen-frames: frame %" PRIu64
					" differs (%u vs %u bytes)\n", k, lens[k],
					len);
			bad++;
		}
	}
	return bad;
}

#define CUDA_OK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "gpugen-frames: %s: %s\n", #call, \
			cudaGetErrorString(e_)); \
		goto out; \
	} \
} while (0)

/* Part 2: frames built into the program's own CUDA buffers. */
static int
gpu_part(const struct gpugen *g, uint64_t count)
{
	const uint32_t stride = (gpugen_max_len(g) + 63) / 64 * 64;
	const size_t bytes = (size_t)count * stride;
	struct gpugen_frames *f = NULL;
	struct gpugen_frames_dst dst;
	cudaStream_t s = NULL;
	uint8_t *dev = NULL, *host = NULL, *mapped = NULL;
	void **addrs = NULL, **dev_addrs = NULL;
	uint32_t *lens = NULL;
	uint64_t bad_dev, bad_mapped;
	char err[256] = "";
	int rc = -EIO;

	rc = gpugen_frames_open(g, &f, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "gpugen-frames: gpugen_frames_open: %s\n", err);
		return rc;
	}
	rc = -EIO;
	lens = calloc(count, sizeof(*lens));
	addrs = calloc(count, sizeof(*addrs));
	host = malloc(bytes);
	if (lens == NULL || addrs == NULL || host == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CUDA_OK(cudaMalloc((void **)&dev, bytes));
	CUDA_OK(cudaHostAlloc((void **)&mapped, bytes, cudaHostAllocMapped));
	CUDA_OK(cudaMalloc((void **)&dev_addrs, count * sizeof(void *)));

	/* Device memory, one base and a stride, built in place. */
	dst = (struct gpugen_frames_dst){ .base = dev, .stride = stride,
		.flags = GPUGEN_FRAMES_IN_GPU };
	if (gpugen_frames_build(f, &dst, 0, (uint32_t)count, STAMP_NS, lens,
			s, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpugen-frames: build (device): %s\n", err);
		goto out;
	}
	CUDA_OK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
	CUDA_OK(cudaStreamSynchronize(s));
	bad_dev = compare(g, host, stride, lens, count);
	printf("GPU build: %" PRIu64 " of %" PRIu64 " frames differ (device "
		"memory)\n", bad_dev, count);

	/* Mapped host memory, an address array in device memory, reversed
	 * so the array is really read. */
	for (uint64_t k = 0; k < count; k++) {
		void *hp = mapped + (count - 1 - k) * stride, *dp;

		CUDA_OK(cudaHostGetDevicePointer(&dp, hp, 0));
		addrs[k] = dp;
	}
	CUDA_OK(cudaMemcpyAsync(dev_addrs, addrs, count * sizeof(void *),
		cudaMemcpyHostToDevice, s));
	dst = (struct gpugen_frames_dst){ .addrs = dev_addrs, .room = stride };
	memset(lens, 0, count * sizeof(*lens));
	if (gpugen_frames_build(f, &dst, 0, (uint32_t)count, STAMP_NS, lens,
			s, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpugen-frames: build (mapped): %s\n", err);
		goto out;
	}
	CUDA_OK(cudaStreamSynchronize(s));
	for (uint64_t k = 0; k < count; k++)
		memcpy(host + k * stride, mapped + (count - 1 - k) * stride,
			stride);
	bad_mapped = compare(g, host, stride, lens, count);
	printf("GPU build: %" PRIu64 " of %" PRIu64 " frames differ (mapped "
		"host memory)\n", bad_mapped, count);

	/* Refused: buffers smaller than the longest frame, no packets. */
	dst.room = gpugen_max_len(g) - 1;
	if (gpugen_frames_build(f, &dst, 0, 1, 0, NULL, s, err,
			sizeof(err)) != -EMSGSIZE) {
		fprintf(stderr, "gpugen-frames: short buffers not refused\n");
		goto out;
	}
	dst.room = stride;
	if (gpugen_frames_build(f, &dst, 0, 0, 0, NULL, s, err,
			sizeof(err)) != -EINVAL) {
		fprintf(stderr, "gpugen-frames: 0 packets not refused\n");
		goto out;
	}
	rc = bad_dev == 0 && bad_mapped == 0 ? 0 : -EIO;
out:
	/* Every build completed (synchronised above, or none queued). */
	if (s != NULL)
		(void)cudaStreamSynchronize(s);
	gpugen_frames_close(f);
	(void)cudaFree(dev_addrs);
	(void)cudaFreeHost(mapped);
	(void)cudaFree(dev);
	if (s != NULL)
		(void)cudaStreamDestroy(s);
	free(host);
	free(addrs);
	free(lens);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t count = 1000, seed = 1;
	struct gpugen *g;
	char err[256] = "";
	int o, rc, ngpu = 0;
	cudaError_t e;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		unsigned long long v;

		if (o != 'n' && o != 's') {
			fprintf(stderr, "usage: %s [--count N] [--seed S]\n",
				argv[0]);
			return 1;
		}
		v = strtoull(optarg, &end, 0);
		if (*end != '\0' || (o == 'n' && (v == 0 || v > 1000000))) {
			fprintf(stderr, "gpugen-frames: --%s %s: not a number%s\n",
				o == 'n' ? "count" : "seed", optarg,
				o == 'n' ? " in 1..1000000" : "");
			return 1;
		}
		if (o == 'n')
			count = v;
		else
			seed = v;
	}
	printf("libgpugen %s\n", gpugen_version());
	g = new_gen(seed);
	if (g == NULL)
		return 1;
	rc = add_flow(g, &flow, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "gpugen-frames: my_flow: %s\n", err);
		gpugen_free(g);
		return 1;
	}
	if (cpu_part(g, seed, count) != 0) {
		gpugen_free(g);
		return 1;
	}
	e = cudaGetDeviceCount(&ngpu);
	if (e != cudaSuccess || ngpu == 0) {
		printf("GPU part skipped: no usable CUDA device (%s)\n",
			e != cudaSuccess ? cudaGetErrorString(e) :
			"the runtime counts 0");
		gpugen_free(g);
		return EXIT_SKIP;
	}
	rc = gpu_part(g, count);
	gpugen_free(g);
	return rc == 0 ? 0 : 1;
}
