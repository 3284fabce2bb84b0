#!/bin/sh
# bench-search-cost.sh — what the placement index's bounded search costs in
# allocation. The core scores two candidates per index bucket (src/core/
# cluster.c); `gpupool sim --exhaustive` scores every node that fits, the
# exact placement. Replays the five shipped openb traces with every policy,
# and the derived families (bench/openb-make-variants.sh) with the default
# policy, both ways, 10 seeds (42-51) as in the openb protocol, and prints
# one JSON object per replay pair: both allocations at 100 % and 130 %
# arrived and the differences in points (bounded − exhaustive), then a
# summary with the default policy's largest loss and largest difference
# either way.
# Exits 1 when the default policy allocates more than 0.05 points less
# than the exhaustive search on any trace or family at either point, 2 when
# a replay fails.
# usage: bench-search-cost.sh PATH/TO/gpupool TRACE_DIR OUT_DIR
set -eu
gp=$1
traces=$2
out=$3
here=$(dirname "$0")
limit=0.05
mkdir -p "$out"
"$here/openb-make-variants.sh" "$traces" "$out" || exit 2

# replay NAME NODES PODS POLICIES: one line per policy.
replay() {
	for mode in bounded exhaustive; do
		flag=
		[ "$mode" = exhaustive ] && flag=--exhaustive
		if ! "$gp" sim --nodes "$2" --pods "$3" --policy "$4" --seeds 42-51 $flag \
			--json </dev/null >"$out/$1.$mode.json"; then
			echo "bench-search-cost.sh: gpupool sim failed on $1 ($mode)" >&2
			exit 2
		fi
	done
	awk -v name="$1" '
		function num(key,   m) {
			match($0, "\"" key "\":[0-9.]+"); m = substr($0, RSTART, RLENGTH)
			sub(/.*:/, "", m); return m + 0 }
		function policy(   m) {
			match($0, "\"policy\":\"[a-z]+\""); m = substr($0, RSTART, RLENGTH)
			sub(/.*:"/, "", m); sub(/"$/, "", m); return m }
		FNR == NR { e100[policy()] = num("alloc_pct_at_100"); e130[policy()] = num("alloc_pct_at_130"); next }
		{
			p = policy(); b100 = num("alloc_pct_at_100"); b130 = num("alloc_pct_at_130")
			printf "{\"bench\":\"search-cost\",\"trace\":\"%s\",\"policy\":\"%s\",\"exhaustive_alloc_pct_at_100\":%.2f,\"exhaustive_alloc_pct_at_130\":%.2f,\"bounded_alloc_pct_at_100\":%.2f,\"bounded_alloc_pct_at_130\":%.2f,\"diff_pp_at_100\":%.2f,\"diff_pp_at_130\":%.2f}\n",
				name, p, e100[p], e130[p], b100, b130, b100 - e100[p], b130 - e130[p]
		}' "$out/$1.exhaustive.json" "$out/$1.bounded.json"
}

nodes=$traces/openb_node_list_gpu_node.csv
{
	for trace in default cpu100 gpushare40 gpuspec10 multigpu20; do
		replay "$trace" "$nodes" "$traces/openb_pod_list_$trace.csv" all
	done
	while read -r name; do
		replay "$name" "$out/$name.nodes.csv" "$out/$name.pods.csv" default
	done <"$out/variants.txt"
} | tee "$out/search-cost.lines"
awk -v limit="$limit" '
	function num(key,   m) {
		match($0, "\"" key "\":-?[0-9.]+"); m = substr($0, RSTART, RLENGTH)
		sub(/.*:/, "", m); return m + 0 }
	function abs(x) { return x < 0 ? -x : x }
	function note(d) {
		if (abs(d) > widest) widest = abs(d)
		if (-d > loss) loss = -d }
	/"policy":"default"/ { n++; note(num("diff_pp_at_100")); note(num("diff_pp_at_130")) }
	END {
		ok = n > 0 && loss <= limit + 1e-9
		printf "{\"bench\":\"search-cost\",\"summary\":true,\"default_replays\":%d,\"default_max_loss_pp\":%.2f,\"default_max_abs_diff_pp\":%.2f,\"limit_loss_pp\":%.2f,\"ok\":%s}\n",
			n, loss, widest, limit, ok ? "true" : "false"
		exit !ok }' "$out/search-cost.lines"
