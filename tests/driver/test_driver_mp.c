/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The gpu_cuda driver in a DPDK secondary process, on the fake CUDA with
 * two GPUs (FAKE_CUDA_GPUS). The primary probes both, allocates GPU memory
 * and registers host memory on each, then starts itself again as a
 * secondary beside it. The secondary must see both GPUs, allocate,
 * register and free its own memory in its own contexts, be refused the
 * primary's memory, and close only its own state; the primary then finds
 * its memory and devices as it left them.
 *
 * Usage: test-driver-mp FAKE_LIBCUDA FILE_PREFIX
 *        (the secondary: ... FILE_PREFIX secondary GPU_PTR0 HOST_PTR0 ...)
 *
 * A secondary needs hugepages: DPDK 22.11 runs --no-huge as legacy memory,
 * which it never writes down for a secondary to attach (hugepage_data), so
 * without free hugepages and a hugetlbfs mount the test skips (exit 77).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gpudev.h>

#include "fake_cuda.h"
#include "rte_pmd_gpu_cuda.h"
#include "check.h"

#define NB_GPUS 2
#define MEM_SIZE (64 * 1024)
#define EXIT_SKIP 77

static char **prog_argv;	/* this program's, to start the secondary */
static void *gpu_mem[NB_GPUS];
static void *host_mem[NB_GPUS];

static int
eal_start(const char *argv0, const char *prefix, bool secondary)
{
	char prefix_arg[128];
	char *eal_argv[16];
	int eal_argc = 0;

	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	eal_argv[eal_argc++] = (char *)(uintptr_t)argv0;
	eal_argv[eal_argc++] = (char *)"--no-pci";
	eal_argv[eal_argc++] = (char *)"--no-telemetry";
	eal_argv[eal_argc++] = prefix_arg;
	eal_argv[eal_argc++] = (char *)"--log-level=pmd.gpu.cuda:info";
	if (secondary) {
		eal_argv[eal_argc++] = (char *)"--proc-type=secondary";
	} else {
		eal_argv[eal_argc++] = (char *)"--proc-type=primary";
		eal_argv[eal_argc++] = (char *)"--vdev";
		eal_argv[eal_argc++] = (char *)"gpu_cuda0,dev=0";
		eal_argv[eal_argc++] = (char *)"--vdev";
		eal_argv[eal_argc++] = (char *)"gpu_cuda1,dev=1";
	}
	return rte_eal_init(eal_argc, eal_argv);
}

static bool
pattern_intact(const uint8_t *p, int16_t id)
{
	size_t i;

	for (i = 0; i < MEM_SIZE; i++)
		if (p[i] != (uint8_t)(i * 7 + (size_t)id))
			return false;
	return true;
}

/* NULL, or why this machine cannot run a secondary process. */
static const char *
no_hugepages(void)
{
	char line[256];
	long free_pages = 0;
	bool mounted = false;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return "no /proc/meminfo";
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
			break;
	fclose(f);
	f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return "no /proc/mounts";
	while (!mounted && fgets(line, sizeof(line), f) != NULL)
		mounted = strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	/* EAL's memory and the two processes' few allocations. */
	if (free_pages < 16)
		return "fewer than 16 free hugepages";
	if (!mounted)
		return "no hugetlbfs mounted";
	return NULL;
}

/* ---- the secondary --------------------------------------------------------- */

static void
secondary_sees_primary_devices(void)
{
	struct rte_gpu_info info;
	char name[32];
	int16_t id;

	CHECK(rte_eal_process_type() == RTE_PROC_SECONDARY, "not a secondary");
	CHECK_EQ(rte_gpu_count_avail(), NB_GPUS);
	for (id = 0; id < NB_GPUS; id++) {
		CHECK(rte_gpu_info_get(id, &info) == 0, "info of GPU %d", id);
		snprintf(name, sizeof(name), "gpu_cuda%d", id);
		CHECK(strcmp(info.name, name) == 0, "GPU %d is %s", id, info.name);
		CHECK(info.total_memory != 0 && info.processor_count != 0,
			"GPU %d: the primary's info is shared", id);
		CHECK(info.parent == RTE_GPU_ID_NONE, "GPU %d has a parent", id);
	}
}

static void
secondary_own_memory(void)
{
	CUcontext ctx[NB_GPUS] = { NULL };
	uint8_t *host;
	int16_t id;
	void *p;

	host = malloc(MEM_SIZE);
	CHECK(host != NULL, "malloc");
	if (host == NULL)
		return;
	for (id = 0; id < NB_GPUS; id++) {
		p = rte_gpu_mem_alloc(id, MEM_SIZE, 0);
		CHECK(p != NULL, "alloc on GPU %d: %s", id, rte_strerror(rte_errno));
		if (p == NULL)
			continue;
		CHECK(fake_cuda_is_device_range(p, MEM_SIZE), "GPU %d: not device memory", id);
		ctx[id] = fake_cuda_alloc_ctx(p);
		CHECK(ctx[id] != NULL, "GPU %d: no context", id);
		CHECK(rte_gpu_mem_free(id, p) == 0, "free on GPU %d", id);
		CHECK(rte_gpu_mem_register(id, MEM_SIZE, host) == 0, "register on GPU %d", id);
		CHECK(fake_cuda_is_registered(host, MEM_SIZE), "GPU %d: not registered", id);
		CHECK(rte_gpu_mem_unregister(id, host) == 0, "unregister on GPU %d", id);
	}
	/* Each GPU its own context, not one context for both. */
	CHECK(ctx[0] != ctx[1], "both GPUs allocate in one context");
	CHECK_EQ(fake_cuda_live_allocs(), 0);
	CHECK_EQ(fake_cuda_live_registrations(), 0);
	free(host);
}

static void
secondary_leaves_primary_memory(void)
{
	int16_t id;

	/* The primary's addresses are not this process's: refused, and
	 * nothing of them freed. */
	for (id = 0; id < NB_GPUS; id++) {
		CHECK(rte_gpu_mem_free(id, gpu_mem[id]) < 0,
			"freed the primary's memory on GPU %d", id);
		CHECK(rte_gpu_mem_unregister(id, host_mem[id]) < 0,
			"unregistered the primary's memory on GPU %d", id);
	}
	/* Device creation is the primary's: a child cannot be added here. */
	CHECK(rte_gpu_add_child("mp_child", 0, 1) < 0, "child added in a secondary");
}

static void
secondary_close_own_state(void)
{
	unsigned int refs = fake_cuda_live_primary_refs();

	CHECK_EQ(refs, NB_GPUS);
	CHECK(rte_gpu_close(0) == 0, "close GPU 0: %s", rte_strerror(rte_errno));
	CHECK_EQ(fake_cuda_live_primary_refs(), refs - 1);
	CHECK(!rte_gpu_is_valid(0), "GPU 0 still valid here after close");
	/* GPU 1 still works in this process. */
	CHECK(rte_gpu_is_valid(1), "GPU 1 lost");
}

static int
run_secondary(char **argv)
{
	int16_t id;

	for (id = 0; id < NB_GPUS; id++) {
		if (sscanf(argv[5 + 2 * id], "%p", &gpu_mem[id]) != 1 ||
				sscanf(argv[6 + 2 * id], "%p", &host_mem[id]) != 1) {
			fprintf(stderr, "secondary: bad pointer arguments\n");
			return 2;
		}
	}
	if (eal_start(argv[0], argv[2], true) < 0) {
		printf("FAIL secondary eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	CHECK_CASE(secondary_sees_primary_devices);
	CHECK_CASE(secondary_own_memory);
	CHECK_CASE(secondary_leaves_primary_memory);
	CHECK_CASE(secondary_close_own_state);
	/* Closes GPU 1 through the vdev bus. */
	rte_eal_cleanup();
	CHECK_EQ(fake_cuda_live_primary_refs(), 0);
	return check_finish("driver_mp secondary");
}

/* ---- the primary ----------------------------------------------------------- */

static int
start_secondary(void)
{
	char **argv = prog_argv;
	char ptrs[2 * NB_GPUS][32];
	char *child_argv[6 + 2 * NB_GPUS];
	int status;
	pid_t pid;
	int i;

	child_argv[0] = argv[0];
	child_argv[1] = argv[1];
	child_argv[2] = argv[2];
	child_argv[3] = (char *)"secondary";
	child_argv[4] = (char *)"-";
	for (i = 0; i < NB_GPUS; i++) {
		snprintf(ptrs[2 * i], sizeof(ptrs[0]), "%p", gpu_mem[i]);
		snprintf(ptrs[2 * i + 1], sizeof(ptrs[0]), "%p", host_mem[i]);
		child_argv[5 + 2 * i] = ptrs[2 * i];
		child_argv[6 + 2 * i] = ptrs[2 * i + 1];
	}
	child_argv[5 + 2 * NB_GPUS] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* A fresh process: EAL cannot start twice in one. */
		execv("/proc/self/exe", child_argv);
		fprintf(stderr, "exec: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	if (!WIFEXITED(status)) {
		fprintf(stderr, "secondary killed by signal %d\n",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		return -1;
	}
	return WEXITSTATUS(status);
}

static void
primary_with_secondary(void)
{
	int16_t id;
	size_t i;
	int rc;

	CHECK_EQ(rte_gpu_count_avail(), NB_GPUS);
	for (id = 0; id < NB_GPUS; id++) {
		gpu_mem[id] = rte_gpu_mem_alloc(id, MEM_SIZE, 0);
		host_mem[id] = malloc(MEM_SIZE);
		CHECK(gpu_mem[id] != NULL && host_mem[id] != NULL, "GPU %d memory", id);
		if (gpu_mem[id] == NULL || host_mem[id] == NULL)
			return;
		/* The fake's device memory is host memory: written directly. */
		for (i = 0; i < MEM_SIZE; i++)
			((uint8_t *)gpu_mem[id])[i] = (uint8_t)(i * 7 + (size_t)id);
		CHECK(rte_gpu_mem_register(id, MEM_SIZE, host_mem[id]) == 0,
			"register on GPU %d", id);
	}

	rc = start_secondary();
	CHECK(rc == 0, "secondary exited with %d", rc);

	CHECK_EQ(fake_cuda_live_allocs(), NB_GPUS);
	CHECK_EQ(fake_cuda_live_registrations(), NB_GPUS);
	CHECK_EQ(fake_cuda_live_primary_refs(), NB_GPUS);
	for (id = 0; id < NB_GPUS; id++) {
		void *p;

		CHECK(rte_gpu_is_valid(id), "GPU %d gone after the secondary", id);
		CHECK(pattern_intact(gpu_mem[id], id), "GPU %d memory changed", id);
		CHECK(fake_cuda_is_registered(host_mem[id], MEM_SIZE),
			"GPU %d registration lost", id);
		p = rte_gpu_mem_alloc(id, MEM_SIZE, 0);
		CHECK(p != NULL, "alloc on GPU %d after the secondary", id);
		if (p != NULL)
			CHECK(rte_gpu_mem_free(id, p) == 0, "free on GPU %d", id);
		CHECK(rte_gpu_mem_unregister(id, host_mem[id]) == 0,
			"unregister on GPU %d", id);
		CHECK(rte_gpu_mem_free(id, gpu_mem[id]) == 0, "free on GPU %d", id);
		free(host_mem[id]);
		CHECK(rte_gpu_close(id) == 0, "close GPU %d", id);
	}
	CHECK_EQ(fake_cuda_live_allocs(), 0);
	CHECK_EQ(fake_cuda_live_registrations(), 0);
	CHECK_EQ(fake_cuda_live_primary_refs(), 0);
}

int
main(int argc, char **argv)
{
	if (argc == 5 + 2 * NB_GPUS && strcmp(argv[3], "secondary") == 0) {
		setenv("GPU_CUDA_LIBCUDA", argv[1], 1);
		return run_secondary(argv);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s FAKE_LIBCUDA FILE_PREFIX\n", argv[0]);
		return 2;
	}
	if (no_hugepages() != NULL) {
		printf("SKIP: %s; a DPDK 22.11 secondary process cannot attach to --no-huge memory\n",
			no_hugepages());
		return EXIT_SKIP;
	}
	setenv("GPU_CUDA_LIBCUDA", argv[1], 1);
	prog_argv = argv;
	/* Also keeps the linked driver (its constructors) in the program. */
	printf("# %s\n", rte_pmd_gpu_cuda_version());
	if (eal_start(argv[0], argv[2], false) < 0) {
		printf("FAIL eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	CHECK_CASE(primary_with_secondary);
	rte_eal_cleanup();
	return check_finish("driver_mp");
}
