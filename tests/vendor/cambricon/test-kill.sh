#!/bin/sh
# test-kill.sh — a task process on a simulated MLU370 under libgpushare,
# SIGKILLed while it holds memory through CNRT (and another through
# CNDrv): within 1 s of the kill CNDev's view (what the agent samples) and
# the task's region (`gpupool region ls`) no longer count its memory, and
# the task can allocate its whole limit again.
# usage: test-kill.sh MLU-TASK MLU-MANAGE MLU-USAGE GPULOAD GPUPOOL SIMCTL
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
task=$1
manage=$2
gp=$5
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=mlu370-48g:1
unset MLU_VISIBLE_DEVICES GPUPOOL_MEM_LIMIT GPUPOOL_TASK_ID
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }

now_ms() { date +%s%3N; }

# kill_and_watch WHO PATH: a holder of 1 GiB through PATH, killed; CNDev
# and the region are polled until both show its memory gone.
kill_and_watch() {
	who=$1
	env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID="$who" GPUPOOL_MEM_LIMIT=2G "$task" alloc "$2" 256 1024 60 \
		>"$tmp/$who.json" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q held_mib "$tmp/$who.json" && break; sleep 0.1; done
	runs "$who-holding" "$tmp/$who-before.json" -- "$manage"
	runs "$who-region-before" "$tmp/$who-region-before.json" -- \
		"$gp" region ls --dir "$GPUPOOL_RUN_DIR" --json
	check "$who-held" ".[0].held_mib == 1024 and
		(.[1].devices[0].procs | map(select(.pid == $pid)) | .[0].mem_mib == 1024) and
		([.[2].devices[].tasks[] | select(.id == \"$who\") | .mem_used_mib] == [1024])" \
		"$tmp/$who.json" "$tmp/$who-before.json" "$tmp/$who-region-before.json"
	start=$(now_ms)
	kill -9 $pid
	gone=
	while [ $(($(now_ms) - start)) -lt 1000 ]; do
		"$manage" >"$tmp/$who-after.json" 2>&1
		"$gp" region ls --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/$who-region.json" 2>&1
		if jq -e '.devices[0].mem_used_mib == 0 and (.devices[0].procs | length == 0)' \
			"$tmp/$who-after.json" >/dev/null 2>&1 &&
		   jq -e "[.devices[].tasks[] | select(.id == \"$who\") | .mem_used_bytes] |
			all(. == 0)" "$tmp/$who-region.json" >/dev/null 2>&1; then
			gone=$(($(now_ms) - start))
			break
		fi
	done
	wait $pid 2>/dev/null
	echo "{\"gone_ms\": ${gone:-null}}" >"$tmp/$who-gone.json"
	check "$who-freed-within-1s" '.[0].gone_ms != null and .[0].gone_ms < 1000' \
		"$tmp/$who-gone.json" || cat "$tmp/$who-after.json" "$tmp/$who-region.json"
	runs "$who-again" "$tmp/$who-again.json" -- \
		shim GPUPOOL_TASK_ID="$who" GPUPOOL_MEM_LIMIT=2G "$task" alloc "$2" 256 4096
	check "$who-whole-limit-again" '.[0].allocated_mib == 2048 and .[0].oom' "$tmp/$who-again.json"
}

kill_and_watch killed-cnrt cnrt
kill_and_watch killed-cndrv cnMalloc
finish
