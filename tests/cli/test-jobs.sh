#!/bin/sh
# test-jobs.sh — the job CLI a Slurm user recognises (issue 27), on a
# server with this machine's agent and one simulated T4, tasks that are
# plain shell commands:
#   submit --wait exits with the task's status: its code (0, 3), 128+9
#   for a task SIGKILLed, 124 cancelled, 125 could not start; a line on
#   stderr says how it ended, stdout holds what submit prints anyway; a
#   server that goes away ends the wait with exit 1 and says so;
#   logs -f ends with the task and exits with the same status;
#   memory sizes: 4GB, 4096 (MiB), 4GiB, 4G, 512M, 512MiB, 4gb;
#   the common options before and after the command's name;
#   an unknown command: one line, "did you mean";
#   the server's errors about API fields shown as the flags typed.
# usage: test-jobs.sh PATH/TO/gpupool
set -u
gp=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$top/tests/server/agent-lib.sh"
unset GPUPOOL_TOKEN
# Another server on this machine may hold the default uid range.
server_start --task-uid-base auto --grace-ms 2000 || { finish; exit 1; }

# waits NAME STATUS PATTERN -- COMMAND...: as expect, and stdout alone
# (in $tmp/stdout) is what submit prints without --wait: one line.
waits() {
	name=$1 want=$2 pattern=$3
	shift 4
	"$@" >"$tmp/stdout" 2>"$tmp/stderr"
	got=$?
	if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/stderr" &&
		[ "$(wc -l <"$tmp/stdout")" -eq 1 ] && grep -q '^task [0-9]* submitted' "$tmp/stdout"; then
		ok "$name"
	else
		echo "exit $got (want $want); stdout, stderr:" >"$tmp/why"
		bad "$name" "$tmp/why" "$tmp/stdout" "$tmp/stderr"
	fi
}
slice="--mem 1G --compute 10"

# ---- submit --wait: the task's exit status ----------------------------------------
waits "--wait: a task that exits 0" 0 'task [0-9]+ succeeded' -- "$gp" submit --wait $slice -- true
waits "--wait: a task that exits 3" 3 'task [0-9]+ failed: exited with code 3' -- \
	"$gp" submit --wait $slice -- sh -c 'echo out; exit 3'
waits "--wait: a task SIGKILLed, 128+9" 137 'killed by signal 9' -- \
	"$gp" submit --wait $slice -- sh -c 'kill -9 $$'
expect "--wait -q: the id alone, the status still the task's" 3 '^[0-9]+$' -- \
	"$gp" submit --wait -q $slice -- sh -c 'exit 3'

# Cancelled while it runs: 124.
"$gp" submit --wait $slice --name sleeper -- sleep 60 >"$tmp/cancel.out" 2>"$tmp/cancel.err" &
waiter=$!
eventually "the waited-for task runs" 10 "$tmp/running.json" \
	'[.tasks[] | select(.name == "sleeper" and .state == "running")] | length == 1' -- \
	"$gp" task ls -o json
sleeper=$(jq -r '.tasks[] | select(.name == "sleeper") | .id' "$tmp/running.json")
"$gp" task cancel "$sleeper" >/dev/null
exited "--wait: a task cancelled while running, 124" "$waiter" 124
expect "... and stderr says so" 0 "task $sleeper cancelled: cancelled by admin.*exit status 124" -- \
	cat "$tmp/cancel.err"

# Cancelled before it ran (queued behind a whole device): 124 too.
blocker=$("$gp" submit -q --whole -- sleep 60)
wait_for "a whole device runs" 10 "$blocker" '.state == "running"'
"$gp" submit --wait $slice --name queued -- true >/dev/null 2>"$tmp/queued.err" &
waiter=$!
eventually "the second task waits in the queue" 10 "$tmp/queued.json" \
	'[.tasks[] | select(.name == "queued" and .state == "pending")] | length == 1' -- \
	"$gp" task ls -o json
"$gp" task cancel "$(jq -r '.tasks[] | select(.name == "queued") | .id' "$tmp/queued.json")" >/dev/null
exited "--wait: a task cancelled in the queue, 124" "$waiter" 124

# Could not start (its directory gone before it started): 125.
mkdir "$tmp/gone"
"$gp" submit --wait $slice --name nostart --workdir "$tmp/gone" -- true \
	>/dev/null 2>"$tmp/nostart.err" &
waiter=$!
eventually "the task waits behind the whole device" 10 "$tmp/nostart.json" \
	'[.tasks[] | select(.name == "nostart" and .state == "pending")] | length == 1' -- \
	"$gp" task ls -o json
rmdir "$tmp/gone"
"$gp" task cancel "$blocker" >/dev/null
exited "--wait: a task that could not start, 125" "$waiter" 125
expect "... and stderr says why" 0 'could not start: .*working directory.*exit status 125' -- \
	cat "$tmp/nostart.err"

# ---- logs -f: ends with the task, exits with its status -------------------------
five=$("$gp" submit -q $slice -- sh -c 'echo first; sleep 1; echo second; exit 5')
expect "logs -f: the whole log, then the task's code" 5 'first' -- "$gp" logs -f "$five"
cp "$tmp/out" "$tmp/follow.out"
expect "... its last line too" 0 '^second$' -- cat "$tmp/follow.out"
id=$("$gp" submit -q $slice -- sh -c 'echo x; kill -9 $$')
expect "logs -f of a task that ended with a signal: 128+9" 137 '^x$' -- "$gp" logs -f "$id"
id=$("$gp" submit -q $slice -- sleep 60)
wait_for "a task to cancel runs" 10 "$id" '.state == "running"'
"$gp" logs -f "$id" >/dev/null 2>&1 &
follower=$!
"$gp" task cancel "$id" >/dev/null
exited "logs -f of a task cancelled: 124" "$follower" 124
expect "logs without -f: 0 whatever the task did" 0 '^second$' -- "$gp" logs "$five"

# ---- memory sizes ------------------------------------------------------------------
for spelling in 4GB:4096 4096:4096 4GiB:4096 4G:4096 4gb:4096 512M:512 512MiB:512 512MB:512; do
	size=${spelling%:*} mib=${spelling#*:}
	"$gp" submit -o json --mem "$size" --compute 1 -- true >"$tmp/size.json" 2>&1
	check "--mem $size is $mib MiB" ".[0].mem_mib == $mib" "$tmp/size.json"
done
expect "template add --mem 2GB" 0 'added' -- "$gp" template add t2 --mem 2GB --compute 5
expect "... is 2048 MiB" 0 '"mem_mib":2048' -- "$gp" template ls -o json
expect "a size of another unit is refused" 2 '--mem "4XB" must be a size like 4G, 4GB, 512M or 4096 \(MiB\)' -- \
	"$gp" submit --mem 4XB --compute 1 -- true
expect "a fraction is refused" 2 '--mem "1.5G" must be a size' -- "$gp" submit --mem 1.5G --compute 1 -- true

# ---- the common options anywhere -----------------------------------------------------
good=$GPUPOOL_SOCKET
export GPUPOOL_SOCKET=$tmp/no-server.sock
expect "--socket before the command" 0 '"tasks":' -- "$gp" --socket "$good" -o json task ls
expect "--socket=PATH between the group and its subcommand" 0 '"tasks":' -- \
	"$gp" task --socket="$good" -ojson ls
expect "--socket after the subcommand" 0 '"tasks":' -- "$gp" task ls --socket "$good" -o json
expect "-o json before submit" 0 '^\{"id":[0-9]+' -- \
	"$gp" -o json --socket "$good" submit --mem 1G --compute 1 -- true
expect "without --socket, the environment's" 1 'cannot reach the server at .*no-server.sock' -- \
	"$gp" -o json task ls
export GPUPOOL_SOCKET=$good
expect "an option before the command that needs a value" 2 'missing value for "-o"' -- "$gp" -o
expect "an unknown option before the command" 2 '^gpupool: unknown option "--frob"' -- "$gp" --frob task ls

# ---- unknown commands: one line, did you mean ---------------------------------------
oneline() {
	expect "$@" && { [ "$(wc -l <"$tmp/out")" -eq 1 ] && ok "... in one line" || bad "... in one line" "$tmp/out"; }
}
oneline "a slip of submit" 2 '^gpupool: unknown command "sumbit"; did you mean "submit"\? \(gpupool help lists the commands\)$' -- \
	"$gp" sumbit --mem 1G
oneline "a slip of template" 2 'did you mean "template"\?' -- "$gp" templat ls
oneline "a slip of a subcommand" 2 '^gpupool task: unknown subcommand "sho"; did you mean "show"\?' -- "$gp" task sho 1
oneline "nothing near" 2 '^gpupool: unknown command "frobnicate" \(gpupool help lists the commands\)$' -- \
	"$gp" frobnicate
expect "gpupool help COMMAND" 0 '^usage: gpupool submit' -- "$gp" help submit

# ---- the server's errors in the CLI's words ------------------------------------------
expect "--mem past the largest device: the flag, not the API's field" 1 \
	'^gpupool submit: --mem: this pool.s largest device (for cuda )?has [0-9]+ MiB' -- \
	"$gp" submit --mem 200G --compute 10 -- true
cp "$tmp/out" "$tmp/mem.err"
expect "... mem_mib nowhere" 1 '^0$' -- grep -c mem_mib "$tmp/mem.err"
expect "an unknown template: the command that lists them" 1 \
	'--template: no template "nope" \(`gpupool template ls` lists them\)' -- \
	"$gp" submit --template nope -- true
expect "a tenant's name: its argument" 1 "^gpupool tenant add: the tenant's name must be" -- \
	"$gp" tenant add 'no spaces'

# ---- a server that goes away while a task is waited for ------------------------------
"$gp" submit --wait --mem 1G --compute 1 --model no-such-model --await-cards -- true \
	>"$tmp/gone.out" 2>"$tmp/gone.err" &
waiter=$!
eventually "a task no device answers waits" 10 "$tmp/gone.json" \
	'[.tasks[] | select(.model == "no-such-model" and .state == "pending")] | length == 1' -- \
	"$gp" task ls -o json
cleanup_hook
stops "the server stops" "$server"
server=
exited "--wait: the server gone, exit 1" "$waiter" 1
expect "... saying so" 0 'cannot reach the server.*stopped waiting for task [0-9]+; it may still run' -- \
	tr '\n' ' ' <"$tmp/gone.err"
finish
