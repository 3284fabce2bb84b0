# doubles-lib.sh — what the tests on the API server double share
# (test-e2e.sh, test-reclaim.sh); sourced after tests/lib.sh, with $here
# the tests/k8s folder.

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for WHAT SECONDS COMMAND...: COMMAND succeeds within SECONDS (0.1 s
# steps); the time it took, in ms, in $waited_ms. When it does not, that
# is a failure (counted: a check after `wait_for ... &&` is never reached).
wait_for() {
	what=$1 limit=$2
	shift 2
	start=$(date +%s%N)
	for _ in $(seq $((limit * 10))); do
		if "$@" >/dev/null 2>&1; then
			waited_ms=$((($(date +%s%N) - start) / 1000000))
			return 0
		fi
		sleep 0.1
	done
	bad "waiting for $what ($limit s)"
	return 1
}

# double_start [OPTIONS...]: the API server double on a free port, with
# these options; its pid in $double, its URL in $api.
double_start() {
	node "$here/apiserver-double.js" --port 0 "$@" >"$tmp/double.out" 2>"$tmp/double.err" &
	double=$!
	wait_for "the API server double" 10 double_port
	api=http://127.0.0.1:$(double_port)
}
double_port() {
	port=$(head -n 1 "$tmp/double.out" | jq -r '.port // empty' 2>/dev/null)
	[ -n "$port" ] && echo "$port"
}

# event_on NAMESPACE POD REASON TEXT: the pod has an Event of REASON
# whose message has TEXT.
event_on() {
	curl -s "$api/api/v1/namespaces/$1/events" | jq -e --arg pod "$2" --arg r "$3" \
		--arg t "$4" '[.items[] | select(.involvedObject.name == $pod and .reason == $r and
		(.message | contains($t)))] | length >= 1'
}
