#!/bin/sh
# test-manifests.sh — deploy/kubernetes against the official Kubernetes
# schemas and the project's rules (tests/k8s/validate-manifests.js):
# the real folder must pass; then broken copies of it, each made in a
# temporary folder with one mistake that a cluster or a user would meet
# (a wrong type, an unknown field, no resources, a "*" verb, a file the
# kustomization does not list, ...), must each fail with a line naming
# the file, the object and what is wrong. A validator that passed them
# would prove nothing.
#
#   test-manifests.sh REPO_ROOT        (meson test --suite k8s: manifests)
#
# The copies are all checked by one run of the validator (it takes several
# folders and reports each on its own), since starting node is the slow
# part on a busy machine; one copy is also checked alone, for the exit
# status of a single folder. Needs node and the test peers in
# tests/k8s/node_modules (kubernetes-models, yaml); skips (77) without
# them, saying how to install them.
. "$(dirname "$0")/../lib.sh"

root=${1:?usage: test-manifests.sh REPO_ROOT}
validator=$root/tests/k8s/validate-manifests.js
modules=$root/tests/k8s/node_modules
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: no node on PATH (apt-get install nodejs)"
	exit 77
fi
if [ ! -d "$modules/kubernetes-models" ] || [ ! -d "$modules/yaml" ]; then
	echo "SKIP: no test peers in $modules (npm ci --prefix tests/k8s)"
	exit 77
fi

validate() { node "$validator" "$@"; }

expect "real manifests pass" 0 "objects in [0-9]+ files valid against the official schemas" -- \
	validate "$root/deploy/kubernetes"
expect "bad usage: no such folder" 2 "no folder .*: give deploy/kubernetes" -- \
	validate "$tmp/nowhere"

# ---- broken copies ----------------------------------------------------------
# new_case NAME PATTERN [ALSO]: a fresh copy of the folder (and of
# .dockerignore, which the validator reads two levels up) in
# $tmp/c/N/deploy/kubernetes, $copy, for the commands that follow to
# break; its check must then fail with a line matching PATTERN (and one
# matching ALSO: every problem is printed, not only the first).
n=0
mkdir "$tmp/c"
: >"$tmp/cases"
new_case() {
	n=$((n + 1))
	mkdir -p "$tmp/c/$n/deploy"
	cp -r "$root/deploy/kubernetes" "$tmp/c/$n/deploy/"
	cp "$root/.dockerignore" "$tmp/c/$n/"
	copy=$tmp/c/$n/deploy/kubernetes
	printf '%s\t%s\t%s\t%s\n' "$n" "$1" "$2" "${3:-}" >>"$tmp/cases"
}

# change FILE SED_EXPR: edits the copy's FILE; a failure when nothing
# changed (the case would test nothing), and the case is dropped.
change() {
	cp "$copy/$1" "$tmp/before"
	sed -i "$2" "$copy/$1"
	if cmp -s "$copy/$1" "$tmp/before"; then
		echo "sed '$2' changed nothing in $1" >"$tmp/why"
		bad "making broken copy $n" "$tmp/why"
		rm -rf "$tmp/c/$n"
	fi
}

new_case "wrong field type" \
	'node\.yaml: DaemonSet/gpupool-node: schema: .*containerPort must be integer'
change node.yaml 's/containerPort: 9400$/containerPort: "9400"/'

new_case "unknown field in a DaemonSet spec" \
	'node\.yaml: DaemonSet/gpupool-node: unknown field /spec/minReadySecond '
change node.yaml 's/^  updateStrategy:$/  minReadySecond: 5\n&/'

new_case "unknown field in a container" \
	'Deployment/gpupool-server: unknown field /spec/template/spec/containers/0/imagePullPolicyy '
change server.yaml '0,/imagePullPolicy: IfNotPresent/s//imagePullPolicyy: Always/'

# The six lines of kube-scheduler's resources block (the only one with a
# 512Mi limit).
new_case "missing resources block" \
	'server\.yaml: Deployment/gpupool-server: container kube-scheduler: no resources block'
change server.yaml '/^          resources:$/{N;N;N;N;N;/512Mi/d}'

new_case "memory limit missing" \
	'node\.yaml: DaemonSet/gpupool-node: container install-shim: resources\.limits\.memory missing'
change node.yaml '/^            limits:$/{N;/memory: 64Mi/d}'

new_case "the node program without the placement key" \
	'node\.yaml: DaemonSet/gpupool-node: container node: --placement-key .*: mount Secret gpupool-placement-key'
change node.yaml '/^            - name: placement-key$/{N;N;d}'

new_case '"*" verb' 'rbac-node\.yaml: ClusterRole/gpupool-node: rules\[1\]: "\*" in verbs'
change rbac-node.yaml 's/verbs: \[get, list, watch, patch\]/verbs: ["*"]/'

new_case '"*" resource' 'rbac-server\.yaml: ClusterRole/gpupool-server: rules\[0\]: "\*" in resources'
change rbac-server.yaml '0,/resources: \[nodes\]/s//resources: ["*"]/'

new_case "a file not in the kustomization" \
	'deploy/kubernetes/extra\.yaml: -: not listed in kustomization\.yaml resources'
cp "$copy/pvc.yaml" "$copy/extra.yaml"

new_case "a listed file missing" \
	'deploy/kubernetes/services\.yaml: -: listed in kustomization\.yaml but missing'
rm "$copy/services.yaml"

new_case "YAML syntax error" 'services\.yaml: document 2: YAML: '
echo '  - [unclosed' >>"$copy/services.yaml"

new_case "no schema for a misspelt kind" \
	'pvc\.yaml: PersistentVolumeClam/gpupool-data: no schema for apiVersion v1 kind PersistentVolumeClam'
change pvc.yaml 's/^kind: PersistentVolumeClaim$/kind: PersistentVolumeClam/'

new_case "extender port is not the server's --extender-port" \
	"urlPrefix port 8787 \(deploy/kubernetes/scheduler-config\.yaml\) is not the server's --extender-port 8788"
change server.yaml '/- --extender-port$/{n;s/"8787"/"8788"/}'

new_case "the API's --tcp on the extender's port" \
	"container server: --tcp 8787 is the extender's port too"
change server.yaml 's/^            - --kubernetes$/&\n            - --tcp=8787/'

new_case "the node program without --kubernetes" \
	'DaemonSet/gpupool-node: container node: `gpupool node` needs --kubernetes here'
change node.yaml '/^            - --kubernetes$/d'

new_case "extender keys checked field by field" \
	'ConfigMap/gpupool-scheduler-config: config\.yaml: extenders\[0\]: nodeCacheCapable is false, want true' \
	'ConfigMap/gpupool-scheduler-config: config\.yaml: extenders\[0\]: unknown field filterverb '
change scheduler-config.yaml 's/nodeCacheCapable: true/nodeCacheCapable: false/'
change scheduler-config.yaml 's/^\( *\)filterVerb: filter$/&\n\1filterverb: filter/'

new_case "extender timeout not a duration" \
	'extenders\[0\]: httpTimeout 30 seconds is not a duration'
change scheduler-config.yaml 's/httpTimeout: 30s/httpTimeout: 30 seconds/'

new_case "leader election on the default scheduler's lease" \
	"leaderElection\.resourceName: a lease of its own" \
	'no Role lets kube-scheduler get and update the Lease kube-scheduler'
change scheduler-config.yaml 's/resourceName: gpupool-scheduler/resourceName: kube-scheduler/'

new_case "scheduler config not mounted" \
	'container kube-scheduler: --config /etc/other/config\.yaml is not key config\.yaml of ConfigMap gpupool-scheduler-config'
change server.yaml 's|--config=/etc/gpupool-scheduler/config.yaml|--config=/etc/other/config.yaml|'

new_case "device-plugin-dir not the mounted folder" \
	"DaemonSet/gpupool-node: container node: --device-plugin-dir /var/lib/kubelet/plugins: mount the host's /var/lib/kubelet/device-plugins there"
change node.yaml '/- --device-plugin-dir$/{n;s|/var/lib/kubelet/device-plugins|/var/lib/kubelet/plugins|}'

new_case "device-plugin folder from the wrong host path" \
	"--device-plugin-dir /var/lib/kubelet/device-plugins: mount the host's /var/lib/kubelet/device-plugins there"
change node.yaml 's|^\( *path: /var/lib/kubelet/\)device-plugins$|\1plugins_registry|'

new_case "image not what the kustomization pins" \
	"container node: image tag latest differs from the kustomization's newTag 0\.1\.0"
change node.yaml '/- name: node$/{n;s/gpupool:0\.1\.0/gpupool:latest/}'

new_case "image the kustomization does not list" \
	'container kube-scheduler: image k8s\.gcr\.io/kube-scheduler is not in kustomization\.yaml images'
change server.yaml 's|registry\.k8s\.io/kube-scheduler:|k8s.gcr.io/kube-scheduler:|'

new_case "kube-system binding without its transformer" \
	"RoleBinding/gpupool-server-auth-reader: metadata\.namespace kube-system: the kustomization's namespace: moves it"
change kustomization.yaml '/^transformers:$/,$d'

new_case "a binding to an account that does not exist" \
	'ClusterRoleBinding/gpupool-node: subject ServiceAccount gpupool-nodes is not in these manifests'
change rbac-node.yaml 's/^    name: gpupool-node$/    name: gpupool-nodes/'

new_case "a Service on a port its pods lack" \
	'Service/gpupool-node-metrics: port metrics: targetPort metric is no port of its pods'
change services.yaml '0,/targetPort: metrics$/s//targetPort: metric/'

new_case "Dockerfile on an unpinned base" \
	'deploy/kubernetes/Dockerfile: FROM debian:latest: base image must be pinned to a Debian 12 tag'
change Dockerfile 's/^FROM debian:12\.12-slim AS build$/FROM debian:latest AS build/'

new_case "Dockerfile without install-deps.sh" \
	'Dockerfile: stage build: the build dependencies come from scripts/install-deps\.sh'
change Dockerfile 's|^RUN scripts/install-deps\.sh$|RUN true|'

new_case "Dockerfile without ENTRYPOINT or user" \
	'Dockerfile: runtime stage: want ENTRYPOINT \["/usr/bin/gpupool"\]' \
	'Dockerfile: runtime stage: no non-root USER'
change Dockerfile '/^ENTRYPOINT/d; /^USER/d'

new_case "Dockerfile missing a runtime library" \
	'Dockerfile: runtime stage: runtime library libgrpc29 is not installed'
change Dockerfile 's/ libgrpc29 / /'

new_case ".dockerignore keeping node_modules" '^\.dockerignore: -: does not leave out node_modules'
change ../../.dockerignore '/node_modules/d'

# ---- one run over every copy ----------------------------------------------
# Its output, split per copy: $tmp/c/N.out (the report), $tmp/c/N.rc.
for d in "$tmp"/c/*/; do
	: >"${d%/}.out"
done
node "$validator" "$tmp"/c/*/deploy/kubernetes >"$tmp/all.out" 2>&1
echo "$?" >"$tmp/all.rc"
awk -v dir="$tmp/c" '
	/^== exit [0-9]+$/ { print $3 >(dir "/" id ".rc"); close(dir "/" id ".rc"); next }
	/^== / { p = substr($0, 4); sub(/\/deploy\/kubernetes$/, "", p); k = split(p, a, "/"); id = a[k]; next }
	{ print >>(dir "/" id ".out") }' "$tmp/all.out"
check "one run over every copy exits 1" '.[0] == 1' "$tmp/all.rc"

# verdict N: prints the copy's report and returns its exit status.
verdict() {
	cat "$tmp/c/$1.out"
	[ -f "$tmp/c/$1.rc" ] || return 99
	return "$(cat "$tmp/c/$1.rc")"
}

tab=$(printf '\t')
while IFS=$tab read -r id name pattern also; do
	[ -d "$tmp/c/$id" ] || continue     # its copy could not be made: already a failure
	expect "$name" 1 "$pattern" -- verdict "$id" </dev/null
	if [ -n "$also" ]; then
		if grep -Eq -- "$also" "$tmp/c/$id.out"; then
			ok "$name: also reported: $also"
		else
			bad "$name: no line matches $also" "$tmp/c/$id.out"
		fi
	fi
done <"$tmp/cases"

# A single folder, as users run it: the same verdict, exit 1.
expect "a broken folder alone exits 1" 1 'containerPort must be integer' -- \
	validate "$tmp/c/1/deploy/kubernetes"

finish
