/* cmd-bench.c — `gpupool bench NAME`: the one runner for bench/. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/commands.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} benches[] = {
	{ "sched", gp_bench_sched, "placement decisions per second at scale" },
	{ "sched-scale", gp_bench_sched_scale,
	  "how a decision's cost grows from 1,000 to 100,000 nodes" },
};

int gp_cmd_bench(int argc, char **argv)
{
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
			if (!strcmp(argv[1], benches[i].name))
				return benches[i].run(argc - 1, argv + 1);
	fprintf(argc >= 2 && strcmp(argv[1], "--help") ? stderr : stdout,
		"usage: gpupool bench NAME [OPTIONS]\n\nbenchmarks:\n");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		printf("  %-12s %s\n", benches[i].name, benches[i].summary);
	return argc >= 2 && !strcmp(argv[1], "--help") ? GP_EXIT_OK : GP_EXIT_USAGE;
}
