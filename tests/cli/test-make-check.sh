#!/bin/sh
# test-make-check.sh — `make check` runs every pass whatever the others
# give, says how each went, and fails when any failed: the Makefile's
# check-passes with stand-in passes (a makefile of the test's own), and the
# real passes in their order (make -n: nothing is built or run); and which
# set of Debian packages (scripts/install-deps.sh) each target installs.
# usage: test-make-check.sh   (run from the repository root)
set -u
. "$(dirname "$0")/../lib.sh"
# This test runs inside make check: the outer make's flags stay outside.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

cat >"$tmp/stub.mk" <<'EOF'
check-broken:
	@echo "broken ran"; exit 1
check-fine:
	@echo "fine ran"
EOF
passes() { make --no-print-directory -f Makefile -f "$tmp/stub.mk" check-passes CHECK_PASSES="$*"; }

expect "a failed pass fails make check" 2 '^check-broken: FAILED$' -- passes broken fine
if grep -q '^fine ran$' "$tmp/out" && grep -q '^check-fine: passed$' "$tmp/out"; then
	ok "... and the pass after it still runs and reports"
else
	bad "... and the pass after it still runs and reports" "$tmp/out"
fi
expect "the first pass failing does not hide the last one's failure" 2 \
	'^check-broken: FAILED$' -- passes fine broken
expect "passes that pass: make check passes, saying so" 0 '^check-fine: passed$' -- passes fine

# The real passes: the main suite, then the sanitizer passes.
make -n --no-print-directory check-passes >"$tmp/plan" 2>&1
main=$(grep -n 'meson test -C build ' "$tmp/plan" | head -1 | cut -d: -f1)
asan=$(grep -n 'meson test -C build-asan ' "$tmp/plan" | head -1 | cut -d: -f1)
tsan=$(grep -n 'meson test -C build-tsan ' "$tmp/plan" | head -1 | cut -d: -f1)
if [ -n "$main" ] && [ -n "$asan" ] && [ -n "$tsan" ] && [ "$main" -lt "$asan" ] &&
	[ "$asan" -lt "$tsan" ]; then
	ok "make check: the main suite, then the ASan+UBSan suite, then the TSan suite"
else
	bad "make check: the main suite, then the ASan+UBSan suite, then the TSan suite" "$tmp/plan"
fi
expect ".ci/run calls make check" 0 'make check' -- cat .ci/run

# Which of scripts/install-deps.sh's sets each target installs first
# (make -n: nothing is installed): make the build set, make demo the demo
# set, make check and its passes the check set; never a bigger one.
# deps_of TARGET: the sets the target asks for, one a line, each once.
deps_of() {
	make -n --no-print-directory "$1" 2>&1 | sed -n 's|^scripts/install-deps\.sh *||p' |
		sed 's/^$/(none)/' | sort -u
}
for pair in all:build install:build demo:demo demo-trace:demo check:check check-main:check \
	check-asan:check check-tsan:check bench:check; do
	target=${pair%%:*}
	want=${pair#*:}
	expect "make $target installs the $want set first, no other" 0 "^$want\$" -- deps_of "$target"
	if [ "$(deps_of "$target" | wc -l)" -ne 1 ]; then
		deps_of "$target" >"$tmp/sets"
		bad "... and only that one (make $target)" "$tmp/sets"
	fi
done
# The order: make check installs the check set before it builds anything.
make -n --no-print-directory check >"$tmp/plan" 2>&1
deps=$(grep -n '^scripts/install-deps.sh check$' "$tmp/plan" | head -1 | cut -d: -f1)
build=$(grep -n '^ninja -C build$' "$tmp/plan" | head -1 | cut -d: -f1)
if [ -n "$deps" ] && [ -n "$build" ] && [ "$deps" -lt "$build" ]; then
	ok "make check: the check set, then the build"
else
	bad "make check: the check set, then the build" "$tmp/plan"
fi

finish
