#!/bin/sh
# demo.sh — `make demo`: the whole platform on one machine, for about a
# minute, on simulated devices (2 x A100-80G, 2 x T4-16G, 2 x Ascend 910B;
# simdev) unless DEVICE=real: a server with its agent, two tenants with quotas, templates,
# the seed's worked example (an inference service, a training task and a
# preprocessing task sharing cards), a mixed load that exceeds one tenant's
# quota (borrowing, queueing, one preemption), a live change of a running
# task's share, the same tasks again on whole cards as the baseline (a
# tenant of its own, `baseline`, so that its bill stands apart), and the
# seed's mixed pool: templates of both vendors placing CUDA and ACL tasks
# across NVIDIA and Ascend cards.
# Then a report, from what the server, NVML and the tasks themselves said
# (and, on simulated cards, what the cards count having given out). Cards
# are named by model and index, as `gpupool device ls` numbers them
# ("A100 #0"). The inference service measures its latency in windows of
# WINDOW_S seconds (one gpuload result each), after a first window set
# aside as a warm-up in every phase, so that the report gives each
# phase's p99 with its spread, and compares two phases only where the
# spread leaves no doubt. The server samples usage every second
# (--sample-ms 1000, not its 10 s default), so that what it reports of
# the cards is at most a second old and its metering works over the same
# second as the cards' utilization figures.
# usage: scripts/demo.sh [--keep]   (--keep: leave the server running, and
# print the environment that the CLI needs to reach it)
set -eu
cd "$(dirname "$0")/.."
root=$PWD
gp=$root/build/gpupool
gl=$root/build/gpuload
probe=$root/build/tests/nvml-probe
simctl=$root/build/simdev/simctl
keep=no
for arg in "$@"; do
	case $arg in
	--keep) keep=yes ;;
	*) echo "demo: unknown option $arg (the only one is --keep)" >&2; exit 2 ;;
	esac
done

dir=$(mktemp -d /var/tmp/gpupool-demo-XXXXXX)
# Run as root, the server runs each tenant's tasks as that tenant's own
# user: they reach the simulated devices and the regions here, as in
# /var/tmp (sticky; not /tmp, which each task has of its own); the
# server's own files stay in $dir/state, which it makes 0700.
chmod 1777 "$dir"
if [ "${DEVICE:-sim}" = sim ]; then
	export LD_LIBRARY_PATH=$root/build/simdev GPUPOOL_SIM_DEVICES=a100-80g:2,t4-16g:2,ascend-910b-64g:2
	export GPUPOOL_SIM_DIR=$dir/sim
fi
export GPUPOOL_SOCKET=$dir/server.sock GPUPOOL_TOKEN_FILE=$dir/state/admin.token
# `gpupool region` finds the server's regions here (the CLI's default is
# /run/gpupool).
export GPUPOOL_RUN_DIR=$dir/run
# ... and what they run may be out of their reach (a checkout in /root):
# copies in $dir/bin, and the tasks start from $dir.
. "$root/scripts/for-tasks.sh"
for_tasks "$dir/bin" gp gl || { echo "demo: cannot copy what the tasks run into $dir/bin" >&2; exit 1; }
cd "$dir"
server=""
sampler=""
stop_all() {
	[ -n "$sampler" ] && kill "$sampler" 2>/dev/null
	if [ "$keep" = no ]; then
		"$gp" task ls -o json 2>/dev/null | jq -r '.tasks[] | select(.state == "running") | .pid' |
			while read -r pid; do kill -9 -"$pid" 2>/dev/null || true; done
		[ -n "$server" ] && kill "$server" 2>/dev/null
		rm -rf "$dir"
	fi
}
trap stop_all EXIT
say() { printf '\n== %s\n' "$*"; }

# ---- the server, its agent, tenants and templates ------------------------------
say "starting the server with this machine's agent ($dir)"
prices=""
# (910B: the Ascend cards are "Ascend910B2", which a price named "Ascend"
# would not match: prices match as --model does.)
if "$gp" server --help | grep -q -- --price; then
	for p in A100=2.50 T4=0.35 910B=1.80; do prices="$prices --price $p"; done
fi
# The web console's port: the first of 8470-8489 nobody answers on.
port=8470
while [ "$port" -lt 8490 ] && curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; do
	port=$((port + 1))
done
SAMPLE_MS=1000
# shellcheck disable=SC2086 # $prices is a list of options
"$gp" server --db "$dir/state/gpupool.db" --with-agent --run-dir "$GPUPOOL_RUN_DIR" \
	--task-uid-base auto --grace-ms 2000 --sample-ms "$SAMPLE_MS" \
	--tcp "$port" --ui-dir "$root/ui" $prices >"$dir/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
	"$gp" task ls >/dev/null 2>&1 && break
	sleep 0.1
done
grep "gpupool server:" "$dir/server.log" | sed 's/^gpupool server: /  /'

# The cards as the report names them, from the pool's listing: by UUID,
# their model without the vendor's words and their index ("A100 #0").
"$gp" device ls -o json | jq '[.devices[] | { key: .uuid, value: { vendor, index,
	label: "\(.name | split(" ") | map(select(IN("NVIDIA", "Tesla", "AMD", "Intel(R)",
		"Huawei") | not)) | .[0] // "card" | split("-")[0]) #\(.index)" } }] |
	from_entries' >"$dir/cards.json"
# JQ_CARDS: a jq function, `placement | cards`: "A100 #0", "A100 #0, A100 #1".
JQ_CARDS='def cards: if . == null or . == "" then "-" else split(",") | map(split("@") as $p
	| ($cards[0][$p[0]].label // $p[0]) + (if $p[1] then "@" + $p[1] else "" end)) | join(", ") end;'

token() { jq -r .token; }
vision=$("$gp" tenant add vision --mem-guaranteed 10G --compute-guaranteed 80 \
	--mem-borrowable 18G --compute-borrowable 150 --priority-max 8 -o json | token)
nlp=$("$gp" tenant add nlp --mem-guaranteed 32G --compute-guaranteed 200 -o json | token)
# The baseline of phase 3 (phase 2's tasks again, a whole card each) is a
# tenant of its own, so that its bill stands apart from the tenants' own.
# Nothing guaranteed (it runs only when the others are done), and room to
# borrow a whole card on every NVIDIA card at once, each charged as the
# largest (a task that may run on any NVIDIA card is charged so).
nvidia=$("$gp" device ls -o json | jq '[.devices[] | select(.vendor == "nvidia")]')
nv_cards=$(echo "$nvidia" | jq length)
nv_mib=$(echo "$nvidia" | jq 'if length == 0 then 0 else (map(.memory_total_mib) | max) * length end')
base=$("$gp" tenant add baseline --mem-guaranteed 0 --compute-guaranteed 0 \
	--mem-borrowable "$nv_mib" --compute-borrowable $((nv_cards * 100)) --priority-max 8 \
	-o json | token)
"$gp" template add infer-4g --mem 4G --compute 30 --isolation shared >/dev/null
"$gp" template add train-16g --mem 16G --compute 80 --models A100 --isolation shared >/dev/null
"$gp" template add prep-2g --mem 2G --compute 20 >/dev/null
"$gp" tenant ls -o json | jq -r '.tenants[] | select(.admin or .unlimited | not) |
	def size: if . % 1024 == 0 then "\(. / 1024) GiB" else "\(.) MiB" end;
	"  tenant \(.name): " +
	(if .mem_guaranteed_mib > 0 or .compute_guaranteed_pct > 0 then
		"\(.mem_guaranteed_mib | size) / \(.compute_guaranteed_pct) % guaranteed"
	 else "nothing guaranteed" end) +
	(if .mem_borrowable_mib > 0 or .compute_borrowable_pct > 0 then
		", may borrow \(.mem_borrowable_mib | size) / \(.compute_borrowable_pct) % more"
	 else "" end) +
	(if .name == "baseline" then " (phase 3: a whole card on every NVIDIA card)" else "" end)'
echo "  templates: infer-4g (4 GiB, 30 %), train-16g (16 GiB, 80 %, A100), prep-2g (2 GiB, 20 %);"
echo "  shared isolation for the service and training (idle time is lent), hard elsewhere"

as() { who=$1; shift; GPUPOOL_TOKEN=$who GPUPOOL_TOKEN_FILE= "$gp" "$@"; }
submit() { who=$1; shift; as "$who" submit -q "$@"; }
wait_state() { # ID STATE SECONDS
	for _ in $(seq $(($3 * 10))); do
		[ "$("$gp" task show "$1" -o json | jq -r .state)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_done() { # ID...: until none of them is queued or running (60 s at most)
	for _ in $(seq 300); do
		busy=no
		for id in "$@"; do
			"$gp" task show "$id" -o json | jq -e '.state | test("pending|running|preempted")' \
				>/dev/null && busy=yes && break
		done
		[ "$busy" = no ] && return 0
		sleep 0.2
	done
	echo "demo: tasks still queued or running after 60 s:" >&2
	"$gp" task ls >&2
	exit 1
}
result() { # ID JQ: from the task's own JSON output (its log)
	jq -R -r "fromjson? | $2" "$dir/state/logs/task-$1.log" 2>/dev/null | tail -1
}
# The inference probe, as a command line for `submit --wrap`: gpuload serve
# for a warm-up window, then N windows of WINDOW_S seconds, one JSON result
# (p50, p99, ...) per window, in one task. The warm-up's result is set
# aside in every phase alike: it holds what only a first window pays (the
# program's start, its context on the device, its pages), which would
# make whichever phase runs first look slower.
WINDOW_S=3
probe_line() { # N
	echo "for w in warm-up $(seq -s ' ' "$1"); do $gl serve --qps 200 --duration $WINDOW_S --json; done"
}
windows() { # ID FILE: the measured windows' results of the probe task ID,
	# one per line; the warm-up's in FILE.warm-up
	jq -R -c 'fromjson? | select(type == "object" and has("p99_us"))' \
		"$dir/state/logs/task-$1.log" >"$2.all" 2>/dev/null || : >"$2.all"
	head -n 1 "$2.all" >"$2.warm-up"
	tail -n +2 "$2.all" >"$2"
}

# The sampler: every half second, the tasks, NVML's view of the devices
# and the server's (every vendor's devices: `gpupool device ls`).
sample() {
	while :; do
		now=$(date +%s.%N)
		printf '{"t":%s,"phase":"%s","tasks":%s,"nvml":%s,"devices":%s}\n' "$now" \
			"$(cat "$dir/phase")" \
			"$("$gp" task ls -o json 2>/dev/null | jq -c .tasks || echo '[]')" \
			"$("$probe" 2>/dev/null || echo null)" \
			"$("$gp" device ls -o json 2>/dev/null | jq -c .devices || echo '[]')"
		sleep 0.5
	done >>"$dir/samples.jsonl"
}
echo idle >"$dir/phase"
sample &
sampler=$!

# ---- 1. the inference probe alone --------------------------------------------------
load_start=$(cut -d ' ' -f 1 /proc/loadavg)
say "1. the inference service alone on an A100 (priority 8, 4 GiB, 30 %)"
alone=$(submit "$vision" --name infer-alone --template infer-4g --priority 8 --model A100 \
	--kind inference --wrap "$(probe_line 4)")
wait_done "$alone"
windows "$alone" "$dir/alone.jsonl"
echo "  p99 latency alone, per ${WINDOW_S} s window: $(jq -r '.p99_us | round' "$dir/alone.jsonl" |
	paste -sd ' ') us (the warm-up window before them, set aside:" \
	"$(jq -r '.p99_us | round' "$dir/alone.jsonl.warm-up") us)"

# ---- 2. sliced: the worked example, a mixed load, a live change -----------------------
say "2. sliced: the worked example, then a mixed load over vision's quota"
echo sliced >"$dir/phase"
infer=$(submit "$vision" --name infer --template infer-4g --priority 8 --model A100 \
	--kind inference --wrap "$(probe_line 5)")
# Training and preprocessing are work-bound (a number of steps), so that a
# slice and a whole card are compared on the same work.
train=$(submit "$nlp" --name train --template train-16g --priority 3 --kind training \
	-- "$gl" train --steps 1200 --duration 60 --json)
prep=$(submit "$nlp" --name prep --template prep-2g --priority 1 --model A100 \
	-- "$gl" train --steps 250 --duration 60 --json)
wait_state "$prep" running 5 || true
# Three small services of the nlp tenant: slices pack them beside the
# inference service; on whole cards each would need a card of its own.
small=""
for n in 1 2 3; do
	small="$small $(submit "$nlp" --name "embed-$n" --mem 2G --compute 15 --template infer-4g \
		--model nvidia --kind inference -- "$gl" serve --qps 100 --duration 10 --json)"
done
mixed=""
for n in 1 2 3 4 5; do
	mixed="$mixed $(submit "$vision" --name "vision-$n" --mem 6G --compute 50 --model T4 \
		--isolation shared --priority 2 -- "$gl" train --steps 600 --duration 60 --json)"
done
sleep 2
echo "  vision submitted 5 training tasks of 6 GiB / 50 % on the T4s:"
for id in $mixed; do
	"$gp" task show "$id" -o json | jq -r '"    task \(.id) \(.state): \(.reason)"'
done
say "   nlp needs its guarantee on a T4: a borrowed task is preempted"
reclaim=$(submit "$nlp" --name nlp-t4 --mem 6G --compute 50 --model T4 --priority 4 \
	-- "$gl" train --steps 500 --duration 60 --json)
wait_state "$reclaim" running 10 || true
"$gp" audit -o json | jq -r '[.audit[] | select(.action == "task.preempt")] |
	if length == 0 then "    (no task was preempted: nlp found room)"
	else .[] | "    \(.object) preempted: \(.detail)" end'
"$gp" task show "$reclaim" -o json | jq -r '"    task \(.id) (nlp-t4) \(.state)"'

say "   live change: the training task gets 60 % instead of 80 %, without a restart"
"$gp" task set "$train" --compute 60 --reason "demo: room for another task" | sed 's/^/    /'
wait_done $infer $train $prep $small $mixed $reclaim

# ---- 3. the baseline: the same tasks on whole cards -------------------------------------
say "3. baseline: the same tasks again, one whole card each (as without slicing), as tenant baseline"
echo whole >"$dir/phase"
whole=""
# Each on the cards it could have had (the inference service on an A100,
# as alone and sliced), with its priority and kind.
field() { jq -r "$1" "$dir/task.json"; }
for id in $infer $train $prep $small $mixed $reclaim; do
	"$gp" task show "$id" -o json >"$dir/task.json"
	whole="$whole $(submit "$base" --whole --model "$(field 'if (.model // "") == "" then "nvidia"
		else .model end')" --name "$(field .name)" --priority "$(field .priority)" \
		--kind "$(field .kind)" --wrap "$(field .command)")"
done
wait_done $whole
# The first of them is the inference service's.
windows "$(echo $whole | cut -d ' ' -f 1)" "$dir/whole.jsonl"
echo idle >"$dir/phase"

# ---- 4. the mixed pool: both vendors under one device model ------------------------------
say "4. the mixed pool: the seed's templates place CUDA and ACL tasks on NVIDIA and Ascend cards"
"$gp" template add a100-50g --mem 50G --compute 60 --models A100 >/dev/null
"$gp" template add a100-20g --mem 20G --compute 30 --models A100 >/dev/null
"$gp" template add t4-full --mem 15G --compute 100 --models T4 >/dev/null
"$gp" template add t4-half --mem 7G --compute 50 --models T4 >/dev/null
"$gp" template add ascend-16g --mem 16G --compute 30 --models ascend >/dev/null
"$gp" template add ascend-8g --mem 8G --compute 15 --models ascend >/dev/null
echo "  templates: a100-50g, a100-20g, t4-full, t4-half (CUDA); ascend-16g, ascend-8g (ACL)"
# cards_busy FILE: what each simulated card counts having given out in
# all (simdev's own record, simctl busy), {"UUID": µs, ...}; null on real
# cards. Taken before and after the phase, when no other task runs.
cards_busy() {
	if [ "${DEVICE:-sim}" = sim ]; then
		i=0
		while uuid=$("$simctl" uuid "$i" 2>/dev/null); do
			printf '{"%s": %s}\n' "$uuid" "$("$simctl" busy "$i")"
			i=$((i + 1))
		done | jq -s 'add'
	else
		echo null
	fi >"$1"
}
cards_busy "$dir/busy-before.json"
mixed_since_ms=$(($(date +%s) * 1000))
echo mixed >"$dir/phase"
steps() { # TEMPLATE RUNTIME STEPS: a training task of the template, on that runtime
	echo "$gl train --runtime $2 --steps $3 --duration 60 --json"
}
pool=""
pool="$pool $(submit "$nlp" --name llm-a100 --template a100-20g --wrap "$(steps a100-20g cuda 1200)")"
pool="$pool $(submit "$nlp" --name llm-npu --template ascend-8g --wrap "$(steps ascend-8g acl 300)")"
pool="$pool $(submit "$vision" --name cv-t4 --template t4-half --wrap "$(steps t4-half cuda 900)")"
pool="$pool $(submit "$vision" --name cv-npu --template ascend-8g --wrap "$(steps ascend-8g acl 300)")"
sleep 1
for id in $pool; do
	"$gp" task show "$id" -o json | jq -r --slurpfile cards "$dir/cards.json" "$JQ_CARDS"'
		"  task \(.id) \(.name): \(.state) on \(.placement | cards) (\(.isolation) isolation," +
		" \(.compute_pct) %)"'
done
wait_done $pool
cards_busy "$dir/busy-after.json"
for id in $pool; do
	[ "$("$gp" task show "$id" -o json | jq -r .state)" = succeeded ] ||
		{ echo "demo: the mixed pool's task $id did not succeed:" >&2; "$gp" task show "$id" >&2; exit 1; }
done
echo idle >"$dir/phase"
kill "$sampler" 2>/dev/null
sampler=""
# The phase's tasks, and the server's usage records of them (GET
# /v1/usage: per task and card, each interval's share and the device time
# its processes used), once they reach each task's end: the last one is
# made at the sampling after the task ended.
for id in $pool; do "$gp" task show "$id" -o json; done | jq -s . >"$dir/mixed-tasks.json"
mixed_usage() {
	curl -s --unix-socket "$GPUPOOL_SOCKET" -H "Authorization: Bearer $(cat "$GPUPOOL_TOKEN_FILE")" \
		"http://gpupool/v1/usage?since_ms=$mixed_since_ms" |
		jq --slurpfile tasks "$dir/mixed-tasks.json" '[.usage[] | select(.task as $t |
			$tasks[0] | any(.id == $t))]'
}
for _ in $(seq 50); do
	mixed_usage >"$dir/mixed-usage.json" 2>/dev/null &&
		jq -e --slurpfile usage "$dir/mixed-usage.json" 'all(.[]; .id as $t | .ended_ms as $last
			| $usage[0] | any(.task == $t and .end_ms >= $last))' "$dir/mixed-tasks.json" \
			>/dev/null && break
	sleep 0.2
done

# ---- the report -------------------------------------------------------------------------
say "REPORT"
windows "$infer" "$dir/sliced.jsonl"
jq -s -r --arg window "$WINDOW_S" --arg sample_ms "$SAMPLE_MS" --arg cores "$(nproc)" \
	--arg load_start "$load_start" --arg load_end "$(cut -d ' ' -f 1 /proc/loadavg)" \
	--arg train_steps "$(result "$train" .steps)" --arg train_rate "$(result "$train" .steps_per_sec)" \
	--slurpfile lat_alone "$dir/alone.jsonl" \
	--slurpfile lat_sliced "$dir/sliced.jsonl" --slurpfile lat_whole "$dir/whole.jsonl" \
	--slurpfile warm_alone "$dir/alone.jsonl.warm-up" \
	--slurpfile warm_sliced "$dir/sliced.jsonl.warm-up" \
	--slurpfile warm_whole "$dir/whole.jsonl.warm-up" \
	--slurpfile cards "$dir/cards.json" --slurpfile mixed_tasks "$dir/mixed-tasks.json" \
	--slurpfile mixed_usage "$dir/mixed-usage.json" \
	--slurpfile busy_before "$dir/busy-before.json" --slurpfile busy_after "$dir/busy-after.json" \
	-f "$root/scripts/demo-report.jq" "$dir/samples.jsonl"
if "$gp" bill --help >/dev/null 2>&1; then
	echo
	"$gp" bill --month "$(date -u +%Y-%m)"
	echo "(vision and nlp: their own tasks, phases 1, 2 and 4. baseline: phase 3, phase 2's tasks"
	echo "again on a whole card each: the same work as without slicing, billed apart. GPU-H ALLOC is"
	echo "share x hours, what is charged; GPU-H USED the device time metered, above ALLOC where"
	echo "tasks in shared isolation borrowed idle time.)"
fi
if [ "$keep" = yes ]; then
	# What the CLI reads (src/cli/client.c, src/server/server.c's
	# defaults, the region commands): the server's socket, the admin's
	# token file, the regions' folder; on simulated cards the simulated
	# driver too (build/tests/nvml-probe, simctl).
	echo
	echo "The server keeps running. To use it from another shell, paste:"
	echo "  export PATH=$(dirname "$gp"):\$PATH"
	echo "  export GPUPOOL_SOCKET=$GPUPOOL_SOCKET GPUPOOL_TOKEN_FILE=$GPUPOOL_TOKEN_FILE" \
		"GPUPOOL_RUN_DIR=$GPUPOOL_RUN_DIR"
	[ "${DEVICE:-sim}" = sim ] &&
		echo "  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH GPUPOOL_SIM_DEVICES=$GPUPOOL_SIM_DEVICES" \
			"GPUPOOL_SIM_DIR=$GPUPOOL_SIM_DIR"
	echo "then, as the admin: gpupool task ls; gpupool device ls; gpupool region ls; gpupool bill;"
	echo "gpupool audit; gpupool --help; $probe (what NVML shows)."
	echo "As a tenant, with its token (GPUPOOL_TOKEN wins over the admin's file), from a folder its"
	echo "tasks may enter:"
	echo "  cd $dir && GPUPOOL_TOKEN=$vision gpupool submit --wait --mem 2G --compute 20 -- $gl burn"
	echo "The web console: http://127.0.0.1:$port/ui/ (docs/console.md); sign in with a token:"
	echo "  the admin:       $(cat "$GPUPOOL_TOKEN_FILE")"
	echo "  tenant vision:   $vision"
	echo "  tenant nlp:      $nlp"
	echo "  tenant baseline: $base"
	echo "Stop it with: kill $server; then rm -r $dir (its files: the database, the logs, the samples)"
fi
