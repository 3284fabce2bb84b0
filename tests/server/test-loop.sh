#!/bin/sh
# test-loop.sh — `gpupool server --with-agent` end to end on one simulated
# T4 (15 GiB): tasks run as real processes through libgpushare, and their
# ends are recorded with the exit code; a task over its tenant's quota
# waits and says why; a tenant borrows idle capacity and the lender takes
# it back by preemption, the victim getting SIGTERM (its grace period)
# before it is queued again; a live change of a running task's share
# reaches the device's region within a second; a task runs in the
# directory it was submitted from, or its --workdir.
# usage: test-loop.sh PATH/TO/gpupool PATH/TO/gpuload
set -u
gp=$1
gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
run=$tmp/run
log=$tmp/server.log
server_start --grace-ms 3000

expect "the agent found the device" 0 "1 device\\(s\\)" -- cat "$log"

# ---- ends and exit codes ----------------------------------------------------
ok_id=$("$gp" submit -q --mem 1G --compute 10 -- "$gl" burn --duration 0.3 --json)
fail_id=$("$gp" submit -q --mem 1G --compute 10 -- sh -c 'exit 3')
wait_for "a task that exits 0 succeeds" 10 "$ok_id" '.state == "succeeded" and .exit_code == 0'
wait_for "a task that exits 3 fails with its code" 10 "$fail_id" \
	'.state == "failed" and .exit_code == 3 and (.reason | test("code 3"))'
expect "its output is in its log" 0 '"kernels"' -- cat "$tmp/state/logs/task-$ok_id.log"

# ---- where a task runs: the directory it was submitted from, or --workdir ------
mkdir -p "$tmp/here" "$tmp/there"
here_id=$(cd "$tmp/here" && "$gp" submit -q --mem 1G --compute 10 -- pwd)
there_id=$("$gp" submit -q --mem 1G --compute 10 --workdir "$tmp/there" -- pwd)
wait_for "a task runs where it was submitted" 10 "$here_id" '.state == "succeeded"'
expect "... its pwd says so" 0 "^$tmp/here\$" -- cat "$tmp/state/logs/task-$here_id.log"
wait_for "or in its --workdir" 10 "$there_id" '.state == "succeeded"'
expect "... its pwd says so" 0 "^$tmp/there\$" -- cat "$tmp/state/logs/task-$there_id.log"
expect "a --workdir that does not exist is refused at once" 2 "give a directory that exists" -- \
	"$gp" submit --mem 1G --compute 10 --workdir "$tmp/nowhere" -- pwd

# ---- quota: over it, a task waits and says why --------------------------------
small=$("$gp" tenant add small --mem-guaranteed 4G --compute-guaranteed 50 -o json | jq -r .token)
first=$(as "$small" submit -q --mem 3G --compute 30 -- sleep 30)
second=$(as "$small" submit -q --mem 3G --compute 30 -- sleep 30)
wait_for "within quota, a task runs" 5 "$first" '.state == "running"'
wait_for "over quota, a task waits with the reason" 5 "$second" \
	'.state == "pending" and (.reason | test("over quota"))'
as "$small" task cancel "$second" >/dev/null 2>&1
as "$small" task show "$first" -o json >"$tmp/first.json"
kill -9 -"$(jq -r .pid "$tmp/first.json")" 2>/dev/null
wait_for "a task killed from outside is recorded as failed" 5 "$first" \
	'.state == "failed" and (.reason | test("signal 9"))'

# ---- borrowing, and reclaim by preemption with a grace period ---------------------
lender=$("$gp" tenant add lender --mem-guaranteed 12G --compute-guaranteed 70 -o json | jq -r .token)
borrower=$("$gp" tenant add borrower --mem-guaranteed 2G --compute-guaranteed 10 \
	--mem-borrowable 14G --compute-borrowable 90 -o json | jq -r .token)
victims=""
for n in 1 2 3; do
	# Each borrowed task notes SIGTERM in its own file before it exits.
	victims="$victims $(as "$borrower" submit -q --mem 4G --compute 30 -- \
		sh -c "trap 'echo TERM >$tmp/term-$n; exit 0' TERM; while :; do sleep 0.05; done")"
done
for v in $victims; do
	wait_for "borrowed task $v runs on idle capacity" 5 "$v" \
		'.state == "running" and (.reason | test("borrowed"))'
done
owner=$(as "$lender" submit -q --mem 7G --compute 40 -- sleep 30)
wait_for "the lender's task starts once capacity is taken back" 10 "$owner" '.state == "running"'
preempted=0
for v in $victims; do
	"$gp" task show "$v" -o json >"$tmp/v.json"
	if jq -e '.state == "preempted"' "$tmp/v.json" >/dev/null; then
		preempted=$((preempted + 1))
	fi
done
[ "$preempted" -eq 1 ] && ok "exactly one borrowed task was preempted" ||
	bad "exactly one borrowed task was preempted (got $preempted)" "$log"
expect "the victim got SIGTERM first (its grace period)" 0 "TERM" -- sh -c "cat $tmp/term-*"
expect "the preemption is in the audit log" 0 "task.preempt" -- "$gp" audit
"$gp" audit --limit 1000 -o json >"$tmp/audit.json"
check "the lender's task started once the victim had stopped, not beside it" \
	"[.[0].audit[] | select((.action == \"task.requeue\") or
	  (.action == \"task.start\" and .object == \"task $owner\")) | .action] ==
	 [\"task.requeue\", \"task.start\"]" "$tmp/audit.json"

# ---- a live change reaches the region ---------------------------------------------
# (The admin is unlimited, so nothing it asks for is guaranteed: it takes
# no capacity back. One borrowed task stays, the others go.)
kept=
for v in $victims; do
	if [ -z "$kept" ] && "$gp" task show "$v" -o json | jq -e '.state == "running"' >/dev/null; then
		kept=$v
	else
		"$gp" task cancel "$v" >/dev/null
	fi
done
live=$("$gp" submit -q --mem 1G --compute 20 -- "$gl" burn --duration 20)
wait_for "the burner runs" 5 "$live" '.state == "running"'
# Its process joins the device's region when it first touches the driver.
for _ in $(seq 50); do
	"$gp" region ls --dir "$run" --json >"$tmp/region.json" 2>&1
	jq -e ".devices[0].tasks[] | select(.id == \"task-$live\")" "$tmp/region.json" \
		>/dev/null 2>&1 && break
	sleep 0.1
done
# The T4 holds 30 + 40 + 20 % now: 30 % fits it exactly (more would be
# refused, tests/server/test-capacity.sh).
"$gp" task set "$live" --compute 30 --reason "test: more for the burner" >/dev/null
eventually "a share change is in the region within 1 s" 1 "$tmp/region.json" \
	".devices[0].tasks[] | select(.id == \"task-$live\") | .compute == 30" -- \
	"$gp" region ls --dir "$run" --json

# ---- the server's limits are not changed behind its back -----------------------------
uuid=$(jq -r .devices[0].uuid "$tmp/region.json")
expect "region set on a server's task is refused without --force, saying why" 1 \
	"books would not follow.*gpupool task set.*--force" -- \
	"$gp" region set "$uuid" "task-$live" --compute 10 --dir "$run"
"$gp" task show "$live" -o json >"$tmp/live.json"
check "... and the server still counts its share" '.[0].compute_pct == 30' "$tmp/live.json"
runs "with --force the table is written and the server told" "$tmp/forced.out" -- \
	"$gp" region set "$uuid" "task-$live" --compute 10 --dir "$run" --force
wait_for "the server's books follow" 5 "$live" '.compute_pct == 10'
"$gp" audit --limit 1000 -o json >"$tmp/audit.json"
check "an audit row says who forced it" '.[0].audit | any(.action == "task.set" and
	(.object | test("(^| )'"$live"'$")) and (.detail | test("forced with gpupool region set --force by uid")))' \
	"$tmp/audit.json"
finish
