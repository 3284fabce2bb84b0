#!/bin/sh
# test-api-abuse.sh — the API holds under abuse (docs/api.md, "Limits
# under abuse"), end to end with `gpupool server --tcp PORT`:
#   - 300 slow connections (a header line every 5 s, coming back a second
#     after they are closed): for 16 s, past the 10 s header deadline, a
#     normal authenticated request over TCP, and one over the Unix socket,
#     answers 200 within 1 s every half second; the server closes each
#     slow connection at its deadline, not later, and those over the
#     bound per client at once;
#   - a client over its connection bound gets 503 saying which bound, how
#     many are open and what to do, while another uid on loopback and the
#     Unix socket are still answered; past the overall bound, everyone on
#     TCP gets 503 saying so;
#   - a tenant at its queue bound is refused with its count and bound,
#     while another tenant still submits;
#   - /metrics without a token has no tenant or task names, with a
#     tenant's token only its own, with the scrape token or the admin's
#     all of them, with a bad token 401;
#   - the options' limits: bounds that could never be reached, a scrape
#     token file others can read.
# The parts that need another uid (root runs slow clients as nobody)
# skip with a line when not root, or when the kernel does not say who
# owns a loopback socket.
# usage: test-api-abuse.sh PATH/TO/gpupool PATH/TO/slow-clients
set -u
gp=$1
slow=$2
. "$(dirname "$0")/../lib.sh"
# The tasks of a root server run as their tenants' users: they reach $tmp,
# and a copy of what they run (scripts/for-tasks.sh).
chmod 1777 "$tmp"
. "$(dirname "$0")/../../scripts/for-tasks.sh"
for_tasks "$tmp/bin" gp || { echo "cannot copy what the tasks run into $tmp/bin"; exit 1; }
sock=$tmp/server.sock
out=$tmp/out
export GPUPOOL_SOCKET="$sock" GPUPOOL_DB="$tmp/unused/gpupool.db"
export GPUPOOL_SIM_DEVICES=t4-16g:1 GPUPOOL_SIM_DIR="$tmp/sim"
unset GPUPOOL_TOKEN GPUPOOL_TOKEN_FILE
server=
admin=

# start NAME ARGS...: a server on the database $tmp/NAME/gpupool.db, the
# socket $sock and a free TCP port $port (another is tried when one is
# taken); $server is its pid, $admin its admin token, its output
# $tmp/NAME.log.
start() {
	name=$1
	shift
	for _ in 1 2 3 4 5; do
		port=$(shuf -i 20000-60999 -n 1)
		"$gp" server --db "$tmp/$name/gpupool.db" --socket "$sock" --tcp "$port" "$@" \
			>>"$tmp/$name.log" 2>&1 &
		server=$!
		for _ in $(seq 100); do
			if curl -sf --unix-socket "$sock" http://gpupool/v1/health >/dev/null 2>&1; then
				admin=$(cat "$tmp/$name/admin.token")
				return 0
			fi
			kill -0 "$server" 2>/dev/null || break
			sleep 0.1
		done
		grep -q 'the port is taken' "$tmp/$name.log" || break
	done
	bad "the server did not start" "$tmp/$name.log"
	finish
	exit 1
}

stop() {
	cleanup_hook
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	server=
}

# Tasks a server with --with-agent left running are stopped with it, and
# at exit.
cleanup_hook() {
	[ -n "$server" ] || return 0
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" \
		'http://gpupool/v1/tasks?state=running' 2>/dev/null | jq -r '.tasks[].pid' 2>/dev/null |
		while read -r pid; do kill -9 -"$pid" 2>/dev/null; done
}

# api NAME STATUS PATTERN VIA TOKEN METHOD PATH [CURL ARGS...]: the request,
# over VIA (tcp or unix), gets HTTP STATUS and a reply (headers and body,
# kept in $out) that matches PATTERN.
api() {
	if [ $# -lt 7 ] || ! is_status "$2" || [ -z "$3" ]; then
		malformed api "$@"
		return 1
	fi
	name=$1 want=$2 pattern=$3 via=$4 token=$5 method=$6 path=$7
	shift 7
	if [ -n "$token" ]; then set -- "$@" -H "Authorization: Bearer $token"; fi
	if [ "$via" = tcp ]; then
		set -- "$@" "http://127.0.0.1:$port$path"
	else
		set -- "$@" --unix-socket "$sock" "http://gpupool$path"
	fi
	got=$(curl -s -m 10 -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' -X "$method" "$@")
	cat "$tmp/headers" "$tmp/body" >"$out" 2>/dev/null
	if [ "$got" = "$want" ] && grep -Eq -- "$pattern" "$out"; then
		ok "$name"
	else
		echo "HTTP $got (want $want), reply:" >"$tmp/why"
		bad "$name" "$tmp/why" "$out"
	fi
}

# as_uid UID PATH: GET PATH over TCP as another user (root only), the
# body in $out (the user cannot write in $tmp), the status in $tmp/code.
as_uid() {
	setpriv --reuid="$1" --regid="$1" --clear-groups \
		curl -s -m 10 -w '\n%{http_code}\n' "http://127.0.0.1:$port$2" >"$tmp/reply"
	tail -n 1 "$tmp/reply" >"$tmp/code"
	sed '$d' "$tmp/reply" >"$out"
}

# Another uid on loopback needs root, and a kernel that says who owns a
# loopback socket (NETLINK_SOCK_DIAG); the server says when it cannot.
uids=no
if [ "$(id -u)" -ne 0 ]; then
	echo "skip: slow clients as another uid, and uids told apart on loopback (not root)"
elif ! command -v setpriv >/dev/null 2>&1; then
	echo "skip: slow clients as another uid (no setpriv)"
else
	uids=yes
fi

# ---- 300 slow connections ---------------------------------------------------------
# As root, the slow clients are nobody: a client of its own, held to its
# bound of 64, the requests below being root's. Otherwise they and the
# requests are one client, whose bound is raised above 300, so that the
# deadlines alone are what this part tests.
if [ "$uids" = yes ]; then
	start attack
	if grep -q 'cannot tell TCP clients on 127.0.0.1 apart by uid' "$tmp/attack.log"; then
		echo "skip: uids told apart on loopback (the kernel does not say who owns a socket here)"
		uids=no
		stop
	fi
fi
if [ "$uids" = no ]; then
	start attack-one-client --max-client-connections 400
	slow_as=
	admitted=300
else
	slow_as="--uid 65534"
	admitted=64
fi
# shellcheck disable=SC2086 # slow_as is empty or two words
"$slow" --port "$port" --connections 300 --every 5 --duration 17.5 --reconnect \
	--lives "$tmp/lives" $slow_as >"$tmp/slow.json" 2>"$tmp/slow.err" &
attack=$!
sleep 1
: >"$tmp/times"
end=$(($(date +%s) + 16))
while [ "$(date +%s)" -lt "$end" ]; do
	curl -s -o /dev/null -m 5 -w 'tcp %{http_code} %{time_total}\n' \
		-H "Authorization: Bearer $admin" "http://127.0.0.1:$port/v1/tasks" >>"$tmp/times"
	curl -s -o /dev/null -m 5 -w 'unix %{http_code} %{time_total}\n' \
		-H "Authorization: Bearer $admin" --unix-socket "$sock" http://gpupool/v1/tasks \
		>>"$tmp/times"
	sleep 0.5
done
exited "the slow clients end" "$attack"
# Per listener: how many, how many not 200 within 1 s, the slowest.
awk '{ n[$1]++; if ($2 != 200 || $3 > 1.0) late[$1]++; if ($3 > worst[$1]) worst[$1] = $3 }
     END { for (v in n) printf "%s %d %d %.4f\n", v, n[v], late[v], worst[v] }' \
	"$tmp/times" | sort >"$tmp/worst"
while read -r via n late worst; do
	if [ "$n" -ge 25 ] && [ "$late" -eq 0 ]; then
		ok "under 300 slow connections, $n requests over $via: all 200 within 1 s (slowest $worst s)"
	else
		bad "under 300 slow connections, requests over $via: $late of $n not 200 within 1 s" \
			"$tmp/times"
	fi
done <"$tmp/worst"
[ "$(wc -l <"$tmp/worst")" -eq 2 ] || bad "requests were made over TCP and the socket" "$tmp/times"
echo "    slow clients: $(cat "$tmp/slow.json")"
check "the slow clients had their 300 connections" \
	'.[0] | .opened >= 300 and .failed == 0' "$tmp/slow.json"
# lives: when each connection the server closed opened, and how long it
# lived (ms).
first=$(awk '$1 < 1000' "$tmp/lives" | wc -l)
if [ "$first" -ge 300 ]; then
	ok "the server closed each of the first 300 slow connections"
else
	bad "the server closed each of the first 300 slow connections (only $first)" "$tmp/lives"
fi
check "none later than its 10 s header deadline (+1.5 s)" '.[0].life_max_ms <= 11500' \
	"$tmp/slow.json"
held=$(awk '$2 >= 9500' "$tmp/lives" | wc -l)
if [ "$held" -ge "$admitted" ]; then
	ok "the $admitted admitted ones were held to the deadline, not closed before ($held lived 9.5 s or more)"
else
	bad "the $admitted admitted slow connections lived to the deadline (only $held did)" "$tmp/lives"
fi
if [ "$uids" = yes ]; then
	quick=$(awk '$2 <= 2000' "$tmp/lives" | wc -l)
	if [ "$quick" -ge 236 ]; then
		ok "nobody's connections over its bound of 64 were closed within 2 s ($quick of them)"
	else
		bad "nobody's connections over its bound were closed within 2 s (only $quick)" "$tmp/lives"
	fi
fi
stop

# ---- connection bounds --------------------------------------------------------------
start bounds --max-connections 6 --max-client-connections 4 --queue-max 10 \
	--tenant-queue-max 3
"$slow" --port "$port" --connections 4 --every 5 --duration 8 >/dev/null 2>&1 &
mine=$!
sleep 0.5
api "a client over its bound gets 503: which bound, how many are open, what to do" 503 \
	'"too many connections from this client \(127\.0\.0\.1(, uid [0-9]+)?\): 4 are open, its bound \(--max-client-connections 4\); close idle connections, then retry"' \
	tcp "$admin" GET /v1/health
if grep -q '^Retry-After: 1' "$out" && grep -qi '^Connection: close' "$out"; then
	ok "with Retry-After, and the connection closed"
else
	bad "with Retry-After, and the connection closed" "$out"
fi
api "the Unix socket still answers" 200 '"ok":true' unix "$admin" GET /v1/health
if [ "$uids" = yes ]; then
	as_uid 65534 /v1/health
	if [ "$(cat "$tmp/code")" = 200 ] && grep -q '"ok":true' "$out"; then
		ok "nobody is answered while root is over its bound"
	else
		bad "nobody is answered while root is over its bound" "$tmp/code" "$out"
	fi
	"$slow" --uid 65534 --port "$port" --connections 2 --every 5 --duration 6 >/dev/null 2>&1 &
	theirs=$!
	sleep 0.5
	as_uid 65533 /v1/health
	if [ "$(cat "$tmp/code")" = 503 ] && grep -q '"too many connections: 6 are open on the server.s TCP port, its bound (--max-connections 6); retry in a few seconds"' "$out"; then
		ok "past the overall bound, a new client gets 503 saying so"
	else
		bad "past the overall bound, a new client gets 503 saying so" "$tmp/code" "$out"
	fi
	api "and the Unix socket still answers" 200 '"ok":true' unix "$admin" GET /v1/health
	kill "$theirs" 2>/dev/null
fi
kill "$mine" 2>/dev/null
wait "$mine" 2>/dev/null
for _ in $(seq 20); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/v1/health" && break
	sleep 0.1
done
api "once its connections are closed, the client is answered again" 200 '"ok":true' tcp "" GET \
	/v1/health

# ---- a queue bound per tenant (--queue-max 10, --tenant-queue-max 3) ----------------------
task='{"command": "true", "mem_mib": 1, "compute_pct": 1}'
api "the admin adds vision" 201 '"token"' unix "$admin" POST /v1/tenants -d '{"name": "vision"}'
vision=$(jq -r .token "$tmp/body")
api "and nlp" 201 '"token"' unix "$admin" POST /v1/tenants -d '{"name": "nlp"}'
nlp=$(jq -r .token "$tmp/body")
for i in 1 2 3; do
	api "vision queues task $i of its 3" 201 '"state":"pending"' tcp "$vision" POST /v1/tasks -d "$task"
done
first=$(curl -s --unix-socket "$sock" -H "Authorization: Bearer $vision" \
	'http://gpupool/v1/tasks?state=pending' | jq '.tasks[0].id')
api "a fourth is refused: the tenant, its queued count, its bound, what to do" 503 \
	'"tenant vision has 3 queued tasks, its bound \(--tenant-queue-max\); wait for some to start or cancel some"' \
	tcp "$vision" POST /v1/tasks -d "$task"
expect "the client command says so too" 1 'tenant vision has 3 queued tasks' -- \
	env GPUPOOL_TOKEN="$vision" "$gp" submit --mem 1M --compute 1 -- true
api "another tenant still submits" 201 '"tenant":"nlp"' tcp "$nlp" POST /v1/tasks -d "$task"
api "vision cancels one" 200 '"state":"cancelled"' unix "$vision" POST "/v1/tasks/$first/cancel"
api "and has room for one again" 201 '"state":"pending"' tcp "$vision" POST /v1/tasks -d "$task"
stop

# ---- /metrics: who sees what ----------------------------------------------------------------
scrape=$tmp/scrape.token
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$scrape" && echo >>"$scrape")
start metrics --with-agent --run-dir "$tmp/run" --sample-ms 300 --metrics-token-file "$scrape"
api "vision is added" 201 '"token"' unix "$admin" POST /v1/tenants \
	-d '{"name": "vision", "mem_guaranteed_mib": 4096, "compute_guaranteed_pct": 50}'
vision=$(jq -r .token "$tmp/body")
api "nlp is added" 201 '"token"' unix "$admin" POST /v1/tenants \
	-d '{"name": "nlp", "mem_guaranteed_mib": 4096, "compute_guaranteed_pct": 50}'
nlp=$(jq -r .token "$tmp/body")
api "vision runs vision-train" 201 '"name":"vision-train"' unix "$vision" POST /v1/tasks \
	-d '{"name": "vision-train", "command": ["sleep", "20"], "mem_mib": 512, "compute_pct": 10}'
api "nlp runs nlp-train" 201 '"name":"nlp-train"' unix "$nlp" POST /v1/tasks \
	-d '{"name": "nlp-train", "command": ["sleep", "20"], "mem_mib": 512, "compute_pct": 10}'
metrics() { # TOKEN VIA -> $tmp/metrics.txt, the status in $tmp/code
	if [ "$2" = tcp ]; then set -- "$1" "http://127.0.0.1:$port/metrics"; else
		set -- "$1" --unix-socket "$sock" http://gpupool/metrics; fi
	token=$1
	shift
	if [ -n "$token" ]; then set -- -H "Authorization: Bearer $token" "$@"; fi
	curl -s -o "$tmp/metrics.txt" -w '%{http_code}' "$@" >"$tmp/code"
}
for _ in $(seq 100); do
	metrics "$(cat "$scrape")" unix
	grep -q 'name="vision-train"' "$tmp/metrics.txt" &&
		grep -q 'name="nlp-train"' "$tmp/metrics.txt" && break
	sleep 0.1
done
# has NAME PATTERN... / lacks NAME PATTERN...: of $tmp/metrics.txt, 200.
has() {
	name=$1
	shift
	for p in "$@"; do
		if [ "$(cat "$tmp/code")" != 200 ] || ! grep -Eq -- "$p" "$tmp/metrics.txt"; then
			echo "HTTP $(cat "$tmp/code"), no match for $p:" >"$tmp/why"
			bad "$name" "$tmp/why" "$tmp/metrics.txt"
			return
		fi
	done
	ok "$name"
}
lacks() {
	name=$1
	shift
	for p in "$@"; do
		if [ "$(cat "$tmp/code")" != 200 ] || grep -Eq -- "$p" "$tmp/metrics.txt"; then
			echo "HTTP $(cat "$tmp/code"), has $p:" >"$tmp/why"
			bad "$name" "$tmp/why" "$tmp/metrics.txt"
			return
		fi
	done
	ok "$name"
}
has "the scrape token sees every tenant's tasks" 'name="vision-train",tenant="vision"' \
	'name="nlp-train",tenant="nlp"' 'tenant="admin"'
metrics "$admin" unix
has "so does the admin" 'name="vision-train"' 'name="nlp-train"'
metrics "" unix
has "no token: the pool's series" '^gpupool_queue_length 0$' '^gpupool_tasks\{state="running"\} 2$' \
	'^gpupool_device_up\{'
lacks "no token: no tenant, no task, no name" 'tenant=' 'task=' 'name=' 'vision' 'nlp' 'admin'
metrics "" tcp
lacks "no token over TCP: the same" 'tenant=' 'task=' 'vision' 'nlp'
metrics "$vision" tcp
has "vision's token: the pool's series and vision's own" '^gpupool_device_up\{' \
	'gpupool_task_memory_allocated_bytes\{task="[0-9]+",name="vision-train",tenant="vision"\}' \
	'gpupool_tenant_quota_memory_bytes\{tenant="vision",part="guaranteed"\} 4294967296'
lacks "vision's token: nothing of nlp's or the admin's" 'nlp' 'tenant="admin"'
api "a bad token is 401, saying what to send" 401 \
	'unknown token: send a tenant.s token, the admin.s or the scrape token \(--metrics-token-file\), or none' \
	tcp "not-a-token" GET /metrics
stop

# ---- the options' limits ----------------------------------------------------------------------
expect "a tenant bound over the queue's is refused, saying what to give" 2 \
	'--tenant-queue-max 20 is over --queue-max 10, so it could never be reached; give at most 10, or raise --queue-max' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --queue-max 10 --tenant-queue-max 20 --check-config
expect "so is a client's connection bound over the overall one" 2 \
	'--max-client-connections 9 is over --max-connections 8' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --max-connections 8 --max-client-connections 9 \
	--check-config
expect "left out, the tenant bound is the default within the queue's" 0 \
	'queue max  10, 10 per tenant' -- "$gp" server --db "$tmp/x/gpupool.db" --queue-max 10 --check-config
expect "--check-config shows the deadlines and bounds" 0 \
	'deadlines  headers 10000 ms, body 30000 ms.*conn. max  512, 64 per client' -- \
	sh -c "'$gp' server --db '$tmp/x/gpupool.db' --check-config | tr '\n' ' '"
expect "the deadlines' range is checked" 2 '--header-timeout-ms "50" must be a whole number from 100 to 3600000' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --header-timeout-ms 50 --check-config
chmod 644 "$scrape"
expect "a scrape token file others can read is refused" 2 \
	"--metrics-token-file $scrape: its mode 644 lets others than its owner read it; chmod 600 it" -- \
	"$gp" server --db "$tmp/x/gpupool.db" --metrics-token-file "$scrape" --check-config
(umask 077 && echo short >"$tmp/short.token")
expect "so is a short token" 2 'the token is shorter than 16 characters' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --metrics-token-file "$tmp/short.token" --check-config
if [ -e "$tmp/x" ]; then bad "the refused options made nothing" /dev/null; else ok "the refused options made nothing"; fi
finish
