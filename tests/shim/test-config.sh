#!/bin/sh
# test-config.sh — a bad GPUPOOL_* value is a one-line error and the driver
# call that set the interposer up fails: it never runs unlimited; a good
# configuration leaves a program's output alone.
# usage: test-config.sh PATH/TO/gpuload   (meson sets LD_PRELOAD and the rest)
set -u
gl=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refuse VAR=VALUE PATTERN: gpuload fails, stderr names the variable.
refuse() {
	if env "$1" "$gl" alloc --mib 1 --json >"$tmp/out" 2>"$tmp/err"; then
		fail=$((fail + 1)); echo "FAIL $1 was accepted"
	elif grep -q "^gpushare: $2" "$tmp/err" && [ "$(grep -c gpushare "$tmp/err")" -eq 1 ]; then
		pass=$((pass + 1)); echo "ok   $1 refused"
	else
		fail=$((fail + 1)); echo "FAIL $1:"; sed 's/^/    /' "$tmp/err"
	fi
}

refuse GPUPOOL_MEM_LIMIT=4X 'GPUPOOL_MEM_LIMIT="4X": expected a size'
refuse GPUPOOL_MEM_LIMIT=-1G 'GPUPOOL_MEM_LIMIT'
refuse GPUPOOL_MEM_LIMIT=4G,,8G 'GPUPOOL_MEM_LIMIT="4G,,8G": expected a size'
refuse GPUPOOL_MEM_LIMIT=4G, 'GPUPOOL_MEM_LIMIT'
refuse GPUPOOL_COMPUTE=0 'GPUPOOL_COMPUTE="0": expected a whole number from 1 to 100'
refuse GPUPOOL_COMPUTE=150 'GPUPOOL_COMPUTE'
refuse GPUPOOL_PRIORITY=high 'GPUPOOL_PRIORITY'
refuse GPUPOOL_ISOLATION=soft 'GPUPOOL_ISOLATION="soft": expected hard or shared'
refuse GPUPOOL_SLICE_MS=0 'GPUPOOL_SLICE_MS'
refuse "GPUPOOL_TASK_ID=a b" 'GPUPOOL_TASK_ID'
# A bad secret is refused like any bad value, and never shown.
for secret in 0123456789abcdef 0123456789abcdef0123456789abcdeX \
	0123456789abcdef0123456789abcdef0 ""; do
	refuse "GPUPOOL_TASK_SECRET=$secret" \
		'GPUPOOL_TASK_SECRET: expected an even number (32 to 128) of hexadecimal digits$'
	if [ -n "$secret" ] && grep -qF "$secret" "$tmp/err"; then
		fail=$((fail + 1)); echo "FAIL GPUPOOL_TASK_SECRET=$secret shown:"; sed 's/^/    /' "$tmp/err"
	fi
done

# A good configuration: nothing on stderr, the slice in force (a secret on
# a device without a limits table changes nothing).
if GPUPOOL_MEM_LIMIT=8M GPUPOOL_TASK_SECRET=0123456789ABCDEF0123456789abcdef "$gl" alloc --chunk-mib 2 --json >"$tmp/out" 2>"$tmp/err" &&
	[ ! -s "$tmp/err" ] && jq -e '.oom and .allocated_mib == 8 and .total_mib == 8' "$tmp/out" >/dev/null; then
	pass=$((pass + 1)); echo "ok   good configuration, quiet and limited"
else
	fail=$((fail + 1)); echo "FAIL good configuration:"; cat "$tmp/out" "$tmp/err"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
