#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# nvcc, writing the dependency file ninja expects: the CUDA compiler of the
# project's builds (scripts/setup.sh configures them with it).
#
# Meson 1.0 (Debian 12's) gives its CUDA compile rule "depfile = OBJ.d" but
# never asks nvcc to write one, so ninja knew no header of any .cu file: a
# changed header (flow_table.h, say) left every CUDA object built against
# the old one, linked beside C objects built against the new. nvcc's own
# -MD alone writes BASENAME.d in the working directory, not OBJ.d. So: a
# compile (-c) with -o OBJ gets -MD -MF OBJ.d; anything else (meson's
# compiler checks, links) passes through unchanged.
#
# Usage (what meson runs): nvcc-depfile.sh NVCC ARGS...
set -eu
real=$1
shift
out=""
compile=0
prev=""
for a in "$@"; do
	[ "$prev" = "-o" ] && out=$a
	[ "$a" = "-c" ] && compile=1
	prev=$a
done
if [ "$compile" = 1 ] && [ -n "$out" ]; then
	exec "$real" "$@" -MD -MF "$out.d"
fi
exec "$real" "$@"
