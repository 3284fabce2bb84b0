#!/bin/sh
# test-views.sh — what NVML shows inside a task: its slice (memory) and its
# own processes, as nvidia-smi in a task would show them.
# usage: test-views.sh PATH/TO/gpuload PATH/TO/nvml-probe
# (meson sets LD_LIBRARY_PATH, GPUPOOL_SIM_*, GPUPOOL_RUN_DIR and $SHIM)
set -u
gl=$1
probe=$2
. "$(dirname "$0")/../lib.sh"

# Task "a" holds 256 MiB of its 1 GiB slice.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=a GPUPOOL_MEM_LIMIT=1G \
	"$gl" alloc --mib 256 --hold 60 --json >"$tmp/hold.json" &
holder=$!
for _ in $(seq 100); do [ -s "$tmp/hold.json" ] && break; sleep 0.05; done

env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=a GPUPOOL_MEM_LIMIT=1G "$probe" >"$tmp/in-a.json"
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=b GPUPOOL_MEM_LIMIT=2G "$probe" >"$tmp/in-b.json"
"$probe" >"$tmp/outside.json"
kill $holder
exited "holder (stopped)" $holder 143

check task-sees-its-slice \
	".[0].devices[0] | .mem_total_mib == 1024 and .mem_used_mib == 256 and any(.processes[]; .pid == $holder)" \
	"$tmp/in-a.json"
check other-task-sees-its-own \
	".[0].devices[0] | .mem_total_mib == 2048 and .mem_used_mib == 0 and all(.processes[]; .pid != $holder)" \
	"$tmp/in-b.json"
check outside-sees-the-device \
	".[0].devices[0] | .mem_total_mib == 15360 and .mem_used_mib >= 256 and any(.processes[]; .pid == $holder)" \
	"$tmp/outside.json"
finish
