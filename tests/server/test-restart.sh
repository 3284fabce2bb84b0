#!/bin/sh
# test-restart.sh — `gpupool server --with-agent` killed with SIGKILL while
# a task runs: the restarted server marks the task lost, and stops its
# processes (a new server cannot watch them, and they would hold their
# slice unaccounted); a task whose processes had already gone is only
# marked lost.
# usage: test-restart.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"

server_start
long=$("$gp" submit -q --mem 1G --compute 10 -- sleep 60)
short=$("$gp" submit -q --mem 1G --compute 10 -- sleep 60)
for _ in $(seq 50); do
	[ "$("$gp" task ls -o json | jq '[.tasks[] | select(.state == "running")] | length')" = 2 ] &&
		break
	sleep 0.1
done
pid_long=$("$gp" task show "$long" -o json | jq .pid)
pid_short=$("$gp" task show "$short" -o json | jq .pid)
kill -9 "$server"
kill -9 -"$pid_short"   # this one ends while no server watches
sleep 0.2
server_start
"$gp" task show "$long" -o json >"$tmp/long.json"
"$gp" task show "$short" -o json >"$tmp/short.json"
check "a task still running at restart is lost, its processes stopped" \
	'.[0].state == "lost" and (.[0].reason | test("processes were stopped"))' "$tmp/long.json"
sleep 0.2
# Killed processes may linger as zombies until whoever inherited them
# reaps them: count only the living.
ps -e -o pgid=,stat=,args= | awk -v g="$pid_long" '$1 == g && $2 !~ /^Z/' >"$tmp/alive"
if [ -s "$tmp/alive" ]; then
	bad "its processes are gone" "$tmp/alive"
else
	ok "its processes are gone"
fi
check "a task whose processes had ended is only marked lost" \
	'.[0].state == "lost" and (.[0].reason | test("not re-adopted"))' "$tmp/short.json"
finish
