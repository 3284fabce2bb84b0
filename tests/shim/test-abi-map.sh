#!/bin/sh
# test-abi-map.sh — the committed CUDA ABI map (src/include/cuda-abi-map.txt)
# is what tools/gen-abi-map.sh derives from the installed toolkit's typedef
# headers, and its symbols cover every cu* name the toolkit's stub
# libcuda.so exports (the driver's link-time interface). Skipped (77)
# without a toolkit. Run from the repository root.
set -u
home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -r "$home/include/cudaTypedefs.h" ]; then
	echo "SKIP: no $home/include/cudaTypedefs.h (CUDA toolkit not installed)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

tools/gen-abi-map.sh "$home" >"$tmp/map"
if diff src/include/cuda-abi-map.txt "$tmp/map"; then
	passed=$((passed + 1))
else
	echo "the committed map differs from the toolkit in $home: run make abi-map"
	failed=$((failed + 1))
fi

stub=
for dir in lib64 lib targets/x86_64-linux/lib; do
	[ -r "$home/$dir/stubs/libcuda.so" ] && { stub=$home/$dir/stubs/libcuda.so; break; }
done
if [ -n "$stub" ] && command -v nm >/dev/null; then
	nm -D --defined-only "$stub" | awk '$3 ~ /^cu/ { print $3 }' | LC_ALL=C sort -u >"$tmp/stub"
	# The symbols of the map: after "name:", each "version->symbol", and
	# the symbols after "->" of a [PTDS ...] part.
	awk '!/^#/ && NF { sub(/^[^:]*:/, ""); gsub(/\[PTDS[^>]*>/, ","); gsub(/[0-9]+->|\]/, "")
	      n = split($0, s, /[ ,]+/); for (i = 1; i <= n; i++) if (s[i] != "") print s[i] }' \
		src/include/cuda-abi-map.txt | LC_ALL=C sort -u >"$tmp/symbols"
	LC_ALL=C comm -23 "$tmp/stub" "$tmp/symbols" >"$tmp/missing"
	if [ -s "$tmp/stub" ] && [ ! -s "$tmp/missing" ]; then
		passed=$((passed + 1))
	else
		echo "exported by $stub but not in the map:"
		cat "$tmp/missing"
		failed=$((failed + 1))
	fi
else
	echo "no stub libcuda.so under $home or no nm: its exports not compared"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
