/* cmd-admin.c — the admin's commands: `gpupool tenant
 * add|set|quota|ls|rm|token`, `gpupool template add|ls|show|rm` and
 * `gpupool audit`, through the server's API (cli/client.h, docs/api.md).
 * A tenant may list itself and the templates and replace its own token;
 * the server refuses the rest to anyone but the admin. Templates also
 * print as YAML descriptions (-o yaml, cli/yaml.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closest.h"
#include "base/parse.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/yaml.h"
#include "server/runtime.h"

#define TENANT_PCT_MAX (100 * 1024)
#define AUDIT_MAX      100000
#define PATH_LEN       64
#define NAME_LEN       64 /* a tenant's or a model's name, with its NUL */
#define NAME_CHARS                                                                       \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

static const char *const isolations[] = {"hard", "shared", NULL};

/* What an admin subcommand collects: its name, the body, --limit. */
struct admin_options {
	const char *cmd;
	json_t *body;
	unsigned limit;
	long long after;        /* audit --after ID; 0: the newest entries */
	const char *file;       /* template add -f FILE; NULL: none */
};

static int set_mib(struct admin_options *o, const char *flag, const char *key,
		   const char *value, bool zero_ok)
{
	uint64_t mib;

	if (gp_client_mib(o->cmd, flag, value, zero_ok, &mib) < 0)
		return -EINVAL;
	json_object_set_new(o->body, key, json_integer((json_int_t)mib));
	return 0;
}

static int set_uint(struct admin_options *o, const char *flag, const char *key,
		    const char *value, unsigned lo, unsigned hi)
{
	unsigned v;

	if (gp_client_uint(o->cmd, flag, value, lo, hi, &v) < 0)
		return -EINVAL;
	json_object_set_new(o->body, key, json_integer(v));
	return 0;
}

/* Parses the flags and exactly `want` arguments (a name, or none). */
static int parse(const struct gp_client_command *cmd, struct admin_options *o, int argc,
		 char **argv, struct gp_client_flags *f, int want)
{
	int first, r = gp_client_parse(cmd, o, argc, argv, f, &first);

	if (r)
		return r > 0 ? 1 : -EINVAL;
	if (argc - first == want) {
		if (want)
			json_object_set_new(o->body, "name", json_string(argv[first]));
		return 0;
	}
	if (want)
		fprintf(stderr, "gpupool %s: needs one name (gpupool %s --help)\n",
			cmd->name, cmd->name);
	else
		fprintf(stderr, "gpupool %s: takes no arguments, got \"%s\"\n", cmd->name,
			argv[first]);
	return -EINVAL;
}

/* One request: which, and how its answer is printed. */
struct request {
	int want; /* arguments: 1 (a name) or 0 */
	const char *method, *path;
	void (*print)(json_t *reply);
	int (*check)(const struct admin_options *o); /* flags given; NULL: none */
	json_t *(*describe)(json_t *reply);	     /* the -o yaml document (new) */
};

/* Prints doc (taken) as YAML; an exit status. */
static int yaml_out(const char *cmd, json_t *doc)
{
	int status = GP_EXIT_FAIL;

	if (doc)
		status = gp_client_print_yaml(cmd, doc);
	else
		fprintf(stderr, "gpupool %s: cannot write YAML: out of memory\n", cmd);
	json_decref(doc);
	return status;
}

/* Parses, sends the request, prints the answer; an exit status. */
static int run(const struct gp_client_command *cmd, struct admin_options *o, int argc,
	       char **argv, const struct request *req)
{
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int want = req->want, status, r = parse(cmd, o, argc, argv, &f, want);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	status = req->check ? req->check(o) : GP_EXIT_OK;
	if (status != GP_EXIT_OK)
		return status;
	status = gp_client_request(&f, cmd->name, req->method, req->path,
				   want ? o->body : NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK && f.yaml)
		status = yaml_out(cmd->name, req->describe(reply));
	else if (status == GP_EXIT_OK)
		req->print(reply);
	json_decref(reply);
	return status;
}

static int no_option(void *ctx, int c, const char *value)
{
	(void)ctx;
	(void)c;
	(void)value;
	return -EINVAL;
}

/* ---- tenants ---------------------------------------------------------- */

/* What --user means, for the usage texts of `tenant add` and `tenant set`. */
/* What a SIZE is, in the tenants' helps (base/parse.h). */
#define SIZE_HELP                                                                          \
	"  (a SIZE: 4G, 4GB, 4GiB, 512M, or MiB as a number, 4096; G and GB are GiB)\n"
#define USER_HELP                                                                        \
	"  --user SPEC                the Unix user its tasks run as, on the\n"          \
	"                             server's machine: NAME, NAME:GROUP or\n"           \
	"                             UID:GID, never root; or auto, an unprivileged\n"   \
	"                             uid of gpupool's own (a new tenant's default)\n"

/* What --priority-max means, for `tenant add` and `tenant set`. */
#define PRIORITY_MAX_HELP                                                                \
	"  --priority-max N           the highest priority (0-9) its tasks may ask\n"    \
	"                             for (a new tenant's default: 5); a priority\n"     \
	"                             orders turns on a shared card, never past\n"       \
	"                             another tenant's hard share\n"

static void tenant_add_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool tenant add NAME --mem-guaranteed SIZE --compute-guaranteed PCT\n"
		"                          [--mem-borrowable SIZE] [--compute-borrowable PCT]\n"
		"                          [--user SPEC|auto] [--priority-max N]\n"
		"       gpupool tenant add NAME --unlimited [--user SPEC|auto] [--priority-max N]\n"
		"\n"
		"Adds a tenant (admin only) and prints its token, which is shown only "
		"this\n"
		"once. Quotas sum over devices: 200 %% of compute is two whole devices.\n"
		"A tenant has a quota, or --unlimited: no limit, and nothing guaranteed\n"
		"(all it holds is borrowed, and taken back for a tenant within its\n"
		"guarantee).\n"
		"\n" USER_HELP
		"  --mem-guaranteed SIZE      memory the tenant is sure to get\n"
		"  --mem-borrowable SIZE      more it may borrow while others do not use "
		"it\n"
		SIZE_HELP
		"  --compute-guaranteed PCT   compute it is sure to get, in %% of a "
		"device\n"
		"  --compute-borrowable PCT   more it may borrow\n"
		"  --unlimited                no quota at all (instead of the four above)\n"
		PRIORITY_MAX_HELP);
}

/* --user SPEC: "auto" is the API's "" (the server checks the rest). */
static int set_user(struct admin_options *o, const char *value)
{
	if (!*value) {
		fprintf(stderr,
			"gpupool %s: --user needs NAME, NAME:GROUP, UID:GID or auto\n",
			o->cmd);
		return -EINVAL;
	}
	json_object_set_new(o->body, "user",
			    json_string(strcmp(value, "auto") ? value : ""));
	return 0;
}

static int tenant_add_option(void *ctx, int c, const char *value)
{
	struct admin_options *o = ctx;

	switch (c) {
	case 'u': return set_user(o, value);
	case 'm': return set_mib(o, "mem-guaranteed", "mem_guaranteed_mib", value, true);
	case 'M': return set_mib(o, "mem-borrowable", "mem_borrowable_mib", value, true);
	case 'c':
		return set_uint(o, "compute-guaranteed", "compute_guaranteed_pct", value,
				0, TENANT_PCT_MAX);
	case 'C':
		return set_uint(o, "compute-borrowable", "compute_borrowable_pct", value,
				0, TENANT_PCT_MAX);
	case 'p': return set_uint(o, "priority-max", "priority_max", value, 0, 9);
	case 'U': json_object_set_new(o->body, "unlimited", json_true()); return 0;
	}
	return -EINVAL;
}

/* The token alone on stdout, so that TOKEN=$(gpupool tenant add x) works. */
static void tenant_add_print(json_t *t)
{
	fprintf(stderr, "tenant \"%s\" added; its token, shown only this once:\n",
		gp_client_text(t, "name"));
	printf("%s\n", gp_client_str(t, "token"));
}

static int tenant_add(int argc, char **argv)
{
	static const struct option own[] = {
		{"user", required_argument, NULL, 'u'},
		{"mem-guaranteed", required_argument, NULL, 'm'},
		{"mem-borrowable", required_argument, NULL, 'M'},
		{"compute-guaranteed", required_argument, NULL, 'c'},
		{"compute-borrowable", required_argument, NULL, 'C'},
		{"priority-max", required_argument, NULL, 'p'},
		{"unlimited", no_argument, NULL, 'U'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "tenant add",
		.usage = tenant_add_usage,
		.options = own,
		.option = tenant_add_option,
	};
	static const struct request req = {1, "POST", "/v1/tenants", tenant_add_print};
	struct admin_options o = {.cmd = cmd.name, .body = json_object()};
	int status = run(&cmd, &o, argc, argv, &req);

	json_decref(o.body);
	return status;
}

/* A name as the server takes it in a path: NAME_CHARS, first alphanumeric. */
static bool is_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < NAME_LEN && strspn(s, NAME_CHARS) == n &&
	       !strchr("._-", s[0]);
}

static void tenant_set_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool tenant set NAME [--user SPEC|auto] [--mem-guaranteed "
		"SIZE]\n"
		"                          [--mem-borrowable SIZE] [--compute-guaranteed "
		"PCT]\n"
		"                          [--compute-borrowable PCT] [--priority-max N]\n"
		"\n"
		"Changes a tenant's Unix user, its overall quota or its priority bound\n"
		"(admin only); what is not\n"
		"given stays. The audit log gets the old and new values. Tasks that run "
		"keep\n"
		"the user they started as; the next ones start as the new one.\n"
		"\n" USER_HELP
		"  --mem-guaranteed SIZE      memory the tenant is sure to get\n"
		"  --mem-borrowable SIZE      more it may borrow while others do not use "
		"it\n"
		SIZE_HELP
		"  --compute-guaranteed PCT   compute it is sure to get, in %% of a "
		"device\n"
		"  --compute-borrowable PCT   more it may borrow\n" PRIORITY_MAX_HELP
		"Tasks that run or wait keep their priority; a change of one past the\n"
		"new bound is refused.\n");
}

/* The user as `tenant ls` and `tenant set` print it. */
static const char *user_shown(json_t *t)
{
	const char *user = gp_client_text(t, "user");

	return *user ? user : "auto";
}

static void tenant_set_print(json_t *t)
{
	char g[32], b[32];

	printf("tenant \"%s\": user %s, memory %s+%s, compute %lld+%lld%%, priority up to "
	       "%lld\n",
	       gp_client_text(t, "name"), user_shown(t),
	       gp_client_mib_text(gp_client_int(t, "mem_guaranteed_mib"), g, sizeof(g)),
	       gp_client_mib_text(gp_client_int(t, "mem_borrowable_mib"), b, sizeof(b)),
	       (long long)gp_client_int(t, "compute_guaranteed_pct"),
	       (long long)gp_client_int(t, "compute_borrowable_pct"),
	       (long long)gp_client_int(t, "priority_max"));
}

/* NAME and at least one flag; the request's path in path. An exit status. */
static int tenant_set_check(const struct admin_options *o, int argc, char **argv,
			    char *path, size_t size)
{
	if (argc != 1) {
		fprintf(stderr, "gpupool tenant set: needs one name (gpupool tenant set "
				"--help)\n");
		return GP_EXIT_USAGE;
	}
	if (!is_name(argv[0])) {
		fprintf(stderr,
			"gpupool tenant set: NAME \"%s\" must be letters, digits, "
			"'.', '_' or '-'\n",
			argv[0]);
		return GP_EXIT_USAGE;
	}
	if (!json_object_size(o->body)) {
		fprintf(stderr,
			"gpupool tenant set: give what to change: --user, "
			"--mem-guaranteed, --mem-borrowable, --compute-guaranteed, "
			"--compute-borrowable or --priority-max\n");
		return GP_EXIT_USAGE;
	}
	snprintf(path, size, "/v1/tenants/%s", argv[0]);
	return GP_EXIT_OK;
}

static int tenant_set(int argc, char **argv)
{
	static const struct option own[] = {
		{"user", required_argument, NULL, 'u'},
		{"mem-guaranteed", required_argument, NULL, 'm'},
		{"mem-borrowable", required_argument, NULL, 'M'},
		{"compute-guaranteed", required_argument, NULL, 'c'},
		{"compute-borrowable", required_argument, NULL, 'C'},
		{"priority-max", required_argument, NULL, 'p'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "tenant set",
		.usage = tenant_set_usage,
		.options = own,
		.option = tenant_add_option,
	};
	struct admin_options o = {.cmd = cmd.name, .body = json_object()};
	struct gp_client_flags f = {0};
	char path[2 * PATH_LEN];
	json_t *reply = NULL;
	int first, status, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);

	if (r)
		status = r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	else
		status = tenant_set_check(&o, argc - first, argv + first, path,
					  sizeof(path));
	if (!r && status == GP_EXIT_OK)
		status = gp_client_request(&f, cmd.name, "PATCH", path, o.body, &reply);
	if (!r && status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (!r && status == GP_EXIT_OK)
		tenant_set_print(reply);
	json_decref(reply);
	json_decref(o.body);
	return status;
}

static void tenant_quota_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool tenant quota NAME MODEL --mem-guaranteed SIZE "
		"--compute-guaranteed PCT\n"
		"                            [--mem-borrowable SIZE] [--compute-borrowable "
		"PCT]\n"
		"       gpupool tenant quota NAME MODEL --remove\n"
		"\n"
		"Sets (or replaces, or removes) the tenant's quota on the devices of one "
		"model\n"
		"(admin only), on top of its overall quota: it counts only the tasks' "
		"shares\n"
		"on devices that answer to MODEL (as --model matches: A10 is not an A100;\n"
		"the longest match among the tenant's quotas wins): `gpupool tenant quota vision T4\n"
		"--mem-guaranteed 16G --compute-guaranteed 200`.\n"
		"\n"
		"  --mem-guaranteed SIZE      memory on those devices it is sure to get\n"
		"  --mem-borrowable SIZE      more it may borrow there (default 0)\n"
		SIZE_HELP
		"  --compute-guaranteed PCT   compute there, in %% of a device\n"
		"  --compute-borrowable PCT   more it may borrow there (default 0)\n"
		"  --remove                   remove the quota of that model\n");
}

/* What `tenant quota` collects: the body, and --remove. */
struct quota_options {
	struct admin_options a;
	bool remove;
};

static int tenant_quota_option(void *ctx, int c, const char *value)
{
	struct quota_options *o = ctx;

	if (c == 'r') {
		o->remove = true;
		return 0;
	}
	return tenant_add_option(&o->a, c, value);
}

/* The arguments (NAME MODEL) and the flags agree; the request's path in
 * path. An exit status. */
static int tenant_quota_check(const struct quota_options *o, int argc, char **argv,
			      char *path, size_t size)
{
	static const char *const what[] = {"NAME", "MODEL"};
	bool mem = json_object_get(o->a.body, "mem_guaranteed_mib") != NULL;
	bool compute = json_object_get(o->a.body, "compute_guaranteed_pct") != NULL;

	if (argc != 2) {
		fprintf(stderr, "gpupool tenant quota: needs NAME and MODEL (gpupool tenant "
				"quota --help)\n");
		return GP_EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++)
		if (!is_name(argv[i])) {
			fprintf(stderr,
				"gpupool tenant quota: %s \"%s\" must be letters, digits, '.', "
				"'_' or '-'\n",
				what[i], argv[i]);
			return GP_EXIT_USAGE;
		}
	if (o->remove && json_object_size(o->a.body)) {
		fprintf(stderr, "gpupool tenant quota: --remove takes no other flag\n");
		return GP_EXIT_USAGE;
	}
	if (!o->remove && (!mem || !compute)) {
		fprintf(stderr, "gpupool tenant quota: --mem-guaranteed and "
				"--compute-guaranteed are required (or --remove)\n");
		return GP_EXIT_USAGE;
	}
	snprintf(path, size, "/v1/tenants/%s/quotas/%s", argv[0], argv[1]);
	return GP_EXIT_OK;
}

static void tenant_quota_print(json_t *reply, const char *model, bool removed)
{
	json_t *q;
	size_t i;

	printf("tenant \"%s\": quota for model %s %s\n", gp_client_text(reply, "tenant"),
	       model, removed ? "removed" : "set");
	json_array_foreach(json_object_get(reply, "model_quotas"), i, q) {
		char g[32], b[32];

		printf("  %-16s memory %s+%s, compute %lld+%lld%%\n", gp_client_text(q, "model"),
		       gp_client_mib_text(gp_client_int(q, "mem_guaranteed_mib"), g, sizeof(g)),
		       gp_client_mib_text(gp_client_int(q, "mem_borrowable_mib"), b, sizeof(b)),
		       (long long)gp_client_int(q, "compute_guaranteed_pct"),
		       (long long)gp_client_int(q, "compute_borrowable_pct"));
	}
}

static int tenant_quota_send(const struct quota_options *o, int argc, char **argv,
			     const struct gp_client_flags *f)
{
	char path[3 * PATH_LEN];
	json_t *reply = NULL;
	int status = tenant_quota_check(o, argc, argv, path, sizeof(path));

	if (status != GP_EXIT_OK)
		return status;
	status = gp_client_request(f, o->a.cmd, o->remove ? "DELETE" : "PUT", path,
				   o->remove ? NULL : o->a.body, &reply);
	if (status == GP_EXIT_OK && f->json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		tenant_quota_print(reply, argv[1], o->remove);
	json_decref(reply);
	return status;
}

static int tenant_quota(int argc, char **argv)
{
	static const struct option own[] = {
		{"mem-guaranteed", required_argument, NULL, 'm'},
		{"mem-borrowable", required_argument, NULL, 'M'},
		{"compute-guaranteed", required_argument, NULL, 'c'},
		{"compute-borrowable", required_argument, NULL, 'C'},
		{"remove", no_argument, NULL, 'r'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "tenant quota",
		.usage = tenant_quota_usage,
		.options = own,
		.option = tenant_quota_option,
	};
	struct quota_options o = {.a = {.cmd = cmd.name, .body = json_object()}};
	struct gp_client_flags f = {0};
	int first, status, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);

	if (r)
		status = r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	else
		status = tenant_quota_send(&o, argc - first, argv + first, &f);
	json_decref(o.a.body);
	return status;
}

static void tenant_ls_usage(FILE *out)
{
	fprintf(out, "usage: gpupool tenant ls [-o json|table]\n\n"
		     "Lists the tenants, the Unix user their tasks run as (auto: an\n"
		     "unprivileged uid of gpupool's own) and their quotas, each model\n"
		     "quota on a line of its own under its tenant (a tenant sees only\n"
		     "itself). Removed tenants are not listed.\n");
}

/* A line under its tenant for each model quota: "on MODEL". */
static void model_quota_rows(json_t *quotas)
{
	json_t *q;
	size_t i;

	json_array_foreach(quotas, i, q) {
		char g[32], b[32], mem[70], compute[40], on[NAME_LEN + 4];

		snprintf(on, sizeof(on), "on %s", gp_client_text(q, "model"));
		snprintf(mem, sizeof(mem), "%s+%s",
			 gp_client_mib_text(gp_client_int(q, "mem_guaranteed_mib"), g, sizeof(g)),
			 gp_client_mib_text(gp_client_int(q, "mem_borrowable_mib"), b, sizeof(b)));
		snprintf(compute, sizeof(compute), "%lld+%lld%%",
			 (long long)gp_client_int(q, "compute_guaranteed_pct"),
			 (long long)gp_client_int(q, "compute_borrowable_pct"));
		printf("%-6s   %-14s %-5s %-16s %-15s %s\n", "", on, "", "", mem, compute);
	}
}

static void tenant_row(json_t *t)
{
	char g[32], b[32], mem[70], compute[40];
	bool no_mem = !gp_client_int(t, "mem_guaranteed_mib") &&
		      !gp_client_int(t, "mem_borrowable_mib");

	snprintf(
		mem, sizeof(mem), "%s+%s",
		gp_client_mib_text(gp_client_int(t, "mem_guaranteed_mib"), g, sizeof(g)),
		gp_client_mib_text(gp_client_int(t, "mem_borrowable_mib"), b, sizeof(b)));
	snprintf(compute, sizeof(compute), "%lld+%lld%%",
		 (long long)gp_client_int(t, "compute_guaranteed_pct"),
		 (long long)gp_client_int(t, "compute_borrowable_pct"));
	if (json_is_true(json_object_get(t, "unlimited"))) {
		snprintf(mem, sizeof(mem), "unlimited");
		snprintf(compute, sizeof(compute), "unlimited");
	}
	printf("%-6lld %-16s %-5s %-16s %-15s %-15s %-8lld %s\n",
	       (long long)gp_client_int(t, "id"), gp_client_text(t, "name"),
	       json_is_true(json_object_get(t, "admin")) ? "yes" : "no", user_shown(t),
	       no_mem && !json_is_true(json_object_get(t, "unlimited")) ? "-" : mem, compute,
	       (long long)gp_client_int(t, "priority_max"), gp_client_text(t, "created"));
	model_quota_rows(json_object_get(t, "model_quotas"));
}

static void tenant_ls_print(json_t *reply)
{
	printf("%-6s %-16s %-5s %-16s %-15s %-15s %-8s %s\n", "ID", "NAME", "ADMIN", "USER",
	       "MEM (G+B)", "COMPUTE (G+B)", "PRIO MAX", "CREATED");
	gp_client_rows(reply, "tenants", tenant_row);
}

static int tenant_ls(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "tenant ls",
		.usage = tenant_ls_usage,
		.option = no_option,
	};
	static const struct request req = {0, "GET", "/v1/tenants", tenant_ls_print};
	struct admin_options o = {.cmd = cmd.name};

	return run(&cmd, &o, argc, argv, &req);
}

/* A subcommand that takes one NAME and no option: sends METHOD to
 * PREFIX NAME SUFFIX without a body and prints the answer with print.
 * An exit status. */
static int named(const struct gp_client_command *cmd, const char *method,
		 const char *prefix, const char *suffix, void (*print)(json_t *reply),
		 int argc, char **argv)
{
	struct gp_client_flags f = {0};
	char path[3 * PATH_LEN];
	json_t *reply = NULL;
	int first, status, r = gp_client_parse(cmd, NULL, argc, argv, &f, &first);

	if (r)
		return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (argc - first != 1) {
		fprintf(stderr, "gpupool %s: needs one name (gpupool %s --help)\n",
			cmd->name, cmd->name);
		return GP_EXIT_USAGE;
	}
	if (!is_name(argv[first])) {
		fprintf(stderr,
			"gpupool %s: NAME \"%s\" must be letters, digits, '.', '_' or "
			"'-'\n",
			cmd->name, argv[first]);
		return GP_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s%s%s", prefix, argv[first], suffix);
	status = gp_client_request(&f, cmd->name, method, path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		print(reply);
	json_decref(reply);
	return status;
}

static void tenant_rm_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool tenant rm NAME [-o json|table]\n"
		"\n"
		"Removes a tenant (admin only): its token stops working at once and its\n"
		"model quotas go. Its tasks, their usage records and bills and the audit\n"
		"log's rows are kept, under its name, which is not given again\n"
		"(`gpupool task ls --tenant NAME`, `gpupool bill --tenant NAME`).\n"
		"Refused while it has queued or running tasks (the answer counts them):\n"
		"cancel them first, or wait for them to end. The admin tenant cannot be\n"
		"removed.\n");
}

static void tenant_rm_print(json_t *t)
{
	printf("tenant \"%s\" removed; its tasks, usage records and bills are kept\n",
	       gp_client_text(t, "name"));
}

static int tenant_rm(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "tenant rm",
		.usage = tenant_rm_usage,
		.option = no_option,
	};

	return named(&cmd, "DELETE", "/v1/tenants/", "", tenant_rm_print, argc, argv);
}

static void tenant_token_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool tenant token NAME [-o json|table]\n"
		"\n"
		"Gives tenant NAME a new token and prints it, alone on stdout, this\n"
		"once; the one before stops working at once. The admin may do it for\n"
		"any tenant, a tenant for itself. The admin's own new token also\n"
		"replaces the server's admin token file.\n");
}

/* The token alone on stdout, as `tenant add` prints it. */
static void tenant_token_print(json_t *t)
{
	const char *file = gp_client_text(t, "token_file"),
		   *warning = gp_client_text(t, "warning");

	fprintf(stderr,
		"tenant \"%s\": a new token, shown only this once; the one before no "
		"longer works%s%s\n",
		gp_client_text(t, "name"), *file ? ". It is in " : "", file);
	if (*warning)
		fprintf(stderr, "gpupool tenant token: %s\n", warning);
	printf("%s\n", gp_client_str(t, "token"));
}

static int tenant_token(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "tenant token",
		.usage = tenant_token_usage,
		.option = no_option,
	};

	return named(&cmd, "POST", "/v1/tenants/", "/token", tenant_token_print, argc,
		     argv);
}

int gp_cmd_tenant(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"add", tenant_add, "add a tenant and print its token (admin)"},
		{"set", tenant_set,
		 "change a tenant's Unix user or overall quota (admin)"},
		{"quota", tenant_quota,
		 "set or remove a tenant's quota on one device model (admin)"},
		{"ls", tenant_ls, "list the tenants"},
		{"rm", tenant_rm,
		 "remove a tenant; its tasks and bills are kept (admin)"},
		{"token", tenant_token,
		 "replace a tenant's token (admin; a tenant: its own)"},
	};

	return gp_client_dispatch("tenant", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}

/* ---- templates -------------------------------------------------------- */

/* The models of a template, "a100, t4", as a list. */
static json_t *models_list(const char *models)
{
	json_t *list = json_array();
	const char *p = models;

	while (*p) {
		size_t skip = strspn(p, ", "), n;

		p += skip;
		n = strcspn(p, ",");
		while (n && p[n - 1] == ' ')
			n--;
		if (n)
			json_array_append_new(list, json_stringn(p, n));
		p += strcspn(p, ",");
	}
	return list;
}

/* ---- a template's YAML description, both ways ------------------------- */

/* Each field of a description: what `template show -o yaml` writes of it
 * (from the server's template) and how `template add -f` reads it back
 * into the request's body (0, or -EINVAL with why). One row a field, in
 * the order written: the one table of both directions. */
struct described {
	const char *key;
	bool required;
	json_t *(*write)(json_t *t);
	int (*read)(json_t *v, json_t *body, char *why, size_t len);
};

static json_t *name_write(json_t *t)
{
	return json_string(gp_client_str(t, "name"));
}

static json_t *models_write(json_t *t)
{
	return models_list(gp_client_str(t, "models"));
}

static json_t *memory_write(json_t *t)
{
	return json_integer(gp_client_int(t, "mem_mib"));
}

static json_t *compute_write(json_t *t)
{
	return json_integer(gp_client_int(t, "compute_pct"));
}

static json_t *isolation_write(json_t *t)
{
	return json_string(gp_client_str(t, "isolation"));
}

static json_t *runtime_write(json_t *t)
{
	return json_string(gp_client_str(t, "runtime"));
}

/* The time limit as --time writes it ("1:00:00"; "unlimited" for none). */
static json_t *time_write(json_t *t)
{
	char text[32];

	gp_time_limit_text((uint64_t)gp_client_int(t, "time_limit_s"), text, sizeof(text));
	return json_string(text);
}

/* A scalar's text; NULL (why said) for a list. */
static const char *scalar(json_t *v, char *why, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	snprintf(why, len, "a list, where one value was expected");
	return NULL;
}

static int name_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);

	if (!text)
		return -EINVAL;
	if (!is_name(text)) {
		snprintf(why, len, "\"%s\" is not a name (letters, digits, '.', '_' or '-', "
				   "first a letter or digit, at most %d)", text, NAME_LEN - 1);
		return -EINVAL;
	}
	json_object_set_new(body, "name", json_string(text));
	return 0;
}

/* A list of models, or one value (a comma list, as --models takes). */
static int models_read(json_t *v, json_t *body, char *why, size_t len)
{
	char text[2 * NAME_LEN] = "";
	size_t used = 0;
	json_t *m;
	size_t i;

	if (json_is_string(v))
		snprintf(text, sizeof(text), "%s", json_string_value(v));
	json_array_foreach(v, i, m) used += (size_t)snprintf(text + used, used < sizeof(text)
								    ? sizeof(text) - used : 0,
							 "%s%s", i ? "," : "",
							 json_string_value(m));
	if (used >= sizeof(text) || strlen(text) >= sizeof(text) - 1) {
		snprintf(why, len, "the models take over %zu bytes written as one list",
			 sizeof(text) - 2);
		return -EINVAL;
	}
	json_object_set_new(body, "models", json_string(text));
	return 0;
}

static int memory_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);
	uint64_t bytes;

	if (!text)
		return -EINVAL;
	if (gp_parse_size_in(text, GP_MiB, &bytes) < 0 || bytes < GP_MiB) {
		snprintf(why, len, "\"%s\" is not a size: MiB as a number (8192), or 8G, 512M",
			 text);
		return -EINVAL;
	}
	json_object_set_new(body, "mem_mib", json_integer((json_int_t)(bytes / GP_MiB)));
	return 0;
}

static int compute_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);
	unsigned pct;

	if (!text)
		return -EINVAL;
	if (!gp_parse_uint(text, 1, 100, "%", &pct)) {
		snprintf(why, len, "\"%s\" is not a share of a device, 1 to 100", text);
		return -EINVAL;
	}
	json_object_set_new(body, "compute_pct", json_integer(pct));
	return 0;
}

static int isolation_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);

	if (!text)
		return -EINVAL;
	if (strcmp(text, "hard") && strcmp(text, "shared")) {
		snprintf(why, len, "\"%s\" is not hard or shared", text);
		return -EINVAL;
	}
	json_object_set_new(body, "isolation", json_string(text));
	return 0;
}

static int runtime_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);

	if (!text || (*text && !gp_runtime_is_one(text, why, len)))
		return -EINVAL;
	json_object_set_new(body, "runtime", json_string(text));
	return 0;
}

static int time_read(json_t *v, json_t *body, char *why, size_t len)
{
	const char *text = scalar(v, why, len);
	uint64_t s;

	if (!text)
		return -EINVAL;
	if (gp_parse_time_limit(*text ? text : "0", &s) < 0) {
		snprintf(why, len, "\"%s\" is not a time limit as --time takes one (10, 0:30, "
				   "2:00:00, 1-12; unlimited)", text);
		return -EINVAL;
	}
	json_object_set_new(body, "time_limit_s", json_integer((json_int_t)s));
	return 0;
}

static const struct described template_described[] = {
	{"name", true, name_write, name_read},
	{"models", false, models_write, models_read},
	{"memory_mib", true, memory_write, memory_read},
	{"compute_pct", true, compute_write, compute_read},
	{"isolation", false, isolation_write, isolation_read},
	{"runtime", false, runtime_write, runtime_read},
	{"time", false, time_write, time_read},
};

#define DESCRIBED_N (sizeof(template_described) / sizeof(template_described[0]))

/* A template (as the server gives it) as its YAML description. */
static json_t *template_description(json_t *t)
{
	json_t *d = json_object();

	for (size_t i = 0; i < DESCRIBED_N; i++)
		json_object_set_new(d, template_described[i].key, template_described[i].write(t));
	return d;
}

/* The row of key, or NULL. */
static const struct described *described_find(const char *key)
{
	for (size_t i = 0; i < DESCRIBED_N; i++)
		if (!strcmp(template_described[i].key, key))
			return &template_described[i];
	return NULL;
}

/* "unknown field "memroy_mib"; did you mean "memory_mib"?" into why. */
static void unknown_field(const char *key, char *why, size_t len)
{
	const char *keys[DESCRIBED_N];
	const char *near;

	for (size_t i = 0; i < DESCRIBED_N; i++)
		keys[i] = template_described[i].key;
	near = gp_closest_find(key, keys, DESCRIBED_N);
	snprintf(why, len, "unknown field \"%s\"%s%s%s (a template has name, models, memory_mib, "
			   "compute_pct, isolation, runtime, time)", key,
		 near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
}

/* A description read (gp_yaml_read_mapping) into the request's body;
 * an exit status, the file's line and the field said when it is wrong. */
static int description_read(const char *path, json_t *d, json_t *lines, json_t *body)
{
	char why[256];
	const char *key;
	json_t *v;

	json_object_foreach(d, key, v) {
		const struct described *f = described_find(key);

		if (!f)
			unknown_field(key, why, sizeof(why));
		if (!f || f->read(v, body, why, sizeof(why)) < 0) {
			fprintf(stderr, "gpupool template add: %s:%lld: %s%s%s%s\n", path,
				(long long)json_integer_value(json_object_get(lines, key)),
				f ? "field \"" : "", f ? key : "", f ? "\": " : "", why);
			return GP_EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < DESCRIBED_N; i++)
		if (template_described[i].required && !json_object_get(d, template_described[i].key)) {
			fprintf(stderr, "gpupool template add: %s: field \"%s\" is missing (gpupool "
					"template show NAME -o yaml writes every field)\n",
				path, template_described[i].key);
			return GP_EXIT_USAGE;
		}
	return GP_EXIT_OK;
}

/* -f FILE ("-": stdin): the template's description, into the body. */
static int description_file(const char *path, json_t *body)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	json_t *d = NULL, *lines = NULL;
	char err[256];
	int status;

	if (!in) {
		fprintf(stderr, "gpupool template add: -f %s: %s\n", path, strerror(errno));
		return GP_EXIT_USAGE;
	}
	if (gp_yaml_read_mapping(in, &d, &lines, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool template add: %s:%s\n", path, err + strlen("line "));
		status = GP_EXIT_USAGE;
	} else {
		status = description_read(path, d, lines, body);
	}
	if (in != stdin)
		fclose(in);
	json_decref(d);
	json_decref(lines);
	return status;
}

static void template_add_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool template add NAME --mem SIZE --compute PCT [--models "
		"LIST]\n"
		"                            [--isolation hard|shared] [--runtime R] [--time "
		"LIMIT]\n"
		"       gpupool template add -f FILE.yaml\n"
		"\n"
		"Adds a named slice shape (admin only), for `gpupool submit --template "
		"NAME`.\n"
		"\n"
		"  --mem SIZE        memory per device: 4G, 4GB, 512M, or MiB as a number\n"
		"                    (4096); G and GB are GiB\n"
		"  --compute PCT     share of the device, 1..100\n"
		"  --models LIST     comma list of device models it is for: parts of\n"
		"                    their names or vendors (default: any)\n"
		"  --isolation I     hard (the share is a cap; default) or shared\n"
		"  --runtime R       what its tasks are built for: cuda, acl, hip, cnrt\n"
		"                    or ze (submit --runtime; default: not said)\n"
		"  --time LIMIT      its tasks' time limit, as submit --time takes it\n"
		"  -f FILE           the template as `gpupool template show NAME -o yaml`\n"
		"                    writes it (name, models, memory_mib, compute_pct,\n"
		"                    isolation, runtime, time; - for stdin), instead of\n"
		"                    NAME and the flags: show, edit, add -f\n");
}

static int set_runtime(struct admin_options *o, const char *value)
{
	char why[256];

	if (!gp_runtime_is_one(value, why, sizeof(why))) {
		fprintf(stderr, "gpupool %s: --runtime %s\n", o->cmd, why);
		return -EINVAL;
	}
	json_object_set_new(o->body, "runtime", json_string(value));
	return 0;
}

static int set_time(struct admin_options *o, const char *value)
{
	uint64_t s;

	if (gp_client_time_limit(o->cmd, "time", value, &s) < 0)
		return -EINVAL;
	json_object_set_new(o->body, "time_limit_s", json_integer((json_int_t)s));
	return 0;
}

static int template_add_option(void *ctx, int c, const char *value)
{
	struct admin_options *o = ctx;

	switch (c) {
	case 'm': return set_mib(o, "mem", "mem_mib", value, false);
	case 'c': return set_uint(o, "compute", "compute_pct", value, 1, 100);
	case 'M': json_object_set_new(o->body, "models", json_string(value)); return 0;
	case 'i':
		if (gp_client_choice(o->cmd, "isolation", value, isolations) < 0)
			return -EINVAL;
		json_object_set_new(o->body, "isolation", json_string(value));
		return 0;
	case 'R': return set_runtime(o, value);
	case 'T': return set_time(o, value);
	case 'f': o->file = value; return 0;
	}
	return -EINVAL;
}

/* --mem and --compute are required: say so before asking the server. */
static int template_add_check(const struct admin_options *o)
{
	if (json_object_get(o->body, "mem_mib") &&
	    json_object_get(o->body, "compute_pct"))
		return GP_EXIT_OK;
	fprintf(stderr, "gpupool template add: --mem and --compute are required\n");
	return GP_EXIT_USAGE;
}

static void template_add_print(json_t *t)
{
	printf("template \"%s\" added\n", gp_client_text(t, "name"));
}

/* template add -f FILE: the description is the whole template; NAME and
 * the flags would contradict it. An exit status. */
static int template_add_file(const struct admin_options *o, int argc, int first)
{
	if (argc > first || json_object_size(o->body)) {
		fprintf(stderr, "gpupool template add: -f takes the whole template from %s; leave "
				"out %s\n",
			o->file, argc > first ? "the NAME (the file's name: field is it)" : "the flags");
		return GP_EXIT_USAGE;
	}
	return description_file(o->file, o->body);
}

/* NAME and the flags: exactly one name, --mem and --compute. */
static int template_add_args(struct admin_options *o, int argc, char **argv, int first)
{
	if (argc - first != 1) {
		fprintf(stderr, "gpupool template add: needs one name, or -f FILE (gpupool "
				"template add --help)\n");
		return GP_EXIT_USAGE;
	}
	json_object_set_new(o->body, "name", json_string(argv[first]));
	return template_add_check(o);
}

static int template_add(int argc, char **argv)
{
	static const struct option own[] = {
		{"mem", required_argument, NULL, 'm'},
		{"compute", required_argument, NULL, 'c'},
		{"models", required_argument, NULL, 'M'},
		{"isolation", required_argument, NULL, 'i'},
		{"runtime", required_argument, NULL, 'R'},
		{"time", required_argument, NULL, 'T'},
		{"file", required_argument, NULL, 'f'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "template add",
		.usage = template_add_usage,
		.options = own,
		.short_options = "f:",
		.option = template_add_option,
	};
	struct admin_options o = {.cmd = cmd.name, .body = json_object()};
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int first, status, r = gp_client_parse(&cmd, &o, argc, argv, &f, &first);

	status = r ? (r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE)
		   : o.file ? template_add_file(&o, argc, first)
			    : template_add_args(&o, argc, argv, first);
	if (!r && status == GP_EXIT_OK)
		status = gp_client_request(&f, cmd.name, "POST", "/v1/templates", o.body, &reply);
	if (!r && status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (!r && status == GP_EXIT_OK)
		template_add_print(reply);
	json_decref(reply);
	json_decref(o.body);
	return status;
}

static void template_ls_usage(FILE *out)
{
	fprintf(out, "usage: gpupool template ls [-o table|yaml|json]\n"
		     "\n"
		     "Lists the templates. -o yaml prints them as YAML descriptions:\n"
		     "name, models (a list; empty: any model), memory_mib, compute_pct,\n"
		     "isolation, runtime (\"\": not said), time (the time limit, as --time\n"
		     "takes it); `template add -f` reads one back.\n");
}

static json_t *templates_description(json_t *reply)
{
	json_t *list = json_array(), *t;
	size_t i;

	json_array_foreach(json_object_get(reply, "templates"), i, t)
		json_array_append_new(list, template_description(t));
	return json_pack("{s:o}", "templates", list);
}

static void template_row(json_t *t)
{
	char mem[32];
	const char *models = gp_client_text(t, "models");

	printf("%-6lld %-16s %6s %6lld%% %-9s %s\n", (long long)gp_client_int(t, "id"),
	       gp_client_text(t, "name"),
	       gp_client_mib_text(gp_client_int(t, "mem_mib"), mem, sizeof(mem)),
	       (long long)gp_client_int(t, "compute_pct"), gp_client_text(t, "isolation"),
	       *models ? models : "any");
}

static void template_ls_print(json_t *reply)
{
	printf("%-6s %-16s %6s %7s %-9s %s\n", "ID", "NAME", "MEM", "COMPUTE",
	       "ISOLATION", "MODELS");
	gp_client_rows(reply, "templates", template_row);
}

static int template_ls(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "template ls",
		.usage = template_ls_usage,
		.option = no_option,
		.yaml_ok = true,
	};
	static const struct request req = {.method = "GET",
					   .path = "/v1/templates",
					   .print = template_ls_print,
					   .describe = templates_description};
	struct admin_options o = {.cmd = cmd.name};

	return run(&cmd, &o, argc, argv, &req);
}

static void template_show_usage(FILE *out)
{
	fprintf(out, "usage: gpupool template show NAME [-o table|yaml|json]\n"
		     "\n"
		     "Shows one template; -o yaml as its YAML description (name, "
		     "models,\n"
		     "memory_mib, compute_pct, isolation, runtime, time), which\n"
		     "`gpupool template add -f FILE` takes back; -o json as the server has "
		     "it.\n");
}

static void template_show_print(json_t *t)
{
	char mem[32], limit[32];
	const char *models = gp_client_text(t, "models"), *runtime = gp_client_text(t, "runtime");

	gp_time_limit_text((uint64_t)gp_client_int(t, "time_limit_s"), limit, sizeof(limit));
	printf("%-10s %s\n%-10s %s\n%-10s %s\n%-10s %lld%%\n%-10s %s\n%-10s %s\n%-10s %s\n",
	       "name", gp_client_text(t, "name"), "models", *models ? models : "any", "memory",
	       gp_client_mib_text(gp_client_int(t, "mem_mib"), mem, sizeof(mem)), "compute",
	       (long long)gp_client_int(t, "compute_pct"), "isolation",
	       gp_client_text(t, "isolation"), "runtime", *runtime ? runtime : "-", "time",
	       limit);
}

/* The template named name in the list the server gave; NULL: none. */
static json_t *template_find(json_t *reply, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(reply, "templates"), i, t)
		if (!strcmp(gp_client_str(t, "name"), name))
			return t;
	return NULL;
}

static int template_show_out(const struct gp_client_flags *f, json_t *reply,
			     const char *name)
{
	json_t *t = template_find(reply, name);

	if (!t) {
		fprintf(stderr,
			"gpupool template show: no template \"%s\" (gpupool template ls "
			"lists them)\n",
			name);
		return GP_EXIT_FAIL;
	}
	if (f->yaml)
		return yaml_out("template show", template_description(t));
	if (f->json)
		gp_client_print_json(t);
	else
		template_show_print(t);
	return GP_EXIT_OK;
}

static int template_show(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "template show",
		.usage = template_show_usage,
		.option = no_option,
		.yaml_ok = true,
	};
	struct admin_options o = {.cmd = cmd.name, .body = json_object()};
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int status, r = parse(&cmd, &o, argc, argv, &f, 1);

	if (r == 0)
		status = gp_client_request(&f, cmd.name, "GET", "/v1/templates", NULL,
					   &reply);
	else
		status = r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	if (r == 0 && status == GP_EXIT_OK)
		status = template_show_out(&f, reply,
					   json_string_value(json_object_get(o.body, "name")));
	json_decref(reply);
	json_decref(o.body);
	return status;
}

static void template_rm_usage(FILE *out)
{
	fprintf(out, "usage: gpupool template rm NAME [-o json|table]\n"
		     "\n"
		     "Removes a template (admin only). Tasks submitted with it keep the\n"
		     "slice they took from it.\n");
}

static void template_rm_print(json_t *t)
{
	printf("template \"%s\" removed\n", gp_client_text(t, "name"));
}

static int template_rm(int argc, char **argv)
{
	static const struct gp_client_command cmd = {
		.name = "template rm",
		.usage = template_rm_usage,
		.option = no_option,
	};

	return named(&cmd, "DELETE", "/v1/templates/", "", template_rm_print, argc, argv);
}

int gp_cmd_template(int argc, char **argv)
{
	static const struct gp_client_sub subs[] = {
		{"add", template_add, "add a slice template (admin)"},
		{"ls", template_ls, "list the templates"},
		{"show", template_show,
		 "show one template (-o yaml: its YAML description)"},
		{"rm", template_rm, "remove a template (admin)"},
	};

	return gp_client_dispatch("template", subs, sizeof(subs) / sizeof(subs[0]), argc,
				  argv);
}

/* ---- audit ------------------------------------------------------------ */

static void audit_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool audit [--limit N] [--after ID] [-o json|table]\n"
		"\n"
		"Shows the newest entries of the audit log (admin only): who changed "
		"what,\n"
		"when, and why.\n"
		"\n"
		"  --limit N   how many entries, 1..%d (default 100)\n"
		"  --after ID  the first entries after entry ID instead, oldest first\n"
		"              (-o json: next_after says where the next page starts)\n",
		AUDIT_MAX);
}

/* --after ID: an entry's id, a number above 0. */
static int audit_after(struct admin_options *o, const char *value)
{
	char *end;

	errno = 0;
	o->after = strtoll(value, &end, 10);
	if (*value >= '0' && *value <= '9' && !*end && !errno && o->after > 0)
		return 0;
	fprintf(stderr,
		"gpupool %s: --after \"%s\" must be an entry's id (a number, as "
		"`gpupool audit -o json` shows)\n",
		o->cmd, value);
	return -EINVAL;
}

static int audit_option(void *ctx, int c, const char *value)
{
	struct admin_options *o = ctx;

	if (c == 'a')
		return audit_after(o, value);
	if (c != 'l')
		return -EINVAL;
	return gp_client_uint(o->cmd, "limit", value, 1, AUDIT_MAX, &o->limit);
}

static void audit_row(json_t *e)
{
	printf("%-20s %-12s %-14s %-16s %s\n", gp_client_text(e, "time"),
	       gp_client_text(e, "who"), gp_client_text(e, "action"),
	       gp_client_text(e, "object"), gp_client_text(e, "detail"));
}

static void audit_print(json_t *reply)
{
	printf("%-20s %-12s %-14s %-16s %s\n", "TIME", "WHO", "ACTION", "OBJECT",
	       "DETAIL");
	gp_client_rows(reply, "audit", audit_row);
}

int gp_cmd_audit(int argc, char **argv)
{
	static const struct option own[] = {
		{"limit", required_argument, NULL, 'l'},
		{"after", required_argument, NULL, 'a'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "audit",
		.usage = audit_usage,
		.options = own,
		.option = audit_option,
	};
	struct admin_options o = {.cmd = cmd.name, .limit = 100};
	struct gp_client_flags f = {0};
	char path[PATH_LEN];
	json_t *reply = NULL;
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.after)
		snprintf(path, sizeof(path), "/v1/audit?limit=%u&after=%lld", o.limit, o.after);
	else
		snprintf(path, sizeof(path), "/v1/audit?limit=%u", o.limit);
	status = gp_client_request(&f, cmd.name, "GET", path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		audit_print(reply);
	json_decref(reply);
	return status;
}
