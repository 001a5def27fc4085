/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Ports that replay a file (DPDK's net_pcap): the file is read through
 * once with libpcap before the run, because net_pcap passes a malformed
 * one on as packets. DPDK 22.11's net_pcap turned one record of caplen
 * 262145 into 16,384 empty packets and ended a cut-off file silently,
 * both with exit 0; libpcap names the fault.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "app.h"
#include "log.h"

struct file_check {
	uint16_t port;
	int bad;
	uint64_t records;	/* in all the files */
};

static int
check_one(const char *key, const char *path, void *arg)
{
	struct file_check *fc = arg;
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	uint64_t n = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline(path, err);
	if (p == NULL) {
		GPURX_LOG(ERR, "error: port %u (net_pcap): %s %s: %s\n",
			fc->port, key, path, err);
		fc->bad = 1;
		return 0;
	}
	while ((rc = pcap_next_ex(p, &h, &b)) == 1)
		n++;
	fc->records += n;
	if (rc == PCAP_ERROR) {
		GPURX_LOG(ERR, "error: port %u (net_pcap): %s %s: after %" PRIu64
			" good records: %s; net_pcap passes such a file on "
			"wrongly (as empty packets, or ending without a word), "
			"so the run stops here\n", fc->port, key,
			path, n, pcap_geterr(p));
		fc->bad = 1;
	}
	pcap_close(p);
	return 0;
}

/* net_pcap's infinite_rx: anything but 0 replays the files forever. */
static int
is_endless(const char *key, const char *value, void *arg)
{
	RTE_SET_USED(key);
	*(int *)arg |= value == NULL || strcmp(value, "0") != 0;
	return 0;
}

int
gpurx_port_file_check(struct gpurx_port *p)
{
	struct file_check fc = { .port = p->id };
	const struct rte_devargs *da;
	struct rte_eth_dev_info di;
	struct rte_kvargs *kv;
	int endless = 0;

	if (strcmp(p->driver, "net_pcap") != 0)
		return 0;
	if (rte_eth_dev_info_get(p->id, &di) != 0 || di.device == NULL)
		return 0;
	da = rte_dev_devargs(di.device);
	if (da == NULL || da->args == NULL || da->args[0] == '\0')
		return 0;
	kv = rte_kvargs_parse(da->args, NULL);
	if (kv == NULL)
		return 0;	/* net_pcap parsed them: nothing to add */
	if (rte_kvargs_process(kv, "rx_pcap", check_one, &fc) != 0)
		fc.bad = 1;
	/* Read once (net_pcap's default) the files end the run when their
	 * records are in; with infinite_rx they never end. Records of
	 * caplen 0 net_pcap delivers too, as empty packets. */
	if (!fc.bad && rte_kvargs_process(kv, "infinite_rx", is_endless,
			&endless) == 0 && !endless &&
			rte_kvargs_count(kv, "rx_iface") == 0 &&
			rte_kvargs_count(kv, "rx_iface_in") == 0)
		p->file_pkts = fc.records;
	rte_kvargs_free(kv);
	return fc.bad ? -1 : 0;
}

void
gpurx_port_file_warn(const struct gpurx_port *p, uint64_t ierrors)
{
	if (strcmp(p->driver, "net_pcap") == 0 && ierrors > 0)
		GPURX_LOG(WARNING, "warning: port %u (net_pcap) counted %" PRIu64
			" ierrors: records of its file were not delivered "
			"whole\n", p->id, ierrors);
}
