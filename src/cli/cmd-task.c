/* cmd-task.c — `gpupool submit` (aliases `run` and `task submit`) and
 * `gpupool task ls|show|set|cancel`: a tenant's tasks, through the server's API
 * (cli/client.h, docs/api.md). Each command builds one request from its
 * flags, sends it, and prints the answer as a table, or with -o json the
 * server's JSON as it came; `task ls` reads the list a page at a time
 * (GET /v1/tasks?after=) and prints it whole, or redraws it (--watch),
 * and `task cancel` sends one request per task it is given. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/task-end.h"
#include "agent/taskenv.h"
#include "base/parse.h"
#include "core/resources.h"

#define DEVICES_MAX GP_NODE_DEVICES_MAX /* on one node, as the server takes */
#define PATH_LEN     256
#define WHY_MAX	    400
#define PAGE	     500     /* tasks asked for per request: the server's default page */
#define LIMIT_MAX    1000000 /* task ls --limit */
#define WATCH_MAX    3600    /* task ls --watch, seconds */
#define IDS_TEXT     512     /* task cancel: the ids that failed, as text */
#define NAME_CHARS   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define CLEAR_SCREEN "\033[H\033[2J"

static const char *const isolations[] = {"hard", "shared", NULL};
static const char *const memory_policies[] = {"alert", "restart", NULL};
static const char *const kinds[] = {"batch", "training", "inference", "interactive",
				    NULL};
static const char *const states[] = {"pending",	  "running",   "succeeded", "failed",
				     "cancelled", "preempted", "lost",	    NULL};

/* What every task subcommand collects: its name, the request body, and
 * the flags given. */
struct task_options {
	char cmd[32]; /* "submit", "task set", ... */
	json_t *body;
	const char *wrap; /* submit --wrap: the command line; NULL: none */
	bool quiet;	  /* submit -q: only the id */
	bool wait;	  /* submit --wait: until the task ends */
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
		"       gpupool submit [OPTIONS] --wrap \"COMMAND LINE\"\n"
		"       (or: gpupool run ..., gpupool task submit ...)\n"
		"\n"
		"Queues COMMAND as a task of your tenant and prints its id once the "
		"server\n"
		"has stored it. After --, each argument is one word of the command, as\n"
		"it is; a command line in one argument (-- \"sh run.sh 3\") is refused:\n"
		"give its words apart, or give it to the shell with --wrap.\n"
		"\n"
		"  --wrap \"LINE\"      run LINE with /bin/sh -c, as it is (pipes, &&,\n"
		"                     redirections, variables), instead of -- COMMAND\n"
		"  --name NAME        the task's name (default: the program's name)\n"
		"  --template NAME    the slice of a template (`gpupool template ls`)\n"
		"  --mem SIZE|PCT%%    memory per device: 4G, 4GB, 4GiB, 512M, or MiB as a\n"
		"                     number (4096), as Slurm (G and GB are GiB); or a\n"
		"                     share of the card the task gets, 1%%..100%% (50%%: 8\n"
		"                     GiB of a 16 GiB T4, 40 GiB of an 80 GiB A100); with\n"
		"                     --compute; over the template's\n"
		"  --compute PCT      share of each device, 1..100\n"
		"  --devices N        how many devices, 1..%d (default 1)\n"
		"  --whole            whole devices, all on one node (refused with\n"
		"                     --mem, --compute or --template)\n"
		"  --exclusive        share the devices with nobody\n"
		"  --mixed-models     with --devices N: the devices may be of several\n"
		"                     models (by default all are of one, as a job's\n"
		"                     workers run in lock step)\n"
		"  --isolation I      hard (the share is a cap) or shared (may borrow "
		"idle time)\n"
		"  --priority N       0..9, higher first (default 5)\n"
		"  --kind K           batch, training, inference or interactive (default "
		"batch)\n"
		"  --model M          only devices that answer to M: part of a model's name\n"
		"                     (A100), a vendor (nvidia, ascend, amd, hygon, cambricon,\n"
		"                     intel), or several of these joined by | or ,\n"
		"  --runtime R        what the program is built for: cuda, acl (Ascend),\n"
		"                     hip (AMD, Hygon), cnrt (Cambricon) or ze (Intel); it\n"
		"                     runs only on cards of R (default: what --model's cards\n"
		"                     run, else cuda where the pool has NVIDIA cards)\n"
		"  --await-cards      (admin) queue it though no card of the pool answers\n"
		"                     to --model: for cards to come (else refused)\n"
		"  --workdir DIR      where it runs (default: this directory)\n"
		"  --on-memory-growth alert|restart\n"
		"                     a task whose memory rises at every sampling: a\n"
		"                     warning (default), or also a restart (queued again)\n"
		"                     once it holds 80 %% of its memory, before its limit\n"
		"  --env NAME=VALUE   a variable of the task's environment\n"
		"                     (repeatable, at most %d): it holds only these\n"
		"                     and what gpupool sets (its devices, its id,\n"
		"                     PATH, HOME, ...). gpupool's own names\n"
		"                     (GPUPOOL_*, LD_PRELOAD, *_VISIBLE_DEVICES,\n"
		"                     HOME, USER, ...) are refused; LD_LIBRARY_PATH\n"
		"                     is appended after the server's\n"
		"  --time LIMIT       how long it may run, from its start, as Slurm's\n"
		"                     --time: MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS,\n"
		"                     DAYS-HOURS[:MINUTES[:SECONDS]]; then it is stopped\n"
		"                     as a cancel stops it, and fails (\"time limit 0:10:00\n"
		"                     reached\"); 0 or unlimited: none (over the template's)\n"
		"  --after ID[:ok|:any][,ID...]\n"
		"                     wait in the queue until these tasks end: :ok (the\n"
		"                     default, Slurm's afterok) until each succeeded (one\n"
		"                     that did not cancels this one: \"dependency 3 failed\n"
		"                     (exit 3)\"), :any until it ended however it ended\n"
		"  --array N|A-B      N tasks, indexes 0..N-1 (Slurm's --array=N would be\n"
		"                     the one index N), or indexes A..B; at most %d. Each\n"
		"                     has GPUPOOL_ARRAY_INDEX and GPUPOOL_ARRAY_ID (the\n"
		"                     first task's id) in its environment\n"
		"  --wait             then wait until the task ends, and exit with its\n"
		"                     status: its exit code (128+N: killed by signal N),\n"
		"                     123 when its time limit ended it, 124 when it was\n"
		"                     cancelled, 125 when it could not start (or was\n"
		"                     lost); a line on stderr says how it ended (not with\n"
		"                     -q). With --array: until all end, then the first\n"
		"                     nonzero status in index order. Ctrl-C stops the\n"
		"                     wait, not the task; exit 1 when the server is gone\n"
		"                     for 10 s\n"
		"  -q, --quiet        print only the task id\n"
		"  -o json|table      the server's JSON, or text (default)\n"
		"  --socket PATH      the server (default: $GPUPOOL_SOCKET, else the "
		"server's)\n"
		"  --token T, --token-file F   who you are (default: $GPUPOOL_TOKEN)\n",
		DEVICES_MAX, GP_TASK_ENV_MAX, GP_ARRAY_MAX);
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

/* --mem SIZE, or PCT% of the card the task gets (1% to 100%). */
static int set_mem(struct task_options *o, const char *value)
{
	size_t n = strlen(value);
	unsigned pct;
	uint64_t mib;

	if (n && value[n - 1] == '%') {
		if (gp_parse_uint(value, 1, 100, "%", &pct)) {
			json_object_set_new(o->body, "mem_pct", json_integer(pct));
			return 0;
		}
		fprintf(stderr,
			"gpupool %s: --mem \"%s\": a share of the card's memory is a whole "
			"percent from 1%% to 100%%\n",
			o->cmd, value);
		return -EINVAL;
	}
	if (gp_client_mib(o->cmd, "mem", value, false, &mib) < 0)
		return -EINVAL;
	json_object_set_new(o->body, "mem_mib", json_integer((json_int_t)mib));
	return 0;
}

/* --time LIMIT, in seconds. */
static int set_time(struct task_options *o, const char *value)
{
	uint64_t s;

	if (gp_client_time_limit(o->cmd, "time", value, &s) < 0)
		return -EINVAL;
	json_object_set_new(o->body, "time_limit_s", json_integer((json_int_t)s));
	return 0;
}

/* --after LIST and --array N|A-B: checked here by the server's parsers
 * (base/parse.h), sent as written. */
static int set_after(struct task_options *o, const char *value)
{
	struct gp_after dep[GP_AFTER_MAX];
	int n;

	if (gp_parse_after(value, dep, &n) == 0) {
		json_object_set_new(o->body, "after", json_string(value));
		return 0;
	}
	fprintf(stderr,
		"gpupool %s: --after \"%s\" must be ID[:ok|:any][,ID...], as in 3 or 3:any,5 (at "
		"most %d tasks, each once)\n",
		o->cmd, value, GP_AFTER_MAX);
	return -EINVAL;
}

static int set_array(struct task_options *o, const char *value)
{
	unsigned first, last;

	if (gp_parse_array(value, &first, &last) == 0) {
		json_object_set_new(o->body, "array", json_string(value));
		return 0;
	}
	fprintf(stderr,
		"gpupool %s: --array \"%s\" must be N (N tasks, indexes 0 to N-1) or A-B (indexes "
		"A to B), at most %d tasks, indexes up to %d\n",
		o->cmd, value, GP_ARRAY_MAX, GP_ARRAY_INDEX_MAX);
	return -EINVAL;
}

static int submit_option(void *ctx, int c, const char *value)
{
	struct task_options *o = ctx;

	switch (c) {
	case 'n': json_object_set_new(o->body, "name", json_string(value)); return 0;
	case 't': json_object_set_new(o->body, "template", json_string(value)); return 0;
	case 'M': json_object_set_new(o->body, "model", json_string(value)); return 0;
	case 'R': json_object_set_new(o->body, "runtime", json_string(value)); return 0;
	case 'A': json_object_set_new(o->body, "await_cards", json_true()); return 0;
	case 'W': return set_workdir(o, value);
	case 'e': return set_env(o, value);
	case 'w': json_object_set_new(o->body, "whole", json_true()); return 0;
	case 'x': json_object_set_new(o->body, "exclusive", json_true()); return 0;
	case 'X': json_object_set_new(o->body, "mixed_models", json_true()); return 0;
	case 'q': o->quiet = true; return 0;
	case 'B': o->wait = true; return 0;
	case 'r': o->wrap = value; return 0;
	case 'm': return set_mem(o, value);
	case 'T': return set_time(o, value);
	case 'a': return set_after(o, value);
	case 'y': return set_array(o, value);
	case 'c': return set_uint(o, "compute", "compute_pct", value, 1, 100);
	case 'd': return set_uint(o, "devices", "devices", value, 1, DEVICES_MAX);
	case 'p': return set_uint(o, "priority", "priority", value, 0, 9);
	case 'i': return set_choice(o, "isolation", value, isolations);
	case 'k': return set_choice(o, "kind", value, kinds);
	case 'G':
		if (gp_client_choice(o->cmd, "on-memory-growth", value, memory_policies) < 0)
			return -EINVAL;
		json_object_set_new(o->body, "on_memory_growth", json_string(value));
		return 0;
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
	{"mixed-models", no_argument, NULL, 'X'},
	{"isolation", required_argument, NULL, 'i'},
	{"priority", required_argument, NULL, 'p'},
	{"kind", required_argument, NULL, 'k'},
	{"model", required_argument, NULL, 'M'},
	{"runtime", required_argument, NULL, 'R'},
	{"await-cards", no_argument, NULL, 'A'},
	{"workdir", required_argument, NULL, 'W'},
	{"env", required_argument, NULL, 'e'},
	{"quiet", no_argument, NULL, 'q'},
	{"wait", no_argument, NULL, 'B'}, /* submit --wait (cli/task-end.h) */
	{"wrap", required_argument, NULL, 'r'},
	{"on-memory-growth", required_argument, NULL, 'G'},
	/* The job options a Slurm user recognises (issue 27). */
	{"time", required_argument, NULL, 'T'},
	{"after", required_argument, NULL, 'a'},
	{"array", required_argument, NULL, 'y'},
	{0},
};

/* The slice is named once: a template, --mem with --compute, or --whole
 * alone (a slice given with it is refused, not dropped). */
static int submit_check(const struct task_options *o)
{
	json_t *b = o->body;
	bool tpl = json_object_get(b, "template"), whole = json_object_get(b, "whole");
	bool mem = json_object_get(b, "mem_mib") || json_object_get(b, "mem_pct"),
	     compute = json_object_get(b, "compute_pct");

	if (whole && (mem || compute || tpl)) {
		fprintf(stderr,
			"gpupool %s: --whole and --%s contradict: --whole gives the task "
			"all of each device's memory and compute; leave one of them out\n",
			o->cmd,
			mem	  ? "mem"
			: compute ? "compute"
				  : "template");
		return GP_EXIT_USAGE;
	}
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

/* A command line given as one argument ("sh run.sh 3") would run a
 * program of that name: it is refused, with the two forms that work. A
 * path with a space in it that names a program is one. */
static int program_check(const char *cmd, const char *program)
{
	if (!program[strcspn(program, " \t\n")] ||
	    (strchr(program, '/') && access(program, X_OK) == 0))
		return GP_EXIT_OK;
	fprintf(stderr,
		"gpupool %s: \"%s\" is one argument with spaces, so the task would run a "
		"program of that name; give its words apart (-- %s) or the whole line to "
		"/bin/sh (--wrap \"%s\")\n",
		cmd, program, program, program);
	return GP_EXIT_USAGE;
}

/* The command: the words after --, or the line of --wrap (a string, which
 * the server runs with /bin/sh -c as it is). An exit status. */
static int submit_command(struct task_options *o, int argc, char **argv, int first)
{
	json_t *command;
	int status;

	if (o->wrap && first < argc) {
		fprintf(stderr,
			"gpupool %s: give the command once: --wrap \"LINE\" or -- COMMAND "
			"ARGS..., not both\n",
			o->cmd);
		return GP_EXIT_USAGE;
	}
	if (o->wrap && !o->wrap[strspn(o->wrap, " \t\n")]) {
		fprintf(stderr,
			"gpupool %s: --wrap needs a command line, as in: --wrap "
			"\"python train.py > out.txt\"\n",
			o->cmd);
		return GP_EXIT_USAGE;
	}
	if (o->wrap) {
		json_object_set_new(o->body, "command", json_string(o->wrap));
		return GP_EXIT_OK;
	}
	if (first >= argc) {
		fprintf(stderr,
			"gpupool %s: no command; put it last, as in: gpupool %s --mem 4G "
			"--compute 30 -- python train.py (or --wrap \"LINE\")\n",
			o->cmd, o->cmd);
		return GP_EXIT_USAGE;
	}
	status = program_check(o->cmd, argv[first]);
	if (status != GP_EXIT_OK)
		return status;
	command = json_array();
	for (int i = first; i < argc; i++)
		json_array_append_new(command, json_string(argv[i]));
	json_object_set_new(o->body, "command", command);
	return GP_EXIT_OK;
}

static int submit_args(struct task_options *o, int argc, char **argv, int first)
{
	int status = submit_command(o, argc, argv, first);

	if (status != GP_EXIT_OK)
		return status;
	if (!json_object_get(o->body, "workdir")) {     /* where it was submitted */
		char here[PATH_MAX];

		if (getcwd(here, sizeof(here)))
			json_object_set_new(o->body, "workdir", json_string(here));
	}
	return submit_check(o);
}

/* The ids submitted: an array's members (GET's "array_tasks"), else the
 * one task's. Borrowed from task. */
static json_t *submitted_ids(json_t *task)
{
	json_t *ids = json_object_get(task, "array_tasks");

	return json_is_array(ids) ? ids : NULL;
}

/* An array: one line, "tasks 12 13 14 submitted (array 12, indexes
 * 0-2): pending (...)"; -q: the ids, one a line. */
static void array_print(const struct task_options *o, json_t *task, json_t *ids)
{
	json_t *id;
	size_t i, n = json_array_size(ids);

	if (!o->quiet)
		printf("tasks");
	json_array_foreach(ids, i, id)
		printf(o->quiet ? "%lld\n" : " %lld", (long long)json_integer_value(id));
	if (!o->quiet)
		printf(" submitted (array %lld, indexes %lld-%lld): %s (%s)\n",
		       (long long)gp_client_int(task, "id"),
		       (long long)gp_client_int(task, "array_index"),
		       (long long)gp_client_int(task, "array_index") + (long long)n - 1,
		       gp_client_text(task, "state"), gp_client_text(task, "reason"));
}

static void submit_print(const struct task_options *o, json_t *task)
{
	if (submitted_ids(task))
		array_print(o, task, submitted_ids(task));
	else if (o->quiet)
		printf("%lld\n", (long long)gp_client_int(task, "id"));
	else
		printf("task %lld submitted: %s (%s)\n",
		       (long long)gp_client_int(task, "id"), gp_client_text(task, "state"),
		       gp_client_text(task, "reason"));
}

/* --wait: until the task ends; its exit status (cli/task-end.h), and in
 * *ret_gone whether the wait stopped first (the server gone: status 1). */
static int submit_wait_one(const struct gp_client_flags *f, const struct task_options *o,
			   long long id, bool *ret_gone)
{
	json_t *task = NULL;
	int status = gp_task_end_wait(f, o->cmd, id, &task);

	if (task && !o->quiet)
		gp_task_end_say(o->cmd, task, status);
	*ret_gone = !task;
	json_decref(task);
	return status;
}

/* --wait: until the task ends, or every task of an array, in index
 * order; the first nonzero status of them (a server gone: 1 at once). */
static int submit_wait(const struct gp_client_flags *f, const struct task_options *o,
		       json_t *reply)
{
	json_t *ids = submitted_ids(reply), *id;
	int status, first = GP_EXIT_OK;
	bool gone = false;
	size_t i;

	if (!ids)
		return submit_wait_one(f, o, gp_client_int(reply, "id"), &gone);
	json_array_foreach(ids, i, id) {
		status = submit_wait_one(f, o, json_integer_value(id), &gone);
		if (gone)
			return status;
		if (status != GP_EXIT_OK && first == GP_EXIT_OK)
			first = status;
	}
	return first;
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
		fflush(stdout);
	}
	if (!r && status == GP_EXIT_OK && o.wait)
		status = submit_wait(&f, &o, reply);
	json_decref(reply);
	json_decref(o.body);
	return status;
}

/* ---- task ls ---------------------------------------------------------- */

/* What `task ls` asks for, and how often. */
struct ls_options {
	char states[128];   /* --state S[,S...], checked; "" for all */
	const char *tenant; /* --tenant NAME; NULL: the caller's view */
	unsigned limit;	    /* --limit N; 0: every task */
	long long after;    /* --after ID; 0: from the first */
	unsigned watch;	    /* --watch SECONDS; 0: once */
};

static void ls_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool task ls [--state STATE[,STATE...]] [--tenant NAME]\n"
		"                       [--limit N] [--after ID] [--watch SECONDS]\n"
		"                       [-o table|yaml|json]\n"
		"\n"
		"Lists your tenant's tasks (the admin sees every tenant's), oldest\n"
		"first: id, tenant, name, state, priority, slice, devices, where it\n"
		"runs (PLACEMENT: the devices' indexes, as `gpupool device ls` numbers\n"
		"them), its exit code once it ran and ended, when it was created,\n"
		"started and ended (HH:MM:SS today, else MM-DD HH:MM, local time),\n"
		"and why it waits or ended. The server sends %d tasks at a time; all\n"
		"are read.\n"
		"\n"
		"  --state LIST      only tasks in these states (comma-separated):\n"
		"                    pending, running, succeeded, failed, cancelled,\n"
		"                    preempted, lost\n"
		"  --tenant NAME     only this tenant's (the admin; a removed one's too)\n"
		"  --limit N         at most N tasks, 1..%d (-o json: next_after says\n"
		"                    where the rest start)\n"
		"  --after ID        only tasks after task ID (to go on from next_after)\n"
		"  --watch SECONDS   redraw the table every SECONDS (1..%d) until\n"
		"                    Ctrl-C, like watch(1)\n"
		"  -o yaml|json      the tasks as YAML, or the server's JSON\n",
		PAGE, LIMIT_MAX, WATCH_MAX);
}

/* --state: each of a comma list is a state. */
static int ls_states(struct ls_options *o, const char *value)
{
	char one[32];

	for (const char *p = value;; p += strcspn(p, ",") + 1) {
		snprintf(one, sizeof(one), "%.*s", (int)strcspn(p, ","), p);
		if (gp_client_choice("task ls", "state", one, states) < 0)
			return -EINVAL;
		if (!p[strcspn(p, ",")])
			break;
	}
	if (strlen(value) >= sizeof(o->states)) /* never: seven names fit */
		return -EINVAL;
	snprintf(o->states, sizeof(o->states), "%s", value);
	return 0;
}

static int ls_option(void *ctx, int c, const char *value)
{
	struct ls_options *o = ctx;
	size_t n = strlen(value);

	switch (c) {
	case 's': return ls_states(o, value);
	case 'l':
		return gp_client_uint("task ls", "limit", value, 1, LIMIT_MAX, &o->limit);
	case 'w':
		return gp_client_uint("task ls", "watch", value, 1, WATCH_MAX, &o->watch);
	case 'a':
		return gp_client_id("task ls", value, &o->after) == GP_EXIT_OK ? 0
									       : -EINVAL;
	case 'T':
		if (n && n < 64 && strspn(value, NAME_CHARS) == n) {
			o->tenant = value;
			return 0;
		}
		fprintf(stderr,
			"gpupool task ls: --tenant \"%s\" must be a tenant's name "
			"(letters, digits, '.', '_' or '-'; gpupool tenant ls lists "
			"them)\n",
			value);
		return -EINVAL;
	}
	return -EINVAL;
}

/* The request for the page after `after` of at most `want` tasks. */
static void ls_path(const struct ls_options *o, long long after, unsigned want,
		    char *path, size_t size)
{
	int n = snprintf(path, size, "/v1/tasks?limit=%u&after=%lld", want, after);

	if (o->states[0])
		n += snprintf(path + n, size - (size_t)n, "&state=%s", o->states);
	if (o->tenant)
		snprintf(path + n, size - (size_t)n, "&tenant=%s", o->tenant);
}

/* The tasks asked for, every page of them, as one answer of the server's
 * shape in *ret: {"tasks": [...], "next_after": ID or null}. An exit
 * status. */
static int ls_fetch(const struct gp_client_flags *f, const struct ls_options *o,
		    json_t **ret)
{
	json_t *tasks = json_array(), *next = json_null(), *reply;
	long long after = o->after;
	char path[PATH_LEN];
	int status;

	for (;;) {
		size_t have = json_array_size(tasks);
		unsigned want = o->limit && o->limit - have < PAGE
					? o->limit - (unsigned)have
					: PAGE;

		ls_path(o, after, want, path, sizeof(path));
		reply = NULL;
		status = gp_client_request(f, "task ls", "GET", path, NULL, &reply);
		if (status != GP_EXIT_OK)
			break;
		json_array_extend(tasks, json_object_get(reply, "tasks"));
		json_decref(next);
		next = json_incref(json_object_get(reply, "next_after"));
		json_decref(reply);
		if (!json_is_integer(next) ||
		    (o->limit && json_array_size(tasks) >= o->limit))
			break;
		after = json_integer_value(next);
	}
	if (status == GP_EXIT_OK)
		*ret = json_pack("{s:o, s:o}", "tasks", tasks, "next_after",
				 next ? next : json_null());
	else {
		json_decref(tasks);
		json_decref(next);
	}
	return status;
}

/* A time of the server's ("2026-11-29T13:32:50Z") for a table, in local
 * time: "13:32:50" today, else "11-29 13:32"; "-" for none. */
static const char *short_time(json_t *v, char *buf, size_t size)
{
	const char *text = json_string_value(v);
	struct tm tm = {0}, today;
	time_t t, now = time(NULL);
	char *end;

	snprintf(buf, size, "-");
	if (!text || !(end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm)))
		return buf;
	t = timegm(&tm);
	localtime_r(&now, &today);
	localtime_r(&t, &tm);
	strftime(buf, size,
		 tm.tm_year == today.tm_year && tm.tm_yday == today.tm_yday
			 ? "%H:%M:%S"
			 : "%m-%d %H:%M",
		 &tm);
	return buf;
}

/* Where a task runs: each device's index (GET /v1/devices), or the
 * start of its UUID when it is not one of them; "-" for nowhere. */
static const char *placement_text(json_t *t, json_t *devices, char *buf, size_t size)
{
	const char *p = gp_client_str(t, "placement");
	size_t used = 0;

	snprintf(buf, size, "-");
	for (; *p && used < size; p += strcspn(p, ",") + !!p[strcspn(p, ",")]) {
		int n = (int)strcspn(p, ","), index = -1;
		json_t *d;
		size_t i;

		json_array_foreach(devices, i, d)
		{
			const char *uuid = gp_client_str(d, "uuid");

			if ((int)strlen(uuid) == n && !strncmp(uuid, p, (size_t)n))
				index = (int)gp_client_int(d, "index");
		}
		if (index >= 0)
			used += (size_t)snprintf(buf + used, size - used, "%s%d",
						 used ? "," : "", index);
		else
			used += (size_t)snprintf(buf + used, size - used, "%s%.*s",
						 used ? "," : "", n < 12 ? n : 12, p);
	}
	return buf;
}

/* The exit code, once the task ran and ended (not lost: nobody saw it end). */
static const char *exit_text(json_t *t, char *buf, size_t size)
{
	bool ran = json_is_string(json_object_get(t, "started")) &&
		   json_is_string(json_object_get(t, "ended")) &&
		   strcmp(gp_client_str(t, "state"), "lost");

	if (ran)
		snprintf(buf, size, "%lld", (long long)gp_client_int(t, "exit_code"));
	else
		snprintf(buf, size, "-");
	return buf;
}

/* A task's name, an array's member with its index: "job[3]". */
static const char *name_text(json_t *t, char *buf, size_t size)
{
	if (json_is_integer(json_object_get(t, "array_index")))
		snprintf(buf, size, "%s[%lld]", gp_client_text(t, "name"),
			 (long long)gp_client_int(t, "array_index"));
	else
		snprintf(buf, size, "%s", gp_client_text(t, "name"));
	return buf;
}

/* Its memory per device: "whole", "50%" of its card, or a size. */
static const char *mem_text(json_t *t, char *buf, size_t size)
{
	if (json_is_true(json_object_get(t, "whole")))
		snprintf(buf, size, "whole");
	else if (gp_client_int(t, "mem_pct"))
		snprintf(buf, size, "%lld%%", (long long)gp_client_int(t, "mem_pct"));
	else
		gp_client_mib_text(gp_client_int(t, "mem_mib"), buf, size);
	return buf;
}

/* Its time limit, "0:10:00"; "-" for none. */
static const char *limit_text(json_t *t, char *buf, size_t size)
{
	json_int_t s = gp_client_int(t, "time_limit_s");

	if (s > 0)
		gp_time_limit_text((uint64_t)s, buf, size);
	else
		snprintf(buf, size, "-");
	return buf;
}

static void ls_row(json_t *t, json_t *devices)
{
	char mem[32], where[96], code[16], created[16], started[16], ended[16], name[96],
		limit[32];

	printf("%-6lld %-10s %-16s %-10s %3lld %6s %6lld%% %3lld %10s  %-12s %4s %-11s %-11s "
	       "%-11s %s\n",
	       (long long)gp_client_int(t, "id"), gp_client_text(t, "tenant"),
	       name_text(t, name, sizeof(name)), gp_client_text(t, "state"),
	       (long long)gp_client_int(t, "priority"), mem_text(t, mem, sizeof(mem)),
	       (long long)gp_client_int(t, "compute_pct"),
	       (long long)gp_client_int(t, "devices"), limit_text(t, limit, sizeof(limit)),
	       placement_text(t, devices, where, sizeof(where)),
	       exit_text(t, code, sizeof(code)),
	       short_time(json_object_get(t, "created"), created, sizeof(created)),
	       short_time(json_object_get(t, "started"), started, sizeof(started)),
	       short_time(json_object_get(t, "ended"), ended, sizeof(ended)),
	       gp_client_text(t, "reason"));
}

/* The devices, to name placements by index; NULL when no task has one
 * or the server does not say (placements then show UUIDs). */
static json_t *ls_devices(const struct gp_client_flags *f, json_t *tasks)
{
	json_t *t, *reply = NULL, *devices;
	size_t i;
	bool placed = false;

	json_array_foreach(tasks, i, t) placed = placed || *gp_client_str(t, "placement");
	if (!placed || gp_client_call(f, "task ls", "GET", "/v1/devices", NULL, true,
				      NULL, &reply) != GP_EXIT_OK)
		return NULL;
	devices = json_incref(json_object_get(reply, "devices"));
	json_decref(reply);
	return devices;
}

static void ls_print(const struct gp_client_flags *f, json_t *reply)
{
	json_t *tasks = json_object_get(reply, "tasks"), *devices = ls_devices(f, tasks),
	       *t;
	size_t i;

	printf("%-6s %-10s %-16s %-10s %3s %6s %7s %3s %10s  %-12s %4s %-11s %-11s %-11s %s\n",
	       "ID", "TENANT", "NAME", "STATE", "PRI", "MEM", "COMPUTE", "DEV", "LIMIT",
	       "PLACEMENT", "EXIT", "CREATED", "STARTED", "ENDED", "REASON");
	json_array_foreach(tasks, i, t) ls_row(t, devices);
	json_decref(devices);
}

static int ls_once(const struct gp_client_flags *f, const struct ls_options *o)
{
	json_t *reply = NULL;
	int status = ls_fetch(f, o, &reply);

	if (status == GP_EXIT_OK && f->json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK && f->yaml)
		status = gp_client_print_yaml("task ls", reply);
	else if (status == GP_EXIT_OK)
		ls_print(f, reply);
	json_decref(reply);
	return status;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* --watch: the table again every o->watch seconds, a frame at a time (the
 * screen cleared first on a terminal), until SIGINT or SIGTERM; a frame
 * whose request failed says why and the next one tries again. Exit 0. */
static int ls_watch(const struct gp_client_flags *f, const struct ls_options *o)
{
	struct sigaction sa = {.sa_handler = on_interrupt};
	bool tty = isatty(STDOUT_FILENO);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!interrupted) {
		struct timespec left = {.tv_sec = o->watch};
		char now[32];
		time_t t = time(NULL);

		strftime(now, sizeof(now), "%Y-%m-%d %H:%M:%S", localtime(&t));
		printf("%sEvery %us: gpupool task ls%*s\n\n", tty ? CLEAR_SCREEN : "",
		       o->watch, 50, now);
		fflush(stdout);
		ls_once(f, o);
		fflush(stdout);
		while (!interrupted && nanosleep(&left, &left) < 0 && errno == EINTR)
			;
	}
	return GP_EXIT_OK;
}

static int task_ls(int argc, char **argv)
{
	static const struct option own[] = {
		{"state", required_argument, NULL, 's'},
		{"tenant", required_argument, NULL, 'T'},
		{"limit", required_argument, NULL, 'l'},
		{"after", required_argument, NULL, 'a'},
		{"watch", required_argument, NULL, 'w'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "task ls",
		.usage = ls_usage,
		.options = own,
		.option = ls_option,
		.yaml_ok = true,
	};
	struct gp_client_flags f = {0};
	struct ls_options o = {0};
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.watch && (f.json || f.yaml)) {
		fprintf(stderr,
			"gpupool task ls: --watch redraws a table; leave out -o %s "
			"(or --watch)\n",
			f.json ? "json" : "yaml");
		return GP_EXIT_USAGE;
	}
	return o.watch ? ls_watch(&f, &o) : ls_once(&f, &o);
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
		printf("%s\n", gp_client_safe(json_string_value(v)));
	else if (json_is_null(v))
		printf("-\n");
	else
		gp_client_print_json(v);
}

/* The device (of GET /v1/devices) a placement starts on; NULL: none. */
static json_t *first_device(json_t *t, json_t *devices)
{
	const char *p = gp_client_str(t, "placement");
	size_t n = strcspn(p, ",@");
	json_t *d;
	size_t i;

	json_array_foreach(devices, i, d) {
		const char *uuid = gp_client_str(d, "uuid");

		if (n && strlen(uuid) == n && !strncmp(uuid, p, n))
			return d;
	}
	return NULL;
}

/* A percent of memory: "50% (40 GiB on NVIDIA A100-SXM4-80GB #0)" once
 * placed, "50% of the card it gets" before. */
static void show_mem_pct(json_t *t, json_t *devices)
{
	json_t *d = first_device(t, devices);
	char size[32];

	gp_size_text((uint64_t)gp_client_int(t, "mem_mib") << 20, size, sizeof(size));
	printf("%-12s %lld%% ", "mem_pct", (long long)gp_client_int(t, "mem_pct"));
	if (d)
		printf("(%s on %s #%lld)\n", size, gp_client_text(d, "name"),
		       (long long)gp_client_int(d, "index"));
	else if (*gp_client_str(t, "placement"))
		printf("(%s on its card)\n", size);
	else
		printf("of the card it gets (at most %s, on the largest it takes)\n", size);
}

/* One field; those a person reads better written out (a percent of
 * memory, a time limit) so. */
static void show_one(const char *key, json_t *v, json_t *t, json_t *devices)
{
	char limit[32];

	if (!strcmp(key, "mem_pct") && json_integer_value(v) > 0)
		show_mem_pct(t, devices);
	else if (!strcmp(key, "time_limit_s"))
		printf("%-12s %s\n", "time_limit", limit_text(t, limit, sizeof(limit)));
	else
		show_field(key, v);
}

static void show_print(json_t *task, json_t *devices)
{
	for (void *it = json_object_iter(task); it; it = json_object_iter_next(task, it))
		show_one(json_object_iter_key(it), json_object_iter_value(it), task, devices);
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

/* The devices, to name a percent task's card; NULL when it has none, or
 * the server does not say. */
static json_t *show_devices(const struct gp_client_flags *f, json_t *task)
{
	json_t *reply = NULL, *devices;

	if (!gp_client_int(task, "mem_pct") || !*gp_client_str(task, "placement") ||
	    gp_client_call(f, "task show", "GET", "/v1/devices", NULL, true, NULL, &reply) !=
		    GP_EXIT_OK)
		return NULL;
	devices = json_incref(json_object_get(reply, "devices"));
	json_decref(reply);
	return devices;
}

static int task_show(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "task show",
		.usage = show_usage,
		.option = no_option,
	};
	struct gp_client_flags f = {0};
	char path[PATH_LEN];
	json_t *reply = NULL, *devices;
	long long id;
	int first, status, r = gp_client_parse(&cmd, NULL, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	status = one_id(cmd.name, argc, argv, first, &id);
	snprintf(path, sizeof(path), "/v1/tasks/%lld", id);
	if (status == GP_EXIT_OK)
		status = gp_client_request(&f, cmd.name, "GET", path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json) {
		gp_client_print_json(reply);
	} else if (status == GP_EXIT_OK) {
		devices = show_devices(&f, reply);
		show_print(reply, devices);
		json_decref(devices);
	}
	json_decref(reply);
	return status;
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
		"usage: gpupool task cancel ID... [-o json|table]\n"
		"\n"
		"Cancels tasks, and says of each what happened (-o json: the server's\n"
		"answer for each, one line per task). A queued one is cancelled at\n"
		"once. A running one is stopped by the server's agent (SIGTERM to its\n"
		"processes, SIGKILL after the server's --grace-ms): it stays running,\n"
		"\"cancelling\", until it has stopped, then it is cancelled with its\n"
		"exit code (`gpupool task show ID`). A server without --with-agent\n"
		"cannot stop a running task. The exit status is 1 when any was not\n"
		"cancelled (the last line says which), 2 when an ID is not a number\n"
		"(then none is sent).\n");
}

static void cancel_print(json_t *task)
{
	const char *state = gp_client_str(task, "state");

	if (!strcmp(state, "running"))
		printf("task %lld: running; %s\n", (long long)gp_client_int(task, "id"),
		       gp_client_text(task, "reason"));
	else
		printf("task %lld: %s\n", (long long)gp_client_int(task, "id"), state);
}

/* Cancels task id; false when it was not. *ret_stop when nothing more can
 * be asked (no server, or a token it does not know). */
static bool cancel_one(const struct gp_client_flags *f, long long id, bool *ret_stop)
{
	char path[PATH_LEN];
	json_t *reply = NULL;
	long http = 0;
	int status;

	snprintf(path, sizeof(path), "/v1/tasks/%lld/cancel", id);
	status = gp_client_call(f, "task cancel", "POST", path, NULL, false, &http,
				&reply);
	*ret_stop = status != GP_EXIT_OK && (http == 0 || http == 401);
	if (status == GP_EXIT_OK && f->json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		cancel_print(reply);
	fflush(stdout);
	json_decref(reply);
	return status == GP_EXIT_OK;
}

/* Appends id to the list of those not cancelled (cut with "..." when long). */
static void failed_add(char *list, size_t size, long long id)
{
	size_t len = strlen(list);

	if (len + 32 < size)
		snprintf(list + len, size - len, "%s%lld", len ? ", " : "", id);
	else if (!strstr(list, "..."))
		snprintf(list + len, size - len, ", ...");
}

/* Cancels each of ids[0..n), in order; an exit status. */
static int cancel_all(const struct gp_client_flags *f, const long long *ids, int n)
{
	char failed_ids[IDS_TEXT] = "";
	int failed = 0;
	bool stop = false;

	for (int i = 0; i < n; i++) {
		if (!stop && cancel_one(f, ids[i], &stop))
			continue;
		failed++;
		failed_add(failed_ids, sizeof(failed_ids), ids[i]);
	}
	if (n > 1 && failed)
		fprintf(stderr,
			"gpupool task cancel: %d of %d tasks not cancelled: %s%s\n",
			failed, n, failed_ids,
			stop ? " (the server could not be asked about the rest)" : "");
	return failed ? GP_EXIT_FAIL : GP_EXIT_OK;
}

static int task_cancel(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "task cancel",
		.usage = cancel_usage,
		.option = no_option,
	};
	struct gp_client_flags f = {0};
	long long *ids;
	int first, n, status = GP_EXIT_OK,
		      r = gp_client_parse(&cmd, NULL, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	n = argc - first;
	if (n == 0) {
		fprintf(stderr,
			"gpupool task cancel: needs one or more task ids (gpupool "
			"task cancel --help)\n");
		return GP_EXIT_USAGE;
	}
	ids = calloc((size_t)n, sizeof(*ids));
	if (!ids) {
		fprintf(stderr, "gpupool task cancel: out of memory\n");
		return GP_EXIT_FAIL;
	}
	for (int i = 0; i < n && status == GP_EXIT_OK; i++)
		status = gp_client_id(cmd.name, argv[first + i], &ids[i]);
	if (status == GP_EXIT_OK)
		status = cancel_all(&f, ids, n);
	free(ids);
	return status;
}

int gp_cmd_task(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"submit", gp_cmd_submit, "queue a task (as gpupool submit)"},
		{"ls", task_ls, "list tasks, or watch them (--watch)"},
		{"show", task_show, "show one task"},
		{"set", task_set, "change a task's compute share or priority"},
		{"cancel", task_cancel, "cancel tasks (a running one: stop it)"},
	};

	return gp_client_dispatch("task", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}
