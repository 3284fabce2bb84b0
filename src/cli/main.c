/* main.c — the gpupool command: dispatches to a subcommand. The common
 * options of the server's clients (--socket, --token, --token-file,
 * -o/--output, --json) may come before the command's name; they are
 * moved after it (cli/client.h: gp_client_hoist). An unknown command is
 * one line that names the command it is likely a slip of. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/closest.h"
#include "cli/client.h"
#include "cli/cmd-region.h"
#include "cli/commands.h"
#include "core/policy.h"
#include "server/server.h"

#define GP_VERSION "0.1.0"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "sim", gp_cmd_sim, "replay a cluster trace, or the pool's own tasks (--history)" },
	{ "bench", gp_cmd_bench, "measure the scheduler (bench sched --help)" },
	{ "policies", gp_cmd_policies, "list the placement policies" },
	{ "region", gp_cmd_region, "show and change the limits of the tasks on each device" },
	{ "server", gp_cmd_server, "run the server: the API on a Unix socket" },
	{ "submit", gp_cmd_submit, "queue a task (also: run)" },
	{ "run", gp_cmd_submit, NULL },
	{ "task", gp_cmd_task, "list (or watch), show, change and cancel tasks" },
	{ "logs", gp_cmd_logs, "print a task's output" },
	{ "queue", gp_cmd_queue, "the queued tasks in the scheduler's order, and why they wait" },
	{ "node", gp_cmd_node, "list the nodes (node ls); node --kubernetes: a cluster node's program" },
	{ "device", gp_cmd_device, "list the devices, their health and tasks (device ls)" },
	{ "tenant", gp_cmd_tenant, "add, change, list and remove tenants; their quotas and tokens" },
	{ "template", gp_cmd_template, "add, list, show and remove slice templates" },
	{ "audit", gp_cmd_audit, "show the audit log" },
	{ "bill", gp_cmd_bill, "a month's bill per tenant and device model" },
	{ "advise", gp_cmd_advise, "right-sizing: the slices a month's runs needed" },
	{ "service", gp_cmd_service, "services: replicas that scale with their load" },
	{ "schedule", gp_cmd_schedule, "time-of-day rules for quotas, shares and priorities" },
	{ "top", gp_cmd_top, "live view of devices, tasks and the queue" },
	{ "alerts", gp_cmd_alerts, "list and clear alerts" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gpupool COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary)        /* aliases have none */
			fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n`gpupool COMMAND --help` (or `gpupool help COMMAND`) describes each "
		"command.\n"
		"--socket, --token, --token-file and -o may come before COMMAND too.\n");
}

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Says that word is no command, with the one it is likely a slip of. */
static int unknown(const char *word)
{
	const char *names[N_COMMANDS], *like;

	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	like = word[0] == '-' ? NULL : gp_closest_find(word, names, N_COMMANDS);
	fprintf(stderr, "gpupool: unknown %s \"%s\"%s%s%s (gpupool help lists the commands)\n",
		word[0] == '-' ? "option" : "command", word, like ? "; did you mean \"" : "",
		like ? like : "", like ? "\"?" : "");
	return GP_EXIT_USAGE;
}

/* `gpupool help [COMMAND]`: the list, or the command's --help. */
static int help(int argc, char **argv)
{
	char flag[] = "--help", *again[] = {argv[1], flag, NULL};

	if (argc < 2) {
		usage(stdout);
		return GP_EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(2, again);
	return unknown(argv[1]);
}

int gp_cmd_policies(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; gp_policy_name_at(i); i++)
		printf("%-14s %s\n", gp_policy_name_at(i), gp_policy_summary_at(i));
	return GP_EXIT_OK;
}

int main(int argc, char **argv)
{
	int r = gp_client_hoist("", argc, argv);

	if (r == -EINVAL)
		return GP_EXIT_USAGE;
	if (argc < 2 || r == -ENOENT) {
		if (r == -ENOENT)
			fprintf(stderr, "gpupool: no command after the options\n\n");
		usage(stderr);
		return GP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help(1, argv + 1);
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version")) {
		printf("gpupool %s\n", GP_VERSION);
		return GP_EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return unknown(argv[1]);
}
