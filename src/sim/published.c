/* published.c — the reference table of the FGD paper (see published.h). */
#include "sim/published.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *trace;
	const char *policy;
	double at_100, at_130;
} table[] = {
	{ "default", "random", 86.30, 87.47 },
	{ "default", "dotprod", 90.62, 90.85 },
	{ "default", "gpuclustering", 91.65, 91.88 },
	{ "default", "gpupacking", 91.78, 92.00 },
	{ "default", "bestfit", 92.86, 93.08 },
	{ "default", "fgd", 95.23, 95.39 },
	{ "gpushare40", "random", 84.86, 86.00 },
	{ "gpushare40", "dotprod", 89.30, 89.56 },
	{ "gpushare40", "gpuclustering", 89.76, 90.02 },
	{ "gpushare40", "gpupacking", 89.77, 90.03 },
	{ "gpushare40", "bestfit", 91.44, 91.69 },
	{ "gpushare40", "fgd", 93.96, 94.15 },
	{ "multigpu20", "random", 86.92, 88.69 },
	{ "multigpu20", "dotprod", 91.85, 92.06 },
	{ "multigpu20", "gpuclustering", 93.34, 93.56 },
	{ "multigpu20", "gpupacking", 93.50, 93.71 },
	{ "multigpu20", "bestfit", 93.73, 93.93 },
	{ "multigpu20", "fgd", 95.53, 95.65 },
	{ "gpuspec10", "random", 86.26, 87.43 },
	{ "gpuspec10", "dotprod", 90.17, 90.39 },
	{ "gpuspec10", "gpuclustering", 91.96, 92.18 },
	{ "gpuspec10", "gpupacking", 92.24, 92.46 },
	{ "gpuspec10", "bestfit", 93.10, 93.30 },
	{ "gpuspec10", "fgd", 94.66, 94.95 },
	{ "cpu100", "random", 87.44, 89.11 },
	{ "cpu100", "dotprod", 91.73, 91.95 },
	{ "cpu100", "gpuclustering", 92.42, 92.64 },
	{ "cpu100", "gpupacking", 92.50, 92.72 },
	{ "cpu100", "bestfit", 93.26, 93.44 },
	{ "cpu100", "fgd", 95.21, 95.35 },
};

bool gp_published_trace_name(const char *path, char *name, unsigned len)
{
	static const char prefix[] = "openb_pod_list_";
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	if (strncmp(base, prefix, sizeof(prefix) - 1) != 0)
		return false;
	base += sizeof(prefix) - 1;
	dot = strstr(base, ".csv");
	if (!dot || dot == base || (unsigned)(dot - base) >= len)
		return false;
	snprintf(name, len, "%.*s", (int)(dot - base), base);
	return true;
}

bool gp_published_alloc(const char *trace, const char *policy,
			double *ret_at_100, double *ret_at_130)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].trace, trace) == 0 &&
		    strcmp(table[i].policy, policy) == 0) {
			*ret_at_100 = table[i].at_100;
			*ret_at_130 = table[i].at_130;
			return true;
		}
	return false;
}
