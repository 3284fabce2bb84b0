#!/bin/sh
# test-memory.sh — libgpushare's HIP front end on a simulated $HIP_MODEL:
# the memory limit on every HIP allocation path (hip-probe, linked; and
# gpuload, through hipGetProcAddress), every hook found by dlsym and
# hipGetProcAddress, a 4-process race on one limit, the in-task view,
# a live change of the limit, and SIGKILL giving the memory back (as
# rocm-smi and the region see it).
# usage: test-memory.sh HIP-PROBE SMI-PROBE SIM-UTIL GPUPOOL GPULOAD
# (meson sets LD_LIBRARY_PATH, SHIM, HIP_MODEL, HIP_VENDOR,
# GPUPOOL_SIM_DIR, GPUPOOL_RUN_DIR).
set -u
hip=$1
smi=$2
gpupool=$4
gl=$5
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DEVICES="$HIP_MODEL:1"
rm -rf "$GPUPOOL_RUN_DIR"
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }
"$smi" discover "$HIP_VENDOR" >"$tmp/d.json"
uuid=$(jq -r '.devices[0].uuid' "$tmp/d.json")

# wait_for FILE TEXT: until FILE holds TEXT (10 s at most).
wait_for() {
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# 1. Every allocation path: up to the limit, then HIP's own out-of-memory
#    error (hipErrorOutOfMemory = 2); the frees give it all back.
runs paths "$tmp/paths.json" -- shim GPUPOOL_TASK_ID=paths GPUPOOL_MEM_LIMIT=1G "$hip" paths 1024 256
check seven-paths '[.[] | .path] | length == 7' "$tmp/paths.json"
check every-path-limited 'all(.allocated_mib == 1024 and .error == 2 and .again == 0)' "$tmp/paths.json"
runs paths-unlimited "$tmp/free.json" -- "$hip" paths 2048 512
check without-shim-no-limit 'all(.allocated_mib == 3072 and .error == 0 and .again == 0)' "$tmp/free.json"
runs gpuload-alloc "$tmp/gl.json" -- \
	shim GPUPOOL_TASK_ID=gl GPUPOOL_MEM_LIMIT=1536M "$gl" alloc --runtime hip --mib 4096 --chunk-mib 512 --json
check gpuload-via-proc-address '.[0].loader == "hipGetProcAddress" and .[0].allocated_mib == 1536 and
	.[0].oom and .[0].error == "hipErrorOutOfMemory" and .[0].total_mib == 1536' "$tmp/gl.json"
runs lookup "$tmp/lookup.json" -- shim "$hip" lookup
check hooks-found-every-way '.[-1].lookup_mismatches == 0' "$tmp/lookup.json"

# 2. Four processes of one task race for its 1 GiB: never more in total,
#    and all of it handed out.
for i in 1 2 3 4; do
	env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=race GPUPOOL_MEM_LIMIT=1G "$hip" race 64 "$tmp/go" \
		>"$tmp/race$i.json" &
	eval "racer$i=\$!"
done
sleep 0.5
touch "$tmp/go"
for i in 1 2 3 4; do wait_for "$tmp/race$i.json" allocated; done
"$gpupool" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/race-region.json"
touch "$tmp/go.done"
exited racer-1 "$racer1"
exited racer-2 "$racer2"
exited racer-3 "$racer3"
exited racer-4 "$racer4"
check race-within-limit '(map(.allocated_mib) | add) == 1024 and all(.error == 2)' \
	"$tmp/race1.json" "$tmp/race2.json" "$tmp/race3.json" "$tmp/race4.json"
check race-region-at-limit '.[0].tasks[] | select(.id == "race") | .mem_used_mib == 1024' \
	"$tmp/race-region.json"

# 3. The in-task view: hipMemGetInfo, hipDeviceTotalMem and the properties
#    (R0000, R0600, and R0600 found through hipGetProcAddress) show the slice.
runs view "$tmp/view.json" -- shim GPUPOOL_TASK_ID=view GPUPOOL_MEM_LIMIT=1G "$hip" view 256
check view-is-the-slice '.[0] | .mem_total == 1024 and .mem_free == 768 and .device_total == 1024 and
	.props0 == 1024 and .props6 == 1024 and .props_proc == 1024' "$tmp/view.json"
runs view-unlimited "$tmp/whole.json" -- shim GPUPOOL_TASK_ID=whole "$hip" view 0
check view-whole-device '.[0] | .mem_total > 60000 and .props6 == .mem_total and .props0 == .mem_total' \
	"$tmp/whole.json"

# 4. A live change of the limit applies at the next allocation.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=live GPUPOOL_MEM_LIMIT=1G "$hip" hold 256 >"$tmp/live.out" &
holder=$!
wait_for "$tmp/live.out" held
runs live-set "$tmp/set.out" -- "$gpupool" region set "$uuid" live --mem 512M --dir "$GPUPOOL_RUN_DIR"
runs live-paths "$tmp/live.json" -- shim GPUPOOL_TASK_ID=live GPUPOOL_MEM_LIMIT=1G "$hip" paths 512 64
check live-limit-applies 'all(.allocated_mib == 256 and .error == 2)' "$tmp/live.json"
kill "$holder"
wait "$holder" 2>/dev/null

# 5. SIGKILL: the process's memory is back within 1 s, as rocm-smi and
#    the region see it.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=victim GPUPOOL_MEM_LIMIT=1G "$hip" hold 512 >"$tmp/victim.out" &
victim=$!
wait_for "$tmp/victim.out" held
"$smi" sample "$HIP_VENDOR" 0 >"$tmp/before.json"
"$gpupool" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/region-before.json"
check victim-counted ".[0].mem_used_mib >= 512 and (.[0].processes | any(.pid == $victim and .mem_mib == 512)) and
	(.[1].tasks[] | select(.id == \"victim\") | .mem_used_mib == 512)" \
	"$tmp/before.json" "$tmp/region-before.json"
start=$(date +%s%N)
kill -9 "$victim"
wait "$victim" 2>/dev/null
for _ in $(seq 100); do
	"$smi" sample "$HIP_VENDOR" 0 >"$tmp/after.json"
	"$gpupool" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/region-after.json"
	jq -e -s '.[0].mem_used_mib == 0 and ([.[1].tasks[] | select(.id == "victim") | .mem_used_mib] |
		add // 0) == 0' "$tmp/after.json" "$tmp/region-after.json" >/dev/null && break
	sleep 0.01
done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "{\"freed_after_ms\":$elapsed_ms}" >"$tmp/elapsed.json"
check killed-memory-back ".[0].mem_used_mib == 0 and (.[0].processes | all(.pid != $victim)) and
	([.[1].tasks[] | select(.id == \"victim\") | .mem_used_mib] | add // 0) == 0 and .[2].freed_after_ms < 1000" \
	"$tmp/after.json" "$tmp/region-after.json" "$tmp/elapsed.json"

finish
