#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The GPU modes' RX lcore code end to end without a GPU: dpdk-gpu-rx-standin
# (dpdk-gpu-rx's objects with a CPU thread playing the kernel,
# tests/gpu_rx/gpu_standin.c) over the fake CUDA driver, on the input of the CPU
# e2e runs. Every capture must be libpcap's filtering of the input, byte
# for byte (as run-gpu-e2e.sh asks of the GPU), with the counters of the
# --cpu run and every mbuf back: host-mapped and staged, persistent and
# per burst, items of 32 and 128 packets, a snaplen, the port's timestamps,
# frames cut short, foreign and odd mbufs (GPURX_TEST_MANGLE), a capture
# rotated by size, two queues, a GPU's latency; --stamps' report that of
# --cpu (also in GPU memory, split).
#
# Usage: run-standin-e2e.sh APP GENPCAP CHECK FAKE_LIBCUDA WORK_DIR
# APP: dpdk-gpu-rx-standin, which has the test variant's switches.
# Exit: 0 all passed, 1 a failure.
set -u

app=$1 gen=$2 check=$3 fake=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
in=$work/in.pcap
# As run-cpu-e2e.sh: one frame in 200 over 64 KiB (chains).
"$gen" "$in" 1 3000 50 200 65553 || { echo "FAIL: cannot generate $in"; exit 1; }
failed=0 n=0

# Env: lcores (EAL's, default -l 0-1).
run() { # NAME VDEV -- APP_ARGS...; output in $work/NAME.txt
	name=$1 vdev=$2
	shift 3
	n=$((n + 1))
	# --backpressure: the stand-in, one thread, may fall behind; no item
	# may be dropped for the capture to be whole. Each run ends at the
	# file's last packet; --idle-exit is only a guard, long enough that
	# a stand-in starved on a loaded 2-CPU machine (0.5 s was seen) does
	# not end a run early.
	GPU_CUDA_LIBCUDA=$fake "$app" --no-huge -m 1024 --no-pci --no-shconf \
		--file-prefix "gpurx-standin-$$-$n" ${lcores:--l 0-1} \
		--log-level=lib.eal:warning --vdev gpu_cuda0,dev=0 \
		--vdev "$vdev" -- --idle-exit 10000 --backpressure --ts none \
		"$@" > "$work/$name.txt" 2>&1
}

# Counters that must not depend on where the packets were classified.
counters() {
	grep -E '^(received|matched|captured|malformed|flows|chained):' "$1" |
		sed 's/ -> .*//' 
}

# CAPTURE_OF: a run whose capture this one's must equal byte for byte,
# instead of libpcap's filtering of the input.
check_run() { # NAME FILTER SNAPLEN COUNTERS_OF [CAPTURE_OF]
	name=$1 filter=$2 snap=$3 ref=$4 cap_ref=${5:-}
	out=$work/$name.txt
	if [ "$rc" -ne 0 ]; then
		cat "$out"
		echo "FAIL: $name: exit $rc"
		failed=$((failed + 1))
		return
	fi
	if [ "${name#cpu-}" = "$name" ] &&
			! grep -q "persistent kernel\|kernel per burst" "$out"; then
		cat "$out"
		echo "FAIL: $name: not a GPU mode"
		failed=$((failed + 1))
		return
	fi
	if ! grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$out"; then
		cat "$out"
		echo "FAIL: $name: mbufs not all back"
		failed=$((failed + 1))
		return
	fi
	if [ -n "$ref" ] && [ "$(counters "$out")" != "$(counters "$ref")" ]; then
		counters "$ref" > "$work/$name.want"
		counters "$out" | diff "$work/$name.want" -
		echo "FAIL: $name: counters differ from the --cpu run"
		failed=$((failed + 1))
		return
	fi
	if [ -n "$cap_ref" ]; then
		if ! cmp -s "$cap_ref" "$work/$name.pcapng"; then
			echo "FAIL: $name: capture differs from $cap_ref"
			failed=$((failed + 1))
			return
		fi
	elif ! "$check" "$in" "$work/$name.pcapng" "$filter" "$snap" \
			> "$work/$name.check" 2>&1; then
		cat "$work/$name.check"
		echo "FAIL: $name: capture is not libpcap's"
		failed=$((failed + 1))
		return
	fi
	echo "PASS: $name"
}

pcap="net_pcap0,rx_pcap=$in"
for f in "all:" "tcp443:tcp port 443" "vlan-udp:vlan and udp" "jumbo:len > 2048"; do
	tag=${f%%:*} filter=${f#*:}
	run "cpu-$tag" "$pcap" -- --cpu --filter "$filter" \
		--write "$work/cpu-$tag.pcapng"
	rc=$?
	check_run "cpu-$tag" "$filter" 262144 ""
	for m in "host-mapped" "staged" "host-mapped-burst32:host-mapped --burst 32 --ring-items 8" \
			"host-mapped-per-burst:host-mapped --launch-per-burst"; do
		mtag=${m%%:*} margs=${m#*:}
		[ "$mtag" = "$m" ] && margs=$m
		# shellcheck disable=SC2086
		run "$mtag-$tag" "$pcap" -- --mem $margs --filter "$filter" \
			--write "$work/$mtag-$tag.pcapng"
		rc=$?
		check_run "$mtag-$tag" "$filter" 262144 "$work/cpu-$tag.txt"
	done
done

# The rings without lap tags (--no-lap-tags, the A/B switch; the runs
# above tag them, and the stand-in takes each item's count from the tags
# as the kernel's prefetch does): capture and counters as --cpu's.
run host-mapped-untagged "$pcap" -- --mem host-mapped --no-lap-tags \
	--write "$work/host-mapped-untagged.pcapng"
rc=$?
check_run host-mapped-untagged "" 262144 "$work/cpu-all.txt" \
	"$work/cpu-all.pcapng"

# A mempool cache far smaller than an item (flush threshold 24): every
# collected item goes through the lcore's stash of mbufs (gpu_path.c,
# mbufs_release), into the cache a little before each burst, back whole
# once full and at the end. Capture and counters as --cpu's, every mbuf
# back.
run host-mapped-cache16 "$pcap" -- --mem host-mapped --mbuf-cache 16 \
	--write "$work/host-mapped-cache16.pcapng"
rc=$?
check_run host-mapped-cache16 "" 262144 "$work/cpu-all.txt" \
	"$work/cpu-all.pcapng"

# A GPU's latency (GPURX_STANDIN_GPU_US): each item DONE 200 us after
# the stand-in saw it, items of a ring of 8 held together (at times all
# of them), released in ring order. Capture and counters as --cpu's.
GPURX_STANDIN_GPU_US=200
export GPURX_STANDIN_GPU_US
for m in host-mapped staged; do
	run "$m-latency" "$pcap" -- --mem $m --burst 32 --ring-items 8 \
		--write "$work/$m-latency.pcapng"
	rc=$?
	check_run "$m-latency" "" 262144 "$work/cpu-all.txt" \
		"$work/cpu-all.pcapng"
done
unset GPURX_STANDIN_GPU_US

# A writer thread (--capture-writers) behind the GPU path: the capture
# and counters as --cpu's without one (the pool of 4 MiB holds the
# input's matches, so no chunk waits for a free buffer).
run host-mapped-writers "$pcap" -- --mem host-mapped --capture-writers 1 \
	--write "$work/host-mapped-writers.pcapng"
rc=$?
check_run host-mapped-writers "" 262144 "$work/cpu-all.txt" \
	"$work/cpu-all.pcapng"

run snaplen "$pcap" -- --mem host-mapped --filter "ip or ip6" --snaplen 100 \
	--write "$work/snaplen.pcapng"
rc=$?
check_run snaplen "ip or ip6" 100 ""

# The port's timestamps (net_pcap: the file's), per packet beside the
# entries (GPURX_IN_TS), kept to the microsecond; the later --ts wins over
# run's --ts none.
run ts-port "$pcap" -- --mem host-mapped --filter "tcp or udp" --ts port \
	--write "$work/ts-port.pcapng"
rc=$?
check_run ts-port "tcp or udp" 262144 ""
if [ "$rc" -ne 0 ]; then
	:	# check_run said why
elif "$check" "$in" "$work/ts-port.pcapng" "tcp or udp" 262144 --ts \
		> "$work/ts-port.ts" 2>&1; then
	echo "PASS: ts-port timestamps"
else
	cat "$work/ts-port.ts"
	echo "FAIL: ts-port: timestamps are not the file's"
	failed=$((failed + 1))
fi

# Frames that arrive holding less than their length (DPDK 22.11's
# net_pcap keeps a chained frame's length in 16 bits: frames past 64 KiB,
# run-cpu-e2e.sh short-chain) among whole ones in the same items: those
# items carry wire lengths per packet (GPURX_IN_WIRE, the earlier
# packets' filled in when the first cut one comes), and the capture must
# be the --cpu run's byte for byte, wire lengths included.
short=$work/short.pcap
"$gen" "$short" 2 600 0 20 || { echo "FAIL: cannot generate $short"; exit 1; }
run cpu-short "net_pcap0,rx_pcap=$short" -- --cpu --write "$work/cpu-short.pcapng"
rc_cpu=$?
run short "net_pcap0,rx_pcap=$short" -- --mem host-mapped \
	--write "$work/short.pcapng"
rc=$?
cut=$(sed -n 's/^chained: .*, \([0-9]*\) holding less than their length.*/\1/p' \
	"$work/short.txt")
if [ "$rc_cpu" -ne 0 ]; then
	cat "$work/cpu-short.txt"
	echo "FAIL: short: the --cpu run exited $rc_cpu"
	failed=$((failed + 1))
elif [ "$rc" -eq 0 ] && { [ -z "$cut" ] || [ "$cut" -eq 0 ]; }; then
	cat "$work/short.txt"
	echo "FAIL: short: no frame held less than its length (the case is not tested)"
	failed=$((failed + 1))
else
	check_run short "" 262144 "$work/cpu-short.txt" "$work/cpu-short.pcapng"
fi

# Foreign and odd mbufs: bounce copies, mbufs freed one by one.
GPURX_TEST_MANGLE=3 run mangle "$pcap" -- --mem host-mapped \
	--filter "tcp or udp" --write "$work/mangle.pcapng"
rc=$?
grep -q GPURX_TEST_MANGLE "$work/mangle.txt" ||
	{ echo "FAIL: mangle: the switch is not on"; failed=$((failed + 1)); }
mangled=$(sed -n 's/^test: \([0-9]*\) received mbufs made .*/\1/p' \
	"$work/mangle.txt")
[ "${mangled:-0}" -gt 0 ] || {
	echo "FAIL: mangle: no mbuf mangled (the seam did not act)"
	failed=$((failed + 1))
}
check_run mangle "tcp or udp" 262144 ""

# The capture writer rotating by size behind the GPU path: the files'
# packet blocks, file after file, are the --cpu run's capture.
run rotate "$pcap" -- --mem host-mapped --write "$work/rot.pcapng" \
	--rotate-size 300k
rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$work/rotate.txt"
	echo "FAIL: rotate: exit $rc"
	failed=$((failed + 1))
elif python3 "$(dirname "$0")/check-rotate.py" "$work/cpu-all.pcapng" "" \
		307200 "$work"/rot_[0-9]*.pcapng > "$work/rotate.check" 2>&1; then
	echo "PASS: rotate ($(cat "$work/rotate.check"))"
else
	cat "$work/rotate.check"
	echo "FAIL: rotate: the files are not the --cpu run's capture"
	failed=$((failed + 1))
fi

# Two queues, the same file on each: one capture, twice the packets
# (three lcores on whatever CPUs there are).
lcores="--lcores 0@0,1@0,2@1" run queues "$pcap,rx_pcap=$in" -- --mem host-mapped --queues 2 \
	--filter "tcp or udp" --write "$work/queues.pcapng"
rc=$?
one=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/cpu-all.txt")
two=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/queues.txt")
if [ "$rc" -ne 0 ] || [ -z "$one" ] || [ "$two" != $((2 * one)) ]; then
	cat "$work/queues.txt"
	echo "FAIL: queues: exit $rc, $two packets on two queues, $one on one"
	failed=$((failed + 1))
else
	echo "PASS: queues ($two packets)"
fi

# --stamps: the kernel reads each matched packet's stamp and the lcore
# accounts it as --cpu does, so the stamps report (per stream received,
# lost, reordered, duplicates, latency on the file's times) is the --cpu
# run's, in every mode, filtered, and with no RX time.
stamped=$work/stamps.pcap
"$(dirname "$gen")/gpurx-e2e-genstamps" "$stamped" "$work/stamps-want.json" \
	> /dev/null || { echo "FAIL: cannot generate $stamped"; exit 1; }
stamps_of() { # JSON: its "stamps" member, one line
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["stamps"], sort_keys=True))' "$1"
}
for s in "ts:--ts port" "none:--ts none" "udp:--ts port --filter udp"; do
	stag=${s%%:*} sargs=${s#*:}
	# shellcheck disable=SC2086
	run "cpu-stamps-$stag" "net_pcap0,rx_pcap=$stamped" -- --cpu --stamps \
		$sargs --json "$work/cpu-stamps-$stag.json"
	rc=$?
	want=$(stamps_of "$work/cpu-stamps-$stag.json" 2>/dev/null)
	if [ "$rc" -ne 0 ] || [ -z "$want" ]; then
		cat "$work/cpu-stamps-$stag.txt"
		echo "FAIL: cpu-stamps-$stag: exit $rc, no stamps report"
		failed=$((failed + 1))
		continue
	fi
	for m in "host-mapped" "staged" "burst32:host-mapped --burst 32 --ring-items 8" \
			"per-burst:host-mapped --launch-per-burst"; do
		mtag=${m%%:*} margs=${m#*:}
		[ "$mtag" = "$m" ] && margs=$m
		[ "$stag" != ts ] && [ "$mtag" != host-mapped ] && continue
		name=stamps-$stag-$mtag
		# shellcheck disable=SC2086
		run "$name" "net_pcap0,rx_pcap=$stamped" -- --mem $margs \
			--stamps $sargs --json "$work/$name.json"
		rc=$?
		got=$(stamps_of "$work/$name.json" 2>/dev/null)
		if [ "$rc" -ne 0 ] || [ "$got" != "$want" ]; then
			cat "$work/$name.txt"
			printf 'got  %s\nwant %s\n' "$got" "$want"
			echo "FAIL: $name: exit $rc, stamps differ from the --cpu run"
			failed=$((failed + 1))
		else
			echo "PASS: $name"
		fi
	done
done

# Through net_gpudma (packets in the fake GPU's memory, no file times),
# whole and split at 64 bytes, where stamps straddle the two buffers.
# net_gpudma does not say where its file ends: each run ends 2 s idle
# (--backpressure: no packet is dropped meanwhile).
run cpu-stamps-gpudma "net_gpudma0,rx_pcap=$stamped" -- --cpu --stamps \
	--idle-exit 2000 --json "$work/cpu-stamps-gpudma.json"
rc=$?
want=$(stamps_of "$work/cpu-stamps-gpudma.json" 2>/dev/null)
for sp in off 64; do
	name=stamps-gpudma-split-$sp
	run "$name" "net_gpudma0,rx_pcap=$stamped" -- --mem gpu --split "$sp" \
		--idle-exit 2000 --stamps --json "$work/$name.json"
	rc2=$?
	got=$(stamps_of "$work/$name.json" 2>/dev/null)
	if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ] || [ -z "$want" ] ||
			[ "$got" != "$want" ]; then
		cat "$work/$name.txt"
		printf 'got  %s\nwant %s\n' "$got" "$want"
		echo "FAIL: $name: exit $rc2 (--cpu $rc), stamps differ from the --cpu run"
		failed=$((failed + 1))
	else
		echo "PASS: $name"
	fi
done

[ "$failed" -eq 0 ] || { echo "FAIL: $failed run(s)"; exit 1; }
echo "PASS: every stand-in run"
