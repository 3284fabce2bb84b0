#!/bin/sh
# test-service-crash.sh — a service whose replicas crash at their start,
# on one simulated T4 (server sampling every 0.3 s): replacements back off
# (2, 4, 8 ... samplings apart, so the queue is not flooded), `service
# show` says "crash-looping: last exit 3 ..." with the replica's reason,
# and from the third crash in a row a critical service.crash-loop alert
# does; each replica's own failure is a warning. Once a replica runs past
# 10 s (the command finds what it lacked), the status and the alert go.
# usage: test-service-crash.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300 || { finish; exit 1; }
admin=$(cat "$tmp/state/admin.token")

flags=$tmp/flags
mkdir "$flags"
runs "a service whose replicas exit 3 unless $flags/ready exists" "$tmp/create.out" -- \
	"$gp" service create flaky --mem 1G --compute 20 --no-autoscale --replicas 1 -- \
	sh -c "test -e $flags/ready || exit 3; sleep 600"
alert_within "from the third crash in a row, a critical service.crash-loop alert" 60 \
	'any(.level == "critical" and .kind == "service.crash-loop" and
	     .object == "service flaky" and .cleared == null and
	     (.message | test("crash-looping: last exit 3 .* 3 replica\\(s\\) in a row")))'
expect "service show says it crash-loops, with the last exit" 0 \
	'crash-looping: last exit 3 .*replica\(s\) in a row; the next in [0-9]+ sampling' -- \
	"$gp" service show flaky
"$gp" alerts -o json >"$tmp/alerts.json"
check "each failed replica is a warning, not critical" \
	'[.[0].alerts[] | select(.kind == "task.failed")] | length >= 3 and all(.level == "warning")' \
	"$tmp/alerts.json"
submitted() {
	"$gp" audit --limit 1000 -o json |
		jq -s '[.[0].audit[] | select(.action == "task.submit" and (.detail | test("service flaky")))]
		       | length'
}
before=$(submitted)
sleep 3
after=$(submitted)
if [ $((after - before)) -le 2 ]; then
	ok "replacements back off: $((after - before)) in the 3 s after the third crash"
else
	echo "$before then $after replicas submitted" >"$tmp/backoff.txt"
	bad "replacements do not back off (one per 0.3 s sampling would be 10 in 3 s)" "$tmp/backoff.txt"
fi

touch "$flags/ready"
eventually "once a replica runs past 10 s, the alert is cleared" 90 "$tmp/all.json" \
	'.alerts | any(.kind == "service.crash-loop" and .cleared != null) and
	 all(.kind != "service.crash-loop" or .cleared != null)' -- "$gp" alerts --all -o json
"$gp" service show flaky >"$tmp/show.out" 2>&1
if grep -q crash-looping "$tmp/show.out"; then bad "service show still says crash-looping" "$tmp/show.out"
else ok "... and service show no longer says crash-looping"; fi
expect "service show counts the replica running" 0 '1 replica\(s\) wanted, 1 running' -- \
	"$gp" service show flaky
"$gp" service rm flaky >/dev/null
finish
