#!/bin/sh
# test-placement.sh — the server's placement policy is the configuration's
# (`--policy NAME`, YAML `policy`), any of the core's, on two simulated
# T4s: spread puts two small tasks on two devices, binpack on one; a bad
# name is refused with the list. fgd places against a target workload
# made from the pool's own recent tasks, made again every
# --workload-refresh: with its built-in target (whole and half devices) a
# 30 % task joins another 30 % one, and once the pool has run 70 % tasks
# it keeps that device's 70 % free for them.
# usage: test-placement.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"

# ---- the option and the file ---------------------------------------------------------
expect "a bad name is refused, with the policies there are" 2 \
	'--policy "best" is not a policy; give one of: random, dotprod, .*, default \(gpupool policies' -- \
	"$gp" server --db "$tmp/x.db" --with-agent --policy best
printf 'db: %s\nwith_agent: true\npolicy: spread\n' "$tmp/x.db" >"$tmp/spread.yaml"
expect "YAML policy: spread" 0 "^  policy +spread\$" -- \
	"$gp" server --config "$tmp/spread.yaml" --check-config
printf 'db: %s\npolicy: packing\n' "$tmp/x.db" >"$tmp/bad.yaml"
expect "a bad name in the file: FILE:LINE:COLUMN, and the list" 2 \
	"$tmp/bad.yaml:2:9: key \"policy\": \"packing\" is not a policy; give one of: random, " -- \
	"$gp" server --config "$tmp/bad.yaml" --check-config
expect "the flag overrides the file; fgd's target workload is said" 0 \
	"^  policy +fgd, against the shapes of the tasks of the last 3600 s, made again every 60 s\$" -- \
	"$gp" server --config "$tmp/spread.yaml" --policy fgd --workload-window 3600 \
	--workload-refresh 60 --check-config
expect "a window under a minute is refused" 2 "--workload-window \"5\" must be a whole number from 60" -- \
	"$gp" server --db "$tmp/x.db" --workload-window 5 --check-config

# device ID: the index of the device task ID runs on (its placement's UUID).
device() {
	uuid=$("$gp" task show "$1" -o json | jq -r .placement)
	"$gp" device ls -o json | jq --arg u "$uuid" '.devices | map(.uuid) | index($u)'
}

# place POLICY: where two 10 % tasks go under POLICY, "0 1" or "0 0".
place() {
	rm -rf "$tmp/state"
	server_start --policy "$1"
	x=$("$gp" submit -q --mem 1G --compute 10 -- sleep 30)
	y=$("$gp" submit -q --mem 1G --compute 10 -- sleep 30)
	for _ in $(seq 50); do
		"$gp" task show "$y" -o json | jq -e '.state == "running"' >/dev/null && break
		sleep 0.1
	done
	echo "$(device "$x") $(device "$y")"
	cleanup_hook
	kill "$server"
	wait "$server"
}
expect "spread puts two small tasks on two devices" 0 "^0 1\$" -- place spread
expect "binpack on one" 0 "^0 0\$" -- place binpack
expect "the server said which policy it schedules with" 0 "scheduling with policy binpack" -- \
	cat "$tmp/server.log"

# ---- fgd against the pool's own workload ------------------------------------------------
rm -rf "$tmp/state"
server_start --policy fgd --workload-refresh 2
holder=$("$gp" submit -q --mem 1G --compute 30 -- sleep 60)
wait_for "a 30 % task runs" 5 "$holder" '.state == "running"'
x=$("$gp" submit -q --mem 1G --compute 30 -- sleep 60)
wait_for "another 30 % task runs" 5 "$x" '.state == "running"'
[ "$(device "$x")" = "$(device "$holder")" ] &&
	ok "with the built-in target (whole and half devices), it joins the first" ||
	bad "with the built-in target, it joins the first" "$tmp/server.log"
"$gp" task cancel "$x" >/dev/null
for n in 1 2 3 4 5 6; do "$gp" submit -q --mem 1G --compute 70 -- true >/dev/null; done
sleep 3
expect "the target is made again from the pool's tasks, and said" 0 \
	"policy fgd: target workload of the last 86400 s of tasks: 2 shapes: 1 x 70 % (of Tesla T4 )?\\(75 %\\), 1 x 30 % (of Tesla T4 )?\\(25 %\\)" -- \
	cat "$tmp/server.log"
y=$("$gp" submit -q --mem 1G --compute 30 -- sleep 60)
wait_for "a third 30 % task runs" 5 "$y" '.state == "running"'
[ "$(device "$y")" != "$(device "$holder")" ] &&
	ok "against the pool's 70 % tasks, it keeps the first device's 70 % free for one" ||
	bad "against the pool's 70 % tasks, it keeps the first device's 70 % free" "$tmp/server.log"
finish
