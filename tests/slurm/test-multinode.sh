#!/bin/sh
# test-multinode.sh — a step across two nodes: real slurmctld, slurmdbd
# on MariaDB, and two slurmd on this one machine, each in a mount and UTS
# namespace of its own (tests/slurm/slurm-lib.sh: its host name, munged,
# run directory and simulated T4 of 16 shards). `srun -N2 --gres=shard:4`
# runs a step on both: each node's managed region has the step's limits
# and holds its processes to them; each node writes its own entry into
# the job's AdminComment, the second after the first (in turn: no update
# of the comment drops an entry), and the job's figures are the two
# nodes' (each as its slurmd logged it); srun --gpu-report prints both;
# `gpupool bill --slurm` counts each node's once. Then two steps of one
# job ending at once on the two nodes: both in the job's comment.
# usage: test-multinode.sh PLUGIN LIBGPUSHARE GPULOAD GPUPOOL
plugin=$1 shim=$2 gl=$3 gp=$4
. "$(dirname "$0")/../lib.sh"
[ -f "$plugin" ] || { echo "SKIP: gpupool.so was not built: Slurm's headers (libslurm-dev) are missing"; exit 77; }
. "$(dirname "$0")/slurm-lib.sh"
export GPUPOOL_SIM_DIR=$tmp/sim GPUPOOL_SIM_DEVICES=t4-16g:1
run=$tmp/run
slurm_accounting_start || { finish; exit 1; }
slurm_nodes_start "required $plugin preload=$shim run_dir=$run shards=16" 1 16 2 \
	"$run" "$GPUPOOL_SIM_DIR" || { finish; exit 1; }
runs "account physics" "$tmp/sacctmgr.out" -- sh -c '
	sacctmgr -i add account physics cluster=gpupool-test &&
	sacctmgr -i add user root account=physics cluster=gpupool-test'

# A step on both nodes: each task shows its node's region, then burns.
srun -N2 --account=physics --gres=shard:4 --gpu-report sh -c '
	"$0" region ls --dir "$1" --json >"$2/region-$SLURMD_NODENAME.json"
	echo "node=$SLURMD_NODENAME host=$(hostname) id=$GPUPOOL_TASK_ID job=$SLURM_JOB_ID"
	exec "$3" burn --duration 1 --json' "$gp" "$run" "$tmp" "$gl" \
	>"$tmp/step.out" 2>"$tmp/step.err"
job=$(sed -n 's/^node=n1 .* job=//p' "$tmp/step.out")
grep -q "^node=n1 host=n1 id=slurm-$job.0 " "$tmp/step.out" &&
	grep -q "^node=n2 host=n2 id=slurm-$job.0 " "$tmp/step.out" &&
	ok "the step ran on nodes n1 and n2 as task slurm-$job.0" ||
	bad "the step ran on nodes n1 and n2 as task slurm-JOB.0" "$tmp/step.out" "$tmp/step.err"
for n in n1 n2; do
	check "node $n's managed region has the step's limits: 3840 MiB and 25 %" \
		"[.[0].devices[0] | select(.managed) | .tasks[] | select(.id == \"slurm-${job:-0}.0\")
		  | [.mem_limit_mib, .compute]] == [[3840, 25]]" "$tmp/region-$n.json"
done

# The job's figures: an entry for each node, each what its slurmd logged.
scontrol show job "${job:-0}" >"$tmp/job.txt" 2>&1
sed -n 's/^ *AdminComment=//p' "$tmp/job.txt" | sed 's/ gpupool /\ngpupool /g; s/ *$//' \
	>"$tmp/entries.txt"
for i in 1 2; do
	sed -n "s/^.*\] \(gpupool slurm-$job\.0 on n$i (node $i of 2): .*\)$/\1/p" \
		"$sl/log/slurmd-n$i.log" >"$tmp/logged-n$i.txt"
done
if [ "$(wc -l <"$tmp/entries.txt")" = 2 ] && [ -s "$tmp/logged-n1.txt" ] &&
	cat "$tmp/logged-n1.txt" "$tmp/logged-n2.txt" | cmp -s - "$tmp/entries.txt"; then
	ok "the job's AdminComment has each node's figures, as its slurmd logged them"
else
	bad "the job's AdminComment has each node's figures, as its slurmd logged them" \
		"$tmp/job.txt" "$tmp/logged-n1.txt" "$tmp/logged-n2.txt"
fi
grep '^gpupool slurm-' "$tmp/step.err" >"$tmp/report.txt"
[ "$(wc -l <"$tmp/report.txt")" = 2 ] && cmp -s "$tmp/report.txt" "$tmp/entries.txt" && ok "srun --gpu-report prints both nodes' figures" ||
	bad "srun --gpu-report prints both nodes' figures" "$tmp/step.err" "$tmp/entries.txt"

# In turn: the nodes wrote one after the other, and no update of the
# comment (slurmctld logs each) dropped or changed an entry the one
# before had.
sed -n "s/^.*setting admin_comment to \(.*\) for JobId=$job\$/\1/p" \
	"$sl/log/slurmctld.log" >"$tmp/updates.txt"
awk '{
	for (k in now) delete now[k]
	s = $0; gsub(/ gpupool slurm-/, "\ngpupool slurm-", s)
	n = split(s, entry, "\n")
	for (i = 1; i <= n; i++) now[entry[i]] = 1
	for (k in before) if (!(k in now)) { print "update " NR " dropped: " k; lost = 1 }
	for (k in before) delete before[k]
	for (k in now) before[k] = 1
} END { exit lost }' "$tmp/updates.txt" >"$tmp/dropped.txt" &&
	[ "$(wc -l <"$tmp/updates.txt")" -ge 2 ] &&
	ok "no update of the job's AdminComment dropped another node's entry" ||
	bad "no update of the job's AdminComment dropped another node's entry" \
		"$tmp/dropped.txt" "$tmp/updates.txt"
head -1 "$tmp/updates.txt" | grep -o 'gpupool slurm-[^:]*:' >"$tmp/first.txt"
[ "$(cat "$tmp/first.txt")" = "gpupool slurm-$job.0 on n1 (node 1 of 2):" ] &&
	ok "node n1 wrote first, n2 after it" || bad "node n1 wrote first, n2 after it" "$tmp/updates.txt"

# The sum: each node's allocated (time x share) and used GPU-seconds.
awk '{ for (i = 2; i <= NF; i++) {
		if ($(i + 1) == "s" && $(i + 2) == "at") { wall = $i; pct = $(i + 3) }
		if ($i == "used") used = $(i + 1)
	}
	a += wall * pct / 100; u += used }
	END { printf "[%.9f, %.9f]\n", a / 3600, u / 3600 }' "$tmp/entries.txt" >"$tmp/want.json"
month=$(date -u +%Y-%m)
for _ in $(seq 50); do
	"$gp" bill --slurm --month "$month" -o json >"$tmp/bill.json" 2>"$tmp/bill.err" &&
		[ "$(jq '.totals.records' "$tmp/bill.json")" = 2 ] && break
	sleep 0.2
done
check "gpupool bill --slurm counts each node's figures once: two records, their sum" \
	'.[0].totals.records == 2 and (.[0].rows | length) == 1 and
	 (.[0].totals.allocated_gpu_hours - .[1][0] | fabs) < 1e-9 and
	 (.[0].totals.used_gpu_hours - .[1][1] | fabs) < 1e-9' "$tmp/bill.json" "$tmp/want.json" ||
	cat "$tmp/bill.err" "$tmp/entries.txt"

# Enforced on each node: a step allocating until out of memory gets a
# quarter of each node's T4.
runs "a step on both nodes allocates until out of memory" "$tmp/alloc.out" -- \
	srun -N2 --gres=shard:4 "$gl" alloc --chunk-mib 256 --json
check "each node holds the step to 3840 MiB, then out of memory" \
	'length == 2 and all(.allocated_mib == 3840 and .oom)' "$tmp/alloc.out"

# Two steps of one job ending at once, one on each node (each the only
# writer of its step: the nodes do not take turns, they check).
cat >"$tmp/job.sh" <<JOB
#!/bin/sh
#SBATCH -N2
#SBATCH --gres=shard:4
#SBATCH --output=$tmp/two.out
srun -N1 -w n1 --gres=shard:4 "$gl" burn --duration 1 &
srun -N1 -w n2 --gres=shard:4 "$gl" burn --duration 1 &
wait
JOB
runs "sbatch -N2 with a step on each node at once" "$tmp/sbatch.out" -- sbatch --parsable "$tmp/job.sh"
two=$(cat "$tmp/sbatch.out")
for _ in $(seq 150); do
	scontrol show job "${two:-0}" 2>/dev/null | grep -q 'JobState=COMPLETED\|JobState=FAILED' && break
	sleep 0.1
done
scontrol show job "${two:-0}" >"$tmp/two.txt" 2>&1
# The steps are numbered in the order srun made them: 0 and 1, either
# on either node.
entries=$(sed -n 's/^ *AdminComment=//p' "$tmp/two.txt" |
	grep -o "gpupool slurm-$two\.[0-9a-z]* on n[12] (node 1 of 1): GPU-" |
	sed "s/^gpupool slurm-$two\.//; s/ (node 1 of 1): GPU-\$//" | sort | tr '\n' ,)
case $entries in
"0 on n1,1 on n2,batch on n1," | "0 on n2,1 on n1,batch on n1,")
	ok "the job's AdminComment has both steps' figures and the batch step's ($entries)" ;;
*) bad "the job's AdminComment has both steps' figures and the batch step's: $entries" \
	"$tmp/two.txt" "$tmp/two.out" ;;
esac
slurm_stop
finish
