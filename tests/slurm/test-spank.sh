#!/bin/sh
# test-spank.sh — gpupool's SPANK plugin on real Slurm daemons (slurmctld
# and slurmd, Debian's 22.05) with a simulated T4 cut into 16 shards:
# two `srun --gres=shard:4` steps each held to a quarter of the memory
# (out of memory inside the step past it), their task ids and one
# LD_PRELOAD, and burning at once 25 % of the GPU each within 2 points;
# --gpu-mem=abc fails the submission with one line and no job;
# a step without GPUs gets no library; sbatch with #SBATCH --gpu-mem and
# inner steps: one library, one task id per step; the limits leave the
# region with the step; --gpu-compute 70/30 split the GPU within 2
# points; a --gpu-priority=8 step keeps its latency beside a priority-2
# burner; root's `gpupool region set` changes a running step's share;
# SIGKILL of a step's process frees its memory within 1 s.
# usage: test-spank.sh PLUGIN LIBGPUSHARE GPULOAD GPUPOOL NVML-PROBE
plugin=$1 shim=$2 gl=$3 gp=$4 probe=$5
. "$(dirname "$0")/../lib.sh"
[ -f "$plugin" ] || { echo "SKIP: gpupool.so was not built: Slurm's headers (libslurm-dev) are missing"; exit 77; }
. "$(dirname "$0")/slurm-lib.sh"
export GPUPOOL_SIM_DIR=$tmp/sim GPUPOOL_SIM_DEVICES=t4-16g:1
run=$tmp/run
slurm_start "required $plugin preload=$shim run_dir=$run shards=16" 1 16 || { finish; exit 1; }

# Two quarter steps at once: each allocates until out of memory.
for i in 1 2; do
	srun --gres=shard:4 sh -c 'echo "id=$GPUPOOL_TASK_ID preload=$LD_PRELOAD"; exec "$0" alloc --chunk-mib 256 --hold 2 --json' \
		"$gl" >"$tmp/q$i.out" 2>"$tmp/q$i.err" &
	eval "pid$i=\$!"
done
for _ in $(seq 100); do grep -q '^{' "$tmp/q1.out" && grep -q '^{' "$tmp/q2.out" && break; sleep 0.1; done
"$gp" region ls --dir "$run" --json >"$tmp/regions.json" 2>&1
check "while they run, each is a task of the device's managed region: 3840 MiB and 25 %" \
	'[.[0].devices[0] | select(.managed) | .tasks[] | select(.id | startswith("slurm-"))
	  | [.mem_limit_mib, .compute, .managed]] == [[3840, 25, true], [3840, 25, true]]' \
	"$tmp/regions.json"
wait "$pid1" "$pid2"
for i in 1 2; do
	grep '^{' "$tmp/q$i.out" >"$tmp/q$i.json"
	check "step $i of shard:4 is held to a quarter of 15360 MiB: 3840 MiB, then out of memory" \
		'.[0] | .allocated_mib == 3840 and .oom' "$tmp/q$i.json" || cat "$tmp/q$i.err"
done
ids=$(sed -n 's/^id=\([^ ]*\) .*/\1/p' "$tmp/q1.out" "$tmp/q2.out" | sort | tr '\n' ' ')
case $ids in
"slurm-"*".0 slurm-"*".0 ") ok "each step runs as task slurm-JOBID.0 ($ids)" ;;
*) bad "each step runs as task slurm-JOBID.0: $ids" "$tmp/q1.out" ;;
esac
grep -qx "id=.* preload=$shim" "$tmp/q1.out" && ok "libgpushare is preloaded once" ||
	bad "libgpushare is preloaded once" "$tmp/q1.out"

# A bad value: one clear line, and no job.
jobs_before=$(scontrol show jobs -o 2>/dev/null | grep -c JobId)
expect "--gpu-mem=abc fails the submission, saying why" 255 \
	'gpupool: --gpu-mem=abc: not a size of device memory; give e.g. 2G or 512M' -- \
	srun --gres=shard:4 --gpu-mem=abc true
jobs_after=$(scontrol show jobs -o 2>/dev/null | grep -c JobId)
[ "$jobs_before" = "$jobs_after" ] && ok "... and no job was made" ||
	bad "... and no job was made: $jobs_before jobs before, $jobs_after after"

# No GPUs: nothing.
expect "a step without GPUs gets no library" 0 '^\[\] \[\]$' -- \
	srun sh -c 'echo "[$LD_PRELOAD] [$GPUPOOL_TASK_ID]"'

# sbatch: the batch step and its inner steps, each its own task, one library.
cat >"$tmp/job.sh" <<JOB
#!/bin/sh
#SBATCH --gres=shard:4
#SBATCH --gpu-mem=2G
#SBATCH --output=$tmp/job.out
echo "batch id=\$GPUPOOL_TASK_ID preload=\$LD_PRELOAD"
srun sh -c 'echo "step id=\$GPUPOOL_TASK_ID preload=\$LD_PRELOAD"'
srun "$gl" alloc --chunk-mib 256 --json
JOB
runs "sbatch takes --gpu-mem in the script" "$tmp/sbatch.out" -- sbatch --parsable "$tmp/job.sh"
job=$(cat "$tmp/sbatch.out")
for _ in $(seq 100); do
	scontrol show job "$job" 2>/dev/null | grep -q 'JobState=COMPLETED\|JobState=FAILED' && break
	sleep 0.1
done
grep -qx "batch id=slurm-$job.batch preload=$shim" "$tmp/job.out" &&
	grep -qx "step id=slurm-$job.0 preload=$shim" "$tmp/job.out" &&
	ok "the batch step and its inner step: one library, a task id each" ||
	bad "the batch step and its inner step: one library, a task id each" "$tmp/job.out"
grep '^{' "$tmp/job.out" >"$tmp/job.json"
check "an inner step has the job's --gpu-mem=2G" '.[0] | .allocated_mib == 2048 and .oom' \
	"$tmp/job.json"

# Compute: --gpu-compute=30 and 70 (hard) on one GPU, burning at once:
# the split of the device's busy time as NVML sees it, within 2 points.
step_start "$tmp/b70.out" "--gres=shard:4 --gpu-compute=70" burn --duration 5 --json
b70=$!
step_start "$tmp/b30.out" "--gres=shard:4 --gpu-compute=30" burn --duration 5 --json
b30=$!
p70=$(step_pid "$tmp/b70.out") p30=$(step_pid "$tmp/b30.out")
sleep 3.5
"$probe" >"$tmp/split.json"
wait "$b70" "$b30"
check "steps at --gpu-compute=70 and 30 split the GPU 70/30 within 2 points" \
	"[.[0].devices[0].samples[] | {(.pid|tostring): .sm_util}] | add |
	 .[\"${p70:-0}\"] as \$a | .[\"${p30:-0}\"] as \$b | \$a + \$b > 0 and
	 (\$a / (\$a + \$b) | . >= 0.68 and . <= 0.72) and \$a <= 72 and \$b <= 32" "$tmp/split.json" ||
	cat "$tmp/b70.out" "$tmp/b30.out"

# ... and two steps of shard:4 (a quarter each, from their shards alone)
# burning at once: 25 % each within 2 points.
for i in 1 2; do
	step_start "$tmp/q$i.burn" --gres=shard:4 burn --duration 5 --json
	eval "qb$i=\$!"
done
pq1=$(step_pid "$tmp/q1.burn") pq2=$(step_pid "$tmp/q2.burn")
sleep 3.5
"$probe" >"$tmp/quarters.json"
wait "$qb1" "$qb2"
check "two steps of shard:4 burning at once get 25 % each within 2 points" \
	"[.[0].devices[0].samples[] | {(.pid|tostring): .sm_util}] | add |
	 .[\"${pq1:-0}\"] as \$a | .[\"${pq2:-0}\"] as \$b |
	 (\$a - 25 | fabs) <= 2 and (\$b - 25 | fabs) <= 2" "$tmp/quarters.json" ||
	cat "$tmp/q1.burn" "$tmp/q2.burn"

# Priority: a --gpu-priority=8 latency probe beside a --gpu-priority=2
# burner waits about one kernel (1 ms) more than alone. A broken priority
# would wait out the burner's 50 ms turns: about 25 ms on the median. The
# bounds, +2 ms on the median and +4 ms on the mean (which a busy host's
# stalls move most), are far below that.
# Both may use the whole GPU (--gpu-compute=100): priority alone decides.
runs "a priority-8 probe alone" "$tmp/alone.json" -- \
	srun --gres=shard:8 --gpu-compute=100 --gpu-priority=8 "$gl" latency --duration 2 --json
srun --gres=shard:8 --gpu-compute=100 --gpu-priority=2 "$gl" burn --duration 4 --json \
	>"$tmp/burner.json" 2>&1 &
burner=$!
sleep 0.7
runs "the same beside a priority-2 burner" "$tmp/beside.json" -- \
	srun --gres=shard:8 --gpu-compute=100 --gpu-priority=8 "$gl" latency --duration 2 --json
wait "$burner"
check "the high-priority step keeps its latency beside the burner" \
	'.[1].p50_us <= .[0].p50_us + 2000 and .[1].mean_us <= .[0].mean_us + 4000' \
	"$tmp/alone.json" "$tmp/beside.json"

# Live change: root on the node sets a running step's share in its
# region's limits table (`gpupool region set`); it applies at the next turn.
step_start "$tmp/live.out" "--gres=shard:4 --gpu-compute=80" burn --duration 4 --json
live=$!
lp=$(step_pid "$tmp/live.out")
lid=$(sed -n 's/^pid=[0-9]* id=//p' "$tmp/live.out")
sleep 1.5
"$probe" >"$tmp/before.json"
uuid=$(jq -r '.devices[0].uuid' "$tmp/before.json")
runs "gpupool region set changes the step's share" "$tmp/set.out" -- \
	"$gp" region set "$uuid" "$lid" --compute 20 --dir "$run"
sleep 1.2
"$probe" >"$tmp/after.json"
wait "$live"
check "the step burns at most 80 % before and 20 % after" \
	"(.[0].devices[0].samples[] | select(.pid == ${lp:-0}) | .sm_util) >= 60 and
	 (.[1].devices[0].samples[] | select(.pid == ${lp:-0}) | .sm_util) <= 24" \
	"$tmp/before.json" "$tmp/after.json"

# SIGKILL of a step's process: its memory is free within 1 s, as NVML sees it.
step_start "$tmp/hold.out" --gres=shard:4 alloc --mib 1024 --hold 60 --json
holder=$!
hp=$(step_pid "$tmp/hold.out")
for _ in $(seq 100); do grep -q '^{' "$tmp/hold.out" && break; sleep 0.1; done
"$probe" >"$tmp/held.json"
check "a step holds 1 GiB on the GPU" \
	"[.[0].devices[0].processes[] | select(.pid == ${hp:-0}) | .mem_mib] == [1024]" "$tmp/held.json"
kill -9 "${hp:-0}"
freed=no
for _ in $(seq 10); do
	"$probe" >"$tmp/after-kill.json"
	jq -e "[.devices[0].processes[] | select(.pid == ${hp:-0})] == []" "$tmp/after-kill.json" \
		>/dev/null && { freed=yes; break; }
	sleep 0.1
done
[ "$freed" = yes ] && ok "SIGKILL frees the step's memory within 1 s" ||
	bad "SIGKILL frees the step's memory within 1 s" "$tmp/after-kill.json"
wait "$holder" 2>/dev/null

# Accounting: a step burning at a hard 50 % for 2 s; its figures in the
# job's AdminComment: allocated = its time x 50 %; used = the device time
# its turns held, as the regions charged it: at least the kernel time the
# burner measured (turns also hold the gaps between kernels, longer on a
# busy host), at most what was allocated (the cap).
srun --gres=shard:8 --gpu-compute=50 sh -c 'echo "job=$SLURM_JOB_ID"; exec "$0" burn --duration 2 --json' \
	"$gl" >"$tmp/acct.out" 2>&1
aj=$(sed -n 's/^job=//p' "$tmp/acct.out")
grep '^{' "$tmp/acct.out" >"$tmp/acct.json"
scontrol show job "${aj:-0}" >"$tmp/acct-job.txt" 2>&1
comment=$(sed -n 's/^ *AdminComment=//p' "$tmp/acct-job.txt")
used=$(echo "$comment" | sed -n 's/.*used \([0-9.]*\) GPU-s.*/\1/p')
alloc=$(echo "$comment" | sed -n 's/.*allocated \([0-9.]*\) GPU-s.*/\1/p')
got=$(jq '.seconds * .busy_fraction' "$tmp/acct.json" 2>/dev/null)
case $comment in
"gpupool slurm-$aj.0 on $(hostname -s) (node 1 of 1): GPU-"*" at 50 %, allocated "*) ok "the job's AdminComment has the step's figures ($comment)" ;;
*) bad "the job's AdminComment has the step's figures" "$tmp/acct-job.txt" ;;
esac
if [ -n "$used" ] && [ -n "$got" ] && [ -n "$alloc" ] &&
	awk -v u="$used" -v g="$got" -v a="$alloc" 'BEGIN { exit !(u >= 0.9 * g && a >= 0.95 && u <= a + 0.05) }'; then
	ok "used $used GPU-s: the burner's own kernel time ($got s) and more, within the $alloc allocated"
else
	bad "used ${used:-?} GPU-s: the burner's own kernel time (${got:-?} s) and more, within the ${alloc:-?} allocated" "$tmp/acct.out"
fi

# --gpu-report: srun prints the step's figures at its end.
expect "srun --gpu-report prints the step's figures" 0 \
	'^gpupool slurm-[0-9]+\.0 on [^ ]+ \(node 1 of 1\): GPU-[0-9a-f-]+ \(Tesla T4\) [0-9.]+ s at 25 %, allocated [0-9.]+ GPU-s, used [0-9.]+ GPU-s, memory 3840 MiB$' -- \
	srun --gres=shard:4 --gpu-report "$gl" burn --duration 0.5

# The steps' limits leave with them.
"$gp" region ls --dir "$run" --json >"$tmp/regions.json" 2>&1
check "no step's limits are left in the region" \
	'.[0].devices[0].tasks | map(.id | select(startswith("slurm-"))) == []' \
	"$tmp/regions.json"
slurm_stop
finish
