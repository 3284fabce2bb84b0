/* cmd-region.c — `gpupool region ls|show|set`: reads and changes the
 * limits in the devices' shared regions (shim/region.h) while tasks run.
 *
 * The devices are those with a file device-UUID.region (not managed) or
 * device-UUID.limits (managed) in one directory (--dir, else
 * $GPUPOOL_RUN_DIR, else the default of gp_region_dir). Existing regions
 * are opened with a total of 0, so this command never makes one.
 * Output is a table, or with --json one JSON object.
 *
 * On a managed device (one with a limits table, device-UUID.limits, kept
 * by gpupool server's agent) the limits shown are the table's, and `set`
 * writes the table, which only its owner can: anyone else is refused
 * with exit 1 and pointed to `gpupool task set`. Its owner too is
 * refused without --force for a server's task (task-N), since the
 * server's books would not follow; with --force the table is written and
 * the server is told (a live change of the task's compute, audited with
 * who forced it). */
#include "cli/cmd-region.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/text.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "shim/region.h"

#define MiB (1024ULL * 1024)
#define DEVICES_MAX 256
#define PREFIX "device-"
#define SUFFIX ".region"
#define LIMITS_SUFFIX ".limits"

enum { SET_MEM = 1, SET_COMPUTE = 2, SET_PRIORITY = 4, SET_ISOLATION = 8 };

struct region_options {
	const char *sub;                /* "ls", "show" or "set" */
	const char *dir;
	char dir_buf[PATH_MAX];         /* the directory in use */
	bool json;
	unsigned set;                   /* SET_* flags given */
	const char *mem_text;
	struct gp_task_limits limits;   /* the values given */
	bool force;                     /* set: write a managed device's table anyway */
	const char *arg[2];             /* UUID, TASK */
};

/* A device's region, read once. */
struct device_view {
	char uuid[GP_UUID_STR_MAX];
	bool managed;                   /* the limits are the limits table's */
	uint64_t total;
	int tasks;
	struct gp_task_info task[GP_REGION_TASKS];
};

static void region_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool region ls [--dir DIR] [--json]\n"
		"       gpupool region show UUID [--dir DIR] [--json]\n"
		"       gpupool region set UUID TASK [--mem SIZE] [--compute PCT]\n"
		"                          [--priority N] [--isolation hard|shared] [--dir DIR]\n"
		"                          [--force]\n"
		"\n"
		"Shows and changes the limits of the tasks sharing each device, as the\n"
		"processes of those tasks see them (changes apply while they run).\n"
		"Where gpupool server keeps a device's limits (device-UUID.limits), only\n"
		"the server changes them: use `gpupool task set` there. Its owner may\n"
		"--force a change (an emergency): the table is written, and the server\n"
		"is told, so that its books follow (a task-N's compute; audited).\n"
		"\n"
		"  --dir DIR        where the regions are (default: $GPUPOOL_RUN_DIR, else\n"
		"                   /run/gpupool when writable, else /tmp/gpupool-UID)\n"
		"  --json           one JSON object\n"
		"  --mem SIZE       memory limit: 4G, 4GB, 512M, or MiB as a number (4096);\n"
		"                   0 = the whole device\n"
		"  --compute PCT    share of the device, 1..100\n"
		"  --priority N     0..9, higher first\n"
		"  --isolation I    hard (the share is a cap) or shared (idle time may be\n"
		"                   borrowed)\n");
}

static const char *isolation_name(enum gp_isolation i)
{
	return i == GP_ISOLATION_SHARED ? "shared" : "hard";
}


static int parse_value(struct region_options *o, int c, const char *value)
{
	uint64_t bytes;

	switch (c) {
	case 'm':
		if (gp_parse_size_in(value, GP_MiB, &bytes) < 0) {
			fprintf(stderr, "gpupool region %s: --mem \"%s\" is not a size like 4G, 4GB, 512M or 4096 (MiB)\n",
				o->sub, value);
			return -EINVAL;
		}
		o->limits.mem_bytes = bytes;
		o->mem_text = value;
		o->set |= SET_MEM;
		return 0;
	case 'c':
		if (!gp_parse_uint(value, 1, 100, "%", &o->limits.compute)) {
			fprintf(stderr, "gpupool region %s: --compute \"%s\" must be a percent from 1 to 100\n",
				o->sub, value);
			return -EINVAL;
		}
		o->set |= SET_COMPUTE;
		return 0;
	case 'p':
		if (!gp_parse_uint(value, 0, 9, NULL, &o->limits.priority)) {
			fprintf(stderr, "gpupool region %s: --priority \"%s\" must be a whole number from 0 to 9\n",
				o->sub, value);
			return -EINVAL;
		}
		o->set |= SET_PRIORITY;
		return 0;
	case 'i':
		if (!strcmp(value, "hard"))
			o->limits.isolation = GP_ISOLATION_HARD;
		else if (!strcmp(value, "shared"))
			o->limits.isolation = GP_ISOLATION_SHARED;
		else {
			fprintf(stderr, "gpupool region %s: --isolation \"%s\" must be hard or shared\n",
				o->sub, value);
			return -EINVAL;
		}
		o->set |= SET_ISOLATION;
		return 0;
	}
	return -EINVAL;
}

/* Parses a subcommand's flags and its `want` positional arguments.
 * Returns 1 for --help, 0, or -EINVAL (the message is out). */
static int parse_args(int argc, char **argv, struct region_options *o, int want)
{
	static const struct option all[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "mem", required_argument, NULL, 'm' },
		{ "compute", required_argument, NULL, 'c' },
		{ "priority", required_argument, NULL, 'p' },
		{ "isolation", required_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool is_set = !strcmp(o->sub, "set");
	int c, index = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", all, &index)) != -1) {
		switch (c) {
		case 'd': o->dir = optarg; break;
		case 'h': region_usage(stdout); return 1;
		case 'f':
			if (!is_set)
				goto not_here;
			o->force = true;
			break;
		case 'j':
			if (is_set)
				goto not_here;
			o->json = true;
			break;
		case 'm': case 'c': case 'p': case 'i':
			if (!is_set)
				goto not_here;
			if (parse_value(o, c, optarg) < 0)
				return -EINVAL;
			break;
		default:
			region_usage(stderr);
			return -EINVAL;
		}
	}
	if (argc - optind != want) {
		fprintf(stderr, "gpupool region %s: %s\n", o->sub,
			want == 0 ? "takes no arguments" :
			want == 1 ? "needs a device UUID" : "needs a device UUID and a task id");
		region_usage(stderr);
		return -EINVAL;
	}
	for (int i = 0; i < want; i++)
		o->arg[i] = argv[optind + i];
	gp_region_dir(o->dir, o->dir_buf, sizeof(o->dir_buf));
	return 0;
not_here:
	fprintf(stderr, "gpupool region %s: --%s applies only to %s\n", o->sub,
		all[index].name, is_set ? "ls and show" : "set");
	return -EINVAL;
}

/* `set` on a managed device by someone who cannot write its table. */
static int kept_by_server(const struct region_options *o)
{
	fprintf(stderr, "gpupool region set: %s's limits on %s are kept by gpupool server ("
		PREFIX "%s" LIMITS_SUFFIX " is not writable by you); change them with"
		" `gpupool task set`\n", o->arg[1], o->arg[0], o->arg[0]);
	return GP_EXIT_FAIL;
}

/* Is `id` the region id of a gpupool server's task ("task-N"; N in
 * *ret_id)? (A Slurm step's or a pod's are kept by no server's books.) */
static bool servers_task(const char *id, long long *ret_id)
{
	long long n;
	int end = 0;

	if (sscanf(id, "task-%lld%n", &n, &end) != 1 || id[end] || n <= 0)
		return false;
	if (ret_id)
		*ret_id = n;
	return true;
}

/* Can the caller write the managed device's limits table? (Who cannot
 * is refused by the table itself: kept_by_server.) */
static bool table_writable(const struct region_options *o)
{
	char path[PATH_MAX + 128];

	snprintf(path, sizeof(path), "%s/" PREFIX "%s" LIMITS_SUFFIX, o->dir_buf, o->arg[0]);
	return access(path, W_OK) == 0;
}

/* `set` on a server's task of a managed device without --force. */
static int not_behind_servers_back(const struct region_options *o)
{
	fprintf(stderr, "gpupool region set: the limits on %s are gpupool server's, whose books "
		"would not follow a change made here (it would go on counting %s at its old "
		"share); change it with `gpupool task set`, or give --force to write the table "
		"anyway (the server is then told)\n", o->arg[0], o->arg[1]);
	return GP_EXIT_FAIL;
}

/* After a forced change of a managed device: the server's books follow
 * through the live change of a server's task ("task-N"), audited with
 * who forced it. An exit status: 1 when the server could not be told. */
static int server_told(const struct region_options *o, const struct gp_task_limits *l)
{
	struct gp_client_flags f = { 0 };
	long long id;
	char path[64], reason[128];
	json_t *body, *reply = NULL;
	int status;

	if (!servers_task(o->arg[1], &id) || !(o->set & (SET_COMPUTE | SET_PRIORITY))) {
		fprintf(stderr, "gpupool region set: forced; the server's books keep %s's old %s: "
			"tell it with `gpupool task set`\n", o->arg[1],
			o->set & SET_MEM ? "memory" : "limits");
		return GP_EXIT_OK;
	}
	snprintf(path, sizeof(path), "/v1/tasks/%lld", id);
	snprintf(reason, sizeof(reason), "forced with gpupool region set --force by uid %u",
		 (unsigned)getuid());
	body = json_pack("{s:s}", "reason", reason);
	if (o->set & SET_COMPUTE)
		json_object_set_new(body, "compute_pct", json_integer(l->compute));
	if (o->set & SET_PRIORITY)
		json_object_set_new(body, "priority", json_integer(l->priority));
	status = gp_client_request(&f, "region set", "PATCH", path, body, &reply);
	if (status != GP_EXIT_OK)
		fprintf(stderr, "gpupool region set: forced, but the server was not told: its books "
			"keep task %lld's old share\n", id);
	json_decref(reply);
	json_decref(body);
	return status;
}

/* Opens an existing region, or says why not; returns an exit status. */
static int region_open(const struct region_options *o, const char *uuid,
		       struct gp_region **ret)
{
	int r = gp_region_open(o->dir, uuid, 0, ret);

	if (r == -EACCES && !strcmp(o->sub, "set") && gp_region_is_managed_in(o->dir, uuid))
		return kept_by_server(o);
	switch (r) {
	case 0:
		return GP_EXIT_OK;
	case -EINVAL:
		fprintf(stderr, "gpupool region %s: \"%s\" is not a device UUID\n", o->sub, uuid);
		return GP_EXIT_USAGE;
	case -ENOENT:
		fprintf(stderr, "gpupool region %s: no region for device %s in %s\n",
			o->sub, uuid, o->dir_buf);
		return GP_EXIT_FAIL;
	case -EPROTO:
		fprintf(stderr, "gpupool region %s: %s/" PREFIX "%s" SUFFIX
			" was made by another version of gpupool\n", o->sub, o->dir_buf, uuid);
		return GP_EXIT_FAIL;
	case -EIO:
		fprintf(stderr, "gpupool region %s: %s/" PREFIX "%s" SUFFIX
			" was left half made; the next task on the device replaces it\n",
			o->sub, o->dir_buf, uuid);
		return GP_EXIT_FAIL;
	default:
		fprintf(stderr, "gpupool region %s: %s/" PREFIX "%s" SUFFIX ": %s\n",
			o->sub, o->dir_buf, uuid, strerror(-r));
		return GP_EXIT_FAIL;
	}
}

static int device_read(const struct region_options *o, const char *uuid,
		       struct device_view *v)
{
	struct gp_region *r;
	int status = region_open(o, uuid, &r);

	if (status != GP_EXIT_OK)
		return status;
	snprintf(v->uuid, sizeof(v->uuid), "%s", uuid);
	v->managed = gp_region_is_managed(r);
	v->total = gp_region_total(r);
	v->tasks = gp_region_tasks(r, v->task, GP_REGION_TASKS);
	if (v->tasks > GP_REGION_TASKS)
		v->tasks = GP_REGION_TASKS;
	gp_region_close(r);
	return GP_EXIT_OK;
}

static uint64_t effective_limit(const struct device_view *v, const struct gp_task_info *t)
{
	return t->limits.mem_bytes ? t->limits.mem_bytes : v->total;
}

/* ---- output ---------------------------------------------------------- */

static json_t *task_json(const struct device_view *v, const struct gp_task_info *t)
{
	json_t *obj = json_object();

	json_object_set_new(obj, "id", json_string(t->id));
	json_object_set_new(obj, "mem_limit_bytes", json_integer((json_int_t)t->limits.mem_bytes));
	json_object_set_new(obj, "mem_limit_mib",
			    json_integer((json_int_t)(effective_limit(v, t) / MiB)));
	json_object_set_new(obj, "mem_used_bytes", json_integer((json_int_t)t->mem_used));
	json_object_set_new(obj, "mem_used_mib", json_integer((json_int_t)(t->mem_used / MiB)));
	json_object_set_new(obj, "compute", json_integer(t->limits.compute));
	json_object_set_new(obj, "priority", json_integer(t->limits.priority));
	json_object_set_new(obj, "isolation", json_string(isolation_name(t->limits.isolation)));
	json_object_set_new(obj, "processes", json_integer(t->processes));
	json_object_set_new(obj, "used_ms", json_integer((json_int_t)(t->used_ns / 1000000)));
	json_object_set_new(obj, "generation", json_integer((json_int_t)t->generation));
	json_object_set_new(obj, "managed", json_boolean(t->managed));
	return obj;
}

static json_t *device_json(const struct device_view *v)
{
	json_t *obj = json_object(), *tasks = json_array();

	json_object_set_new(obj, "uuid", json_string(v->uuid));
	json_object_set_new(obj, "managed", json_boolean(v->managed));
	json_object_set_new(obj, "total_bytes", json_integer((json_int_t)v->total));
	json_object_set_new(obj, "total_mib", json_integer((json_int_t)(v->total / MiB)));
	for (int i = 0; i < v->tasks; i++)
		json_array_append_new(tasks, task_json(v, &v->task[i]));
	json_object_set_new(obj, "tasks", tasks);
	return obj;
}

static void json_print(json_t *obj)
{
	json_dumpf(obj, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(obj);
}

static void table_header(void)
{
	printf("%-40s  %-16s %12s %9s %8s %5s  %-9s %5s\n", "DEVICE", "TASK", "MEM MiB",
	       "USED MiB", "COMPUTE", "PRIO", "ISOLATION", "PROCS");
}

static void table_rows(const struct device_view *v)
{
	if (v->tasks == 0)
		printf("%-40s  %-16s %12s %9s %8s %5s  %-9s %5s\n", v->uuid, "-", "-", "-",
		       "-", "-", "-", "-");
	for (int i = 0; i < v->tasks; i++) {
		const struct gp_task_info *t = &v->task[i];
		char limit[32], compute[8], id[4 * sizeof(t->id) + 1];

		snprintf(limit, sizeof(limit), "%llu%s",
			 (unsigned long long)(effective_limit(v, t) / MiB),
			 t->limits.mem_bytes ? "" : " (all)");
		snprintf(compute, sizeof(compute), "%u%%", t->limits.compute);
		/* The region is written by the tasks: what they put there is escaped. */
		gp_text_escape_n(t->id, strnlen(t->id, sizeof(t->id)), id, sizeof(id));
		printf("%-40s  %-16s %12s %9llu %8s %5u  %-9s %5u\n", v->uuid, id, limit,
		       (unsigned long long)(t->mem_used / MiB), compute, t->limits.priority,
		       isolation_name(t->limits.isolation), t->processes);
	}
}

/* ---- subcommands ----------------------------------------------------- */

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The UUID in a file name device-UUID.region or device-UUID.limits, or
 * NULL (malloc'd). */
static char *uuid_of_name(const char *name)
{
	static const char *const suffixes[] = { SUFFIX, LIMITS_SUFFIX };
	size_t len = strlen(name), pre = strlen(PREFIX);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t suf = strlen(suffixes[i]);

		if (len > pre + suf && !strncmp(name, PREFIX, pre) &&
		    !strcmp(name + len - suf, suffixes[i]))
			return strndup(name + pre, len - pre - suf);
	}
	return NULL;
}

/* Sorts the n names and frees the duplicates; how many are left. */
static int names_unique(char **names, int n)
{
	int kept = 0;

	qsort(names, (size_t)n, sizeof(*names), compare_names);
	for (int i = 0; i < n; i++) {
		if (kept && !strcmp(names[kept - 1], names[i]))
			free(names[i]);
		else
			names[kept++] = names[i];
	}
	return kept;
}

/* The UUIDs of the devices in the directory, sorted; the caller frees
 * each and the array. */
static int list_uuids(const struct region_options *o, char ***ret, int *ret_n)
{
	char **names = NULL;
	struct dirent *e;
	DIR *d;
	int n = 0;

	d = opendir(o->dir_buf);
	if (!d) {
		fprintf(stderr, "gpupool region ls: no regions: %s: %s\n", o->dir_buf,
			strerror(errno));
		return GP_EXIT_FAIL;
	}
	names = calloc(DEVICES_MAX, sizeof(*names));
	while (names && n < DEVICES_MAX && (e = readdir(d))) {
		names[n] = uuid_of_name(e->d_name);
		n += names[n] != NULL;
	}
	closedir(d);
	if (!names) {
		fprintf(stderr, "gpupool region ls: out of memory\n");
		return GP_EXIT_FAIL;
	}
	*ret = names;
	*ret_n = names_unique(names, n);
	return GP_EXIT_OK;
}

static int region_ls(const struct region_options *o)
{
	json_t *devices = o->json ? json_array() : NULL, *obj;
	struct device_view *v = malloc(sizeof(*v));
	int status, n = 0, shown = 0;
	char **uuid = NULL;

	status = v ? list_uuids(o, &uuid, &n) : GP_EXIT_FAIL;
	for (int i = 0; i < n; i++) {
		int s = device_read(o, uuid[i], v);

		free(uuid[i]);
		if (s != GP_EXIT_OK) {
			status = GP_EXIT_FAIL;  /* said why; show the others */
			continue;
		}
		if (o->json) {
			json_array_append_new(devices, device_json(v));
			continue;
		}
		if (shown++ == 0)
			table_header();
		table_rows(v);
	}
	free(uuid);
	free(v);
	if (o->json && status == GP_EXIT_OK) {
		obj = json_object();
		json_object_set_new(obj, "dir", json_string(o->dir_buf));
		json_object_set_new(obj, "devices", devices);
		json_print(obj);
	} else {
		json_decref(devices);
	}
	if (!o->json && status == GP_EXIT_OK && n == 0)
		printf("no device regions in %s\n", o->dir_buf);
	return status;
}

static int region_show(const struct region_options *o)
{
	struct device_view *v = malloc(sizeof(*v));
	int status = v ? device_read(o, o->arg[0], v) : GP_EXIT_FAIL;

	if (status == GP_EXIT_OK && o->json) {
		json_print(device_json(v));
	} else if (status == GP_EXIT_OK) {
		printf("device %s: %llu MiB, %s/" PREFIX "%s" SUFFIX "\n", v->uuid,
		       (unsigned long long)(v->total / MiB), o->dir_buf, v->uuid);
		if (v->managed)
			printf("limits kept by gpupool server in %s/" PREFIX "%s" LIMITS_SUFFIX "\n",
			       o->dir_buf, v->uuid);
		putchar('\n');
		table_header();
		table_rows(v);
	}
	free(v);
	return status;
}

static const struct gp_task_info *task_by_id(const struct device_view *v, const char *id)
{
	for (int i = 0; i < v->tasks; i++)
		if (!strcmp(v->task[i].id, id))
			return &v->task[i];
	return NULL;
}

/* The task's limits now, with the fields given on the command line. */
static struct gp_task_limits limits_merge(const struct region_options *o,
					  struct gp_task_limits l)
{
	if (o->set & SET_MEM)
		l.mem_bytes = o->limits.mem_bytes;
	if (o->set & SET_COMPUTE)
		l.compute = o->limits.compute;
	if (o->set & SET_PRIORITY)
		l.priority = o->limits.priority;
	if (o->set & SET_ISOLATION)
		l.isolation = o->limits.isolation;
	return l;
}

static int set_in(const struct region_options *o, struct gp_region *r, struct device_view *v)
{
	const char *uuid = o->arg[0], *id = o->arg[1];
	const struct gp_task_info *t;
	struct gp_task_limits l;
	int err;

	v->managed = gp_region_is_managed(r);
	v->total = gp_region_total(r);
	v->tasks = gp_region_tasks(r, v->task, GP_REGION_TASKS);
	if (v->tasks > GP_REGION_TASKS)
		v->tasks = GP_REGION_TASKS;
	if ((o->set & SET_MEM) && o->limits.mem_bytes > v->total) {
		fprintf(stderr, "gpupool region set: --mem %s is more than the device's %llu MiB\n",
			o->mem_text, (unsigned long long)(v->total / MiB));
		return GP_EXIT_USAGE;
	}
	t = task_by_id(v, id);
	if (t && v->managed && servers_task(id, NULL) && !o->force && table_writable(o))
		return not_behind_servers_back(o);
	err = -ENOENT;
	if (t) {
		l = limits_merge(o, t->limits);
		err = gp_region_set(r, id, &l);
	}
	if (err == -ENOENT) {
		fprintf(stderr, "gpupool region set: no task \"%s\" on device %s (%s)\n", id,
			uuid, o->dir_buf);
		return GP_EXIT_FAIL;
	}
	if (err == -EACCES && v->managed)
		return kept_by_server(o);
	if (err < 0) {
		fprintf(stderr, "gpupool region set: %s: %s\n", id, strerror(-err));
		return err == -EINVAL ? GP_EXIT_USAGE : GP_EXIT_FAIL;
	}
	printf("%s %s: memory %llu MiB%s, compute %u%%, priority %u, %s\n", uuid, id,
	       (unsigned long long)((l.mem_bytes ? l.mem_bytes : v->total) / MiB),
	       l.mem_bytes ? "" : " (all)", l.compute, l.priority, isolation_name(l.isolation));
	return v->managed && servers_task(id, NULL) ? server_told(o, &l) : GP_EXIT_OK;
}

static int region_set(const struct region_options *o)
{
	struct device_view *v;
	struct gp_region *r;
	int status;

	if (!o->set) {
		fprintf(stderr, "gpupool region set: nothing to change; give --mem, --compute, --priority or --isolation\n");
		return GP_EXIT_USAGE;
	}
	status = region_open(o, o->arg[0], &r);
	if (status != GP_EXIT_OK)
		return status;
	v = malloc(sizeof(*v));
	status = v ? set_in(o, r, v) : GP_EXIT_FAIL;
	free(v);
	gp_region_close(r);
	return status;
}

int gp_cmd_region(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(const struct region_options *o);
		int args;
	} subs[] = {
		{ "ls", region_ls, 0 },
		{ "show", region_show, 1 },
		{ "set", region_set, 2 },
	};
	struct region_options o = { 0 };

	if (argc < 2) {
		region_usage(stderr);
		return GP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		region_usage(stdout);
		return GP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		int r;

		if (strcmp(argv[1], subs[i].name))
			continue;
		o.sub = subs[i].name;
		r = parse_args(argc - 1, argv + 1, &o, subs[i].args);
		if (r != 0)
			return r > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
		return subs[i].run(&o);
	}
	fprintf(stderr, "gpupool region: unknown subcommand \"%s\"; use ls, show or set\n", argv[1]);
	return GP_EXIT_USAGE;
}
