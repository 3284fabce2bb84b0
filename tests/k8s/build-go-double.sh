#!/bin/bash
# build-go-double.sh — builds the grpc-go kubelet double
# (tests/k8s/kubelet-double-go/) offline, from Debian packages only, for
# tests/k8s/test-device-plugin.sh (meson runs it: tests/k8s/meson.build).
#
#   build-go-double.sh SRC_DIR OUT_BINARY [BUILD_DIR]
#
# GOPATH mode (no Go modules, nothing downloaded): the build folder's own
# GOPATH first, then Debian's /usr/share/gocode. protoc with Debian's
# protoc-gen-go and protoc-gen-go-grpc generates the message and service
# code from the device plugin API's proto (src/k8s/deviceplugin/api.proto;
# GP_DEVICEPLUGIN_PROTO names another) into
# BUILD_DIR/gopath/src/gpupool/deviceplugin/v1beta1; GOCACHE is
# BUILD_DIR/gocache. Nothing is written into the source tree. BUILD_DIR
# defaults to OUT_BINARY.d. A missing tool or Go package fails the build
# with a line naming the Debian package to install.
set -euo pipefail

me="build-go-double.sh"
die() { echo "$me: $*" >&2; exit 1; }

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	die "usage: $me SRC_DIR OUT_BINARY [BUILD_DIR]"
fi
src=$(cd "$1" && pwd) || die "source folder $1 not found"
mkdir -p "$(dirname "$2")"
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
build=${3:-$out.d}
mkdir -p "$build"
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proto=${GP_DEVICEPLUGIN_PROTO:-$here/../../src/k8s/deviceplugin/api.proto}
debian_gopath=/usr/share/gocode
gocode=$debian_gopath/src

[ -f "$proto" ] || die "the device plugin API's proto $proto is missing"

# Tools, then the Go packages, each with the Debian package that has it.
need_tool() { command -v "$1" >/dev/null || die "$1 not found: install the Debian package $2"; }
need_tool go golang-go
need_tool protoc protobuf-compiler
need_tool protoc-gen-go protoc-gen-go
need_tool protoc-gen-go-grpc protoc-gen-go-grpc

need_go() { [ -e "$gocode/$1" ] || die "Go package $1 not found in $gocode: install the Debian package $2"; }
need_go google.golang.org/grpc/dialoptions.go golang-google-grpc-dev
need_go google.golang.org/protobuf/proto golang-google-protobuf-dev
need_go golang.org/x/net/http2 golang-golang-x-net-dev
need_go golang.org/x/sys/unix golang-golang-x-sys-dev
need_go google.golang.org/genproto/googleapis/rpc/status golang-google-genproto-dev
# grpc-go 1.33 marshals through github.com/golang/protobuf: its 1.3 series
# (golang-github-golang-protobuf-1-3-dev) cannot handle protoc-gen-go 1.28's messages and
# panics at the first call; 1.4 and later (registry.go) forward to APIv2.
need_go github.com/golang/protobuf/proto golang-github-golang-protobuf-1-5-dev
[ -e "$gocode/github.com/golang/protobuf/proto/registry.go" ] ||
	die "github.com/golang/protobuf in $gocode is older than 1.4 (its messages would panic): install the Debian package golang-github-golang-protobuf-1-5-dev"

gen=$build/gopath/src/gpupool/deviceplugin/v1beta1
rm -rf "$gen"
mkdir -p "$gen" "$build/gocache"
map=M$(basename "$proto")=gpupool/deviceplugin/v1beta1
protoc -I "$(dirname "$proto")" \
	--go_out="$build/gopath/src" --go_opt="$map" \
	--go-grpc_out="$build/gopath/src" --go-grpc_opt="$map" \
	"$(basename "$proto")" || die "protoc failed on $proto"

# From inside the source folder: GOPATH mode builds "." but refuses an
# absolute path outside GOPATH. Go's own settings (cgo, no -trimpath) keep
# the standard library Debian ships compiled: 30 s cold instead of 90.
(cd "$src" && env GO111MODULE=off GOPATH="$build/gopath:$debian_gopath" \
	GOCACHE="$build/gocache" GOFLAGS= GOPROXY=off GOENV=off \
	go build -buildvcs=false -o "$out.tmp" .) || die "go build of $src failed"
mv -f "$out.tmp" "$out"
