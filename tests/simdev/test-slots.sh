#!/bin/sh
# test-slots.sh — a process killed while it changes a process slot of the
# simulated devices leaves nothing stuck. sim-slots (simdev.c with
# base/shfile.c built with its test hooks) stops itself with SIGSTOP at the moment it claims a slot, or
# gives back a dead process's, and is SIGKILLed there; afterwards the slots
# in use are those of live processes only, and every slot can be had.
# usage: test-slots.sh PATH/TO/sim-slots
# Needs GPUPOOL_SIM_DEVICES (meson sets it); the state is the test's own.
set -u
slots=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DIR="$tmp/sim"
max=64                                  # SIM_PROCS_MAX

# Waits until PID is stopped (state T in /proc/PID/stat).
wait_stopped() {
	for _ in $(seq 200); do
		[ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" = T ] && return 0
		sleep 0.05
	done
	return 1
}

# Waits until FILE has a line (a holder that is ready).
wait_line() {
	for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

# in_use NAME WANT: a fresh process counts WANT slots in use (its own included).
in_use() {
	"$slots" count >"$tmp/count" 2>&1
	if [ "$(cat "$tmp/count")" = "$2" ]; then ok "$1"; else bad "$1: want $2 in use, got" "$tmp/count"; fi
}

# kill_stopped NAME: the last background job stops at its hook; kill it there.
kill_stopped() {
	victim=$!
	if wait_stopped $victim; then ok "$1-stopped"; else bad "$1-stopped: never reached its hook"; fi
	kill -KILL $victim
	exited "$1-killed" $victim 137
}

in_use alone 1

# 1. Killed in the middle of claiming a slot.
GPUPOOL_SHFILE_TEST_STOP=claim "$slots" hold >/dev/null &
kill_stopped claim
in_use killed-claiming 1

# 2. Killed in the middle of giving back the slot of a process that died.
"$slots" hold >"$tmp/dead" &
dead=$!
wait_line "$tmp/dead"
kill -KILL $dead
exited dead-holder-killed $dead 137
GPUPOOL_SHFILE_TEST_STOP=reclaim "$slots" count >/dev/null &
kill_stopped reclaim
in_use killed-reclaiming 1

# 3. Every slot can be had: max - 1 holders and the counter fill the
#    table; with max holders, a process finds none.
i=1
while [ $i -lt $max ]; do
	"$slots" hold >"$tmp/hold.$i" &
	i=$((i + 1))
done
i=1
while [ $i -lt $max ] && wait_line "$tmp/hold.$i"; do
	i=$((i + 1))
done
in_use every-slot $max
"$slots" hold >"$tmp/hold.$max" &
wait_line "$tmp/hold.$max"
expect table-full 1 "more than $max processes" -- "$slots" count

finish
