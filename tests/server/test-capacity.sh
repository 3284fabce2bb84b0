#!/bin/sh
# test-capacity.sh — the server keeps its books with the scheduler's own
# rules, on two simulated T4s: a live change of a running task's share
# (`gpupool task set --compute`) passes the capacity and quota rules of a
# submission or is refused with 409 and the reason (the issue's
# reproduction: a tenant with one card's quota ran five 20 % tasks and set
# each to 100 %); a running task that its device cannot hold (its row
# changed while no server watched) still counts, and an alert says so;
# a submission that no node could ever hold is refused at once, with the
# most it could ask for.
# usage: test-capacity.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
db=$tmp/state/gpupool.db
server_start --policy binpack --sample-ms 200

# running ID...: waits until every task ID runs.
running() {
	for _ in $(seq 50); do
		n=0
		for id in "$@"; do
			"$gp" task show "$id" -o json | jq -e '.state == "running"' >/dev/null && n=$((n + 1))
		done
		[ "$n" -eq $# ] && return 0
		sleep 0.1
	done
	return 1
}

# held: the compute the slices hold on each device, "20 100" (the meter's
# numbers, updated every tick).
held() {
	"$gp" device ls -o json | jq -r '[.devices[].allocated_compute_pct] | map(tostring) | join(" ")'
}

# device_of ID: the UUID of the device task ID runs on.
device_of() {
	"$gp" task show "$1" -o json | jq -r .placement
}

# cancel_all: cancels every task, and waits until none runs.
cancel_all() {
	"$gp" task ls -o json | jq -r '.tasks[] | select(.state == "running" or .state == "pending") | .id' |
		while read -r id; do "$gp" task cancel "$id" >/dev/null; done
	for _ in $(seq 100); do
		[ "$("$gp" task ls -o json | jq '[.tasks[] | select(.state == "running")] | length')" = 0 ] &&
			return 0
		sleep 0.1
	done
}

# ---- a live change within the quota and the device, or refused --------------------
one=$("$gp" tenant add one --mem-guaranteed 16G --compute-guaranteed 100 -o json | jq -r .token)
ids=""
for n in 1 2 3 4 5; do ids="$ids $(as "$one" submit -q --mem 1G --compute 20 -- sleep 60)"; done
# shellcheck disable=SC2086
running $ids && ok "five 20 % tasks of a one-card quota run" || bad "five 20 % tasks run" "$tmp/server.log"
refused=0
for id in $ids; do
	if as "$one" task set "$id" --compute 100 >"$tmp/set.out" 2>&1; then
		:
	elif grep -q "cannot have 100 % of its device: over quota: .* other tasks hold 80 % of its 100 % .*ask for at most 20 %" \
		"$tmp/set.out"; then
		refused=$((refused + 1))
	fi
done
[ "$refused" -eq 5 ] && ok "none of them may go to 100 %: over the quota, with the most it may ask for" ||
	bad "none of them may go to 100 % (refused $refused of 5)" "$tmp/set.out"
"$gp" task ls -o json >"$tmp/tasks.json"
check "their shares are as they were" \
	'[.[0].tasks[] | select(.state == "running") | .compute_pct] == [20, 20, 20, 20, 20]' "$tmp/tasks.json"
sleep 0.5
expect "the T4 holds 100 %, not 500 %" 0 "^100 0\$" -- held
first=$(echo $ids | cut -d' ' -f1)
expect "a share that goes down always may" 0 "compute" -- as "$one" task set "$first" --compute 10
expect "and back up, within the room it left" 0 "compute" -- as "$one" task set "$first" --compute 20
"$gp" audit -o json >"$tmp/audit.json"
check "a refused change writes no audit row" \
	'[.[0].audit[] | select(.action == "task.set")] | length == 2' "$tmp/audit.json"
cancel_all

# ---- a running task its device cannot hold still counts ----------------------------
a=$("$gp" submit -q --mem 1G --compute 50 -- sleep 60)
b=$("$gp" submit -q --mem 1G --compute 50 -- sleep 60)
running "$a" "$b" || bad "two 50 % tasks run" "$tmp/server.log"
first=$(device_of "$a")
# What the books say changes while no server watches (by hand, or a
# change made before a check): b holds 90 % of the T4 beside a's 50 %.
# The server reads the books once, at its start (it keeps them in memory
# and writes every change of its own first), and adopts both as they say.
kill "$server"
wait "$server"
sqlite3 "$db" "PRAGMA busy_timeout=5000; UPDATE tasks SET compute_pct = 90 WHERE id = $b" >/dev/null
server_start --policy binpack --sample-ms 200
running "$a" "$b" || bad "both run on, adopted by the next server" "$tmp/server.log"
c=$("$gp" submit -q --mem 1G --compute 50 -- sleep 60)
d=$("$gp" submit -q --mem 1G --compute 50 -- sleep 60)
running "$c" "$d" || bad "two more 50 % tasks run" "$tmp/server.log"
[ "$(device_of "$c")" != "$first" ] && [ "$(device_of "$d")" != "$first" ] &&
	ok "the overcommitted task still counts: nothing more goes to its T4" ||
	bad "the overcommitted task still counts: nothing more goes to its T4" "$tmp/server.log"
"$gp" alerts -o json >"$tmp/alerts.json"
check "an alert says the task cannot be counted where it runs, and what to do" \
	".[0].alerts[] | select(.kind == \"task.unplaced\" and .object == \"task $b\" and .cleared == null) |
	 .message | test(\"has 50 % of compute .* short of its 90 %.*gpupool task set $b --compute\")" \
	"$tmp/alerts.json"
expect "past the device, a change is refused with the room there is (no quota in the way)" 1 \
	"no room: its device has 0 % of compute free beside its own 50 %.*ask for at most 50 %" -- \
	"$gp" task set "$c" --compute 60
expect "the overcommitted task's share may not go up" 1 "may go down, not up" -- \
	"$gp" task set "$b" --compute 95
expect "it may go down" 0 "compute" -- "$gp" task set "$b" --compute 50
sleep 0.5
"$gp" alerts -o json >"$tmp/alerts.json"
check "once it fits again, the alert is cleared" \
	"[.[0].alerts[] | select(.kind == \"task.unplaced\" and .cleared == null)] | length == 0" \
	"$tmp/alerts.json"
cancel_all

# ---- what no node could ever hold is refused at submission -------------------------------
expect "more devices than the node has: refused, with the most" 1 \
	'--devices: this pool.s largest node has 2 usable devices( for cuda)?; ask for at most 2' -- \
	"$gp" submit --mem 1G --compute 10 --devices 3 -- true
expect "so is a gang of whole devices" 1 "ask for at most 2" -- \
	"$gp" submit --whole --devices 4 -- true
expect "more memory than the largest device: refused, with the most" 1 \
	'--mem: this pool.s largest device( for cuda)? has 15360 MiB; ask for at most 15360' -- \
	"$gp" submit --mem 16G --compute 10 -- true
expect "two devices are fine" 0 '^[0-9]+$' -- "$gp" submit -q --mem 1G --compute 10 --devices 2 -- true
"$gp" task ls -o json >"$tmp/tasks.json"
check "the refused ones were never stored" '.[0].tasks | map(select(.command == "true")) | length == 1' \
	"$tmp/tasks.json"

# Without the agent, the core's own bound: 16 devices on one node.
GPUPOOL_SOCKET=$tmp/bare.sock "$gp" server --db "$tmp/bare/gpupool.db" >"$tmp/bare.log" 2>&1 &
for _ in $(seq 50); do
	GPUPOOL_SOCKET=$tmp/bare.sock GPUPOOL_TOKEN_FILE=$tmp/bare/admin.token "$gp" task ls \
		>/dev/null 2>&1 && break
	sleep 0.1
done
curl -s --unix-socket "$tmp/bare.sock" -H "Authorization: Bearer $(cat "$tmp/bare/admin.token")" \
	-H 'Content-Type: application/json' http://x/v1/tasks -d '{"command": "true", "mem_mib": 1024, "compute_pct": 10, "devices": 17}' \
	>"$tmp/bare.json"
check "a server without the agent refuses more than 16 devices, the core's bound" \
	'.[0].error | test("field \"devices\" must be a whole number from 1 to 16")' "$tmp/bare.json"
expect "and so does the client" 2 "devices" -- "$gp" submit --mem 1G --compute 10 --devices 17 -- true
finish
