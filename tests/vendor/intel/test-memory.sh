#!/bin/sh
# test-memory.sh — memory slices on a simulated Intel Max 1550 through the
# Level Zero front end of libgpushare, with real processes: every
# allocation path (device and shared memory, freed with zeMemFree and
# zeMemFreeExt; linked, and through dlsym on the loader's handle) stops at
# the task's limit with ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY and frees give
# it back; host memory is not counted; the in-task views (totalSize,
# maxMemAllocSize, Sysman's zesMemoryGetState) show the slice; four
# processes racing for one limit never hold more; a process killed with
# SIGKILL gives its memory back within 1 s, in Sysman's view and the
# region's; a bad limit refuses allocations, never runs unlimited.
# usage: test-memory.sh ZE-PROBE ZE-PROBE-DL XPU-PROBE XPU-USAGE GPUPOOL GPULOAD SIMCTL
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
ze=$1
zedl=$2
xpu=$3
gp=$5
gl=$6
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=max1550-128g:1
unset ZE_AFFINITY_MASK GPUPOOL_SIM_INTEL_DRIVER GPUPOOL_MEM_LIMIT GPUPOOL_TASK_ID
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }
OOM='"ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"'

runs discover "$tmp/found.json" -- "$xpu" discover
uuid=$(jq -r '.devices[0].uuid' "$tmp/found.json")

# 1. Every path: 64 MiB at a time up to 1 GiB, then the runtime's own OOM;
#    freed, the same again. Without the library the device has 128 GiB.
runs unlimited "$tmp/free.json" -- "$ze" alloc device 2048 64 free
check device-alone-not-limited '.[0].allocated_mib == 2048' "$tmp/free.json"
for probe in ze zedl; do
	eval "bin=\$$probe"
	for kind in device shared; do
		for how in free ext; do
			runs "$probe-$kind-$how" "$tmp/$probe-$kind-$how.json" -- \
				shim GPUPOOL_TASK_ID="$probe-$kind-$how" GPUPOOL_MEM_LIMIT=1G \
				"$bin" alloc $kind 2048 64 $how
			check "$probe-$kind-$how-limit" ".[0] | .allocated_mib == 1024 and .error == $OOM and
				.again_mib == 1024 and .again_error == \"ZE_RESULT_SUCCESS\"" \
				"$tmp/$probe-$kind-$how.json"
		done
	done
done
runs host-not-counted "$tmp/host.json" -- shim GPUPOOL_MEM_LIMIT=1G "$ze" alloc host 2048 64 free
check host-beyond-limit '.[0] | .allocated_mib == 2048 and .error == "ZE_RESULT_SUCCESS"' "$tmp/host.json"
runs gpuload-alloc "$tmp/gl.json" -- \
	shim GPUPOOL_MEM_LIMIT=1G "$gl" alloc --runtime ze --mib 2048 --chunk-mib 128 --json
check gpuload-alloc-oom-at-limit ".[0] | .allocated_mib == 1024 and .oom and .error == $OOM" \
	"$tmp/gl.json"

# 2. The in-task view: the slice, and what the task may still allocate
#    (another process of the task holds 256 MiB).
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=view GPUPOOL_MEM_LIMIT=1G "$ze" hold device 256 >"$tmp/view-hold.out" 2>&1 &
holder=$!
for _ in $(seq 100); do grep -q ready "$tmp/view-hold.out" && break; sleep 0.05; done
for probe in ze zedl; do
	eval "bin=\$$probe"
	runs "$probe-view" "$tmp/$probe-view.json" -- \
		shim GPUPOOL_TASK_ID=view GPUPOOL_MEM_LIMIT=1G "$bin" devices
	check "$probe-view-slice" '.[0].devices[0] | .total_mib == 1024 and .max_alloc_mib == 1024 and
		.sysman_size_mib == 1024 and .sysman_free_mib == 768' "$tmp/$probe-view.json"
done
runs view-outside "$tmp/outside.json" -- "$ze" devices
check view-outside-whole '.[0].devices[0] | .total_mib == 131072 and .sysman_free_mib == 130816' \
	"$tmp/outside.json"
kill "$holder"
wait "$holder" 2>/dev/null

# 3. Four processes race for one 1 GiB limit (started together, each
#    asking for 2 GiB), each holding what it got for 2 s: together exactly
#    the limit, each stopped by the OOM error, and the device never holds
#    more (Sysman, during the hold).
pids=
for i in 1 2 3 4; do
	env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=race GPUPOOL_MEM_LIMIT=1G PROBE_GO="$tmp/race.go" \
		"$ze" alloc device 2048 32 free 2 >"$tmp/race-$i.json" &
	pids="$pids $!"
done
sleep 0.5
touch "$tmp/race.go"
sleep 1
runs race-sample "$tmp/race-sample.json" -- "$xpu" sample 0
"$gp" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/race-region.json"
for p in $pids; do exited "racer-$p" "$p"; done
check race-fills-limit-never-more '[.[] | .allocated_mib] | add == 1024' \
	"$tmp/race-1.json" "$tmp/race-2.json" "$tmp/race-3.json" "$tmp/race-4.json"
check race-each-stopped-by-oom "all(.[]; .error == $OOM)" \
	"$tmp/race-1.json" "$tmp/race-2.json" "$tmp/race-3.json" "$tmp/race-4.json"
check race-device-never-more '.[0].devices[0].used_mib <= 1024' "$tmp/race-sample.json"
check race-region-counts-limit '.[0].tasks[] | select(.id == "race") | .mem_used_mib <= 1024' \
	"$tmp/race-region.json"

# 4. SIGKILL: 512 MiB come back within 1 s of the kill, in Sysman's view
#    and the region's.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=victim GPUPOOL_MEM_LIMIT=2G "$ze" hold shared 512 >"$tmp/victim.out" 2>&1 &
victim=$!
for _ in $(seq 100); do grep -q ready "$tmp/victim.out" && break; sleep 0.05; done
runs sample-before-kill "$tmp/before.json" -- "$xpu" sample 0
"$gp" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/before-region.json"
check victim-held ".[0].devices[0] | .used_mib == 512 and any(.processes[]; .pid == $victim and .mib == 512)" \
	"$tmp/before.json"
check victim-in-region '.[0].tasks[] | select(.id == "victim") | .mem_used_mib == 512' \
	"$tmp/before-region.json"
start=$(date +%s%N)
kill -9 "$victim"
freed=no
while [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 1000 ]; do
	"$xpu" sample 0 >"$tmp/after.json" 2>&1
	"$gp" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/after-region.json" 2>&1
	if jq -e ".devices[0].used_mib == 0 and all(.devices[0].processes[]; .pid != $victim)" \
		"$tmp/after.json" >/dev/null 2>&1 &&
	   jq -e '[.tasks[] | select(.id == "victim")] | all(.[]; .mem_used_mib == 0)' \
		"$tmp/after-region.json" >/dev/null 2>&1; then
		freed=yes
		break
	fi
	sleep 0.05
done
wait "$victim" 2>/dev/null
check killed-freed-within-1s "\"$freed\" == \"yes\"" "$tmp/after.json"
check killed-freed-in-sysman ".[0].devices[0].used_mib == 0" "$tmp/after.json"
check killed-freed-in-region '[.[0].tasks[] | select(.id == "victim")] | all(.[]; .mem_used_mib == 0)' \
	"$tmp/after-region.json"

# 5. A bad limit: said once, and allocations refused (never unlimited).
expect bad-limit-said 0 'GPUPOOL_MEM_LIMIT="lots"' -- shim GPUPOOL_MEM_LIMIT=lots "$ze" alloc device 64 64 free
expect bad-limit-refuses 0 '"allocated_mib":0,"error":"ZE_RESULT_ERROR_INVALID_ARGUMENT"' -- \
	shim GPUPOOL_MEM_LIMIT=lots "$ze" alloc device 64 64 free
finish
