#!/bin/sh
# test-sim-history.sh — `gpupool sim --history` (issue 16; docs/operations.md)
# on a real server with this machine's agent on two simulated T4s: four
# runs of template half (4 GiB, 60 %, T4) whose processes hold 1 GiB and
# use about 20 % of a device, so that two run at a time and two wait. The
# replay as recorded holds what the bill holds (allocated GPU-hours, used
# device time); one card makes the waits and the makespan grow, two more
# remove the wait; the advised slice lowers the GPU-hours by the ratio of
# the shares; a share below the one used stretches the runs to their work;
# memory below the peak would fail; cards of a model the tasks may not use
# place nothing. Bad options and an empty period are refused, naming the
# fix. The API's POST /v1/sim/history (the console's page) answers what the
# command prints.
# usage: test-sim-history.sh GPUPOOL GPULOAD
gp=$1 gl=$2
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300 || { finish; exit 1; }

expect "with no task yet there is nothing to replay, and it says what to do" 1 \
	'no task submitted .* ran.*--month YYYY-MM or --since DATE' -- "$gp" sim --history

runs "the admin adds template half (4 GiB, 60 %, T4)" "$tmp/tpl.out" -- \
	"$gp" template add half --mem 4G --compute 60 --models T4
runs "tenant vision is added" "$tmp/vision.json" -- "$gp" tenant add vision --unlimited -o json
vision=$(jq -r .token "$tmp/vision.json")
# 1 GiB held for 3 s by one process while another serves 100 requests/s of
# 2 ms kernels (20 % of the device).
work="\"\$0\" alloc --mib 1024 --hold 3 --json & \"\$0\" serve --qps 100 --kernel-us 2000 --duration 3 --json; wait"
ids=""
for i in 1 2 3 4; do
	ids="$ids $(as "$vision" submit -q --name infer --template half -- sh -c "$work" "$gl")"
done
for id in $ids; do
	wait_for "task $id succeeds" 60 "$id" '.state == "succeeded"'
done
"$gp" bill -o json >"$tmp/bill.json"

# ---- as recorded -----------------------------------------------------------
runs "the replay as recorded answers" "$tmp/none.json" -- "$gp" sim --history -o json
check "no variant: the recorded set-up alone, said so" \
	'.[0] | .variant == null and .ratio == null and (.note | test("no variant"))' "$tmp/none.json"
check "the four runs are replayed on the two cards, all placed" \
	'.[0] | .tasks == 4 and .never_started == 0 and .recorded.cards == 2 and
	 .recorded.placed == 4 and .recorded.never_placed == 0 and .recorded.policy == "default"' \
	"$tmp/none.json"
check "as recorded, the allocated GPU-hours are the bill's (share x time of the records)" \
	'(.[0].recorded.gpu_hours - .[1].totals.allocated_gpu_hours | fabs) <
	 1e-9 + 1e-9 * .[1].totals.allocated_gpu_hours' "$tmp/none.json" "$tmp/bill.json"
check "the physical utilization x cards x makespan is the bill's used GPU-hours" \
	'(.[0].recorded | .util_pct / 100 * .cards * .makespan_s / 3600) as $used |
	 ($used - .[1].totals.used_gpu_hours | fabs) < 1e-6 * .[1].totals.used_gpu_hours + 1e-12 and
	 $used > 0' "$tmp/none.json" "$tmp/bill.json"
check "two of 60 % fit on two cards at a time: the others wait" \
	'.[0].recorded | .wait_max_s > 0 and .wait_p50_s <= .wait_max_s and .alloc_pct > 0' \
	"$tmp/none.json"
expect "the table says there is no variant" 0 'no variant given' -- "$gp" sim --history

# ---- other cards -------------------------------------------------------------
runs "--cards T4=1 (half the cards) answers" "$tmp/one.json" -- \
	"$gp" sim --history --cards T4=1 -o json
check "on one card the longest wait and the makespan grow; the GPU-hours do not change" \
	'.[0] | .variant.cards == 1 and .variant.placed == 4 and
	 .variant.wait_max_s > .recorded.wait_max_s and .ratio.makespan_s > 1 and
	 .variant.makespan_s > .recorded.makespan_s and
	 (.variant.gpu_hours - .recorded.gpu_hours | fabs) < 1e-12 and .ratio.cards == 0.5' \
	"$tmp/one.json"
runs "--add-cards T4=2 answers" "$tmp/four.json" -- "$gp" sim --history --add-cards T4=2 -o json
check "with four cards nobody waits" \
	'.[0] | .variant.cards == 4 and .variant.wait_max_s == 0 and .recorded.wait_max_s > 0' \
	"$tmp/four.json"
expect "--add-cards T4=-2 leaves no card, and says what to give" 2 'no cards.*--cards' -- \
	"$gp" sim --history --add-cards T4=-2
runs "--cards H100=2 --card-mem H100=80G answers" "$tmp/h100.json" -- \
	"$gp" sim --history --cards H100=2 --card-mem H100=80G -o json
check "on H100s the T4 template's tasks are never placed" \
	'.[0].variant | .placed == 0 and .never_placed == 4 and .models[0].model == "H100" and
	 .models[0].cards == 2 and .gpu_hours == 0' "$tmp/h100.json"

# ---- other slices -----------------------------------------------------------
runs "gpupool advise answers" "$tmp/advice.json" -- "$gp" advise -o json
runs "--advised answers" "$tmp/advised.json" -- "$gp" sim --history --advised -o json
check "the advised share (below 60 %) lowers the GPU-hours by its ratio to 60 %" \
	'(.[0].advice[] | select(.kind == "template" and .name == "half")) as $a |
	 .[1] | .variant.stretched == 0 and .variant.would_fail == 0 and
	 $a.compute_proposed_pct < 60 and .variant.gpu_hours < .recorded.gpu_hours and
	 (.variant.gpu_hours - .recorded.gpu_hours * $a.compute_proposed_pct / 60 | fabs) < 1e-9 and
	 (.variant.overrides[] | select(.name == "half") | .compute_pct == $a.compute_proposed_pct)' \
	"$tmp/advice.json" "$tmp/advised.json"
check "and with the smaller share the longest wait does not grow" \
	'.[0] | .variant.wait_max_s <= .recorded.wait_max_s' "$tmp/advised.json"
runs "--template half=,5 (below the share used) answers" "$tmp/five.json" -- \
	"$gp" sim --history --template half=,5 -o json
check "at 5 % the runs stretch to their work: the GPU-hours become the device time used" \
	'.[0].variant.stretched == 4 and
	 (.[0].variant.gpu_hours - .[1].totals.used_gpu_hours | fabs) < 1e-6 + 1e-3 * .[1].totals.used_gpu_hours and
	 .[0].variant.makespan_s > .[0].recorded.makespan_s' "$tmp/five.json" "$tmp/bill.json"
runs "--template half=512,30 (below the 1 GiB peak) answers" "$tmp/small.json" -- \
	"$gp" sim --history --template half=512,30 -o json
check "512 MiB is below the recorded peak: all four would fail, replayed as recorded" \
	'.[0] | .variant.would_fail == 4 and
	 (.variant.gpu_hours - .recorded.gpu_hours | fabs) < 1e-12' "$tmp/small.json"
runs "--policy binpack --price T4=2 answers" "$tmp/binpack.json" -- \
	"$gp" sim --history --policy binpack --price T4=2 -o json
check "another policy: the variant's, the recorded one's default; the bill at the price" \
	'.[0] | .variant.policy == "binpack" and .recorded.policy == "default" and
	 .variant.placed == 4 and (.recorded.cost - .recorded.gpu_hours * 2 | fabs) < 1e-12 and
	 .recorded.models[0].priced and .recorded.models[0].price_per_hour == 2' "$tmp/binpack.json"
expect "the table sets them side by side" 0 'queue wait max \(s\) +[0-9.]+ +[0-9.]+ +[0-9.-]+' -- \
	"$gp" sim --history --cards T4=1

# ---- the API (the console's page) ------------------------------------------------
sock=$GPUPOOL_SOCKET
admin=$(cat "$GPUPOOL_TOKEN_FILE")
api "POST /v1/sim/history answers" 200 '"variant"' "$admin" POST /v1/sim/history \
	-d '{"cards": "T4=1", "advised": true}'
cp "$tmp/out" "$tmp/api-sim.json"
"$gp" sim --history --cards T4=1 --advised -o json >"$tmp/cli-sim.json"
check "... what gpupool sim --history prints for the same variant, figure for figure" \
	'.[0] == .[1] and .[0].variant.cards == 1' "$tmp/api-sim.json" "$tmp/cli-sim.json"
api "the tenant replays its own tasks there too" 200 '"tasks":4' "$vision" POST /v1/sim/history -d '{}'
api "a wrong field is named in the API's words" 400 'field ..add_cards..: ..T4.. must be MODEL=N' \
	"$admin" POST /v1/sim/history -d '{"add_cards": "T4"}'
api "a month without tasks is 409, naming the fields to change" 409 \
	'no task submitted in 2001-01.*..month.. YYYY-MM or ..since.. DATE' \
	"$admin" POST /v1/sim/history -d '{"month": "2001-01"}'

# ---- errors -----------------------------------------------------------------
expect "an unknown policy is refused, naming the list" 2 'gpupool policies' -- \
	"$gp" sim --history --policy nope
expect "a malformed --cards is refused" 2 'MODEL=N' -- "$gp" sim --history --cards T4
expect "a model the pool lacks needs its memory" 2 '--card-mem' -- \
	"$gp" sim --history --cards H100=2
expect "--since and --month together are refused" 2 'not both' -- \
	"$gp" sim --history --since 2026-01-01 --month 2026-01
expect "a month without tasks has nothing to replay" 1 'no task submitted in 2001-01' -- \
	"$gp" sim --history --month 2001-01
finish
