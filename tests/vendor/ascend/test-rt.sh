#!/bin/sh
# test-rt.sh — the compute share of launches made straight into CANN's
# runtime layer (rtKernelLaunch, rtKernelLaunchWithFlag in libruntime.so,
# beneath ACL), on a simulated Ascend 910B under libgpushare: two rt-probe
# burners at 30 % and 70 % split the device within 2 points; and an ACL
# program (gpuload --runtime acl, whose aclrtLaunchKernel reaches
# rtKernelLaunch inside the stack) beside a runtime-layer one keeps its
# 30 % within 2 points: each launch is gated once, whichever layer; and
# rtMalloc straight into the runtime stops at the task's memory limit.
# usage: test-rt.sh ACL-PROBE ACL-PROBE-DL NPU-PROBE SIM-USAGE GPUPOOL SIMCTL GPULOAD
#        DCMI-PROBE DCMI-PROBE-DL RT-PROBE  (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
usage=$4
gl=$7
rtp=${10}
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=ascend-910b-64g:1

# split NAME PID70 PID30: the device time of each over 4 s in the middle
# of their 7 s, 70/30 within 2 points.
split() {
	sleep 5.5
	"$usage" 4000 "$2" "$3" >"$tmp/$1.json"
	cat "$tmp/$1.json"
	exited "$1-70" "$2"
	exited "$1-30" "$3"
	check "$1-30-70-within-2-points" ".[0] | .[\"$2\"] as \$a | .[\"$3\"] as \$b |
		\$a + \$b > 0 and (\$a / (\$a + \$b) | . >= 0.68 and . <= 0.72)" "$tmp/$1.json"
	check "$1-shares-are-caps" ".[0] | .[\"$2\"] <= 72 and .[\"$3\"] <= 32" "$tmp/$1.json"
}

# 1. Both straight into the runtime: rtKernelLaunchWithFlag at 70 %,
#    rtKernelLaunch at 30 %.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=a GPUPOOL_COMPUTE=70 "$rtp" burn 7 5000 flag >"$tmp/a.json" &
a=$!
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=b GPUPOOL_COMPUTE=30 "$rtp" burn 7 5000 >"$tmp/b.json" &
b=$!
split rt $a $b
check rt-burners-launched '.[0].kernels > 0 and .[1].kernels > 0 and .[0].error == 0 and
	.[1].error == 0' "$tmp/a.json" "$tmp/b.json"

# 2. ACL at 30 % beside the runtime layer at 70 %: ACL's launches reach
#    rtKernelLaunch and are still gated once.
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=c GPUPOOL_COMPUTE=70 "$rtp" burn 7 5000 >"$tmp/c.json" &
c=$!
env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=d GPUPOOL_COMPUTE=30 "$gl" burn --runtime acl --duration 7 --kernel-us 5000 --json >"$tmp/d.json" &
d=$!
split acl-beside-rt $c $d

# 3. Memory straight from the runtime layer (rtMalloc) is a slice too: 16
#    blocks of 64 MiB fill 1 GiB, the 17th fails with the runtime's
#    out-of-memory error, an rtFree makes room. (ACL's own allocations
#    reach rtMalloc inside the stack and are counted once: test-memory.sh's
#    aclrtMalloc paths would stop at 8 blocks otherwise.)
runs rt-malloc "$tmp/rtmem.json" -- env LD_PRELOAD="$SHIM" GPUPOOL_TASK_ID=m \
	GPUPOOL_MEM_LIMIT=1G "$rtp" alloc 2048
check rt-malloc-stops-at-the-limit '.[0] | .blocks == 16 and .error == 207001 and .again == 0' \
	"$tmp/rtmem.json"
finish
