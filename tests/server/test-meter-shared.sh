#!/bin/sh
# test-meter-shared.sh — metering on a card whose library keeps no
# per-process figures (Ascend's DCMI, simulated): a task's used time is
# the card's busy share over the sampling span, and a task that started in
# the middle of a span is charged only its part of it, not the idle
# seconds before its start. One hard 15 % task, started 6 s into a 10 s
# sampling: the usage records' used time stays within the device time the
# simulated card itself counts (simctl busy) — before, it came to about
# 130 % of it.
# usage: test-meter-shared.sh PATH/TO/gpupool PATH/TO/gpuload PATH/TO/simctl
set -u
gp=$1 gl=$2 simctl=$3
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=ascend-910b-64g:1
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 10000 || { finish; exit 1; }
admin=$(cat "$tmp/state/admin.token")

sleep 6
b0=$("$simctl" busy 0)
id=$("$gp" submit -q --runtime acl --mem 8G --compute 15 -- "$tmp/bin/gpuload" burn --runtime acl \
	--duration 4)
wait_for "a hard 15 % task burns 4 s on the simulated Ascend card" 60 "$id" '.state == "succeeded"'
b1=$("$simctl" busy 0)
eventually "its usage is recorded" 30 "$tmp/usage.json" \
	"[.usage[] | select(.task == $id)] | length > 0" -- \
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $admin" \
	"http://gpupool/v1/usage?limit=1000"
used=$(jq "[.usage[] | select(.task == $id) | .used_ms] | add | floor" "$tmp/usage.json")
card=$(( (b1 - b0) / 1000 ))
echo "used $used ms by the records, the card's own count $card ms" >"$tmp/figures.txt"
cat "$tmp/figures.txt"
# The card's count is the truth; the records read a 1 s utilization window
# at each sampling, so they may differ from it by a little either way.
if [ "$card" -gt 0 ] && [ "$used" -le $((card * 110 / 100 + 100)) ]; then
	ok "the records charge no idle time from before its start ($used ms, the card $card ms)"
else
	bad "the records charge more than the card gave" "$tmp/figures.txt" "$tmp/usage.json"
fi
finish
