#!/bin/sh
# test-restart.sh — `gpupool server --with-agent` stopped while tasks run,
# and started again: what still runs is adopted (its processes, its log,
# its end), what ended meanwhile is recorded as it ended (its keeper left
# the code), and what is really gone is lost. Both a graceful stop
# (SIGTERM, as an upgrade does) and a crash (SIGKILL).
# usage: test-restart.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"

running() { # ID: waits (5 s) until the task runs
	for _ in $(seq 50); do
		"$gp" task show "$1" -o json | jq -e '.state == "running"' >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

server_start
ticker=$("$gp" submit -q --mem 1G --compute 10 -- \
	sh -c 'for i in $(seq 40); do echo tick $i; sleep 0.1; done; exit 3')
brief=$("$gp" submit -q --mem 1G --compute 10 -- sh -c 'sleep 1; exit 0')
doomed=$("$gp" submit -q --mem 1G --compute 10 -- sleep 60)
running "$ticker" && running "$brief" && running "$doomed" || bad "three tasks run" "$tmp/server.log"
pid_ticker=$("$gp" task show "$ticker" -o json | jq .pid)
pid_doomed=$("$gp" task show "$doomed" -o json | jq .pid)

# A graceful stop: the tasks run on.
kill "$server"
exited "the server stops on SIGTERM while tasks run" "$server"
kill -9 -"$pid_doomed" # this one is really gone, keeper and all
sleep 1.5              # the brief one ends while no server watches
if kill -0 "$pid_ticker" 2>/dev/null; then
	ok "a graceful stop leaves the tasks running"
else
	bad "a graceful stop leaves the tasks running"
fi
restarted=$(date +%s%3N)
server_start --sample-ms 300
"$gp" task show "$ticker" -o json >"$tmp/ticker.json"
"$gp" task show "$brief" -o json >"$tmp/brief.json"
"$gp" task show "$doomed" -o json >"$tmp/doomed.json"
check "a task still running is adopted: running, its pid the same" \
	".[0].state == \"running\" and .[0].pid == $pid_ticker" "$tmp/ticker.json"
check "a task that ended meanwhile is recorded as it ended" \
	'.[0].state == "succeeded" and (.[0].reason | test("while no server watched it"))' \
	"$tmp/brief.json"
check "a task really gone is lost" \
	'.[0].state == "lost" and (.[0].reason | test("how is not known"))' "$tmp/doomed.json"
"$gp" audit -o json >"$tmp/audit.json"
check "the adoption is in the audit log" \
	".[0].audit | any(.action == \"task.adopt\" and .object == \"task $ticker\")" "$tmp/audit.json"
wait_for "the adopted task ends with its own code" 10 "$ticker" \
	'.state == "failed" and .exit_code == 3 and .reason == "exited with code 3"'
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
	http://gpupool/v1/usage >"$tmp/usage.json"
check "... and it is metered again from its adoption" \
	"[.[0].usage[] | select(.task == $ticker and .start_ms >= $restarted)] | length > 0" \
	"$tmp/usage.json"
"$gp" logs "$ticker" >"$tmp/ticks.txt"
seq 40 | sed 's/^/tick /' >"$tmp/ticks.want"
if cmp -s "$tmp/ticks.txt" "$tmp/ticks.want"; then
	ok "its log has every line, those written while no server read it too"
else
	bad "its log has every line, in order" "$tmp/ticks.txt"
fi

# A crash: the same.
crash=$("$gp" submit -q --mem 1G --compute 10 -- sh -c 'sleep 1.5; echo done')
running "$crash" || bad "the crash's task runs" "$tmp/server.log"
kill -9 "$server"
exited "the server is killed (SIGKILL)" "$server" 137
server_start
wait_for "after a crash, a running task is adopted and ends as it should" 10 "$crash" \
	'.state == "succeeded"'
if [ "$("$gp" logs "$crash")" = done ]; then ok "... with its output"; else bad "... with its output"; fi

# Nothing of the doomed task is left, and no process of a task either.
ps -e -o pgid=,stat=,args= | awk -v g="$pid_doomed" '$1 == g && $2 !~ /^Z/' >"$tmp/alive"
if [ -s "$tmp/alive" ]; then bad "the lost task's processes are gone" "$tmp/alive"; else
	ok "the lost task's processes are gone"; fi
finish
