#!/bin/sh
# test-reclaim.sh — reclaim on Kubernetes (src/k8s/extender-reclaim.c):
# `gpupool server --kubernetes` (its extender, called in kube-scheduler's
# order) against the API server double, on one node with one T4.
#
#   team-b (guarantee 10 %, may borrow 100 %) runs b1 and b2 (50 % each)
#   on borrowed capacity; team-a (guarantee 100 %) asks for 50 %: its pod
#   fits nowhere, so the newest borrowed pod, b2, is evicted through the
#   Eviction API with its own grace period (7 s) and an event, b1 stays;
#   while b2 ends, a filter evicts no more; once b2 is gone, a1 is bound,
#   and b2's task (pods are the server's tasks) ends preempted, audited.
#   A pod of team-b past its guarantee evicts nothing. Model quotas
#   count: team-c, within its overall guarantee but past its T4 quota's,
#   borrows on node-2's T4, and team-a takes its newest pod back there.
#
# usage: test-reclaim.sh BUILD_DIR   (run from the repository root)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-reclaim.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/doubles-lib.sh"
gpupool=$build/gpupool

# The double keeps an evicted pod Terminating for 3 s, as a kubelet
# stopping its container would.
double_start --pod-termination-ms 3000
post() { curl -s -H 'Content-Type: application/json' -d @- "$api$1"; }

# node_make NAME N: a Node with one Tesla T4, as its node program publishes it.
node_make() {
	jq -n --arg name "$1" --arg uuid "GPU-$20000000-0000-0000-0000-000000000000" '{apiVersion:
	"v1", kind: "Node", metadata: {name: $name, annotations: {"gpupool.io/devices": ({version:
	1, driver: "550", cuda: 12040, devices: [{uuid: $uuid, model: "Tesla T4", memoryMiB: 15360,
	numa: 0, nvlink: 0, split: 10, healthy: true, compatible: true, reason: ""}]} | tojson)}},
	status: {allocatable: {cpu: "16", memory: "64Gi", pods: "110", "gpupool.io/gpu": "10"},
	conditions: [{type: "Ready", status: "True"}]}}' | post /api/v1/nodes >/dev/null
}
node_make node-1 1

head -c 48 /dev/urandom | base64 -w0 >"$tmp/placement.key"
port=$(free_port)
ext=http://127.0.0.1:$port/extender
export GPUPOOL_SOCKET=$tmp/server.sock GPUPOOL_TOKEN_FILE=$tmp/admin.token
"$gpupool" server --kubernetes --kube-api "$api" --extender-port "$port" --db "$tmp/db.sqlite" \
	--socket "$tmp/server.sock" --scheduler-name gpupool-scheduler \
	--placement-key "$tmp/placement.key" --sample-ms 300 >"$tmp/server.log" 2>&1 &
server=$!
wait_for "the extender" 10 curl -sf "$ext/healthz"
expect lender-tenant 0 token -- "$gpupool" tenant add team-a --mem-guaranteed 16G \
	--compute-guaranteed 100
expect borrower-tenant 0 token -- "$gpupool" tenant add team-b --mem-guaranteed 1G \
	--compute-guaranteed 10 --mem-borrowable 16G --compute-borrowable 100

# pod NAMESPACE NAME UNITS: a pod of the gpupool scheduler with 4 GiB and a
# grace period of 7 s; then filter and bind, as kube-scheduler calls them
# (filter answers one node, bound without scoring; the answers in
# $tmp/NAME.*).
pod() {
	jq -n --arg ns "$1" --arg name "$2" --arg units "$3" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: $ns, annotations: {"gpupool.io/gpu-memory": "4Gi"}},
		spec: {schedulerName: "gpupool-scheduler", terminationGracePeriodSeconds: 7,
		containers: [{name: "main", image: "pytorch", resources: {limits:
		{"gpupool.io/gpu": $units}}}]}}' | post "/api/v1/namespaces/$1/pods" >"$tmp/$2.json"
	schedule "$2"
}
schedule() {       # onto $node (node-1 unless set)
	jq --arg n "${node:-node-1}" '{Pod: ., NodeNames: [$n]}' "$tmp/$1.json" >"$tmp/$1.args"
	curl -s -d @"$tmp/$1.args" "$ext/filter" >"$tmp/$1.filter"
	jq -e '.NodeNames | length == 1' "$tmp/$1.filter" >/dev/null || return 0
	jq --arg n "${node:-node-1}" '{PodName: .metadata.name, PodNamespace: .metadata.namespace,
		PodUID: .metadata.uid, Node: $n}' "$tmp/$1.json" | curl -s -d @- "$ext/bind" >"$tmp/$1.bind"
}
bound() {
	curl -s "$api/api/v1/namespaces/$1/pods/$2" | jq -e --arg n "${node:-node-1}" '.spec.nodeName == $n'
}
evictions() {
	curl -s "$api/_double/requests" | jq '[.[] | select(.method == "POST" and
		(.path | endswith("/eviction")))]' >"$tmp/evictions.json"
}

pod team-b b1 5
wait_for "b1 bound" 5 bound team-b b1 && ok borrower-runs-b1
sleep 0.1       # b2 is the newer
pod team-b b2 5
wait_for "b2 bound" 5 bound team-b b2 && ok borrower-runs-b2
# Their containers run, as their kubelet says (the status subresource): an
# evicted pod holds its slice until its container has ended.
for p in b1 b2; do
	jq -n '{status: {containerStatuses: [{name: "main", ready: true, restartCount: 0,
		image: "pytorch", imageID: "", state: {running: {startedAt: "2026-12-07T09:00:00Z"}}}]}}' |
		curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -d @- -o /dev/null \
			"$api/api/v1/namespaces/team-b/pods/$p/status"
done

pod team-a a1 5
check lender-waits-at-first '.[0].NodeNames == []' "$tmp/a1.filter"
evictions
check the-newest-borrower-evicted '.[0] | length == 1 and (.[0].path |
	endswith("/namespaces/team-b/pods/b2/eviction"))' "$tmp/evictions.json"
curl -s "$api/api/v1/namespaces/team-b/pods/b2" >"$tmp/b2.now"
check evicted-with-its-own-grace '.[0].metadata.deletionTimestamp != null and
	.[0].metadata.deletionGracePeriodSeconds == 7' "$tmp/b2.now"
expect victim-told 0 true -- event_on team-b b2 GpupoolReclaimed "pod team-a/a1"
expect lender-told 0 true -- event_on team-a a1 GpupoolReclaiming "1 pod(s)"
curl -s "$api/api/v1/namespaces/team-b/pods/b1" >"$tmp/b1.now"
check the-older-borrower-stays '.[0].metadata.deletionTimestamp == null' "$tmp/b1.now"

schedule a1     # kube-scheduler tries again while b2 ends: no more evictions
check lender-waits-while-b2-ends '.[0].NodeNames == []' "$tmp/a1.filter"
evictions
check no-more-evictions-while-b2-ends '.[0] | length == 1' "$tmp/evictions.json"
gone() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$api/api/v1/namespaces/team-b/pods/b2")" = 404 ]; }
wait_for "b2 gone" 10 gone
schedule a1
wait_for "a1 bound" 5 bound team-a a1 && ok lender-bound-once-b2-ended
# b2's task ended preempted, for a1, and the audit log says so.
preempted() {
	api_get /v1/tasks | jq -e '[.tasks[] | select(.name == "team-b/b2")] | length == 1 and
		.[0].state == "preempted" and (.[0].reason | contains("for pod team-a/a1"))'
}
wait_for "b2's task to end preempted" 5 preempted && ok reclaimed-pods-task-ends-preempted
b2_task=$(api_get /v1/tasks | jq '.tasks[] | select(.name == "team-b/b2") | .id')
api_get /v1/audit >"$tmp/audit.json"
check reclaim-audited "[.[0].audit[] | select(.action == \"task.preempt\" and
	.object == \"task $b2_task\" and .who == \"server\")] | length == 1" "$tmp/audit.json"

# A borrower past its guarantee takes nothing back.
pod team-b b3 5
check borrower-waits '.[0].NodeNames == []' "$tmp/b3.filter"
evictions
check borrower-evicts-nothing '.[0] | length == 1' "$tmp/evictions.json"

# Model quotas count: team-c is well within its overall guarantee, but its
# T4 quota guarantees 10 % only, so its pods on node-2's T4 borrow there;
# team-a, within its guarantee, takes the newest of them back.
node_make node-2 2
node=node-2
expect model-quota-tenant 0 token -- "$gpupool" tenant add team-c --mem-guaranteed 64G \
	--compute-guaranteed 400
expect its-t4-quota 0 'T4' -- "$gpupool" tenant quota team-c T4 --mem-guaranteed 1G \
	--compute-guaranteed 10 --mem-borrowable 16G --compute-borrowable 100
pod team-c c1 5
wait_for "c1 bound" 5 bound team-c c1
sleep 0.1       # c2 is the newer
pod team-c c2 5
wait_for "c2 bound" 5 bound team-c c2 && ok t4-borrower-runs-c1-and-c2
pod team-a a2 5
check lender-waits-for-the-t4 '.[0].NodeNames == []' "$tmp/a2.filter"
evictions
check the-newest-t4-borrower-evicted '[.[0][] | select(.path |
	endswith("/namespaces/team-c/pods/c2/eviction"))] | length == 1' "$tmp/evictions.json"
c2_gone() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$api/api/v1/namespaces/team-c/pods/c2")" = 404 ]; }
wait_for "c2 gone" 10 c2_gone
schedule a2
wait_for "a2 bound" 5 bound team-a a2 && ok lender-bound-on-the-t4-once-c2-ended

stops server-stops-cleanly $server
kill $double 2>/dev/null
finish
