/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cross_gpu: with two or more GPUs, each GPU's memory allocated, registered,
 * mapped for the CPU, filled and freed while another GPU is the caller's
 * current device. The driver works in the owner's context and must leave
 * the caller's current device as it was; where the GPUs reach each other
 * (peer access, NVLink or PCIe), the current GPU's kernel fills the other's
 * memory. Then a child device on every parent at once, each listed under
 * its own parent only.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_gpudev.h>

#include <cuda_runtime_api.h>

#include "gpu_kernels.h"
#include "pattern.h"
#include "tg.h"

#define CROSS_SIZE (1 << 20)

/* The caller's device must survive every driver call. */
static enum tg_status
still_current(struct tg_result *res, int cuda_dev, const char *after)
{
	int cur = -1;

	if (cudaGetDevice(&cur) != cudaSuccess)
		return tg_fail(res, "cudaGetDevice after %s failed", after);
	if (cur != cuda_dev)
		return tg_fail(res, "after %s the current device is %d, not %d",
			after, cur, cuda_dev);
	return TG_PASS;
}

/* The owner's memory read back through a copy, whoever is current. */
static enum tg_status
check_copy(const struct tg_env *a, struct tg_result *res, const void *gpu,
		uint8_t *host, uint64_t seed, const char *what)
{
	size_t nbad, first;
	cudaError_t cerr;

	cerr = cudaMemcpy(host, gpu, CROSS_SIZE, cudaMemcpyDefault);
	if (cerr != cudaSuccess)
		return tg_fail(res, "gpu %d: copy back (%s): %s", a->dev_id, what,
			cudaGetErrorString(cerr));
	nbad = tg_pattern_check(host, CROSS_SIZE, seed, &first);
	if (nbad != 0)
		return tg_fail(res, "gpu %d: %s: %zu bytes differ, first at %zu",
			a->dev_id, what, nbad, first);
	return TG_PASS;
}

/* A's memory with B current. */
static enum tg_status
pair(const struct tg_env *a, const struct tg_env *b, struct tg_result *res,
		bool *peer_used)
{
	uint64_t seed = tg_seed(a, 400 + (uint64_t)b->dev_id);
	uint8_t *host = NULL, *cpu;
	uint64_t now = seed;	/* the pattern the memory holds */
	int can_peer = 0;
	cudaError_t cerr;
	void *gpu;
	int e;

	cerr = cudaSetDevice(b->cuda_dev);
	if (cerr != cudaSuccess)
		return tg_fail(res, "cudaSetDevice(%d): %s", b->cuda_dev,
			cudaGetErrorString(cerr));
	host = malloc(CROSS_SIZE);
	if (host == NULL)
		return tg_fail(res, "malloc: out of memory");
	gpu = rte_gpu_mem_alloc(a->dev_id, CROSS_SIZE, 0);
	if (gpu == NULL) {
		tg_fail(res, "gpu %d: alloc with gpu %d current: %s", a->dev_id,
			b->dev_id, tg_errno_str(rte_errno));
		goto out;
	}
	if (still_current(res, b->cuda_dev, "alloc") != TG_PASS)
		goto free_gpu;
	{
		struct cudaPointerAttributes attr;

		cerr = cudaPointerGetAttributes(&attr, gpu);
		if (cerr != cudaSuccess || attr.device != a->cuda_dev) {
			tg_fail(res, "gpu %d: memory allocated with gpu %d current is on CUDA device %d, not %d",
				a->dev_id, b->dev_id,
				cerr == cudaSuccess ? attr.device : -1, a->cuda_dev);
			goto free_gpu;
		}
	}

	/* Written and read by copies: no peer access needed. */
	tg_pattern_fill(host, CROSS_SIZE, seed);
	cerr = cudaMemcpy(gpu, host, CROSS_SIZE, cudaMemcpyDefault);
	if (cerr != cudaSuccess) {
		tg_fail(res, "gpu %d: copy in: %s", a->dev_id,
			cudaGetErrorString(cerr));
		goto free_gpu;
	}
	if (check_copy(a, res, gpu, host, seed, "copy") != TG_PASS)
		goto free_gpu;

	/* Filled by the current GPU's kernel, through peer access. */
	if (cudaDeviceCanAccessPeer(&can_peer, b->cuda_dev, a->cuda_dev) ==
			cudaSuccess && can_peer) {
		cerr = cudaDeviceEnablePeerAccess(a->cuda_dev, 0);
		if (cerr == cudaErrorPeerAccessAlreadyEnabled) {
			(void)cudaGetLastError();
			cerr = cudaSuccess;
		}
		if (cerr != cudaSuccess) {
			tg_fail(res, "peer access %d->%d: %s", b->cuda_dev,
				a->cuda_dev, cudaGetErrorString(cerr));
			goto free_gpu;
		}
		e = gk_pattern_fill(gpu, CROSS_SIZE, seed + 1);
		if (e != 0) {
			tg_fail(res, "gpu %d: fill kernel on gpu %d: %s", a->dev_id,
				b->dev_id, gpucuda_strerror(e));
			goto free_gpu;
		}
		if (check_copy(a, res, gpu, host, seed + 1, "peer kernel") != TG_PASS)
			goto free_gpu;
		now = seed + 1;
		*peer_used = true;
	}

	/* A CPU mapping where GDRCopy is present. */
	cpu = rte_gpu_mem_cpu_map(a->dev_id, CROSS_SIZE, gpu);
	if (cpu != NULL) {
		size_t nbad, first;

		nbad = tg_pattern_check(cpu, CROSS_SIZE, now, &first);
		if (nbad != 0)
			tg_fail(res, "gpu %d: CPU mapping shows %zu bytes differing, first at %zu",
				a->dev_id, nbad, first);
		if (rte_gpu_mem_cpu_unmap(a->dev_id, gpu) != 0)
			tg_fail(res, "gpu %d: cpu_unmap with gpu %d current: %s",
				a->dev_id, b->dev_id, tg_errno_str(rte_errno));
		if (res->status != TG_PASS ||
				still_current(res, b->cuda_dev, "cpu_map") != TG_PASS)
			goto free_gpu;
	} else {
		e = rte_errno < 0 ? -rte_errno : rte_errno;
		if (e != ENOTSUP && e != EPERM) {
			tg_fail(res, "gpu %d: cpu_map with gpu %d current: %s",
				a->dev_id, b->dev_id, tg_errno_str(rte_errno));
			goto free_gpu;
		}
	}

	/* Host memory registered with A, used by copies from B. */
	if (rte_gpu_mem_register(a->dev_id, CROSS_SIZE, host) != 0) {
		tg_fail(res, "gpu %d: register with gpu %d current: %s", a->dev_id,
			b->dev_id, tg_errno_str(rte_errno));
		goto free_gpu;
	}
	if (still_current(res, b->cuda_dev, "register") == TG_PASS) {
		cerr = cudaMemcpy(host, gpu, CROSS_SIZE, cudaMemcpyDefault);
		if (cerr != cudaSuccess)
			tg_fail(res, "gpu %d: copy into registered memory: %s",
				a->dev_id, cudaGetErrorString(cerr));
	}
	if (rte_gpu_mem_unregister(a->dev_id, host) != 0)
		tg_fail(res, "gpu %d: unregister with gpu %d current: %s",
			a->dev_id, b->dev_id, tg_errno_str(rte_errno));
	else if (res->status == TG_PASS)
		still_current(res, b->cuda_dev, "unregister");

free_gpu:
	if (rte_gpu_mem_free(a->dev_id, gpu) != 0)
		tg_fail(res, "gpu %d: free with gpu %d current: %s", a->dev_id,
			b->dev_id, tg_errno_str(rte_errno));
	else if (res->status == TG_PASS)
		still_current(res, b->cuda_dev, "free");
out:
	free(host);
	return res->status;
}

/* A child on every parent at once: each listed under its parent only. */
static enum tg_status
children(const struct tg_env *envs, unsigned int n, struct tg_result *res)
{
	int16_t child[RTE_GPU_DEFAULT_MAX];
	unsigned int i, added = 0;
	char name[64];

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "tg_cross_child_%d", envs[i].dev_id);
		/* Each child names its parent's context: no context of its own. */
		child[i] = rte_gpu_add_child(name, envs[i].dev_id, envs[i].info.context);
		if (child[i] < 0) {
			tg_fail(res, "gpu %d: add_child: %s", envs[i].dev_id,
				tg_errno_str(rte_errno));
			break;
		}
		added++;
	}
	for (i = 0; i < added && res->status == TG_PASS; i++) {
		int16_t id, seen = 0;

		RTE_GPU_FOREACH_CHILD(id, envs[i].dev_id) {
			seen++;
			if (id != child[i])
				tg_fail(res, "gpu %d lists child %d, not only its own %d",
					envs[i].dev_id, id, child[i]);
		}
		if (seen != 1 && res->status == TG_PASS)
			tg_fail(res, "gpu %d lists %d children, not 1",
				envs[i].dev_id, seen);
	}
	for (i = added; i > 0; i--)
		if (rte_gpu_close(child[i - 1]) != 0)
			tg_fail(res, "close child %d: %s", child[i - 1],
				tg_errno_str(rte_errno));
	return res->status;
}

enum tg_status
tg_case_cross_gpu(const struct tg_env *envs, unsigned int n,
		struct tg_result *res)
{
	unsigned int i, j, pairs = 0;
	bool peer_used = false;
	cudaError_t cerr;

	if (n < 2)
		return tg_skip(res, "needs two GPUs, %u under test", n);
	if (n > RTE_GPU_DEFAULT_MAX)
		return tg_fail(res, "%u GPUs, more than gpudev's %d", n,
			RTE_GPU_DEFAULT_MAX);
	for (i = 0; i < n && res->status == TG_PASS; i++)
		for (j = 0; j < n && res->status == TG_PASS; j++)
			if (i != j && pair(&envs[i], &envs[j], res, &peer_used) == TG_PASS)
				pairs++;
	/* The first GPU current again, as the other cases expect. */
	cerr = cudaSetDevice(envs[0].cuda_dev);
	if (cerr != cudaSuccess)
		tg_fail(res, "cudaSetDevice(%d): %s", envs[0].cuda_dev,
			cudaGetErrorString(cerr));
	if (res->status != TG_PASS)
		return res->status;
	if (children(envs, n, res) != TG_PASS)
		return res->status;
	return tg_pass(res, "%u GPU pairs, %s, a child on each of %u parents",
		pairs, peer_used ? "peer kernels" : "no peer access", n);
}
