#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# One end-to-end case of dpdk-gpu-tx over software ports (meson test).
# Usage: run-tx-e2e.sh CASE TX CHECK RX WORKDIR
# CASE: cpu-ref | queues | tshark | csum-offload | rx | bad | rate | progress
# | jumbo | multi-gpu (GPUTX_FAKE_CUDA: the fake CUDA library)
# Env (the GPU suite, scripts/run-gpu-suite.sh): TX_MEM the frames' memory
# (default cpu: built by the CPU reference), TX_VDEV the port written
# through (default net_pcap0; net_gpudma0 reads GPU memory), TX_EAL the EAL
# memory and device options (default "--no-huge -m 512 --no-pci"), TX_ARGS
# more dpdk-gpu-tx options (e.g. --launch-per-burst).
set -u

case_name=$1 tx=$2 check=$3 rx=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
out=$work/out.pcap

eal() {
	echo ${TX_EAL:---no-huge -m 512 --no-pci} --no-shconf \
		--file-prefix "gputx-e2e-$case_name-$$" -l 0 \
		--log-level=lib.eal:warning
}

# Streams that cover the builder and the field engine: IPv4/IPv6, UDP/TCP,
# VLAN and QinQ, every variable kind, per-burst variables, a tuple,
# stepped and random sizes, IMIX, and unstamped streams.
set -- \
	"ipv4,udp,src=10.1.0.1,dst=10.2.0.1,var=ipv4.src:inc:10.1.0.1-10.1.0.200,var=udp.sport:random:1024-65535,var=ipv4.tos:random:0-255,size=70-1518:random" \
	"vlan=100,ipv6,tcp,dport=443,var=tcp.sport:dec:1000-2000:step=7,var=ipv6.src:random:0-0xffffffff,size=120-1500:step=13" \
	"vlan=10,vlan=20,ipv4,tcp,tuple=ipv4.dst:tcp.dport:10.9.0.1-10.9.0.50:80-90,var=ipv4.ttl:inc:1-64:burst,size=200" \
	"imix,ipv4,udp,stamp=off,var=udp.dport:inc:1-65535,seed=99"
count=5000 seed=42 burst=32

# send SPEC...: the run; $vdev_args and $lcores (default: one queue to
# $out on lcore 0) and $tx_extra (more dpdk-gpu-tx options) may be set.
send() {
	# shellcheck disable=SC2046,SC2086
	"$tx" $(eal | sed "s/-l 0/${lcores:--l 0}/") \
		--vdev "${vdev_args:-${TX_VDEV:-net_pcap0},tx_pcap=$out}" -- \
		--mem "${TX_MEM:-cpu}" ${tx_extra:-} ${TX_ARGS:-} \
		--count $count --seed $seed --burst $burst \
		--stream "$1" --stream "$2" --stream "$3" --stream "$4" \
		--json "$work/tx.json" > "$work/tx.txt" 2>&1
	rc=$?
	cat "$work/tx.txt"
	[ $rc -eq 0 ] || { echo "FAIL: dpdk-gpu-tx exit $rc"; exit 1; }
	grep -q "\"packets\": $count," "$work/tx.json" ||
		{ echo "FAIL: JSON does not say $count packets"; exit 1; }
	grep -q '"tx_failed": 0' "$work/tx.json" ||
		{ echo "FAIL: tx failures"; exit 1; }
	# Where the lcores waited: shares of their time; no GPU wait and no
	# ring without a GPU build, else fewer bursts in flight at a post
	# than the ring holds (a post needs a free item).
	python3 - "$work/tx.json" "${TX_MEM:-cpu}" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
w = d["lcore_wait"]
bad = [k for k in ("gpu_share", "mbuf_share") if not 0 <= w[k] <= 1]
if sys.argv[2] == "cpu":
    if w["gpu_share"] != 0 or "inflight_mean" in d:
        bad.append("a GPU wait or ring without a GPU build")
elif not 0 <= d["inflight_mean"] < d["ring_items"]:
    bad.append("inflight_mean %s of %s items" % (d["inflight_mean"],
                                                d["ring_items"]))
if bad:
    sys.exit("FAIL: lcore_wait: %s in %s" % (", ".join(bad), w))
print("lcore_wait: %s, in flight %s" % (w, d.get("inflight_mean", "-")))
PY
	# One queue writes the packets in order into $out: bytes checked too.
	# shellcheck disable=SC2046
	python3 "$(dirname "$0")/check-per-stream.py" "$work/tx.json" \
		$([ -z "${lcores:-}" ] && [ -f "$out" ] && echo "$out") ||
		exit 1
}

# Every IPv4, UDP and TCP checksum of $out validated by tshark: none bad,
# every frame checked.
tshark_ok() {
	# Checksum validation on: every bad one is an expert-info error.
	tshark -r "$out" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
		-o tcp.check_checksum:TRUE -Y 'ip.checksum.status == "Bad" or
		udp.checksum.status == "Bad" or tcp.checksum.status == "Bad"' \
		-T fields -e frame.number > "$work/bad.txt" 2> "$work/tshark.err" ||
		{ cat "$work/tshark.err"; echo "FAIL: tshark"; exit 1; }
	good=$(tshark -r "$out" -o ip.check_checksum:TRUE \
		-o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE \
		-Y 'ip.checksum.status == "Good" or ipv6' -T fields \
		-e frame.number 2>/dev/null | wc -l)
	bad=$(wc -l < "$work/bad.txt")
	echo "tshark: $bad frames with a bad checksum, $good IP frames checked"
	[ "$bad" -eq 0 ] || { head "$work/bad.txt"; echo "FAIL: bad checksums"; exit 1; }
	[ "$good" -eq $count ] || { echo "FAIL: $good of $count frames checked"; exit 1; }
}

case $case_name in
multi-gpu)
	# Two GPUs of the fake CUDA (GPUTX_FAKE_CUDA, the driver API only):
	# --gpus maps the queues, each GPU's pool is registered with it, and
	# the build, which needs the CUDA runtime and so a real GPU, stops
	# the run; every GPU's registrations are released on the way out.
	# The bytes over several GPUs need a GPU (doc/gpu_tx.md).
	fake_run() {
		want=$1
		shift
		# shellcheck disable=SC2046
		GPU_CUDA_LIBCUDA=$GPUTX_FAKE_CUDA FAKE_CUDA_EXIT_REPORT=1 \
		FAKE_CUDA_GPUS=0000:01:00.0,0000:02:00.0 \
		"$tx" $(eal | sed "s/-l 0/--lcores=(0-2)@(0-$(($(nproc) - 1)))/") \
			--vdev gpu_cuda0,dev=0 \
			--vdev gpu_cuda1,dev=1 --vdev "net_pcap0,tx_pcap=$out" -- \
			--count 64 --stream ipv4 --queues 2 "$@" \
			> "$work/mgpu.txt" 2>&1 &&
			{ cat "$work/mgpu.txt"; echo "FAIL: $* ran without a GPU"; exit 1; }
		cat "$work/mgpu.txt"
		grep -q -- "$want" "$work/mgpu.txt" ||
			{ echo "FAIL: $*: no '$want'"; exit 1; }
		grep -q "fake_cuda: at exit: 0 allocations, 0 registrations" \
			"$work/mgpu.txt" || { echo "FAIL: $*: GPU resources left"; exit 1; }
	}
	for mem in host-mapped gpu; do
		fake_run "^GPU 0: queue 0$" --mem $mem --gpus all
		grep -q "^GPU 1: queue 1$" "$work/mgpu.txt" ||
			{ echo "FAIL: --gpus all: queue 1 not on GPU 1"; exit 1; }
		grep -q "GPU build (GPU 0): .*CUDA runtime\|--mem gpu: port 0: GPU 0" \
			"$work/mgpu.txt" || { echo "FAIL: $mem: not stopped at GPU 0"; exit 1; }
	done
	fake_run "^GPU 1: queue 0$" --mem host-mapped --gpus q0=1,q1=0
	# --build-breakdown compares with one GPU's floor: refused over two
	# before anything is taken; on one it goes on to the build, which
	# stops at the CUDA runtime as without it.
	fake_run "error: --build-breakdown: one GPU at a time (the floor it compares with is one GPU's); 2 in use" \
		--mem host-mapped --gpus all --build-breakdown
	fake_run "error: GPU build: GPU 1 (gpu_cuda1)" --mem host-mapped --gpus 1 \
		--build-breakdown
	# Jumbo frames: each GPU's pool of 9.3 KiB buffers registered, or
	# allocated in its memory, and all of it given back.
	for mem in host-mapped gpu; do
		fake_run "^GPU 0: queue 0$" --mem $mem --gpus all \
			--stream "ipv4,udp,size=9216"
	done
	# One GPU: no mapping said, as before several were possible.
	fake_run "error: GPU build: GPU 1 (gpu_cuda1)" --mem host-mapped --gpus 1
	fake_run "error: GPU build: GPU 0 (gpu_cuda0)" --mem host-mapped --gpus 0,0
	! grep -q "^GPU 0:" "$work/mgpu.txt" ||
		{ echo "FAIL: one GPU: mapping said"; exit 1; }
	fake_run "error: --gpus: GPU 5: no such gpudev GPU (2 probed, ids 0..1)" \
		--mem host-mapped --gpus 5
	fake_run "error: --gpus: q2: port 0 has 2 queues" --mem host-mapped \
		--gpus q2=1
	fake_run "error: --gpus: 'q1=1': that queue is already mapped" \
		--mem host-mapped --gpus q1=0,q1=1
	fake_run "error: --gpus: 'one': not G, qQ=G" --mem host-mapped --gpus one
	;;
cpu-ref)
	send "$@"
	exec "$check" "$out" $count $seed $burst "$@"
	;;
queues)
	# Three TX queues, a worker lcore and a file each: every frame still
	# equal to the reference, the bursts dealt out round robin.
	# Four lcores floating over this machine's CPUs, however few.
	lcores="--lcores=(0-3)@(0-$(($(nproc) - 1)))" tx_extra="--queues 3"
	vdev_args="${TX_VDEV:-net_pcap0},tx_pcap=$work/q0.pcap,tx_pcap=$work/q1.pcap,tx_pcap=$work/q2.pcap"
	send "$@"
	exec "$check" "$work/q0.pcap,$work/q1.pcap,$work/q2.pcap" $count $seed \
		$burst "$@"
	;;
tshark)
	command -v tshark >/dev/null 2>&1 ||
		{ echo "SKIP: tshark not installed (scripts/setup.sh installs it)"; exit 77; }
	send "$@"
	tshark_ok
	;;
csum-offload)
	# Checksums left to net_gpudma's TX offload (computed into tx_pcap as
	# a NIC computes them): every frame equal to the reference built with
	# every checksum, and tshark finds none bad.
	vdev_args="net_gpudma0,tx_pcap=$out" tx_extra="--csum-offload"
	send "$@"
	grep -q "checksum" "$work/tx.txt" ||
		{ echo "FAIL: no word of the offload in the output"; exit 1; }
	"$check" "$out" $count $seed $burst "$@" || exit 1
	if command -v tshark >/dev/null 2>&1; then
		tshark_ok
	else
		echo "tshark not installed: checksums checked against the reference only"
	fi
	;;
rx)
	send "$@"
	# shellcheck disable=SC2046
	"$rx" $(eal | sed 's/-l 0/-l 0-1/') --vdev "net_pcap0,rx_pcap=$out" -- --cpu --quiet \
		--idle-exit 500 > "$work/rx.txt" 2>&1
	rc=$?
	cat "$work/rx.txt"
	[ $rc -eq 0 ] || { echo "FAIL: dpdk-gpu-rx exit $rc"; exit 1; }
	got=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/rx.txt")
	[ "$got" = "$count" ] ||
		{ echo "FAIL: dpdk-gpu-rx received '$got', dpdk-gpu-tx sent $count"; exit 1; }
	;;
bad)
	# A bad stream, a port that cannot read GPU memory, no GPU: refused
	# before anything is sent, with a message naming why.
	expect() {
		want=$1
		shift
		# shellcheck disable=SC2046
		"$tx" $(eal) --vdev "net_pcap0,tx_pcap=$out" -- --count 10 "$@" \
			> "$work/bad.txt" 2>&1 && { cat "$work/bad.txt"; echo "FAIL: $* accepted"; exit 1; }
		grep -q "$want" "$work/bad.txt" ||
			{ cat "$work/bad.txt"; echo "FAIL: $*: no '$want'"; exit 1; }
		n=$(tcpdump -nr "$out" 2>/dev/null | wc -l)
		[ "$n" -eq 0 ] || { echo "FAIL: $*: $n frames sent"; exit 1; }
	}
	expect "unknown key" --stream "ipv4,bogus=1"
	expect "past the end" --stream "var=@500/2:inc:1-2"
	# Past the largest jumbo frame; a jumbo frame past the port's MTU
	# (net_memif takes 1518-byte frames), said with both numbers.
	expect "size 9217 beyond the largest frame the generator makes (9216" \
		--stream "size=9217"
	expect "size 99999 beyond the largest frame" --stream "size=64-99999"
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev "net_memif0,role=server,socket=$work/mtu.sock" -- \
		--count 10 --stream "ipv4,udp,size=64,stamp=off" --stream \
		"vlan=3,ipv4,udp,size=9000" > "$work/mtu.txt" 2>&1 &&
		{ cat "$work/mtu.txt"; echo "FAIL: 9000 B over net_memif accepted"; exit 1; }
	grep -q "error: port 0 (net_memif): frames of 9000 bytes (with FCS) need an MTU of 8978, and the port takes 1500 at most" \
		"$work/mtu.txt" ||
		grep -q "failed to parse device\|unknown device" "$work/mtu.txt" ||
		{ cat "$work/mtu.txt"; echo "FAIL: no word of the port's MTU"; exit 1; }
	expect "min > max" --stream "var=udp.sport:inc:9-1"
	# The breakdown times a GPU's builds: the CPU build has none.
	expect "error: --build-breakdown times the GPU's builds: with --mem host-mapped or gpu only" \
		--stream ipv4 --build-breakdown
	expect "no stream" --rate 1000
	expect "rate" --stream ipv4 --rate 10foo
	# Numbers as people read them: no inf, nan, hex, octal or signs.
	expect "error: --rate nan" --stream ipv4 --rate nan
	expect "error: --rate inf" --stream ipv4 --rate infpps
	expect "rate" --stream ipv4 --rate 0x10
	expect "^--duration: 'inf' is not" --stream ipv4 --duration inf
	expect "^--duration: 'nan' is not" --stream ipv4 --duration nan
	expect "^--duration: '1e12' is not" --stream ipv4 --duration 1e12
	expect "^--count: '0x40' is not" --stream ipv4 --count 0x40
	expect "^--count: ' -1' is not" --stream ipv4 --count " -1"
	expect "JSON to $work/no/dir/t.json: .*No such file" --stream ipv4 \
		--json "$work/no/dir/t.json"
	expect "cannot read GPU memory\|no GPU" --stream ipv4 --mem gpu
	expect "no GPU" --stream ipv4 --mem host-mapped
	expect "worker lcore" --stream ipv4 --queues 2
	expect "queues" --stream ipv4 --queues 33
	expect "ring-items" --stream ipv4 --ring-items 1
	expect "offers no TX checksum offload" --stream ipv4 --csum-offload
	# Frames the port took but could not write (net_gpudma's tx_pcap on
	# a full device, bursts past stdio's buffer): exit 1, and the
	# summary and its JSON name them.
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev net_gpudma0,tx_pcap=/dev/full -- --stream \
		"ipv4,udp,size=1500" --count 64 --json "$work/full.json" \
		> "$work/full.txt" 2>&1 &&
		{ cat "$work/full.txt"; echo "FAIL: frames lost, exit 0"; exit 1; }
	grep -q "^port: 64 of the packets sent not written or sent by port 0" \
		"$work/full.txt" || { cat "$work/full.txt"; echo "FAIL: no port line"; exit 1; }
	grep -q '"port_oerrors": 64' "$work/full.json" ||
		{ cat "$work/full.json"; echo "FAIL: JSON port_oerrors"; exit 1; }
	# --version and --help need no EAL.
	"$tx" --no-such-eal-option -- --version > "$work/ver.txt" 2>&1 &&
		grep -Eq "^dpdk-gpu-tx [0-9]+\.[0-9]+\.[0-9]+ \(DPDK " "$work/ver.txt" ||
		{ cat "$work/ver.txt"; echo "FAIL: --version without EAL"; exit 1; }
	"$tx" --no-such-eal-option -- -h > "$work/help.txt" 2>&1 &&
		grep -q -- "--stream SPEC" "$work/help.txt" ||
		{ cat "$work/help.txt"; echo "FAIL: -h without EAL"; exit 1; }
	echo "ok: every bad run refused"
	;;
jumbo)
	# Jumbo frames: a 9000-byte stream, a 64/1500/9000 mix and the
	# largest frame (9216 bytes, VLAN-tagged), built as TX_MEM says; then
	# that file replayed (pcap=FILE and pcap=FILE,all, stamped), and the
	# mix with its checksums left to the port. Every frame equal to the
	# CPU reference; tcpdump reads each frame's length, tshark (where
	# installed) checks every checksum.
	set -- "ipv4,udp,size=9000,var=udp.sport:inc:1-100" \
		"ipv4,udp,size=64,stamp=off,weight=4" \
		"ipv6,tcp,size=1500,weight=2,var=tcp.sport:random:1-65535" \
		"vlan=5,ipv4,tcp,size=9216,var=ipv4.src:random:1-0xfffffffe"
	count=2000
	send "$@"
	# The frame that needs the most: 9212 bytes past a tagged header.
	grep -q "^port 0: .*, MTU 9194$" "$work/tx.txt" ||
		{ echo "FAIL: no MTU for the jumbo frames"; exit 1; }
	"$check" "$out" $count $seed $burst "$@" || exit 1
	if command -v tcpdump >/dev/null 2>&1; then
		tcpdump -enr "$out" 2>/dev/null |
			sed -n 's/.*, length \([0-9]*\):.*/\1/p' |
			sort -n | uniq -c > "$work/lens.txt"
		cat "$work/lens.txt"
		[ "$(awk '{ printf "%s:%s ", $2, $1 }' "$work/lens.txt")" = \
			"60:1000 1496:500 8996:250 9212:250 " ] ||
			{ echo "FAIL: tcpdump's frame lengths"; exit 1; }
	fi
	command -v tshark >/dev/null 2>&1 && tshark_ok
	mv "$out" "$work/jumbo.pcap"
	set -- "pcap=$work/jumbo.pcap,all,stamp=on" "pcap=$work/jumbo.pcap" \
		"pcap=$work/jumbo.pcap,all,weight=2" "ipv6,udp,size=9216,stamp=off"
	count=3000
	send "$@"
	"$check" "$out" $count $seed $burst "$@" || exit 1
	command -v tshark >/dev/null 2>&1 && tshark_ok
	set -- "ipv4,udp,size=9000,var=udp.sport:inc:1-100" \
		"ipv4,udp,size=64,stamp=off,weight=4" \
		"ipv6,tcp,size=1500,weight=2,var=tcp.sport:random:1-65535" \
		"vlan=5,ipv4,tcp,size=9216,var=ipv4.src:random:1-0xfffffffe"
	count=2000
	vdev_args="net_gpudma0,tx_pcap=$out" tx_extra="--csum-offload"
	send "$@"
	"$check" "$out" $count $seed $burst "$@" || exit 1
	command -v tshark >/dev/null 2>&1 && tshark_ok
	echo "ok: jumbo frames as the reference, replayed, offloaded"
	;;
rate)
	# 2000 packets at 10 kpps: never faster than asked (the bucket holds
	# two bursts at most); slower only when this shared machine is busy.
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev net_null0 -- --stream ipv4 --count 2000 \
		--rate 10kpps --json "$work/tx.json" > "$work/tx.txt" 2>&1 ||
		{ cat "$work/tx.txt"; echo "FAIL: exit"; exit 1; }
	cat "$work/tx.txt"
	python3 - "$work/tx.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
ok = j["packets"] == 2000 and 5000 <= j["pps"] <= 10500
print("measured %.0f pps for 10000 requested" % j["pps"])
sys.exit(0 if ok else 1)
PY
	# A rate below a burst per 100 us: packets go as their credit comes,
	# the first at once, not a burst of 32 after 32 earned packets.
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev net_null0 -- --stream ipv4 --duration 1 \
		--rate 10pps --json "$work/low.json" > "$work/low.txt" 2>&1 ||
		{ cat "$work/low.txt"; echo "FAIL: exit"; exit 1; }
	python3 - "$work/low.json" <<'PY' || { cat "$work/low.txt"; exit 1; }
import json, sys
j = json.load(open(sys.argv[1]))
print("10 pps for 1 s: %d packets" % j["packets"])
# 10: at 0, 100, ... 900 ms. A busy machine that starts the lcore or
# runs the last one late costs the 10th; the old bucket sent none.
sys.exit(0 if j["packets"] in (9, 10) else 1)
PY
	# A rate no port reaches: said in units people read, warned, and
	# with --strict-rate exit 1 (a tester's run that offered less than
	# asked); without it exit 0.
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev net_null0 -- --stream ipv4 --count 20000 \
		--rate 100Gpps > "$work/short.txt" 2>&1 ||
		{ cat "$work/short.txt"; echo "FAIL: short rate, no --strict-rate: exit"; exit 1; }
	grep -Eq "^warning: measured [0-9.]+ [kMG]?pps, [0-9.]+% short of the 100.0 Gpps asked" \
		"$work/short.txt" &&
		grep -Eq "^rate: requested 100.0 Gpps; measured [0-9.]+ [kMG]?pps, .*bit/s L2 .*bit/s L1" \
		"$work/short.txt" ||
		{ cat "$work/short.txt"; echo "FAIL: no shortfall warning or units"; exit 1; }
	# shellcheck disable=SC2046
	"$tx" $(eal) --vdev net_null0 -- --stream ipv4 --count 20000 \
		--rate 100Gpps --strict-rate --json "$work/short.json" \
		> "$work/short.txt" 2>&1 &&
		{ cat "$work/short.txt"; echo "FAIL: --strict-rate: exit 0"; exit 1; }
	grep -q '"rate_short": true' "$work/short.json" ||
		{ cat "$work/short.json"; echo "FAIL: JSON rate_short"; exit 1; }
	echo "ok: a short rate warned, --strict-rate exit 1"
	;;
progress)
	# A line a second on stderr while worker lcores send, none with -q,
	# and /gpu_tx/stats answering over DPDK's telemetry socket mid-run.
	prefix=gputx-e2e-progress-$$
	# shellcheck disable=SC2046
	"$tx" $(eal | sed "s/-l 0/-l 0-1/; s/--file-prefix [^ ]*/--file-prefix $prefix/") \
		--vdev net_null0 -- --stream ipv4 --duration 4.5 --rate 1000pps \
		> "$work/run.out" 2> "$work/run.err" &
	pid=$!
	# Long enough that a python3 started slowly on a loaded machine (a
	# pyenv shim takes a second there) still finds the run going.
	sleep 1.3
	python3 "$(dirname "$0")/telemetry-query.py" "$prefix" /gpu_tx/stats 5 \
		> "$work/tel.json" 2> "$work/tel.err"
	tel=$?
	wait $pid || { cat "$work/run.out" "$work/run.err"; echo "FAIL: exit"; exit 1; }
	cat "$work/run.err"
	if [ $tel -eq 3 ]; then
		# The socket is there (telemetry registered and listening), but
		# this machine's sandbox refuses AF_UNIX connects to it.
		echo "NOTE: telemetry not checked here: $(cat "$work/tel.err")"
	elif [ $tel -ne 0 ]; then
		cat "$work/tel.err"; echo "FAIL: no telemetry answer"; exit 1
	else
	python3 - "$work/tel.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))["/gpu_tx/stats"]
print("telemetry mid-run:", d)
ok = (set(d) >= {"tx_packets", "tx_bytes", "retries", "not_sent", "queues"}
      and 0 < d["tx_packets"] < 4500 and d["tx_bytes"] == 124 * d["tx_packets"]
      and d["queues"] == 1
      # --mem cpu: built on no GPU, so no GPU's count.
      and d["packets_by_gpu"] == {})
sys.exit(0 if ok else 1)
PY
	fi
	n=$(grep -Ec '^\[ +[0-9]+\.[0-9]s\] tx [0-9]+ pps [0-9.]+ Mbps \| retries 0 \| not sent 0$' "$work/run.err")
	[ "$n" -ge 2 ] || { echo "FAIL: $n per-second lines, want 2 or more"; exit 1; }
	# 1000 pps asked: each whole second's line says about that.
	grep -Eq '^\[ +1\.[0-9]s\] tx (9[0-9][0-9]|10[0-9][0-9]) pps' "$work/run.err" ||
		{ echo "FAIL: the first second's rate is not about 1000 pps"; exit 1; }
	# shellcheck disable=SC2046
	"$tx" $(eal | sed "s/-l 0/-l 0-1/") --vdev net_null0 -- --stream ipv4 \
		--duration 1.5 --rate 1000pps -q > "$work/q.out" 2> "$work/q.err" ||
		{ cat "$work/q.out" "$work/q.err"; echo "FAIL: -q exit"; exit 1; }
	! grep -q '\] tx ' "$work/q.err" || { cat "$work/q.err"; echo "FAIL: a line with -q"; exit 1; }
	# Two streams, weights 3 and 1: each line splits the rate by stream.
	# shellcheck disable=SC2046
	"$tx" $(eal | sed "s/-l 0/-l 0-1/") --vdev net_null0 -- --stream ipv4,weight=3 \
		--stream ipv6,weight=1 --duration 1.5 --rate 1000pps \
		> "$work/s.out" 2> "$work/s.err" ||
		{ cat "$work/s.out" "$work/s.err"; echo "FAIL: two streams exit"; exit 1; }
	# Weights 3 and 1: stream 0 sends about three times stream 1's rate.
	sed -n 's/^\[ *[0-9.]*s\] tx .* | pps by stream: 0=\([0-9]*\) 1=\([0-9]*\)$/\1 \2/p' \
		"$work/s.err" | awk '$2 > 0 && $1 >= 2 * $2 && $1 <= 4 * $2 { ok = 1 }
		END { exit !ok }' ||
		{ cat "$work/s.err"; echo "FAIL: no line with each stream's rate"; exit 1; }
	grep -Eq '^stream 1: [0-9]+ packets' "$work/s.out" ||
		{ cat "$work/s.out"; echo "FAIL: no per-stream summary"; exit 1; }
	echo "ok: $n per-second lines, none with -q; telemetry answered"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
