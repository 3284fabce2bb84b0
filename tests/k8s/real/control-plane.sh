# control-plane.sh — a Kubernetes control plane on loopback, from the
# binaries in a folder ($GPUPOOL_KUBE_BIN): what tests/k8s/real/test-real.sh
# and bench/bench-k8s-real.sh both start, written once. Sourced, never run
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
#   kube_etcd DATA PORT PEER_PORT
#       etcd with its data in DATA, clients on 127.0.0.1:PORT
#   kube_apiserver KBIN PKI ETCD_PORT PORT [FLAG...]
#       kube-apiserver on 127.0.0.1:PORT (TLS), etcd's on ETCD_PORT: the
#       static tokens, --authorization-mode=Node,RBAC, the service
#       accounts' issuer and keys, the front proxy, no endpoint
#       reconciler; FLAGs added (--v=1 and the like)
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
