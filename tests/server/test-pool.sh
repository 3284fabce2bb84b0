#!/bin/sh
# test-pool.sh — what the pool is made of, what waits for it, and a task's
# output and end, with `gpupool server --with-agent --grace-ms 1500` on two
# simulated T4s and real processes: `gpupool node ls` and `device ls`
# (hostname, driver, CUDA, the compatibility check, the tasks on each
# device); `gpupool logs` (the whole log, --tail, the byte cap and its
# note, text/plain, who may read it, a task without a log; -f follows a
# running task to its end, with --tail too; ?from=BYTE); cancelling a
# running task (SIGTERM reaches it, it stays running while it stops, then
# it is cancelled with its exit code and two audit rows; one that ignores
# SIGTERM is killed after the grace period); `gpupool queue` (the
# scheduler's order, positions in the whole queue, a tenant's view).
# usage: test-pool.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
log=$tmp/server.log
logs=$tmp/state/logs

server_start --grace-ms 1500 --sample-ms 300

alice=$("$gp" tenant add alice --unlimited --priority-max 7 2>/dev/null)
bob=$("$gp" tenant add bob --unlimited --priority-max 7 2>/dev/null)

# ---- the node and its devices -----------------------------------------------
as "$bob" node ls -o json >"$tmp/nodes.json"
check "node ls: this machine, its driver, CUDA and devices (a tenant may ask)" \
	".[0].agent and (.[0].nodes | length == 1) and (.[0].nodes[0] |
	.hostname == \"$(uname -n)\" and .driver_version == \"580.65.06\" and
	(.cuda_version | test(\"^[0-9]+\\\\.[0-9]+$\")) and .devices == 2 and .devices_usable == 2)" \
	"$tmp/nodes.json"
expect "node ls: a table" 0 "^$(uname -n) +580\\.65\\.06 +[0-9.]+ +2 +2 " -- "$gp" node ls

held=$(as "$alice" submit -q --name held --mem 2G --compute 20 -- sleep 30)
wait_for "a task runs" 5 "$held" '.state == "running"'
sleep 0.7 # a sampling or two
"$gp" device ls -o json >"$tmp/devices.json"
check "device ls: index, UUID, model, memory, utilization, driver, compatibility" \
	'.[0].agent and (.[0].devices | length == 2) and (.[0].devices | all(
	(.uuid | startswith("GPU-")) and (.name | test("T4")) and .memory_total_mib > 15000 and
	(.memory_used_mib | type == "number") and (.utilization_pct | type == "number") and
	.driver_version == "580.65.06" and .compatible and .reason == null and .health == "ok"))' \
	"$tmp/devices.json"
check "device ls: the running task is on one device, counted there" \
	"[.[0].devices[] | select(.tasks == [$held])] | length == 1 and .[0].tasks_running == 1" \
	"$tmp/devices.json"
as "$bob" device ls -o json >"$tmp/bob-devices.json"
check "device ls: a tenant counts others' tasks but sees only its own ids" \
	"[.[0].devices[].tasks[]] == [] and ([.[0].devices[].tasks_running] | add) == 1" \
	"$tmp/bob-devices.json"
expect "device ls: a table with the health and the task" 0 \
	"^[01] +GPU-[0-9a-f-]+ +Tesla T4 .* ok +1 $held$" -- "$gp" device ls
kill -9 -"$(jq -r .pid "$tmp/task.json")" 2>/dev/null

# ---- logs -------------------------------------------------------------------
five=$(as "$alice" submit -q --name five --mem 1G --compute 10 -- \
	sh -c 'for i in 1 2 3 4 5; do echo "line $i"; done')
wait_for "a task that prints five lines ends" 5 "$five" '.state == "succeeded"'
as "$alice" logs "$five" >"$tmp/five.txt"
printf 'line %s\n' 1 2 3 4 5 >"$tmp/five.want"
cmp -s "$tmp/five.txt" "$tmp/five.want" && ok "logs: the whole output" ||
	bad "logs: the whole output" "$tmp/five.txt"
expect "logs --tail 2: the last two lines" 0 '^line 4$' -- as "$alice" logs "$five" --tail 2
[ "$(as "$alice" logs "$five" --tail 2 | wc -l)" -eq 2 ] && ok "logs --tail 2: two lines" ||
	bad "logs --tail 2: two lines"
code=$(curl -s -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' --unix-socket "$GPUPOOL_SOCKET" \
	-H "Authorization: Bearer $alice" "http://gpupool/v1/tasks/$five/logs?tail=1")
[ "$code" = 200 ] && grep -qi '^content-type: text/plain' "$tmp/headers" &&
	grep -qi '^x-gpupool-log-skipped: 28' "$tmp/headers" && [ "$(cat "$tmp/body")" = "line 5" ] &&
	ok "GET /v1/tasks/ID/logs?tail=1: text/plain, the bytes before it counted" ||
	bad "GET /v1/tasks/ID/logs?tail=1 ($code)" "$tmp/headers" "$tmp/body"
expect "logs: the admin reads any task's" 0 '^line 5$' -- "$gp" logs "$five"
expect "logs: another tenant's task is refused" 1 "task $five belongs to another tenant" -- \
	as "$bob" logs "$five"
expect "logs: no such task" 1 'no task 99999' -- as "$bob" logs 99999
expect "logs: a bad --tail is a usage error" 2 '--tail "x" must be a whole number' -- \
	"$gp" logs "$five" --tail x
big=$("$gp" submit -q --name big --mem 1G --compute 10 -- seq 1 300000)
wait_for "a task that prints 2 MB ends" 5 "$big" '.state == "succeeded"'
"$gp" logs "$big" >"$tmp/big.txt" 2>"$tmp/big.err"
size=$(wc -c <"$tmp/big.txt")
[ "$size" -le 1048576 ] && [ "$size" -gt 1040000 ] && [ "$(tail -n 1 "$tmp/big.txt")" = 300000 ] &&
	grep -Eq '^[0-9]+$' "$tmp/big.txt" && [ "$(head -n 1 "$tmp/big.txt")" -eq \
	$(($(tail -n 1 "$tmp/big.txt") - $(wc -l <"$tmp/big.txt") + 1)) ] &&
	ok "logs: at most the last 1 MiB by default, starting at a whole line" ||
	bad "logs: at most the last 1 MiB by default ($size bytes)" "$tmp/big.err"
expect "logs: the cap is said on stderr" 0 'the first [0-9]+ bytes of the log are left out; --bytes' \
	-- cat "$tmp/big.err"
[ "$("$gp" logs "$big" --bytes 2M | wc -l)" -eq 300000 ] && ok "logs --bytes 2M: all of it" ||
	bad "logs --bytes 2M: all of it"
rm -f "$logs/task-$big.log"
expect "logs: a removed log is a clear 404" 1 "task $big has no log: task-$big.log is not in" -- \
	"$gp" logs "$big"

# ---- logs -f -----------------------------------------------------------------
# Three lines at once, then one every 0.2 s; the task notes when it ends.
slow=$(as "$alice" submit -q --name slow --mem 1G --compute 10 -- sh -c \
	"echo early 1; echo early 2; echo early 3; sleep 0.4;
	 for i in 1 2 3 4 5; do echo tick \$i; sleep 0.2; done; date +%s%N >$tmp/slow-ended")
as "$alice" logs -f "$slow" >"$tmp/follow.txt" 2>&1 &
follower=$!
for _ in $(seq 30); do
	as "$alice" logs "$slow" 2>/dev/null | grep -q 'early 3' && break
	sleep 0.1
done
as "$alice" logs "$slow" --tail 1 -f >"$tmp/follow-tail.txt" 2>&1 &
tailer=$!
wait "$follower"
follow_status=$? follow_done=$(now_ms)
wait "$tailer"
tail_status=$?
{ printf 'early %s\n' 1 2 3; printf 'tick %s\n' 1 2 3 4 5; } >"$tmp/follow.want"
[ "$follow_status" -eq 0 ] && cmp -s "$tmp/follow.txt" "$tmp/follow.want" &&
	ok "logs -f: every line in order, then exit 0 when the task ended" ||
	bad "logs -f: every line in order, then exit 0 (exit $follow_status)" "$tmp/follow.txt"
late=$((follow_done - $(cat "$tmp/slow-ended" 2>/dev/null || echo 0) / 1000000))
[ "$late" -ge 0 ] && [ "$late" -lt 2000 ] && ok "logs -f: it exits within 2 s of the task's end (${late} ms)" ||
	bad "logs -f: it exits within 2 s of the task's end (${late} ms)"
tail -n +3 "$tmp/follow.want" >"$tmp/follow-tail.want"
[ "$tail_status" -eq 0 ] && cmp -s "$tmp/follow-tail.txt" "$tmp/follow-tail.want" &&
	ok "logs --tail 1 -f: the last line, then what follows" ||
	bad "logs --tail 1 -f (exit $tail_status)" "$tmp/follow-tail.txt"
code=$(curl -s -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' --unix-socket "$GPUPOOL_SOCKET" \
	-H "Authorization: Bearer $alice" "http://gpupool/v1/tasks/$slow/logs?from=8&bytes=13")
[ "$code" = 200 ] && grep -qi '^x-gpupool-log-end: 21' "$tmp/headers" &&
	grep -qi '^x-gpupool-log-skipped: 8' "$tmp/headers" && [ "$(cat "$tmp/body")" = "early 2
early" ] && ok "GET /v1/tasks/ID/logs?from=8&bytes=13: those bytes, and where they end" ||
	bad "GET /v1/tasks/ID/logs?from=8&bytes=13 ($code)" "$tmp/headers" "$tmp/body"
expect "logs: ?tail and ?from together are refused" 0 'tail and from do not go together' -- \
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $alice" \
	"http://gpupool/v1/tasks/$slow/logs?from=0&tail=1"
expect "logs -f of no such task says so" 1 'no task 99999' -- as "$alice" logs -f 99999

# ---- cancelling a running task ----------------------------------------------
# It notes SIGTERM in a file, a moment after it came, then exits 0; the
# task's shell above it (sh -c COMMAND) dies of SIGTERM at once, so this
# also checks that the program under it keeps its grace period.
term=$tmp/term-marker
victim=$(as "$alice" submit -q --name victim --mem 1G --compute 10 -- \
	sh -c "trap 'sleep 0.4; echo TERM >$term; exit 0' TERM; while :; do sleep 0.05; done")
wait_for "the task to cancel runs" 5 "$victim" '.state == "running"'
expect "another tenant may not cancel it" 1 "task $victim belongs to another tenant" -- \
	as "$bob" task cancel "$victim"
start=$(date +%s%N)
expect "cancel: answered at once, running while it stops" 0 \
	"task $victim: running; cancelling \\(asked by alice\\)" -- as "$alice" task cancel "$victim"
"$gp" task cancel "$victim" -o json >"$tmp/again.json"
check "cancel again while it stops: nothing changes" \
	'.[0].state == "running" and .[0].reason == "cancelling (asked by alice)"' "$tmp/again.json"
wait_for "cancelled, with its shell's exit code, within the grace period" 3 "$victim" \
	'.state == "cancelled" and .exit_code == 143 and .ended != null and
	.reason == "cancelled by alice; killed by signal 15"'
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 400 ] && [ "$took" -lt 1500 ] && ok "it stopped in ${took} ms, within --grace-ms 1500" ||
	bad "it stopped in ${took} ms, not after its trap and within --grace-ms 1500"
expect "SIGTERM reached it (its trap wrote the marker)" 0 '^TERM$' -- cat "$term"
"$gp" audit -o json >"$tmp/audit.json"
check "audit: task.cancel by the tenant, then task.end by the server" \
	"[.[0].audit[] | select(.object == \"$victim\" or .object == \"task $victim\") |
	select(.action == \"task.cancel\" or .action == \"task.end\") | [.who, .action]] ==
	[[\"alice\", \"task.cancel\"], [\"server\", \"task.end\"]]" "$tmp/audit.json"
check "audit: the end says who cancelled it and how it exited" \
	"[.[0].audit[] | select(.object == \"task $victim\" and .action == \"task.end\")][0].detail ==
	\"cancelled by alice; killed by signal 15\"" "$tmp/audit.json"
"$gp" alerts --all -o json >"$tmp/alerts.json"
check "a cancelled task raises no failure alert" \
	"[.[0].alerts[] | select(.object == \"task $victim\")] == []" "$tmp/alerts.json"
# exec: the program is the task's leader, and its code is the task's.
deaf=$("$gp" submit -q --name deaf --mem 1G --compute 10 -- exec sh -c "trap '' TERM; while :; do sleep 0.05; done")
wait_for "a task that ignores SIGTERM runs" 5 "$deaf" '.state == "running"'
start=$(date +%s%N)
"$gp" task cancel "$deaf" >/dev/null
wait_for "... is killed after the grace period, and cancelled" 5 "$deaf" \
	'.state == "cancelled" and .exit_code == 137 and .reason == "cancelled by admin; killed by signal 9"'
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 1500 ] && ok "... after the grace period (${took} ms)" ||
	bad "... after the grace period (${took} ms)"
expect "cancelling an ended task is refused" 1 "task $five is succeeded; there is nothing to cancel" -- \
	"$gp" task cancel "$five"

# ---- the queue ---------------------------------------------------------------
# Two whole-device tasks fill both T4s; then three wait.
for n in 1 2; do
	fill=$("$gp" submit -q --name "fill$n" --whole -- sleep 30)
	wait_for "whole-device task $n runs" 5 "$fill" '.state == "running"'
done
low=$(as "$alice" submit -q --name low --priority 3 --mem 1G --compute 10 -- true)
old=$(as "$bob" submit -q --name old --priority 7 --mem 1G --compute 10 -- true)
new=$(as "$alice" submit -q --name new --priority 7 --whole --devices 2 -- true)
sleep 0.3 # a tick writes why they wait
"$gp" queue -o json >"$tmp/queue.json"
check "queue: priority first, then age, with positions" \
	"[.[0].queue[] | [.position, .id]] == [[1, $old], [2, $new], [3, $low]] and .[0].length == 3" \
	"$tmp/queue.json"
check "queue: tenant, shape, wait and reason of each" \
	".[0].queue[1] | .tenant == \"alice\" and .whole and .devices == 2 and .waiting_s >= 0 and
	.state == \"pending\" and (.reason | test(\"no device fits now\"))" "$tmp/queue.json"
as "$alice" queue -o json >"$tmp/alice-queue.json"
check "queue: a tenant sees its own tasks at their place in the whole queue" \
	"[.[0].queue[] | .position] == [2, 3] and .[0].length == 3" "$tmp/alice-queue.json"
expect "queue: a table" 0 "^1 +$old +bob +old +pending +7 +1G x 10%, nvidia " -- "$gp" queue
expect "queue: a tenant is told it sees its own" 0 '3 queued in all; you see your own' -- \
	as "$alice" queue

finish
