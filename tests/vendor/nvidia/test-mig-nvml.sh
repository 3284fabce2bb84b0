#!/bin/sh
# test-mig-nvml.sh — MIG profiles and placement rules as simdev's NVML
# reports and enforces them on a simulated A100-80GB in MIG mode
# (a100-80g-mig), through NVML's own calls (mig-probe nvml-*): each
# profile's id, size and possible placements; a 4g.40gb at slice 0 and a
# 3g.40gb at slice 4 fill the card, a second 4g.40gb and a 1g.10gb at
# slice 7 are refused; seven 1g.10gb fill a card, an eighth is refused; a
# GPU instance with its compute instance cannot be destroyed, one without
# can, and its slices are free again; a card without MIG has no profiles.
# usage: test-mig-nvml.sh MIG-PROBE GPULOAD
. "$(dirname "$0")/../../lib.sh"
probe=$1
export GPUPOOL_SIM_DIR="$tmp" GPUPOOL_SIM_DEVICES=a100-80g-mig:2,a100-80g:1

# profile INDEX NAME ID GPCS SMS MEM_MIB COUNT SIZE STARTS
profile() {
	runs "NVML profile index $1 answers" "$tmp/p$1" -- "$probe" nvml-profile 0 "$1" &&
		check "profile index $1 is $2: id $3, $4 slices, $6 MiB, $7 a card, $8 memory slices from $9" \
			".[0] | .result == \"SUCCESS\" and .name == \"MIG $2\" and .id == $3 and .slices == $4
			 and .sms == $5 and .mem_mib == $6 and .count == $7
			 and ([.placements[].size] | unique) == [$8] and [.placements[].start] == $9" \
			"$tmp/p$1"
}
profile 0 1g.10gb 19 1 14 9728 7 1 '[0,1,2,3,4,5,6]'
profile 9 1g.20gb 15 1 14 19968 4 2 '[0,2,4,6]'
profile 1 2g.20gb 14 2 28 19968 3 2 '[0,2,4]'
profile 2 3g.40gb 9 3 42 40448 2 4 '[0,4]'
profile 3 4g.40gb 5 4 56 40448 1 4 '[0]'
profile 4 7g.80gb 0 7 98 81152 1 8 '[0]'
expect "a profile the card lacks (6_SLICE): NOT_SUPPORTED" 0 '"result":"NOT_SUPPORTED"' -- \
	"$probe" nvml-profile 0 6
expect "an index past the last: INVALID_ARGUMENT" 0 '"result":"INVALID_ARGUMENT"' -- \
	"$probe" nvml-profile 0 18
expect "a card not in MIG mode has no profiles: NOT_SUPPORTED" 0 '"result":"NOT_SUPPORTED"' -- \
	"$probe" nvml-profile 2 2

# Placement on card 0.
expect "4g.40gb at memory slice 0" 0 '^SUCCESS gi=[0-9]+ start=0$' -- "$probe" nvml-create 0 5 0
expect "3g.40gb at memory slice 4" 0 '^SUCCESS gi=[0-9]+ start=4$' -- "$probe" nvml-create 0 9 4
gi3=$(sed -n 's/^SUCCESS gi=\([0-9]*\).*/\1/p' "$tmp/out")
expect "a second 4g.40gb: INSUFFICIENT_RESOURCES" 0 '^INSUFFICIENT_RESOURCES$' -- \
	"$probe" nvml-create 0 5 0
expect "1g.10gb at slice 7 (not one of its starts): INVALID_ARGUMENT" 0 '^INVALID_ARGUMENT$' -- \
	"$probe" nvml-create 0 19 7
expect "3g.40gb at slice 2 (not one of its starts): INVALID_ARGUMENT" 0 '^INVALID_ARGUMENT$' -- \
	"$probe" nvml-create 0 9 2
expect "the card is full: 1g.10gb at slice 6 refused" 0 '^INSUFFICIENT_RESOURCES$' -- \
	"$probe" nvml-create 0 19 6
expect "a GPU instance with its compute instance: destroy IN_USE" 0 '^IN_USE$' -- \
	"$probe" nvml-destroy-gi 0 "${gi3:-0}"
runs "the card's MIG devices listed" "$tmp/parts" -- "$probe" partitions 0 &&
	check "two MIG devices: 4g.40gb at 0, 3g.40gb at 4, with MIG- UUIDs" \
		'.[0] | length == 2 and (map([.profile_id, .start]) | sort) == [[5,0],[9,4]]
		 and all(.uuid | test("^MIG-[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$"))' "$tmp/parts"

# Card 1: seven 1g.10gb fill it (the eighth slice has no 1g start).
for s in 0 1 2 3 4 5 6; do
	expect "1g.10gb number $((s + 1)) at slice $s" 0 "^SUCCESS gi=[0-9]+ start=$s\$" -- \
		"$probe" nvml-create 1 19 "$s"
done
expect "an eighth 1g.10gb: INSUFFICIENT_RESOURCES" 0 '^INSUFFICIENT_RESOURCES$' -- \
	"$probe" nvml-create 1 19 0
runs "seven MIG devices on card 1" "$tmp/parts1" -- "$probe" partitions 1 &&
	check "seven 1g.10gb at slices 0-6, UUIDs all different" \
		'.[0] | length == 7 and (map(.start) | sort) == [0,1,2,3,4,5,6]
		 and (map(.uuid) | unique | length) == 7' "$tmp/parts1"

# A GPU instance without a compute instance is destroyed, its slices free.
expect "2g.20gb without a compute instance on card 0 refused (no room)" 0 \
	'^INSUFFICIENT_RESOURCES$' -- "$probe" nvml-gi 0 14 0
expect "a GPU instance alone on a fresh card" 0 \
	'^SUCCESS gi=[0-9]+ start=4$' -- env GPUPOOL_SIM_DEVICES=a100-80g-mig:1 "$probe" nvml-gi 0 9 4
gi=$(sed -n 's/^SUCCESS gi=\([0-9]*\).*/\1/p' "$tmp/out")
expect "a GPU instance alone is no MIG device" 0 '^\[\]$' -- \
	env GPUPOOL_SIM_DEVICES=a100-80g-mig:1 "$probe" partitions 0
expect "it is destroyed" 0 '^SUCCESS$' -- \
	env GPUPOOL_SIM_DEVICES=a100-80g-mig:1 "$probe" nvml-destroy-gi 0 "${gi:-0}"
expect "destroyed once only: NOT_FOUND" 0 '^NOT_FOUND$' -- \
	env GPUPOOL_SIM_DEVICES=a100-80g-mig:1 "$probe" nvml-destroy-gi 0 "${gi:-0}"
expect "its slices are free: 7g.80gb fits" 0 \
	'^SUCCESS gi=[0-9]+ start=0$' -- env GPUPOOL_SIM_DEVICES=a100-80g-mig:1 "$probe" nvml-create 0 0 0
finish
