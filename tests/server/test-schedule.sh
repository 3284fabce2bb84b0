#!/bin/sh
# test-schedule.sh — time-of-day rules on a real server with this
# machine's agent and a simulated T4 (issue 16; docs/operations.md): rules
# due 3 s from now raise a running task's share and a tenant's guaranteed
# compute at their time, not before, through the same writes as a
# person's (task.set by schedule:NAME, schedule.apply), a share the card
# cannot take is skipped saying why (schedule.skip), a rule fires once a
# day (a change by hand afterwards stays), and wrong rules are refused.
# usage: test-schedule.sh GPUPOOL GPULOAD
gp=$1 gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300 || { finish; exit 1; }

runs "tenant batch is added, 100 % of compute guaranteed" "$tmp/batch.json" -- \
	"$gp" tenant add batch --compute-guaranteed 100 --mem-guaranteed 16G -o json
batch=$(jq -r .token "$tmp/batch.json")
small=$(as "$batch" submit -q --name small --mem 1G --compute 20 -- "$gl" burn --duration 60)
big=$(as "$batch" submit -q --name big --mem 1G --compute 50 -- "$gl" burn --duration 60)
wait_for "task small runs" 20 "$small" '.state == "running"'
wait_for "task big runs" 20 "$big" '.state == "running"'

due_s=$(($(date +%s) + 3))
at=$(date -u -d "@$due_s" +%H:%M:%S)
runs "a rule raises task small to 40 % at $at UTC" "$tmp/add1.out" -- \
	"$gp" schedule add grow --at "$at" --task "$small" --set compute_pct=40
runs "a rule lowers tenant batch's guarantee to 80 % at the same time" "$tmp/add2.out" -- \
	"$gp" schedule add night --at "$at" --tenant batch --set compute_guaranteed_pct=80
runs "a rule asks 100 % for task big, which the card cannot give beside small" "$tmp/add3.out" -- \
	"$gp" schedule add greedy --at "$at" --task "$big" --set compute_pct=100
runs "the rules are listed" "$tmp/ls.json" -- "$gp" schedule ls -o json
check "... each with its time, target, field, value and when it fires next" \
	".[0].schedules | length == 3 and (map(select(.name == \"grow\"))[0] |
	 .at == \"$at\" and .task == $small and .field == \"compute_pct\" and .value == 40 and
	 .next_ms > 0)" "$tmp/ls.json"

"$gp" task show "$small" -o json >"$tmp/before.json"
check "before its time the share is as submitted" '.[0].compute_pct == 20' "$tmp/before.json"
wait_for "at its time task small has 40 %" 15 "$small" '.compute_pct == 40'
"$gp" audit --limit 500 -o json >"$tmp/audit.json"
check "... changed by schedule:grow (task.set), no sooner than its time" \
	"[.[0].audit[] | select(.action == \"task.set\" and .who == \"schedule:grow\" and
	  .object == \"$small\")] | length == 1 and .[0].ts_ms >= $due_s * 1000 and
	 (.[0].detail | test(\"compute_pct 20 -> 40\"))" "$tmp/audit.json"
check "the tenant's guarantee went to 80 %, in the audit log (schedule.apply)" \
	"[.[0].audit[] | select(.action == \"schedule.apply\" and .object == \"tenant batch\")][0].detail |
	 test(\"compute_guaranteed_pct 100 -> 80\")" "$tmp/audit.json"
"$gp" tenant ls -o json >"$tmp/tenants.json"
check "... and the tenant has it" \
	'[.[0].tenants // .[0] | .[] | select(.name == "batch")][0].compute_guaranteed_pct == 80' \
	"$tmp/tenants.json"
check "the share the card cannot give is skipped, saying why (schedule.skip)" \
	"[.[0].audit[] | select(.action == \"schedule.skip\" and .object == \"task $big\")][0].detail |
	 test(\"compute_pct -> 100 not applied: \")" "$tmp/audit.json"
"$gp" task show "$big" -o json >"$tmp/big.json"
check "... and task big keeps its 50 %" '.[0].compute_pct == 50' "$tmp/big.json"

runs "a person sets task small to 30 % after the rule fired" "$tmp/set.out" -- \
	"$gp" task set "$small" --compute 30
sleep 2
"$gp" task show "$small" -o json >"$tmp/after.json"
check "a rule fires once a day: the change by hand stays" '.[0].compute_pct == 30' "$tmp/after.json"

expect "a rule with a bad time is refused, saying the form" 1 'HH:MM' -- \
	"$gp" schedule add bad --at 25:00 --tenant batch --set compute_guaranteed_pct=10
expect "a task's rule of a tenant's field is refused, naming the fields" 1 'compute_pct or priority' -- \
	"$gp" schedule add bad --at 10:00 --task "$small" --set compute_guaranteed_pct=10
expect "a tenant may not add rules" 1 'admin' -- \
	as "$batch" schedule add mine --at 10:00 --task "$small" --set priority=9
runs "a rule is removed" "$tmp/rm.out" -- "$gp" schedule rm greedy
"$gp" schedule ls -o json >"$tmp/ls2.json"
check "... and is gone from the list" '.[0].schedules | map(.name) | index("greedy") == null' \
	"$tmp/ls2.json"
"$gp" cancel "$small" >/dev/null 2>&1
"$gp" cancel "$big" >/dev/null 2>&1
finish
