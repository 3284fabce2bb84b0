#!/bin/sh
# arrows.sh — the arrows between the source's folders point down, as
# docs/ARCHITECTURE.md says: each rule below names a folder and the
# folders (or single headers) its files may include with "..."; any other
# include is an arrow that runs back up, and fails the test naming the
# file, the line and the rule. System headers (<...>) are not looked at.
#
#   base/   nothing but base/ (shared mechanisms, below everything)
#   core/   core/ and base/ (the scheduling rules: pure)
#   k8s/    its own, base/, core/, sim/ (a workload trace), agent/ (the
#           node program: devices, usage, the verifier), vendor/ (the
#           node program's backends), shim/region.h (the region's API),
#           protoc-c's generated messages, and of server/ only its public
#           control-plane API, server/control-plane.h
#
# usage: arrows.sh SOURCE_ROOT
set -u
if [ $# -ne 1 ]; then
	echo "usage: arrows.sh SOURCE_ROOT" >&2
	exit 2
fi
. "$(dirname "$0")/lib.sh"
cd "$1/src" || exit 2

# rule FOLDER ALLOWED-REGEX: every "..." include in FOLDER matches it.
rule() {
	folder=$1 allowed=$2
	grep -Hn '^#include "' "$folder"/*.c "$folder"/*.h 2>/dev/null |
		grep -Ev "#include \"($allowed)" >"$tmp/$folder.up"
	if [ -s "$tmp/$folder.up" ]; then
		bad "$folder/ includes only what it may use" "$tmp/$folder.up"
	else
		ok "$folder/ includes only what it may use"
	fi
}
rule base 'base/'
rule core 'core/|base/'
rule k8s 'k8s/|base/|core/|sim/|agent/|vendor/|shim/region\.h"|deviceplugin-api\.pb-c\.h"|server/control-plane\.h"'
finish
