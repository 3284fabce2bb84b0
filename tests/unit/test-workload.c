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

/* The scarcity of w's shape with this CPU, devices, share and models. */
static double scarcity_of(const struct gp_workload *w, uint32_t cores, int devices,
			  uint16_t share_milli, uint64_t models)
{
	for (size_t i = 0; i < w->count; i++) {
		const struct gp_shape *s = &w->shape[i];

		if (s->cpu_milli == cores * 1000 && s->devices == devices &&
		    s->share == share_milli && s->models == models)
			return s->scarcity;
	}
	fail_msg("no shape of %u cores, %d x %u milli, models %#llx", cores, devices,
		 share_milli, (unsigned long long)models);
	return 0;
}

/* Scarcity = the pool's healthy devices (8 + 2 + 1 = 11) ÷ those that could
 * serve the shape: of its models, on nodes with enough of them, CPU and
 * host memory for one task. */
static void scarcity_follows_the_pool(void **state)
{
	const uint64_t t4 = 1u << 1;
	struct gp_node_spec pool[3] = {
		node_spec(32, 256, 8, 0),
		node_spec(8, 64, 2, 1),
		node_spec(16, 256, 2, 1),
	};
	struct gp_request r[7] = {
		whole(4, 1), whole(4, 1), whole(16, 1), whole(4, 2), share(4, 500),
		cpu_only(4), whole(64, 1),
	};
	struct gp_workload *w;
	(void)state;

	pool[2].device[1].healthy = false;
	for (int i = 1; i <= 4; i++)
		r[i].models = t4;
	r[4].mem_mib = 100 * 1024;
	assert_int_equal(gp_workload_from_requests(r, 7, 1.0, &w), 0);
	for (size_t i = 0; i < w->count; i++)
		assert_float_equal(w->shape[i].scarcity, 1, 1e-9);

	gp_workload_set_supply(w, pool, 3);
	assert_float_equal(scarcity_of(w, 4, 1, 1000, 0), 1, 1e-9);
	/* T4: 2 + 1 healthy devices. */
	assert_float_equal(scarcity_of(w, 4, 1, 1000, t4), 11.0 / 3, 1e-9);
	/* 16 cores: only the 16-core node, with 1 healthy T4. */
	assert_float_equal(scarcity_of(w, 16, 1, 1000, t4), 11.0, 1e-9);
	/* Two T4 on one node: only the 8-core node has two healthy ones. */
	assert_float_equal(scarcity_of(w, 4, 2, 1000, t4), 11.0 / 2, 1e-9);
	/* 100 GiB of host memory: only the 256 GiB T4 node. */
	assert_float_equal(scarcity_of(w, 4, 1, 500, t4), 11.0, 1e-9);
	/* CPU-only, and a shape no node can hold: 1. */
	assert_float_equal(scarcity_of(w, 4, 0, 0, 0), 1, 1e-9);
	assert_float_equal(scarcity_of(w, 64, 1, 1000, 0), 1, 1e-9);
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
		cmocka_unit_test(scarcity_follows_the_pool),
		cmocka_unit_test(bad_arguments_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
