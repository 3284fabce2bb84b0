#!/bin/sh
# install-deps.sh — install the Debian packages that gpupool's build, its
# demo or its tests need: three sets, each the one before and more.
#
#   build   what `make` needs to build (meson, ninja, the compiler, the
#           libraries, protobuf-c's compiler; cmocka, as ninja builds the
#           unit tests too): `make`, `make install`
#   demo    the build set, and what scripts/demo.sh runs besides: jq and
#           curl, and the web console's charting library (libjs-chart.js),
#           which the demo's server serves: `make demo`, `make demo-trace`
#   check   the demo set, and what the tests run: Slurm's daemons on
#           MariaDB, Prometheus, Chromium, Node and npm, Go with protoc and
#           Debian's gRPC packages, etcd, containerd and runc, ...; then
#           the npm test peers (below): `make check`, `make bench`
#
# usage: install-deps.sh [build|demo|check] [--list|--commands]   (default: build)
#   --list      print the set's Debian packages, one a line; install nothing
#   --commands  print the commands the set makes sure of, with the package
#               of each ("jq jq", "srun slurm-client"); install nothing
#
# Idempotent: packages already present are left alone and nothing is fetched.
# As root it runs apt-get itself; otherwise it prints the exact command to run
# and exits 1. With the check set, the npm test peers are then installed with
# `npm ci` where missing or older than their lock file: the Kubernetes
# integration's (grpc-js, kubernetes-models: tests/k8s/package-lock.json) and
# the web console's (puppeteer-core, driving Debian's chromium:
# tests/console/package-lock.json).
# Called by `make` (build), `make demo` (demo) and `make check` (check) before
# they build; tests/install/test-install-deps.sh checks the sets.
set -eu
cd "$(dirname "$0")/.."

usage() {
	echo "usage: scripts/install-deps.sh [build|demo|check] [--list|--commands]" \
		"(default: build; --list: print its packages, --commands: its commands" \
		"and their packages; either installs nothing)"
}
set_name=build
list=no
for arg in "$@"; do
	case $arg in
	build | demo | check) set_name=$arg ;;
	--list) list=packages ;;
	--commands) list=commands ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

# Each set's additions. TOOLS: "command that must exist:Debian package that
# provides it"; PACKAGES: checked by name with dpkg (the development
# packages, libraries and data; busybox-static: the image
# test-kubelet.sh makes needs busybox linked statically, which a busybox
# command alone does not promise).
BUILD_TOOLS="meson:meson ninja:ninja-build pkg-config:pkg-config cc:gcc
	protoc-c:protobuf-c-compiler"
BUILD_PACKAGES="libc6-dev libcsv-dev libjansson-dev libsqlite3-dev libmicrohttpd-dev nettle-dev
	libcurl4-openssl-dev libyaml-dev libgrpc-dev libprotobuf-c-dev libcmocka-dev"
DEMO_TOOLS="jq:jq curl:curl"
DEMO_PACKAGES="libjs-chart.js"
CHECK_TOOLS="sqlite3:sqlite3 openssl:openssl unshare:util-linux yq:yq node:nodejs npm:npm
	go:golang-go protoc:protobuf-compiler protoc-gen-go:protoc-gen-go
	protoc-gen-go-grpc:protoc-gen-go-grpc
	slurmctld:slurmctld slurmd:slurmd srun:slurm-client sacct:slurm-client munged:munge
	slurmdbd:slurmdbd mariadbd:mariadb-server prometheus:prometheus promtool:prometheus
	chromium:chromium etcd:etcd-server containerd:containerd runc:runc"
CHECK_PACKAGES="golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev
	golang-google-protobuf-dev libslurm-dev busybox-static"

case $set_name in
build)
	tools=$BUILD_TOOLS
	packages=$BUILD_PACKAGES
	;;
demo)
	tools="$BUILD_TOOLS $DEMO_TOOLS"
	packages="$BUILD_PACKAGES $DEMO_PACKAGES"
	;;
check)
	tools="$BUILD_TOOLS $DEMO_TOOLS $CHECK_TOOLS"
	packages="$BUILD_PACKAGES $DEMO_PACKAGES $CHECK_PACKAGES"
	;;
esac

# The set's packages, one a line, each once (slurm-client and prometheus
# provide two commands each).
packages_list() {
	for pair in $tools; do echo "${pair#*:}"; done
	for pkg in $packages; do echo "$pkg"; done
}
case $list in
packages)
	packages_list | awk '!seen[$0]++'
	exit 0
	;;
commands)
	for pair in $tools; do echo "${pair%%:*} ${pair#*:}"; done
	exit 0
	;;
esac

missing=""
add_missing() {
	case " $missing " in *" $1 "*) ;; *) missing="$missing $1" ;; esac
}
for pair in $tools; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || add_missing "${pair#*:}"
done
for pkg in $packages; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
		add_missing "$pkg"
done

# The npm test peers (check set), once the Debian packages are there:
# tests/k8s's, and tests/console's (puppeteer-core, which drives Debian's
# chromium and downloads no browser), each with `npm ci` when missing or
# older than its lock file.
npm_peers() {
	[ "$set_name" = check ] || return 0
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
	echo "gpupool: missing $set_name dependencies:$missing" >&2
	echo "gpupool: install them with:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "gpupool: installing $set_name dependencies:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_peers
