#!/bin/sh
# test-preemption.sh — preemptive mode (`gpupool server --preemption`), on
# one simulated T4. Off (the default), priority only orders the queue: a
# priority-7 task of one tenant waits while another's priority-0 task
# fills the card. With --preemption priority the same waiting task takes
# the card: the priority-0 task (a shared slice) gets the grace signal (SIGTERM), goes back
# to the queue saying why, and the preemption is audited; a hard slice
# within its tenant's guarantee (the default isolation) is never taken,
# nor work of the same priority.
# usage: test-preemption.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
server_start || { finish; exit 1; }

quota="--mem-guaranteed 16G --compute-guaranteed 100 --priority-max 9"
low=$("$gp" tenant add low $quota -o json | jq -r .token)
high=$("$gp" tenant add high $quota -o json | jq -r .token)
# A task that says on a file in $drop that it got SIGTERM (tasks run as
# their tenant's uid: the directory is open to all, sticky).
drop=$tmp/drop
mkdir -m 1777 "$drop"
trapping() {
	echo "trap 'echo term >$drop/$1; exit 0' TERM; while :; do sleep 0.1; done"
}

# ---- off: priority orders the queue only --------------------------------------------
victim=$(as "$low" submit -q --name victim --priority 0 --isolation shared --mem 4G --compute 80 -- \
	sh -c "$(trapping victim)")
wait_for "the priority-0 task runs" 20 "$victim" '.state == "running"'
urgent=$(as "$high" submit -q --name urgent --priority 7 --mem 4G --compute 50 -- sleep 600)
wait_for "off: the priority-7 task waits, the card being full" 10 "$urgent" \
	'.state == "pending" and (.reason | test("no device fits"))'
sleep 2
wait_for "off: the priority-0 task still runs" 1 "$victim" '.state == "running"'

# ---- priority: the waiting task preempts ------------------------------------------------
kill "$server" && wait "$server"
server=
server_start --preemption priority || { finish; exit 1; }
expect "--check-config says the mode" 0 'preemption priority' -- \
	"$gp" server --with-agent --preemption priority --check-config
expect "a wrong mode is refused, naming the choices" 2 'must be off or priority' -- \
	"$gp" server --preemption always --check-config
wait_for "priority: the priority-7 task runs" 20 "$urgent" '.state == "running"'
wait_for "... the priority-0 task went back to the queue" 10 "$victim" '.state == "preempted"'
for _ in $(seq 50); do [ -e "$drop/victim" ] && break; sleep 0.1; done
if [ -e "$drop/victim" ]; then ok "... after the grace signal (SIGTERM)"
else bad "the preempted task did not see SIGTERM" "$tmp/server.log"; fi
"$gp" audit --limit 1000 -o json >"$tmp/audit.json"
check "... and the preemption is audited with its reason" \
	"[.[0].audit[] | select(.action == \"task.preempt\" and .object == \"task $victim\" and
	  (.detail | test(\"task $urgent of priority 7 needs its capacity\")))] | length == 1" \
	"$tmp/audit.json"
"$gp" task cancel "$victim" "$urgent" >/dev/null 2>&1
wait_for "the card is free again" 20 "$urgent" '.state == "cancelled"'

# ---- never a hard slice within its guarantee, nor the same priority -------------------
hard=$(as "$low" submit -q --name hard --priority 0 --isolation hard --mem 4G --compute 40 -- \
	sleep 600)
same=$(as "$low" submit -q --name same --priority 7 --isolation shared --mem 4G --compute 40 -- \
	sleep 600)
wait_for "a hard priority-0 slice runs" 20 "$hard" '.state == "running"'
wait_for "a priority-7 task runs beside it" 20 "$same" '.state == "running"'
late=$(as "$high" submit -q --name late --priority 7 --mem 4G --compute 50 -- sleep 600)
wait_for "priority 7 waits: it may take neither" 10 "$late" \
	'.state == "pending" and (.reason | test("no device fits"))'
sleep 2
wait_for "the hard slice still runs" 1 "$hard" '.state == "running"'
wait_for "the priority-7 task of the other tenant still runs" 1 "$same" '.state == "running"'
"$gp" task cancel "$hard" "$same" "$late" >/dev/null 2>&1
finish
