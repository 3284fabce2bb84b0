#!/bin/sh
# bench-server.sh — `gpupool server` under load: durable submissions per
# second over the API, beside durable SQLite inserts on the same disk in the
# same run; how long a submitted task waits until it runs; and the server
# with 10,000 tasks queued that cannot run. Writes one JSON object (make
# bench: build/bench/server.json) and exits 1 when a target of the queued
# case is missed. The client is bench/bench-server.c (BUILD_DIR/bench-server).
# usage: bench-server.sh BUILD_DIR
#   submit_per_sec           POST /v1/tasks answered 201 per second over
#                            loopback TCP: SUBMISSIONS (5000) requests over
#                            CONNECTIONS (8) keep-alive connections, from the
#                            first request to the last answer
#   submit_unix_per_sec      the same over the Unix socket (a fresh server)
#   baseline_insert_per_sec  SUBMISSIONS inserts with the sqlite3 API, one
#                            row per transaction, WAL, synchronous=FULL
#   submit_vs_baseline       submit_per_sec / baseline_insert_per_sec
#   submit_errors            non-201 answers and failed requests (both runs)
#   submit_to_running_p50_ms, _p99_ms, _max_ms   --with-agent on simulated
#                            devices (a100-80g:2,t4-16g:2): TASKS (200)
#                            `sleep 0.2` tasks (1 GiB, 5 %) at RATE (50) per
#                            second; started - created as the store has them
#   running_count            how many of them ran
# The queued case (issue 10): --with-agent on four simulated T4s, each held
# whole by a task of the admin's, and QUEUED (10000) tasks of 1 MiB and 1 %
# of a tenant without quota: they could run on any idle T4, so they are
# queued, not refused, and wait ("no device fits now").
#   submit_per_sec_empty      BURST (2000) submissions into an empty queue (a
#                             second such server, its four T4s held likewise)
#   submit_per_sec_10k_queued and as many once QUEUED wait, in BURSTS (8)
#   submit_10k_vs_empty       bursts taken in turn (so that both meet the same
#                             moments of a shared machine; each burst's rate
#                             in _bursts), over the Unix socket, CONNECTIONS
#                             connections, both stores warmed up first by
#                             WARM (4000) other durable writes (a fresh
#                             database is slower until its WAL has grown);
#                             target: at least 0.8 of the empty queue's rate
#   idle_cpu_pct_10k_queued   the server's CPU (all its threads, /proc) over
#                             IDLE_S (10) seconds with QUEUED waiting and
#                             nothing changing; target: at most 5 % of a core
#   idle_passes               the passes it made meanwhile (none is needed)
#   sched_pass_ms_10k_queued  the mean of PASSES (40) passes over the whole
#                             queue, from the server's own summary
#                             (gpupool_scheduler_pass_seconds), each made by a
#                             change of another tenant's quota (a change
#                             that makes the loop look at every queued task,
#                             none of which can start); target: at most 10 ms
#   sched_pass_ms_10k_queued_p50, _p99   the server's quantiles of them
#   sched_pass_cpu_ms_10k_queued, _p99   the same of the CPU time the loop's
#                             thread spent in them (target: p99 at most 10 ms;
#                             on a shared machine the p99 of the duration is
#                             mostly the wait for a core)
set -eu
build=$1
gp=$build/gpupool
client=$build/bench-server
n=${SUBMISSIONS:-5000}
conns=${CONNECTIONS:-8}
tasks=${TASKS:-200}
rate=${RATE:-50}
queued=${QUEUED:-10000}
burst=${BURST:-2000}
idle_s=${IDLE_S:-10}
passes=${PASSES:-40}
warm=${WARM:-4000}
nbursts=${BURSTS:-8}
tmp=$(mktemp -d -p /var/tmp) # not /tmp: each task has its own
chmod 1777 "$tmp" # tasks of a root server run as their tenants' users
# The queued case's whole-device tasks outlive their server: killed at exit.
blockers_kill() {
	for pid in $(cat "$tmp/blockers" 2>/dev/null); do kill -9 -"$pid" 2>/dev/null || true; done
}
# shellcheck disable=SC2154 # status is set inside the trap
# jobs -p goes through a file: in dash, $(jobs -p) runs in a subshell,
# which has no jobs.
trap 'status=$?; blockers_kill; jobs -p >"$tmp/jobs"; kill $(cat "$tmp/jobs") 2>/dev/null || true; wait; rm -rf "$tmp"; exit $status' EXIT

fail() { # MESSAGE -> the message and the server's log, exit 1
	echo "bench-server.sh: $1" >&2
	cat "$tmp"/*/server.log >&2 2>/dev/null || true
	exit 1
}

# Starts a server in $tmp/NAME with ARGS, waits for it to answer, and
# leaves its pid in $server and a tenant's token in $token.
server_start() { # NAME ARGS...
	dir=$tmp/$1
	shift
	mkdir -p "$dir"
	"$gp" server --db "$dir/gp.db" --socket "$dir/sock" --queue-max 1000000 \
		--tenant-queue-max 1000000 "$@" \
		2>"$dir/server.log" &
	server=$!
	for _ in $(seq 100); do
		curl -sf --unix-socket "$dir/sock" http://localhost/v1/health >/dev/null 2>&1 && break
		kill -0 "$server" 2>/dev/null || fail "the server did not start"
		sleep 0.05
	done
	token=$(curl -sf --unix-socket "$dir/sock" -H "Authorization: Bearer $(cat "$dir/admin.token")" \
		-H 'Content-Type: application/json' http://localhost/v1/tenants -d '{"name": "bench"}' | jq -r .token) ||
		fail "could not add a tenant"
}

server_stop() {
	kill "$server"
	wait "$server" || true
}

# Submissions: TCP, then the Unix socket, each on a fresh server (the
# rate falls as the queue grows); the baseline on the same disk (the same
# temporary directory) in between.
port=$((20000 + $$ % 20000))
server_start tcp --tcp "$port"
tcp=$("$client" submit --url "http://127.0.0.1:$port/v1/tasks" --token "$token" \
	--count "$n" --connections "$conns") || fail "submissions over TCP failed"
server_stop
base=$("$client" baseline --db "$tmp/baseline.db" --count "$n") || fail "the baseline failed"
server_start unix
unix=$("$client" submit --url http://localhost/v1/tasks --socket "$tmp/unix/sock" \
	--token "$token" --count "$n" --connections "$conns") || fail "submissions over the socket failed"
server_stop

# Submit to running, with the scheduling loop and simulated devices.
export LD_LIBRARY_PATH="$build/simdev" GPUPOOL_SIM_DEVICES=a100-80g:2,t4-16g:2 \
	GPUPOOL_SIM_DIR="$tmp/sim" GPUPOOL_RUN_DIR="$tmp/run"
. "$(dirname "$0")/../scripts/for-tasks.sh" # what tasks run, where they reach it
for_tasks "$tmp/bin" gp || fail "cannot copy what the tasks run into $tmp/bin"
server_start agent --with-agent --run-dir "$tmp/run" --task-uid-base auto
lat=$("$client" latency --url http://localhost/v1/tasks --socket "$tmp/agent/sock" \
	--token "$token" --count "$tasks" --rate "$rate" --db "$tmp/agent/gp.db") ||
	fail "latency submissions failed"
server_stop

# ---- 10,000 tasks queued that cannot run --------------------------------------

# api NAME METHOD PATH [BODY]: server NAME's answer, as its admin.
api() {
	curl -sf --unix-socket "$tmp/$1/sock" -H "Authorization: Bearer $(cat "$tmp/$1/admin.token")" \
		-H 'Content-Type: application/json' -X "$2" "http://localhost$3" ${4:+-d "$4"}
}

# cpu_ticks PID: user + system clock ticks of the process, all its threads.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# metric NAME: its value in the queued server's /metrics.
metric() {
	api queued GET /metrics | awk -v name="$1" '$1 == name { print $2 }'
}

# submit NAME COUNT: COUNT submissions of server NAME's bench tenant (the
# client's JSON).
submit() {
	"$client" submit --url http://localhost/v1/tasks --socket "$tmp/$1/sock" \
		--token "$(cat "$tmp/$1/bench.token")" --count "$2" --connections "$conns"
}

# queued_start NAME: a server on four simulated T4s, each held whole by a
# task of the admin's (their process groups added to $tmp/blockers), with
# a bench tenant and another, its store warmed up: a fresh database
# writes slower until its WAL has grown to its checkpoint size (its first
# ~3,000 writes here), so it first takes WARM durable writes that queue
# nothing (the other tenant's quota, and the audit row of each).
queued_start() {
	export GPUPOOL_SIM_DEVICES=t4-16g:4 GPUPOOL_SIM_DIR="$tmp/sim-$1" \
		GPUPOOL_RUN_DIR="$tmp/run-$1"
	server_start "$1" --with-agent --run-dir "$tmp/run-$1" --task-uid-base auto
	echo "$token" >"$tmp/$1/bench.token"
	api "$1" POST /v1/tenants '{"name": "other", "mem_guaranteed_mib": 1024}' >/dev/null ||
		fail "could not add a second tenant"
	for _ in 1 2 3 4; do
		api "$1" POST /v1/tasks '{"command": "sleep 3600", "whole": true}' >/dev/null ||
			fail "could not submit a whole-device task"
	done
	for _ in $(seq 100); do
		api "$1" GET '/v1/tasks?state=running' | jq -r '.tasks[] | select(.pid > 0) | .pid' \
			>"$tmp/$1/blockers"
		[ "$(wc -l <"$tmp/$1/blockers")" -eq 4 ] && break
		sleep 0.1
	done
	cat "$tmp/$1/blockers" >>"$tmp/blockers"
	[ "$(wc -l <"$tmp/$1/blockers")" -eq 4 ] || fail "the four whole-device tasks did not start"
	"$client" submit --url http://localhost/v1/tenants/other --socket "$tmp/$1/sock" \
		--token "$(cat "$tmp/$1/admin.token")" --count "$warm" --connections "$conns" \
		--method PATCH --body '{"mem_borrowable_mib": 2048}' >/dev/null ||
		fail "warming the store up failed"
}

# queued_stop NAME: its whole-device tasks cancelled, then the server stopped.
queued_stop() {
	for id in $(api "$1" GET '/v1/tasks?state=running' | jq -r '.tasks[].id'); do
		api "$1" POST "/v1/tasks/$id/cancel" >/dev/null
	done
	for _ in $(seq 100); do
		[ "$(api "$1" GET '/v1/tasks?state=running' | jq '.tasks | length')" -eq 0 ] && break
		sleep 0.1
	done
	kill "$(cat "$tmp/$1/pid")"
	wait "$(cat "$tmp/$1/pid")" || true
}

queued_start empty
echo "$server" >"$tmp/empty/pid"
queued_start queued
echo "$server" >"$tmp/queued/pid"
fill=$(submit queued "$queued") || fail "filling the queue failed"
# Settled: the last task has its reason (the loop has looked at them all).
for _ in $(seq 300); do
	api queued GET "/v1/queue?after=$((queued - 1))" |
		jq -e '.queue[0].reason | test("no device fits")' >/dev/null 2>&1 && break
	sleep 0.1
done
length=$(api queued GET '/v1/queue?limit=1' | jq .length)
[ "$length" -eq "$queued" ] || fail "$length tasks queued, not $queued"
sleep 1
before=$(($(metric gpupool_scheduler_pass_seconds_count) + $(metric 'gpupool_scheduler_passes_total{queue="changed"}')))
t0=$(cpu_ticks "$server")
sleep "$idle_s"
t1=$(cpu_ticks "$server")
after=$(($(metric gpupool_scheduler_pass_seconds_count) + $(metric 'gpupool_scheduler_passes_total{queue="changed"}')))
sum0=$(metric gpupool_scheduler_pass_seconds_sum)
cpu_sum0=$(metric gpupool_scheduler_pass_cpu_seconds_sum)
count0=$(metric gpupool_scheduler_pass_seconds_count)
for i in $(seq "$passes"); do
	api queued PATCH /v1/tenants/other "{\"mem_borrowable_mib\": $i}" >/dev/null ||
		fail "could not change a quota"
	sleep 0.1
done
sleep 0.5
sum1=$(metric gpupool_scheduler_pass_seconds_sum)
count1=$(metric gpupool_scheduler_pass_seconds_count)
p50=$(metric 'gpupool_scheduler_pass_seconds{quantile="0.5"}')
p99=$(metric 'gpupool_scheduler_pass_seconds{quantile="0.99"}')
cpu_sum1=$(metric gpupool_scheduler_pass_cpu_seconds_sum)
cpu_p99=$(metric 'gpupool_scheduler_pass_cpu_seconds{quantile="0.99"}')
# The submission rates: bursts into the empty queue and into the full one
# in turn, so that both meet the same moments of a machine shared with
# other work; each rate is all of its submissions over all of its time.
for _ in $(seq "$nbursts"); do
	submit empty $((burst / nbursts)) >>"$tmp/empty.bursts" || fail "submissions into the empty queue failed"
	submit queued $((burst / nbursts)) >>"$tmp/queued.bursts" || fail "submissions into the full queue failed"
done
empty=$(jq -c -s . "$tmp/empty.bursts")
full=$(jq -c -s . "$tmp/queued.bursts")
queued_stop empty
queued_stop queued

queued_json=$(jq -n -c --argjson empty "$empty" --argjson fill "$fill" --argjson full "$full" \
	--argjson t0 "$t0" --argjson t1 "$t1" --argjson hz "$(getconf CLK_TCK)" \
	--argjson idle_s "$idle_s" --argjson passes_idle "$((after - before))" \
	--argjson sum0 "$sum0" --argjson sum1 "$sum1" --argjson count0 "$count0" \
	--argjson count1 "$count1" --argjson p50 "$p50" --argjson p99 "$p99" --argjson queued "$queued" \
	--argjson cpu_sum0 "$cpu_sum0" --argjson cpu_sum1 "$cpu_sum1" --argjson cpu_p99 "$cpu_p99" '{
	queued: $queued,
	submit_per_sec_empty: (($empty | map(.created) | add) / ($empty | map(.seconds) | add)
	                       | round),
	submit_per_sec_10k_queued: (($full | map(.created) | add) / ($full | map(.seconds) | add)
	                            | round),
	submit_per_sec_empty_bursts: ($empty | map(.per_sec)),
	submit_per_sec_10k_queued_bursts: ($full | map(.per_sec)),
	submit_10k_vs_empty: (($full | map(.created) | add) / ($full | map(.seconds) | add)
	                      / (($empty | map(.created) | add) / ($empty | map(.seconds) | add))
	                      * 100 | round / 100),
	queued_submit_errors: ([$empty[], $fill, $full[]] | map(.http_errors + .transport_errors)
	                       | add),
	idle_cpu_pct_10k_queued: (($t1 - $t0) / $hz / $idle_s * 100 * 100 | round / 100),
	idle_passes: $passes_idle,
	sched_passes_measured: ($count1 - $count0),
	sched_pass_ms_10k_queued: (if $count1 > $count0
	                           then (($sum1 - $sum0) / ($count1 - $count0) * 1000 * 100 | round / 100)
	                           else null end),
	sched_pass_ms_10k_queued_p50: ($p50 * 1000 * 100 | round / 100),
	sched_pass_ms_10k_queued_p99: ($p99 * 1000 * 100 | round / 100),
	sched_pass_cpu_ms_10k_queued: (if $count1 > $count0
	                               then (($cpu_sum1 - $cpu_sum0) / ($count1 - $count0) * 1000 * 100
	                                     | round / 100)
	                               else null end),
	sched_pass_cpu_ms_10k_queued_p99: ($cpu_p99 * 1000 * 100 | round / 100) }')

jq -n -c --argjson tcp "$tcp" --argjson unix "$unix" --argjson base "$base" --argjson lat "$lat" \
	--argjson q "$queued_json" '{
	bench: "server", submissions: $tcp.submissions, connections: $tcp.connections,
	submit_per_sec: $tcp.per_sec, submit_unix_per_sec: $unix.per_sec,
	baseline_insert_per_sec: $base.per_sec,
	submit_vs_baseline: ($tcp.per_sec / $base.per_sec * 100 | round / 100),
	submit_errors: ($tcp.http_errors + $tcp.transport_errors + $unix.http_errors
	                + $unix.transport_errors),
	submit_latency_p50_ms: $tcp.latency_p50_ms, submit_latency_p99_ms: $tcp.latency_p99_ms,
	tasks: $lat.tasks, task_rate_per_sec: $lat.rate_per_sec, running_count: $lat.running_count,
	submit_to_running_p50_ms: $lat.p50_ms, submit_to_running_p99_ms: $lat.p99_ms,
	submit_to_running_max_ms: $lat.max_ms } + $q' | tee "$tmp/result.json"

# The queued case's targets: a pass at most 10 ms (its mean, and the p99
# of its CPU time: on a machine shared with other work the p99 of its
# duration is mostly the wait for a core), the idle server at most 5 % of
# a core, submissions at least 0.8 of the empty queue's rate; none refused.
jq -e '.sched_pass_ms_10k_queued != null and .sched_pass_ms_10k_queued <= 10 and
       .sched_pass_cpu_ms_10k_queued_p99 <= 10 and .idle_cpu_pct_10k_queued <= 5 and
       .submit_10k_vs_empty >= 0.8 and .queued_submit_errors == 0' "$tmp/result.json" \
	>/dev/null || { echo "bench-server.sh: a target of the queued case was missed" >&2; exit 1; }
