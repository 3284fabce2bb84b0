#!/bin/sh
# test-spank.sh — gpupool's SPANK plugin on real Slurm daemons (slurmctld
# and slurmd, Debian's 22.05) with a simulated T4 cut into 16 shards:
# two `srun --gres=shard:4` steps each held to a quarter of the memory
# (out of memory inside the step past it), their task ids and one
# LD_PRELOAD; --gpu-mem=abc fails the submission with one line and no job;
# a step without GPUs gets no library; sbatch with #SBATCH --gpu-mem and
# inner steps: one library, one task id per step; the limits leave the
# region with the step.
# usage: test-spank.sh PLUGIN LIBGPUSHARE GPULOAD GPUPOOL
plugin=$1 shim=$2 gl=$3 gp=$4
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

# The steps' limits leave with them.
"$gp" region ls --dir "$run" --json >"$tmp/regions.json" 2>&1
check "no step's limits are left in the region" \
	'.[0].devices[0].tasks | map(.id | select(startswith("slurm-"))) == []' \
	"$tmp/regions.json"
slurm_stop
finish
