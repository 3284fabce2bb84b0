/* shim-cuda-hooks.c — the table of libgpushare's hooks by (name, cudaVersion,
 * per-thread), generated at build time from the ABI map, hooked.txt and
 * the hooks the sources define (src/simdev/gen-procs.awk). Each hook is
 * declared with the driver's own type by include/gp-cuda.h, through
 * shim.h. */
#include <stddef.h>

#include "vendor/nvidia/shim-cuda.h"

#include "hooks.gen.h"
