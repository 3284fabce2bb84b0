#!/bin/sh
# test-device-plugin-go.sh — test-device-plugin.sh against the grpc-go
# kubelet double (tests/k8s/kubelet-double-go/), built first by
# build-go-double.sh into BUILD_DIR (offline, from Debian's Go packages;
# Go's cache kept there, so a second run takes seconds). Built here, when
# the test runs, rather than by ninja, so that building gpupool needs no
# Go: the check set of scripts/install-deps.sh installs it, and a missing
# tool or package fails this test with a line naming its Debian package.
# usage: test-device-plugin-go.sh FIXTURE BUILD_DIR   (from the repository root)
set -u
if [ $# -ne 2 ]; then
	echo "usage: test-device-plugin-go.sh FIXTURE BUILD_DIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
double=$2/kubelet-double-go
if ! "$here/build-go-double.sh" "$here/kubelet-double-go" "$double" "$double.p"; then
	echo "FAIL the grpc-go kubelet double could not be built (above: what is missing)"
	exit 1
fi
exec "$here/test-device-plugin.sh" "$1" "$double"
