/* published.h — the published reference results for the openb traces:
 * GPU allocated % at 100 % and 130 % arrived, mean of 10 seeds, from Weng
 * et al., "Beware of Fragmentation", USENIX ATC '23 (table reproduced in
 * data/openb/README.md). Used to print our numbers next to
 * theirs; never as an expected result. */
#ifndef GP_SIM_PUBLISHED_H
#define GP_SIM_PUBLISHED_H

#include <stdbool.h>

/* The trace name in a pod file path: "openb_pod_list_gpushare40.csv" ->
 * "gpushare40". Writes at most len bytes; false when it is not an openb
 * pod list. */
bool gp_published_trace_name(const char *path, char *name, unsigned len);

/* Published allocated % of `policy` on `trace`; false when none. */
bool gp_published_alloc(const char *trace, const char *policy,
			double *ret_at_100, double *ret_at_130);

#endif
