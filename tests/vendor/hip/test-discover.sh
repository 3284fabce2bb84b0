#!/bin/sh
# test-discover.sh — the agent's AMD/Hygon backend (rocm-smi) and the HIP
# runtime on two simulated $HIP_MODEL devices: discovery, the
# compatibility verdict with its reason (the driver made too old with
# GPUPOOL_SIM_HIP_DRIVER), one UUID text on both sides, and visibility
# (ROCR_VISIBLE_DEVICES by UUID, HIP_VISIBLE_DEVICES by index).
# usage: test-discover.sh HIP-PROBE SMI-PROBE SIM-UTIL GPUPOOL GPULOAD
# (meson sets LD_LIBRARY_PATH, HIP_MODEL, HIP_VENDOR, GPUPOOL_SIM_DIR).
set -u
hip=$1
smi=$2
. "$(dirname "$0")/../../lib.sh"
export GPUPOOL_SIM_DEVICES="$HIP_MODEL:2"
case $HIP_VENDOR in amd) other=hygon prefix=GPU ;; *) other=amd prefix=DCU ;; esac

# 1. Discovery: both devices, this vendor's, compatible with the default
#    driver; the other vendor's backend finds none of them.
runs discover "$tmp/d.json" -- "$smi" discover "$HIP_VENDOR"
check two-devices-compatible ".[0].devices | length == 2 and all(.compatible) and
	all(.vendor == \"$HIP_VENDOR\") and all(.uuid | test(\"^$prefix-[0-9a-f]{16}\$\")) and
	(map(.local) == [0, 1]) and all(.mem_total_mib > 60000)" "$tmp/d.json"
runs other-vendor "$tmp/o.json" -- "$smi" discover "$other"
check other-vendor-sees-none '.[0].devices == []' "$tmp/o.json"

# 2. A driver the table refuses, with the reason: needed, installed, what to do.
runs discover-old-driver "$tmp/old.json" -- env GPUPOOL_SIM_HIP_DRIVER=5.16.9 "$smi" discover "$HIP_VENDOR"
check old-driver-refused '.[0].devices | length == 2 and all(.compatible | not) and
	all(.reason | test("needs driver 6\\.3 or newer.*driver 5\\.16\\.9 is installed: upgrade the driver"))' "$tmp/old.json"
runs discover-new-driver "$tmp/new.json" -- env GPUPOOL_SIM_HIP_DRIVER=6.10.5 "$smi" discover "$HIP_VENDOR"
check new-driver-accepted '.[0].devices | all(.compatible and .driver == "6.10.5")' "$tmp/new.json"

# 3. The runtime names the devices as rocm-smi does (the region's name).
runs runtime-devices "$tmp/h.json" -- "$hip" devices
check same-uuid-both-sides '(.[0].devices | map(.uuid)) ==
	(.[1].devices | map(.uuid | ltrimstr("GPU-") | ltrimstr("DCU-")))' "$tmp/h.json" "$tmp/d.json"

# 4. Visibility: ROCR_VISIBLE_DEVICES by UUID or index, HIP_VISIBLE_DEVICES
#    (and CUDA_VISIBLE_DEVICES when it is unset) by index among those left.
second=$(jq -r '.devices[1].uuid' "$tmp/d.json")
runs rocr-by-uuid "$tmp/r.json" -- env ROCR_VISIBLE_DEVICES="$second" "$hip" devices
check rocr-shows-one ".[0].count == 1 and .[0].devices[0].uuid == \"${second#???-}\"" "$tmp/r.json"
runs hip-by-index "$tmp/i.json" -- env HIP_VISIBLE_DEVICES=1 "$hip" devices
check hip-index-shows-one ".[0].count == 1 and .[0].devices[0].uuid == \"${second#???-}\"" "$tmp/i.json"
runs composed "$tmp/c.json" -- env ROCR_VISIBLE_DEVICES=1 HIP_VISIBLE_DEVICES=0 "$hip" devices
check rocr-then-hip ".[0].count == 1 and .[0].devices[0].uuid == \"${second#???-}\"" "$tmp/c.json"
runs cuda-fallback "$tmp/f.json" -- env CUDA_VISIBLE_DEVICES=1 "$hip" devices
check cuda-fallback-shows-one ".[0].count == 1 and .[0].devices[0].uuid == \"${second#???-}\"" "$tmp/f.json"
expect rocr-empty-hides-all 1 'hipErrorNoDevice' -- env ROCR_VISIBLE_DEVICES= "$hip" devices

# 5. rocm-smi's answer when nothing is there.
expect no-devices 1 'rocm-smi would not start' -- env GPUPOOL_SIM_DEVICES= "$smi" discover "$HIP_VENDOR"

finish
