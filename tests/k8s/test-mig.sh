#!/bin/sh
# test-mig.sh — MIG partitions on Kubernetes: the API server double,
# `gpupool server --kubernetes` (its extender called in kube-scheduler's
# order), `gpupool node --kubernetes` on a simulated A100-80GB in MIG mode
# (simdev's a100-80g-mig), the grpc-js kubelet double, and containers
# started with what Allocate answered.
#
#   The node publishes the card with its partition set (A100-MIG). A pod
#   of 3 units (30 %, 24 GiB) is placed at memory slice 4 ("GPU-…@4", as
#   the server places a 3g.40gb) and at Allocate gets a 3g.40gb made
#   there: its container sees it (CUDA_VISIBLE_DEVICES=MIG-…, the
#   instance's 40448 MiB, the interposer's region of the instance) and
#   the verifier leaves it alone. A 40 GiB pod gets the 4g.40gb at 0. A
#   live change of compute is refused with the reason. A pod whose
#   containers are gone has its instance destroyed; one the driver still
#   holds is destroyed once freed, its units published as held
#   meanwhile. Across a node program restart a running pod keeps its
#   instance and the instance of a pod gone meanwhile is destroyed. A
#   whole card is a 7g.80gb. A card cut by hand before the node program
#   starts is offered as its instances, each a device of slices. A pod of
#   two devices on two cards in MIG mode gets an instance on each.
#
# usage: test-mig.sh BUILD_DIR MIG-PROBE   (run from the repository root,
# as root: the containers' mounts need a mount namespace)
set -u
if [ $# -ne 2 ]; then
	echo "usage: test-mig.sh BUILD_DIR MIG-PROBE" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
probe=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP test-mig.sh: the containers' mounts need root (a mount namespace)"
	exit 77
fi
. "$here/../lib.sh"
. "$here/doubles-lib.sh"
gpupool=$build/gpupool
export GPUPOOL_SIM_DEVICES=a100-80g-mig:1 GPUPOOL_SIM_DIR=$tmp/sim
export LD_LIBRARY_PATH=$build/simdev
cleanup_hook() { cgroups_remove; }

# parts: the MIG instances on the card now, as [[profile id, start], …]
# sorted, into $tmp/parts.json (with their UUIDs).
parts() {
	"$probe" partitions 0 >"$tmp/parts.json" 2>&1
	jq -c 'map([.profile_id, .start]) | sort' "$tmp/parts.json" 2>/dev/null ||
		cat "$tmp/parts.json"
}
# parts_are NAME WANT SECONDS: parts prints WANT within SECONDS.
parts_are() {
	for _ in $(seq $(($3 * 10))); do
		[ "$(parts)" = "$2" ] && { ok "$1"; return 0; }
		sleep 0.1
	done
	bad "$1: $(parts), not $2" "$tmp/parts.json" "$tmp/node.log"
}

# ---- the API server, the node, the extender ---------------------------------------
mkdir -p "$tmp/plugins" "$tmp/run"
head -c 48 /dev/urandom | base64 -w0 >"$tmp/placement.key"
double_start --pod-termination-ms 600000
jq -n '{apiVersion: "v1", kind: "Node", metadata: {name: "node-1"}, status: {allocatable:
	{cpu: "16", memory: "64Gi"}, conditions: [{type: "Ready", status: "True"}]}}' |
	curl -s -H 'Content-Type: application/json' -d @- -o /dev/null "$api/api/v1/nodes"
node_start() {
	"$gpupool" node --kubernetes --node-name node-1 --kube-api "$api" \
		--device-plugin-dir "$tmp/plugins" --run-dir "${run:-$tmp/run}" \
		--shim-host-path "$build/libgpushare.so" --metrics-listen off --health-ms 200 \
		--placement-key "$tmp/placement.key" >>"$tmp/node.log" 2>&1 &
	node_pid=$!
}
node_start
# devices JQ: the Node's published devices (an array) make JQ true.
devices() {
	curl -s "$api/api/v1/nodes/node-1" >"$tmp/node.json" &&
		jq -e ".metadata.annotations[\"gpupool.io/devices\"] | fromjson | .devices | $1" \
			"$tmp/node.json"
}
wait_for "the node's devices" 10 devices 'length == 1'
check node-publishes-the-mig-card-with-its-partition-set '.[0].metadata.annotations["gpupool.io/devices"] |
	fromjson | .devices == [{uuid: .devices[0].uuid, model: "NVIDIA A100-SXM4-80GB",
	memoryMiB: 81920, numa: 0, nvlink: 0, split: 10, healthy: true, compatible: true,
	reason: "", partitionSet: "A100-MIG", partitionHeld: 0}] and
	(.devices[0].uuid | startswith("GPU-"))' "$tmp/node.json"
card=$(jq -r '.metadata.annotations["gpupool.io/devices"] | fromjson | .devices[0].uuid' \
	"$tmp/node.json")

ext_port=$(free_port)
ext=http://127.0.0.1:$ext_port/extender
"$gpupool" server --kubernetes --kube-api "$api" --extender-port "$ext_port" \
	--db "$tmp/db.sqlite" --socket "$tmp/server.sock" --scheduler-name gpupool-scheduler \
	--placement-key "$tmp/placement.key" --sample-ms 500 >"$tmp/server.log" 2>&1 &
server=$!
wait_for "the extender" 10 curl -sf "$ext/healthz"

# pod_make NAME UNITS [MEMORY [MODEL]]: a pod of the gpupool scheduler in
# default.
pod_make() {
	jq -n --arg name "$1" --arg units "$2" --arg mem "${3:-}" --arg model "${4:-}" '{apiVersion:
		"v1", kind: "Pod", metadata: {name: $name, namespace: "default", annotations:
		((if $mem == "" then {} else {"gpupool.io/gpu-memory": $mem} end) +
		 (if $model == "" then {} else {"gpupool.io/gpu-model": $model} end))},
		spec: {schedulerName: "gpupool-scheduler",
		containers: [{name: "main", image: "pytorch", resources: {limits:
		{"gpupool.io/gpu": $units}}}]}}' |
		curl -s -H 'Content-Type: application/json' -d @- -o /dev/null \
			"$api/api/v1/namespaces/default/pods"
}
# placed NAME: the devices of pod NAME's placement annotation, one a line.
placed() {
	curl -s "$api/api/v1/namespaces/default/pods/$1" |
		jq -r '.metadata.annotations["gpupool.io/placement"] | fromjson | .devices[]'
}
# container NAME COMMAND...: COMMAND run as pod NAME's container (its
# Allocate answer in $tmp/NAME.alloc, its cgroup made by place_pod).
container() {
	c_uid=$(jq -r .metadata.uid "$tmp/$1.json")
	c_alloc=$tmp/$1.alloc
	shift
	in_cgroup "$c_uid" "$here/run-container.sh" "$c_alloc" "$build/simdev" -- "$@"
}
# container_state NAME STATE: the pod's container status, as kubelet writes it.
container_state() {
	jq -n --argjson state "$2" '{status: {containerStatuses: [{name: "main", ready: true,
		restartCount: 0, image: "pytorch", imageID: "", state: $state}]}}' |
		curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -d @- -o /dev/null \
			"$api/api/v1/namespaces/default/pods/$1/status"
}
# pod_end NAME: its container ended, and the pod deleted (gone for the
# node once its containers are).
pod_end() {
	container_state "$1" '{"terminated": {"exitCode": 0, "reason": "Completed",
		"startedAt": "2026-12-07T09:00:00Z", "finishedAt": "2026-12-07T10:00:00Z"}}'
	curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/default/pods/$1"
}

# ---- a 3g.40gb at memory slice 4 --------------------------------------------------
pod_make three 3
place_pod default three 3
[ "$(placed three)" = "$card@4" ] && ok "placed at memory slice 4: $card@4" ||
	bad "placed at memory slice 4: $(placed three)" "$tmp/three.bind"
parts_are "a 3g.40gb (profile 9) made at slice 4 at Allocate" '[[9,4]]' 5
mig3=$(jq -r '.[0].uuid' "$tmp/parts.json")
check allocate-names-the-instance "(.[0].envs.CUDA_VISIBLE_DEVICES | startswith(\"MIG-\")) and
	.[0].envs.CUDA_VISIBLE_DEVICES == \"$mig3\" and .[0].envs.NVIDIA_VISIBLE_DEVICES == \"$mig3\"
	and .[0].envs.GPUPOOL_MEM_LIMIT == \"40448M\" and .[0].envs.GPUPOOL_COMPUTE == \"100\"" \
	"$tmp/three.alloc"
check allocate-mounts-the-instance-region "[.[0].mounts[].containerPath] |
	any(. == \"/run/gpupool/device-$mig3.limits\")" "$tmp/three.alloc"
runs "the container runs on its instance" "$tmp/three-mem.json" -- \
	container three sh -c 'echo "{\"visible\": \"$CUDA_VISIBLE_DEVICES\"}";
		exec "$0" alloc --chunk-mib 1024 --json' "$build/gpuload"
check "its memory is the instance's: 39 GiB of 40448 MiB, then out of memory" \
	".[0].visible == \"$mig3\" and .[1].total_mib == 40448 and .[1].allocated_mib == 39936
	and .[1].oom" "$tmp/three-mem.json"
# The verifier leaves a process on the pod's instance alone (no slice to
# break: the hardware holds its size).
runs "the verifier leaves the pod's process on its instance" "$tmp/three-hold.json" -- \
	container three "$build/gpuload" alloc --mib 2048 --hold 2 --json

# ---- a 4g.40gb at 0; a live change refused ------------------------------------
pod_make four 5 40Gi
place_pod default four 5
[ "$(placed four)" = "$card@0" ] && ok "a 40 GiB pod placed at slice 0" ||
	bad "a 40 GiB pod placed at slice 0: $(placed four)" "$tmp/four.bind"
parts_are "a 4g.40gb (profile 5) made at slice 0" '[[5,0],[9,4]]' 5
mig4=$(jq -r '.[] | select(.profile_id == 5) | .uuid' "$tmp/parts.json")
jq -n '{metadata: {annotations: {"gpupool.io/compute": "60"}}}' |
	curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' -d @- -o /dev/null \
		"$api/api/v1/namespaces/default/pods/three"
wait_for "the live change refused" 5 event_on default three GpupoolChangeRefused \
	"whose size is fixed" && ok live-change-on-an-instance-refused
[ "$(placed three)" = "$card@4" ] && curl -s "$api/api/v1/namespaces/default/pods/three" |
	jq -e '.metadata.annotations["gpupool.io/placement"] | fromjson | .compute == 30' >/dev/null &&
	ok "the pod keeps its placement" || bad "the pod keeps its placement"

# A pod that asks for a 1g.10gb fits nowhere: the card is full.
pod_make small 1
jq '{Pod: ., NodeNames: ["node-1"]}' <<EOF | curl -s -d @- "$ext/filter" >"$tmp/small.filter"
$(curl -s "$api/api/v1/namespaces/default/pods/small")
EOF
check "a full card takes no 1g.10gb, and says why" '.[0].NodeNames == [] and
	(.[0].FailedNodes["node-1"] | test("1g.10gb, which has no free start"))' "$tmp/small.filter"
curl -s -X DELETE -o /dev/null "$api/api/v1/namespaces/default/pods/small"

# ---- ends: destroyed, at once or once the driver lets go -------------------------
pod_end three
parts_are "the ended pod's 3g.40gb destroyed" '[[5,0]]' 5
[ -e "$tmp/run/device-$mig3.limits" ] && bad "its region's files removed" ||
	ok "its region's files removed"
# A process of pod four still holds its instance when the pod ends: the
# instance stays, its units held (published), until the process goes.
container four "$build/gpuload" alloc --mib 1024 --hold 30 --json >"$tmp/four-hold.json" 2>&1 &
holder=$!
for _ in $(seq 50); do "$probe" procs "$mig4" 2>/dev/null | jq -e 'length > 0' >/dev/null && break
	sleep 0.1; done
pod_end four
wait_for "the held units published" 5 devices '.[0].partitionHeld == 15' &&
	ok "an instance the driver holds: its units published as held"
parts_are "... and it is kept meanwhile" '[[5,0]]' 1
cg=$(echo "$cgroups" | tr ' ' '\n' | grep "pod$(jq -r .metadata.uid "$tmp/four.json")\$")
for pid in $(cat "$cg/cgroup.procs"); do kill -9 "$pid"; done
wait $holder 2>/dev/null
parts_are "destroyed once its process is gone" '[]' 5
wait_for "the held units given back" 5 devices '.[0].partitionHeld == 0' &&
	ok "the units published free again"

# ---- a node program restart ---------------------------------------------------------
pod_make stays 1
place_pod default stays 1
pod_make dies 1
place_pod default dies 1
stays_at=$(placed stays | sed 's/.*@//')
both=$(printf '%s\n%s\n' "$stays_at" "$(placed dies | sed 's/.*@//')" | sort -n |
	jq -cs 'map([19, .])')
parts_are "two 1g.10gb made" "$both" 5
stops "the node program stops" $node_pid
parts_are "its pods' instances outlive it" "$both" 1
pod_end dies
node_start
parts_are "after the restart: the running pod's instance kept, the gone pod's destroyed" \
	"[[19,$stays_at]]" 10
wait_for "the node again" 10 devices 'length == 1'
pod_end stays
parts_are "the adopted pod's instance destroyed at its end" '[]' 5

# ---- a whole card ---------------------------------------------------------------------
pod_make whole 10
place_pod default whole 10
[ "$(placed whole)" = "$card" ] && ok "a whole card's placement names the card" ||
	bad "a whole card's placement names the card: $(placed whole)"
parts_are "a whole card is a 7g.80gb (profile 0) at 0" '[[0,0]]' 5
check "its container sees the instance" ".[0].envs.CUDA_VISIBLE_DEVICES == \"$(jq -r '.[0].uuid' \
	"$tmp/parts.json")\"" "$tmp/whole.alloc"
pod_end whole
parts_are "destroyed at its end" '[]' 5
stops "the node program stops again" $node_pid

# ---- static use: a card cut by hand before the node program starts ------------------
runs "a 4g.40gb made by hand at 0" "$tmp/h4.json" -- "$probe" create 0 5 0
runs "a 3g.40gb made by hand at 4" "$tmp/h3.json" -- "$probe" create 0 9 4
h3=$(jq -r .uuid "$tmp/h3.json")
node_start
wait_for "the card's instances published" 10 devices 'length == 2'
check "the card cut by hand is its two instances, each a device of slices" \
	"[.[0].metadata.annotations[\"gpupool.io/devices\"] | fromjson | .devices[] |
	[.model, .memoryMiB, .partitionSet, (.uuid | startswith(\"MIG-\"))]] | sort ==
	[[\"NVIDIA A100-SXM4-80GB MIG 3g.40gb\", 40448, null, true],
	 [\"NVIDIA A100-SXM4-80GB MIG 4g.40gb\", 40448, null, true]]" "$tmp/node.json"
pod_make slice 5 16Gi "MIG 3g"
wait_for "the extender to see the instances" 10 sh -c \
	"curl -s '$ext/healthz' | jq -e '.devices == 2'"
place_pod default slice 5
[ "$(placed slice)" = "$h3" ] && ok "a slice placed on the 3g.40gb instance" ||
	bad "a slice placed on the 3g.40gb instance: $(placed slice)" "$tmp/slice.bind"
check "its container sees the instance, held to 16 GiB by the interposer" \
	".[0].envs.CUDA_VISIBLE_DEVICES == \"$h3\" and .[0].envs.GPUPOOL_MEM_LIMIT == \"16384M\"" \
	"$tmp/slice.alloc"
parts_are "the instances made by hand are left as they are" '[[5,0],[9,4]]' 1
pod_end slice
stops "the node program stops" $node_pid

# ---- a pod of two devices on two cards in MIG mode ----------------------------------
# A node of two simulated A100s in MIG mode (a fresh simulation and run
# folder): gpupool.io/gpu-count 2 with 3 units each gets a 3g.40gb on each
# card, both in its containers' CUDA_VISIBLE_DEVICES, both destroyed at its end.
export GPUPOOL_SIM_DEVICES=a100-80g-mig:2 GPUPOOL_SIM_DIR=$tmp/sim2
run=$tmp/run2
mkdir -p "$run"
node_start
wait_for "the two cards published" 10 devices 'length == 2 and all(.partitionSet == "A100-MIG")'
wait_for "the extender to see them" 10 sh -c "curl -s '$ext/healthz' | jq -e '.devices == 2'"
jq -n '{apiVersion: "v1", kind: "Pod", metadata: {name: "pair", namespace: "default",
	annotations: {"gpupool.io/gpu-count": "2"}}, spec: {schedulerName: "gpupool-scheduler",
	containers: [{name: "main", image: "pytorch", resources: {limits: {"gpupool.io/gpu": "6"}}}]}}' |
	curl -s -H 'Content-Type: application/json' -d @- -o /dev/null \
		"$api/api/v1/namespaces/default/pods"
place_pod default pair 6
[ "$(placed pair | grep -c '@4$')" -eq 2 ] && ok "a pod of two devices placed at slice 4 of each card" ||
	bad "a pod of two devices placed at slice 4 of each card: $(placed pair)" "$tmp/pair.bind"
both_parts() {
	for card in 0 1; do "$probe" partitions $card; done | jq -cs 'map(map([.profile_id, .start]))'
}
eventually "a 3g.40gb made on each card" 5 "$tmp/pair-parts.json" '. == [[[9,4]],[[9,4]]]' -- \
	both_parts
pair_visible=$(for card in 0 1; do "$probe" partitions $card | jq -r '.[0].uuid'; done |
	paste -sd, -)
check "its containers see both instances" ".[0].envs.CUDA_VISIBLE_DEVICES == \"$pair_visible\"" \
	"$tmp/pair.alloc"
pod_end pair
eventually "both destroyed at its end" 5 "$tmp/pair-parts.json" '. == [[],[]]' -- both_parts

stops "the node program stops" $node_pid
stops "the server stops" $server
kill $double 2>/dev/null
finish
