#!/bin/sh
# test-memory.sh — memory slices on a simulated Ascend 910B through the
# ACL front end of libgpushare, with real processes: every allocation path
# (aclrtMalloc, aclrtMallocCached, aclrtMallocAlign32, aclrtMallocPhysical;
# linked and through dlsym on the runtime's handle) stops at the limit
# with ACL's own out-of-memory error and frees give the memory back; four
# processes of one task race for one limit; aclrtGetMemInfo shows the
# slice; the last aclrtResetDevice gives the slice back; a process killed with SIGKILL frees its memory within 1 s, as DCMI
# and the region see it.
# usage: test-memory.sh ACL-PROBE ACL-PROBE-DL NPU-PROBE SIM-USAGE GPUPOOL SIMCTL GPULOAD
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
acl=$1
acl_dl=$2
npu=$3
gp=$5
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=ascend-910b-64g:1
OOM=207001                              # ACL_ERROR_RT_MEMORY_ALLOCATION
# (a function run in the background would be a subshell: $! its pid, not
# the program's; background jobs call env directly)
shim() { env LD_PRELOAD="$SHIM" "$@"; }

runs discover "$tmp/found.json" -- "$npu" discover
uuid=$(jq -r '.devices[0].uuid' "$tmp/found.json")

# 0. Without libgpushare the device's own 64 GiB is the limit, and the
#    runtime's error past it is ACL's out-of-memory.
runs device-limit "$tmp/device.json" -- "$acl" alloc malloc 4096
check device-full-is-acl-oom ".[0] | .blocks == 16 and .error == $OOM and .free == 0 and
	.again == 0" "$tmp/device.json"

# 1. Each path, linked and looked up with dlsym: 16 blocks of 64 MiB fill
#    a 1 GiB slice, the 17th fails with ACL's error, a free makes room.
for path in malloc cached align32 physical; do
	for probe in "$acl" "$acl_dl"; do
		name=$path-$(basename "$probe")
		runs "$name" "$tmp/$name.json" -- shim GPUPOOL_TASK_ID="t-$name" GPUPOOL_MEM_LIMIT=1G \
			"$probe" alloc "$path" 64
		check "$name-stops-at-limit" ".[0] | .blocks == 16 and .mib == 1024 and
			.error == $OOM and .free == 0 and .again == 0" "$tmp/$name.json"
	done
done

# 1b. The last aclrtResetDevice frees everything the process had on the
#     device: the slice is whole again (the front end forgets it too).
for probe in "$acl" "$acl_dl"; do
	name=reset-$(basename "$probe")
	runs "$name" "$tmp/$name.json" -- shim GPUPOOL_TASK_ID="t-$name" GPUPOOL_MEM_LIMIT=1G \
		"$probe" reset 768
	check "$name-gives-the-slice-back" '.[0] | .before_mib == 768 and .after_mib == 1024 and
		.error == 0' "$tmp/$name.json"
done

# 2. The in-task view: the slice, less what the task's processes hold.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=view GPUPOOL_MEM_LIMIT=1G "$acl" hold 256 "$tmp/view.go" >"$tmp/view-hold.json" &
holder=$!
for _ in $(seq 200); do [ -s "$tmp/view-hold.json" ] && break; sleep 0.05; done
runs view-in-task "$tmp/view.json" -- shim GPUPOOL_TASK_ID=view GPUPOOL_MEM_LIMIT=1G "$acl" meminfo
runs view-outside "$tmp/outside.json" -- "$acl" meminfo
touch "$tmp/view.go"
exited view-holder $holder
check view-shows-slice '.[0] | .hbm_total_mib == 1024 and .hbm_free_mib == 768' "$tmp/view.json"
check outside-sees-device '.[0] | .hbm_total_mib == 65536 and .hbm_free_mib <= 65536 - 256' \
	"$tmp/outside.json"

# 3. Four processes of one task race for its 1 GiB in 1 MiB blocks: they
#    fill it and never hold more, together.
pids=
for i in 1 2 3 4; do
	env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=race GPUPOOL_MEM_LIMIT=1G "$acl" hold 2048 "$tmp/race.go" \
		>"$tmp/race-$i.json" &
	pids="$pids $!"
done
for _ in $(seq 600); do
	n=0
	for i in 1 2 3 4; do [ -s "$tmp/race-$i.json" ] && n=$((n + 1)); done
	[ "$n" -eq 4 ] && break
	sleep 0.05
done
"$gp" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/race-region.json"
touch "$tmp/race.go"
for p in $pids; do exited "racer-$p" "$p"; done
check race-fills-limit-never-more "[.[] | .held_mib] | add == 1024" \
	"$tmp/race-1.json" "$tmp/race-2.json" "$tmp/race-3.json" "$tmp/race-4.json"
check race-each-stopped-by-acl-oom "all(.[]; .error == $OOM)" \
	"$tmp/race-1.json" "$tmp/race-2.json" "$tmp/race-3.json" "$tmp/race-4.json"
check race-region-counts-limit '.[0].tasks[] | select(.id == "race") |
	.mem_used_mib == 1024 and .processes == 4' "$tmp/race-region.json"

# 4. SIGKILL: 512 MiB come back within 1 s, in DCMI's view and the region's.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=victim GPUPOOL_MEM_LIMIT=2G "$acl" hold 512 >"$tmp/victim.json" &
victim=$!
for _ in $(seq 200); do [ -s "$tmp/victim.json" ] && break; sleep 0.05; done
runs sample-before-kill "$tmp/before.json" -- "$npu" sample
check victim-held ".[0].devices[0] | .mem_used_mib >= 512 and
	any(.processes[]; .pid == $victim and .mem_mib == 512)" "$tmp/before.json"
kill -9 $victim
wait $victim 2>/dev/null
# no wait: the readers reclaim a dead process's memory at once
runs sample-after-kill "$tmp/after.json" -- "$npu" sample
"$gp" region show "$uuid" --dir "$GPUPOOL_RUN_DIR" --json >"$tmp/after-region.json"
check killed-freed-in-dcmi ".[0].devices[0] | .mem_used_mib == 0 and
	all(.processes[]; .pid != $victim)" "$tmp/after.json"
check killed-freed-in-region '[.[0].tasks[] | select(.id == "victim")] |
	all(.[]; .mem_used_mib == 0)' "$tmp/after-region.json"

# 5. A bad limit refuses the runtime's calls, never runs unlimited.
expect bad-limit 0 '"error":100000' -- shim GPUPOOL_MEM_LIMIT=lots "$acl" alloc malloc 64
finish
