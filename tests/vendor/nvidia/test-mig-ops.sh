#!/bin/sh
# test-mig-ops.sh — the agent's partition ops for NVIDIA (src/vendor/
# nvidia/mig.c, through gp_vendor_nvidia) on simulated A100-80GBs:
# discovery shows a MIG-mode card as a device with profiles and a plain
# card with none; the profiles with their units, compute and starts;
# partitions made and listed (static use: what exists is listed), refused
# with the reason (taken slices, a start the profile lacks, a card not in
# MIG mode), destroyed (refused while a process holds memory on it).
# usage: test-mig-ops.sh MIG-PROBE GPULOAD
. "$(dirname "$0")/../../lib.sh"
probe=$1 gpuload=$2
export GPUPOOL_SIM_DIR="$tmp" GPUPOOL_SIM_DEVICES=a100-80g-mig:1,a100-80g:1

runs "discovery" "$tmp/disc" -- "$probe" discover &&
	check "card 0 in MIG mode has 6 profiles over 8 units, card 1 none; both compatible" \
		'.[0] | length == 2 and .[0].profiles == 6 and .[0].units == 8
		 and .[1].profiles == 0 and .[1].units == 0 and all(.compatible)
		 and all(.name == "NVIDIA A100-SXM4-80GB")' "$tmp/disc"
runs "profiles of card 0" "$tmp/prof" -- "$probe" profiles 0 &&
	check "smallest first, each with its units, compute (of 1000) and starts" \
		'.[0] | .units == 8 and (.profiles | map(.name)) ==
		   ["1g.10gb","1g.20gb","2g.20gb","3g.40gb","4g.40gb","7g.80gb"]
		 and (.profiles[] | select(.name == "3g.40gb")) ==
		   {"name":"3g.40gb","id":9,"mem_mib":40448,"compute":428,"units":4,"starts":[0,4]}
		 and (.profiles[] | select(.name == "1g.10gb") | .starts) == [0,1,2,3,4,5,6]
		 and (.profiles[] | select(.name == "7g.80gb") | [.compute, .units]) == [1000, 8]' \
		"$tmp/prof"
expect "no profiles on a card not in MIG mode" 0 '"units":0,"profiles":\[\]' -- \
	"$probe" profiles 1
expect "no partitions yet" 0 '^\[\]$' -- "$probe" partitions 0

runs "4g.40gb made at unit 0" "$tmp/c4" -- "$probe" create 0 5 0
runs "3g.40gb made at unit 4" "$tmp/c3" -- "$probe" create 0 9 4
u4=$(jq -r .uuid "$tmp/c4" 2>/dev/null) u3=$(jq -r .uuid "$tmp/c3" 2>/dev/null)
check "each a MIG device by its UUID, at its profile and start" \
	'.[0].profile_id == 5 and .[0].start == 0 and .[1].profile_id == 9 and .[1].start == 4
	 and .[0].uuid != .[1].uuid and all(.uuid | startswith("MIG-"))' "$tmp/c4" "$tmp/c3"
runs "partitions listed" "$tmp/parts" -- "$probe" partitions 0 &&
	check "the two made, as made" \
		"(.[0] | sort_by(.start)) == [.[1], .[2]]" "$tmp/parts" "$tmp/c4" "$tmp/c3"
expect "a second 4g.40gb: no room, and why" 1 \
	'^errno ENOSPC: MIG 4g.40gb at memory slice 0 does not fit on NVIDIA device 0: its slices are taken' -- \
	"$probe" create 0 5 0
expect "1g.10gb at unit 7: not one of its starts, which are named" 1 \
	'^errno EINVAL: MIG 1g.10gb cannot start at memory slice 7 of NVIDIA device 0; its starts are 0, 1, 2, 3, 4, 5, 6$' -- \
	"$probe" create 0 19 7
expect "an unknown profile id" 1 '^errno EINVAL: NVIDIA device 0 has no MIG profile id 77' -- \
	"$probe" create 0 77 0
expect "a card not in MIG mode: what to do" 1 \
	'^errno ENOTSUP: NVIDIA device 1 is not in MIG mode: enable it \(nvidia-smi -i 1 -mig 1\)' -- \
	"$probe" create 1 19 0

# In use: a process holds memory on the 3g.40gb.
CUDA_VISIBLE_DEVICES=$u3 "$gpuload" alloc --mib 1024 --hold 60 --json >"$tmp/hold" 2>&1 &
holder=$!
for _ in $(seq 100); do [ -s "$tmp/hold" ] && break; sleep 0.1; done
check "a task on the 3g.40gb holds 1 GiB there" '.[0].allocated_mib == 1024' "$tmp/hold"
expect "destroying it is refused while in use" 1 \
	"^errno EBUSY: MIG partition $u3 is in use: processes hold memory or contexts on it; stop them first\$" -- \
	"$probe" destroy 0 "$u3"
kill "$holder"
wait "$holder" 2>/dev/null
expect "destroyed once the task is gone" 0 "\"destroyed\":\"$u3\"" -- "$probe" destroy 0 "$u3"
expect "one partition left" 0 "^\\[\\{\"uuid\":\"$u4\",\"profile_id\":5,\"start\":0\\}\\]\$" -- \
	"$probe" partitions 0
expect "destroyed once only" 1 "^errno ENOENT: NVIDIA device 0 has no MIG partition $u3" -- \
	"$probe" destroy 0 "$u3"
expect "a partition of another card is not this one's" 1 '^errno ENOENT' -- \
	"$probe" destroy 1 "$u4"
runs "3g.40gb made again at unit 4" "$tmp/again" -- "$probe" create 0 9 4 &&
	check "with a new UUID" ".[0].uuid != \"$u3\" and .[0].start == 4" "$tmp/again"
expect "the 4g.40gb destroyed" 0 '"destroyed"' -- "$probe" destroy 0 "$u4"
finish
