#!/bin/bash
# bench-k8s-real.sh — pods bound per second by the real kube-scheduler
# through gpupool's extender, against kube-scheduler alone, in the same
# run, at the same client QPS (part of bench/bench-k8s.sh: make bench-k8s).
# A control plane of its own on loopback (tests/k8s/real/control-plane.sh:
# etcd on tmpfs, kube-apiserver from $GPUPOOL_KUBE_BIN), NODES (1000)
# Nodes with 8 devices each made as the kubelet and `gpupool node` make
# them (bench/bench-k8s-real.c), then ROUNDS (3) rounds of two runs, the
# order alternating (extender first in odd rounds, alone first in even):
#
#   extender  `gpupool server --kubernetes` with server.yaml's arguments,
#             and kube-scheduler with scheduler-config.yaml (its extender's
#             port, the kubeconfig and the client's QPS changed, leader
#             election off)
#   alone     kube-scheduler with the same configuration less `extenders`;
#             the server is not running
#
# Each run starts its programs, binds WARMUP (4) pods untimed, then
# creates PODS (400) pods at once (4 connections) and watches them: its
# figure is PODS over the seconds from the first creation to the last
# bind. The pods are the same in both runs (schedulerName
# gpupool-scheduler, CPU and memory, gpupool.io/gpu units and the
# gpu-memory annotation; kube-scheduler counts the units against the
# Nodes' allocatable in both); the run then stops its programs and
# deletes its pods, so each run starts from an empty cluster.
#
# The rounds run at each client setting of CLIENTS, "QPS/BURST" pairs (the
# clientConnection qps and burst of kube-scheduler, the same in both runs
# of a pair; default "1000/1000 50/100"): 1000 is above what either run
# asks of its client, so the comparison is of the scheduling work; 50/100
# is kube-scheduler's default, which deploy/kubernetes keeps, and there
# the alone runs wait on their client's limit for their binding calls,
# while the extender binds through its own client. Target, at each
# setting: the median of the extender's runs is at least the median of
# the alone runs (no margin: the noise of a shared machine is met by
# interleaving the runs and taking medians); real_pass when it is met at
# every setting. Every run is in the JSON, with the CPU time that
# kube-scheduler, kube-apiserver, etcd and the server used during it.
#
# usage: bench-k8s-real.sh BUILD_DIR  (from the repository root). Prints
# one JSON object; without $GPUPOOL_KUBE_BIN it says it skipped, on
# stderr and in the JSON, and exits 0. Exits 1 when the run broke (the
# logs' ends on stderr); a missed target is the caller's to judge.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
kbin=${GPUPOOL_KUBE_BIN:-}
nodes=${NODES:-1000} pods=${PODS:-400} warmup=${WARMUP:-4} rounds=${ROUNDS:-3}
clients=${CLIENTS:-1000/1000 50/100}
ns=gpupool-bench
if [ -z "$kbin" ]; then
	echo "bench-k8s-real.sh: skipped: GPUPOOL_KUBE_BIN is not set (a folder with kube-apiserver" \
		"and kube-scheduler: docs/kubernetes.md)" >&2
	echo '{"real_scheduler":"skipped: GPUPOOL_KUBE_BIN is not set"}'
	exit 0
fi
for b in kube-apiserver kube-scheduler; do
	[ -x "$kbin/$b" ] || { echo "bench-k8s-real.sh: $kbin has no executable $b" >&2; exit 1; }
done
for t in etcd openssl yq jq curl python3; do
	command -v "$t" >/dev/null || { echo "bench-k8s-real.sh: needs $t" >&2; exit 1; }
done
. "$root/tests/k8s/real/control-plane.sh"

tmp=$(mktemp -d -p /var/tmp gpupool-bench-k8s.XXXXXX)
# etcd syncs every write: on tmpfs where there is one.
etcd_data=$(mktemp -d -p /dev/shm gpupool-bench-etcd.XXXXXX 2>/dev/null) || etcd_data=$tmp/etcd
pids=

# stop PID...: SIGTERM, SIGKILL after 10 s; each taken out of $pids.
stop() {
	for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
	for pid in "$@"; do
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pids=$(echo " $pids " | sed "s/ $pid / /; s/^ *//; s/ *$//")
	done
}

# Every program started here ends with the script, however it ends; a
# failed run shows the end of each log.
cleanup() {
	status=$?
	# shellcheck disable=SC2086
	[ -z "$pids" ] || stop $pids
	if [ "$status" -ne 0 ]; then
		for f in "$tmp"/*.log; do
			[ -f "$f" ] || continue
			echo "---- the end of $(basename "$f")" >&2
			tail -n 15 "$f" >&2
		done
	fi
	rm -rf "$tmp" "$etcd_data"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "bench-k8s-real.sh: $*" >&2; exit 1; }

# start NAME COMMAND...: in the background, output in $tmp/NAME.log; its
# pid in $last_pid and $pids.
start() {
	name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 &
	last_pid=$!
	pids="$last_pid $pids"
}

# client NAME PID COMMAND...: COMMAND's stdout in $tmp/NAME.json, its
# stderr in $tmp/NAME.log; its status. It runs in the background while
# the script watches it and PID (a program it needs; - for none): a
# signal stops it at once with the rest, and so does PID's end.
client() {
	name=$1 needed=$2
	shift 2
	"$@" >"$tmp/$name.json" 2>"$tmp/$name.log" &
	client_pid=$!
	pids="$client_pid $pids"
	while kill -0 "$client_pid" 2>/dev/null; do
		[ "$needed" = - ] || kill -0 "$needed" 2>/dev/null || fail "$name: a program it needs ended"
		sleep 0.2
	done
	client_status=0
	wait "$client_pid" || client_status=$?
	stop "$client_pid"
	return "$client_status"
}

# wait_for WHAT SECONDS PID COMMAND...: COMMAND succeeds within SECONDS
# while PID runs, or the bench fails.
wait_for() {
	what=$1 limit=$2 pid=$3
	shift 3
	for _ in $(seq $((limit * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || fail "waiting for $what: it ended"
		sleep 0.2
	done
	fail "waiting for $what ($limit s)"
}

# shellcheck disable=SC2046
set -- $(python3 -c 'import socket
socks = [socket.socket() for _ in range(5)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
etcd_port=$1 etcd_peer=$2 api_port=$3 sched_port=$4 ext_port=$5
api=https://127.0.0.1:$api_port
pki=$tmp/pki
mkdir -p "$pki"
kube_pki "$pki" "$tmp/pki.log" || fail "the PKI (openssl)"
kube_kubeconfig "$tmp/admin.kubeconfig" "$api" "$pki/ca.crt" "$(cat "$pki/admin.token")"

# kapi METHOD PATH [BODY]: the API server's answer as admin; fails unless 2xx.
kapi() {
	body=()
	[ $# -lt 3 ] || body=(--data-binary "$3")
	curl -sSf --cacert "$pki/ca.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" \
		-H 'Content-Type: application/json' -X "$1" "${body[@]}" "$api$2"
}

# ---- the control plane, the namespace, the Nodes ------------------------------------
start etcd kube_etcd "$etcd_data" "$etcd_port" "$etcd_peer"
etcd_pid=$last_pid
wait_for etcd 20 "$last_pid" curl -sf "http://127.0.0.1:$etcd_port/health"
start kube-apiserver kube_apiserver "$kbin" "$pki" "$etcd_port" "$api_port" --v=1
api_pid=$last_pid
api_ready() { [ "$(kapi GET /readyz)" = ok ]; }
wait_for kube-apiserver 90 "$last_pid" api_ready
kapi POST /api/v1/namespaces "{\"metadata\": {\"name\": \"$ns\"}}" >/dev/null
# (the ServiceAccount admission plugin admits no pod without it; no
# controller manager runs here to make it)
kapi POST "/api/v1/namespaces/$ns/serviceaccounts" '{"metadata": {"name": "default"}}' >/dev/null
client nodes - "$build/bench-k8s-real" nodes --kubeconfig "$tmp/admin.kubeconfig" \
	--nodes "$nodes" || fail "making the Nodes"

# ---- kube-scheduler's configurations: KIND-QPS-BURST.yaml ---------------------------------
yq -r '.data["config.yaml"]' "$root/deploy/kubernetes/scheduler-config.yaml" >"$tmp/shipped.yaml"
yq -e '.extenders | length == 1' "$tmp/shipped.yaml" >/dev/null || fail "no extender configured"
scheduler=$(yq -r '.profiles[0].schedulerName' "$tmp/shipped.yaml")
for c in $clients; do
	yq -y --arg port "$ext_port" --arg kc "$tmp/admin.kubeconfig" \
		--argjson qps "${c%/*}" --argjson burst "${c#*/}" '
		.extenders |= map(.urlPrefix |= sub(":[0-9]+/"; ":" + $port + "/")) |
		.clientConnection = {kubeconfig: $kc, qps: $qps, burst: $burst} |
		.leaderElection = {leaderElect: false}' "$tmp/shipped.yaml" >"$tmp/extender-${c/\//-}.yaml"
	yq -y 'del(.extenders)' "$tmp/extender-${c/\//-}.yaml" >"$tmp/alone-${c/\//-}.yaml"
done

# The server's arguments in server.yaml, with this run's database,
# extender port, and no metrics listener.
yq -r '.spec.template.spec.containers[] | select(.name == "server") | .args[]' \
	"$root/deploy/kubernetes/server.yaml" >"$tmp/server.args"
server_args=()
prev=
while IFS= read -r a; do
	case $prev in
	--db) a=$tmp/gpupool.db ;;
	--extender-port) a=$ext_port ;;
	--metrics-listen) prev= && continue ;;
	esac
	prev=$a
	[ "$a" = --metrics-listen ] || server_args+=("$a")
done <"$tmp/server.args"
head -c 48 /dev/urandom | base64 -w0 >"$tmp/placement.key"

extender_synced() {
	curl -sf "http://127.0.0.1:$ext_port/extender/healthz" |
		jq -e --argjson n "$nodes" '.synced and .nodes == $n'
}
scheduler_start() { # CONFIG
	start "scheduler-$1" "$kbin/kube-scheduler" --config="$tmp/$1.yaml" \
		--authentication-kubeconfig="$tmp/admin.kubeconfig" \
		--authorization-kubeconfig="$tmp/admin.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$sched_port" --v=1
	sched=$last_pid
}
placed() { # RUN: how many of its pods have a placement annotation
	kapi GET "/api/v1/namespaces/$ns/pods?labelSelector=gpupool.io%2Fbench-run%3D$1" |
		jq '[.items[] | select(.metadata.annotations["gpupool.io/placement"])] | length'
}
# cpu_ticks PID...: the CPU time (user + system, in clock ticks) each has used so far.
cpu_ticks() {
	for pid in "$@"; do awk '{print $14 + $15}' "/proc/$pid/stat"; done
}
none_left() {
	[ "$(kapi GET "/api/v1/namespaces/$ns/pods?limit=1" | jq '.items | length')" = 0 ]
}

# server_start ID: `gpupool server --kubernetes` for run ID, its pid in
# $server, once its extender has listed the cluster.
server_start() {
	start "server-$1" "$build/gpupool" "${server_args[@]}" --socket "$tmp/server.sock" \
		--kubeconfig "$tmp/admin.kubeconfig" --placement-key "$tmp/placement.key"
	server=$last_pid
	wait_for "the extender to list the cluster" 60 "$server" extender_synced
}

# run_record ID KIND ROUND QPS/BURST BEFORE AFTER: the client's line of
# run ID with what it was, and the CPU seconds each program used between
# the tick counts BEFORE and AFTER (cpu_ticks), into $tmp/runs.json.
run_record() {
	jq -c --arg kind "$2" --argjson round "$3" --argjson qps "${4%/*}" \
		--argjson burst "${4#*/}" --arg before "$5" --arg after "$6" \
		--argjson hz "$(getconf CLK_TCK)" --argjson in "$(cat "$tmp/$1.json")" -n '
		[($after | split("\n") | map(tonumber)), ($before | split("\n") | map(tonumber))] |
		transpose | map((.[0] - .[1]) / $hz * 10 | round / 10) as $cpu |
		$in + {kind: $kind, round: $round, qps: $qps, burst: $burst,
		cpu_seconds: ({scheduler: $cpu[0], apiserver: $cpu[1], etcd: $cpu[2]} +
			if $kind == "extender" then {server: $cpu[3]} else {} end)}' >>"$tmp/runs.json"
	echo "bench-k8s-real.sh: $(cat "$tmp/$1.json")" >&2
}

# run_clear ID: run ID's pods deleted, and gone.
run_clear() {
	kapi DELETE "/api/v1/namespaces/$ns/pods?labelSelector=gpupool.io%2Fbench-run%3D$1" \
		'{"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}' >/dev/null
	wait_for "run $1's pods to go" 60 "$$" none_left
}

# run KIND ROUND QPS/BURST: one timed run of KIND (extender or alone) at
# that client setting, its JSON line added to $tmp/runs.json.
run() {
	id=r$2-$1-${3/\//-}
	server=
	[ "$1" = extender ] && server_start "$id"
	scheduler_start "$1-${3/\//-}"
	# the CPU time of these (the script's own where no server runs) over
	# the client's run, warm-up included
	watched="$sched $api_pid $etcd_pid ${server:-$$}"
	# shellcheck disable=SC2086
	before=$(cpu_ticks $watched)
	client "$id" "$sched" "$build/bench-k8s-real" pods --kubeconfig "$tmp/admin.kubeconfig" \
		--namespace "$ns" --run "$id" --scheduler "$scheduler" --pods "$pods" \
		--warmup "$warmup" || fail "run $id: not every pod was bound"
	# shellcheck disable=SC2086
	after=$(cpu_ticks $watched)
	stop "$sched" $server
	# The extender run's pods were bound by the extender (a placement
	# each), the alone run's by kube-scheduler itself (none).
	want=0
	[ "$1" = extender ] && want=$((pods + warmup))
	got=$(placed "$id")
	[ "$got" = "$want" ] || fail "run $id: $got pods with a placement, not $want"
	run_record "$id" "$1" "$2" "$3" "$before" "$after"
	run_clear "$id"
}

: >"$tmp/runs.json"
for round in $(seq "$rounds"); do
	for c in $clients; do
		if [ $((round % 2)) -eq 1 ]; then
			run extender "$round" "$c"
			run alone "$round" "$c"
		else
			run alone "$round" "$c"
			run extender "$round" "$c"
		fi
	done
done

jq -c -s --slurpfile nodes "$tmp/nodes.json" --arg version "$("$kbin/kube-scheduler" --version)" '
	def median: sort | if length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def rates(k): map(select(.kind == k) | .pods_bound_per_sec);
	def setting: (rates("extender") | median) as $ext | (rates("alone") | median) as $alone | {
		qps: .[0].qps, burst: .[0].burst,
		extender_pods_per_sec: $ext, alone_pods_per_sec: $alone,
		extender_over_alone: (($ext / $alone * 1000 | round) / 1000),
		extender_runs: rates("extender"), alone_runs: rates("alone"),
		pass: ($ext >= $alone), runs: map(del(.qps, .burst, .pods))};
	(group_by([.qps, .burst]) | map(setting) | sort_by(-.qps)) as $s | {
	real_scheduler: $version, real_nodes: $nodes[0].nodes, real_pods_per_run: .[0].pods,
	real_rounds: (length / 2 / ($s | length)), real: $s,
	real_target: "at each client setting (kube-scheduler clientConnection qps/burst, the same in both runs): median pods bound/s of the extender runs >= median of the alone runs, rounds interleaved",
	real_pass: all($s[]; .pass)}' "$tmp/runs.json"
