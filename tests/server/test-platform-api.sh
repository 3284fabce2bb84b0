#!/bin/sh
# test-platform-api.sh — what the API serves for the console's pages of
# the whole platform (issue 27; docs/api.md), on a real server with this
# machine's agent on two simulated T4s, sampling every 0.3 s:
#   - the meter's history (GET /v1/series): each card's memory used (the
#     simulated card's, as NVML says), held and total, each tenant's, the
#     queue's length and wait, in buckets; a tenant sees every card and
#     the queue, and its own tenant series only; the window is checked;
#   - how old the server and its history are (GET /v1/status: started,
#     metered_since_ms);
#   - one task's usage records (GET /v1/usage?task=ID): the owner's and
#     the admin's, another tenant refused;
#   - the audit log filtered by who, action (or its prefix), object and
#     time, and paged both ways (before, after, next_before, next_after);
#   - a service's steps with their reasons (GET /v1/services/NAME: the
#     autoscaler's grow, then a step by hand: PATCH, `gpupool service
#     scale`) and its replicas' placements; a count outside the bounds is
#     refused, another tenant does not find it.
# usage: test-platform-api.sh GPUPOOL GPULOAD
gp=$1 gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
start_ms=$(now_ms)
server_start --sample-ms 300 || { finish; exit 1; }
sock=$GPUPOOL_SOCKET
admin=$(cat "$GPUPOOL_TOKEN_FILE")

runs "tenant alpha is added (a quota of 150 % and 16 GiB)" "$tmp/alpha.json" -- \
	"$gp" tenant add alpha --compute-guaranteed 150 --mem-guaranteed 16G -o json
alpha=$(jq -r .token "$tmp/alpha.json")
runs "tenant beta is added" "$tmp/beta.json" -- "$gp" tenant add beta --unlimited -o json
beta=$(jq -r .token "$tmp/beta.json")

# ---- the meter's history ---------------------------------------------------------
# alpha holds 2 GiB of a T4 and its process allocates 1 GiB of it.
task=$(as "$alpha" submit -q --name holder --mem 2G --compute 20 --model T4 -- \
	"$gl" alloc --mib 1024 --hold 60)
wait_for "alpha's task runs" 20 "$task" '.state == "running"'
since=$(($(now_ms) - 60000))
eventually "GET /v1/series: the card alpha's task is on shows 1 GiB used and 2 GiB held" 15 \
	"$tmp/series.json" \
	'[.devices[] | select([.points[] | select(.memory_used_max_mib >= 1024 and
	   .allocated_memory_max_mib == 2048)] | length > 0)] | length == 1' -- \
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $admin" \
	"http://gpupool/v1/series?since_ms=$since"
check "... both cards, each with its model, index, total and points" \
	'.[0] | (.devices | length == 2) and all(.devices[]; .memory_total_mib > 15000 and
	  (.model | test("T4")) and (.index | type == "number") and (.points | length > 0) and
	  all(.points[]; .samples >= 1))' "$tmp/series.json"
check "... alpha's tenant series: 2 GiB and 20 % held" \
	'[.[0].tenants[] | select(.tenant == "alpha") | .points[] |
	  select(.allocated_memory_max_mib == 2048 and .allocated_compute_pct == 20)] | length > 0' \
	"$tmp/series.json"
check "... the queue's series, sampled since the server began" \
	'.[0] | (.queue | length > 0) and .metered_since_ms >= '"$start_ms"' and .step_ms >= 1000' \
	"$tmp/series.json"
api "a tenant sees the cards and the queue, and its own series only" 200 '"tenant":"alpha"' \
	"$alpha" GET "/v1/series?since_ms=$since"
check "... no other tenant's" '(.[0].tenants | map(.tenant) == ["alpha"]) and (.[0].devices | length == 2)' \
	"$tmp/out"
api "beta (nothing running) has no tenant series, and sees the cards" 200 '"devices":\[\{' \
	"$beta" GET "/v1/series?since_ms=$since"
check "... none of alpha's" '.[0].tenants == []' "$tmp/out"
api "beta may not name alpha" 403 'is not you' "$beta" GET "/v1/series?tenant=alpha"
api "a window that ends before it starts is refused" 400 'until_ms' \
	"$admin" GET "/v1/series?since_ms=2000&until_ms=1000"
api "a step that makes too many buckets is refused" 400 'step_ms' \
	"$admin" GET "/v1/series?since_ms=0&until_ms=100000000&step_ms=1000"

# ---- how old the server is ---------------------------------------------------------
api "GET /v1/status says when the server started and since when it meters" 200 '"started_ms"' \
	"$beta" GET /v1/status
check "... both after this test began, and not in the future" \
	'.[0] | .started_ms >= '"$start_ms"' and .metered_since_ms >= .started_ms and
	 .metered_since_ms <= (.time | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + 1000' "$tmp/out"

# ---- one task's records ---------------------------------------------------------------
eventually "GET /v1/usage?task=ID: alpha's task's records, each of 2 GiB and 20 %" 10 \
	"$tmp/usage.json" '.task == '"$task"' and (.usage | length > 1) and
	 all(.usage[]; .task == '"$task"' and .mem_mib == 2048 and .compute_pct == 20)' -- \
	curl -s --unix-socket "$sock" -H "Authorization: Bearer $alpha" \
	"http://gpupool/v1/usage?task=$task"
api "the admin reads them too" 200 '"task":'"$task" "$admin" GET "/v1/usage?task=$task"
api "beta may not read alpha's task's records" 403 'another tenant' "$beta" GET "/v1/usage?task=$task"
api "a task with a month is refused" 400 'alone' "$alpha" GET "/v1/usage?task=$task&month=2026-01"
"$gp" task cancel "$task" >/dev/null

# ---- the audit log, filtered and paged --------------------------------------------------
for i in 1 2 3 4 5; do
	as "$alpha" submit -q --name "page-$i" --mem 1G --compute 5 -- true >/dev/null
done
api "GET /v1/audit?who=alpha&action=task.&limit=2: the newest two of alpha's task actions" 200 \
	'"next_before":[0-9]' "$admin" GET '/v1/audit?who=alpha&action=task.&limit=2'
cp "$tmp/out" "$tmp/page1.json"
check "... alpha's, task.*, oldest first, one page of two" \
	'.[0] | (.audit | length == 2) and all(.audit[]; .who == "alpha" and (.action | startswith("task.")))
	 and .audit[0].id < .audit[1].id and .next_after == null and .next_before == .audit[0].id' \
	"$tmp/page1.json"
before=$(jq .next_before "$tmp/page1.json")
api "the page before it (?before=)" 200 '"audit"' "$admin" GET "/v1/audit?who=alpha&action=task.&limit=2&before=$before"
cp "$tmp/out" "$tmp/page2.json"
check "... older entries of the same filter; the newer page is after it (next_after)" \
	'(.[0].audit | length >= 1) and all(.[0].audit[]; .who == "alpha" and .id < '"$before"') and
	 .[0].next_after == (.[0].audit | last | .id)' "$tmp/page2.json"
after=$(jq '.audit | last | .id' "$tmp/page2.json")
api "and ?after= it gives the first page back" 200 '"audit"' "$admin" GET "/v1/audit?who=alpha&action=task.&limit=2&after=$after"
check "... the same entries" '[.[0].audit[].id] == [.[1].audit[].id] and .[0].next_before != null' \
	"$tmp/out" "$tmp/page1.json"
api "an object: the tasks's own entries" 200 '"object":"'"$task"'"' "$admin" GET "/v1/audit?object=$task"
check "... only those" 'all(.[0].audit[]; .object == "'"$task"'") and (.[0].audit | length >= 2)' "$tmp/out"
api "a time range in the future holds nothing" 200 '"audit":\[\]' "$admin" GET "/v1/audit?since_ms=99999999999999"
api "after and before together are refused" 400 'not both' "$admin" GET '/v1/audit?after=1&before=3'
api "a tenant may not read the audit log" 403 'only the admin' "$alpha" GET '/v1/audit?who=alpha'

# ---- a service's steps ---------------------------------------------------------------------
runs "alpha's service web: one replica of 20 %, out above 50 % for 1 s, share up to 40 %" \
	"$tmp/svc.json" -- as "$alpha" service create web --mem 1G --compute 20 --model T4 \
	--min 1 --max 3 --out 50 --out-window 1 --in-window 600 --cooldown 1 --share-max 40 \
	-o json -- "$gl" serve --qps 200 --kernel-us 5000 --duration 600
show() { curl -s --unix-socket "$sock" -H "Authorization: Bearer $alpha" http://gpupool/v1/services/web; }
eventually "its replica runs, placed on a card (its placement named)" 20 "$tmp/web.json" \
	'[.replica_tasks[] | select(.state == "running" and (.placement | startswith("GPU-")))] | length >= 1' -- show
eventually "the autoscaler's step is in its steps, with its reason (busy: the share grows)" 30 \
	"$tmp/web.json" '[.steps[] | select(.who == "service:web" and .step == "grow" and
	 (.reason | test("utilization [0-9]+ % above 50 %")))] | length >= 1' -- show
api "PATCH /v1/services/web: 3 replicas by hand" 200 '"replicas":3' "$alpha" PATCH /v1/services/web \
	-d '{"replicas": 3, "reason": "a launch"}'
check "... the newest step is the hand's, with who and why" \
	'.[0].steps[0] | .step == "set" and .who == "alpha" and .replicas == 3 and
	 (.reason | test("replicas [0-9] -> 3 by alpha: a launch"))' "$tmp/out"
eventually "... the replicas follow: 3" 20 "$tmp/web.json" '[.replica_tasks[] | select(.cancelling | not)] | length == 3' -- show
api "a count past max_replicas is refused, naming the bounds" 400 'min_replicas 1 to max_replicas 3' \
	"$alpha" PATCH /v1/services/web -d '{"replicas": 9}'
api "beta has no service web" 404 'no service' "$beta" PATCH /v1/services/web -d '{"replicas": 2}'
runs "gpupool service scale web 2 (the admin, for alpha)" "$tmp/scale.out" -- \
	"$gp" service scale web 2 --tenant alpha --reason "after the launch"
expect "gpupool service show lists the steps, newest first" 0 'set +2 replica\(s\).*\(admin\): replicas 3 -> 2 by admin: after the launch' -- \
	as "$alpha" service show web
api "the step is in the audit log too (service.scale, by the admin)" 200 '"who":"admin"' \
	"$admin" GET '/v1/audit?action=service.scale&who=admin'
check "... once" '.[0].audit | length == 1 and (.[0].detail | startswith("set: replicas 3 -> 2"))' "$tmp/out"
runs "the service goes" "$tmp/rm.out" -- as "$alpha" service rm web
finish
