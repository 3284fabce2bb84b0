/* test-alerts.c — the quota.high rule of the server's alerts
 * (src/server/alerts.c), as the plain decision gp_alerts_quota_high makes
 * for a tenant's overall quota and for each of its model quotas alike:
 * raised above 80 % of memory or compute, kept down to 70 %, cleared
 * below; no quota, no alert. The alerts themselves, raised and cleared in
 * the store from a live meter, are tested end to end (tests/server/
 * test-metrics.sh, test-quota.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/alerts.h"

/* A quota of 16 GiB and 50 % of a device, of which mem_mib and pct held. */
static struct gp_quota_use use(uint64_t mem_mib, uint64_t pct)
{
	return (struct gp_quota_use){
		.mem_quota_mib = 16384, .mem_mib = mem_mib, .pct_quota = 50, .pct = pct};
}

static void test_use_pct(void **state)
{
	struct gp_quota_use u = use(4096, 45),
			    mem_only = {.mem_quota_mib = 100, .mem_mib = 10, .pct = 1000};

	(void)state;
	assert_true(gp_quota_use_pct(&u) == 90); /* compute is the larger */
	u = use(16384, 0);
	assert_true(gp_quota_use_pct(&u) == 100);
	/* A part without a quota counts 0, whatever is held of it. */
	assert_true(gp_quota_use_pct(&mem_only) == 10);
}

static void test_raised_above_80(void **state)
{
	struct gp_quota_use at80 = use(0, 40), above_mem = use(13200, 0),
			    above_pct = use(0, 41);

	(void)state;
	assert_false(gp_alerts_quota_high(&at80, false)); /* 80 % is not above */
	assert_true(gp_alerts_quota_high(&above_mem, false));
	assert_true(gp_alerts_quota_high(&above_pct, false));
}

static void test_kept_down_to_70(void **state)
{
	struct gp_quota_use at75 = use(0, 37), at70 = use(0, 35),
			    below70 = use(11468, 34);

	(void)state;
	assert_true(gp_alerts_quota_high(&at75, true));
	assert_false(
		gp_alerts_quota_high(&at75, false)); /* not raised between the lines */
	assert_true(gp_alerts_quota_high(&at70, true));
	assert_false(gp_alerts_quota_high(&below70, true)); /* 69.99 %, 68 %: cleared */
}

static void test_no_quota_no_alert(void **state)
{
	struct gp_quota_use none = {.mem_mib = 1 << 20, .pct = 800};

	(void)state;
	assert_false(gp_alerts_quota_high(&none, false));
	assert_false(gp_alerts_quota_high(&none, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use_pct),
		cmocka_unit_test(test_raised_above_80),
		cmocka_unit_test(test_kept_down_to_70),
		cmocka_unit_test(test_no_quota_no_alert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
