#!/bin/sh
# run-container.sh — runs a command as a container runtime would run a
# container the device plugin allocated: in a mount namespace of its own
# with exactly the mounts of the Allocate answer (the kubelet double's
# "allocate" line) bound at their container paths, and an environment of
# exactly its envs, plus what the runtime itself brings: the driver's
# libraries (here simdev's: LD_LIBRARY_PATH and the simulated hardware's
# GPUPOOL_SIM_* variables, passed through) and PATH.
#
# usage: run-container.sh ALLOCATE_JSON SIMDEV_DIR -- COMMAND...
# Needs root (unshare -m); a container path that does not exist on the host
# gets a tmpfs (holding a copy of what was there) over the nearest folder
# above it that does, in the new namespace only (once: a later mount
# point under that tmpfs is made in it, not hidden by another).
set -eu
if [ $# -lt 4 ] || [ "$3" != -- ]; then
	echo "usage: run-container.sh ALLOCATE_JSON SIMDEV_DIR -- COMMAND..." >&2
	exit 2
fi
alloc=$1 simdev=$2
shift 3
if [ "$(id -u)" -ne 0 ]; then
	echo "run-container.sh: needs root for a mount namespace (unshare -m)" >&2
	exit 2
fi

# The mounts, as shell lines run inside the namespace: a tmpfs over the
# folder above the container path when the path is not there, then the
# bind. Paths are the plugin's (no quotes or newlines in them).
mounts=$(jq -r '.mounts[] | "mountpoint \(.hostPath) \(.containerPath) \(.readOnly)"' "$alloc")
envs=$(jq -r '.envs | to_entries[] | "\(.key)=\(.value)"' "$alloc")

# shellcheck disable=SC2016 # expanded inside the namespace
exec unshare -m --propagation private sh -eu -c '
made=" "
# ours PATH: is PATH on a tmpfs this script made (then it is ours to write)?
ours() {
	for m in $made; do
		case "$1/" in "$m"/*) return 0 ;; esac
	done
	return 1
}
mountpoint() {
	host=$1 path=$2 ro=$3
	if [ ! -e "$path" ]; then
		above=$(dirname "$path")
		while [ ! -d "$above" ]; do above=$(dirname "$above"); done
		if ! ours "$above"; then
			saved=$(mktemp -d)
			cp -a "$above/." "$saved/" 2>/dev/null || true
			mount -t tmpfs tmpfs "$above"
			cp -a "$saved/." "$above/" 2>/dev/null || true
			made="$made $above"
		fi
		mkdir -p "$(dirname "$path")"
		if [ -d "$host" ]; then mkdir -p "$path"; else : >"$path"; fi
	fi
	mount --bind "$host" "$path"
	[ "$ro" = true ] && mount -o remount,bind,ro "$path"
	return 0
}
'"$mounts"'
exec "$@"' run-container env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$simdev" \
	GPUPOOL_SIM_DEVICES="${GPUPOOL_SIM_DEVICES:-}" GPUPOOL_SIM_DIR="${GPUPOOL_SIM_DIR:-}" \
	$envs "$@"
