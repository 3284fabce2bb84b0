#!/bin/sh
# test-mig-server.sh — `gpupool server --with-agent` with a simulated
# A100-80GB in MIG mode beside a plain T4: the card is scheduled as its
# MIG profiles (partition set A100-MIG), and each task placed on it gets a
# MIG instance of its own, made when it starts and destroyed when it ends
# (dynamic partitions): the smallest profile that holds its share, at the
# start that fragments the card least; the task sees the instance as its
# device (CUDA_VISIBLE_DEVICES=MIG-…, the instance's memory and nothing
# more); a 4g.40gb waits while a 1g.10gb blocks its only start and runs
# once that one's task ends; a live change of a partition's share is
# refused with the reason; a whole card is a 7g.80gb; a partition made by
# hand is left alone and its slices are not given to anyone; across a
# restart a running task keeps its instance, and the instance of a task
# that died meanwhile is destroyed. A card cut by hand before the server
# starts is used as cut (static): each instance a device of slices.
# usage: test-mig-server.sh PATH/TO/gpupool MIG-PROBE GPULOAD
set -u
gp=$1 probe=$2 gl=$3
top=$(cd "$(dirname "$0")/../../.." && pwd)
. "$top/tests/lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g-mig:1,t4-16g:1
. "$top/tests/server/agent-lib.sh"

# parts: the MIG instances on card 0 now, as [[profile id, start], …]
# sorted, into $tmp/parts.json (with their UUIDs).
parts() {
	"$probe" partitions 0 >"$tmp/parts.json" 2>&1
	jq -c 'map([.profile_id, .start]) | sort' "$tmp/parts.json" 2>/dev/null ||
		cat "$tmp/parts.json"
}

# parts_are NAME WANT SECONDS: waits until parts prints WANT.
parts_are() {
	for _ in $(seq $(($3 * 10))); do
		[ "$(parts)" = "$2" ] && { ok "$1"; return 0; }
		sleep 0.1
	done
	bad "$1: $(parts), not $2" "$tmp/parts.json"
}

server_start --sample-ms 300
"$gp" device ls -o json >"$tmp/devices.json"
check "the MIG card is scheduled as partition set A100-MIG, the T4 as slices" \
	'.[0].devices | (.[] | select(.name | test("A100")) | .partition_set == "A100-MIG" and .compatible)
	 and (.[] | select(.name | test("T4")) | .partition_set == null)' "$tmp/devices.json"

# A 30 GiB, 40 % share: a 3g.40gb, at memory slice 4 (4g.40gb's only start
# stays free), seen by the task as a 40448 MiB device of its own.
big=$("$gp" submit -q --model A100 --mem 30G --compute 40 -- \
	sh -c 'echo "visible=$CUDA_VISIBLE_DEVICES"; exec "$0" alloc --chunk-mib 1024 --hold 120 --json' "$gl")
wait_for "the 30 GiB task runs" 10 "$big" '.state == "running"'
check "on the A100 at memory slice 4" '.[0].placement | test("^GPU-[0-9a-f-]+@4$")' "$tmp/task.json"
parts_are "a 3g.40gb (profile 9) made at slice 4" '[[9,4]]' 5
u_big=$(jq -r '.[0].uuid' "$tmp/parts.json")
for _ in $(seq 50); do grep -q allocated_mib "$tmp/big.log" 2>/dev/null && break
	"$gp" logs "$big" >"$tmp/big.log" 2>&1; sleep 0.1; done
if grep -qx "visible=$u_big" "$tmp/big.log"; then ok "the task sees its instance: CUDA_VISIBLE_DEVICES=$u_big"
else bad "the task sees its instance" "$tmp/big.log"; fi
grep '^{' "$tmp/big.log" >"$tmp/big.json"
check "its memory is the instance's: 39 GiB fit in 40448 MiB, then out of memory" \
	'.[0] | .total_mib == 40448 and .allocated_mib == 39936 and .oom' "$tmp/big.json"
[ -e "$tmp/run/device-$u_big.limits" ] && ok "the instance has a managed region" ||
	bad "the instance has a managed region: no $tmp/run/device-$u_big.limits"

# 8 GiB: a 1g.10gb, below slice 4; then a 40 GiB task needs a 4g.40gb,
# whose only start the 1g.10gb blocks: it waits.
small=$("$gp" submit -q --model A100 --mem 8G --compute 10 -- sleep 120)
wait_for "the 8 GiB task runs on a 1g.10gb" 10 "$small" \
	'.state == "running" and (.placement | test("@[0-3]$"))'
parts_are "a 1g.10gb (profile 19) beside the 3g.40gb" \
	"[[9,4],[19,$("$gp" task show "$small" -o json | jq -r '.placement | sub(".*@"; "")')]]" 5
u_small=$(jq -r '.[] | select(.profile_id == 19) | .uuid' "$tmp/parts.json")
four=$("$gp" submit -q --model A100 --mem 40G --compute 50 -- sleep 120)
sleep 1
"$gp" task show "$four" -o json >"$tmp/four.json"
check "a 4g.40gb waits: its only start is taken" '.[0].state == "pending"' "$tmp/four.json"

expect "a partition's share cannot change live" 1 'hardware partition, whose size is fixed' -- \
	"$gp" task set "$big" --compute 60

"$gp" task cancel "$small" >/dev/null
wait_for "the 4g.40gb task runs once the 1g.10gb's task ended" 10 "$four" \
	'.state == "running" and (.placement | test("@0$"))'
parts_are "the 1g.10gb destroyed, a 4g.40gb (profile 5) made at slice 0" '[[5,0],[9,4]]' 5
[ -e "$tmp/run/device-$u_small.region" ] &&
	bad "the destroyed instance's region files are removed" || ok "the destroyed instance's region files are removed"
"$gp" task cancel "$four" >/dev/null
parts_are "its 4g.40gb destroyed when it is cancelled" '[[9,4]]' 5

# Restart: the 3g.40gb task runs on; one on a 1g.10gb dies while no server
# watches. The first keeps its instance, the second's is destroyed.
doomed=$("$gp" submit -q --model A100 --mem 8G --compute 10 -- sleep 120)
wait_for "a task on a 1g.10gb runs" 10 "$doomed" '.state == "running"'
pid_doomed=$(jq .pid "$tmp/task.json")
parts_are "two instances before the restart" "[[9,4],[19,$(jq -r '.placement | sub(".*@"; "")' "$tmp/task.json")]]" 5
kill "$server"
exited "the server stops" "$server"
kill -9 -"$pid_doomed"
server_start --sample-ms 300
wait_for "the 3g.40gb task is adopted, running" 5 "$big" '.state == "running"'
wait_for "the one that died is lost" 5 "$doomed" '.state == "lost"'
parts_are "its instance destroyed; the adopted task's kept" '[[9,4]]' 5
"$gp" task cancel "$big" >/dev/null
parts_are "the adopted task's instance destroyed at its end" '[]' 5

# A partition made by hand is left alone, and its slices are nobody's: a
# whole card waits until it is gone, then gets a 7g.80gb.
runs "a 1g.10gb made by hand at slice 6" "$tmp/hand.json" -- "$probe" create 0 19 6
u_hand=$(jq -r .uuid "$tmp/hand.json")
sleep 3 # the agent looks every 2 s
whole=$("$gp" submit -q --model A100 --whole -- sh -c 'echo "visible=$CUDA_VISIBLE_DEVICES"; sleep 2')
sleep 1
"$gp" task show "$whole" -o json >"$tmp/whole.json"
check "a whole card waits while a partition made by hand is there" '.[0].state == "pending"' \
	"$tmp/whole.json"
parts_are "the hand-made partition is left alone" '[[19,6]]' 1
runs "the hand-made partition destroyed by hand" "$tmp/gone.json" -- "$probe" destroy 0 "$u_hand"
wait_for "then the whole card's task runs" 10 "$whole" '.state != "pending"'
"$gp" logs "$whole" >"$tmp/whole.log" 2>&1
wait_for "and ends" 10 "$whole" '.state == "succeeded"'
"$gp" logs "$whole" >"$tmp/whole.log" 2>&1
grep -q '^visible=MIG-' "$tmp/whole.log" && ok "a whole card is a MIG instance to its task" ||
	bad "a whole card is a MIG instance to its task" "$tmp/whole.log"
parts_are "its 7g.80gb destroyed at its end" '[]' 5

# Static use: a card cut by hand before the server starts is used as it
# was cut, each instance a device of its own shared by slices.
kill "$server"
exited "the server stops" "$server"
runs "a 4g.40gb made by hand at slice 0" "$tmp/h4.json" -- "$probe" create 0 5 0
runs "a 3g.40gb made by hand at slice 4" "$tmp/h3.json" -- "$probe" create 0 9 4
u3=$(jq -r .uuid "$tmp/h3.json")
server_start --sample-ms 300
"$gp" device ls -o json >"$tmp/devices.json"
check "the card cut by hand is its two instances, each a device of slices" \
	".[0].devices | length == 3 and ([.[] | select(.name | test(\"MIG\")) | [.name, .memory_total_mib, .partition_set]] | sort)
	 == [[\"NVIDIA A100-SXM4-80GB MIG 3g.40gb\", 40448, null], [\"NVIDIA A100-SXM4-80GB MIG 4g.40gb\", 40448, null]]
	 and (.[] | select(.name | test(\"3g\")) | .uuid) == \"$u3\"" "$tmp/devices.json"
s1=$("$gp" submit -q --model "MIG 3g" --mem 16G --compute 50 -- \
	sh -c 'echo "visible=$CUDA_VISIBLE_DEVICES"; exec "$0" alloc --chunk-mib 1024 --hold 120 --json' "$gl")
s2=$("$gp" submit -q --model "MIG 3g" --mem 16G --compute 50 -- "$gl" alloc --chunk-mib 1024 --hold 120 --json)
wait_for "two 16 GiB slices run on the 3g.40gb instance" 10 "$s1" ".state == \"running\" and .placement == \"$u3\""
wait_for "... both" 10 "$s2" ".state == \"running\" and .placement == \"$u3\""
for _ in $(seq 50); do "$gp" logs "$s2" >"$tmp/s2.log" 2>&1; grep -q allocated_mib "$tmp/s2.log" && break; sleep 0.1; done
"$gp" logs "$s1" >"$tmp/s1.log" 2>&1
grep -qx "visible=$u3" "$tmp/s1.log" && ok "a slice's task sees the instance" || bad "a slice's task sees the instance" "$tmp/s1.log"
grep '^{' "$tmp/s2.log" >"$tmp/s2.json"
check "each slice holds 16 GiB of the instance: the 17th is out of memory" \
	'.[0] | .allocated_mib == 16384 and .oom' "$tmp/s2.json"
s3=$("$gp" submit -q --model "MIG 4g" --mem 8G --compute 50 -- "$gl" alloc --mib 1024 --hold 120 --json)
wait_for "a slice runs on the 4g.40gb instance beside them" 10 "$s3" '.state == "running"'
sleep 1.5 # three rounds of the verifier
"$gp" task ls -o json >"$tmp/ls.json"
check "the verifier sees each instance's processes apart: all three run on" \
	"[.[0].tasks[] | select(.id == $s1 or .id == $s2 or .id == $s3) | .state] == [\"running\",\"running\",\"running\"]" \
	"$tmp/ls.json"
"$gp" task cancel "$s1" >/dev/null
"$gp" task cancel "$s2" >/dev/null
"$gp" task cancel "$s3" >/dev/null
wait_for "the slices end" 10 "$s3" '.state == "cancelled"'
parts_are "the instances made by hand stay" '[[5,0],[9,4]]' 1
finish
