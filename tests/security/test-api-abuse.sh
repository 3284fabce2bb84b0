#!/bin/sh
# test-api-abuse.sh — the API holds under abuse (docs/api.md, "Limits
# under abuse"), end to end with `gpupool server --tcp PORT`:
#   - 300 slow connections (a header line every 5 s, coming back a second
#     after they are closed): for 16 s, past the 10 s header deadline, a
#     normal authenticated request over TCP, and one over the Unix socket,
#     answers 200 within 1 s every half second; the server closes each
#     slow connection at its deadline, not later, and those over the
#     bound per client at once;
#   - 640 slow connections of one tenant's uid from 64 loopback addresses
#     (127.0.0.2 ... 127.0.0.65): another tenant's request and root's, over
#     TCP, answer 200 within 1 s every half second, and the attacker is one
#     client, held to its bound of 64, however many addresses it takes;
#   - a client over its connection bound gets 503 saying which bound, how
#     many are open and what to do, while another uid on loopback and the
#     Unix socket are still answered; past the overall bound, a client
#     holding few connections takes the place of a slow one of the client
#     holding most, and one as greedy as any other gets 503 saying so;
#   - a Host that is not the server's gets 421 on TCP (DNS rebinding), its
#     names and --allowed-hosts pass, the Unix socket is not concerned; a
#     body not said to be JSON gets 415, with or without a Content-Type;
#   - unknown tokens are logged (who, what request, never the token) and,
#     past 5 from one client, make its requests with a token wait (429,
#     Retry-After) for longer each time, while other clients and the Unix
#     socket are answered; /metrics counts them;
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
		if serving; then
			admin=$(cat "$tmp/$name/admin.token")
			return 0
		fi
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
	# A body is JSON unless the call says otherwise (or -H 'Content-Type:').
	case "$*" in *Content-Type:*) ;; *) set -- "$@" -H 'Content-Type: application/json' ;; esac
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

# as_uid UID PATH [CURL ARGS...]: GET PATH over TCP as another user (root
# only; UID "" as this test's own), the body in $out (the user cannot
# write in $tmp), the status in $tmp/code.
as_uid() {
	uid=$1 path=$2
	shift 2
	if [ -n "$uid" ]; then set -- setpriv --reuid="$uid" --regid="$uid" --clear-groups curl "$@"; else
		set -- curl "$@"; fi
	"$@" -s -m 10 -w '\n%{http_code}\n' "http://127.0.0.1:$port$path" >"$tmp/reply"
	tail -n 1 "$tmp/reply" >"$tmp/code"
	sed '$d' "$tmp/reply" >"$out"
}

# answered NAME UID... : over TCP, each UID's request (as the uid, root
# with the admin's token) got 200 within 1 s every time ($tmp/times: one
# line per request, "UID STATUS SECONDS"), at least 10 times (one every
# half second for 12 s, fewer on a busy host).
answered() {
	name=$1
	shift
	for who in "$@"; do
		awk -v who="$who" '$1 == who { n++; if ($2 != 200 || $3 > 1.0) late++; if ($3 > worst) worst = $3 }
			END { printf "%d %d %.4f\n", n, late, worst }' "$tmp/times" >"$tmp/worst"
		read -r n late worst <"$tmp/worst"
		if [ "$n" -ge 10 ] && [ "$late" -eq 0 ]; then
			ok "$name: uid $who, $n requests over TCP, all 200 within 1 s (slowest $worst s)"
		else
			bad "$name: uid $who, $late of $n requests not 200 within 1 s" "$tmp/times"
		fi
	done
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
	if [ "$n" -ge 16 ] && [ "$late" -eq 0 ]; then
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

# ---- many loopback addresses -----------------------------------------------------------
# A tenant's task that takes a loopback address per connection is still
# one client: its uid. 640 slow connections (10 from each of 127.0.0.2 ...
# 127.0.0.65, back a second after they are closed) as nobody, while
# another tenant (uid 65533) and root ask over TCP every half second.
if [ "$uids" = yes ]; then
	start many
	api "a tenant of another uid is added" 201 '"token"' unix "$admin" POST /v1/tenants \
		-d '{"name": "neighbour", "unlimited": true}'
	neighbour=$(jq -r .token "$tmp/body")
	"$slow" --port "$port" --connections 640 --addresses 64 --every 5 --duration 14 \
		--reconnect --uid 65534 --lives "$tmp/many.lives" >"$tmp/many.json" 2>"$tmp/many.err" &
	attack=$!
	sleep 1
	: >"$tmp/times"
	end=$(($(date +%s) + 12))
	while [ "$(date +%s)" -lt "$end" ]; do
		setpriv --reuid=65533 --regid=65533 --clear-groups curl -s -o /dev/null -m 5 \
			-w '65533 %{http_code} %{time_total}\n' -H "Authorization: Bearer $neighbour" \
			"http://127.0.0.1:$port/v1/tasks" >>"$tmp/times"
		curl -s -o /dev/null -m 5 -w '0 %{http_code} %{time_total}\n' \
			-H "Authorization: Bearer $admin" "http://127.0.0.1:$port/v1/tasks" >>"$tmp/times"
		sleep 0.5
	done
	exited "the slow clients from 64 addresses end" "$attack"
	echo "    slow clients from 64 addresses: $(cat "$tmp/many.json")"
	answered "under 640 slow connections from 64 loopback addresses" 65533 0
	check "the slow clients had their 640 connections, from 64 addresses" \
		'.[0] | .opened >= 640 and .failed == 0' "$tmp/many.json"
	# Held to the 10 s deadline: the admitted ones, which are one client's.
	held=$(awk '$2 >= 9500' "$tmp/many.lives" | wc -l)
	if [ "$held" -ge 32 ] && [ "$held" -le 72 ]; then
		ok "64 addresses of one uid are one client: $held of its connections held, its bound 64"
	else
		bad "64 addresses of one uid are one client: $held of its connections held (want about 64)" \
			"$tmp/many.json"
	fi
	stop
fi

# ---- connection bounds --------------------------------------------------------------
start bounds --max-connections 6 --max-client-connections 4 --queue-max 10 \
	--tenant-queue-max 3
"$slow" --port "$port" --connections 4 --every 5 --duration 8 >/dev/null 2>&1 &
mine=$!
sleep 0.5
api "a client over its bound gets 503: which bound, how many are open, what to do" 503 \
	'"too many connections from this client \((uid [0-9]+ on loopback|loopback, uid unknown)\): 4 are open, its bound \(--max-client-connections 4\); close idle connections, then retry"' \
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
	# nobody's 2 slow connections fill the listener (6): root holds 4 of
	# them, all waiting for their headers.
	"$slow" --uid 65534 --port "$port" --connections 2 --every 5 --duration 7 >/dev/null 2>&1 &
	theirs=$!
	sleep 0.5
	as_uid 65533 /v1/health
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" http://gpupool/metrics \
		>"$tmp/metrics.txt"
	if [ "$(cat "$tmp/code")" = 200 ] && grep -q '"ok":true' "$out" &&
		grep -q '^gpupool_http_connections_evicted_total 1$' "$tmp/metrics.txt"; then
		ok "past the overall bound, a client with none takes the place of a slow connection of the client holding most"
	else
		bad "past the overall bound, a client with none takes the place of a slow connection of the client holding most" \
			"$tmp/code" "$out" "$tmp/metrics.txt"
	fi
	# Root 3, nobody 3: nobody's next finds no client holding more than it.
	"$slow" --uid 65534 --port "$port" --connections 1 --every 5 --duration 6 >/dev/null 2>&1 &
	more=$!
	sleep 0.5
	as_uid 65534 /v1/health
	if [ "$(cat "$tmp/code")" = 503 ] && grep -q '"too many connections: 6 are open on the server.s TCP port, its bound (--max-connections 6); retry in a few seconds"' "$out"; then
		ok "past the overall bound, a client as greedy as any other gets 503 saying so"
	else
		bad "past the overall bound, a client as greedy as any other gets 503 saying so" "$tmp/code" "$out"
	fi
	api "and the Unix socket still answers" 200 '"ok":true' unix "$admin" GET /v1/health
	kill "$theirs" "$more" 2>/dev/null
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
api "the admin adds vision" 201 '"token"' unix "$admin" POST /v1/tenants -d '{"name": "vision", "unlimited": true}'
vision=$(jq -r .token "$tmp/body")
api "and nlp" 201 '"token"' unix "$admin" POST /v1/tenants -d '{"name": "nlp", "unlimited": true}'
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

# ---- refused before a handler: the Host, a body's type ---------------------------------------
start gate --allowed-hosts gpu1.example.com
api "a Host that is not the server's gets 421 on TCP: which, the names, why, what to do" 421 \
	'"the Host header \\"evil\.example:[0-9]+\\" is not a name of this server \(localhost, 127\.0\.0\.1, \[::1\], .*gpu1\.example\.com\): a page of another site may not reach the API through a name of its own \(DNS rebinding\); if the name is this server.s, add it with --allowed-hosts"' \
	tcp "$admin" GET /v1/tasks -H "Host: evil.example:$port"
for host in "localhost:$port" "127.0.0.1:$port" "[::1]:$port" "$(hostname):$port" \
	"gpu1.example.com:$port" "LocalHost.:$port" localhost; do
	api "Host $host is one of the server's names" 200 '"tasks"' tcp "$admin" GET /v1/tasks \
		-H "Host: $host"
done
api "the Unix socket does not look at the Host" 200 '"ok":true' unix "" GET /v1/health \
	-H "Host: evil.example"
expect "the CLI over TCP still works" 0 'admin' -- \
	env GPUPOOL_SOCKET="http://127.0.0.1:$port" GPUPOOL_TOKEN="$admin" "$gp" tenant ls
api "a body sent as a form gets 415: what it must be, what came" 415 \
	'"the request body must be JSON, sent with \\"Content-Type: application/json\\"; this one came with \\"Content-Type: application/x-www-form-urlencoded\\""' \
	tcp "$admin" POST /v1/tenants -H 'Content-Type: application/x-www-form-urlencoded' \
	-d '{"name": "x1"}'
api "a body with no Content-Type gets 415" 415 'this one came with no Content-Type"' \
	tcp "$admin" POST /v1/tenants -H 'Content-Type:' -d '{"name": "x2"}'
api "text/plain gets 415 (what a page may send to another site unasked)" 415 \
	'came with \\"Content-Type: text/plain;charset=UTF-8\\"' \
	tcp "$admin" POST /v1/tenants -H 'Content-Type: text/plain;charset=UTF-8' -d '{"name": "x3"}'
api "... on the Unix socket too" 415 'must be JSON' unix "$admin" PATCH /v1/tenants/x3 \
	-H 'Content-Type: text/plain' -d '{"compute_guaranteed_pct": 10}'
api "application/json with a charset, in any case, is JSON" 201 '"name":"x4"' \
	tcp "$admin" POST /v1/tenants -H 'Content-Type: Application/JSON; charset=utf-8' \
	-d '{"name": "x4", "unlimited": true}'
api "a POST without a body needs no Content-Type" 200 '"token"' \
	tcp "$admin" POST /v1/tenants/x4/token -H 'Content-Type:'
curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" http://gpupool/v1/tenants >"$out"
check "nothing refused was done: x4 alone was added" '[.[0].tenants[].name] | index("x1") == null and index("x2") == null and index("x3") == null and index("x4") != null' "$out"

# ---- unknown tokens: logged, and their client waits --------------------------------------------
# As nobody where another uid can be used (root's requests then show that
# other clients do not wait), else as this test's own uid.
if [ "$uids" = yes ]; then who=65534; else who=; fi
wrong=0123456789abcdef-not-a-token-at-all
codes=
for _ in 1 2 3 4 5 6; do
	as_uid "$who" /v1/tasks -H "Authorization: Bearer $wrong"
	codes="$codes $(cat "$tmp/code")"
done
if [ "$codes" = " 401 401 401 401 401 401" ]; then
	ok "the first unknown tokens are answered 401"
else
	bad "the first unknown tokens are answered 401 (got$codes)" "$out"
fi
as_uid "$who" /v1/tasks -D - -H "Authorization: Bearer $wrong"
if [ "$(cat "$tmp/code")" = 429 ] && grep -q '^Retry-After: 1' "$out" &&
	grep -Eq '"6 unknown tokens from this client \(uid [0-9]+ on loopback\) in the last 15 minutes: its requests with a token wait 1 s more; check the token' "$out"; then
	ok "past 5, its next request with a token gets 429: how many, the wait, Retry-After"
else
	bad "past 5, its next request with a token gets 429" "$tmp/code" "$out"
fi
as_uid "$who" /v1/tasks -H "Authorization: Bearer $admin"
if [ "$(cat "$tmp/code")" = 429 ]; then ok "... even with a good token (it is not looked at)"; else
	bad "... even with a good token" "$tmp/code" "$out"
fi
as_uid "$who" /v1/health
if [ "$(cat "$tmp/code")" = 200 ]; then ok "... while a request without a token is answered"; else
	bad "... while a request without a token is answered" "$tmp/code" "$out"
fi
api "the Unix socket does not wait" 200 '"tasks"' unix "$admin" GET /v1/tasks
if [ "$uids" = yes ]; then
	api "another client (root) does not wait" 200 '"tasks"' tcp "$admin" GET /v1/tasks
	api "... and its own unknown token is a plain 401" 401 'unknown token' tcp "$wrong" GET /v1/tasks
fi
sleep 1.2
as_uid "$who" /v1/tasks -H "Authorization: Bearer $wrong"
first=$(cat "$tmp/code")
as_uid "$who" /v1/tasks -D - -H "Authorization: Bearer $wrong"
if [ "$first" = 401 ] && [ "$(cat "$tmp/code")" = 429 ] && grep -q '^Retry-After: 2' "$out"; then
	ok "after the wait, a request is looked at again, and the next unknown token doubles the wait"
else
	bad "after the wait, a request is looked at again ($first), the next wait doubled" "$tmp/code" "$out"
fi
if grep -Eq "unknown token from uid [0-9]+ on loopback on TCP: GET /v1/tasks, a token of ${#wrong} characters; 7 from this client in the last 15 minutes; its requests with a token now wait 2 s" \
	"$tmp/gate.log" && ! grep -q -- "$wrong" "$tmp/gate.log"; then
	ok "each unknown token is logged: who, the request, its length, the count, the wait; never the token"
else
	bad "each unknown token is logged, never the token" "$tmp/gate.log"
fi
curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" http://gpupool/metrics \
	>"$tmp/metrics.txt"
unknown=7
if [ "$uids" = yes ]; then unknown=8; fi
if grep -q "^gpupool_http_token_failures_total $unknown\$" "$tmp/metrics.txt" &&
	grep -q '^gpupool_http_token_delayed_total 3$' "$tmp/metrics.txt"; then
	ok "/metrics counts the unknown tokens ($unknown) and the requests that waited (3)"
else
	bad "/metrics counts the unknown tokens and the requests that waited" "$tmp/metrics.txt"
fi
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
expect "--allowed-hosts takes names, not ports" 2 \
	'--allowed-hosts: "gpu1:8470" is not a host name; give names without ports' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --allowed-hosts gpu1.example.com,gpu1:8470 --check-config
expect "a scrape token file others can read is refused" 2 \
	"--metrics-token-file $scrape: its mode 644 lets others than its owner read it; chmod 600 it" -- \
	"$gp" server --db "$tmp/x/gpupool.db" --metrics-token-file "$scrape" --check-config
(umask 077 && echo short >"$tmp/short.token")
expect "so is a short token" 2 'the token is shorter than 16 characters' -- \
	"$gp" server --db "$tmp/x/gpupool.db" --metrics-token-file "$tmp/short.token" --check-config
if [ -e "$tmp/x" ]; then bad "the refused options made nothing" /dev/null; else ok "the refused options made nothing"; fi
finish
