/* cmd-top.c — watching the pool: `gpupool top`, a live view of the
 * devices, the running tasks and the queue that redraws every second
 * (GET /v1/status), and `gpupool alerts`, the alerts (GET /v1/alerts,
 * POST /v1/alerts/ID/clear). docs/api.md describes the endpoints. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/client.h"
#include "cli/commands.h"

#define ALERTS_MAX   10000
#define PATH_LEN     96
#define REFRESH_S    1
#define CLEAR_SCREEN "\033[H\033[2J"

/* ---- top ---------------------------------------------------------------- */

struct top_options {
	bool once;
};

static void top_usage(FILE *out)
{
	fprintf(out, "usage: gpupool top [--once] [-o json|table]\n"
		     "\n"
		     "Shows the devices (utilization now and averaged over the server's\n"
		     "window, memory, what the slices hold), the running tasks (share,\n"
		     "effective utilization: used / allocated compute, memory) and the "
		     "queue,\n"
		     "redrawn every second until Ctrl-C. A tenant sees its own tasks.\n"
		     "\n"
		     "  --once   print one frame and exit\n");
}

static int top_option(void *ctx, int c, const char *value)
{
	struct top_options *o = ctx;

	(void)value;
	if (c != '1')
		return -EINVAL;
	o->once = true;
	return 0;
}

static void device_row(json_t *d)
{
	char used[32], total[32], held[32], memory[72];

	snprintf(memory, sizeof(memory), "%s / %s",
		 gp_client_mib_about(json_object_get(d, "memory_used_mib"), used, sizeof(used)),
		 gp_client_mib_about(json_object_get(d, "memory_total_mib"), total, sizeof(total)));
	printf("  %-2lld %-24.24s %4lld%% %4.0f%%  %-16s %6lld%% %8s\n",
	       (long long)gp_client_int(d, "index"), gp_client_text(d, "model"),
	       (long long)gp_client_int(d, "utilization_pct"),
	       json_number_value(json_object_get(d, "utilization_window_pct")), memory,
	       (long long)gp_client_int(d, "allocated_compute_pct"),
	       gp_client_mib_about(json_object_get(d, "allocated_memory_mib"), held, sizeof(held)));
}

static void task_row(json_t *t)
{
	json_t *eff = json_object_get(t, "effective_utilization");
	char used[32], slice[32], memory[72], effective[32] = "-";

	if (json_is_number(eff))
		snprintf(effective, sizeof(effective), "%.0f%%",
			 100 * json_number_value(eff));
	snprintf(memory, sizeof(memory), "%s / %s",
		 gp_client_mib_about(json_object_get(t, "memory_used_mib"), used, sizeof(used)),
		 gp_client_mib_about(json_object_get(t, "mem_mib"), slice, sizeof(slice)));
	printf("  %-6lld %-12.12s %-16.16s %4lld%% %9s  %-18s %6llds\n",
	       (long long)gp_client_int(t, "id"), gp_client_text(t, "tenant"),
	       gp_client_text(t, "name"), (long long)gp_client_int(t, "compute_pct"),
	       effective, memory, (long long)gp_client_int(t, "running_s"));
}

static void waiting_row(json_t *t)
{
	printf("  %-6lld %-12.12s %-16.16s %-9s %4lld %7llds  %s\n",
	       (long long)gp_client_int(t, "id"), gp_client_text(t, "tenant"),
	       gp_client_text(t, "name"), gp_client_text(t, "state"),
	       (long long)gp_client_int(t, "priority"),
	       (long long)gp_client_int(t, "waiting_s"), gp_client_text(t, "reason"));
}

static void top_frame(json_t *s)
{
	json_t *queue = json_object_get(s, "queue");
	json_int_t sample_ms = gp_client_int(s, "sample_ms");

	printf("gpupool top   %s   ", gp_client_text(s, "time"));
	if (sample_ms)
		printf("sampled every %.1f s\n\n", (double)sample_ms / 1000.0);
	else
		printf("no agent: the server runs without --with-agent\n\n");
	printf("DEVICES %zu\n  %-2s %-24s %5s %5s  %-16s %7s %8s\n",
	       json_array_size(json_object_get(s, "devices")), "#", "MODEL", "UTIL",
	       "AVG", "MEMORY USED/TOTAL", "SLICES", "HOLD MEM");
	gp_client_rows(s, "devices", device_row);
	printf("\nTASKS %zu running\n  %-6s %-12s %-16s %5s %9s  %-18s %7s\n",
	       json_array_size(json_object_get(s, "tasks")), "ID", "TENANT", "NAME",
	       "SHARE", "EFFECTIVE", "MEMORY USED/SLICE", "RUNNING");
	gp_client_rows(s, "tasks", task_row);
	printf("\nQUEUE %lld waiting, the oldest for %.0f s\n",
	       (long long)gp_client_int(queue, "length"),
	       json_number_value(json_object_get(queue, "oldest_wait_s")));
	if (json_array_size(json_object_get(s, "waiting")))
		printf("  %-6s %-12s %-16s %-9s %4s %8s  %s\n", "ID", "TENANT", "NAME",
		       "STATE", "PRIO", "WAITING", "REASON");
	gp_client_rows(s, "waiting", waiting_row);
}

int gp_cmd_top(int argc, char **argv)
{
	static const struct option own[] = {
		{"once", no_argument, NULL, '1'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "top",
		.usage = top_usage,
		.options = own,
		.option = top_option,
	};
	struct top_options o = {0};
	struct gp_client_flags f = {0};
	bool tty = isatty(STDOUT_FILENO);
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	for (;;) {
		json_t *reply = NULL;

		status = gp_client_request(&f, cmd.name, "GET", "/v1/status", NULL,
					   &reply);
		if (status == GP_EXIT_OK && !o.once && tty)
			fputs(CLEAR_SCREEN, stdout);
		if (status == GP_EXIT_OK && f.json)
			gp_client_print_json(reply);
		else if (status == GP_EXIT_OK)
			top_frame(reply);
		json_decref(reply);
		fflush(stdout);
		if (status != GP_EXIT_OK || o.once)
			return status;
		sleep(REFRESH_S);
	}
}

/* ---- alerts ------------------------------------------------------------- */

struct alerts_options {
	bool all;
	unsigned limit;
	long long clear; /* 0: list */
};

static void alerts_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool alerts [--all] [--limit N] [-o json|table]\n"
		"       gpupool alerts --clear ID\n"
		"\n"
		"Lists the active alerts, newest first (a tenant: its own): critical (a\n"
		"service crash-looping, a task stopped by the verifier or that its\n"
		"devices cannot hold, the database unwritable), warning (a task failed,\n"
		"a device or a tenant's quota above 80 %%, a task whose memory only\n"
		"grows), info (a device idle on average).\n"
		"\n"
		"  --all        cleared ones too\n"
		"  --limit N    at most N, 1..%d (default 100)\n"
		"  --clear ID   clear alert ID (admin): a failed task's, once seen to\n",
		ALERTS_MAX);
}

static int alert_id(const char *text, long long *ret)
{
	unsigned id;

	if (gp_client_uint("alerts", "clear", text, 1, UINT32_MAX >> 1, &id) < 0)
		return -EINVAL;
	*ret = id;
	return 0;
}

static int alerts_option(void *ctx, int c, const char *value)
{
	struct alerts_options *o = ctx;

	switch (c) {
	case 'a': o->all = true; return 0;
	case 'l':
		return gp_client_uint("alerts", "limit", value, 1, ALERTS_MAX, &o->limit);
	case 'c': return alert_id(value, &o->clear);
	}
	return -EINVAL;
}

static void alert_row(json_t *a)
{
	const char *cleared = gp_client_text(a, "cleared");

	printf("%-6lld %-8s %-24.24s %-18s %-10s %s%s%s\n",
	       (long long)gp_client_int(a, "id"), gp_client_text(a, "level"),
	       gp_client_text(a, "created"), gp_client_text(a, "kind"),
	       *gp_client_text(a, "tenant") ? gp_client_text(a, "tenant") : "-",
	       gp_client_text(a, "message"), *cleared ? "; cleared " : "", cleared);
}

static void alerts_print(json_t *reply)
{
	printf("%-6s %-8s %-24s %-18s %-10s %s\n", "ID", "LEVEL", "SINCE", "KIND",
	       "TENANT", "MESSAGE");
	gp_client_rows(reply, "alerts", alert_row);
}

int gp_cmd_alerts(int argc, char **argv)
{
	static const struct option own[] = {
		{"all", no_argument, NULL, 'a'},
		{"limit", required_argument, NULL, 'l'},
		{"clear", required_argument, NULL, 'c'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "alerts",
		.usage = alerts_usage,
		.options = own,
		.option = alerts_option,
	};
	struct alerts_options o = {.limit = 100};
	struct gp_client_flags f = {0};
	char path[PATH_LEN];
	json_t *reply = NULL;
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.clear)
		snprintf(path, sizeof(path), "/v1/alerts/%lld/clear", o.clear);
	else
		snprintf(path, sizeof(path), "/v1/alerts?state=%s&limit=%u",
			 o.all ? "all" : "active", o.limit);
	status = gp_client_request(&f, cmd.name, o.clear ? "POST" : "GET", path, NULL,
				   &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		alerts_print(reply);
	json_decref(reply);
	return status;
}
