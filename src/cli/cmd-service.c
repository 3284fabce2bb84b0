/* cmd-service.c — `gpupool service create|ls|show|scale|rm` (services: replicas
 * that scale, server/service.h) and `gpupool schedule add|ls|rm`
 * (time-of-day rules, server/schedule.h), over /v1/services and
 * /v1/schedules. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/client.h"
#include "cli/commands.h"

#define PATH_LEN 256
#define STEPS_SHOWN 10 /* of service show; -o json has them all */

static const char *const isolations[] = {"hard", "shared", NULL};

/* ---- service create -------------------------------------------------------- */

static void create_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool service create NAME (--template T | --mem SIZE --compute "
		"PCT)\n"
		"                              [OPTIONS] -- COMMAND [ARGS...]\n"
		"       gpupool service create NAME --deployment DEPLOYMENT --mem SIZE "
		"--compute PCT\n"
		"                              [OPTIONS]    (a server run with --kubernetes)\n"
		"\n"
		"A service: COMMAND kept running as replicas, each a task of the slice\n"
		"given; a replica that ends is replaced. With autoscaling (the "
		"default),\n"
		"when the replicas' mean utilization of their shares stays above --out\n"
		"for --out-window, each replica's share grows (live, by --step at most, "
		"up\n"
		"to --share-max), then a replica is added (up to --max and the tenant's\n"
		"quota); below --in for --in-window, shares shrink back, then replicas "
		"are\n"
		"removed (down to --min). Every step is in the audit log with its "
		"figures\n"
		"(docs/operations.md).\n"
		"\n"
		"On Kubernetes the replicas are the pods of a Deployment of your namespace:\n"
		"a share is changed on each pod, the replicas through the Deployment's\n"
		"scale (docs/kubernetes.md).\n"
		"\n"
		"  --deployment NAME  scale this Deployment of your namespace (no COMMAND)\n"
		"  --template NAME    the replicas' slice; or --mem SIZE and --compute "
		"PCT\n"
		"  --replicas N       to start with (default: --min)\n"
		"  --min N, --max N   bounds of the replicas (default 1 and 8)\n"
		"  --no-autoscale     keep --replicas as it is\n"
		"  --out PCT          scale out above this utilization (default 80)\n"
		"  --in PCT           scale in below it (default 20)\n"
		"  --margin PCT       hysteresis (default 10)\n"
		"  --out-window SECS  how long above before a step out (default 300)\n"
		"  --in-window SECS   how long below before a step in (default 1800)\n"
		"  --cooldown SECS    after a step, none for this long (default 300)\n"
		"  --step PCT         a share grows by at most this (default 30)\n"
		"  --share-max PCT    the most a replica's share grows to (default:\n"
		"                     twice the slice's, at most 100)\n"
		"  --priority N, --isolation hard|shared, --model M, --runtime R,\n"
		"  --workdir DIR\n"
		"                     as for submit\n"
		"  -o json|table      the server's JSON, or text (default)\n");
}

struct create_options {
	json_t *body;
};

static int set_uint(json_t *body, const char *flag, const char *key, const char *value,
		    unsigned lo, unsigned hi)
{
	unsigned v;

	if (gp_client_uint("service create", flag, value, lo, hi, &v) < 0)
		return -EINVAL;
	json_object_set_new(body, key, json_integer(v));
	return 0;
}

static int create_option(void *ctx, int c, const char *value)
{
	json_t *b = ((struct create_options *)ctx)->body;
	uint64_t mib;

	switch (c) {
	case 't': json_object_set_new(b, "template", json_string(value)); return 0;
	case 'M': json_object_set_new(b, "model", json_string(value)); return 0;
	case 'R': json_object_set_new(b, "runtime", json_string(value)); return 0;
	case 'W': json_object_set_new(b, "workdir", json_string(value)); return 0;
	case 'D': json_object_set_new(b, "deployment", json_string(value)); return 0;
	case 'A': json_object_set_new(b, "autoscale", json_false()); return 0;
	case 'm':
		if (gp_client_mib("service create", "mem", value, false, &mib) < 0)
			return -EINVAL;
		json_object_set_new(b, "mem_mib", json_integer((json_int_t)mib));
		return 0;
	case 'i':
		if (gp_client_choice("service create", "isolation", value, isolations) <
		    0)
			return -EINVAL;
		json_object_set_new(b, "isolation", json_string(value));
		return 0;
	case 'c': return set_uint(b, "compute", "compute_pct", value, 1, 100);
	case 'p': return set_uint(b, "priority", "priority", value, 0, 9);
	case 'r': return set_uint(b, "replicas", "replicas", value, 1, 64);
	case 'n': return set_uint(b, "min", "min_replicas", value, 1, 64);
	case 'x': return set_uint(b, "max", "max_replicas", value, 1, 64);
	case 'O': return set_uint(b, "out", "out_pct", value, 1, 200);
	case 'I': return set_uint(b, "in", "in_pct", value, 0, 100);
	case 'g': return set_uint(b, "margin", "margin_pct", value, 0, 100);
	case 'U': return set_uint(b, "out-window", "out_window_s", value, 1, 7 * 86400);
	case 'w': return set_uint(b, "in-window", "in_window_s", value, 1, 7 * 86400);
	case 'C': return set_uint(b, "cooldown", "cooldown_s", value, 0, 7 * 86400);
	case 's': return set_uint(b, "step", "step_pct", value, 1, 100);
	case 'S': return set_uint(b, "share-max", "share_max_pct", value, 1, 100);
	}
	return -EINVAL;
}

static const struct option create_options[] = {
	{"template", required_argument, NULL, 't'},
	{"mem", required_argument, NULL, 'm'},
	{"compute", required_argument, NULL, 'c'},
	{"priority", required_argument, NULL, 'p'},
	{"isolation", required_argument, NULL, 'i'},
	{"model", required_argument, NULL, 'M'},
	{"runtime", required_argument, NULL, 'R'},
	{"workdir", required_argument, NULL, 'W'},
	{"deployment", required_argument, NULL, 'D'},
	{"replicas", required_argument, NULL, 'r'},
	{"min", required_argument, NULL, 'n'},
	{"max", required_argument, NULL, 'x'},
	{"no-autoscale", no_argument, NULL, 'A'},
	{"out", required_argument, NULL, 'O'},
	{"in", required_argument, NULL, 'I'},
	{"margin", required_argument, NULL, 'g'},
	{"out-window", required_argument, NULL, 'U'},
	{"in-window", required_argument, NULL, 'w'},
	{"cooldown", required_argument, NULL, 'C'},
	{"step", required_argument, NULL, 's'},
	{"share-max", required_argument, NULL, 'S'},
	{0},
};

/* NAME, then the command's words after -- (options may come before or
 * after NAME; the command's own after --); with --deployment, NAME alone. */
static int create_args(json_t *body, int argc, char **argv, int first)
{
	json_t *command = json_array();
	char here[PATH_MAX];
	bool dashes = false;

	for (int i = 1; i < argc; i++)
		dashes = dashes || !strcmp(argv[i], "--");
	if (json_object_get(body, "deployment")) {
		json_decref(command);
		if (first + 1 == argc) {
			json_object_set_new(body, "name", json_string(argv[first]));
			return GP_EXIT_OK;
		}
		fprintf(stderr, "gpupool service create: with --deployment give NAME alone (the "
			"Deployment's pods run its own command), as in: gpupool service create "
			"web --deployment web --mem 4G --compute 20\n");
		return GP_EXIT_USAGE;
	}
	if (first + 1 >= argc || !dashes) {
		fprintf(stderr,
			"gpupool service create: give NAME, then -- and the command, "
			"as in: gpupool service create web --template t4-half -- "
			"./serve\n");
		json_decref(command);
		return GP_EXIT_USAGE;
	}
	json_object_set_new(body, "name", json_string(argv[first]));
	for (int i = first + 1; i < argc; i++)
		json_array_append_new(command, json_string(argv[i]));
	json_object_set_new(body, "command", command);
	if (!json_object_get(body, "workdir") && getcwd(here, sizeof(here)))
		json_object_set_new(body, "workdir", json_string(here));
	return GP_EXIT_OK;
}

/* The newest steps (GET /v1/services/NAME), newest first. */
static void steps_print(json_t *steps)
{
	json_t *x;
	size_t i;

	if (json_array_size(steps))
		printf("  steps, newest first:\n");
	json_array_foreach(steps, i, x)
	{
		time_t t = (time_t)(gp_client_int(x, "ts_ms") / 1000);
		char when[32];
		struct tm tm;

		if (i == STEPS_SHOWN)
			break;
		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("    %s %-6s %lld replica(s) of %lld %% (%s): %s\n", when,
		       gp_client_text(x, "step"), (long long)gp_client_int(x, "replicas"),
		       (long long)gp_client_int(x, "share_pct"), gp_client_text(x, "who"),
		       gp_client_text(x, "reason"));
	}
}

static void service_print(json_t *s)
{
	json_t *spec = json_object_get(s, "spec"),
	       *policy = json_object_get(spec, "policy");
	json_t *tasks = json_object_get(s, "replica_tasks"), *t;
	json_t *util = json_object_get(s, "utilization");
	unsigned running = 0;
	size_t i;

	json_array_foreach(tasks, i, t) running += !strcmp(gp_client_text(t, "state"), "running");
	printf("service %s: %lld replica(s) wanted, %u running, of %lld %%, %s\n",
	       gp_client_text(s, "name"), (long long)gp_client_int(s, "replicas"), running,
	       (long long)gp_client_int(s, "share_pct"),
	       json_is_true(json_object_get(spec, "autoscale")) ? "autoscaled" : "fixed");
	if (*gp_client_text(spec, "deployment"))
		printf("  replicas: the pods of Kubernetes Deployment %s\n",
		       gp_client_text(spec, "deployment"));
	printf("  replicas %lld to %lld; out above %lld %% for %lld s, in below %lld %% "
	       "for "
	       "%lld s; share up to %lld %%\n",
	       (long long)gp_client_int(policy, "min_replicas"),
	       (long long)gp_client_int(policy, "max_replicas"),
	       (long long)gp_client_int(policy, "out_pct"),
	       (long long)gp_client_int(policy, "out_window_s"),
	       (long long)gp_client_int(policy, "in_pct"),
	       (long long)gp_client_int(policy, "in_window_s"),
	       (long long)gp_client_int(policy, "share_max_pct"));
	if (json_is_number(util))
		printf("  utilization %.0f %% of the shares held\n",
		       json_number_value(util) * 100);
	if (*gp_client_text(s, "last_decision"))
		printf("  last step: %s\n", gp_client_text(s, "last_decision"));
	if (*gp_client_text(s, "crash_loop"))
		printf("  %s\n", gp_client_text(s, "crash_loop"));
	json_array_foreach(tasks, i, t) printf(
		"  task %lld: %s, %lld %%%s%s%s\n", (long long)gp_client_int(t, "id"),
		gp_client_text(t, "state"), (long long)gp_client_int(t, "compute_pct"),
		*gp_client_text(t, "placement") ? " on " : "", gp_client_text(t, "placement"),
		json_is_true(json_object_get(t, "cancelling")) ? ", being cancelled"
							       : "");
	steps_print(json_object_get(s, "steps"));
}

static int service_create(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "service create",
		.usage = create_usage,
		.options = create_options,
		.option = create_option,
	};
	struct create_options o = {json_object()};
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int first, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);
	int status = r ? (r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE)
		       : create_args(o.body, argc, argv, first);

	if (!r && status == GP_EXIT_OK)
		status = gp_client_request(&f, cmd.name, "POST", "/v1/services", o.body,
					   &reply);
	if (!r && status == GP_EXIT_OK) {
		if (f.json)
			gp_client_print_json(reply);
		else
			service_print(reply);
	}
	json_decref(reply);
	json_decref(o.body);
	return status;
}

/* ---- service ls, show, rm -------------------------------------------------- */

static void ls_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool service ls [--tenant NAME] [-o json|table]\n"
		"       gpupool service show NAME [--tenant NAME] [-o json|table]\n"
		"       gpupool service rm NAME [--tenant NAME]\n"
		"\n"
		"Lists your services (the admin: everyone's, or --tenant's), shows one\n"
		"with its replicas, utilization and last scaling step, or removes one\n"
		"(its replicas are cancelled).\n");
}

static const struct option tenant_options[] = {
	{"tenant", required_argument, NULL, 'T'},
	{0},
};

static int tenant_option(void *ctx, int c, const char *value)
{
	*(const char **)ctx = value;
	return c == 'T' ? 0 : -EINVAL;
}

/* ls, show or rm: the method, and whether it names a service. */
static int service_one(int argc, char **argv, const char *name, const char *method,
		       bool named)
{
	const struct gp_client_command cmd = {
		.name = name,
		.usage = ls_usage,
		.options = tenant_options,
		.option = tenant_option,
	};
	struct gp_client_flags f = {0};
	const char *tenant = NULL;
	char path[PATH_LEN];
	json_t *reply = NULL, *s;
	int first, r = gp_client_parse(&cmd, &tenant, argc, argv, &f, &first), status;
	size_t i;

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (named != (first + 1 == argc)) {
		fprintf(stderr, "gpupool %s: %s\n", name,
			named ? "name one service, as in: gpupool service show web"
			      : "takes no arguments");
		return GP_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/services%s%s", named ? "/" : "",
		 named ? argv[first] : "");
	if (tenant)
		gp_client_query_add(path, sizeof(path), "tenant", tenant);
	status = gp_client_request(&f, name, method, path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK && !strcmp(method, "DELETE"))
		printf("service %s removed; its replicas are being cancelled\n",
		       argv[first]);
	else if (status == GP_EXIT_OK && named)
		service_print(reply);
	else if (status == GP_EXIT_OK)
		json_array_foreach(json_object_get(reply, "services"), i, s)
			service_print(s);
	json_decref(reply);
	return status;
}

static int service_ls(int argc, char **argv)
{
	return service_one(argc, argv, "service ls", "GET", false);
}

static int service_show(int argc, char **argv)
{
	return service_one(argc, argv, "service show", "GET", true);
}

static int service_rm(int argc, char **argv)
{
	return service_one(argc, argv, "service rm", "DELETE", true);
}

/* ---- service scale ------------------------------------------------------------ */

static void scale_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool service scale NAME REPLICAS [--reason TEXT] [--tenant NAME]\n"
		"                             [-o json|table]\n"
		"\n"
		"Sets a service's replicas by hand, within its --min and --max: a scaling\n"
		"step like the autoscaler's, in its steps and the audit log; the replicas\n"
		"follow at once, and the autoscaler goes on from there.\n");
}

struct scale_options {
	const char *tenant, *reason;
};

static const struct option scale_options_list[] = {
	{"tenant", required_argument, NULL, 'T'},
	{"reason", required_argument, NULL, 'r'},
	{0},
};

static int scale_option(void *ctx, int c, const char *value)
{
	struct scale_options *o = ctx;

	if (c == 'T')
		o->tenant = value;
	else if (c == 'r')
		o->reason = value;
	else
		return -EINVAL;
	return 0;
}

static int service_scale(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "service scale",
		.usage = scale_usage,
		.options = scale_options_list,
		.option = scale_option,
	};
	struct scale_options o = {0};
	struct gp_client_flags f = {0};
	char path[PATH_LEN];
	json_t *reply = NULL, *body;
	unsigned replicas;
	int first, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first), status;

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (first + 2 != argc) {
		fprintf(stderr, "gpupool service scale: give NAME and REPLICAS, as in: gpupool "
				"service scale web 3\n");
		return GP_EXIT_USAGE;
	}
	if (gp_client_uint("gpupool service scale", "REPLICAS", argv[first + 1], 1, 64,
			   &replicas) < 0)
		return GP_EXIT_USAGE;
	snprintf(path, sizeof(path), "/v1/services/%s", argv[first]);
	if (o.tenant)
		gp_client_query_add(path, sizeof(path), "tenant", o.tenant);
	body = json_pack("{s:i}", "replicas", (int)replicas);
	if (o.reason)
		json_object_set_new(body, "reason", json_string(o.reason));
	status = gp_client_request(&f, cmd.name, "PATCH", path, body, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		service_print(reply);
	json_decref(body);
	json_decref(reply);
	return status;
}

int gp_cmd_service(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"create", service_create, "a service of replicas that scale"},
		{"ls", service_ls, "list the services"},
		{"show", service_show, "a service, its replicas and last step"},
		{"rm", service_rm, "remove a service and cancel its replicas (a Deployment is left as it is)"},
		{"scale", service_scale, "set a service's replicas by hand"},
	};

	return gp_client_dispatch("service", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}

/* ---- schedule add, ls, rm ---------------------------------------------------- */

static void schedule_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool schedule add NAME --at HH:MM[:SS] (--tenant NAME | "
		"--task ID)\n"
		"                            --set FIELD=VALUE\n"
		"       gpupool schedule ls [-o json|table]\n"
		"       gpupool schedule rm NAME\n"
		"\n"
		"Time-of-day rules (the admin): every day at --at (UTC), set a tenant's\n"
		"compute_guaranteed_pct or compute_borrowable_pct, or a live task's\n"
		"compute_pct or priority; applied live and in the audit log. Between "
		"two\n"
		"rules of the same thing, the last one passed holds; a server that "
		"starts\n"
		"applies the rules in force (docs/operations.md). E.g. inference 60 %% "
		"by\n"
		"day, 20 %% at night:\n"
		"  gpupool schedule add day --at 08:00 --tenant inference "
		"--set compute_guaranteed_pct=60\n"
		"  gpupool schedule add night --at 20:00 --tenant inference "
		"--set compute_guaranteed_pct=20\n");
}

static const struct option schedule_options[] = {
	{"at", required_argument, NULL, 'a'},
	{"tenant", required_argument, NULL, 'T'},
	{"task", required_argument, NULL, 'k'},
	{"set", required_argument, NULL, 's'},
	{0},
};

static int schedule_option(void *ctx, int c, const char *value)
{
	json_t *b = ctx;
	const char *eq = strchr(value, '=');
	long long id;
	unsigned v;

	switch (c) {
	case 'a': json_object_set_new(b, "at", json_string(value)); return 0;
	case 'T': json_object_set_new(b, "tenant", json_string(value)); return 0;
	case 'k':
		if (gp_client_id("schedule add", value, &id) < 0)
			return -EINVAL;
		json_object_set_new(b, "task", json_integer(id));
		return 0;
	case 's':
		if (!eq || eq == value ||
		    gp_client_uint("schedule add", "set", eq + 1, 0, 100 * 1024, &v) <
			    0) {
			fprintf(stderr,
				"gpupool schedule add: --set takes FIELD=VALUE, as in "
				"--set compute_guaranteed_pct=60\n");
			return -EINVAL;
		}
		json_object_set_new(b, "field",
				    json_stringn(value, (size_t)(eq - value)));
		json_object_set_new(b, "value", json_integer(v));
		return 0;
	}
	return -EINVAL;
}

static void schedule_row(json_t *s)
{
	json_t *task = json_object_get(s, "task");
	char target[96];

	if (task)
		snprintf(target, sizeof(target), "task %lld",
			 (long long)json_integer_value(task));
	else
		snprintf(target, sizeof(target), "tenant %s", gp_client_text(s, "tenant"));
	printf("%-16s at %s UTC: %s %s = %lld\n", gp_client_text(s, "name"),
	       gp_client_text(s, "at"), target, gp_client_text(s, "field"),
	       (long long)gp_client_int(s, "value"));
}

static int schedule_run(int argc, char **argv, const char *name)
{
	const struct gp_client_command cmd = {
		.name = name,
		.usage = schedule_usage,
		.options = strcmp(name, "schedule add") ? NULL : schedule_options,
		.option = schedule_option,
	};
	struct gp_client_flags f = {0};
	json_t *body = json_object(), *reply = NULL;
	int first, r = gp_client_parse(&cmd, body, argc, argv, &f, &first), status;
	bool add = !strcmp(name, "schedule add"), rm = !strcmp(name, "schedule rm");
	char path[PATH_LEN];

	if (r || (first + (add || rm)) != argc) {
		if (!r)
			fprintf(stderr, "gpupool %s: %s\n", name,
				add || rm ? "name one schedule" : "takes no arguments");
		json_decref(body);
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	}
	if (add)
		json_object_set_new(body, "name", json_string(argv[first]));
	snprintf(path, sizeof(path), "/v1/schedules%s%s", rm ? "/" : "",
		 rm ? argv[first] : "");
	status = gp_client_request(&f, name,
				   add	? "POST"
				   : rm ? "DELETE"
					: "GET",
				   path, add ? body : NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK && rm)
		printf("schedule %s removed\n", argv[first]);
	else if (status == GP_EXIT_OK)
		gp_client_rows(reply, "schedules", schedule_row);
	json_decref(reply);
	json_decref(body);
	return status;
}

static int schedule_add(int argc, char **argv)
{
	return schedule_run(argc, argv, "schedule add");
}

static int schedule_ls(int argc, char **argv)
{
	return schedule_run(argc, argv, "schedule ls");
}

static int schedule_rm(int argc, char **argv)
{
	return schedule_run(argc, argv, "schedule rm");
}

int gp_cmd_schedule(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"add", schedule_add, "a time-of-day rule"},
		{"ls", schedule_ls, "list the rules"},
		{"rm", schedule_rm, "remove a rule"},
	};

	return gp_client_dispatch("schedule", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}
