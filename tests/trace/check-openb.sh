#!/bin/sh
# check-openb.sh — the scheduling core on the Alibaba openb production
# trace, against the published results (Weng et al., ATC '23):
#   - random, dotprod, gpuclustering, gpupacking, bestfit and fgd each land
#     within 1.5 points of the published mean at 100 % and 130 % arrived,
#     on every trace in the folder;
#   - the default policy allocates more than published FGD on every trace.
# usage: check-openb.sh PATH/TO/gpupool TRACE_DIR
# Exits 77 (skipped) when the trace folder is not there.
set -u
gp=$1
dir=$2
nodes=$dir/openb_node_list_gpu_node.csv
if [ ! -r "$nodes" ]; then
	echo "SKIP: no openb trace at $dir"
	exit 77
fi
pass=0
fail=0
for pods in "$dir"/openb_pod_list_*.csv; do
	"$gp" sim --nodes "$nodes" --pods "$pods" --seeds 42-51 --json \
		--policy random,dotprod,gpuclustering,gpupacking,bestfit,fgd,default >"${TMPDIR:-/tmp}/openb.$$" || {
		echo "FAIL: gpupool sim on $pods"; fail=$((fail + 1)); continue; }
	fgd=$(grep '"policy":"fgd"' "${TMPDIR:-/tmp}/openb.$$")
	while read -r line; do
		verdict=$(echo "$line" | awk -v fgd="$fgd" '
			function num(s, key,   m) {
				if (match(s, "\"" key "\":[0-9.]+")) {
					m = substr(s, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 }
				return -1 }
			function published(s, key,   p) {
				p = s; sub(/.*"published":/, "", p); return num(p, key) }
			{
				match($0, /"policy":"[a-z]+"/); pol = substr($0, RSTART + 10, RLENGTH - 11)
				match($0, /"trace":"[a-z0-9]+"/); tr = substr($0, RSTART + 9, RLENGTH - 10)
				a = num($0, "alloc_pct_at_100"); b = num($0, "alloc_pct_at_130")
				if (pol == "default") {
					pa = published(fgd, "alloc_pct_at_100"); pb = published(fgd, "alloc_pct_at_130")
					ok = a > pa && b > pb
					printf "%s %-10s %-13s %6.2f %6.2f  vs published fgd %6.2f %6.2f\n", ok ? "ok  " : "FAIL", tr, pol, a, b, pa, pb
				} else {
					pa = published($0, "alloc_pct_at_100"); pb = published($0, "alloc_pct_at_130")
					ok = pa > 0 && (a - pa) ^ 2 <= 2.25 && (b - pb) ^ 2 <= 2.25
					printf "%s %-10s %-13s %6.2f %6.2f  vs published     %6.2f %6.2f\n", ok ? "ok  " : "FAIL", tr, pol, a, b, pa, pb
				}
			}')
		echo "$verdict"
		case $verdict in ok*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
	done <"${TMPDIR:-/tmp}/openb.$$"
done
rm -f "${TMPDIR:-/tmp}/openb.$$"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
