#!/bin/bash
# Call 8: TX rate at the head against ring items 8/16/32 (and burst 128
# x 32 items), unbuilt in the same rounds; 3 rounds alternated.
cd "$(dirname "$0")/.." || exit 1
. build-gpu/prep.sh
top=$PWD; R=$PWD/c8; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/c8.tgz" c8; }
B=.gpu-bundle/build; pmd="-d $top/.gpu-bundle/pmds"
frames=$R/f64.pcap
$B/tests/gpu_rx/e2e/gpurx-e2e-genpcap --size 64 "$frames" 3 4096 > /dev/null
vars="var=ipv4.src:inc:10.0.0.1-10.0.255.254,var=udp.sport:inc:1024-65535,stamp=off"
for r in 1 2 3; do for q in 1 2 4; do for v in none 8 16 32 32b128; do
	name=q$q-$v.r$r; bu=256
	case $v in none) margs="--mem cpu --no-build"; pci=--no-pci ;;
	32b128) margs="--mem gpu --ring-items 32"; bu=128; pci= ;;
	*) margs="--mem gpu --ring-items $v"; pci= ;; esac
	timeout 30 $B/examples/gpu_tx/dpdk-gpu-tx -m 4096 $pci --file-prefix txr -l 0-$q $pmd \
		--vdev "net_gpudma0,rx_pcap=$frames,queues=$q" -- \
		--stream "ipv4,udp,dst=10.1.0.1,$vars,size=64" $margs \
		--queues $q --burst $bu --duration 2 --wait-link 0 -q \
		--json "$R/txr-$name.json" > "$R/txr-$name.log" 2>&1
	echo "$name rc=$? $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); w=j.get("lcore_wait",{}); print("mpps=%.1f gpu_wait=%s inflight=%s lat=%s" % (j["pps"]/1e6, w.get("gpu_share","-"), j.get("inflight_mean","-"), j.get("build_lat_us","-")))' "$R/txr-$name.json" 2>/dev/null)"
done; done; done | tee "$R/txr.txt"; save
