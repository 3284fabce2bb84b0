#!/bin/sh
# test-compute.sh — the compute share on a simulated Ascend 910B through the
# ACL front end of libgpushare: two gpuload burners (--runtime acl) at 30 %
# and 70 % split the device within 2 points (simdev's record of the device
# time each got, over a window well inside both runs), and a live change
# of a running task's share (`gpupool region set`) applies without a restart.
# usage: test-compute.sh ACL-PROBE ACL-PROBE-DL NPU-PROBE SIM-USAGE GPUPOOL SIMCTL GPULOAD
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
acl=$1
npu=$3
usage=$4
gp=$5
gl=$7
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=ascend-910b-64g:1
# (a function run in the background would be a subshell: $! its pid, not
# the program's; background jobs call env directly)
shim() { env LD_PRELOAD="$SHIM" "$@"; }

runs discover "$tmp/found.json" -- "$npu" discover
uuid=$(jq -r '.devices[0].uuid' "$tmp/found.json")

# 1. 30/70: the split of the device time over 4 s in the middle of 7 s.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=a GPUPOOL_COMPUTE=70 "$gl" burn --runtime acl --duration 7 --kernel-us 5000 --json >"$tmp/a.json" &
a=$!
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=b GPUPOOL_COMPUTE=30 "$gl" burn --runtime acl --duration 7 --kernel-us 5000 --json >"$tmp/b.json" &
b=$!
sleep 5.5
"$usage" 4000 $a $b >"$tmp/split.json"
cat "$tmp/split.json"
exited burner-70 $a
exited burner-30 $b
check split-30-70-within-2-points ".[0] | .[\"$a\"] as \$a | .[\"$b\"] as \$b |
	\$a + \$b > 0 and (\$a / (\$a + \$b) | . >= 0.68 and . <= 0.72)" "$tmp/split.json"
check shares-are-caps ".[0] | .[\"$a\"] <= 72 and .[\"$b\"] <= 32" "$tmp/split.json"

# 2. A live change: 80 % then 20 %, same process.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=live GPUPOOL_COMPUTE=80 "$gl" burn --runtime acl --duration 5 --json >"$tmp/live.json" &
live=$!
sleep 2
"$usage" 1500 $live >"$tmp/before.json"
runs region-set "$tmp/set.out" -- "$gp" region set "$uuid" live --compute 20 --dir "$GPUPOOL_RUN_DIR"
sleep 2
"$usage" 1500 $live >"$tmp/after.json"
cat "$tmp/before.json" "$tmp/after.json"
exited live $live
# The caps are the claim; the lower bound only shows the share moved (a
# busy host can starve a burner of CPU, and with it the device).
check live-change ".[0][\"$live\"] >= 45 and .[1][\"$live\"] <= 25" \
	"$tmp/before.json" "$tmp/after.json"

# 3. A live change of the memory limit: the next allocation sees it.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=grow GPUPOOL_MEM_LIMIT=256M "$acl" hold 256 "$tmp/grow.go" >"$tmp/grow.json" &
grow=$!
for _ in $(seq 200); do [ -s "$tmp/grow.json" ] && break; sleep 0.05; done
runs region-set-mem "$tmp/set-mem.out" -- "$gp" region set "$uuid" grow --mem 512M \
	--dir "$GPUPOOL_RUN_DIR"
runs grown-task "$tmp/grown.json" -- shim GPUPOOL_TASK_ID=grow GPUPOOL_MEM_LIMIT=256M \
	"$acl" alloc malloc 64
touch "$tmp/grow.go"
exited grow-holder $grow
check mem-limit-changed-live '.[0].held_mib == 256 and .[1].blocks == 4 and .[1].error == 207001' \
	"$tmp/grow.json" "$tmp/grown.json"
finish
