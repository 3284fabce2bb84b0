#!/bin/sh
# test-logcap.sh — task logs under a cap, end to end, on one simulated
# T4: a task that writes 1 GiB as fast as it can ends with at most
# --log-max on disk in task-ID.log and task-ID.log.1, `gpupool logs`
# shows its newest lines and says what the cap dropped, a task.log-capped
# warning is raised once, and the server answers meanwhile; a task that
# writes forever is cancelled, and a follower (-f) reads across the
# rotations without a line twice.
# usage: test-logcap.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
logs=$tmp/state/logs

server_start --log-max 4M --sample-ms 500
t0=$(date +%s%N)
gig=$("$gp" submit -q --name flood --mem 1G --compute 10 -- sh -c 'yes 0123456789abcde | head -c 1073741824; echo last line')
worst=0
for _ in $(seq 600); do
	s=$(date +%s%N)
	"$gp" task show "$gig" -o json >"$tmp/task.json" 2>/dev/null
	e=$((($(date +%s%N) - s) / 1000000))
	[ "$e" -gt "$worst" ] && worst=$e
	jq -e '.state == "succeeded"' "$tmp/task.json" >/dev/null 2>&1 && break
	sleep 0.1
done
took=$((($(date +%s%N) - t0) / 1000000))
check "a task that writes 1 GiB succeeds (${took} ms)" '.[0].state == "succeeded"' "$tmp/task.json"
[ "$worst" -lt 1000 ] && ok "the server answers meanwhile (slowest: ${worst} ms)" ||
	bad "the server answers meanwhile (slowest: ${worst} ms)"
size=$(cat "$logs/task-$gig.log" "$logs/task-$gig.log.1" | wc -c)
[ "$size" -le 4194304 ] && [ "$size" -ge 2097152 ] && ok "at most 4M on disk ($size bytes)" ||
	bad "at most 4M on disk ($size bytes)"
[ "$(stat -c %a "$logs/task-$gig.log")" = 600 ] && ok "the log is mode 0600" || bad "the log is mode 0600"
"$gp" logs "$gig" --tail 2 >"$tmp/tail.txt" 2>"$tmp/tail.err"
[ "$(tail -n 1 "$tmp/tail.txt")" = "last line" ] && ok "logs --tail 2: the newest lines" ||
	bad "logs --tail 2: the newest lines" "$tmp/tail.txt"
"$gp" logs "$gig" >/dev/null 2>"$tmp/all.err"
expect "logs says what the cap dropped" 0 'the oldest [0-9]+ bytes of the log were dropped at its cap' -- \
	cat "$tmp/all.err"
for _ in $(seq 30); do
	"$gp" alerts -o json >"$tmp/alerts.json"
	jq -e '.alerts | any(.kind == "task.log-capped")' "$tmp/alerts.json" >/dev/null && break
	sleep 0.1
done
check "one task.log-capped warning, saying the cap" \
	"[.[0].alerts[] | select(.kind == \"task.log-capped\" and .object == \"task $gig\")] |
	 length == 1 and (.[0].level == \"warning\") and (.[0].message | test(\"cap of 4 MiB\"))" \
	"$tmp/alerts.json"

# ---- forever, followed --------------------------------------------------------------
ever=$("$gp" submit -q --name forever --mem 1G --compute 10 -- sh -c 'i=0; while :; do i=$((i+1)); echo "n $i"; done')
wait_for "a task that writes forever runs" 5 "$ever" '.state == "running"'
"$gp" logs -f "$ever" >"$tmp/follow.txt" 2>"$tmp/follow.err" &
follower=$!
sleep 3
"$gp" task cancel "$ever" >/dev/null
wait_for "... is cancelled" 10 "$ever" '.state == "cancelled"'
exited "logs -f ends when the task ends, with 124: it was cancelled" "$follower" 124
size=$(cat "$logs/task-$ever.log" "$logs/task-$ever.log.1" | wc -c)
[ "$size" -le 4194304 ] && ok "at most 4M of it on disk ($size bytes)" || bad "at most 4M on disk ($size)"
# What the follower printed: runs of consecutive numbers, never one twice.
awk '$1 == "n" { if ($2 + 0 <= last) bad = 1; last = $2 + 0 } END { exit bad }' "$tmp/follow.txt" &&
	ok "logs -f: across the rotations, never a line twice ($(wc -l <"$tmp/follow.txt") lines)" ||
	bad "logs -f: across the rotations, never a line twice" "$tmp/follow.txt"
finish
