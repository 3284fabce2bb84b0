#!/bin/sh
# test-region.sh — `gpupool region ls|show|set` end to end: real processes
# (region-hold) join tasks in a private region directory; the command lists
# them as tables and JSON, changes their limits live, and refuses bad input
# with exit 2 and missing devices or tasks with exit 1. On a managed device
# (region-admin plays the server's agent) it shows the limits table, and
# (as root, for another user) refuses `set` to whoever cannot write it.
# usage: test-region.sh PATH/TO/gpupool PATH/TO/region-hold PATH/TO/region-admin
set -u
gp=$1
hold=$2
admin=$3
. "$(dirname "$0")/../lib.sh"
dir=$tmp                        # the region directory; region-hold are its jobs
out=$tmp/out
A=GPU-5a1c0de2-0000-4000-8000-00000000000a
B=GPU-5a1c0de2-0000-4000-8000-00000000000b

# expect_json NAME JQ-FILTER -- COMMAND...: COMMAND prints one JSON object
# (one line) for which the filter is true.
expect_json() {
	if [ $# -lt 4 ] || [ "$3" != -- ] || [ -z "$2" ]; then
		malformed expect_json "$@"
		return 1
	fi
	name=$1 filter=$2
	shift 3
	"$@" >"$out" 2>&1
	got=$?
	if [ "$got" -eq 0 ] && [ "$(wc -l <"$out")" -eq 1 ] &&
	   jq -e "type == \"object\" and ($filter)" "$out" >/dev/null 2>&1; then
		ok "$name"
	else
		bad "$name: exit $got, filter $filter, output:" "$out"
	fi
}

# start NAME ARGS...: runs region-hold in the background, waits for "ready".
start() {
	name=$1
	shift
	: >"$dir/$name.log"
	"$hold" "$dir" "$@" >>"$dir/$name.log" 2>&1 &
	eval "pid_$name=$!"
	for _ in $(seq 50); do
		grep -q ready "$dir/$name.log" && return 0
		sleep 0.1
	done
	bad "start $name: no \"ready\":" "$dir/$name.log"
}

expect help 0 'usage: gpupool region ls' -- "$gp" region --help
expect no-subcommand 2 'usage: gpupool region' -- "$gp" region
expect unknown-subcommand 2 'unknown subcommand "frob"' -- "$gp" region frob
expect empty-dir 0 "no device regions in $dir" -- "$gp" region ls --dir "$dir"
expect_json empty-dir-json '.devices == [] and .dir == "'"$dir"'"' -- "$gp" region ls --dir "$dir" --json
expect missing-dir 1 "no regions: $dir/none" -- "$gp" region ls --dir "$dir/none"

#     name   UUID TOTAL TASK  MEM COMPUTE PRIO ISOLATION HOLD
start train1 "$A" 16G train 4G  30      5    hard      1G
start train2 "$A" 16G train 8G  90      1    shared    256M
start serve  "$A" 16G serve 0   20      9    shared    512M
start other  "$B" 8G  batch 2G  100     0    hard      0

expect ls-table 0 "$A +train +4096 +1280 +30% +5 +hard +2" -- "$gp" region ls --dir "$dir"
expect ls-whole 0 "$A +serve +16384 \(all\) +512 +20% +9 +shared +1" -- "$gp" region ls --dir "$dir"
expect ls-other 0 "$B +batch +2048 +0 +100% +0 +hard +1" -- "$gp" region ls --dir "$dir"
expect ls-header 0 '^DEVICE +TASK +MEM MiB +USED MiB +COMPUTE +PRIO +ISOLATION +PROCS' -- \
	"$gp" region ls --dir "$dir"
expect_json ls-json '(.devices | map(.uuid)) == ["'"$A"'", "'"$B"'"]' -- "$gp" region ls --dir "$dir" --json
expect_json ls-json-train '.devices[0].tasks[0] | .id == "train" and .mem_limit_mib == 4096 and
	.mem_used_mib == 1280 and .compute == 30 and .priority == 5 and .isolation == "hard" and
	.processes == 2 and .generation == 1' -- "$gp" region ls --dir "$dir" --json
expect_json ls-json-serve '.devices[0].tasks[1] | .id == "serve" and .mem_limit_bytes == 0 and
	.mem_limit_mib == 16384 and .mem_used_bytes == 536870912 and .isolation == "shared"' -- \
	"$gp" region ls --dir "$dir" --json
expect_json ls-env '.devices | length == 2' -- env GPUPOOL_RUN_DIR="$dir" "$gp" region ls --json

expect show-table 0 "^device $B: 8192 MiB" -- "$gp" region show "$B" --dir "$dir"
expect_json show-json '.uuid == "'"$B"'" and .total_mib == 8192 and (.tasks | length) == 1 and
	.tasks[0].id == "batch"' -- "$gp" region show "$B" --dir "$dir" --json
expect show-missing 1 "no region for device GPU-none in $dir" -- \
	"$gp" region show GPU-none --dir "$dir"
expect show-no-uuid 2 'needs a device UUID' -- "$gp" region show --dir "$dir"
expect show-bad-uuid 2 '"../up" is not a device UUID' -- "$gp" region show ../up --dir "$dir"

# Changes keep the fields not given, and bump the generation.
expect set-mem 0 "$A train: memory 2048 MiB, compute 50%, priority 5, hard" -- \
	"$gp" region set "$A" train --mem 2G --compute 50 --dir "$dir"
expect_json set-mem-json '.tasks[0] | .mem_limit_mib == 2048 and .compute == 50 and .priority == 5 and
	.isolation == "hard" and .generation == 2' -- "$gp" region show "$A" --dir "$dir" --json
expect set-more 0 'priority 0, shared' -- \
	"$gp" region set "$A" train --priority 0 --isolation shared --dir "$dir"
expect set-whole 0 'memory 16384 MiB \(all\)' -- "$gp" region set "$A" train --mem 0 --dir "$dir"
expect_json set-kept-json '.tasks[0] | .mem_limit_bytes == 0 and .compute == 50 and .priority == 0 and
	.isolation == "shared" and .generation == 4' -- "$gp" region show "$A" --dir "$dir" --json
expect set-percent 0 'compute 70%' -- "$gp" region set "$A" serve --compute 70% --dir "$dir"

expect set-nothing 2 'nothing to change' -- "$gp" region set "$A" train --dir "$dir"
expect set-compute-0 2 '--compute "0" must be a percent from 1 to 100' -- \
	"$gp" region set "$A" train --compute 0 --dir "$dir"
expect set-compute-101 2 '--compute "101"' -- "$gp" region set "$A" train --compute 101 --dir "$dir"
expect set-compute-word 2 '--compute "lots"' -- "$gp" region set "$A" train --compute lots --dir "$dir"
expect set-priority-10 2 '--priority "10" must be a whole number from 0 to 9' -- \
	"$gp" region set "$A" train --priority 10 --dir "$dir"
expect set-priority-neg 2 '--priority "-1"' -- "$gp" region set "$A" train --priority -1 --dir "$dir"
expect set-isolation 2 '--isolation "soft" must be hard or shared' -- \
	"$gp" region set "$A" train --isolation soft --dir "$dir"
expect set-mem-bad 2 '--mem "4X" is not a size' -- "$gp" region set "$A" train --mem 4X --dir "$dir"
expect set-mem-neg 2 '--mem "-1" is not a size' -- "$gp" region set "$A" train --mem -1 --dir "$dir"
expect set-mem-big 2 "--mem 17G is more than the device's 16384 MiB" -- \
	"$gp" region set "$A" train --mem 17G --dir "$dir"
expect set-json-flag 2 '--json applies only to ls and show' -- \
	"$gp" region set "$A" train --json --mem 1G --dir "$dir"
expect ls-mem-flag 2 '--mem applies only to set' -- "$gp" region ls --mem 1G --dir "$dir"
expect ls-extra 2 'takes no arguments' -- "$gp" region ls extra --dir "$dir"
expect set-bad-flag 2 'usage' -- "$gp" region set "$A" train --frobnicate --dir "$dir"
expect set-one-arg 2 'needs a device UUID and a task id' -- "$gp" region set "$A" --mem 1G --dir "$dir"
expect set-unknown-task 1 "no task \"nobody\" on device $A \($dir\)" -- \
	"$gp" region set "$A" nobody --mem 1G --dir "$dir"
expect set-unknown-device 1 "no region for device GPU-none in $dir" -- \
	"$gp" region set GPU-none train --mem 1G --dir "$dir"
expect_json rejected-kept '.tasks[0] | .mem_limit_bytes == 0 and .compute == 50 and .generation == 4' -- \
	"$gp" region show "$A" --dir "$dir" --json

# A process killed with SIGKILL takes its memory with it; its task stays.
# shellcheck disable=SC2154
kill -9 "$pid_train1" "$pid_serve"
for _ in $(seq 10); do          # gone within a second, zombies included
	"$gp" region show "$A" --dir "$dir" --json | jq -e '.tasks[1].processes == 0' >/dev/null && break
	sleep 0.1
done
expect_json after-kill '.tasks[0].mem_used_mib == 256 and .tasks[0].processes == 1 and
	.tasks[1].id == "serve" and .tasks[1].mem_used_bytes == 0 and .tasks[1].processes == 0' -- \
	"$gp" region show "$A" --dir "$dir" --json

# A file of another version is reported, not replaced.
printf 'not a region, certainly not one of ours' >"$dir/device-GPU-alien.region"
expect alien 1 "device-GPU-alien.region was made by another version" -- \
	"$gp" region show GPU-alien --dir "$dir"
expect ls-alien 1 "$B +batch" -- "$gp" region ls --dir "$dir"

# A managed device: the table's limits, an admitted task before any of its
# processes runs; its owner may change them.
m=$tmp/managed
C=GPU-5a1c0de2-0000-4000-8000-00000000000c
"$admin" "$m" "$C" prepare 16G &&
	"$admin" "$m" "$C" admit task-7 "$("$admin" secret)" 2G 50 5 hard ||
	bad "managed: prepare and admit" /dev/null
expect managed-ls 0 "$C +task-7 +2048 +0 +50% +5 +hard +0" -- "$gp" region ls --dir "$m"
expect managed-show 0 "^limits kept by gpupool server in $m/device-$C.limits" -- \
	"$gp" region show "$C" --dir "$m"
expect_json managed-json '.managed and .tasks[0].managed and .tasks[0].compute == 50 and
	.tasks[0].processes == 0 and .tasks[0].generation == 1' -- "$gp" region show "$C" --dir "$m" --json
expect_json standalone-json '.managed == false and .tasks[0].managed == false' -- \
	"$gp" region show "$B" --dir "$dir" --json
expect managed-set-owner-refused 1 "books would not follow.*give --force" -- \
	"$gp" region set "$C" task-7 --compute 40 --dir "$m"
# (no server here to tell: the change is made, and that it was not told said)
expect managed-set-owner-forced 1 "forced, but the server was not told" -- \
	env GPUPOOL_SOCKET="$tmp/no-server.sock" "$gp" region set "$C" task-7 --compute 40 --dir "$m" --force
expect managed-set-unknown 1 "no task \"task-8\" on device $C" -- \
	"$gp" region set "$C" task-8 --compute 40 --dir "$m"

# Another user, in the files' group (it can open the region) or not: refused,
# one line that says where the limits are kept and what to do; nothing
# changed.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	kept="task-7's limits on $C are kept by gpupool server \(device-$C.limits is not writable by you\); change them with \`gpupool task set\`"
	expect managed-set-refused 1 "^gpupool region set: $kept\$" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$gp" region set "$C" task-7 --compute 1 --dir "$m"
	expect managed-set-refused-outsider 1 "^gpupool region set: $kept\$" -- \
		setpriv --reuid=65534 --regid=4242 --clear-groups "$gp" region set "$C" task-7 --compute 1 --dir "$m"
	expect managed-read-by-member 0 "$C +task-7 +2048 +0 +40%" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$gp" region ls --dir "$m"
	expect_json managed-unchanged '.tasks[0].compute == 40 and .tasks[0].generation == 2' -- \
		"$gp" region show "$C" --dir "$m" --json
else
	echo "skip managed-set-refused: needs root and setpriv to run as another user"
fi

finish
