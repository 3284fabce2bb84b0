#!/bin/sh
# test-visible.sh — CUDA_VISIBLE_DEVICES in simdev's driver, read as NVIDIA's
# driver reads it, while NVML (which ignores it) shows the physical devices.
# Each value is tried in its own process, since the driver reads it at cuInit.
# usage: test-visible.sh PATH/TO/cuda-devices PATH/TO/nvml-probe PATH/TO/gpuload
# Needs LD_LIBRARY_PATH=build/simdev, GPUPOOL_SIM_DEVICES with four devices of
# different models and a private GPUPOOL_SIM_DIR (meson sets them).
set -u
devices=$1
probe=$2
gl=$3
. "$(dirname "$0")/../lib.sh"
unset CUDA_VISIBLE_DEVICES

# see [VALUE]: cuda-devices with CUDA_VISIBLE_DEVICES=VALUE (unset without
# VALUE) into $tmp/see.json; it exits 0 (also when cuInit finds nothing).
see() {
	if [ $# -ge 1 ]; then
		runs "cuda-devices with CUDA_VISIBLE_DEVICES=\"$1\"" "$tmp/see.json" -- \
			env CUDA_VISIBLE_DEVICES="$1" "$devices"
	else
		runs "cuda-devices, CUDA_VISIBLE_DEVICES unset" "$tmp/see.json" -- "$devices"
	fi
}

# shows NAME PHYSICAL...: the last `see` saw exactly these physical devices, in
# this order, each one whole (UUID, name, memory and PCI bus as NVML has
# them) and consistent with its ordinal (cuDeviceGet, cuCtxGetDevice,
# cuMemGetInfo, memory made for the ordinal counted on that device).
shows() {
	name=$1
	shift
	check "$name" "
		def id: {uuid, name, mem_total_mib, bus_id};
		def whole: .device == .ordinal and .ctx_device == .ordinal and
			.info_total_mib == .mem_total_mib and .vmm_here and .pool_here and
			.set_pool == \"CUDA_SUCCESS\";
		.[0].devices as \$phys | .[1] |
		.init == \"CUDA_SUCCESS\" and .count == (.devices | length) and
		.beyond == \"CUDA_ERROR_INVALID_DEVICE\" and all(.devices[]; whole) and
		(.devices | map(id)) == ([$(echo "$@" | tr ' ' ',')] | map(\$phys[.] | id))" \
		"$tmp/nvml.json" "$tmp/see.json"
}

# none NAME: the last `see` found no device: cuInit said so.
none() {
	check "$1" '.[0] == {"init": "CUDA_ERROR_NO_DEVICE"}' "$tmp/see.json"
}

wait_line() {
	for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

runs nvml-probe "$tmp/nvml.json" -- "$probe"
check nvml-four-devices '.[0].devices | length == 4 and (map(.uuid) | unique | length == 4)' \
	"$tmp/nvml.json"
uuid2=$(jq -r '.devices[2].uuid' "$tmp/nvml.json")
prefix0=$(jq -r '.devices[0].uuid[0:12]' "$tmp/nvml.json")

# 1. Unset: every device, in physical order.
see
shows unset-all 0 1 2 3

# 2. Indices: the listed devices, renumbered from 0, in the order given.
see 2
shows index-2-is-physical-2 2
see 3,1
shows order-3-1 3 1

# 3. UUIDs, whole or a prefix that fits one device.
see "$uuid2,$prefix0"
shows uuid-and-prefix 2 0
see "1,GPU-"
shows ambiguous-prefix-ends-list 1

# 4. The list ends at the first invalid or repeated entry.
see 1,x,2
shows invalid-entry-ends-list 1
see 0,4,1
shows out-of-range-ends-list 0
see 2,2,1
shows repeat-ends-list 2
see 3,
shows trailing-comma 3

# 5. Nothing visible: cuInit says there is no device.
see ""
none empty-no-device
see x,1
none invalid-first-no-device
see GPU-
none ambiguous-only-no-device

# 6. A task shown device 1 runs its kernels on physical device 1: all of
#    that device's time is the burner's, and no other device has any.
#    (How much of the device one burner keeps busy depends on how busy
#    the host is: tests/simdev/test-simdev.sh.)
CUDA_VISIBLE_DEVICES=1 "$gl" burn --kernel-us 1000 --duration 3 --json >"$tmp/burn.json" &
burner=$!
sleep 2
"$probe" >"$tmp/nvml-burn.json"
exited burner $burner
check burn-ran '.[0].device == 0 and .[0].kernels > 0' "$tmp/burn.json"
check burn-on-physical-1 "
	.[0].devices | (.[1].util_gpu > 0) and
	(.[1].util_gpu - ([.[1].samples[] | select(.pid == $burner) | .sm_util] | add) | fabs <= 1) and
	all(.[0], .[2], .[3]; .util_gpu == 0 and all(.samples[]; .pid != $burner))" \
	"$tmp/nvml-burn.json"

# 7. ... and its memory on physical device 2 when shown device 2.
CUDA_VISIBLE_DEVICES=2 "$gl" alloc --mib 1024 --hold 2 --json >"$tmp/hold.json" &
holder=$!
wait_line "$tmp/hold.json"
"$probe" >"$tmp/nvml-hold.json"
exited holder $holder
check memory-on-physical-2 "
	.[0].devices | any(.[2].processes[]; .pid == $holder and .mem_mib == 1024) and
	all(.[0], .[1], .[3]; .mem_used_mib == 0)" \
	"$tmp/nvml-hold.json"

finish
