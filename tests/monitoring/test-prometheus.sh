#!/bin/sh
# test-prometheus.sh — a real Prometheus (Debian's) scrapes a real
# `gpupool server --with-agent --tcp PORT --metrics-token-file FILE` on a
# simulated T4 and A100, with a generated prometheus.yml (every second,
# the scrape token from its file, deploy/prometheus/alerts.yml loaded).
# Once it has scraped twice, PromQL over its HTTP API must give what the
# server's API says (GET /v1/status, GET /v1/tenants):
#   - each card's physical utilization (a burner at 30 % on the T4, a
#     prober at about 20 % on the A100), within 0.05, and its memory and
#     allocated slices exactly;
#   - each task's effective utilization (about 1 and about 0.5), within
#     0.1, with its name and tenant;
#   - each tenant's quota parts and what its running tasks hold, overall
#     and on its T4 model quota, exactly;
#   - the queue's length (two tasks no device fits) and its oldest wait.
# up is 1 and the scrape used the token: the task and tenant series are
# there, and a second job that scrapes without it has none; a third, with
# the token on --metrics-listen (/metrics alone, the port a Prometheus on
# another machine reaches), has the same series as the first. The rules of
# alerts.yml all evaluate, each with a for:, a severity and its texts; the
# one that relays gpupool's own alerts is active at the level the server
# raised (the tenant at its whole quota: a warning), and the one for a
# tenant past its guarantee is pending; no other.
# Every metric name and label selector that alerts.yml and
# deploy/grafana/gpupool.json use is one the running server exports, and
# every query of the dashboard runs and returns series.
# Skips (77) where prometheus is not installed.
# usage: test-prometheus.sh PATH/TO/gpupool PATH/TO/gpuload
set -u
gp=$1
gl=$2
if ! command -v prometheus >/dev/null 2>&1; then
	echo "SKIP: prometheus is not installed (scripts/install-deps.sh installs it: apt-get install prometheus)"
	exit 77
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
rules=$top/deploy/prometheus/alerts.yml
dashboard=$top/deploy/grafana/gpupool.json
. "$top/tests/lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1,a100-40g:1
. "$top/tests/server/agent-lib.sh"
# Prometheus runs in the test's process group, as the server does: lib.sh
# stops it at exit, and meson's timeout signals the whole group.
prom=

# Three ports from the test's pid: 30000-32579, under the kernel's
# ephemeral range and clear of tests/slurm's 20000-27999.
port=$((30000 + ($$ % 860) * 3))
listen_port=$((port + 1))
prom_port=$((port + 2))
scrape=$tmp/scrape.token
(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$scrape" && echo >>"$scrape")

server_start --tcp "$port" --metrics-listen "127.0.0.1:$listen_port" --metrics-token-file "$scrape" \
	--sample-ms 500 || { finish; exit 1; }

# vision: 4G + 2G of memory, 50 + 20 % of compute overall, 2G and 40 + 10 %
# on T4s; its two tasks take all of its compute (a quota.high warning).
runs "vision is added with its quota" "$tmp/vision.token" -- "$gp" tenant add vision \
	--mem-guaranteed 4G --mem-borrowable 2G --compute-guaranteed 50 --compute-borrowable 20
vision=$(cat "$tmp/vision.token")
runs "... and its T4 quota" "$tmp/quota.out" -- "$gp" tenant quota vision T4 \
	--mem-guaranteed 2G --compute-guaranteed 40 --compute-borrowable 10
burn=$(as "$vision" submit -q --name burner --mem 1G --compute 30 --model T4 -- "$gl" burn --duration 120)
probe=$(as "$vision" submit -q --name prober --mem 512M --compute 40 --model A100 -- \
	"$gl" latency --kernel-us 2000 --interval-ms 10 --duration 120)
# Two that wait: the admin's for a card to come, vision's over its quota
# (its two tasks hold all of its 70 %).
stuck=$("$gp" submit -q --name stuck --mem 1G --compute 10 --model H100 --await-cards -- true)
stuck2=$(as "$vision" submit -q --name stuck-too --mem 1G --compute 10 -- true)

# status: GET /v1/status as the admin into $tmp/status.json.
status() {
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
		http://gpupool/v1/status >"$tmp/status.json"
}
# The utilizations settle within a few samplings: wait until the API shows
# both tasks at their steady figures.
steady='(.devices | map({key: (.index | tostring), value: .utilization_pct}) | from_entries) as $u
	| (.tasks | map({key: .name, value: .effective_utilization}) | from_entries) as $e
	| $u["0"] >= 15 and $u["0"] <= 45 and $u["1"] >= 8 and $u["1"] <= 35
	and $e.burner >= 0.7 and $e.burner <= 1.3 and $e.prober >= 0.2 and $e.prober <= 0.8
	and .queue.length == 2'
for _ in $(seq 100); do
	status
	jq -e "$steady" "$tmp/status.json" >/dev/null 2>&1 && break
	sleep 0.2
done
check "the API shows the burner (30 %) and the prober (about 20 %) running, two tasks queued" \
	".[0] | $steady" "$tmp/status.json"

# ---- Prometheus -----------------------------------------------------------------------
mkdir -p "$tmp/prom"
cat >"$tmp/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: gpupool
    static_configs: [{targets: ["127.0.0.1:$port"]}]
    authorization:
      credentials_file: $scrape
  # The same server without the token: the pool's series only.
  - job_name: gpupool-anonymous
    static_configs: [{targets: ["127.0.0.1:$port"]}]
  # ... and with it, on the port of --metrics-listen.
  - job_name: gpupool-listen
    static_configs: [{targets: ["127.0.0.1:$listen_port"]}]
    authorization:
      credentials_file: $scrape
EOF
prometheus --config.file="$tmp/prom/prometheus.yml" --storage.tsdb.path="$tmp/prom/data" \
	--web.listen-address="127.0.0.1:$prom_port" >"$tmp/prom/prometheus.log" 2>&1 &
prom=$!
api=http://127.0.0.1:$prom_port/api/v1

# promql EXPR: the instant query's answer in $tmp/q.json; fails unless
# Prometheus says "success".
promql() {
	curl -s -G --data-urlencode "query=$1" "$api/query" >"$tmp/q.json" 2>/dev/null &&
		jq -e '.status == "success"' "$tmp/q.json" >/dev/null 2>&1
}
# answers NAME JQ EXPR: EXPR's answer ($tmp/q.json) satisfies JQ, with the
# API's status as $s (status is read first).
answers() {
	name=$1 expr=$2
	status
	promql "$3"
	if jq -e -n --slurpfile s "$tmp/status.json" --slurpfile q "$tmp/q.json" \
		"\$s[0] as \$s | \$q[0].data.result as \$r | $expr" >/dev/null 2>"$tmp/jq.err"; then
		ok "$name"
	else
		echo "query: $3" >"$tmp/why"
		bad "$name" "$tmp/why" "$tmp/jq.err" "$tmp/q.json" "$tmp/status.json"
		return 1
	fi
}
# agrees NAME JQ EXPR: likewise, for figures that move: tried again for up
# to 5 s before it fails (a wrong series never agrees).
agrees() {
	for _ in 1 2 3 4 5; do
		status
		promql "$3"
		jq -e -n --slurpfile s "$tmp/status.json" --slurpfile q "$tmp/q.json" \
			"\$s[0] as \$s | \$q[0].data.result as \$r | $2" >/dev/null 2>&1 && break
		sleep 1
	done
	answers "$@"
}

started=
for _ in $(seq 150); do
	if curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null 2>&1; then started=yes; break; fi
	kill -0 "$prom" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$started" ]; then
	bad "Prometheus starts" "$tmp/prom/prometheus.log"
	finish
	exit 1
fi
ok "Prometheus starts with the generated prometheus.yml and alerts.yml"
scraped=
for _ in $(seq 200); do
	promql 'count(count_over_time(up[1m]) >= 2) == 3' &&
		jq -e '.data.result | length == 1' "$tmp/q.json" >/dev/null 2>&1 && { scraped=yes; break; }
	sleep 0.1
done
[ -n "$scraped" ] && ok "Prometheus scraped the server twice" ||
	bad "Prometheus scraped the server twice" "$tmp/q.json" "$tmp/prom/prometheus.log"

agrees "up is 1, with the token and without, on --tcp and on --metrics-listen" \
	'($r | map({key: .metric.job, value: .value[1]}) | from_entries)
	 == {"gpupool": "1", "gpupool-anonymous": "1", "gpupool-listen": "1"}' \
	'up'
curl -s "$api/targets" >"$tmp/targets.json"
check "its targets are healthy, with no scrape error" \
	'.[0].data.activeTargets | length == 3 and all(.health == "up" and .lastError == "")' "$tmp/targets.json"
answers "the scrape used the token: every task and tenant series is there" \
	'($r | map({key: .metric.__name__, value: .value[1]}) | from_entries) as $n
	 | $n.gpupool_task_effective_utilization_ratio == "2" and $n.gpupool_task_compute_share_ratio == "2"
	 and $n.gpupool_tenant_quota_memory_bytes == "4" and $n.gpupool_tenant_compute_in_use_devices == "2"' \
	'count by (__name__) ({job="gpupool", __name__=~"gpupool_(task|tenant)_.*"})'
answers "... which the job without the token does not see, though it sees the devices" \
	'($r | map({key: .metric.__name__, value: .value[1]}) | from_entries) as $n
	 | $n.gpupool_device_up == "2" and $n.gpupool_queue_length == "1"
	 and ([$n | keys[] | select(test("^gpupool_(task|tenant)_"))] | length) == 0' \
	'count by (__name__) ({job="gpupool-anonymous"})'
promql 'count by (__name__) ({job="gpupool", __name__=~"gpupool_.*"})'
cp "$tmp/q.json" "$tmp/tcp.json"
promql 'count by (__name__) ({job="gpupool-listen", __name__=~"gpupool_.*"})'
check "--metrics-listen with the token: the same series as --tcp with it" \
	'map(.data.result | map({key: .metric.__name__, value: .value[1]}) | from_entries)
	 | .[0] == .[1] and (.[0] | length) >= 25 and .[0].gpupool_task_effective_utilization_ratio == "2"' \
	"$tmp/tcp.json" "$tmp/q.json"

# ---- the values: devices --------------------------------------------------------------
# by(LABEL): the answer's samples as {label value: number}.
by='def by($l): map({key: .metric[$l], value: (.value[1] | tonumber)}) | from_entries;
	def near($a; $b; $tol): ($a != null) and ($b != null) and ((($a - $b) | fabs) <= $tol);'
agrees "per-card physical utilization: Prometheus's is the API's, within 0.05" \
	"$by ((\$r | by(\"index\")) as \$p
	 | (\$s.devices | length) == 2 and (\$p | length) == 2
	 and (\$s.devices | all(near(\$p[.index | tostring]; .utilization_pct / 100; 0.05))))" \
	'gpupool_device_utilization_ratio{job="gpupool"}'
answers "... which is the burner's 30 % on the T4 and the prober's on the A100, not 0" \
	"$by (\$r | by(\"model\")) as \$p | \$p[\"Tesla T4\"] >= 0.15 and \$p[\"NVIDIA A100-SXM4-40GB\"] >= 0.08" \
	'gpupool_device_utilization_ratio{job="gpupool"}'
answers "per-card allocated compute and memory, memory in use and total: the API's exactly" \
	"$by (\$r | map({key: (.metric.__name__ + \" \" + .metric.index), value: (.value[1] | tonumber)}) | from_entries) as \$p
	 | (\$s.devices | length) == 2 and (\$s.devices | all(
	   . as \$d | (\$d.index | tostring) as \$i
	   | \$p[\"gpupool_device_allocated_compute_ratio \" + \$i] == \$d.allocated_compute_pct / 100
	   and \$p[\"gpupool_device_allocated_memory_bytes \" + \$i] == \$d.allocated_memory_mib * 1048576
	   and \$p[\"gpupool_device_memory_total_bytes \" + \$i] == \$d.memory_total_mib * 1048576
	   and \$p[\"gpupool_device_memory_used_bytes \" + \$i] == \$d.memory_used_mib * 1048576
	   and \$p[\"gpupool_device_up \" + \$i] == (if \$d.ok then 1 else 0 end)))
	 and \$p[\"gpupool_device_allocated_compute_ratio 0\"] == 0.3" \
	'{job="gpupool", __name__=~"gpupool_device_(allocated_compute_ratio|allocated_memory_bytes|memory_total_bytes|memory_used_bytes|up)"}'

# ---- tasks ------------------------------------------------------------------------------
agrees "per-task effective utilization: Prometheus's is the API's, within 0.1, with name and tenant" \
	"$by ((\$r | map({key: .metric.task, value: .}) | from_entries) as \$p
	 | (\$s.tasks | length) == 2 and (\$p | length) == 2
	 and (\$s.tasks | all(. as \$t | \$p[\$t.id | tostring] as \$m
	   | \$m.metric.name == \$t.name and \$m.metric.tenant == \$t.tenant
	   and near(\$m.value[1] | tonumber; \$t.effective_utilization; 0.1))))" \
	'gpupool_task_effective_utilization_ratio{job="gpupool"}'
answers "... about 1 for the burner ($burn) and 0.5 for the prober ($probe)" \
	"$by (\$r | by(\"name\")) as \$p | near(\$p.burner; 1; 0.3) and near(\$p.prober; 0.5; 0.3)" \
	'gpupool_task_effective_utilization_ratio{job="gpupool"}'
answers "per-task compute share and memory allocated: the API's exactly" \
	"$by (\$r | map({key: (.metric.__name__ + \" \" + .metric.task), value: (.value[1] | tonumber)}) | from_entries) as \$p
	 | \$s.tasks | all(. as \$t | (\$t.id | tostring) as \$i
	   | \$p[\"gpupool_task_compute_share_ratio \" + \$i] == \$t.compute_pct / 100
	   and \$p[\"gpupool_task_memory_allocated_bytes \" + \$i] == \$t.mem_mib * \$t.devices * 1048576
	   and \$p[\"gpupool_task_memory_used_bytes \" + \$i] == \$t.memory_used_mib * 1048576)" \
	'{job="gpupool", __name__=~"gpupool_task_(compute_share_ratio|memory_allocated_bytes|memory_used_bytes)"}'

# ---- tenants ----------------------------------------------------------------------------
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
	http://gpupool/v1/tenants >"$tmp/tenants.json"
# The quota parts, keyed "name tenant [model] part".
key='map({key: ([.metric.__name__, .metric.tenant, .metric.model, .metric.part] | map(select(. != null)) | join(" ")),
	value: (.value[1] | tonumber)}) | from_entries'
promql '{job="gpupool", __name__=~"gpupool_tenant_(model_)?quota_.*"}'
cp "$tmp/q.json" "$tmp/quota.json"
check "each tenant's quota parts, overall and per model: /v1/tenants's exactly" \
	"$by (.[1].data.result | $key) as \$p
	 | (\$p | length) == 12 and (.[0].tenants | length) == 2 and (.[0].tenants | all(. as \$t
	   | \$p[\"gpupool_tenant_quota_memory_bytes \(\$t.name) guaranteed\"] == \$t.mem_guaranteed_mib * 1048576
	   and \$p[\"gpupool_tenant_quota_memory_bytes \(\$t.name) borrowable\"] == \$t.mem_borrowable_mib * 1048576
	   and near(\$p[\"gpupool_tenant_quota_compute_devices \(\$t.name) guaranteed\"]; \$t.compute_guaranteed_pct / 100; 1e-9)
	   and near(\$p[\"gpupool_tenant_quota_compute_devices \(\$t.name) borrowable\"]; \$t.compute_borrowable_pct / 100; 1e-9)
	   and (\$t.model_quotas | all(. as \$q
	     | \$p[\"gpupool_tenant_model_quota_memory_bytes \(\$t.name) \(\$q.model) guaranteed\"] == \$q.mem_guaranteed_mib * 1048576
	     and \$p[\"gpupool_tenant_model_quota_memory_bytes \(\$t.name) \(\$q.model) borrowable\"] == \$q.mem_borrowable_mib * 1048576
	     and near(\$p[\"gpupool_tenant_model_quota_compute_devices \(\$t.name) \(\$q.model) guaranteed\"]; \$q.compute_guaranteed_pct / 100; 1e-9)
	     and near(\$p[\"gpupool_tenant_model_quota_compute_devices \(\$t.name) \(\$q.model) borrowable\"]; \$q.compute_borrowable_pct / 100; 1e-9)))))
	 and \$p[\"gpupool_tenant_quota_memory_bytes vision guaranteed\"] == 4294967296
	 and \$p[\"gpupool_tenant_model_quota_compute_devices vision T4 guaranteed\"] == 0.4" \
	"$tmp/tenants.json" "$tmp/quota.json"
# What a tenant holds, from the API: its running tasks' slices (GET
# /v1/status), overall and on the devices whose model has T4 in it.
held='def held($tasks): {compute: (($tasks | map(.compute_pct * .devices) | add // 0) / 100),
	memory: (($tasks | map(.mem_mib * .devices) | add // 0) * 1048576)};
	($s.devices | map(select(.model | ascii_downcase | contains("t4")) | .uuid)) as $t4'
answers "each tenant's quota use, overall and on T4: what its running tasks hold, exactly" \
	"$by $held | (\$r | $key) as \$p
	 | (\$p | length) == 6 and ([\"admin\", \"vision\"] | all(. as \$n
	   | held([\$s.tasks[] | select(.tenant == \$n)]) as \$h
	   | near(\$p[\"gpupool_tenant_compute_in_use_devices \(\$n)\"]; \$h.compute; 1e-9)
	   and \$p[\"gpupool_tenant_memory_in_use_bytes \(\$n)\"] == \$h.memory))
	 and (held([\$s.tasks[] | select(.tenant == \"vision\" and (.placement as \$u | \$t4 | index(\$u)))]) as \$h
	   | near(\$p[\"gpupool_tenant_model_compute_in_use_devices vision T4\"]; \$h.compute; 1e-9)
	   and \$p[\"gpupool_tenant_model_memory_in_use_bytes vision T4\"] == \$h.memory)
	 and near(\$p[\"gpupool_tenant_compute_in_use_devices vision\"]; 0.7; 1e-9)" \
	'{job="gpupool", __name__=~"gpupool_tenant_(model_)?(compute|memory)_in_use_.*"}'

# ---- the queue ---------------------------------------------------------------------------
answers "the queue's length: the API's (2)" \
	'$s.queue.length == 2 and ($s.waiting | length) == 2 and ($r | length) == 1 and ($r[0].value[1] | tonumber) == $s.queue.length' \
	'gpupool_queue_length{job="gpupool"}'
agrees "the oldest wait: the API's, as of the last scrape (at most 2.5 s behind)" \
	'($r[0].value[1] | tonumber) as $p | $p > 1 and $p <= $s.queue.oldest_wait_s + 0.2 and $p >= $s.queue.oldest_wait_s - 2.5' \
	'gpupool_queue_oldest_wait_seconds{job="gpupool"}'
answers "tasks by state: as many running and pending as the API shows" \
	'($r | map({key: .metric.state, value: (.value[1] | tonumber)}) | from_entries) as $p
	 | $p.running == ($s.tasks | length) and $p.pending == ($s.waiting | length) and $p.running == 2' \
	'gpupool_tasks{job="gpupool"}'
answers "queue waits: a histogram of the two started tasks" \
	'($r | length) == 1 and $r[0].value[1] == "2"' \
	'gpupool_queue_wait_seconds_bucket{job="gpupool", le="+Inf"}'

# ---- the rules ---------------------------------------------------------------------------
n_rules=$(grep -c '^ *- alert:' "$rules")
curl -s "$api/rules" >"$tmp/rules.json"
check "Prometheus loaded the $n_rules rules of alerts.yml, and each evaluates" \
	"[.[0].data.groups[].rules[]] | length == $n_rules and all(.health == \"ok\" and (.lastError // \"\") == \"\")" \
	"$tmp/rules.json"
# (GpupoolAlertsActive takes its severity from gpupool's level.)
check "each is an alert with a for:, a severity of gpupool's three levels, a summary and a description" \
	'[.[0].data.groups[].rules[]] | length > 0 and all(.type == "alerting" and .duration > 0
	 and (.labels.severity | test("^(critical|warning|info)$") or . == "{{ $labels.level }}")
	 and (.annotations.summary | length > 10) and (.annotations.description | length > 10))' \
	"$tmp/rules.json"
# The server raises quota.high (vision holds all of its compute) at a
# sampling, and Prometheus relays it at its next evaluation (pending, then
# firing a minute later); the levels of the two sides are compared once
# they agree (or after 10 s).
levels() { # -> $tmp/levels.json: [API's active levels, the levels that fire]
	"$gp" alerts -o json >"$tmp/alerts.json" 2>&1
	promql 'ALERTS{alertname="GpupoolAlertsActive", job="gpupool"}'
	jq -s '[([.[0].alerts[].level] | unique), ([.[1].data.result[].metric.severity] | sort)]' \
		"$tmp/alerts.json" "$tmp/q.json" >"$tmp/levels.json" 2>/dev/null
}
for _ in $(seq 100); do
	levels
	jq -e '.[0] == .[1] and (.[0] | index("warning"))' "$tmp/levels.json" >/dev/null 2>&1 && break
	sleep 0.1
done
check "GpupoolAlertsActive is active at each level gpupool has active alerts at, severity = level (a quota.high warning)" \
	'.[0][0] == .[0][1] and (.[0][0] | index("warning")) and (.[2].data.result | all(.metric.severity == .metric.level))
	 and any(.[1].alerts[]; .kind == "quota.high" and .object == "tenant vision" and .level == "warning")' \
	"$tmp/levels.json" "$tmp/alerts.json" "$tmp/q.json"
curl -s "$api/alerts" >"$tmp/firing.json"
check "no other rule is active but the borrowing tenant's, pending: GpupoolTenantComputeOverGuarantee (vision, 0.7 of 0.5)" \
	'([.[0].data.alerts[] | select(.labels.job == "gpupool") | "\(.labels.alertname) \(.labels.tenant // "")"]
	  | unique) == ["GpupoolAlertsActive ", "GpupoolTenantComputeOverGuarantee vision"]
	 and any(.[0].data.alerts[]; .labels.alertname == "GpupoolTenantComputeOverGuarantee" and .state == "pending"
	   and .labels.severity == "info" and (.value | tonumber) == 0.7)' \
	"$tmp/firing.json"

# ---- the names and selectors of alerts.yml and the dashboard ----------------------------
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
	http://gpupool/metrics >"$tmp/metrics.txt"
# What the server exports: its families and sample names.
{ sed -n 's/^# TYPE \([a-z_:][a-z0-9_:]*\) .*/\1/p' "$tmp/metrics.txt"
  grep -v '^#' "$tmp/metrics.txt" | sed 's/[{ ].*//'; } | sort -u >"$tmp/exported.txt"
# The dashboard's queries, its variables' (label_values) among them, with
# Grafana's variables given values PromQL takes.
jq -r '.. | objects | (.expr, .definition) | strings' "$dashboard" |
	sed -e 's/\$__rate_interval/1m/g' -e 's/\$__interval/15s/g' -e 's/\$[a-z_]*/.*/g' >"$tmp/dashboard.promql"
{ cat "$rules" "$tmp/dashboard.promql"; } | grep -oE 'gpupool_[a-z0-9_]+(\{[^}]*\})?' | sort -u >"$tmp/selectors.txt"
sed 's/{.*//' "$tmp/selectors.txt" | sort -u >"$tmp/used.txt"
comm -23 "$tmp/used.txt" "$tmp/exported.txt" >"$tmp/unknown.txt"
if [ "$(wc -l <"$tmp/used.txt")" -ge 25 ] && [ ! -s "$tmp/unknown.txt" ]; then
	ok "the $(wc -l <"$tmp/used.txt") metric names alerts.yml and gpupool.json use are all on /metrics"
else
	echo "names used that /metrics does not have (of $(wc -l <"$tmp/used.txt")):" >"$tmp/why"
	bad "the metric names alerts.yml and gpupool.json use are all on /metrics" "$tmp/why" "$tmp/unknown.txt"
fi
: >"$tmp/empty.txt"
while read -r sel; do
	promql "count($sel)" && jq -e '.data.result | length == 1' "$tmp/q.json" >/dev/null 2>&1 ||
		echo "$sel" >>"$tmp/empty.txt"
done <"$tmp/selectors.txt"
[ -s "$tmp/empty.txt" ] && bad "each of their $(wc -l <"$tmp/selectors.txt") selectors (labels too) matches a scraped series; these match none:" "$tmp/empty.txt" ||
	ok "each of their $(wc -l <"$tmp/selectors.txt") selectors (labels too) matches a scraped series"
: >"$tmp/failed.txt"
n_queries=0
jq -r '.. | objects | .expr | strings' "$dashboard" |
	sed -e 's/\$__rate_interval/1m/g' -e 's/\$__interval/15s/g' -e 's/\$[a-z_]*/.*/g' >"$tmp/queries.promql"
while read -r q; do
	n_queries=$((n_queries + 1))
	if ! promql "$q"; then
		{ echo "$q"; sed 's/^/    /' "$tmp/q.json"; echo; } >>"$tmp/failed.txt"
	elif ! jq -e '.data.result | length > 0' "$tmp/q.json" >/dev/null 2>&1; then
		# Prometheus's own ALERTS has the rules that fire, if any.
		case $q in ALERTS*) ;; *) echo "$q (no series)" >>"$tmp/failed.txt" ;; esac
	fi
done <"$tmp/queries.promql"
[ "$n_queries" -ge 30 ] && [ ! -s "$tmp/failed.txt" ] &&
	ok "each of the dashboard's $n_queries queries runs on Prometheus and returns series" ||
	bad "each of the dashboard's $n_queries queries runs on Prometheus and returns series" "$tmp/failed.txt"

stops "Prometheus stops on SIGTERM" "$prom"
prom=
"$gp" task cancel "$stuck" "$stuck2" >/dev/null 2>&1
finish
