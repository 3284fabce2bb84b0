/* commands.h — the subcommands of the gpupool command line.
 *
 * Each takes argc/argv starting at its own name and returns the process
 * exit status: 0 success, 1 failure while working, 2 bad usage (a wrong
 * flag or value; the message says which and what to do). */
#ifndef GP_CLI_COMMANDS_H
#define GP_CLI_COMMANDS_H

#include "base/exit.h"

int gp_cmd_sim(int argc, char **argv);
/* `gpupool sim --history`: the pool's own tasks replayed (cmd-sim-history.c). */
int gp_cmd_sim_history(int argc, char **argv);
int gp_cmd_bench(int argc, char **argv);
int gp_cmd_policies(int argc, char **argv);

/* The server's clients (cli/client.h): cmd-task.c and cmd-admin.c.
 * submit is also `run`; it takes its name for messages from argv[0]. */
int gp_cmd_submit(int argc, char **argv);
int gp_cmd_task(int argc, char **argv);
int gp_cmd_tenant(int argc, char **argv);
int gp_cmd_template(int argc, char **argv);
int gp_cmd_audit(int argc, char **argv);
/* A task's output: cmd-logs.c. The nodes, devices and queue: cmd-pool.c. */
int gp_cmd_logs(int argc, char **argv);
int gp_cmd_node(int argc, char **argv);
int gp_cmd_device(int argc, char **argv);
int gp_cmd_queue(int argc, char **argv);
/* Metering and monitoring: cmd-bill.c, cmd-top.c. */
int gp_cmd_bill(int argc, char **argv);
/* Right-sizing: cmd-advise.c. */
int gp_cmd_advise(int argc, char **argv);
/* Services and time-of-day schedules: cmd-service.c. */
int gp_cmd_service(int argc, char **argv);
int gp_cmd_schedule(int argc, char **argv);
int gp_cmd_top(int argc, char **argv);
int gp_cmd_alerts(int argc, char **argv);

/* Parses "42-51" or "1,5,9" (or a mix) into at most max seeds. Returns
 * the count, or -1 when malformed. */
int gp_parse_seeds(const char *text, unsigned long long *seeds, int max);

#endif
