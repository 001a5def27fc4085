#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs every benchmark of bench/ on the first GPU and collects the results:
# OUT_DIR/<bench>.json, OUT_DIR/<bench>.log, OUT_DIR/machine.json and
# machine.txt, OUT_DIR/run_id (the run's id), the pipeline capacity sweep
# (item 2, and the memory each configuration holds, item 5) in
# OUT_DIR/capacity-burst128/, the capture throughput sweep in
# OUT_DIR/capture/, the flow export runs in OUT_DIR/flow-export/, the
# scaling over every GPU in OUT_DIR/gpus-scaling/ (two or more GPUs), then
# bench/plot.py OUT_DIR: OUT_DIR/summary.json (every figure beside its
# floor of the same run, bench/summary.py), the markdown tables in
# OUT_DIR/report.md in any case, and PNG plots where matplotlib is
# installed.
#
# Usage: bench/run-all.sh OUT_DIR [BUILD_DIR]
#
# BUILD_DIR defaults to build/. It is built first: brought up to date with
# ninja where it is a meson build directory, set up and built by
# scripts/setup.sh where it does not exist yet; a directory of binaries
# only (a bundle's build/) is used as it is.
# Environment:
#   BENCH_EAL_EXTRA  extra EAL arguments, e.g. "-d .gpu-bundle/pmds"
#                    (when unset: .gpu-bundle/ is used if present; the
#                    programs are linked with BUILD_DIR's CUDA driver)
#   BENCH_GPU_PCI    PCI address of the GPU to use (default: nvidia-smi's
#                    GPU 0; "any" to let EAL probe every GPU)
#   BENCH_LCORE      the CPU the benchmarks run on (default: the second CPU
#                    of the GPU's NUMA node)
#   BENCH_QUICK=1    fewer repetitions (a smoke run, not for the report)
#   BENCH_BUILD=0    use BUILD_DIR as it is, build nothing
#   BENCH_GPUGEN=0   leave out the generator's build rate (bench-gpugen,
#                    about 2 minutes)
#   BENCH_GENTX=0    leave out the generator's transmit rate
#                    (bench/gen-tx-rate.sh, about 2 minutes; BENCH_TXR_*
#                    passed to it, defaults here: unbuilt on net_null and
#                    net_gpudma, cpu, host-mapped and gpu builds, 64 B
#                    and IMIX, 1/2/4 TX queues, 2 s a point)
#   BENCH_TXBUILD=0  leave out the generator's build latency
#                    (bench/tx-build-latency.sh, about 20 s; BENCH_TXB_*
#                    passed to it)
#   BENCH_CAPACITY=0 leave out the capacity sweep (about 4 minutes)
#   BENCH_CAP_*      passed to bench/pipeline-capacity.sh (defaults here:
#                    128-packet items, mix, 64 and 1500 B, 1/4/8 RX lcores
#                    as the CPUs allow, 2 s per point; without a GPU its
#                    CPU-only modes)
#   BENCH_CAPTURE=0  leave out the capture throughput sweep (11 minutes on
#                    the H200 at eeedb4f, each run's files read back:
#                    3 repetitions, alternating; its files go to /dev/shm,
#                    BENCH_CAPT_DIR, tens of GB)
#                    and its floors, bench/tmpfs-probe.py (one thread,
#                    and one per RX lcore each into its own file, writing
#                    2 GiB into the same directory, 5 times)
#   BENCH_CAPT_*     passed to bench/capture-throughput.sh (defaults here:
#                    host-mapped and --cpu, mix and mix1500, 1 and 4 RX
#                    lcores as the CPUs allow, the runs off, tcp, all, allq
#                    and allqw, 2 s a run; --cpu alone without a GPU; quick: off
#                    and all only, 1 s a run)
#   BENCH_FLOW=0     leave out the flow export runs (bench/flow-export.sh,
#                    over 5 minutes with the pipelines on 1 and 4 lcores: 3 repetitions of 3 s, alternating,
#                    and 160 s of the capacity search at 1 M and 10 M; quick: 50 k flows
#                    in the table, 20 k replayed, 1 s a run, no UDP, 6 s of
#                    search)
#   BENCH_FLOW_*     passed to bench/flow-export.sh
#   BENCH_GPUS=0     leave out the scaling over GPUs (bench/gpus-scaling.sh,
#                    about 4 minutes on two GPUs; it runs where nvidia-smi
#                    lists two or more)
#   BENCH_GPUS_*     passed to bench/gpus-scaling.sh
#   LD_LIBRARY_PATH  passed through (DPDK libraries of a bundle)
# Exit: 0 when every benchmark ran (or skipped: no GPU), 1 otherwise.
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 OUT_DIR [BUILD_DIR]" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
build=${2:-$top/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac

# --- Build what the benchmarks need -------------------------------------------
if [ "${BENCH_BUILD:-1}" = 1 ]; then
	if [ -f "$build/build.ninja" ]; then
		echo "== build: ninja -C $build"
		blog=$(mktemp) || exit 2
		if ! ninja -C "$build" > "$blog" 2>&1; then
			tail -n 30 "$blog" >&2
			rm -f "$blog"
			echo "the build in $build failed" >&2
			exit 2
		fi
		rm -f "$blog"
	elif [ ! -e "$build" ]; then
		echo "== build: scripts/setup.sh $build"
		bash "$top/scripts/setup.sh" "$build" ||
			{ echo "could not set up and build $build" >&2; exit 2; }
	fi
fi
build=$(cd "$build" 2>/dev/null && pwd) || { echo "no build directory $build" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
bench=$build/bench
for b in bench-handoff bench-driver bench-bpf-cpu bench-kernel-rate bench-sysmem-probe bench-gpugen; do
	[ -x "$bench/$b" ] || { echo "missing $bench/$b: build with meson/ninja first" >&2; exit 2; }
done

# --- EAL arguments ----------------------------------------------------------
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_eal_mem 2048 4096
eal=("${bench_mem[@]}" --file-prefix bench)
if [ "$bench_huge" = 1 ]; then
	echo "EAL memory: hugepages"
else
	echo "EAL memory: 4 KiB pages (--no-huge)"
fi
extra=()
if [ -n "${BENCH_EAL_EXTRA:-}" ]; then
	# Word splitting is intended: a list of arguments.
	read -r -a extra <<< "$BENCH_EAL_EXTRA"
else
	# DPDK's libraries from a bundle (scripts/make-gpu-bundle.sh), only
	# where the system has none: with both, EAL would load its own plugin
	# directory and the bundle's drivers twice.
	bundle=$top/.gpu-bundle
	if [ -d "$bundle/lib" ] && env -u LD_LIBRARY_PATH ldd "$bench/bench-driver" 2>/dev/null | grep -q 'librte_eal.* not found'; then
		export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		extra+=(-d "$bundle/pmds")
	fi
fi
# nfdump's collector from a bundle where the system has none: without it
# bench/flow-export.sh skips its UDP runs.
if ! command -v nfcapd > /dev/null 2>&1 && [ -x "$top/.gpu-bundle/bin/nfcapd" ]; then
	export PATH=$top/.gpu-bundle/bin:$PATH
fi

# The first GPU: nvidia-smi's GPU 0, given to EAL in DPDK's PCI format.
bench_gpu_pci
gpu_pci=$bench_gpu_pci
gpu_args=("${bench_gpu_args[@]}")

# A CPU close to the GPU, not CPU 0 (interrupts, housekeeping).
lcore=${BENCH_LCORE:-}
if [ -z "$lcore" ] && [ -n "$gpu_pci" ] && [ "$gpu_pci" != any ] &&
		[ -r "/sys/bus/pci/devices/$gpu_pci/local_cpulist" ]; then
	first=$(cut -d, -f1 < "/sys/bus/pci/devices/$gpu_pci/local_cpulist")
	lo=${first%-*}
	hi=${first#*-}
	if [ "$hi" != "$first" ] && [ "$hi" -gt "$lo" ]; then
		lcore=$((lo + 1))
	else
		lcore=$lo
	fi
fi
# Only a CPU this process may run on (containers, cgroups).
if [ -n "$lcore" ] && command -v taskset >/dev/null 2>&1 &&
		! taskset -c "$lcore" true 2>/dev/null; then
	echo "CPU $lcore is not usable here: picking another" >&2
	lcore=
fi
if [ -z "$lcore" ]; then
	lcore=$(taskset -pc $$ 2>/dev/null | sed -E 's/.*: *//; s/[,-].*//')
	[ -n "$lcore" ] || lcore=0
fi
eal+=(-l "$lcore")

# --- Machine description -------------------------------------------------------
json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/ }
	s=${s//$'\n'/ }
	printf '"%s"' "$s"
}
smi=$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader -i 0 2>/dev/null | head -n 1)
gpu_name=$(printf '%s' "$smi" | cut -d, -f1 | sed 's/^ *//; s/ *$//')
driver=$(printf '%s' "$smi" | cut -d, -f2 -s | sed 's/^ *//; s/ *$//')
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
os=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || uname -s)
rev=$(bench_revision "$build" "$top")
now=$(date -u +%s)
date=$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%SZ)
# The run's id, named in report.md and summary.json alike: when, which
# revision, and the host as a short hash (one id per machine start, the
# same for all its files); bench/summary.py derives the same from an older
# run's machine.json.
host_hash=$(hostname | tr -d '\n' | sha256sum | cut -c1-6)
run_id=$(date -u -d "@$now" +%Y%m%dT%H%M%SZ)-$rev-$host_hash
echo "$run_id" > "$out/run_id" || exit 2
echo "run id: $run_id"
{
	echo "{"
	echo "  \"run_id\": $(json_str "$run_id"),"
	echo "  \"date\": $(json_str "$date"),"
	echo "  \"host\": $(json_str "$(hostname)"),"
	echo "  \"os\": $(json_str "$os"),"
	echo "  \"kernel\": $(json_str "$(uname -r)"),"
	echo "  \"cpu\": $(json_str "$cpu"),"
	echo "  \"cpus\": $(nproc),"
	echo "  \"lcore\": $lcore,"
	echo "  \"gpu\": $(json_str "${smi:-unknown (no nvidia-smi)}"),"
	echo "  \"gpu_name\": $(json_str "${gpu_name:-unknown}"),"
	echo "  \"driver\": $(json_str "${driver:-unknown}"),"
	echo "  \"gpu_pci\": $(json_str "${gpu_pci:-}"),"
	echo "  \"git\": $(json_str "$rev"),"
	echo "  \"revision\": $(json_str "$rev"),"
	echo "  \"quick\": $([ "${BENCH_QUICK:-0}" = 1 ] && echo true || echo false),"
	# The sweeps' settings where the defaults were overridden: a figure
	# is read with the lcores, sizes and seconds it was measured with.
	echo "  \"settings\": $(json_str "$(env | grep -E '^BENCH_' | grep -v '^BENCH_EAL_EXTRA=' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"),"
	echo "  \"eal\": $(json_str "${eal[*]} ${gpu_args[*]} ${extra[*]}")"
	echo "}"
} > "$out/machine.json"
{
	echo "run id: $run_id"
	echo "date: $date"
	echo "git: $rev"
	echo "os: $os, kernel $(uname -r)"
	echo "cpu: $cpu ($(nproc) CPUs), benchmarks on lcore $lcore"
	echo "gpu: ${smi:-unknown}"
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -q -i 0 2>/dev/null |
		grep -E 'Product Name|Driver Version|CUDA Version|Persistence Mode|Link Width|PCIe Generation|Max|Current|Clocks Event Reasons' |
		head -n 40
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi topo -m 2>/dev/null | head -n 20
	lsmod 2>/dev/null | grep -E '^(gdrdrv|nvidia_peermem|nvidia) ' || true
} > "$out/machine.txt" 2>&1

# --- Runs ------------------------------------------------------------------------
quick=${BENCH_QUICK:-0}
failed=0
# run NAME TIMEOUT_S COMMAND...: log in NAME.log, the summary lines echoed.
run() {
	local name=$1 limit=$2 rc
	shift 2
	echo "== $name: $*"
	echo "\$ $*" > "$out/$name.log"
	timeout --kill-after=10 "$limit" "$@" >> "$out/$name.log" 2>&1
	rc=$?
	grep -E '^(handoff|driver|reg-cache|PASS dmabuf|bpf-cpu|kernel-rate|sysmem-probe|gpugen|txrate|txbuild|capacity|capture|gpudma|cuMemcpyHtoD|flow-export:|tmpfs-probe|gpus-scaling|SKIP|FAIL)' "$out/$name.log" | sed 's/^/   /'
	case $rc in
	0) echo "   $name: done" ;;
	77) echo "   $name: skipped (no GPU)" ;;
	124|137) echo "   $name: TIMED OUT after ${limit}s (see $out/$name.log)"; failed=1 ;;
	*) echo "   $name: FAILED, exit $rc (see $out/$name.log)"; tail -n 15 "$out/$name.log" | sed 's/^/   | /'; failed=1 ;;
	esac
	echo "$name $rc" >> "$out/exit-codes.txt"
}
: > "$out/exit-codes.txt"

if [ "$quick" = 1 ]; then
	handoff_args=(--reps 2000 --warmup 200)
	driver_args=(--reps 200 --wmb-reps 2000 --live 1,1000,10000 --live-reps 200)
	bpf_args=(--packets 262144 --reps 3)
	krate_args=(--packets 1048576 --budget-s 30)
	gpugen_args=(--packets 1048576 --reps 5 --ring-mb 64 --cpu-packets 262144
		--budget-s 30)
else
	handoff_args=()
	driver_args=()
	bpf_args=()
	krate_args=()
	gpugen_args=()
fi

start=$(date +%s)
# Packets in host memory: beside the flag floors, the floor + one dependent
# host load (floor_host_load), these handoffs' baseline.
run handoff 100 "$bench/bench-handoff" "${eal[@]}" "${gpu_args[@]}" "${extra[@]}" -- \
	--out "$out" "${handoff_args[@]}"
# The same with packet data in GPU memory, where GPUDirect RDMA puts it.
run handoff_gpu_pkts 100 "$bench/bench-handoff" "${eal[@]}" "${gpu_args[@]}" "${extra[@]}" -- \
	--out "$out" --pkt-mem gpu "${handoff_args[@]}"
run driver 100 "$bench/bench-driver" "${eal[@]}" "${gpu_args[@]}" "${extra[@]}" -- \
	--out "$out" "${driver_args[@]}"
# The registration cache (issue 16): the GPU probed with reg_cache=1 as a
# vdev (no PCI scan: the same GPU cannot be probed twice); with it the
# dma-buf export check.
rc_dev=0
[ -n "$gpu_pci" ] && [ "$gpu_pci" != any ] && rc_dev=$gpu_pci
run reg_cache 100 "$bench/bench-reg-cache" "${eal[@]}" --no-pci \
	--vdev "gpu_cuda0,dev=$rc_dev,reg_cache=1" "${extra[@]}" -- \
	--out "$out" $([ "$quick" = 1 ] && echo --reps 50)
# CPU only: no PCI scan, so no GPU is opened.
run bpf_cpu 60 "$bench/bench-bpf-cpu" "${eal[@]}" --no-pci "${extra[@]}" -- \
	--out "$out" "${bpf_args[@]}"
# No EAL: CUDA alone, on the same GPU; the CPU reference pass on $lcore.
# The bench starts no new configuration after --budget-s (60 s default).
krate_gpu=()
if [ -n "$gpu_pci" ] && [ "$gpu_pci" != any ]; then
	krate_gpu=(--pci "$gpu_pci")
fi
krate_pin=()
command -v taskset >/dev/null 2>&1 && krate_pin=(taskset -c "$lcore")
run kernel_rate 100 "${krate_pin[@]}" "$bench/bench-kernel-rate" "${krate_gpu[@]}" \
	--out "$out" "${krate_args[@]}"
# Host-memory traffic of a persistent kernel taken apart (fences, one host
# line read by many warps): the measurements behind the handoff design.
probe_pin=()
command -v taskset >/dev/null 2>&1 && probe_pin=(taskset -c "$lcore")
run sysmem_probe 100 "${probe_pin[@]}" "$bench/bench-sysmem-probe" \
	--reps "$([ "$quick" = 1 ] && echo 200 || echo 1000)"
# The generator's build rate (issue 13): libgpugen's build kernel into GPU
# and host-mapped memory against its CPU build on $lcore, 0/2/8 variables
# and a stamped IPv6/TCP case, 64 and 512 B, every configuration checked
# against the CPU; and, on $lcore too, the unbuilt-frame ceiling (frames
# handed out as dpdk-gpu-tx --no-build does), the builds' baseline;
# without a GPU the CPU part alone (exit 77).
if [ "${BENCH_GPUGEN:-1}" = 1 ]; then
	run gpugen 300 "$bench/bench-gpugen" "${eal[@]}" "${gpu_args[@]}" "${extra[@]}" -- \
		--out "$out" "${gpugen_args[@]}"
fi

# The generator end to end (issue 35): dpdk-gpu-tx unpaced, every packet
# different, each build beside frames handed out unbuilt (--no-build) on
# the same port, queues and lcores: the TX lcores' own ceiling, measured
# here so every transmit rate has its floor from this run. net_gpudma
# counts and drops what it is sent: packet rates only.
if [ "${BENCH_GENTX:-1}" = 1 ]; then
	run gen_tx_rate 600 env BENCH_EAL_EXTRA="${extra[*]}" \
		BENCH_TXR_MODES="${BENCH_TXR_MODES:-none none,gpudma cpu host-mapped gpu}" \
		BENCH_TXR_SIZES="${BENCH_TXR_SIZES:-$([ "$quick" = 1 ] && echo 64 || echo 64 imix)}" \
		BENCH_TXR_QUEUES="${BENCH_TXR_QUEUES:-$([ "$quick" = 1 ] && echo 1 || echo 1 2 4)}" \
		BENCH_TXR_SECONDS="${BENCH_TXR_SECONDS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}" \
		bash "$top/bench/gen-tx-rate.sh" "$out/gen-tx-rate" "$build"
fi

# The generator's build latency (issue 35, goal 2): dpdk-gpu-tx
# --build-breakdown, one paced burst at a time, each case against the
# flag floor its own run measures first; exit 77 without a GPU.
if [ "${BENCH_TXBUILD:-1}" = 1 ]; then
	run tx_build_latency 240 env BENCH_EAL_EXTRA="${extra[*]}" \
		BENCH_TXB_CASES="${BENCH_TXB_CASES:-$([ "$quick" = 1 ] && echo gpu:100 || echo gpu:100 host-mapped:100 host-mapped:300 gpu:100+90)}" \
		BENCH_TXB_SECONDS="${BENCH_TXB_SECONDS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}" \
		bash "$top/bench/tx-build-latency.sh" "$out/tx-build" "$build"
fi

# net_gpudma alone, the source of the capacity sweep's GPU-memory modes:
# Mpps at 64 B and GB/s at 1500 B into GPU memory by its scatter kernel,
# against the pinned host-to-device bandwidth of the same run, on as many
# queues as the sweep has RX lcores (which side limits those rows).
if [ -x "$bench/bench-gpudma" ] && [ -n "$gpu_pci" ]; then
	for q in $([ "$quick" = 1 ] && echo 1 || echo 1 2 4 8); do
		[ $((q + 1)) -le "$(nproc)" ] || continue
		run "gpudma_q$q" 120 "$bench/bench-gpudma" "${bench_mem[@]}" \
			--file-prefix bench-gpudma "${gpu_args[@]}" "${extra[@]}" \
			-l "0-$q" -- --queues "$q" --scatter \
			--seconds "$([ "$quick" = 1 ] && echo 1 || echo 3)" --dir "$out"
	done
fi

# Item 2 (and 5): the pipeline's capacity, from the same build in the same
# machine start. 128-packet ring items, as published; one RX lcore per
# queue plus EAL's main lcore, so as many lcore counts of 1/2/4/8 as the
# CPUs allow. Without a GPU only the source alone and --cpu can run.
if [ "${BENCH_CAPACITY:-1}" = 1 ]; then
	cap_modes=${BENCH_CAP_MODES:-source gpu-source cpu host-mapped staged gpu gpu-split}
	if [ -z "${BENCH_CAP_MODES:-}" ] && [ -z "$gpu_pci" ]; then
		cap_modes="source cpu"
		echo "== capacity: no GPU found by nvidia-smi: modes $cap_modes only"
	fi
	cap_lcores=
	# The whole run fits one machine start's device time (about 20
	# minutes on the H200): 2 and 512 B are the points left out.
	for lc in ${BENCH_CAP_LCORES:-$([ "$quick" = 1 ] && echo 1 || echo 1 4 8)}; do
		[ $((lc + 1)) -le "$(nproc)" ] && cap_lcores+="$lc "
	done
	[ -n "$cap_lcores" ] || cap_lcores=1
	cap_sizes=${BENCH_CAP_SIZES:-$([ "$quick" = 1 ] && echo mix 64 || echo mix 64 1500)}
	cap_secs=${BENCH_CAP_SECONDS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}
	# The capacity programs take every lcore from 0: EAL arguments of
	# this script's own (-l, the GPU's -a) are not passed on.
	run capacity 900 env BENCH_EAL_EXTRA="${extra[*]}" BENCH_CAP_MODES="$cap_modes" \
		BENCH_CAP_SIZES="$cap_sizes" BENCH_CAP_LCORES="$cap_lcores" \
		BENCH_CAP_SECONDS="$cap_secs" BENCH_CAP_BURST="${BENCH_CAP_BURST:-128}" \
		bash "$top/bench/pipeline-capacity.sh" "$out/capacity-burst128" "$build"
fi
# Capture throughput (issue 12): captured bytes/s into a file on tmpfs on
# 1/2/4 RX lcores (as the CPUs allow), each beside the same run without a
# capture; host-mapped and --cpu, --cpu alone without a GPU.
if [ "${BENCH_CAPTURE:-1}" = 1 ]; then
	capt_modes=${BENCH_CAPT_MODES:-host-mapped cpu}
	[ -z "${BENCH_CAPT_MODES:-}" ] && [ -z "$gpu_pci" ] && capt_modes=cpu
	capt_lcores=
	for lc in ${BENCH_CAPT_LCORES:-$([ "$quick" = 1 ] && echo 1 || echo 1 4)}; do
		[ $((lc + 1)) -le "$(nproc)" ] && capt_lcores+="$lc "
	done
	# The sweep's floors: one thread writing into a file in the same
	# directory, and as many threads as RX lcores, each into its own
	# file, for the file-per-queue runs (tmpfs_probe.json); and twice
	# the most lcores, as the CPUs allow: whether the directory takes
	# more than a writer a queue gives (issue 34's >= 10 GB/s "where
	# the probe allows it").
	bench_capt_dir
	if command -v python3 > /dev/null 2>&1; then
		most=$(echo $capt_lcores | tr ' ' '\n' | sort -n | tail -n 1)
		more=
		[ -n "$most" ] && [ $((2 * most)) -lt "$(nproc)" ] && more=$((2 * most))
		probe_threads=$(echo 1 $capt_lcores $more | tr ' ' '\n' | sort -nu | paste -sd,)
		run tmpfs_probe 240 python3 "$top/bench/tmpfs-probe.py" "$bench_capt_dir" \
			"$out/tmpfs_probe.json" $([ "$quick" = 1 ] && echo 128 3 || echo 2048 5) \
			"$probe_threads"
	fi
	# Every run 3 times, alternating (capture-throughput.sh): quick
	# keeps the comparison, off against all, and leaves out the rest;
	# allqw: allq with writer threads (--capture-writers, one per RX
	# lcore, on the CPUs -l leaves free).
	run capture 2700 env BENCH_EAL_EXTRA="${extra[*]}" BENCH_CAPT_MODES="$capt_modes" \
		BENCH_CAPT_DIR="$bench_capt_dir" \
		BENCH_CAPT_LCORES="${capt_lcores:-1}" \
		BENCH_CAPT_RUNS="${BENCH_CAPT_RUNS:-$([ "$quick" = 1 ] && echo off all || echo off tcp all allq allqw)}" \
		BENCH_CAPT_TRAFFIC="${BENCH_CAPT_TRAFFIC:-$([ "$quick" = 1 ] && echo mix1500 || echo mix mix1500)}" \
		BENCH_CAPT_SECONDS="${BENCH_CAPT_SECONDS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}" \
		bash "$top/bench/capture-throughput.sh" "$out/capture" "$build"
fi
# Flow expiry and IPFIX export (issue 14): the flow table alone with the
# export off, to a file and to nfcapd (where installed), and the pipeline
# with and without the export, alternating, 3 times each, then the
# exporter's capacity (the highest churn that loses nothing), in
# OUT_DIR/flow-export/; on the GPU where nvidia-smi sees one, else the CPU
# threads.
if [ "${BENCH_FLOW:-1}" = 1 ]; then
	# The pipeline also on 4 RX lcores, where the GPU rather than one
	# lcore bounds it (issue 35 asks the export's cost there).
	flow_env=(BENCH_FLOW_SECONDS="${BENCH_FLOW_SECONDS:-3}"
		BENCH_FLOW_PIPE_LCORES="${BENCH_FLOW_PIPE_LCORES:-1 4}")
	if [ "$quick" = 1 ]; then
		flow_env=(BENCH_FLOW_SIZES="${BENCH_FLOW_SIZES:-50000}"
			BENCH_FLOW_CHURN="${BENCH_FLOW_CHURN:-50000}"
			BENCH_FLOW_SECONDS="${BENCH_FLOW_SECONDS:-1}"
			BENCH_FLOW_EXPORTS="${BENCH_FLOW_EXPORTS:-off file}"
			BENCH_FLOW_PIPE_FLOWS="${BENCH_FLOW_PIPE_FLOWS:-20000}"
			BENCH_FLOW_PIPE_LCORES="${BENCH_FLOW_PIPE_LCORES:-1}"
			BENCH_FLOW_CAP_SECONDS="${BENCH_FLOW_CAP_SECONDS:-3}"
			BENCH_FLOW_CAP_BUDGET="${BENCH_FLOW_CAP_BUDGET:-6}")
	fi
	run flow_export 1200 env BENCH_EAL_EXTRA="${extra[*]}" "${flow_env[@]}" \
		bash "$top/bench/flow-export.sh" "$out/flow-export" "$build"
fi
# Several GPUs (issue 36): the pipeline and the generator on 1 .. every
# GPU, the lcores per GPU fixed, beside the bare loops at the same lcores,
# in OUT_DIR/gpus-scaling/; only where there are two GPUs or more.
if [ "${BENCH_GPUS:-1}" = 1 ] &&
		[ "$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')" -ge 2 ]; then
	run gpus_scaling 900 env BENCH_EAL_EXTRA="${extra[*]}" \
		BENCH_GPUS_REPS="${BENCH_GPUS_REPS:-$([ "$quick" = 1 ] && echo 1 || echo 3)}" \
		bash "$top/bench/gpus-scaling.sh" "$out/gpus-scaling" "$build"
fi
echo "benchmarks took $(( $(date +%s) - start )) s"

# --- Plots and tables --------------------------------------------------------------
# A Python with matplotlib if there is one (plots), else any (tables only).
py=
for p in python3 /usr/bin/python3 /usr/local/bin/python3; do
	command -v "$p" >/dev/null 2>&1 || continue
	[ -z "$py" ] && py=$p
	if "$p" -c 'import matplotlib' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if [ -n "$py" ]; then
	"$py" "$top/bench/plot.py" "$out" ||
		echo "plot.py failed (results are in $out; rerun bench/plot.py $out elsewhere)"
else
	echo "no python3: run bench/plot.py $out on another machine"
fi
echo "results: $out"
exit $failed
