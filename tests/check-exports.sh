#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The installed shared libraries export their public API and nothing of
# what they are built from (ring, CUDA wrappers, CUDA runtime): embedders
# must not bind to internals, nor collide with their own copies of them.
# Usage: check-exports.sh PREFIX LIB.so...   (every symbol must start PREFIX,
# but for those in an INTERNAL version node)
set -u
prefix=$1
shift
rc=0
for so in "$@"; do
	bad=$(nm -D --defined-only "$so" | awk '{ print $3 }' |
		grep -v "^$prefix" | grep -v '^INTERNAL$' | grep -v '^GPUGEN_0$')
	if [ -n "$bad" ]; then
		echo "FAIL: $so exports names outside $prefix*:"
		printf '%s\n' "$bad" | head -20
		rc=1
	else
		echo "PASS: $so exports $(nm -D --defined-only "$so" | grep -c " T ") functions, all $prefix*"
	fi
done
exit $rc
