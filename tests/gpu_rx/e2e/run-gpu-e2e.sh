#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# GPU end-to-end runs of dpdk-gpu-rx over net_pcap: every GPU mode must
# write a capture byte-identical to --cpu on the same input (and equal to
# libpcap's own filtering), with the same counters and flow table; plus
# SIGINT in the middle of traffic with the persistent kernel; and the
# edges of issue 15: a kernel made to fault mid-run or never to quit,
# foreign and odd mbufs, a ring left READY by a previous user, several
# queues beside a second process on the same GPU. Packets in GPU memory
# (net_gpudma) whole and with RX buffer split (headers in host memory),
# and both under compute-sanitizer memcheck where it is installed; the
# flow export (issue 14) in every memory mode, and over two GPUs where the
# machine has them; --stamps in every memory mode; with two or more GPUs,
# every GPU mode with the queues spread over all of them, SIGINT under
# load and a kernel fault on each; the driver in a secondary process
# beside a capture.
#
# Usage: run-gpu-e2e.sh BUILD_DIR OUT_DIR
# Runs dpdk-gpu-rx, and dpdk-gpu-rx-test (its objects with the test
# switches, tests/gpu_rx/test_switches.c) for the cases that set a switch.
# Env:   GPU_RX_EAL_EXTRA  extra EAL options, e.g. "-d /path/pmds-23.0"
#        (dpdk-gpu-rx is linked with the build's librte_gpu_cuda.so)
#        GPU_RX_E2E_PCAP  real traffic to replay through every GPU mode too
#        (capture-lo.sh makes some)
#        GPU_RX_E2E_MODES the filter set's modes (default: all of them)
#        GPU_RX_E2E_GPUDMA devargs added to every net_gpudma port, e.g.
#        "fill=persistent" (the port's persistent fill kernel)
#        GPU_RX_E2E_PERSISTENT_FILL=0 leaves out the memcheck runs filled
#        by net_gpudma's persistent kernel
# Exit:  0 all passed, 1 a failure, 77 no GPU here.
set -u

build=$1 out=$2
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
test_app=$build/tests/gpu_rx/dpdk-gpu-rx-test
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap
check=$build/tests/gpu_rx/e2e/gpurx-e2e-check
eal_extra=${GPU_RX_EAL_EXTRA:-}
gpudma_extra=${GPU_RX_E2E_GPUDMA:-}

if [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L > /dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU on this machine"
	exit 77
fi
for f in "$app" "$test_app" "$gen" "$check"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done
mkdir -p "$out" || exit 1
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

in=$out/in.pcap
# One frame in 200 over 64 KiB, as a capture on Linux's loopback has them
# (an IP packet of 65535 bytes, 65549 or with a VLAN tag 65553 bytes).
# Longer ones do not cross net_pcap: DPDK 22.11 keeps the length in 16
# bits when it chains a frame (the short-chain case shows what then).
giants="200 65553"
# shellcheck disable=SC2086
"$gen" "$in" 1 3000 50 $giants || { echo "FAIL: cannot generate $in"; exit 1; }
"$gen" "$out/in-small.pcap" 1 500 0 || exit 1

# The GPU is a PCI device: no --no-pci here (NICs bound to kernel
# drivers are not taken by DPDK).
run=0
# Env: bg=1 in the background; lcores (default 0-1); app_env: VAR=value
# words for the app's environment (test switches: the test variant runs).
app_run() { # NAME VDEV_ARGS -- APP_ARGS...
	name=$1 vdev=$2
	shift 2
	run=$((run + 1))
	# In the background (bg=1) the app replaces the subshell, so $! is
	# the app itself and SIGINT reaches it.
	pre=""
	[ "${bg:-0}" = 1 ] && pre="exec"
	bin=$app
	[ -n "${app_env:-}" ] && bin=$test_app
	v=${port:-net_pcap0},$vdev
	case $v in net_gpudma*) v=$v${gpudma_extra:+,$gpudma_extra} ;; esac
	# shellcheck disable=SC2086
	$pre env ${app_env:-} "$bin" --no-huge -m 2048 --no-shconf \
		--file-prefix "gpurx-gpu-$$-$run" \
		-l "${lcores:-0-1}" --log-level=lib.eal:warning $eal_extra \
		--vdev "$v" -- --quiet "$@" \
		> "$out/$name.txt" 2>&1
}

# differs REF NAME JSON_FILTER: says how run NAME differs from run REF
# (the capture, where REF wrote one; then the JSON through the filter);
# false, saying nothing, when they agree.
differs() {
	if [ -e "$out/$1.pcapng" ] && ! cmp -s "$out/$1.pcapng" "$out/$2.pcapng"; then
		echo "capture differs from --cpu"
	elif ! "$3" "$out/$1.json" > "$out/$1.core" ||
			! "$3" "$out/$2.json" > "$out/$2.core" ||
			! cmp -s "$out/$1.core" "$out/$2.core"; then
		echo "counters or flows differ from --cpu"
	else
		return 1
	fi
}

# refused NAME PATTERN WHAT VDEV_ARGS -- APP_ARGS...: run NAME must fail
# with a line matching PATTERN (what is wrong and what to do).
refused() {
	r_name=$1 r_pattern=$2 r_what=$3
	shift 3
	app_run "$r_name" "$@"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$r_pattern" "$out/$r_name.txt"; then
		pass "$r_what: exit $rc, said why"
	else
		fail "$r_what: exit $rc (see $out/$r_name.txt)"
	fi
}

# Every mbuf back in its pool at the end of run NAME.
mbufs_back() {
	grep -Eq 'mbufs: +([0-9]+) of \1 back' "$out/$1.txt"
}

# The summary's counters and top flows of run output FILE.
summary_core() {
	grep -E '^(received|matched|captured|malformed|flows|chained):|^ +[0-9]+\. ' \
		"$1" | sed 's/ -> .*//'
}

# JSON without what legitimately differs between modes (the pools are sized
# per mode; that every mbuf came back is checked on its own; GPU ring item
# timings exist only in GPU modes).
json_core() {
	grep -v -e '"mode"' -e '"elapsed_s"' -e '"stopped_by"' -e '"mbufs"' \
		-e '"gpu_items"' "$1"
}

filters="
|
tcp port 443
net 10.0.0.0/8
vlan and udp
ip6 and tcp
icmp or icmp6
ip[6:2] & 0x1fff != 0
greater 500
sctp
not ip
len > 2048
"
# burst-N: N-packet ring items, so that every warp of a worker block
# classifies (128) and packets outgrow the 32 KiB staging area (512).
# gpu: packets in GPU memory, put there by net_gpudma (the GPU's engines
# in place of a NIC's DMA; its default fill, the scatter kernel) from the
# same file, whole (--split off). gpu+split: RX buffer split, the first
# 128 bytes into host memory, the rest into GPU memory: the counters of
# --cpu with the same split, the capture of --cpu unsplit. no-lap-tags:
# rings without lap tags (dpdk-gpu-rx tags them by default), the
# untagged kernel.
modes=${GPU_RX_E2E_MODES:-"host-mapped staged host-mapped,launch-per-burst staged,launch-per-burst
host-mapped,burst-128 host-mapped,burst-512 gpu gpu,launch-per-burst
gpu+split gpu+split,launch-per-burst host-mapped,no-lap-tags gpu,no-lap-tags"}

# --mem and --split of a mode's memory.
mem_args() {
	case $1 in
	gpu) echo "--mem gpu --split off" ;;
	gpu+split) echo "--mem gpu --split 128" ;;
	*) echo "--mem $1" ;;
	esac
}

# The options of a mode (MEMORY[,launch-per-burst|,burst-N]): its
# memory's (mem_args), then the variant's.
mode_args() {
	case $1 in
	*,launch-per-burst) echo "$(mem_args "${1%%,*}") --launch-per-burst" ;;
	*,burst-*) echo "$(mem_args "${1%%,*}") --burst ${1##*,burst-}" ;;
	# Rings without lap tags: the untagged kernel, loaded after READY.
	*,no-lap-tags) echo "$(mem_args "${1%%,*}") --no-lap-tags" ;;
	*) mem_args "$1" ;;
	esac
}

n=0
echo "$filters" | while IFS= read -r f; do
	[ -n "$f" ] || continue
	[ "$f" = "|" ] && f=""
	n=$((n + 1))
	# The reference: --cpu through each port the modes use (a capture
	# file names its port in its interface block).
	for port in net_pcap0 net_gpudma0; do
		ref=f$n-cpu-$port
		if ! app_run "$ref" "rx_pcap=$in" --cpu --ts none --filter "$f" \
				--write "$out/$ref.pcapng" --json "$out/$ref.json" \
				--idle-exit 1000; then
			echo "FAIL: [$f] --cpu through $port: exit $?"
			continue 2
		fi
	done
	# gpu+split's: the same split on the CPU (its counters: "chained"
	# counts the two-buffer packets), and its capture must be the
	# unsplit one.
	ref=f$n-cpu-split
	if ! port=net_gpudma0 app_run "$ref" "rx_pcap=$in" --cpu --split 128 \
			--ts none --filter "$f" --write "$out/$ref.pcapng" \
			--json "$out/$ref.json" --idle-exit 1000; then
		echo "FAIL: [$f] --cpu --split 128 through net_gpudma0: exit $?"
		continue
	elif ! cmp -s "$out/$ref.pcapng" "$out/f$n-cpu-net_gpudma0.pcapng"; then
		echo "FAIL: [$f] --cpu --split 128: capture differs from unsplit"
		continue
	fi
	for m in $modes; do
		mem=${m%%,*}
		name=f$n-$(echo "$m" | tr ,+ --)
		port=net_pcap0
		case $mem in gpu*) port=net_gpudma0 ;; esac
		ref=f$n-cpu-$port
		[ "$mem" = gpu+split ] && ref=f$n-cpu-split
		# --backpressure: file input is not line rate, nothing may drop.
		# shellcheck disable=SC2046,SC2086
		if ! app_run "$name" "rx_pcap=$in" $(mode_args "$m") --backpressure \
				--ts none --filter "$f" --write "$out/$name.pcapng" \
				--json "$out/$name.json" --idle-exit 1000; then
			echo "FAIL: [$f] $m: exit $? (see $out/$name.txt)"
			continue
		fi
		if why=$(differs "$ref" "$name" json_core); then
			echo "FAIL: [$f] $m: $why"
		elif [ "$mem" = gpu+split ] && ! grep -q "^split: the first 128 bytes" \
				"$out/$name.txt"; then
			echo "FAIL: [$f] $m: not split (see $out/$name.txt)"
		elif ! "$check" "$in" "$out/$name.pcapng" "$f" 262144 \
				> "$out/$name.check" 2>&1; then
			echo "FAIL: [$f] $m: $(cat "$out/$name.check")"
		else
			echo "PASS: [$f] $m: identical to --cpu and to libpcap"
		fi
	done
done > "$out/filters.log"
cat "$out/filters.log"
passed=$((passed + $(grep -c '^PASS' "$out/filters.log")))
failed=$((failed + $(grep -c '^FAIL' "$out/filters.log")))

# -c N as tcpdump -c: each GPU mode captures exactly libpcap's first N
# matches of the input and stops by itself.
for m in $modes; do
	mem=${m%%,*}
	name=count-$(echo "$m" | tr ,+ --)
	port=net_pcap0
	case $mem in gpu*) port=net_gpudma0 ;; esac
	# shellcheck disable=SC2046
	if ! app_run "$name" "rx_pcap=$in" $(mode_args "$m") --backpressure \
			--ts none -c 7 -w "$out/$name.pcapng" udp; then
		echo "FAIL: -c 7 $m: exit $? (see $out/$name.txt)"
	elif ! grep -q "^stopped by: *--count reached" "$out/$name.txt"; then
		echo "FAIL: -c 7 $m: not stopped by --count (see $out/$name.txt)"
	elif ! "$check" "$in" "$out/$name.pcapng" udp 262144 --first 7 \
			> "$out/$name.check" 2>&1; then
		echo "FAIL: -c 7 $m: $(cat "$out/$name.check")"
	else
		echo "PASS: -c 7 $m: libpcap's first 7 matches, then stopped"
	fi
done > "$out/count.log"
cat "$out/count.log"
passed=$((passed + $(grep -c '^PASS' "$out/count.log")))
failed=$((failed + $(grep -c '^FAIL' "$out/count.log")))

# Real traffic captured elsewhere (capture-lo.sh: loopback, 65549-byte
# frames; the GPU machine may have no tcpdump), when GPU_RX_E2E_PCAP names
# it: each GPU mode's capture, pcapng and pcap, with the file's own
# timestamps (--ts port), equals libpcap's filtering of the file.
real=${GPU_RX_E2E_PCAP:-}
if [ -n "$real" ]; then
	for f in "" "tcp" "greater 65001" "len < 1000"; do
		# gpu: through net_gpudma, which keeps no file timestamps.
		for mem in host-mapped staged gpu gpu+split; do
			port=net_pcap0 ts="--ts port" tscheck=--ts
			case $mem in gpu*)
				port=net_gpudma0 ts="--ts none" tscheck="" ;;
			esac
			for fmt in pcapng pcap; do
				name=real-$mem-$fmt-$(printf %s "$f" | tr -c 'a-z0-9' _)
				# shellcheck disable=SC2046,SC2086
				if ! app_run "$name" "rx_pcap=$real" $(mem_args "$mem") \
						--backpressure $ts --filter "$f" \
						--format $fmt --write "$out/$name.$fmt" \
						--idle-exit 1000; then
					fail "real [$f] $mem $fmt: exit $? (see $out/$name.txt)"
				elif ! grep -Eq "over 256 KiB cut 0(,|$)" "$out/$name.txt"; then
					fail "real [$f] $mem $fmt: frames cut"
				elif ! "$check" "$real" "$out/$name.$fmt" "$f" 262144 $tscheck \
						> "$out/$name.check" 2>&1; then
					fail "real [$f] $mem $fmt: $(cat "$out/$name.check")"
				else
					pass "real [$f] $mem $fmt: $(cat "$out/$name.check")${tscheck:+, timestamps kept}"
				fi
			done
		done
		port=net_pcap0
	done
fi

# split_captures_ok NAME all|some: of run NAME's captures, all (every one
# within its header buffer: --snaplen 64) or some but not all (full
# snaplen: the small packets') were written by the CPU from host memory,
# no copy-out by the GPU.
split_captures_ok() {
	sc_cap=$(sed -n 's/^captured: *\([0-9]*\) packets.*/\1/p' "$out/$1.txt")
	sc_hdr=$(sed -n 's/^ *\([0-9]*\) of them written from header buffers.*/\1/p' \
		"$out/$1.txt")
	[ -n "$sc_cap" ] && [ "$sc_cap" -gt 0 ] && [ -n "$sc_hdr" ] || return 1
	if [ "$2" = all ]; then
		[ "$sc_hdr" -eq "$sc_cap" ]
	else
		[ "$sc_hdr" -gt 0 ] && [ "$sc_hdr" -lt "$sc_cap" ]
	fi
}

# sigint_run SECONDS NAME VDEV_ARGS APP_ARGS...: run NAME in the
# background, SIGINT after SECONDS; its exit status in rc.
sigint_run() {
	s_wait=$1
	shift
	bg=1 app_run "$@" &
	pid=$!
	sleep "$s_wait"
	kill -INT $pid
	wait $pid
	rc=$?
}

# SIGINT with the persistent kernel busy on replayed traffic (gpu: packets
# in GPU memory, net_gpudma replaying the file without end; gpu+split:
# every mbuf of both pools back, and a capture both of the CPU's writing
# from header buffers (--snaplen 64) and of the kernel's copy-out, -p).
for mem in host-mapped staged gpu gpu+split gpu+split-p; do
	name=sigint-$mem
	port=net_pcap0 pargs="infinite_rx=1" snap="--snaplen 64" flt=sctp
	case $mem in gpu*) port=net_gpudma0 pargs="loop=0" ;; esac
	[ "${mem%-p}" = gpu+split ] && flt="tcp or udp"
	[ "$mem" = gpu+split-p ] && snap=""
	# shellcheck disable=SC2046,SC2086
	sigint_run 2 "$name" "rx_pcap=$out/in-small.pcap,$pargs" \
		$(mem_args "${mem%-p}") --filter "$flt" $snap \
		--write "$out/$name.pcapng"
	if [ "$rc" -ne 0 ]; then
		fail "$name: exit $rc (see $out/$name.txt)"
	elif ! mbufs_back "$name"; then
		fail "$name: mbufs not all returned"
	elif [ "${mem%-p}" = gpu+split ] && ! grep -q "header pool of as many" \
			"$out/$name.txt"; then
		fail "$name: no header pool (not split)"
	elif [ "${mem%-p}" = gpu+split ] && ! split_captures_ok "$name" \
			"$([ "$mem" = gpu+split ] && echo all || echo some)"; then
		fail "$name: captures within the header buffer not all written from host memory"
	elif ! grep -q 'persistent kernel quit in' "$out/$name.txt"; then
		fail "$name: kernel quit not reported"
	elif ! "$check" --valid "$out/$name.pcapng" > /dev/null 2>&1; then
		fail "$name: capture not readable to the end"
	else
		pass "$name: $(grep 'kernel quit' "$out/$name.txt")"
	fi
	rm -f "$out/$name.pcapng"
done
port=net_pcap0

# A kernel that faults mid-run (GPURX_TEST_KERNEL_FAULT: queue 0's first
# worker writes to an illegal address on taking its 200th item): the
# watch finds it within a second, the run stops at once with the CUDA
# error and what each queue lost, exit non-zero, every mbuf back. The old
# code ran on to --duration, dropping everything as "ring full".
for mem in host-mapped staged; do
	name=kernel-fault-$mem
	app_env=GPURX_TEST_KERNEL_FAULT=200 app_run "$name" \
		"rx_pcap=$out/in-small.pcap,infinite_rx=1" --mem "$mem" \
		--filter tcp --write "$out/$name.pcapng" --duration 30
	rc=$?
	found=$(sed -n 's/.*persistent kernel failed: .*, found \([0-9]*\) ms after.*/\1/p' \
		"$out/$name.txt")
	elapsed=$(sed -n 's/^elapsed: *\([0-9]*\)\..*/\1/p' "$out/$name.txt")
	if [ "$rc" -eq 0 ]; then
		fail "$name: exit 0 after a kernel fault"
	elif ! grep -q "persistent kernel failed: an illegal memory access" \
			"$out/$name.txt"; then
		fail "$name: the CUDA error is not reported (see $out/$name.txt)"
	elif [ -z "$found" ] || [ "$found" -ge 1000 ]; then
		fail "$name: fault found after ${found:-?} ms, not within 1 s"
	elif [ -z "$elapsed" ] || [ "$elapsed" -ge 10 ]; then
		fail "$name: ran ${elapsed:-?} s: did not stop at once"
	elif ! grep -q "stopped by: *GPU kernel failed" "$out/$name.txt"; then
		fail "$name: wrong exit reason: $(grep 'stopped by' "$out/$name.txt")"
	elif ! grep -q "queue 0: [0-9]* ring items, [0-9]* packets in flight" \
			"$out/$name.txt" ||
			! grep -Eq "lost on the GPU [1-9]" "$out/$name.txt"; then
		fail "$name: what was lost is not reported"
	elif ! mbufs_back "$name"; then
		fail "$name: mbufs not all returned"
	elif ! "$check" --valid "$out/$name.pcapng" > /dev/null 2>&1; then
		fail "$name: capture not readable to the end"
	else
		pass "$name: found in $found ms, stopped after ${elapsed}s, exit $rc"
	fi
	rm -f "$out/$name.pcapng"
done

# A kernel that does not quit (GPURX_TEST_KERNEL_HOLD: it ignores the quit
# flag): the program says so and exits 1 without freeing what the kernel
# still polls and without rte_eal_cleanup(), which would free it under the
# kernel; it must not crash doing so.
for mem in host-mapped staged; do
	name=kernel-held-$mem
	app_env=GPURX_TEST_KERNEL_HOLD=1 app_run "$name" \
		"rx_pcap=$out/in-small.pcap,infinite_rx=1" --mem "$mem" \
		--filter tcp --duration 2
	rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "$name: exit $rc, expected 1 (see $out/$name.txt)"
	elif ! grep -q "persistent kernel did not quit within 1 s" "$out/$name.txt"; then
		fail "$name: the kernel's refusal to quit is not reported"
	elif ! grep -q "exiting without freeing what .*polls" "$out/$name.txt"; then
		fail "$name: the skipped teardown is not explained"
	else
		pass "$name: exit 1, kernel left running, teardown and EAL cleanup skipped"
	fi
done

# Foreign and odd mbufs (GPURX_TEST_MANGLE=3: every third mbuf gets an
# external buffer in unregistered memory as mlx5's MPRQ does, becomes
# indirect over an unregistered pool, or ends in an empty segment):
# captured byte-identical to --cpu with the same mbufs, the foreign ones
# copied and counted.
json_core_mangled() {
	json_core "$1" | grep -v '"foreign"'
}
for f in "" "tcp or udp"; do
	ref=mangle-cpu-$(echo "${f:-all}" | tr -c 'a-z\n' -)
	app_env=GPURX_TEST_MANGLE=3 app_run "$ref" "rx_pcap=$in" --cpu --ts none \
		--filter "$f" --write "$out/$ref.pcapng" --json "$out/$ref.json" \
		--idle-exit 1000 || { fail "[$f] mangled --cpu: exit $?"; continue; }
	for m in host-mapped staged host-mapped,launch-per-burst; do
		mem=${m%%,*}
		name=$(echo "$ref" | sed 's/-cpu-/-/')-$(echo "$m" | tr , -)
		# shellcheck disable=SC2046
		if ! app_env=GPURX_TEST_MANGLE=3 app_run "$name" "rx_pcap=$in" \
				$(mode_args "$m") --backpressure --ts none --filter "$f" \
				--write "$out/$name.pcapng" --json "$out/$name.json" \
				--idle-exit 1000; then
			fail "[$f] $m mangled: exit $? (see $out/$name.txt)"
		elif why=$(differs "$ref" "$name" json_core_mangled); then
			fail "[$f] $m mangled: $why"
		elif [ "$mem" = host-mapped ] &&
				! grep -Eq '"foreign": [1-9]' "$out/$name.json"; then
			fail "[$f] $m mangled: no foreign mbuf counted"
		elif ! mbufs_back "$name"; then
			fail "[$f] $m mangled: mbufs not all returned"
		else
			pass "[$f] $m: foreign and odd mbufs identical to --cpu ($(sed -n 's/^foreign: *\([0-9]*\).*/\1/p' "$out/$name.txt") foreign)"
		fi
	done
done

# Frames that arrive holding less than their length (net_pcap's 16-bit
# chain length, frames past 64 KiB) among whole ones in the same items:
# those items carry wire lengths per packet (GPURX_IN_WIRE), which the
# kernel must take for them, and the capture must be --cpu's byte for
# byte, wire lengths included.
"$gen" "$out/short.pcap" 2 600 0 20 || { echo "FAIL: cannot generate short.pcap"; exit 1; }
if ! app_run short-cpu "rx_pcap=$out/short.pcap" --cpu --ts none \
		--write "$out/short-cpu.pcapng" --json "$out/short-cpu.json" \
		--idle-exit 1000; then
	fail "cut frames, --cpu: exit $?"
else
	for m in host-mapped staged host-mapped,launch-per-burst; do
		name=short-$(echo "$m" | tr , -)
		# shellcheck disable=SC2046
		if ! app_run "$name" "rx_pcap=$out/short.pcap" $(mode_args "$m") \
				--backpressure --ts none --write "$out/$name.pcapng" \
				--json "$out/$name.json" --idle-exit 1000; then
			fail "cut frames, $m: exit $? (see $out/$name.txt)"
		elif ! grep -Eq '"short_chains": [1-9]' "$out/$name.json"; then
			fail "cut frames, $m: no frame held less than its length"
		elif why=$(differs short-cpu "$name" json_core); then
			fail "cut frames, $m: $why"
		elif ! mbufs_back "$name"; then
			fail "cut frames, $m: mbufs not all returned"
		else
			pass "cut frames, $m: identical to --cpu, wire lengths included"
		fi
	done
fi

# Every status READY before the kernel starts, as reused GPU memory may
# hold (GPURX_TEST_DIRTY_RING): reset to FREE, so the capture is whole.
name=dirty-ring
if ! app_env=GPURX_TEST_DIRTY_RING=1 app_run "$name" "rx_pcap=$in" \
		--mem host-mapped --backpressure --ts none --write "$out/$name.pcapng" \
		--json "$out/$name.json" --idle-exit 1000; then
	fail "$name: exit $? (see $out/$name.txt)"
elif ! cmp -s "$out/f1-cpu-net_pcap0.pcapng" "$out/$name.pcapng"; then
	fail "$name: capture differs from --cpu"
else
	pass "$name: items left READY reset before the kernel started"
fi

# The capture rotated by size from the kernel's capture arena, packets
# in GPU memory: the files' packet blocks, file after file, are those of
# the --cpu capture (check-rotate.py), each file whole.
name=rotate-gpu
rm -f "$out/$name"_[0-9]*.pcapng
if ! port=net_gpudma0 app_run "$name" "rx_pcap=$in" --mem gpu --split off \
		--backpressure --ts none --write "$out/$name.pcapng" \
		--rotate-size 300k --idle-exit 1000; then
	fail "$name: exit $? (see $out/$name.txt)"
elif ! python3 "$(dirname "$0")/check-rotate.py" \
		"$out/f1-cpu-net_gpudma0.pcapng" "" 307200 \
		"$out/$name"_[0-9]*.pcapng > "$out/$name.check" 2>&1; then
	fail "$name: $(tail -n 1 "$out/$name.check")"
else
	pass "$name: $(cat "$out/$name.check")"
fi

# Several queues (4, the same file on each) while a second process runs
# its own persistent kernel (2 queues) on the same GPU: both launch with
# every block resident (or say why not) and count what --cpu counts (the
# packet counters: queues interleave in the capture and the flow slots);
# the 4-queue capture holds each queue's packets whole and in order.
json_counts() {
	grep -e '"rx_packets"' -e '"rx_bytes"' -e '"matched"' -e '"captured' \
		-e '"dropped"' -e '"malformed"' "$1"
}
q4="rx_pcap=$in,rx_pcap=$in,rx_pcap=$in,rx_pcap=$in"
q2="rx_pcap=$in,rx_pcap=$in"
lcores=0-4 app_run coresident-cpu4 "$q4" --cpu --queues 4 --ts none \
	--write "$out/coresident-cpu4-cap.pcapng" \
	--json "$out/coresident-cpu4.json" --idle-exit 1000
lcores=5-7 app_run coresident-cpu2 "$q2" --cpu --queues 2 --ts none \
	--json "$out/coresident-cpu2.json" --idle-exit 1000
for mem in host-mapped staged; do
	bg=1 lcores=5-7 app_run "coresident-$mem-b" "$q2" --mem "$mem" \
		--queues 2 --backpressure --ts none \
		--json "$out/coresident-$mem-b.json" --idle-exit 5000 &
	pid=$!
	sleep 1
	lcores=0-4 app_run "coresident-$mem-a" "$q4" --mem "$mem" --queues 4 \
		--backpressure --ts none --json "$out/coresident-$mem-a.json" \
		--write "$out/coresident-$mem-a-cap.pcapng" --idle-exit 1000
	rca=$?
	wait $pid
	rcb=$?
	ok=1
	for x in a:4:$rca b:2:$rcb; do
		side=${x%%:*} nq=${x#*:} rc=${x##*:}
		nq=${nq%%:*}
		t=coresident-$mem-$side
		if [ "$rc" -ne 0 ]; then
			ok=0
			fail "coresident $mem ($side, $nq queues): exit $rc: $(grep -m1 error "$out/$t.txt")"
		elif why=$(differs "coresident-cpu$nq" "$t" json_counts); then
			ok=0
			fail "coresident $mem ($side, $nq queues): $why"
		fi
	done
	for t in cpu4 "$mem-a"; do
		[ "$ok" = 1 ] || break
		if ! "$check" "$in" "$out/coresident-$t-cap.pcapng" "" 262144 \
				--queues 4 > "$out/coresident-$t-cap.txt" 2>&1; then
			ok=0
			fail "coresident $mem: the 4-queue capture of $t: $(tail -n 1 "$out/coresident-$t-cap.txt")"
		fi
	done
	rm -f "$out/coresident-$mem-a-cap.pcapng"
	[ "$ok" = 1 ] && pass "coresident $mem: 4 queues beside a 2-queue process"
done
rm -f "$out/coresident-cpu4-cap.pcapng"

# Two ports in one process (--port 0,1), two queues each, different
# files: each GPU mode's file per queue is the --cpu two-port run's, the
# counters and each port's line too, every mbuf back; its flow records
# (--ipfix-file, each port's in its own observation domain with its own
# ingressInterface, read back by libfixbuf with each domain's sequence
# checked) those of the --cpu run. Packets in GPU
# memory come through two net_gpudma ports: on two GPUs each port's
# queues on its own GPU (--gpus p0=0,p1=1), else both on the one GPU
# sharing its pool.
"$gen" "$out/in-b.pcap" 7 1000 0 > /dev/null || fail "cannot generate $out/in-b.pcap"
pgpu=0 pgpus=
if [ "$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')" -ge 2 ]; then
	pgpu=1 pgpus="--gpus p0=0,p1=1"
fi
port_lines() { grep -E '^port [01] \(' "$1"; }
# ports_flows NAME: NAME.ipfix's records, sorted, into NAME.flows.
ports_flows() {
	"$build/tests/gpu_rx/e2e/gpurx-ipfix-read" "$out/$1.ipfix" \
		2> "$out/$1.ipfix-read.txt" | sort > "$out/$1.flows" &&
		[ -s "$out/$1.flows" ] &&
		[ "$(cut -d, -f1,14 "$out/$1.flows" | sort -u | tr '\n' ' ')" = "1,0 2,1 " ]
}
for m in cpu host-mapped staged gpu; do
	name=ports-$m
	p0=net_pcap0 p1=net_pcap1 pa="rx_pcap=$in,rx_pcap=$in"
	pb="rx_pcap=$out/in-b.pcap,rx_pcap=$out/in-b.pcap"
	if [ "$m" = gpu ]; then
		p0=net_gpudma0 p1=net_gpudma1 pa="rx_pcap=$in,queues=2,gpu=0"
		pb="rx_pcap=$out/in-b.pcap,queues=2,gpu=$pgpu"
	fi
	margs="--mem $m $pgpus"
	[ "$m" = cpu ] && margs=--cpu
	[ "$m" = gpu ] && margs="--mem gpu --split off $pgpus"
	# The --cpu references: through net_pcap, and through net_gpudma.
	for ref in cpu cpu-gpudma; do
		[ "$m" = cpu ] || break
		r0=net_pcap0 r1=net_pcap1 ra=$pa rb=$pb
		[ "$ref" = cpu-gpudma ] && r0=net_gpudma0 r1=net_gpudma1 \
			ra="rx_pcap=$in,queues=2" rb="rx_pcap=$out/in-b.pcap,queues=2"
		# EAL probes the vdevs in their order: port 0 the first.
		# shellcheck disable=SC2086
		eal_extra="${GPU_RX_EAL_EXTRA:-} --vdev $r0,$ra" lcores=0-4 \
			port=$r1 app_run "ports-$ref" "$rb" --cpu --port 0,1 \
			--queues 2 --idle-exit 1000 --backpressure --ts none \
			--filter "tcp or udp" --write "$out/ports-$ref-q%q.pcapng" \
			--ipfix-file "$out/ports-$ref.ipfix" ||
			fail "ports-$ref: exit $? (see $out/ports-$ref.txt)"
		ports_flows "ports-$ref" ||
			fail "ports-$ref: its IPFIX file (see $out/ports-$ref.ipfix-read.txt)"
	done
	[ "$m" = cpu ] && continue
	ref=ports-cpu
	[ "$m" = gpu ] && ref=ports-cpu-gpudma
	# shellcheck disable=SC2086
	eal_extra="${GPU_RX_EAL_EXTRA:-} --vdev $p0,$pa" lcores=0-4 port=$p1 \
		app_run "$name" "$pb" $margs --port 0,1 --queues 2 \
		--idle-exit 1000 --backpressure --ts none --filter "tcp or udp" \
		--write "$out/$name-q%q.pcapng" --ipfix-file "$out/$name.ipfix"
	rc=$?
	why=
	[ "$rc" -eq 0 ] || why="exit $rc"
	for q in 0 1 2 3; do
		[ -n "$why" ] || cmp -s "$out/$ref-q$q.pcapng" "$out/$name-q$q.pcapng" ||
			why="queue $q's capture differs from --cpu"
	done
	[ -n "$why" ] || [ "$(summary_core "$out/$name.txt")" = \
		"$(summary_core "$out/$ref.txt")" ] || why="counters differ from --cpu"
	[ -n "$why" ] || [ "$(port_lines "$out/$name.txt")" = \
		"$(port_lines "$out/$ref.txt")" ] && [ -n "$(port_lines "$out/$name.txt")" ] ||
		why=${why:-"the port lines differ from --cpu, or are missing"}
	[ -n "$why" ] || mbufs_back "$name" || why="mbufs not all back"
	[ -n "$why" ] || ports_flows "$name" ||
		why="its IPFIX file: not read back cleanly, or not a domain per port (see $out/$name.ipfix-read.txt)"
	[ -n "$why" ] || cmp -s "$out/$ref.flows" "$out/$name.flows" ||
		why="its flow records differ from --cpu's ($out/$ref.flows)"
	if [ -n "$why" ]; then
		fail "$name: $why (see $out/$name.txt)"
	else
		pass "$name: two ports, each queue's capture and the flow records (a domain per port) those of --cpu"
	fi
	rm -f "$out/$name"-q?.pcapng
done

# The driver in a DPDK secondary process beside a running capture (issue
# 36): dpdk-test-gpudev --proc-type=secondary sees the primary's GPUs,
# allocates, registers and frees its own memory and communication lists
# on each, is refused what is not its own, and leaves the primary alone:
# the capture runs on, stops at SIGINT with exit 0, every mbuf back. A
# secondary needs the primary's hugepages (DPDK 22.11 does not share
# --no-huge memory).
tgd=$build/app/test-gpudev/dpdk-test-gpudev
free_huge=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if [ ! -x "$tgd" ]; then
	fail "secondary: $tgd not built"
elif [ "${free_huge:-0}" -lt 1024 ] || ! grep -q hugetlbfs /proc/mounts; then
	echo "SKIP: secondary beside a capture: no 2 GiB of free hugepages mounted"
else
	name=secondary-beside-capture
	pfx=gpurx-mp-$$
	# shellcheck disable=SC2086
	"$app" -m 1024 --file-prefix "$pfx" -l 0-1 --log-level=lib.eal:warning \
		$eal_extra --vdev "net_pcap0,rx_pcap=$out/in-small.pcap,infinite_rx=1" \
		-- --quiet --mem host-mapped --filter "tcp or udp" \
		--write "$out/$name.pcapng" > "$out/$name.txt" 2>&1 &
	pid=$!
	sleep 2
	# shellcheck disable=SC2086
	timeout 120 "$tgd" --proc-type=secondary --file-prefix "$pfx" -l 2 \
		--log-level=lib.eal:warning $eal_extra -- --case info \
		--case mem_alloc_kernel --case mem_register_kernel \
		--case comm_list --case errors > "$out/$name-secondary.txt" 2>&1
	src=$?
	sleep 1
	kill -INT $pid
	wait $pid
	rc=$?
	if [ "$src" -ne 0 ] || ! grep -q "^PASS mem_alloc_kernel" \
			"$out/$name-secondary.txt" ||
			grep -q "^FAIL" "$out/$name-secondary.txt"; then
		fail "$name: the secondary: exit $src (see $out/$name-secondary.txt)"
	elif [ "$rc" -ne 0 ] || ! mbufs_back "$name"; then
		fail "$name: the primary: exit $rc, or mbufs not back (see $out/$name.txt)"
	elif ! grep -q 'persistent kernel quit in' "$out/$name.txt" ||
			! "$check" --valid "$out/$name.pcapng" > /dev/null 2>&1; then
		fail "$name: the primary's kernel or capture (see $out/$name.txt)"
	else
		pass "$name: $(grep -c '^PASS' "$out/$name-secondary.txt") cases passed in the secondary, the capture ran on"
	fi
	rm -f "$out/$name.pcapng"
fi

# A capture file per queue (--write with %q), 4 queues (the same file on
# each), GPU modes: each queue's file is libpcap's matches of the input,
# whole and in order, and the files hold what the run counts captured.
for mem in host-mapped staged; do
	name=queue-files-$mem
	lcores=0-4 app_run "$name" "$q4" --mem "$mem" --queues 4 \
		--backpressure --ts none --filter "tcp or udp" \
		--json "$out/$name.json" --write "$out/$name-q%q.pcapng" \
		--idle-exit 1000
	rc=$?
	why=
	total=0
	[ "$rc" -eq 0 ] || why="exit $rc: $(grep -m1 error "$out/$name.txt")"
	for q in 0 1 2 3; do
		[ -z "$why" ] || break
		if ! "$check" "$in" "$out/$name-q$q.pcapng" "tcp or udp" 262144 \
				> "$out/$name-check.txt" 2>&1; then
			why="queue $q's file: $(tail -n 1 "$out/$name-check.txt")"
		else
			k=$("$check" --valid "$out/$name-q$q.pcapng" |
				sed -n 's/.* is valid, \([0-9]*\) packets$/\1/p')
			total=$((total + k))
		fi
	done
	want=$(sed -n 's/^ *"captured": \([0-9]*\),$/\1/p' "$out/$name.json" 2>/dev/null)
	[ -n "$why" ] || [ "$total" = "$want" ] ||
		why="$total packets in the files, the run says $want"
	rm -f "$out/$name"-q?.pcapng
	if [ -n "$why" ]; then
		fail "$name: $why"
	else
		pass "$name: a capture file per queue, $total packets"
	fi
done

# A software port is refused in gpu mode, naming the port.
refused mem-gpu-refused "port 0 (net_pcap).*host-mapped" \
	"--mem gpu refused for net_pcap" "rx_pcap=$in" --mem gpu --idle-exit 500

# net_gpudma can DMA and split: the default is gpu, split at 128 bytes.
# Where the port refuses the mapping (GPURX_TEST_DMA_MAP_REFUSED, as a
# NIC without peer memory does), the default falls back to host-mapped
# saying why, unsplit, with the same capture; an explicit --mem gpu is an
# error saying what to do, and so is an explicit --split with host memory.
port=net_gpudma0
app_run mem-auto-gpudma "rx_pcap=$in" --backpressure --ts none \
	--write "$out/mem-auto-gpudma.pcapng" --json "$out/mem-auto-gpudma.json" \
	--idle-exit 1000
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "mode gpu/gpu: default: the port is a DMA-capable" \
		"$out/mem-auto-gpudma.txt"; then
	fail "--mem auto on net_gpudma: exit $rc, or not gpu mode"
elif ! grep -q "^split: the first 128 bytes .*: default with --mem gpu" \
		"$out/mem-auto-gpudma.txt"; then
	fail "--mem auto on net_gpudma: not split by default, or not said"
elif why=$(differs f1-cpu-split mem-auto-gpudma json_core); then
	fail "--mem auto on net_gpudma: $why"
else
	pass "--mem auto on net_gpudma: gpu mode split at 128, identical to --cpu"
fi
app_env=GPURX_TEST_DMA_MAP_REFUSED=1 app_run mem-auto-refused \
	"rx_pcap=$in" --backpressure --ts none \
	--write "$out/mem-auto-refused.pcapng" --json "$out/mem-auto-refused.json" \
	--idle-exit 1000
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "refused to map GPU.*memory for DMA.*host memory mapped into the GPU instead" \
		"$out/mem-auto-refused.txt" ||
		! grep -q '"mode": "gpu/host-mapped"' "$out/mem-auto-refused.json"; then
	fail "--mem auto, mapping refused: exit $rc, no fallback line or not host-mapped"
elif ! grep -q "^split: off: default with --mem host-mapped" \
		"$out/mem-auto-refused.txt"; then
	fail "--mem auto, mapping refused: split not off, or not said"
elif why=$(differs f1-cpu-net_gpudma0 mem-auto-refused json_core); then
	fail "--mem auto, mapping refused: $why"
else
	pass "--mem auto, mapping refused: host-mapped, said why, identical to --cpu"
fi
app_env=GPURX_TEST_DMA_MAP_REFUSED=1 refused mem-gpu-refused-map \
	"cannot DMA into GPU.*memory.*Use --mem host-mapped" \
	"--mem gpu, mapping refused" "rx_pcap=$in" --mem gpu --idle-exit 500
app_env=GPURX_TEST_DMA_MAP_REFUSED=1 refused split-refused-map \
	"error: --split 128 puts the payload into GPU memory: it needs --mem gpu.*--split off" \
	"--split 128, mapping refused (host-mapped)" "rx_pcap=$in" \
	--split 128 --idle-exit 500
port=net_pcap0
refused split-refused-pcap "error: --split 128 puts the payload into GPU memory" \
	"--split 128 with --mem host-mapped" "rx_pcap=$in" --mem host-mapped \
	--split 128 --idle-exit 500

# compute-sanitizer memcheck of packets in GPU memory, whole and split,
# persistent and per burst (no stall watch: memcheck slows the kernel by
# orders of magnitude): exit 0, no error, every mbuf back, the capture of
# --cpu. Jumbo frames (one in 40) take the gathered-payload path. The
# "+fill-persistent" cases (GPU_RX_E2E_PERSISTENT_FILL=0 leaves them out)
# fill with net_gpudma's persistent kernel (fill=persistent) beside
# dpdk-gpu-rx's own. A run past 300 s fails rather than holding up the
# rest.
cs=$(command -v compute-sanitizer ||
	ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null ||
	{ command -v nvcc > /dev/null &&
		ls "$(dirname "$(command -v nvcc)")/compute-sanitizer" 2> /dev/null; })
if [ -n "$cs" ]; then
	mc_in=$out/memcheck.pcap
	"$gen" "$mc_in" 7 800 40 > /dev/null || exit 1
	port=net_gpudma0
	app_run memcheck-cpu "rx_pcap=$mc_in" --cpu --ts none \
		--filter 'tcp or udp' --write "$out/memcheck-cpu.pcapng" \
		--idle-exit 1000 || fail "memcheck reference: exit $?"
	mfs="gpu gpu,launch-per-burst gpu+split gpu+split,launch-per-burst"
	[ "${GPU_RX_E2E_PERSISTENT_FILL:-1}" = 1 ] &&
		mfs="$mfs gpu+fill-persistent gpu+split+fill-persistent"
	for mf in $mfs; do
		m=${mf%+fill-persistent} fill=
		[ "$m" != "$mf" ] && fill=,fill=persistent
		name=memcheck-$(echo "$mf" | tr , -)
		# The sanitizer runs the app: app_run's command, behind it.
		# shellcheck disable=SC2046,SC2086
		timeout --kill-after=10 300 \
		"$cs" --tool memcheck --error-exitcode 3 "$app" --no-huge -m 2048 \
			--no-shconf --file-prefix "gpurx-gpu-$$-$name" -l 0-1 \
			--log-level=lib.eal:warning $eal_extra \
			--vdev "net_gpudma0,rx_pcap=$mc_in$fill${gpudma_extra:+,$gpudma_extra}" -- --quiet \
			$(mode_args "$m") --backpressure --ts none \
			--filter 'tcp or udp' --write "$out/$name.pcapng" \
			--idle-exit 2000 --stall-ms 0 > "$out/$name.txt" 2>&1
		rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "$name: exit $rc (see $out/$name.txt)"
		elif ! grep -q "ERROR SUMMARY: 0 errors" "$out/$name.txt"; then
			fail "$name: memcheck found errors (see $out/$name.txt)"
		elif ! mbufs_back "$name"; then
			fail "$name: mbufs not all returned"
		elif ! cmp -s "$out/memcheck-cpu.pcapng" "$out/$name.pcapng"; then
			fail "$name: capture differs from --cpu"
		else
			pass "$name: memcheck clean, every mbuf back, capture of --cpu"
		fi
	done
	port=net_pcap0
	rm -f "$out"/memcheck*.pcap*
else
	echo "SKIP: memcheck cases: no compute-sanitizer (CUDA toolkit) here"
fi

# --stamps in every GPU mode: the kernel reads each matched packet's
# stamp, and the report (per stream received, lost, reordered,
# duplicates, latency) must be the --cpu run's through the same port.
# net_pcap with the file's record times (--ts port, latencies exact);
# net_gpudma keeps no file times (--ts none: counts only).
genstamps=$build/tests/gpu_rx/e2e/gpurx-e2e-genstamps
stamps_of() { # JSON: its "stamps" member, one line
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["stamps"], sort_keys=True))' "$1"
}
if ! "$genstamps" "$out/stamps.pcap" "$out/stamps-want.json" > /dev/null; then
	fail "stamps: cannot generate $out/stamps.pcap"
else
	for sport in net_pcap0 net_gpudma0; do
		sts="--ts port"
		[ "$sport" = net_gpudma0 ] && sts="--ts none"
		# shellcheck disable=SC2086
		port=$sport app_run "stamps-cpu-$sport" "rx_pcap=$out/stamps.pcap" \
			--cpu --stamps $sts --json "$out/stamps-cpu-$sport.json" \
			--idle-exit 1000
	done
	# gpu+split64: stamps straddling the header buffer and the rest
	# (read through the two-run view); stream 4's lie past the 128
	# bytes the kernel stages (read where the packet is).
	for m in $modes gpu+split64; do
		mem=${m%%,*}
		sport=net_pcap0 sts="--ts port"
		case $mem in gpu*) sport=net_gpudma0 sts="--ts none" ;; esac
		name=stamps-$(echo "$m" | tr ,+ --)
		want=$(stamps_of "$out/stamps-cpu-$sport.json" 2>/dev/null)
		margs=$(mode_args "$m")
		[ "$m" = gpu+split64 ] && margs="--mem gpu --split 64"
		# shellcheck disable=SC2086
		port=$sport app_run "$name" "rx_pcap=$out/stamps.pcap" \
			$margs --backpressure --stamps $sts \
			--json "$out/$name.json" --idle-exit 1000
		rc=$?
		got=$(stamps_of "$out/$name.json" 2>/dev/null)
		if [ "$rc" -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
			pass "$name: the stamps report of --cpu"
		else
			fail "$name: exit $rc, stamps differ from --cpu through $sport (see $out/$name.txt)"
		fi
	done
fi

# Flow export in every GPU memory mode: nfcapd collects exactly the
# records gpurx-flowref computes for the same flows, as in CI with --cpu
# (run-ipfix-e2e.sh; packets in GPU memory come through net_gpudma, which
# keeps no file timestamps: every packet at time 0 there). A 4-record
# export ring the GPU writes: full, counted, no packet lost from the
# records. Record boundaries of one flow a few packets apart (dense:
# several in one 32-packet chunk, decided by one lane for the flow's
# lanes), with the file's timestamps. ring-full's small ring is a test
# switch: the test variant runs it.
ipfix_sh=$(dirname "$0")/run-ipfix-e2e.sh
ipfix_bin=$build/tests/gpu_rx/e2e
# ipfix_run NAME CASE APP PORT QUEUES MODE_ARGS...: one case of
# run-ipfix-e2e.sh, said as passed, skipped or failed.
ipfix_run() {
	i_name=$1 i_case=$2 i_app=$3 i_port=$4 i_queues=$5
	shift 5
	GPU_RX_IPFIX_EAL="--no-huge -m 2048 $eal_extra" PORT=$i_port \
		GPU_RX_IPFIX_QUEUES=$i_queues sh "$ipfix_sh" "$i_case" "$i_app" \
		"$ipfix_bin" "$out/$i_name" "$@" --backpressure \
		> "$out/$i_name.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$i_name: $(grep '^PASS' "$out/$i_name.log" | tail -1 | cut -c7-)"
	elif [ "$rc" -eq 77 ]; then
		echo "SKIP: $i_name: $(grep '^SKIP' "$out/$i_name.log")"
	else
		fail "$i_name: $(grep -m3 'FAIL' "$out/$i_name.log" | tr '\n' ' ')(see $out/$i_name.log)"
	fi
}
# Each memory mode with the persistent kernel and per burst.
for m in host-mapped staged gpu gpu+split host-mapped,launch-per-burst \
		staged,launch-per-burst gpu,launch-per-burst \
		gpu+split,launch-per-burst ring-full:host-mapped \
		ring-full:host-mapped,launch-per-burst dense:host-mapped \
		dense:staged dense:host-mapped,launch-per-burst; do
	case $m in
	ring-full:*) icase=ring-full im=${m#ring-full:} ;;
	dense:*) icase=dense im=${m#dense:} ;;
	*) icase=nfcapd im=$m ;;
	esac
	iport=net_pcap0
	case $im in gpu*) iport=net_gpudma0 ;; esac
	iapp=$app
	[ "$icase" = ring-full ] && iapp=$test_app
	# shellcheck disable=SC2046
	ipfix_run "ipfix-$(echo "$m" | tr ,:+ ---)" "$icase" "$iapp" "$iport" 1 \
		$(mode_args "$im")
done

# Flow export over every GPU (--gpus 0,1,..), a queue each and each flow
# on one (its own file, as RSS keeps it): one exporter, exactly the
# records gpurx-flowref computes, as the runs above on one GPU and --cpu
# in CI give them; the exporter's statistics and a full ring over them.
ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
if [ "$ngpus" -ge 2 ]; then
	glist=$(seq -s, 0 $((ngpus - 1)))
	for m in nfcapd:host-mapped nfcapd:staged \
			nfcapd:host-mapped,launch-per-burst ring-full:host-mapped \
			dense:host-mapped; do
		icase=${m%%:*} im=${m#*:}
		iapp=$app
		[ "$icase" = ring-full ] && iapp=$test_app
		# shellcheck disable=SC2046
		ipfix_run "ipfix-gpus-$icase-$(echo "$im" | tr , -)" "$icase" \
			"$iapp" net_pcap0 "$ngpus" $(mode_args "$im") \
			--gpus "$glist"
	done
else
	echo "SKIP: flow export over several GPUs: $ngpus GPU(s) here"
fi

# RX buffer split over two GPUs (--mem gpu --split 64, a header pool per
# GPU) through one net_gpudma port of two queues, queue 1's payload pool
# in GPU 1's memory and filled by GPU 1, as by a NIC of its own: by its
# scatter kernel (the default) and by copies (scatter=0,batch=0). Each
# queue's capture must be the unsplit --cpu run's, the counters and top
# flows those of --cpu --split 64, every mbuf of every pool back, and the
# port must say that GPU 1 fills queue 1.
if [ "$ngpus" -ge 2 ]; then
	gq="rx_pcap=$in,queues=2"
	if ! lcores=0-2 port=net_gpudma0 app_run gpus-cpu "$gq" --cpu \
			--queues 2 --ts none --idle-exit 1000 \
			--write "$out/gpus-cpu-q%q.pcapng" ||
			! lcores=0-2 port=net_gpudma0 app_run gpus-cpu-split64 "$gq" \
			--cpu --queues 2 --split 64 --ts none --idle-exit 1000 \
			--write "$out/gpus-cpu-split64-q%q.pcapng"; then
		fail "split over two GPUs: the --cpu runs failed (see $out/gpus-cpu*.txt)"
	else
		for fill in scatter: copies:,scatter=0,batch=0; do
			name=gpus-split64-${fill%%:*}
			eal_extra="${GPU_RX_EAL_EXTRA:-} --log-level=pmd.net.gpudma:info" \
				lcores=0-2 port=net_gpudma0 app_run "$name" \
				"$gq${fill#*:}" --mem gpu --gpus 0,1 --split 64 \
				--queues 2 --backpressure --ts none \
				--idle-exit 1000 --write "$out/$name-q%q.pcapng"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				fail "$name: exit $rc (see $out/$name.txt)"
			elif ! grep -q "rx queue 1: .* filled by GPU 1" \
					"$out/$name.txt"; then
				fail "$name: queue 1 not filled by GPU 1 (see $out/$name.txt)"
			elif ! grep -q "and a header pool of as many per GPU" \
					"$out/$name.txt"; then
				fail "$name: no header pool per GPU (see $out/$name.txt)"
			elif ! cmp -s "$out/gpus-cpu-q0.pcapng" "$out/$name-q0.pcapng" ||
					! cmp -s "$out/gpus-cpu-q1.pcapng" "$out/$name-q1.pcapng"; then
				fail "$name: a queue's capture differs from --cpu"
			elif [ "$(summary_core "$out/$name.txt")" != \
					"$(summary_core "$out/gpus-cpu-split64.txt")" ]; then
				fail "$name: counters or flows differ from --cpu --split 64"
			elif ! mbufs_back "$name" || grep -q "not returned" "$out/$name.txt"; then
				fail "$name: mbufs not all back (see $out/$name.txt)"
			else
				pass "$name: each queue's capture and the counters those of --cpu"
			fi
		done
	fi
else
	echo "SKIP: split over two GPUs: $ngpus GPU(s) here"
fi

# Every GPU of the machine at once (issue 36): two queues a GPU, queue q
# on GPU q mod N (--gpus all), the same file on each queue. Each GPU mode's
# file per queue is the --cpu run's byte for byte, the counters and top
# flows too (every GPU's flow table merged), a GPU line each, every mbuf
# back; packets in GPU memory through one net_gpudma port whose queues
# are on the GPUs, against --cpu on the same port. Then SIGINT under load
# over every GPU, and a kernel fault on each GPU: the run stops naming
# the GPU, exit non-zero, every mbuf back.
if [ "$ngpus" -ge 2 ]; then
	nq=$((2 * ngpus))
	lcq=0-$nq
	qfiles=
	i=0
	while [ $i -lt $nq ]; do
		qfiles="$qfiles${qfiles:+,}rx_pcap=$in" i=$((i + 1))
	done
	# all_queues_equal REF NAME: each queue's file of NAME is REF's.
	all_queues_equal() {
		i=0
		while [ $i -lt $nq ]; do
			cmp -s "$out/$1-q$i.pcapng" "$out/$2-q$i.pcapng" ||
				{ echo "queue $i's capture differs from --cpu"; return 0; }
			i=$((i + 1))
		done
		return 1
	}
	every_gpu_line() {
		g=0
		while [ $g -lt "$ngpus" ]; do
			grep -q "^GPU $g: " "$out/$1.txt" || { echo "no GPU $g line"; return 0; }
			g=$((g + 1))
		done
		return 1
	}
	for ref in "allgpus-cpu:net_pcap0:$qfiles" \
			"allgpus-cpu-gpudma:net_gpudma0:rx_pcap=$in,queues=$nq"; do
		r=${ref%%:*} rest=${ref#*:}
		lcores=$lcq port=${rest%%:*} app_run "$r" "${rest#*:}" --cpu \
			--queues "$nq" --ts none --backpressure --idle-exit 1000 \
			--filter "tcp or udp" --write "$out/$r-q%q.pcapng" ||
			fail "$r: the --cpu run failed (see $out/$r.txt)"
	done
	for m in host-mapped staged host-mapped,launch-per-burst gpu; do
		name=allgpus-$(echo "$m" | tr , -)
		ref=allgpus-cpu p=net_pcap0 pa=$qfiles
		[ "$m" = gpu ] && ref=allgpus-cpu-gpudma p=net_gpudma0 \
			pa="rx_pcap=$in,queues=$nq"
		# shellcheck disable=SC2046
		lcores=$lcq port=$p app_run "$name" "$pa" $(mode_args "$m") \
			--gpus all --queues "$nq" --ts none --backpressure \
			--idle-exit 1000 --filter "tcp or udp" \
			--write "$out/$name-q%q.pcapng"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "$name: exit $rc (see $out/$name.txt)"
		elif why=$(all_queues_equal "$ref" "$name"); then
			fail "$name: $why"
		elif [ "$(summary_core "$out/$name.txt")" != \
				"$(summary_core "$out/$ref.txt")" ]; then
			fail "$name: counters or top flows differ from --cpu"
		elif why=$(every_gpu_line "$name"); then
			fail "$name: $why (see $out/$name.txt)"
		elif ! mbufs_back "$name"; then
			fail "$name: mbufs not all back"
		else
			pass "$name: $nq queues over $ngpus GPUs, each queue's capture that of --cpu"
		fi
		rm -f "$out/$name"-q*.pcapng
	done
	for mem in host-mapped gpu; do
		name=allgpus-sigint-$mem
		p=net_pcap0 pa="$(echo "$qfiles" | sed "s|$in|$out/in-small.pcap|g"),infinite_rx=1"
		[ "$mem" = gpu ] && p=net_gpudma0 pa="rx_pcap=$out/in-small.pcap,loop=0,queues=$nq"
		# shellcheck disable=SC2046
		lcores=$lcq port=$p sigint_run 3 "$name" "$pa" $(mem_args "$mem") \
			--gpus all --queues "$nq" --filter "tcp or udp" \
			--write "$out/$name.pcapng"
		if [ "$rc" -ne 0 ]; then
			fail "$name: exit $rc (see $out/$name.txt)"
		elif ! mbufs_back "$name"; then
			fail "$name: mbufs not all returned (see $out/$name.txt)"
		elif ! grep -q 'persistent kernel quit in' "$out/$name.txt"; then
			fail "$name: kernel quit not reported"
		elif ! "$check" --valid "$out/$name.pcapng" > /dev/null 2>&1; then
			fail "$name: capture not readable to the end"
		elif why=$(every_gpu_line "$name"); then
			fail "$name: $why"
		else
			pass "$name: SIGINT under load over $ngpus GPUs, every mbuf back"
		fi
		rm -f "$out/$name.pcapng"
	done
	# Each GPU's queue 0 faults on its 200th item.
	name=allgpus-kernel-fault
	lcores=$lcq app_env=GPURX_TEST_KERNEL_FAULT=200 app_run "$name" \
		"$(echo "$qfiles" | sed "s|$in|$out/in-small.pcap|g"),infinite_rx=1" \
		--mem host-mapped --gpus all --queues "$nq" --filter tcp \
		--duration 30
	rc=$?
	if [ "$rc" -eq 0 ] ||
			! grep -q "error: GPU [0-9]*: persistent kernel failed" "$out/$name.txt" ||
			! grep -q "stopped by: *GPU kernel failed (GPU [0-9]*)" "$out/$name.txt" ||
			! mbufs_back "$name"; then
		fail "$name: exit $rc, or the GPU not named, or mbufs not back (see $out/$name.txt)"
	else
		pass "$name: $(grep -m1 'stopped by' "$out/$name.txt"), exit $rc"
	fi
else
	echo "SKIP: every GPU at once: $ngpus GPU(s) here"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
