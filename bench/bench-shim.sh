#!/bin/sh
# bench-shim.sh — libgpushare's isolation, measured on one simulated device
# with gpuload and NVML (nvml-probe), each figure beside its baseline from
# the same run. Writes one JSON object (make bench: build/bench/shim.json).
# usage: bench-shim.sh BUILD_DIR        (DEVICE=real: the machine's own GPU 0
#                                        and driver instead of simdev)
#   launch_overhead_ns            ns per launch of a launch-and-synchronize loop
#                                 of empty kernels, interposer minus none (median
#                                 of 5 interleaved runs each; bench/launch-cost.c)
#   arbiter_fast_path_ns          what the arbiter adds to a launch while the
#                                 turn is held, beside an empty loop
#   share_error_pp_max            worst |achieved - target| share over 1 s windows
#                                 (3 windows after 2 s warm-up, 10 for 10/90;
#                                 mixes 50/50, 30/70, 10/90, 20/30/50, 25x4, all hard)
#   split_10_90_ratio             achieved share of the 90 % tenant / the 10 %,
#                                 summed over the 10/90 mix's 10 windows
#   isolation_throughput_change_pct  a 50 % tenant's kernels in 4 s, neighbour
#                                 burning vs idle (median of 3 pairs)
#   probe_p99_alone_us, probe_p99_with_burner_us  priority-8 latency probe
#                                 alone and beside a priority-2 1 ms burner
#   probe_p99_hard_50_50_us       the probe beside the burner, both hard at
#                                 50 % and of the same priority
#   work_conserving_pct           device utilization while one of two 50 %
#                                 shared tenants is idle
# Targets (docs/shim.md; "targets" in the JSON): launch_overhead_ns <= 100,
# share_error_pp_max <= 2, split_10_90_ratio 9.0 +- 0.9,
# |isolation_throughput_change_pct| <= 2, probe_p99_with_burner_us <=
# probe_p99_alone_us + 2000, probe_p99_hard_50_50_us <= probe_p99_alone_us
# + 3000, work_conserving_pct >= 95. "missed" names the figures that
# missed theirs and "ok" is true when none did; the exit status is 1 when
# one did (or the run failed), 0 otherwise.
set -eu
build=$1
gl=$build/gpuload
probe=$build/tests/nvml-probe
shim=$build/libgpushare.so
if [ "${DEVICE:-sim}" = sim ]; then
	export LD_LIBRARY_PATH=$build/simdev GPUPOOL_SIM_DEVICES=a100-80g:1
fi
tmp=$(mktemp -d)
export GPUPOOL_SIM_DIR=$tmp/sim GPUPOOL_RUN_DIR=$tmp/run

# On exit, whatever the reason: stop the tenants still running, remove
# $tmp, and keep the script's own exit status (a failing command in the
# trap would replace it under set -e). jobs -p goes through a file: in
# dash, $(jobs -p) runs in a subshell, which has no jobs.
cleanup() {
	status=$?
	set +e
	jobs -p >"$tmp/jobs"
	kill $(cat "$tmp/jobs") 2>/dev/null
	wait
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

burner() { # SHARE [ISOLATION [SECONDS]] -> a burner in the background, its pid in $!
	env LD_PRELOAD="$shim" GPUPOOL_COMPUTE="$1" GPUPOOL_ISOLATION="${2:-hard}" \
		"$gl" burn --duration "${3:-5.5}" --json >/dev/null &
}

median() { # VALUES... -> their median
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Share errors: for each mix, start the tenants, skip 2 s, then 1 s windows
# of NVML per-process utilization (more for 10/90: its ratio moves a lot
# with NVML's whole percents).
worst=0
ratio=0
for mix in "50 50" "30 70" "10 90" "20 30 50" "25 25 25 25"; do
	windows=3
	[ "$mix" = "10 90" ] && windows=10
	pids=""
	for share in $mix; do
		burner "$share" hard $((windows + 3))
		pids="$pids $!"
	done
	sleep 2
	for window in $(seq "$windows"); do
		sleep 1
		"$probe" >"$tmp/w.json"
		set -- $mix
		for pid in $pids; do
			target=$1
			shift
			got=$(jq "[.devices[0].samples[] | select(.pid == $pid) | .sm_util] | add // 0" "$tmp/w.json")
			err=$(( got > target ? got - target : target - got ))
			[ "$err" -gt "$worst" ] && worst=$err
			echo "$mix $pid $target $got" >>"$tmp/shares.txt"
			[ -z "${VERBOSE:-}" ] || echo "mix [$mix] target $target got $got" >&2
		done
	done
	wait
done
ratio=$(awk '$1 == 10 && $2 == 90 { if ($4 == 10) s10 += $5; else s90 += $5 }
	END { printf "%.2f", s10 ? s90 / s10 : 0 }' "$tmp/shares.txt")

# Launch overhead: the same launches with and without the interposer.
bares="" hookeds=""
for run in 1 2 3 4 5; do
	bares="$bares $("$build/tests/launch-cost")"
	hookeds="$hookeds $(env LD_PRELOAD="$shim" "$build/tests/launch-cost")"
done
bare=$(median $bares)
hooked=$(median $hookeds)
fast=$("$build/tests/arbiter-fastpath")

# Isolation: a 50 % tenant alone, then beside a burning 50 % neighbour;
# the median change of three such pairs (a pair moves by a point or two
# with the host's wake-ups at hand-overs).
changes=""
for pair in 1 2 3; do
	alone=$(env LD_PRELOAD="$shim" GPUPOOL_COMPUTE=50 "$gl" burn --duration 4 --json | jq .kernels)
	burner 50 hard 5
	b=$!
	sleep 0.5
	beside=$(env LD_PRELOAD="$shim" GPUPOOL_COMPUTE=50 "$gl" burn --duration 4 --json | jq .kernels)
	kill "$b" 2>/dev/null || true
	wait
	changes="$changes $(jq -n "($beside - $alone) / $alone * 100 | . * 10 | round / 10")"
done
change=$(median $changes)

# Priority: a latency probe alone, then beside a priority-2 burner.
p_alone=$(env LD_PRELOAD="$shim" GPUPOOL_PRIORITY=8 "$gl" latency --duration 2 --json | jq .p99_us)
env LD_PRELOAD="$shim" GPUPOOL_PRIORITY=2 "$gl" burn --duration 3.5 --json >/dev/null &
sleep 0.5
p_beside=$(env LD_PRELOAD="$shim" GPUPOOL_PRIORITY=8 "$gl" latency --duration 2 --json | jq .p99_us)
wait

# A hard-isolated service: the probe beside the burner, both hard at 50 %
# and of the same priority (the burner's turns are 25 ms).
burner 50 hard 3.5
sleep 0.5
p_hard=$(env LD_PRELOAD="$shim" GPUPOOL_COMPUTE=50 GPUPOOL_ISOLATION=hard "$gl" latency \
	--duration 2 --json | jq .p99_us)
wait

# Work conservation: two shared 50 % tenants, one stops.
burner 50 shared
env LD_PRELOAD="$shim" GPUPOOL_COMPUTE=50 GPUPOOL_ISOLATION=shared "$gl" burn --duration 1.5 --json >/dev/null &
sleep 3.5
util=$("$probe" | jq '.devices[0].util_gpu')
wait

name=$("$probe" | jq -r '.devices[0].name')
jq -n -c --arg name "$name" --argjson worst "$worst" --argjson ratio "$ratio" --argjson bare "$bare" \
	--argjson hooked "$hooked" --argjson fast "$fast" --argjson change "$change" \
	--argjson pa "$p_alone" --argjson pb "$p_beside" --argjson ph "$p_hard" \
	--argjson util "$util" '{
	bench: "shim", device: $name, simulated: (env.DEVICE // "sim" | . == "sim"),
	launch_overhead_ns: (($hooked - $bare) * 10 | round / 10),
	launch_ns_bare: $bare, launch_ns_interposed: $hooked, arbiter_fast_path_ns: $fast,
	share_error_pp_max: $worst, split_10_90_ratio: $ratio,
	isolation_throughput_change_pct: $change,
	probe_p99_alone_us: $pa, probe_p99_with_burner_us: $pb, probe_p99_hard_50_50_us: $ph,
	work_conserving_pct: $util }
	| .targets = {
		launch_overhead_ns: { max: 100 }, share_error_pp_max: { max: 2 },
		split_10_90_ratio: { min: 8.1, max: 9.9 },
		isolation_throughput_change_pct: { min: -2, max: 2 },
		probe_p99_with_burner_us: { max: ($pa + 2000) },
		probe_p99_hard_50_50_us: { max: ($pa + 3000) }, work_conserving_pct: { min: 95 } }
	| . as $r | .missed = [ .targets | to_entries[] | .key as $k | .value
		| select((.min != null and $r[$k] < .min) or (.max != null and $r[$k] > .max)) | $k ]
	| .ok = (.missed == [])' >"$tmp/result.json"
cat "$tmp/result.json"
jq -e .ok "$tmp/result.json" >/dev/null
