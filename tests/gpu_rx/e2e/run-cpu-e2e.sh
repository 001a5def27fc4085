#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# One end-to-end case of dpdk-gpu-rx --cpu over net_pcap (meson test).
# Usage: run-cpu-e2e.sh CASE APP GENPCAP CHECK WORKDIR [FILTER]
# CASE: filter | pcap-format | snaplen | bad-filter | sigint | count | no-gpu
#       | pool-per-queue | options | ts-port | short-chain | lo-capture
#       | mangle | gpudma | queues | queues-files | capture-full
#       | gpudma-split | setup-fail | stamps | bad-file | file-end
#       | split-options | telemetry | stdout | rotate | ports
# APP: dpdk-gpu-rx; for mangle, which sets a test switch, the test variant
# dpdk-gpu-rx-test (the shipped program has no test switches).
# Extra EAL options (e.g. -d plugin dirs) come from $GPU_RX_EAL_EXTRA.
set -u

case_name=$1 app=$2 gen=$3 check=$4 work=$5
filter=${6:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
in=$work/in.pcap
# One frame in 200 over 64 KiB, as a capture on Linux's loopback has them
# (an IP packet of 65535 bytes, 65549 or with a VLAN tag 65553 bytes).
# Longer ones do not cross net_pcap: DPDK 22.11 keeps the length in 16
# bits when it chains a frame (the short-chain case shows what then).
giants="200 65553"
# shellcheck disable=SC2086
"$gen" "$in" 1 3000 50 $giants || { echo "FAIL: cannot generate $in"; exit 1; }

# Debian's EAL loads its default plugin directory (RTE_EAL_PMD_PATH), so
# net_pcap needs no -d here.
eal() {
	echo --no-huge -m 512 --no-pci --no-shconf \
		--file-prefix "gpurx-e2e-$case_name-$$" -l 0-1 \
		--log-level=lib.eal:warning ${GPU_RX_EAL_EXTRA:-}
}

run_app() {
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --cpu --quiet \
		--idle-exit 500 "$@" > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	return $rc
}

mbufs_all_back() {
	grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/out.txt"
}

case $case_name in
filter)
	run_app --filter "$filter" --write "$work/out.pcapng" \
		--json "$work/out.json" || { echo "FAIL: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "$filter" 262144
	;;
pcap-format)
	run_app --filter "tcp or udp" --format pcap --write "$work/out.pcap" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	exec "$check" "$in" "$work/out.pcap" "tcp or udp" 262144
	;;
snaplen)
	run_app --filter "ip or ip6" --snaplen 100 --write "$work/out.pcapng" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "ip or ip6" 100
	;;
count)
	run_app --count 100 --write "$work/out.pcapng" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	grep -q "^stopped by: *--count reached" "$work/out.txt" ||
		{ echo "FAIL: not stopped by --count"; exit 1; }
	# -c counts matched packets, as tcpdump -c; the filter may follow
	# the options, as tcpdump's does; -w and -s are --write and
	# --snaplen.
	run_app -c 7 -s 100 -w "$work/c7.pcapng" udp and port 53 ||
		{ echo "FAIL: -c 7: exit $rc"; exit 1; }
	grep -Eq "^matched: +7$" "$work/out.txt" ||
		{ echo "FAIL: -c 7: matched is not 7"; exit 1; }
	"$check" "$in" "$work/c7.pcapng" "udp and port 53" 100 --first 7 ||
		{ echo "FAIL: -c 7: not the first 7 matches"; exit 1; }
	# --count-received is the received count, whatever the filter.
	run_app --count-received 100 --filter "udp and port 53" ||
		{ echo "FAIL: --count-received: exit $rc"; exit 1; }
	grep -Eq "^received: +100 packets" "$work/out.txt" ||
		{ echo "FAIL: --count-received 100: not 100 received"; exit 1; }
	run_app --filter udp tcp > /dev/null
	[ "$rc" -eq 2 ] && grep -q "the filter is given twice" "$work/out.txt" ||
		{ echo "FAIL: two filters: exit $rc"; exit 1; }
	# An endless port and 2 packets: the RX lcore reaches --count at
	# once, often before the main lcore looks; that is no start-up
	# failure (it was said so, in the summary and its JSON).
	for i in 1 2 3 4 5; do
		# shellcheck disable=SC2046
		"$app" $(eal) --vdev net_null0 -- --cpu --quiet --count 2 \
			--json "$work/null.json" > "$work/null.txt" 2>&1 ||
			{ cat "$work/null.txt"; echo "FAIL: net_null exit"; exit 1; }
		grep -q "^stopped by: *--count reached" "$work/null.txt" &&
			grep -q '"stopped_by": *"--count reached"' "$work/null.json" ||
			{ cat "$work/null.txt"; echo "FAIL: net_null run $i"; exit 1; }
	done
	# shellcheck disable=SC2086
	"$gen" "$work/first100.pcap" 1 100 50 $giants || exit 1
	exec "$check" "$work/first100.pcap" "$work/out.pcapng" "" 262144
	;;
bad-filter)
	run_app --filter "tcp port" --write "$work/out.pcapng"
	[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, expected 2"; exit 1; }
	grep -q "invalid filter" "$work/out.txt" ||
		{ echo "FAIL: no libpcap message"; exit 1; }
	[ ! -e "$work/out.pcapng" ] ||
		{ echo "FAIL: capture created for a bad filter"; exit 1; }
	echo "PASS: bad filter exits 2"
	;;
options)
	# Every numeric option out of its range: exit 2, and the message
	# names that option.
	for o in "snaplen 0" "count 0" "top 1001" "queues 0" "burst 513" \
			"ring-items 1" "port 65535" "idle-exit 0" "rxd 31" \
			"mbuf-cache 513" "mbufs 63" "flows 3" "stall-ms 3600001" \
			"split 8" "split 2064" "split 100" "split yes" \
			"mtu 67" "mtu 65536" "mtu big"; do
		# shellcheck disable=SC2086
		set -- $o
		run_app "--$1" "$2" > /dev/null
		[ "$rc" -eq 2 ] || { echo "FAIL: --$1 $2: exit $rc, expected 2"; exit 1; }
		grep -q -- "^--$1: " "$work/out.txt" ||
			{ echo "FAIL: --$1 $2: the message does not name --$1"; exit 1; }
	done
	# --mtu: the port's largest by default (net_null, no scatter: what
	# one mbuf holds), a value asked, or left; a port with no MTU to set
	# refuses a value (net_pcap: exit 1, said) but runs by default.
	# shellcheck disable=SC2046
	for m in "" "--mtu 1600" "--mtu keep"; do
		# shellcheck disable=SC2086
		"$app" $(eal) --vdev net_null0 -- --cpu --quiet --duration 0.2 $m \
			> "$work/mtu.txt" 2>&1 || { cat "$work/mtu.txt"; echo "FAIL: mtu '$m'"; exit 1; }
		case $m in
		"") grep -q "^mtu: port 0 set to 2030 (the largest one mbuf holds" "$work/mtu.txt" ;;
		*1600) grep -q "^mtu: port 0 set to 1600$" "$work/mtu.txt" ;;
		*) ! grep -q "^mtu:" "$work/mtu.txt" ;;
		esac || { cat "$work/mtu.txt"; echo "FAIL: mtu '$m': not as asked"; exit 1; }
	done
	run_app --mtu 9000 > /dev/null
	[ "$rc" -eq 1 ] && grep -q "^error: --mtu 9000: port 0 (net_pcap) refused it" "$work/out.txt" ||
		{ echo "FAIL: --mtu 9000 on net_pcap: exit $rc"; exit 1; }
	# The messages go through rte_log on app.gpu_rx, a logtype EAL
	# knows: --log-level filters them, the exit status stays.
	GPU_RX_EAL_EXTRA="${GPU_RX_EAL_EXTRA:-} --log-level=app.gpu_rx:critical" \
		run_app --snaplen 0 > /dev/null
	[ "$rc" -eq 2 ] || { echo "FAIL: quiet --snaplen 0: exit $rc, expected 2"; exit 1; }
	! grep -q -- "^--snaplen: " "$work/out.txt" ||
		{ echo "FAIL: --log-level=app.gpu_rx:critical did not filter the message"; exit 1; }
	GPU_RX_EAL_EXTRA="${GPU_RX_EAL_EXTRA:-} --log-level=app.gpu_rx:debug" \
		run_app --snaplen 0 > /dev/null
	grep -q -- "^--snaplen: '0' is not a number in \[1, 262144\]" "$work/out.txt" ||
		{ echo "FAIL: app.gpu_rx:debug: no --snaplen message"; exit 1; }
	# --version and --help without EAL: an EAL option it would refuse
	# does not stop them.
	"$app" --no-such-eal-option -- --version > "$work/ver.txt" 2>&1 &&
		grep -Eq "^dpdk-gpu-rx [0-9]+\.[0-9]+\.[0-9]+ \(DPDK " "$work/ver.txt" ||
		{ cat "$work/ver.txt"; echo "FAIL: --version without EAL"; exit 1; }
	"$app" --no-such-eal-option --help > "$work/help.txt" 2>&1 &&
		grep -q "^Usage: dpdk-gpu-rx .*filter expression" "$work/help.txt" &&
		grep -q -- "-c, --count N" "$work/help.txt" ||
		{ cat "$work/help.txt"; echo "FAIL: --help without EAL"; exit 1; }
	# --json where no file can be made: refused before the run (exit 2,
	# no packet received), naming the file and why.
	run_app --json "$work/no/such/dir/s.json" > /dev/null
	[ "$rc" -eq 2 ] || { echo "FAIL: --json into a missing directory: exit $rc"; exit 1; }
	grep -q "JSON to $work/no/such/dir/s.json: .*No such file or directory" \
		"$work/out.txt" || { echo "FAIL: no reason for the refused --json"; exit 1; }
	! grep -q "^received:" "$work/out.txt" ||
		{ echo "FAIL: ran before refusing --json"; exit 1; }
	# A per-lcore cache the pool cannot hold: refused, with the numbers.
	run_app --mbufs 100 --mbuf-cache 512 > /dev/null
	[ "$rc" -ne 0 ] || { echo "FAIL: --mbuf-cache 512 of 100 mbufs accepted"; exit 1; }
	grep -q "at most 2/3 of the pool's 100 mbufs" "$work/out.txt" ||
		{ echo "FAIL: no reason for the refused cache"; exit 1; }
	# The largest cache: runs, every mbuf back in the pool.
	run_app --mbuf-cache 512 > /dev/null || { echo "FAIL: --mbuf-cache 512: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	# It is the default where the pool holds four times it, else a
	# quarter of the pool.
	run_app > /dev/null || { echo "FAIL: default cache: exit $rc"; exit 1; }
	grep -q "per-lcore cache 512)" "$work/out.txt" ||
		{ echo "FAIL: the default cache is not 512"; grep '^memory' "$work/out.txt"; exit 1; }
	run_app --mbufs 1000 > /dev/null || { echo "FAIL: --mbufs 1000: exit $rc"; exit 1; }
	grep -q "per-lcore cache 250)" "$work/out.txt" ||
		{ echo "FAIL: the default cache of 1000 mbufs is not 250"; grep '^memory' "$work/out.txt"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	echo "PASS: options out of range refused by name; --log-level app.gpu_rx; --mbuf-cache"
	;;
pool-per-queue)
	# Two queues (the same file on each), a pool each: twice what one
	# queue receives, and every mbuf back in its own pool. Three lcores
	# on whatever CPUs there are.
	run_app || { echo "FAIL: one queue: exit $rc"; exit 1; }
	one=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/out.txt")
	# shellcheck disable=SC2046
	"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
		--vdev "net_pcap0,rx_pcap=$in,rx_pcap=$in" -- --cpu --quiet \
		--idle-exit 500 --queues 2 --pool-per-queue > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	grep -q "memory: 2 mbuf pool(s)" "$work/out.txt" ||
		{ echo "FAIL: not a pool per queue"; exit 1; }
	two=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/out.txt")
	[ -n "$one" ] && [ "$one" -gt 0 ] && [ "$two" = $((2 * one)) ] ||
		{ echo "FAIL: $two packets on two queues, $one on one"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	echo "PASS: a pool per queue, $two packets, every mbuf back"
	;;
queues)
	# Two queues (the same file on each) writing one capture: each
	# queue's packets in it, in the order of the file, are libpcap's
	# matches of the input, whole; the queues' chunks interleave. Three
	# lcores on whatever CPUs there are.
	f="tcp or udp"
	# shellcheck disable=SC2046
	"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
		--vdev "net_pcap0,rx_pcap=$in,rx_pcap=$in" -- --cpu --quiet \
		--idle-exit 500 --queues 2 --filter "$f" \
		--write "$work/out.pcapng" > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "$f" 262144 --queues 2
	;;
queues-files)
	# Two queues (the same file on each), a capture file per queue
	# (--write with %q): each file on its own is libpcap's matches of the
	# input, whole and in order; the pattern's own name is not created,
	# and the files hold what the run counts as captured. A bad pattern
	# is refused as a usage error, a file that cannot be created named.
	f="tcp or udp"
	# shellcheck disable=SC2046
	"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
		--vdev "net_pcap0,rx_pcap=$in,rx_pcap=$in" -- --cpu --quiet \
		--idle-exit 500 --queues 2 --filter "$f" --json "$work/out.json" \
		--write "$work/out-q%q.pcapng" > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	[ ! -e "$work/out-q%q.pcapng" ] || { echo "FAIL: the pattern's name was created"; exit 1; }
	total=0
	for q in 0 1; do
		"$check" "$in" "$work/out-q$q.pcapng" "$f" 262144 ||
			{ echo "FAIL: queue $q's file"; exit 1; }
		n=$("$check" --valid "$work/out-q$q.pcapng" |
			sed -n 's/.* is valid, \([0-9]*\) packets$/\1/p')
		total=$((total + n))
	done
	want=$(sed -n 's/^ *"captured": \([0-9]*\),$/\1/p' "$work/out.json")
	[ "$total" -gt 0 ] && [ "$total" = "$want" ] ||
		{ echo "FAIL: $total packets in the files, the run says $want"; exit 1; }
	# Writer threads (--capture-writers) write the same bytes (--ts
	# none: no times to differ).
	for w in 0 2; do
		# shellcheck disable=SC2046
		"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
			--vdev "net_pcap0,rx_pcap=$in,rx_pcap=$in" -- --cpu --quiet \
			--idle-exit 500 --queues 2 --filter "$f" --ts none \
			--capture-writers $w --write "$work/w$w-q%q.pcapng" \
			> "$work/out.txt" 2>&1 ||
			{ cat "$work/out.txt"; echo "FAIL: --capture-writers $w"; exit 1; }
	done
	grep -q "capture: 2 writer thread(s)" "$work/out.txt" ||
		{ cat "$work/out.txt"; echo "FAIL: no writer threads said"; exit 1; }
	for q in 0 1; do
		cmp "$work/w0-q$q.pcapng" "$work/w2-q$q.pcapng" ||
			{ echo "FAIL: queue $q's file differs with writers"; exit 1; }
	done
	run_app --capture-writers 1
	[ "$rc" -eq 2 ] && grep -q "add --write FILE" "$work/out.txt" ||
		{ echo "FAIL: --capture-writers without --write: exit $rc"; exit 1; }
	run_app --write "$work/bad-%d.pcapng"
	[ "$rc" -eq 2 ] && grep -q "bad file name pattern" "$work/out.txt" &&
		[ ! -e "$work/bad-%d.pcapng" ] ||
		{ echo "FAIL: bad pattern: exit $rc"; exit 1; }
	run_app --write "$work/no-such-dir/x-%q.pcapng"
	[ "$rc" -eq 1 ] && grep -q "cannot create $work/no-such-dir/x-0.pcapng" \
		"$work/out.txt" || { echo "FAIL: uncreatable file: exit $rc"; exit 1; }
	echo "PASS: a capture file per queue, $total packets; bad pattern and uncreatable file refused by name"
	;;
stamps)
	# --stamps over generated streams with known loss, reordering,
	# duplicates and latency (gpurx-e2e-genstamps, beside GENPCAP, works
	# the figures out from its scenario): the JSON's per-stream counts
	# and latencies (RX time: the file's record times, --ts port) are
	# exactly those. --ts none: the same counts, no latency; a filter:
	# only the streams it passes. (The GPU modes' report is this one:
	# run-standin-e2e.sh, run-gpu-e2e.sh.)
	"$(dirname "$gen")/gpurx-e2e-genstamps" "$in" "$work/expected.json" ||
		{ echo "FAIL: cannot generate"; exit 1; }
	cmp_stamps() {
		python3 - "$work/expected.json" "$work/out.json" "$1" "$2" <<'PY'
import json, sys
want = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))["stamps"]
mode, keep = sys.argv[3], [int(x) for x in sys.argv[4].split(",")]
want["streams"] = [s for s in want["streams"] if s["stream"] in keep]
if mode == "nolat":
    for s in want["streams"]:
        s["latency_ns"] = dict.fromkeys(s["latency_ns"], 0)
        s["latency_hist"] = []
if mode == "filtered":
    want["stamped"] = sum(s["received"] for s in want["streams"])
got.pop("rx_clock")
if got != want:
    print("FAIL: stamps\n got  %s\n want %s" % (json.dumps(got), json.dumps(want)))
    sys.exit(1)
print("stamps as expected (%s): %s" % (mode, json.dumps(got["streams"])))
PY
	}
	run_app --stamps --ts port --json "$work/out.json" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	grep -q "latency: RX time (--ts port" "$work/out.txt" ||
		{ echo "FAIL: the summary does not say which clock"; exit 1; }
	cmp_stamps exact 1,2,3,4 || exit 1
	run_app --stamps --ts none --json "$work/out.json" ||
		{ echo "FAIL: --ts none: exit $rc"; exit 1; }
	cmp_stamps nolat 1,2,3,4 || exit 1
	run_app --stamps --ts port --filter udp --json "$work/out.json" ||
		{ echo "FAIL: --filter udp: exit $rc"; exit 1; }
	cmp_stamps filtered 1,3 || exit 1
	echo "PASS: stamps: loss, reordering, duplicates and latency per stream exact"
	;;
setup-fail)
	# Start-up failing after the pools were made: in the port's setup
	# (--split on a port without buffer split) and after it (a capture
	# file that cannot be created, the port started). Each exits 1 saying
	# why, and releases what it took: the program names any memzone of
	# its own (pools, rings) still allocated before rte_eal_cleanup().
	run_app --split 64 --pool-per-queue --ipfix-file "$work/f.ipfix"
	[ "$rc" -eq 1 ] && grep -q "offers no RX buffer split" "$work/out.txt" ||
		{ echo "FAIL: --split on net_pcap: exit $rc"; exit 1; }
	! grep -q "still allocated" "$work/out.txt" ||
		{ echo "FAIL: --split on net_pcap: not released"; exit 1; }
	run_app --write "$work/no-such-dir/x.pcapng" --ipfix-file "$work/f.ipfix"
	[ "$rc" -eq 1 ] && grep -q "cannot create $work/no-such-dir/x.pcapng" \
		"$work/out.txt" || { echo "FAIL: uncreatable capture: exit $rc"; exit 1; }
	! grep -q "still allocated" "$work/out.txt" ||
		{ echo "FAIL: uncreatable capture: not released"; exit 1; }
	echo "PASS: start-up failures in and after the port's setup release what they took"
	;;
file-end)
	# Without --idle-exit a file replayed once ends the run when its
	# records are in, as tcpdump -r ends with its file: every one
	# captured, in well under the 1 s fallback.
	# shellcheck disable=SC2046
	timeout 60 "$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --cpu --quiet \
		--write "$work/out.pcapng" > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] && grep -q "stopped by: *end of the port's file(s)" \
		"$work/out.txt" || { echo "FAIL: exit $rc, not ended by the file"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "" 262144
	;;
stdout)
	# --write - into a pipe, as `| wireshark -k -i -` reads it: the same
	# bytes as --write FILE (one queue, --ts none), pcapng and pcap, the
	# program's own output on stderr; then a reader that goes away after
	# 100 bytes: the run ends by itself, every mbuf back, exit 1.
	# pcap through a writer thread (--capture-writers 1).
	for fmt in pcapng pcap; do
		w=0
		[ $fmt = pcap ] && w=1
		# shellcheck disable=SC2046
		"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --cpu --ts none \
			--format $fmt -w "$work/file.$fmt" 'tcp or udp' \
			> "$work/file.txt" 2>&1 || { cat "$work/file.txt"; echo "FAIL: file run"; exit 1; }
		# shellcheck disable=SC2046
		{ "$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --cpu --ts none \
			--format $fmt --capture-writers $w -w - 'tcp or udp' \
			2> "$work/out.txt"; echo $? > "$work/rc"; } |
			cat > "$work/pipe.$fmt"
		rc=$(cat "$work/rc")
		[ "$rc" -eq 0 ] || { cat "$work/out.txt"; echo "FAIL: --write - exit $rc"; exit 1; }
		cmp "$work/file.$fmt" "$work/pipe.$fmt" ||
			{ echo "FAIL: $fmt through the pipe differs from the file"; exit 1; }
		grep -q "stopped by:" "$work/out.txt" && mbufs_all_back ||
			{ cat "$work/out.txt"; echo "FAIL: no summary on stderr"; exit 1; }
	done
	"$check" "$in" "$work/pipe.pcapng" "tcp or udp" 262144 || exit 1
	# net_pcap's infinite_rx takes no chained frames: no jumbo frames.
	"$gen" "$work/small.pcap" 1 3000 0 || { echo "FAIL: cannot generate"; exit 1; }
	# shellcheck disable=SC2046
	{ timeout 60 "$app" $(eal) --vdev "net_pcap0,rx_pcap=$work/small.pcap,infinite_rx=1" -- \
		--cpu -w - 2> "$work/out.txt"; echo $? > "$work/rc"; } | head -c 100 > /dev/null
	rc=$(cat "$work/rc")
	cat "$work/out.txt"
	[ "$rc" -eq 1 ] && mbufs_all_back &&
		grep -q "standard output" "$work/out.txt" ||
		{ echo "FAIL: exit $rc after the reader went away"; exit 1; }
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --cpu -w - --json - \
		> /dev/null 2> "$work/out.txt"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "both on standard output" "$work/out.txt" ||
		{ cat "$work/out.txt"; echo "FAIL: --json - with --write -: exit $rc"; exit 1; }
	echo "ok: --write - equals the file's bytes (pcapng, pcap); a reader gone ends the run"
	;;
rotate)
	# Rotation as dumpcap's ring buffer: by size, files of at most the
	# size whose packet blocks, file after file, are those of one capture
	# of the same input byte for byte, each a whole pcapng (header with
	# if_filter, statistics block at its end) that tshark, capinfos and
	# tcpdump read without an error; a ring of 2 keeps the last 2; by
	# time, several files in a few seconds; the refusals name the option.
	command -v tshark >/dev/null 2>&1 && command -v capinfos >/dev/null 2>&1 &&
		command -v tcpdump >/dev/null 2>&1 ||
		{ echo "SKIP: tshark, capinfos or tcpdump not installed (scripts/setup.sh installs them)"; exit 77; }
	rotcheck=$(dirname "$0")/check-rotate.py
	run_app --ts none -w "$work/whole.pcapng" tcp or udp ||
		{ echo "FAIL: exit $rc"; exit 1; }
	run_app --ts none -w "$work/size.pcapng" --rotate-size 300k \
		tcp or udp || { echo "FAIL: --rotate-size: exit $rc"; exit 1; }
	[ ! -e "$work/size.pcapng" ] ||
		{ echo "FAIL: the --write name itself was written"; exit 1; }
	set -- "$work"/size_[0-9][0-9][0-9][0-9][0-9]_[0-9]*[0-9].pcapng
	[ $# -ge 3 ] || { echo "FAIL: --rotate-size 300k: $# file(s)"; exit 1; }
	python3 "$rotcheck" "$work/whole.pcapng" "tcp or udp" 307200 "$@" ||
		exit 1
	# A writer thread rotates: whole files of at most the size, holding
	# exactly what the run says it captured; the rest counted as capture
	# drops (net_pcap outruns one writer on a busy machine: chunks of a
	# quarter of the size, four buffered).
	run_app --ts none -w "$work/wsize.pcapng" --rotate-size 300k \
		--capture-writers 1 tcp or udp ||
		{ echo "FAIL: --rotate-size with a writer: exit $rc"; exit 1; }
	total=0
	for f in "$work"/wsize_[0-9]*.pcapng; do
		[ "$(wc -c < "$f")" -le 307200 ] || { echo "FAIL: $f over 300k"; exit 1; }
		n=$("$check" --valid "$f" | sed -n 's/.* is valid, \([0-9]*\) packets$/\1/p')
		[ -n "$n" ] || { echo "FAIL: $f not whole"; exit 1; }
		total=$((total + n))
	done
	capd=$(sed -n 's/^captured: *\([0-9]*\) packets.*/\1/p' "$work/out.txt")
	full=$(sed -n 's/.*capture full \([0-9]*\),.*/\1/p' "$work/out.txt")
	matched=$(sed -n 's/^matched: *\([0-9]*\)$/\1/p' "$work/out.txt")
	[ "$total" -gt 0 ] && [ "$total" = "$capd" ] &&
		[ $((capd + full)) = "$matched" ] ||
		{ echo "FAIL: a writer rotating: $total in the files, captured $capd, capture full $full, matched $matched"; exit 1; }
	for f in "$@"; do
		tshark -r "$f" > /dev/null 2> "$work/tshark.err" &&
			! grep -v "Running as user" "$work/tshark.err" &&
			capinfos "$f" > "$work/capinfos.txt" 2>&1 &&
			tcpdump -n -r "$f" > /dev/null 2>&1 ||
			{ cat "$work/tshark.err" "$work/capinfos.txt"; echo "FAIL: $f unreadable"; exit 1; }
	done
	capinfos -I "$1" | grep -q "Filter string = tcp or udp$" ||
		{ capinfos -I "$1"; echo "FAIL: capinfos shows no if_filter"; exit 1; }
	run_app --ts none -w "$work/ring.pcapng" --rotate-size 100k \
		--rotate-files 2 tcp or udp || { echo "FAIL: --rotate-files: exit $rc"; exit 1; }
	set -- "$work"/ring_[0-9]*.pcapng
	[ $# -eq 2 ] || { echo "FAIL: --rotate-files 2: $# file(s)"; exit 1; }
	case $2 in
	*ring_0000[4-9]_*|*ring_000[1-9][0-9]_*) ;;
	*) echo "FAIL: --rotate-files 2 kept $1 $2"; exit 1 ;;
	esac
	python3 "$rotcheck" "$work/whole.pcapng" "tcp or udp" 102400 --tail "$@" ||
		exit 1
	# By time: net_null's frames, which "tcp" never matches, for 2.5 s.
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev net_null0 -- --cpu --quiet --duration 2.5 \
		-w "$work/time.pcapng" --rotate-seconds 1 tcp > "$work/out.txt" 2>&1 ||
		{ cat "$work/out.txt"; echo "FAIL: --rotate-seconds: exit"; exit 1; }
	set -- "$work"/time_[0-9]*.pcapng
	[ $# -ge 2 ] || { echo "FAIL: --rotate-seconds 1, 2.5 s: $# file(s)"; exit 1; }
	for f in "$@"; do
		capinfos "$f" > "$work/capinfos.txt" 2>&1 ||
			{ cat "$work/capinfos.txt"; echo "FAIL: $f unreadable"; exit 1; }
	done
	echo "ok: --rotate-seconds 1 for 2.5 s: $# files"
	# By time, two queues into one file: each queue's packets, file
	# after file, are the matches of its input over and over (net_pcap's
	# infinite_rx replays it), none lost or repeated where a file ends.
	# infinite_rx takes no frame over one mbuf: an input without jumbo
	# frames; a filter matching 4 frames of 3000 and the snaplen keep the
	# files small.
	"$gen" "$work/small.pcap" 1 3000 0 ||
		{ echo "FAIL: cannot generate $work/small.pcap"; exit 1; }
	f="src host 1.1.1.1 and less 150"
	two="rx_pcap=$work/small.pcap,rx_pcap=$work/small.pcap"
	# shellcheck disable=SC2046,SC2086
	"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
		--vdev "net_pcap0,$two" -- --cpu --quiet --idle-exit 500 \
		--queues 2 --ts none --snaplen 64 -w "$work/pass.pcapng" $f \
		> "$work/out.txt" 2>&1 ||
		{ cat "$work/out.txt"; echo "FAIL: one pass on two queues: exit"; exit 1; }
	# shellcheck disable=SC2046,SC2086
	"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,1@0,2@0/') \
		--vdev "net_pcap0,$two,infinite_rx=1" -- --cpu --quiet \
		--duration 2.5 --queues 2 --ts none --snaplen 64 \
		-w "$work/time2.pcapng" \
		--rotate-seconds 1 --json "$work/time2.json" $f \
		> "$work/out.txt" 2>&1 ||
		{ cat "$work/out.txt"; echo "FAIL: --rotate-seconds, two queues: exit"; exit 1; }
	n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["captured"])' \
		"$work/time2.json") || { echo "FAIL: no captured count in the JSON"; exit 1; }
	set -- "$work"/time2_[0-9]*.pcapng
	[ $# -ge 2 ] || { echo "FAIL: --rotate-seconds 1, two queues, 2.5 s: $# file(s)"; exit 1; }
	python3 "$rotcheck" "$work/pass.pcapng" "$f" 0 --cycle "$n" "$@" ||
		exit 1
	for o in "--rotate-size 0" "--rotate-size 10x" "--rotate-seconds 0" \
			"--rotate-seconds soon" "--rotate-files 0" \
			"--rotate-files 3 -w $work/x.pcapng" \
			"--rotate-size 1M -w -" "--rotate-seconds 5"; do
		# shellcheck disable=SC2086
		run_app $o > /dev/null
		opt=${o%% *}
		[ "$rc" -eq 2 ] && grep -q -- "^${opt}[: ]" "$work/out.txt" ||
			{ echo "FAIL: $o: exit $rc, or the message does not name $opt"; exit 1; }
	done
	[ ! -e "$work/x.pcapng" ] && ! ls "$work"/x_* > /dev/null 2>&1 ||
		{ echo "FAIL: a refused rotation created a file"; exit 1; }
	echo "ok: rotation refusals name their option"
	;;
bad-file)
	# Files net_pcap would pass on as garbage: a record longer than any
	# capture may hold (16,384 empty packets through net_pcap), and a
	# file cut mid-record (ended silently). Refused at start with
	# libpcap's reason, exit 1.
	python3 - "$work/huge.pcap" <<'PY' || { echo "FAIL: cannot write"; exit 1; }
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    f.write(struct.pack("<IIII", 0, 0, 262145, 262145) + bytes(64))
PY
	size=$(stat -c %s "$in")
	head -c $((size - 7)) "$in" > "$work/cut.pcap"
	for f in huge cut; do
		# shellcheck disable=SC2046
		"$app" $(eal) --vdev "net_pcap0,rx_pcap=$work/$f.pcap" -- --cpu \
			--quiet --idle-exit 500 > "$work/$f.txt" 2>&1
		rc=$?
		cat "$work/$f.txt"
		[ "$rc" -eq 1 ] && grep -q "error: port 0 (net_pcap): rx_pcap $work/$f.pcap: " \
			"$work/$f.txt" || { echo "FAIL: $f.pcap: exit $rc"; exit 1; }
	done
	grep -q "truncated" "$work/cut.txt" ||
		{ echo "FAIL: cut.pcap: libpcap's reason not given"; exit 1; }
	echo "PASS: malformed files refused with libpcap's reason"
	;;
capture-full)
	# The capture may not grow past a limit set once the run is under way
	# (RLIMIT_FSIZE by prlimit: EAL itself needs large files at start), as
	# on a file system that fills up: the run says why and exits 1, and
	# leaves a valid capture, cut back to whole blocks, holding exactly
	# what it counts as captured; every other match is a capture drop.
	command -v prlimit > /dev/null || { echo "SKIP: no prlimit"; exit 77; }
	"$gen" "$in" 1 500 0 || exit 1
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in,infinite_rx=1" -- --cpu \
		--quiet --filter sctp --snaplen 64 --write "$work/out.pcapng" \
		> "$work/out.txt" 2>&1 &
	pid=$!
	# Its first lines are out once it has opened the capture and ignores
	# SIGXFSZ.
	for _ in $(seq 300); do
		grep -q "^dpdk-gpu-rx: port" "$work/out.txt" && break
		sleep 0.1
	done
	[ -e "$work/out.pcapng" ] ||
		{ kill $pid; cat "$work/out.txt"; echo "FAIL: not started"; exit 1; }
	sleep 0.5
	limit=$(($(wc -c < "$work/out.pcapng") + 1048576))
	prlimit --pid $pid --fsize=$limit:
	sleep 1
	kill -INT $pid
	wait $pid
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
	grep -q "cannot write .*: File too large; capture stopped" \
		"$work/out.txt" || { echo "FAIL: the write error is not said"; exit 1; }
	grep -q "capture file .* is incomplete" "$work/out.txt" ||
		{ echo "FAIL: not said incomplete"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	# Cut back to where the failed write began (which may lie past the
	# limit: the file grew while prlimit started).
	size=$(wc -c < "$work/out.pcapng")
	grep -q "cannot write [0-9]* bytes at offset $size: " "$work/out.txt" ||
		{ echo "FAIL: $size bytes, not cut back to the failed write"; exit 1; }
	n=$("$check" --valid "$work/out.pcapng" |
		sed -n 's/.* is valid, \([0-9]*\) packets$/\1/p')
	rm -f "$work/out.pcapng"
	[ -n "$n" ] || { echo "FAIL: capture not valid"; exit 1; }
	matched=$(sed -n 's/^matched: *\([0-9]*\)$/\1/p' "$work/out.txt")
	captured=$(sed -n 's/^captured: *\([0-9]*\) packets.*/\1/p' "$work/out.txt")
	drops=$(sed -n 's/.*, capture full \([0-9]*\),.*/\1/p' "$work/out.txt")
	[ "$n" = "$captured" ] ||
		{ echo "FAIL: $n packets in the file, $captured counted captured"; exit 1; }
	[ "${drops:-0}" -gt 0 ] && [ $((captured + drops)) -eq "$matched" ] ||
		{ echo "FAIL: $captured captured + ${drops:-?} dropped of $matched"; exit 1; }
	echo "PASS: size limit: $n packets kept in $size bytes, $drops capture drops counted"
	;;
mangle)
	# The test switch the GPU tests deliver foreign and odd mbufs with
	# (external buffers, indirect mbufs, empty trailing segments): the
	# same capture as libpcap's, every mbuf and external buffer back.
	export GPURX_TEST_MANGLE=3
	run_app --filter "$filter" --write "$work/out.pcapng" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	grep -q "GPURX_TEST_MANGLE" "$work/out.txt" ||
		{ echo "FAIL: the switch is not on"; exit 1; }
	mangled=$(sed -n 's/^test: \([0-9]*\) received mbufs made .*/\1/p' \
		"$work/out.txt")
	[ "${mangled:-0}" -gt 0 ] ||
		{ echo "FAIL: no mbuf mangled (the seam did not act)"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "$filter" 262144
	;;
gpudma)
	# The same capture through net_gpudma in host memory (its descriptor
	# ring, chains up to 262144 bytes whole) instead of net_pcap.
	# dpdk-gpu-rx links the port: no -d.
	"$gen" "$in" 1 3000 50 200 || exit 1
	# shellcheck disable=SC2046
	"$app" $(eal) \
		--vdev "net_gpudma0,rx_pcap=$in" -- --cpu --idle-exit 500 \
		--filter "$filter" --write "$work/out.pcapng" > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	grep -q "port 0 (net_gpudma)" "$work/out.txt" ||
		{ echo "FAIL: not received through net_gpudma"; exit 1; }
	grep -q "0 holding less than their length" "$work/out.txt" ||
		{ echo "FAIL: chains shorter than their length"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	exec "$check" "$in" "$work/out.pcapng" "$filter" 262144
	;;
gpudma-split)
	# RX buffer split through net_gpudma, host pools: the first N bytes
	# into the header pool, the rest into the other; the CPU path reads
	# the two buffers in place. The capture must be libpcap's and the
	# unsplit run's, byte for byte (--ts none), the counters the same
	# (but "chained": every packet past N is two segments), every mbuf
	# of both pools back. N = 128 (the GPU default) and 64, with the
	# full snaplen and one within the header buffer.
	"$gen" "$in" 1 3000 50 200 || exit 1
	gpudma_run() { # NAME ARGS...
		name=$1
		shift
		# shellcheck disable=SC2046
		"$app" $(eal) --vdev "net_gpudma0,rx_pcap=$in" -- --cpu \
			--idle-exit 500 --ts none --filter "$filter" \
			--write "$work/$name.pcapng" --json "$work/$name.json" \
			"$@" > "$work/$name.txt" 2>&1
		rc=$?
		cp "$work/$name.txt" "$work/out.txt"
		[ "$rc" -eq 0 ] || { cat "$work/$name.txt"; echo "FAIL: $name: exit $rc"; exit 1; }
		mbufs_all_back || { cat "$work/$name.txt"; echo "FAIL: $name: mbufs not all returned"; exit 1; }
	}
	counters() {
		grep -v -e '"elapsed_s"' -e '"stopped_by"' -e '"mbufs"' \
			-e '"chained"' "$1"
	}
	for snap in 262144 100; do
		gpudma_run "unsplit-$snap" --split off --snaplen $snap
		grep -q "^split: off: asked with --split off" "$work/unsplit-$snap.txt" ||
			{ echo "FAIL: no split line"; exit 1; }
		"$check" "$in" "$work/unsplit-$snap.pcapng" "$filter" $snap ||
			{ echo "FAIL: unsplit, snaplen $snap: capture differs from libpcap's"; exit 1; }
		for n in 128 64; do
			name=split$n-$snap
			gpudma_run "$name" --split $n --snaplen $snap
			grep -q "^split: the first $n bytes of each packet (headers) into host memory" \
				"$work/$name.txt" || { echo "FAIL: $name: not split"; exit 1; }
			grep -q "and a header pool of as many" "$work/$name.txt" ||
				{ echo "FAIL: $name: no header pool"; exit 1; }
			grep -Eq '"chained": [1-9]' "$work/$name.json" ||
				{ echo "FAIL: $name: no packet came in two buffers"; exit 1; }
			cmp "$work/unsplit-$snap.pcapng" "$work/$name.pcapng" ||
				{ echo "FAIL: $name: capture differs from the unsplit run's"; exit 1; }
			counters "$work/unsplit-$snap.json" > "$work/a.core"
			counters "$work/$name.json" > "$work/b.core"
			cmp "$work/a.core" "$work/b.core" ||
				{ diff "$work/a.core" "$work/b.core"; echo "FAIL: $name: counters differ"; exit 1; }
		done
	done
	echo "PASS: split at 128 and 64 bytes, snaplen 262144 and 100: captures and counters of the unsplit run, libpcap's, every mbuf back"
	;;
split-options)
	# --split where it cannot be: a port without buffer split, a bad N;
	# what --split auto chose is said in one line.
	run_app --split 128 > /dev/null
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ]; then
		echo "FAIL: --split 128 on net_pcap: exit $rc"
		exit 1
	fi
	grep -q "error: --split 128: port 0 (net_pcap) offers no RX buffer split.*--split off" \
		"$work/out.txt" || { echo "FAIL: --split 128 on net_pcap: no reason"; exit 1; }
	run_app > /dev/null || { echo "FAIL: default: exit $rc"; exit 1; }
	grep -q "^split: off: default with --cpu" "$work/out.txt" ||
		{ echo "FAIL: the default's choice is not said"; exit 1; }
	run_app --split off > /dev/null || { echo "FAIL: --split off: exit $rc"; exit 1; }
	run_app --split auto > /dev/null || { echo "FAIL: --split auto: exit $rc"; exit 1; }
	echo "PASS: --split refused on a port without buffer split, saying why; the choice said"
	;;
no-gpu)
	if [ -e /dev/nvidia0 ]; then
		echo "SKIP: a GPU is present"
		exit 77
	fi
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" -- --quiet \
		--idle-exit 500 > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -ne 0 ] || { echo "FAIL: ran without a GPU"; exit 1; }
	grep -qi "gpu" "$work/out.txt" || { echo "FAIL: no message"; exit 1; }
	echo "PASS: no GPU refused with exit $rc"
	;;
ts-port)
	# net_pcap stamps every packet with the file's time (microseconds):
	# with --ts port the capture keeps it, in pcapng and in pcap.
	for fmt in pcapng pcap; do
		run_app --ts port --filter "tcp or udp" --format $fmt \
			--write "$work/out.$fmt" ||
			{ echo "FAIL: --format $fmt: exit $rc"; exit 1; }
		grep -q "^timestamps: port 0's RX timestamps (microseconds" \
			"$work/out.txt" || { echo "FAIL: no timestamp line"; exit 1; }
		"$check" "$in" "$work/out.$fmt" "tcp or udp" 262144 --ts ||
			{ echo "FAIL: --format $fmt: timestamps differ"; exit 1; }
		# The times tcpdump -tt prints for the original, if it is here.
		if command -v tcpdump > /dev/null; then
			tcpdump -tt -nn -r "$in" "tcp or udp" 2> /dev/null |
				cut -d' ' -f1 > "$work/want-tt.txt"
			tcpdump -tt -nn -r "$work/out.$fmt" 2> /dev/null |
				cut -d' ' -f1 > "$work/got-tt.txt"
			[ -s "$work/want-tt.txt" ] &&
				cmp "$work/want-tt.txt" "$work/got-tt.txt" ||
				{ echo "FAIL: --format $fmt: tcpdump -tt differs"; exit 1; }
		fi
	done
	echo "PASS: --ts port keeps the file's timestamps (pcapng, pcap)"
	;;
short-chain)
	# Frames up to 262144 B, 65549 B and longer: DPDK 22.11's net_pcap
	# keeps the length of a frame it chains in 16 bits, so frames past
	# 65535 B and one segment arrive holding less than their pkt_len.
	# They are counted, classified and captured with the bytes they hold
	# (wire length as the port says); nothing reads past the chain.
	"$gen" "$in" 2 600 0 20 || exit 1
	run_app --write "$work/out.pcapng" --json "$work/out.json" ||
		{ echo "FAIL: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	short=$(sed -n 's/.*"short_chains": \([0-9]*\).*/\1/p' "$work/out.json")
	[ -n "$short" ] && [ "$short" -gt 0 ] ||
		{ echo "FAIL: no short chain counted"; exit 1; }
	grep -q "^captured: *600 packets" "$work/out.txt" ||
		{ echo "FAIL: not every packet captured"; exit 1; }
	"$check" --valid "$work/out.pcapng" || exit 1
	echo "PASS: $short chains shorter than their length, counted and cut"
	;;
lo-capture)
	# Real traffic on Linux's loopback (MTU 65536: 65549-byte frames),
	# captured by tcpdump, replayed: every filter's capture must be
	# tcpdump's own filtering of the file, byte for byte.
	lo=$work/lo.pcap
	"$(dirname "$0")/capture-lo.sh" "$lo"
	rc=$?
	[ $rc -eq 0 ] || exit $rc
	in=$lo
	for f in "" "tcp" "greater 65001" "tcp[tcpflags] & tcp-push != 0" \
			"len < 1000"; do
		for fmt in pcapng pcap; do
			run_app --filter "$f" --format $fmt --ts port \
				--write "$work/out.$fmt" > /dev/null ||
				{ echo "FAIL: '$f' $fmt: exit $rc"; exit 1; }
			grep -Eq "over 256 KiB cut 0(,|$)" "$work/out.txt" ||
				{ echo "FAIL: '$f' $fmt: frames cut"; exit 1; }
			"$check" "$lo" "$work/out.$fmt" "$f" 262144 --ts ||
				{ echo "FAIL: '$f' $fmt: capture differs"; exit 1; }
		done
	done
	echo "PASS: lo traffic with frames over 64 KiB, 5 filters, pcapng and pcap, timestamps kept"
	;;
sigint)
	# infinite_rx replays from mbufs it holds and refuses chains: a
	# small input without jumbo frames.
	"$gen" "$in" 1 500 0 || exit 1
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in,infinite_rx=1" -- --cpu \
		--quiet --filter sctp --snaplen 64 --write "$work/out.pcapng" \
		> "$work/out.txt" 2>&1 &
	pid=$!
	sleep 2
	kill -INT $pid
	wait $pid
	rc=$?
	cat "$work/out.txt"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc after SIGINT"; exit 1; }
	grep -q "stopped by: *SIGINT" "$work/out.txt" ||
		{ echo "FAIL: not stopped by SIGINT"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	"$check" --valid "$work/out.pcapng"
	rc=$?
	rm -f "$work/out.pcapng"	# replayed traffic: large, no other use
	exit $rc
	;;
telemetry)
	# DPDK's telemetry mid-run: /gpu_rx/stats and, with the export on,
	# /gpu_rx/flow_export, whose records grow as active flows end each
	# second; the same counters as the summary's at the end; per port
	# with two.
	prefix=gpurx-e2e-telemetry-$$
	q="$(dirname "$0")/../../gpu_tx/telemetry-query.py"
	# net_pcap's infinite_rx takes no chained frames: no jumbo frames.
	"$gen" "$work/small.pcap" 1 3000 0 || { echo "FAIL: cannot generate"; exit 1; }
	# shellcheck disable=SC2046
	"$app" $(eal | sed "s/--file-prefix [^ ]*/--file-prefix $prefix/") \
		--vdev "net_pcap0,rx_pcap=$work/small.pcap,infinite_rx=1" -- --cpu --quiet \
		--duration 3.5 --flow-active 1 --ipfix-file "$work/out.ipfix" \
		--json "$work/out.json" > "$work/out.txt" 2>&1 &
	pid=$!
	sleep 2.2
	# Both on one connection: a loaded machine may end the run between
	# two.
	python3 "$q" "$prefix" /gpu_rx/flow_export,/gpu_rx/stats 5 > "$work/fx.json" 2> "$work/tel.err"
	tel=$?
	wait $pid || { cat "$work/out.txt"; echo "FAIL: exit"; exit 1; }
	if [ $tel -eq 3 ]; then
		# The socket is listening, but this machine's sandbox refuses
		# AF_UNIX connects to it.
		echo "NOTE: telemetry not checked here: $(cat "$work/tel.err")"
		exit 0
	fi
	[ $tel -eq 0 ] || { cat "$work/tel.err"; echo "FAIL: no telemetry answer"; exit 1; }
	python3 - "$work/fx.json" "$work/out.json" <<'PY' || exit 1
import json, sys
tel = json.load(open(sys.argv[1]))
fx = tel["/gpu_rx/flow_export"]
st = tel["/gpu_rx/stats"]
end = json.load(open(sys.argv[2]))
print("mid-run:", fx, "received", st["rx_packets"])
keys = {"records", "packets", "bytes", "ended_idle", "ended_active",
        "ended_fin_rst", "ended_at_exit", "ended_table_full", "ring_full",
        "ring_lost"}
ok = set(fx) == keys and fx["records"] > 0 and fx["ended_active"] > 0 and \
    fx["records"] <= end["flow_export"]["records"] and \
    0 < st["rx_packets"] <= end["rx_packets"]
sys.exit(0 if ok else 1)
PY
	# Two ports: /gpu_rx/stats adds each counter by port id, each
	# port's packets in, their sum at least the total read just before
	# them (counters only grow), at most the summary's.
	prefix=$prefix-ports
	# shellcheck disable=SC2046
	"$app" $(eal | sed "s/--file-prefix [^ ]*/--file-prefix $prefix/; s/-l 0-1/--lcores 0@0,(1-2)@0/") \
		--vdev "net_pcap0,rx_pcap=$work/small.pcap,infinite_rx=1" \
		--vdev "net_pcap1,rx_pcap=$work/small.pcap,infinite_rx=1" -- \
		--cpu --quiet --port 0,1 --duration 2.5 --json "$work/ports.json" \
		> "$work/out.txt" 2>&1 &
	pid=$!
	sleep 1.5
	python3 "$q" "$prefix" /gpu_rx/stats 5 > "$work/ports-tel.json" 2> "$work/tel.err"
	tel=$?
	wait $pid || { cat "$work/out.txt"; echo "FAIL: two ports: exit"; exit 1; }
	[ $tel -eq 0 ] || { cat "$work/tel.err"; echo "FAIL: two ports: no telemetry answer"; exit 1; }
	python3 - "$work/ports-tel.json" "$work/ports.json" <<'PY' || exit 1
import json, sys
st = json.load(open(sys.argv[1]))["/gpu_rx/stats"]
end = json.load(open(sys.argv[2]))
by = {k: v for k, v in st.items() if k.endswith("_by_port")}
print("mid-run:", by)
want = {"rx_packets", "rx_bytes", "matched", "captured", "imissed",
        "ierrors", "rx_nombuf"}
rx = st.get("rx_packets_by_port", {})
ok = set(by) == {k + "_by_port" for k in want} and \
    all(sorted(v) == ["0", "1"] for v in by.values()) and \
    all(v > 0 for v in rx.values()) and \
    st["rx_packets"] <= sum(rx.values()) <= end["rx_packets"] and \
    [p["port"] for p in end["per_port"]] == [0, 1]
sys.exit(0 if ok else 1)
PY
	echo "ok: telemetry answered mid-run, within the summary's totals"
	;;
ports)
	# Two net_pcap ports, different files, two queues each (each file
	# twice): one capture file holds both ports, each port's packets
	# on its own interface, every queue of it IN's matches in order;
	# per-queue files (%q, the global queue index: port 0's queues
	# 0-1, port 1's 2-3) each equal to its port's file's matches; the
	# counters per port and in total, and in each port's statistics
	# block of the file; every mbuf back. Then --port
	# errors: a port listed twice, one that does not exist, too few
	# lcores. (Flow export over several ports: run-ipfix-e2e.sh ports.)
	f="tcp or udp"
	b=$work/b.pcap
	"$gen" "$b" 7 400 0 || { echo "FAIL: cannot generate $b"; exit 1; }
	ports() {
		# shellcheck disable=SC2046
		"$app" $(eal | sed 's/-l 0-1/--lcores 0@0,(1-4)@0/') \
			--vdev "net_pcap0,rx_pcap=$in,rx_pcap=$in" \
			--vdev "net_pcap1,rx_pcap=$b,rx_pcap=$b" -- --cpu --quiet \
			--idle-exit 500 --port 0,1 --queues 2 --filter "$f" "$@" \
			> "$work/out.txt" 2>&1
		rc=$?
		cat "$work/out.txt"
	}
	ports --write "$work/one.pcapng" --json "$work/one.json"
	[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
	mbufs_all_back || { echo "FAIL: mbufs not all returned"; exit 1; }
	# Interface I of the file is ethdev port I (pcapng lists them all).
	python3 - "$work/one.pcapng" 0 "$work/p0.pcapng" 1 "$work/p1.pcapng" <<'PY' ||
import struct, sys
# Each interface's blocks into a file of their own (the header, then
# its packet blocks), to check each against its port's input.
data = open(sys.argv[1], 'rb').read()
pos, head, by = 0, b'', {}
while pos + 12 <= len(data):
    t, n = struct.unpack_from('<II', data, pos)
    blk = data[pos:pos + n]
    if t in (0x0a0d0d0a, 1):
        head += blk
    elif t == 6:
        by.setdefault(struct.unpack_from('<I', blk, 8)[0], []).append(blk)
    pos += n
for i in range(2, len(sys.argv), 2):
    open(sys.argv[i + 1], 'wb').write(head + b''.join(by.get(int(sys.argv[i]), [])))
PY
		{ echo "FAIL: cannot split the capture by interface"; exit 1; }
	"$check" "$in" "$work/p0.pcapng" "$f" 262144 --queues 2 &&
		"$check" "$b" "$work/p1.pcapng" "$f" 262144 --queues 2 ||
		{ echo "FAIL: a port's packets in the one file"; exit 1; }
	python3 - "$work/one.json" "$work/out.txt" "$work/one.pcapng" <<'PY' ||
import json, re, struct, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
pp = j['per_port']
# The file ends with a statistics block per port: its interface, and
# the port's received packets (isb_ifrecv) and drops (isb_ifdrop).
data = open(sys.argv[3], 'rb').read()
pos, isb = 0, {}
while pos + 12 <= len(data):
    t, n = struct.unpack_from('<II', data, pos)
    if t == 5:
        opts, o = {}, pos + 20
        while o + 4 <= pos + n - 4:
            code, ln = struct.unpack_from('<HH', data, o)
            if code == 0:
                break
            if ln == 8:
                opts[code] = struct.unpack_from('<Q', data, o + 4)[0]
            o += 4 + (ln + 3) // 4 * 4
        isb[struct.unpack_from('<I', data, pos + 8)[0]] = opts
    pos += n
assert sorted(isb) == [0, 1], isb
for p in pp:
    assert isb[p['port']].get(4) == p['rx_packets'], (isb, pp)
    assert isb[p['port']].get(5) == 0, isb
assert [p['port'] for p in pp] == [0, 1], pp
assert [p['queues'] for p in pp] == [[0, 1], [2, 3]], pp
for p in pp:
    m = re.search(r'^port %d \(net_pcap\): queues %d-%d: received %d packets, '
                  r'%d bytes; matched %d; captured %d; imissed 0; ierrors 0;'
                  r' rx_nombuf 0$' % (p['port'], p['queues'][0], p['queues'][1],
                  p['rx_packets'], p['rx_bytes'], p['matched'], p['captured']),
                  out, re.M)
    assert m, 'summary line of port %d' % p['port']
rx = int(re.search(r'^received: +(\d+) packets', out, re.M).group(1))
cap = int(re.search(r'^captured: +(\d+) packets', out, re.M).group(1))
assert rx == sum(p['rx_packets'] for p in pp), (rx, pp)
assert cap == sum(p['captured'] for p in pp), (cap, pp)
PY
		{ echo "FAIL: per-port counters"; exit 1; }
	# Port 1's file (no frame over 64 KiB: net_pcap delivers every
	# record) twice.
	grep -q '^port 1 (net_pcap): queues 2-3: received 800 packets' "$work/out.txt" ||
		{ echo "FAIL: not every packet of port 1 received"; exit 1; }
	ports --write "$work/q%q.pcapng"
	[ "$rc" -eq 0 ] || { echo "FAIL: %q: exit $rc"; exit 1; }
	for q in 0 1 2 3; do
		src=$in
		[ "$q" -lt 2 ] || src=$b
		"$check" "$src" "$work/q$q.pcapng" "$f" 262144 --iface $((q / 2)) ||
			{ echo "FAIL: queue $q's file"; exit 1; }
	done
	ports --port 0,0 > /dev/null
	[ "$rc" -eq 2 ] && grep -q "^--port: port 0 is listed twice" "$work/out.txt" ||
		{ echo "FAIL: --port 0,0: exit $rc"; exit 1; }
	ports --port 0,5 > /dev/null
	[ "$rc" -eq 1 ] && grep -q "^error: port 5 does not exist" "$work/out.txt" ||
		{ echo "FAIL: --port 0,5: exit $rc"; exit 1; }
	ports --port 0,x > /dev/null
	[ "$rc" -eq 2 ] && grep -q "^--port: '0,x' is not a list" "$work/out.txt" ||
		{ echo "FAIL: --port 0,x: exit $rc"; exit 1; }
	ports --queues 9 > /dev/null
	[ "$rc" -eq 2 ] && grep -q "^--port and --queues: 2 ports x 9 queues" "$work/out.txt" ||
		{ echo "FAIL: 2 x 9 queues: exit $rc"; exit 1; }
	# shellcheck disable=SC2046
	"$app" $(eal) --vdev "net_pcap0,rx_pcap=$in" --vdev "net_pcap1,rx_pcap=$b" \
		-- --cpu --quiet --port 1,0 > "$work/out.txt" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q "^error: 2 ports x 1 RX queue(s) need 3 lcores" "$work/out.txt" ||
		{ cat "$work/out.txt"; echo "FAIL: too few lcores: exit $rc"; exit 1; }
	echo "PASS: two ports: one file and per-queue files, counters, errors"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
