#!/bin/sh
# test-service.sh — a service that scales with its load, on a real server
# with this machine's agent and two simulated T4s (issue 16;
# docs/operations.md). Time is compressed by the service's own policy:
# out above 80 % for 2 s, in below 20 % for 4 s, 10 % margin, 2 s cooldown
# (the seeds' 5 and 30 minutes scaled down); the server samples every
# 0.3 s. The load is gpuload's serve mode in each replica, at a rate this
# script sets as a load balancer would: the total rate in three phases,
# split evenly over the running replicas (a file each replica reads).
#   1. 0.6 of a card (120 requests/s of 5 ms): the one replica of 30 %
#      grows to the ceiling of 60 % first, then a second replica is added;
#   2. 1.0 card: the tenant's quota (150 %) holds no third replica of
#      60 %: the service stays at 2;
#   3. 0.05 card: the shares shrink back to 30 %, then a replica goes.
# Each step comes no sooner than its window after the load changed, is in
# the audit log with its figures, and the steps never turn back within a
# phase (no flapping). A replica killed by hand is replaced; removing the
# service cancels its replicas. A service's replicas count against its
# tenant's part of the queue (--tenant-queue-max 2) as its own
# submissions do, and a slice no card could hold is refused.
# usage: test-service.sh GPUPOOL GPULOAD
gp=$1 gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300 --tenant-queue-max 2 || { finish; exit 1; }

runs "tenant web is added, 150 % of compute" "$tmp/web.json" -- \
	"$gp" tenant add web --compute-guaranteed 150 --mem-guaranteed 64G -o json
web=$(jq -r .token "$tmp/web.json")
runs "the admin adds template t4-30 (2 GiB, 30 %)" "$tmp/tpl.out" -- \
	"$gp" template add t4-30 --mem 2G --compute 30 --models T4
rate=$tmp/rate
echo 0 >"$rate"
chmod 644 "$rate"

# The load balancer: every 0.2 s, the phase's total rate over the running
# replicas.
echo 0 >"$tmp/total"
balance() {
	while :; do
		"$gp" service show front -o json >"$tmp/lb.json" 2>/dev/null
		n=$(jq '[.replica_tasks[] | select(.state == "running" and (.cancelling | not))] | length' \
			"$tmp/lb.json" 2>/dev/null)
		[ "${n:-0}" -gt 0 ] 2>/dev/null && awk -v t="$(cat "$tmp/total")" -v n="$n" \
			'BEGIN { printf "%.3f\n", t / n }' >"$rate.new" && mv "$rate.new" "$rate"
		sleep 0.2
	done
}
GPUPOOL_TOKEN=$web balance &
balancer=$!

runs "the service is created: 1 replica of t4-30, autoscaled" "$tmp/create.json" -- \
	as "$web" service create front --template t4-30 --min 1 --max 4 --out-window 2 \
	--in-window 4 --cooldown 2 --share-max 60 -o json -- \
	"$gl" serve --kernel-us 5000 --duration 600 --qps-file "$rate"
check "... its policy: 80 %/2 s out, 20 %/4 s in, 10 % margin, share 30 up to 60" \
	'.[0] | .replicas == 1 and .share_pct == 30 and .spec.policy.out_pct == 80 and
	 .spec.policy.in_pct == 20 and .spec.policy.margin_pct == 10 and
	 .spec.policy.share_max_pct == 60 and .spec.task.template == "t4-30"' "$tmp/create.json"
show() { as "$web" service show front -o json; }
eventually "its replica runs" 20 "$tmp/svc.json" \
	'[.replica_tasks[] | select(.state == "running")] | length == 1' -- show

scale_steps() { "$gp" audit --limit 1000 -o json; }
steps='[.audit[] | select(.action == "service.scale" and .object == "service front")] | sort_by(.ts_ms)'

# Phase 1: 0.27 of a card, 90 % of the replica's 30 %.
phase1=$(now_ms)
echo 54 >"$tmp/total"
eventually "at 0.27 card, the share grows first, 30 % -> 60 % (the ceiling)" 30 "$tmp/a1.json" \
	"$steps | map(select(.detail | startswith(\"grow\"))) | length >= 1" -- scale_steps
check "... no sooner than the 2 s window after the load rose" \
	".[0] | $steps | .[0] | .ts_ms - $phase1 >= 2000 and (.detail | startswith(\"grow\"))" "$tmp/a1.json"
check "... its reason gives the figures (utilization, window, share 30 -> 60)" \
	".[0] | $steps | .[0].detail | test(\"utilization [0-9]+ % above 80 % for [0-9]+ s \\\\(window 2 s\\\\).*30 % -> 60 %\")" \
	"$tmp/a1.json"

# ... then 0.55 card, 92 % of the grown share: a second replica.
phase1b=$(now_ms)
echo 110 >"$tmp/total"
eventually "at 0.55 card, with the share at its ceiling, a second replica is added" 30 "$tmp/a1.json" \
	"$steps | map(select(.detail | startswith(\"out\"))) | length >= 1" -- scale_steps
check "... no sooner than the 2 s window" \
	".[0] | $steps | map(select(.detail | startswith(\"out\"))) | .[0].ts_ms - $phase1b >= 2000" \
	"$tmp/a1.json"
eventually "both replicas run at 60 %" 20 "$tmp/svc.json" \
	'[.replica_tasks[] | select(.state == "running" and .compute_pct == 60)] | length == 2' -- show

# Phase 2: a whole card's load, 83 % of each replica's 60 %: a third
# replica of 60 % would pass the tenant's 150 %.
echo 200 >"$tmp/total"
sleep 7
show >"$tmp/p2.json"
check "under 1.0 card the quota holds the service at 2 replicas" \
	'.[0] | .replicas == 2 and ([.replica_tasks[] | select(.cancelling | not)] | length) == 2' \
	"$tmp/p2.json"
scale_steps >"$tmp/a2.json"
check "no step in while the load is high (no flapping)" \
	".[0] | $steps | map(select(.detail | startswith(\"in\") or startswith(\"shrink\"))) == []" \
	"$tmp/a2.json"

# Phase 3: 0.05 of a card.
phase3=$(now_ms)
echo 10 >"$tmp/total"
eventually "at 0.05 card, the shares shrink back to 30 %" 40 "$tmp/a3.json" \
	"$steps | map(select(.detail | startswith(\"shrink\"))) | length >= 1" -- scale_steps
eventually "... then a replica is removed" 40 "$tmp/a3.json" \
	"$steps | map(select(.detail | startswith(\"in\"))) | length >= 1" -- scale_steps
check "the first step in came no sooner than the 4 s window" \
	".[0] | $steps | map(select(.ts_ms > $phase3)) | .[0] | .ts_ms - $phase3 >= 4000" "$tmp/a3.json"
check "the steps never turned back: every step out before every step in" \
	".[0] | $steps | map(.detail | startswith(\"grow\") or startswith(\"out\")) |
	 (index(false) // length) as \$first_in | .[\$first_in:] | all(. == false)" "$tmp/a3.json"
eventually "one replica of 30 % is left" 20 "$tmp/svc.json" \
	'.replicas == 1 and ([.replica_tasks[] | select(.cancelling | not)] | length) == 1 and
	 .share_pct == 30' -- show

# A replica that dies is replaced.
victim=$(jq '[.replica_tasks[] | select(.cancelling | not)][0].id' "$tmp/svc.json")
as "$web" task cancel "$victim" >/dev/null
eventually "a replica cancelled by hand is replaced by a new task" 20 "$tmp/svc.json" \
	"[.replica_tasks[] | select(.state == \"running\" and .id != $victim and (.cancelling | not))] | length == 1" -- show

expect "a service needs a slice" 1 'mem_mib|--mem|template' -- \
	as "$web" service create bad -- "$gl" serve
expect "min above max is refused, saying so" 1 'min' -- \
	as "$web" service create bad --template t4-30 --min 3 --max 2 -- "$gl" serve
expect "a second service of the same name is refused" 1 'front' -- \
	as "$web" service create front --template t4-30 -- "$gl" serve
expect "a Deployment's service needs a server on Kubernetes, saying so" 1 'server --kubernetes' -- \
	as "$web" service create kube --template t4-30 --deployment web
runs "the service is removed" "$tmp/rm.out" -- as "$web" service rm front
eventually "... and its replicas are cancelled" 20 "$tmp/tasks.json" \
	'[.tasks[] | select(.state == "running" or .state == "pending")] | length == 0' -- \
	as "$web" task ls -o json

# Six replicas of 10 GiB: one fits on each 16 GiB T4, two more may queue.
runs "a service of 6 fixed replicas of 10 GiB is created" "$tmp/wide.out" -- \
	as "$web" service create wide --mem 10G --compute 10 --no-autoscale --replicas 6 -- \
	"$gl" serve --duration 600 --qps 1
eventually "two replicas run, one on each card" 20 "$tmp/wide.json" \
	'[.replica_tasks[] | select(.state == "running")] | length == 2' -- \
	as "$web" service show wide -o json
sleep 1.5
as "$web" service show wide -o json >"$tmp/wide.json"
check "... and the tenant's bound of 2 queued tasks holds the rest back" \
	'[.[0].replica_tasks[] | select(.state == "queued")] | length == 2' "$tmp/wide.json"
expect "a slice no card could hold is refused, naming the most" 1 'mem_mib|--mem' -- \
	as "$web" service create huge --mem 40G --compute 10 -- "$gl" serve
runs "the service is removed" "$tmp/rm2.out" -- as "$web" service rm wide

# A tenant has at most 32 services (each costs the controller work at
# every sampling).
runs "tenant many is added" "$tmp/many.json" -- "$gp" tenant add many --unlimited -o json
many=$(jq -r .token "$tmp/many.json")
made=0
for i in $(seq 32); do
	as "$many" service create "s$i" --mem 64M --compute 1 --no-autoscale -- sleep 600 \
		>/dev/null 2>&1 && made=$((made + 1))
done
echo "$made" >"$tmp/made"
check "a tenant creates 32 services" '.[0] == 32' "$tmp/made"
expect "... and a 33rd is refused, saying the bound" 1 '32 services' -- \
	as "$many" service create s33 --mem 64M --compute 1 --no-autoscale -- sleep 600
for i in $(seq 32); do as "$many" service rm "s$i" >/dev/null 2>&1; done
kill "$balancer" 2>/dev/null
finish
