#!/bin/sh
# test-hook-types.sh — libgpushare's hooks are declared with the driver's
# types everywhere. Built with link-time optimization (a build folder of
# its own, meson -Db_lto=true, only libgpushare.so), GCC compares every
# declaration of a function across the library's files and reports those
# that disagree (-Wlto-type-mismatch): there must be none (the generated
# table of hooks once declared them all as void f(void)). With a CUDA
# toolkit, the same comparison between include/gp-cuda.h and the
# toolkit's cudaTypedefs.h, for every hook of the table: a file declares
# each hook's symbol with the toolkit's type for its (name, version,
# per-thread), another with ours. GCC compares the number of parameters
# and their sizes, not their signedness or what pointers point to; the
# compiler holds each hook's definition to its prototype in gp-cuda.h.
# usage: test-hook-types.sh SOURCE_ROOT BUILD/src/shim/hooks.gen.h
#        (CUDA_HOME, default /usr/local/cuda, and CC may be set)
set -u
root=$1
table=$2
. "$root/tests/lib.sh"
cc=${CC:-cc}

# mismatches LOG: the type mismatches GCC reported, with its notes.
mismatches() {
	grep -A4 -e '-Wlto-type-mismatch' "$1" >"$tmp/mismatches"
	[ -s "$tmp/mismatches" ]
}

if ! meson setup "$tmp/lto" "$root" -Db_lto=true >"$tmp/setup.log" 2>&1; then
	bad "lto-setup: meson setup -Db_lto=true failed" "$tmp/setup.log"
elif ! ninja -C "$tmp/lto" libgpushare.so >"$tmp/lto.log" 2>&1; then
	bad "lto-build: libgpushare.so did not build with -flto" "$tmp/lto.log"
elif mismatches "$tmp/lto.log"; then
	bad "lto-no-type-mismatch: GCC found declarations that disagree" "$tmp/mismatches"
else
	ok "lto-no-type-mismatch"
fi

home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -r "$home/include/cudaTypedefs.h" ]; then
	echo "no $home/include/cudaTypedefs.h: the prototypes not compared with a toolkit"
	finish
	exit
fi
# The table's rows with a function: { "name", version, per_thread, "symbol", (…)symbol }.
# Each symbol is declared under a name of its own (the toolkit's header
# maps driver names to symbols with macros) and its assembler name.
awk -F'[",]' '/^\t\{ "/ && $0 !~ /NULL/ {
	gsub(/ /, "", $4); gsub(/ /, "", $5)
	print $2, $4, $5, $7 }' "$table" >"$tmp/hooks"
awk 'BEGIN { print "#include <cudaTypedefs.h>" }
	{ pfn = "PFN_" $1 "_v" $2 ($3 == 1 ? "_ptsz" : "")
	  printf "__typeof__(*(%s)0) toolkit_%d __asm__(\"%s\");\n", pfn, NR, $4 }
	END { printf "void *toolkit[] = {"; for (i = 1; i <= NR; i++) printf " (void *)toolkit_%d,", i; print " };" }' \
	"$tmp/hooks" >"$tmp/toolkit.c"
awk 'BEGIN { print "#include \"include/gp-cuda.h\""; printf "void *ours[] = {" }
	{ printf " (void *)%s,", $4 } END { print " };" }' "$tmp/hooks" >"$tmp/ours.c"
if [ ! -s "$tmp/hooks" ]; then
	bad "toolkit-prototypes: no hooks read from $table"
elif ! "$cc" -flto -O1 -shared -fPIC -I"$home/include" -I"$root/src" -o "$tmp/both.so" \
	"$tmp/toolkit.c" "$tmp/ours.c" >"$tmp/both.log" 2>&1; then
	bad "toolkit-prototypes: the comparison did not build" "$tmp/both.log" "$tmp/toolkit.c"
elif mismatches "$tmp/both.log"; then
	bad "toolkit-prototypes: gp-cuda.h and $home disagree" "$tmp/mismatches"
else
	ok "toolkit-prototypes ($(wc -l <"$tmp/hooks") hooks)"
fi
finish
