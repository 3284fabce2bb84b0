/* test-rng.c — the seedable generator (src/base/rng.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/rng.h"

static void same_seed_same_sequence(void **state)
{
	struct gp_rng a, b, c;
	(void)state;

	gp_rng_init(&a, 42);
	gp_rng_init(&b, 42);
	gp_rng_init(&c, 43);
	for (int i = 0; i < 100; i++) {
		uint64_t x = gp_rng_next(&a);

		assert_int_equal(x, gp_rng_next(&b));
		assert_int_not_equal(x, gp_rng_next(&c));
	}
}

static void below_stays_in_range_and_covers_it(void **state)
{
	struct gp_rng r;
	unsigned seen[7] = { 0 };
	(void)state;

	gp_rng_init(&r, 0);
	for (int i = 0; i < 7000; i++) {
		uint64_t x = gp_rng_below(&r, 7);

		assert_true(x < 7);
		seen[x]++;
	}
	for (int i = 0; i < 7; i++)
		assert_in_range(seen[i], 850, 1150);
	assert_int_equal(gp_rng_below(&r, 1), 0);
}

static void shuffle_is_a_permutation(void **state)
{
	struct gp_rng r;
	uint32_t v[100];
	unsigned seen[100] = { 0 }, moved = 0;
	(void)state;

	for (uint32_t i = 0; i < 100; i++)
		v[i] = i;
	gp_rng_init(&r, 5);
	gp_rng_shuffle(&r, v, 100, sizeof(v[0]));
	for (uint32_t i = 0; i < 100; i++) {
		seen[v[i]]++;
		moved += v[i] != i;
	}
	for (int i = 0; i < 100; i++)
		assert_int_equal(seen[i], 1);
	assert_true(moved > 90);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_seed_same_sequence),
		cmocka_unit_test(below_stays_in_range_and_covers_it),
		cmocka_unit_test(shuffle_is_a_permutation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
