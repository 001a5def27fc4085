# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the other scripts: puts the CUDA toolkit's nvcc on PATH when it
# is not there yet, looking at $CUDA_HOME, $CUDA_PATH, then the toolkit's
# default install location. Returns 1 if none is found.
if ! command -v nvcc >/dev/null 2>&1; then
	for cuda_dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
		if [ -n "$cuda_dir" ] && [ -x "$cuda_dir/bin/nvcc" ]; then
			export PATH=$cuda_dir/bin:$PATH
			break
		fi
	done
	unset cuda_dir
fi
command -v nvcc >/dev/null 2>&1
