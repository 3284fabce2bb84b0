#!/bin/sh
# test-overcommit.sh — `gpupool server --overcommit`: with T4=1.5 one
# simulated T4 takes three 50 % tasks at once (memory still adds up to
# at most the device's), a fourth waits; bad ratios are refused. And a
# device takes at most as many slices as its region tracks (32): a 33rd
# tiny task waits, saying so.
# usage: test-overcommit.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"

expect "a ratio over 1.5 is refused" 2 "1.0 to 1.5" -- \
	"$gp" server --db "$tmp/x.db" --with-agent --overcommit T4=2
expect "a ratio that is not a number is refused" 2 "MODEL=RATIO" -- \
	"$gp" server --db "$tmp/x.db" --with-agent --overcommit fast

server_start --overcommit 1.0 --overcommit T4=1.5
ids=""
for n in 1 2 3 4; do ids="$ids $("$gp" submit -q --mem 3G --compute 50 -- sleep 30)"; done
sleep 1.5
"$gp" task ls -o json >"$tmp/tasks.json"
check "three 50 % tasks run at once on a T4 overcommitted 1.5 times" \
	'.[0].tasks | map(select(.state == "running")) | length == 3' "$tmp/tasks.json"
check "the fourth waits, saying why" \
	'.[0].tasks | map(select(.state == "pending" and (.reason | test("no device fits")))) | length == 1' \
	"$tmp/tasks.json"
"$gp" task ls -o json | jq -r '.tasks[] | select(.state == "running" or .state == "pending") | .id' |
	while read -r id; do "$gp" task cancel "$id" >/dev/null; done
for _ in $(seq 50); do
	[ "$("$gp" task ls -o json | jq '[.tasks[] | select(.state == "running")] | length')" = 0 ] &&
		break
	sleep 0.1
done
for n in $(seq 33); do "$gp" submit -q --mem 64M --compute 1 -- sleep 30 >/dev/null; done
sleep 1.5
"$gp" task ls -o json >"$tmp/tasks.json"
check "a device takes 32 slices, as many as its region tracks" \
	'.[0].tasks | map(select(.state == "running")) | length == 32' "$tmp/tasks.json"
check "the 33rd waits, saying why" \
	'.[0].tasks | map(select(.state == "pending" and (.reason | test("hold 32 slices, the most a device.s region tracks")))) | length == 1' \
	"$tmp/tasks.json"
finish
