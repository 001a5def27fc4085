/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_kvargs.h>
#include <rte_pci.h>

#include "cuda_devargs.h"
#include "cuda_log.h"
#include "cuda_reg_cache.h"

static int
parse_dev(const char *dev_name, const char *value, struct gpu_cuda_devargs *out)
{
	struct rte_pci_addr addr;
	char *end;
	long ordinal;

	if (value[0] >= '0' && value[0] <= '9' && strchr(value, ':') == NULL) {
		errno = 0;
		ordinal = strtol(value, &end, 10);
		if (errno != 0 || *end != '\0' || ordinal < 0 || ordinal > 65535) {
			CUDA_LOG(ERR, "%s: devarg %s=%s is not a CUDA device ordinal",
				dev_name, GPU_CUDA_DEVARG_DEV, value);
			return -EINVAL;
		}
		out->ordinal = (int)ordinal;
	} else {
		if (rte_pci_addr_parse(value, &addr) != 0) {
			CUDA_LOG(ERR, "%s: devarg %s=%s is neither a CUDA device ordinal nor a PCI address (DDDD:BB:DD.F)",
				dev_name, GPU_CUDA_DEVARG_DEV, value);
			return -EINVAL;
		}
		out->ordinal = -1;
		rte_pci_device_name(&addr, out->bus_id, sizeof(out->bus_id));
	}
	out->has_dev = true;
	return 0;
}

static int
parse_bool(const char *dev_name, const char *key, const char *value, bool *out)
{
	if (strcmp(value, "1") == 0 || strcmp(value, "on") == 0 ||
			strcmp(value, "yes") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(value, "0") == 0 || strcmp(value, "off") == 0 ||
			strcmp(value, "no") == 0) {
		*out = false;
		return 0;
	}
	CUDA_LOG(ERR, "%s: devarg %s=%s is not a boolean (0/1, on/off, yes/no)",
		dev_name, key, value);
	return -EINVAL;
}

/* Bytes, with an optional K, M or G suffix (powers of 1024). */
static int
parse_size(const char *dev_name, const char *key, const char *value,
		size_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 0);
	if (end != value && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'k': case 'K': shift = 10; end++; break;
		case 'm': case 'M': shift = 20; end++; break;
		case 'g': case 'G': shift = 30; end++; break;
		default: break;
		}
	}
	if (errno != 0 || end == value || *end != '\0' || value[0] == '-' ||
			v == 0 || v > (SIZE_MAX >> shift)) {
		CUDA_LOG(ERR, "%s: devarg %s=%s is not a size in bytes above 0 (suffix K, M or G allowed)",
			dev_name, key, value);
		return -EINVAL;
	}
	*out = (size_t)v << shift;
	return 0;
}

int
gpu_cuda_devargs_parse(const char *dev_name, const char *args, bool allow_dev,
		struct gpu_cuda_devargs *out)
{
	struct rte_kvargs *kv;
	unsigned int i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->ordinal = 0;
	out->gdrcopy = true;
	out->reg_cache_max = GPU_CUDA_REG_CACHE_DEFAULT_MAX;
	if (args == NULL || args[0] == '\0')
		return 0;

	/* Parsed without a key list so that an unknown key can be named. */
	kv = rte_kvargs_parse(args, NULL);
	if (kv == NULL) {
		CUDA_LOG(ERR, "%s: cannot parse devargs \"%s\" (expected key=value[,key=value])",
			dev_name, args);
		return -EINVAL;
	}
	for (i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;
		const char *value = kv->pairs[i].value;

		if (value == NULL || value[0] == '\0') {
			CUDA_LOG(ERR, "%s: devarg %s has no value", dev_name, key);
			ret = -EINVAL;
		} else if (rte_kvargs_count(kv, key) > 1) {
			/* Which one was meant is a guess: refused, not the
			 * last one silently taken. */
			CUDA_LOG(ERR, "%s: devarg %s given %u times; give it once",
				dev_name, key, rte_kvargs_count(kv, key));
			ret = -EINVAL;
		} else if (strcmp(key, GPU_CUDA_DEVARG_DEV) == 0 && allow_dev) {
			ret = parse_dev(dev_name, value, out);
		} else if (strcmp(key, GPU_CUDA_DEVARG_GDRCOPY) == 0) {
			ret = parse_bool(dev_name, key, value, &out->gdrcopy);
		} else if (strcmp(key, GPU_CUDA_DEVARG_REG_CACHE) == 0) {
			ret = parse_bool(dev_name, key, value, &out->reg_cache);
		} else if (strcmp(key, GPU_CUDA_DEVARG_REG_CACHE_MAX) == 0) {
			ret = parse_size(dev_name, key, value, &out->reg_cache_max);
		} else {
			CUDA_LOG(ERR, "%s: unknown devarg \"%s\" (valid: %s%s)",
				dev_name, key,
				allow_dev ? GPU_CUDA_DEVARG_DEV ", " : "",
				GPU_CUDA_DEVARG_GDRCOPY ", " GPU_CUDA_DEVARG_REG_CACHE
				", " GPU_CUDA_DEVARG_REG_CACHE_MAX);
			ret = -EINVAL;
		}
	}
	rte_kvargs_free(kv);
	return ret;
}
