#!/bin/sh
# test-e2e.sh — gpupool on Kubernetes end to end, with every real part that
# can run here: the API server double (apiserver-double.js, the real REST
# and watch protocol), `gpupool server --kubernetes` (the extender, called
# in kube-scheduler's order: filter, then bind on the one node filter
# answers; prioritize too, for configurations that still name it), `gpupool node
# --kubernetes` on simdev's devices, the grpc-js kubelet double (kubelet's
# call order), and a real process started as a container runtime would,
# with exactly the environment and mounts Allocate returned.
#
#   GetPreferredAllocation before the node program has seen the pod's bind
#   prefers the placed device's units (it lists the node's pods again), and
#   for a request no pod waits for, the units of one device;
#   a pod asking for 3 units (30 %) and 4 GiB → filter → prioritize (as an
#   older configuration calls it) → bind
#   → placement annotation → Allocate → the process is held to 4 GiB and
#   about 30 %; a live annotation change reaches its region within 1 s; a
#   lost device is pushed to the kubelet as unhealthy; an over-quota pod
#   stays Pending with its reason (in FailedNodes and one Event, counted
#   at each refusal); a deleted pod keeps its slice while its container
#   runs its grace period, and frees it once the container has ended;
#   kube-scheduler is asked to try again (gpupool.io/retry) a pending pod
#   at the extender's start, and a refused one when a slice frees.
#   Placements are sealed (src/k8s/seal.h): a pod bound to the node with a
#   placement copied from another pod, one written without a seal, or one
#   for another node gets no device and an Event; a sealed placement put
#   back after a live change is not applied; a live change past the quota
#   is refused. The node's verifier kills a container process without the
#   interposer over its slice (an event on the pod, an alert on its task
#   at the server), and a device process of no pod.
#
# usage: test-e2e.sh BUILD_DIR   (run from the repository root, as root:
# the container's mounts need a mount namespace)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-e2e.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP test-e2e.sh: the container's mounts need root (a mount namespace); run make check as root"
	exit 77
fi
. "$here/../lib.sh"
. "$here/doubles-lib.sh"

gpupool=$build/gpupool
export GPUPOOL_SIM_DEVICES=t4-16g:2 GPUPOOL_SIM_DIR=$tmp/sim
mkdir -p "$tmp/plugins" "$tmp/run"
# The key the server seals placements with and the node checks them by
# (the Secret gpupool-placement-key on a cluster).
key=$tmp/placement.key
head -c 48 /dev/urandom | base64 -w0 >"$key"

# ---- the API server, the node, the extender ----------------------------------
# A pod deleted stays, marked, until the test says its containers are gone
# (as a kubelet would, at the end of their grace period).
double_start --pod-termination-ms 600000

# What kubelet registers for its node.
curl -s -H 'Content-Type: application/json' -o /dev/null -d \
	'{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1"},"status":{"allocatable":{"cpu":"16","memory":"64Gi"},"conditions":[{"type":"Ready","status":"True"}]}}' \
	"$api/api/v1/nodes"

metrics_port=$(free_port)
LD_LIBRARY_PATH=$build/simdev "$gpupool" node --kubernetes --node-name node-1 --kube-api "$api" \
	--device-plugin-dir "$tmp/plugins" --run-dir "$tmp/run" \
	--shim-host-path "$build/libgpushare.so" --metrics-listen "127.0.0.1:$metrics_port" \
	--health-ms 200 --placement-key "$key" >"$tmp/node.log" 2>&1 &
node_pid=$!

devices_published() {
	curl -s "$api/api/v1/nodes/node-1" >"$tmp/node.json" &&
		jq -e '.metadata.annotations["gpupool.io/devices"] | fromjson | .devices | length == 2' \
			"$tmp/node.json"
}
wait_for "the node's devices" 10 devices_published
check node-publishes-its-devices '.[0].metadata.annotations["gpupool.io/devices"] | fromjson |
	.devices | all(.model == "Tesla T4" and .memoryMiB == 15360 and .split == 10 and .healthy)' \
	"$tmp/node.json"

# A pod of the gpupool scheduler that waits before the extender starts (it
# may have failed while the extender was not there): kube-scheduler is
# asked to try it again once the extender has listed the cluster.
jq -n '{apiVersion: "v1", kind: "Pod", metadata: {name: "waiting", namespace: "default"},
	spec: {schedulerName: "gpupool-scheduler", containers: [{name: "main", image: "pytorch",
	resources: {limits: {"gpupool.io/gpu": "3"}}}]}}' |
	curl -s -H 'Content-Type: application/json' -d @- -o /dev/null \
		"$api/api/v1/namespaces/default/pods"

ext_port=$(free_port)
server_metrics_port=$(free_port)
ext=http://127.0.0.1:$ext_port/extender
GPUPOOL_SOCKET=$tmp/server.sock "$gpupool" server --kubernetes --kube-api "$api" \
	--extender-port "$ext_port" --db "$tmp/db.sqlite" --socket "$tmp/server.sock" \
	--scheduler-name gpupool-scheduler --metrics-listen "127.0.0.1:$server_metrics_port" \
	--placement-key "$key" --sample-ms 500 >"$tmp/server.log" 2>&1 &
server=$!
wait_for "the extender" 10 curl -sf "$ext/healthz"
# retried NAMESPACE NAME: the extender asked kube-scheduler to try the pod
# again (the annotation gpupool.io/retry, unix ms).
retried() {
	curl -s "$api/api/v1/namespaces/$1/pods/$2" |
		jq -e '.metadata.annotations["gpupool.io/retry"] // "" | test("^[0-9]{13}$")'
}
wait_for "the waiting pod tried again" 5 retried default waiting &&
	ok pending-pod-tried-again-at-start-up


# ---- kube-scheduler's part ------------------------------------------------------
# pod_make NAMESPACE NAME UNITS MEMORY: a pod of the gpupool scheduler; its
# object in $tmp/NAME.json.
pod_make() {
	jq -n --arg ns "$1" --arg name "$2" --arg units "$3" --arg mem "$4" '{apiVersion: "v1",
		kind: "Pod", metadata: {name: $name, namespace: $ns,
		annotations: {"gpupool.io/gpu-memory": $mem}}, spec: {schedulerName: "gpupool-scheduler",
		containers: [{name: "main", image: "pytorch", resources: {requests: {cpu: "1",
		memory: "1Gi"}, limits: {"gpupool.io/gpu": $units}}}]}}' |
		curl -s -H 'Content-Type: application/json' -d @- \
			"$api/api/v1/namespaces/$1/pods" >"$tmp/$2.json"
}

# schedule NAME [prioritize]: filter, then bind, as kube-scheduler calls
# them (it binds the one node filter answers without scoring); with
# `prioritize`, prioritize between them, as a configuration that still
# names it calls it; the answers in $tmp/NAME.{filter,prioritize,bind}.
schedule() {
	jq --argjson names '["node-1"]' '{Pod: ., NodeNames: $names}' "$tmp/$1.json" >"$tmp/$1.args"
	curl -s -d @"$tmp/$1.args" "$ext/filter" >"$tmp/$1.filter"
	jq -e '.NodeNames | length == 1' "$tmp/$1.filter" >/dev/null || return 0
	[ "${2:-}" != prioritize ] ||
		curl -s -d @"$tmp/$1.args" "$ext/prioritize" >"$tmp/$1.prioritize"
	jq '{PodName: .metadata.name, PodNamespace: .metadata.namespace, PodUID: .metadata.uid,
		Node: "node-1"}' "$tmp/$1.json" >"$tmp/$1.bindargs"
	curl -s -d @"$tmp/$1.bindargs" "$ext/bind" >"$tmp/$1.bind"
}

# ---- no kubelet yet: said once --------------------------------------------------------
no_kubelet_said() { grep -c 'no kubelet.sock in' "$tmp/node.log"; }
if wait_for "the node to say the kubelet is missing" 5 grep -q 'no kubelet.sock in' "$tmp/node.log"
then
	sleep 1         # five health periods more: still said once
	[ "$(no_kubelet_said)" -eq 1 ] && ok missing-kubelet-said-once ||
		bad "missing-kubelet-said-once: said $(no_kubelet_said) times" "$tmp/node.log"
fi

# ---- GetPreferredAllocation before the node program has seen the pod -------------
# The node's watch of its pods is held off (429, as a busy API server
# answers): a pod's bind reaches it only by listing its pods again.
node_watch='/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1&watch=true'
node_watch_fails() {
	jq -n --arg p "$node_watch" --argjson n "$1" \
		'{method: "GET", pathPrefix: $p, status: 429, count: $n}' |
		curl -s -o /dev/null -H 'Content-Type: application/json' -d @- "$api/_double/fail"
}
node_watch_fails 100000
curl -s -X POST -o /dev/null "$api/_double/drop-watches"
pod_make default early 2 2Gi
schedule early
check early-bound '.[0].Error == ""' "$tmp/early.bind"
early_uuid=$(curl -s "$api/api/v1/namespaces/default/pods/early" |
	jq -r '.metadata.annotations["gpupool.io/placement"] | fromjson | .devices[0]')
# preferred_of UNITS NAME: a kubelet that asks for its preferred ids only,
# offered a unit of each device in turn; the ids it got in $tmp/NAME.ids.
preferred_of() {
	node "$here/kubelet-double.js" --dir "$tmp/plugins" --resource gpupool.io/gpu \
		--allocate "$1" --scenario preferred --order interleaved >"$tmp/$2.kubelet" \
		2>"$tmp/$2.kubelet.err"
	jq -c 'select(.event == "preferred") | .ids' "$tmp/$2.kubelet" >"$tmp/$2.ids"
}
preferred_of 2 early
wait_for "the node to say it registered" 5 grep -q 'registered gpupool.io/gpu with the kubelet' \
	"$tmp/node.log" && ok registration-said
check preferred-lists-again-for-a-pod-not-seen-yet "(.[0] | length) == 2 and
	(.[0] | map(split(\"::\")[0]) | unique) == [\"$early_uuid\"]" "$tmp/early.ids"
preferred_of 7 nobody
check preferred-for-no-pod-takes-one-device '(.[0] | length) == 7 and
	(.[0] | map(split("::")[0]) | unique | length) == 1' "$tmp/nobody.ids"
node_watch_fails 0
curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/default/pods/early"

pod_make default train 3 4Gi
schedule train prioritize
check filter-keeps-the-node '.[0].NodeNames == ["node-1"] and .[0].Error == ""' "$tmp/train.filter"
check prioritize-scores-the-held-node '.[0] == [{"Host": "node-1", "Score": 10}]' \
	"$tmp/train.prioritize"
check bind-succeeds '.[0].Error == ""' "$tmp/train.bind"
curl -s "$api/api/v1/namespaces/default/pods/train" >"$tmp/train.bound"
check pod-bound-with-its-placement '.[0].spec.nodeName == "node-1" and
	(.[0].metadata.annotations["gpupool.io/placement"] | fromjson |
	 .node == "node-1" and .memoryMiB == 4096 and .compute == 30 and (.devices | length) == 1)' \
	"$tmp/train.bound"

# seal_of UID TEXT: the seal of a placement, as seal.h documents it
# (HMAC-SHA256 with the key over a domain line, the UID and the text).
seal_of() {
	printf 'gpupool placement seal 1\n%s\n%s\n' "$1" "$2" |
		openssl dgst -sha256 -hmac "$(cat "$key")" -r | cut -c1-64 | sed 's/^/v1:/'
}
train_uid=$(jq -r .metadata.uid "$tmp/train.bound")
train_placement=$(jq -r '.metadata.annotations["gpupool.io/placement"]' "$tmp/train.bound")
train_seal=$(jq -r '.metadata.annotations["gpupool.io/placement-seal"]' "$tmp/train.bound")
[ "$train_seal" = "$(seal_of "$train_uid" "$train_placement")" ] &&
	ok placement-sealed-with-the-key || bad placement-sealed-with-the-key "$tmp/train.bound"
# The cluster in the CLI: its node, with its devices and the pod placed.
expect node-ls-lists-the-cluster 0 'node-1 +[0-9][0-9.]+ +[0-9]+\.[0-9] +2 +2 +30\.0G +1$' -- \
	env GPUPOOL_SOCKET="$tmp/server.sock" GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$gpupool" node ls

# ---- the kubelet: Allocate, then a restart and a lost device ----------------------
node "$here/kubelet-double.js" --dir "$tmp/plugins" --resource gpupool.io/gpu --allocate 3 \
	>"$tmp/kubelet.out" 2>"$tmp/kubelet.err" &
kubelet=$!
allocated() { grep -q '"event":"allocate"' "$tmp/kubelet.out"; }
wait_for "Allocate" 20 allocated
jq -c 'select(.event == "allocate")' "$tmp/kubelet.out" >"$tmp/alloc.json"
uuid=$(jq -r '.metadata.annotations["gpupool.io/placement"] | fromjson | .devices[0]' \
	"$tmp/train.bound")
check allocate-names-the-placed-device ".[0].envs.CUDA_VISIBLE_DEVICES == \"$uuid\" and
	.[0].envs.NVIDIA_VISIBLE_DEVICES == \"$uuid\"" "$tmp/alloc.json"
check allocate-preloads-the-shim-with-a-task '.[0].envs.LD_PRELOAD ==
	"/usr/local/lib/gpupool/libgpushare.so" and .[0].envs.GPUPOOL_TASK_ID == "default:train:main"
	and (.[0].envs.GPUPOOL_TASK_SECRET | length) >= 32 and
	.[0].envs.GPUPOOL_RUN_DIR == "/run/gpupool"' "$tmp/alloc.json"
# The device's limits and task files read-only, its own task's file to write.
check allocate-mounts-the-shim-and-its-device-files "[.[0].mounts[] | [.containerPath, .readOnly]] | sort |
	.[0:2] == [[\"/run/gpupool/device-$uuid.limits\", true], [\"/run/gpupool/device-$uuid.tasks\", true]]
	and (.[2][0] | test(\"^/run/gpupool/device-$uuid.tasks/task-[0-9]+$\")) and .[2][1] == false
	and .[3] == [\"/usr/local/lib/gpupool/libgpushare.so\", true] and length == 4" \
	"$tmp/alloc.json"
task=$(jq -r .envs.GPUPOOL_TASK_ID "$tmp/alloc.json")
task_annotated() {
	curl -s "$api/api/v1/namespaces/default/pods/train" |
		jq -e --arg t "$task" '.metadata.annotations["gpupool.io/task"] == $t'
}
wait_for "the task annotation" 5 task_annotated && ok pod-annotated-with-its-task

# ---- the container: held to 4 GiB and 30 % --------------------------------------
# The pod's cgroup, named as kubelet names it: the node's verifier maps a
# device process to its pod by it. A cgroup v2 hierarchy that takes a new
# folder (v1's pids hierarchy otherwise).
pod_cgroup=
for base in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/pids; do
	if mkdir -p "$base/gpupool-e2e-$$/pod$train_uid" 2>/dev/null &&
		[ -f "$base/gpupool-e2e-$$/pod$train_uid/cgroup.procs" ]; then
		pod_cgroup=$base/gpupool-e2e-$$/pod$train_uid
		break
	fi
	rmdir "$base/gpupool-e2e-$$/pod$train_uid" "$base/gpupool-e2e-$$" 2>/dev/null
done
[ -n "$pod_cgroup" ] || bad "no cgroup hierarchy (v2, or v1's pids) takes a folder for the pod"
cleanup_hook() {
	[ -n "$pod_cgroup" ] || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$pod_cgroup" "$(dirname "$pod_cgroup")" 2>/dev/null && return 0
		for pid in $(cat "$pod_cgroup/cgroup.procs" 2>/dev/null); do kill -9 "$pid"; done
		sleep 0.2
	done
}
# in_pod COMMAND...: runs COMMAND in the pod's cgroup.
in_pod() { sh -c 'echo $$ >"$0" && exec "$@"' "$pod_cgroup/cgroup.procs" "$@"; }
container() { in_pod "$here/run-container.sh" "$tmp/alloc.json" "$build/simdev" -- "$@"; }
runs container-allocates "$tmp/mem.json" -- container "$build/gpuload" alloc --json
check held-to-4-GiB '.[0].allocated_mib == 4096 and .[0].oom and .[0].total_mib == 4096' \
	"$tmp/mem.json"
# A container that runs as root still cannot write its limits table.
expect container-cannot-raise-its-limits 2 'Read-only file system' -- container sh -c \
	"printf x >>/run/gpupool/device-$uuid.limits"
runs container-burns "$tmp/burn.json" -- container "$build/gpuload" burn --duration 3 --json
# The 30 % cap is the claim; the floor only shows it ran (a busy host can
# starve the burner of CPU, and with it the device).
check held-to-30-percent '.[0].busy_fraction >= 0.1 and .[0].busy_fraction <= 0.36' \
	"$tmp/burn.json"

# ---- the node's verifier ------------------------------------------------------------
# A process of the pod that drops the interposer and takes 6 GiB of its
# 4 GiB slice, and a process of no pod on the device: both killed, the
# pod's with an event on it, the other's on the Node; each an alert and
# an audit row of the server. (The honest containers above ran beside the
# verifier untouched.)
in_pod env -u LD_PRELOAD CUDA_VISIBLE_DEVICES="$uuid" LD_LIBRARY_PATH="$build/simdev" \
	"$build/gpuload" alloc --mib 6144 --hold 30 --json >"$tmp/rogue.json" 2>&1 &
rogue=$!
env CUDA_VISIBLE_DEVICES="$uuid" LD_LIBRARY_PATH="$build/simdev" \
	"$build/gpuload" alloc --mib 256 --hold 30 --json >"$tmp/stranger.json" 2>&1 &
stranger=$!
gone() { ! kill -0 "$1" 2>/dev/null; }
killed() {      # killed NAME PID: PID ended by SIGKILL within 10 s
	if wait_for "$1" 10 gone "$2"; then
		wait "$2"
		status=$?
		[ $status -eq 137 ] && ok "$1" || bad "$1 (exit $status, not SIGKILL)" "$tmp/node.log"
	fi
}
killed verifier-kills-a-pod-process-without-the-shim $rogue
killed verifier-kills-a-process-of-no-pod $stranger
wait_for "the violation's event" 5 event_on default train GpupoolViolation "without the interposer" &&
	ok violation-event-on-the-pod
# ... and an alert of the server on the pod's task (from the node's figures).
violation_alerted() {
	curl -s --unix-socket "$tmp/server.sock" -H "Authorization: Bearer $(cat "$tmp/admin.token")" \
		http://gpupool/v1/alerts | jq -e '[.alerts[] | select(.kind == "task.violation" and
		(.message | contains("of pod default/train broke its slice")))] | length == 1'
}
wait_for "the server's violation alert" 5 violation_alerted && ok violation-alerted-on-the-server
# The process of no pod: an event on the Node, and the server's alert and
# audit row for the node (from the node's count on /metrics).
wait_for "the no-pod violation's event" 5 event_on default node-1 GpupoolViolation "" &&
	ok no-pod-violation-event-on-the-node
node_violation_alerted() {
	curl -s --unix-socket "$tmp/server.sock" -H "Authorization: Bearer $(cat "$tmp/admin.token")" \
		"http://gpupool/v1/$1" | jq -e "$2"
}
wait_for "the server's no-pod violation alert" 5 node_violation_alerted alerts \
	'[.alerts[] | select(.kind == "task.violation" or .kind == "node.violation") |
	  select(.message | contains("node node-1: 1 device process(es) of no pod"))] | length == 1' &&
	ok no-pod-violation-alerted-on-the-server
wait_for "the no-pod violation's audit row" 5 node_violation_alerted "audit?limit=200" \
	'[.audit[] | select(.action == "node.violation" and .object == "node node-1")] | length == 1' &&
	ok no-pod-violation-audited
expect violations-counted 0 'gpupool_node_violations_total [2-9]' -- \
	curl -s "http://127.0.0.1:$metrics_port/metrics"

# ---- a live change of the compute annotation -----------------------------------
compute_is() {
	"$gpupool" region ls --dir "$tmp/run" --json |
		jq -e --arg t "$task" --argjson c "$1" '[.. | objects | select(.id? == $t)] |
			any(.compute == $c)'
}
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -o /dev/null \
	-d '{"metadata":{"annotations":{"gpupool.io/compute":"60"}}}' \
	"$api/api/v1/namespaces/default/pods/train"
if wait_for "the live change" 5 compute_is 60; then
	echo "live change reached the region in $waited_ms ms"
	[ "$waited_ms" -le 3000 ] && ok live-change-reaches-the-region ||
		bad "live change took $waited_ms ms (bound 1000, slack to 3000)"
fi
curl -s "http://127.0.0.1:$metrics_port/metrics" >"$tmp/metrics.txt"
expect metrics-per-slice 0 'gpupool_slice_compute_percent\{namespace="default",pod="train",uid="[^"]+",container="main".*\} 60' \
	-- cat "$tmp/metrics.txt"
expect metrics-per-device 0 'DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-' -- cat "$tmp/metrics.txt"
expect server-metrics-for-prometheus 0 'gpupool_extender_binds_total 2' -- \
	curl -s "http://127.0.0.1:$server_metrics_port/metrics"

# ---- the kubelet restarts; a device is lost ----------------------------------------
waiting_health() { grep -q '"event":"waiting-health"' "$tmp/kubelet.out"; }
wait_for "the kubelet's restart" 20 waiting_health
check reregistered-after-kubelet-restart 'map(select(.event == "reregistered")) | .[0].ms <= 3000' \
	"$tmp/kubelet.out"
"$build/simdev/simctl" lose 1 >/dev/null
unhealthy() { grep -q '"event":"unhealthy"' "$tmp/kubelet.out"; }
if wait_for "the unhealthy list" 10 unhealthy; then
	echo "a lost device reached the kubelet as unhealthy in $waited_ms ms"
	[ "$waited_ms" -le 3000 ] && ok unhealthy-pushed-within-1s ||
		bad "the unhealthy list took $waited_ms ms (bound 1000, slack to 3000)"
fi
exited kubelet-sees-the-lost-device $kubelet
check only-the-lost-device-unhealthy 'map(select(.event == "unhealthy")) | .[0].devices |
	map(select(.health == "Unhealthy") | .id | split("::")[0]) | unique | length == 1' \
	"$tmp/kubelet.out"

# ---- a sealed placement put back: not applied -----------------------------------
# The placement from before the change, put back with its own (valid)
# seal: the node keeps the newer one and says so; the server, seeing the
# pod still asking for 60, seals that again.
jq -n --arg p "$train_placement" --arg s "$train_seal" \
	'{metadata: {annotations: {"gpupool.io/placement": $p, "gpupool.io/placement-seal": $s}}}' |
	curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -o /dev/null -d @- \
		"$api/api/v1/namespaces/default/pods/train"
wait_for "the replay refused" 5 event_on default train GpupoolChangeRefused "older one" &&
	ok replayed-placement-refused
resealed() {
	curl -s "$api/api/v1/namespaces/default/pods/train" |
		jq -e '.metadata.annotations["gpupool.io/placement"] | fromjson | .compute == 60'
}
wait_for "the server to seal 60 again" 5 resealed && compute_is 60 >/dev/null &&
	ok replay-leaves-the-live-change || bad replay-leaves-the-live-change "$tmp/node.log" "$tmp/server.log"

# ---- placements a pod wrote itself: no device ------------------------------------
# pod_bound NAME UNITS PLACEMENT [SEAL]: a pod that names node-1 itself
# (spec.nodeName, no scheduler) with these annotations.
pod_bound() {
	jq -n --arg name "$1" --arg units "$2" --arg p "$3" --arg s "${4:-}" '{apiVersion: "v1",
		kind: "Pod", metadata: {name: $name, namespace: "default",
		annotations: ({"gpupool.io/placement": $p} + if $s == "" then {} else
		{"gpupool.io/placement-seal": $s} end)}, spec: {nodeName: "node-1",
		containers: [{name: "main", image: "pytorch", resources: {limits:
		{"gpupool.io/gpu": $units}}}]}}' |
		curl -s -H 'Content-Type: application/json' -d @- \
			"$api/api/v1/namespaces/default/pods" >"$tmp/$1.json"
}
# refused NAME UNITS TEXT: the kubelet's Allocate for the pod fails with
# TEXT, and the pod has an Event saying it.
refused() {
	node "$here/kubelet-double.js" --dir "$tmp/plugins" --resource gpupool.io/gpu \
		--allocate "$2" --timeout-ms 8000 >"$tmp/$1.kubelet" 2>"$tmp/$1.kubelet.err"
	status=$?
	if [ $status -ne 1 ] || ! grep -q "Allocate failed.*$3" "$tmp/$1.kubelet.err"; then
		bad "$1-gets-no-device (exit $status)" "$tmp/$1.kubelet.err" "$tmp/node.log"
	elif ! event_on default "$1" GpupoolPlacementRefused "$3" >/dev/null; then
		bad "$1-refusal-has-an-event" "$tmp/node.log"
	else
		ok "$1-gets-no-device"
	fi
}
whole=$(jq -c --arg u "$uuid" '.metadata.annotations["gpupool.io/placement"] | fromjson |
	.devices = [$u] | .whole = true | .compute = 100 | .memoryMiB = 15360' "$tmp/train.bound")
pod_bound copied 2 "$train_placement" "$train_seal"
refused copied 2 "not written by the gpupool server"
pod_bound unsealed 4 "$whole"
refused unsealed 4 "has no seal"
elsewhere=$(printf '%s' "$whole" | jq -c '.node = "node-2"')
# Sealed with the key (as the server would for node-2), for its own UID
# once it has one.
pod_bound elsewhere 5 "$elsewhere"
jq -n --arg s "$(seal_of "$(jq -r .metadata.uid "$tmp/elsewhere.json")" "$elsewhere")" \
	'{metadata: {annotations: {"gpupool.io/placement-seal": $s}}}' |
	curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -o /dev/null -d @- \
		"$api/api/v1/namespaces/default/pods/elsewhere"
refused elsewhere 5 "its placement is for node node-2"
"$gpupool" region ls --dir "$tmp/run" --json >"$tmp/regions.json"
check no-task-for-a-refused-pod '[.. | objects | select(.id? | strings |
	test("copied|unsealed|elsewhere"))] | length == 0' "$tmp/regions.json"

# ---- over quota: Pending, with the reason ----------------------------------------
# A namespace with a small quota: the tenant of the same name, added while
# the extender runs (it has read the tenants before, for the first pod).
expect tenant-with-a-small-quota 0 'token' -- env GPUPOOL_SOCKET="$tmp/server.sock" \
	GPUPOOL_TOKEN_FILE="$tmp/admin.token" "$gpupool" tenant add team-q --mem-guaranteed 1G \
	--compute-guaranteed 50
pod_make team-q greedy 3 4Gi
schedule greedy
check over-quota-fails-with-its-reason '.[0].NodeNames == [] and
	(.[0].FailedNodes["node-1"] | test("namespace team-q is over its gpupool quota"))' \
	"$tmp/greedy.filter"
# kube-scheduler tries again and again: one Event, counted.
schedule greedy
schedule greedy
curl -s "$api/api/v1/namespaces/team-q/events" >"$tmp/events.json"
check over-quota-event-counted '[.[0].items[] | select(.reason == "GpupoolUnschedulable" and
	.involvedObject.name == "greedy")] | length == 1 and .[0].count == 3 and
	(.[0].message | test("over its gpupool quota"))' "$tmp/events.json"
curl -s "$api/api/v1/namespaces/team-q/pods/greedy" >"$tmp/greedy.now"
check over-quota-pod-stays-pending '.[0].spec.nodeName == null' "$tmp/greedy.now"
check refused-pod-not-tried-again-while-nothing-frees \
	'.[0].metadata.annotations["gpupool.io/retry"] == null' "$tmp/greedy.now"

# A live change past the quota: refused by the server, said on the pod;
# its placement (all the node applies) stays.
pod_make team-q small 1 512Mi
schedule small
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -o /dev/null \
	-d '{"metadata":{"annotations":{"gpupool.io/compute":"60"}}}' \
	"$api/api/v1/namespaces/team-q/pods/small"
wait_for "the live change refused" 5 event_on team-q small GpupoolChangeRefused \
	"over its gpupool quota" && ok live-change-over-quota-refused
curl -s "$api/api/v1/namespaces/team-q/pods/small" >"$tmp/small.now"
check live-change-over-quota-keeps-the-placement '.[0].metadata.annotations["gpupool.io/placement"] |
	fromjson | .compute == 10' "$tmp/small.now"

curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/team-q/pods/small"

# ---- the pod goes: its slice is held while its container runs, then freed ----------
# container_state NAME STATE: the pod's container status, as its kubelet
# writes it (the status subresource).
container_state() {
	jq -n --argjson state "$2" '{status: {containerStatuses: [{name: "main", ready: true,
		restartCount: 0, image: "pytorch", imageID: "", state: $state}]}}' |
		curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -d @- -o /dev/null \
			"$api/api/v1/namespaces/default/pods/$1/status"
}
container_state train '{"running": {"startedAt": "2026-12-07T09:00:00Z"}}'
curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/default/pods/train"
task_gone() { ! "$gpupool" region ls --dir "$tmp/run" --json | grep -q "$task"; }
placed_none() { curl -s "$ext/healthz" | jq -e '.podsPlaced == 0'; }
# Deleted, its container still runs its grace period: the slice is its.
sleep 1
curl -s "$api/api/v1/namespaces/default/pods/train" >"$tmp/train.deleting"
check train-is-terminating '.[0].metadata.deletionTimestamp != null' "$tmp/train.deleting"
if task_gone; then bad terminating-pod-keeps-its-slice; else ok terminating-pod-keeps-its-slice; fi
if placed_none >/dev/null; then bad extender-holds-a-terminating-pod
else ok extender-holds-a-terminating-pod; fi
container_state train '{"terminated": {"exitCode": 0, "reason": "Completed",
	"startedAt": "2026-12-07T09:00:00Z", "finishedAt": "2026-12-07T10:00:00Z"}}'
wait_for "the slice freed" 5 task_gone && ok ended-pod-frees-its-slice
wait_for "the extender to let go" 5 placed_none && ok extender-gives-the-placement-back
# A slice freed: the pod the extender refused is tried again at once,
# not after kube-scheduler's 5 minutes in its unschedulable queue.
wait_for "the refused pod tried again" 5 retried team-q greedy &&
	ok refused-pod-tried-again-when-a-slice-frees

stops node-stops-cleanly $node_pid
stops server-stops-cleanly $server
kill $double 2>/dev/null
finish
