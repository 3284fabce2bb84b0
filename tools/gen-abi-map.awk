# gen-abi-map.awk — derives the CUDA driver ABI map from the toolkit's
# typedef headers (cudaTypedefs.h and the profiler, GL, EGL and VDPAU
# ones): for every driver function, which exported symbol serves which
# requested cudaVersion. So the map is also the driver's whole set of
# exported names (tools/gen-abi-map.sh says which headers).
#
# usage: awk -f tools/gen-abi-map.awk HEADER...
#
# Facts the headers encode (one typedef per variant):
#   PFN_<name>_v<version>            the variant introduced at <version>
#   PFN_<name>_v<version>_ptsz|_ptds  its per-thread-default-stream form
# and how the driver names them: the i-th version of <name> (ascending) is
# exported as <name> (i = 1) or <name>_v<i>; a per-thread variant is the
# symbol serving that version plus _ptsz or _ptds. Typedefs inside
# "#ifdef _WIN32" are Windows-only functions, not exported on Linux, and
# skipped. Output lines, sorted by name, match src/include/cuda-abi-map.txt
# (which is this output, committed).

# Conditionals: depth counts open #if blocks; win32 is the depth at which
# a "#ifdef _WIN32" opened (0: not inside one).
FNR == 1 { depth = win32 = 0 }
/^[ \t]*#[ \t]*if/ {
	depth++
	if (!win32 && $0 ~ /^[ \t]*#[ \t]*ifdef[ \t]+_WIN32/)
		win32 = depth
	next
}
/^[ \t]*#[ \t]*el/ {
	if (win32 == depth)
		win32 = 0       # what follows is not the Windows branch
	next
}
/^[ \t]*#[ \t]*endif/ {
	if (win32 == depth)
		win32 = 0
	depth--
	next
}
win32 { next }

match($0, /PFN_cu[A-Za-z0-9_]+_v[0-9]+(_pt[sd][sz])?\)/) {
	pfn = substr($0, RSTART + 4, RLENGTH - 5)
	suffix = ""
	if (pfn ~ /_pt[sd][sz]$/) {
		suffix = substr(pfn, length(pfn) - 4)
		pfn = substr(pfn, 1, length(pfn) - 5)
	}
	n = split(pfn, parts, "_v")
	version = parts[n] + 0
	name = substr(pfn, 1, length(pfn) - length(parts[n]) - 2)
	if (suffix == "")
		plain[name, version] = 1
	else
		threaded[name, version] = suffix
	names[name] = 1
}

# Versions of one name (default or per-thread), ascending, as "v1 v2 ...".
function versions(name, table,    key, parts, list, n, i, j, t) {
	n = 0
	for (key in table) {
		split(key, parts, SUBSEP)
		if (parts[1] == name)
			list[++n] = parts[2] + 0
	}
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && list[j - 1] > list[j]; j--) {
			t = list[j]; list[j] = list[j - 1]; list[j - 1] = t
		}
	out = ""
	for (i = 1; i <= n; i++)
		out = out (i > 1 ? " " : "") list[i]
	return out
}

END {
	for (name in names) {
		np = split(versions(name, plain), pv, " ")
		nt = split(versions(name, threaded), tv, " ")
		line = name ":"
		for (i = 1; i <= np; i++) {
			symbol[i] = name (i == 1 ? "" : "_v" i)
			line = line (i > 1 ? "," : "") " " pv[i] "->" symbol[i]
		}
		if (nt > 0) {
			tvs = ""; tss = ""
			for (i = 1; i <= nt; i++) {
				base = name
				for (k = 1; k <= np; k++)
					if (pv[k] <= tv[i])
						base = symbol[k]
				tvs = tvs (i > 1 ? "," : "") tv[i]
				tss = tss (i > 1 ? "," : "") base threaded[name, tv[i]]
			}
			line = line "   [PTDS " tvs " -> " tss "]"
		}
		print line | "LC_ALL=C sort"
	}
}
