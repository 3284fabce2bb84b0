#!/bin/sh
# test-service.sh — on Kubernetes, a gpupool service scales a Deployment
# (server/service.h, src/k8s/kube-services.c): the API server double (its
# Deployment controller makes and deletes the pods), `gpupool server
# --kubernetes` (its extender called in kube-scheduler's order), `gpupool
# node --kubernetes` on a simulated T4 metering each pod's device time,
# the grpc-js kubelet double for each pod's Allocate, and gpuload burning
# in a pod's cgroup as its container would.
#
#   team-a's Deployment web has one pod of 20 % (2 units). The service
#   over it (20 % up to 40 %, 1 to 2 replicas, out above 60 % for 1 s, in
#   below 20 % for 2 s) sees its pod use all of its share: it grows the
#   pod's share to 40 % (the pod's gpupool.io/compute annotation, admitted
#   by the extender: the task follows), then, at the ceiling, sets the
#   Deployment's replicas to 2 through the scale subresource; the new pod,
#   placed, is a replica of the service and brought to its share. With the
#   burner gone, the shares shrink back to 20 %, then the replicas to 1 (the
#   newest pod deleted, its task ended). Each step is a service.scale audit
#   row. A service without a Deployment, a Deployment named twice and a
#   bad Deployment name are refused, saying why. Before the service, the
#   web console (headless Chromium, when it is installed) lists the pod
#   with its slice and changes its share live: asked on the pod, admitted
#   by the extender, the share shown follows.
#
# usage: test-service.sh BUILD_DIR   (run from the repository root, as
# root: the container's mounts need a mount namespace)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-service.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP test-service.sh: the containers' mounts need root (a mount namespace); run make check as root"
	exit 77
fi
. "$here/../lib.sh"
. "$here/doubles-lib.sh"
gpupool=$build/gpupool
post() { curl -s -H 'Content-Type: application/json' -d @- "$api$1"; }
cleanup_hook() { cgroups_remove; }

one_t4_node
ext_port=$(free_port) console_port=$(free_port)
ext=http://127.0.0.1:$ext_port/extender
"$gpupool" server --kubernetes --kube-api "$api" --extender-port "$ext_port" \
	--db "$tmp/db.sqlite" --socket "$tmp/server.sock" --scheduler-name gpupool-scheduler \
	--placement-key "$tmp/placement.key" --sample-ms 300 --tcp "$console_port" \
	--ui-dir "$here/../../ui" >"$tmp/server.log" 2>&1 &
server=$!
wait_for "the extender" 10 curl -sf "$ext/healthz"
runs tenant-team-a "$tmp/team-a.json" -- "$gpupool" tenant add team-a --mem-guaranteed 16G \
	--compute-guaranteed 100 -o json
team_a=$(jq -r .token "$tmp/team-a.json")
as_team_a() { GPUPOOL_TOKEN=$team_a GPUPOOL_TOKEN_FILE= "$gpupool" "$@"; }

# ---- the Deployment and its first pod --------------------------------------------------
jq -n '{apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "web"},
	spec: {replicas: 1, selector: {matchLabels: {app: "web"}}, template: {
	metadata: {labels: {app: "web"}, annotations: {"gpupool.io/gpu-memory": "2Gi"}},
	spec: {schedulerName: "gpupool-scheduler", containers: [{name: "main", image: "serve",
	resources: {limits: {"gpupool.io/gpu": "2"}}}]}}}}' |
	post /apis/apps/v1/namespaces/team-a/deployments >/dev/null
# The Deployment's pods (their names), live ones only.
pods_of_web() {
	curl -s "$api/api/v1/namespaces/team-a/pods?labelSelector=app%3Dweb" |
		jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'
}
# A pod of web not yet on a node: placed as kube-scheduler and the kubelet would.
place_pending() {
	pending=$(curl -s "$api/api/v1/namespaces/team-a/pods?labelSelector=app%3Dweb" |
		jq -r '[.items[] | select(.spec.nodeName == null)][0].metadata.name // empty')
	[ -n "$pending" ] && place_pod team-a "$pending" 2
}
wait_for "web's first pod" 10 place_pending
web1=$pending web1_uid=$uid
running() { task_of "team-a/$1" | jq -e 'length == 1 and .[0].state == "running"'; }
annotation_of() {
	curl -s "$api/api/v1/namespaces/team-a/pods/$1" |
		jq -e --arg p "$2" '.metadata.annotations["gpupool.io/compute"] == $p'
}
wait_for "web's pod as a task" 10 running "$web1" && ok deployment-pod-is-a-task

# ---- the pod in the console: listed, and changed live (tests/console/pods.mjs) -----------
console=$here/../console
if [ -x /usr/bin/chromium ] && [ -d "$console/node_modules/puppeteer-core" ]; then
	mkdir -p "$tmp/shots"
	jq -n --arg url "http://127.0.0.1:$console_port" --arg admin "$(cat "$GPUPOOL_TOKEN_FILE")" \
		--argjson task "$(task_of "team-a/$web1" | jq '.[0].id')" --arg pod "team-a/$web1" \
		--arg uid "$web1_uid" --arg tmp "$tmp" '{url: $url, admin: $admin, task: $task,
		podName: $pod, podUid: $uid, chromium: "/usr/bin/chromium", shots: ($tmp + "/shots"),
		downloads: $tmp, counts: ($tmp + "/counts")}' >"$tmp/console.json"
	node "$console/pods.mjs" "$tmp/console.json" >"$tmp/console.out" 2>&1
	cat "$tmp/console.out"
	read -r browser_pass browser_fail <"$tmp/counts" 2>/dev/null || browser_fail=1 browser_pass=0
	pass=$((pass + browser_pass)) fail=$((fail + browser_fail))
	annotation_of "$web1" 30 >/dev/null && ok the-consoles-change-is-on-the-pods-annotation ||
		bad the-consoles-change-is-on-the-pods-annotation
else
	echo "(the console part skipped: it needs /usr/bin/chromium and tests/console/node_modules;" \
		"scripts/install-deps.sh installs them)"
fi

# ---- what is refused ---------------------------------------------------------------------
expect service-with-a-command-refused-on-kubernetes 1 'give "deployment" instead' -- \
	as_team_a service create other --mem 2G --compute 20 -- ./serve
expect service-of-no-deployment-name-refused 1 'no Kubernetes object name' -- \
	as_team_a service create other --deployment Web_1 --mem 2G --compute 20

# ---- the service: grow, then out ----------------------------------------------------------
runs service-over-the-deployment-created "$tmp/create.json" -- as_team_a service create web \
	--deployment web --mem 2G --compute 20 --share-max 40 --step 20 --min 1 --max 2 \
	--out 60 --in 20 --margin 10 --out-window 1 --in-window 2 --cooldown 1 -o json
check its-spec-names-the-deployment '.[0] | .replicas == 1 and .share_pct == 20 and
	.spec.deployment == "web" and .spec.task.command == ""' "$tmp/create.json"
expect a-deployment-scaled-once 1 'scaled by another of your services' -- \
	as_team_a service create web2 --deployment web --mem 2G --compute 20
replica_of_web() {
	id=$(task_of "team-a/$1" | jq '.[0].id')
	as_team_a service show web -o json |
		jq -e --argjson id "$id" '[.replica_tasks[] | select(.id == $id)] | length == 1'
}
wait_for "the pod as the service's replica" 10 replica_of_web "$web1" &&
	ok the-deployments-pod-is-the-services-replica

alloc=$tmp/$web1.alloc
in_cgroup "$web1_uid" "$here/run-container.sh" "$alloc" "$build/simdev" -- \
	"$build/gpuload" burn --duration 120 --json >"$tmp/burn.json" 2>"$tmp/burn.err" &
burner=$!
share_of() { task_of "team-a/$1" | jq -e --argjson p "$2" '.[0].compute_pct == $p'; }
wait_for "the pod's share grown to 40 %" 30 share_of "$web1" 40 &&
	ok busy-service-grows-its-pods-share-first
annotation_of "$web1" 40 >/dev/null && ok the-share-was-asked-on-the-pods-annotation ||
	bad the-share-was-asked-on-the-pods-annotation
scaled_to() {
	curl -s "$api/apis/apps/v1/namespaces/team-a/deployments/web/scale" |
		jq -e --argjson n "$1" '.spec.replicas == $n'
}
wait_for "the Deployment scaled to 2" 30 scaled_to 2 && ok then-its-replicas-through-scale
wait_for "web's second pod" 10 place_pending
web2=$pending
wait_for "the second pod as a task" 10 running "$web2"
wait_for "the second pod brought to the service's 40 %" 15 share_of "$web2" 40 &&
	ok a-new-pod-is-brought-to-the-services-share

# ---- in: shrink, then fewer replicas ------------------------------------------------------
in_cgroup_kill() {
	for c in $cgroups; do
		case $c in *"pod$1") for pid in $(cat "$c/cgroup.procs"); do kill -9 "$pid"; done ;; esac
	done
}
in_cgroup_kill "$web1_uid"
wait $burner 2>/dev/null
wait_for "the shares shrunk to 20 %" 30 share_of "$web1" 20 && ok idle-service-shrinks-shares-first
wait_for "the Deployment scaled back to 1" 30 scaled_to 1 && ok then-removes-a-replica
one_pod() { [ "$(pods_of_web | wc -l)" -eq 1 ]; }
wait_for "one pod left" 10 one_pod && ok the-deployment-keeps-one-pod
ended() { task_of "team-a/$1" | jq -e '.[0].state != "running"'; }
wait_for "the removed pod's task to end" 10 ended "$web2" && ok the-removed-pods-task-ends

# ---- the audit ----------------------------------------------------------------------------
api_get "/v1/audit?limit=500" >"$tmp/audit.json"
check steps-audited-grow-out-shrink-in '[.[0].audit[] | select(.action == "service.scale" and
	.object == "service web") | .detail | split(":")[0]] as $s |
	($s | index("grow")) < ($s | index("out")) and ($s | index("out")) < ($s | index("shrink"))
	and ($s | index("shrink")) < ($s | index("in"))' "$tmp/audit.json"
runs service-removed "$tmp/rm.out" -- as_team_a service rm web
scaled_to 1 >/dev/null && ok removing-the-service-leaves-the-deployment ||
	bad removing-the-service-leaves-the-deployment

stops server-stops-cleanly $server
kill $node_pid 2>/dev/null
kill $double 2>/dev/null
finish
