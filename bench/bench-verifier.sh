#!/bin/sh
# bench-verifier.sh — what the verifier costs and how fast it acts, on
# simulated devices (4 x T4-16G) under `gpupool server --with-agent`, with
# TASKS (32) tasks each holding device memory in a process of its own.
# Writes one JSON object (make bench: build/bench/verifier.json):
#   verifier_cpu_pct_default  the verifier thread's CPU (utime + stime, from
#                             /proc) over WINDOW (20) s at the default
#                             period (200 ms on average, jittered), in
#                             percent of one core; target <= 1
#   verifier_cpu_pct          the same at --verify-ms 1000
#   baseline_server_cpu_pct   the whole server's CPU over the same window
#                             at 1 s (the baseline: the loop, the meter, the
#                             API, every thread), and verifier_share of it
#   violation_to_kill_ms_p50, _p99, _max
#                             at the default period, KILLS (20) times, with
#                             the 32 tasks running, each after a random pause
#                             of up to 1 s: a task clears LD_PRELOAD and takes
#                             twice its slice; from the moment it holds the
#                             memory (it prints the time) to its process's
#                             end, seen by polling /proc every 5 ms; target
#                             p99 <= 1000
#   pulse_30ms_detect_ms_p50, _max (and 100, 300)
#                             at the default period, PULSES (5) tasks each of
#                             30, 100 and 300 ms pulses: a task joins as the
#                             interposer does, then takes 8 GiB on its 1 GiB
#                             slice through a driver the interposer does not
#                             see for that long once a second; from its first
#                             pulse (it prints the time) to its process's
#                             end; target max <= 2000 for each
# Exits 1 when a target is missed or the run fails.
# Also fails when an honest holder is taken for a violation.
# usage: bench-verifier.sh BUILD_DIR    (DEVICE=real: the machine's GPUs and
#                                        driver instead of simdev; as root)
set -eu
build=$1
build=$(cd "$build" && pwd)
gp=$build/gpupool
hog=$build/tests/hog
pulse=$build/tests/pulse
tasks=${TASKS:-32}
window=${WINDOW:-20}
kills=${KILLS:-20}
pulses=${PULSES:-5}
tmp=$(mktemp -d -p /var/tmp) # not /tmp: each task has its own
chmod 1777 "$tmp" # tasks of a root server run as their tenants' users
# shellcheck disable=SC2154 # status is set inside the trap
# jobs -p goes through a file: in dash, $(jobs -p) runs in a subshell,
# which has no jobs.
trap 'status=$?; stop_tasks; jobs -p >"$tmp/jobs"; kill $(cat "$tmp/jobs") 2>/dev/null || true; wait; rm -rf "$tmp"; exit $status' EXIT
server=""

# Kills the running tasks of the server (a server leaves its tasks running).
stop_tasks() {
	[ -n "$server" ] || return 0
	"$gp" task ls -o json 2>/dev/null | jq -r '.tasks[] | select(.state == "running") | .pid' |
		while read -r pid; do kill -9 -- "-$pid" 2>/dev/null || true; done
}

fail() {
	echo "bench-verifier.sh: $1" >&2
	cat "$tmp"/*/server.log >&2 2>/dev/null || true
	exit 1
}

if [ "${DEVICE:-sim}" = sim ]; then
	export LD_LIBRARY_PATH="$build/simdev" GPUPOOL_SIM_DEVICES=t4-16g:4 GPUPOOL_SIM_DIR="$tmp/sim"
elif [ -z "${TASKS:-}" ]; then
	# 8 holders a GPU (at most 32), leaving slices for the violations.
	gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
	tasks=$((gpus * 8 < 32 ? gpus * 8 : 32))
	[ "$tasks" -gt 0 ] || fail "DEVICE=real: nvidia-smi lists no GPU"
fi
. "$(dirname "$0")/../scripts/for-tasks.sh" # what tasks run, where they reach it
for_tasks "$tmp/bin" gp hog pulse || fail "cannot copy what the tasks run into $tmp/bin"
# A copy of the driver the interposer does not recognise, for the pulses.
driver=$(for d in $(echo "${LD_LIBRARY_PATH:-}" | tr : ' ') /usr/lib/x86_64-linux-gnu; do
	[ -f "$d/libcuda.so.1" ] && echo "$d/libcuda.so.1" && break; done)
[ -n "$driver" ] && cp "$driver" "$tmp/bin/libnotcuda.so" && chmod 755 "$tmp/bin/libnotcuda.so" ||
	fail "no libcuda.so.1 to copy for the pulses"

now_ms() {
	date +%s%3N
}

# random_pause: sleeps 0 to 0.999 s, so that trials do not keep one phase
# against the verifier's period.
random_pause() {
	sleep "0.$(od -An -N2 -tu2 /dev/urandom | awk '{printf "%03d", $1 % 1000}')"
}

# ended_after PID FROM LIMIT_MS FILE: waits until PID ends (LIMIT_MS after
# FROM, unix ms, at the most), and appends the ms from FROM to then to FILE.
ended_after() {
	while kill -0 "$1" 2>/dev/null && [ $(($(now_ms) - $2)) -lt "$3" ]; do
		sleep 0.005
	done
	echo $(($(now_ms) - $2)) >>"$4"
}

# ticks PID [TID]: utime + stime of the process (or one of its threads).
ticks() {
	f=/proc/$1/stat
	[ -n "${2:-}" ] && f=/proc/$1/task/$2/stat
	sed 's/.*) //' "$f" | awk '{print $12 + $13}'
}

# Starts a server in $tmp/NAME with ARGS and TASKS holders running.
server_start() {
	dir=$tmp/$1
	shift
	mkdir -p "$dir"
	export GPUPOOL_SOCKET=$dir/sock GPUPOOL_TOKEN_FILE=$dir/admin.token
	"$gp" server --db "$dir/gp.db" --with-agent --run-dir "$dir/run" --task-uid-base auto "$@" \
		2>"$dir/server.log" &
	server=$!
	for _ in $(seq 100); do
		"$gp" task ls >/dev/null 2>&1 && break
		kill -0 "$server" 2>/dev/null || fail "the server did not start"
		sleep 0.1
	done
	for _ in $(seq "$tasks"); do
		(cd "$tmp" && "$gp" submit -q --mem 512M --compute 3 -- "$hog" libcuda.so.1 256) \
			>/dev/null || fail "a holder was not accepted"
	done
	for _ in $(seq 200); do
		[ "$("$gp" task ls -o json | jq '[.tasks[] | select(.state == "running")] | length')" \
			= "$tasks" ] && break
		sleep 0.1
	done
	verifier=$(grep -l gp-verifier /proc/"$server"/task/*/comm | sed 's|.*/task/||; s|/comm||')
	[ -n "$verifier" ] || fail "no verifier thread in the server"
	sleep 3 # every holder has taken its memory
}

server_stop() {
	stop_tasks
	kill "$server"
	wait "$server" || true
	server=""
}

# All TASKS holders still run: none was taken for a violation (on a real
# GPU, their CUDA contexts count on top of their 256 MiB: the slack).
holders_check() {
	running=$("$gp" task ls -o json | jq '[.tasks[] | select(.state == "running")] | length')
	[ "$running" -ge "$tasks" ] ||
		fail "only $running of the $tasks holders run: the verifier took honest tasks for violations"
}

# cpu PID TID: the thread's and the process's CPU over the window, in percent.
cpu() {
	hz=$(getconf CLK_TCK)
	t0=$(ticks "$1" "$2")
	p0=$(ticks "$1")
	sleep "$window"
	t1=$(ticks "$1" "$2")
	p1=$(ticks "$1")
	echo "$(((t1 - t0) * 10000 / (hz * window))) $(((p1 - p0) * 10000 / (hz * window)))"
}

pct() { # hundredths -> "x.yy"
	printf '%d.%02d' $(($1 / 100)) $(($1 % 100))
}

server_start slow --verify-ms 1000
set -- $(cpu "$server" "$verifier")
slow_thread=$1 slow_server=$2
holders_check
server_stop

# The default period, and violations with the holders still running, each
# trial after a random pause.
server_start default
set -- $(cpu "$server" "$verifier")
default_thread=$1
holders_check
: >"$tmp/kills"
for _ in $(seq "$kills"); do
	random_pause
	id=$(cd "$tmp" && "$gp" submit -q --mem 512M --compute 3 -- \
		env -u LD_PRELOAD "$hog" libcuda.so.1 1024)
	line=""
	for _ in $(seq 200); do
		line=$("$gp" logs "$id" 2>/dev/null | grep '^held ' || true)
		[ -n "$line" ] && break
		sleep 0.02
	done
	[ -n "$line" ] || fail "task $id never held its memory"
	pid=$(echo "$line" | awk '{print $5}')
	held=$(echo "$line" | awk '{print $7}')
	ended_after "$pid" "$held" 10000 "$tmp/kills"
done

# pulse_trials MS: PULSES tasks, each pulsing 8 GiB for MS ms once a second
# on its 1 GiB slice; the time from the first pulse to its process's end,
# one a line, into $tmp/pulse-MS.
pulse_trials() {
	: >"$tmp/pulse-$1"
	for _ in $(seq "$pulses"); do
		random_pause
		id=$(cd "$tmp" && "$gp" submit -q --mem 1G --compute 3 -- \
			"$pulse" "$tmp/bin/libnotcuda.so" 8192 "$1" 1000 30)
		line="" pid=""
		for _ in $(seq 250); do
			pid=$("$gp" logs "$id" 2>/dev/null | awk '/^joined pid /{print $3}')
			line=$("$gp" logs "$id" 2>/dev/null | grep '^pulse 1 at ' || true)
			[ -n "$line" ] && break
			sleep 0.02
		done
		[ -n "$line" ] && [ -n "$pid" ] || fail "task $id never pulsed"
		first=$(echo "$line" | awk '{print $4}')
		ended_after "$pid" "$first" 30000 "$tmp/pulse-$1"
	done
}
for ms in 30 100 300; do
	pulse_trials "$ms"
done
holders_check
server_stop

# p50 FILE, maximum FILE: of the numbers in FILE, one a line.
p50_of() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
max_of() { sort -n "$1" | tail -1; }

sort -n "$tmp/kills" >"$tmp/kills.sorted"
p50=$(awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}' "$tmp/kills.sorted")
p99=$(awk '{a[NR]=$1} END {i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; print a[i]}' "$tmp/kills.sorted")
max=$(tail -1 "$tmp/kills.sorted")
ok=true
[ "$default_thread" -le 100 ] || ok=false
[ "$p99" -le 1000 ] || ok=false
for ms in 30 100 300; do
	[ "$(max_of "$tmp/pulse-$ms")" -le 2000 ] || ok=false
done
share=0
[ "$slow_server" -gt 0 ] && share=$((slow_thread * 10000 / slow_server))
printf '{"bench":"verifier","device":"%s","tasks":%d,"window_s":%d,"verify_ms":1000,' \
	"${DEVICE:-sim}" "$tasks" "$window"
default_ms=$("$gp" server --with-agent --check-config | sed -n 's/.*verifier .*every \([0-9]*\) ms.*/\1/p')
printf '"verifier_cpu_pct":%s,"default_verify_ms":%s,' "$(pct "$slow_thread")" "$default_ms"
printf '"verifier_cpu_pct_default":%s,"baseline_server_cpu_pct":%s,"verifier_share":%s,' \
	"$(pct "$default_thread")" "$(pct "$slow_server")" "$(pct "$share")"
printf '"violation_to_kill_ms_p50":%d,"violation_to_kill_ms_p99":%d,' "$p50" "$p99"
printf '"violation_to_kill_ms_max":%d,"kills":%d,' "$max" "$kills"
for ms in 30 100 300; do
	printf '"pulse_%dms_detect_ms_p50":%d,"pulse_%dms_detect_ms_max":%d,' \
		"$ms" "$(p50_of "$tmp/pulse-$ms")" "$ms" "$(max_of "$tmp/pulse-$ms")"
done
printf '"pulses":%d,' "$pulses"
printf '"targets":{"verifier_cpu_pct_default":1,"violation_to_kill_ms_p99":1000,'
printf '"pulse_detect_ms_max":2000},"ok":%s}\n' "$ok"
[ "$ok" = true ]
