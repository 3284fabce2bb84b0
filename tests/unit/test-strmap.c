/* test-strmap.c — the string-keyed hash table (src/base/strmap.c) against
 * a plain array under random puts and removes: every key is found with
 * its value, removed keys are gone, whatever the order of deletions (the
 * back-shift after a removal keeps every probe chain whole). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "base/rng.h"
#include "base/strmap.h"

#define KEYS 600

static void agrees_with_an_array(void **state)
{
	static intptr_t truth[KEYS];            /* 0: absent */
	struct gp_strmap m = { 0 };
	struct gp_rng rng;
	char key[32];

	(void)state;
	gp_rng_init(&rng, 3);
	for (int step = 0; step < 200000; step++) {
		int k = (int)gp_rng_below(&rng, KEYS);

		snprintf(key, sizeof(key), "key-%d", k);
		if (gp_rng_below(&rng, 3)) {
			truth[k] = step + 1;
			assert_int_equal(gp_strmap_put(&m, key, (void *)truth[k]), 0);
		} else {
			assert_ptr_equal(gp_strmap_remove(&m, key), (void *)truth[k]);
			truth[k] = 0;
		}
		if (step % 997 == 0) {
			size_t live = 0;

			for (int i = 0; i < KEYS; i++) {
				snprintf(key, sizeof(key), "key-%d", i);
				assert_ptr_equal(gp_strmap_get(&m, key), (void *)truth[i]);
				live += truth[i] != 0;
			}
			assert_int_equal(m.count, live);
		}
	}
	gp_strmap_release(&m);
	assert_null(gp_strmap_get(&m, "key-1"));
	assert_null(gp_strmap_remove(&m, "key-1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agrees_with_an_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
