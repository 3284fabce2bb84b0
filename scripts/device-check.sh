#!/bin/sh
# device-check.sh — the real-hardware check, on a machine with an NVIDIA GPU
# and its driver: builds everything, assembles gpuload's PTX with the
# toolkit's ptxas when there is one, runs gpuload on the real driver (a
# 10 ms kernel's duration, the latency probe), and the interposer benchmark
# (bench/bench-shim.sh with DEVICE=real). Writes JSON into $OUT (default
# build/device-check/). Takes about two minutes after the build.
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
DEVICE=real bench/bench-shim.sh build >"$out/shim.json"
for f in burn-10ms latency shim; do printf '%s: ' "$f"; cat "$out/$f.json"; done
