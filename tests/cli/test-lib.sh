#!/bin/sh
# test-lib.sh — the shell tests' own checks (tests/lib.sh) can fail: each
# case is a small script that sources lib.sh and makes one call; its exit
# status and output say whether lib.sh counted a pass, a failure or a
# malformed call. Counted here without lib.sh, which is what is tested.
# usage: test-lib.sh
set -u
lib=$(cd "$(dirname "$0")/.." && pwd)/lib.sh
pass=0
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# case NAME STATUS PATTERN BODY: a script that sources lib.sh, runs BODY
# and calls finish exits with STATUS, its output matching PATTERN.
case_() {
	name=$1 want=$2 pattern=$3 body=$4
	printf '. "%s"\n%s\nfinish\n' "$lib" "$body" >"$dir/case.sh"
	sh "$dir/case.sh" >"$dir/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$dir/out"; then
		pass=$((pass + 1))
		echo "ok   $name"
	else
		fail=$((fail + 1))
		echo "FAIL $name: exit $got (want $want), output:"
		sed 's/^/    /' "$dir/out"
	fi
}

# ---- expect: its shape ------------------------------------------------------
case_ "expect: the pattern after -- (the old callers' mistake) is malformed" 1 \
	'^FAIL malformed expect call at .*: expect "x" "2" "--" "--limit" "sh"' \
	"expect x 2 -- '--limit' sh -c 'echo --limit; exit 2'"
case_ "expect: a status that is not a number is malformed" 1 '^FAIL malformed expect call' \
	"expect x fails 'y' -- false"
case_ "expect: without -- it is malformed" 1 '^FAIL malformed expect call' \
	"expect x 0 'y' echo y"
case_ "expect: an empty pattern (matches anything) is malformed" 1 '^FAIL malformed expect call' \
	"expect x 0 '' -- true"
case_ "expect: no command is malformed" 1 '^FAIL malformed expect call' "expect x 0 'y' --"
case_ "expect: a malformed call runs nothing" 1 '0 passed, 1 failed' \
	"expect x 0 -- 'y' touch $dir/ran; [ -e $dir/ran ] && ok 'it ran'"

# ---- expect: what it compares -------------------------------------------------
case_ "expect: another exit status fails" 1 '^FAIL x: exit 3 \(want 0\)' \
	"expect x 0 'y' -- sh -c 'echo y; exit 3'"
case_ "expect: output without the pattern fails" 1 '^FAIL x: exit 0 \(want 0\)' \
	"expect x 0 'y' -- echo z"
case_ "expect: status and pattern as asked pass" 0 '^ok   x$' \
	"expect x 3 '^y\$' -- sh -c 'echo y; exit 3'"
case_ "expect: a pattern may start with --" 0 '^ok   x$' \
	"expect x 2 '--limit \"0\"' -- sh -c 'echo --limit \\\"0\\\" is bad; exit 2'"

case_ "api: a status that is not a number is malformed" 1 '^FAIL malformed api call' \
	"sock=$dir/none.sock; api x -- 'ok' '' GET /v1/health"
case_ "api: without a server socket it is malformed" 1 '^FAIL malformed api call' \
	"api x 200 'ok' '' GET /v1/health"

# ---- check, runs, exited --------------------------------------------------------
echo '{"a": 1}' >"$dir/a.json"
case_ "check: a false expression fails" 1 '^FAIL x' "check x '.[0].a == 2' $dir/a.json"
case_ "check: a missing file fails" 1 '^FAIL x' "check x 'true' $dir/none.json"
case_ "check: without a file it is malformed (jq would read stdin)" 1 \
	'^FAIL malformed check call' "check x '.[0].a == 1'"
case_ "check: a true expression passes" 0 '^ok   x$' "check x '.[0].a == 1' $dir/a.json"
case_ "eventually: a condition that never holds fails after its time, with the file" 1 \
	'^FAIL x$' "eventually x 1 $dir/e.json '.a == 2' -- cat $dir/a.json"
case_ "eventually: a condition that comes true passes" 0 '^ok   x$' \
	"rm -f $dir/n; eventually x 5 $dir/e.json '. >= 3' -- sh -c 'echo x >>$dir/n; wc -l <$dir/n'"
case_ "eventually: a command that prints nothing never passes" 1 '^FAIL x$' \
	"eventually x 1 $dir/e.json '.a == 2 | not' -- true"
case_ "eventually: without -- it is malformed" 1 '^FAIL malformed eventually call' \
	"eventually x 1 $dir/e.json '.a' cat $dir/a.json"
case_ "runs: a program that fails fails, with its stderr" 1 '^FAIL x: exit 1, stderr:' \
	"runs x $dir/o -- sh -c 'echo result; echo leaked >&2; exit 1'"
case_ "runs: a program that succeeds passes, its output kept" 0 '^ok   x$' \
	"runs x $dir/o -- echo result; grep -q result $dir/o || bad 'no output'"
case_ "exited: a background job that fails fails" 1 '^FAIL x: exit 3 \(want 0\)' \
	"sh -c 'exit 3' & exited x \$!"
case_ "exited: the status asked for passes" 0 '^ok   x$' "sh -c 'exit 3' & exited x \$! 3"
case_ "exited: a pid that is not a number is malformed" 1 '^FAIL malformed exited call' \
	"exited x ''"
case_ "stops: a program that dies of SIGTERM fails" 1 '^FAIL x: exit 143 \(want 0\)' \
	"sleep 30 & stops x \$!"
case_ "stops: a program that stops cleanly on SIGTERM passes" 0 '^ok   x$' \
	"sh -c 'trap \"exit 0\" TERM; while :; do sleep 0.1; done' & sleep 0.3; stops x \$!"

# ---- finish ---------------------------------------------------------------------
case_ "finish: a test that ran no check fails" 1 '^FAIL no check ran' ":"
printf '. "%s"\nok one\nexit 0\n' "$lib" >"$dir/early.sh"
if sh "$dir/early.sh" >"$dir/out" 2>&1; then
	fail=$((fail + 1))
	echo "FAIL a test that ends before finish fails: it passed"
else
	pass=$((pass + 1))
	echo "ok   a test that ends before finish fails"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
