#!/bin/sh
# test-metrics.sh — metrics, alerts and `gpupool top` end to end:
# `gpupool server --with-agent --sample-ms 500 --util-window 2
# --grow-samples 3` on a simulated T4 and A100, with real processes: a
# burner at 30 %, a task that fails, a task whose memory keeps growing, a
# tenant near its quota, a task that cannot be placed. GET /metrics
# parses as Prometheus text and has the device, task, queue, quota and
# scheduler series with plausible values (with the admin's token; without
# one, the pool's series only); each alert rule fires at its
# level; a tenant sees only its own alerts; `gpupool top --once` shows the
# devices and tasks.
# usage: test-metrics.sh PATH/TO/gpupool PATH/TO/gpuload
set -u
gp=$1
gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1,a100-40g:1
. "$(dirname "$0")/agent-lib.sh"
log=$tmp/server.log

server_start --sample-ms 500 --util-window 2 --grow-samples 3

# metrics: with the admin's token, which sees every series.
metrics() {
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
		http://gpupool/metrics
}
# value SERIES: the value of the first sample whose name and labels match.
value() { grep -E "^$1 " "$tmp/metrics.txt" | head -1 | awk '{ print $NF }'; }

small=$("$gp" tenant add small --mem-guaranteed 4G --compute-guaranteed 50)
burn=$("$gp" submit -q --name burner --mem 1G --compute 30 --model T4 -- "$gl" burn --duration 15)
failed=$("$gp" submit -q --name failing --mem 1G --compute 10 --model T4 -- sh -c 'exit 3')
# (The leaky task fails when any of its allocators does.)
grow=$("$gp" submit -q --name leaky --mem 4G --compute 10 --model A100 -- sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10 11 12; do $gl alloc --mib 100 --hold 6 >/dev/null & pids=\"\$pids \$!\"; sleep 0.25; done
	 for p in \$pids; do wait \$p || exit 1; done")
near=$(as "$small" submit -q --name near --mem 3584M --compute 10 --model A100 -- sleep 8)
stuck=$("$gp" submit -q --name stuck --mem 1G --compute 10 --model H100 --await-cards -- true)

# The alerts come within a few samplings; wait for the last of them.
for _ in $(seq 60); do
	"$gp" alerts -o json >"$tmp/alerts.json" 2>&1
	jq -e '[.alerts[].kind] | contains(["task.failed", "task.memory-grows", "quota.high", "device.idle"])' \
		"$tmp/alerts.json" >/dev/null 2>&1 && break
	sleep 0.2
done
metrics >"$tmp/metrics.txt"

# ---- the text format ------------------------------------------------------------
bad_lines=$(grep -v '^#' "$tmp/metrics.txt" | grep -cvE '^[a-z_:][a-z0-9_:]*(\{[^}]*\})? [0-9.eE+-]+$')
[ "$bad_lines" -eq 0 ] && [ "$(grep -vc '^#' "$tmp/metrics.txt")" -gt 40 ] &&
	ok "every sample line of /metrics is Prometheus text" ||
	bad "every sample line of /metrics is Prometheus text ($bad_lines bad)" "$tmp/metrics.txt"
families=$(grep -c '^# TYPE ' "$tmp/metrics.txt")
helps=$(grep -c '^# HELP ' "$tmp/metrics.txt")
[ "$families" -ge 20 ] && [ "$families" -eq "$helps" ] && ok "$families families, each with HELP and TYPE" ||
	bad "each family has HELP and TYPE ($families TYPE, $helps HELP)" "$tmp/metrics.txt"
expect "the content type is Prometheus's text format" 0 'text/plain; version=0.0.4' -- \
	curl -s -o /dev/null -D - --unix-socket "$GPUPOOL_SOCKET" http://gpupool/metrics
curl -s --unix-socket "$GPUPOOL_SOCKET" http://gpupool/metrics >"$tmp/pool.txt"
if grep -q '^gpupool_device_up{' "$tmp/pool.txt" && ! grep -Eq 'tenant=|task=' "$tmp/pool.txt"; then
	ok "without a token: the pool's series, no tenant or task"
else
	bad "without a token: the pool's series, no tenant or task" "$tmp/pool.txt"
fi

# ---- plausible values -----------------------------------------------------------
t4='\{device="GPU-[0-9a-f-]+",model="Tesla T4",vendor="nvidia",index="0"\}'
a100='\{device="GPU-[0-9a-f-]+",model="NVIDIA A100-SXM4-40GB",vendor="nvidia",index="1"\}'
check "the T4's utilization is the burner's 30 % (15..45 %)" \
	"$(value "gpupool_device_utilization_ratio$t4") | . > 0.15 and . < 0.45" /dev/null
check "the A100 is idle" "$(value "gpupool_device_utilization_ratio$a100") == 0" /dev/null
check "device memory: the T4's total is 15 GiB" \
	"$(value "gpupool_device_memory_total_bytes$t4") == 16106127360" /dev/null
check "device memory used: the leaky task's allocations on the A100" \
	"$(value "gpupool_device_memory_used_bytes$a100") >= 300 * 1048576" /dev/null
check "the burner's effective utilization is about 1 (used / allocated)" \
	"$(value "gpupool_task_effective_utilization_ratio\{task=\"$burn\",name=\"burner\",tenant=\"admin\"\}") | . > 0.6 and . < 1.3" /dev/null
check "the queue holds the task no device fits" "$(value gpupool_queue_length) == 1" /dev/null
check "its wait is the oldest, over a second" "$(value gpupool_queue_oldest_wait_seconds) > 1" /dev/null
check "queue waits: a histogram of the started tasks" \
	"$(value 'gpupool_queue_wait_seconds_bucket\{le="\+Inf"\}') == $(value gpupool_queue_wait_seconds_count) and $(value gpupool_queue_wait_seconds_count) >= 4" /dev/null
check "quota: the tenant's guarantee and what it holds" \
	"$(value 'gpupool_tenant_quota_memory_bytes\{tenant="small",part="guaranteed"\}') == 4294967296 and $(value 'gpupool_tenant_memory_in_use_bytes\{tenant="small"\}') == 3758096384" /dev/null
check "scheduler ticks: a summary with quantiles" \
	"$(value 'gpupool_scheduler_tick_seconds\{quantile="0.99"\}') >= $(value 'gpupool_scheduler_tick_seconds\{quantile="0.5"\}') and $(value gpupool_scheduler_tick_seconds_count) > 10" /dev/null
echo "    tick p50 $(value 'gpupool_scheduler_tick_seconds\{quantile="0.5"\}') s, p99 $(value 'gpupool_scheduler_tick_seconds\{quantile="0.99"\}') s over $(value gpupool_scheduler_tick_seconds_count) ticks"
check "the alert counts are in the metrics" \
	"$(value 'gpupool_alerts_active\{level="warning"\}') >= 1" /dev/null

# ---- alerts -------------------------------------------------------------------
check "a failed task raises a warning (its tenant's to look at, not an emergency)" \
	".[0].alerts | any(.level == \"warning\" and .kind == \"task.failed\" and .object == \"task $failed\" and (.message | test(\"code 3\")))" \
	"$tmp/alerts.json"
check "memory that only grows raises a warning" \
	".[0].alerts | any(.level == \"warning\" and .kind == \"task.memory-grows\" and .object == \"task $grow\")" \
	"$tmp/alerts.json"
check "a tenant above 80 % of its quota raises a warning" \
	'.[0].alerts | any(.level == "warning" and .kind == "quota.high" and .object == "tenant small")' \
	"$tmp/alerts.json"
check "a device idle over the window raises an info alert" \
	'.[0].alerts | any(.level == "info" and .kind == "device.idle" and (.message | test("A100")))' \
	"$tmp/alerts.json"
check "alerts are not repeated while their condition holds" \
	'.[0].alerts | group_by(.kind + .object) | all(length == 1)' "$tmp/alerts.json"
as "$small" alerts -o json >"$tmp/small.json"
check "a tenant sees only its own alerts" \
	'.[0].alerts | length >= 1 and all(.tenant == "small")' "$tmp/small.json"
critical=$(jq -r '.alerts[] | select(.kind == "task.failed") | .id' "$tmp/alerts.json")
expect "a tenant may not clear alerts" 1 'only the admin' -- as "$small" alerts --clear "$critical"
expect "the admin clears one" 0 'cleared' -- "$gp" alerts --clear "$critical"
expect "a cleared alert leaves the active list" 0 '^ID' -- "$gp" alerts
if grep -q "task.failed" "$tmp/out"; then
	bad "it is gone from the active list" "$tmp/out"
else
	ok "it is gone from the active list"
fi
expect "... and kept with --all" 0 "task\.failed" -- "$gp" alerts --all
expect "bad flags are named" 2 '--limit "0" must be a whole number' -- "$gp" alerts --limit 0

# ---- top ----------------------------------------------------------------------
expect "top --once shows both devices" 0 'Tesla T4.*' -- "$gp" top --once
grep -q "NVIDIA A100-SXM4-40GB" "$tmp/out" && grep -Eq "^  $burn +admin +burner +30%" "$tmp/out" &&
	grep -q "QUEUE 1 waiting" "$tmp/out" && ok "top shows the tasks with their share, and the queue" ||
	bad "top shows the tasks with their share, and the queue" "$tmp/out"
sed 's/^/    | /' "$tmp/out"
expect "a tenant's top shows only its tasks" 0 'near' -- as "$small" top --once
if grep -q burner "$tmp/out"; then bad "no other tenant's task in it" "$tmp/out"; else ok "no other tenant's task in it"; fi

# What the tasks ran succeeded.
wait_for "the burner succeeded" 60 "$burn" '.state == "succeeded"'
wait_for "the leaky task's allocators succeeded" 30 "$grow" '.state == "succeeded"'
"$gp" task cancel "$stuck" >/dev/null 2>&1
finish
