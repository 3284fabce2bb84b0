#!/bin/sh
# test-compute.sh — libgpushare's HIP front end on a simulated
# $HIP_MODEL: every launch path gated and working, hard shares 30/70
# between two gpuload burners (the device time each got, from simdev's
# record: within 2 points), and a live change of a running task's share.
# usage: test-compute.sh HIP-PROBE SMI-PROBE SIM-UTIL GPUPOOL GPULOAD
# (meson sets LD_LIBRARY_PATH, SHIM, HIP_MODEL, HIP_VENDOR,
# GPUPOOL_SIM_DIR, GPUPOOL_RUN_DIR).
set -u
hip=$1
smi=$2
util=$3
gpupool=$4
gl=$5
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DEVICES="$HIP_MODEL:1"
rm -rf "$GPUPOOL_RUN_DIR"
mkdir -p "$GPUPOOL_RUN_DIR"
shim() { env LD_PRELOAD="$SHIM" "$@"; }
"$smi" discover "$HIP_VENDOR" >"$tmp/d.json"
uuid=$(jq -r '.devices[0].uuid' "$tmp/d.json")

# 1. Every launch path, gated (a 50 % share), runs its 10 ms kernel.
runs launch-paths "$tmp/launch.json" -- shim GPUPOOL_COMPUTE=50 "$hip" launch 10000000
check seven-launch-paths 'length == 7 and all(.error == 0 and .ms >= 9.5)' "$tmp/launch.json"

# 2. Hard shares 30/70: of the device time the two burners got over the
#    same 2.5 s, while both run, each has its share within 2 points, and
#    neither is over its cap. (A hand-over leaves the device idle a
#    moment, longer on a host busy with other tests: what both get
#    together is checked apart, device-kept-busy.)
env LD_PRELOAD="$SHIM" GPUPOOL_COMPUTE=70 "$gl" burn --runtime hip --duration 5 --kernel-us 5000 --json >"$tmp/a.json" &
a=$!
env LD_PRELOAD="$SHIM" GPUPOOL_COMPUTE=30 "$gl" burn --runtime hip --duration 5 --kernel-us 5000 --json >"$tmp/b.json" &
b=$!
sleep 3.8
"$util" 2500 $a $b >"$tmp/split.json"
exited burner-70 $a
exited burner-30 $b
check hard-70-30 ".[0] | .[\"$a\"] as \$a | .[\"$b\"] as \$b | \$a + \$b > 0 and
	(\$a / (\$a + \$b) | . >= 0.68 and . <= 0.72) and \$a <= 72 and \$b <= 32" "$tmp/split.json"
check device-kept-busy '.[0].util >= 85' "$tmp/split.json"

# 3. A live change of the share applies at the next turn, no restart.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=live GPUPOOL_COMPUTE=80 "$gl" burn --runtime hip --duration 4 --json \
	>"$tmp/live.json" &
live=$!
sleep 1.5
"$util" 1000 $live >"$tmp/before.json"
runs live-set "$tmp/set.out" -- "$gpupool" region set "$uuid" live --compute 20 --dir "$GPUPOOL_RUN_DIR"
sleep 1.5
"$util" 1000 $live >"$tmp/after.json"
exited live $live
# The caps are the claim; the lower bound only shows the share moved (a
# busy host can starve a burner of CPU, and with it the device).
check live-change ".[0][\"$live\"] >= 45 and .[1][\"$live\"] <= 24" "$tmp/before.json" "$tmp/after.json"

finish
