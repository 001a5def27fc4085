#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# GPU end-to-end runs of dpdk-gpu-rx over net_pcap: every GPU mode must
# write a capture byte-identical to --cpu on the same input (and equal to
# libpcap's own filtering), with the same counters and flow table; plus
# SIGINT in the middle of traffic with the persistent kernel.
#
# Usage: run-gpu-e2e.sh BUILD_DIR OUT_DIR
# Env:   GPU_RX_EAL_EXTRA  extra EAL options, e.g. "-d /path/pmds-23.0"
#        (dpdk-gpu-rx is linked with the build's librte_gpu_cuda.so)
# Exit:  0 all passed, 1 a failure, 77 no GPU here.
set -u

build=$1 out=$2
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
gen=$build/examples/gpu_rx/e2e/gpurx-e2e-genpcap
check=$build/examples/gpu_rx/e2e/gpurx-e2e-check
eal_extra=${GPU_RX_EAL_EXTRA:-}

if [ ! -e /dev/nvidia0 ] && ! nvidia-smi -L > /dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU on this machine"
	exit 77
fi
for f in "$app" "$gen" "$check"; do
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
app_run() { # NAME VDEV_ARGS -- APP_ARGS...
	name=$1 vdev=$2
	shift 2
	run=$((run + 1))
	# In the background (bg=1) the app replaces the subshell, so $! is
	# the app itself and SIGINT reaches it.
	pre=""
	[ "${bg:-0}" = 1 ] && pre="exec"
	# shellcheck disable=SC2086
	$pre "$app" --no-huge -m 2048 --no-shconf --file-prefix "gpurx-gpu-$$-$run" \
		-l 0-1 --log-level=lib.eal:warning $eal_extra \
		--vdev "net_pcap0,$vdev" -- --quiet "$@" \
		> "$out/$name.txt" 2>&1
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
modes="host-mapped staged host-mapped,launch-per-burst staged,launch-per-burst
host-mapped,burst-128 host-mapped,burst-512"

n=0
echo "$filters" | while IFS= read -r f; do
	[ -n "$f" ] || continue
	[ "$f" = "|" ] && f=""
	n=$((n + 1))
	ref=f$n-cpu
	if ! app_run "$ref" "rx_pcap=$in" --cpu --ts none --filter "$f" \
			--write "$out/$ref.pcapng" --json "$out/$ref.json" \
			--idle-exit 1000; then
		echo "FAIL: [$f] --cpu exit $?"
		continue
	fi
	for m in $modes; do
		mem=${m%%,*}
		case $m in
		*,launch-per-burst) extra="--launch-per-burst" ;;
		*,burst-*) extra="--burst ${m##*,burst-}" ;;
		*) extra="" ;;
		esac
		name=f$n-$(echo "$m" | tr , -)
		# shellcheck disable=SC2086
		# --backpressure: file input is not line rate, nothing may drop.
		if ! app_run "$name" "rx_pcap=$in" --mem "$mem" $extra --backpressure \
				--ts none --filter "$f" --write "$out/$name.pcapng" \
				--json "$out/$name.json" --idle-exit 1000; then
			echo "FAIL: [$f] $m: exit $? (see $out/$name.txt)"
			continue
		fi
		if ! cmp -s "$out/$ref.pcapng" "$out/$name.pcapng"; then
			echo "FAIL: [$f] $m: capture differs from --cpu"
		elif ! json_core "$out/$ref.json" > "$out/$ref.core" ||
				! json_core "$out/$name.json" > "$out/$name.core" ||
				! cmp -s "$out/$ref.core" "$out/$name.core"; then
			echo "FAIL: [$f] $m: counters or flows differ from --cpu"
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

# SIGINT with the persistent kernel busy on replayed traffic.
for mem in host-mapped staged; do
	name=sigint-$mem
	bg=1 app_run "$name" "rx_pcap=$out/in-small.pcap,infinite_rx=1" \
		--mem "$mem" --filter "sctp" --snaplen 64 \
		--write "$out/$name.pcapng" &
	pid=$!
	sleep 2
	kill -INT $pid
	wait $pid
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name: exit $rc (see $out/$name.txt)"
	elif ! grep -Eq 'mbufs: +([0-9]+) of \1 back' "$out/$name.txt"; then
		fail "$name: mbufs not all returned"
	elif ! grep -q 'persistent kernel quit in' "$out/$name.txt"; then
		fail "$name: kernel quit not reported"
	elif ! "$check" --valid "$out/$name.pcapng" > /dev/null 2>&1; then
		fail "$name: capture not readable to the end"
	else
		pass "$name: $(grep 'kernel quit' "$out/$name.txt")"
	fi
	rm -f "$out/$name.pcapng"
done

# A software port is refused in gpu mode, naming the port.
app_run mem-gpu-refused "rx_pcap=$in" --mem gpu --idle-exit 500
rc=$?
if [ "$rc" -ne 0 ] && grep -q "port 0 (net_pcap).*host-mapped" \
		"$out/mem-gpu-refused.txt"; then
	pass "--mem gpu refused for net_pcap"
else
	fail "--mem gpu on net_pcap: exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
