#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Real traffic on Linux's loopback, captured by tcpdump with its default
# snaplen: one TCP connection moving 8 MiB in large writes, so that with
# GSO (loopback's MTU is 65536) most frames are 65549 bytes long.
#
# Usage: capture-lo.sh OUT.pcap
# Exit: 0, 1 on failure, 77 when tcpdump is missing or cannot capture on
# lo here, or no frame came out over 64 KiB.
set -u

out=$1
command -v tcpdump > /dev/null || { echo "SKIP: no tcpdump"; exit 77; }
log=$out.tcpdump.txt
port=$((20000 + $$ % 20000))
tcpdump -i lo -s 262144 -U -w "$out" "tcp port $port" > "$log" 2>&1 &
tpid=$!
for _ in $(seq 25); do
	grep -q "listening on" "$log" && break
	kill -0 $tpid 2> /dev/null || break
	sleep 0.2
done
if ! kill -0 $tpid 2> /dev/null; then
	cat "$log"
	echo "SKIP: tcpdump cannot capture on lo here"
	exit 77
fi
python3 - "$port" <<'PY'
import socket, sys, threading
port = int(sys.argv[1])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
    c.close()
t = threading.Thread(target=sink)
t.start()
cli = socket.create_connection(("127.0.0.1", port))
block = bytes(range(256)) * 4096
for _ in range(8):
    cli.sendall(block)
cli.close()
t.join()
srv.close()
PY
rc=$?
sleep 0.5
kill -INT $tpid
wait $tpid
rm -f "$log"
[ $rc -eq 0 ] || { echo "FAIL: loopback traffic"; exit 1; }
big=$(tcpdump -nn -r "$out" 'greater 65001' 2> /dev/null | wc -l)
echo "lo capture: $(tcpdump -nn -r "$out" 2> /dev/null | wc -l) frames, $big over 65000 B"
[ "$big" -gt 0 ] || { echo "SKIP: no frame over 64 KiB on lo (no GSO?)"; exit 77; }
exit 0
