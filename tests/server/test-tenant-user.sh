#!/bin/sh
# test-tenant-user.sh — tenants' Unix users and tasks' declared variables,
# end to end, on a server without an agent: `gpupool tenant add --user`
# with a real user of this machine, NAME:GROUP and UID:GID; root and
# unknown users refused with the field named; `gpupool tenant set` (and
# PATCH /v1/tenants/NAME) changing the user and the quotas, each change
# in the audit log as old -> new; `tenant ls` showing the user (auto for
# ""); `gpupool submit --env` and GET /v1/tasks/ID showing the variables
# (the list leaves them out); gpupool's own names refused by the CLI
# before sending and by the API; the object's bounds.
# usage: test-tenant-user.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
sock=$tmp/server.sock
out=$tmp/out
export GPUPOOL_SOCKET="$sock" GPUPOOL_DB="$tmp/unused/gpupool.db" GPUPOOL_TOKEN_FILE="$tmp/state/admin.token"
unset GPUPOOL_TOKEN

"$gp" server --db "$tmp/state/gpupool.db" >>"$tmp/server.log" 2>&1 &
server=$!
finish_hook() { stops "the server stops on SIGTERM" "$server" || cat "$tmp/server.log"; }
serving
admin=$(cat "$tmp/state/admin.token" 2>/dev/null) || { bad "the server did not start" "$tmp/server.log"; finish; exit 1; }

# A user and a group of this machine that are not root's.
user=$(getent passwd | awk -F: '$3 != 0 && $4 != 0 && $1 ~ /^[a-z_][a-z0-9_-]*$/ { print $1; exit }')
uid=$(id -u "$user")
group=$(getent group | awk -F: '$3 != 0 && $1 ~ /^[a-z_][a-z0-9_-]*$/ { print $1; exit }')
gid=$(getent group "$group" | cut -d: -f3)
root_group=$(getent group 0 | cut -d: -f1)
echo "# with user $user (uid $uid), group $group (gid $gid)"

# ---- tenants and their users -------------------------------------------------
vision=$("$gp" tenant add vision --unlimited --user "$user" 2>"$out")
[ -n "$vision" ] && ok "tenant add --user NAME" || bad "tenant add --user NAME" "$out"
expect "tenant add --user NAME:GROUP" 0 '^[0-9a-f]{32,}$' -- "$gp" tenant add nlp --unlimited --user "$user:$group"
expect "tenant add --user UID:GID" 0 '^[0-9a-f]{32,}$' -- "$gp" tenant add ids --unlimited --user 4242:4343
expect "tenant add --user auto" 0 '^[0-9a-f]{32,}$' -- "$gp" tenant add plain --unlimited --user auto
expect "root is refused" 1 '--user: user "root" is uid 0; tasks never run as root: map the tenant to an unprivileged user' -- \
	"$gp" tenant add r1 --unlimited --user root
expect "uid 0 is refused" 1 'tasks never run as root' -- "$gp" tenant add r2 --unlimited --user 0:100
expect "gid 0 is refused" 1 'gid 0 .*tasks never run as root' -- "$gp" tenant add r3 --unlimited --user 100:0
expect "the root group is refused" 1 'gid 0 \(the root group\); tasks never run as root' -- \
	"$gp" tenant add r4 --unlimited --user "$user:$root_group"
expect "an unknown user is refused" 1 '--user: no user "gp-no-such-user" on this machine' -- \
	"$gp" tenant add r5 --unlimited --user gp-no-such-user
expect "an unknown group is refused" 1 "no group \"gp-no-such-group\" on this machine" -- \
	"$gp" tenant add r6 --unlimited --user "$user:gp-no-such-group"
expect "a malformed spec is refused" 1 'give NAME:GROUP \(two names\) or UID:GID \(two numbers\), not one of each' -- \
	"$gp" tenant add r7 --unlimited --user "$user:1000"
expect "an empty --user is refused by the CLI" 2 '--user needs NAME, NAME:GROUP, UID:GID or auto' -- \
	"$gp" tenant add r8 --unlimited --user ""
"$gp" tenant ls -o json >"$out"
check "no refused tenant was made" '[.[0].tenants[].name] == ["admin", "vision", "nlp", "ids", "plain"]' "$out"
check "GET /v1/tenants shows the users" "[.[0].tenants[] | .user] ==
	[\"\", \"$user\", \"$user:$group\", \"4242:4343\", \"\"]" "$out"
expect "tenant ls shows the user, auto for automatic" 0 "^[0-9]+ +nlp +no +$user:$group " -- "$gp" tenant ls
expect "tenant ls: auto" 0 '^[0-9]+ +plain +no +auto ' -- "$gp" tenant ls
api "POST /v1/tenants with a user" 201 "\"user\":\"$user\"" "$admin" POST /v1/tenants \
	-d "{\"name\": \"posted\", \"unlimited\": true, \"user\": \"$user\"}"
api "POST /v1/tenants: a user that is not a string" 400 'field \\"user\\" must be a string of at most 63 bytes' \
	"$admin" POST /v1/tenants -d '{"name": "p2", "user": 1000}'

# ---- changing a tenant ---------------------------------------------------------
expect "tenant set --user and quotas" 0 "tenant \"vision\": user 4242:4243, memory 8G\\+0, compute 150\\+0%" -- \
	"$gp" tenant set vision --user 4242:4243 --mem-guaranteed 8G --compute-guaranteed 150
expect "tenant set --user auto" 0 'tenant "vision": user auto, memory 8G' -- "$gp" tenant set vision --user auto
expect "tenant set --user root is refused" 1 'tasks never run as root' -- "$gp" tenant set vision --user root
expect "tenant set without a change" 2 'give what to change' -- "$gp" tenant set vision
expect "tenant set of nobody" 1 'no tenant "gp-nobody"' -- "$gp" tenant set gp-nobody --user auto
expect "tenant set: a bad size names the flag" 2 '--mem-guaranteed' -- "$gp" tenant set vision --mem-guaranteed lots
expect "tenant set by a tenant" 1 'only the admin may change tenants' -- \
	"$gp" tenant set vision --user auto --token "$vision"
"$gp" audit -o json >"$out"
check "each change is audited, old -> new" "[.[0].audit[] | select(.action == \"tenant.set\") | .detail] ==
	[\"user \\\"$user\\\" -> \\\"4242:4243\\\"; mem_guaranteed_mib 0 -> 8192; compute_guaranteed_pct 0 -> 150\",
	 \"user \\\"4242:4243\\\" -> automatic\"]" "$out"
check "tenant add is audited with the user" ".[0].audit[] | select(.action == \"tenant.add\" and .object == \"nlp\") |
	.detail | endswith(\"user \\\"$user:$group\\\"\")" "$out"
api "PATCH /v1/tenants/NAME" 200 '"name":"nlp".*"compute_borrowable_pct":50.*"user":"4242:4343"' "$admin" \
	PATCH /v1/tenants/nlp -d '{"user": "4242:4343", "compute_borrowable_pct": 50}'
"$gp" tenant ls -o json >"$out"
check "the PATCH kept what it was not given" '.[0].tenants[] | select(.name == "nlp") |
	.user == "4242:4343" and .compute_borrowable_pct == 50 and .mem_guaranteed_mib == 0' "$out"
api "PATCH: an empty body" 400 'give what to change' "$admin" PATCH /v1/tenants/nlp -d '{}'
api "PATCH: the name cannot change" 400 'unknown field \\"name\\"' "$admin" PATCH /v1/tenants/nlp \
	-d '{"name": "x"}'
api "PATCH: a quota out of range" 400 'field \\"compute_guaranteed_pct\\" must be a whole number from 0 to 102400' \
	"$admin" PATCH /v1/tenants/nlp -d '{"compute_guaranteed_pct": 200000}'
api "PATCH: no such tenant" 404 'no tenant \\"gp-nobody\\"' "$admin" PATCH /v1/tenants/gp-nobody \
	-d '{"user": ""}'
api "PATCH: a tenant may not" 403 'only the admin may change tenants' "$vision" PATCH /v1/tenants/vision \
	-d '{"user": ""}'
api "GET /v1/tenants/NAME is not an endpoint" 405 'not allowed' "$admin" GET /v1/tenants/nlp

# ---- tasks' declared variables ---------------------------------------------------
id=$("$gp" submit -q --mem 1G --compute 10 --env A=1 --env 'B=x y=z' --env LD_LIBRARY_PATH=/opt/lib \
	--token "$vision" -- true 2>"$out")
"$gp" task show "$id" -o json --token "$vision" >"$out" 2>&1
check "GET /v1/tasks/ID shows the variables" \
	'.[0].env == {"A": "1", "B": "x y=z", "LD_LIBRARY_PATH": "/opt/lib"}' "$out"
expect "task show prints them" 0 '^env +\{"A":"1","B":"x y=z","LD_LIBRARY_PATH":"/opt/lib"\}$' -- \
	"$gp" task show "$id" --token "$vision"
"$gp" task ls -o json --token "$vision" >"$out"
check "the list leaves them out" '.[0].tasks | length == 1 and (.[0] | has("env") | not)' "$out"
none=$("$gp" task submit -q --mem 1G --compute 10 --token "$vision" -- true)
"$gp" task show "$none" -o json --token "$vision" >"$out" 2>&1
check "task submit (the alias), no variables: env {}" '.[0].env == {}' "$out"
"$gp" audit -o json >"$out"
check "the submission's audit row names the variables" ".[0].audit[] | select(.action == \"task.submit\" and
	.object == \"$id\") | .detail | endswith(\"; env A, B, LD_LIBRARY_PATH\")" "$out"
for var in LD_PRELOAD LD_AUDIT GPUPOOL_MEM_LIMIT CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES \
	ASCEND_RT_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES MLU_VISIBLE_DEVICES \
	ZE_AFFINITY_MASK HOME USER LOGNAME; do
	expect "--env $var is refused before sending" 2 "--env: variable \"$var\" is gpupool's own \\(.*\\); leave it out" -- \
		"$gp" submit --socket "$tmp/nothing.sock" --mem 1G --compute 10 --env "$var=x" -- true
	api "env $var is refused by the API" 400 "field \\\\\"env\\\\\": variable \\\\\"$var\\\\\" is gpupool's own" \
		"$vision" POST /v1/tasks -d "{\"command\": \"true\", \"mem_mib\": 1, \"compute_pct\": 1, \"env\": {\"$var\": \"x\"}}"
done
expect "--env without =" 2 '--env "A" must be NAME=VALUE' -- "$gp" submit --mem 1G --compute 10 --env A -- true
expect "--env with a bad name" 2 'variable "1A": a name is 1 to 128 letters, digits or' -- \
	"$gp" submit --mem 1G --compute 10 --env 1A=x -- true
expect "--env twice" 2 '--env A is given twice' -- "$gp" submit --mem 1G --compute 10 --env A=1 --env A=2 -- true
big=$(head -c 4097 /dev/zero | tr '\0' v)
expect "--env with a value too long" 2 'at most 4096 bytes' -- "$gp" submit --mem 1G --compute 10 --env "A=$big" -- true
api "env: a value that is not a string" 400 'variable \\"A\\": the value must be a string' "$vision" POST /v1/tasks \
	-d '{"command": "true", "mem_mib": 1, "compute_pct": 1, "env": {"A": 1}}'
api "env: not an object" 400 'field \\"env\\": it must be an object of variables' "$vision" POST /v1/tasks \
	-d '{"command": "true", "mem_mib": 1, "compute_pct": 1, "env": ["A=1"]}'
api "env: a value over 4096 bytes" 400 'variable \\"A\\": the value is 4097 bytes, over 4096' "$vision" POST /v1/tasks \
	-d "{\"command\": \"true\", \"mem_mib\": 1, \"compute_pct\": 1, \"env\": {\"A\": \"$big\"}}"
many=$(seq 65 | awk '{ printf "%s\"V%d\": \"x\"", (NR > 1 ? ", " : ""), $1 }')
api "env: 65 variables" 400 '65 variables, over 64' "$vision" POST /v1/tasks \
	-d "{\"command\": \"true\", \"mem_mib\": 1, \"compute_pct\": 1, \"env\": {$many}}"
"$gp" task ls -o json --token "$vision" >"$out"
check "no refused submission was stored" ".[0].tasks | map(.id) == [${id:-0}, ${none:-0}]" "$out"
expect "help: tenant set" 0 'usage: gpupool tenant set NAME \[--user SPEC\|auto\]' -- "$gp" tenant set --help
expect "help: submit --env" 0 '--env NAME=VALUE' -- "$gp" submit --help
expect "help: task lists submit" 0 'submit +queue a task' -- "$gp" task --help

finish
