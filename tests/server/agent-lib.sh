# agent-lib.sh — what the tests of `gpupool server --with-agent` share;
# sourced after ../lib.sh, with $gp set. The server and its simulated
# devices (GPUPOOL_SIM_DEVICES, set by the test) live in $tmp; at exit the
# tasks it started are stopped too (a server leaves them running).
export GPUPOOL_SOCKET=$tmp/server.sock GPUPOOL_TOKEN_FILE=$tmp/state/admin.token
export GPUPOOL_SIM_DIR=$tmp/sim
# A server run as root runs tasks as their tenants' users: they reach the
# simulated devices and the regions in $tmp, and write their markers there,
# as they would in /var/tmp (sticky, world-writable); the server's own files
# (the database, the token, the logs) are in $tmp/state, which it makes 0700.
chmod 1777 "$tmp"
# What those tasks run may be out of their reach (a checkout in a 0700
# directory): copies in $tmp/bin (scripts/for-tasks.sh), and the tasks are
# submitted from $tmp.
# (tests/server/ by default; a test elsewhere sets $top to the checkout.)
. "${top:-$(dirname "$0")/../..}/scripts/for-tasks.sh"
for_tasks "$tmp/bin" gp gl hog || { echo "cannot copy what the tasks run into $tmp/bin"; exit 1; }
cd "$tmp"

# server_start ARGS...: starts the server with this machine's agent ($server
# is its pid, its output in $tmp/server.log) and waits until it answers.
# Its tasks' automatic uids are the first range no running server holds
# (--task-uid-base auto, unless ARGS name one): another gpupool server on
# the machine (a demo, a test beside) is no reason for a test to fail.
server_start() {
	case " $* " in
	*" --task-uid-base "*) uids= ;;
	*) uids="--task-uid-base auto" ;;
	esac
	# shellcheck disable=SC2086 # $uids is two words or none
	"$gp" server --db "$tmp/state/gpupool.db" --with-agent --run-dir "$tmp/run" $uids "$@" \
		>>"$tmp/server.log" 2>&1 &
	server=$!
	for _ in $(seq 100); do
		"$gp" task ls >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	bad "the server did not start" "$tmp/server.log"
	return 1
}

# as TOKEN COMMAND...: gpupool as the tenant whose token is TOKEN.
as() {
	token=$1
	shift
	GPUPOOL_TOKEN=$token GPUPOOL_TOKEN_FILE= "$gp" "$@"
}

# wait_for NAME SECONDS ID JQ: waits until task ID's JSON (kept in
# $tmp/task.json) satisfies JQ.
wait_for() {
	name=$1 seconds=$2 id=$3 expr=$4
	for _ in $(seq $((seconds * 10))); do
		"$gp" task show "$id" -o json >"$tmp/task.json" 2>&1
		if jq -e "$expr" "$tmp/task.json" >/dev/null 2>&1; then
			ok "$name"
			return 0
		fi
		sleep 0.1
	done
	bad "$name" "$tmp/task.json"
	return 1
}

# log ID: the task's log as the server keeps it, read as the admin
# ($admin, the test's).
log() {
	as "$admin" logs "$1" 2>/dev/null
}

now_ms() {
	date +%s%3N
}

# alert_within NAME SECONDS JQ: the admin's alerts satisfy JQ (over the list
# of alerts) within SECONDS.
alert_within() {
	eventually "$1" "$2" "$tmp/alerts.json" ".alerts | $3" -- as "$admin" alerts -o json
}

# In finish: the server (if it still runs) stops on SIGTERM and exits 0,
# like any program a test runs; first, while it still answers, the tasks
# it runs are stopped (cleanup_hook: a server leaves its tasks running).
finish_hook() {
	[ -n "${server:-}" ] && kill -0 "$server" 2>/dev/null || return 0
	cleanup_hook
	stops "the server stops on SIGTERM" "$server" || cat "$tmp/server.log"
	server=
}

# At exit, before lib.sh's cleanup: the server's running tasks.
cleanup_hook() {
	"$gp" task ls -o json 2>/dev/null | jq -r '.tasks[] | select(.state == "running") | .pid' |
		while read -r pid; do kill -9 -"$pid" 2>/dev/null; done
}
