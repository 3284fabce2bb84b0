#!/bin/sh
# test-simdev.sh — simdev with real processes: gpuload programs sharing one
# simulated T4 while nvml-probe watches, as a user would see it. Every
# program run must succeed (under ASan, a leak fails it at exit).
#
# Timing on a busy host: a simulated kernel takes wall-clock time, and a
# host too busy to wake simdev's worker threads on time leaves the device
# idle in between (its own accounting says so) and ends kernels late. So
# the checks compare what the device gave two processes over the same
# windows, and bound durations from below by what was asked; where they
# bound from above, the bound is what a host busy with two CPU hogs on 2
# cores still meets.
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

# Waits until PID is a zombie (dead, not yet reaped): state Z.
wait_zombie() {
	for _ in $(seq 200); do
		[ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# Probes NVML (into $tmp/probe-first.json) until both PIDs have samples:
# both burners have run. At most about 10 s.
wait_both_ran() {
	for _ in $(seq 100); do
		"$probe" >"$tmp/probe-first.json" &&
			jq -e "[.devices[0].samples[].pid] | contains([$1, $2])" "$tmp/probe-first.json" \
			>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# 1. The latency probe prints its percentiles.
runs latency-ran "$tmp/latency.json" -- "$gl" latency --duration 1 --json
check latency-json '.[0] | (.p50_us > 0) and (.p99_us >= .p50_us) and (.samples > 50)' "$tmp/latency.json"

# 2. A 10 ms kernel takes 10 ms: never less (nothing cuts a kernel short);
#    a busy host only adds (up to 13 ms measured beside two CPU hogs), a
#    kernel run twice would double it.
runs kernel-10ms-ran "$tmp/ten.json" -- "$gl" burn --kernel-us 10000 --duration 1 --json
check kernel-10ms '.[0].kernel_ms_mean | (. >= 9.9) and (. <= 15)' "$tmp/ten.json"

# 3. Two burners share the device half and half, as the device counts its
#    time: over three windows of NVML's last second, each while both ran,
#    each burner got 0.45-0.55 of the device time the two got, and the
#    device's own figure is theirs (in each window the sum of theirs,
#    within rounding). Not each burner's share of its own wall time
#    (gpuload's busy_fraction, printed): that also counts the time a busy
#    host leaves the device idle, and the other burner's start-up.
"$gl" burn --kernel-us 1000 --duration 5 --json >"$tmp/burn-a.json" &
a=$!
"$gl" burn --kernel-us 1000 --duration 5 --json >"$tmp/burn-b.json" &
b=$!
if wait_both_ran $a $b; then ok both-burners-run; else bad both-burners-run "$tmp/probe-first.json"; fi
for i in 1 2 3; do
	sleep 1
	"$probe" >"$tmp/probe-burn.$i.json"
done
exited burner-a $a
exited burner-b $b
jq -r '"    burner: busy_fraction \(.busy_fraction) of its \(.seconds) s, \(.kernels) kernels"' \
	"$tmp/burn-a.json" "$tmp/burn-b.json"
pair="[.devices[0].samples[] | select(.pid == $a or .pid == $b)]"
jq -r "\"    window: device \(.devices[0].util_gpu) %, burners \($pair | map(.sm_util))\"" \
	"$tmp"/probe-burn.?.json
check two-burners-half-each "all(.[]; $pair | length == 2) and
	([.[] | $pair[] | select(.pid == $a) | .sm_util] | add) as \$a |
	([.[] | $pair[] | select(.pid == $b) | .sm_util] | add) as \$b |
	\$a + \$b > 0 and (\$a / (\$a + \$b) | . >= 0.45 and . <= 0.55)" "$tmp"/probe-burn.?.json
check nvml-device-is-the-burners \
	"all(.[]; .devices[0].util_gpu - ($pair | map(.sm_util) | add) | . >= -1 and . <= 1)" \
	"$tmp"/probe-burn.?.json
check nvml-device-busy '[.[].devices[0].util_gpu] | add / length >= 80' "$tmp"/probe-burn.?.json

# 4. Memory one process allocates shows in NVML read by another.
"$gl" alloc --mib 4096 --hold 3 --json >"$tmp/hold.json" &
holder=$!
wait_line "$tmp/hold.json"
"$probe" >"$tmp/probe-hold.json"
check memory-seen-by-nvml \
	".[0].devices[0] | (.mem_used_mib >= 4096) and any(.processes[]; .pid == $holder and .mem_mib == 4096)" \
	"$tmp/probe-hold.json"
exited holder $holder

# 5. Allocating past the device returns CUDA_ERROR_OUT_OF_MEMORY (a
#    result: gpuload exits 0).
runs out-of-memory-ran "$tmp/oom.json" -- "$gl" alloc --chunk-mib 1024 --json
check out-of-memory '.[0] | .oom and .error == "CUDA_ERROR_OUT_OF_MEMORY" and .oom_at_mib == 15360' \
	"$tmp/oom.json"

# 6. A SIGKILLed process's memory is free at the next look while it is a
#    zombie (dead, not reaped: a zombie holds nothing either). Its parent
#    is a sleep that never reaps it.
sh -c '"$1" alloc --mib 8192 --hold 60 --json >"$2" & echo $! >"$3"; exec sleep 60' \
	sh "$gl" "$tmp/victim.json" "$tmp/victim.pid" &
parent=$!
wait_line "$tmp/victim.json"
victim=$(cat "$tmp/victim.pid")
kill -9 "$victim"
if wait_zombie "$victim"; then ok killed-is-a-zombie; else bad killed-is-a-zombie; fi
"$probe" >"$tmp/probe-kill.json"
check killed-memory-freed '.[0].devices[0].mem_used_mib == 0' "$tmp/probe-kill.json"
kill $parent
exited zombie-parent $parent 143

# 7. And the whole device can be had again.
runs whole-device-again-ran "$tmp/after.json" -- "$gl" alloc --mib 15360 --json
check whole-device-again '.[0] | (.oom | not) and .allocated_mib == 15360' "$tmp/after.json"

finish
