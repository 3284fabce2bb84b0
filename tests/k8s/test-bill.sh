#!/bin/sh
# test-bill.sh — on Kubernetes, pods are the server's tasks, metered and
# billed (src/k8s/kube-tasks.c, node-meter.c): the API server double,
# `gpupool server --kubernetes` (its extender called in kube-scheduler's
# order), `gpupool node --kubernetes` on a simulated T4, the grpc-js
# kubelet double for each pod's Allocate, and real processes started as a
# container runtime would, in the pod's cgroup.
#
#   team-a's pod (30 %, 4 GiB) burns for 4 s, then succeeds; a pod of the
#   namespace lab, which is no tenant (the admin's), burns 2 s at 50 %,
#   then is deleted. Both are tasks while they run ("team-a/a1", kind pod,
#   their UID, node and card) and end as their pods did; `gpupool bill`
#   shows, per tenant, allocated GPU-hours = share x the pod's time bound,
#   and used GPU-hours within 5 % of the device time the simulated device
#   gave each burner (its own count). A server restart takes the running
#   pod's task up again, counting its time once. `gpupool task cancel` of
#   a pod's task evicts the pod (an event on it); `task set` asks it of the
#   pod (its annotation), and the task follows once the extender admits it.
#   A pod of two GPU containers (3 and 2 units) is one task of 50 %: both
#   containers' Allocate answers join it.
#
# usage: test-bill.sh BUILD_DIR   (run from the repository root, as root:
# the container's mounts need a mount namespace)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-bill.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP test-bill.sh: the containers' mounts need root (a mount namespace); run make check as root"
	exit 77
fi
. "$here/../lib.sh"
. "$here/doubles-lib.sh"
gpupool=$build/gpupool
post() { curl -s -H 'Content-Type: application/json' -d @- "$api$1"; }

one_t4_node --pod-termination-ms 600000
published() {
	curl -s "$api/api/v1/nodes/node-1" | jq -e --arg m "127.0.0.1:$metrics_port" \
		'.metadata.annotations["gpupool.io/metrics"] == $m and
		 (.metadata.annotations["gpupool.io/devices"] | fromjson | .devices | length == 1)'
}
wait_for "the node's devices and /metrics address" 10 published && ok node-publishes-its-metrics-address

server_start() {
	"$gpupool" server --kubernetes --kube-api "$api" --extender-port "$ext_port" \
		--db "$tmp/db.sqlite" --socket "$tmp/server.sock" --scheduler-name gpupool-scheduler \
		--placement-key "$tmp/placement.key" --sample-ms 300 >>"$tmp/server.log" 2>&1 &
	server=$!
	wait_for "the extender" 10 curl -sf "$ext/healthz"
}
ext_port=$(free_port)
ext=http://127.0.0.1:$ext_port/extender
server_start
expect tenant-team-a 0 token -- "$gpupool" tenant add team-a --mem-guaranteed 16G \
	--compute-guaranteed 100

# pod NAMESPACE NAME UNITS: a pod of the gpupool scheduler with 4 GiB,
# placed (doubles-lib.sh: place_pod).
pod() {
	jq -n --arg ns "$1" --arg name "$2" --arg units "$3" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: $ns, annotations: {"gpupool.io/gpu-memory": "4Gi"}},
		spec: {schedulerName: "gpupool-scheduler", containers: [{name: "main",
		image: "pytorch", resources: {limits: {"gpupool.io/gpu": $units}}}]}}' |
		post "/api/v1/namespaces/$1/pods" >/dev/null
	place_pod "$1" "$2" "$3"
}
cleanup_hook() { cgroups_remove; }
# burn NAME UID SECONDS: gpuload burn in the pod's container; its figures
# in $tmp/NAME.burn, and the device time the simulated device gave out
# meanwhile (the pods run one at a time) in $tmp/NAME.busy, in µs.
burn() {
	before=$("$build/simdev/simctl" busy 0)
	in_cgroup "$2" "$here/run-container.sh" \
		"$tmp/$1.alloc" "$build/simdev" -- "$build/gpuload" burn --duration "$3" --json \
		>"$tmp/$1.burn" 2>"$tmp/$1.burn.err"
	echo $(($("$build/simdev/simctl" busy 0) - before)) >"$tmp/$1.busy"
	# NVML's per-process samples cover the last second: the node has
	# counted all of it a second after the burner ended.
	sleep 1.5
}
running() { task_of "$1" | jq -e 'length == 1 and .[0].state == "running"'; }
ended_as() { task_of "$1" | jq -e --arg s "$2" 'length == 1 and .[0].state == $s'; }

# ---- team-a's pod: a task while it runs ----------------------------------------------
pod team-a a1 3
a1_uid=$uid
wait_for "a1's task" 5 running team-a/a1 && ok pod-is-a-running-task
task_of team-a/a1 >"$tmp/a1.task"
uuid=$(jq -r '.envs.CUDA_VISIBLE_DEVICES' "$tmp/a1.alloc")
check task-has-the-pods-slice-uid-and-card ".[0][0].tenant == \"team-a\" and .[0][0].kind == \"pod\"
	and .[0][0].pod_uid == \"$a1_uid\" and .[0][0].compute_pct == 30 and .[0][0].mem_mib == 4096
	and .[0][0].placement == \"node-1:$uuid\"" "$tmp/a1.task"
expect task-ls-lists-the-pod 0 'team-a/a1' -- "$gpupool" task ls
burn a1 "$a1_uid" 4 &
burner=$!
sleep 1.5
# The server restarts while the pod burns: its task is taken up again.
kill -TERM $server
wait $server
server_start
wait $burner
jq -n '{status: {phase: "Succeeded"}}' | curl -s -X PATCH -o /dev/null \
	-H 'Content-Type: application/merge-patch+json' -d @- \
	"$api/api/v1/namespaces/team-a/pods/a1/status"
wait_for "a1's task to end" 5 ended_as team-a/a1 succeeded && ok pod-that-succeeded-ends-its-task

# ---- a pod of a namespace that is no tenant ---------------------------------------------
pod lab l1 5
l1_uid=$uid
wait_for "l1's task" 5 running lab/l1 && ok pod-of-no-tenant-is-the-admins
burn l1 "$l1_uid" 2
jq -n '{status: {phase: "Failed"}}' | curl -s -X PATCH -o /dev/null \
	-H 'Content-Type: application/merge-patch+json' -d @- \
	"$api/api/v1/namespaces/lab/pods/l1/status"
wait_for "l1's task to end" 5 ended_as lab/l1 failed && ok pod-that-failed-ends-its-task
task_of lab/l1 >"$tmp/l1.task"
check its-tenant-is-the-admin '.[0][0].tenant == "admin"' "$tmp/l1.task"

# ---- the bill ---------------------------------------------------------------------------
sleep 0.5
"$gpupool" bill -o json >"$tmp/bill.json"
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
	"http://gpupool/v1/usage?limit=100000" >"$tmp/usage.json"
# busy POD: the device time the simulated device gave its burner, in
# seconds (its own count of the quanta it gave out).
busy() { jq -n "$(cat "$tmp/$1.busy") / 1000000"; }
for p in a1:team-a:0.3 l1:admin:0.5; do
	pod=${p%%:*} rest=${p#*:}
	tenant=${rest%%:*} share=${rest#*:}
	task_of "$(jq -r '.metadata.namespace + "/" + .metadata.name' "$tmp/$pod.json")" >"$tmp/$pod.task"
	jq -n --slurpfile b "$tmp/bill.json" --slurpfile t "$tmp/$pod.task" --arg tenant "$tenant" \
		--argjson share "$share" --argjson busy "$(busy "$pod")" '
		($b[0].rows | map(select(.tenant == $tenant)) | first) as $row |
		($t[0][0]) as $task |
		{tenant: $tenant, used_h: $row.used_gpu_hours, busy_h: ($busy / 3600),
		 allocated_h: $row.allocated_gpu_hours,
		 expected_allocated_h: ($share * ($task.ended_ms - $task.started_ms) / 3600000)}' \
		>"$tmp/$pod.figures"
	jq -c . "$tmp/$pod.figures"
	check "$pod-allocated-gpu-hours-are-its-share-of-its-time" \
		'.[0] | (.allocated_h - .expected_allocated_h | fabs) <= 0.01 * .expected_allocated_h' \
		"$tmp/$pod.figures"
	check "$pod-used-gpu-hours-within-5-percent-of-the-device-time" \
		'.[0] | .busy_h > 0 and ((.used_h - .busy_h) | fabs) <= 0.05 * .busy_h' "$tmp/$pod.figures"
done
check records-name-the-pods-card "[.[0].usage[] | .device] | unique == [\"$uuid\"]" \
	"$tmp/usage.json"

# ---- a pod of two GPU containers: they share its slice, as one task ---------------------
jq -n '{apiVersion: "v1", kind: "Pod", metadata: {name: "m1", namespace: "team-a",
	annotations: {"gpupool.io/gpu-memory": "2Gi"}}, spec: {schedulerName: "gpupool-scheduler",
	containers: [{name: "main", image: "pytorch", resources: {limits: {"gpupool.io/gpu": "3"}}},
	{name: "sidecar", image: "busybox"},
	{name: "tokenizer", image: "pytorch", resources: {limits: {"gpupool.io/gpu": "2"}}}]}}' |
	post /api/v1/namespaces/team-a/pods >/dev/null
place_pod team-a m1 3           # its first GPU container: 3 units
node "$here/kubelet-double.js" --dir "$tmp/plugins" --resource gpupool.io/gpu --allocate 2 \
	--scenario allocate 2>/dev/null | jq -c 'select(.event == "allocate")' >"$tmp/m1-2.alloc"
check both-gpu-containers-join-one-task '(.[0].envs.GPUPOOL_TASK_ID | length > 0) and
	.[0].envs.GPUPOOL_TASK_ID == .[1].envs.GPUPOOL_TASK_ID and
	.[0].envs.GPUPOOL_TASK_SECRET == .[1].envs.GPUPOOL_TASK_SECRET and
	.[0].envs.GPUPOOL_COMPUTE == "50" and .[1].envs.GPUPOOL_COMPUTE == "50"' \
	"$tmp/m1.alloc" "$tmp/m1-2.alloc"
m1_task=$(jq -r .envs.GPUPOOL_TASK_ID "$tmp/m1.alloc")
"$gpupool" region ls --dir "$tmp/run" --json >"$tmp/m1.region"
check the-pods-one-task-holds-its-whole-slice "[.. | objects | select(.id? == \"$m1_task\")] |
	length == 1 and .[0].compute == 50" "$tmp/m1.region"
curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/team-a/pods/m1?gracePeriodSeconds=0"
ended_as_soon() { task_of team-a/m1 | jq -e '.[0].state != "running"'; }
wait_for "m1's task to end" 5 ended_as_soon

# ---- a pod's task cancelled: its pod evicted ------------------------------------------
pod team-a c1 2
wait_for "c1's task" 5 running team-a/c1
c1_id=$(task_of team-a/c1 | jq '.[0].id')
runs task-set-on-a-pod-is-accepted "$tmp/c1.set" -- "$gpupool" task set "$c1_id" --compute 50
annotated() {
	curl -s "$api/api/v1/namespaces/team-a/pods/c1" |
		jq -e '.metadata.annotations["gpupool.io/compute"] == "50"'
}
wait_for "c1's annotation" 5 annotated && ok task-set-asks-it-on-the-pods-annotation
share_of_c1_is_50() { task_of team-a/c1 | jq -e '.[0].compute_pct == 50'; }
wait_for "c1's task at 50 %" 5 share_of_c1_is_50 && ok the-extender-admits-it-and-the-task-follows
expect task-cancel-on-a-pod-accepted 0 'cancelling' -- "$gpupool" task cancel "$c1_id"
evicted() {
	curl -s "$api/_double/requests" | jq -e '[.[] | select(.method == "POST" and
		(.path | endswith("/namespaces/team-a/pods/c1/eviction")))] | length == 1'
}
wait_for "c1's eviction" 5 evicted && ok cancel-evicts-the-pod
expect cancelled-pod-told 0 true -- event_on team-a c1 GpupoolCancelled "cancelled by admin"
wait_for "c1's task to end" 5 ended_as team-a/c1 cancelled && ok evicted-pods-task-ends-cancelled

stops server-stops-cleanly $server
kill $node_pid 2>/dev/null
kill $double 2>/dev/null
finish
