/* SPDX-License-Identifier: BSD-3-Clause */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>

#include "gpuapp_gpus.h"

static int
fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "--gpus: ");
	if (n < 0 || (size_t)n >= errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return rc;
}

/* A decimal number of at most max at *p, p moved past it: 0 or -1. */
static int
number(const char **p, long max, long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*v = strtol(*p, &end, 10);
	if (errno != 0 || *v > max)
		return -1;
	*p = end;
	return 0;
}

/* One item of LIST, n characters at s, into g. 0 or -EINVAL (said). */
static int
parse_item(const char *s, size_t n, struct gpuapp_gpus *g, char *err,
		size_t errlen)
{
	struct gpuapp_gpus_rule r = { .port = -1, .queue = -1 };
	char item[64];
	const char *p = item;
	long v;

	if (n == 0)
		return fail(err, errlen, -EINVAL, "empty item in the list");
	if (n >= sizeof(item))
		return fail(err, errlen, -EINVAL, "item '%.*s...' too long",
			20, s);
	memcpy(item, s, n);
	item[n] = '\0';
	if (*p == 'p') {
		p++;
		if (number(&p, UINT16_MAX, &v) != 0)
			goto bad;
		r.port = (int32_t)v;
		if (*p == ':') {
			p++;
			if (*p != 'q')
				goto bad;
		}
	}
	if (*p == 'q') {
		p++;
		if (number(&p, UINT16_MAX, &v) != 0)
			goto bad;
		r.queue = (int32_t)v;
	}
	if (r.port >= 0 || r.queue >= 0) {
		if (*p++ != '=')
			goto bad;
	}
	if (number(&p, INT16_MAX, &v) != 0 || *p != '\0')
		goto bad;
	r.gpu = (int16_t)v;
	if (r.port < 0 && r.queue < 0) {
		if (g->n_cycle == GPUAPP_GPUS_MAX_ITEMS)
			return fail(err, errlen, -EINVAL, "more than %d GPUs listed",
				GPUAPP_GPUS_MAX_ITEMS);
		g->cycle[g->n_cycle++] = r.gpu;
		return 0;
	}
	for (unsigned int i = 0; i < g->n_rules; i++)
		if (g->rules[i].port == r.port && g->rules[i].queue == r.queue)
			return fail(err, errlen, -EINVAL, "'%s': that %s is "
				"already mapped", item, r.queue < 0 ? "port" :
				"queue");
	if (g->n_rules == GPUAPP_GPUS_MAX_ITEMS)
		return fail(err, errlen, -EINVAL, "more than %d items",
			GPUAPP_GPUS_MAX_ITEMS);
	g->rules[g->n_rules++] = r;
	return 0;
bad:
	return fail(err, errlen, -EINVAL, "'%s': not G, qQ=G, pP=G nor "
		"pP:qQ=G (G a gpudev id, P a port, Q a queue)", item);
}

int
gpuapp_gpus_parse(const char *s, struct gpuapp_gpus *g, char *err,
		size_t errlen)
{
	memset(g, 0, sizeof(*g));
	if (s == NULL || *s == '\0')
		return fail(err, errlen, -EINVAL, "empty; give auto, all or a "
			"list such as 0,1");
	if (strcmp(s, "auto") == 0)
		return 0;
	if (strcmp(s, "all") == 0) {
		g->mode = GPUAPP_GPUS_ALL;
		return 0;
	}
	g->mode = GPUAPP_GPUS_LIST;
	for (;;) {
		size_t n = strcspn(s, ",");
		int rc = parse_item(s, n, g, err, errlen);

		if (rc != 0) {
			memset(g, 0, sizeof(*g));
			return rc;
		}
		if (s[n] == '\0')
			return 0;
		s += n + 1;
	}
}

static int
is_pci_addr(const char *s)
{
	unsigned int d, b, dev, fn;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &fn, &tail) == 4;
}

int
gpuapp_gpus_topo_read(struct gpuapp_gpus_topo *t)
{
	int16_t id;

	memset(t, 0, sizeof(*t));
	/* Parents only: a child is a context on a GPU already listed. */
	RTE_GPU_FOREACH_PARENT(id) {
		struct rte_gpu_info info;

		if (t->n == GPUAPP_GPUS_MAX)
			break;
		if (rte_gpu_info_get(id, &info) != 0)
			continue;
		t->gpu[t->n].id = id;
		t->gpu[t->n].numa = info.numa_node;
		if (info.name != NULL && is_pci_addr(info.name))
			snprintf(t->gpu[t->n].pci, sizeof(t->gpu[0].pci), "%s",
				info.name);
		t->n++;
	}
	return 0;
}

/* The device's place in sysfs: its resolved path, or "" where it has
 * none there. */
static void
dev_path(const char *sysfs, const char *pci, char *out, size_t len)
{
	char link[PATH_MAX];
	char *rp;

	out[0] = '\0';
	if (pci == NULL || pci[0] == '\0')
		return;
	if (snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", sysfs,
			pci) >= (int)sizeof(link))
		return;
	rp = realpath(link, NULL);
	if (rp == NULL)
		return;
	snprintf(out, len, "%s", rp);
	free(rp);
}

/* numa_node below the device's sysfs path, or dflt. */
static int
dev_numa(const char *path, int dflt)
{
	char file[PATH_MAX + 16];
	FILE *f;
	int v;

	if (path[0] == '\0')
		return dflt;
	snprintf(file, sizeof(file), "%s/numa_node", path);
	f = fopen(file, "r");
	if (f == NULL)
		return dflt;
	if (fscanf(f, "%d", &v) != 1 || v < 0)
		v = dflt;
	fclose(f);
	return v;
}

/*
 * How many PCI bridges the two devices' paths share (the components
 * before the devices themselves that are PCI addresses): 0 when only
 * the host bridge, or nothing, is shared.
 */
static int
shared_bridges(const char *a, const char *b)
{
	const char *pa = a, *pb = b;
	int n = 0;

	if (a[0] == '\0' || b[0] == '\0')
		return 0;
	for (;;) {
		size_t la = strcspn(pa, "/"), lb = strcspn(pb, "/");
		char comp[64];

		if (la != lb || memcmp(pa, pb, la) != 0)
			return n;
		/* The last component is a device, never a shared bridge. */
		if (pa[la] == '\0' || pb[lb] == '\0')
			return n;
		if (la > 0 && la < sizeof(comp)) {
			memcpy(comp, pa, la);
			comp[la] = '\0';
			if (is_pci_addr(comp))
				n++;
		}
		pa += la + 1;
		pb += lb + 1;
	}
}

/* auto's choice for the port: the index in t. */
static unsigned int
closest(const struct gpuapp_gpus_topo *t, const char *sysfs,
		const char *port_pci, int port_numa)
{
	char pp[PATH_MAX], gp[PATH_MAX];
	unsigned int best = 0;
	int best_br = 0, numa_hit = -1;

	if (port_pci == NULL || port_pci[0] == '\0')
		return 0;
	dev_path(sysfs, port_pci, pp, sizeof(pp));
	port_numa = dev_numa(pp, port_numa);
	for (unsigned int i = 0; i < t->n; i++) {
		int br;

		dev_path(sysfs, t->gpu[i].pci, gp, sizeof(gp));
		br = shared_bridges(pp, gp);
		if (br > best_br) {
			best_br = br;
			best = i;
		}
		if (numa_hit < 0 && port_numa >= 0 &&
				dev_numa(gp, t->gpu[i].numa) == port_numa)
			numa_hit = (int)i;
	}
	if (best_br > 0)
		return best;
	return numa_hit >= 0 ? (unsigned int)numa_hit : 0;
}

/* 0 when t has GPU id, else -EINVAL (said). */
static int
topo_has(const struct gpuapp_gpus_topo *t, int16_t id, char *err,
		size_t errlen)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (t->gpu[i].id == id)
			return 0;
	return fail(err, errlen, -EINVAL, "GPU %d: no such gpudev GPU (%u "
		"probed, ids %d..%d)", id, t->n, t->gpu[0].id,
		t->gpu[t->n - 1].id);
}

/* The most specific rule for the queue, or NULL. */
static const struct gpuapp_gpus_rule *
rule_for(const struct gpuapp_gpus *g, uint16_t port, uint16_t q)
{
	const struct gpuapp_gpus_rule *pq = NULL, *qo = NULL, *po = NULL;

	for (unsigned int i = 0; i < g->n_rules; i++) {
		const struct gpuapp_gpus_rule *r = &g->rules[i];

		if (r->port == port && r->queue == q)
			pq = r;
		else if (r->port < 0 && r->queue == q)
			qo = r;
		else if (r->port == port && r->queue < 0)
			po = r;
	}
	return pq != NULL ? pq : qo != NULL ? qo : po;
}

int
gpuapp_gpus_resolve(const struct gpuapp_gpus *g,
		const struct gpuapp_gpus_topo *t, const char *sysfs, uint16_t port,
		const char *port_pci, int port_numa, uint16_t nq, int16_t *gpu,
		char *err, size_t errlen)
{
	unsigned int near;

	if (t->n == 0)
		return fail(err, errlen, -ENODEV, "no GPU probed by DPDK gpudev");
	for (unsigned int i = 0; i < g->n_cycle; i++)
		if (topo_has(t, g->cycle[i], err, errlen) != 0)
			return -EINVAL;
	for (unsigned int i = 0; i < g->n_rules; i++) {
		const struct gpuapp_gpus_rule *r = &g->rules[i];

		if (topo_has(t, r->gpu, err, errlen) != 0)
			return -EINVAL;
		/* A queue named for this port, or for every port, must be
		 * one of this port's: a typo must not go unmapped. */
		if (r->queue >= nq && (r->port < 0 || r->port == port))
			return fail(err, errlen, -EINVAL, "q%d: port %u has %u "
				"queue%s (0..%u)", r->queue, port, nq, nq == 1 ? "" :
				"s", nq - 1);
	}
	near = closest(t, sysfs, port_pci, port_numa);
	for (uint16_t q = 0; q < nq; q++) {
		const struct gpuapp_gpus_rule *r = rule_for(g, port, q);

		if (g->mode == GPUAPP_GPUS_ALL)
			gpu[q] = t->gpu[q % t->n].id;
		else if (r != NULL)
			gpu[q] = r->gpu;
		else if (g->n_cycle > 0)
			gpu[q] = g->cycle[q % g->n_cycle];
		else
			gpu[q] = t->gpu[near].id;
	}
	return 0;
}

int
gpuapp_gpus_map_port(const struct gpuapp_gpus *g, const char *sysfs,
		uint16_t port, uint16_t nq, int16_t *gpu, char *err,
		size_t errlen)
{
	struct gpuapp_gpus_topo t;
	struct rte_eth_dev_info di;
	const char *pci = NULL;
	int rc;

	rc = rte_eth_dev_info_get(port, &di);
	if (rc != 0)
		return fail(err, errlen, rc, "port %u: %s", port,
			rte_strerror(-rc));
	if (di.device != NULL && rte_dev_bus(di.device) != NULL &&
			strcmp(rte_bus_name(rte_dev_bus(di.device)), "pci") == 0)
		pci = rte_dev_name(di.device);
	gpuapp_gpus_topo_read(&t);
	return gpuapp_gpus_resolve(g, &t, sysfs, port, pci,
		rte_eth_dev_socket_id(port), nq, gpu, err, errlen);
}
