# control-plane.sh — a Kubernetes control plane on loopback, from the
# binaries in a folder ($GPUPOOL_KUBE_BIN): what tests/k8s/real/test-real.sh,
# test-kubelet.sh and bench/bench-k8s-real.sh start, written once. Sourced, never run
# (POSIX sh). It makes the files the daemons need, and runs each daemon in
# the foreground (exec): the caller starts it in the background, keeps its
# pid, and stops it.
#
#   kube_pki DIR LOG
#       a CA (ca.crt), the API server's certificate for 127.0.0.1, the
#       front proxy's CA and client certificate, the service accounts'
#       signing key pair (sa.key, sa.pub), and tokens.csv with one static
#       token, DIR/admin.token, of user admin in group system:masters;
#       openssl's output in LOG; fails when openssl does
#   kube_kubeconfig FILE SERVER CA TOKEN
#       a kubeconfig for SERVER (its CA file) with a bearer token
#   kube_token PKI NAME USER GROUP
#       one more static token, PKI/NAME.token, of USER in GROUP (a
#       kubelet's system:node:N in system:nodes), added to tokens.csv
#       before kube-apiserver starts
#   kube_ports N
#       N free loopback ports, held together while the kernel picks them,
#       so that no two are the same (on one line)
#   kube_etcd DATA PORT PEER_PORT
#       etcd with its data in DATA, clients on 127.0.0.1:PORT
#   kube_apiserver KBIN PKI ETCD_PORT PORT [FLAG...]
#       kube-apiserver on 127.0.0.1:PORT (TLS), etcd's on ETCD_PORT: the
#       static tokens, --authorization-mode=Node,RBAC, the service
#       accounts' issuer and keys, the front proxy, no endpoint
#       reconciler; FLAGs added (--v=1 and the like)
#
# The second part, below "The tests' side", is what test-real.sh and
# test-kubelet.sh share on top of tests/lib.sh: the daemons started and
# stopped, the control plane brought up with the project's manifests,
# gpupool server --kubernetes and kube-scheduler as the manifests run
# them, and the waits on pods. The benchmark has its own.
# shellcheck shell=sh

# kube_cert PKI LOG NAME SUBJECT CA EXTENSIONS: NAME.crt and NAME.key, signed by CA.
kube_cert() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$1/$3.key" -out "$1/$3.csr" -subj "$4" 2>>"$2" &&
		printf '%s\n' "$6" >"$1/$3.ext" &&
		openssl x509 -req -in "$1/$3.csr" -CA "$1/$5.crt" -CAkey "$1/$5.key" \
			-CAcreateserial -days 1 -extfile "$1/$3.ext" -out "$1/$3.crt" 2>>"$2"
}

# kube_ca PKI LOG NAME SUBJECT: a self-signed CA, NAME.crt and NAME.key.
kube_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-keyout "$1/$3.key" -out "$1/$3.crt" -subj "$4" 2>>"$2"
}

kube_pki() {
	kube_ca "$1" "$2" ca /CN=gpupool-test-ca &&
		kube_cert "$1" "$2" apiserver /CN=kube-apiserver ca "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc
extendedKeyUsage=serverAuth" &&
		kube_ca "$1" "$2" front-proxy-ca /CN=front-proxy-ca &&
		kube_cert "$1" "$2" front-proxy-client /CN=front-proxy-client front-proxy-ca \
			extendedKeyUsage=clientAuth &&
		openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 \
			-out "$1/sa.key" 2>>"$2" &&
		openssl pkey -in "$1/sa.key" -pubout -out "$1/sa.pub" 2>>"$2" &&
		openssl rand -hex 16 >"$1/admin.token" 2>>"$2" &&
		printf '%s,admin,admin-uid,"system:masters"\n' "$(cat "$1/admin.token")" \
			>"$1/tokens.csv" &&
		chmod 600 "$1"/*.key "$1/tokens.csv" "$1/admin.token"
}

kube_token() {
	openssl rand -hex 16 >"$1/$2.token" &&
		printf '%s,%s,%s-uid,"%s"\n' "$(cat "$1/$2.token")" "$3" "$2" "$4" >>"$1/tokens.csv" &&
		chmod 600 "$1/$2.token"
}

kube_ports() {
	python3 -c 'import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

kube_kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: $2
      certificate-authority: $3
users:
  - name: test
    user:
      token: $4
contexts:
  - name: test
    context:
      cluster: test
      user: test
current-context: test
EOF
}

kube_etcd() {
	exec etcd --name gpupool-test --data-dir "$1" \
		--listen-client-urls "http://127.0.0.1:$2" \
		--advertise-client-urls "http://127.0.0.1:$2" \
		--listen-peer-urls "http://127.0.0.1:$3" \
		--initial-advertise-peer-urls "http://127.0.0.1:$3" \
		--initial-cluster "gpupool-test=http://127.0.0.1:$3"
}

kube_apiserver() {
	kube_bin=$1 kube_pki_dir=$2 kube_etcd_port=$3 kube_port=$4
	shift 4
	exec "$kube_bin/kube-apiserver" --etcd-servers="http://127.0.0.1:$kube_etcd_port" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$kube_port" \
		--endpoint-reconciler-type=none \
		--tls-cert-file="$kube_pki_dir/apiserver.crt" \
		--tls-private-key-file="$kube_pki_dir/apiserver.key" \
		--client-ca-file="$kube_pki_dir/ca.crt" --token-auth-file="$kube_pki_dir/tokens.csv" \
		--authorization-mode=Node,RBAC \
		--service-account-key-file="$kube_pki_dir/sa.pub" \
		--service-account-signing-key-file="$kube_pki_dir/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
		--requestheader-client-ca-file="$kube_pki_dir/front-proxy-ca.crt" \
		--requestheader-allowed-names=front-proxy-client \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--requestheader-group-headers=X-Remote-Group --requestheader-username-headers=X-Remote-User \
		--proxy-client-cert-file="$kube_pki_dir/front-proxy-client.crt" \
		--proxy-client-key-file="$kube_pki_dir/front-proxy-client.key" --profiling=false "$@"
}

# ---- The tests' side ------------------------------------------------------------------
# For test-real.sh and test-kubelet.sh, with tests/lib.sh sourced first
# (ok, bad, runs, expect, finish, $tmp). The caller sets kbin (the
# binaries), build (the build folder), deploy (deploy/kubernetes), logs
# and pki (folders of its own), etcd_data, daemons (empty), and the ports
# etcd_port, etcd_peer, api_port, kcm_port, sched_port, ext_port and
# metrics_port.
#
#   start NAME COMMAND...      COMMAND in the background, its output in
#                              $logs/NAME.log, its pid in $last_pid and
#                              first in $daemons
#   daemons_stop               every daemon: SIGTERM, SIGKILL after 10 s
#   logs_show                  the end of every log (for a failed run)
#   wait_for WHAT SECONDS PID COMMAND...
#   stop_if_failed
#   cluster_pki                the PKI, admin's kubeconfig; kubeconfig,
#                              kubectl and kapi to use from then on
#   cluster_up CONTROLLERS     etcd, kube-apiserver, kube-controller-manager
#                              with CONTROLLERS
#   cluster_manifests          deploy/kubernetes applied (a server-side
#                              dry run first), the placement key's Secret
#                              ($tmp/placement.key), the kubeconfigs of
#                              gpupool-server and gpupool-node
#   server_prepare             server.yaml's arguments on this test's
#                              paths and ports; scheduler-config.yaml's
#                              extender port checked against them
#   server_start               gpupool server --kubernetes: $server, $ext
#   extender_synced NODES DEVICES
#   scheduler_up               kube-scheduler with scheduler-config.yaml
#   ns_make, bound, waits, pending: namespaces and the waits on pods

# start NAME COMMAND...: COMMAND in the background, its output in
# $logs/NAME.log, its pid first in $daemons (stopped at the end).
start() {
	start_name=$1
	shift
	"$@" >"$logs/$start_name.log" 2>&1 &
	last_pid=$!
	daemons="$last_pid $daemons"
}

# daemons_stop: the daemons, newest first, end: SIGTERM, then SIGKILL for
# any still there after 10 s.
daemons_stop() {
	for pid in $daemons; do kill "$pid" 2>/dev/null; done
	for _ in $(seq 100); do
		alive=
		for pid in $daemons; do kill -0 "$pid" 2>/dev/null && alive=yes; done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	for pid in $daemons; do kill -9 "$pid" 2>/dev/null; done
	daemons=
}

# logs_show: the end of every log, for a run that failed.
logs_show() {
	for f in "$logs"/*.log; do
		[ -f "$f" ] || continue
		echo "---- the end of $(basename "$f")"
		tail -n 25 "$f"
	done
}

# wait_for WHAT SECONDS PID COMMAND...: COMMAND succeeds within SECONDS,
# tried every 0.2 s, while the daemon PID (- for none) runs; a failure
# (FAIL line) and status 1 otherwise.
wait_for() {
	what=$1 limit=$2 pid=$3
	shift 3
	for _ in $(seq $((limit * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		if [ "$pid" != - ] && ! kill -0 "$pid" 2>/dev/null; then
			bad "waiting for $what: the program it needs ended"
			return 1
		fi
		sleep 0.2
	done
	bad "waiting for $what ($limit s)"
	return 1
}

# stop_if_failed: a part that the rest needs failed: end the test now
# rather than wait for what cannot come.
stop_if_failed() {
	[ "$fail" -eq 0 ] && return 0
	finish
	exit 1
}

# cluster_pki: a CA, the API server's certificate, the front proxy's, the
# service accounts' signing key, a static admin token (kube_pki), and
# admin's kubeconfig. More tokens (kube_token) may follow before
# cluster_up.
cluster_pki() {
	api=https://127.0.0.1:$api_port
	mkdir -p "$tmp/kube-cache"
	kube_pki "$pki" "$logs/pki.log" || { bad "the PKI (openssl)" "$logs/pki.log"; finish; exit 1; }
	admin_token=$(cat "$pki/admin.token")
	kubeconfig "$tmp/admin.kubeconfig" "$admin_token"
}

# kubeconfig FILE TOKEN: the API server, its CA, a bearer token.
kubeconfig() { kube_kubeconfig "$1" "$api" "$pki/ca.crt" "$2"; }
kubectl() { "$kbin/kubectl" --kubeconfig "$tmp/admin.kubeconfig" --cache-dir "$tmp/kube-cache" "$@"; }

# kapi METHOD PATH [FILE [CONTENT-TYPE]]: the API server's answer as admin
# (FILE the body, - for stdin); fails, saying so on stderr, unless 2xx.
kapi() {
	kapi_method=$1 kapi_path=$2
	if [ $# -ge 3 ]; then
		set -- -H "Content-Type: ${4:-application/json}" --data-binary "@$3"
	else
		set --
	fi
	rm -f "$tmp/kapi.body"
	kapi_code=$(curl -sS -o "$tmp/kapi.body" -w '%{http_code}' --cacert "$pki/ca.crt" \
		-H "Authorization: Bearer $admin_token" -H 'Accept: application/json' \
		-X "$kapi_method" "$@" "$api$kapi_path")
	# with the newline the API server leaves out (for the failures' listings)
	[ -s "$tmp/kapi.body" ] && { cat "$tmp/kapi.body"; echo; }
	case $kapi_code in 2??) return 0 ;; esac
	echo "HTTP $kapi_code from $kapi_method $kapi_path" >&2
	return 1
}

etcd_healthy() { curl -sf "http://127.0.0.1:$etcd_port/health" | grep -q '"health":"true"'; }
api_ready() { kapi GET /readyz | grep -qx ok; }

# cluster_up CONTROLLERS: etcd, kube-apiserver and kube-controller-manager
# with CONTROLLERS (its --controllers); the test ends unless the API
# server comes up.
cluster_up() {
	start etcd kube_etcd "$etcd_data" "$etcd_port" "$etcd_peer"
	etcd_pid=$last_pid
	wait_for etcd 20 "$etcd_pid" etcd_healthy
	start kube-apiserver kube_apiserver "$kbin" "$pki" "$etcd_port" "$api_port" --v=1
	api_pid=$last_pid
	wait_for kube-apiserver 60 "$api_pid" api_ready && ok kube-apiserver-ready
	stop_if_failed
	start kube-controller-manager "$kbin/kube-controller-manager" \
		--kubeconfig="$tmp/admin.kubeconfig" --bind-address=127.0.0.1 --secure-port="$kcm_port" \
		--leader-elect=false --controllers="$1" \
		--root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" --v=1
}

# cluster_manifests: deploy/kubernetes through kubectl. The namespace
# first: a dry run creates nothing, so the namespaced objects would
# otherwise find no namespace. No controller here makes the Deployment's
# or the DaemonSet's pods, nor binds the volume's claim. Then the
# placement key, made as docs/kubernetes.md says, and read back as the
# Secret's volume gives it to the server and the node programs; and a
# kubeconfig for each of the programs' service accounts. The test ends
# unless all of it is done.
cluster_manifests() {
	runs namespace-applied "$tmp/apply-ns.out" -- kubectl apply --validate=strict \
		-f "$deploy/namespace.yaml"
	runs manifests-pass-a-server-side-dry-run "$tmp/dry-run.out" -- kubectl apply \
		--dry-run=server --validate=strict -k "$deploy"
	runs manifests-applied "$tmp/apply.out" -- kubectl apply --validate=strict -k "$deploy"
	runs placement-key-secret-made "$tmp/secret.out" -- kubectl -n gpupool-system create \
		secret generic gpupool-placement-key \
		--from-literal=key="$(head -c 48 /dev/urandom | base64 -w0)"
	kubectl -n gpupool-system get secret gpupool-placement-key -o jsonpath='{.data.key}' |
		base64 -d >"$tmp/placement.key"
	for sa in gpupool-server gpupool-node; do
		runs "token-of-$sa" "$tmp/$sa.token" -- kubectl -n gpupool-system create token "$sa" \
			--duration=1h
		kubeconfig "$tmp/$sa.kubeconfig" "$(cat "$tmp/$sa.token")"
	done
	stop_if_failed
}

# server_prepare: the arguments of the manifest's server container, with
# the database, the metrics and the extender on this test's paths and
# ports ($tmp/server.args.here); the port the scheduler's configuration
# names must be the manifest's.
server_prepare() {
	yq -r '.spec.template.spec.containers[] | select(.name == "server") | .args[]' \
		"$deploy/server.yaml" >"$tmp/server.args"
	yq -r '.data["config.yaml"]' "$deploy/scheduler-config.yaml" >"$tmp/scheduler-shipped.yaml"
	yq . "$tmp/scheduler-shipped.yaml" >"$tmp/scheduler-shipped.json"
	shipped_port=$(jq -Rr 'select(. == "--extender-port") | input' "$tmp/server.args")
	check extender-port-agrees '.[0].extenders | length == 1 and (.[0].urlPrefix |
		test("^http://127\\.0\\.0\\.1:'"$shipped_port"'/"))' "$tmp/scheduler-shipped.json"
	jq -Rr --arg db "$tmp/gpupool.db" --arg ext "$ext_port" --arg metrics "127.0.0.1:$metrics_port" \
		'[., inputs] | . as $a | range(length) as $i | if $i > 0 and $a[$i - 1] == "--db" then $db
		elif $i > 0 and $a[$i - 1] == "--extender-port" then $ext
		elif $i > 0 and $a[$i - 1] == "--metrics-listen" then $metrics else $a[$i] end' \
		"$tmp/server.args" >"$tmp/server.args.here"
	GPUPOOL_SOCKET="$tmp/server.sock" GPUPOOL_DB="$tmp/gpupool.db"
	export GPUPOOL_SOCKET GPUPOOL_DB
}

# server_start: the server with those arguments, as gpupool-server; its pid
# in $server, its extender's URL in $ext.
server_start() {
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$tmp/server.args.here"
	start gpupool-server "$build/gpupool" "$@" --socket "$tmp/server.sock" \
		--kubeconfig "$tmp/gpupool-server.kubeconfig" --placement-key "$tmp/placement.key"
	server=$last_pid
	ext=http://127.0.0.1:$ext_port/extender
}

# extender_synced NODES DEVICES: the extender has listed the cluster, and
# knows NODES nodes with devices, DEVICES devices (its healthz in
# $tmp/healthz).
extender_synced() {
	curl -sf -o "$tmp/healthz" "$ext/healthz" && jq -e --argjson n "$1" --argjson d "$2" \
		'.synced and .nodes == $n and .devices == $d' "$tmp/healthz"
}

lease_held() {
	kapi GET /apis/coordination.k8s.io/v1/namespaces/gpupool-system/leases/gpupool-scheduler |
		jq -e '.spec.holderIdentity | length > 0'
}

# scheduler_up: kube-scheduler with the shipped configuration, changed only
# where it must be here: the extender's port, the kubeconfig (the pod's is
# in-cluster), and the leader election's timings (a busy machine must not
# lose the lease). The test ends unless it holds its lease.
scheduler_up() {
	yq -y --arg port "$ext_port" --arg kc "$tmp/gpupool-server.kubeconfig" '
		.extenders |= map(.urlPrefix |= sub(":[0-9]+/"; ":" + $port + "/")) |
		.clientConnection.kubeconfig = $kc |
		.leaderElection += {leaseDuration: "60s", renewDeadline: "50s", retryPeriod: "2s"}' \
		"$tmp/scheduler-shipped.yaml" >"$tmp/scheduler.yaml"
	start kube-scheduler "$kbin/kube-scheduler" --config="$tmp/scheduler.yaml" \
		--authentication-kubeconfig="$tmp/gpupool-server.kubeconfig" \
		--authorization-kubeconfig="$tmp/gpupool-server.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$sched_port" --v=2
	sched_pid=$last_pid
	wait_for "kube-scheduler's lease" 60 "$sched_pid" lease_held && ok scheduler-holds-its-lease
	expect scheduler-healthz 0 '^ok$' -- curl -sk "https://127.0.0.1:$sched_port/healthz"
	stop_if_failed
}

# ns_make NAME: a namespace, with its service account (no pod is admitted
# in a namespace before its service account "default" is there:
# kube-controller-manager makes it).
ns_make() {
	jq -n --arg n "$1" '{apiVersion: "v1", kind: "Namespace", metadata: {name: $n}}' |
		kapi POST /api/v1/namespaces - >/dev/null
	wait_for "the service account of namespace $1" 30 - \
		kapi GET "/api/v1/namespaces/$1/serviceaccounts/default"
}

# bound NAME NAMESPACE POD: the pod is bound within 30 s; it in $tmp/POD.json.
bound() {
	eventually "$1" 30 "$tmp/$3.json" '.spec.nodeName != null' -- \
		kapi GET "/api/v1/namespaces/$2/pods/$3"
}

# waits NAME NAMESPACE POD REASON TEXT: within 30 s an Event of REASON on
# the pod has TEXT in its message (the pod's Events in $tmp/POD.events).
waits() {
	eventually "$1" 30 "$tmp/$3.events" "any(.items[]; .reason == \"$4\" and
		(.message | contains($(printf '%s' "$5" | jq -Rs .))))" -- \
		kapi GET "/api/v1/namespaces/$2/events?fieldSelector=involvedObject.name=$3"
}

# pending NAME NAMESPACE POD: the pod is not bound (now).
pending() {
	kapi GET "/api/v1/namespaces/$2/pods/$3" >"$tmp/$3.json"
	check "$1" '.[0].kind == "Pod" and .[0].spec.nodeName == null and
		.[0].status.phase == "Pending"' "$tmp/$3.json"
}
