/* bill.h — prices per device-model-hour and the monthly bill.
 *
 * The server is given prices as MODEL=PRICE (`--price A100=2.50`): MODEL
 * matches a device when it is a case-insensitive part of its NVML name
 * ("A100" matches "NVIDIA A100-SXM4-80GB"); where several match, the
 * longest wins. A device model no price matches costs 0, and the bill
 * lists it under "unpriced_models" so that nobody takes 0 for a price.
 *
 * A bill adds up a month's usage sums (store.h) per tenant and device
 * model: allocated GPU-hours (compute share x hours), allocated memory
 * GiB-hours, used GPU-hours (device time the tasks' processes used) and
 * cost (allocated GPU-hours x the model's price), then per tenant and in
 * total. Every hour figure is one exact integer sum divided once, so it
 * equals the same sum recomputed from the usage records.
 *
 * A bill as CSV (RFC 4180): a header, then a line per tenant and device
 * model; `gpupool bill -o csv` and GET /v1/bill?format=csv both write it
 * here, so that they are the same bytes.
 *
 * Ownership: gp_bill_json returns a new reference (json_decref);
 * gp_bill_csv a malloc'd string (free). */
#ifndef GP_SERVER_BILL_H
#define GP_SERVER_BILL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "server/store.h"

#define GP_PRICES_MAX	   32
#define GP_PRICE_MODEL_MAX 64
#define GP_PRICE_LIMIT	   1e9 /* per hour; more is a typo */

struct gp_price {
	char model[GP_PRICE_MODEL_MAX];
	double per_hour;
};

/* "MODEL=PRICE": MODEL 1 to 63 bytes without '=', PRICE a decimal number
 * from 0 to GP_PRICE_LIMIT. -EINVAL with the reason in err otherwise. */
int gp_price_parse(const char *text, struct gp_price *ret, char *err, size_t err_len);

/* The price for a device named `name`; NULL when none matches. */
const struct gp_price *gp_price_find(const struct gp_price *prices, int n,
				     const char *name);

/* The bill of `month` ("2026-11") from its usage sums; tenants name the
 * tenant ids of the sums. */
json_t *gp_bill_json(const char *month, const struct gp_usage_sum *sums, int n,
		     const struct gp_tenant *tenants, int n_tenants,
		     const struct gp_price *prices, int n_prices);

/* The bill's rows as CSV; NULL when out of memory. */
char *gp_bill_csv(json_t *bill);

#endif
