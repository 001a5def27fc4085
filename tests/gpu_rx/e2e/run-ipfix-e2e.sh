#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# One flow-export case of dpdk-gpu-rx over net_pcap (meson test): known
# flows (gpurx-e2e-genflows: FIN/RST ends, idle gaps and long flows over a
# compressed 240 s timeline, replayed with the file's timestamps) exported
# as IPFIX, read back by a real collector (nfdump's nfcapd), by libfixbuf
# from the IPFIX file and as a TCP collector, and checked record by record
# against gpurx-flowref (the same rules computed the plain way) and the
# app's own counts.
#
# Usage: run-ipfix-e2e.sh CASE APP BUILD_E2E_DIR WORKDIR [APP_MODE_ARGS...]
# CASE: nfcapd | burst | tcp | unreachable | ring-full | bad-args | dense |
# ports
# APP: dpdk-gpu-rx; for ring-full, which sets a test switch, the test
# variant dpdk-gpu-rx-test.
# BUILD_E2E_DIR holds gpurx-e2e-genflows, gpurx-flowref, gpurx-ipfix-read.
# APP_MODE_ARGS: how to process (default --cpu); the GPU e2e script passes
# --mem MODE ..., with in the environment GPU_RX_IPFIX_EAL (EAL memory and
# device options, default "--no-huge -m 512 --no-pci") and, for --mem gpu,
# PORT=net_gpudma0 (which keeps no file timestamps: --ts none then, and the
# reference has every packet at time 0); GPU_RX_IPFIX_QUEUES=N (2 to 16):
# N RX queues, each replaying the flows of its own file (gpurx-flowref
# --split: a flow on one queue, as RSS keeps it), for queues on N GPUs.
# Exit: 0 pass, 1 fail, 77 skipped (no nfcapd/nfdump: apt-get install nfdump).
set -u

case_name=$1 app=$2 bin=$3 work=$4
shift 4
[ $# -gt 0 ] || set -- --cpu
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
in=$work/flows.pcap
npkts=$("$bin/gpurx-e2e-genflows" "$in" 7 | sed -n 's/^\([0-9]*\) packets.*/\1/p')
[ -n "$npkts" ] || { echo "FAIL: cannot generate $in"; exit 1; }
port_kind=${PORT:-net_pcap0}
queues=${GPU_RX_IPFIX_QUEUES:-1}
case $queues in [1-9]|1[0-6]) ;; *) echo "FAIL: GPU_RX_IPFIX_QUEUES=$queues: 1 to 16"; exit 1 ;; esac
# A main lcore and one per queue; with fewer CPUs than that they share.
lcores="-l 0-$queues"
[ "$(nproc)" -gt "$queues" ] ||
	lcores="--lcores (0-$queues)@(0-$(($(nproc) - 1)))"
# net_gpudma keeps no file timestamps: there the packets' time is 0.
ts="--ts port"
[ "$port_kind" = net_pcap0 ] || ts="--ts none"
# A loopback port of our own for the collector.
cport=$((20000 + $$ % 20000))

eal() {
	echo ${GPU_RX_IPFIX_EAL:---no-huge -m 512 --no-pci} --no-shconf \
		--file-prefix "gpurx-ipfix-$case_name-$$" $lcores \
		--log-level=lib.eal:warning ${GPU_RX_EAL_EXTRA:-}
}

# run_app NAME APP_ARGS...: the app on the flows, its output in NAME.txt.
run_app() {
	name=$1
	shift
	rx="rx_pcap=$in"
	if [ "$queues" -gt 1 ]; then
		files= rx=
		q=0
		while [ "$q" -lt "$queues" ]; do
			files="$files $in.q$q"
			rx="${rx:+$rx,}rx_pcap=$in.q$q"
			q=$((q + 1))
		done
		# shellcheck disable=SC2086
		"$bin/gpurx-flowref" --split "$in" $files ||
			{ echo "FAIL: cannot split $in"; rc=1; return 1; }
		set -- "$@" --queues "$queues"
	fi
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "$port_kind,$rx" -- "$@" --quiet \
		--idle-exit 500 $ts --json "$work/$name.json" \
		> "$work/$name.txt" 2>&1
	rc=$?
	cat "$work/$name.txt"
	return $rc
}

# want IDLE ACTIVE LINGER: the records the reference computes.
want() {
	if [ "$port_kind" = net_pcap0 ]; then
		"$bin/gpurx-flowref" "$in" "$1" "$2" "$3" 1 0 > "$work/want.csv"
	else
		# Every packet at time 0: nothing ends before the end.
		"$bin/gpurx-flowref" "$in" "$1" "$2" "$3" 1 0 --time-zero \
			> "$work/want.csv"
	fi
}

cmp_flows() {
	python3 "$here/flowcmp.py" --want "$work/want.csv" "$@"
}

# file_matches IPFIX [FLOWCMP_ARGS...]: the IPFIX file read back cleanly by
# libfixbuf, against the records of the default timeouts.
file_matches() {
	f=$1
	shift
	"$bin/gpurx-ipfix-read" "$f" > "$f.csv" ||
		{ echo "FAIL: libfixbuf cannot read $f back cleanly"; return 1; }
	want 15 60 1 || return 1
	cmp_flows --got "$f.csv" "$@"
}

# nfdump's collector on our port, into $work/nf (nfpid); a skip without it.
start_nfcapd() {
	command -v nfcapd > /dev/null && command -v nfdump > /dev/null ||
		{ echo "SKIP: nfcapd/nfdump not installed (apt-get install nfdump)"; exit 77; }
	mkdir -p "$work/nf"
	nfcapd -w "$work/nf" -b 127.0.0.1 -p $cport -t 3600 \
		> "$work/nfcapd.log" 2>&1 &
	nfpid=$!
	# Whatever happens, the collector does not outlive the test.
	trap 'kill $nfpid 2> /dev/null' EXIT
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		grep -q "Startup" "$work/nfcapd.log" && break
		sleep 0.2
	done
	sleep 0.2
	kill -0 $nfpid 2> /dev/null ||
		{ cat "$work/nfcapd.log"; echo "FAIL: nfcapd did not start"; exit 1; }
}

# await_collector PID READY_FILE: a collector started in the background,
# killed on exit whatever happens, waited for until it says it listens.
await_collector() {
	# shellcheck disable=SC2064
	trap "kill $1 2> /dev/null" EXIT
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "$2" ] && break
		sleep 0.2
	done
}

# The app done: nfcapd writes its file and ends.
stop_nfcapd() {
	sleep 0.3
	kill -TERM $nfpid
	wait $nfpid
}

mode_args="$*"
case $case_name in
nfcapd)
	start_nfcapd
	# shellcheck disable=SC2086
	run_app run $mode_args --ipfix "127.0.0.1:$cport" \
		--ipfix-file "$work/out.ipfix"
	rc_app=$rc
	stop_nfcapd
	[ "$rc_app" -eq 0 ] || { echo "FAIL: exit $rc_app"; exit 1; }
	grep -q "flow export: udp://127.0.0.1:$cport and file" "$work/run.txt" ||
		{ echo "FAIL: no flow export line"; exit 1; }
	TZ=UTC nfdump -R "$work/nf" -q -o csv > "$work/nfdump.csv" ||
		{ echo "FAIL: nfdump cannot read what nfcapd wrote"; exit 1; }
	nfdump -R "$work/nf" -I > "$work/nfdump-info.txt" || exit 1
	grep -q "^Sequence failures: 0$" "$work/nfdump-info.txt" ||
		{ cat "$work/nfdump-info.txt"; echo "FAIL: nfcapd saw sequence failures"; exit 1; }
	min=""
	[ "$port_kind" = net_pcap0 ] && min=--min=idle=150,active=30,eof=60,exit=5
	# shellcheck disable=SC2086
	file_matches "$work/out.ipfix" --nfdump "$work/nfdump.csv" \
		--json "$work/run.json" $min || exit 1
	# UDP's pacing said at start, and where its loss shows at the end.
	grep -q "^flow export: over UDP at most 100000 records/s" "$work/run.txt" &&
		grep -q "UDP: records lost on the way .* sequence check" \
			"$work/run.txt" ||
		{ echo "FAIL: the UDP pacing or loss note is missing"; exit 1; }
	# ICMP type.code as nfdump -o long shows it: echo requests (8.0 and
	# ICMPv6 128.0) and a host unreachable (3.1) among the flows.
	nfdump -R "$work/nf" -q -o long > "$work/nfdump-long.txt" || exit 1
	for tc in "ICMP .*:8\.0 " "ICMP .*:3\.1 " "ICMP6 .*\.128\.0 "; do
		grep -q "$tc" "$work/nfdump-long.txt" ||
			{ echo "FAIL: nfdump -o long shows no '$tc'"; exit 1; }
	done
	# The exporter's statistics (options record) last in the file: every
	# record counted, nothing ignored or lost.
	"$bin/gpurx-ipfix-read" "$work/out.ipfix" > /dev/null \
		2> "$work/stats.txt" || exit 1
	recs=$(grep -c . "$work/out.ipfix.csv")
	grep "^stats:" "$work/stats.txt" | tail -n 1 | grep -q \
		"^stats: domain 1, messages [1-9][0-9]*, records $recs, octets [1-9][0-9]*, ignored packets 0, not sent 0$" ||
		{ cat "$work/stats.txt"; echo "FAIL: no final statistics record of $recs records"; exit 1; }
	echo "PASS: nfcapd collected every record the reference computes (ICMP type and code, MACs, TOS too), as the IPFIX file holds them, with the exporter's statistics"
	;;
burst)
	# 20,000 one-packet flows, every record at exit at once, to nfcapd
	# over UDP at the default --ipfix-rate: none lost (unpaced, or at
	# the 1.6 M records/s paced before, nfcapd on a loaded 2-core machine
	# got under half of them).
	"$bin/gpurx-e2e-genflows" --many 20000 "$in" > /dev/null ||
		{ echo "FAIL: cannot generate $in"; exit 1; }
	start_nfcapd
	# shellcheck disable=SC2086
	run_app run $mode_args --ipfix "127.0.0.1:$cport" > /dev/null
	rc_app=$rc
	stop_nfcapd
	[ "$rc_app" -eq 0 ] || { cat "$work/run.txt"; echo "FAIL: exit $rc_app"; exit 1; }
	nfdump -R "$work/nf" -I > "$work/nfdump-info.txt" || exit 1
	grep -q "^Flows: 20000$" "$work/nfdump-info.txt" &&
		grep -q "^Sequence failures: 0$" "$work/nfdump-info.txt" ||
		{ cat "$work/nfdump-info.txt"; echo "FAIL: nfcapd lost records of the burst"; exit 1; }
	echo "PASS: a burst of 20000 records at exit, every one in nfcapd"
	;;
tcp)
	# A TCP collector (libfixbuf's reader), other timeouts, domain 7.
	"$bin/gpurx-ipfix-read" --tcp $cport "$work/ready" > "$work/tcp.csv" \
		2> "$work/reader.log" &
	rpid=$!
	await_collector $rpid "$work/ready"
	# shellcheck disable=SC2086
	run_app run $mode_args --ipfix "tcp://127.0.0.1:$cport" \
		--flow-idle 5 --flow-active 20 --flow-linger 0.5 --ipfix-domain 7
	rc_app=$rc
	wait $rpid
	rc_read=$?
	cat "$work/reader.log"
	[ "$rc_app" -eq 0 ] || { echo "FAIL: exit $rc_app"; exit 1; }
	[ "$rc_read" -eq 0 ] || { echo "FAIL: the TCP collector failed ($rc_read)"; exit 1; }
	want 5 20 0.5 || exit 1
	sed 's/^1,/7,/' "$work/want.csv" > "$work/want7.csv" &&
		mv "$work/want7.csv" "$work/want.csv"
	cmp_flows --got "$work/tcp.csv" --json "$work/run.json" || exit 1
	echo "PASS: over TCP, every record as the reference computes it"
	;;
unreachable)
	# Nobody listens: UDP and TCP say so and count, the run goes on to
	# the end at full speed, and the file next to them is whole.
	for proto in udp tcp; do
		# shellcheck disable=SC2086
		run_app "run-$proto" $mode_args --ipfix "$proto://127.0.0.1:$cport" \
			--ipfix-file "$work/out-$proto.ipfix"
		[ "$rc" -eq 0 ] || { echo "FAIL: $proto: exit $rc"; exit 1; }
		grep -q "warning: flow export to $proto://127.0.0.1:$cport: .*records lost so far" \
			"$work/run-$proto.txt" || { echo "FAIL: $proto: no warning"; exit 1; }
		lost=$(sed -n "s/.*-> $proto:\/\/127.0.0.1:$cport: [0-9]* messages, \([0-9]*\) records lost.*/\1/p" \
			"$work/run-$proto.txt")
		[ -n "$lost" ] && [ "$lost" -gt 0 ] ||
			{ echo "FAIL: $proto: no records counted lost"; exit 1; }
		grep -q "^received: *$npkts packets" "$work/run-$proto.txt" ||
			{ echo "FAIL: $proto: not every packet received"; exit 1; }
		file_matches "$work/out-$proto.ipfix" || exit 1
	done
	echo "PASS: an unreachable collector (UDP, TCP): said, counted, the run and the file whole"
	;;
dense)
	# Few flows sending at ticks seconds apart (genflows --dense): one
	# flow's record boundaries (idle, FIN then the same ports again) a
	# few packets apart, several in one GPU chunk, where its lanes are
	# decided together and records start and end within the group.
	"$bin/gpurx-e2e-genflows" --dense "$in" 7 > /dev/null ||
		{ echo "FAIL: cannot generate $in"; exit 1; }
	# shellcheck disable=SC2086
	run_app run $mode_args --ipfix-file "$work/out.ipfix" \
		--flow-idle 15 --flow-active 30 --flow-linger 1
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	"$bin/gpurx-ipfix-read" "$work/out.ipfix" > "$work/out.csv" ||
		{ echo "FAIL: libfixbuf cannot read the file back cleanly"; exit 1; }
	want 15 30 1 || exit 1
	min=""
	[ "$port_kind" = net_pcap0 ] && min=--min=idle=30,eof=10
	# shellcheck disable=SC2086
	cmp_flows --got "$work/out.csv" --json "$work/run.json" $min || exit 1
	echo "PASS: record boundaries a few packets apart, every record as the reference computes it"
	;;
ports)
	# Two ports in one run (--port 1,0: port index and port id differ),
	# port 1 replaying the flows port 0 replays and 2000 more: each
	# 5-tuple of port 0's file is a flow on each port, so two records.
	# Each port's records in their own observation domain (--ipfix-domain
	# 5: port P's is 5 + P) with its id as ingressInterface, every field
	# as gpurx-flowref computes for that port's file alone; in the file
	# and over UDP; each domain's sequence numbers counting its own data
	# records, its own templates and statistics. --ts none: every record
	# ends at exit, so the records do not hang on how the two ports'
	# replays interleave. The 2000 flows end in one batch of port 1,
	# through the encoder threads; over UDP at the default pacing, which
	# a loaded machine's collector keeps up with.
	"$bin/gpurx-e2e-genflows" --many 2000 "$work/many.pcap" 100000 > /dev/null ||
		{ echo "FAIL: cannot generate $work/many.pcap"; exit 1; }
	python3 - "$in" "$work/many.pcap" "$work/both.pcap" <<'PY' ||
import sys
# Two pcaps of one link type, the second's records after the first's.
a, b = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
assert a[:24] == b[:24], 'pcap headers differ'
open(sys.argv[3], 'wb').write(a + b[24:])
PY
		{ echo "FAIL: cannot join the pcaps"; exit 1; }
	python3 - "$cport" "$work/udp.ipfix" "$work/udp.ready" <<'PY' &
import socket, sys
# A UDP collector that keeps each datagram (one IPFIX message): their
# bytes in order are an IPFIX file. Ends 2 s after the last.
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(('127.0.0.1', int(sys.argv[1])))
open(sys.argv[3], 'w').close()
out, got = open(sys.argv[2], 'wb'), False
s.settimeout(60)
while True:
    try:
        d = s.recv(65535)
    except socket.timeout:
        break
    out.write(d)
    if not got:
        got = True
        s.settimeout(2)
out.close()
PY
	upid=$!
	await_collector $upid "$work/udp.ready"
	plc="-l 0-2"
	[ "$(nproc)" -lt 3 ] && plc="--lcores 0@0,1@0,2@1"
	# shellcheck disable=SC2046,SC2086
	"$app" $(eal | sed "s/-l 0-1/$plc/") --vdev "$port_kind,rx_pcap=$in" \
		--vdev "net_pcap1,rx_pcap=$work/both.pcap" -- $mode_args \
		--port 1,0 --quiet --idle-exit 500 --ts none --ipfix-domain 5 \
		--ipfix-file "$work/out.ipfix" --ipfix "127.0.0.1:$cport" \
		--json "$work/run.json" > "$work/run.txt" 2>&1
	rc=$?
	cat "$work/run.txt"
	wait $upid
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	grep -q "^flow export: udp://127.0.0.1:$cport and file .*, observation domains 6 (port 1), 5 (port 0);" \
		"$work/run.txt" || { echo "FAIL: the flow export line names no domain per port"; exit 1; }
	"$bin/gpurx-flowref" "$in" 15 60 1 5 0 --time-zero > "$work/want.csv" &&
		"$bin/gpurx-flowref" "$work/both.pcap" 15 60 1 6 1 --time-zero \
			>> "$work/want.csv" || { echo "FAIL: gpurx-flowref"; exit 1; }
	for f in out udp; do
		"$bin/gpurx-ipfix-read" "$work/$f.ipfix" > "$work/$f.csv" \
			2> "$work/$f-stats.txt" ||
			{ cat "$work/$f-stats.txt"; echo "FAIL: libfixbuf cannot read $f.ipfix back cleanly"; exit 1; }
		cmp_flows --got "$work/$f.csv" --json "$work/run.json" ||
			{ echo "FAIL: the records of $f.ipfix"; exit 1; }
		# Each domain's last statistics record: its own records.
		for d in 5 6; do
			n=$(grep -c "^$d," "$work/want.csv")
			grep "^stats: domain $d," "$work/$f-stats.txt" | tail -n 1 | grep -q \
				"^stats: domain $d, messages [1-9][0-9]*, records $n, octets [1-9][0-9]*, ignored packets 0, not sent 0$" ||
				{ cat "$work/$f-stats.txt"; echo "FAIL: $f.ipfix: no final statistics record of domain $d with its $n records"; exit 1; }
		done
		python3 - "$work/$f.ipfix" <<'PY' ||
import struct, sys
# Every message: version 10, one of the two domains; its sequence number
# the data records of its domain's messages before it (the flow records,
# 71 or 95 bytes, and the statistics, 44); each domain's templates
# before its first data set.
LEN = {0x100: 71, 0x101: 95, 0x102: 44}
data = open(sys.argv[1], 'rb').read()
pos, seq, tmpl, n = 0, {}, set(), 0
while pos < len(data):
    ver, ln, _, sq, dom = struct.unpack_from('>HHIII', data, pos)
    assert ver == 10 and dom in (5, 6), (pos, ver, dom)
    assert sq == seq.get(dom, 0), 'domain %d: message at %d has sequence %d, want %d' % (dom, pos, sq, seq.get(dom, 0))
    o = pos + 16
    while o < pos + ln:
        sid, sl = struct.unpack_from('>HH', data, o)
        if sid in (2, 3):
            tmpl.add(dom)
        else:
            assert dom in tmpl, 'domain %d: data before its templates' % dom
            seq[dom] = seq.get(dom, 0) + (sl - 4) // LEN[sid]
        o += sl
    pos += ln
    n += 1
assert sorted(seq) == [5, 6], seq
print('sequence: %d messages, data records by domain %s' % (n, seq))
PY
			{ echo "FAIL: $f.ipfix: the sequence numbers of a domain"; exit 1; }
	done
	# The top flows name their port.
	grep -q "^ *1\. port [01] " "$work/run.txt" ||
		{ echo "FAIL: the top flows name no port"; exit 1; }
	echo "PASS: two ports: each port's records in its own domain with its ingressInterface, as the reference computes them per port, in the file and over UDP, sequence numbers per domain"
	;;
ring-full)
	# A 4-record ring: flows wait in the table while it is full (counted,
	# said); no packet is lost from the records, only their boundaries
	# move.
	# shellcheck disable=SC2086
	GPURX_TEST_FLOW_RING=4 run_app run $mode_args \
		--ipfix-file "$work/out.ipfix"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	grep -q "warning: flow export: the export ring (4 records) was full" \
		"$work/run.txt" || { echo "FAIL: no ring-full warning"; exit 1; }
	full=$(sed -n 's/.*"flow_export".*"ring_full": \([0-9]*\).*/\1/p' \
		"$work/run.json")
	[ -n "$full" ] && [ "$full" -gt 0 ] ||
		{ echo "FAIL: ring_full not counted"; exit 1; }
	file_matches "$work/out.ipfix" --per-key-bytes || exit 1
	echo "PASS: a full ring: $full ends put off, every packet in a record"
	;;
bad-args)
	# Exit 2 naming the option, before anything starts.
	for a in "--ipfix collector" "--ipfix sctp://h:4739" "--ipfix h:0" \
			"--ipfix h:65536" "--ipfix [::1:4739" "--ipfix ::1:4739" \
			"--ipfix :4739" "--ipfix h:47x" "--flow-idle 0" \
			"--flow-active -1" "--flow-linger x" "--ipfix-domain y" \
			"--flow-idle 1e-12" "--flow-idle inf" "--flow-active nan" \
			"--ipfix-domain 0x10" "--count 010x" "--duration inf" \
			"--ipfix-rate x" "--ipfix-rate 10G" "--ipfix-rate -1" \
			"--ipfix-rate 1001M" "--ipfix-rate k" "--ipfix-rate 1.5k" \
			"--ipfix-rate 99999999999999999999" "--ipfix-encoders 0" \
			"--ipfix-encoders 17" "--ipfix-encoders x" \
			"--ipfix-encoders -1"; do
		# shellcheck disable=SC2086
		set -- $a
		run_app bad "$1" "$2" > /dev/null
		[ "$rc" -eq 2 ] || { echo "FAIL: $a: exit $rc, expected 2"; exit 1; }
		grep -q -- "^$1: " "$work/bad.txt" ||
			{ echo "FAIL: $a: the message does not name $1"; exit 1; }
	done
	run_app bad --ipfix-file "" > /dev/null
	[ "$rc" -eq 2 ] || { echo "FAIL: --ipfix-file '': exit $rc"; exit 1; }
	# Valid syntax the run cannot use: said at start, exit 1, no traffic.
	# shellcheck disable=SC2086
	run_app bad $mode_args --ipfix no-such-host.invalid:4739 > /dev/null
	[ "$rc" -eq 1 ] && grep -q "cannot resolve no-such-host.invalid" "$work/bad.txt" ||
		{ echo "FAIL: unresolvable collector: exit $rc"; exit 1; }
	# shellcheck disable=SC2086
	run_app bad $mode_args --ipfix-file "$work/no/such/dir/x.ipfix" > /dev/null
	[ "$rc" -eq 1 ] && grep -q -- "--ipfix-file $work/no/such/dir/x.ipfix: No such file" \
		"$work/bad.txt" || { echo "FAIL: unwritable --ipfix-file: exit $rc"; exit 1; }
	echo "PASS: bad --ipfix, --ipfix-file and flow timeout arguments refused, saying why"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
