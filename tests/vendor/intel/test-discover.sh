#!/bin/sh
# test-discover.sh — Intel GPUs found through Level Zero Sysman (the agent's
# backend, src/vendor/intel/manage.c, in xpu-probe) on simulated Max 1550s
# beside an NVIDIA device it must not see: the devices and their UUIDs, the
# compatibility verdict (accepted; refused for a driver too old for the
# family, and for a Level Zero older than 1.3, with the reason), a node
# without Intel devices, a lost device, ZE_AFFINITY_MASK as the runtime
# applies it, and sampling (utilization, memory, processes).
# usage: test-discover.sh ZE-PROBE ZE-PROBE-DL XPU-PROBE XPU-USAGE GPUPOOL GPULOAD SIMCTL
# (meson sets LD_LIBRARY_PATH)
set -u
ze=$1
xpu=$3
gl=$6
simctl=$7
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
export GPUPOOL_SIM_DEVICES=a100-80g:1,max1550-128g:2
unset ZE_AFFINITY_MASK GPUPOOL_SIM_INTEL_DRIVER

# 1. Discovery and the verdict: accepted.
runs discover "$tmp/found.json" -- "$xpu" discover
check two-intel-devices '.[0].devices | length == 2 and all(.vendor == "intel") and
	([.[].local] == [0, 1])' "$tmp/found.json"
check names-memory-driver '.[0].devices | all(.name == "Intel(R) Data Center GPU Max 1550" and
	.mem_mib == 131072 and .driver == "1.3.29735")' "$tmp/found.json"
check uuids-xpu '.[0].devices | all(.uuid | test("^XPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")) and
	(.[0].uuid != .[1].uuid)' "$tmp/found.json"
check accepted '.[0].devices | all(.compatible and .reason == "")' "$tmp/found.json"
u0=$(jq -r '.devices[0].uuid' "$tmp/found.json")
u1=$(jq -r '.devices[1].uuid' "$tmp/found.json")

# 2. Refused: a driver older than the family's floor, and a Level Zero
#    older than 1.3; the reason says what is needed, what is installed,
#    what to do.
GPUPOOL_SIM_INTEL_DRIVER=1.3.20000 runs discover-old-build "$tmp/old.json" -- "$xpu" discover
check refused-old-build '.[0].devices | all(.compatible == false and .driver == "1.3.20000" and
	(.reason | test("Max \\(Xe HPC\\) needs driver 1\\.3\\.24595\\+.*1\\.3\\.20000 is installed: upgrade intel-level-zero-gpu")))' \
	"$tmp/old.json"
GPUPOOL_SIM_INTEL_DRIVER=1.2.9999 runs discover-old-api "$tmp/api.json" -- "$xpu" discover
check refused-old-api '.[0].devices | all(.compatible == false and
	(.reason | test("needs Level Zero driver 1\\.3\\+.*1\\.2\\.9999 is installed")))' "$tmp/api.json"
GPUPOOL_SIM_INTEL_DRIVER=1.3.24595 runs discover-at-floor "$tmp/floor.json" -- "$xpu" discover
check accepted-at-floor '.[0].devices | all(.compatible)' "$tmp/floor.json"

# 3. No Intel device: none found, and why.
GPUPOOL_SIM_DEVICES=a100-80g:1 expect none-here 1 'zesInit answers .*no Level Zero GPU driver has a device' -- \
	"$xpu" discover

# 4. The runtime's view of ZE_AFFINITY_MASK (the variable a task gets).
runs ze-all "$tmp/all.json" -- "$ze" devices
check ze-all-devices ".[0].count == 2 and [.[0].devices[].uuid] == [\"$u0\", \"$u1\"]" "$tmp/all.json"
ZE_AFFINITY_MASK=1 runs mask-1 "$tmp/m1.json" -- "$ze" devices
check mask-1-is-second ".[0].count == 1 and .[0].devices[0].uuid == \"$u1\"" "$tmp/m1.json"
ZE_AFFINITY_MASK=1,0 runs mask-1-0 "$tmp/m10.json" -- "$ze" devices
check mask-keeps-device-order "[.[0].devices[].uuid] == [\"$u0\", \"$u1\"]" "$tmp/m10.json"
ZE_AFFINITY_MASK=0.1 expect mask-subdevice-refused 1 'zeInit: ZE_RESULT_ERROR_UNSUPPORTED_FEATURE' -- \
	"$ze" devices
ZE_AFFINITY_MASK=0.1 GPUPOOL_LOG=1 expect mask-subdevice-says-why 1 \
	'ZE_AFFINITY_MASK="0\.1" names sub-device 0\.1: simdev has no sub-devices' -- "$ze" devices

# 5. Sampling: a burner on device 0 and a holder of 1 GiB on device 1.
"$gl" burn --runtime ze --duration 4 --json >"$tmp/burn.json" &
burner=$!
ZE_AFFINITY_MASK=1 "$ze" hold device 1024 >"$tmp/hold.out" 2>&1 &
holder=$!
for _ in $(seq 50); do grep -q ready "$tmp/hold.out" && break; sleep 0.1; done
sleep 1
runs sample "$tmp/sample.json" -- "$xpu" sample 1
check device-0-busy '.[0].devices[0].util >= 50 and .[0].devices[0].util <= 100' "$tmp/sample.json"
check device-1-idle '.[0].devices[1].util == 0' "$tmp/sample.json"
check memory-sampled '.[0].devices[1].used_mib == 1024 and .[0].devices[1].total_mib == 131072' \
	"$tmp/sample.json"
check processes-listed "(.[0].devices[1].processes | any(.pid == $holder and .mib == 1024)) and
	(.[0].devices[0].processes | any(.pid == $burner))" "$tmp/sample.json"
kill "$holder"
exited burner "$burner"

# 6. A lost device (simdev index 2, Intel's second) is reported, not used.
"$simctl" lose 2 >/dev/null
runs discover-lost "$tmp/lost.json" -- "$xpu" discover
check lost-device-refused '.[0].devices[0].compatible and (.[0].devices[1].compatible | not) and
	(.[0].devices[1].reason | test("lost"))' "$tmp/lost.json"
"$simctl" restore 2 >/dev/null
finish
