#!/bin/sh
# test-quota.sh — tenants' quotas per device model, end to end: on two
# simulated A100s and two T4s, a tenant limited to 50 % of T4s submits T4
# tasks: one runs, the next waits with the T4 quota named, and a task of
# any model goes to an A100. The running task holds 90 % of the T4
# quota: a quota.high warning names vision/T4, and /metrics (with vision's
# token) has the model quota series. Also: `gpupool tenant quota` sets, shows (`tenant ls`),
# refuses bad input naming the flag, and removes.
# usage: test-quota.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g:2,t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300
vision=$("$gp" tenant add vision --unlimited 2>/dev/null)

expect "a quota without its guaranteed parts is refused, naming the flags" 2 \
	"--compute-guaranteed are required" -- "$gp" tenant quota vision T4 --mem-guaranteed 8G
expect "a bad percentage names the flag" 2 "compute-guaranteed" -- \
	"$gp" tenant quota vision T4 --mem-guaranteed 8G --compute-guaranteed lots
expect "a model that is not a name is refused" 2 "MODEL" -- \
	"$gp" tenant quota vision "Tesla T4" --mem-guaranteed 8G --compute-guaranteed 50
expect "a quota of an unknown tenant is refused" 1 "no tenant" -- \
	"$gp" tenant quota nobody T4 --mem-guaranteed 8G --compute-guaranteed 50
expect "a tenant may not set quotas" 1 "only the admin" -- \
	"$gp" tenant quota vision T4 --token "$vision" --mem-guaranteed 8G --compute-guaranteed 50
expect "the admin sets vision's T4 quota" 0 "quota for model T4 set" -- \
	"$gp" tenant quota vision T4 --mem-guaranteed 16G --compute-guaranteed 50
expect "an A100 quota too, then removed" 0 "removed" -- sh -c \
	"'$gp' tenant quota vision A100 --mem-guaranteed 1G --compute-guaranteed 10 &&
	 '$gp' tenant quota vision a100 --remove"
expect "removing it again is refused" 1 "no quota for model" -- \
	"$gp" tenant quota vision A100 --remove
expect "tenant ls shows the T4 quota under vision" 0 "on T4 .*16G\+0 .*50\+0%" -- \
	"$gp" tenant ls
"$gp" tenant ls -o json >"$tmp/tenants.json"
check "GET /v1/tenants lists the model quotas" \
	'.[0].tenants[] | select(.name == "vision") | .model_quotas ==
	 [{"model": "T4", "mem_guaranteed_mib": 16384, "mem_borrowable_mib": 0,
	   "compute_guaranteed_pct": 50, "compute_borrowable_pct": 0,
	   "in_use": {"mem_mib": 0, "compute_pct": 0}}] and
	 .in_use == {"mem_mib": 0, "compute_pct": 0}' "$tmp/tenants.json"
"$gp" audit -o json >"$tmp/audit.json"
check "the changes are in the audit log" \
	'[.[0].audit[] | select(.action | startswith("tenant.quota"))] | length == 3' \
	"$tmp/audit.json"

export GPUPOOL_TOKEN=$vision
first=$("$gp" submit -q --model T4 --mem 2G --compute 45 -- sleep 30)
sleep 0.5
second=$("$gp" submit -q --model T4 --mem 2G --compute 40 -- sleep 30)
any=$("$gp" submit -q --mem 2G --compute 40 -- sleep 30)
sleep 1.5
"$gp" task ls -o json >"$tmp/tasks.json"
check "the first T4 task runs" ".[0].tasks[] | select(.id == $first) | .state == \"running\"" \
	"$tmp/tasks.json"
check "the second waits, over the T4 quota" \
	".[0].tasks[] | select(.id == $second) | .state == \"pending\" and
	 (.reason | startswith(\"over the T4 quota: the tenant uses 2048 MiB and 45 %\"))" \
	"$tmp/tasks.json"
"$gp" tenant ls -o json >"$tmp/tenants.json"
check "GET /v1/tenants: what vision holds, overall and under its T4 quota" \
	'.[0].tenants[] | select(.name == "vision") | .in_use.mem_mib >= 2048 and
	 .model_quotas[0].in_use == {"mem_mib": 2048, "compute_pct": 45}' "$tmp/tenants.json"
"$gp" device ls -o json >"$tmp/devices.json"
check "a task of any model runs, on an A100 (the T4 quota is used up)" \
	"(.[0].tasks[] | select(.id == $any)) as \$t | \$t.state == \"running\" and
	 ([.[1].devices[] | select(.name | test(\"A100\")) | .uuid] | index(\$t.placement) != null)" \
	"$tmp/tasks.json" "$tmp/devices.json"

# ---- quota.high and the metrics, per model ------------------------------------
for _ in $(seq 30); do
	"$gp" alerts -o json >"$tmp/alerts.json" 2>&1
	jq -e '.alerts | any(.kind == "quota.high")' "$tmp/alerts.json" >/dev/null 2>&1 && break
	sleep 0.2
done
check "above 80 % of its T4 quota, vision gets a quota.high warning naming T4" \
	'.[0].alerts | any(.level == "warning" and .kind == "quota.high" and
	 .object == "tenant vision/T4" and .tenant == "vision" and
	 (.message | test("90 % of its T4 compute quota \\(45 of 50 %\\)")))' "$tmp/alerts.json"
check "no alert for its overall quota (it has none)" \
	'[.[0].alerts[] | select(.kind == "quota.high")] | length == 1' "$tmp/alerts.json"
# Vision's own series need its token (without one, /metrics has the pool's).
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $vision" http://gpupool/metrics \
	>"$tmp/metrics.txt"
expect "/metrics (vision's token) has the T4 quota of vision" 0 \
	'^gpupool_tenant_model_quota_memory_bytes\{tenant="vision",model="T4",part="guaranteed"\} 17179869184$' -- \
	cat "$tmp/metrics.txt"
expect "/metrics has what vision holds on its T4s" 0 \
	'^gpupool_tenant_model_compute_in_use_devices\{tenant="vision",model="T4"\} 0.45$' -- \
	cat "$tmp/metrics.txt"
expect "... in memory too" 0 \
	'^gpupool_tenant_model_memory_in_use_bytes\{tenant="vision",model="T4"\} 2147483648$' -- \
	cat "$tmp/metrics.txt"
finish
