/* hooks-table.c — the table of libgpushare's hooks by (name, cudaVersion,
 * per-thread), generated at build time from the ABI map, hooked.txt and
 * the hooks the sources define (src/simdev/gen-procs.awk). A file of its
 * own because the generated code declares each hook by name only. */
#include <stddef.h>

#include "shim/shim.h"

#pragma GCC diagnostic ignored "-Wstrict-prototypes"

#include "hooks.gen.h"
