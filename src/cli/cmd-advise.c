/* cmd-advise.c — `gpupool advise`: right-sizing from a month's usage
 * (GET /v1/advice, server/advise.h): per template and per task name, the
 * slice the runs needed (peak memory plus headroom, a high percentile of
 * the compute they used), with the evidence and what it would free; as a
 * table or JSON. With --apply (the admin) each template whose proposal
 * differs becomes a new template version, NAME.vN, beside the old one
 * (the server does it: POST /v1/advice/apply, as the console's button):
 * nothing running changes, and new submissions choose. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/month.h"
#include "cli/client.h"
#include "cli/commands.h"

#define PATH_LEN    256

struct advise_options {
	const char *month, *tenant;
	const char *headroom, *percentile; /* checked; NULL: the server's default */
	bool apply;
};

static void advise_usage(FILE *out)
{
	fprintf(out, "usage: gpupool advise [--month YYYY-MM] [--tenant NAME] "
		     "[--headroom PCT]\n"
		     "                      [--percentile P] [--apply] [-o table|json]\n"
		     "\n"
		     "Proposes, per template and per task name, the slice a month's runs "
		     "needed:\n"
		     "memory = the most a run's processes held on a device, plus a "
		     "headroom (default\n"
		     "15 %%), rounded up to 256 MiB; compute = the P-th percentile "
		     "(default 95) of the\n"
		     "share of a device they used over time; with the evidence (runs, "
		     "hours, held,\n"
		     "peak, median and most used) and the GPU-hours and GiB-hours it "
		     "would have freed\n"
		     "(docs/operations.md).\n"
		     "\n"
		     "  --month YYYY-MM   the month (default: this one)\n"
		     "  --tenant NAME     only this tenant's tasks (the admin; a tenant: "
		     "its own)\n"
		     "  --headroom PCT    memory headroom over the peak, 0 to 100\n"
		     "  --percentile P    of the used compute, 50 to 100\n"
		     "  --apply           add each changed template's proposal as a new "
		     "template,\n"
		     "                    NAME.v2, NAME.v3, ... (the admin)\n");
}

static int advise_option(void *ctx, int c, const char *value)
{
	struct advise_options *o = ctx;
	int64_t from, to;
	unsigned checked;

	switch (c) {
	case 'm':
		if (gp_month_parse(value, &from, &to) == 0) {
			o->month = value;
			return 0;
		}
		fprintf(stderr,
			"gpupool advise: --month \"%s\" must be YYYY-MM, e.g. 2026-11\n",
			value);
		return -EINVAL;
	case 't': o->tenant = value; return 0;
	case 'H':
		o->headroom = value;
		return gp_client_uint("gpupool advise", "--headroom", value, 0, 100, &checked);
	case 'P':
		o->percentile = value;
		return gp_client_uint("gpupool advise", "--percentile", value, 50, 100,
				      &checked);
	case 'A': o->apply = true; return 0;
	}
	return -EINVAL;
}

/* ---- the table ---------------------------------------------------------- */

static void mib(json_t *o, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		gp_client_mib_text(json_integer_value(v), buf, size);
	else
		snprintf(buf, size, "-");
}

static void advice_row(json_t *a)
{
	char held[16], peak[16], proposed[16], who[80];
	double pct = json_number_value(json_object_get(a, "compute_percentile_pct"));

	mib(a, "mem_held_mib", held, sizeof(held));
	mib(a, "mem_peak_mib", peak, sizeof(peak));
	mib(a, "mem_proposed_mib", proposed, sizeof(proposed));
	snprintf(who, sizeof(who), "%s%s%s", gp_client_text(a, "name"),
		 json_is_string(json_object_get(a, "tenant")) ? "@" : "",
		 gp_client_text(a, "tenant"));
	printf("%-8s %-24s %5lld %8.2f  %6s %6s %6s  %4lld%% %5.1f%% %4lld%%  %9.3f\n",
	       gp_client_text(a, "kind"), who, (long long)gp_client_int(a, "runs"),
	       json_number_value(json_object_get(a, "hours")), held, peak, proposed,
	       (long long)gp_client_int(a, "compute_held_pct"), pct,
	       (long long)gp_client_int(a, "compute_proposed_pct"),
	       json_number_value(json_object_get(a, "freed_gpu_hours")));
}

static void advice_table(json_t *reply)
{
	printf("advice for %s (memory: peak + %lld %%; compute: p%lld of the share "
	       "used)\n\n",
	       gp_client_text(reply, "month"),
	       (long long)gp_client_int(reply, "headroom_pct"),
	       (long long)gp_client_int(reply, "percentile"));
	printf("%-8s %-24s %5s %8s  %6s %6s %6s  %5s %6s %5s  %9s\n", "KIND", "NAME",
	       "RUNS", "HOURS", "HELD", "PEAK", "NEW", "HELD", "USED", "NEW",
	       "FREED GPU-H");
	gp_client_rows(reply, "advice", advice_row);
}

/* ---- --apply: new template versions ------------------------------------- */

/* One template's line of what POST /v1/advice/apply did. */
static void applied_row(json_t *x)
{
	const char *result = gp_client_str(x, "result");

	if (!strcmp(result, "added"))
		printf("template %s: %lld MiB, %lld %% (was %s: %lld MiB, %lld %%)\n",
		       gp_client_text(x, "version"), (long long)gp_client_int(x, "mem_mib"),
		       (long long)gp_client_int(x, "compute_pct"), gp_client_text(x, "template"),
		       (long long)gp_client_int(x, "was_mem_mib"),
		       (long long)gp_client_int(x, "was_compute_pct"));
	else if (!strcmp(result, "exists"))
		printf("template %s: already there (%lld MiB, %lld %%)\n",
		       gp_client_text(x, "version"), (long long)gp_client_int(x, "mem_mib"),
		       (long long)gp_client_int(x, "compute_pct"));
}

/* The server adds each changed template's proposal as a new version
 * (POST /v1/advice/apply, the same query as the advice read); an exit
 * status. */
static int apply(const struct gp_client_flags *f, const char *query)
{
	char path[PATH_LEN + sizeof("/apply")];
	json_t *reply = NULL;
	int status;

	snprintf(path, sizeof(path), "/v1/advice/apply%s", query);
	status = gp_client_request(f, "advise", "POST", path, NULL, &reply);
	if (status == GP_EXIT_OK)
		gp_client_rows(reply, "applied", applied_row);
	json_decref(reply);
	return status;
}

/* ---- the command -------------------------------------------------------- */

int gp_cmd_advise(int argc, char **argv)
{
	static const struct option own[] = {
		{"month", required_argument, NULL, 'm'},
		{"tenant", required_argument, NULL, 't'},
		{"headroom", required_argument, NULL, 'H'},
		{"percentile", required_argument, NULL, 'P'},
		{"apply", no_argument, NULL, 'A'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "advise",
		.usage = advise_usage,
		.options = own,
		.option = advise_option,
	};
	struct advise_options o = {0};
	struct gp_client_flags f = {0};
	char path[PATH_LEN] = "/v1/advice";
	json_t *reply = NULL;
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.month)
		gp_client_query_add(path, sizeof(path), "month", o.month);
	if (o.tenant)
		gp_client_query_add(path, sizeof(path), "tenant", o.tenant);
	if (o.headroom)
		gp_client_query_add(path, sizeof(path), "headroom", o.headroom);
	if (o.percentile)
		gp_client_query_add(path, sizeof(path), "percentile", o.percentile);
	status = gp_client_request(&f, cmd.name, "GET", path, NULL, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK)
		advice_table(reply);
	if (status == GP_EXIT_OK && o.apply)
		status = apply(&f, path + strlen("/v1/advice"));
	json_decref(reply);
	return status;
}
