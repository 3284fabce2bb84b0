#!/bin/sh
# test-real.sh — gpupool against a real Kubernetes control plane: etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler (the binaries
# in $GPUPOOL_KUBE_BIN), all on loopback, started and stopped here. The
# project's manifests are applied to it (a server-side dry run first), and
# the programs run as the manifests' service accounts: `gpupool node
# --kubernetes` on simdev's devices for each GPU Node (made through the
# API as a kubelet would make it), `gpupool server --kubernetes` with the
# arguments of deploy/kubernetes/server.yaml, and kube-scheduler with the
# KubeSchedulerConfiguration of deploy/kubernetes/scheduler-config.yaml
# (only its extender's port, its kubeconfig and the leader election's
# timings changed). No kubelet runs, so no pod starts (test-kubelet.sh
# runs one): what is checked is where the real kube-scheduler binds pods
# through the extender, the placement annotation, and the Events that
# say why a pod waits.
#
#   a pod of gpupool-scheduler is bound to a node with devices, with its
#   placement; a model no node has, and a namespace over its gpupool
#   quota, leave pods Pending with the reason in Events; a deleted pod's
#   slice goes to the pod that waited for it; after the server restarts,
#   the placements are rebuilt and new pods are placed around them;
#   reclaim evicts a borrower for a lender; a service scales a Deployment
#   through its scale subresource, and `task set` of its pod is sealed; a
#   pod group across both nodes is bound all together once complete, and
#   one that cannot all fit waits, saying why.
#
# usage: test-real.sh BUILD_DIR   (from the repository root; skips, exit
# 77, when GPUPOOL_KUBE_BIN is not set)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-real.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kbin=${GPUPOOL_KUBE_BIN:-}
if [ -z "$kbin" ]; then
	echo "SKIP test-real.sh: GPUPOOL_KUBE_BIN is not set (a folder with kube-apiserver," \
		"kube-scheduler, kube-controller-manager and kubectl: docs/kubernetes.md," \
		"\"Tested against a real control plane\")"
	exit 77
fi
for b in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
	if [ ! -f "$kbin/$b" ] || [ ! -x "$kbin/$b" ]; then
		echo "FAIL GPUPOOL_KUBE_BIN=$kbin has no executable $b"
		exit 1
	fi
done
for t in etcd openssl yq jq curl python3; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "FAIL test-real.sh needs $t (scripts/install-deps.sh installs it)"
		exit 1
	fi
done
. "$here/../../lib.sh"
# Stopped by a signal (meson's timeout), the test still cleans up: exit
# runs lib.sh's EXIT trap.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

deploy=$root/deploy/kubernetes
logs=$tmp/logs pki=$tmp/pki
mkdir -p "$logs" "$pki"
# etcd syncs every write: on tmpfs where there is one, as nothing here
# needs to survive the test.
etcd_data=$(mktemp -d -p /dev/shm gpupool-etcd.XXXXXX 2>/dev/null) || etcd_data=$tmp/etcd
daemons=
# The daemons and the rest shared with test-kubelet.sh: start, wait_for,
# kapi, cluster_up, server_start, scheduler_up, bound, waits, ...
. "$here/control-plane.sh"

# The daemons end with the test; a failed run shows the end of every log.
cleanup_hook() {
	daemons_stop
	if [ "$status" -ne 0 ] || [ "$fail" -ne 0 ]; then logs_show; fi
	case $etcd_data in /dev/shm/gpupool-etcd.*) rm -rf "$etcd_data" ;; esac
}

# shellcheck disable=SC2046
set -- $(kube_ports 7)
etcd_port=$1 etcd_peer=$2 api_port=$3 kcm_port=$4 sched_port=$5 ext_port=$6 metrics_port=$7

# ---- the control plane: etcd, kube-apiserver, kube-controller-manager; the manifests ----
cluster_pki
cluster_up serviceaccount,serviceaccount-token,namespace,garbagecollector,root-ca-cert-publisher,resourcequota,podgc,deployment,replicaset
cluster_manifests

# ---- the Nodes, as a kubelet registers them ------------------------------------------
# node_make NAME [LABEL=VALUE]: the Node, then its status (capacity,
# allocatable, Ready), then without the not-ready taint that the
# TaintNodesByCondition admission plugin adds at create (the node
# lifecycle controller, not run here, would lift it).
node_make() {
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	jq -n --arg n "$1" --arg lab "${2:-}" '{apiVersion: "v1", kind: "Node",
		metadata: {name: $n, labels: ({"kubernetes.io/hostname": $n, "kubernetes.io/os": "linux",
			"kubernetes.io/arch": "amd64"} + if $lab == "" then {} else
			($lab | split("=") | {(.[0]): .[1]}) end)}}' >"$tmp/$1.node.json"
	jq -n --arg n "$1" --arg now "$now" '{status: {
		capacity: {cpu: "16", memory: "64Gi", pods: "110"},
		allocatable: {cpu: "16", memory: "64Gi", pods: "110"},
		conditions: [{type: "Ready", status: "True", reason: "KubeletReady",
			message: "kubelet is posting ready status", lastHeartbeatTime: $now,
			lastTransitionTime: $now}],
		addresses: [{type: "InternalIP", address: "127.0.0.1"}, {type: "Hostname", address: $n}],
		nodeInfo: {kubeletVersion: "v1.28.4", architecture: "amd64", operatingSystem: "linux"}}}' \
		>"$tmp/$1.status.json"
	kapi POST /api/v1/nodes "$tmp/$1.node.json" >/dev/null &&
		kapi PATCH "/api/v1/nodes/$1/status" "$tmp/$1.status.json" \
			application/strategic-merge-patch+json >/dev/null &&
		kapi GET "/api/v1/nodes/$1" >"$tmp/$1.json" || return 1
	if jq -e '(.spec.taints // []) | length > 0' "$tmp/$1.json" >/dev/null; then
		echo '{"spec": {"taints": null}}' |
			kapi PATCH "/api/v1/nodes/$1" - application/merge-patch+json >"$tmp/$1.json"
	fi
}
# Two nodes with devices (two T4s; one L40S), one without.
for n in node-t4 node-l40s node-cpu; do
	label=gpupool.io/accelerator=true
	[ "$n" = node-cpu ] && label=
	runs "node-$n-registered" "$tmp/$n.out" -- node_make "$n" "$label"
	check "node-$n-ready-and-untainted" '.[0] | ((.spec.taints // []) | length == 0) and
		any(.status.conditions[]; .type == "Ready" and .status == "True") and
		.status.allocatable.pods == "110"' "$tmp/$n.json"
done

# ---- gpupool node --kubernetes, one per GPU node, as gpupool-node -----------------------
# node_program NAME DEVICES: on simdev's DEVICES, its own folders.
node_program() {
	mkdir -p "$tmp/$1/plugins" "$tmp/$1/run"
	start "gpupool-node-$1" env GPUPOOL_SIM_DEVICES="$2" GPUPOOL_SIM_DIR="$tmp/$1/sim" \
		LD_LIBRARY_PATH="$build/simdev" "$build/gpupool" node --kubernetes --node-name "$1" \
		--kubeconfig "$tmp/gpupool-node.kubeconfig" --device-plugin-dir "$tmp/$1/plugins" \
		--run-dir "$tmp/$1/run" --shim-host-path "$build/libgpushare.so" --metrics-listen off \
		--placement-key "$tmp/placement.key"
}
node_program node-t4 t4-16g:2
node_t4_pid=$last_pid
node_program node-l40s l40s-48g:1
node_l40s_pid=$last_pid
devices_on() { # NAME COUNT: the Node has COUNT devices in gpupool.io/devices
	kapi GET "/api/v1/nodes/$1" >"$tmp/$1.json" &&
		jq -e --argjson c "$2" '.metadata.annotations["gpupool.io/devices"] | fromjson |
			.devices | length == $c' "$tmp/$1.json"
}
wait_for "node-t4's devices" 30 "$node_t4_pid" devices_on node-t4 2
wait_for "node-l40s's devices" 30 "$node_l40s_pid" devices_on node-l40s 1
check node-t4-publishes-two-t4s '.[0].metadata.annotations["gpupool.io/devices"] | fromjson |
	.devices | length == 2 and all(.model == "Tesla T4" and .memoryMiB == 15360 and .split == 10
	and .healthy and .compatible)' "$tmp/node-t4.json"
check node-l40s-publishes-one-l40s '.[0].metadata.annotations["gpupool.io/devices"] | fromjson |
	.devices | length == 1 and all(.model == "NVIDIA L40S" and .split == 10 and .healthy)' \
	"$tmp/node-l40s.json"
kapi GET /api/v1/nodes/node-cpu >"$tmp/node-cpu.json"
check node-cpu-has-no-devices '.[0].metadata.annotations["gpupool.io/devices"] == null' \
	"$tmp/node-cpu.json"
# What the kubelet would advertise once the device plugin lists its units:
# gpupool.io/gpu, the healthy devices' units.
for n in node-t4 node-l40s; do
	jq '{status: {capacity: {"gpupool.io/gpu": $u}, allocatable: {"gpupool.io/gpu": $u}}}' \
		--arg u "$(jq -r '.metadata.annotations["gpupool.io/devices"] | fromjson |
			[.devices[] | select(.healthy and .compatible) | .split] | add' "$tmp/$n.json")" \
		-n >"$tmp/$n.units.json"
	runs "node-$n-advertises-its-units" "$tmp/$n.out" -- kapi PATCH "/api/v1/nodes/$n/status" \
		"$tmp/$n.units.json" application/merge-patch+json
done
stop_if_failed

# ---- gpupool server --kubernetes, as gpupool-server, with server.yaml's arguments -------
server_prepare
server_start
wait_for "the extender to list the cluster" 30 "$server" extender_synced 2 3 && ok extender-ready

# ---- kube-scheduler, with scheduler-config.yaml ------------------------------------------
scheduler_up

# ---- pods --------------------------------------------------------------------------
wait_for "the service account default/default" 30 - \
	kapi GET /api/v1/namespaces/default/serviceaccounts/default
# pod_make NAMESPACE NAME UNITS MEMORY [MODEL [ANNOTATIONS]]: a pod of
# gpupool-scheduler asking for UNITS of gpupool.io/gpu and MEMORY of
# device memory (of a MODEL; "": any), with more ANNOTATIONS (a JSON
# object); deleted at once when deleted (no kubelet would confirm it).
pod_make() {
	jq -n --arg ns "$1" --arg name "$2" --arg units "$3" --arg mem "$4" --arg model "${5:-}" \
		--argjson more "${6:-{\}}" '{
		apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns,
		annotations: ({"gpupool.io/gpu-memory": $mem} + if $model == "" then {} else
			{"gpupool.io/gpu-model": $model} end + $more)},
		spec: {schedulerName: "gpupool-scheduler", terminationGracePeriodSeconds: 0,
			automountServiceAccountToken: false, restartPolicy: "Never",
			containers: [{name: "main", image: "registry.invalid/none:1",
				resources: {requests: {cpu: "100m", memory: "64Mi"},
					limits: {"gpupool.io/gpu": $units}}}]}}' >"$tmp/$2.pod.json"
	kapi POST "/api/v1/namespaces/$1/pods" "$tmp/$2.pod.json" >"$tmp/$2.json" 2>"$tmp/$2.err" ||
		bad "pod $1/$2 not created" "$tmp/$2.err" "$tmp/$2.json"
}
# placed_well NAME POD: its placement annotation names the node it is
# bound to and devices that node published.
placed_well() {
	kapi GET "/api/v1/nodes/$(jq -r .spec.nodeName "$tmp/$2.json")" >"$tmp/$2.node.json"
	check "$1" '(.[0].metadata.annotations["gpupool.io/placement"] | fromjson) as $p |
		(.[1].metadata.annotations["gpupool.io/devices"] | fromjson | [.devices[].uuid]) as $d |
		$p.node == .[0].spec.nodeName and ($p.devices | length > 0) and
		all($p.devices[]; . as $u | $d | index($u) != null)' "$tmp/$2.json" "$tmp/$2.node.json"
}

# (a) A pod asking for 2 units and 2 GiB goes to a node with devices (not
# node-cpu, which kube-scheduler itself rules out: no gpupool.io/gpu).
pod_make default first 2 2Gi
bound first-bound default first
check first-on-a-gpu-node '.[0].spec.nodeName == "node-t4" or .[0].spec.nodeName == "node-l40s"' \
	"$tmp/first.json"
check first-has-its-placement '.[0].metadata.annotations["gpupool.io/placement"] | fromjson |
	.memoryMiB == 2048 and .compute == 20 and (.devices | length) == 1 and .whole == false' \
	"$tmp/first.json"
placed_well first-placement-names-its-node-and-devices first
# Sealed (src/k8s/seal.h): HMAC-SHA256 with the Secret's key over the pod's
# UID and the placement's text, through the real API server's Binding.
printf 'gpupool placement seal 1\n%s\n%s\n' "$(jq -r .metadata.uid "$tmp/first.json")" \
	"$(jq -r '.metadata.annotations["gpupool.io/placement"]' "$tmp/first.json")" |
	openssl dgst -sha256 -hmac "$(cat "$tmp/placement.key")" -r | cut -c1-64 >"$tmp/first.seal"
check first-placement-sealed "(.[0].metadata.annotations[\"gpupool.io/placement-seal\"]) ==
	\"v1:$(cat "$tmp/first.seal")\"" "$tmp/first.json"
waits first-scheduled-event default first Scheduled "Successfully assigned default/first"
expect extender-counts-the-bind 0 '"binds": *1[,}]' -- curl -s "$ext/healthz"
# The cluster in the CLI: the nodes with gpupool devices, the pod counted.
runs node-ls-lists-the-cluster "$tmp/node-ls.json" -- env GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$build/gpupool" node ls -o json
check node-ls-has-the-gpu-nodes '.[0].engine == "kubernetes" and
	([.[0].nodes[].hostname] == ["node-l40s", "node-t4"]) and
	(.[0].nodes[] | select(.hostname == "node-t4") | .devices == 2 and .devices_usable == 2 and
	 .memory_total_mib == 30720) and
	([.[0].nodes[].tasks_running] | add == 1)' "$tmp/node-ls.json"
# Nothing below can pass if this pod was not placed.
stop_if_failed

# (c) The model annotation: a model one node has goes there; a model no
# node has waits, with the reason.
pod_make default on-l40s 1 1Gi L40S
bound l40s-pod-bound default on-l40s
check l40s-pod-on-the-l40s-node '.[0].spec.nodeName == "node-l40s"' "$tmp/on-l40s.json"
pod_make default on-h100 1 1Gi H100
waits h100-pod-failed-scheduling default on-h100 FailedScheduling \
	'no device of a model in gpupool.io/gpu-model="H100"'
waits h100-pod-extender-event default on-h100 GpupoolUnschedulable \
	'no device of a model in gpupool.io/gpu-model="H100"'
pending h100-pod-stays-pending default on-h100

# (b) A namespace that is a gpupool tenant with a small quota: within it a
# pod is bound, over it a pod waits with the reason.
ns_make team-q
expect tenant-with-a-small-quota 0 'token' -- env GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$build/gpupool" tenant add team-q --mem-guaranteed 1G --compute-guaranteed 100
pod_make team-q modest 1 512Mi
bound within-quota-bound team-q modest
pod_make team-q greedy 3 4Gi
waits over-quota-failed-scheduling team-q greedy FailedScheduling \
	'namespace team-q is over its gpupool quota'
waits over-quota-extender-event team-q greedy GpupoolUnschedulable \
	'namespace team-q is over its gpupool quota: it would use 4608 MiB'
pending over-quota-stays-pending team-q greedy

# (d) A deleted pod's slice goes to the pod that waited for it: two pods
# of 40 GiB on the L40S (46068 MiB, 1 GiB already taken) take turns.
pod_make default big-1 1 40Gi L40S
bound big-1-bound default big-1
check big-1-on-the-l40s-node '.[0].spec.nodeName == "node-l40s"' "$tmp/big-1.json"
pod_make default big-2 1 40Gi L40S
waits big-2-waits-for-device-memory default big-2 GpupoolUnschedulable \
	'no device has 10 percent compute and 40960 MiB free'
# kube-scheduler takes the reason as a format string: it must reach its
# event whole (a '%' came out as "%!c(MISSING)").
waits big-2-reason-whole-in-kube-schedulers-event default big-2 FailedScheduling \
	'gpupool: no device has 10 percent compute and 40960 MiB free'
pending big-2-stays-pending default big-2
runs big-1-deleted "$tmp/big-1.deleted" -- kapi DELETE /api/v1/namespaces/default/pods/big-1
bound big-2-bound-after-the-delete default big-2
check big-2-on-the-freed-device "(.[0].metadata.annotations[\"gpupool.io/placement\"] | fromjson |
	.devices) == $(jq -c '.metadata.annotations["gpupool.io/placement"] | fromjson | .devices' \
	"$tmp/big-1.json")" "$tmp/big-2.json"

# (e) The server restarts: it rebuilds the placements from the pods'
# annotations, and places new pods around them.
curl -sf "$ext/healthz" >"$tmp/healthz.before"
stops server-stops-cleanly "$server"
# A live change asked while the server is away is admitted when it is back.
echo '{"metadata": {"annotations": {"gpupool.io/compute": "40"}}}' |
	kapi PATCH /api/v1/namespaces/default/pods/first - application/merge-patch+json >/dev/null
server_start
wait_for "the extender after its restart" 30 "$server" extender_synced 2 3
eventually live-change-asked-while-away-admitted 30 "$tmp/first.json" \
	'.metadata.annotations["gpupool.io/placement"] | fromjson | .compute == 40' -- \
	kapi GET /api/v1/namespaces/default/pods/first
echo '{"metadata": {"annotations": {"gpupool.io/compute": "20"}}}' |
	kapi PATCH /api/v1/namespaces/default/pods/first - application/merge-patch+json >/dev/null
eventually live-change-back-admitted 30 "$tmp/first.json" \
	'.metadata.annotations["gpupool.io/placement"] | fromjson | .compute == 20' -- \
	kapi GET /api/v1/namespaces/default/pods/first
pod_make default after-big 1 8Gi L40S
waits after-restart-big-pod-waits default after-big GpupoolUnschedulable \
	'no device has 10 percent compute and 8192 MiB free'
pending after-restart-big-pod-stays-pending default after-big
# (the extender builds its cluster at the first call after it started)
curl -sf -o "$tmp/healthz.after" "$ext/healthz"
check placements-rebuilt-after-restart '.[0].podsPlaced == 4 and .[1].podsPlaced == 4' \
	"$tmp/healthz.before" "$tmp/healthz.after"
pod_make default after-small 1 2Gi L40S
bound after-restart-small-pod-bound default after-small
check after-restart-small-pod-on-the-l40s '.[0].spec.nodeName == "node-l40s"' \
	"$tmp/after-small.json"

# (f) Reclaim: namespace borrow (guarantee 10 percent, may borrow 200)
# fills the two T4s past its guarantee; namespace lend (guarantee 100)
# asks for half a T4: the newest borrowed pod is evicted through the real
# Eviction API (as the server's account, by its RBAC), and lend's pod is
# bound once it is gone. (Grace 0: no kubelet here would confirm a
# graceful end; test-reclaim.sh has the grace period.)
for ns in lend borrow; do ns_make "$ns"; done
expect lender-tenant 0 token -- env GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$build/gpupool" tenant add lend --mem-guaranteed 16G --compute-guaranteed 100
expect borrower-tenant 0 token -- env GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$build/gpupool" tenant add borrow --mem-guaranteed 1G --compute-guaranteed 10 \
	--mem-borrowable 32G --compute-borrowable 200
pod_make borrow borrow-1 7 2Gi T4
bound borrow-1-bound borrow borrow-1
pod_make borrow borrow-2 7 2Gi T4
bound borrow-2-bound borrow borrow-2
pod_make lend lend-1 5 2Gi T4
waits borrower-evicted-for-the-lender borrow borrow-2 GpupoolReclaimed "pod lend/lend-1"
bound lender-bound-after-the-eviction lend lend-1
check lender-on-the-t4s '.[0].spec.nodeName == "node-t4"' "$tmp/lend-1.json"
kapi GET /api/v1/namespaces/borrow/pods/borrow-1 >"$tmp/borrow-1.now"
check older-borrower-stays '.[0].metadata.name == "borrow-1" and
	.[0].metadata.deletionTimestamp == null' "$tmp/borrow-1.now"

# (g) A service over a Deployment: the server sets its replicas through
# the real scale subresource (as its account, by its RBAC), the real
# Deployment and ReplicaSet controllers make the pods, kube-scheduler binds
# them through the extender, and each is a task of the service; `gpupool
# task set` of one asks it on the pod, and the extender seals it anew.
ns_make web
runs web-tenant "$tmp/web-tenant.json" -- env GPUPOOL_TOKEN_FILE="$tmp/admin.token" \
	"$build/gpupool" tenant add web --mem-guaranteed 8G --compute-guaranteed 100 -o json
as_web() {
	GPUPOOL_TOKEN=$(jq -r .token "$tmp/web-tenant.json") GPUPOOL_TOKEN_FILE= \
		"$build/gpupool" "$@"
}
jq -n '{apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "web", namespace: "web"},
	spec: {replicas: 1, selector: {matchLabels: {app: "web"}}, template: {
	metadata: {labels: {app: "web"}, annotations: {"gpupool.io/gpu-memory": "1Gi",
		"gpupool.io/gpu-model": "T4"}},
	spec: {schedulerName: "gpupool-scheduler", terminationGracePeriodSeconds: 0,
		automountServiceAccountToken: false,
		containers: [{name: "main", image: "registry.invalid/none:1",
			resources: {requests: {cpu: "100m", memory: "64Mi"},
				limits: {"gpupool.io/gpu": "1"}}}]}}}}' >"$tmp/web.deploy.json"
kapi POST /apis/apps/v1/namespaces/web/deployments "$tmp/web.deploy.json" >/dev/null ||
	bad "Deployment web/web not created"
runs service-over-the-deployment "$tmp/web-service.json" -- as_web service create web \
	--deployment web --mem 1G --compute 10 --replicas 2 --max 3 --no-autoscale -o json
eventually deployment-scaled-to-2-through-scale 30 "$tmp/web.scale" '.spec.replicas == 2' -- \
	kapi GET /apis/apps/v1/namespaces/web/deployments/web/scale
eventually its-pods-bound-and-tasks-of-the-service 60 "$tmp/web-show.json" \
	'[.replica_tasks[] | select(.state == "running")] | length == 2' -- \
	as_web service show web -o json
kapi GET "/api/v1/namespaces/web/pods?labelSelector=app%3Dweb" >"$tmp/web-pods.json"
check web-pods-on-the-t4s '[.[0].items[] | select(.spec.nodeName == "node-t4")] | length == 2' \
	"$tmp/web-pods.json"
web_task=$(jq '.replica_tasks[0].id' "$tmp/web-show.json")
runs task-set-on-a-pod-asked "$tmp/web-set.out" -- as_web task set "$web_task" --compute 30
web_pod=$(as_web task show "$web_task" -o json | jq -r '.name | split("/")[1]')
eventually task-set-sealed-on-the-pod 30 "$tmp/web-pod.json" \
	'.metadata.annotations["gpupool.io/placement"] | fromjson | .compute == 30' -- \
	kapi GET "/api/v1/namespaces/web/pods/$web_pod"

# (h) A gang across nodes (pod group "pair" of 2, one pod on the L40S,
# one on a T4): the first waits, saying so, until the second exists;
# then both are bound, the first asked to be tried again by the server.
# A group of 2 that cannot all fit (40 GiB each on the one L40S) leaves
# both pending, saying why (that it holds nothing meanwhile is checked by
# the extender's golden case 10-gang-all-or-none).
pair='{"gpupool.io/pod-group": "pair", "gpupool.io/pod-group-size": "2"}'
pod_make default gang-l40s 1 1Gi L40S "$pair"
waits gang-first-waits-for-its-group default gang-l40s GpupoolUnschedulable \
	'pod group pair: 1 of its 2 pods exist'
pending gang-first-not-bound-alone default gang-l40s
pod_make default gang-t4 1 1Gi T4 "$pair"
bound gang-second-bound default gang-t4
bound gang-first-bound-once-its-group-exists default gang-l40s
check gang-across-both-nodes '.[0].spec.nodeName == "node-l40s" and .[1].spec.nodeName == "node-t4"' \
	"$tmp/gang-l40s.json" "$tmp/gang-t4.json"
placed_well gang-first-placement-names-its-node gang-l40s
huge='{"gpupool.io/pod-group": "huge", "gpupool.io/pod-group-size": "2"}'
pod_make default huge-0 1 40Gi L40S "$huge"
pod_make default huge-1 1 40Gi L40S "$huge"
waits gang-too-big-waits-with-why default huge-1 GpupoolUnschedulable \
	'fits nowhere with the others'
pending gang-too-big-first-pending default huge-0
pending gang-too-big-second-pending default huge-1

stops node-t4-program-stops-cleanly "$node_t4_pid"
stops node-l40s-program-stops-cleanly "$node_l40s_pid"
stops server-stops-cleanly-again "$server"
finish
