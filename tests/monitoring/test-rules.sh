#!/bin/sh
# test-rules.sh — deploy/prometheus/alerts.yml with Prometheus's promtool:
# `promtool check rules` accepts it (lint included), `promtool test rules`
# passes the unit tests of alerts-test.yml, every alert of the file is in
# those tests, and the tests catch a rule that changed (a threshold moved,
# a `for:` dropped) and a file that does not parse. (test-prometheus.sh
# loads the same rules into a running Prometheus.) Skips (77) where
# promtool is not installed.
# usage: test-rules.sh
set -u
if ! command -v promtool >/dev/null 2>&1; then
	echo "SKIP: promtool is not installed (scripts/install-deps.sh installs it: apt-get install prometheus)"
	exit 77
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/deploy/prometheus
. "$top/tests/lib.sh"

n=$(grep -c '^ *- alert: ' "$dir/alerts.yml")
expect "promtool check rules accepts alerts.yml: its $n alerts, no lint (fatal)" 0 "SUCCESS: $n rules found" -- \
	promtool check rules --lint=all --lint-fatal "$dir/alerts.yml"
expect "promtool test rules passes alerts-test.yml" 0 'SUCCESS' -- promtool test rules "$dir/alerts-test.yml"

# Every alert is tested: it fires in alerts-test.yml at least once.
sed -n 's/^ *- alert: //p' "$dir/alerts.yml" | sort -u >"$tmp/alerts.txt"
awk '/alertname:/ { name = $2 } /- exp_labels:/ { print name }' "$dir/alerts-test.yml" | sort -u >"$tmp/fired.txt"
comm -23 "$tmp/alerts.txt" "$tmp/fired.txt" >"$tmp/untested.txt"
if [ "$(wc -l <"$tmp/alerts.txt")" -eq "$n" ] && [ ! -s "$tmp/untested.txt" ]; then
	ok "each of the $n alerts fires in a unit test"
else
	bad "each of the $n alerts fires in a unit test; these never do:" "$tmp/untested.txt"
fi

# The unit tests notice a changed rule: copies of the two files, one rule
# changed in each run.
mkdir -p "$tmp/changed"
cp "$dir/alerts-test.yml" "$tmp/changed/"
# changed NAME SED-SCRIPT: alerts.yml changed by SED-SCRIPT fails its tests.
changed() {
	sed "$2" "$dir/alerts.yml" >"$tmp/changed/alerts.yml"
	if cmp -s "$dir/alerts.yml" "$tmp/changed/alerts.yml"; then
		bad "$1: the change applies to alerts.yml"
		return 1
	fi
	expect "$1" 1 'FAILED' -- promtool test rules "$tmp/changed/alerts-test.yml"
}
changed "the tests fail when a threshold moves (device memory full at 99.9 %)" \
	's/gpupool_device_memory_total_bytes > 0\.98/gpupool_device_memory_total_bytes > 0.999/'
changed "... when a rule loses its for: (a tenant over its guarantee at once)" \
	'/alert: GpupoolTenantComputeOverGuarantee/,/for:/s/for: 6h/for: 0m/'
changed "... when the admin's unlimited quota is no longer left out" \
	'0,/+ sum by (instance, job, tenant) (gpupool_tenant_quota_compute_devices) > 0)/s//+ sum by (instance, job, tenant) (gpupool_tenant_quota_compute_devices) >= 0)/'
changed "... when a severity changes" \
	'/alert: GpupoolQueueWaitLong/,/severity:/s/severity: warning/severity: info/'
printf 'groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: gpupool_queue_length >\n' \
	>"$tmp/broken.yml"
expect "promtool check rules refuses a rule that does not parse" 1 'parse error' -- \
	promtool check rules "$tmp/broken.yml"
finish
