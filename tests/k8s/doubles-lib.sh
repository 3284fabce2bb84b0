# doubles-lib.sh — what the tests on the API server double share
# (test-e2e.sh, test-reclaim.sh, test-bill.sh, test-service.sh); sourced
# after tests/lib.sh, with $here the tests/k8s folder.

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for WHAT SECONDS COMMAND...: COMMAND succeeds within SECONDS (0.1 s
# steps); the time it took, in ms, in $waited_ms. When it does not, that
# is a failure (counted: a check after `wait_for ... &&` is never reached).
wait_for() {
	what=$1 limit=$2
	shift 2
	start=$(date +%s%N)
	for _ in $(seq $((limit * 10))); do
		if "$@" >/dev/null 2>&1; then
			waited_ms=$((($(date +%s%N) - start) / 1000000))
			return 0
		fi
		sleep 0.1
	done
	bad "waiting for $what ($limit s)"
	return 1
}

# double_start [OPTIONS...]: the API server double on a free port, with
# these options; its pid in $double, its URL in $api.
double_start() {
	node "$here/apiserver-double.js" --port 0 "$@" >"$tmp/double.out" 2>"$tmp/double.err" &
	double=$!
	wait_for "the API server double" 10 double_port
	api=http://127.0.0.1:$(double_port)
}
double_port() {
	port=$(head -n 1 "$tmp/double.out" | jq -r '.port // empty' 2>/dev/null)
	[ -n "$port" ] && echo "$port"
}

# event_on NAMESPACE POD REASON TEXT: the pod has an Event of REASON
# whose message has TEXT.
event_on() {
	curl -s "$api/api/v1/namespaces/$1/events" | jq -e --arg pod "$2" --arg r "$3" \
		--arg t "$4" '[.items[] | select(.involvedObject.name == $pod and .reason == $r and
		(.message | contains($t)))] | length >= 1'
}

# place_pod NAMESPACE NAME UNITS: pod NAME, made already, scheduled onto
# node-1 as kube-scheduler would (the extender's filter, which answers the
# node and holds the placement there, then bind, at $ext), then allocated UNITS by the kubelet double on the device
# plugin in $tmp/plugins (its answer in $tmp/NAME.alloc), and given the
# cgroup a kubelet would make for it (cgroup_make); the pod as it was
# before in $tmp/NAME.json, its UID in $uid.
place_pod() {
	curl -s "$api/api/v1/namespaces/$1/pods/$2" >"$tmp/$2.json"
	jq '{Pod: ., NodeNames: ["node-1"]}' "$tmp/$2.json" >"$tmp/$2.args"
	curl -s -d @"$tmp/$2.args" "$ext/filter" >/dev/null
	jq '{PodName: .metadata.name, PodNamespace: .metadata.namespace, PodUID: .metadata.uid,
		Node: "node-1"}' "$tmp/$2.json" | curl -s -d @- "$ext/bind" >"$tmp/$2.bind"
	node "$here/kubelet-double.js" --dir "$tmp/plugins" --resource gpupool.io/gpu \
		--allocate "$3" --scenario allocate >"$tmp/$2.kubelet" 2>"$tmp/$2.kubelet.err"
	jq -c 'select(.event == "allocate")' "$tmp/$2.kubelet" >"$tmp/$2.alloc"
	uid=$(jq -r .metadata.uid "$tmp/$2.json")
	cgroup_make "$uid"
}

# The pod's cgroup, named as kubelet names it (a cgroup v2 hierarchy that
# takes a new folder, v1's pids otherwise): the node counts a device
# process for the pod whose cgroup it is in. cgroups_remove (the tests'
# cleanup_hook) kills what is left in them and removes them.
cgroups=
cgroup_make() {
	for base in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/pids; do
		if mkdir -p "$base/gpupool-test-$$/pod$1" 2>/dev/null &&
			[ -f "$base/gpupool-test-$$/pod$1/cgroup.procs" ]; then
			cgroups="$cgroups $base/gpupool-test-$$/pod$1"
			return 0
		fi
		rmdir "$base/gpupool-test-$$/pod$1" "$base/gpupool-test-$$" 2>/dev/null
	done
	bad "no cgroup hierarchy takes a folder for pod $1"
}
cgroups_remove() {
	for c in $cgroups; do
		for pid in $(cat "$c/cgroup.procs" 2>/dev/null); do kill -9 "$pid"; done
	done
	sleep 0.2
	for c in $cgroups; do rmdir "$c" "$(dirname "$c")" 2>/dev/null; done
	return 0
}

# in_cgroup UID COMMAND...: COMMAND run in pod UID's cgroup.
in_cgroup() {
	cg=$(echo "$cgroups" | tr ' ' '\n' | grep "pod$1\$")
	shift
	sh -c 'echo $$ >"$0" && exec "$@"' "$cg/cgroup.procs" "$@"
}

# api_get PATH: the server's answer to GET PATH, as the admin
# ($GPUPOOL_SOCKET, $GPUPOOL_TOKEN_FILE); task_of NAME: the tasks named
# so, as GET /v1/tasks lists them.
api_get() {
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
		"http://gpupool$1"
}
task_of() {
	api_get /v1/tasks | jq --arg n "$1" '[.tasks[] | select(.name == $n)]'
}

# one_t4_node [DOUBLE_OPTIONS...]: what the metered tests (test-bill.sh,
# test-service.sh) run on: the API server double (with those options),
# the Node node-1 as a kubelet registers it, and `gpupool node
# --kubernetes` there on one simulated T4 (its pid in $node_pid, its
# /metrics on 127.0.0.1:$metrics_port), with the placement key in
# $tmp/placement.key the server is to use too; the server's socket and
# admin token exported for the CLI.
one_t4_node() {
	export GPUPOOL_SIM_DEVICES=t4-16g:1 GPUPOOL_SIM_DIR=$tmp/sim
	export GPUPOOL_SOCKET=$tmp/server.sock GPUPOOL_TOKEN_FILE=$tmp/admin.token
	mkdir -p "$tmp/plugins" "$tmp/run"
	head -c 48 /dev/urandom | base64 -w0 >"$tmp/placement.key"
	double_start "$@"
	jq -n '{apiVersion: "v1", kind: "Node", metadata: {name: "node-1"}, status: {allocatable:
		{cpu: "16", memory: "64Gi"}, conditions: [{type: "Ready", status: "True"}]}}' |
		curl -s -H 'Content-Type: application/json' -d @- "$api/api/v1/nodes" >/dev/null
	metrics_port=$(free_port)
	LD_LIBRARY_PATH=$build/simdev "$build/gpupool" node --kubernetes --node-name node-1 \
		--kube-api "$api" --device-plugin-dir "$tmp/plugins" --run-dir "$tmp/run" \
		--shim-host-path "$build/libgpushare.so" --metrics-listen "127.0.0.1:$metrics_port" \
		--health-ms 200 --placement-key "$tmp/placement.key" >"$tmp/node.log" 2>&1 &
	node_pid=$!
}
