/* SPDX-License-Identifier: BSD-3-Clause */
/* tcpdump expressions the tests run over generated traffic. */
#ifndef GPURX_TEST_FILTERS_H
#define GPURX_TEST_FILTERS_H

static const char *const test_filters[] = {
	"",
	"tcp port 443",
	"net 10.0.0.0/8",
	"vlan and udp",
	/* libpcap cannot index tcp[] over IPv6: spell the offset out. */
	"ip6 and tcp and ip6[40 + 13] & tcp-syn != 0",
	"icmp or icmp6",
	"ip[6:2] & 0x1fff != 0",
	"greater 500",
	"ether host 00:11:22:33:44:55",
	"sctp",
	"udp portrange 1000-2000",
	"not ip",
	"len < 100",
	"tcp",
	"udp",
	"ip6",
	"arp",
	"host 192.168.1.3",
	"src net 172.16.0.0/12 and dst port 53",
	"ip6 net 2001:db8::/32",
	"vlan 100",
	"vlan and vlan",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
	"ip and ip[8] < 64",
	"ip[0] & 0xf > 5",
	"ether broadcast",
	"ether dst 02:00:00:00:00:01",
	"port 53 or port 123",
	"ip proto 47",
	"icmp[icmptype] = icmp-echo",
	"udp and udp[4:2] > 100",
	"ip6 and ip6[6] = 17",
	"less 64",
	"tcp dst portrange 1000-1500 or udp src port 8080",
	"ip multicast",
	"net 10.0.0.0/8 and (tcp or udp) and not port 22",
	"ip[2:2] > 576",
	"tcp[13] & 7 != 0",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x01010101",
	"vlan and ip6 and tcp",
	"ip proto 50 or ip6 proto 50",
	"ether[12:2] = 0x0806",
	"len >= 1000 and ip",
	"ip6 and udp port 53",
	"ether proto 0x88a8",
};

#define N_TEST_FILTERS (sizeof(test_filters) / sizeof(test_filters[0]))

#endif /* GPURX_TEST_FILTERS_H */
