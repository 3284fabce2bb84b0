#!/bin/sh
# test-escape.sh — what tenants write reaches the admin's terminal escaped
# (issue 25): a task whose command holds terminal escapes (clear the
# screen, set the window's title), a bell, a carriage return, an 8-bit
# CSI and a right-to-left override, and a live change whose reason holds
# ESC and a line break. `gpupool task show`, `task ls` and `audit` print
# them as \x1b, \x07, \r, \n, \u009b, \u202e, never the raw bytes; -o json
# keeps them exact (JSON escapes them itself). On a server without an
# agent; the attack suite (tests/security/test-tenant-attacks.sh) sees a
# failed task's reason escaped in `task ls`.
# usage: test-escape.sh PATH/TO/gpupool
set -u
gp=$1
. "$(dirname "$0")/../lib.sh"
sock=$tmp/server.sock
export GPUPOOL_SOCKET="$sock" GPUPOOL_DB="$tmp/unused/gpupool.db" GPUPOOL_TOKEN_FILE="$tmp/state/admin.token"
unset GPUPOOL_TOKEN

"$gp" server --db "$tmp/state/gpupool.db" >>"$tmp/server.log" 2>&1 &
server=$!
finish_hook() { stops "the server stops on SIGTERM" "$server" || cat "$tmp/server.log"; }
serving || { bad "the server did not start" "$tmp/server.log"; finish; exit 1; }

esc=$(printf '\033')
# raw NAME FILE: FILE holds none of the control bytes the task wrote.
raw() {
	if LC_ALL=C grep -q "$(printf '[\033\007\015]')" "$2" ||
		LC_ALL=C grep -q "$(printf '\302\233\|\342\200\256')" "$2"; then
		bad "$1: a raw control byte reached the output" "$2"
	else
		ok "$1: no raw control byte"
	fi
}

command="printf 'x'; echo '${esc}[2J${esc}]0;owned$(printf '\007') $(printf '\015\302\233') $(printf '\342\200\256')txt'"
id=$("$gp" submit -q --whole -- sh -c "$command" 2>"$tmp/out") ||
	{ bad "the task is submitted" "$tmp/out"; finish; exit 1; }

runs "task show" "$tmp/show" -- "$gp" task show "$id"
raw "task show" "$tmp/show"
if grep -qF '\x1b[2J\x1b]0;owned\x07 \r\u009b \u202etxt' "$tmp/show"; then
	ok "task show: the command's controls escaped"
else
	bad "task show: the command's controls escaped" "$tmp/show"
fi
"$gp" task show "$id" -o json >"$tmp/show.json"
# The CLI quotes the command as one shell word; what matters: its bytes.
if jq -j .command "$tmp/show.json" | grep -qF "${esc}[2J${esc}]0;owned"; then
	ok "task show -o json: the command exact (JSON escapes it)"
else
	bad "task show -o json: the command exact" "$tmp/show.json"
fi

"$gp" task set "$id" --priority 3 --reason "$(printf 'bad\033[31mred\nline two')" >"$tmp/out" 2>&1
runs "task ls" "$tmp/ls" -- "$gp" task ls
raw "task ls" "$tmp/ls"
runs "audit" "$tmp/audit" -- "$gp" audit
raw "audit" "$tmp/audit"
if grep -qF 'reason: bad\x1b[31mred\nline two' "$tmp/audit" && ! grep -q '^line two' "$tmp/audit"; then
	ok "audit: a reason's ESC and line break escaped, one line per row"
else
	bad "audit: a reason's ESC and line break escaped" "$tmp/audit"
fi
finish
