#!/bin/sh
# test-man.sh — docs/gpupool.1 stays true: it renders without a warning,
# and names every command that `gpupool --help` lists.
# usage: test-man.sh PATH/TO/gpupool PATH/TO/gpupool.1
set -u
gp=$1
page=$2
. "$(dirname "$0")/../lib.sh"

if command -v groff >/dev/null 2>&1; then
	groff -man -ww -z "$page" >"$tmp/groff" 2>&1
	if [ -s "$tmp/groff" ]; then
		bad "the page renders without a warning" "$tmp/groff"
	else
		ok "the page renders without a warning"
	fi
else
	echo "skip: the page renders without a warning (groff is not installed)"
fi
"$gp" --help | awk '/^  [a-z]/ { print $1 }' >"$tmp/commands"
missing=""
while read -r command; do
	# In a macro line (.B, .BR, .TP ...): where the page names commands.
	grep '^\.' "$page" | grep -qw -- "$command" || missing="$missing $command"
done <"$tmp/commands"
if [ -z "$missing" ] && [ -s "$tmp/commands" ]; then
	ok "every command of gpupool --help is in the page"
else
	echo "missing:$missing" >"$tmp/missing"
	bad "every command of gpupool --help is in the page" "$tmp/missing"
fi
finish
