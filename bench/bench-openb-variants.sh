#!/bin/sh
# bench-openb-variants.sh — does the default policy's advantage over FGD hold
# on traces we do not ship? Derives variants of the openb default trace
# (bench/openb-make-variants.sh), replays each with fgd (the baseline, in
# the same run) and default, 10 seeds, and prints one JSON object per
# variant with both allocations and the difference in points.
# usage: bench-openb-variants.sh PATH/TO/gpupool TRACE_DIR OUT_DIR
set -eu
gp=$1
traces=$2
out=$3
here=$(dirname "$0")
"$here/openb-make-variants.sh" "$traces" "$out"
for pods in "$out"/*.pods.csv; do
	name=$(basename "$pods" .pods.csv)
	"$gp" sim --nodes "$out/$name.nodes.csv" --pods "$pods" --policy fgd,default \
		--seeds 42-51 --json | awk -v name="$name" '
		function num(key,   m) {
			match($0, "\"" key "\":[0-9.]+"); m = substr($0, RSTART, RLENGTH)
			sub(/.*:/, "", m); return m + 0 }
		/"policy":"fgd"/ { f100 = num("alloc_pct_at_100"); f130 = num("alloc_pct_at_130") }
		/"policy":"default"/ { d100 = num("alloc_pct_at_100"); d130 = num("alloc_pct_at_130") }
		END { printf "{\"bench\":\"openb-variants\",\"variant\":\"%s\",\"fgd_alloc_pct_at_100\":%.2f,\"fgd_alloc_pct_at_130\":%.2f,\"default_alloc_pct_at_100\":%.2f,\"default_alloc_pct_at_130\":%.2f,\"gain_pp_at_100\":%.2f,\"gain_pp_at_130\":%.2f}\n",
			name, f100, f130, d100, d130, d100 - f100, d130 - f130 }'
done
