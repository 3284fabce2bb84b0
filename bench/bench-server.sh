#!/bin/sh
# bench-server.sh — `gpupool server` under load: durable submissions per
# second over the API, beside durable SQLite inserts on the same disk in the
# same run, and how long a submitted task waits until it runs. Writes one
# JSON object (make bench: build/bench/server.json). The client is
# bench/bench-server.c (BUILD_DIR/bench-server).
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
set -eu
build=$1
gp=$build/gpupool
client=$build/bench-server
n=${SUBMISSIONS:-5000}
conns=${CONNECTIONS:-8}
tasks=${TASKS:-200}
rate=${RATE:-50}
tmp=$(mktemp -d)
chmod 1777 "$tmp" # tasks of a root server run as their tenants' users
# shellcheck disable=SC2154 # status is set inside the trap
trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$tmp"; exit $status' EXIT

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
		http://localhost/v1/tenants -d '{"name": "bench"}' | jq -r .token) ||
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
server_start agent --with-agent --run-dir "$tmp/run"
lat=$("$client" latency --url http://localhost/v1/tasks --socket "$tmp/agent/sock" \
	--token "$token" --count "$tasks" --rate "$rate" --db "$tmp/agent/gp.db") ||
	fail "latency submissions failed"
server_stop

jq -n -c --argjson tcp "$tcp" --argjson unix "$unix" --argjson base "$base" --argjson lat "$lat" '{
	bench: "server", submissions: $tcp.submissions, connections: $tcp.connections,
	submit_per_sec: $tcp.per_sec, submit_unix_per_sec: $unix.per_sec,
	baseline_insert_per_sec: $base.per_sec,
	submit_vs_baseline: ($tcp.per_sec / $base.per_sec * 100 | round / 100),
	submit_errors: ($tcp.http_errors + $tcp.transport_errors + $unix.http_errors
	                + $unix.transport_errors),
	submit_latency_p50_ms: $tcp.latency_p50_ms, submit_latency_p99_ms: $tcp.latency_p99_ms,
	tasks: $lat.tasks, task_rate_per_sec: $lat.rate_per_sec, running_count: $lat.running_count,
	submit_to_running_p50_ms: $lat.p50_ms, submit_to_running_p99_ms: $lat.p99_ms,
	submit_to_running_max_ms: $lat.max_ms }'
