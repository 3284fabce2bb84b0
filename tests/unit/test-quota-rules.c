/* test-quota-rules.c — what a quota allows (src/core/quota.c): within the
 * guarantee, borrowing up to guaranteed + borrowable, over it; a tenant's
 * overall quota of nothing is no limit, a model quota of nothing allows
 * nothing; the room left for more asks of one size (a service's
 * replicas). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/quota.h"

static struct gp_quota_use use(uint64_t mem, uint64_t pct)
{
	return (struct gp_quota_use){ mem, pct };
}

static void guarantee_then_borrowing_then_over(void **state)
{
	struct gp_quota q = gp_quota_overall(8192, 8192, 100, 50);

	(void)state;
	assert_false(q.unlimited);
	assert_true(gp_quota_within(&q, use(8192, 100), false));
	assert_false(gp_quota_borrowing(&q, use(8192, 100)));
	assert_false(gp_quota_within(&q, use(8193, 10), false));       /* memory past it */
	assert_false(gp_quota_within(&q, use(10, 101), false));        /* compute past it */
	assert_true(gp_quota_borrowing(&q, use(10, 101)));
	assert_true(gp_quota_within(&q, use(16384, 150), true));
	assert_false(gp_quota_within(&q, use(16385, 150), true));
	assert_false(gp_quota_within(&q, use(16384, 151), true));
	assert_int_equal(gp_quota_limit(&q).mem_mib, 16384);
	assert_int_equal(gp_quota_limit(&q).compute_pct, 150);
	assert_int_equal(gp_quota_sum(use(1, 2), use(3, 4)).mem_mib, 4);
	assert_int_equal(gp_quota_sum(use(1, 2), use(3, 4)).compute_pct, 6);
}

static void overall_nothing_is_no_limit_no_guarantee_model_nothing_is_nothing(void **state)
{
	struct gp_quota admin = gp_quota_overall(0, 0, 0, 0);
	struct gp_quota model = { 0 };
	struct gp_quota memory_only = gp_quota_overall(4096, 0, 0, 0);

	(void)state;
	assert_true(admin.unlimited);
	/* No limit, nothing guaranteed: all it holds is borrowed. */
	assert_true(gp_quota_within(&admin, use(UINT64_MAX / 2, UINT64_MAX / 2), true));
	assert_false(gp_quota_within(&admin, use(1, 0), false));
	assert_true(gp_quota_within(&admin, use(0, 0), false));
	assert_true(gp_quota_borrowing(&admin, use(1 << 30, 1000)));
	assert_false(gp_quota_within(&model, use(1, 0), true));
	assert_true(gp_quota_within(&model, use(0, 0), true));
	assert_false(memory_only.unlimited);                   /* a part set is a limit */
	assert_false(gp_quota_within(&memory_only, use(0, 1), true));
}

/* The room a quota leaves for more asks of one size: the fewest memory or
 * compute hold, none past the quota, no limit where there is none. */
static void room_for_more_of_one_size(void **state)
{
	struct gp_quota q = gp_quota_overall(8192, 8192, 100, 50);
	struct gp_quota none = gp_quota_overall(0, 0, 0, 0);

	(void)state;
	assert_int_equal(gp_quota_room(&q, (struct gp_quota_use){0, 0},
				       (struct gp_quota_use){4096, 20}), 4);  /* memory: 16 GiB / 4 */
	assert_int_equal(gp_quota_room(&q, (struct gp_quota_use){4096, 40},
				       (struct gp_quota_use){2048, 30}), 3);  /* compute: 110 / 30 */
	assert_int_equal(gp_quota_room(&q, (struct gp_quota_use){20000, 0},
				       (struct gp_quota_use){1024, 10}), 0);  /* past it already */
	assert_int_equal(gp_quota_room(&q, (struct gp_quota_use){0, 0},
				       (struct gp_quota_use){0, 0}), UINT_MAX);
	assert_int_equal(gp_quota_room(&none, (struct gp_quota_use){1u << 30, 900},
				       (struct gp_quota_use){4096, 50}), UINT_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guarantee_then_borrowing_then_over),
		cmocka_unit_test(overall_nothing_is_no_limit_no_guarantee_model_nothing_is_nothing),
		cmocka_unit_test(room_for_more_of_one_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
