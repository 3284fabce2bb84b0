#!/bin/sh
# test-unlimited.sh — quotas are explicit, and an unlimited tenant has
# nothing guaranteed (core/quota.h), on one simulated T4: `tenant add`
# without a quota is refused unless --unlimited (and both together are
# refused); a task its tenant's whole quota could never hold is refused
# at submit; while a tenant's borrowed tasks fill the card, the admin's
# short task waits rather than preempting them (the admin lends nothing,
# so it has no guarantee to take back); a tenant within its guarantee
# does take its room back; and the admin's running task, itself
# borrowed, is preempted for such a tenant like anyone's.
# usage: test-unlimited.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
server_start || { finish; exit 1; }

# ---- a quota is never left out by accident -----------------------------------------
expect "tenant add without a quota is refused, naming the flags" 1 \
	'a tenant needs a quota: give --mem-guaranteed and --compute-guaranteed .*or --unlimited' -- \
	"$gp" tenant add careless
expect "a quota and --unlimited together are refused" 1 '--unlimited cannot go with a quota' -- \
	"$gp" tenant add both --unlimited --mem-guaranteed 1G --compute-guaranteed 10
runs "--unlimited is taken" "$tmp/free.out" -- "$gp" tenant add free --unlimited
expect "tenant ls says unlimited" 0 '^[0-9]+ +free +no +auto +unlimited +unlimited ' -- \
	"$gp" tenant ls
"$gp" tenant ls -o json >"$tmp/tenants.json"
check "GET /v1/tenants says who is unlimited" \
	'[.[0].tenants[] | {(.name): .unlimited}] | add == {"admin": true, "free": true}' \
	"$tmp/tenants.json"

# ---- the admin's short task does not preempt borrowers -------------------------------
web=$("$gp" tenant add web --mem-guaranteed 1G --compute-guaranteed 10 --mem-borrowable 15G \
	--compute-borrowable 90 -o json | jq -r .token)
# (and a task its whole quota could never hold is refused, not queued for good)
tiny=$("$gp" tenant add tiny --mem-guaranteed 2G --compute-guaranteed 20 -o json | jq -r .token)
expect "more memory than a tenant's whole quota is refused at submit, naming it" 1 \
	'--mem: tenant "tiny" has a quota of 2048 MiB and 20 % in all .*could never start' -- \
	as "$tiny" submit --mem 4G --compute 10 -- true
expect "... and more compute" 1 '--compute: tenant "tiny" has a quota .* needs 1024 MiB and 50 %' -- \
	as "$tiny" submit --mem 1G --compute 50 -- true
replicas=""
for _ in 1 2 3; do
	replicas="$replicas $(as "$web" submit -q --mem 2G --compute 30 -- sleep 600)"
done
for r in $replicas; do
	wait_for "web's task $r runs, borrowed" 10 "$r" '.state == "running" and (.reason | test("borrowed"))'
done
probe=$("$gp" submit -q --name probe --mem 1G --compute 50 -- sleep 0.05)
wait_for "the admin's 50 % task waits for room, saying why" 10 "$probe" \
	'.state == "pending" and (.reason | test("no device fits"))'
sleep 2
for r in $replicas; do
	wait_for "web's task $r still runs: the admin took nothing back" 1 "$r" '.state == "running"'
done
"$gp" task cancel "$probe" >/dev/null

# ---- a tenant within its guarantee takes its room back ------------------------------
lab=$("$gp" tenant add lab --mem-guaranteed 4G --compute-guaranteed 60 -o json | jq -r .token)
own=$(as "$lab" submit -q --mem 2G --compute 50 -- sleep 600)
wait_for "lab's task, within its guarantee, runs once borrowers make room" 20 "$own" \
	'.state == "running" and (.reason | test("guarantee"))'
"$gp" audit --limit 1000 -o json >"$tmp/audit.json"
check "web's borrowed tasks were preempted for it, audited" \
	'[.[0].audit[] | select(.action == "task.preempt")] | length >= 1' "$tmp/audit.json"
for r in $replicas; do "$gp" task cancel "$r" >/dev/null 2>&1; done
as "$lab" task cancel "$own" >/dev/null

# ---- the admin's own running task is borrowed, and taken back like any -------------------
big=$("$gp" submit -q --name admin-big --mem 8G --compute 90 -- sleep 600)
wait_for "the admin's task runs, on borrowed quota" 20 "$big" \
	'.state == "running" and (.reason | test("borrowed"))'
again=$(as "$lab" submit -q --mem 2G --compute 50 -- sleep 600)
wait_for "lab's task runs again" 20 "$again" '.state == "running"'
wait_for "... the admin's task was preempted for it" 10 "$big" \
	'.state == "preempted" or (.state == "pending" and (.reason | test("preempted")))'
"$gp" task cancel "$big" "$again" >/dev/null 2>&1
finish
