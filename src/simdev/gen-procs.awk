# gen-procs.awk — generates a cuGetProcAddress table: simdev's driver and
# libgpushare's hooks both answer by (name, version, per-thread flag).
#
# usage: awk [-v extern=1 | -v stubs=1 [-v list=1]] -f gen-procs.awk \
#            cuda-abi-map.txt [NAMES] SOURCE.c... > procs.gen.h
#
# From the ABI map (name, version -> exported symbol, with per-thread
# variants), a list of names (one a line) to answer for, and the functions
# the C sources define (lines starting "CUresult CUDAAPI cuX(" or
# "GP_CUDA_FORWARD(cuX,"), writes one row per (name, version, per-thread)
# of a listed name: its symbol, and the function when the sources define
# that exact symbol, else NULL (answered by a stub that returns
# CUDA_ERROR_NOT_SUPPORTED). Names of the map that are not listed get no
# rows, except where the sources define them.
#
# With -v extern=1 the table is for a file of its own (libgpushare's
# src/vendor/nvidia/shim-cuda-hooks.c): the table and its size are not static, and
# the including file declares every defined function with its type (the
# prototypes of src/include/gp-cuda.h), so the table takes the address of
# each as the function it is.
#
# With -v stubs=1 (simdev's driver) every name of the map is listed (the
# NAMES file may be left out), and a symbol the sources do not define gets a stub of its
# own: the output names it as GP_PROC_STUB(symbol) before the table, for
# the including file to define, and its row points to it; so each symbol
# of the map is a function of the library. Adding -v list=1 prints only
# the stubs' symbols, one a line (what the tests call).

function row(name, version, per_thread, symbol,    fn) {
	fn = "NULL"
	if (symbol in defined)
		fn = "(void (*)(void))" symbol
	else if (stubs) {
		fn = "(void (*)(void))" symbol
		if (!(symbol in stubbed))
			stub[++nstubs] = symbol
		stubbed[symbol] = 1
	}
	rows[++nrows] = sprintf("\t{ \"%s\", %d, %d, \"%s\", %s },", name, version,
				per_thread, symbol, fn)
	listed[symbol] = 1
}

# The command that makes this output, with paths from the repository's
# root (meson runs it from the build folder).
function command(    c, i, path) {
	c = "awk"
	if (extern)
		c = c " -v extern=1"
	if (stubs)
		c = c " -v stubs=1"
	c = c " -f src/simdev/gen-procs.awk"
	for (i = 1; i < ARGC; i++) {
		path = ARGV[i]
		sub(/^.*\/src\//, "src/", path)
		while (sub(/[^\/]+\/\.\.\//, "", path))
			;
		c = c " " path
	}
	return c
}

FILENAME ~ /\.c$/ {
	if (match($0, /^CUresult CUDAAPI cu[A-Za-z0-9_]+\(/))
		defined[substr($0, 18, RLENGTH - 18)] = 1
	else if (match($0, /^GP_CUDA_FORWARD\(cu[A-Za-z0-9_]+,/))
		defined[substr($0, 17, RLENGTH - 17)] = 1
	next
}

/^#/ || NF == 0 { next }

FILENAME ~ /abi-map/ {
	name = $1; sub(/:$/, "", name)
	mapped[name] = 1
	if (stubs)
		wanted[name] = 1
	line = $0; sub(/^[^:]*: */, "", line)
	ptds = ""
	if (index(line, "[PTDS")) {
		ptds = substr(line, index(line, "[PTDS") + 6)
		sub(/\].*/, "", ptds)
		line = substr(line, 1, index(line, "[PTDS") - 1)
	}
	n = split(line, pairs, /, */)
	for (i = 1; i <= n; i++) {
		if (split(pairs[i], vs, /->/) == 2) {
			gsub(/ /, "", vs[1]); gsub(/ /, "", vs[2])
			maprows[++mapcount] = name SUBSEP vs[1] SUBSEP 0 SUBSEP vs[2]
		}
	}
	if (ptds != "") {
		split(ptds, halves, / *-> */)
		nv = split(halves[1], versions, /,/)
		split(halves[2], symbols, /,/)
		for (i = 1; i <= nv; i++)
			maprows[++mapcount] = name SUBSEP versions[i] SUBSEP 1 SUBSEP symbols[i]
	}
	next
}

# The names file: one name a line.
{ wanted[$1] = 1 }

END {
	for (i = 1; i <= mapcount; i++) {
		split(maprows[i], f, SUBSEP)
		if (f[1] in wanted || f[4] in defined)
			row(f[1], f[2], f[3], f[4])
	}
	for (name in wanted)
		if (!(name in mapped))
			row(name, 0, 0, name)
	for (symbol in defined)
		if (!(symbol in listed) && !(symbol in mapped))
			row(symbol, 0, 0, symbol)
	if (list) {
		for (i = 1; i <= nstubs; i++)
			print stub[i]
		exit
	}
	print "/* Generated at build time by `" command() "`; do not edit. */"
	for (i = 1; i <= nstubs; i++)
		print "GP_PROC_STUB(" stub[i] ")"
	if (extern) {
		print "/* Each function's prototype: src/include/gp-cuda.h. */"
		print "const struct proc_entry proc_table[] = {"
	} else {
		print "static const struct proc_entry proc_table[] = {"
	}
	for (i = 1; i <= nrows; i++)
		print rows[i]
	print "};"
	if (extern)
		print "const size_t proc_table_size = sizeof(proc_table) / sizeof(proc_table[0]);"
}
