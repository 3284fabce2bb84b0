#!/bin/sh
# test-db-check.sh — the database checked at start, and its backups
# (docs/install.md, "Backups and restoring"), with `gpupool server`:
#   - a backup at every start (mode 0600 in a directory of mode 0700), and
#     on a schedule, the oldest beyond --backup-keep removed; /metrics says
#     when the newest was taken;
#   - a zero-byte database is refused, saying so, naming the newest backup
#     and the command that restores it; admin.token is not touched, no new
#     admin is made;
#   - restoring as told brings back the tenants and the tasks, and keeps
#     the file it replaced;
#   - a database with garbage over a page in its middle is refused at
#     start (PRAGMA quick_check), and with --db-check full (PRAGMA
#     integrity_check), naming the backup; restoring it as told works;
#   - a file that is not a database is refused too; a sound database with
#     --db-check full starts, saying it checked the whole file;
#   - --restore-db while a server runs on the database is refused.
# usage: test-db-check.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
db=$tmp/state/gpupool.db
backups=$tmp/state/backups
sock=$tmp/server.sock
log=$tmp/server.log
export GPUPOOL_SOCKET="$sock"
unset GPUPOOL_TOKEN GPUPOOL_TOKEN_FILE GPUPOOL_DB
server=

# start ARGS...: a server on $db and $sock; $server its pid, its output
# appended to $log. Fails the test when it does not answer.
start() {
	"$gp" server --db "$db" --socket "$sock" "$@" >>"$log" 2>&1 &
	server=$!
	serving && return 0
	bad "the server starts" "$log"
	finish
	exit 1
}

stop() {
	kill "$server"
	wait "$server"
	server=
}

# refused NAME PATTERN ARGS...: a server started with ARGS exits 1 before
# it serves, its output (in $tmp/refused.log) matching PATTERN. One that
# serves instead is stopped after 20 s (exit 124).
refused() {
	name=$1 pattern=$2
	shift 2
	expect "$name" 1 "$pattern" -- timeout 20 "$gp" server --db "$db" --socket "$sock" "$@"
	cp "$tmp/out" "$tmp/refused.log"
}

# The command the refusal gives to restore the newest backup, run; its
# output in $tmp/out.
restore_as_told() {
	cmd=$(sed -n 's/^    gpupool server \(--db .* --restore-db .*\)$/\1/p' "$tmp/refused.log")
	if [ -z "$cmd" ]; then
		bad "the refusal gives the command that restores the backup" "$tmp/refused.log"
		return 1
	fi
	# shellcheck disable=SC2086 # the command as printed: paths without spaces
	expect "the command it gives restores the backup" 0 \
		'restored .* from .*/backups/gpupool-[0-9T.]+Z\.db: 3 tenant\(s\), 200 task\(s\); the file it replaced is kept as .*\.damaged-' \
		-- "$gp" server $cmd
}

# The tenants and tasks are those the backup holds.
same_as_before() {
	start
	admin=$(cat "$tmp/state/admin.token")
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" http://gpupool/v1/tenants \
		>"$tmp/tenants.json"
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" \
		'http://gpupool/v1/tasks?limit=1000' >"$tmp/tasks.json"
	check "$1: the tenants are back" \
		'[.[0].tenants[].name] | sort == ["admin", "nlp", "vision"]' "$tmp/tenants.json"
	check "$1: the 200 tasks are back, their commands whole" \
		'.[0].tasks | length == 200 and all(.command | length > 800)' "$tmp/tasks.json"
	stop
}

# ---- a pool worth keeping ------------------------------------------------------------------
start
admin=$(cat "$tmp/state/admin.token")
for name in vision nlp; do
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" \
		-H 'Content-Type: application/json' -d "{\"name\": \"$name\", \"unlimited\": true}" \
		http://gpupool/v1/tenants >"$tmp/$name.json"
done
vision=$(jq -r .token "$tmp/vision.json")
# 200 tasks of 900-byte commands: their table is most of the file.
long=$(printf 'x%.0s' $(seq 880))
for i in $(seq 200); do
	curl -s -o /dev/null --unix-socket "$sock" -H "Authorization: Bearer $vision" \
		-H 'Content-Type: application/json' \
		-d "{\"command\": \"echo $i $long\", \"mem_mib\": 1, \"compute_pct\": 1}" \
		http://gpupool/v1/tasks
done
stop
start # its backup at start holds all of them
stop
n=$(find "$backups" -name 'gpupool-*.db' | wc -l)
if [ "$n" -eq 2 ]; then ok "a backup at each start: 2 in $backups"; else
	ls -la "$backups" >"$tmp/ls" 2>&1
	bad "a backup at each start (found $n)" "$tmp/ls"
fi
newest=$(find "$backups" -name 'gpupool-*.db' | sort | tail -n 1)
if [ "$(stat -c %a "$newest")" = 600 ] && [ "$(stat -c %a "$backups")" = 700 ] &&
	[ -z "$(find "$backups" -name '.*')" ]; then
	ok "backups are mode 0600 in a directory of mode 0700, no temporary file left"
else
	ls -la "$backups" >"$tmp/ls"
	bad "backups are mode 0600 in a directory of mode 0700" "$tmp/ls"
fi
cp "$tmp/state/admin.token" "$tmp/admin.token.before"

# ---- a zero-byte database -----------------------------------------------------------------------
: >"$db"
refused "a zero-byte database is refused, saying so" \
	"cannot open the database $db: the file is empty \\(0 bytes\\)"
if grep -q "the newest backup is $newest" "$tmp/refused.log" &&
	grep -q "^    gpupool server --db $db --restore-db $newest$" "$tmp/refused.log"; then
	ok "... naming the newest backup and the command that restores it"
else
	bad "... naming the newest backup and the command that restores it" "$tmp/refused.log"
fi
if cmp -s "$tmp/admin.token.before" "$tmp/state/admin.token" && [ ! -s "$db" ]; then
	ok "admin.token is unchanged, the database still empty (no new admin)"
else
	bad "admin.token is unchanged, the database still empty" "$tmp/refused.log"
fi
restore_as_told
same_as_before "after restoring over the empty file"

# ---- garbage over a page in the middle ------------------------------------------------------------
pages=$(($(stat -c %s "$db") / 4096))
dd if=/dev/urandom of="$db" bs=4096 seek=$((pages / 2)) count=1 conv=notrunc 2>/dev/null
refused "a database with a damaged page is refused at start (PRAGMA quick_check)" \
	"the database $db is damaged \\(PRAGMA quick_check: .+\\); refusing to start"
grep -q "^    gpupool server --db $db --restore-db $backups/gpupool-" "$tmp/refused.log" ||
	bad "... naming the backup and the command" "$tmp/refused.log"
cp "$tmp/refused.log" "$tmp/quick.log"
refused "... and with --db-check full (PRAGMA integrity_check)" \
	"the database $db is damaged \\(PRAGMA integrity_check: .+\\); refusing to start" \
	--db-check full
grep -q 'checking the whole database (PRAGMA integrity_check; --db-check full)' "$tmp/refused.log" ||
	bad "... saying it checks the whole database" "$tmp/refused.log"
cp "$tmp/quick.log" "$tmp/refused.log"
restore_as_told
same_as_before "after restoring over the damaged file"
n=$(find "$tmp/state" -maxdepth 1 -name 'gpupool.db.damaged-*' | wc -l)
if [ "$n" -ge 1 ]; then ok "the files replaced are kept beside the database"; else
	bad "the files replaced are kept beside the database" "$tmp/out"
fi

# ---- not a database; a sound one checked in full ---------------------------------------------------
cp "$db" "$tmp/good.db"
echo "this is not an SQLite database, only some text where one should be" >"$db"
refused "a file that is not a database is refused" 'not an SQLite database'
cp "$tmp/good.db" "$db"
start --db-check full
if grep -q 'checking the whole database (PRAGMA integrity_check; --db-check full)' "$log"; then
	ok "a sound database with --db-check full is checked in full, and served"
else
	bad "a sound database with --db-check full is checked in full" "$log"
fi
expect "--restore-db while a server runs on the database is refused" 1 \
	"another gpupool server uses $db: stop it first" -- \
	"$gp" server --db "$db" --restore-db "$newest"
stop

# ---- backups on a schedule --------------------------------------------------------------------------
before=$(find "$backups" -name 'gpupool-*.db' | sort | tail -n 1)
touch "$tmp/mark"
sleep 1 # the backups' times are to the second: newer than the mark
start --backup-interval 1 --backup-keep 2
admin=$(cat "$tmp/state/admin.token")
for _ in $(seq 100); do
	n=$(find "$backups" -name 'gpupool-*.db' -newer "$tmp/mark" | wc -l)
	[ "$n" -ge 2 ] && break
	sleep 0.1
done
sleep 1.5 # one more, and its rotation
n=$(find "$backups" -name 'gpupool-*.db' | wc -l)
if [ "$n" -eq 2 ] && [ ! -e "$before" ]; then
	ok "backups every --backup-interval, the newest --backup-keep 2 kept"
else
	ls -la "$backups" >"$tmp/ls"
	bad "backups every --backup-interval, the newest --backup-keep 2 kept ($n)" "$tmp/ls"
fi
curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" http://gpupool/metrics \
	>"$tmp/metrics.txt"
now=$(date +%s)
if awk -v now="$now" '$1 == "gpupool_database_backup_last_timestamp_seconds" && $2 > now - 30 { found = 1 }
	END { exit !found }' "$tmp/metrics.txt" &&
	grep -q '^gpupool_database_damaged 0$' "$tmp/metrics.txt" &&
	grep -q '^gpupool_database_backup_failures_total 0$' "$tmp/metrics.txt"; then
	ok "/metrics: the newest backup's time, none failed, the database not damaged"
else
	bad "/metrics: the newest backup's time" "$tmp/metrics.txt"
fi
stop
finish
