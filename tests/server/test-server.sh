#!/bin/sh
# test-server.sh — `gpupool server` and its client commands end to end, with
# real processes: a server on a socket in a temporary directory, tenants and
# a template made by the admin, tasks submitted, hidden from other tenants,
# changed with an audit row, cancelled; the queue in the scheduler's order;
# templates as YAML; what a server without --with-agent says of devices,
# nodes, logs and cancelling a running task; the queue bound; the errors a
# user meets (no token, bad JSON, wrong flags); and durability: a server killed
# with SIGKILL under a stream of submissions keeps every task it
# acknowledged, and on restart marks the tasks it left running as lost.
# usage: test-server.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
sock=$tmp/server.sock
db=$tmp/state/gpupool.db
log=$tmp/server.log
out=$tmp/out
# Every command says who it is: no fallback to a real admin token file.
export GPUPOOL_SOCKET="$sock" GPUPOOL_DB="$tmp/unused/gpupool.db"
unset GPUPOOL_TOKEN GPUPOOL_TOKEN_FILE

# start ARGS...: starts the server in the background ($server is its pid)
# and waits until it answers. One still running at finish must stop.
finish_hook() {
	[ -n "${server:-}" ] && kill -0 "$server" 2>/dev/null || return 0
	stops "the server stops on SIGTERM" "$server" || cat "$log"
}
start() {
	"$gp" server --db "$db" "$@" >>"$log" 2>&1 &
	server=$!
	serving && return 0
	bad "the server did not start" "$log"
	finish
	exit 1
}

# as TOKEN COMMAND...: runs gpupool as the tenant whose token is TOKEN.
as() {
	token=$1
	shift
	GPUPOOL_TOKEN=$token "$gp" "$@"
}

# ---- start, tenants, template ----------------------------------------------
start --queue-max 5
api health 200 '^\{"ok":true,"schema":[0-9]+\}$' "" GET /v1/health
if [ "$(stat -c %a "$sock")" = 600 ]; then ok socket-mode; else bad "socket-mode: $(stat -c %a "$sock")"; fi
token_file=$tmp/state/admin.token
if [ "$(stat -c %a "$token_file")" = 600 ] && grep -q "its token is in $token_file" "$log"; then
	ok admin-token-file
else
	bad "admin-token-file: not made 0600, or not said where" "$log"
fi
admin=$(cat "$token_file")

alice=$(as "$admin" tenant add alice --mem-guaranteed 16G --compute-guaranteed 200 \
	--priority-max 8 2>"$out")
bob=$(as "$admin" tenant add bob --mem-guaranteed 8G --compute-borrowable 100 2>>"$out")
if echo "$alice$bob" | grep -Eq '^[0-9a-f]{128}$'; then ok tenant-tokens; else bad tenant-tokens "$out"; fi
expect tenant-taken 1 'tenant "alice" exists' -- as "$admin" tenant add alice --unlimited
expect tenant-not-admin 1 'only the admin may add tenants' -- as "$alice" tenant add carol --unlimited
expect template-add 0 'template "t4-half" added' -- \
	as "$admin" template add t4-half --mem 8G --compute 50 --models t4
expect template-ls 0 't4-half +8G +50% hard +t4' -- as "$bob" template ls
as "$bob" tenant ls -o json >"$out"
check tenant-sees-itself '.[0].tenants | length == 1 and .[0].name == "bob"' "$out"
as "$admin" tenant ls -o json >"$out"
check admin-sees-all '.[0].tenants | map(.name) == ["admin", "alice", "bob"]' "$out"
check priority-bounds '.[0].tenants | map(.priority_max) == [9, 8, 5]' "$out"

# ---- templates as YAML -------------------------------------------------------
as "$admin" template add 0x10 --mem 1536M --compute 5 --isolation shared --models "a100, h100" \
	>/dev/null
as "$bob" template ls -o json >"$tmp/templates.json"
as "$bob" template ls -o yaml >"$tmp/templates.yaml"
as "$bob" template show 0x10 -o yaml >"$tmp/one.yaml"
# The YAML, read back, has each template's fields, models as a list (no
# time limit here: tests/cli/test-job-options.sh has one written out).
want='[.[0].templates[] | {name, models: (.models | if . == "" then [] else split(", ") end),
	memory_mib: .mem_mib, compute_pct, isolation, runtime,
	time: (if .time_limit_s == 0 then "unlimited" else .time_limit_s end)}]'
if python3 -c 'import yaml' 2>/dev/null; then
	python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
		"$tmp/templates.yaml" >"$tmp/templates-yaml.json" 2>"$out"
	check template-ls-yaml "(${want}) == .[1].templates" "$tmp/templates.json" "$tmp/templates-yaml.json"
	python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
		"$tmp/one.yaml" >"$tmp/one-yaml.json" 2>"$out"
	check template-show-yaml "(${want} | map(select(.name == \"0x10\")) | .[0]) == .[1] and
		(.[1].name | type) == \"string\"" "$tmp/templates.json" "$tmp/one-yaml.json"
else
	echo "# python3's yaml module is missing: the YAML is checked by its text alone"
fi
expect template-yaml-text 0 "^- name: t4-half\$" -- cat "$tmp/templates.yaml"
expect template-yaml-quoted 0 "^name: '0x10'\$" -- cat "$tmp/one.yaml"
expect template-show 0 '^memory +1536M$' -- as "$bob" template show 0x10
as "$bob" template show t4-half -o json >"$out"
check template-show-json '.[0].name == "t4-half" and .[0].mem_mib == 8192' "$out"
expect template-show-none 1 'no template "nope" \(gpupool template ls lists them\)' -- \
	as "$bob" template show nope
expect template-show-no-name 2 'needs one name' -- as "$bob" template show
expect template-bad-output 2 '-o "csv" must be table, yaml or json' -- as "$bob" template ls -o csv

# ---- submitting, and what another tenant sees ------------------------------
a1=$(as "$alice" submit -q --name train --mem 4G --compute 30 --priority 8 -- python3 train.py)
a2=$(as "$alice" run -q --template t4-half -- ./serve --port 8080)
as "$alice" task ls -o json >"$out"
check submit-pending ".[0].tasks | map(select(.id == ${a1:-0})) | .[0] | .state == \"pending\"
	and .priority == 8 and .mem_mib == 4096 and .compute_pct == 30 and .tenant == \"alice\"
	and .command == \"python3 train.py\"" "$out"
check submit-template ".[0].tasks | map(select(.id == ${a2:-0})) | .[0] | .mem_mib == 8192
	and .compute_pct == 50 and .model == \"t4\" and .name == \"serve\"" "$out"
expect task-ls 0 "^${a1:-x} +alice +train +pending +8 +4G +30%" -- as "$alice" task ls
api other-show-403 403 'belongs to another tenant' "$bob" GET "/v1/tasks/$a1"
api other-cancel-403 403 'belongs to another tenant' "$bob" POST "/v1/tasks/$a1/cancel"
expect other-show-cli 1 "task $a1 belongs to another tenant" -- as "$bob" task show "$a1"
expect other-cancel-cli 1 "task $a1 belongs to another tenant" -- as "$bob" task cancel "$a1"
# A priority is the admin's to grant: past the tenant's bound, refused with
# the bound named; the default is the bound when that is lower.
expect priority-over-bound 1 '--priority: 6 is above 5, the highest priority tenant "bob" may give its tasks; ask the admin to raise it \(gpupool tenant set bob --priority-max N\)' -- \
	as "$bob" submit --mem 1G --compute 10 --priority 6 -- sleep 60
api priority-over-bound-403 403 'the highest priority tenant' "$bob" POST /v1/tasks \
	-d '{"command": "true", "mem_mib": 1024, "compute_pct": 10, "priority": 9}'
b1=$(as "$bob" submit -q --mem 1G --compute 10 -- sleep 60)
as "$bob" task ls -o json >"$out"
check other-list ".[0].tasks | map(.id) == [${b1:-0}]" "$out"
as "$admin" task ls --state pending -o json >"$out"
check admin-list ".[0].tasks | map(.id) == [${a1:-0}, ${a2:-0}, ${b1:-0}]" "$out"

# ---- the queue, and what a server without an agent says ----------------------
# a1 has priority 8; a2 and b1 have 5, a2 the older.
as "$admin" queue -o json >"$out"
check queue-order ".[0].length == 3 and [.[0].queue[] | [.position, .id, .tenant]] ==
	[[1, ${a1:-0}, \"alice\"], [2, ${a2:-0}, \"alice\"], [3, ${b1:-0}, \"bob\"]]" "$out"
as "$bob" queue -o json >"$out"
check queue-tenant "[.[0].queue[] | [.position, .id]] == [[3, ${b1:-0}]] and .[0].length == 3" "$out"
expect queue-table 0 "^3 +${b1:-x} +bob +sleep +pending +5 +1G x 10% +[0-9]+s +waiting for the scheduler" -- \
	as "$bob" queue
expect device-ls-no-agent 0 '^no devices: this server runs no agent \(it was started without --with-agent\)' -- \
	as "$bob" device ls
expect node-ls-no-agent 0 '^no nodes: this server runs no agent' -- as "$bob" node ls
as "$bob" device ls -o json >"$out"
check devices-json-no-agent '.[0].agent == false and .[0].devices == [] and (.[0].note | length > 0)' "$out"
api nodes-no-agent 200 '"nodes":\[\]' "$bob" GET /v1/nodes
expect logs-not-run 1 "task ${a2:-x} has no log yet: it has not run \\(pending\\)" -- as "$alice" logs "$a2"
expect logs-other 1 "task ${a1:-x} belongs to another tenant" -- as "$bob" logs "$a1"
api logs-403 403 'belongs to another tenant' "$bob" GET "/v1/tasks/$a1/logs"
api logs-bad-tail 400 'query \\"tail\\" must be a whole number from 1' "$alice" GET "/v1/tasks/$a1/logs?tail=0"

# ---- what a wrong request is told ------------------------------------------
api no-token 401 'no token' "" GET /v1/tasks
api bad-token 401 'unknown token' "not-a-token" GET /v1/tasks
expect bad-token-cli 1 'unknown token' -- as nope task ls
api malformed-json 400 'malformed JSON at line 1, column [0-9]+' "$alice" POST /v1/tasks \
	-d '{"command": "x", "mem_mib": 10'
api bad-field 400 'field \\"compute_pct\\" must be a whole number from 1 to 100' "$alice" \
	POST /v1/tasks -d '{"command": "x", "mem_mib": 10, "compute_pct": 300}'
api unknown-field 400 'unknown field \\"priorty\\"' "$alice" POST /v1/tasks \
	-d '{"command": "x", "priorty": 3}'
api missing-field 400 'field \\"command\\" is required' "$alice" POST /v1/tasks -d '{}'
api not-admin 403 'only the admin' "$alice" GET /v1/audit
api no-such-task 404 'no task 999999' "$alice" GET /v1/tasks/999999
api no-endpoint 404 'no endpoint' "$alice" GET /v1/nothing
api wrong-method 405 'DELETE is not allowed on /v1/tasks' "$alice" DELETE /v1/tasks
head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/big"
api too-large 413 'over 1048576 bytes' "$alice" POST /v1/tasks --data-binary @"$tmp/big"

# ---- the queue bound (--queue-max 5; 3 are pending) -------------------------
as "$alice" submit -q --mem 1G --compute 10 -- true >/dev/null
as "$alice" submit -q --mem 1G --compute 10 -- true >/dev/null
expect queue-full 1 'queue full \(5 pending tasks\); retry later or raise --queue-max' -- \
	as "$alice" submit --mem 1G --compute 10 -- true
api queue-full-503 503 'queue full' "$alice" POST /v1/tasks \
	-d '{"command": "true", "mem_mib": 1024, "compute_pct": 10}'

# ---- changing and cancelling -----------------------------------------------
expect task-set-over-bound 1 '--priority: 9 is above 8' -- \
	as "$alice" task set "$a1" --priority 9
expect task-set 0 "task $a1: compute 40%, priority 3" -- \
	as "$alice" task set "$a1" --compute 40 --priority 3 --reason "make room for inference"
as "$admin" audit -o json >"$out"
check task-set-audited ".[0].audit | map(select(.action == \"task.set\")) | .[-1] |
	.who == \"alice\" and .object == \"${a1:-x}\" and
	(.detail | contains(\"compute_pct 30 -> 40\") and contains(\"make room for inference\"))" "$out"
expect audit-table 0 'alice +task.set' -- as "$admin" audit --limit 5
expect task-cancel 0 "task $a1: cancelled" -- as "$alice" task cancel "$a1"
# A running task (made so in the database): without the agent nothing can stop it.
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET state = 1, started = 1 WHERE id = ${b1:-0}"
expect cancel-running-no-agent 1 "task $b1 is running; stopping a running task needs the agent, and this server runs without --with-agent" -- \
	as "$bob" task cancel "$b1"
api cancel-running-409 409 'needs the agent' "$bob" POST "/v1/tasks/$b1/cancel"
expect logs-gone 1 "task $b1 has no log: task-$b1.log is not in the server's --log-dir" -- \
	as "$bob" logs "$b1"
expect task-cancel-again 0 "task $a1: cancelled" -- as "$alice" task cancel "$a1"
expect set-cancelled 1 "task $a1 is cancelled; there is nothing to change" -- \
	as "$alice" task set "$a1" --priority 1
expect queue-room-again 0 'submitted: pending' -- as "$alice" submit --mem 1G --compute 10 -- true

# ---- usage -----------------------------------------------------------------
expect help-submit 0 'usage: gpupool submit' -- "$gp" submit --help
expect help-server 0 'usage: gpupool server' -- "$gp" server --help
expect help-task 0 'cancel' -- "$gp" task --help
expect help-logs 0 'usage: gpupool logs ID \[--tail N\]' -- "$gp" logs --help
expect help-queue 0 'usage: gpupool queue' -- "$gp" queue --help
expect help-device 0 'usage: gpupool device ls' -- "$gp" device ls --help
expect help-node 0 'usage: gpupool node ls' -- "$gp" node ls --help
expect help-template-show 0 'usage: gpupool template show NAME' -- "$gp" template show --help
expect help-cancel 0 'SIGKILL after' -- "$gp" task cancel --help
expect help-server-log-dir 0 '--log-dir DIR' -- "$gp" server --help
expect logs-no-id 2 'needs one task id' -- "$gp" logs
expect logs-bad-bytes 2 '--bytes "0" must be a size from 1 to 16M' -- "$gp" logs 1 --bytes 0
expect logs-json 2 'a log is text' -- "$gp" logs 1 -o json
expect queue-args 2 'takes no arguments, got "x"' -- "$gp" queue x
expect unknown-flag 2 'unknown option "--frobnicate"' -- "$gp" submit --frobnicate -- true
expect unknown-flag-ls 2 'unknown option "--all"' -- "$gp" task ls --all
expect unknown-sub 2 'unknown subcommand "rm"' -- "$gp" task rm 1
expect bad-mem 2 '--mem "4Q" must be a size' -- "$gp" submit --mem 4Q --compute 3 -- true
expect bad-priority 2 '--priority "12" must be a whole number from 0 to 9' -- \
	"$gp" submit --mem 4G --compute 30 --priority 12 -- true
expect no-slice 2 'give the slice' -- "$gp" submit -- true
expect no-command 2 'no command' -- "$gp" submit --mem 4G --compute 30
expect set-nothing 2 'give --compute or --priority' -- "$gp" task set 1
expect bad-id 2 '"abc" is not a task id' -- "$gp" task show abc
expect bad-output 2 '-o "yaml" must be json or table' -- "$gp" queue -o yaml
expect server-bad-port 2 '--tcp "0" must be a port' -- "$gp" server --tcp 0
expect server-same-socket 1 'another server is listening' -- "$gp" server --db "$tmp/other.db"
expect server-same-db 1 "another gpupool server uses $db" -- \
	"$gp" server --db "$db" --socket "$tmp/other.sock"

# ---- stopping --------------------------------------------------------------
kill -TERM "$server"
wait "$server"
status=$?
if [ "$status" -eq 0 ] && [ ! -e "$sock" ] && grep -q 'stopping (SIGTERM)' "$log" &&
   tail -n 1 "$log" | grep -q 'stopped$'; then
	ok sigterm
else
	bad "sigterm: exit $status, socket $(ls "$sock" 2>&1)" "$log"
fi
expect unreachable 1 "cannot reach the server at $sock: is \`gpupool server\` running\?" -- \
	as "$alice" task ls

# ---- durability: SIGKILL under a stream of submissions ---------------------
start
: >"$tmp/acked"
(
	for i in $(seq 1000); do
		as "$alice" submit -q --name "d$i" --mem 1G --compute 10 -- true 2>/dev/null
	done >>"$tmp/acked"
) &
loop=$!
for _ in $(seq 300); do
	[ "$(wc -l <"$tmp/acked")" -ge 100 ] && break
	sleep 0.1
done
kill -9 "$server"
exited "the server is killed (SIGKILL)" "$server" 137
running=$(head -n 1 "$tmp/acked")
sqlite3 "$db" "UPDATE tasks SET state = 1, started = 1 WHERE id = ${running:-0}"
start
wait "$loop"    # (its status is its last submission's: some fail while no server runs)
acked=$(wc -l <"$tmp/acked")
jq -s . "$tmp/acked" >"$tmp/acked.json"
as "$admin" task ls -o json >"$out"
check durable "(.[0].tasks | map(.id)) as \$have | .[1] | length == $acked and
	length >= 100 and (. - \$have) == []" "$out" "$tmp/acked.json"
check lost-on-restart ".[0].tasks | map(select(.id == ${running:-0})) | .[0] |
	.state == \"lost\" and .reason == \"server restarted; the task was not re-adopted\"" "$out"
expect lost-said 0 'were running when the server stopped' -- cat "$log"
echo "# $acked of 1000 submissions acknowledged around a SIGKILL"

finish
