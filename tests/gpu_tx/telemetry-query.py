#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Asks a running DPDK process's telemetry socket one command, or several
comma-separated on one connection, and prints the answers' JSON in one
object (DPDK's v2 protocol: a SEQPACKET socket that greets
with its limits, then answers each command with {command: data}).

Usage: telemetry-query.py FILE_PREFIX COMMAND[,COMMAND...] [WAIT_S]
Looks for the socket in the runtime directories EAL uses (root's
/var/run/dpdk, else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk), waiting up to
WAIT_S seconds (default 5) for it to appear.
Exit: 0 answered; 1 no socket; 3 the socket is there but refuses
connections (ENOENT on connect, as in some sandboxes: the caller says so
and cannot check the answer there).
"""

import json
import os
import socket
import sys
import time


def main():
    prefix, cmd = sys.argv[1], sys.argv[2]
    wait = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    dirs = ["/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")]
    deadline = time.monotonic() + wait
    refused = None
    while True:
        for d in dirs:
            path = os.path.join(d, prefix, "dpdk_telemetry.v2")
            if os.path.exists(path):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    s.connect(path)
                except OSError as e:
                    refused = "%s: %s" % (path, e)
                    s.close()
                    continue
                greeting = json.loads(s.recv(16384).decode())
                # Several commands, comma-separated, on one connection:
                # their answers are of one moment of a run that may end.
                reply = {}
                for c in cmd.split(","):
                    s.send(c.encode())
                    reply.update(json.loads(s.recv(int(greeting.get(
                        "max_output_len", 16384))).decode()))
                print(json.dumps(reply))
                return 0
        if time.monotonic() > deadline:
            if refused:
                print("telemetry socket refuses connections: %s" % refused,
                      file=sys.stderr)
                return 3
            print("no telemetry socket for prefix %s in %s" % (prefix, dirs), file=sys.stderr)
            return 1
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
