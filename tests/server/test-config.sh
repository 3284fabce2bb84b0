#!/bin/sh
# test-config.sh — `gpupool server --config FILE`: a server started from
# docs/gpupool.example.yaml (its paths replaced by the test's; it gives
# prices {A100: 2.50, T4: 0.35} and overcommit {"*": 1.0, T4: 1.5}, and
# the API's deadlines and bounds, shown by --check-config) runs
# three 50 % tasks at once on one simulated T4 and bills the T4 hours at
# 0.35; flags override the file (--sample-ms, and --price for the same
# model; --log-max for log_max); a bad file stops the server before it
# starts, with FILE:LINE:COLUMN and the key, exit status 2.
# usage: test-config.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:1
. "$(dirname "$0")/agent-lib.sh"
example=$(dirname "$0")/../../docs/gpupool.example.yaml
cfg=$tmp/gpupool.yaml

sed -e "s|^db: .*|db: $tmp/state/gpupool.db|" -e "s|^socket: .*|socket: $GPUPOOL_SOCKET|" \
	-e "s|^run_dir: .*|run_dir: $tmp/run|" -e "s|^log_dir: .*|log_dir: $tmp/logs|" \
	"$example" >"$cfg"

# ---- bad files --------------------------------------------------------------------
printf 'db: %s\nqueue_max: lots\n' "$tmp/bad.db" >"$tmp/bad.yaml"
expect "a bad value: FILE:LINE:COLUMN, the key, what to do; exit 2" 2 \
	"^gpupool server: $tmp/bad.yaml:2:12: key \"queue_max\": \"lots\" is not a whole number" -- \
	"$gp" server --config "$tmp/bad.yaml"
printf 'db: %s\nprice: {T4: 1}\n' "$tmp/bad.db" >"$tmp/bad.yaml"
expect "an unknown key is named, with the keys there are" 2 \
	"$tmp/bad.yaml:2:1: key \"price\": unknown; the keys are db, " -- \
	"$gp" server --config "$tmp/bad.yaml"
if [ -e "$tmp/bad.db" ]; then bad "a bad file starts nothing" /dev/null; else ok "a bad file starts nothing"; fi
expect "a missing file is refused" 2 "cannot read the configuration" -- \
	"$gp" server --config "$tmp/none.yaml"
expect "--check-config finds a bad file without starting anything" 2 "key \"price\": unknown" -- \
	"$gp" server --config "$tmp/bad.yaml" --check-config
expect "--check-config says what a good one gives, flags included" 0 \
	"configuration OK.*price +A100 = 3.00.*overcommit T4 = 1.50" -- \
	sh -c "'$gp' server --config '$cfg' --price A100=3 --check-config | tr '\n' ' '"
expect "--check-config shows the file's deadlines and bounds" 0 \
	"queue max  10000, 1000 per tenant +deadlines  headers 10000 ms, body 30000 ms +conn. max  512, 64 per client" -- \
	sh -c "'$gp' server --config '$cfg' --check-config | tr '\n' ' '"
printf 'db: %s\nqueue_max: 10\ntenant_queue_max: 11\n' "$tmp/bad.db" >"$tmp/bad.yaml"
expect "a tenant queue bound over the queue's is refused" 2 \
	"--tenant-queue-max 11 is over --queue-max 10, so it could never be reached" -- \
	"$gp" server --config "$tmp/bad.yaml" --check-config
expect "--check-config says the file's log cap (log_max: 64M)" 0 \
	"^  logs +$tmp/logs, at most 64M per task" -- \
	"$gp" server --config "$cfg" --check-config
expect "--log-max overrides the file's log_max" 0 "^  logs +$tmp/logs, at most 1G per task" -- \
	"$gp" server --config "$cfg" --log-max 1G --check-config
expect "a --log-max under 1M is refused, saying what to give" 2 \
	"--log-max \"64K\" must be a size from 1M to 1T, like 64M or 1G" -- \
	"$gp" server --config "$cfg" --log-max 64K --check-config
expect "--check-config says the logs' total cap and free-space floor (the defaults)" 0 \
	"^  logs +$tmp/logs, at most 64M per task, 4G in all, 256M kept free" -- \
	"$gp" server --config "$cfg" --check-config
expect "--log-total-max 0 and --log-free-min override them" 0 \
	"^  logs +$tmp/logs, at most 64M per task, no total cap, 6M kept free" -- \
	"$gp" server --config "$cfg" --log-total-max 0 --log-free-min 6M --check-config
expect "a --log-free-min that is no size is refused, saying what to give" 2 \
	"--log-free-min \"lots\" must be 0 \(none\) or a size from 1M to 1024T, like 256M" -- \
	"$gp" server --config "$cfg" --log-free-min lots --check-config
if [ -e "$tmp/state/gpupool.db" ]; then
	bad "--check-config made no database" /dev/null
else
	ok "--check-config made no database"
fi

# ---- the example file, with a flag over it --------------------------------------------
server_start --config "$cfg" --sample-ms 500
curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
	http://gpupool/v1/status >"$tmp/status.json"
check "--sample-ms overrides the file's sample_ms" '.[0].sample_ms == 500' "$tmp/status.json"
for n in 1 2 3 4; do "$gp" submit -q --mem 3G --compute 50 -- sleep 3 >/dev/null; done
sleep 1
"$gp" task ls -o json >"$tmp/tasks.json"
check "the file's overcommit T4: 1.5 runs three 50 % tasks at once on the T4" \
	'.[0].tasks | map(select(.state == "running")) | length == 3' "$tmp/tasks.json"
for _ in $(seq 100); do
	"$gp" task ls -o json >"$tmp/tasks.json"
	jq -e '[.tasks[] | select(.state != "succeeded")] | length == 0' "$tmp/tasks.json" \
		>/dev/null && break
	sleep 0.1
done
check "the four tasks succeeded" '[.[0].tasks[] | select(.state == "succeeded")] | length == 4' \
	"$tmp/tasks.json"
month=$(date -u +%Y-%m)
"$gp" bill --month "$month" -o json >"$tmp/bill.json"
check "the bill prices the T4 hours at the file's 0.35" '
	.[0].rows | length == 1 and (.[0] | (.model | test("T4")) and .priced and
	.price_per_hour == 0.35 and .allocated_gpu_hours > 0 and
	.cost == .allocated_gpu_hours * 0.35)' "$tmp/bill.json"

# ---- a --price for the file's model wins ------------------------------------------------
kill "$server" && wait "$server"
server_start --config "$cfg" --price t4=0.5
"$gp" bill --month "$month" -o json >"$tmp/bill.json"
check "--price t4=0.5 replaces the file's T4: 0.35" \
	'.[0].rows | length == 1 and .[0].price_per_hour == 0.5' "$tmp/bill.json"
finish
