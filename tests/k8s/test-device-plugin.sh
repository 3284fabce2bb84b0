#!/bin/sh
# test-device-plugin.sh — the device plugin (src/k8s/plugin.c, through
# tests/k8s/plugin-fixture) against kubelet doubles: other gRPC stacks
# playing the kubelet in its real call order (the kubelet double contract,
# tests/k8s/kubelet-double.js). For each double, in a fresh folder: the
# double starts, then the fixture; each line the double prints is checked
# (registration and options, the list, the preferred ids, what Allocate
# answers, PreStartContainer, the re-registration after a kubelet restart
# and the health change pushed after SIGUSR1, with their times reported);
# then the fixture must stop cleanly on SIGTERM and remove its socket.
# Also: the fixture's bad input, and with Node's grpc-js the plugin's
# error answers and two ListAndWatch streams at once.
#
# usage: test-device-plugin.sh FIXTURE DOUBLE...
#   DOUBLE: a command line, e.g. "node tests/k8s/kubelet-double.js"
#   (split on spaces: no spaces inside its words). Run from the
#   repository root.
set -u
if [ $# -lt 2 ]; then
	echo "usage: test-device-plugin.sh FIXTURE DOUBLE..." >&2
	exit 2
fi
fixture=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

resource=gpupool.io/gpu
gpu_a=GPU-aaaaaaaa-1111-2222-3333-444444444444
gpu_b=GPU-bbbbbbbb-5555-6666-7777-888888888888
devices=$gpu_a:4,$gpu_b:4
bound_ms=3000        # the plugin's target is 1000 ms; slack for a busy machine

# event NAME FILE: the double's line for event NAME (empty when none yet).
event() {
	jq -c --arg e "$1" 'select(.event == $e)' "$2" 2>/dev/null | head -n 1
}

# seen NAME FILE PID: waits (30 s at most) until the double (PID) has
# printed event NAME; 1 when it ended or the time ran out first. grep
# looks, not jq (100 ms a call on a busy machine): the health time the
# double reports includes the driver's reaction to "waiting-health".
seen() {
	for _ in $(seq 600); do
		grep -Eq "\"event\": ?\"$1\"" "$2" && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.05
	done
	grep -Eq "\"event\": ?\"$1\"" "$2"
}

# wait_event NAME FILE PID: seen, and the line kept in $dir/NAME.json (a
# failure when it never came).
wait_event() {
	seen "$@"
	line=$(event "$1" "$2")
	[ -n "$line" ] && echo "$line" >"$dir/$1.json" && return 0
	echo "no \"$1\" event from the double; its output and stderr:" >"$dir/why"
	cat "$2" "$2.err" >>"$dir/why" 2>/dev/null
	bad "$dbl: $1" "$dir/why"
	return 1
}

# The ids the fixture advertises, and the CUDA_VISIBLE_DEVICES it answers
# for a set of ids (their distinct UUIDs, in order), as jq definitions.
jq_defs='def all_ids: ["'$gpu_a'", "'$gpu_b'"] | map(. as $u | range(4) | "\($u)::\(.)");
def uuids: map(split("::")[0]) |
	reduce .[] as $u ([]; if any(.[]; . == $u) then . else . + [$u] end);'

# run_double NAME DOUBLE: the whole scenario with one double.
run_double() {
	dbl=$1
	dir=$tmp/$dbl
	mkdir -p "$dir/kubelet"
	out=$dir/double.out
	# shellcheck disable=SC2086 # DOUBLE is a command line
	$2 --dir "$dir/kubelet" --resource $resource --allocate 3 >"$out" 2>"$out.err" &
	double=$!
	wait_event listening "$out" $double || { kill $double; return; }
	"$fixture" --dir "$dir/kubelet" --resource $resource --devices "$devices" \
		2>"$dir/fixture.err" &
	fix=$!
	seen waiting-health "$out" $double && kill -USR1 $fix
	for e in registered list preferred allocate prestart reregistered list2 waiting-health \
		unhealthy; do
		wait_event $e "$out" $double || break
	done
	exited "$dbl: the double's scenario passed" $double || cat "$out.err"
	checks "$dbl"
	stops "$dbl: the fixture stops on SIGTERM" $fix
	if grep -q 'stopping after 2 registrations' "$dir/fixture.err"; then
		ok "$dbl: the plugin counted both registrations"
	else
		bad "$dbl: the plugin counted both registrations (fixture's stderr:)" "$dir/fixture.err"
	fi
	if [ -e "$dir/kubelet/gpupool.sock" ]; then
		echo "$dir/kubelet/gpupool.sock is still there" >"$dir/why"
		bad "$dbl: the fixture removed its socket" "$dir/why"
	else
		ok "$dbl: the fixture removed its socket"
	fi
}

# checks NAME: what the double saw, line by line.
checks() {
	d=$dir
	[ -f "$d/registered.json" ] && check "$1: registered $resource with both options" \
		'.[0] | .resource == "'$resource'" and .endpoint == "gpupool.sock" and
		 .options == {"preStartRequired": true, "getPreferredAllocationAvailable": true}' \
		"$d/registered.json"
	[ -f "$d/list.json" ] && check "$1: the list has the 8 ids, Healthy, with NUMA nodes" \
		"$jq_defs"'.[0].devices | (map(.id) | sort) == (all_ids | sort) and
		 all(.health == "Healthy") and
		 all(if (.id | startswith("'$gpu_a'")) then .numa == [0] else .numa == [1] end)' \
		"$d/list.json"
	[ -f "$d/preferred.json" ] && check "$1: 3 distinct preferred ids out of those advertised" \
		"$jq_defs"'.[0].ids | length == 3 and (unique | length) == 3 and (. - all_ids) == []' \
		"$d/preferred.json"
	[ -f "$d/allocate.json" ] &&
		check "$1: Allocate answers the fixture's envs, mount, device, annotation" \
		"$jq_defs"'.[0].ids as $ids | .[1] |
		 .envs == {"CUDA_VISIBLE_DEVICES": ($ids | uuids | join(",")),
			   "GPUPOOL_TEST_IDS": ($ids | join(","))} and
		 .mounts == [{"containerPath": "/usr/lib/gpupool", "hostPath": "'"$d/kubelet/lib"'",
			      "readOnly": true}] and
		 .devices == [{"containerPath": "/dev/null", "hostPath": "/dev/null", "permissions": "rw"}] and
		 .annotations == {"gpupool.io/test": "yes"}' \
		"$d/preferred.json" "$d/allocate.json"
	[ -f "$d/prestart.json" ] && ok "$1: PreStartContainer answered"
	if [ -f "$d/reregistered.json" ]; then
		echo "$1: re-registered $(jq .ms "$d/reregistered.json") ms after the kubelet restart" \
			"(target 1000, bound $bound_ms)"
		check "$1: re-registered within $bound_ms ms" ".[0].ms <= $bound_ms" "$d/reregistered.json"
	fi
	[ -f "$d/list2.json" ] && check "$1: the list again after the restart, all Healthy" \
		"$jq_defs"'.[0].devices | (map(.id) | sort) == (all_ids | sort) and all(.health == "Healthy")' \
		"$d/list2.json"
	if [ -f "$d/unhealthy.json" ]; then
		echo "$1: the Unhealthy list came $(jq .ms "$d/unhealthy.json") ms after" \
			"\"waiting-health\" (SIGUSR1 sent on seeing it; target 200, bound $bound_ms)"
		check "$1: after SIGUSR1 the first GPU's ids are Unhealthy, the others Healthy" \
			'.[0] | .ms <= '$bound_ms' and (.devices | length) == 8 and
			 all(.devices[]; (.health == "Unhealthy") == (.id | startswith("'$gpu_a'")))' \
			"$d/unhealthy.json"
	fi
}

# The plugin's error answers and two streams at once, from a grpc-js
# client (no kubelet: the plugin serves before it has registered).
probe_errors() {
	dir=$tmp/errors
	mkdir -p "$dir"
	"$fixture" --dir "$dir" --resource $resource --devices "$devices" 2>"$dir/fixture.err" &
	fix=$!
	for _ in $(seq 100); do [ -S "$dir/gpupool.sock" ] && break; sleep 0.1; done
	runs "errors: unknown id, malformed request, two streams" "$dir/probe.out" -- \
		env NODE_PATH="$here/node_modules" SOCK="$dir/gpupool.sock" FIX=$fix \
		PROTO="$here/../../src/k8s/deviceplugin/api.proto" \
		node -e "$probe_js"
	check "errors: Allocate of an unknown id fails NOT_FOUND, naming it" \
		'.[] | select(.case == "unknown") | .code == 5 and (.details | contains("GPU-nope::7"))' \
		"$dir/probe.out"
	check "errors: a malformed Allocate gets INVALID_ARGUMENT" \
		'.[] | select(.case == "malformed") | .code == 3' "$dir/probe.out"
	check "errors: both streams get the list, then the Unhealthy one" \
		'[.[] | select(.case == "stream")] | length == 2 and all(.first == 8 and .unhealthy == 4)' \
		"$dir/probe.out"
	stops "errors: the fixture stops on SIGTERM" $fix
}

probe_js='
const grpc = require("@grpc/grpc-js");
const api = grpc.loadPackageDefinition(require("@grpc/proto-loader").loadSync(process.env.PROTO,
  { keepCase: true, longs: Number, defaults: true })).v1beta1;
const target = "unix://" + process.env.SOCK;
const client = new api.DevicePlugin(target, grpc.credentials.createInsecure());
const out = (o) => console.log(JSON.stringify(o));
setTimeout(() => { console.error("probe: timed out"); process.exit(1); }, 20000).unref();
function stream(tag) {
  return new Promise((resolve) => {
    const r = { case: "stream", tag };
    const call = client.ListAndWatch({});
    call.on("data", (m) => {
      const bad = m.devices.filter((d) => d.health === "Unhealthy").length;
      if (r.first === undefined) { r.first = m.devices.length; resolve(r); }
      if (bad) { r.unhealthy = bad; call.cancel(); }
    });
    call.on("error", () => {});
    r.done = new Promise((res) => call.on("status", res));
  });
}
(async () => {
  await new Promise((res) => client.Allocate(
    { container_requests: [{ devices_ids: ["GPU-nope::7"] }] }, (err) => {
      out({ case: "unknown", code: err && err.code, details: err && err.details });
      res();
    }));
  const raw = new grpc.Client(target, grpc.credentials.createInsecure());
  await new Promise((res) => raw.makeUnaryRequest("/v1beta1.DevicePlugin/Allocate",
    (b) => b, (b) => b, Buffer.from([0xff, 0xff, 0xff]), (err) => {
      out({ case: "malformed", code: err && err.code });
      res();
    }));
  const streams = [await stream(1), await stream(2)];
  process.kill(Number(process.env.FIX), "SIGUSR1");
  for (const s of streams) { await s.done; delete s.done; out(s); }
  process.exit(0);
})();
'

for double in "$@"; do
	# named for its program: kubelet-double (grpc-js), kubelet-double-go
	label=$(basename "${double##* }")
	run_double "${label%.*}" "$double"
done
probe_errors
expect "bad --devices exits 2 saying what is wrong" 2 "bad --devices 'GPU-x:lots'" -- \
	"$fixture" --dir "$tmp" --resource $resource --devices GPU-x:lots
expect "no --devices exits 2 with usage" 2 'usage: plugin-fixture' -- \
	"$fixture" --dir "$tmp" --resource $resource
finish
