/* bench.h — benchmarks run by `gpupool bench NAME` (src/cli/cmd-bench.c).
 * Each prints one JSON object and compares against a baseline measured in
 * the same run. Same exit codes as the commands (cli/commands.h). */
#ifndef GP_BENCH_BENCH_H
#define GP_BENCH_BENCH_H

int gp_bench_sched(int argc, char **argv);
int gp_bench_sched_scale(int argc, char **argv);

#endif
