#!/bin/sh
# test-discover.sh — the agent's view of simulated MLU370s through CNDev
# (src/vendor/cambricon/manage.c): discovery beside an NVIDIA card that
# CNDev must not list, the compatibility verdict (a driver the table
# accepts, one it refuses with what is needed, what is installed and what
# to do), health (a lost card is refused), a missing library, and
# MLU_VISIBLE_DEVICES (a task shown device 1 uses CNDev's device 1, and
# under libgpushare that device's region).
# usage: test-discover.sh MLU-TASK MLU-MANAGE MLU-USAGE GPULOAD GPUPOOL SIMCTL
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
manage=$2
gl=$4
gp=$5
simctl=$6
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=a100-80g:1,mlu370-48g:2
mkdir -p "$GPUPOOL_RUN_DIR"
unset MLU_VISIBLE_DEVICES GPUPOOL_SIM_CAMBRICON_DRIVER

# 1. Two MLUs (the A100 is NVML's), named, sized and accepted.
runs discover "$tmp/found.json" -- "$manage"
check two-mlus '.[0].vendor == "cambricon" and .[0].visible_env == "MLU_VISIBLE_DEVICES" and
	(.[0].devices | length == 2) and
	([.[0].devices[] | .uuid | test("^MLU-[0-9a-f]{8}-[0-9a-f]{4}-")] | all) and
	.[0].devices[0].uuid != .[0].devices[1].uuid and
	([.[0].devices[] | .name == "MLU370-X8" and .mem_total_mib == 49152] | all) and
	([.[0].devices[] | .local] == [0, 1])' "$tmp/found.json"
check accepted-driver '[.[0].devices[] | .compatible and .reason == "" and
	.driver == "5.10.22"] | all' "$tmp/found.json"

# 2. An old driver: refused, with the reason.
runs discover-old-driver "$tmp/old.json" -- env GPUPOOL_SIM_CAMBRICON_DRIVER=4.10.5 "$manage"
check old-driver-refused '[.[0].devices[] | (.compatible | not) and .driver == "4.10.5" and
	(.reason | test("MLU370 \\(MLU300\\) needs MLU driver 5.10 or newer.*4.10.5 is installed: upgrade the driver"))] | all' \
	"$tmp/old.json"
runs discover-new-driver "$tmp/new.json" -- env GPUPOOL_SIM_CAMBRICON_DRIVER=6.2.0 "$manage"
check new-driver-accepted '[.[0].devices[] | .compatible] | all' "$tmp/new.json"
expect bad-driver-text 1 'CNDev failed while listing devices' -- \
	env GPUPOOL_SIM_CAMBRICON_DRIVER=five "$manage"

# 3. A lost card is refused until restored (simctl counts every device).
runs lose "$tmp/lose.out" -- "$simctl" lose 2
runs discover-lost "$tmp/lost.json" -- "$manage"
check lost-card-refused '.[0].devices[0].compatible and (.[0].devices[1].compatible | not) and
	(.[0].devices[1].reason | test("unhealthy"))' "$tmp/lost.json"
runs restore "$tmp/restore.out" -- "$simctl" restore 2
runs discover-restored "$tmp/restored.json" -- "$manage"
check restored-card '[.[0].devices[] | .compatible] | all' "$tmp/restored.json"

# 4. No CNDev: one line saying what is missing and what to set.
expect no-library 1 'cannot load libgp-no-cndev.so.*GPUPOOL_SIM_DEVICES' -- \
	"$manage" libgp-no-cndev.so

# 5. MLU_VISIBLE_DEVICES=1: the task's device 0 is CNDev's device 1.
MLU_VISIBLE_DEVICES=1 "$gl" alloc --runtime cnrt --mib 1024 --chunk-mib 256 --hold 30 --json \
	>"$tmp/held.json" 2>&1 &
held=$!
for _ in $(seq 100); do [ -s "$tmp/held.json" ] && break; sleep 0.1; done
runs discover-held "$tmp/seen.json" -- "$manage"
kill $held 2>/dev/null
wait $held 2>/dev/null
check visible-device-1 '.[0].devices[0].mem_used_mib == 0 and .[0].devices[1].mem_used_mib == 1024 and
	.[1].allocated_mib == 1024' "$tmp/seen.json" "$tmp/held.json"
# Under libgpushare the task's device 0 is the region of CNDev's device 1.
runs visible-under-shim "$tmp/vis.json" -- env LD_PRELOAD="$SHIM" MLU_VISIBLE_DEVICES=1 \
	GPUPOOL_TASK_ID=vis GPUPOOL_MEM_LIMIT=512M "$gl" alloc --runtime cnrt --mib 1024 --json
runs region-ls "$tmp/regions.json" -- "$gp" region ls --dir "$GPUPOOL_RUN_DIR" --json
check visible-region '.[0].allocated_mib == 512 and .[1].devices[0].uuid == .[2].devices[1].uuid and
	(.[1].devices | length == 1) and .[1].devices[0].tasks[0].id == "vis"' \
	"$tmp/vis.json" "$tmp/regions.json" "$tmp/found.json"
expect none-visible 1 'cnrtGetDeviceCount|cnrtErrorNoDevice' -- \
	env MLU_VISIBLE_DEVICES=7 "$gl" alloc --runtime cnrt --mib 256 --json
finish
