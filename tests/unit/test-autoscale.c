/* test-autoscale.c — a service's scaling decisions (src/core/autoscale.c)
 * on a clock the test drives: a sample every 10 s of a load that rises
 * and falls. Out after the 5-minute window and not before, in after the
 * 30-minute one; the share grows by at most 0.3 card before a replica is
 * added; noise within the margin never starts or breaks a streak and
 * never flaps; the quota's ceiling holds; a cooldown follows each step;
 * every step says why with its figures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/autoscale.h"

#define TICK_MS 10000

/* A service and its policy, sampled on the test's clock. */
struct service {
	struct gp_scale_policy p;
	struct gp_scale_state s;
	struct gp_scale_view v;
	int64_t now_ms;
	int steps;
	struct gp_scale_decision last; /* the last step (not hold) */
	int64_t first_at_ms, last_at_ms;
};

static struct service service(unsigned share, unsigned ceiling)
{
	struct service svc = {.p = gp_scale_policy_default(share)};

	svc.p.share_max_pct = ceiling;
	svc.v = (struct gp_scale_view){.replicas = 1,
				       .share_pct = share,
				       .grow_room_pct = 100,
				       .quota_replicas = 100};
	return svc;
}

/* Samples a demand of `demand` % of a card for `seconds`: the replicas'
 * effective utilization is the demand over what they hold; the steps
 * taken apply at once. */
static void run(struct service *svc, double demand, int seconds)
{
	for (int t = 0; t < seconds; t += TICK_MS / 1000) {
		struct gp_scale_decision d;

		svc->now_ms += TICK_MS;
		svc->v.util = demand / ((double)svc->v.replicas * svc->v.share_pct);
		gp_scale_decide(&svc->p, &svc->s, &svc->v, svc->now_ms, &d);
		if (d.step == GP_SCALE_HOLD)
			continue;
		if (!svc->steps++)
			svc->first_at_ms = svc->now_ms;
		svc->last = d;
		svc->last_at_ms = svc->now_ms;
		svc->v.replicas = d.replicas;
		svc->v.share_pct = d.share_pct;
	}
}

static void out_after_five_minutes_above_growing_the_share_first(void **state)
{
	struct service svc = service(30, 100);

	(void)state;
	run(&svc, 15, 600); /* 50 % of its 30 % */
	assert_int_equal(svc.steps, 0);
	run(&svc, 27, 290);		/* 90 % */
	assert_int_equal(svc.steps, 0); /* 4 min 50 s above: not yet */
	run(&svc, 27, 20);
	assert_int_equal(svc.steps, 1);
	assert_int_equal(svc.last.step, GP_SCALE_GROW);
	assert_int_equal(svc.last.share_pct, 60); /* 0.3 card at most */
	assert_non_null(strstr(svc.last.reason, "utilization 90 % above 80 % for 300 s"));
	assert_non_null(strstr(svc.last.reason, "30 % -> 60 %"));
}

static void a_replica_is_added_only_at_the_shares_ceiling(void **state)
{
	struct service svc = service(30, 50);

	(void)state;
	run(&svc, 48, 310); /* 160 % of 30 % (borrowed) */
	assert_int_equal(svc.last.step, GP_SCALE_GROW);
	assert_int_equal(svc.v.share_pct, 50); /* the ceiling, less than a step */
	run(&svc, 48, 620);		       /* still above: 96 % of 50 % */
	assert_int_equal(svc.last.step, GP_SCALE_OUT);
	assert_int_equal(svc.v.replicas, 2);
	assert_non_null(
		strstr(svc.last.reason, "share at its ceiling (50 %): replicas 1 -> 2"));
}

static void the_quota_and_max_are_ceilings(void **state)
{
	struct service svc = service(50, 50);
	int steps;

	(void)state;
	svc.v.quota_replicas = 3;
	run(&svc, 400, 3 * 3600); /* four cards' worth, for hours */
	assert_int_equal(svc.v.replicas, 3);
	steps = svc.steps;
	run(&svc, 400, 3600);
	assert_int_equal(svc.steps, steps);
	/* The decision at the ceiling says so. */
	{
		struct gp_scale_decision d;

		svc.now_ms += 3600 * 1000;
		gp_scale_decide(&svc.p, &svc.s, &svc.v, svc.now_ms, &d);
		assert_int_equal(d.step, GP_SCALE_HOLD);
		assert_non_null(strstr(d.reason, "held at the ceiling"));
		assert_non_null(strstr(d.reason, "quota 3"));
	}
}

static void in_after_thirty_minutes_below_shrinking_then_removing(void **state)
{
	struct service svc = service(30, 100);

	(void)state;
	svc.v.replicas = 3;
	svc.v.share_pct = 60;
	run(&svc, 18, 1790); /* 10 % of 3 x 60 % */
	assert_int_equal(svc.steps, 0);
	run(&svc, 18, 20);
	assert_int_equal(svc.last.step, GP_SCALE_SHRINK);
	assert_int_equal(svc.v.share_pct, 30);
	assert_non_null(strstr(svc.last.reason, "below 20 % for 1800 s"));
	/* 18 is 20 % of 3 x 30 %: no streak below starts there; less load. */
	run(&svc, 4.5, 3 * 3600);
	assert_int_equal(svc.v.replicas, 1); /* min_replicas */
	assert_int_equal(svc.last.step, GP_SCALE_IN);
}

static void noise_within_the_margin_never_flaps(void **state)
{
	struct service svc = service(40, 40);
	/* Around 75 %, +-5: above 80 % now and then, never under 70 %. */
	static const double noise[] = {0.74, 0.81, 0.77, 0.72, 0.79, 0.83, 0.71, 0.76};

	(void)state;
	svc.v.replicas = 2;
	for (int i = 0; i < 6 * 360; i++)
		run(&svc, noise[i % 8] * 80, 10);
	/* Once over 80 % the streak stays (never under 70 %): one step out
	 * after 5 minutes, then 2 x 75 % over 3 replicas is 50 %: nothing
	 * more, in either direction, for the six hours. */
	assert_true(svc.steps <= 1);
	assert_int_equal(svc.v.replicas, svc.steps ? 3 : 2);
}

static void a_step_in_that_would_scale_back_out_is_not_taken(void **state)
{
	struct service svc = service(50, 50);
	struct gp_scale_decision d;

	(void)state;
	svc.p.in_pct = 35; /* bands: 35 + 10 < 80 - 10 */
	svc.v.replicas = 2;
	run(&svc, 34, 1900); /* 34 % of 2 x 50 %: one replica would be at 68 %... */
	assert_int_equal(svc.v.replicas, 1);
	svc = service(50, 50);
	svc.p.in_pct = 45;
	svc.p.margin_pct = 5;
	svc.v.replicas = 2;
	svc.v.util = 0.44; /* ... but 88 % here: held */
	for (int i = 0; i < 200; i++) {
		svc.now_ms += TICK_MS;
		gp_scale_decide(&svc.p, &svc.s, &svc.v, svc.now_ms, &d);
		assert_int_equal(d.step, GP_SCALE_HOLD);
	}
	assert_non_null(strstr(d.reason, "too near scaling out"));
}

static void a_cooldown_follows_each_step(void **state)
{
	struct service svc = service(10, 100);

	(void)state;
	svc.p.out_window_s = 30;
	run(&svc, 50, 600); /* 500 % of 10 %, then of 40 %: above all along */
	assert_true(svc.steps >= 2);
	/* The second step came when the cooldown ended, not when its streak
	 * was full (30 s after the first). */
	assert_int_equal(svc.v.share_pct, 70);
	assert_int_equal(svc.last_at_ms - svc.first_at_ms, 300 * 1000);
}

static void policies_are_checked(void **state)
{
	struct gp_scale_policy p = gp_scale_policy_default(30);
	char err[160];

	(void)state;
	assert_int_equal(gp_scale_policy_check(&p, err, sizeof(err)), 0);
	p.in_pct = 65;
	assert_int_equal(gp_scale_policy_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "overlap"));
	p = gp_scale_policy_default(30);
	p.share_max_pct = 20;
	assert_int_equal(gp_scale_policy_check(&p, err, sizeof(err)), -EINVAL);
	p = gp_scale_policy_default(30);
	p.min_replicas = 3;
	p.max_replicas = 2;
	assert_int_equal(gp_scale_policy_check(&p, err, sizeof(err)), -EINVAL);
	assert_string_equal(gp_scale_step_name(GP_SCALE_OUT), "out");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(out_after_five_minutes_above_growing_the_share_first),
		cmocka_unit_test(a_replica_is_added_only_at_the_shares_ceiling),
		cmocka_unit_test(the_quota_and_max_are_ceilings),
		cmocka_unit_test(in_after_thirty_minutes_below_shrinking_then_removing),
		cmocka_unit_test(noise_within_the_margin_never_flaps),
		cmocka_unit_test(a_step_in_that_would_scale_back_out_is_not_taken),
		cmocka_unit_test(a_cooldown_follows_each_step),
		cmocka_unit_test(policies_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
