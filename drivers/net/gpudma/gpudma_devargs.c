/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_kvargs.h>

#include "gpudma.h"

#define KEY_RX_PCAP "rx_pcap"
#define KEY_TX_PCAP "tx_pcap"
#define KEY_LOOP "loop"
#define KEY_QUEUES "queues"
#define KEY_GPU "gpu"
#define KEY_BATCH "batch"
#define KEY_SCATTER "scatter"
#define KEY_RX_PORT "rx_port"
#define KEY_BULK "bulk"
#define KEY_FILL "fill"
#define KEY_FILL_IDLE "fill_idle_us"

static const char *const valid_keys[] = {
	KEY_RX_PCAP, KEY_TX_PCAP, KEY_LOOP, KEY_QUEUES, KEY_GPU, KEY_BATCH,
	KEY_SCATTER, KEY_RX_PORT, KEY_BULK, KEY_FILL, KEY_FILL_IDLE, NULL
};

static int
parse_path(const char *key, const char *value, void *opaque)
{
	char *dst = opaque;

	if (value == NULL || value[0] == '\0' || strlen(value) >= PATH_MAX) {
		GPUDMA_LOG(ERR, "devarg %s: a file path is needed (got \"%s\")",
			key, value != NULL ? value : "");
		return -EINVAL;
	}
	strcpy(dst, value);
	return 0;
}

/* An unsigned decimal in [min, max]. */
static int
parse_uint(const char *key, const char *value, uint64_t min, uint64_t max,
		uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (value == NULL || value[0] < '0' || value[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	GPUDMA_LOG(ERR, "devarg %s: \"%s\" is not a number from %" PRIu64 " to %" PRIu64,
		key, value != NULL ? value : "", min, max);
	return -EINVAL;
}

static int
parse_loop(const char *key, const char *value, void *opaque)
{
	return parse_uint(key, value, 0, UINT64_MAX, opaque);
}

static int
parse_queues(const char *key, const char *value, void *opaque)
{
	uint64_t v;
	int ret = parse_uint(key, value, 1, GPUDMA_MAX_QUEUES, &v);

	if (ret == 0)
		*(uint16_t *)opaque = (uint16_t)v;
	return ret;
}

static int
parse_gpu(const char *key, const char *value, void *opaque)
{
	uint64_t v;
	int ret = parse_uint(key, value, 0, 1023, &v);

	if (ret == 0)
		*(int *)opaque = (int)v;
	return ret;
}

static int
parse_bool(const char *key, const char *value, void *opaque)
{
	uint64_t v;
	int ret = parse_uint(key, value, 0, 1, &v);

	if (ret == 0)
		*(bool *)opaque = v != 0;
	return ret;
}

/* Not 0: a kernel that never parks is what fill_idle_us exists to avoid
 * (gpudma_fill.h). */
static int
parse_fill_idle(const char *key, const char *value, void *opaque)
{
	return parse_uint(key, value, 1, GPUDMA_FILL_IDLE_MAX_US, opaque);
}

/* A port id or name; whether it exists is checked at probe. */
static int
parse_port(const char *key, const char *value, void *opaque)
{
	char *dst = opaque;

	if (value == NULL || value[0] == '\0' || strlen(value) >= 64) {
		GPUDMA_LOG(ERR, "devarg %s: a port id or name of at most 63 characters is needed (got \"%s\")",
			key, value != NULL ? value : "");
		return -EINVAL;
	}
	strcpy(dst, value);
	return 0;
}

/* 0, 1 or auto: batch= and bulk=, whose GPUDMA_*_OFF/ON/AUTO agree. */
static_assert(GPUDMA_BULK_OFF == GPUDMA_BATCH_OFF &&
	GPUDMA_BULK_ON == GPUDMA_BATCH_ON &&
	GPUDMA_BULK_AUTO == GPUDMA_BATCH_AUTO, "bulk= parsed as batch=");
static int
parse_batch(const char *key, const char *value, void *opaque)
{
	uint64_t v;

	if (value != NULL && strcmp(value, "auto") == 0) {
		*(int *)opaque = GPUDMA_BATCH_AUTO;
		return 0;
	}
	if (parse_uint(key, value, 0, 1, &v) != 0) {
		GPUDMA_LOG(ERR, "devarg %s: 0, 1 or auto", key);
		return -EINVAL;
	}
	*(int *)opaque = v != 0 ? GPUDMA_BATCH_ON : GPUDMA_BATCH_OFF;
	return 0;
}

static int
parse_fill(const char *key, const char *value, void *opaque)
{
	static const char *const names[] = {
		[GPUDMA_FILL_LAUNCH] = "launch",
		[GPUDMA_FILL_PERSISTENT] = "persistent",
	};
	unsigned int i;

	for (i = 0; value != NULL && i < RTE_DIM(names); i++) {
		if (strcmp(value, names[i]) == 0) {
			*(int *)opaque = (int)i;
			return 0;
		}
	}
	GPUDMA_LOG(ERR, "devarg %s: \"%s\" is not a fill mode (known: launch, persistent)",
		key, value != NULL ? value : "");
	return -EINVAL;
}

int
gpudma_args_parse(const char *params, struct gpudma_args *a)
{
	static const struct {
		const char *key;
		arg_handler_t fn;
		size_t off;
	} handlers[] = {
		{ KEY_RX_PCAP, parse_path, offsetof(struct gpudma_args, rx_pcap) },
		{ KEY_TX_PCAP, parse_path, offsetof(struct gpudma_args, tx_pcap) },
		{ KEY_LOOP, parse_loop, offsetof(struct gpudma_args, loop) },
		{ KEY_QUEUES, parse_queues, offsetof(struct gpudma_args, queues) },
		{ KEY_GPU, parse_gpu, offsetof(struct gpudma_args, gpu) },
		{ KEY_BATCH, parse_batch, offsetof(struct gpudma_args, batch) },
		{ KEY_SCATTER, parse_bool, offsetof(struct gpudma_args, scatter) },
		{ KEY_RX_PORT, parse_port, offsetof(struct gpudma_args, rx_port) },
		{ KEY_BULK, parse_batch, offsetof(struct gpudma_args, bulk) },
		{ KEY_FILL, parse_fill, offsetof(struct gpudma_args, fill) },
		{ KEY_FILL_IDLE, parse_fill_idle,
			offsetof(struct gpudma_args, fill_idle_us) },
	};
	struct rte_kvargs *kv;
	unsigned int i, j;
	int ret = 0;

	memset(a, 0, sizeof(*a));
	a->loop = 1;
	a->queues = 1;
	a->batch = GPUDMA_BATCH_AUTO;
	/* One kernel launch a burst fills GPU memory 17x (64 B) to 10x
	 * (1500 B) faster than copy-engine batches (doc/net_gpudma.md); it
	 * is loaded only once GPU memory is mapped. */
	a->scatter = true;
	a->bulk = GPUDMA_BULK_AUTO;
	/* The persistent kernel is exact on the H200 and faster at 64 B on
	 * 4 and 8 queues (1.16x, 1.46x), but its one block a queue reads
	 * 1500 B frames at 0.23-0.78 of the launches' rate, which the launched
	 * fill's bulk copies pass again (doc/net_gpudma.md). */
	a->fill = GPUDMA_FILL_LAUNCH;
	a->fill_idle_us = GPUDMA_FILL_IDLE_US;
	if (params == NULL || params[0] == '\0')
		return 0;
	/* Parsed without the key list so that an unknown key can be named:
	 * rte_kvargs_parse() with one only says the whole string is bad. */
	kv = rte_kvargs_parse(params, NULL);
	if (kv == NULL) {
		GPUDMA_LOG(ERR, "devargs \"%s\": not key=value[,key=value...]",
			params);
		return -EINVAL;
	}
	for (i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;

		for (j = 0; valid_keys[j] != NULL; j++)
			if (strcmp(key, valid_keys[j]) == 0)
				break;
		if (valid_keys[j] == NULL) {
			GPUDMA_LOG(ERR, "devarg %s: unknown key (known: rx_pcap, rx_port, tx_pcap, loop, queues, gpu, batch, scatter, bulk, fill, fill_idle_us)",
				key);
			ret = -EINVAL;
		} else if (rte_kvargs_count(kv, key) > 1) {
			GPUDMA_LOG(ERR, "devarg %s: given more than once", key);
			ret = -EINVAL;
		}
	}
	for (i = 0; i < RTE_DIM(handlers) && ret == 0; i++) {
		if (rte_kvargs_count(kv, handlers[i].key) == 0)
			continue;
		if (rte_kvargs_process(kv, handlers[i].key, handlers[i].fn,
				(char *)a + handlers[i].off) != 0)
			ret = -EINVAL;
	}
	if (ret == 0 && rte_kvargs_count(kv, KEY_FILL_IDLE) > 0 &&
			a->fill != GPUDMA_FILL_PERSISTENT) {
		GPUDMA_LOG(ERR, "devarg fill_idle_us: times the persistent fill kernel, which fill=persistent asks for");
		ret = -EINVAL;
	}
	/* One wire: a file or a port. loop replays the file only. */
	if (ret == 0 && rte_kvargs_count(kv, KEY_RX_PORT) > 0) {
		if (rte_kvargs_count(kv, KEY_RX_PCAP) > 0) {
			GPUDMA_LOG(ERR, "devarg rx_port: frames come from rx_pcap or from rx_port, not both");
			ret = -EINVAL;
		} else if (rte_kvargs_count(kv, KEY_LOOP) > 0) {
			GPUDMA_LOG(ERR, "devarg loop: replays rx_pcap, not frames from rx_port");
			ret = -EINVAL;
		}
	}
	/* The persistent kernel is the scatter kernel's, and reads every
	 * frame over PCIe itself (bulk=auto is off with it). */
	if (ret == 0 && a->fill == GPUDMA_FILL_PERSISTENT) {
		if (!a->scatter) {
			GPUDMA_LOG(ERR, "devarg fill: persistent runs the scatter kernel, which scatter=0 turns off");
			ret = -EINVAL;
		} else if (a->bulk == GPUDMA_BULK_ON) {
			GPUDMA_LOG(ERR, "devarg bulk: 1 is a copy-engine copy a burst, which fill=persistent does without (bulk=0 or auto)");
			ret = -EINVAL;
		}
	}
	rte_kvargs_free(kv);
	return ret;
}
