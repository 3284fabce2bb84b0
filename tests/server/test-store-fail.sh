#!/bin/sh
# test-store-fail.sh — the loop handles every write it makes to the
# store, on one simulated T4. While only the rows that start tasks cannot
# be written (a trigger in the database refuses them), no task is
# started, not even once, and an alert says so at once. While the
# database cannot be written at all (its files made immutable under the
# server, chattr +i) a task that ends is recorded once writes work again,
# and no task is started meanwhile: it starts then, once; the server says
# so on stderr once, and in an alert once it can be stored.
# usage: test-store-fail.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
db=$tmp/state/gpupool.db
writable() { chattr -i "$db" "$db-wal" 2>/dev/null; }
# The files must be writable again before lib.sh removes them.
cleanup_hook() {
	writable
	"$gp" task ls -o json 2>/dev/null | jq -r '.tasks[] | select(.state == "running") | .pid' |
		while read -r pid; do kill -9 -"$pid" 2>/dev/null; done
}
server_start --sample-ms 200

# starts FILE: how many times a task that notes its starts in FILE started.
starts() { [ -f "$1" ] && wc -l <"$1" | tr -d ' ' || echo 0; }

# ---- only the rows that start tasks cannot be written ------------------------------
sqlite3 "$db" "PRAGMA busy_timeout=5000;
	CREATE TRIGGER no_start BEFORE UPDATE OF state ON tasks
	WHEN NEW.state = 1 AND OLD.state != 1
	BEGIN SELECT RAISE(ABORT, 'injected: a task may not start'); END;" >/dev/null
c=$("$gp" submit -q --mem 1G --compute 50 -- sh -c "echo started >>$tmp/c.starts; sleep 60")
sleep 2
[ "$(starts "$tmp/c.starts")" = 0 ] && ok "a task whose start cannot be recorded is not started, not even once" ||
	bad "a task whose start cannot be recorded is not started (started $(starts "$tmp/c.starts") times)" \
		"$tmp/server.log"
"$gp" alerts -o json >"$tmp/alerts.json"
check "the alert is stored at once (alerts can be written)" \
	'.[0].alerts[] | select(.kind == "store.unwritable") |
	 .message | test("cannot be written since .*injected: a task may not start")' "$tmp/alerts.json"
sqlite3 "$db" "PRAGMA busy_timeout=5000; DROP TRIGGER no_start;" >/dev/null
wait_for "once it can be, the task starts" 5 "$c" '.state == "running"'
sleep 0.5
[ "$(starts "$tmp/c.starts")" = 1 ] && ok "... once" || bad "... once" "$tmp/c.starts"
expect "the server says so on stderr, once" 0 "^1\$" -- \
	sh -c "grep -c 'cannot write the store: .*injected' '$tmp/server.log'"
"$gp" alerts -o json >"$tmp/alerts.json"
"$gp" alerts --clear "$(jq -r '.alerts[] | select(.kind == "store.unwritable") | .id' "$tmp/alerts.json")" \
	>/dev/null
"$gp" task cancel "$c" >/dev/null
wait_for "(cancelled)" 10 "$c" '.state == "cancelled"'

# ---- the database cannot be written at all --------------------------------------
a=$("$gp" submit -q --mem 1G --compute 100 -- sleep 60)
wait_for "a task holds the whole T4" 5 "$a" '.state == "running"'
b=$("$gp" submit -q --mem 1G --compute 50 -- sh -c "echo started >>$tmp/b.starts; sleep 60")
wait_for "another waits for it" 5 "$b" '.state == "pending" and (.reason | test("no device fits"))'
pid=$("$gp" task show "$a" -o json | jq -r .pid)
if ! chattr +i "$db" "$db-wal" 2>"$tmp/chattr.err"; then
	bad "the database's files can be made immutable (chattr +i: root, on ext4 or xfs)" "$tmp/chattr.err"
	finish
	exit 1
fi
kill -9 -"$pid"
sleep 2
[ "$(starts "$tmp/b.starts")" = 0 ] && ok "no task starts while the store cannot be written" ||
	bad "no task starts while the store cannot be written" "$tmp/b.starts" "$tmp/server.log"
expect "the server says so on stderr, once" 0 "^1\$" -- \
	sh -c "grep -c 'cannot write the store: .*disk I/O error.*no task is started or preempted until it can be' '$tmp/server.log'"
writable
wait_for "once it can, the end that could not be written is recorded" 5 "$a" \
	'.state == "failed" and (.reason | test("signal 9"))'
wait_for "and the waiting task starts" 5 "$b" '.state == "running"'
sleep 0.5
[ "$(starts "$tmp/b.starts")" = 1 ] && ok "... once" || bad "... once" "$tmp/b.starts"
expect "the server says it writes again" 0 "writing the store again after" -- cat "$tmp/server.log"
"$gp" alerts -o json >"$tmp/alerts.json"
check "an alert says what happened, stored once it could be" \
	'.[0].alerts[] | select(.kind == "store.unwritable" and .level == "critical") |
	 .message | test("could not be written for [0-9]+ s from .*no task was started or preempted")' \
	"$tmp/alerts.json"
"$gp" audit -o json >"$tmp/audit.json"
check "the end's audit row is there, before the start's" \
	"[.[0].audit[] | select((.object == \"task $a\" and .action == \"task.end\") or
	                        (.object == \"task $b\" and .action == \"task.start\")) | .object] ==
	 [\"task $a\", \"task $b\"]" "$tmp/audit.json"
expect "stderr said it twice in all: once per failure" 0 "^2\$" -- \
	sh -c "grep -c 'cannot write the store' '$tmp/server.log'"

finish
