#!/bin/sh
# install-deps.sh — install the Debian packages gpupool needs to build and test.
#
# Idempotent: packages already present are left alone and nothing is fetched.
# As root it runs apt-get itself; otherwise it prints the exact command to run.
# Called by `make`, `make check` and `make demo` before they build.
set -eu

# Command that must exist  Debian package that provides it
TOOLS="meson:meson ninja:ninja-build pkg-config:pkg-config cc:gcc jq:jq curl:curl sqlite3:sqlite3"
# Development packages, checked by name with dpkg.
LIBS="libcmocka-dev libcsv-dev libjansson-dev libsqlite3-dev libmicrohttpd-dev nettle-dev
	libcurl4-openssl-dev libyaml-dev"

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

[ -z "$missing" ] && exit 0

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
