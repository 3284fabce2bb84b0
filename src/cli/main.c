/* main.c — the gpupool command: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

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
	fprintf(out, "\n`gpupool COMMAND --help` describes each command.\n");
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
	if (argc < 2) {
		usage(stderr);
		return GP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return GP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("gpupool %s\n", GP_VERSION);
		return GP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "gpupool: unknown command \"%s\"\n\n", argv[1]);
	usage(stderr);
	return GP_EXIT_USAGE;
}
