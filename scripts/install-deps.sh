#!/bin/sh
# install-deps.sh — install the Debian packages gpupool needs to build and test.
#
# Idempotent: packages already present are left alone and nothing is fetched.
# As root it runs apt-get itself; otherwise it prints the exact command to run.
# Then the npm test peers are installed with `npm ci` where missing or older
# than their lock file: the Kubernetes integration's (grpc-js,
# kubernetes-models: tests/k8s/package-lock.json) and the web console's
# (puppeteer-core, driving Debian's chromium: tests/console/package-lock.json).
# Called by `make`, `make check` and `make demo` before they build.
set -eu
cd "$(dirname "$0")/.."

# Command that must exist  Debian package that provides it
TOOLS="meson:meson ninja:ninja-build pkg-config:pkg-config cc:gcc jq:jq curl:curl sqlite3:sqlite3
	protoc-c:protobuf-c-compiler protoc:protobuf-compiler protoc-gen-go:protoc-gen-go
	protoc-gen-go-grpc:protoc-gen-go-grpc node:nodejs npm:npm go:golang-go unshare:util-linux
	slurmctld:slurmctld slurmd:slurmd srun:slurm-client sacct:slurm-client munged:munge
	slurmdbd:slurmdbd mariadbd:mariadb-server prometheus:prometheus promtool:prometheus
	chromium:chromium etcd:etcd-server yq:yq openssl:openssl
	containerd:containerd runc:runc"
# Packages checked by name with dpkg: the development packages, and
# busybox-static (the image test-kubelet.sh makes needs busybox linked
# statically, which a busybox command alone does not promise).
LIBS="libcmocka-dev libcsv-dev libjansson-dev libsqlite3-dev libmicrohttpd-dev nettle-dev
	libcurl4-openssl-dev libyaml-dev libgrpc-dev libprotobuf-c-dev
	golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev
	libslurm-dev libjs-chart.js busybox-static"

missing=""
for pair in $TOOLS; do
	cmd=${pair%%:*}
	pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
for pkg in $LIBS; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $pkg"
done

# The npm test peers, once the Debian packages are there: tests/k8s's, and
# tests/console's (puppeteer-core, which drives Debian's chromium and
# downloads no browser), each with `npm ci` when missing or older than
# its lock file.
npm_peers() {
	for dir in tests/k8s tests/console; do
		lock=$dir/package-lock.json
		stamp=$dir/node_modules/.package-lock.json
		[ -f "$stamp" ] && [ ! "$lock" -nt "$stamp" ] && continue
		echo "gpupool: installing the test peers of $dir (npm ci)" >&2
		npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
	done
}

if [ -z "$missing" ]; then
	npm_peers
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "gpupool: missing build dependencies:$missing" >&2
	echo "gpupool: install them with:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "gpupool: installing build dependencies:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_peers
