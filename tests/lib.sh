# lib.sh — what the shell tests share; sourced, never run. Sets up a
# temporary directory $tmp (removed, with any background job, on exit) and
# the counters that `finish` reports as "N passed, N failed".
#
# Every check here can fail: a call of the wrong shape is itself counted as
# a failure ("malformed CHECK call"), a test that ran no check fails, and
# a test that stops before `finish` with status 0 fails too.
pass=0
fail=0
finished=
# In /var/tmp, not /tmp: the tasks of a server run as root have a /tmp of
# their own (--task-tmp-max), and would not see the test's files there.
tmp=$(mktemp -d -p /var/tmp gpupool-test.XXXXXX)
# jobs -p goes through a file: in dash, $(jobs -p) runs in a subshell
# that has no jobs, and would leave them running.
# cleanup_hook runs first: a test may redefine it (tests/server/agent-lib.sh).
cleanup_hook() { :; }
trap 'status=$?
	cleanup_hook
	jobs -p >"$tmp/.jobs"; kill $(cat "$tmp/.jobs") 2>/dev/null; rm -rf "$tmp"
	if [ "$status" -eq 0 ] && [ -z "$finished" ]; then
		echo "FAIL $0 ended before finish"
		status=1
	fi
	exit "$status"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }

# bad NAME FILE...: a failure, with the files that show why.
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	shift
	for f in "$@"; do sed 's/^/    /' "$f"; done
}

# malformed CHECK ARGS...: a call of CHECK that does not have its shape
# (dash has no line numbers: the call itself says where it is).
malformed() {
	fail=$((fail + 1))
	what=$1
	shift
	printf 'FAIL malformed %s call at %s: %s' "$what" "$0" "$what"
	printf ' "%s"' "$@"
	echo
}

# is_status WORD: WORD is an exit status (a whole number).
is_status() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# Each check below returns 0 when it passed and 1 when it failed.
#
# expect NAME STATUS PATTERN -- COMMAND...: COMMAND exits with STATUS and
# its stdout+stderr (kept in $tmp/out) match the extended regex PATTERN
# (never empty: a pattern must say what the output shows).
expect() {
	if [ $# -lt 5 ] || [ "$4" != -- ] || ! is_status "$2" || [ -z "$3" ]; then
		malformed expect "$@"
		return 1
	fi
	name=$1 status=$2 pattern=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -eq "$status" ] && grep -Eq -- "$pattern" "$tmp/out"; then
		ok "$name"
	else
		bad "$name: exit $got (want $status), output:" "$tmp/out"
		return 1
	fi
}

# runs NAME OUT -- COMMAND...: COMMAND exits 0, its stdout in OUT (its
# stderr, shown when it fails, in OUT.err). For programs whose output the
# test reads next: a result file is no proof that the program succeeded
# (a sanitizer reports a leak only at exit).
runs() {
	if [ $# -lt 4 ] || [ "$3" != -- ] || [ -z "$2" ]; then
		malformed runs "$@"
		return 1
	fi
	name=$1 runs_out=$2
	shift 3
	"$@" >"$runs_out" 2>"$runs_out.err"
	got=$?
	if [ "$got" -eq 0 ]; then ok "$name"; else bad "$name: exit $got, stderr:" "$runs_out.err"; return 1; fi
}

# exited NAME PID [STATUS]: the background job PID ended with STATUS
# (default 0: a program started with & has its status read like any other).
exited() {
	if [ $# -lt 2 ] || [ $# -gt 3 ] || ! is_status "$2" || ! is_status "${3:-0}"; then
		malformed exited "$@"
		return 1
	fi
	wait "$2"
	got=$?
	if [ "$got" -eq "${3:-0}" ]; then ok "$1"; else bad "$1: exit $got (want ${3:-0})"; return 1; fi
}

# api NAME STATUS PATTERN TOKEN METHOD PATH [CURL ARGS...]: a request to
# the server on the socket $sock (with TOKEN, unless empty; with
# Content-Type: application/json, as the server wants for a body, unless
# the call gives its own) gets HTTP STATUS and a body (kept in $tmp/out)
# that matches PATTERN.
api() {
	if [ $# -lt 6 ] || ! is_status "$2" || [ -z "$3" ] || [ -z "${sock:-}" ]; then
		malformed api "$@"
		return 1
	fi
	name=$1 api_want=$2 api_pattern=$3 api_token=$4 api_method=$5 api_path=$6
	shift 6
	if [ -n "$api_token" ]; then set -- "$@" -H "Authorization: Bearer $api_token"; fi
	case "$*" in *Content-Type:*) ;; *) set -- "$@" -H 'Content-Type: application/json' ;; esac
	got=$(curl -s -o "$tmp/out" -w '%{http_code}' --unix-socket "$sock" -X "$api_method" "$@" \
		"http://gpupool$api_path")
	if [ "$got" = "$api_want" ] && grep -Eq -- "$api_pattern" "$tmp/out"; then
		ok "$name"
	else
		echo "HTTP $got (want $api_want), body:" >"$tmp/why"
		bad "$name" "$tmp/why" "$tmp/out"
		return 1
	fi
}

# stops NAME PID: the background program PID, sent SIGTERM, ends within
# 30 s (else SIGKILL) with exit status 0.
stops() {
	if [ $# -ne 2 ] || ! is_status "$2"; then
		malformed stops "$@"
		return 1
	fi
	kill "$2" 2>/dev/null
	for _ in $(seq 300); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$2" 2>/dev/null && kill -9 "$2"
	exited "$1" "$2"
}

# check NAME JQ_EXPRESSION FILE...: the expression is true of the JSON
# (several files are slurped into an array).
check() {
	if [ $# -lt 3 ] || [ -z "$2" ]; then
		malformed check "$@"
		return 1
	fi
	name=$1 expr=$2
	shift 2
	if jq -e -s "$expr" "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name" "$@"; return 1; fi
}

# eventually NAME SECONDS FILE JQ -- COMMAND...: runs COMMAND, its stdout
# and stderr into FILE, every 0.1 s until the jq expression JQ is true of
# FILE (not slurped: `.` is the answer), for SECONDS at most; passes when
# it came true, fails with FILE as it last was otherwise. An empty FILE is
# never true (jq -e exits 0 on no input: a command that printed nothing,
# a server not yet listening, would pass).
eventually() {
	if [ $# -lt 6 ] || [ "$5" != -- ] || ! is_status "$2" || [ -z "$4" ]; then
		malformed eventually "$@"
		return 1
	fi
	name=$1 tries=$(($2 * 10)) file=$3 expr=$4
	shift 5
	for _ in $(seq "$tries"); do
		"$@" >"$file" 2>&1
		[ -s "$file" ] && jq -e "$expr" "$file" >/dev/null 2>&1 && { ok "$name"; return 0; }
		sleep 0.1
	done
	bad "$name" "$file"
	return 1
}

# serving: the server $server answers on the socket $sock within 10 s;
# false when it does not, or exits first.
serving() {
	for _ in $(seq 100); do
		curl -sf --unix-socket "$sock" http://gpupool/v1/health >/dev/null 2>&1 && return 0
		kill -0 "$server" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# needs_root WHY: unless this shell is root, says "skipped: WHY" and ends
# the test as skipped (exit 77, as meson counts it).
needs_root() {
	[ "$(id -u)" = 0 ] && return 0
	echo "skipped: $1"
	finished=yes
	exit 77
}

# finish_hook runs in finish, before the counts: a test may redefine it to
# check what only ends with the test (tests/server/agent-lib.sh stops its
# server and reads its exit status).
finish_hook() { :; }

finish() {
	finish_hook
	finished=yes
	echo "$pass passed, $fail failed"
	if [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ]; then
		echo "FAIL no check ran"
		return 1
	fi
	[ "$fail" -eq 0 ]
}
