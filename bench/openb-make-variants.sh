#!/bin/sh
# openb-make-variants.sh — derive openb-style traces that we do NOT ship, to check
# that a policy's advantage is not fitted to the five published traces.
#
# usage: openb-make-variants.sh SRC_DIR OUT_DIR
# From openb_pod_list_default.csv and the node list it writes, with fixed
# seeds (deterministic for a given awk):
#   share30   30 % of whole 1-GPU pods replaced by copies of sharing pods
#   share60   60 % of them likewise
#   multi15   10 % of whole 1-GPU pods replaced by copies of multi-GPU pods
#   multi40   25 % of them likewise
#   spec25    25 % of GPU pods restricted to a model set seen in the trace
#   cpu25     25 % of GPU pods replaced by copies of CPU-only pods
#   halfnodes the default pods on every second node (a smaller cluster)
# Each variant is OUT_DIR/NAME.pods.csv with OUT_DIR/NAME.nodes.csv.
set -eu
src=$1
out=$2
mkdir -p "$out"
pods=$src/openb_pod_list_default.csv
nodes=$src/openb_node_list_gpu_node.csv

# $1 name, $2 seed, $3 awk program run over the pods (two passes: the first
# collects candidate rows into arrays, the second rewrites).
variant() {
	awk -F, -v OFS=, -v seed="$2" "$3" "$pods" "$pods" >"$out/$1.pods.csv"
	cp "$nodes" "$out/$1.nodes.csv"
}

# Columns: 1 name 2 cpu 3 mem 4 num_gpu 5 gpu_milli 6 gpu_spec ...
collect='FNR == 1 { if (NR == 1) srand(seed); if (NR > 1) print; next }
NR == FNR {
	if ($4 == 0) cpu[nc++] = $0
	else if ($4 == 1 && $5 < 1000) share[ns++] = $0
	else if ($4 > 1) multi[nm++] = $0
	next
}
function pick(arr, n) { return arr[int(rand() * n)] }
function renamed(row) { sub(/^[^,]*/, $1, row); return row }'

variant share30 5 "$collect"'
$4 == 1 && $5 == 1000 && rand() < 0.3 { print renamed(pick(share, ns)); next }
{ print }'

variant multi15 6 "$collect"'
$4 == 1 && $5 == 1000 && rand() < 0.1 { print renamed(pick(multi, nm)); next }
{ print }'

variant share60 1 "$collect"'
$4 == 1 && $5 == 1000 && rand() < 0.6 { print renamed(pick(share, ns)); next }
{ print }'

variant multi40 2 "$collect"'
$4 == 1 && $5 == 1000 && rand() < 0.25 { print renamed(pick(multi, nm)); next }
{ print }'

variant spec25 3 "$collect"'
BEGIN { split("T4,G2,P100,V100M16|V100M32,P100|V100M16|V100M32,G3,G2|T4,G2|G3", spec, ",") }
$4 > 0 && rand() < 0.25 { $6 = spec[1 + int(rand() * 8)]; print; next }
{ print }'

variant cpu25 4 "$collect"'
$4 > 0 && rand() < 0.25 { print renamed(pick(cpu, nc)); next }
{ print }'

cp "$pods" "$out/halfnodes.pods.csv"
awk 'NR == 1 || NR % 2 == 0' "$nodes" >"$out/halfnodes.nodes.csv"
