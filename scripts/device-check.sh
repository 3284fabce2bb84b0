#!/bin/sh
# device-check.sh — the real-hardware check, on a machine with an NVIDIA GPU
# and its driver: builds everything, assembles gpuload's PTX with the
# toolkit's ptxas when there is one, runs gpuload on the real driver (a
# 10 ms kernel's duration, the latency probe), and the interposer benchmark
# (bench/bench-shim.sh with DEVICE=real), and as root the verifier
# (bench/bench-verifier.sh with DEVICE=real). Writes JSON into $OUT
# (default build/device-check/). Takes about three minutes after the build.
# usage: scripts/device-check.sh
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-build/device-check}
mkdir -p "$out"
make all >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
nvidia-smi -L >"$out/gpus.txt" 2>&1 || true
tests/simdev/test-ptx.sh build/gpuload >"$out/ptx.txt" 2>&1 || true
build/gpuload burn --kernel-us 10000 --duration 2 --json >"$out/burn-10ms.json"
build/gpuload latency --duration 2 --json >"$out/latency.json"
# bench-shim exits 1 when a figure misses its target ("missed" in its JSON).
DEVICE=real bench/bench-shim.sh build >"$out/shim.json" ||
	echo "bench-shim: a target missed, or the run failed (shim.json)" >&2
# The verifier on the real driver's figures (as root: tasks as their
# tenants' users): 32 honest holders are left alone (their CUDA contexts
# within the slack), and a task that clears LD_PRELOAD is killed.
checks="burn-10ms latency shim"
if [ "$(id -u)" = 0 ]; then
	DEVICE=real bench/bench-verifier.sh build >"$out/verifier.json" 2>"$out/verifier.err" ||
		tail -5 "$out/verifier.err"
	checks="$checks verifier"
fi
for f in $checks; do printf '%s: ' "$f"; cat "$out/$f.json"; done
