#!/bin/sh
# test-ptx.sh — gpuload's embedded kernel is valid PTX: ptxas from the CUDA
# toolkit assembles `gpuload --print-ptx` for sm_80 (Ampere) and sm_90
# (Hopper). Skips (exit 77) where no toolkit is installed.
# usage: test-ptx.sh PATH/TO/gpuload   (run from the repository root)
set -u
gpuload=${1:?usage: test-ptx.sh PATH/TO/gpuload}
pass=0
fail=0

ptxas=$(command -v ptxas 2>/dev/null || true)
if [ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ]; then
	ptxas=/usr/local/cuda/bin/ptxas
fi
if [ -z "$ptxas" ]; then
	echo "SKIP: no ptxas (CUDA toolkit not installed)"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

if "$gpuload" --print-ptx >"$dir/gpuload.ptx" && [ -s "$dir/gpuload.ptx" ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL print-ptx: $gpuload --print-ptx gave no PTX"
fi

for arch in sm_80 sm_90; do
	if "$ptxas" -arch=$arch "$dir/gpuload.ptx" -o "$dir/gpuload.$arch.cubin" \
		>"$dir/ptxas.log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL ptxas -arch=$arch:"
		sed 's/^/    /' "$dir/ptxas.log"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
