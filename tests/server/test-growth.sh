#!/bin/sh
# test-growth.sh — a task whose memory only grows (issue 16; docs/operations.md):
# with `--on-memory-growth restart` it is stopped and queued again once it
# holds 80 % of its memory, before its limit, with the reason and an audit
# row (task.restart) that give the figures, and it runs again; a task of
# the default policy growing beside it gets the warning and no restart.
# Both add 128 MiB every 0.2 s, in processes of their own, up to their
# 2 GiB; the server samples every 0.4 s and calls memory growing after it
# rose at 2 samplings in a row.
# usage: test-growth.sh GPUPOOL GPULOAD
gp=$1 gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g:1
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 400 --grow-samples 2 || { finish; exit 1; }

runs "tenant vision is added" "$tmp/vision.json" -- "$gp" tenant add vision --unlimited -o json
vision=$(jq -r .token "$tmp/vision.json")
grow='for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do "$0" alloc --mib 128 --hold 120 >/dev/null 2>&1 & sleep 0.2; done; wait'
restart=$(as "$vision" submit -q --name leaky --mem 2G --compute 20 --on-memory-growth restart \
	-- sh -c "$grow" "$gl")
alert=$(as "$vision" submit -q --name leaky-too --mem 2G --compute 20 -- sh -c "$grow" "$gl")

# The restart: its audit row, then the task running again.
eventually "the growing task of policy restart is restarted" 15 "$tmp/audit.json" \
	"[.audit[] | select(.action == \"task.restart\" and .object == \"task $restart\")] | length >= 1" -- \
	"$gp" audit --limit 200 -o json
check "... before its limit, at 80 % of it or more, saying so" \
	"[.[0].audit[] | select(.action == \"task.restart\" and .object == \"task $restart\")][0].detail |
	 capture(\"restarted before its memory limit: it grew in each of the last 2 samplings, to (?<used>[0-9]+) of 2048 MiB; queued again\") |
	 .used | tonumber | . >= 1638 and . < 2048" "$tmp/audit.json"
wait_for "it runs again" 20 "$restart" '.state == "running" and .started != null'
eventually "it was requeued and started again" 10 "$tmp/audit.json" \
	"[.audit[] | select(.object == \"task $restart\") | .action] as \$a |
	 (\$a | index(\"task.requeue\")) != null and ([\$a[] | select(. == \"task.start\")] | length) >= 2" -- \
	"$gp" audit --limit 200 -o json
check "the task of the default policy is not restarted" \
	"[.[0].audit[] | select(.object == \"task $alert\" and (.action == \"task.restart\" or .action == \"task.requeue\"))] == []" \
	"$tmp/audit.json"
"$gp" alerts --all -o json >"$tmp/alerts.json"
check "... it got the memory-grows warning" \
	"[.[0].alerts[] | select(.kind == \"task.memory-grows\" and .object == \"task $alert\")] | length >= 1" \
	"$tmp/alerts.json"
"$gp" task show "$restart" -o json >"$tmp/task.json"
check "the task says its policy" '.[0].on_memory_growth == "restart"' "$tmp/task.json"
expect "a wrong policy is refused, naming the choices" 2 'alert|restart|alert, restart' -- \
	"$gp" submit --mem 1G --compute 10 --on-memory-growth reboot -- true
"$gp" cancel "$restart" >/dev/null 2>&1
"$gp" cancel "$alert" >/dev/null 2>&1
finish
