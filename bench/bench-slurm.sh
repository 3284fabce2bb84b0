#!/bin/sh
# bench-slurm.sh — gpupool's SPANK plugin on real Slurm daemons (as
# tests/slurm/slurm-lib.sh starts them) and one simulated T4 of 16 shards,
# each figure beside its baseline from the same run. Writes one JSON
# object (make bench: build/bench/slurm.json).
# usage: bench-slurm.sh BUILD_DIR
#   srun_plugin_added_ms     a step's start latency (srun called to its task
#                            running, one allocation, --gres=shard:4) with the
#                            plugin minus without: the median of 15 of each,
#                            interleaved (plugstack.conf rewritten between
#                            them; every step reads it afresh)
#   srun_plugin_added_total_ms  the same for the whole srun (start to end, with
#                            the figures written into the AdminComment at
#                            the end); no target
#   share_error_pp_max       worst |achieved - shards' share| over 1 s windows
#                            of NVML per-process utilization (3 windows after
#                            2 s warm-up) for 2 jobs of shard:8 and 4 jobs of
#                            shard:4 burning at once
# Targets: srun_plugin_added_ms <= 5, share_error_pp_max <= 2. "missed"
# names the figures that missed theirs, "ok" is true when none did; the
# exit status is 1 when one did, 0 otherwise. Without root or Slurm the
# object says "skipped" and why, and the exit status is 0.
set -eu
build=$(cd "$1" && pwd)
plugin=$build/gpupool.so shim=$build/libgpushare.so gl=$build/gpuload
probe=$build/tests/nvml-probe
skip() {
	jq -n -c --arg why "$1" '{bench: "slurm", skipped: $why}'
	exit 0
}
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as their users only as root"
[ -f "$plugin" ] || skip "gpupool.so was not built: Slurm's headers (libslurm-dev) are missing"
for cmd in munged slurmctld slurmd srun salloc; do
	command -v "$cmd" >/dev/null 2>&1 || skip "$cmd is not installed (scripts/install-deps.sh)"
done

tmp=$(mktemp -d)
export LD_LIBRARY_PATH=$build/simdev GPUPOOL_SIM_DEVICES=t4-16g:1 GPUPOOL_SIM_DIR=$tmp/sim
run=$tmp/run
bad() { echo "bench-slurm: $1 failed" >&2; shift; cat "$@" >&2; }
. "$(dirname "$0")/../tests/slurm/slurm-lib.sh"
cleanup() {
	status=$?
	set +e
	jobs -p >"$tmp/jobs"
	kill $(cat "$tmp/jobs") 2>/dev/null
	slurm_stop
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

with="required $plugin preload=$shim run_dir=$run shards=16"
slurm_start "$with" 1 16

median() { # VALUES... -> their median
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Start latency: in one allocation, steps with and without the plugin,
# interleaved; each line "PLUGIN START_MS TOTAL_MS".
cat >"$tmp/steps.sh" <<STEPS
for i in \$(seq 15); do
	for plug in none gpupool; do
		if [ \$plug = none ]; then : >"$sl/plugstack.conf"; else echo "$with" >"$sl/plugstack.conf"; fi
		t0=\$(date +%s%N)
		t1=\$(srun --gres=shard:4 date +%s%N)
		t2=\$(date +%s%N)
		echo "\$plug \$(( (t1 - t0) / 1000 )) \$(( (t2 - t0) / 1000 ))"
	done
done
echo "task \$(srun --gres=shard:4 printenv GPUPOOL_TASK_ID)"
STEPS
salloc --gres=shard:4 sh "$tmp/steps.sh" >"$tmp/latency.txt" 2>"$tmp/salloc.err"
echo "$with" >"$sl/plugstack.conf"
us() { # PLUGIN COLUMN -> the median, in ms
	median $(awk -v p="$1" -v c="$2" '$1 == p { print $c }' "$tmp/latency.txt") |
		awk '{ printf "%.3f", $1 / 1000 }'
}
# 30 steps, and the plugin's were gpupool tasks.
[ "$(grep -c '^[a-z]* [0-9]* [0-9]*$' "$tmp/latency.txt")" = 30 ] &&
	grep -q '^task slurm-[0-9]*\.[0-9]*$' "$tmp/latency.txt" ||
	{ echo "bench-slurm: the steps did not run as planned" >&2; cat "$tmp/latency.txt" "$tmp/salloc.err" >&2; exit 1; }
start_none=$(us none 2) start_with=$(us gpupool 2)
total_none=$(us none 3) total_with=$(us gpupool 3)

# Shares: N jobs of SHARDS burning at once; per-process NVML windows.
worst=0
for mix in "8 8" "4 4 4 4"; do
	n=0 sruns=""
	for shards in $mix; do
		n=$((n + 1))
		step_start "$tmp/burn$n.out" "--gres=shard:$shards" burn --duration 6 --json
		sruns="$sruns $!"
	done
	sleep 2
	pids=""
	for i in $(seq "$n"); do
		pids="$pids $(step_pid "$tmp/burn$i.out")"
	done
	for window in 1 2 3; do
		sleep 1
		"$probe" >"$tmp/w.json"
		set -- $mix
		for pid in $pids; do
			target=$(( $1 * 100 / 16 ))
			shift
			got=$(jq "[.devices[0].samples[] | select(.pid == $pid) | .sm_util] | add // 0" "$tmp/w.json")
			err=$(( got > target ? got - target : target - got ))
			[ "$err" -gt "$worst" ] && worst=$err
			[ -z "${VERBOSE:-}" ] || echo "mix [$mix] target $target got $got" >&2
		done
	done
	# Their sruns only: a bare wait would wait for slurm-lib.sh's watchdog too.
	# shellcheck disable=SC2086 # a list of pids
	wait $sruns
done

jq -n -c --argjson sn "$start_none" --argjson sw "$start_with" --argjson tn "$total_none" \
	--argjson tw "$total_with" --argjson worst "$worst" '{
	bench: "slurm", device: "Tesla T4 (simulated), 16 shards",
	srun_start_ms_without: $sn, srun_start_ms_with: $sw,
	srun_plugin_added_ms: (($sw - $sn) * 1000 | round / 1000),
	srun_total_ms_without: $tn, srun_total_ms_with: $tw,
	srun_plugin_added_total_ms: (($tw - $tn) * 1000 | round / 1000),
	share_error_pp_max: $worst }
	| .targets = { srun_plugin_added_ms: { max: 5 }, share_error_pp_max: { max: 2 } }
	| . as $r | .missed = [ .targets | to_entries[] | .key as $k | .value
		| select((.min != null and $r[$k] < .min) or (.max != null and $r[$k] > .max)) | $k ]
	| .ok = (.missed == [])' >"$tmp/result.json"
cat "$tmp/result.json"
jq -e .ok "$tmp/result.json" >/dev/null
