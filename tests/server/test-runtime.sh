#!/bin/sh
# test-runtime.sh — work goes only where its runtime runs (server/runtime.h)
# on a mixed simulated pool (an A100 and a T4, two Ascend 910Bs, an AMD
# MI300X): tasks that name nothing run on the NVIDIA cards (CUDA, the
# pool's default), never on another vendor's, and so do a service's
# replicas; --runtime acl and hip go to the Ascend and AMD cards; a model
# implies its runtime; a runtime or model the pool has no card of, or a
# runtime the model's cards do not run, is refused at submit with the
# reason (the admin may queue for cards to come, a tenant may not); a
# whole card is charged as the card it asks for, not the pool's largest;
# `sim --history` replays the runtimes as they ran.
# usage: test-runtime.sh GPUPOOL
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g:1,t4-16g:1,ascend-910b-64g:2,mi300x-192g:1
. "$(dirname "$0")/agent-lib.sh"
server_start --sample-ms 300 || { finish; exit 1; }

"$gp" device ls -o json >"$tmp/devices.json"
# vendor ID: the vendor of the card task ID runs on (its placement's UUID).
vendor() {
	uuid=$("$gp" task show "$1" -o json | jq -r .placement)
	jq -r --arg u "$uuid" '.devices[] | select(.uuid == $u) | .vendor' "$tmp/devices.json"
}
# submit_all N SECONDS ARGS...: N tasks of ARGS that sleep SECONDS; their
# ids in $ids.
submit_all() {
	n=$1 secs=$2
	shift 2
	ids=""
	for _ in $(seq "$n"); do
		ids="$ids $("$gp" submit -q --mem 4G --compute 50 "$@" -- sleep "$secs")"
	done
}
# vendors_of TEXT: "vendor vendor ..." of the tasks in $ids once they run.
vendors_of() {
	for id in $ids; do
		wait_for "$1: task $id runs" 30 "$id" '.state == "running" and .placement != ""'
	done
	for id in $ids; do vendor "$id"; done | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }'
}

# ---- placed by runtime ---------------------------------------------------------------
submit_all 4 15
cuda_ids=$ids
expect "four tasks that name nothing fill the NVIDIA cards (two each at 50 %), none elsewhere" \
	0 '^nvidia=4 $' -- vendors_of "no runtime named"
"$gp" task show "$(echo $cuda_ids | cut -d' ' -f1)" -o json >"$tmp/cuda.json"
check "their runtime is cuda, their model the NVIDIA cards" \
	'.[0] | .runtime == "cuda" and .model == "nvidia"' "$tmp/cuda.json"
submit_all 1 3
fifth=$(echo $ids)
"$gp" task show $fifth -o json >"$tmp/fifth.json"
check "a fifth waits for an NVIDIA card, though the 910Bs and the MI300X are idle" \
	'.[0].state == "pending"' "$tmp/fifth.json"
submit_all 2 3 --runtime acl
acl_ids=$ids
expect "--runtime acl: on the Ascend cards" 0 '^ascend=2 $' -- vendors_of "runtime acl"
submit_all 1 3 --runtime hip
hip_ids=$ids
expect "--runtime hip: on the AMD card" 0 '^amd=1 $' -- vendors_of "runtime hip"
runs "--model 910B is taken" "$tmp/m910.json" -- "$gp" submit --mem 8G --compute 10 --model 910B \
	-o json -- sleep 3
check "--model 910B implies runtime acl" '.[0] | .runtime == "acl" and .model == "910B"' \
	"$tmp/m910.json"
wait_for "the fifth CUDA task runs once an NVIDIA card frees" 60 "$fifth" '.state == "running"'
expect "and on an NVIDIA card" 0 '^nvidia$' -- vendor "$fifth"

# ---- refused at submit, with the reason ------------------------------------------------
expect "a runtime the model's cards do not run is refused" 1 \
	'the cards that answer to model "910B" run acl, not cuda' -- \
	"$gp" submit --mem 1G --compute 10 --model 910B --runtime cuda -- true
expect "a model no card answers to is refused, naming the pool's cards" 1 \
	'no card of this pool answers to "H100" \(its cards: .*A100.*\)' -- \
	"$gp" submit --mem 1G --compute 10 --model H100 -- true
expect "a runtime no vendor runs is refused with the list" 1 \
	'"metal" is not a runtime; give one of: cuda, acl, ze, hip, cnrt$' -- \
	"$gp" submit --mem 1G --compute 10 --runtime metal -- true
expect "a runtime no card of the pool runs is refused" 1 'no card of this pool runs ze' -- \
	"$gp" submit --mem 1G --compute 10 --runtime ze -- true
runs "tenant lab is added" "$tmp/lab.json" -- "$gp" tenant add lab --mem-guaranteed 8G \
	--compute-guaranteed 100 -o json
lab=$(jq -r .token "$tmp/lab.json")
expect "a tenant may not queue for cards to come" 1 'only the admin may queue' -- \
	as "$lab" submit --mem 1G --compute 10 --model H100 --await-cards -- true
runs "the admin may" "$tmp/await.json" -- "$gp" submit --mem 1G --compute 10 --model H100 \
	--await-cards -o json -- true
await_id=$(jq .id "$tmp/await.json")
wait_for "it waits, saying why" 20 "$await_id" '.state == "pending" and (.reason | test("H100"))'
"$gp" task cancel "$await_id" >/dev/null

# ---- a service's replicas ---------------------------------------------------------------
for id in $cuda_ids $fifth $acl_ids $hip_ids; do
	wait_for "task $id succeeds" 60 "$id" '.state == "succeeded"'
done
# A whole T4 counts as a T4 (15 GiB here), not as the pool's largest card
# (the A100's 80 GiB): within a 16 GiB quota it runs.
runs "tenant t4team (16 GiB) is added" "$tmp/t4team.json" -- "$gp" tenant add t4team \
	--mem-guaranteed 16G --compute-guaranteed 100 -o json
whole=$(as "$(jq -r .token "$tmp/t4team.json")" submit -q --whole --model T4 -- sleep 1)
wait_for "a whole T4 within a 16 GiB quota runs, charged as a T4" 30 "$whole" \
	'.state == "running" or .state == "succeeded"'
runs "a service that names no runtime" "$tmp/svc.json" -- as "$lab" service create web \
	--mem 2G --compute 10 --replicas 3 --no-autoscale -o json -- sleep 600
eventually "its three replicas run" 30 "$tmp/svc-show.json" \
	'[.replica_tasks[] | select(.state == "running")] | length == 3' -- as "$lab" service show web -o json
ids=$(jq -r '.replica_tasks[].id' "$tmp/svc-show.json" | tr '\n' ' ')
expect "every replica on an NVIDIA card" 0 '^nvidia=3 $' -- vendors_of "replicas"
runs "the service goes" "$tmp/svc-rm.out" -- as "$lab" service rm web

# ---- sim --history: the runtimes as they ran ---------------------------------------------
runs "the replay as recorded" "$tmp/hist.json" -- "$gp" sim --history -o json
check "as recorded every task that ran is placed" \
	'.[0] | .recorded.never_placed == 0 and .recorded.placed == .tasks' "$tmp/hist.json"
runs "on Ascend cards only" "$tmp/ascend.json" -- "$gp" sim --history --cards 910B=2 -o json
check "only the three ACL tasks are placed there, the CUDA and HIP ones never" \
	'.[0] | .variant.placed == 3 and .variant.never_placed == .tasks - 3 and .tasks >= 9' \
	"$tmp/ascend.json"

finish
