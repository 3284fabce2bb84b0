#!/bin/sh
# test-cli.sh — the gpupool command as a user meets it: help, exit codes,
# clear messages for bad input, and the JSON that scripts read.
# usage: test-cli.sh PATH/TO/gpupool   (run from the repository root)
set -u
gp=$1
data=tests/data
. "$(dirname "$0")/../lib.sh"
out=$tmp/out

expect help 0 'usage: gpupool COMMAND' -- "$gp" --help
expect no-command 2 'usage' -- "$gp"
expect unknown-command 2 'unknown command "frobnicate"' -- "$gp" frobnicate
expect policies 0 '^fgd ' -- "$gp" policies
expect sim-help 0 'usage: gpupool sim' -- "$gp" sim --help
expect sim-missing-files 2 'both --nodes and --pods are required' -- "$gp" sim
expect sim-bad-flag 2 'usage' -- "$gp" sim --frobnicate
expect sim-bad-seeds 2 '--seeds "9-1"' -- "$gp" sim --nodes x --pods y --seeds 9-1
expect sim-bad-inflate 2 '--inflate "lots"' -- "$gp" sim --nodes x --pods y --inflate lots
expect sim-bad-policy 2 'unknown policy "magic"' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-11.csv --policy magic
expect sim-bad-devices 2 'unknown --devices "diagonal"' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-11.csv --devices diagonal
expect sim-missing-file 1 'data/none.csv: cannot open' -- \
	"$gp" sim --nodes $data/none.csv --pods $data/pods-11.csv
expect sim-bad-row 1 'bad-number.csv:3: cpu_milli must be a whole number' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/bad-number.csv
expect sim-json 0 '^\{"policy":"default",.*"alloc_pct_at_100":.*"alloc_pct_at_130":.*"per_seed":\[' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-11.csv --seeds 1-3 --json
expect sim-all 0 '"policy":"spread"' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-5.csv --policy all --seeds 1 --json
expect sim-table 0 'bestfit +[0-9.]+ +[0-9.]+' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-11.csv --policy bestfit,fgd --seeds 1,2
expect bench-usage 2 'sched' -- "$gp" bench
expect bench-bad-nodes 2 '--nodes must be' -- "$gp" bench sched --nodes 0
expect bench-small 0 '"decisions_per_sec":[0-9]+.*"slices_cost_ratio"' -- \
	"$gp" bench sched --nodes 50 --pods $data/pods-11.csv --json
expect bench-sched-list 2 'takes one number here' -- "$gp" bench sched --nodes 50,60
expect bench-scale-bad-list 2 'comma list' -- "$gp" bench sched-scale --nodes 50,x
expect bench-scale-small 0 '"nodes":50,"bytes_per_node":[0-9]+.*"nodes":100,.*"scale_cost_ratio_largest_vs_smallest"' -- \
	"$gp" bench sched-scale --nodes 50,100 --repeat 1 --pods $data/pods-11.csv --json
expect sim-exhaustive 0 '^\{"policy":"default",.*"alloc_pct_at_100":' -- \
	"$gp" sim --nodes $data/nodes.csv --pods $data/pods-11.csv --seeds 1-3 --exhaustive --json

# `--policy all` prints one JSON object per policy, one per line.
"$gp" sim --nodes $data/nodes.csv --pods $data/pods-5.csv --policy all --seeds 1 --json >"$out"
lines=$(wc -l <"$out")
policies=$("$gp" policies | wc -l)
if [ "$lines" -eq "$policies" ]; then ok sim-all-lines; else
	bad "sim-all-lines: $lines lines for $policies policies"; fi

finish
