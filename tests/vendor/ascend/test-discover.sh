#!/bin/sh
# test-discover.sh — the Ascend backend's discovery through DCMI on
# simulated NPUs: what it finds, the compatibility verdict with its reason
# (a driver the table refuses for the 910B and accepts for the 310P),
# health (a lost chip), ASCEND_RT_VISIBLE_DEVICES in the ACL runtime, and
# the one id the agent (DCMI) and libgpushare (ACL) both name a device by.
# usage: test-discover.sh ACL-PROBE ACL-PROBE-DL NPU-PROBE SIM-USAGE GPUPOOL SIMCTL GPULOAD
# (meson sets LD_LIBRARY_PATH and $SHIM)
set -u
acl=$1
npu=$3
simctl=$6
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=t4-16g:1,ascend-910b-64g:2,ascend-310p-24g:1

# 1. Three NPUs (the T4 is NVML's, not DCMI's), in order, with their ids.
runs discover "$tmp/found.json" -- "$npu" discover
check three-npus '.[0].devices | length == 3 and
	([.[].local] == [0, 1, 2]) and
	([.[].name] == ["Ascend910B2", "Ascend910B2", "Ascend310P3"]) and
	([.[].mem_total_mib] == [65536, 65536, 24576]) and
	all(.[]; .uuid | test("^NPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")) and
	([.[].uuid] | unique | length == 3) and
	all(.[]; .compatible and .reason == "" and .driver == "24.1.rc3")' "$tmp/found.json"

# 2. An old driver: the table refuses the 910B (what it needs, what is
#    installed, what to do) and still accepts the 310P.
runs discover-old-driver "$tmp/old.json" -- env GPUPOOL_SIM_ASCEND_DRIVER=22.0.4 "$npu" discover
check old-driver-refuses-910b '.[0].devices | (.[0].compatible | not) and
	(.[0].reason | test("910B") and test("23\\.0 or newer") and test("22\\.0\\.4") and
	 test("upgrade")) and .[2].compatible and .[2].reason == ""' "$tmp/old.json"
runs discover-bad-driver "$tmp/bad.json" -- env GPUPOOL_SIM_ASCEND_DRIVER=unknown "$npu" discover
check unreadable-driver-refused '.[0].devices[0] | (.compatible | not) and
	(.reason | test("\"unknown\""))' "$tmp/bad.json"

# 3. A chip fallen off the bus is reported, with why; then it is back.
"$simctl" lose 2 >/dev/null     # simdev's index 2: the second 910B
runs discover-lost "$tmp/lost.json" -- "$npu" discover
"$simctl" restore 2 >/dev/null
check lost-chip-unhealthy '.[0].devices | .[0].compatible and (.[1].compatible | not) and
	(.[1].reason | test("health 3") and test("npu-smi"))' "$tmp/lost.json"
runs sample-lost-restored "$tmp/restored.json" -- "$npu" sample
check restored-chip-samples '.[0].devices | all(.[]; .ok)' "$tmp/restored.json"

# 4. No DCMI at all: a clear error, exit 1.
expect no-dcmi 1 'cannot load libdcmi.so.*no Ascend driver' -- env LD_LIBRARY_PATH=/nonexistent "$npu" discover

# 5. ASCEND_RT_VISIBLE_DEVICES (DCMI's logical ids) in the runtime: "2"
#    is the 310P, its memory DDR, not HBM; a task under libgpushare names
#    its region by the chip's NPU id, the agent's.
runs visible-310p "$tmp/vis.json" -- env ASCEND_RT_VISIBLE_DEVICES=2 "$acl" meminfo
check visible-is-the-310p '.[0] | .ddr_total_mib == 24576 and .hbm_total_mib == 0' "$tmp/vis.json"
expect visible-none 1 '"error":207004' -- env ASCEND_RT_VISIBLE_DEVICES=7 "$acl" meminfo
runs region-named-by-npu-id "$tmp/hold.json" -- env LD_PRELOAD="$SHIM" ASCEND_RT_VISIBLE_DEVICES=1 \
	GPUPOOL_TASK_ID=named GPUPOOL_MEM_LIMIT=1G "$acl" alloc malloc 64
uuid=$(jq -r '.devices[1].uuid' "$tmp/found.json")
if [ -e "$GPUPOOL_RUN_DIR/device-$uuid.region" ]; then
	ok same-id-from-dcmi-and-acl
else
	ls "$GPUPOOL_RUN_DIR" >"$tmp/ls"
	bad "same-id-from-dcmi-and-acl: no device-$uuid.region in:" "$tmp/ls"
fi
finish
