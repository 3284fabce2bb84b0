#!/bin/sh
# openb-make-variants.sh — derive openb-style traces that we do NOT ship, to
# check that a policy's advantage is not fitted to the five published traces.
# Each family sweeps one dimension of the workload across its range; every
# other dimension stays as in openb_pod_list_default.csv (the "default
# trace": 8,152 pods, of which G = 7,064 ask for GPUs).
#
# usage: openb-make-variants.sh SRC_DIR OUT_DIR
# SRC_DIR holds the openb node list, openb_pod_list_default.csv and
# openb_pod_list_gpuspec10.csv. Writes OUT_DIR/NAME.pods.csv and
# OUT_DIR/NAME.nodes.csv for each NAME below (the full node list unless
# said otherwise), and OUT_DIR/variants.txt, the names in the order below.
#
# Words: a GPU pod asks for at least one GPU; a sharing pod for part of one
# GPU (num_gpu 1, gpu_milli < 1000); a whole pod for one entire GPU; a
# multi-GPU pod for more than one; a CPU-only pod for none. GPU demand is
# the sum of num_gpu × gpu_milli / 1000.
#
#   specN     N % of the GPU pods (exactly round(N/100 × G), chosen uniformly)
#             may run only on some GPU models, N in 10 25 33 50 75. Each
#             chosen pod gets a gpu_spec drawn from the constrained pods of
#             openb_pod_list_gpuspec10.csv of its own kind (sharing, whole,
#             multi-GPU), so the model sets and their proportions are the
#             trace's own (e.g. half of them T4 alone).
#   shareN    N % of the GPU pods are sharing pods, N in 20 40 60 80 100
#             (the default trace: 43.6 %). To raise the share, GPU pods that
#             do not share (chosen uniformly) are replaced by copies of
#             sharing pods; to lower it, sharing pods are replaced by copies
#             of the other GPU pods.
#   multiN    multi-GPU pods carry N % of the GPU demand, N in 10 20 30 40
#             50 (the default trace: 7.3 %): whole pods, taken in a random
#             order, are replaced by copies of multi-GPU pods until the
#             multi-GPU share of the demand first reaches N %.
#   cpuKx     CPU-only pods are K times the default trace's share of the
#             pods (13.35 %), K in 1 2 3; the GPU pods are those of the
#             default trace, copies of its CPU-only pods are added (cpu1x
#             is the default trace itself, the family's reference).
#   halfnodes the default trace on every second node (a smaller cluster).
#
# A copy keeps the name of the row it replaces (added rows get new names).
# Generation is deterministic: each variant has a fixed seed, and the
# random numbers come from a generator written here (Park–Miller, exact in
# any awk's doubles), not from the awk's rand().
set -eu
src=$1
out=$2
mkdir -p "$out"
: >"$out/variants.txt"
pods=$src/openb_pod_list_default.csv
specs=$src/openb_pod_list_gpuspec10.csv
nodes=$src/openb_node_list_gpu_node.csv
for f in "$pods" "$specs" "$nodes"; do
	[ -r "$f" ] || { echo "openb-make-variants.sh: cannot read $f" >&2; exit 1; }
done

# What every variant shares: the pods of the default trace in row[1..n]
# with kind[i] (cpu, share, whole, multi) and demand[i]; the constrained
# pods' gpu_specs of gpuspec10 by kind in spec[kind, 1..nspec[kind]];
# random numbers; helpers. The variant's own code runs in END and prints.
# Columns: 1 name 2 cpu 3 mem 4 num_gpu 5 gpu_milli 6 gpu_spec ...
common='
function rnd() { state = (state * 16807) % 2147483647; return state / 2147483647 }
function below(n) { return 1 + int(rnd() * n) }
function kind_of(g, m) { return g == 0 ? "cpu" : g > 1 ? "multi" : m < 1000 ? "share" : "whole" }
function is_gpu(i) { return kind[i] != "cpu" }
# Row r with the name of row i.
function named(r, i,   name) {
	name = row[i]; sub(/,.*/, "", name); sub(/^[^,]*/, name, r); return r }
# A random row of kind k (or of any GPU kind but k when not_k).
function pick(k, not_k,   i) {
	do i = below(n); while (not_k ? (kind[i] == k || !is_gpu(i)) : kind[i] != k)
	return i }
# Marks exactly want of the rows i with cand[i] (ncand of them), uniformly.
function choose(want, ncand,   i, seen, got) {
	for (i = 1; i <= n; i++) {
		chosen[i] = 0
		if (!cand[i]) continue
		if (rnd() * (ncand - seen) < want - got) { chosen[i] = 1; got++ }
		seen++
	}
}
function print_all(   i) { print header; for (i = 1; i <= n; i++) print row[i] }
BEGIN { FS = OFS = ","; state = seed; for (i = 0; i < 8; i++) rnd() }
FNR == 1 { if (NR == 1) header = $0; next }
NR == FNR {
	if ($6 != "") { k = kind_of($4, $5); spec[k, ++nspec[k]] = $6 }
	next
}
{
	row[++n] = $0; kind[n] = kind_of($4, $5); demand[n] = $4 * $5 / 1000
	count[kind[n]]++; total += demand[n]
}'

# $1 name, $2 seed, $3 the variant's END block; the awk variable `level`
# is the family level ($4).
variant() {
	awk -v seed="$2" -v level="$4" "$common"'
	END {'"$3"'}' "$specs" "$pods" >"$out/$1.pods.csv"
	cp "$nodes" "$out/$1.nodes.csv"
	echo "$1" >>"$out/variants.txt"
}

spec='
	g = n - count["cpu"]
	for (i = 1; i <= n; i++) cand[i] = is_gpu(i)
	choose(int(level / 100 * g + 0.5), g)
	for (i = 1; i <= n; i++) if (chosen[i]) {
		$0 = row[i]; k = nspec[kind[i]] ? kind[i] : "whole"
		$6 = spec[k, below(nspec[k])]; row[i] = $0
	}
	print_all()'

share='
	g = n - count["cpu"]; want = int(level / 100 * g + 0.5); have = count["share"]
	from = want > have ? "other" : "share"
	for (i = 1; i <= n; i++) cand[i] = is_gpu(i) && (from == "share") == (kind[i] == "share")
	choose(want > have ? want - have : have - want, from == "share" ? have : g - have)
	for (i = 1; i <= n; i++) if (chosen[i])
		row[i] = named(row[from == "share" ? pick("share", 1) : pick("share", 0)], i)
	print_all()'

multi='
	for (i = 1; i <= n; i++) if (kind[i] == "multi") m += demand[i]
	for (i = 1; i <= n; i++) order[i] = i
	for (i = n; i > 1; i--) { j = below(i); t = order[i]; order[i] = order[j]; order[j] = t }
	for (o = 1; o <= n && m < level / 100 * total; o++) {
		i = order[o]
		if (kind[i] != "whole") continue
		j = pick("multi", 0); row[i] = named(row[j], i)
		m += demand[j]; total += demand[j] - demand[i]
	}
	print_all()'

cpu='
	g = n - count["cpu"]; p = level * count["cpu"] / n
	add = int(p / (1 - p) * g + 0.5) - count["cpu"]
	print_all()
	for (a = 1; a <= add; a++) {
		$0 = row[pick("cpu", 0)]; $1 = "openb-pod-cpu-copy-" a; print
	}'

for level in 10 25 33 50 75; do
	variant "spec$level" "$((100 + level))" "$spec" "$level"
done
for level in 20 40 60 80 100; do
	variant "share$level" "$((200 + level))" "$share" "$level"
done
for level in 10 20 30 40 50; do
	variant "multi$level" "$((300 + level))" "$multi" "$level"
done
for level in 1 2 3; do
	variant "cpu${level}x" "$((400 + level))" "$cpu" "$level"
done
cp "$pods" "$out/halfnodes.pods.csv"
awk 'NR == 1 || NR % 2 == 0' "$nodes" >"$out/halfnodes.nodes.csv"
echo halfnodes >>"$out/variants.txt"
