#!/bin/sh
# test-install-deps.sh — scripts/install-deps.sh's three sets (build, demo,
# check): each holds the one before; the demo's holds no part of the test
# machinery (no Slurm, MariaDB, Prometheus, Chromium, Go, Node, etcd,
# containerd), yet every command the demo's scripts call that the installer
# knows of; docs/install.md lists each set as the script does, and the
# README (both languages) what the demo installs beyond the build; and, run
# by a user who is not root, it installs nothing: with a set there it says
# nothing, with commands missing it prints the one apt-get command that
# installs the set's packages they come from, and only those. What
# install-deps.sh actually installs is not tried: the test never runs
# apt-get.
# (tests/cli/test-make-check.sh checks which set each make target asks for.)
# usage: test-install-deps.sh   (run from the repository root)
set -u
. "$(dirname "$0")/../lib.sh"
deps=scripts/install-deps.sh

for set in build demo check; do
	runs "install-deps.sh $set --list: its packages" "$tmp/$set.list" -- "$deps" "$set" --list
	runs "install-deps.sh $set --commands: its commands" "$tmp/$set.commands" -- \
		"$deps" "$set" --commands
	sort -u "$tmp/$set.list" >"$tmp/$set.sorted"
done
expect "no set is empty" 0 '^3$' -- sh -c "for s in build demo check; do
	[ -s '$tmp/'\$s.list ] && echo \$s; done | wc -l"
if [ -z "$(sort "$tmp/check.list" | uniq -d)" ]; then
	ok "--list names each package once"
else
	sort "$tmp/check.list" | uniq -d >"$tmp/twice"
	bad "--list names each package once" "$tmp/twice"
fi
expect "an unknown set is refused with the usage" 2 'usage: .*build\|demo\|check' -- "$deps" all
expect "no set named: the build set" 0 '^same$' -- sh -c \
	"'$deps' --list | cmp - '$tmp/build.list' && echo same"

# subset SMALL BIG: every package of SMALL is in BIG.
subset() {
	if [ -z "$(comm -23 "$tmp/$1.sorted" "$tmp/$2.sorted")" ]; then
		ok "the $2 set holds the $1 set"
	else
		comm -23 "$tmp/$1.sorted" "$tmp/$2.sorted" >"$tmp/extra"
		bad "the $2 set holds the $1 set (not in $2:)" "$tmp/extra"
	fi
}
subset build demo
subset demo check

# The test machinery is the check set's alone.
machinery='slurm|munge|mariadb|mysql|prometheus|chromium|golang|^go$|protoc-gen|protobuf-compiler|nodejs|^npm$|etcd|containerd|runc|busybox|yq'
if grep -Eq "$machinery" "$tmp/demo.list"; then
	grep -E "$machinery" "$tmp/demo.list" >"$tmp/found"
	bad "the demo set names no test machinery (Slurm, MariaDB, Prometheus, Chromium, Go, Node, ...)" \
		"$tmp/found"
else
	ok "the demo set names no test machinery (Slurm, MariaDB, Prometheus, Chromium, Go, Node, ...)"
fi
# ... which the check set does have (a check of the pattern above).
expect "... which the check set has" 0 'slurm' -- grep -E "$machinery" "$tmp/check.list"

# Every command the demo's scripts run (a word where a command starts: at
# the start of a line, after | ; & ( ! or then/do/else) that the check set
# knows of comes with the demo set.
demo_scripts="scripts/demo.sh scripts/demo-trace.sh scripts/for-tasks.sh"
while read -r cmd pkg; do
	if grep -v '^[[:space:]]*#' $demo_scripts |
		grep -Eq "(^|[;|&(!]|then|do|else)[[:space:]]*$cmd([[:space:]]|\$)"; then
		echo "$cmd $pkg"
	fi
done <"$tmp/check.commands" >"$tmp/demo-runs"
expect "the demo's scripts run commands the installer knows of (jq at least)" 0 '^jq ' -- \
	cat "$tmp/demo-runs"
while read -r cmd pkg; do
	if grep -qx "$pkg" "$tmp/demo.list"; then
		ok "the demo runs $cmd: the demo set has $pkg"
	else
		echo "$cmd ($pkg) is run by $demo_scripts" >"$tmp/why"
		bad "the demo runs $cmd: the demo set has $pkg" "$tmp/why"
	fi
done <"$tmp/demo-runs"

# docs/install.md's table, a row per set: `SET` | for what | its packages,
# each in backquotes, after "the build set and" or "the demo set and" for
# the sets that hold those.
for set in build demo check; do
	row=$(grep "^| \`$set\` |" docs/install.md | head -1)
	echo "$row" | awk -F'|' '{ print $4 }' | grep -o '`[^`]*`' | tr -d '`' >"$tmp/doc.$set"
	case $row in
	*"the build set and"*) cat "$tmp/doc-full.build" >>"$tmp/doc.$set" ;;
	*"the demo set and"*) cat "$tmp/doc-full.demo" >>"$tmp/doc.$set" ;;
	esac
	sort -u "$tmp/doc.$set" >"$tmp/doc-full.$set"
	if [ -n "$row" ] && cmp -s "$tmp/doc-full.$set" "$tmp/$set.sorted"; then
		ok "docs/install.md lists the $set set as install-deps.sh has it"
	else
		diff "$tmp/doc-full.$set" "$tmp/$set.sorted" >"$tmp/doc.diff"
		bad "docs/install.md lists the $set set as install-deps.sh has it (< docs, > script)" \
			"$tmp/doc.diff"
	fi
done

# The README, in English and in Chinese, names what the demo installs
# beyond the build: each package of the demo set that the build set lacks.
sed '/^## 简体中文/,$d' README.md >"$tmp/readme.en"
sed -n '/^## 简体中文/,$p' README.md >"$tmp/readme.zh"
comm -13 "$tmp/build.sorted" "$tmp/demo.sorted" >"$tmp/demo-own"
for lang in en zh; do
	: >"$tmp/unnamed"
	while read -r pkg; do
		grep -qF "\`$pkg\`" "$tmp/readme.$lang" || echo "$pkg" >>"$tmp/unnamed"
	done <"$tmp/demo-own"
	if [ -s "$tmp/demo-own" ] && [ ! -s "$tmp/unnamed" ]; then
		ok "README ($lang) names what make demo installs beyond the build: $(paste -sd' ' "$tmp/demo-own")"
	else
		bad "README ($lang) names what make demo installs beyond the build (not named:)" \
			"$tmp/unnamed"
	fi
done

# ---- run by a user, never apt-get -------------------------------------------------
# As root, as nobody (setpriv), from a copy of the script that nobody
# can reach.
mkdir -p "$tmp/repo/scripts"
cp "$deps" "$tmp/repo/scripts/"
chmod 755 "$tmp"
chmod -R a+rX "$tmp/repo"
user=""
if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv >/dev/null 2>&1; then
		echo "skipped: running install-deps.sh as a user (no setpriv)"
		finish
	fi
	user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
as_user() { $user env -i HOME=/ PATH="$1" "$tmp/repo/scripts/install-deps.sh" "$2"; }

as_user "$PATH" build >"$tmp/user.out" 2>&1
got=$?
if [ "$got" -eq 0 ] && [ ! -s "$tmp/user.out" ]; then
	ok "as a user, the build set there (it built this test): exit 0, nothing said"
else
	echo "exit $got" >>"$tmp/user.out"
	bad "as a user, the build set there (it built this test): exit 0, nothing said" \
		"$tmp/user.out"
fi

# A PATH with only what install-deps.sh itself runs: each set's commands
# are missing, and the command it prints installs their packages (and any
# package of the set this machine lacks), no other.
mkdir -p "$tmp/path"
for cmd in dirname id dpkg-query grep awk; do
	if grep -q "^$cmd " "$tmp/check.commands"; then
		echo "$cmd is one of the commands the installer checks for" >"$tmp/why"
		bad "the test's PATH holds none of the commands the installer checks for" "$tmp/why"
	fi
	ln -s "$(command -v "$cmd")" "$tmp/path/$cmd"
done
for set in build demo check; do
	as_user "$tmp/path" "$set" >"$tmp/user.out" 2>&1
	got=$?
	sed -n 's/^  sudo apt-get update && sudo apt-get install -y --no-install-recommends //p' \
		"$tmp/user.out" | tr ' ' '\n' | sed '/^$/d' | sort >"$tmp/asked"
	cut -d' ' -f2 "$tmp/$set.commands" | sort -u >"$tmp/want"
	if [ "$got" -eq 1 ] && [ -z "$(comm -23 "$tmp/want" "$tmp/asked")" ] &&
		[ -z "$(comm -23 "$tmp/asked" "$tmp/$set.sorted")" ]; then
		ok "as a user, no $set command there: exit 1, the apt-get command for them, nothing else"
	else
		echo "exit $got; want the packages of: $(paste -sd' ' "$tmp/want"); within: $set --list" \
			>>"$tmp/user.out"
		bad "as a user, no $set command there: exit 1, the apt-get command for them, nothing else" \
			"$tmp/user.out"
	fi
done
finish
