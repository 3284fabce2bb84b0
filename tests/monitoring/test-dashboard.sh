#!/bin/sh
# test-dashboard.sh — deploy/grafana/gpupool.json is a dashboard Grafana
# imports as it is: schema 38, one Prometheus datasource input
# (DS_PROMETHEUS) that every panel, query and variable uses, unique panel
# ids, panels within the 24 columns that overlap none, a title and a
# description on each, a query on each, and the views the operator needs
# (pool, cards physical vs allocated, tasks' effective utilization,
# tenants' quotas, the queue and its wait quantiles, the scheduler,
# alerts). That its queries run and return data, on a live server, is
# test-prometheus.sh's part. No Grafana is needed (Debian has none): jq.
# usage: test-dashboard.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$top/deploy/grafana/gpupool.json
. "$top/tests/lib.sh"

expect "gpupool.json is JSON" 0 '^[0-9]+$' -- jq '.panels | length' "$d"
check "schema 38, a uid, no id of an instance (id null), a title" \
	'.[0] | .schemaVersion == 38 and .uid == "gpupool-overview" and .id == null and .title == "gpupool"' "$d"
check "one input: the Prometheus datasource DS_PROMETHEUS" \
	'.[0].__inputs == [{"name": "DS_PROMETHEUS", "label": "Prometheus",
	   "description": .[0].__inputs[0].description, "type": "datasource",
	   "pluginId": "prometheus", "pluginName": "Prometheus"}]' "$d"
check "every panel, query and variable uses that datasource" \
	'.[0] | [(.panels[] | select(.type != "row") | .datasource, .targets[].datasource), .templating.list[].datasource]
	 | length > 50 and all(. == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"})' "$d"
check "panel ids are unique" '.[0].panels | map(.id) | (length == (unique | length)) and all(type == "number")' "$d"
check "each panel lies within the 24 columns, and none overlaps another" \
	'.[0].panels | map(.gridPos) | all(.x >= 0 and .w > 0 and .h > 0 and .x + .w <= 24)
	 and ([to_entries[] as $a | to_entries[] | select(.key > $a.key) | .value as $b | $a.value
	       | select(.x < $b.x + $b.w and $b.x < .x + .w and .y < $b.y + $b.h and $b.y < .y + .h)] | length == 0)' "$d"
check "each panel has a title, a description and queries with distinct refIds" \
	'.[0].panels | map(select(.type != "row")) | length >= 25 and all(
	   (.title | length > 3) and (.description | length > 10) and (.targets | length > 0)
	   and (.targets | map(.refId) | length == (unique | length)) and all(.targets[]; .expr | length > 5))' "$d"
check "the variables: server, device model, tenant, each with All" \
	'.[0].templating.list | map(.name) == ["instance", "model", "tenant"] and all(.includeAll and .allValue == ".*")' "$d"
# need TITLE-REGEX EXPR-REGEX: a panel whose title matches has a query that does.
check "the views: pool, per card physical vs allocated, tasks, quotas, queue and waits, scheduler, alerts" \
	'def need($t; $e): any(.[0].panels[]; (.title | test($t)) and any(.targets[]?; .expr | test($e)));
	 need("^Pool: physical vs allocated"; "gpupool_device_allocated_compute_ratio")
	 and need("^Per card: physical"; "^gpupool_device_utilization_ratio")
	 and need("^Per card: physical"; "^gpupool_device_allocated_compute_ratio")
	 and need("^Effective utilization per task"; "gpupool_task_effective_utilization_ratio")
	 and need("^Compute: in use vs guaranteed"; "part=\"guaranteed\"")
	 and need("^Compute: in use vs guaranteed"; "sum without \\(part\\) \\(gpupool_tenant_quota_compute_devices")
	 and need("^Memory: in use vs guaranteed"; "gpupool_tenant_memory_in_use_bytes")
	 and need("^Model quotas used"; "gpupool_tenant_model_compute_in_use_devices")
	 and need("^Queue length"; "gpupool_queue_length")
	 and need("^Wait to start: quantiles"; "histogram_quantile\\(0.9, .*gpupool_queue_wait_seconds_bucket")
	 and need("^Scheduling pass time"; "gpupool_scheduler_pass_seconds")
	 and need("^Prometheus alerts firing"; "^ALERTS\\{alertname=~\"Gpupool")
	 and need("alerts by level"; "gpupool_alerts_active")' "$d"
finish
