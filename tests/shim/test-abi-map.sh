#!/bin/sh
# test-abi-map.sh — the committed CUDA ABI map (src/include/cuda-abi-map.txt)
# is what tools/gen-abi-map.awk derives from the installed toolkit's
# cudaTypedefs.h. Skipped (77) without a toolkit. Run from the repository root.
set -u
header=${CUDA_HOME:-/usr/local/cuda}/include/cudaTypedefs.h
if [ ! -r "$header" ]; then
	echo "SKIP: no $header (CUDA toolkit not installed)"
	exit 77
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk -f tools/gen-abi-map.awk "$header" >"$tmp"
if grep -v '^#' src/include/cuda-abi-map.txt | LC_ALL=C sort | diff - "$tmp"; then
	echo "1 passed, 0 failed"
else
	echo "the committed map differs from $header: run make abi-map"
	echo "0 passed, 1 failed"
	exit 1
fi
