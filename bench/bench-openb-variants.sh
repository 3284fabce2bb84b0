#!/bin/sh
# bench-openb-variants.sh — does the default policy's advantage over FGD hold
# on traces we do not ship? Derives families of variants of the openb
# default trace (bench/openb-make-variants.sh: model-constrained pods,
# sharing pods, multi-GPU pods and CPU-only pods each swept across their
# range, and a smaller cluster), replays each with fgd (the baseline, in the
# same run) and default, 10 seeds (42-51) as in the openb protocol, and
# prints one JSON object per variant with both allocations at 100 % and
# 130 % arrived, the difference in points and `default_ge_fgd`.
# Exits 1 when the default allocates less than FGD on any variant at either
# point (means over the seeds, as printed), 2 when the variants cannot be
# made or a replay fails.
# usage: bench-openb-variants.sh PATH/TO/gpupool TRACE_DIR OUT_DIR
set -eu
gp=$1
traces=$2
out=$3
here=$(dirname "$0")
"$here/openb-make-variants.sh" "$traces" "$out" || exit 2
misses=0
while read -r name; do
	if ! "$gp" sim --nodes "$out/$name.nodes.csv" --pods "$out/$name.pods.csv" --policy fgd,default \
		--seeds 42-51 --json </dev/null >"$out/$name.json"; then
		echo "bench-openb-variants.sh: gpupool sim failed on $name" >&2
		exit 2
	fi
	awk -v name="$name" '
		function num(key,   m) {
			match($0, "\"" key "\":[0-9.]+"); m = substr($0, RSTART, RLENGTH)
			sub(/.*:/, "", m); return m + 0 }
		/"policy":"fgd"/ { f100 = num("alloc_pct_at_100"); f130 = num("alloc_pct_at_130") }
		/"policy":"default"/ { d100 = num("alloc_pct_at_100"); d130 = num("alloc_pct_at_130") }
		END {
			ok = d100 >= f100 && d130 >= f130
			printf "{\"bench\":\"openb-variants\",\"variant\":\"%s\",\"fgd_alloc_pct_at_100\":%.2f,\"fgd_alloc_pct_at_130\":%.2f,\"default_alloc_pct_at_100\":%.2f,\"default_alloc_pct_at_130\":%.2f,\"gain_pp_at_100\":%.2f,\"gain_pp_at_130\":%.2f,\"default_ge_fgd\":%s}\n",
				name, f100, f130, d100, d130, d100 - f100, d130 - f130, ok ? "true" : "false"
			exit !ok }' "$out/$name.json" || misses=$((misses + 1))
done <"$out/variants.txt"
if [ "$misses" -gt 0 ]; then
	echo "bench-openb-variants.sh: the default allocates less than FGD on $misses variant(s)" >&2
	exit 1
fi
