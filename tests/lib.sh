# lib.sh — what the shell tests share; sourced, never run. Sets up a
# temporary directory $tmp (removed, with any background job, on exit) and
# the counters that `finish` reports as "N passed, N failed".
pass=0
fail=0
tmp=$(mktemp -d)
# jobs -p goes through a file: in dash, $(jobs -p) runs in a subshell
# that has no jobs, and would leave them running.
# cleanup_hook runs first: a test may redefine it (tests/server/agent-lib.sh).
cleanup_hook() { :; }
trap 'cleanup_hook; jobs -p >"$tmp/.jobs"; kill $(cat "$tmp/.jobs") 2>/dev/null; rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }

# bad NAME FILE...: a failure, with the files that show why.
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	shift
	for f in "$@"; do sed 's/^/    /' "$f"; done
}

# expect NAME STATUS PATTERN -- COMMAND...: COMMAND exits with STATUS and
# its stdout+stderr (kept in $tmp/out) match the extended regex PATTERN.
expect() {
	name=$1 status=$2 pattern=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -eq "$status" ] && grep -Eq -- "$pattern" "$tmp/out"; then
		ok "$name"
	else
		bad "$name: exit $got (want $status), output:" "$tmp/out"
	fi
}

# check NAME JQ_EXPRESSION FILE...: the expression is true of the JSON
# (several files are slurped into an array).
check() {
	name=$1 expr=$2
	shift 2
	if jq -e -s "$expr" "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name" "$@"; fi
}

finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
