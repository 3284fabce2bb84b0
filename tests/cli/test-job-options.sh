#!/bin/sh
# test-job-options.sh — the job options a Slurm user recognises (issue 27),
# on a server with this machine's agent and a mixed simulated pool (an
# A100 of 80 GiB and a T4 of 15 GiB), tasks that are plain shell commands:
#   --time: a task is stopped at its limit, counted from its start (not
#   from its submission), and fails with the reason, an audit row and
#   submit --wait's 123;
#   --after: :ok waits for a success, :any for any end, a failed :ok
#   dependency cancels the dependant with the reason, an unknown task, one
#   of another tenant (but by the admin) and a malformed list are refused
#   at submit, and a dependency survives a restart of the server;
#   --array: each member has its index and the array's id in its
#   environment, task ls names it name[i], --wait exits with the first
#   nonzero member status;
#   --mem 50%: half of the card each task got, 7.5 GiB of the T4 and 40
#   GiB of the A100, as the scheduler counts it and as the task may
#   allocate; 0% and 101% refused; a quota checked on the largest card;
#   template add -f: show -o yaml, edit, add -f round-trips (runtime and
#   time too); a malformed file is refused naming its line and field.
# usage: test-job-options.sh PATH/TO/gpupool PATH/TO/gpuload
set -u
gp=$1 gl=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g:1,t4-16g:1
. "$top/tests/server/agent-lib.sh"
unset GPUPOOL_TOKEN
# Another server on this machine may hold the default uid range.
server_start --task-uid-base auto --grace-ms 1000 || { finish; exit 1; }
admin=$(cat "$GPUPOOL_TOKEN_FILE")
slice="--mem 1G --compute 5"
# show ID: the task's JSON (in $tmp/show.json).
show() {
	"$gp" task show "$1" -o json >"$tmp/show.json"
}
# audited ACTION ID PATTERN: an audit row ACTION of task ID matches PATTERN.
audited() {
	"$gp" audit --limit 1000 -o json |
		jq -e --arg a "$1" --arg o "task $2" --arg p "$3" \
			'[.audit[] | select(.action == $a and .object == $o and (.detail | test($p)))]
			 | length >= 1' >/dev/null
}

# ---- --time ---------------------------------------------------------------------------
id=$("$gp" submit -q $slice --time 0:02 -- sleep 600)
wait_for "--time 0:02: the task is stopped at its limit and fails" 60 "$id" \
	'.state == "failed" and .timed_out and .time_limit_s == 2'
check "... with the reason" '.[0].reason | test("^time limit 0:00:02 reached; killed by signal 15$")' \
	"$tmp/task.json"
check "... having run its limit" '.[0] | .ended_ms - .started_ms >= 2000' "$tmp/task.json"
audited task.time-limit "$id" 'time limit 0:00:02 reached; stopping it' &&
	ok "the audit log says the limit stopped it" || bad "the audit log says the limit stopped it"
audited task.end "$id" 'time limit 0:00:02 reached' &&
	ok "... and how it ended" || bad "... and how it ended"
expect "task show writes the limit" 0 '^time_limit +0:00:02$' -- "$gp" task show "$id"
expect "task ls: the LIMIT column and the reason" 0 \
	"^$id +admin +sleep +failed .* 0:00:02 .*time limit 0:00:02 reached" -- "$gp" task ls
expect "submit --wait: 123 for a task its time limit ended" 123 \
	'failed: time limit 0:00:01 reached.*\(exit status 123\)' -- \
	"$gp" submit --wait $slice --time 0:01 -- sleep 600
expect "a time limit Slurm does not write is refused, with the forms" 2 \
	'--time "1:75" must be a time limit as Slurm writes one: MINUTES, MINUTES:SECONDS' -- \
	"$gp" submit $slice --time 1:75 -- true

# The limit counts from the start: a task queued longer than its limit
# still runs (and writes its mark after a second) before it is stopped.
blocker=$("$gp" submit -q --whole --model T4 -- sleep 6)
wait_for "a whole T4 runs" 20 "$blocker" '.state == "running"'
late=$("$gp" submit -q $slice --model T4 --time 0:03 -- sh -c "sleep 1; touch $tmp/late.mark; sleep 600")
wait_for "a task with a 3 s limit waits behind it" 10 "$late" '.state == "pending"'
wait_for "it starts once the T4 is free, and its limit ends it" 60 "$late" \
	'.state == "failed" and .timed_out'
check "it waited past its limit before it started" '.[0] | .started_ms - .created_ms >= 3000' \
	"$tmp/task.json"
expect "... and ran a second at least (its mark)" 0 'late.mark' -- ls "$tmp/late.mark"

# ---- --after ------------------------------------------------------------------------
a=$("$gp" submit -q $slice -- sleep 3)
three=$("$gp" submit -q $slice -- sh -c 'sleep 3; exit 3')
ok_dep=$("$gp" submit -q $slice --after "$a" -- true)
any_dep=$("$gp" submit -q $slice --after "$three:any" -- true)
failed_dep=$("$gp" submit -q $slice --after "$three" -- true)
chain=$("$gp" submit -q $slice --after "$failed_dep:any,$a:ok" -- true)
show "$ok_dep"
check "--after A: it waits, its reason names A" \
	".[0] | .state == \"pending\" and (.reason | test(\"waiting for task $a to succeed\")) and .after == \"$a:ok\"" \
	"$tmp/show.json"
wait_for "--after A (:ok, the default): it runs once A succeeded" 30 "$ok_dep" '.state == "succeeded"'
"$gp" task show "$ok_dep" -o json >"$tmp/ok-dep.json"
wait_for "A succeeded" 30 "$a" '.state == "succeeded"'
check "... and it started once A had ended, not before" \
	'.[0].ended_ms > 0 and .[1].started_ms >= .[0].ended_ms' "$tmp/task.json" "$tmp/ok-dep.json"
wait_for "--after B:any: it runs though B failed" 30 "$any_dep" '.state == "succeeded"'
wait_for "--after B (:ok) of a B that failed: it is cancelled, saying why" 30 "$failed_dep" \
	".state == \"cancelled\" and .reason == \"dependency $three failed (exit 3)\""
audited task.cancel "$failed_dep" "dependency $three failed \\(exit 3\\)" &&
	ok "... in the audit log too" || bad "... in the audit log too"
wait_for "--after C:any,A: a cancelled C is an end too" 30 "$chain" '.state == "succeeded"'
expect "submit --wait of a task whose dependency failed: cancelled, 124" 124 \
	"dependency $three failed \\(exit 3\\)" -- "$gp" submit --wait $slice --after "$three" -- true
expect "--after an unknown task is refused at submit" 1 '^gpupool submit: --after: no task 99999$' -- \
	"$gp" submit $slice --after 99999 -- true
expect "a malformed --after is refused before anything is sent" 2 \
	'--after "3:okk" must be ID\[:ok\|:any\]' -- "$gp" submit $slice --after 3:okk -- true
runs "tenant lab is added" "$tmp/lab.json" -- "$gp" tenant add lab --mem-guaranteed 16G \
	--compute-guaranteed 100 -o json
lab=$(jq -r .token "$tmp/lab.json")
expect "a tenant may not wait for another tenant's task" 1 \
	"--after: task $a is another tenant's" -- as "$lab" submit $slice --after "$a" -- true
lab_task=$(as "$lab" submit -q $slice -- true)
expect "the admin may wait for a tenant's task" 0 '^task [0-9]+ submitted' -- \
	"$gp" submit $slice --after "$lab_task:any" -- true

# A dependency survives a restart of the server.
long=$("$gp" submit -q $slice -- sleep 8)
after_long=$("$gp" submit -q $slice --after "$long" -- true)
wait_for "a task waits for a running one" 20 "$long" '.state == "running"'
stops "the server stops while they wait and run" "$server" # its tasks run on
server_start --task-uid-base auto --grace-ms 1000 || { finish; exit 1; }
show "$after_long"
check "after the restart it still waits, for that one" \
	".[0] | .state == \"pending\" and (.reason | test(\"task $long\"))" "$tmp/show.json"
wait_for "... and runs once it succeeded" 40 "$after_long" '.state == "succeeded"'

# ---- --array ------------------------------------------------------------------------
runs "--array 3" "$tmp/array.out" -- "$gp" submit $slice --name job --array 3 -- \
	sh -c 'echo "index=$GPUPOOL_ARRAY_INDEX array=$GPUPOOL_ARRAY_ID"'
expect "... prints its three ids on one line" 0 '^tasks [0-9]+ [0-9]+ [0-9]+ submitted \(array [0-9]+, indexes 0-2\)' -- \
	cat "$tmp/array.out"
set -- $(sed 's/^tasks \([0-9 ]*\) submitted.*/\1/' "$tmp/array.out")
i=0
for member in "$@"; do
	wait_for "member $i ends" 30 "$member" '.state == "succeeded"'
	expect "member $i has its index and the array's id in its environment" 0 \
		"^index=$i array=$1\$" -- log "$member"
	i=$((i + 1))
done
expect "task ls names them job[0], job[1], job[2]" 0 "^$3 +admin +job\\[2\\] " -- "$gp" task ls
runs "--array 5-6 -q" "$tmp/range.out" -- "$gp" submit -q $slice --array 5-6 -- \
	sh -c 'echo "index=$GPUPOOL_ARRAY_INDEX"'
wait_for "a range's last member ends" 30 "$(tail -1 "$tmp/range.out")" '.state == "succeeded"'
expect "... with the range's index" 0 '^index=6$' -- log "$(tail -1 "$tmp/range.out")"
expect "--wait --array: the first nonzero member status, in index order" 6 'exit status|exited with code 7' -- \
	"$gp" submit --wait $slice --array 3 -- sh -c 'test "$GPUPOOL_ARRAY_INDEX" = 0 || exit $((GPUPOOL_ARRAY_INDEX + 5))'
expect "an array of 0 is refused" 2 '--array "0" must be N' -- "$gp" submit $slice --array 0 -- true

# ---- --mem 50% ------------------------------------------------------------------------
"$gp" device ls -o json >"$tmp/devices.json"
t4_mib=$(jq '.devices[] | select(.name | test("T4")) | .memory_total_mib' "$tmp/devices.json")
a100_mib=$(jq '.devices[] | select(.name | test("A100")) | .memory_total_mib' "$tmp/devices.json")
# Each task takes either card: the other is held whole meanwhile, so that
# one lands on the T4 and one on the A100, each as half of its own.
# pct_on MODEL: holds a whole MODEL, then submits a 50 % task that takes
# either card (placed on the other), and lets MODEL go; its id in $pct.
pct_on() {
	hold=$("$gp" submit -q --whole --model "$1" -- sleep 600)
	wait_for "a whole $1 is held" 20 "$hold" '.state == "running"'
	pct=$("$gp" submit -q --mem 50% --compute 10 -- "$gl" alloc --mib 12000 --chunk-mib 256 --json)
	"$gp" task cancel "$hold" >/dev/null
}
pct_on A100
on_t4=$pct
wait_for "--mem 50% that takes either card ends on the T4" 30 "$on_t4" '.state == "succeeded"'
check "... its memory is half the T4's" ".[0] | .mem_pct == 50 and .mem_mib == $((t4_mib / 2))" \
	"$tmp/task.json"
pct_on T4
on_a100=$pct
wait_for "... and on the A100" 30 "$on_a100" '.state == "succeeded"'
check "... its memory is half the A100's" ".[0] | .mem_pct == 50 and .mem_mib == $((a100_mib / 2))" \
	"$tmp/task.json"
log "$on_t4" | tail -1 >"$tmp/t4-alloc.json"
check "on the T4 it could not allocate past half the card" \
	".[0] | .oom and .allocated_mib <= $((t4_mib / 2))" "$tmp/t4-alloc.json"
log "$on_a100" | tail -1 >"$tmp/a100-alloc.json"
check "on the A100 it allocated all 12000 MiB" '.[0] | .allocated_mib == 12000 and (.oom | not)' \
	"$tmp/a100-alloc.json"
expect "task show: the percent, what it came to, and on which card" 0 \
	"^mem_pct +50% \\($((a100_mib / 2 / 1024)) GiB on NVIDIA A100-SXM4-80GB #[0-9]\\)\$" -- \
	"$gp" task show "$on_a100"
expect "task ls writes 50%" 0 "^$on_t4 +admin +gpuload +succeeded +5 +50% " -- "$gp" task ls
expect "task show of the T4's: on the T4" 0 '^mem_pct +50% \(7.5 GiB on Tesla T4 #[0-9]\)$' -- \
	"$gp" task show "$on_t4"
expect "--mem 0% is refused" 2 '--mem "0%": a share of the card.s memory is a whole percent from 1% to 100%' -- \
	"$gp" submit --mem 0% --compute 10 -- true
expect "--mem 101% is refused" 2 '--mem "101%": a share' -- "$gp" submit --mem 101% --compute 10 -- true
expect "a quota checked on the largest card the task takes: 40 GiB of an A100 is past 16" 1 \
	'--mem: tenant "lab" has a quota of 16384 MiB .*needs 40960 MiB' -- \
	as "$lab" submit --mem 50% --compute 10 --model A100 -- true
expect "... 7.5 GiB of a T4 is within it" 0 'submitted' -- as "$lab" submit --mem 50% --compute 10 --model T4 -- true

# ---- template add -f --------------------------------------------------------------------
expect "template add with --runtime and --time" 0 'added' -- \
	"$gp" template add t4-half --mem 8G --compute 50 --models t4 --runtime cuda --time 1:00:00
runs "template show -o yaml" "$tmp/t4-half.yaml" -- "$gp" template show t4-half -o yaml
expect "... says its runtime and time" 0 "time: '1:00:00'" -- grep -A1 'runtime: cuda' "$tmp/t4-half.yaml"
sed 's/^name: t4-half$/name: t4-third/; s/^compute_pct: 50$/compute_pct: 33/' "$tmp/t4-half.yaml" \
	>"$tmp/t4-third.yaml"
expect "template add -f the edited file" 0 '^template "t4-third" added$' -- \
	"$gp" template add -f "$tmp/t4-third.yaml"
runs "its show -o yaml" "$tmp/t4-third.back.yaml" -- "$gp" template show t4-third -o yaml
expect "... is the file as edited: show, edit, add -f round-trips" 0 '^same$' -- \
	sh -c 'diff "$1" "$2" && echo same' - "$tmp/t4-third.yaml" "$tmp/t4-third.back.yaml"
id=$("$gp" submit -q --template t4-third -- true)
show "$id"
check "a task of the template gets its time limit and runtime" \
	'.[0] | .time_limit_s == 3600 and .runtime == "cuda" and .compute_pct == 33' "$tmp/show.json"
printf 'name: bad\nmodels: [t4]\nmemroy_mib: 8192\ncompute_pct: 5\n' >"$tmp/bad1.yaml"
expect "a malformed file: an unknown field, with its line" 2 \
	"bad1.yaml:3: unknown field \"memroy_mib\"; did you mean \"memory_mib\"\\?" -- \
	"$gp" template add -f "$tmp/bad1.yaml"
printf 'name: bad\nmemory_mib: 8192\ncompute_pct: 500\n' >"$tmp/bad2.yaml"
expect "... a bad value, with its line and field" 2 \
	'bad2.yaml:3: field "compute_pct": "500" is not a share of a device, 1 to 100' -- \
	"$gp" template add -f "$tmp/bad2.yaml"
printf 'name: bad\nmemory_mib: 8192\ncompute_pct: [5\n' >"$tmp/bad3.yaml"
expect "... not YAML, with its line" 2 'bad3.yaml:4: not YAML: .*from line 3' -- \
	"$gp" template add -f "$tmp/bad3.yaml"
printf 'name: bad\nmemory_mib: 8192\n' >"$tmp/bad4.yaml"
expect "... a field missing" 2 'bad4.yaml: field "compute_pct" is missing' -- \
	"$gp" template add -f "$tmp/bad4.yaml"
expect "... and nothing was added" 1 'no template "bad"' -- "$gp" template show bad

# ---- a gang is one model, unless --mixed-models ------------------------------------------
expect "two devices of one model, on a pool of one A100 and one T4: refused, saying why" 1 \
	'--mixed-models: .*at most 1 of one model of model "A100\|T4"; ask for at most 1 devices, or let them mix models \(--mixed-models\)' -- \
	"$gp" submit --devices 2 --model 'A100|T4' --mem 1G --compute 10 -- true
id=$("$gp" submit -q --devices 2 --model 'A100|T4' --mixed-models --mem 1G --compute 10 -- \
	sleep 30)
wait_for "with --mixed-models it runs on both cards" 20 "$id" \
	'.state == "running" and .mixed_models and (.placement | split(",") | length == 2)'
"$gp" task cancel "$id" >/dev/null
finish
