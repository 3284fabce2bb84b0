#!/bin/sh
# test-newcomer.sh — the command line as a newcomer found it (issue 10), on
# a server without an agent: `submit --wrap` and what a command line given
# as one argument is told; --whole with a slice refused by the CLI and by
# the API; `task cancel` of several ids, each said, the exit status 1 when
# one failed; `task ls` with placement, exit code and dates, -o yaml,
# --watch; GET /v1/tasks in pages (limit, after, next_after) with filters
# (state lists, tenant), and the CLI reading every page; tenants removed
# (refused while they have queued or running tasks, their tasks kept),
# templates removed, tokens rotated (the old one dead at once, the admin's
# token file rewritten), each with its audit row; the names the server
# writes in audit rows reserved.
# usage: test-newcomer.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
sock=$tmp/server.sock
db=$tmp/state/gpupool.db
out=$tmp/out
export GPUPOOL_SOCKET="$sock" GPUPOOL_DB="$tmp/unused/gpupool.db" GPUPOOL_TOKEN_FILE="$tmp/state/admin.token"
unset GPUPOOL_TOKEN

"$gp" server --db "$db" >>"$tmp/server.log" 2>&1 &
server=$!
finish_hook() { stops "the server stops on SIGTERM" "$server" || cat "$tmp/server.log"; }
serving
admin=$(cat "$tmp/state/admin.token" 2>/dev/null) || { bad "the server did not start" "$tmp/server.log"; finish; exit 1; }

# as TOKEN COMMAND...: gpupool as the tenant whose token is TOKEN.
as() {
	token=$1
	shift
	GPUPOOL_TOKEN=$token "$gp" "$@"
}

alice=$("$gp" tenant add alice --unlimited 2>"$out")
bob=$("$gp" tenant add bob --unlimited 2>>"$out")
[ -n "$alice" ] && [ -n "$bob" ] && ok "two tenants" || bad "two tenants" "$out"
"$gp" template add small --mem 1G --compute 10 >/dev/null

# ---- submit --wrap, and a command line in one argument -------------------------
line="sh -c 'exit 3' x && echo \"done\" | tee -a out.txt"
w=$(as "$alice" submit -q --mem 1G --compute 10 --wrap "$line")
as "$alice" task show "${w:-0}" -o json >"$out" 2>&1
jq -n --arg line "$line" '$line' >"$tmp/line.json"
check "--wrap: the line is the command, as it is" '.[0].command == .[1] and .[0].name == "sh"' \
	"$out" "$tmp/line.json"
expect "a command line in one argument is refused, and told --wrap" 2 \
	'"sh script.sh arg" is one argument with spaces.*-- sh script.sh arg.*--wrap "sh script.sh arg"' -- \
	as "$alice" submit --mem 1G --compute 10 -- "sh script.sh arg"
expect "--wrap and a command after --" 2 'give the command once: --wrap "LINE" or -- COMMAND ARGS' -- \
	as "$alice" submit --mem 1G --compute 10 --wrap "true" -- true
expect "--wrap with nothing" 2 '--wrap needs a command line' -- \
	as "$alice" submit --mem 1G --compute 10 --wrap ""
touch "$tmp/my prog" && chmod +x "$tmp/my prog"
expect "a program whose path has a space is not refused" 0 'submitted' -- \
	as "$alice" submit --mem 1G --compute 10 -- "$tmp/my prog" --flag
expect "submit --help tells --wrap" 0 '--wrap "LINE"' -- "$gp" submit --help

# ---- --whole with a slice ------------------------------------------------------------
expect "--whole --mem is refused" 2 '--whole and --mem contradict' -- \
	as "$alice" submit --whole --mem 1G -- true
expect "--whole --compute is refused" 2 '--whole and --compute contradict' -- \
	as "$alice" submit --whole --compute 30 -- true
expect "--whole --template is refused" 2 '--whole and --template contradict' -- \
	as "$alice" submit --whole --template small -- true
api "API: whole with mem_mib" 400 'field \\"mem_mib\\" cannot go with \\"whole\\": true' "$alice" \
	POST /v1/tasks -d '{"command": "true", "whole": true, "mem_mib": 1024}'
api "API: whole with compute_pct" 400 'field \\"compute_pct\\" cannot go with \\"whole\\": true' "$alice" \
	POST /v1/tasks -d '{"command": "true", "whole": true, "compute_pct": 30}'
api "API: whole with a template" 400 'field \\"template\\" cannot go with \\"whole\\": true' "$alice" \
	POST /v1/tasks -d '{"command": "true", "whole": true, "template": "small"}'
api "API: whole false with a slice is fine" 201 '"whole":false' "$alice" \
	POST /v1/tasks -d '{"command": "true", "whole": false, "mem_mib": 1024, "compute_pct": 10}'

# ---- task cancel of several ------------------------------------------------------------
c1=$(as "$alice" submit -q --mem 1G --compute 10 -- sleep 1)
c2=$(as "$alice" submit -q --mem 1G --compute 10 -- sleep 2)
c3=$(as "$alice" submit -q --mem 1G --compute 10 -- sleep 3)
b1=$(as "$bob" submit -q --mem 1G --compute 10 -- sleep 4)
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET state = 2, ended = 1 WHERE id = ${c3:-0}"
as "$alice" task cancel "$c1" "$c2" "$c3" "$b1" 999999 >"$tmp/cancel.out" 2>"$tmp/cancel.err"
status=$?
[ "$status" -eq 1 ] && ok "cancel of several: exit 1 when one failed" ||
	bad "cancel of several: exit $status (want 1)" "$tmp/cancel.out" "$tmp/cancel.err"
expect "each cancelled one is said" 0 "^task $c1: cancelled\$" -- cat "$tmp/cancel.out"
expect "... in order" 0 "^task $c2: cancelled\$" -- sed -n 2p "$tmp/cancel.out"
expect "an ended one is said" 0 "task $c3 is succeeded; there is nothing to cancel" -- cat "$tmp/cancel.err"
expect "another's is said" 0 "task $b1 belongs to another tenant" -- cat "$tmp/cancel.err"
expect "a missing one is said" 0 'no task 999999' -- cat "$tmp/cancel.err"
expect "the count is said" 0 "3 of 5 tasks not cancelled: $c3, $b1, 999999" -- cat "$tmp/cancel.err"
c4=$(as "$alice" submit -q --mem 1G --compute 10 -- sleep 5)
c5=$(as "$alice" submit -q --mem 1G --compute 10 -- sleep 6)
expect "cancel of several, all done: exit 0" 0 "task $c5: cancelled" -- as "$alice" task cancel "$c4" "$c5"
expect "a bad id among them: exit 2, nothing sent" 2 '"x" is not a task id' -- \
	as "$bob" task cancel "$b1" x
expect "... and the good one was not cancelled" 0 '"state":"pending"' -- as "$bob" task show "$b1" -o json
as "$alice" task cancel "$c4" "$c5" -o json >"$out"
check "-o json: one line per task" 'length == 2 and map(.state) == ["cancelled", "cancelled"]' "$out"
expect "cancel needs an id" 2 'needs one or more task ids' -- as "$alice" task cancel
expect "cancel --help" 0 'usage: gpupool task cancel ID\.\.\.' -- "$gp" task cancel --help

# ---- task ls: placement, exit code, dates; -o yaml; --watch -----------------------------
r1=$(as "$bob" submit -q --name ran --mem 1G --compute 10 -- false)
now=$(($(date +%s) * 1000))
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET state = 3, exit_code = 7, started = $now,
	ended = $now + 1000, placement = 'GPU-3c729bf8-4aad-4da7-9d2a-2de5eb0368c3' WHERE id = ${r1:-0}"
expect "task ls: the new columns" 0 'PLACEMENT +EXIT +CREATED +STARTED +ENDED +REASON' -- as "$bob" task ls
expect "task ls: placement, exit code and times" 0 \
	"^${r1:-x} +bob +ran +failed .* GPU-3c729bf8 +7 +[0-9:-]+ +[0-9:-]+ +[0-9:-]+ " -- as "$bob" task ls
expect "task ls: a pending task has none" 0 "^${b1:-x} +bob +sleep +pending .* - +- +[0-9:-]+ +- +- " -- \
	as "$bob" task ls
as "$bob" task ls -o json >"$tmp/ls.json"
as "$bob" task ls -o yaml >"$tmp/ls.yaml"
expect "task ls -o yaml" 0 '^tasks:$' -- cat "$tmp/ls.yaml"
if python3 -c 'import yaml' 2>/dev/null; then
	python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
		"$tmp/ls.yaml" >"$tmp/ls-yaml.json" 2>"$out"
	check "task ls -o yaml reads back as -o json" '.[0] == .[1]' "$tmp/ls.json" "$tmp/ls-yaml.json"
fi
GPUPOOL_TOKEN=$bob timeout --preserve-status -s INT 2.6 "$gp" task ls --watch 1 >"$tmp/watch" 2>&1
status=$?
frames=$(grep -c '^Every 1s: gpupool task ls' "$tmp/watch")
[ "$status" -eq 0 ] && [ "$frames" -ge 2 ] && ok "task ls --watch redraws until interrupted" ||
	bad "task ls --watch: exit $status, $frames frames" "$tmp/watch"
expect "--watch names what it redraws" 0 "^${r1:-x} +bob +ran +failed" -- cat "$tmp/watch"
expect "--watch 0 is refused" 2 '--watch "0" must be a whole number from 1 to 3600' -- \
	as "$bob" task ls --watch 0
expect "--watch with -o json is refused" 2 '--watch redraws a table' -- as "$bob" task ls --watch 1 -o json

# ---- GET /v1/tasks: pages and filters ------------------------------------------------------
# 620 ended tasks of bob's, straight into the store.
sqlite3 -cmd '.timeout 5000' "$db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 620)
	INSERT INTO tasks (tenant, name, command, mem_mib, compute_pct, devices, whole, exclusive, hard,
	priority, kind, model, state, reason, placement, pid, exit_code, created, started, ended)
	SELECT (SELECT id FROM tenants WHERE name = 'bob'), 'bulk', 'true', 1024, 10, 1, 0, 0, 1, 5,
	'batch', '', 2, 'exited', '', 0, 0, $now, $now, $now FROM n"
api "GET /v1/tasks: a default page of 500" 200 '"next_after":[0-9]+' "$bob" GET /v1/tasks
check "... 500 of them, next_after the last" '.[0] | (.tasks | length) == 500 and .next_after == .tasks[-1].id' "$out"
after=$(jq .next_after "$out")
api "GET /v1/tasks?after=: the rest" 200 '"next_after":null' "$bob" GET "/v1/tasks?after=$after"
check "... all after the cursor" ".[0].tasks | length == 122 and .[0].id == $after + 1" "$out"
api "limit=2" 200 '"next_after":[0-9]+' "$bob" GET '/v1/tasks?limit=2'
check "... two" '.[0].tasks | length == 2' "$out"
api "state=failed,pending" 200 '"tasks"' "$bob" GET '/v1/tasks?state=failed,pending'
check "... only those" ".[0].tasks | map(.id) == [${b1:-0}, ${r1:-0}]" "$out"
api "tenant= by the admin" 200 '"tasks"' "$admin" GET '/v1/tasks?tenant=bob&state=pending'
check "... only his" ".[0].tasks | map(.id) == [${b1:-0}]" "$out"
api "tenant= another, by a tenant" 403 'query \\"tenant\\": \\"alice\\" is not you' "$bob" GET '/v1/tasks?tenant=alice'
api "tenant= unknown" 400 'query \\"tenant\\": no tenant \\"nobody\\"' "$admin" GET '/v1/tasks?tenant=nobody'
api "limit=0" 400 'query \\"limit\\" must be a whole number from 1 to 2000' "$bob" GET '/v1/tasks?limit=0'
api "limit=2001" 400 'from 1 to 2000' "$bob" GET '/v1/tasks?limit=2001'
api "state=bogus" 400 'query \\"state\\": \\"bogus\\" is not a state; give one or more of' "$bob" GET '/v1/tasks?state=pending,bogus'
as "$bob" task ls -o json >"$out"
check "task ls reads every page" '.[0].tasks | length == 622 and .[0].next_after == null' "$out"
as "$bob" task ls --limit 3 --after "${b1:-0}" -o json >"$out"
check "task ls --limit --after" "(.[0].tasks | length) == 3 and .[0].tasks[0].id > ${b1:-0} and
	(.[0].next_after | type) == \"number\"" "$out"
expect "task ls --state a list" 0 "^${r1:-x} +bob" -- as "$bob" task ls --state failed,pending
expect "task ls --state bogus" 2 '--state "bogus" must be one of' -- as "$bob" task ls --state bogus
expect "task ls --tenant, by the admin" 0 "^${c1:-x} +alice " -- "$gp" task ls --tenant alice

# ---- removing tenants and templates, rotating tokens ------------------------------------------
carol=$("$gp" tenant add carol --unlimited 2>/dev/null)
q1=$(as "$carol" submit -q --mem 1G --compute 10 -- sleep 1)
q2=$(as "$carol" submit -q --mem 1G --compute 10 -- sleep 1)
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET state = 1, started = 1 WHERE id = ${q2:-0}"
expect "tenant rm with queued and running tasks is refused" 1 \
	'tenant "carol" has 1 queued and 1 running tasks; cancel them .* or wait for them to end' -- \
	"$gp" tenant rm carol
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET state = 2, ended = 2 WHERE id = ${q2:-0}"
as "$carol" task cancel "$q1" >/dev/null
"$gp" tenant quota carol T4 --mem-guaranteed 1G --compute-guaranteed 50 >/dev/null
expect "tenant rm by a tenant" 1 'only the admin may remove tenants' -- as "$bob" tenant rm carol
expect "tenant rm" 0 'tenant "carol" removed; its tasks, usage records and bills are kept' -- \
	"$gp" tenant rm carol
api "its token is dead" 401 'unknown token' "$carol" GET /v1/tasks
"$gp" tenant ls -o json >"$out"
check "tenant ls no longer shows it" '.[0].tenants | map(.name) | index("carol") == null' "$out"
"$gp" task ls -o json --tenant carol >"$out"
check "its tasks are kept, under its name" ".[0].tasks | map(.id) == [${q1:-0}, ${q2:-0}] and all(.tenant == \"carol\")" "$out"
expect "its name is not given again" 1 'tenant "carol" was removed .*pick another name' -- "$gp" tenant add carol --unlimited
expect "tenant rm again" 1 'tenant "carol" was removed' -- "$gp" tenant rm carol
expect "tenant set of a removed tenant" 1 'tenant "carol" was removed' -- "$gp" tenant set carol --user auto
expect "tenant rm of nobody" 1 'no tenant "nobody"' -- "$gp" tenant rm nobody
expect "tenant rm admin is refused" 1 'the admin tenant cannot be removed' -- "$gp" tenant rm admin
api "DELETE /v1/tenants/NAME" 404 'no tenant' "$admin" DELETE /v1/tenants/nobody
expect "template rm by a tenant" 1 'only the admin may remove templates' -- as "$bob" template rm small
expect "template rm" 0 'template "small" removed' -- "$gp" template rm small
expect "the template is gone" 1 'no template "small"' -- "$gp" template show small
expect "template rm again" 1 'no template "small"' -- "$gp" template rm small
"$gp" tenant add dave --unlimited >/dev/null 2>&1
dave=$("$gp" tenant token dave 2>"$out")
as "${dave:-none}" tenant ls -o json >"$out" 2>&1
check "tenant token: the new one works" '.[0].tenants | map(.name) == ["dave"]' "$out"
new=$(as "${dave:-none}" tenant token dave 2>/dev/null)
as "${new:-none}" tenant ls -o json >"$out" 2>&1
check "a tenant rotates its own" '.[0].tenants | map(.name) == ["dave"]' "$out"
expect "... the one before is dead at once" 1 'unknown token' -- as "$dave" tenant ls
expect "a tenant may not rotate another's" 1 'a tenant may rotate only its own token' -- as "$new" tenant token bob
expect "tenant token of nobody" 1 'no tenant "nobody"' -- "$gp" tenant token nobody
old_admin=$admin
admin=$("$gp" tenant token admin 2>"$out")
if [ -n "$admin" ] && [ "$(cat "$tmp/state/admin.token")" = "$admin" ] &&
	[ "$(stat -c %a "$tmp/state/admin.token")" = 600 ]; then
	ok "the admin's new token is in its token file (0600)"
else
	bad "the admin's new token is in its token file" "$out" "$tmp/state/admin.token"
fi
api "the admin's old token is dead" 401 'unknown token' "$old_admin" GET /v1/tasks
"$gp" audit -o json >"$out"
check "each is audited" '[.[0].audit[] | select(.action | test("^(tenant.remove|template.remove|tenant.token)$")) |
	[.who, .action, .object]] == [["admin", "tenant.remove", "carol"], ["admin", "template.remove", "small"],
	["admin", "tenant.token", "dave"], ["dave", "tenant.token", "dave"], ["admin", "tenant.token", "admin"]]' "$out"
check "the removal's row says what was kept" '.[0].audit[] | select(.action == "tenant.remove") |
	.detail | contains("2 tasks kept") and contains("model quotas removed: T4")' "$out"
first=$(jq '.audit[0].id' "$out")
"$gp" audit -o json --after "${first:-0}" --limit 2 >"$out"
check "audit --after: the two entries after one, and where the next page starts" \
	".[0].audit | length == 2 and .[0].id > ${first:-0} and .[1].id > .[0].id" "$out"
check "... next_after is the page's last" '.[0].next_after == .[0].audit[1].id' "$out"
expect "audit --after a word is refused" 2 '--after "x" must be an entry.s id' -- "$gp" audit --after x

# ---- reserved names -------------------------------------------------------------------------
for name in server Server admin ADMIN agent scheduler verifier gpupool root system; do
	expect "tenant add $name is refused" 1 "the name \"$name\" is reserved" -- "$gp" tenant add "$name"
done
api "POST /v1/tenants server" 400 'field \\"name\\": the name \\"server\\" is reserved' "$admin" \
	POST /v1/tenants -d '{"name": "server"}'

finish
