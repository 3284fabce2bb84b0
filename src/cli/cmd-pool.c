/* cmd-pool.c — what the pool is made of and what waits for it, through
 * the server's API (cli/client.h, docs/api.md): `gpupool node ls` (this
 * machine as the server's agent found it), `gpupool device ls` (each
 * device: memory, utilization, driver, the compatibility check, the
 * tasks on it) and `gpupool queue` (the queued tasks in the order the
 * scheduler considers them, and why each waits). Tables by default, the
 * server's JSON with -o json. Without --with-agent the server has no
 * devices; the commands then print its note. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "k8s/node.h"

static int no_option(void *ctx, int c, const char *value)
{
	(void)ctx;
	(void)c;
	(void)value;
	return -EINVAL;
}

/* Parses a command without arguments, GETs path, prints the answer with
 * print (or as JSON); an exit status. */
static int list(const struct gp_client_command *cmd, int argc, char **argv,
		const char *path, void (*print)(json_t *reply))
{
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int status = gp_client_parse_bare(cmd, NULL, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	status = gp_client_request(&f, cmd->name, "GET", path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		print(reply);
	json_decref(reply);
	return status;
}

/* The server's note when it runs no agent; true when it said one. */
static bool no_agent(json_t *reply, const char *what)
{
	if (json_is_true(json_object_get(reply, "agent")) || json_object_get(reply, "engine"))
		return false;
	printf("no %s: %s\n", what, gp_client_text(reply, "note"));
	return true;
}

/* ---- device ls ------------------------------------------------------------ */

static void device_ls_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool device ls [-o json|table]\n"
		"\n"
		"Lists the devices of the server's agent: index, UUID, model, memory in\n"
		"use and in all, utilization at the last sampling, driver, health (ok;\n"
		"incompatible, with the reason, when the driver cannot serve it: it is\n"
		"not scheduled; unresponsive when NVML did not answer) and the tasks on\n"
		"it (a tenant sees the ids of its own; RUN counts everyone's).\n");
}

/* "3,5" from the ids of the tasks on a device; "-" when none. */
static const char *ids_text(json_t *ids, char *buf, size_t size)
{
	size_t used = 0, i;
	json_t *id;

	snprintf(buf, size, "-");
	json_array_foreach(ids, i, id) {
		if (used >= size)
			break;
		used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "",
					 (long long)json_integer_value(id));
	}
	return buf;
}

static void device_row(json_t *d)
{
	char used[32], total[32], memory[72], util[16] = "-", ids[128];
	json_t *u = json_object_get(d, "utilization_pct");

	if (json_is_integer(u))
		snprintf(util, sizeof(util), "%lld%%", (long long)json_integer_value(u));
	snprintf(memory, sizeof(memory), "%s / %s",
		 gp_client_mib_about(json_object_get(d, "memory_used_mib"), used, sizeof(used)),
		 gp_client_mib_about(json_object_get(d, "memory_total_mib"), total, sizeof(total)));
	printf("%-3lld %-40s %-24.24s %-16s %5s %-10s %-12s %3lld %s\n",
	       (long long)gp_client_int(d, "index"), gp_client_text(d, "uuid"),
	       gp_client_text(d, "name"), memory, util, gp_client_text(d, "driver_version"),
	       gp_client_text(d, "health"), (long long)gp_client_int(d, "tasks_running"),
	       ids_text(json_object_get(d, "tasks"), ids, sizeof(ids)));
	if (*gp_client_text(d, "reason"))
		printf("    not usable: %s\n", gp_client_text(d, "reason"));
}

static void device_ls_print(json_t *reply)
{
	if (no_agent(reply, "devices"))
		return;
	printf("%-3s %-40s %-24s %-16s %5s %-10s %-12s %3s %s\n", "#", "UUID", "MODEL",
	       "MEMORY USED/ALL", "UTIL", "DRIVER", "HEALTH", "RUN", "TASKS");
	gp_client_rows(reply, "devices", device_row);
}

static int device_ls(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "device ls",
		.usage = device_ls_usage,
		.option = no_option,
	};

	return list(&cmd, argc, argv, "/v1/devices", device_ls_print);
}

int gp_cmd_device(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"ls", device_ls, "list the devices, their health and their tasks"},
	};

	return gp_client_dispatch("device", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}

/* ---- node ls -------------------------------------------------------------- */

static void node_ls_usage(FILE *out)
{
	fprintf(out, "usage: gpupool node ls [-o json|table]\n"
		     "\n"
		     "Lists the nodes: the machine of the server's agent (with\n"
		     "--kubernetes, the cluster's nodes with gpupool devices), with its "
		     "driver and\n"
		     "CUDA version, its devices (how many the driver can serve), "
		     "their memory\n"
		     "and the tasks running on them.\n");
}

static void node_row(json_t *n)
{
	char memory[32];

	printf("%-24.24s %-12s %-5s %7lld %6lld %8s %5lld\n", gp_client_text(n, "hostname"),
	       gp_client_text(n, "driver_version"), gp_client_text(n, "cuda_version"),
	       (long long)gp_client_int(n, "devices"),
	       (long long)gp_client_int(n, "devices_usable"),
	       gp_client_mib_about(json_object_get(n, "memory_total_mib"), memory, sizeof(memory)),
	       (long long)gp_client_int(n, "tasks_running"));
}

static void node_ls_print(json_t *reply)
{
	if (no_agent(reply, "nodes"))
		return;
	printf("%-24s %-12s %-5s %7s %6s %8s %5s\n", "HOSTNAME", "DRIVER", "CUDA",
	       "DEVICES", "USABLE", "MEMORY", "TASKS");
	gp_client_rows(reply, "nodes", node_row);
}

static int node_ls(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "node ls",
		.usage = node_ls_usage,
		.option = no_option,
	};

	return list(&cmd, argc, argv, "/v1/nodes", node_ls_print);
}

int gp_cmd_node(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"ls", node_ls, "list the nodes: hostname, driver, CUDA, devices"},
	};

	/* `gpupool node --kubernetes`: a Kubernetes node's program (src/k8s). */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--kubernetes") == 0)
			return gp_cmd_node_kubernetes(argc, argv);
	return gp_client_dispatch("node", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}

/* ---- queue ---------------------------------------------------------------- */

static void queue_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool queue [-o json|table]\n"
		"\n"
		"Lists the queued tasks (pending, and preempted ones queued again) in "
		"the\n"
		"order the scheduler considers them: priority (9 first), then age. "
		"Each\n"
		"has its position in the whole queue, its tenant, its shape, how long "
		"it\n"
		"has waited and why. A tenant sees its own tasks; the admin all. A long\n"
		"queue shows its head (the server's first page: 500 tasks).\n");
}

/* "4G x 30%", "whole", then " x2" for two devices and the constraints. */
static const char *shape_text(json_t *t, char *buf, size_t size)
{
	char mem[32];
	int n;

	if (json_is_true(json_object_get(t, "whole")))
		n = snprintf(buf, size, "whole");
	else
		n = snprintf(buf, size, "%s x %lld%%",
			     gp_client_mib_text(gp_client_int(t, "mem_mib"), mem, sizeof(mem)),
			     (long long)gp_client_int(t, "compute_pct"));
	if (gp_client_int(t, "devices") > 1)
		n += snprintf(buf + n, size - (size_t)n, " x%lld dev",
			      (long long)gp_client_int(t, "devices"));
	if (json_is_true(json_object_get(t, "exclusive")))
		n += snprintf(buf + n, size - (size_t)n, ", exclusive");
	if (*gp_client_text(t, "model"))
		snprintf(buf + n, size - (size_t)n, ", %s", gp_client_text(t, "model"));
	return buf;
}

/* "45s", "12m03s", "5h20m", "3d04h". */
static const char *duration_text(long long s, char *buf, size_t size)
{
	if (s < 60)
		snprintf(buf, size, "%llds", s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, size, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
	return buf;
}

static void queue_row(json_t *t)
{
	char shape[160], waited[32];

	printf("%-4lld %-6lld %-12.12s %-16.16s %-9s %3lld %-22.22s %7s  %s\n",
	       (long long)gp_client_int(t, "position"), (long long)gp_client_int(t, "id"),
	       gp_client_text(t, "tenant"), gp_client_text(t, "name"),
	       gp_client_text(t, "state"), (long long)gp_client_int(t, "priority"),
	       shape_text(t, shape, sizeof(shape)),
	       duration_text(gp_client_int(t, "waiting_s"), waited, sizeof(waited)),
	       gp_client_text(t, "reason"));
}

static void queue_print(json_t *reply)
{
	size_t shown = json_array_size(json_object_get(reply, "queue"));
	json_int_t length = gp_client_int(reply, "length");

	printf("%-4s %-6s %-12s %-16s %-9s %3s %-22s %7s  %s\n", "POS", "ID", "TENANT",
	       "NAME", "STATE", "PRI", "SHAPE", "WAITED", "REASON");
	gp_client_rows(reply, "queue", queue_row);
	if (!json_is_null(json_object_get(reply, "next_after")))
		printf("(the head of the queue: %zu shown, %lld queued in all)\n", shown,
		       (long long)length);
	else if ((json_int_t)shown < length)
		printf("(%lld queued in all; you see your own)\n", (long long)length);
}

int gp_cmd_queue(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "queue",
		.usage = queue_usage,
		.option = no_option,
	};

	return list(&cmd, argc, argv, "/v1/queue", queue_print);
}
