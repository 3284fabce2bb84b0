#!/bin/sh
# test-mig-run.sh — a MIG device's fixed size on a simulated A100-80GB,
# with real gpuload processes and no libgpushare: its memory is the
# profile's (CUDA reports it; allocation past it fails with
# CUDA_ERROR_OUT_OF_MEMORY, the hardware's own limit, also for four
# processes racing for it); a burn on a
# 3g.40gb gets 3/7 of a whole card's throughput and one on a 4g.40gb 4/7
# (within 3 points), both running at once beside a burn on a plain card
# (instances do not slow each other); a SIGKILLed process's memory on an
# instance is free again within 1 s, as NVML sees it.
# usage: test-mig-run.sh MIG-PROBE GPULOAD
. "$(dirname "$0")/../../lib.sh"
probe=$1 gpuload=$2
export GPUPOOL_SIM_DIR="$tmp" GPUPOOL_SIM_DEVICES=a100-80g-mig:1,a100-80g:1

runs "4g.40gb made" "$tmp/c4" -- "$probe" create 0 5 0
runs "3g.40gb made" "$tmp/c3" -- "$probe" create 0 9 4
u4=$(jq -r .uuid "$tmp/c4" 2>/dev/null) u3=$(jq -r .uuid "$tmp/c3" 2>/dev/null)

# Memory: the instance's, to the MiB.
runs "allocating on the 3g.40gb until out of memory" "$tmp/alloc" -- \
	env CUDA_VISIBLE_DEVICES=$u3 "$gpuload" alloc --chunk-mib 1024 --json &&
	check "39 GiB fit in its 40448 MiB, the 40th is CUDA_ERROR_OUT_OF_MEMORY" \
		'.[0] | .oom == true and .error == "CUDA_ERROR_OUT_OF_MEMORY" and .allocated_mib == 39936
		 and .total_mib == 40448' "$tmp/alloc"
runs "allocating 40448 MiB in 64 MiB pieces" "$tmp/alloc64" -- \
	env CUDA_VISIBLE_DEVICES=$u3 "$gpuload" alloc --chunk-mib 64 --json &&
	check "all of it and not one piece more" '.[0] | .oom == true and .allocated_mib == 40448' \
		"$tmp/alloc64"
# Four processes race for the 3g.40gb's memory, each holding what it got.
racers=
for i in 1 2 3 4; do
	CUDA_VISIBLE_DEVICES=$u3 "$gpuload" alloc --chunk-mib 1024 --hold 60 --json \
		>"$tmp/race$i" 2>&1 &
	racers="$racers $!"
done
for _ in $(seq 200); do
	[ -s "$tmp/race1" ] && [ -s "$tmp/race2" ] && [ -s "$tmp/race3" ] && [ -s "$tmp/race4" ] &&
		break
	sleep 0.1
done
check "four racers got 39 GiB between them, no more, each stopped by out of memory" \
	'(map(.allocated_mib) | add) == 39936 and all(.oom and .error == "CUDA_ERROR_OUT_OF_MEMORY")' \
	"$tmp/race1" "$tmp/race2" "$tmp/race3" "$tmp/race4"
kill $racers 2>/dev/null
for pid in $racers; do wait "$pid" 2>/dev/null; done

runs "NVML's view of the 3g.40gb" "$tmp/mem3" -- "$probe" mem "$u3" &&
	check "its name and its memory, none used" \
		'.[0] == {"name":"NVIDIA A100-SXM4-80GB MIG 3g.40gb","total_mib":40448,"used_mib":0}' \
		"$tmp/mem3"
runs "both instances in one task" "$tmp/alloc4" -- \
	env CUDA_VISIBLE_DEVICES=$u3,$u4 "$gpuload" alloc --device 1 --chunk-mib 1024 --mib 4096 --json &&
	check "device 1 is the 4g.40gb: its own 40448 MiB" \
		'.[0] | .allocated_mib == 4096 and .total_mib == 40448' "$tmp/alloc4"
expect "the MIG-mode card itself is no CUDA device" 1 \
	'CUDA_ERROR_NO_DEVICE' -- env CUDA_VISIBLE_DEVICES=0 "$gpuload" alloc --mib 1 --json

# Throughput: three burns at once, on the plain card, the 3g and the 4g.
"$gpuload" burn --kernel-us 20000 --duration 5 --json >"$tmp/full" 2>&1 &
full=$!
CUDA_VISIBLE_DEVICES=$u3 "$gpuload" burn --kernel-us 20000 --duration 5 --json >"$tmp/b3" 2>&1 &
b3=$!
CUDA_VISIBLE_DEVICES=$u4 "$gpuload" burn --kernel-us 20000 --duration 5 --json >"$tmp/b4" 2>&1 &
b4=$!
exited "the burn on the plain card" "$full"
exited "the burn on the 3g.40gb" "$b3"
exited "the burn on the 4g.40gb" "$b4"
echo "throughput of the 3g and the 4g, of the plain card's: $(jq -s -c "map(.kernels / .seconds) | [.[1] / .[0], .[2] / .[0]]" "$tmp/full" "$tmp/b3" "$tmp/b4")"
check "the 3g.40gb gets 3/7 (0.429) of the card's throughput, within 3 points" \
	'(.[1].kernels / .[1].seconds) / (.[0].kernels / .[0].seconds) | . > 0.399 and . < 0.459' \
	"$tmp/full" "$tmp/b3"
check "the 4g.40gb gets 4/7 (0.571), at the same time, within 3 points" \
	'(.[1].kernels / .[1].seconds) / (.[0].kernels / .[0].seconds) | . > 0.541 and . < 0.601' \
	"$tmp/full" "$tmp/b4"

# SIGKILL: the memory is back at the next look.
CUDA_VISIBLE_DEVICES=$u4 "$gpuload" alloc --mib 8192 --hold 60 --json >"$tmp/hold" 2>&1 &
holder=$!
for _ in $(seq 100); do [ -s "$tmp/hold" ] && break; sleep 0.1; done
runs "NVML sees the holder's memory" "$tmp/held" -- "$probe" mem "$u4" &&
	check "8 GiB used on the 4g.40gb" '.[0].used_mib == 8192' "$tmp/held"
runs "and the holder among the instance's processes" "$tmp/procs" -- "$probe" procs "$u4" &&
	check "with its memory and its GPU instance id" \
		"(.[0] | length == 1) and .[0][0].pid == $holder and .[0][0].mem_mib == 8192
		 and .[0][0].gi >= 1 and .[0][0].gi < 64" "$tmp/procs"
start=$(date +%s%N)
kill -9 "$holder"
freed=
while [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 1000 ]; do
	"$probe" mem "$u4" >"$tmp/after" 2>&1
	if jq -e '.used_mib == 0' "$tmp/after" >/dev/null 2>&1; then freed=yes; break; fi
	sleep 0.05
done
if [ -n "$freed" ]; then ok "the killed process's memory is free within 1 s"
else bad "the killed process's memory is free within 1 s" "$tmp/after"; fi
wait "$holder" 2>/dev/null
runs "the whole instance can be had again" "$tmp/again" -- \
	env CUDA_VISIBLE_DEVICES=$u4 "$gpuload" alloc --chunk-mib 1024 --json &&
	check "39 GiB of it" '.[0].allocated_mib == 39936' "$tmp/again"
finish
