#!/bin/sh
# test-kubelet.sh — gpupool with a real kubelet: the control plane of
# test-real.sh (etcd, kube-apiserver, kube-controller-manager, and
# kube-scheduler with deploy/kubernetes/scheduler-config.yaml, from
# $GPUPOOL_KUBE_BIN; control-plane.sh), and a node of its own: containerd
# (Debian's, with runc) on a configuration, folders and socket of the
# test's, the real kubelet on it, and `gpupool node --kubernetes` on
# simdev's two T4s as the kubelet's device plugin, registered on the
# kubelet's fixed /var/lib/kubelet/device-plugins/kubelet.sock. Pods run
# with hostNetwork (the CNI configuration is loopback only) from a local
# OCI image made here from Debian's busybox-static (no registry).
#
#   the kubelet advertises the plugin's units; a pod of gpupool-scheduler
#   is bound through the extender, the kubelet calls Allocate, and its
#   container starts with what Allocate gave: CUDA_VISIBLE_DEVICES naming
#   the card of its sealed placement, its task and secret, the interposer
#   in LD_PRELOAD and mounted, the card's limits table read-only and its
#   own task file writable (the container prints them to its log, read
#   from /var/log/pods: `kubectl logs` refuses a loopback node IP); the
#   kubelet's pod-resources API names units of that card for that pod; a
#   Terminating pod whose container lingers after SIGTERM keeps its slice:
#   a pod that needs it stays Pending until that container is gone, then
#   is bound to that card and started.
#
# Root only (a container runtime). Everything it starts ends with it, and
# what the kubelet leaves is undone: the containers, the shims, the mounts
# under the test's folder, the cgroups under a root of the test's, the
# sysctls the kubelet sets (put back), what it made in
# /var/lib/kubelet/device-plugins and the pods' logs in /var/log/pods.
# That device-plugin folder is fixed, so the test runs alone (meson:
# is_parallel false), and skips where a kubelet already serves it.
#
# usage: test-kubelet.sh BUILD_DIR   (from the repository root; skips, exit
# 77, without GPUPOOL_KUBE_BIN and a kubelet in it, root, containerd, runc)
set -u
if [ $# -ne 1 ]; then
	echo "usage: test-kubelet.sh BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kbin=${GPUPOOL_KUBE_BIN:-}
plugins=/var/lib/kubelet/device-plugins

# skip WHY: this machine cannot run the test.
skip() {
	echo "SKIP test-kubelet.sh: $*"
	exit 77
}
[ -n "$kbin" ] || skip "GPUPOOL_KUBE_BIN is not set (a folder with kubelet, kube-apiserver," \
	"kube-scheduler, kube-controller-manager and kubectl: docs/kubernetes.md," \
	"\"Tested against a real control plane\")"
if [ ! -f "$kbin/kubelet" ] || [ ! -x "$kbin/kubelet" ]; then
	skip "GPUPOOL_KUBE_BIN=$kbin has no kubelet"
fi
[ "$(id -u)" = 0 ] || skip "the kubelet and containerd need root"
for t in containerd containerd-shim-runc-v2 ctr runc; do
	command -v "$t" >/dev/null 2>&1 ||
		skip "no $t (Debian's containerd and runc: scripts/install-deps.sh installs them)"
done
# A static busybox, the image's only program (a dynamic one would need its libc).
if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
	skip "no static /bin/busybox (Debian's busybox-static: scripts/install-deps.sh installs it)"
fi
# The kubelet empties the fixed device-plugin folder as it starts: never
# under a kubelet that serves it now.
if [ -S "$plugins/kubelet.sock" ] && python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$plugins/kubelet.sock" 2>/dev/null; then
	skip "a kubelet serves $plugins/kubelet.sock already"
fi
for b in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
	if [ ! -f "$kbin/$b" ] || [ ! -x "$kbin/$b" ]; then
		echo "FAIL GPUPOOL_KUBE_BIN=$kbin has no executable $b"
		exit 1
	fi
done
for t in etcd openssl yq jq curl python3 node; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "FAIL test-kubelet.sh needs $t (scripts/install-deps.sh installs it)"
		exit 1
	fi
done
if [ ! -d "$root/tests/k8s/node_modules/@grpc/grpc-js" ]; then
	echo "FAIL test-kubelet.sh needs tests/k8s's npm peers (scripts/install-deps.sh installs them)"
	exit 1
fi
. "$here/../../lib.sh"
# Stopped by a signal (meson's timeout), the test still cleans up: exit
# runs lib.sh's EXIT trap.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

deploy=$root/deploy/kubernetes
logs=$tmp/logs pki=$tmp/pki
ctd=$tmp/containerd kroot=$tmp/kubelet
node=gpupool-kubelet-node
# the pods' namespace, of this run alone (their logs in /var/log/pods are named by it)
ns=kubelet-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
# the kubelet's cgroup root, of this run alone
cgroot=$(basename "$tmp")
mkdir -p "$logs" "$pki" "$ctd/net.d" "$ctd/cni-bin" "$kroot" "$tmp/node/run" "$tmp/gate"
etcd_data=$(mktemp -d -p /dev/shm gpupool-etcd.XXXXXX 2>/dev/null) || etcd_data=$tmp/etcd
daemons='' kubelet_pid='' sysctls_saved=
# What the host had before the kubelet made its fixed folders.
made_here=
for d in /var/lib/kubelet "$plugins" /var/log/pods /var/log/containers /run/containerd \
	/run/containerd/s; do
	[ -e "$d" ] || made_here="$made_here $d"
done
. "$here/control-plane.sh"

# ---- cleaning up: whatever happened, nothing of the test is left -------------------
ctr_() { ctr --address "$ctd/containerd.sock" --namespace k8s.io "$@"; }

# pid_stop PID: SIGTERM, then SIGKILL after 10 s.
pid_stop() {
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$1" 2>/dev/null
}

# tasks_stop: every container containerd still runs killed and deleted,
# with its container (the kubelet stopped first, so it starts none again).
tasks_stop() {
	[ -S "$ctd/containerd.sock" ] || return 0
	for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete --force "$t" >/dev/null 2>&1; done
	for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$c" >/dev/null 2>&1; done
}

# ours_kill: what containerd left running: its shims (by the address of
# this test's containerd on their command line) and every process in the
# kubelet's cgroups of this test.
ours_kill() {
	for p in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "containerd-shim.* -address $ctd/" &&
			kill -9 "${p#/proc/}" 2>/dev/null
	done
	for f in /sys/fs/cgroup/*/"$cgroot" /sys/fs/cgroup/"$cgroot"; do
		[ -d "$f" ] || continue
		find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do
			kill -9 "$pid" 2>/dev/null
		done
	done
}

# mounts_undo: every mount under the test's folder (containers' root file
# systems, sandboxes' /dev/shm, the kubelet's volumes), the deepest first.
mounts_undo() {
	awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
}

# cgroups_remove: the kubelet's cgroup root of this test, with all below it.
cgroups_remove() {
	for f in /sys/fs/cgroup/*/"$cgroot" /sys/fs/cgroup/"$cgroot"; do
		[ -d "$f" ] && find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
	done
}

# The sysctls the kubelet sets at its start (KernelTunableModify), put back.
sysctls="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
	kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
sysctls_save() {
	for s in $sysctls; do
		sysctls_saved="$sysctls_saved $s=$(cat "/proc/sys/$s")"
	done
}
sysctls_restore() {
	for kv in $sysctls_saved; do
		[ "$(cat "/proc/sys/${kv%%=*}")" = "${kv#*=}" ] || echo "${kv#*=}" >"/proc/sys/${kv%%=*}"
	done
}

# host_paths_remove: what the kubelet and containerd made in their fixed
# folders: the device-plugin folder's sockets and checkpoint, the logs of
# this test's pods; the folders themselves where they were not there
# before and are empty now (the deepest first), /run/containerd/s (the
# shims' sockets) among them.
host_paths_remove() {
	rm -f "$plugins/kubelet.sock" "$plugins/gpupool.sock" "$plugins/kubelet_internal_checkpoint"
	rm -rf /var/log/pods/"${ns}"_* /var/log/containers/*_"${ns}"_*
	# shellcheck disable=SC2086 # the list's words
	for d in $(printf '%s\n' $made_here | sort -r); do rmdir "$d" 2>/dev/null; done
}

cleanup_hook() {
	[ -n "$kubelet_pid" ] && pid_stop "$kubelet_pid"
	tasks_stop
	daemons_stop
	ours_kill
	mounts_undo
	cgroups_remove
	sysctls_restore
	host_paths_remove
	if [ "$status" -ne 0 ] || [ "$fail" -ne 0 ]; then logs_show; fi
	case $etcd_data in /dev/shm/gpupool-etcd.*) rm -rf "$etcd_data" ;; esac
}

# shellcheck disable=SC2046
set -- $(kube_ports 9)
etcd_port=$1 etcd_peer=$2 api_port=$3 kcm_port=$4 sched_port=$5 ext_port=$6 metrics_port=$7
kubelet_port=$8 kubelet_healthz=$9

# ---- the control plane (control-plane.sh), with a static token for the node ------------
cluster_pki
kube_token "$pki" kubelet "system:node:$node" system:nodes
cluster_up serviceaccount,serviceaccount-token,namespace,garbagecollector,root-ca-cert-publisher,podgc
cluster_manifests

# ---- the image: busybox-static and its applets, an OCI archive ------------------------
# image_layer: the one layer ($img/blobs/sha256/$layer) of both images.
image_layer() {
	img=$tmp/image
	mkdir -p "$img/rootfs/bin" "$img/blobs/sha256"
	for d in dev etc proc run sys tmp; do mkdir "$img/rootfs/$d"; done
	cp /bin/busybox "$img/rootfs/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$img/rootfs/bin/$a"
	done
	echo 'root:x:0:0:root:/:/bin/sh' >"$img/rootfs/etc/passwd"
	echo 'root:x:0:' >"$img/rootfs/etc/group"
	tar -C "$img/rootfs" --numeric-owner --owner=0 --group=0 -cf "$img/layer" . &&
		blob "$img/layer" && layer=$blob_digest layer_size=$blob_size
}
# blob FILE: FILE moved into the blobs by its digest; the digest in
# $blob_digest, its size in $blob_size.
blob() {
	blob_size=$(wc -c <"$1") &&
		blob_digest=$(sha256sum "$1" | cut -c1-64) &&
		mv "$1" "$img/blobs/sha256/$blob_digest"
}
# image_manifest NAME CMD_JSON: an image of that layer running CMD: its
# config and manifest in the blobs, its entry of the index in
# $img/entry.DIGEST.
image_manifest() {
	jq -n --arg l "sha256:$layer" --argjson cmd "$2" '{architecture: "amd64", os: "linux",
		config: {Cmd: $cmd, Env: ["PATH=/bin"]}, rootfs: {type: "layers", diff_ids: [$l]}}' \
		>"$img/config" && blob "$img/config" || return 1
	jq -n --arg c "sha256:$blob_digest" --argjson cs "$blob_size" --arg l "sha256:$layer" \
		--argjson ls "$layer_size" '{schemaVersion: 2,
		mediaType: "application/vnd.oci.image.manifest.v1+json",
		config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
		layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l,
			size: $ls}]}' >"$img/manifest" && blob "$img/manifest" || return 1
	jq -n --arg m "sha256:$blob_digest" --argjson ms "$blob_size" --arg name "$1" '{
		mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
		annotations: {"io.containerd.image.name": $name,
			"org.opencontainers.image.ref.name": $name}}' >"$img/entry.$blob_digest"
}
# The test's busybox, and the sandboxes' pause image (a sleep).
image_archive() {
	image_layer &&
		image_manifest gpupool.test/busybox:1 '["/bin/sh"]' &&
		image_manifest gpupool.test/pause:1 '["/bin/sleep", "2147483647"]' &&
		jq -s '{schemaVersion: 2, manifests: .}' "$img"/entry.* >"$img/index.json" &&
		echo '{"imageLayoutVersion": "1.0.0"}' >"$img/oci-layout" &&
		tar -C "$img" -cf "$tmp/images.tar" oci-layout index.json blobs
}
runs oci-image-made-from-busybox-static "$tmp/image.out" -- image_archive

# ---- containerd: the test's own configuration, folders and socket --------------------
# The sandbox image is the local pause; runc keeps its state in the test's
# folder; restrict_oom_score_adj, since a VM may give root no
# CAP_SYS_RESOURCE; a loopback CNI network (pods use the host's), so that
# the runtime reports its network ready; no CNI plugin is ever run.
cat >"$ctd/config.toml" <<EOF
version = 2
root = "$ctd/root"
state = "$ctd/state"
[grpc]
  address = "$ctd/containerd.sock"
[ttrpc]
  address = "$ctd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$ctd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "gpupool.test/pause:1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$ctd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$ctd/cni-bin"
    conf_dir = "$ctd/net.d"
EOF
echo '{"cniVersion": "0.4.0", "name": "gpupool-test-lo", "plugins": [{"type": "loopback"}]}' \
	>"$ctd/net.d/10-lo.conflist"
start containerd containerd --config "$ctd/config.toml"
containerd_pid=$last_pid
wait_for containerd 30 "$containerd_pid" ctr_ version && ok containerd-serves-its-socket
runs images-imported "$tmp/import.out" -- ctr_ images import "$tmp/images.tar"
stop_if_failed

# ---- the kubelet ---------------------------------------------------------------------
# Its cgroups under a root of this test's, in every hierarchy (cgroup v1),
# or with the controllers given below it (v2).
cgroup_root_make() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		mkdir -p "/sys/fs/cgroup/$cgroot" &&
			sed 's/[^ ]*/+&/g' "/sys/fs/cgroup/$cgroot/cgroup.controllers" \
				>"/sys/fs/cgroup/$cgroot/cgroup.subtree_control"
		return
	fi
	for h in /sys/fs/cgroup/*/; do
		[ -f "$h/cgroup.procs" ] || continue
		mkdir -p "$h$cgroot" || return 1
		if [ -f "$h/cpuset.cpus" ]; then
			cat "$h/cpuset.cpus" >"$h$cgroot/cpuset.cpus" &&
				cat "$h/cpuset.mems" >"$h$cgroot/cpuset.mems" || return 1
		fi
	done
}
runs kubelet-cgroup-root-made "$tmp/cgroup.out" -- cgroup_root_make

# Everything in the test's folders but the device-plugin folder (fixed)
# and the pods' logs (/var/log/pods, fixed in this version); on loopback,
# ports picked free; no iptables chains; no image is ever collected.
kubeconfig "$tmp/kubelet.kubeconfig" "$(cat "$pki/kubelet.token")"
cat >"$tmp/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_healthz
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /$cgroot
containerRuntimeEndpoint: unix://$ctd/containerd.sock
failSwapOn: false
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
localStorageCapacityIsolation: false
makeIPTablesUtilChains: false
volumePluginDir: $kroot/volume-plugins
EOF
[ -f /etc/resolv.conf ] || sed -i 's|^resolvConf: .*|resolvConf: ""|' "$tmp/kubelet.yaml"
sysctls_save
start kubelet "$kbin/kubelet" --config="$tmp/kubelet.yaml" --kubeconfig="$tmp/kubelet.kubeconfig" \
	--root-dir="$kroot" --cert-dir="$kroot/pki" --hostname-override="$node" --node-ip=127.0.0.1 \
	--node-labels=gpupool.io/accelerator=true --v=2
kubelet_pid=$last_pid
node_registered() { kapi GET "/api/v1/nodes/$node" >"$tmp/node.json"; }
wait_for "the kubelet to register its node" 60 "$kubelet_pid" node_registered &&
	ok kubelet-registers-its-node
# The node lifecycle controller (not run here) would lift the not-ready
# taint that the TaintNodesByCondition admission plugin adds at create.
echo '{"spec": {"taints": null}}' |
	kapi PATCH "/api/v1/nodes/$node" - application/merge-patch+json >/dev/null
eventually node-ready-and-untainted 60 "$tmp/node.json" '((.spec.taints // []) | length == 0) and
	any(.status.conditions[]; .type == "Ready" and .status == "True")' -- \
	kapi GET "/api/v1/nodes/$node"
stop_if_failed

# ---- gpupool node --kubernetes: the kubelet's device plugin --------------------------
start gpupool-node env GPUPOOL_SIM_DEVICES=t4-16g:2 GPUPOOL_SIM_DIR="$tmp/node/sim" \
	LD_LIBRARY_PATH="$build/simdev" "$build/gpupool" node --kubernetes --node-name "$node" \
	--kubeconfig "$tmp/gpupool-node.kubeconfig" --device-plugin-dir "$plugins" \
	--run-dir "$tmp/node/run" --shim-host-path "$build/libgpushare.so" --metrics-listen off \
	--placement-key "$tmp/placement.key"
node_pid=$last_pid
eventually node-program-publishes-two-t4s 30 "$tmp/node.json" '.metadata.annotations["gpupool.io/devices"] |
	fromjson | .devices | length == 2 and all(.model == "Tesla T4" and .split == 10 and .healthy)' -- \
	kapi GET "/api/v1/nodes/$node"
# The kubelet's device manager lists the plugin's units (ListAndWatch) and
# advertises them: nobody else writes them here.
eventually kubelet-advertises-the-plugins-units 60 "$tmp/node.json" \
	'.status.capacity["gpupool.io/gpu"] == "20" and .status.allocatable["gpupool.io/gpu"] == "20"' -- \
	kapi GET "/api/v1/nodes/$node"
stop_if_failed

# ---- gpupool server --kubernetes and kube-scheduler, as test-real.sh runs them ------------
server_prepare
server_start
wait_for "the extender to list the cluster" 30 "$server" extender_synced 1 2 && ok extender-ready
scheduler_up

# ---- pods ----------------------------------------------------------------------------
ns_make "$ns"
# pod_make NAME UNITS MEMORY SCRIPT: a pod of gpupool-scheduler asking for
# UNITS of gpupool.io/gpu and MEMORY of device memory, its container
# running SCRIPT in the test's busybox, with the test's gate folder
# read-only in /gate; a grace period of 2 minutes.
pod_make() {
	jq -n --arg ns "$ns" --arg name "$1" --arg units "$2" --arg mem "$3" --arg script "$4" \
		--arg gate "$tmp/gate" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: $ns, annotations: {"gpupool.io/gpu-memory": $mem}},
		spec: {schedulerName: "gpupool-scheduler", hostNetwork: true, restartPolicy: "Never",
			terminationGracePeriodSeconds: 120, automountServiceAccountToken: false,
			enableServiceLinks: false,
			volumes: [{name: "gate", hostPath: {path: $gate, type: "Directory"}}],
			containers: [{name: "main", image: "gpupool.test/busybox:1",
				imagePullPolicy: "Never", command: ["/bin/sh", "-c", $script],
				volumeMounts: [{name: "gate", mountPath: "/gate", readOnly: true}],
				resources: {requests: {cpu: "10m", memory: "16Mi"},
					limits: {"gpupool.io/gpu": $units}}}]}}' >"$tmp/$1.pod.json"
	kapi POST "/api/v1/namespaces/$ns/pods" "$tmp/$1.pod.json" >"$tmp/$1.json" 2>"$tmp/$1.err" ||
		bad "pod $ns/$1 not created" "$tmp/$1.err" "$tmp/$1.json"
}
# What a container says of itself, to its log: its environment, the
# files of /run/gpupool (the limits tables, whether it can write them; the
# task files, whether it can write each; whether it can add one), the
# interposer's size; then "ready".
show='env | sort | sed "s/^/env /"
for f in /run/gpupool/*.limits; do
	echo "limits $f $(wc -c <"$f")"
	if (: >>"$f") 2>/dev/null; then echo "limits-writable $f"; else echo "limits-read-only $f"; fi
done
for f in /run/gpupool/*.tasks/*; do
	if (: >>"$f") 2>/dev/null; then echo "task-file-writable $f"; else echo "task-file-read-only $f"; fi
done
for d in /run/gpupool/*.tasks; do
	if (: >"$d/forged") 2>/dev/null; then echo "tasks-folder-writable $d"; else echo "tasks-folder-read-only $d"; fi
done
echo "interposer $(wc -c </usr/local/lib/gpupool/libgpushare.so)"
echo ready'
# Leaves at once when told to (SIGTERM).
brief="trap 'echo leaving; exit 0' TERM
$show
while :; do sleep 1; done"
# Lingers after SIGTERM until the test opens the gate (/gate/open).
lingering="trap 'echo terminating; until [ -e /gate/open ]; do sleep 0.2; done; echo leaving; exit 0' TERM
$show
while :; do sleep 1; done"

# pod_log POD: the pod's container's log as the kubelet keeps it
# (/var/log/pods/NS_POD_UID/main/0.log), without CRI's time and stream
# prefix, into $tmp/POD.log; fails when there is none yet.
pod_log() {
	pod_log_file=/var/log/pods/${ns}_$1_$(jq -r .metadata.uid "$tmp/$1.json")/main/0.log
	[ -f "$pod_log_file" ] && sed 's/^[^ ]* [^ ]* [^ ]* //' "$pod_log_file" >"$tmp/$1.log"
}
# said POD TEXT: the pod's container has said TEXT (a whole line).
said() { pod_log "$1" && grep -qx "$2" "$tmp/$1.log"; }
# started NAME POD: within 60 s the pod runs and its container has said
# all it says ("ready"); its environment then in $tmp/POD.env.json.
started() {
	eventually "$1" 60 "$tmp/$2.json" '.status.phase == "Running" and
		.status.containerStatuses[0].state.running != null' -- \
		kapi GET "/api/v1/namespaces/$ns/pods/$2" &&
		wait_for "pod $2's container to say ready" 30 - said "$2" ready &&
		jq -Rn '[inputs | select(startswith("env ")) | .[4:] |
			capture("^(?<key>[^=]*)=(?<value>.*)$")] | from_entries' "$tmp/$2.log" \
			>"$tmp/$2.env.json"
}
# placed_on POD: the UUID of the one device of the pod's placement.
placed_on() {
	jq -r '.metadata.annotations["gpupool.io/placement"] | fromjson | .devices[0]' "$tmp/$1.json"
}
# pod_resources: the kubelet's pod-resources List, in $tmp/podresources.json.
pod_resources() {
	node "$here/podresources.js" "$kroot/pod-resources/kubelet.sock" >"$tmp/podresources.json"
}
# units_of POD: the units the pod-resources API lists for the pod's container.
units_of() {
	jq -c --arg ns "$ns" --arg pod "$1" '[.pod_resources[] | select(.namespace == $ns and
		.name == $pod) | .containers[] | select(.name == "main") | .devices[] |
		select(.resource_name == "gpupool.io/gpu") | .device_ids[]]' "$tmp/podresources.json"
}

# (1) A pod asking for 2 units and 2 GiB: bound through the extender to
# the node, with a sealed placement on one of its T4s; the kubelet admits
# it and calls the node program's Allocate (which writes the pod's task on
# it), and its container starts with what Allocate gave.
pod_make first 2 2Gi "$brief"
bound first-bound-through-the-extender "$ns" first
check first-placed-on-one-card '.[0].spec.nodeName == "'"$node"'" and
	(.[0].metadata.annotations["gpupool.io/placement"] | fromjson |
	.memoryMiB == 2048 and .compute == 20 and (.devices | length) == 1 and .whole == false) and
	(.[0].metadata.annotations["gpupool.io/placement-seal"] | startswith("v1:"))' "$tmp/first.json"
card_first=$(placed_on first)
eventually allocate-called-by-the-kubelet 60 "$tmp/first.json" \
	'.metadata.annotations["gpupool.io/task"] // "" | length > 0' -- \
	kapi GET "/api/v1/namespaces/$ns/pods/first"
started first-container-runs first
stop_if_failed
task_first=$(jq -r '.metadata.annotations["gpupool.io/task"]' "$tmp/first.json")
check first-env-names-its-card '.[0].CUDA_VISIBLE_DEVICES == "'"$card_first"'" and
	.[0].NVIDIA_VISIBLE_DEVICES == "'"$card_first"'"' "$tmp/first.env.json"
check first-env-has-its-task-and-limits '.[0].GPUPOOL_TASK_ID == "'"$task_first"'" and
	(.[0].GPUPOOL_TASK_SECRET | length == 32) and .[0].GPUPOOL_MEM_LIMIT == "2048M" and
	.[0].GPUPOOL_COMPUTE == "20" and .[0].GPUPOOL_RUN_DIR == "/run/gpupool"' "$tmp/first.env.json"
check first-env-preloads-the-interposer \
	'.[0].LD_PRELOAD == "/usr/local/lib/gpupool/libgpushare.so"' "$tmp/first.env.json"
expect first-interposer-mounted 0 "^interposer $(wc -c <"$build/libgpushare.so")\$" -- \
	cat "$tmp/first.log"
limits=device-$card_first.limits
expect first-limits-table-there 0 "^limits /run/gpupool/$limits $(wc -c <"$tmp/node/run/$limits")\$" -- \
	cat "$tmp/first.log"
expect first-limits-table-read-only 0 "^limits-read-only /run/gpupool/$limits\$" -- \
	cat "$tmp/first.log"
grep -c '^limits /' "$tmp/first.log" >"$tmp/first.limits-count"
check first-sees-no-other-cards-table '.[0] == 1' "$tmp/first.limits-count"
expect first-own-task-file-writable 0 "^task-file-writable /run/gpupool/device-$card_first.tasks/" -- \
	cat "$tmp/first.log"
expect first-cannot-add-a-task-file 0 "^tasks-folder-read-only /run/gpupool/device-$card_first.tasks\$" -- \
	cat "$tmp/first.log"

# (2) The kubelet's pod-resources API names, for that pod, 2 units of the
# card gpupool placed it on (the units' ids are CARD-UUID::N).
runs pod-resources-listed "$tmp/pod-resources.out" -- pod_resources
units_of first >"$tmp/first.units.json"
check pod-resources-name-the-placed-card '.[0] | length == 2 and
	all(.[]; startswith("'"$card_first"'::"))' "$tmp/first.units.json"
stop_if_failed

# (3) A Terminating pod keeps its slice until its container is gone.
# lingering takes 14 GiB, which only the other card has room for; it is
# deleted, and its container lingers after SIGTERM until the gate opens.
# next asks for 14 GiB too (3 units: kube-scheduler's own count of 20 is
# no bar): it waits, refused by the extender, while lingering terminates;
# once the container has left, it is bound to that card and started.
pod_make lingering 3 14Gi "$lingering"
bound lingering-bound "$ns" lingering
card_lingering=$(placed_on lingering)
check lingering-on-the-other-card '"'"$card_lingering"'" != "'"$card_first"'"' "$tmp/lingering.json"
started lingering-container-runs lingering
runs lingering-deleted "$tmp/lingering.deleted" -- kapi DELETE "/api/v1/namespaces/$ns/pods/lingering"
wait_for "lingering's container to get SIGTERM" 60 - said lingering terminating &&
	ok lingering-container-got-sigterm
pod_make next 3 14Gi "$brief"
waits next-refused-while-lingering-terminates "$ns" next GpupoolUnschedulable \
	'no device has 30 percent compute and 14336 MiB free'
pending next-pending-while-lingering-terminates "$ns" next
kapi GET "/api/v1/namespaces/$ns/pods/lingering" >"$tmp/lingering.now"
check lingering-still-terminating-and-running '.[0].metadata.deletionTimestamp != null and
	.[0].status.containerStatuses[0].state.running != null' "$tmp/lingering.now"
said lingering leaving && bad "lingering's container left before the gate opened" "$tmp/lingering.log"
# The gate opens: lingering's container leaves. next must not be bound
# before it has (what it said last is read at every look).
touch "$tmp/gate/open"
left=
next_bound_after_left() {
	said lingering leaving && left=yes
	kapi GET "/api/v1/namespaces/$ns/pods/next" >"$tmp/next.json" || return 1
	jq -e '.spec.nodeName != null' "$tmp/next.json" >/dev/null || return 1
	[ -n "$left" ] || echo "bound while lingering's container had not left" >"$tmp/next.early"
}
wait_for "next to be bound" 60 - next_bound_after_left && ok next-bound-once-lingering-left
[ -f "$tmp/next.early" ] && bad next-bound-before-lingering-left "$tmp/next.early"
check next-on-the-card-lingering-had '(.[0].metadata.annotations["gpupool.io/placement"] |
	fromjson | .devices) == ["'"$card_lingering"'"]' "$tmp/next.json"
started next-container-runs next
check next-env-names-that-card '.[0].CUDA_VISIBLE_DEVICES == "'"$card_lingering"'"' \
	"$tmp/next.env.json"
eventually lingering-removed-by-the-kubelet 60 "$tmp/lingering.gone" '.code == 404' -- \
	curl -s --cacert "$pki/ca.crt" -H "Authorization: Bearer $admin_token" \
	"$api/api/v1/namespaces/$ns/pods/lingering"
runs pod-resources-listed-again "$tmp/pod-resources.out" -- pod_resources
units_of next >"$tmp/next.units.json"
check pod-resources-name-next-on-its-card '.[0] | length == 3 and
	all(.[]; startswith("'"$card_lingering"'::"))' "$tmp/next.units.json"

# ---- the end: the pods deleted go through the kubelet; then every program stops -------
for p in first next; do
	kapi DELETE "/api/v1/namespaces/$ns/pods/$p" >/dev/null
done
eventually pods-removed-by-the-kubelet 60 "$tmp/pods.now" '.items | length == 0' -- \
	kapi GET "/api/v1/namespaces/$ns/pods"
eventually extender-gives-the-slices-back 30 "$tmp/healthz" '.podsPlaced == 0' -- \
	curl -sf "$ext/healthz"
tasks_listed() { ctr_ tasks ls -q | jq -Rn '[inputs]'; }
eventually no-container-left 30 "$tmp/tasks.now" '. == []' -- tasks_listed
stops node-program-stops-cleanly "$node_pid"
stops server-stops-cleanly "$server"
finish
