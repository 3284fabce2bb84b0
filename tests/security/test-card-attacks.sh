#!/bin/sh
# test-card-attacks.sh — the adversarial suite's second round (issue 25): a
# hostile tenant's task against its card and its neighbours there, on a
# simulated T4, each attack shown refused, survived or caught:
#   1. a priority above the tenant's bound: refused, naming the bound; at
#      priority 9 (granted) in `shared` isolation beside a neighbour's
#      `hard` 50 %: the hard task keeps at least 45 % of the card's busy
#      time (device time, from each task's own figures), though each task's
#      /proc hides the other (--task-proc private: the arbiter takes a
#      holder it cannot see but that exists for alive, base/proc.h);
#   2. zeroing and randomising, for 10 s, every file of the card it can
#      open: only its own task's file opens; the neighbour's allocations
#      within its slice all succeed and its work ends on time; an alert
#      names the writer (its file is made anew); the card serves the next
#      task, with no restart;
#   3. memory over its slice in pulses of 100 ms, then 300 ms, once a
#      second, through a driver the interposer does not see, by a process
#      that joined its task as the interposer does: each caught within 2 s;
#   4. a preload library that maps the interposer's file and runs none of
#      it, beside a task burning the device: caught.
# The server runs with --verify alert, so that each attack goes on as long
# as it means to (tests/security/test-tenant-attacks.sh shows the kills).
# Needs root (tasks run as their tenants' users only under a root server).
# usage: test-card-attacks.sh GPUPOOL GPULOAD PULSE VANDAL FAKE-SHIM SIMDEV-DIR
set -u
gp=$1 gl=$2 pulse=$3 vandal=$4 fake=$5 simdev=$6
. "$(dirname "$0")/../lib.sh"
needs_root "the attacks need root (a server that is not root runs every task as itself)"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/../server/agent-lib.sh"
# The attackers, where the tasks reach them (agent-lib.sh copied the rest).
for_tasks "$tmp/bin" pulse vandal fake || { echo "cannot copy the attackers into $tmp/bin"; exit 1; }
cp "$simdev/libcuda.so.1" "$tmp/bin/libnotcuda.so" && chmod 755 "$tmp/bin/libnotcuda.so"
run=$tmp/run

server_start --verify alert
admin=$(cat "$tmp/state/admin.token")
alice=$(as "$admin" tenant add alice --mem-guaranteed 8G --compute-guaranteed 100)
mallory=$(as "$admin" tenant add mallory --mem-guaranteed 8G --compute-guaranteed 100)

# submit TOKEN ARGS...: the task's id.
submit() {
	token=$1
	shift
	as "$token" submit -q "$@"
}

# ---- 1. priorities ---------------------------------------------------------------
expect "a priority above the tenant's bound is refused, naming it" 1 \
	'("priority"|--priority): 9 is above 5, the highest priority tenant "mallory" may give its tasks' -- \
	as "$mallory" submit --mem 1G --compute 50 --isolation shared --priority 9 -- true
as "$admin" tenant set mallory --priority-max 9 >/dev/null
hard=$(submit "$alice" --mem 1G --compute 50 -- "$gl" burn --duration 10 --json)
wait_for "the hard 50 % burner runs" 10 "$hard" '.state == "running"'
greedy=$(submit "$mallory" --mem 1G --compute 50 --isolation shared --priority 9 -- \
	"$gl" burn --duration 10 --json)
wait_for "the priority-9 shared burner runs beside it" 10 "$greedy" '.state == "running"'
wait_for "both burners end" 30 "$greedy" '.state == "succeeded"'
wait_for "... the hard one too" 10 "$hard" '.state == "succeeded"'
log "$hard" | grep busy_fraction >"$tmp/hard.json"
log "$greedy" | grep busy_fraction >"$tmp/greedy.json"
check "priority 9 beside a hard 50 %: the hard task keeps >= 45 % of the card's busy time" \
	'.[0].busy_fraction / (.[0].busy_fraction + .[1].busy_fraction) >= 0.45' \
	"$tmp/hard.json" "$tmp/greedy.json"

# ---- 2. the card's files --------------------------------------------------------------
# The neighbour burns for 6 s while 30 processes of it allocate 900 MiB of
# its 1 GiB each, one after the other; the vandal spoils what it can for 10 s.
neighbour=$(submit "$alice" --mem 1G --compute 50 -- sh -c "
	'$gl' burn --duration 6 --json & burner=\$!
	for i in \$(seq 30); do
		'$gl' alloc --mib 900 --json | grep -q '\"allocated_mib\":900' && echo alloc-ok || echo alloc-FAILED
	done
	wait \$burner")
wait_for "the neighbour runs" 10 "$neighbour" '.state == "running"'
spoiler=$(submit "$mallory" --mem 1G --compute 10 -- "$vandal" "$run" 10)
wait_for "the vandal ends" 30 "$spoiler" '.state == "succeeded"'
log "$spoiler" >"$tmp/vandal.log"
own=$(grep -c '^wrote device-.*\.tasks/task-[0-9]*$' "$tmp/vandal.log")
if grep -Eq '^wrote 1 files \([0-9]+ times\), refused [1-9]' "$tmp/vandal.log" && [ "$own" = 1 ]; then
	ok "the vandal could write its own task's file and nothing else ($(head -1 "$tmp/vandal.log"))"
else
	bad "the vandal could write its own task's file and nothing else" "$tmp/vandal.log"
fi
wait_for "the neighbour's work ends on time (6 s of work, within 20 s)" 20 "$neighbour" \
	'.state == "succeeded" and .ended_ms - .started_ms < 20000'
log "$neighbour" >"$tmp/neighbour.log"
if [ "$(grep -c '^alloc-ok$' "$tmp/neighbour.log")" = 30 ]; then
	ok "... and all its 30 allocations within its slice succeeded"
else
	bad "... and all its 30 allocations within its slice succeeded" "$tmp/neighbour.log"
fi
alert_within "an alert names the task that wrote its file, made anew" 5 \
	"any(.kind == \"task.violation\" and .object == \"task $spoiler\" and
	     (.message | test(\"task $spoiler damaged its file on GPU-.*made anew\")))"
next=$(submit "$mallory" --mem 1G --compute 10 -- "$gl" alloc --mib 900 --json)
wait_for "the card serves the next task, no restart" 20 "$next" '.state == "succeeded"'

# ---- 3. pulses over the slice -------------------------------------------------------
# caught_within NAME ID SECONDS: the task's first pulse is in its log, and an
# alert names the task, its figure and the device within SECONDS of it.
caught_within() {
	name=$1 id=$2 seconds=$3
	for _ in $(seq 100); do
		log "$id" | grep -q '^pulse 1 at ' && break
		sleep 0.05
	done
	first=$(log "$id" | awk '/^pulse 1 at /{print $4}')
	[ -n "$first" ] || { log "$id" >"$tmp/pulse.log"; bad "$name: it never pulsed" "$tmp/pulse.log"; return; }
	while [ $(($(now_ms) - first)) -lt $((seconds * 1000)) ]; do
		as "$admin" alerts -o json >"$tmp/alerts.json"
		jq -e ".alerts | any(.kind == \"task.violation\" and .object == \"task $id\" and
			(.message | test(\"(holds|held) 8[0-9]{3} MiB\")))" "$tmp/alerts.json" \
			>/dev/null && break
		sleep 0.05
	done
	took=$(($(now_ms) - first))
	if [ "$took" -le $((seconds * 1000)) ]; then
		ok "$name: caught $took ms after the first pulse"
	else
		bad "$name: caught within $seconds s" "$tmp/alerts.json"
	fi
	as "$admin" task cancel "$id" >/dev/null 2>&1
}
p100=$(submit "$mallory" --mem 1G --compute 10 -- "$pulse" "$tmp/bin/libnotcuda.so" 8192 100 1000 10)
caught_within "8 GiB for 100 ms of every second on a 1 GiB slice" "$p100" 2
p300=$(submit "$mallory" --mem 1G --compute 10 -- "$pulse" "$tmp/bin/libnotcuda.so" 8192 300 1000 10)
caught_within "8 GiB for 300 ms of every second on a 1 GiB slice" "$p300" 2

# ---- 4. a mapping of the interposer, not the interposer ----------------------------------
faker=$(submit "$mallory" --mem 1G --compute 10 -- env LD_PRELOAD="$fake" \
	GPUPOOL_FAKE_SHIM="$tmp/bin/libgpushare.so" "$gl" burn --duration 10 --json)
wait_for "the task with a fake interposer runs" 10 "$faker" '.state == "running"'
alert_within "a library that only maps the interposer is caught" 5 \
	"any(.kind == \"task.violation\" and .object == \"task $faker\" and
	     (.message | test(\"without the interposer: it never joined its task\")))"
as "$admin" task cancel "$faker" >/dev/null 2>&1
finish
