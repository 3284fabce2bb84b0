#!/bin/sh
# test-views.sh — DCMI inside a task shows its slice (libgpushare's DCMI
# front end, src/vendor/ascend/shim-dcmi.c), with real processes on a
# simulated 910B (memory in HBM) and 310P (memory in DDR): a DCMI reader
# under libgpushare with a 1 GiB limit sees 1024 MiB total, the task's own
# use and only the task's processes, linked and through dlsym on DCMI's
# handle; the same reader outside sees the device's.
# usage: test-views.sh ACL-PROBE ACL-PROBE-DL NPU-PROBE SIM-USAGE GPUPOOL SIMCTL GPULOAD
#        DCMI-PROBE DCMI-PROBE-DL  (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
acl=$1
dcmi=$8
dcmi_dl=$9
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=ascend-910b-64g:1,ascend-310p-24g:1
shim() { env LD_PRELOAD="$SHIM" "$@"; }

# The task "dv" (1 GiB) holds 256 MiB on the 910B and 64 MiB on the 310P;
# a process outside any task holds 128 MiB on the 910B.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=dv GPUPOOL_MEM_LIMIT=1G "$acl" hold 256 "$tmp/go" >"$tmp/h910.json" &
h910=$!
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=dv GPUPOOL_MEM_LIMIT=1G ASCEND_RT_VISIBLE_DEVICES=1 "$acl" hold 64 "$tmp/go" >"$tmp/h310.json" &
h310=$!
"$acl" hold 128 "$tmp/go" >"$tmp/other.json" &
other=$!
for _ in $(seq 200); do
	[ -s "$tmp/h910.json" ] && [ -s "$tmp/h310.json" ] && [ -s "$tmp/other.json" ] && break
	sleep 0.05
done

for probe in "$dcmi" "$dcmi_dl"; do
	p=$(basename "$probe")
	runs "$p-in-task" "$tmp/$p-in.json" -- shim GPUPOOL_TASK_ID=dv GPUPOOL_MEM_LIMIT=1G \
		"$probe"
	check "$p-hbm-shows-slice" ".[0].cards[0] | .hbm_mib == 1024 and .hbm_used_mib == 256 and
		.mem_mib == 16384" "$tmp/$p-in.json"
	check "$p-ddr-shows-slice" ".[0].cards[1] | has(\"hbm_error\") and .mem_mib == 1024 and
		.mem_free_mib == 960" "$tmp/$p-in.json"
	check "$p-lists-only-the-task" ".[0] | [.cards[0].procs[].pid] == [$h910] and
		[.cards[1].procs[].pid] == [$h310]" "$tmp/$p-in.json"
	runs "$p-outside" "$tmp/$p-out.json" -- "$probe"
	check "$p-outside-sees-device" ".[0].cards[0] | .hbm_mib == 65536 and .hbm_used_mib == 384 and
		([.procs[].pid] | sort) == ([$h910, $other] | sort)" "$tmp/$p-out.json"
	check "$p-outside-sees-ddr" ".[0].cards[1] | .mem_mib == 24576 and .mem_free_mib == 24576 - 64" \
		"$tmp/$p-out.json"
done

# Without a memory limit the figures are the device's; the processes are
# still the task's own (this task has none).
runs unlimited-in-task "$tmp/unlimited.json" -- shim GPUPOOL_TASK_ID=free "$dcmi"
check unlimited-sees-device '.[0].cards[0] | .hbm_mib == 65536 and .hbm_used_mib == 384 and
	.procs == []' "$tmp/unlimited.json"

touch "$tmp/go"
exited holder-910b $h910
exited holder-310p $h310
exited holder-outside $other
check holders-held '.[0].held_mib == 256 and .[1].held_mib == 64 and .[2].held_mib == 128' \
	"$tmp/h910.json" "$tmp/h310.json" "$tmp/other.json"
finish
