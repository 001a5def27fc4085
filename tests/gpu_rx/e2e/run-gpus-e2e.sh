#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# dpdk-gpu-rx over two GPUs (--gpus) without a GPU: dpdk-gpu-rx-standin on
# the fake CUDA driver with two fake devices, two queues on the same
# file. Each queue's capture (%q) must equal the --cpu run's byte for
# byte, the counters and top flows too (the second GPU's flow table
# merged into the first's), with per-GPU lines and JSON, every mbuf back;
# per-GPU figures in /gpu_rx/stats mid-run; RX buffer split (--mem gpu
# --split 64 and auto, a header pool per GPU) through one net_gpudma port
# whose two queues are on the two GPUs, each filled by its own GPU,
# captures and counters those of --cpu, every mbuf of every pool back; bad --gpus values, and
# --split N without --mem gpu, refused with a message; a kernel fault stops
# the run naming its GPU; two ports, each on its own GPU (--port 0,1
# --gpus p0=0,p1=1), as the --cpu run, net_pcap (host-mapped, staged)
# and net_gpudma (--mem gpu, split). (Flow export over two GPUs:
# run-ipfix-e2e.sh.)
#
# Usage: run-gpus-e2e.sh APP GENPCAP FAKE_LIBCUDA WORK_DIR
# Exit: 0 all passed, 1 a failure.
set -u

app=$1 gen=$2 fake=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
in=$work/in.pcap
"$gen" "$in" 1 1500 50 200 65553 || { echo "FAIL: cannot generate $in"; exit 1; }
# No frame over one mbuf: net_pcap's infinite_rx takes no chains.
small=$work/small.pcap
"$gen" "$small" 1 500 0 || { echo "FAIL: cannot generate $small"; exit 1; }
failed=0 n=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# Env: vdev (the port), vdev2 (a second port), ports (its ports and
# queues: default --queues 2), log (EAL log levels).
run() { # NAME APP_ARGS...; output in $work/NAME.txt, exit status in rc
	name=$1
	shift
	n=$((n + 1))
	# shellcheck disable=SC2086
	FAKE_CUDA_GPUS=0000:01:00.0,0000:02:00.0 GPU_CUDA_LIBCUDA=$fake \
		FAKE_CUDA_EXIT_REPORT=1 \
		"$app" --no-huge -m 1024 --no-pci --no-shconf \
		--file-prefix "gpurx-gpus-$$-$n" --lcores 0@0,1@0,2@1 \
		--log-level=lib.eal:warning ${log:-} --vdev gpu_cuda0,dev=0 \
		--vdev gpu_cuda1,dev=1 \
		--vdev "${vdev:-net_pcap0,${pcaps:-rx_pcap=$in,rx_pcap=$in}}" \
		${vdev2:+--vdev "$vdev2"} -- \
		--idle-exit 10000 --backpressure --ts none ${ports:---queues 2} \
		--filter "tcp or udp" "$@" > "$work/$name.txt" 2>&1
	rc=$?
}

counters() {
	grep -E '^(received|matched|captured|malformed|flows|chained):|^ +[0-9]+\. ' \
		"$1" | sed 's/ -> .*//'
}

# Run T (exit status rc) against the --cpu run REF: each queue's capture
# byte for byte, the counters and top flows. 0 when T ran, 1 when it
# failed to (said).
like_cpu() { # T REF
	if [ "$rc" -ne 0 ]; then
		cat "$work/$1.txt"
		fail "$1: exit $rc"
		return 1
	fi
	for q in 0 1; do
		cmp -s "$work/$2-q$q.pcapng" "$work/$1-q$q.pcapng" ||
			fail "$1: queue $q's capture differs from the --cpu run's"
	done
	if [ "$(counters "$work/$1.txt")" != "$(counters "$work/$2.txt")" ]; then
		counters "$work/$2.txt" > "$work/$1.want"
		counters "$work/$1.txt" | diff "$work/$1.want" -
		fail "$1: counters or top flows differ from the --cpu run's"
	fi
	return 0
}

run cpu --cpu --write "$work/cpu-q%q.pcapng"
[ "$rc" -eq 0 ] || { cat "$work/cpu.txt"; fail "cpu: exit $rc"; }
for m in "one:host-mapped --gpus 0" "two:host-mapped --gpus 0,1" \
		"two-staged:staged --gpus q0=1,q1=0" \
		"two-per-burst:host-mapped --gpus all --launch-per-burst"; do
	t=${m%%:*}
	# shellcheck disable=SC2086
	run "$t" --mem ${m#*:} --write "$work/$t-q%q.pcapng" \
		--json "$work/$t.json"
	like_cpu "$t" cpu || continue
	grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/$t.txt" ||
		fail "$t: mbufs not all back"
	if [ "$t" = one ]; then echo "PASS: $t"; continue; fi
	rx=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/$t.txt")
	half=$((rx / 2))
	for g in 0 1; do
		grep -Eq "^GPU $g: +queue [01]: received $half packets" \
			"$work/$t.txt" || fail "$t: no per-GPU line for GPU $g"
	done
	grep -q '"per_gpu": \[' "$work/$t.json" || fail "$t: no per_gpu in the JSON"
	echo "PASS: $t"
done

# RX buffer split over two GPUs (--mem gpu) through one net_gpudma port
# of two queues, a queue on each GPU: each GPU's header pool (host) and
# payload pool (its memory). Each queue's capture must be the unsplit
# --cpu run's byte for byte, the counters and top flows those of --cpu
# splitting at the same length (chained included), and every mbuf of
# the two payload and two header pools back. Each queue is filled by its
# own GPU (the port's log, the fake's per-GPU launches), neither GPU
# touching the other's memory, everything of CUDA released. net_gpudma
# does not say where its file ends: each run ends 2 s idle
# (--backpressure: nothing is dropped meanwhile).
gvdev="net_gpudma0,rx_pcap=$in,queues=2"
vdev=$gvdev run gcpu --cpu --split off --idle-exit 2000 \
	--write "$work/gcpu-q%q.pcapng"
[ "$rc" -eq 0 ] || { cat "$work/gcpu.txt"; fail "gcpu: exit $rc"; }
for sp in 64 auto; do
	n_sp=$sp
	[ "$sp" = auto ] && n_sp=128
	ref=gcpu-split$n_sp
	vdev=$gvdev run "$ref" --cpu --split "$n_sp" --idle-exit 2000 \
		--write "$work/$ref-q%q.pcapng"
	[ "$rc" -eq 0 ] || { cat "$work/$ref.txt"; fail "$ref: exit $rc"; }
	t=gpu-split-$sp was=$failed
	log=--log-level=pmd.net.gpudma:info vdev=$gvdev run "$t" --mem gpu \
		--gpus 0,1 --split "$sp" --idle-exit 2000 \
		--write "$work/$t-q%q.pcapng"
	if [ "$rc" -ne 0 ]; then
		cat "$work/$t.txt"
		fail "$t: exit $rc"
		continue
	fi
	grep -q "^split: the first $n_sp bytes of each packet (headers) into host memory" \
		"$work/$t.txt" || fail "$t: not split at $n_sp bytes"
	grep -q "and a header pool of as many per GPU (host)" "$work/$t.txt" ||
		fail "$t: no header pool per GPU"
	for q in 0 1; do
		cmp -s "$work/gcpu-q$q.pcapng" "$work/$t-q$q.pcapng" ||
			fail "$t: queue $q's capture differs from the --cpu run's"
	done
	if [ "$(counters "$work/$t.txt")" != "$(counters "$work/$ref.txt")" ]; then
		counters "$work/$ref.txt" > "$work/$t.want"
		counters "$work/$t.txt" | diff "$work/$t.want" -
		fail "$t: counters or top flows differ from the --cpu --split $n_sp run's"
	fi
	grep -Eq '^chained: +[1-9]' "$work/$t.txt" ||
		fail "$t: no packet came in two buffers"
	for q in 0 1; do
		grep -q "rx queue $q: .* filled by GPU $q (its pool's memory)" \
			"$work/$t.txt" || fail "$t: queue $q not filled by GPU $q"
	done
	grep -Eq "^fake_cuda: at exit: GPU 0: [1-9][0-9]* launches, [0-9]+ copies; GPU 1: [1-9][0-9]* launches, [0-9]+ copies; 0 cross-GPU accesses" \
		"$work/$t.txt" ||
		fail "$t: a GPU did no fill, or one touched the other's memory"
	grep -q "^fake_cuda: at exit: 0 allocations, 0 registrations live" \
		"$work/$t.txt" || fail "$t: CUDA memory or registrations left"
	# Every pool counted, each header pool as large as a payload pool:
	# two payload pools and two header pools.
	size=$(sed -n 's/^memory: 2 mbuf pool(s) of \([0-9]*\) x .*/\1/p' \
		"$work/$t.txt")
	all=$((${size:-0} * 4))
	if [ "$all" -eq 0 ] ||
			! grep -Eq "mbufs: +$all of $all back in the pool" "$work/$t.txt" ||
			grep -q "not returned" "$work/$t.txt"; then
		cat "$work/$t.txt"
		fail "$t: mbufs of the payload and header pools not all back ($all)"
	fi
	rx=$(sed -n 's/^received: *\([0-9]*\) packets.*/\1/p' "$work/$t.txt")
	for g in 0 1; do
		grep -Eq "^GPU $g: +queue $g: received $((rx / 2)) packets" \
			"$work/$t.txt" || fail "$t: no per-GPU line for GPU $g"
	done
	[ "$failed" -eq "$was" ] && echo "PASS: $t"
done

# Two ports (--port 0,1), one queue each, each port on its own GPU
# (--gpus p0=0,p1=1): port 0 replays the input, port 1 the small file.
# Each queue's capture (queue 0: port 0, queue 1: port 1) must equal the
# --cpu two-port run's byte for byte, and the counters and top flows;
# each GPU serves its port's queue, the per-port lines say each port's
# packets, every mbuf back.
run2() { # NAME APP_ARGS...: run over two ports, pvdev0 and pvdev1
	vdev=${pvdev0:-net_pcap0,rx_pcap=$in} \
		vdev2=${pvdev1:-net_pcap1,rx_pcap=$small} ports="--port 0,1" \
		run "$@"
}
# Port p's packets in run T, as many as in the --cpu run REF, all on
# GPU p (its queue p), and its per-port line.
ports_on_gpus() { # T REF DRIVER
	for p in 0 1; do
		rx=$(sed -n "s/^port $p ($3): queue $p: received \([0-9]*\) packets.*/\1/p" \
			"$work/$2.txt")
		[ -n "$rx" ] && [ "$rx" -gt 0 ] &&
			grep -Eq "^GPU $p: +queue $p: received $rx packets" "$work/$1.txt" &&
			grep -q "^port $p ($3): queue $p: received $rx packets" \
				"$work/$1.txt" ||
			fail "$1: port $p's packets not all on GPU $p, or no per-port line"
	done
}
run2 ports-cpu --cpu --write "$work/ports-cpu-q%q.pcapng"
[ "$rc" -eq 0 ] || { cat "$work/ports-cpu.txt"; fail "ports-cpu: exit $rc"; }
for m in host-mapped staged; do
	t=ports-$m was=$failed
	run2 "$t" --mem $m --gpus p0=0,p1=1 --write "$work/$t-q%q.pcapng" \
		--json "$work/$t.json"
	like_cpu "$t" ports-cpu || continue
	grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/$t.txt" ||
		fail "$t: mbufs not all back"
	ports_on_gpus "$t" ports-cpu net_pcap
	grep -q '"per_port": \[' "$work/$t.json" || fail "$t: no per_port in the JSON"
	[ "$failed" -eq "$was" ] && echo "PASS: $t"
done
# The same through two net_gpudma ports, each filled by its own GPU
# (gpu=), --mem gpu: each GPU's pool of its memory mapped for its port,
# the headers split into each GPU's header pool. Each queue's capture is
# the --cpu run's; neither GPU touches the other's memory, everything
# of CUDA and every mbuf back (1 s idle ends each run: net_gpudma does
# not say where its file ends). Then both ports on one GPU: its pool
# mapped for both.
gp0="net_gpudma0,rx_pcap=$in,gpu=0" gp1="net_gpudma1,rx_pcap=$small,gpu=1"
pvdev0=$gp0 pvdev1=$gp1 run2 gports-cpu --cpu --idle-exit 1000 \
	--write "$work/gports-cpu-q%q.pcapng"
[ "$rc" -eq 0 ] || { cat "$work/gports-cpu.txt"; fail "gports-cpu: exit $rc"; }
t=gports-gpu was=$failed
pvdev0=$gp0 pvdev1=$gp1 run2 $t --mem gpu --gpus p0=0,p1=1 --idle-exit 1000 \
	--write "$work/$t-q%q.pcapng"
for q in 0 1; do
	cmp -s "$work/gports-cpu-q$q.pcapng" "$work/$t-q$q.pcapng" ||
		fail "$t: queue $q's capture differs from the --cpu run's"
done
grep -Eq "^fake_cuda: at exit: GPU 0: [1-9][0-9]* launches, [0-9]+ copies; GPU 1: [1-9][0-9]* launches, [0-9]+ copies; 0 cross-GPU accesses" \
	"$work/$t.txt" && grep -q "^fake_cuda: at exit: 0 allocations, 0 registrations live" \
	"$work/$t.txt" && grep -q "^memory: 2 mbuf pool(s) of .* (data in GPU memory" "$work/$t.txt" &&
	grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/$t.txt" ||
	fail "$t: not on both GPUs' memory, a GPU touched the other's, or CUDA memory or mbufs left"
ports_on_gpus "$t" gports-cpu net_gpudma
[ "$rc" -eq 0 ] || { cat "$work/$t.txt"; fail "$t: exit $rc"; }
[ "$failed" -eq "$was" ] && echo "PASS: $t"
# Both ports on GPU 0: its one pool of GPU memory mapped for each.
t=gports-one-gpu was=$failed
log=--log-level=pmd.net.gpudma:info pvdev0=$gp0 pvdev1="${gp1%,gpu=1},gpu=0" \
	run2 $t --mem gpu --gpus 0 --idle-exit 1000 --write "$work/$t-q%q.pcapng"
for q in 0 1; do
	cmp -s "$work/gports-cpu-q$q.pcapng" "$work/$t-q$q.pcapng" ||
		fail "$t: queue $q's capture differs from the --cpu run's"
done
for p in 0 1; do
	grep -q "port $p: DMA map .*GPU 0's memory" "$work/$t.txt" ||
		fail "$t: GPU 0's pool not mapped for port $p"
done
grep -q "^memory: 1 mbuf pool(s) of .* (data in GPU memory" "$work/$t.txt" &&
	grep -q "^fake_cuda: at exit: 0 allocations, 0 registrations live" "$work/$t.txt" &&
	grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/$t.txt" &&
	! grep -q "warning: rte_dev_dma_unmap" "$work/$t.txt" ||
	fail "$t: not one pool of GPU memory, or CUDA memory, mbufs or mappings left"
[ "$rc" -eq 0 ] || { cat "$work/$t.txt"; fail "$t: exit $rc"; }
[ "$failed" -eq "$was" ] && echo "PASS: $t"

# Refused, each with its message: (exit, message, options).
refused() { # NAME EXIT PATTERN ARGS...
	name=$1 want=$2 pat=$3
	shift 3
	run "$name" "$@"
	if [ "$rc" -ne "$want" ] || ! grep -q -- "$pat" "$work/$name.txt"; then
		cat "$work/$name.txt"
		fail "$name: exit $rc (want $want) or no message '$pat'"
	else
		echo "PASS: $name refused"
	fi
}
refused bad-item 2 "^--gpus: " --gpus 0,x
refused bad-empty 2 "^--gpus: " --gpus ""
refused bad-gpu 1 "error: --gpus: " --gpus 0,7
refused bad-queue 1 "error: --gpus: " --gpus q5=1
# --split over two GPUs (a header pool each) needs --mem gpu, as on one.
refused split 1 "split 128 puts the payload into GPU memory: it needs --mem gpu" \
	--gpus 0,1 --split 128 --mem host-mapped

# /gpu_rx/stats mid-run: each figure of the JSON's per_gpu by gpudev id,
# the queues of each, every GPU's packets in, and their sum at least the
# total read just before them (counters only grow), at most the summary's.
q="$(dirname "$0")/../../gpu_tx/telemetry-query.py"
tprefix="gpurx-gpus-$$-$((n + 1))"
(pcaps="rx_pcap=$small,rx_pcap=$small,infinite_rx=1" \
	run telemetry --mem host-mapped --gpus 0,1 --duration 8 \
	--json "$work/telemetry.json"; exit $rc) &
tpid=$!
n=$((n + 1))
# The socket is up from EAL's start, the RX lcores later (slowly on a
# loaded machine). Each query is a python3 start, which on a busy 2-CPU
# machine, beside the stand-in kernel thread and two busy RX lcores, can
# take seconds: so the first waits until the run's per-second line says
# both GPUs have taken packets (counters only grow), then queries are
# asked again, while the run lasts, until the answer has both. No
# socket (exit 1) is asked again too.
i=0
while kill -0 $tpid 2> /dev/null && [ $i -lt 100 ] &&
		! grep -Eq 'GPU 0 rx [1-9][0-9]* pps.*GPU 1 rx [1-9]' \
			"$work/telemetry.txt" 2> /dev/null; do
	i=$((i + 1))
	sleep 0.1
done
i=0
while :; do
	# At the stand-in kernel thread's priority (gpu_standin.c: -20 where
	# allowed): at nice 0 beside it and two busy RX lcores on 2 CPUs, the
	# query could wait the whole run for a CPU.
	nice -n -20 python3 "$q" "$tprefix" /gpu_rx/stats 5 > "$work/tel.json" 2> "$work/tel.err"
	tel=$?
	[ "$tel" -eq 3 ] && break
	[ "$tel" -eq 0 ] && python3 -c 'import json, sys
by = json.load(open(sys.argv[1]))["/gpu_rx/stats"].get("rx_packets_by_gpu")
sys.exit(0 if isinstance(by, dict) and len(by) == 2 and
	all(v > 0 for v in by.values()) else 1)' "$work/tel.json" && break
	i=$((i + 1))
	{ [ $i -lt 40 ] && kill -0 $tpid 2>/dev/null; } || break
	sleep 0.2
done
wait $tpid
trc=$?
if [ "$trc" -ne 0 ]; then
	cat "$work/telemetry.txt"
	fail "telemetry: exit $trc"
elif [ "$tel" -eq 3 ]; then
	# The socket listens, but this machine's sandbox refuses AF_UNIX
	# connects to it.
	echo "NOTE: telemetry not checked here: $(cat "$work/tel.err")"
elif [ "$tel" -ne 0 ]; then
	cat "$work/tel.err"
	fail "telemetry: no answer"
elif python3 - "$work/tel.json" "$work/telemetry.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["/gpu_rx/stats"]
end = json.load(open(sys.argv[2]))
print("mid-run:", {k: v for k, v in st.items() if k.endswith("_by_gpu")})
ok = True
for k in ("rx_packets", "rx_bytes", "matched", "captured",
          "captured_bytes", "drop_ring_full", "gpu_lost"):
    by = st.get(k + "_by_gpu")
    if not isinstance(by, dict) or sorted(by) != ["0", "1"]:
        print("FAIL:", k + "_by_gpu", "is not by GPU 0 and 1:", by)
        ok = False
rx = st["rx_packets_by_gpu"]
if ok and not (all(v > 0 for v in rx.values()) and
               st["rx_packets"] <= sum(rx.values()) <= end["rx_packets"]):
    print("FAIL: per-GPU packets", rx, "against the total", st["rx_packets"],
          "and the summary's", end["rx_packets"])
    ok = False
if ok and st.get("queues_by_gpu") != {"0": "0", "1": "1"}:
    print("FAIL: queues_by_gpu", st.get("queues_by_gpu"))
    ok = False
sys.exit(0 if ok else 1)
PY
then
	echo "PASS: telemetry by GPU"
else
	fail "telemetry: per-GPU figures"
fi

# A kernel that faults (each GPU's queue 0 ring, item 50; the file
# replayed endlessly): the run stops naming the GPU, exit non-zero,
# every mbuf back.
pcaps="rx_pcap=$small,rx_pcap=$small,infinite_rx=1" \
	GPURX_TEST_KERNEL_FAULT=50 run fault \
	--mem host-mapped --gpus 0,1 --duration 20
if [ "$rc" -eq 0 ] ||
		! grep -q "error: GPU [01]: persistent kernel failed" "$work/fault.txt" ||
		! grep -q "stopped by: *GPU kernel failed (GPU [01])" "$work/fault.txt" ||
		! grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/fault.txt"; then
	cat "$work/fault.txt"
	fail "fault: exit $rc, or the GPU not named, or mbufs not back"
else
	echo "PASS: fault"
fi

# The same over two ports, each on its own GPU: the error names each
# queue by its port and that port's own queue too.
pvdev0="net_pcap0,rx_pcap=$small,infinite_rx=1" \
	pvdev1="net_pcap1,rx_pcap=$small,infinite_rx=1" \
	GPURX_TEST_KERNEL_FAULT=50 run2 ports-fault --mem host-mapped \
	--gpus p0=0,p1=1 --duration 20
if [ "$rc" -eq 0 ] ||
		! grep -q "error: GPU [01]: persistent kernel failed" "$work/ports-fault.txt" ||
		! grep -Eq "error: +queue [01] \(port [01] queue 0\): [0-9]+ ring items" \
			"$work/ports-fault.txt" ||
		! grep -Eq 'mbufs: +([0-9]+) of \1 back in the pool' "$work/ports-fault.txt"; then
	cat "$work/ports-fault.txt"
	fail "ports-fault: exit $rc, or a queue's port not named, or mbufs not back"
else
	echo "PASS: ports-fault"
fi

[ "$failed" -eq 0 ] || { echo "FAIL: $failed check(s)"; exit 1; }
echo "PASS: every two-GPU run"
