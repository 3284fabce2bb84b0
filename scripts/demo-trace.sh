#!/bin/sh
# demo-trace.sh — `make demo-trace`: replays the Alibaba openb production trace with every
# placement policy (10 seeds, inflated to 130 % of the cluster's GPUs) and
# prints GPU allocated % next to the published results of the FGD paper.
set -eu
cd "$(dirname "$0")/.."
traces=${TRACES:-data/openb}
nodes=$traces/openb_node_list_gpu_node.csv
pods=$traces/openb_pod_list_default.csv
if [ ! -r "$nodes" ] || [ ! -r "$pods" ]; then
	echo "demo: the openb trace is not at $traces; set TRACES=DIR" >&2
	exit 1
fi
build/gpupool sim --nodes "$nodes" --pods "$pods" --policy all --seeds 42-51 "$@"
echo
echo "@100%, @130%: GPU allocated % of the cluster's 6,212 GPUs when the GPU"
echo "demand that arrived first reaches 100 % and 130 % (mean of 10 seeds)."
echo "paper: the published means (Weng et al., USENIX ATC '23). default is gpupool's"
echo "own policy; see docs/scheduling.md."
