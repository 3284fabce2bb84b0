/* cmd-task.c — `gpupool submit` (aliases `run` and `task submit`) and
 * `gpupool task ls|show|set|cancel`: a tenant's tasks, through the server's API
 * (cli/client.h, docs/api.md). Each command builds one request from its
 * flags, sends it, and prints the answer as a table, or with -o json the
 * server's JSON as it came. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "agent/taskenv.h"
#include "core/resources.h"

#define DEVICES_MAX GP_NODE_DEVICES_MAX /* on one node, as the server takes */
#define PATH_LEN    128
#define WHY_MAX	    400

static const char *const isolations[] = {"hard", "shared", NULL};
static const char *const kinds[] = {"batch", "training", "inference", "interactive",
				    NULL};
static const char *const states[] = {"pending",	  "running",   "succeeded", "failed",
				     "cancelled", "preempted", "lost",	    NULL};

/* What every task subcommand collects: its name, the request body, and
 * the flags given. */
struct task_options {
	char cmd[32]; /* "submit", "task set", ... */
	json_t *body;
	const char *state; /* task ls --state */
	bool quiet;	   /* submit -q: only the id */
};

static void options_init(struct task_options *o, const char *cmd)
{
	snprintf(o->cmd, sizeof(o->cmd), "%s", cmd);
	o->body = json_object();
}

static int set_uint(struct task_options *o, const char *flag, const char *key,
		    const char *value, unsigned lo, unsigned hi)
{
	unsigned v;

	if (gp_client_uint(o->cmd, flag, value, lo, hi, &v) < 0)
		return -EINVAL;
	json_object_set_new(o->body, key, json_integer(v));
	return 0;
}

static int set_choice(struct task_options *o, const char *flag, const char *value,
		      const char *const *choices)
{
	if (gp_client_choice(o->cmd, flag, value, choices) < 0)
		return -EINVAL;
	json_object_set_new(o->body, flag, json_string(value));
	return 0;
}

/* Exactly one task id after the flags; an exit status. */
static int one_id(const char *cmd, int argc, char **argv, int first, long long *ret)
{
	if (argc - first != 1) {
		fprintf(stderr, "gpupool %s: needs one task id (gpupool %s --help)\n",
			cmd, cmd);
		return GP_EXIT_USAGE;
	}
	return gp_client_id(cmd, argv[first], ret);
}

/* ---- submit ----------------------------------------------------------- */

static void submit_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool submit [OPTIONS] -- COMMAND [ARGS...]\n"
		"       (or: gpupool run ..., gpupool task submit ...)\n"
		"\n"
		"Queues COMMAND as a task of your tenant and prints its id once the "
		"server\n"
		"has stored it.\n"
		"\n"
		"  --name NAME        the task's name (default: the program's name)\n"
		"  --template NAME    the slice of a template (`gpupool template ls`)\n"
		"  --mem SIZE         memory per device: 4G, 512M (with --compute; over\n"
		"                     the template's)\n"
		"  --compute PCT      share of each device, 1..100\n"
		"  --devices N        how many devices, 1..%d (default 1)\n"
		"  --whole            whole devices, all on one node (no "
		"--mem/--compute)\n"
		"  --exclusive        share the devices with nobody\n"
		"  --isolation I      hard (the share is a cap) or shared (may borrow "
		"idle time)\n"
		"  --priority N       0..9, higher first (default 5)\n"
		"  --kind K           batch, training, inference or interactive (default "
		"batch)\n"
		"  --model M          only devices of this model\n"
		"  --workdir DIR      where it runs (default: this directory)\n"
		"  --env NAME=VALUE   a variable of the task's environment\n"
		"                     (repeatable, at most %d): it holds only these\n"
		"                     and what gpupool sets (its devices, its id,\n"
		"                     PATH, HOME, ...). gpupool's own names\n"
		"                     (GPUPOOL_*, LD_PRELOAD, *_VISIBLE_DEVICES,\n"
		"                     HOME, USER, ...) are refused; LD_LIBRARY_PATH\n"
		"                     is appended after the server's\n"
		"  -q, --quiet        print only the task id\n"
		"  -o json|table      the server's JSON, or text (default)\n"
		"  --socket PATH      the server (default: $GPUPOOL_SOCKET, else the "
		"server's)\n"
		"  --token T, --token-file F   who you are (default: $GPUPOOL_TOKEN)\n",
		DEVICES_MAX, GP_TASK_ENV_MAX);
}

/* --workdir DIR, made absolute (the task runs there, on the agent's
 * machine; this is the one machine of `--with-agent`). */
static int set_workdir(struct task_options *o, const char *value)
{
	char path[PATH_MAX];

	if (!realpath(value, path)) {
		fprintf(stderr, "gpupool %s: --workdir %s: %s; give a directory that exists\n",
			o->cmd, value, strerror(errno));
		return -EINVAL;
	}
	json_object_set_new(o->body, "workdir", json_string(path));
	return 0;
}

/* --env NAME=VALUE, checked as the server checks it (agent/taskenv.h),
 * before anything is sent. */
static int set_env(struct task_options *o, const char *value)
{
	const char *eq = strchr(value, '=');
	json_t *env = json_object_get(o->body, "env"), *v;
	char name[GP_TASK_ENV_NAME_MAX + 2], why[WHY_MAX];

	if (!eq) {
		fprintf(stderr, "gpupool %s: --env \"%s\" must be NAME=VALUE\n", o->cmd,
			value);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - value), value);
	if (gp_task_env_name_check(name, why, sizeof(why)) < 0) {
		fprintf(stderr, "gpupool %s: --env: %s\n", o->cmd, why);
		return -EINVAL;
	}
	if (env && json_object_get(env, name)) {
		fprintf(stderr,
			"gpupool %s: --env %s is given twice; give each variable once\n",
			o->cmd, name);
		return -EINVAL;
	}
	if (json_object_size(env) == GP_TASK_ENV_MAX) {
		fprintf(stderr,
			"gpupool %s: more than %d --env; a task takes at most %d\n",
			o->cmd, GP_TASK_ENV_MAX, GP_TASK_ENV_MAX);
		return -EINVAL;
	}
	if (strlen(eq + 1) > GP_TASK_ENV_VALUE_MAX || !(v = json_string(eq + 1))) {
		fprintf(stderr,
			"gpupool %s: --env %s: the value must be UTF-8 text of at most "
			"%d "
			"bytes\n",
			o->cmd, name, GP_TASK_ENV_VALUE_MAX);
		return -EINVAL;
	}
	if (!env) {
		env = json_object();
		json_object_set_new(o->body, "env", env);
	}
	json_object_set_new(env, name, v);
	return 0;
}

static int submit_option(void *ctx, int c, const char *value)
{
	struct task_options *o = ctx;
	uint64_t mib;

	switch (c) {
	case 'n': json_object_set_new(o->body, "name", json_string(value)); return 0;
	case 't': json_object_set_new(o->body, "template", json_string(value)); return 0;
	case 'M': json_object_set_new(o->body, "model", json_string(value)); return 0;
	case 'W': return set_workdir(o, value);
	case 'e': return set_env(o, value);
	case 'w': json_object_set_new(o->body, "whole", json_true()); return 0;
	case 'x': json_object_set_new(o->body, "exclusive", json_true()); return 0;
	case 'q': o->quiet = true; return 0;
	case 'm':
		if (gp_client_mib(o->cmd, "mem", value, false, &mib) < 0)
			return -EINVAL;
		json_object_set_new(o->body, "mem_mib", json_integer((json_int_t)mib));
		return 0;
	case 'c': return set_uint(o, "compute", "compute_pct", value, 1, 100);
	case 'd': return set_uint(o, "devices", "devices", value, 1, DEVICES_MAX);
	case 'p': return set_uint(o, "priority", "priority", value, 0, 9);
	case 'i': return set_choice(o, "isolation", value, isolations);
	case 'k': return set_choice(o, "kind", value, kinds);
	}
	return -EINVAL;
}

static const struct option submit_options[] = {
	{"name", required_argument, NULL, 'n'},
	{"template", required_argument, NULL, 't'},
	{"mem", required_argument, NULL, 'm'},
	{"compute", required_argument, NULL, 'c'},
	{"devices", required_argument, NULL, 'd'},
	{"whole", no_argument, NULL, 'w'},
	{"exclusive", no_argument, NULL, 'x'},
	{"isolation", required_argument, NULL, 'i'},
	{"priority", required_argument, NULL, 'p'},
	{"kind", required_argument, NULL, 'k'},
	{"model", required_argument, NULL, 'M'},
	{"workdir", required_argument, NULL, 'W'},
	{"env", required_argument, NULL, 'e'},
	{"quiet", no_argument, NULL, 'q'},
	{0},
};

/* The slice is named somehow: a template, --mem with --compute, or --whole. */
static int submit_check(const struct task_options *o)
{
	json_t *b = o->body;
	bool tpl = json_object_get(b, "template"), whole = json_object_get(b, "whole");
	bool mem = json_object_get(b, "mem_mib"),
	     compute = json_object_get(b, "compute_pct");

	if (tpl || whole || (mem && compute))
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool %s: %s\n", o->cmd,
		mem	  ? "--mem needs --compute too"
		: compute ? "--compute needs --mem too"
			  : "give the slice: --template NAME, or --mem SIZE and "
			    "--compute PCT, "
			    "or --whole");
	return GP_EXIT_USAGE;
}

static int submit_args(struct task_options *o, int argc, char **argv, int first)
{
	json_t *command = json_array();

	if (first >= argc) {
		json_decref(command);
		fprintf(stderr,
			"gpupool %s: no command; put it last, as in: gpupool %s --mem 4G "
			"--compute 30 -- python train.py\n",
			o->cmd, o->cmd);
		return GP_EXIT_USAGE;
	}
	for (int i = first; i < argc; i++)
		json_array_append_new(command, json_string(argv[i]));
	json_object_set_new(o->body, "command", command);
	if (!json_object_get(o->body, "workdir")) {     /* where it was submitted */
		char here[PATH_MAX];

		if (getcwd(here, sizeof(here)))
			json_object_set_new(o->body, "workdir", json_string(here));
	}
	return submit_check(o);
}

static void submit_print(const struct task_options *o, json_t *task)
{
	if (o->quiet)
		printf("%lld\n", (long long)gp_client_int(task, "id"));
	else
		printf("task %lld submitted: %s (%s)\n",
		       (long long)gp_client_int(task, "id"), gp_client_str(task, "state"),
		       gp_client_str(task, "reason"));
}

int gp_cmd_submit(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "submit",
		.usage = submit_usage,
		.options = submit_options,
		.short_options = "q",
		.option = submit_option,
		.args_last = true,
	};
	struct gp_client_command as = cmd;
	struct gp_client_flags f = {0};
	struct task_options o = {0};
	json_t *reply = NULL;
	int first, status, r;

	as.name = argv[0]; /* "submit" or "run" */
	options_init(&o, argv[0]);
	r = gp_client_parse(&as, &o, argc, argv, &f, &first);
	status = r ? (r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE)
		   : submit_args(&o, argc, argv, first);
	if (!r && status == GP_EXIT_OK)
		status =
			gp_client_request(&f, o.cmd, "POST", "/v1/tasks", o.body, &reply);
	if (!r && status == GP_EXIT_OK) {
		if (f.json)
			gp_client_print_json(reply);
		else
			submit_print(&o, reply);
	}
	json_decref(reply);
	json_decref(o.body);
	return status;
}

/* ---- task ls ---------------------------------------------------------- */

static void ls_usage(FILE *out)
{
	fprintf(out, "usage: gpupool task ls [--state STATE] [-o json|table]\n"
		     "\n"
		     "Lists your tenant's tasks (the admin sees every tenant's), oldest "
		     "first.\n"
		     "\n"
		     "  --state STATE   only tasks in this state: pending, running, "
		     "succeeded,\n"
		     "                  failed, cancelled, preempted, lost\n");
}

static int ls_option(void *ctx, int c, const char *value)
{
	struct task_options *o = ctx;

	if (c != 's' || gp_client_choice(o->cmd, "state", value, states) < 0)
		return -EINVAL;
	o->state = value;
	return 0;
}

/* A task's time without the date when it is today's, for tables. */
static const char *short_time(const char *rfc3339)
{
	return strlen(rfc3339) >= 19 ? rfc3339 + 11 : rfc3339;
}

static void ls_row(json_t *t)
{
	char mem[32];

	if (json_is_true(json_object_get(t, "whole")))
		snprintf(mem, sizeof(mem), "whole");
	else
		gp_client_mib_text(gp_client_int(t, "mem_mib"), mem, sizeof(mem));
	printf("%-6lld %-10s %-16s %-10s %3lld %6s %6lld%% %3lld  %-9.8s %s\n",
	       (long long)gp_client_int(t, "id"), gp_client_str(t, "tenant"),
	       gp_client_str(t, "name"), gp_client_str(t, "state"),
	       (long long)gp_client_int(t, "priority"), mem,
	       (long long)gp_client_int(t, "compute_pct"),
	       (long long)gp_client_int(t, "devices"),
	       short_time(gp_client_str(t, "created")), gp_client_str(t, "reason"));
}

static void ls_print(json_t *reply)
{
	printf("%-6s %-10s %-16s %-10s %3s %6s %7s %3s  %-9s %s\n", "ID", "TENANT",
	       "NAME", "STATE", "PRI", "MEM", "COMPUTE", "DEV", "CREATED", "REASON");
	gp_client_rows(reply, "tasks", ls_row);
}

static int task_ls(int argc, char **argv)
{
	static const struct option own[] = {
		{"state", required_argument, NULL, 's'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "task ls",
		.usage = ls_usage,
		.options = own,
		.option = ls_option,
	};
	struct gp_client_flags f = {0};
	struct task_options o = {.cmd = "task ls"};
	char path[PATH_LEN] = "/v1/tasks";
	json_t *reply = NULL;
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.state)
		snprintf(path, sizeof(path), "/v1/tasks?state=%s", o.state);
	status = gp_client_request(&f, cmd.name, "GET", path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		ls_print(reply);
	json_decref(reply);
	return status;
}

/* ---- task show -------------------------------------------------------- */

static void show_usage(FILE *out)
{
	fprintf(out, "usage: gpupool task show ID [-o json|table]\n\nShows one task.\n");
}

static int no_option(void *ctx, int c, const char *value)
{
	(void)ctx;
	(void)c;
	(void)value;
	return -EINVAL;
}

static void show_field(const char *key, json_t *v)
{
	printf("%-12s ", key);
	if (json_is_string(v))
		printf("%s\n", json_string_value(v));
	else if (json_is_null(v))
		printf("-\n");
	else
		gp_client_print_json(v);
}

static void show_print(json_t *task)
{
	for (void *it = json_object_iter(task); it; it = json_object_iter_next(task, it))
		show_field(json_object_iter_key(it), json_object_iter_value(it));
}

/* Sends METHOD /v1/tasks/ID[suffix] and prints the task that comes back. */
static int task_request(const struct gp_client_flags *f, const char *cmd,
			const char *method, long long id, const char *suffix,
			json_t *body, void (*print)(json_t *task))
{
	char path[PATH_LEN];
	json_t *reply = NULL;
	int status;

	snprintf(path, sizeof(path), "/v1/tasks/%lld%s", id, suffix);
	status = gp_client_request(f, cmd, method, path, body, &reply);
	if (status == GP_EXIT_OK && f->json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		print(reply);
	json_decref(reply);
	return status;
}

/* A subcommand that takes one task id and no option: sends METHOD to
 * /v1/tasks/ID + suffix and prints the answer with `print`. */
static int one_task(const struct gp_client_command *cmd, const char *method, const char *suffix,
		    void (*print)(json_t *), int argc, char **argv)
{
	struct gp_client_flags f = {0};
	long long id;
	int first, status, r = gp_client_parse(cmd, NULL, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	status = one_id(cmd->name, argc, argv, first, &id);
	if (status == GP_EXIT_OK)
		status = task_request(&f, cmd->name, method, id, suffix, NULL, print);
	return status;
}

static int task_show(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "task show",
		.usage = show_usage,
		.option = no_option,
	};

	return one_task(&cmd, "GET", "", show_print, argc, argv);
}

/* ---- task set --------------------------------------------------------- */

static void set_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool task set ID [--compute PCT] [--priority N] [--reason "
		"TEXT]\n"
		"\n"
		"Changes a task's share of compute or its priority, and records who and\n"
		"why in the audit log.\n"
		"\n"
		"  --compute PCT    share of each device, 1..100\n"
		"  --priority N     0..9, higher first\n"
		"  --reason TEXT    why, for the audit log\n");
}

static int set_option(void *ctx, int c, const char *value)
{
	struct task_options *o = ctx;

	switch (c) {
	case 'c': return set_uint(o, "compute", "compute_pct", value, 1, 100);
	case 'p': return set_uint(o, "priority", "priority", value, 0, 9);
	case 'r': json_object_set_new(o->body, "reason", json_string(value)); return 0;
	}
	return -EINVAL;
}

static void set_print(json_t *task)
{
	printf("task %lld: compute %lld%%, priority %lld\n",
	       (long long)gp_client_int(task, "id"),
	       (long long)gp_client_int(task, "compute_pct"),
	       (long long)gp_client_int(task, "priority"));
}

static int task_set(int argc, char **argv)
{
	static const struct option own[] = {
		{"compute", required_argument, NULL, 'c'},
		{"priority", required_argument, NULL, 'p'},
		{"reason", required_argument, NULL, 'r'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "task set",
		.usage = set_usage,
		.options = own,
		.option = set_option,
	};
	struct gp_client_flags f = {0};
	struct task_options o = {0};
	long long id;
	int first, status, r;

	options_init(&o, cmd.name);
	r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);
	status = r ? (r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE)
		   : one_id(cmd.name, argc, argv, first, &id);
	if (!r && status == GP_EXIT_OK && !json_object_get(o.body, "compute_pct") &&
	    !json_object_get(o.body, "priority")) {
		fprintf(stderr,
			"gpupool task set: give --compute or --priority (or both)\n");
		status = GP_EXIT_USAGE;
	}
	if (!r && status == GP_EXIT_OK)
		status = task_request(&f, cmd.name, "PATCH", id, "", o.body, set_print);
	json_decref(o.body);
	return status;
}

/* ---- task cancel ------------------------------------------------------ */

static void cancel_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool task cancel ID\n"
		"\n"
		"Cancels a task. A queued one is cancelled at once. A running one is\n"
		"stopped by the server's agent (SIGTERM to its processes, SIGKILL after\n"
		"the server's --grace-ms): it stays running, \"cancelling\", until it\n"
		"has stopped, then it is cancelled with its exit code (`gpupool task\n"
		"show ID`). A server without --with-agent cannot stop a running task.\n");
}

static void cancel_print(json_t *task)
{
	const char *state = gp_client_str(task, "state");

	if (!strcmp(state, "running"))
		printf("task %lld: running; %s\n", (long long)gp_client_int(task, "id"),
		       gp_client_str(task, "reason"));
	else
		printf("task %lld: %s\n", (long long)gp_client_int(task, "id"), state);
}

static int task_cancel(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "task cancel",
		.usage = cancel_usage,
		.option = no_option,
	};

	return one_task(&cmd, "POST", "/cancel", cancel_print, argc, argv);
}

int gp_cmd_task(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"submit", gp_cmd_submit, "queue a task (as gpupool submit)"},
		{"ls", task_ls, "list tasks"},
		{"show", task_show, "show one task"},
		{"set", task_set, "change a task's compute share or priority"},
		{"cancel", task_cancel, "cancel a task (a running one: stop it)"},
	};

	return gp_client_dispatch("task", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}
