#!/bin/sh
# test-simdev.sh — simdev with real processes: gpuload programs sharing one
# simulated T4 while nvml-probe watches, as a user would see it.
# usage: test-simdev.sh PATH/TO/gpuload PATH/TO/nvml-probe
# Needs LD_LIBRARY_PATH=build/simdev, GPUPOOL_SIM_DEVICES=t4-16g:1 and a
# private GPUPOOL_SIM_DIR (meson sets them).
set -u
gl=$1
probe=$2
. "$(dirname "$0")/../lib.sh"

# Waits until FILE has a line (a gpuload that prints, then holds).
wait_line() {
	for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

# 1. The latency probe prints its percentiles.
"$gl" latency --duration 1 --json >"$tmp/latency.json"
check latency-json '.[0] | (.p50_us > 0) and (.p99_us >= .p50_us) and (.samples > 50)' "$tmp/latency.json"

# 2. A 10 ms kernel takes 10 ms ± 1 ms.
"$gl" burn --kernel-us 10000 --duration 1 --json >"$tmp/ten.json"
check kernel-10ms '.[0].kernel_ms_mean | (. >= 9) and (. <= 11)' "$tmp/ten.json"

# 3. Two burners share the device half and half; NVML sees it busy and
#    each process near 50 %.
"$gl" burn --kernel-us 1000 --duration 3 --json >"$tmp/burn-a.json" &
a=$!
"$gl" burn --kernel-us 1000 --duration 3 --json >"$tmp/burn-b.json" &
b=$!
sleep 2
"$probe" >"$tmp/probe-burn.json"
wait $a $b
check two-burners-half-each 'map(.busy_fraction) | all(. >= 0.45 and . <= 0.55)' \
	"$tmp/burn-a.json" "$tmp/burn-b.json"
check nvml-device-busy '.[0].devices[0].util_gpu >= 95' "$tmp/probe-burn.json"
check nvml-per-process-half \
	"[.[0].devices[0].samples[] | select(.pid == $a or .pid == $b) | .sm_util] | (length == 2) and all(. >= 40 and . <= 60)" \
	"$tmp/probe-burn.json"

# 4. Memory one process allocates shows in NVML read by another.
"$gl" alloc --mib 4096 --hold 3 --json >"$tmp/hold.json" &
holder=$!
wait_line "$tmp/hold.json"
"$probe" >"$tmp/probe-hold.json"
check memory-seen-by-nvml \
	".[0].devices[0] | (.mem_used_mib >= 4096) and any(.processes[]; .pid == $holder and .mem_mib == 4096)" \
	"$tmp/probe-hold.json"
wait $holder

# 5. Allocating past the device returns CUDA_ERROR_OUT_OF_MEMORY.
"$gl" alloc --chunk-mib 1024 --json >"$tmp/oom.json"
check out-of-memory '.[0] | .oom and .error == "CUDA_ERROR_OUT_OF_MEMORY" and .oom_at_mib == 15360' \
	"$tmp/oom.json"

# 6. A SIGKILLed process's memory is free again within 1 s (not reaped:
#    a zombie holds nothing either).
"$gl" alloc --mib 8192 --hold 60 --json >"$tmp/victim.json" &
victim=$!
wait_line "$tmp/victim.json"
kill -9 $victim
start=$(date +%s%N)
freed=no
while [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 1000 ]; do
	"$probe" >"$tmp/probe-kill.json"
	if jq -e '.devices[0].mem_used_mib == 0' "$tmp/probe-kill.json" >/dev/null; then
		freed=yes
		break
	fi
	sleep 0.05
done
wait $victim 2>/dev/null
if [ $freed = yes ]; then ok killed-memory-freed; else bad killed-memory-freed "$tmp/probe-kill.json"; fi

# 7. And the whole device can be had again.
"$gl" alloc --mib 15360 --json >"$tmp/after.json"
check whole-device-again '.[0] | (.oom | not) and .allocated_mib == 15360' "$tmp/after.json"

finish
