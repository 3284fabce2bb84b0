/* bill.c — prices and the monthly bill (bill.h).
 *
 * The units: compute in percent of a device times milliseconds (so 100 %
 * for one hour is 360,000,000), memory in MiB times milliseconds, used
 * device time in milliseconds. Sums stay integers until one division
 * turns each into hours. */
#include "server/bill.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models.h"

#define MS_PER_HOUR	3600000.0
#define PCT_MS_PER_HOUR (100.0 * MS_PER_HOUR)  /* a whole device for an hour */
#define MIB_MS_PER_GIBH (1024.0 * MS_PER_HOUR) /* 1 GiB for an hour */

/* ---- prices ------------------------------------------------------------- */

/* A decimal number ("2.50", "1e3"): strtod alone would also take
 * hexadecimal ("0x10" is 16). */
static bool price_number(const char *text, double *ret)
{
	char *end;
	double v;

	if ((!(*text >= '0' && *text <= '9') && *text != '.') ||
	    text[strspn(text, "0123456789.eE+-")] != '\0')
		return false;
	v = strtod(text, &end);
	if (*end || !isfinite(v) || v < 0 || v > GP_PRICE_LIMIT)
		return false;
	*ret = v;
	return true;
}

int gp_price_parse(const char *text, struct gp_price *ret, char *err, size_t err_len)
{
	const char *eq = text ? strchr(text, '=') : NULL;
	size_t len = eq ? (size_t)(eq - text) : 0;
	double v;

	if (!eq || len == 0 || len >= GP_PRICE_MODEL_MAX) {
		snprintf(err, err_len,
			 "\"%s\" must be MODEL=PRICE, MODEL a part of the device's name "
			 "(1 to %d bytes), e.g. A100=2.50",
			 text ? text : "", GP_PRICE_MODEL_MAX - 1);
		return -EINVAL;
	}
	if (!price_number(eq + 1, &v)) {
		snprintf(err, err_len,
			 "\"%s\": the price must be a number from 0 to %.0f per hour, "
			 "e.g. %.*s=2.50",
			 text, GP_PRICE_LIMIT, (int)len, text);
		return -EINVAL;
	}
	snprintf(ret->model, sizeof(ret->model), "%.*s", (int)len, text);
	ret->per_hour = v;
	return 0;
}

const struct gp_price *gp_price_find(const struct gp_price *prices, int n,
				     const char *name)
{
	int best = gp_model_best(name, NULL, prices, sizeof(*prices),
				 offsetof(struct gp_price, model), n);

	return best < 0 ? NULL : &prices[best];
}

/* ---- sums --------------------------------------------------------------- */

/* Integer sums of a row, a tenant or the whole bill, and its cost. */
struct totals {
	int64_t records, pct_ms, mib_ms, used_ms;
	double cost;
};

static void totals_add(struct totals *t, const struct gp_usage_sum *s, double cost)
{
	t->records += s->records;
	t->pct_ms += s->pct_ms;
	t->mib_ms += s->mib_ms;
	t->used_ms += s->used_ms;
	t->cost += cost;
}

static double gpu_hours(const struct totals *t)
{
	return (double)t->pct_ms / PCT_MS_PER_HOUR;
}

static json_t *totals_json(const struct totals *t)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f}", "records", (json_int_t)t->records,
			 "allocated_gpu_hours", gpu_hours(t), "allocated_mem_gib_hours",
			 (double)t->mib_ms / MIB_MS_PER_GIBH, "used_gpu_hours",
			 (double)t->used_ms / MS_PER_HOUR, "cost", t->cost);
}

static const char *tenant_name(const struct gp_tenant *tenants, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (tenants[i].id == id)
			return tenants[i].name;
	return "?";
}

/* ---- the bill ----------------------------------------------------------- */

static json_t *row_json(const struct gp_usage_sum *s, const char *tenant,
			const struct gp_price *price, struct totals *ret)
{
	json_t *row;

	*ret = (struct totals){0};
	totals_add(ret, s, 0);
	ret->cost = price ? gpu_hours(ret) * price->per_hour : 0;
	row = totals_json(ret);
	json_object_set_new(row, "tenant", json_string(tenant));
	json_object_set_new(row, "model", json_string(s->device_model));
	json_object_set_new(row, "vendor",
			    json_string(gp_vendor_name(gp_model_vendor(s->device_model))));
	json_object_set_new(row, "price_per_hour",
			    json_real(price ? price->per_hour : 0));
	json_object_set_new(row, "priced", json_boolean(price != NULL));
	return row;
}

static void unpriced_add(json_t *list, const char *model)
{
	for (size_t i = 0; i < json_array_size(list); i++)
		if (!strcmp(json_string_value(json_array_get(list, i)), model))
			return;
	json_array_append_new(list, json_string(model));
}

/* Appends the tenant's subtotal when the next row is another tenant's. */
static void tenant_close(json_t *list, const char *name, const struct totals *t)
{
	json_t *o = totals_json(t);

	json_object_set_new(o, "tenant", json_string(name));
	json_array_append_new(list, o);
}

json_t *gp_bill_json(const char *month, const struct gp_usage_sum *sums, int n,
		     const struct gp_tenant *tenants, int n_tenants,
		     const struct gp_price *prices, int n_prices)
{
	json_t *rows = json_array(), *by_tenant = json_array(), *unpriced = json_array();
	struct totals all = {0}, tenant = {0}, row;
	json_t *bill;

	for (int i = 0; i < n; i++) {
		const struct gp_price *p =
			gp_price_find(prices, n_prices, sums[i].device_model);
		const char *name = tenant_name(tenants, n_tenants, sums[i].tenant);

		json_array_append_new(rows, row_json(&sums[i], name, p, &row));
		if (!p)
			unpriced_add(unpriced, sums[i].device_model);
		totals_add(&tenant, &sums[i], row.cost);
		totals_add(&all, &sums[i], row.cost);
		if (i + 1 == n || sums[i + 1].tenant != sums[i].tenant) {
			tenant_close(by_tenant, name, &tenant);
			tenant = (struct totals){0};
		}
	}
	bill = json_pack("{s:s, s:o, s:o, s:o, s:o}", "month", month, "rows", rows,
			 "tenants", by_tenant, "totals", totals_json(&all),
			 "unpriced_models", unpriced);
	if (json_array_size(unpriced))
		json_object_set_new(bill, "note",
				    json_string("no --price matches the unpriced models: "
						"they cost 0 in this bill"));
	return bill;
}

/* ---- CSV (RFC 4180) ------------------------------------------------------ */

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static double number(json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static const char *text(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

char *gp_bill_csv(json_t *bill)
{
	json_t *rows = json_object_get(bill, "rows"), *row;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	fputs("tenant,model,vendor,allocated_gpu_hours,allocated_mem_gib_hours,used_gpu_hours,"
	      "price_per_hour,cost\n",
	      out);
	json_array_foreach(rows, i, row) {
		csv_field(out, text(row, "tenant"));
		fputc(',', out);
		csv_field(out, text(row, "model"));
		fputc(',', out);
		csv_field(out, text(row, "vendor"));
		fprintf(out, ",%.6f,%.6f,%.6f,%.4f,%.6f\n", number(row, "allocated_gpu_hours"),
			number(row, "allocated_mem_gib_hours"), number(row, "used_gpu_hours"),
			number(row, "price_per_hour"), number(row, "cost"));
	}
	if (fclose(out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
