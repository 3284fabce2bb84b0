#!/bin/sh
# check-openb.sh — the scheduling core on the Alibaba openb production
# trace, against the published results (Weng et al., ATC '23):
#   - random, dotprod, gpuclustering, gpupacking, bestfit and fgd each land
#     within 1.5 points of the published mean at 100 % and 130 % arrived,
#     on each of the five published traces;
#   - the default policy allocates more than published FGD on every trace.
# usage: check-openb.sh PATH/TO/gpupool TRACE_DIR
# The trace is the repository's own (data/openb): a missing file fails the
# test, it never skips.
set -u
gp=$1
dir=$2
. "$(dirname "$0")/../lib.sh"
nodes=$dir/openb_node_list_gpu_node.csv
policies=random,dotprod,gpuclustering,gpupacking,bestfit,fgd,default

# verdicts: for each JSON line of `gpupool sim`, "ok|TEXT" or "FAIL|TEXT".
verdicts() {
	fgd=$(grep '"policy":"fgd"' "$1")
	awk -v fgd="$fgd" '
		function num(s, key,   m) {
			if (match(s, "\"" key "\":[0-9.]+")) {
				m = substr(s, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 }
			return -1 }
		function published(s, key,   p) {
			p = s; if (!sub(/.*"published":/, "", p)) return -1; return num(p, key) }
		{
			match($0, /"policy":"[a-z]+"/); pol = substr($0, RSTART + 10, RLENGTH - 11)
			match($0, /"trace":"[a-z0-9]+"/); tr = substr($0, RSTART + 9, RLENGTH - 10)
			a = num($0, "alloc_pct_at_100"); b = num($0, "alloc_pct_at_130")
			if (pol == "default") {
				pa = published(fgd, "alloc_pct_at_100"); pb = published(fgd, "alloc_pct_at_130")
				ok = pa > 0 && pb > 0 && a > pa && b > pb
				what = "vs published fgd"
			} else {
				pa = published($0, "alloc_pct_at_100"); pb = published($0, "alloc_pct_at_130")
				ok = pa > 0 && pb > 0 && (a - pa) ^ 2 <= 2.25 && (b - pb) ^ 2 <= 2.25
				what = "vs published    "
			}
			printf "%s|%-10s %-13s %6.2f %6.2f  %s %6.2f %6.2f\n", ok ? "ok" : "FAIL", tr, pol,
				a, b, what, pa, pb
		}' "$1"
}

if [ ! -r "$nodes" ]; then
	bad "the openb trace is at $dir (the repository's copy is data/openb)"
	finish
	exit 1
fi
for trace in default gpushare40 multigpu20 gpuspec10 cpu100; do
	pods=$dir/openb_pod_list_$trace.csv
	runs "gpupool sim on $trace" "$tmp/$trace.json" -- \
		"$gp" sim --nodes "$nodes" --pods "$pods" --seeds 42-51 --json --policy "$policies" ||
		continue
	# One line per policy asked for, each named once.
	if [ "$(grep -o '"policy":"[a-z]*"' "$tmp/$trace.json" | sort -u | wc -l)" -eq 7 ] &&
		[ "$(wc -l <"$tmp/$trace.json")" -eq 7 ]; then
		ok "$trace: one result per policy"
	else
		bad "$trace: one result per policy" "$tmp/$trace.json"
	fi
	verdicts "$tmp/$trace.json" >"$tmp/$trace.verdicts"
	while IFS='|' read -r verdict text; do
		if [ "$verdict" = ok ]; then ok "$text"; else bad "$text"; fi
	done <"$tmp/$trace.verdicts"
done
finish
