#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The generator's loop closed: dpdk-gpu-tx and dpdk-gpu-rx --cpu --stamps
# as two processes on one wire, the receiver's per-stream counts checked
# against what was sent (meson test; bench/gen-loop.sh runs it too).
# Usage: run-loop.sh CASE TX RX WORKDIR
# CASE: memif (net_memif: dpdk-gpu-tx the server, dpdk-gpu-rx the client)
#       veth  (a veth pair, one end in a network namespace made here, each
#              end a net_af_packet port)
# Env: LOOP_COUNT packets (default 30000), LOOP_RATE dpdk-gpu-tx --rate
# (default 200kpps for memif, 100kpps for veth: what this kernel's veth
# and af_packet take without loss on a busy 2-core VM; "max": unpaced,
# as fast as the port takes), LOOP_STREAMS stream count 1-3 (default
# 3), TX_MEM dpdk-gpu-tx --mem (default cpu),
# TX_EAL / RX_EAL the EAL memory and device options (default --no-huge
# -m 512 --no-pci; with --mem host-mapped, TX_EAL without --no-pci lets
# EAL find the GPU, and -d DIR loads drivers from a bundle),
# LOOP_QUIET=1: only the result line.
# Exit 0 when every stream arrived whole, in order, once each, with a
# latency; 1 otherwise; 77 when the machine cannot run the loop.
set -u

case_name=$1 tx=$2 rx=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
count=${LOOP_COUNT:-30000}
nstreams=${LOOP_STREAMS:-3}
tag=gpuloop$$
txpid='' rxpid='' ns='' veth=''

cleanup() {
	for p in $txpid $rxpid; do
		kill "$p" 2>/dev/null
	done
	for p in $txpid $rxpid; do
		wait "$p" 2>/dev/null
	done
	txpid='' rxpid=''
	[ -n "$veth" ] && ip link del "$veth" 2>/dev/null
	[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	veth='' ns=''
	rm -f "$work/memif.sock"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

say() {
	[ "${LOOP_QUIET:-0}" = 1 ] || cat "$@"
}

eal() {
	# $1: tx or rx; $2: its lcores. --no-shconf: no files under
	# /var/run/dpdk (net_memif then warns it has no multi-process
	# channel, which only secondary processes would use).
	if [ "$1" = tx ]; then
		set -- "$@" "${TX_EAL:---no-huge -m 512 --no-pci}"
	else
		set -- "$@" "${RX_EAL:---no-huge -m 512 --no-pci}"
	fi
	echo "$3" --no-shconf --file-prefix "$tag-$1" -l "$2" \
		--log-level=lib.eal:warning
}

# A port whose driver this DPDK lacks is a machine without the loop.
need_pmd() {
	# shellcheck disable=SC2046
	"$tx" $(eal tx 0) --vdev "$1" -- --help > "$work/probe.txt" 2>&1 ||
		! grep -q "Unable to parse device" "$work/probe.txt" ||
		skip "${1%%,*} is not in this DPDK (the distribution's" \
			"librte-net-${2} package)"
}

# Frames with a stamp of every kind the builder makes: IPv4/IPv6, UDP/TCP,
# a VLAN tag, random and stepped sizes up to the veth MTU, a weight of 2.
streams="ipv4,udp,var=ipv4.src:inc:10.0.0.1-10.0.0.100,size=70-300:random
vlan=7,ipv6,tcp,dport=443,var=tcp.sport:random:1024-65535,size=110-1518:step=71,weight=2
ipv4,tcp,src=10.9.0.1,var=ipv4.ttl:dec:1-64,size=1518"
streams=$(echo "$streams" | head -n "$nstreams")

send() {
	# $1: the vdev, $2: --linger; the rest: what runs dpdk-gpu-tx
	# (nothing, or ip netns exec). Its own process: the receiver runs
	# beside it.
	vdev=$1 linger=$2
	shift 2
	# shellcheck disable=SC2046
	set -- "$@" timeout 120 "$tx" $(eal tx 0) --vdev "$vdev" -- \
		--mem "${TX_MEM:-cpu}" --count "$count" --wait-link 20 \
		--linger "$linger" --json "$work/tx.json"
	[ "$rate" = max ] || set -- "$@" --rate "$rate"
	old_ifs=$IFS
	IFS='
'
	for s in $streams; do
		set -- "$@" --stream "$s"
	done
	IFS=$old_ifs
	"$@" > "$work/tx.txt" 2>&1 &
	txpid=$!
}

receive() {
	vdev=$1
	shift
	# shellcheck disable=SC2046
	"$@" timeout 120 "$rx" $(eal rx 0-1) --vdev "$vdev" -- --cpu --stamps \
		--quiet --idle-exit 2000 --json "$work/rx.json" \
		> "$work/rx.txt" 2>&1 &
	rxpid=$!
}

# dpdk-gpu-tx failed ($1 says how): with no GPU for TX_MEM's build the
# loop cannot run here.
tx_failed() {
	if grep -q "no GPU probed" "$work/tx.txt"; then
		grep "no GPU probed" "$work/tx.txt"
		skip "--mem ${TX_MEM:-cpu} needs a GPU"
	fi
	cat "$work/tx.txt"
	fail "$1"
}

# Until FILE has a line matching RE (5 s), or PID died.
wait_line() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		kill -0 "$3" 2>/dev/null || return 1
		i=$((i + 1))
		[ $i -le 500 ] || return 1
		sleep 0.01
	done
}

# Both ends' exit status; a failed one shows its output. The receiver
# stops 2 s after the last frame (--idle-exit), or 2 s after its start
# when none came.
finish() {
	wait "$rxpid"
	rrc=$?
	rxpid=
	wait "$txpid"
	trc=$?
	txpid=
	say "$work/tx.txt" "$work/rx.txt"
	[ $trc -eq 0 ] || tx_failed "dpdk-gpu-tx exit $trc"
	[ $rrc -eq 0 ] || { cat "$work/rx.txt"; fail "dpdk-gpu-rx exit $rrc"; }
}

case $case_name in
memif)
	rate=${LOOP_RATE:-200kpps}
	need_pmd "net_memif0,role=server,socket=$work/probe.sock" memif
	# No client: the generator gives up after --wait-link, says why and
	# sends nothing.
	# shellcheck disable=SC2046
	"$tx" $(eal tx 0) --vdev "net_memif0,role=server,socket=$work/none.sock" \
		-- --stream ipv4 --count 10 --wait-link 0.3 > "$work/nopeer.txt" 2>&1 &&
		{ cat "$work/nopeer.txt"; fail "sent with no client"; }
	grep -q "link still down after 0.3 s" "$work/nopeer.txt" ||
		{ cat "$work/nopeer.txt"; fail "no word on the link being down"; }
	! grep -q "^sent:" "$work/nopeer.txt" ||
		{ cat "$work/nopeer.txt"; fail "a run started with no client"; }
	# The server listens first; its client connects, the link comes up
	# and the generator starts counting and sending. At the end it waits
	# for the client to go (its --idle-exit): the last frames in the
	# ring are the client's to read until then.
	send "net_memif0,role=server,socket=$work/memif.sock" 60
	wait_line "$work/tx.txt" "waiting up to" $txpid ||
		tx_failed "dpdk-gpu-tx did not come up"
	receive "net_memif0,role=client,socket=$work/memif.sock"
	finish
	;;
veth)
	rate=${LOOP_RATE:-100kpps}
	need_pmd "net_af_packet0,iface=lo" af-packet
	command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
	ns=$tag
	ip netns add "$ns" 2> "$work/ip.txt" || {
		ns=
		skip "ip netns add: $(cat "$work/ip.txt") (needs root or" \
			"CAP_NET_ADMIN and CAP_SYS_ADMIN)"
	}
	# Interface names: 15 characters at most.
	veth=lpa$$ peer=lpb$$
	ip link add "$veth" type veth peer name "$peer" netns "$ns" \
		2> "$work/ip.txt" || {
		veth=
		skip "ip link add type veth: $(cat "$work/ip.txt")"
	}
	# No IPv6 on either end: no router or neighbour solicitations
	# beside the generator's frames (they would be counted unstamped,
	# not in the streams, but they load the wire).
	sysctl -qw "net.ipv6.conf.$veth.disable_ipv6=1" 2>/dev/null
	ip netns exec "$ns" sysctl -qw \
		"net.ipv6.conf.$peer.disable_ipv6=1" 2>/dev/null
	if ! ip link set "$veth" up ||
			! ip netns exec "$ns" ip link set "$peer" up; then
		fail "cannot bring the veth pair up"
	fi
	# The receiver first: its af_packet socket is bound and its ring
	# filling once it prints its memory line. A ring of 16384 frames
	# (32 MiB; the default is 512) rides out 160 ms of the receiver not
	# running at 100 kpps, on a machine shared with builds.
	receive "net_af_packet0,iface=$peer,framecnt=16384" ip netns exec "$ns"
	wait_line "$work/rx.txt" "^memory:" $rxpid ||
		{ cat "$work/rx.txt"; fail "dpdk-gpu-rx did not come up"; }
	send "net_af_packet0,iface=$veth" 0.5
	finish
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac

# Per stream: sent (streams take turns, weight packets each per round,
# in order; stream ids from 0) against what dpdk-gpu-rx counted.
echo "$streams" > "$work/streams.txt"
python3 - "$work" "$case_name" "$count" <<'PY'
import json, re, sys

work, case, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
specs = open(work + "/streams.txt").read().split("\n")
specs = [s for s in specs if s]
weights = []
for s in specs:
    m = re.search(r"weight=(\d+)", s)
    weights.append(int(m.group(1)) if m else 1)
tx = json.load(open(work + "/tx.json"))
rx = json.load(open(work + "/rx.json"))
bad = []
if tx["packets"] != count or tx["tx_failed"] != 0:
    bad.append("dpdk-gpu-tx sent %d of %d (%d failed)"
               % (tx["packets"], count, tx["tx_failed"]))
rounds, rest = divmod(count, sum(weights))
sent = []
for w in weights:
    sent.append(rounds * w + min(max(rest, 0), w))
    rest -= w
drops = {k: v for k, v in rx["dropped"].items() if v}
if drops:
    bad.append("receiver drops %s" % drops)
got = {s["stream"]: s for s in rx["stamps"]["streams"]}
if sorted(got) != list(range(len(specs))):
    bad.append("stream ids %s, want 0..%d" % (sorted(got), len(specs) - 1))
lines = []
for i, want in enumerate(sent):
    s = got.get(i)
    if s is None:
        continue
    lat = s["latency_ns"]
    for k, v in (("received", want), ("lost", 0), ("reordered", 0),
                 ("late", 0), ("duplicates", 0)):
        if s[k] != v:
            bad.append("stream %d: %s %d, want %d" % (i, k, s[k], v))
    # Every packet has a latency (none stamped after it arrived), within
    # what a loop on one host takes: p99 under 100 ms, none over 1 s.
    if lat["count"] != s["received"] or lat["negative"] != 0:
        bad.append("stream %d: %d latencies, %d negative, of %d"
                   % (i, lat["count"], lat["negative"], s["received"]))
    if not (0 < lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"]
            and lat["p99"] < 100e6 and lat["max"] < 1e9):
        bad.append("stream %d: latency ns %s" % (i, lat))
    lines.append("  stream %d: sent %d, received %d, lost %d, reordered %d, "
                 "duplicates %d; latency us min %.1f median %.1f p99 %.1f "
                 "max %.1f" % (i, want, s["received"], s["lost"],
                               s["reordered"], s["duplicates"],
                               lat["min"] / 1e3, lat["median"] / 1e3,
                               lat["p99"] / 1e3, lat["max"] / 1e3))
# Each frame has its own transmit time: streams interleaved in the same
# bursts no longer share their latency figures (they did with one stamp
# time a burst).
figs = {tuple(got[i]["latency_ns"][k] for k in ("min", "median", "p99", "max"))
        for i in got}
if len(got) > 1 and len(figs) == 1:
    bad.append("every stream has the same latency figures %s: stamps "
               "are not per packet" % (figs.pop(),))
print("loop %s: %d packets, %s %s requested, %.0f pps measured (mem %s)"
      % (case, tx["packets"], tx["rate_requested"], tx["rate_unit"],
         tx["pps"], tx["mem"]))
print("\n".join(lines))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
