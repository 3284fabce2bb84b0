#!/bin/sh
# test-restart-burst.sh — `gpupool server --with-agent` killed (SIGKILL) in
# the middle of a burst of starts: 120 acknowledged tasks, held back by a
# task that holds the four devices, all start in one pass when it is
# cancelled, and the server is killed as soon as the first of them has
# run. The tasks the server had marked running but whose program never
# ran go back to the queue with their submission time and an audit row
# saying so (never `lost`), and run after the restart; those that had
# started are adopted (with their process group, which the killed server
# had not written yet), and none runs twice; a task that ran through the
# crash is adopted as before. Twice: with a cgroup per task, the start
# marks of the tasks that ran removed after the crash (as a gpupool from
# before start marks would leave them: their keepers tell), and with
# process groups alone (--cgroup off), the marks as they are.
# usage: test-restart-burst.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:4
. "$(dirname "$0")/agent-lib.sh"
n=120
# Killed (a timeout), the test still stops what it started: the EXIT trap
# runs (lib.sh, agent-lib.sh).
trap 'exit 143' TERM INT HUP

# burst NAME MARKS SERVER-ARGS...: the scenario, its tasks named NAME (in
# $b: lib.sh's checks use $name); MARKS "forget" removes the start marks
# of the tasks that ran once the server is killed. Each task appends a
# line to its own file in $tmp/ran: two lines, it ran twice.
burst() {
	b=$1 marks=$2
	shift 2
	mkdir -p "$tmp/ran" && chmod 1777 "$tmp/ran"
	server_start "$@"
	long=$("$gp" submit -q --name "$b-long" --mem 64M --compute 1 --wrap \
		'echo run >>'"$tmp"'/ran/$GPUPOOL_TASK_ID; sleep 4; echo done')
	wait_for "$b: a long task runs before the burst" 10 "$long" '.state == "running"'
	blocker=$("$gp" submit -q --name blocker --whole --devices 4 --wrap 'sleep 600')
	wait_for "$b: ... beside a task that holds the four devices" 10 "$blocker" \
		'.state == "running"'
	seq "$n" | xargs -P 8 -I{} "$gp" submit -q --name "$b" --mem 64M --compute 1 --wrap \
		'echo run >>'"$tmp"'/ran/$GPUPOOL_TASK_ID; sleep 2' >"$tmp/ids" 2>"$tmp/ids.err"
	[ "$(wc -l <"$tmp/ids")" -eq "$n" ] && ok "$b: $n submissions acknowledged" ||
		bad "$b: $n submissions acknowledged" "$tmp/ids.err"
	"$gp" task ls -o json >"$tmp/before.json"
	check "$b: they wait for the devices" \
		"[.[0].tasks[] | select(.name == \"$b\" and .state == \"pending\")] | length == $n" \
		"$tmp/before.json"
	ls "$tmp/ran" >"$tmp/ran-earlier"
	"$gp" task cancel "$blocker" >/dev/null
	# The pass that follows the blocker's end starts all of them at once:
	# the server is killed once the first has run.
	for _ in $(seq 2000); do
		[ "$(ls "$tmp/ran" | wc -l)" -gt "$(wc -l <"$tmp/ran-earlier")" ] && break
		sleep 0.005
	done
	kill -9 "$server"
	exited "$b: the server is killed (SIGKILL) in the burst of starts" "$server" 137
	sleep 0.5 # what the keepers that outlived the server run has begun
	ls "$tmp/ran" | grep -vxF -f "$tmp/ran-earlier" >"$tmp/ran-before"
	if [ "$marks" = forget ]; then
		for t in $(cat "$tmp/ran-before"); do rm "$tmp/run/tasks/$t.start"; done
	fi
	server_start "$@"
	"$gp" task ls -o json >"$tmp/after.json"
	"$gp" audit --limit 100000 -o json >"$tmp/audit.json"
	burst_check "$b"
	eventually "$b: after the restart every one of them runs and succeeds" 40 \
		"$tmp/done.json" \
		"[.tasks[] | select(.name == \"$b\" and .state == \"succeeded\")] | length == $n" -- \
		"$gp" task ls -o json
	: >"$tmp/twice"
	for id in $(cat "$tmp/ids") "$long"; do
		lines=$(cat "$tmp/ran/task-$id" 2>/dev/null | wc -l)
		[ "$lines" -eq 1 ] || echo "task $id ran $lines times" >>"$tmp/twice"
	done
	[ ! -s "$tmp/twice" ] && ok "$b: each ran once, none twice" ||
		bad "$b: each ran once, none twice" "$tmp/twice"
	wait_for "$b: the task that ran through the crash is adopted and ends as it should" 10 \
		"$long" '.state == "succeeded"'
	if [ "$("$gp" logs "$long")" = done ]; then ok "$b: ... with its output"; else
		bad "$b: ... with its output"; fi
	stops "$b: the server stops" "$server"
}

# burst_check NAME: what the restart made of the burst's tasks.
burst_check() {
	check "$1: no task is lost at the restart" \
		'[.[0].tasks[] | select(.state == "lost")] | length == 0' "$tmp/after.json"
	jq -r '.audit[] | select(.action == "task.requeue" and (.detail | test("never started"))) |
		.object | sub("task "; "")' "$tmp/audit.json" | grep -xF -f "$tmp/ids" >"$tmp/requeued"
	[ -s "$tmp/requeued" ] &&
		ok "$1: the tasks whose program never ran are queued again, each with an audit row" ||
		bad "$1: the tasks whose program never ran are queued again, each with an audit row" \
			"$tmp/audit.json"
	echo "    ($(wc -l <"$tmp/ran-before") of $n had run before the restart;" \
		"$(wc -l <"$tmp/requeued") queued again)"
	: >"$tmp/requeued-ran"
	for id in $(cat "$tmp/requeued"); do
		grep -qx "task-$id" "$tmp/ran-before" && echo "$id" >>"$tmp/requeued-ran"
	done
	[ ! -s "$tmp/requeued-ran" ] && ok "$1: ... and none of them had run before the restart" ||
		bad "$1: ... and none of them had run before the restart" "$tmp/requeued-ran"
	jq --slurpfile before "$tmp/before.json" -n \
		'[$before[0].tasks[] | {key: (.id | tostring), value: .created}] | from_entries' \
		>"$tmp/created.json"
	check "$1: ... they keep their submission time (their place in the queue)" \
		".[1] as \$c | [.[0].tasks[] | select(.name == \"$1\") | .created == \$c[.id | tostring]]
		 | all" "$tmp/after.json" "$tmp/created.json"
	check "$1: those that had started and still run are adopted, with their process group" \
		"[.[0].tasks[] | select(.name == \"$1\" and .state == \"running\")] as \$r |
		 (\$r | length > 0) and (\$r | all(.pid > 0))" "$tmp/after.json"
}

burst cgroups forget
rm -rf "$tmp/ran"
burst groups keep --cgroup off
finish
