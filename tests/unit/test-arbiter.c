/* test-arbiter.c — the compute arbiter's turns (src/shim/arbiter.c), in
 * one process: turn lengths follow the share, a live change of the share
 * applies at the next turn, a hard share is a cap even alone, and time a
 * holder spends idle is not charged to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "shim/arbiter.h"
#include "shim/region.h"

#define MS 1000000ULL

struct fixture {
	char dir[64];
	struct gp_region *region;
	struct gp_arbiter *arbiter;
};

static int setup(void **state)
{
	static struct fixture f;
	struct gp_task_limits limits = { .compute = 80, .priority = 5 };
	int slot;

	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-arbiter-XXXXXX");
	if (!mkdtemp(f.dir) || gp_region_open(f.dir, "GPU-test", 1 << 30, &f.region) < 0 ||
	    gp_region_join(f.region, "t", &limits, &slot) < 0 ||
	    gp_arbiter_open(f.dir, "GPU-test", f.region, slot, 50, &f.arbiter) < 0)
		return -1;
	*state = &f;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Launches (without work) until the turn held now has ended and a new
 * one started (the time held grows at every turn's end); returns the new
 * turn's length. */
static uint64_t next_turn(struct gp_arbiter *a)
{
	uint64_t used = gp_arbiter_used_ns(a);

	do
		gp_arbiter_before_launch(a, NULL, NULL);
	while (gp_arbiter_used_ns(a) == used);
	return gp_arbiter_turn_ns(a);
}

static void turns_follow_the_share_and_its_live_changes(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits now = { .compute = 20, .priority = 5 };
	uint64_t start;

	gp_arbiter_before_launch(f->arbiter, NULL, NULL);
	assert_int_equal(gp_arbiter_turn_ns(f->arbiter), 40 * MS);     /* 80 % of 50 ms */
	assert_int_equal(gp_region_set(f->region, "t", &now), 0);
	/* The turn in progress keeps its length; the next one is 20 % of the
	 * slice, and it comes only when the bucket has a turn's worth. */
	start = now_ns();
	assert_int_equal(next_turn(f->arbiter), 10 * MS);
	assert_true(now_ns() - start >= 40 * MS);
}

static void a_hard_share_is_a_cap_alone(void **state)
{
	struct fixture *f = *state;
	uint64_t start = now_ns(), turns = 0, used = gp_arbiter_used_ns(f->arbiter);

	/* 20 %: turns of 10 ms, with 40 ms of waiting after each on average. */
	while (now_ns() - start < 500 * MS) {
		next_turn(f->arbiter);
		turns++;
	}
	assert_in_range(turns, 8, 14);  /* 500 ms at 20 % in 10 ms turns: ~10 */
	assert_in_range((gp_arbiter_used_ns(f->arbiter) - used) / MS, 80, 160);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	nanosleep(&ts, NULL);
}

/* A service at 20 %, hard, that works 0.2 ms in every 10 ms (2 % of the
 * device) and waits for its work in between: charged only while busy, it
 * is never held back by its cap. (Charged for the time it held the
 * device idle too, it would use up its 20 % and wait about 40 ms for
 * every 10 ms turn.) */
static void idle_time_is_not_charged(void **state)
{
	struct fixture *f = *state;
	uint64_t start = now_ns(), used = gp_arbiter_used_ns(f->arbiter), longest = 0;

	while (now_ns() - start < 500 * MS) {
		uint64_t before = now_ns();

		gp_arbiter_before_launch(f->arbiter, NULL, NULL);
		if (now_ns() - before > longest)
			longest = now_ns() - before;
		sleep_ns(MS / 5);
		gp_arbiter_idle(f->arbiter);
		sleep_ns(10 * MS - MS / 5);
	}
	assert_in_range(longest / MS, 0, 19);
	assert_in_range((gp_arbiter_used_ns(f->arbiter) - used) / MS, 0, 49);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(turns_follow_the_share_and_its_live_changes),
		cmocka_unit_test(a_hard_share_is_a_cap_alone),
		cmocka_unit_test(idle_time_is_not_charged),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
