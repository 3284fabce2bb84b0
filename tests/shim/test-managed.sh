#!/bin/sh
# test-managed.sh — libgpushare on a managed device (one whose limits the
# server's agent keeps in device-UUID.limits), end to end on simdev: the
# table's limits hold whatever the task's environment asks for, a wrong or
# missing secret or an unknown task is refused (never unlimited), changes
# apply to the next process, and `gpupool region ls` shows the table.
# usage: test-managed.sh PATH/TO/gpuload PATH/TO/region-admin PATH/TO/nvml-probe PATH/TO/gpupool
# (meson sets LD_LIBRARY_PATH, GPUPOOL_SIM_* and $SHIM)
set -u
gl=$1
admin=$2
probe=$3
gp=$4
. "$(dirname "$0")/../lib.sh"
run=$tmp/run
export GPUPOOL_RUN_DIR="$run"
uuid=$("$probe" | jq -r '.devices[0].uuid')
secret=$("$admin" secret)
wrong=0123456789abcdef0123456789abcdef

# task ID SECRET [VAR=VALUE...] COMMAND...: COMMAND as a process of task ID
# with SECRET ("-": no such variable) under the interposer.
task() {
	id=$1 sec=$2
	shift 2
	set -- LD_PRELOAD="$SHIM" "$@"
	[ "$id" = - ] || set -- GPUPOOL_TASK_ID="$id" "$@"
	[ "$sec" = - ] || set -- GPUPOOL_TASK_SECRET="$sec" "$@"
	env "$@"
}

if "$admin" "$run" "$uuid" prepare 15G &&
	"$admin" "$run" "$uuid" admit task-x "$secret" 64M 30 5 hard; then
	ok prepare-and-admit
else
	bad prepare-and-admit /dev/null
fi

# 1. The environment asks for 8 GiB and the whole device: the table's
#    64 MiB holds, and cuMemGetInfo shows the slice.
runs env-asks-wide-ran "$tmp/wide.json" -- task task-x "$secret" GPUPOOL_MEM_LIMIT=8G \
	GPUPOOL_COMPUTE=100 GPUPOOL_ISOLATION=shared "$gl" alloc --chunk-mib 8 --json
check env-cannot-widen-memory '.[0] | .oom and .allocated_mib == 64 and .total_mib == 64' "$tmp/wide.json"

# 2. Nor the compute share: a hard 30 % caps a lone burner at about 30 %.
runs env-asks-whole-device-ran "$tmp/burn.json" -- task task-x "$secret" GPUPOOL_COMPUTE=100 \
	GPUPOOL_ISOLATION=shared "$gl" burn --duration 2 --json
check env-cannot-widen-compute '.[0].busy_fraction >= 0.2 and .[0].busy_fraction <= 0.36' "$tmp/burn.json"

# 3. Refused, never unlimited: a wrong or missing secret, a task the table
#    does not know. Silent without GPUPOOL_LOG; with it, one line says why.
refused() {
	name=$1 pattern=$2
	shift 2
	if task "$@" GPUPOOL_MEM_LIMIT=8G "$gl" alloc --mib 1 --json >"$tmp/out" 2>"$tmp/err"; then
		bad "$name: it ran" "$tmp/out"
	elif ! grep -q CUDA_ERROR_NOT_PERMITTED "$tmp/err" || grep -q gpushare "$tmp/err"; then
		bad "$name: not refused quietly" "$tmp/err"
	elif task "$@" GPUPOOL_LOG=1 "$gl" alloc --mib 1 --json >"$tmp/out" 2>"$tmp/err" ||
		! grep -Eq "^gpushare: $pattern" "$tmp/err"; then
		bad "$name: GPUPOOL_LOG does not say why" "$tmp/err"
	else
		ok "$name"
	fi
}
refused wrong-secret "GPUPOOL_TASK_SECRET is not the task's for task task-x on $uuid" \
	task-x "$wrong"
refused missing-secret "GPUPOOL_TASK_SECRET is missing for task task-x" task-x -
refused unknown-task "task task-y has no limits for $uuid in $run/device-$uuid.limits" \
	task-y "$secret"
refused own-task-id "task pid-[0-9]+-[0-9]+ has no limits" - -
expect bad-secret 1 'GPUPOOL_TASK_SECRET: expected an even number' -- \
	task task-x xyz "$gl" alloc --mib 1 --json
if grep -q xyz "$tmp/out"; then bad "bad-secret: the secret was shown" "$tmp/out"; fi

# 4. What the table shows while a process holds memory.
# (task runs in a subshell of its own here: the holder's pid is gpuload's.)
task task-x "$secret" sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/holder.pid" \
	"$gl" alloc --mib 16 --hold 60 --json >"$tmp/hold.json" &
holder=$!
for _ in $(seq 100); do [ -s "$tmp/hold.json" ] && break; sleep 0.05; done
"$gp" region show "$uuid" --json >"$tmp/show.json"
check region-shows-the-table '.[0] | .managed and (.tasks | length) == 1 and (.tasks[0] |
	.id == "task-x" and .managed and .mem_limit_mib == 64 and .mem_used_mib == 16 and
	.compute == 30 and .isolation == "hard" and .processes == 1)' "$tmp/show.json"

# 5. A change applies at the next allocation, also of a running process.
"$admin" "$run" "$uuid" set task-x 24M 30 5 hard
runs change-applies-ran "$tmp/less.json" -- task task-x "$secret" "$gl" alloc --chunk-mib 4 --json
check change-applies '.[0] | .oom and .allocated_mib == 8 and .total_mib == 24' "$tmp/less.json"
kill "$(cat "$tmp/holder.pid")"
exited "holder (stopped)" $holder 143

# 6. Forgotten: its processes are refused.
"$admin" "$run" "$uuid" forget task-x
refused forgotten "task task-x has no limits" task-x "$secret"

finish
