#!/bin/sh
# test-accounting.sh — gpupool on a Slurm cluster with accounting: real
# slurmdbd on a real MariaDB beside slurmctld and slurmd, one simulated T4
# cut into 16 shards. The job's QOS sets its steps' gpupool priority
# through the site's qos= map (a job without one gets the site's
# default); `gpupool bill --slurm` reads the steps' figures back from
# Slurm's database (sacct) into the server's bill, per account and device
# model, and the bill equals the figures the steps' regions gave:
# allocated GPU-hours = time x share, used GPU-hours = the device time the
# regions charged.
# usage: test-accounting.sh PLUGIN LIBGPUSHARE GPULOAD GPUPOOL
plugin=$1 shim=$2 gl=$3 gp=$4
. "$(dirname "$0")/../lib.sh"
[ -f "$plugin" ] || { echo "SKIP: gpupool.so was not built: Slurm's headers (libslurm-dev) are missing"; exit 77; }
. "$(dirname "$0")/slurm-lib.sh"
export GPUPOOL_SIM_DIR=$tmp/sim GPUPOOL_SIM_DEVICES=t4-16g:1
run=$tmp/run
slurm_accounting_start || { finish; exit 1; }
slurm_start "required $plugin preload=$shim run_dir=$run shards=16 qos=inference:8,batch:2" 1 16 ||
	{ finish; exit 1; }

# Accounts, QOS and the user's associations, as an administrator makes them.
runs "accounts physics and biology, QOS inference and batch" "$tmp/sacctmgr.out" -- sh -c '
	sacctmgr -i add qos inference,batch &&
	sacctmgr -i add account physics,biology cluster=gpupool-test &&
	sacctmgr -i add user root account=physics,biology cluster=gpupool-test qos=normal,inference,batch'

# step ACCOUNT NAME SRUN-ARGS...: a step of ACCOUNT whose figures srun
# prints (--gpu-report), kept as "ACCOUNT FIGURES" in $tmp/figures.txt.
step() {
	acct=$1 name=$2
	shift 2
	srun --account="$acct" --gpu-report "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	grep '^gpupool slurm-' "$tmp/$name.err" | sed "s/^/$acct /" >>"$tmp/figures.txt"
}

# The QOS gives the priority: inference 8, batch 2, normal (not mapped)
# the site's default 5.
for q in inference batch normal; do
	step physics "qos-$q" --qos=$q --gres=shard:2 "$gp" region ls --dir "$run" --json
done
prio='.[0].devices[0].tasks | map(select(.id | startswith("slurm-"))) | .[0].priority'
check "a step of QOS inference runs at gpupool priority 8" "$prio == 8" "$tmp/qos-inference.out"
check "a step of QOS batch runs at gpupool priority 2" "$prio == 2" "$tmp/qos-batch.out"
check "a step of QOS normal (not mapped) runs at the default 5" "$prio == 5" "$tmp/qos-normal.out"

# Burning steps of two accounts at three shares.
step physics p1 --gres=shard:8 "$gl" burn --duration 1.5
step physics p2 --gres=shard:4 "$gl" burn --duration 1
step biology b1 --gres=shard:16 "$gl" burn --duration 1
[ "$(wc -l <"$tmp/figures.txt")" = 6 ] && ok "each of the 6 steps printed its figures" ||
	bad "each of the 6 steps printed its figures" "$tmp/figures.txt" "$tmp/p1.err" "$tmp/b1.err"

# The figures added up per account: what the bill must say.
awk '{ for (i = 2; i <= NF; i++) {
		if ($(i + 1) == "s" && $(i + 2) == "at") { wall = $i; pct = $(i + 3) }
		if ($i == "used") used = $(i + 1)
	}
	a[$1] += wall * pct / 100; u[$1] += used }
	END { printf "{\"physics\": [%.9f, %.9f], \"biology\": [%.9f, %.9f]}\n",
		a["physics"] / 3600, u["physics"] / 3600, a["biology"] / 3600, u["biology"] / 3600 }' \
	"$tmp/figures.txt" >"$tmp/want.json"

# Slurm's database has them once the jobs have ended (slurmctld sends
# job records to slurmdbd as it goes).
month=$(date -u +%Y-%m)
for _ in $(seq 50); do
	"$gp" bill --slurm --month "$month" --price T4=2.5 -o json >"$tmp/bill.json" 2>"$tmp/bill.err" &&
		[ "$(jq '.totals.records' "$tmp/bill.json")" = 6 ] && break
	sleep 0.2
done
check "the bill has the six steps, per account and model" \
	'.[0] | (.rows | map([.tenant, .model, .records]) | sort) ==
		[["biology", "Tesla T4", 1], ["physics", "Tesla T4", 5]]' "$tmp/bill.json"
check "the bill's GPU-hours equal the steps' figures (allocated and used)" \
	'(.[0].rows | map({(.tenant): [.allocated_gpu_hours, .used_gpu_hours]}) | add) as $b
	| .[1] | to_entries | all(.value[0] - $b[.key][0] | fabs < 1e-9)
	and all(.value[1] - $b[.key][1] | fabs < 1e-9)' "$tmp/bill.json" "$tmp/want.json"
check "the cost is the allocated GPU-hours at the T4's price" \
	'.[0].rows | all((.cost - 2.5 * .allocated_gpu_hours | fabs) < 1e-9 and .priced)' "$tmp/bill.json"
expect "bill --slurm --tenant: only that account" 0 '^biology,Tesla T4,nvidia,' -- \
	"$gp" bill --slurm --month "$month" --tenant biology -o csv
expect "--price without --slurm: a clear error" 2 'goes with --slurm' -- \
	"$gp" bill --price T4=1
slurm_stop

# Without slurmdbd: one clear line.
expect "bill --slurm without accounting says what is needed" 1 'slurmdbd must run' -- \
	"$gp" bill --slurm --month "$month"
finish
