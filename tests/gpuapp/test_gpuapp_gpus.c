/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --gpus (lib/gpuapp/gpuapp_gpus.h): the grammar and its errors, all,
 * explicit lists, and auto over a sysfs tree of its own made in a
 * temporary directory: a NIC on one PCIe switch with GPU 1, a NIC on
 * NUMA node 1 with GPU 2 but no switch shared, a NIC near nothing, and a
 * virtual port. No EAL, no GPU.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>

#include "gpuapp_gpus.h"
#include "check.h"

static char root[] = "/tmp/gpuapp-gpus-XXXXXX";

static void
mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

/* A device at devices/HIER/ADDR, its bus link and its numa_node. */
static void
add_dev(const char *hier, const char *addr, int numa)
{
	char rel[256], path[512], target[512];
	FILE *f;

	snprintf(rel, sizeof(rel), "devices/%s/%s", hier, addr);
	mkdirs(rel);
	mkdirs("bus/pci/devices");
	snprintf(path, sizeof(path), "%s/%s/numa_node", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL, "%s", path);
	if (f == NULL)
		return;
	fprintf(f, "%d\n", numa);
	fclose(f);
	snprintf(target, sizeof(target), "../../../%s", rel);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", root, addr);
	CHECK(symlink(target, path) == 0, "%s", path);
}

static void
topo(struct gpuapp_gpus_topo *t)
{
	static const char *const pci[] = {
		"0000:01:00.0", "0000:05:00.0", "0000:85:00.0",
	};

	memset(t, 0, sizeof(*t));
	for (unsigned int i = 0; i < RTE_DIM(pci); i++) {
		t->gpu[i].id = (int16_t)i;
		t->gpu[i].numa = -1;
		snprintf(t->gpu[i].pci, sizeof(t->gpu[i].pci), "%s", pci[i]);
	}
	t->n = RTE_DIM(pci);
}

static void
make_tree(void)
{
	CHECK(mkdtemp(root) != NULL, "mkdtemp");
	/* GPU 0 alone under a root port of node 0. */
	add_dev("pci0000:00/0000:00:01.0", "0000:01:00.0", 0);
	/* GPU 1 and NIC A on one switch: up 02:00.0, down 03:00.0 and
	 * 03:01.0. */
	add_dev("pci0000:00/0000:00:02.0/0000:02:00.0/0000:03:00.0",
		"0000:05:00.0", 0);
	add_dev("pci0000:00/0000:00:02.0/0000:02:00.0/0000:03:01.0",
		"0000:06:00.0", 0);
	/* GPU 2 and NIC B on node 1, under different root ports. */
	add_dev("pci0000:80/0000:80:01.0", "0000:85:00.0", 1);
	add_dev("pci0000:80/0000:80:03.0", "0000:87:00.0", 1);
	/* NIC C on node 3, where no GPU is. */
	add_dev("pci0000:c0/0000:c0:01.0", "0000:c1:00.0", 3);
}

static int
resolve(const char *list, const char *pci, uint16_t nq, int16_t *gpu,
		char *err, size_t errlen)
{
	struct gpuapp_gpus g;
	struct gpuapp_gpus_topo t;
	int rc;

	rc = gpuapp_gpus_parse(list, &g, err, errlen);
	if (rc != 0)
		return rc;
	topo(&t);
	return gpuapp_gpus_resolve(&g, &t, root, 0, pci, -1, nq, gpu, err,
		errlen);
}

static void
auto_topology(void)
{
	int16_t gpu[4];
	char err[256];

	CHECK_EQ(resolve("auto", "0000:06:00.0", 4, gpu, err, sizeof(err)), 0);
	for (int q = 0; q < 4; q++)
		CHECK(gpu[q] == 1, "same switch: queue %d on GPU %d", q, gpu[q]);
	CHECK_EQ(resolve("auto", "0000:87:00.0", 2, gpu, err, sizeof(err)), 0);
	CHECK(gpu[0] == 2 && gpu[1] == 2, "same NUMA node: GPU %d", gpu[0]);
	CHECK_EQ(resolve("auto", "0000:c1:00.0", 2, gpu, err, sizeof(err)), 0);
	CHECK(gpu[0] == 0 && gpu[1] == 0, "nothing near: GPU %d", gpu[0]);
	CHECK_EQ(resolve("auto", NULL, 2, gpu, err, sizeof(err)), 0);
	CHECK(gpu[0] == 0 && gpu[1] == 0, "virtual port: GPU %d", gpu[0]);
	/* A device sysfs does not know: taken as virtual. */
	CHECK_EQ(resolve("auto", "0000:99:00.0", 1, gpu, err, sizeof(err)), 0);
	CHECK_EQ(gpu[0], 0);
}

static void
all_and_lists(void)
{
	int16_t gpu[5];
	char err[256];

	CHECK_EQ(resolve("all", "0000:06:00.0", 5, gpu, err, sizeof(err)), 0);
	for (int q = 0; q < 5; q++)
		CHECK(gpu[q] == q % 3, "all: queue %d on GPU %d", q, gpu[q]);
	CHECK_EQ(resolve("2,0", NULL, 5, gpu, err, sizeof(err)), 0);
	for (int q = 0; q < 5; q++)
		CHECK(gpu[q] == (q % 2 ? 0 : 2), "cycle: queue %d on GPU %d", q,
			gpu[q]);
	/* Named queues over the cycle, the rest near the port (GPU 1). */
	CHECK_EQ(resolve("q1=2,p0:q3=0,q3=2", "0000:06:00.0", 5, gpu, err,
		sizeof(err)), 0);
	CHECK(gpu[0] == 1 && gpu[1] == 2 && gpu[2] == 1 && gpu[3] == 0 &&
		gpu[4] == 1, "rules: %d %d %d %d %d", gpu[0], gpu[1], gpu[2],
		gpu[3], gpu[4]);
	CHECK_EQ(resolve("p0=2,q0=1,0", NULL, 3, gpu, err, sizeof(err)), 0);
	CHECK(gpu[0] == 1 && gpu[1] == 2 && gpu[2] == 2, "port rule: %d %d %d",
		gpu[0], gpu[1], gpu[2]);
	/* Another port's rules leave port 0 to the cycle. */
	CHECK_EQ(resolve("p1=2,1", NULL, 2, gpu, err, sizeof(err)), 0);
	CHECK(gpu[0] == 1 && gpu[1] == 1, "other port: %d %d", gpu[0], gpu[1]);
}

static void
expect_error(const char *list, int rc_want, const char *says)
{
	int16_t gpu[4];
	char err[256] = "";
	int rc = resolve(list, NULL, 4, gpu, err, sizeof(err));

	CHECK(rc == rc_want, "'%s': rc %d, not %d", list, rc, rc_want);
	CHECK(strncmp(err, "--gpus: ", 8) == 0 && strstr(err, says) != NULL,
		"'%s': said '%s', not '%s'", list, err, says);
}

static void
errors(void)
{
	struct gpuapp_gpus g;
	struct gpuapp_gpus_topo t;
	int16_t gpu[1];
	char err[256];

	expect_error("", -EINVAL, "empty");
	expect_error("0,,1", -EINVAL, "empty item");
	expect_error("3", -EINVAL, "GPU 3: no such gpudev GPU");
	expect_error("q0=7", -EINVAL, "GPU 7");
	expect_error("q4=0", -EINVAL, "q4: port 0 has 4 queues");
	expect_error("p0:q9=1", -EINVAL, "q9");
	expect_error("q1=0,q1=1", -EINVAL, "'q1=1': that queue is already");
	expect_error("p0=0,p0=1", -EINVAL, "that port is already");
	expect_error("gpu0", -EINVAL, "'gpu0': not G");
	expect_error("0x1", -EINVAL, "'0x1'");
	expect_error("q1", -EINVAL, "'q1'");
	expect_error("p0:1", -EINVAL, "'p0:1'");
	expect_error("-1", -EINVAL, "'-1'");
	expect_error("99999", -EINVAL, "'99999'");
	expect_error("q70000=0", -EINVAL, "'q70000=0'");
	expect_error("Auto", -EINVAL, "'Auto'");
	CHECK_EQ(gpuapp_gpus_parse("auto", &g, err, sizeof(err)), 0);
	memset(&t, 0, sizeof(t));
	CHECK_EQ(gpuapp_gpus_resolve(&g, &t, root, 0, NULL, -1, 1, gpu, err,
		sizeof(err)), -ENODEV);
	CHECK(strstr(err, "no GPU") != NULL, "%s", err);
}

int
main(void)
{
	char cmd[600];
	int rc;

	make_tree();
	CHECK_CASE(auto_topology);
	CHECK_CASE(all_and_lists);
	CHECK_CASE(errors);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	rc = system(cmd);
	CHECK_EQ(rc, 0);
	return check_finish("gpuapp_gpus");
}
