#!/bin/sh
# test-overcommit.sh — `gpupool server --overcommit`: with T4=1.5 one
# simulated T4 takes three 50 % tasks at once (memory still adds up to
# at most the device's), a fourth waits; bad ratios are refused.
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
jq -r '.tasks[] | select(.state == "running") | .pid' "$tmp/tasks.json" |
	while read -r pid; do kill -9 -"$pid" 2>/dev/null; done
finish
