#!/bin/sh
# test-compute.sh — the compute share on a simulated MLU370 through
# libgpushare's Cambricon front ends: two gpuload burners (CNRT) at 30 %
# and 70 % split the device within 2 points (simdev's record of the device
# time each got, over a window well inside both runs) and CNDev's
# per-process figures name both; a hard 30 % is a cap through either layer
# (CNRT's cnrtInvokeKernel, CNDrv's cnInvokeKernel); `gpupool region set`
# changes a running task's share and memory limit without a restart.
# usage: test-compute.sh MLU-TASK MLU-MANAGE MLU-USAGE GPULOAD GPUPOOL SIMCTL
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
task=$1
manage=$2
usage=$3
gl=$4
gp=$5
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=mlu370-48g:1
unset MLU_VISIBLE_DEVICES GPUPOOL_MEM_LIMIT GPUPOOL_TASK_ID GPUPOOL_COMPUTE
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }

runs discover "$tmp/found.json" -- "$manage"
uuid=$(jq -r '.devices[0].uuid' "$tmp/found.json")

# 1. 30/70: the split of the device time over 4 s in the middle of 7 s.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=a GPUPOOL_COMPUTE=70 "$gl" burn --runtime cnrt --duration 7 --kernel-us 5000 --json \
	>"$tmp/a.json" &
a=$!
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=b GPUPOOL_COMPUTE=30 "$gl" burn --runtime cnrt --duration 7 --kernel-us 5000 --json \
	>"$tmp/b.json" &
b=$!
sleep 5.5
"$usage" 0 4000 $a $b >"$tmp/split.json"
"$manage" >"$tmp/cndev.json"
exited burner-70 $a
exited burner-30 $b
check split-30-70-within-2-points ".[0] | .[\"$a\"] as \$a | .[\"$b\"] as \$b |
	\$a + \$b > 0 and (\$a / (\$a + \$b) | . >= 0.68 and . <= 0.72)" "$tmp/split.json"
check shares-are-caps ".[0] | .[\"$a\"] <= 72 and .[\"$b\"] <= 32" "$tmp/split.json"
check cndev-names-both "[.[0].devices[0].samples[] | .pid] | contains([$a, $b])" "$tmp/cndev.json"

# 2. A hard 30 % is a cap alone, through either layer.
for layer in cnrt cndrv; do
	runs "cap-$layer-ran" "$tmp/cap-$layer.json" -- \
		shim GPUPOOL_TASK_ID="cap-$layer" GPUPOOL_COMPUTE=30 "$task" burn $layer 2 1000
	# the 30 % cap is the claim (upper bound); a busy host may leave it idler
	check "cap-$layer" '.[0].busy_fraction >= 0.1 and .[0].busy_fraction <= 0.36' \
		"$tmp/cap-$layer.json"
done

# 3. A live change: 80 % then 20 %, same process (before: at least 55, as a
#    host busy with other tests leaves the device idle between turns).
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=live GPUPOOL_COMPUTE=80 "$gl" burn --runtime cnrt --duration 5 --json \
	>"$tmp/live.json" &
live=$!
sleep 2
"$usage" 0 1500 $live >"$tmp/before.json"
runs region-set "$tmp/set.out" -- "$gp" region set "$uuid" live --compute 20 --dir "$GPUPOOL_RUN_DIR"
sleep 2
"$usage" 0 1500 $live >"$tmp/after.json"
exited live $live
# The caps are the claim; the lower bound only shows the share moved (a
# busy host can starve a burner of CPU, and with it the device).
check live-change ".[0][\"$live\"] >= 45 and .[1][\"$live\"] <= 25" \
	"$tmp/before.json" "$tmp/after.json"

# 4. A live change of the memory limit: the task's next allocation sees it.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=grow GPUPOOL_MEM_LIMIT=256M "$task" alloc cnrt 64 256 30 >"$tmp/grow.json" &
grow=$!
for _ in $(seq 100); do grep -q held_mib "$tmp/grow.json" && break; sleep 0.1; done
runs full-before "$tmp/full.json" -- shim GPUPOOL_TASK_ID=grow GPUPOOL_MEM_LIMIT=256M \
	"$task" alloc cnMalloc 64 256
runs region-set-mem "$tmp/set-mem.out" -- "$gp" region set "$uuid" grow --mem 512M \
	--dir "$GPUPOOL_RUN_DIR"
runs grown "$tmp/grown.json" -- shim GPUPOOL_TASK_ID=grow GPUPOOL_MEM_LIMIT=256M \
	"$task" alloc cnMalloc 64 1024
kill $grow 2>/dev/null
wait $grow 2>/dev/null
check mem-limit-changed-live '.[0].held_mib == 256 and .[1].allocated_mib == 0 and .[1].oom and
	.[2].allocated_mib == 256 and .[2].oom and .[2].view_total_mib == 512' \
	"$tmp/grow.json" "$tmp/full.json" "$tmp/grown.json"
finish
