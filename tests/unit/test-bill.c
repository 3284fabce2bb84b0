/* test-bill.c — prices and bills (src/server/bill.c): parsing
 * MODEL=PRICE and refusing bad ones with the reason, matching a device's
 * NVML name (case-insensitive, the longest match wins), and a bill's
 * figures from usage sums: hours, cost, subtotals per tenant, totals,
 * and the unpriced models named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/bill.h"

static void test_price_parse(void **state)
{
	static const char *const bad[] = {
		"A100",
		"=2.5",
		"A100=",
		"A100=-1",
		"A100=abc",
		"A100=2.5x",
		"A100=0x10",
		"A100=nan",
		"A100=inf",
		"A100=1e10",
		"A123456789012345678901234567890123456789012345678901234567890123=1",
	};
	struct gp_price p = {"unchanged", 9};
	char err[256];

	(void)state;
	assert_int_equal(gp_price_parse("A100=2.50", &p, err, sizeof(err)), 0);
	assert_string_equal(p.model, "A100");
	assert_true(p.per_hour == 2.5);
	assert_int_equal(gp_price_parse("Tesla T4=0", &p, err, sizeof(err)), 0);
	assert_string_equal(p.model, "Tesla T4");
	assert_true(p.per_hour == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gp_price_parse(bad[i], &p, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "e.g."));
	}
	assert_string_equal(p.model, "Tesla T4");
}

static void test_price_find(void **state)
{
	const struct gp_price prices[] = {
		{"a100", 2.0},
		{"A100-SXM4-80GB", 3.0},
		{"T4", 0.35},
	};

	(void)state;
	assert_true(gp_price_find(prices, 3, "NVIDIA A100-SXM4-80GB")->per_hour == 3.0);
	assert_true(gp_price_find(prices, 3, "NVIDIA A100-SXM4-40GB")->per_hour == 2.0);
	assert_true(gp_price_find(prices, 3, "Tesla T4")->per_hour == 0.35);
	assert_null(gp_price_find(prices, 3, "NVIDIA H100 80GB HBM3"));
	assert_null(gp_price_find(prices, 0, "Tesla T4"));
}

static double number(json_t *o, const char *path_a, size_t i, const char *key)
{
	json_t *v = path_a ? json_array_get(json_object_get(o, path_a), i) : o;

	return json_number_value(json_object_get(v, key));
}

static void test_bill_figures(void **state)
{
	const struct gp_tenant tenants[] = {{.id = 2, .name = "vision"},
					    {.id = 3, .name = "nlp"}};
	const struct gp_price prices[] = {{"T4", 0.5}};
	/* vision: 1.5 GPU-hours of T4 (a 30 % share for 5 h), 8 GiB for 5 h,
	 * 1 h used; nlp: 2 h of a whole A100 and 1 h of a 50 % T4. */
	const struct gp_usage_sum sums[] = {
		{2, "Tesla T4", 10, 18000000, 30LL * 18000000, 8192LL * 18000000,
		 3600000},
		{3, "NVIDIA A100", 4, 7200000, 100LL * 7200000, 40960LL * 7200000,
		 7200000},
		{3, "Tesla T4", 2, 3600000, 50LL * 3600000, 1024LL * 3600000, 900000},
	};
	json_t *bill = gp_bill_json("2026-11", sums, 3, tenants, 2, prices, 1);
	json_t *totals = json_object_get(bill, "totals");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(bill, "month")), "2026-11");
	assert_true(number(bill, "rows", 0, "allocated_gpu_hours") == 1.5);
	assert_true(number(bill, "rows", 0, "allocated_mem_gib_hours") == 40);
	assert_true(number(bill, "rows", 0, "used_gpu_hours") == 1);
	assert_true(number(bill, "rows", 0, "cost") == 0.75);
	assert_true(number(bill, "rows", 1, "cost") == 0);
	assert_true(json_is_false(json_object_get(
		json_array_get(json_object_get(bill, "rows"), 1), "priced")));
	assert_true(number(bill, "tenants", 1, "allocated_gpu_hours") == 2.5);
	assert_true(number(bill, "tenants", 1, "cost") == 0.25);
	assert_int_equal(json_array_size(json_object_get(bill, "tenants")), 2);
	assert_true(number(totals, NULL, 0, "allocated_gpu_hours") == 4);
	assert_true(number(totals, NULL, 0, "used_gpu_hours") == 3.25);
	assert_true(number(totals, NULL, 0, "cost") == 1);
	assert_int_equal(json_integer_value(json_object_get(totals, "records")), 16);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(bill, "unpriced_models"), 0)),
			    "NVIDIA A100");
	assert_non_null(json_object_get(bill, "note"));
	json_decref(bill);

	/* No usage: an empty bill of zeros, nothing unpriced. */
	bill = gp_bill_json("2001-01", NULL, 0, tenants, 2, prices, 1);
	assert_int_equal(json_array_size(json_object_get(bill, "rows")), 0);
	assert_true(number(json_object_get(bill, "totals"), NULL, 0, "cost") == 0);
	assert_null(json_object_get(bill, "note"));
	json_decref(bill);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_price_parse),
		cmocka_unit_test(test_price_find),
		cmocka_unit_test(test_bill_figures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
