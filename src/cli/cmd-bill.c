/* cmd-bill.c — `gpupool bill`: a month's bill from the server
 * (GET /v1/bill, docs/api.md), or with --slurm from a Slurm cluster's
 * accounting (slurm/sacct.h), as a table for people, CSV for
 * spreadsheets (a header, then one line per tenant and device model) or
 * JSON. The arithmetic is the server's (server/bill.h) either way. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/month.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "server/bill.h"
#include "slurm/sacct.h"

#define PATH_LEN   160
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

struct bill_options {
	const char *month;  /* YYYY-MM; NULL: the server's current month */
	const char *tenant; /* NULL: all the caller may see */
	bool slurm;	    /* from Slurm's accounting, not a server */
	struct gp_price prices[GP_PRICES_MAX]; /* --price, with --slurm */
	int n_prices;
};

static void bill_usage(FILE *out)
{
	fprintf(out,
		"usage: gpupool bill [--month YYYY-MM] [--tenant NAME] [-o "
		"table|csv|json]\n"
		"       gpupool bill --slurm [--price MODEL=PRICE]... [--month YYYY-MM]\n"
		"                    [--tenant ACCOUNT] [-o table|csv|json]\n"
		"\n"
		"Prints a month's bill (UTC): per tenant and device model (and its "
		"vendor), the "
		"allocated\n"
		"GPU-hours (share x hours), allocated memory GiB-hours, used GPU-hours\n"
		"(device time the tasks used) and the cost (allocated GPU-hours x the\n"
		"model's price, from `gpupool server --price`). The admin sees every\n"
		"tenant, a tenant itself.\n"
		"\n"
		"  --month YYYY-MM   the month (default: this one)\n"
		"  --tenant NAME     only this tenant (admin)\n"
		"  -o csv            a header and one line per tenant and model\n"
		"\n"
		"With --slurm the bill is a Slurm cluster's, read with sacct from its\n"
		"accounting database: the figures gpupool's SPANK plugin left in each\n"
		"job's AdminComment; a tenant is a Slurm account, and a job counts in\n"
		"the month it started (docs/slurm.md).\n"
		"  --price MODEL=PRICE  a device model's price per GPU-hour "
		"(repeatable)\n");
}

static int price_option(struct bill_options *o, const char *value)
{
	char err[160];

	if (o->n_prices == GP_PRICES_MAX) {
		fprintf(stderr, "gpupool bill: at most %d --price options\n",
			GP_PRICES_MAX);
		return -EINVAL;
	}
	if (gp_price_parse(value, &o->prices[o->n_prices], err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool bill: --price %s: %s\n", value, err);
		return -EINVAL;
	}
	o->n_prices++;
	return 0;
}

static int bill_option(void *ctx, int c, const char *value)
{
	struct bill_options *o = ctx;
	int64_t from, to;

	if (c == 's') {
		o->slurm = true;
		return 0;
	}
	if (c == 'p')
		return price_option(o, value);
	if (c == 't') {
		if (!*value || strspn(value, NAME_CHARS) != strlen(value)) {
			fprintf(stderr,
				"gpupool bill: --tenant \"%s\" is not a tenant's name "
				"(letters, digits, '.', '_', '-')\n",
				value);
			return -EINVAL;
		}
		o->tenant = value;
		return 0;
	}
	if (c != 'm')
		return -EINVAL;
	if (gp_month_parse(value, &from, &to) < 0) {
		fprintf(stderr,
			"gpupool bill: --month \"%s\" must be YYYY-MM, e.g. 2026-11\n",
			value);
		return -EINVAL;
	}
	o->month = value;
	return 0;
}

static double number(json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

/* ---- table -------------------------------------------------------------- */

static void table_line(const char *tenant, const char *model, const char *vendor,
		       json_t *o, const char *price)
{
	printf("%-16s %-24s %-9s %12.4f %12.4f %12.4f %8s %12.4f\n", tenant, model,
	       vendor, number(o, "allocated_gpu_hours"),
	       number(o, "allocated_mem_gib_hours"), number(o, "used_gpu_hours"), price,
	       number(o, "cost"));
}

static void table_row(json_t *row)
{
	char price[32] = "-";

	if (json_is_true(json_object_get(row, "priced")))
		snprintf(price, sizeof(price), "%.2f", number(row, "price_per_hour"));
	table_line(gp_client_text(row, "tenant"), gp_client_text(row, "model"),
		   gp_client_text(row, "vendor"), row, price);
}

static void bill_table(json_t *bill)
{
	json_t *unpriced = json_object_get(bill, "unpriced_models");

	printf("bill for %s (UTC)\n\n", gp_client_text(bill, "month"));
	printf("%-16s %-24s %-9s %12s %12s %12s %8s %12s\n", "TENANT", "MODEL", "VENDOR",
	       "GPU-H ALLOC", "MEM GIB-H", "GPU-H USED", "PRICE/H", "COST");
	gp_client_rows(bill, "rows", table_row);
	table_line("total", "", "", json_object_get(bill, "totals"), "");
	for (size_t i = 0; i < json_array_size(unpriced); i++)
		printf("%s\"%s\"", i ? ", " : "\nno price for ",
		       gp_client_safe(json_string_value(json_array_get(unpriced, i))));
	if (json_array_size(unpriced))
		printf(": it costs 0 here (--price MODEL=PRICE, of gpupool server or "
		       "bill --slurm)\n");
}

/* ---- CSV: the server's own writer (server/bill.h) ---------------------- */

static int bill_csv(json_t *bill)
{
	char *csv = gp_bill_csv(bill);

	if (!csv) {
		fprintf(stderr, "gpupool bill: out of memory writing the CSV\n");
		return GP_EXIT_FAIL;
	}
	fputs(csv, stdout);
	free(csv);
	return GP_EXIT_OK;
}

/* ---- where the bill comes from ------------------------------------------ */

static int server_bill(const struct bill_options *o, struct gp_client_flags *f,
		       json_t **ret)
{
	char path[PATH_LEN] = "/v1/bill";

	if (o->month)
		gp_client_query_add(path, sizeof(path), "month", o->month);
	if (o->tenant)
		gp_client_query_add(path, sizeof(path), "tenant", o->tenant);
	return gp_client_request(f, "bill", "GET", path, NULL, ret);
}

static int slurm_bill(const struct bill_options *o, json_t **ret)
{
	struct gp_slurm_usage u = {0};
	char month[GP_MONTH_TEXT], err[512];

	if (o->month)
		snprintf(month, sizeof(month), "%s", o->month);
	else
		gp_month_format((int64_t)time(NULL) * 1000, month);
	if (gp_slurm_usage_month(month, o->tenant, &u, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpupool bill --slurm: %s\n", err);
		gp_slurm_usage_free(&u);
		return GP_EXIT_FAIL;
	}
	*ret = gp_bill_json(month, u.sums, u.n, u.tenants, u.n_tenants, o->prices,
			    o->n_prices);
	gp_slurm_usage_free(&u);
	return GP_EXIT_OK;
}

int gp_cmd_bill(int argc, char **argv)
{
	static const struct option own[] = {
		{"month", required_argument, NULL, 'm'},
		{"tenant", required_argument, NULL, 't'},
		{"slurm", no_argument, NULL, 's'},
		{"price", required_argument, NULL, 'p'},
		{0},
	};
	static const struct gp_client_command cmd = {
		.name = "bill",
		.usage = bill_usage,
		.options = own,
		.option = bill_option,
		.csv_ok = true,
	};
	struct bill_options o = {0};
	struct gp_client_flags f = {0};
	json_t *reply = NULL;
	int status = gp_client_parse_bare(&cmd, &o, argc, argv, &f);

	if (status != GP_CLIENT_GO)
		return status;
	if (o.n_prices && !o.slurm) {
		fprintf(stderr, "gpupool bill: --price goes with --slurm; a server's "
				"prices are its own (gpupool server --price)\n");
		return GP_EXIT_USAGE;
	}
	if (o.slurm)
		status = slurm_bill(&o, &reply);
	else
		status = server_bill(&o, &f, &reply);
	if (status == GP_EXIT_OK && f.json)
		gp_client_print_json(reply);
	else if (status == GP_EXIT_OK && f.csv)
		status = bill_csv(reply);
	else if (status == GP_EXIT_OK)
		bill_table(reply);
	json_decref(reply);
	return status;
}
