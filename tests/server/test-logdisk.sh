#!/bin/sh
# test-logdisk.sh — the database's disk is the database's: task logs on
# small filesystems (tmpfs of 20 MiB, as root), on one simulated T4.
#   1. The default layout (logs/ beside the database) on a small
#      filesystem, with --log-free-min 6M: a task that writes without end
#      stops at the floor (its output dropped, with an alert saying so),
#      the database keeps taking writes (submissions), new tasks wait in
#      the queue saying why; once the writer is cancelled its log, the
#      oldest of an ended task, is removed for the floor, and the waiting
#      tasks run and succeed. `gpupool logs` of it says it was removed.
#   2. Logs on a filesystem of their own, filled to the last byte, no
#      floor: submissions are acknowledged (the database is elsewhere),
#      their logs cannot be opened, and they wait (queued again, never
#      failed); once space is freed they run, each once, and succeed.
#   3. A total cap (--log-total-max 1M): the oldest logs of ended tasks
#      are removed first until the logs fit; a running task's log stays
#      however old; `gpupool logs` of a removed one says so.
# usage: test-logdisk.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
needs_root "the filesystems of this test are mounted as root"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"

# The filesystems go even when the test fails: the server first (its
# files are open there), then the tasks it left.
mounts=
cleanup_hook() {
	if [ -n "${server:-}" ] && kill -0 "$server" 2>/dev/null; then
		"$gp" task ls -o json 2>/dev/null |
			jq -r '.tasks[] | select(.state == "running") | .pid' |
			while read -r pid; do kill -9 -"$pid" 2>/dev/null; done
		kill -9 "$server" 2>/dev/null
		wait "$server" 2>/dev/null
	fi
	for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
}

# Killed (a timeout), the test still unmounts: the EXIT trap runs.
trap 'exit 143' TERM INT HUP

# small DIR: a 20 MiB tmpfs there.
small() {
	mkdir -p "$1"
	if ! mount -t tmpfs -o size=20m,mode=0700 tmpfs "$1"; then
		echo "skipped: cannot mount a tmpfs on $1"
		finished=yes
		exit 77
	fi
	mounts="$1 $mounts"
}

# unmount DIR
unmount() {
	umount "$1" && mounts=$(echo "$mounts" | sed "s|$1 ||")
}

avail() { # DIR: its free bytes, as statvfs gives them to the unprivileged
	df -B1 --output=avail "$1" | tail -n 1 | tr -d ' '
}

# ---- 1. beside the database, under a floor -----------------------------------------
small "$tmp/state"
server_start --log-free-min 6M --sample-ms 500
flood=$("$gp" submit -q --name flood --mem 1G --compute 10 --wrap 'yes 0123456789abcdef')
wait_for "1: a task that writes without end runs" 10 "$flood" '.state == "running"'
for _ in $(seq 100); do
	[ "$(avail "$tmp/state")" -lt $((7 << 20)) ] && break
	sleep 0.1
done
sleep 1
[ "$(avail "$tmp/state")" -gt $((4 << 20)) ] &&
	ok "1: its output stops at the floor ($(avail "$tmp/state") bytes left free)" ||
	bad "1: its output stops at the floor ($(avail "$tmp/state") bytes left free)"
ids=
for i in 1 2 3; do
	id=$("$gp" submit -q --name "after-$i" --mem 1G --compute 10 --wrap "echo done $i") &&
		ids="$ids $id"
done
[ "$(echo $ids | wc -w)" -eq 3 ] && ok "1: the database takes writes: 3 submissions acknowledged" ||
	bad "1: the database takes writes: 3 submissions acknowledged"
sleep 1
for id in $ids; do
	"$gp" task show "$id" -o json
done >"$tmp/waiting.json"
check "1: they wait in the queue, saying why" \
	'all(.[]; .state == "pending" and (.reason | test("waiting for room for its log: .* under the server.s --log-free-min of 6 MiB")))' \
	"$tmp/waiting.json"
"$gp" queue -o json >"$tmp/queue.json" 2>&1
check "1: ... the queue says so too" \
	'[.[0].queue[]? // .[0].tasks[]? | select(.reason | test("waiting for room for its log"))] | length == 3' \
	"$tmp/queue.json"
eventually "1: the writer's alert says its output was dropped for the floor" 10 "$tmp/alerts.json" \
	".alerts | any(.kind == \"task.log-lost\" and .object == \"task $flood\" and
	 (.message | test(\"--log-free-min\")))" -- "$gp" alerts -o json
"$gp" task cancel "$flood" >/dev/null
wait_for "1: the writer is cancelled" 10 "$flood" '.state == "cancelled"'
for id in $ids; do
	wait_for "1: task $id runs once there is room, and succeeds" 20 "$id" '.state == "succeeded"'
done
expect "1: the writer's log, the oldest of an ended task, was removed for the floor, and logs says so" \
	1 "task $flood's log was removed at .* to keep 6 MiB free where the logs are" -- \
	"$gp" logs "$flood"
"$gp" audit -o json >"$tmp/audit.json"
check "1: ... with an audit row" \
	".[0].audit | any(.action == \"task.log-removed\" and .object == \"task $flood\")" \
	"$tmp/audit.json"
"$gp" task ls -o json >"$tmp/all.json"
check "1: no task failed" '[.[0].tasks[] | select(.state == "failed")] | length == 0' "$tmp/all.json"
stops "1: the server stops" "$server"
server=
unmount "$tmp/state"

# ---- 2. on their own filesystem, full ------------------------------------------------
small "$tmp/logs"
server_start --log-dir "$tmp/logs" --log-free-min 0
dd if=/dev/zero of="$tmp/logs/fill" bs=1M 2>/dev/null
[ "$(avail "$tmp/logs")" -lt 65536 ] && ok "2: the logs' filesystem is full" ||
	bad "2: the logs' filesystem is full ($(avail "$tmp/logs") bytes free)"
mkdir "$tmp/ran" && chmod 1777 "$tmp/ran"
ids=
for i in 1 2 3 4 5; do
	id=$("$gp" submit -q --name "full-$i" --mem 1G --compute 10 \
		--wrap 'echo run >>'"$tmp"'/ran/$GPUPOOL_TASK_ID; echo done') && ids="$ids $id"
done
[ "$(echo $ids | wc -w)" -eq 5 ] && ok "2: 5 submissions acknowledged (the database is elsewhere)" ||
	bad "2: 5 submissions acknowledged"
sleep 2
for id in $ids; do
	"$gp" task show "$id" -o json
done >"$tmp/waiting.json"
check "2: they wait, saying why (their log cannot be opened), never failed" \
	'all(.[]; .state == "pending" and (.reason | test("waiting for room for its log: .*No space left on device")))' \
	"$tmp/waiting.json"
"$gp" audit -o json >"$tmp/audit.json"
check "2: ... queued again with an audit row, not failed" \
	'.[0].audit | any(.action == "task.requeue" and (.detail | test("waiting for room for its log")))' \
	"$tmp/audit.json"
rm "$tmp/logs/fill"
for id in $ids; do
	wait_for "2: task $id runs once space is freed, and succeeds" 20 "$id" '.state == "succeeded"'
done
: >"$tmp/twice"
for id in $ids; do
	[ "$(cat "$tmp/ran/task-$id" 2>/dev/null | wc -l)" -eq 1 ] || echo "task $id" >>"$tmp/twice"
done
[ ! -s "$tmp/twice" ] && ok "2: each ran once" || bad "2: each ran once" "$tmp/twice"
[ "$("$gp" logs "$(echo $ids | cut -d' ' -f1)")" = done ] && ok "2: ... with its log" ||
	bad "2: ... with its log"
stops "2: the server stops" "$server"
server=

# ---- 3. the total cap --------------------------------------------------------------
rm -f "$tmp/logs"/task-*
server_start --log-dir "$tmp/logs" --log-free-min 0 --log-total-max 1M
# 300 kB of output each: with the oldest one's (running on) and two
# ended ones the logs hold about 900 kB (blocks and offset files too).
write='head -c 300000 /dev/zero | tr "\\0" a'
live=$("$gp" submit -q --name live --mem 1G --compute 10 --wrap "$write; sleep 60")
wait_for "3: a task writes its output, and runs on" 10 "$live" '.state == "running"'
sleep 0.5
ended=
for i in 1 2 3 4 5; do
	id=$("$gp" submit -q --name "ended-$i" --mem 1G --compute 10 --wrap "$write")
	wait_for "3: task $id writes 300 kB and ends" 20 "$id" '.state == "succeeded"'
	ended="$ended $id"
	sleep 0.2
done
set -- $ended
eventually "3: past the cap, the oldest logs of ended tasks are removed" 10 "$tmp/logs.txt" \
	'. == 3' -- sh -c "for t in $1 $2 $3; do [ -e '$tmp/logs/task-'\$t.log ] || echo x; done | wc -l"
[ -e "$tmp/logs/task-$4.log" ] && [ -e "$tmp/logs/task-$5.log" ] &&
	ok "3: ... and only those: the newest stay" || bad "3: ... and only those: the newest stay"
[ -e "$tmp/logs/task-$live.log" ] && ok "3: the running task's log stays, the oldest as it is" ||
	bad "3: the running task's log stays"
total=$(du -B1 -c "$tmp/logs"/task-* | tail -n 1 | cut -f1)
[ "$total" -le 1048576 ] && ok "3: the logs hold at most 1M ($total bytes)" ||
	bad "3: the logs hold at most 1M ($total bytes)"
expect "3: logs of a removed one says it was removed, and why" 1 \
	"task $1's log was removed at .* to keep the logs under the server's --log-total-max of 1 MiB" -- \
	"$gp" logs "$1"
[ "$("$gp" logs "$5" | wc -c)" -eq 300000 ] && ok "3: a kept one reads whole" ||
	bad "3: a kept one reads whole"
"$gp" task cancel "$live" >/dev/null
wait_for "3: the running task is cancelled" 10 "$live" '.state == "cancelled"'
stops "3: the server stops" "$server"
server=
finish
