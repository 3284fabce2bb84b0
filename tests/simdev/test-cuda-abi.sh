#!/bin/sh
# test-cuda-abi.sh — src/include/gp-cuda.h agrees with the CUDA toolkit's
# <cuda.h> on the struct layouts and enum values in
# tests/simdev/cuda-abi-facts.h: builds cuda-abi-probe.c (toolkit) and
# cuda-abi-ours.c (ours), runs both and compares them fact by fact.
# Skips (exit 77) where <cuda.h> is not installed.
# usage: tests/simdev/test-cuda-abi.sh   (run from the repository root;
#        CUDA_HOME, default /usr/local/cuda, and CC may be set)
set -u
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${CC:-cc}
pass=0
fail=0

if [ ! -f "$cuda/include/cuda.h" ]; then
	echo "SKIP: no $cuda/include/cuda.h (CUDA toolkit not installed)"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# build NAME FLAGS...: compiles tests/simdev/cuda-abi-NAME.c and runs it
# into $dir/NAME.txt; counts a failure and says why if either step fails.
build() {
	name=$1
	shift
	if ! "$cc" -std=c17 -Wall -Wextra -Werror "$@" -o "$dir/$name" \
		"tests/simdev/cuda-abi-$name.c" >"$dir/$name.log" 2>&1; then
		fail=$((fail + 1))
		echo "FAIL build cuda-abi-$name.c:"
		sed 's/^/    /' "$dir/$name.log"
		return 1
	fi
	if ! "$dir/$name" >"$dir/$name.txt"; then
		fail=$((fail + 1))
		echo "FAIL run cuda-abi-$name"
		return 1
	fi
}

build probe -I"$cuda/include" || { echo "$pass passed, $fail failed"; exit 1; }
build ours -Isrc || { echo "$pass passed, $fail failed"; exit 1; }

# One check per fact the toolkit states: ours must give the same value.
while read -r name want; do
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$dir/ours.txt")
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name: gp-cuda.h ${got:-(missing)}, toolkit $want"
	fi
done <"$dir/probe.txt"
if [ "$pass" -eq 0 ]; then
	fail=$((fail + 1))
	echo "FAIL: the probe printed no facts"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
