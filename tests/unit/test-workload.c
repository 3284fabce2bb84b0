/* test-workload.c — target workloads from request lists
 * (src/core/workload.c). */
#include "helpers.h"

#include <errno.h>

#include "core/workload.h"

static void shapes_are_counted_and_cut(void **state)
{
	struct gp_request r[20];
	struct gp_workload *w;
	(void)state;

	/* 10 whole GPUs, 6 half shares (two memory sizes: one shape),
	 * 3 CPU-only, 1 rare 2-GPU gang. */
	for (int i = 0; i < 10; i++)
		r[i] = whole(8, 1);
	for (int i = 10; i < 16; i++) {
		r[i] = share(4, 500);
		r[i].mem_mib = i % 2 ? 1000 : 3000;
	}
	for (int i = 16; i < 19; i++)
		r[i] = cpu_only(2);
	r[19] = whole(16, 2);

	assert_int_equal(gp_workload_from_requests(r, 20, 0.95, &w), 0);
	assert_int_equal(w->count, 3);              /* 19 of 20 = 95 % */
	assert_int_equal(w->shape[0].devices, 1);
	assert_int_equal(w->shape[0].share, 1000);
	assert_int_equal(w->shape[1].share, 500);
	assert_int_equal(w->shape[1].mem_mib, 2000);
	assert_int_equal(w->shape[2].devices, 0);
	assert_float_equal(w->shape[0].weight, 10.0 / 19, 1e-6);
	assert_float_equal(w->shape[2].weight, 3.0 / 19, 1e-6);
	w = gp_workload_free(w);

	assert_int_equal(gp_workload_from_requests(r, 20, 1.0, &w), 0);
	assert_int_equal(w->count, 4);
	assert_float_equal(w->shape[3].weight, 1.0 / 20, 1e-6);
	gp_workload_free(w);
}

static void bad_arguments_are_refused(void **state)
{
	struct gp_request r = whole(1, 1);
	struct gp_workload *w = NULL;
	(void)state;

	assert_int_equal(gp_workload_from_requests(&r, 0, 0.95, &w), -EINVAL);
	assert_int_equal(gp_workload_from_requests(&r, 1, 0.0, &w), -EINVAL);
	assert_int_equal(gp_workload_from_requests(&r, 1, 1.5, &w), -EINVAL);
	assert_null(w);
	assert_null(gp_workload_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shapes_are_counted_and_cut),
		cmocka_unit_test(bad_arguments_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
