#!/bin/sh
# test-memory.sh — the memory limit on every CNRT and CNDrv allocation path
# of a simulated MLU370 through libgpushare's Cambricon front ends: up to
# the limit succeeds, the next fails with the layer's own out-of-memory
# error (cnrtErrorNoMem, CN_MEMORY_ERROR_OUT_OF_MEMORY: both 100100), frees
# give it back, and the layer's memory view shows the slice. Each
# allocation is counted once although CNRT reaches CNDrv through
# cnGetExportFunction, which the front end answers with its hooks (counted
# twice, a 1 GiB limit would stop at 512 MiB). Four processes of one task
# racing for one limit never hold more than it together.
# usage: test-memory.sh MLU-TASK MLU-MANAGE MLU-USAGE GPULOAD GPUPOOL SIMCTL
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
task=$1
manage=$2
gl=$4
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=mlu370-48g:1
unset MLU_VISIBLE_DEVICES GPUPOOL_MEM_LIMIT GPUPOOL_TASK_ID
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }

# 0. Without the interposer the device is the limit: 2 GiB fit.
runs bare-alloc "$tmp/bare.json" -- "$task" alloc cnMalloc 256 2048
check bare-no-limit '.[0].allocated_mib == 2048 and (.[0].oom | not) and
	.[0].view_total_mib == 49152' "$tmp/bare.json"

# 1. Every path under a 1 GiB limit, each in a task of its own.
for path in cnrt linked cnMalloc cnMallocSecurity cnZmalloc export mixed; do
	runs "alloc-$path" "$tmp/$path.json" -- \
		shim GPUPOOL_TASK_ID="t-$path" GPUPOOL_MEM_LIMIT=1G "$task" alloc $path 256 4096
	check "limit-$path" '.[0].allocated_mib == 1024 and .[0].oom and .[0].error == 100100 and
		.[0].again_mib == 1024' "$tmp/$path.json"
	check "view-$path" '.[0].view_total_mib == 1024 and .[0].view_free_mib == 0' "$tmp/$path.json"
done

# 2. gpuload through CNRT: its own out-of-memory error and the slice.
runs gpuload-alloc "$tmp/gl.json" -- \
	shim GPUPOOL_TASK_ID=gl GPUPOOL_MEM_LIMIT=768M "$gl" alloc --runtime cnrt --mib 4096 \
	--chunk-mib 128 --json
check gpuload-limit '.[0].allocated_mib == 768 and .[0].oom and .[0].error == "cnrtErrorNoMem" and
	.[0].total_mib == 768 and .[0].free_mib == 0' "$tmp/gl.json"

# 3. Four processes of one task race for its 1 GiB through both layers,
#    64 MiB at a time, and hold what they got: together exactly the limit.
i=0
for path in cnrt cnMalloc export cnrt; do
	i=$((i + 1))
	env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=race GPUPOOL_MEM_LIMIT=1G "$task" alloc $path 64 4096 3 \
		>"$tmp/race$i.json" 2>&1 &
	eval "race$i=\$!"
done
for _ in $(seq 100); do
	[ "$(cat "$tmp"/race?.json 2>/dev/null | grep -c held_mib)" -eq 4 ] && break
	sleep 0.1
done
runs race-device-view "$tmp/race-view.json" -- "$manage"
exited race-1 $race1
exited race-2 $race2
exited race-3 $race3
exited race-4 $race4
head -qn1 "$tmp"/race?.json >"$tmp/race-held.json"
check race-never-over-limit '(map(.held_mib) | add) == 1024' "$tmp/race-held.json"
check race-device-sees-limit '.[0].devices[0].mem_used_mib <= 1024 and
	.[0].devices[0].mem_used_mib >= 1024' "$tmp/race-view.json"
finish
