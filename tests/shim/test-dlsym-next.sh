#!/bin/sh
# test-dlsym-next.sh — libgpushare exports dlsym (to answer for the driver's
# handle); a wrapper library preloaded beside it that looks up the real
# function with dlsym(RTLD_NEXT, …) must still get the next one after
# itself (libc's), not its own, in either preload order; and the program's
# own RTLD_NEXT lookups keep glibc's meaning.
# The same with a libgpushare built without tail calls.
# usage: test-dlsym-next.sh PATH/TO/next-probe PATH/TO/libwrapnext.so
#        PATH/TO/libgpushare-no-tail-calls.so
# (meson sets LD_LIBRARY_PATH, GPUPOOL_SIM_* and $SHIM)
set -u
probe=$1
wrap=$2
no_tail=$3
. "$(dirname "$0")/../lib.sh"

runs probe-shim-first "$tmp/shim-first.json" -- env LD_PRELOAD="$SHIM $wrap" "$probe"
runs probe-wrap-first "$tmp/wrap-first.json" -- env LD_PRELOAD="$wrap $SHIM" "$probe"
runs probe-no-tail-first "$tmp/no-tail-first.json" -- env LD_PRELOAD="$no_tail $wrap" "$probe"
runs probe-no-tail-after "$tmp/no-tail-after.json" -- env LD_PRELOAD="$wrap $no_tail" "$probe"
runs probe-wrap-alone "$tmp/alone.json" -- env LD_PRELOAD="$wrap" "$probe"

for order in shim-first wrap-first no-tail-first no-tail-after alone; do
	check "wrapper-gets-libc-$order" \
		'.[0] | .wrapper_next_is_libc and (.wrapper_next_is_self | not) and .rand >= 0' \
		"$tmp/$order.json"
	check "main-next-is-wrapper-$order" '.[0].main_next_is_wrapper' "$tmp/$order.json"
done
finish
