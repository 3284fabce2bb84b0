/* cmd-sim-history.c — `gpupool sim --history`: what-if on the pool's own
 * tasks (issue 16; docs/operations.md). Reads a period's tasks, their
 * usage records and the pool's cards through the server's API (GET
 * /v1/tasks, /v1/usage, /v1/devices; /v1/advice for --advised), gives
 * them to the what-if module the server's POST /v1/sim/history uses too
 * (server/whatif.h: the options, the replays, the figures), and prints
 * both set-ups side by side with their ratios, as a table or JSON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "server/whatif.h"

#define CMD		"sim --history"
#define OVERRIDES_SHOWN 6 /* on the table's line; -o json has them all */
#define TASK_PAGE	"2000"
#define USAGE_PAGE	"20000"
#define PATH_LEN	256

struct hist_options {
	struct gp_whatif *w;
	bool prices; /* --price given: the table has a cost row */
};

static void history_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool sim --history [--since DATE | --month YYYY-MM]\n"
		"                   [--policy NAME] [--recorded-policy NAME]\n"
		"                   [--cards MODEL=N,...] [--add-cards MODEL=N,...]\n"
		"                   [--card-mem MODEL=SIZE]... [--template "
		"NAME=MEM,PCT]...\n"
		"                   [--task NAME[@TENANT]=MEM,PCT]... [--advised]\n"
		"                   [--price MODEL=PRICE]... [-o table|json]\n"
		"\n"
		"Replays the tasks the pool ran in a period, in time, as recorded and "
		"under a\n"
		"variant, and prints both side by side: makespan, allocated and "
		"physical\n"
		"utilization of the pool, queue waits, tasks never placed, GPU-hours and "
		"the\n"
		"bill. A task keeps its recorded run unless the variant's share is below "
		"the\n"
		"share it used: then its work (device time used) stretches it; one "
		"whose\n"
		"memory is below its recorded peak would fail, and is counted so and\n"
		"replayed as recorded (docs/operations.md).\n"
		"\n"
		"  --since DATE       tasks submitted since YYYY-MM-DD[THH:MM[:SS]] "
		"(UTC)\n"
		"  --month YYYY-MM    tasks submitted in that month (default: this one)\n"
		"  --policy NAME      the variant's placement policy (`gpupool "
		"policies`)\n"
		"  --recorded-policy NAME  the server's --policy (default: default)\n"
		"  --cards MODEL=N,...     the variant's cards instead of the pool's: N\n"
		"                     of each model (a part of its name, as the pool has "
		"it)\n"
		"  --add-cards MODEL=N,... more cards (N below 0: fewer)\n"
		"  --card-mem MODEL=SIZE   memory of a model the pool has no card of "
		"(80G)\n"
		"  --template NAME=MEM,PCT  the slice of a template's tasks (MEM in MiB "
		"or\n"
		"                     a size like 4G; either may be left empty: kept)\n"
		"  --task NAME[@TENANT]=MEM,PCT  the slice of the tasks of no template "
		"so\n"
		"                     named (of that tenant)\n"
		"  --advised          the slices `gpupool advise` proposes (GET "
		"/v1/advice)\n"
		"  --price MODEL=PRICE     a model's price per GPU-hour, for the bill\n"
		"\n"
		"The server is found, and the caller known, as for every client command\n"
		"(--socket PATH or http://HOST:PORT, --token, --token-file); a tenant\n"
		"replays its own tasks.\n");
}

/* ---- options ------------------------------------------------------------ */

/* The getopt letter's option, by its name without the dashes. */
static const char *option_name(int c)
{
	switch (c) {
	case 's': return "since";
	case 'm': return "month";
	case 'P': return "policy";
	case 'R': return "recorded-policy";
	case 'c': return "cards";
	case 'a': return "add-cards";
	case 'M': return "card-mem";
	case 'T': return "template";
	case 'K': return "task";
	case 'A': return "advised";
	case 'p': return "price";
	}
	return NULL;
}

static int history_option(void *ctx, int c, const char *value)
{
	struct hist_options *o = ctx;
	const char *name = option_name(c);
	char err[GP_WHATIF_ERROR_MAX];

	if (c == 'H')
		return 0;
	if (!name)
		return -EINVAL;
	o->prices |= c == 'p';
	if (gp_whatif_option(o->w, name, c == 'A' ? NULL : value, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "gpupool " CMD ": %s\n", err);
	return -EINVAL;
}

/* ---- reading the history ------------------------------------------------ */

/* Every page of GET path (with ?after=), each item given to take; an
 * exit status. */
static int pages_read(const struct gp_client_flags *f, const char *path, const char *list,
		      int (*take)(struct gp_whatif *w, json_t *item), struct gp_whatif *w)
{
	json_int_t after = 0;

	for (;;) {
		char page[PATH_LEN], number[24];
		json_t *reply = NULL, *item, *next;
		int status, err = 0;
		size_t i;

		snprintf(page, sizeof(page), "%s", path);
		snprintf(number, sizeof(number), "%lld", (long long)after);
		gp_client_query_add(page, sizeof(page), "after", number);
		status = gp_client_request(f, CMD, "GET", page, NULL, &reply);
		if (status != GP_EXIT_OK)
			return status;
		json_array_foreach(json_object_get(reply, list), i, item)
		{
			if (err == 0)
				err = take(w, item);
		}
		next = json_object_get(reply, "next_after");
		after = json_integer_value(next);
		json_decref(reply);
		if (err < 0) {
			fprintf(stderr, "gpupool " CMD ": %s\n", strerror(-err));
			return GP_EXIT_FAIL;
		}
		if (!json_is_integer(next))
			return GP_EXIT_OK;
	}
}

/* The items of one GET's list, each given to take; an exit status. */
static int list_read(const struct gp_client_flags *f, const char *path, const char *list,
		     int (*take)(struct gp_whatif *w, json_t *item), struct gp_whatif *w)
{
	json_t *reply = NULL, *item;
	int status = gp_client_request(f, CMD, "GET", path, NULL, &reply), err = 0;
	size_t i;

	json_array_foreach(json_object_get(reply, list), i, item)
	{
		if (err == 0)
			err = take(w, item);
	}
	json_decref(reply);
	if (status == GP_EXIT_OK && err < 0) {
		fprintf(stderr, "gpupool " CMD ": %s\n", strerror(-err));
		return GP_EXIT_FAIL;
	}
	return status;
}

/* The pool's cards, the period's tasks and their records, and with
 * --advised the advice of the period's month; an exit status. */
static int history_load(const struct gp_client_flags *f, struct gp_whatif *w)
{
	char path[PATH_LEN], since[24];
	int status = list_read(f, "/v1/devices", "devices", gp_whatif_card, w);

	if (status == GP_EXIT_OK)
		status = pages_read(f, "/v1/tasks?limit=" TASK_PAGE, "tasks", gp_whatif_task, w);
	snprintf(path, sizeof(path), "/v1/usage?limit=" USAGE_PAGE);
	snprintf(since, sizeof(since), "%lld", (long long)gp_whatif_from_ms(w));
	gp_client_query_add(path, sizeof(path), "since_ms", since);
	if (status == GP_EXIT_OK)
		status = pages_read(f, path, "usage", gp_whatif_record, w);
	snprintf(path, sizeof(path), "/v1/advice");
	gp_client_query_add(path, sizeof(path), "month", gp_whatif_month(w));
	if (status == GP_EXIT_OK && gp_whatif_advised(w))
		status = list_read(f, path, "advice", gp_whatif_advice, w);
	return status;
}

/* ---- the table ---------------------------------------------------------- */

static double number(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* 12.3s, 4m05s, 3h20m, 12d04h. */
static const char *duration_text(double s, char *buf, size_t size)
{
	long long t = llround(s);

	if (s < 120)
		snprintf(buf, size, "%.1fs", s);
	else if (t < 7200)
		snprintf(buf, size, "%lldm%02llds", t / 60, t % 60);
	else if (t < 172800)
		snprintf(buf, size, "%lldh%02lldm", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, size, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
	return buf;
}

/* A row: the recorded figure a, and with a variant its figure b and
 * their ratio ("-" where a is 0). */
static void row(const char *label, const char *format, double a, double b, bool variant)
{
	char left[32], right[32] = "";

	snprintf(left, sizeof(left), format, a);
	if (variant)
		snprintf(right, sizeof(right), format, b);
	printf("%-28.28s %12s %12s", label, left, right);
	if (variant && a != 0)
		printf(" %7.2f\n", b / a);
	else
		printf(" %7s\n", variant ? "-" : "");
}

static void row_text(const char *label, const char *a, const char *b, double ratio)
{
	printf("%-28s %12s %12s", label, a, b ? b : "");
	if (b && ratio >= 0)
		printf(" %7.2f\n", ratio);
	else
		printf(" %7s\n", b ? "-" : "");
}

/* "2 x Tesla T4, 1 x NVIDIA A100-SXM4-80GB" */
static void pool_text(json_t *run, char *buf, size_t size)
{
	size_t used = 0, i;
	json_t *m;

	buf[0] = '\0';
	json_array_foreach(json_object_get(run, "models"), i, m)
	{
		if (used < size && gp_client_int(m, "cards"))
			used += (size_t)snprintf(buf + used, size - used, "%s%lld x %s",
						 used ? ", " : "",
						 (long long)gp_client_int(m, "cards"),
						 gp_client_text(m, "model"));
	}
}

static void setup_line(const char *label, json_t *run)
{
	json_t *over = json_object_get(run, "overrides"), *x;
	size_t n = json_array_size(over), i;
	char pool[512];

	pool_text(run, pool, sizeof(pool));
	printf("%-9s %s; policy %s; ", label, pool, gp_client_text(run, "policy"));
	if (!n) {
		printf("slices as recorded\n");
		return;
	}
	printf("slices");
	json_array_foreach(over, i, x)
	{
		char mem[16] = "";

		if (i == OVERRIDES_SHOWN)
			break;
		if (gp_client_int(x, "mem_mib"))
			gp_client_mib_text(gp_client_int(x, "mem_mib"), mem, sizeof(mem));
		printf("%s %s %s%s%s=%s,", i ? "," : "", gp_client_text(x, "kind"),
		       gp_client_text(x, "name"),
		       json_is_string(json_object_get(x, "tenant")) ? "@" : "",
		       gp_client_text(x, "tenant"), mem);
		if (gp_client_int(x, "compute_pct"))
			printf("%lld%%", (long long)gp_client_int(x, "compute_pct"));
	}
	if (n > OVERRIDES_SHOWN)
		printf(" and %zu more (-o json lists them)", n - OVERRIDES_SHOWN);
	putchar('\n');
}

/* The GPU-hours of model `name` in run (0 when it has none). */
static double hours_of(json_t *run, const char *name)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(run, "models"), i, m)
	{
		if (!strcmp(gp_client_str(m, "model"), name))
			return number(m, "gpu_hours");
	}
	return 0;
}

/* A row per model of either pool: the recorded one's, then the new ones. */
static void model_rows(json_t *rec, json_t *var)
{
	json_t *names = json_array(), *m, *seen;
	size_t i, k;

	json_array_foreach(json_object_get(rec, "models"), i, m)
		json_array_append(names, json_object_get(m, "model"));
	json_array_foreach(json_object_get(var, "models"), i, m)
	{
		bool known = false;

		json_array_foreach(names, k, seen)
			known = known || json_equal(seen, json_object_get(m, "model"));
		if (!known)
			json_array_append(names, json_object_get(m, "model"));
	}
	json_array_foreach(names, i, m)
	{
		char label[128];
		const char *name = json_string_value(m);

		snprintf(label, sizeof(label), "GPU-hours %s", gp_client_safe(name));
		row(label, "%.4f", hours_of(rec, name), var ? hours_of(var, name) : 0,
		    var != NULL);
	}
	json_decref(names);
}

/* The models of run that no --price matches, in a line; none: nothing. */
static void unpriced_line(json_t *run)
{
	bool first = true;
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(run, "models"), i, m)
	{
		if (json_is_true(json_object_get(m, "priced")))
			continue;
		printf("%s%s", first ? "no --price matches (cost 0): " : ", ",
		       gp_client_text(m, "model"));
		first = false;
	}
	if (!first)
		putchar('\n');
}

/* "of 2026-12", or "since 2026-12-03 10:00 UTC". */
static void period_text(json_t *j, char *buf, size_t size)
{
	time_t t = (time_t)(gp_client_int(j, "from_ms") / 1000);
	struct tm tm;

	if (json_is_string(json_object_get(j, "month"))) {
		snprintf(buf, size, "of %s", gp_client_text(j, "month"));
		return;
	}
	gmtime_r(&t, &tm);
	strftime(buf, size, "since %Y-%m-%d %H:%M UTC", &tm);
}

static void print_table(const struct hist_options *o, json_t *j)
{
	json_t *a = json_object_get(j, "recorded"), *b = json_object_get(j, "variant");
	char period[48], ma[32], mb[32];
	bool v = json_is_object(b);

	period_text(j, period, sizeof(period));
	printf("history %s: %lld tasks replayed", period, (long long)gp_client_int(j, "tasks"));
	if (gp_client_int(j, "never_started"))
		printf("; %lld never started (left out)",
		       (long long)gp_client_int(j, "never_started"));
	putchar('\n');
	setup_line("recorded:", a);
	if (v)
		setup_line("variant:", b);
	else
		printf("no variant given (--policy, --cards, --add-cards, --template, "
		       "--task or --advised): the recorded set-up alone\n");
	printf("\n%-28s %12s %12s %7s\n", "", "RECORDED", v ? "VARIANT" : "", v ? "RATIO" : "");
#define ROW(label, fmt, field) row(label, fmt, number(a, field), v ? number(b, field) : 0, v)
	ROW("cards", "%.0f", "cards");
	row_text("makespan", duration_text(number(a, "makespan_s"), ma, sizeof(ma)),
		 v ? duration_text(number(b, "makespan_s"), mb, sizeof(mb)) : NULL,
		 v && number(a, "makespan_s") > 0
			 ? number(b, "makespan_s") / number(a, "makespan_s")
			 : -1);
	ROW("allocated compute %", "%.1f", "alloc_pct");
	ROW("physical utilization %", "%.1f", "util_pct");
	ROW("queue wait p50 (s)", "%.1f", "wait_p50_s");
	ROW("queue wait p99 (s)", "%.1f", "wait_p99_s");
	ROW("queue wait max (s)", "%.1f", "wait_max_s");
	ROW("tasks placed", "%.0f", "placed");
	ROW("tasks never placed", "%.0f", "never_placed");
	ROW("would fail (memory)", "%.0f", "would_fail");
	ROW("stretched (compute)", "%.0f", "stretched");
	model_rows(a, v ? b : NULL);
	ROW("GPU-hours", "%.4f", "gpu_hours");
	if (o->prices) {
		ROW("cost", "%.4f", "cost");
		unpriced_line(v ? b : a);
	}
#undef ROW
}

/* ---- the command -------------------------------------------------------- */

static int history_main(const struct gp_client_flags *f, struct hist_options *o)
{
	char err[GP_WHATIF_ERROR_MAX];
	json_t *j = NULL;
	int status = GP_EXIT_OK, r;

	if (gp_whatif_period(o->w, gp_unix_ms(), err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool " CMD ": %s\n", err);
		return GP_EXIT_USAGE;
	}
	status = history_load(f, o->w);
	if (status != GP_EXIT_OK)
		return status;
	r = gp_whatif_run(o->w, gp_unix_ms(), &j, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "gpupool " CMD ": %s\n", err);
		return r == -EINVAL ? GP_EXIT_USAGE : GP_EXIT_FAIL;
	}
	if (f->json)
		gp_client_print_json(j);
	else
		print_table(o, j);
	json_decref(j);
	return GP_EXIT_OK;
}

int gp_cmd_sim_history(int argc, char **argv)
{
	static const struct option own[] = {
		{"history", no_argument, NULL, 'H'},
		{"since", required_argument, NULL, 's'},
		{"month", required_argument, NULL, 'm'},
		{"policy", required_argument, NULL, 'P'},
		{"recorded-policy", required_argument, NULL, 'R'},
		{"cards", required_argument, NULL, 'c'},
		{"add-cards", required_argument, NULL, 'a'},
		{"card-mem", required_argument, NULL, 'M'},
		{"template", required_argument, NULL, 'T'},
		{"task", required_argument, NULL, 'K'},
		{"advised", no_argument, NULL, 'A'},
		{"price", required_argument, NULL, 'p'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = CMD,
		.usage = history_usage,
		.options = own,
		.option = history_option,
	};
	struct gp_client_flags f = {0};
	struct hist_options o = {0};
	int status = gp_whatif_new(GP_WHATIF_CLI, &o.w) == 0 ? GP_EXIT_OK : GP_EXIT_FAIL;

	if (status == GP_EXIT_OK)
		status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);
	if (status == GP_CLIENT_GO)
		status = history_main(&f, &o);
	gp_whatif_free(o.w);
	return status;
}
