/* test-alerts.c — the quota.high rule of the server's alerts
 * (src/server/alerts.c), as the plain decision gp_alerts_quota_high makes
 * for a tenant's overall quota and for each of its model quotas alike:
 * raised above 80 % of memory or compute, kept down to 70 %, cleared
 * below; no quota, no alert. The log events, in a store in memory: a
 * capped log and a lost one raised once per task for its tenant, with a
 * message that says what happened and what to do, and kept by checks
 * (they are events). The condition alerts, raised and cleared in the
 * store from a live meter, are tested end to end (tests/server/
 * test-metrics.sh, test-quota.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/alerts.h"

/* A quota of 16 GiB and 50 % of a device, of which mem_mib and pct held. */
static struct gp_quota_held use(uint64_t mem_mib, uint64_t pct)
{
	return (struct gp_quota_held){
		.mem_quota_mib = 16384, .mem_mib = mem_mib, .pct_quota = 50, .pct = pct};
}

static void test_use_pct(void **state)
{
	struct gp_quota_held u = use(4096, 45),
			    mem_only = {.mem_quota_mib = 100, .mem_mib = 10, .pct = 1000};

	(void)state;
	assert_true(gp_quota_held_pct(&u) == 90); /* compute is the larger */
	u = use(16384, 0);
	assert_true(gp_quota_held_pct(&u) == 100);
	/* A part without a quota counts 0, whatever is held of it. */
	assert_true(gp_quota_held_pct(&mem_only) == 10);
}

static void test_raised_above_80(void **state)
{
	struct gp_quota_held at80 = use(0, 40), above_mem = use(13200, 0),
			    above_pct = use(0, 41);

	(void)state;
	assert_false(gp_alerts_quota_high(&at80, false)); /* 80 % is not above */
	assert_true(gp_alerts_quota_high(&above_mem, false));
	assert_true(gp_alerts_quota_high(&above_pct, false));
}

static void test_kept_down_to_70(void **state)
{
	struct gp_quota_held at75 = use(0, 37), at70 = use(0, 35),
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
	struct gp_quota_held none = {.mem_mib = 1 << 20, .pct = 800};

	(void)state;
	assert_false(gp_alerts_quota_high(&none, false));
	assert_false(gp_alerts_quota_high(&none, true));
}

/* ---- the log events ------------------------------------------------------ */

struct events {
	struct gp_store *store;
	struct gp_alerts *alerts;
	int64_t tenant, task;
};

static int events_setup(void **state)
{
	struct events *e = calloc(1, sizeof(*e));
	struct gp_tenant t = {.name = "vision"};
	struct gp_task task = {.name = "train", .command = "python train.py", .devices = 1,
			       .mem_mib = 1024, .compute_pct = 10};
	char token[GP_TOKEN_HEX + 1];

	assert_non_null(e);
	assert_int_equal(gp_store_open(":memory:", &e->store), 0);
	assert_int_equal(gp_store_tenant_add(e->store, &t, token), 0);
	task.tenant = t.id;
	assert_int_equal(gp_store_task_add(e->store, &task), 0);
	assert_int_equal(gp_alerts_new(e->store, &e->alerts), 0);
	e->tenant = t.id;
	e->task = task.id;
	*state = e;
	return 0;
}

static int events_teardown(void **state)
{
	struct events *e = *state;

	gp_alerts_free(e->alerts);
	gp_store_close(e->store);
	free(e);
	return 0;
}

/* The alerts in the store (all of them, cleared too), newest first. */
static int alerts_all(struct events *e, struct gp_alert **ret)
{
	int n = 0;

	*ret = NULL;
	assert_int_equal(gp_store_alert_list(e->store, -1, false, 100, ret, &n), 0);
	return n;
}

static void test_log_capped(void **state)
{
	struct events *e = *state;
	struct gp_alert *al;
	char object[32];

	snprintf(object, sizeof(object), "task %lld", (long long)e->task);
	assert_int_equal(gp_alerts_log_capped(e->alerts, e->task, 64 << 20, 0), 0);
	assert_int_equal(alerts_all(e, &al), 0); /* nothing dropped: nothing to say */
	assert_int_equal(gp_alerts_log_capped(e->alerts, e->task, 64 << 20, 210 << 20), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_string_equal(al[0].kind, "task.log-capped");
	assert_string_equal(al[0].object, object);
	assert_int_equal(al[0].level, GP_ALERT_WARNING);
	assert_int_equal(al[0].tenant, e->tenant);
	assert_non_null(strstr(al[0].message, "'s log passed its cap of 64 MiB; its oldest "
					      "210 MiB were dropped"));
	assert_non_null(strstr(al[0].message, "--log-max"));
	free(al);
	/* More dropped, and an operator's clear: raised once per task. */
	assert_int_equal(gp_alerts_log_capped(e->alerts, e->task, 64 << 20, 400 << 20), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_int_equal(gp_store_alert_clear(e->store, "task.log-capped", object), 0);
	assert_int_equal(gp_alerts_log_capped(e->alerts, e->task, 64 << 20, 600 << 20), 0);
	free(al);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_true(al[0].cleared > 0);
	free(al);
	/* A task the store does not have (yet): the pool's. */
	assert_int_equal(gp_alerts_log_capped(e->alerts, 999, 1ULL << 30, 3ULL << 29), 0);
	assert_int_equal(alerts_all(e, &al), 2);
	assert_int_equal(al[0].tenant, 0);
	assert_non_null(strstr(al[0].message, "task 999's log passed its cap of 1.0 GiB; its "
					      "oldest 1.5 GiB were dropped"));
	free(al);
}

static void test_log_lost(void **state)
{
	struct events *e = *state;
	struct gp_alert *al;

	assert_int_equal(gp_alerts_log_lost(e->alerts, e->task, 0, 0, false), 0);
	assert_int_equal(alerts_all(e, &al), 0);
	assert_int_equal(gp_alerts_log_lost(e->alerts, e->task, 5 << 20, -ENOSPC, false), 0);
	assert_int_equal(gp_alerts_log_lost(e->alerts, e->task, 9 << 20, -ENOSPC, false), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_string_equal(al[0].kind, "task.log-lost");
	assert_int_equal(al[0].level, GP_ALERT_WARNING);
	assert_int_equal(al[0].tenant, e->tenant);
	assert_non_null(strstr(al[0].message, "could not be written to its log (No space "
					      "left on device): 5 MiB of it were dropped"));
	assert_non_null(strstr(al[0].message, "--log-dir"));
	free(al);
	/* Capped and lost are two alerts on the same task. */
	assert_int_equal(gp_alerts_log_capped(e->alerts, e->task, 64 << 20, 32 << 20), 0);
	assert_int_equal(alerts_all(e, &al), 2);
	free(al);
	/* Output dropped under the free-space floor says so. */
	assert_int_equal(gp_alerts_log_lost(e->alerts, 999, 1 << 20, -ENOSPC, true), 0);
	assert_int_equal(alerts_all(e, &al), 3);
	assert_non_null(strstr(al[0].message, "task 999's output could not be written to its "
					      "log (the free space there is under the "
					      "server's --log-free-min): 1 MiB"));
	free(al);
}

/* task.unplaced, as the loop reports it: raised once, cleared at once. */
static void test_unplaced(void **state)
{
	struct events *e = *state;
	struct gp_task t = {.id = e->task, .tenant = e->tenant, .name = "train"};
	struct gp_alert *al;

	assert_int_equal(gp_alerts_placed(e->alerts, e->task), 0); /* never reported */
	assert_int_equal(alerts_all(e, &al), 0);
	assert_int_equal(gp_alerts_unplaced(e->alerts, &t, "GPU-1 is gone"), 0);
	assert_int_equal(gp_alerts_unplaced(e->alerts, &t, "GPU-1 is gone"), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_string_equal(al[0].kind, "task.unplaced");
	assert_int_equal(al[0].level, GP_ALERT_CRITICAL);
	assert_int_equal(al[0].tenant, e->tenant);
	assert_non_null(strstr(al[0].message, "(train): GPU-1 is gone"));
	assert_int_equal(al[0].cleared, 0);
	free(al);
	assert_int_equal(gp_alerts_placed(e->alerts, e->task), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_true(al[0].cleared > 0);
	free(al);
	assert_false(gp_alerts_is_event("task.unplaced")); /* a condition */
}

/* store.unwritable: an event, raised while none is active. */
static void test_store_unwritable(void **state)
{
	struct events *e = *state;
	struct gp_alert *al;

	assert_int_equal(gp_alerts_store_unwritable(e->alerts, "could not be written"), 0);
	assert_int_equal(gp_alerts_store_unwritable(e->alerts, "again"), 0);
	assert_int_equal(alerts_all(e, &al), 1);
	assert_string_equal(al[0].kind, "store.unwritable");
	assert_string_equal(al[0].object, "store");
	assert_int_equal(al[0].level, GP_ALERT_CRITICAL);
	assert_string_equal(al[0].message, "could not be written");
	free(al);
	assert_true(gp_alerts_is_event("store.unwritable"));
}

/* A check clears the conditions that stopped holding, never the events. */
static void test_events_not_conditions(void **state)
{
	(void)state;
	assert_true(gp_alerts_is_event("task.failed"));
	assert_true(gp_alerts_is_event("task.log-capped"));
	assert_true(gp_alerts_is_event("task.log-lost"));
	assert_false(gp_alerts_is_event("task.memory-grows"));
	assert_false(gp_alerts_is_event("device.busy"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_use_pct),
		cmocka_unit_test(test_raised_above_80),
		cmocka_unit_test(test_kept_down_to_70),
		cmocka_unit_test(test_no_quota_no_alert),
		cmocka_unit_test_setup_teardown(test_log_capped, events_setup, events_teardown),
		cmocka_unit_test_setup_teardown(test_log_lost, events_setup, events_teardown),
		cmocka_unit_test(test_events_not_conditions),
		cmocka_unit_test_setup_teardown(test_unplaced, events_setup, events_teardown),
		cmocka_unit_test_setup_teardown(test_store_unwritable, events_setup,
						events_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
