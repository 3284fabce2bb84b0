/* test-replay.c — the openb protocol on a tiny trace (src/sim/replay.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/csvfile.h"
#include "sim/replay.h"

/* Two nodes of 4 GPUs (8 GPUs) and a list of 1- and 2-GPU pods. */
static void tiny_trace(struct gp_trace *t)
{
	static const struct gp_request pods[] = {
		{ .cpu_milli = 1000, .devices = 1, .whole = true },
		{ .cpu_milli = 1000, .devices = 2, .whole = true },
		{ .cpu_milli = 1000, .devices = 1, .dev_compute = 500 },
		{ .cpu_milli = 1000, .devices = 1, .dev_compute = 250 },
	};

	memset(t, 0, sizeof(*t));
	strcpy(t->model[0], "A100");
	t->models = 1;
	t->nodes = 2;
	t->node = calloc(2, sizeof(*t->node));
	for (int n = 0; n < 2; n++) {
		t->node[n] = (struct gp_node_spec){ .cpu_milli = 64000,
						    .mem_mib = 1 << 20,
						    .devices = 4 };
		for (int d = 0; d < 4; d++)
			t->node[n].device[d] = (struct gp_device_spec){
				.overcommit = 1000, .healthy = true };
	}
	t->gpus = 8;
	t->pods = 4;
	t->pod = malloc(sizeof(pods));
	memcpy(t->pod, pods, sizeof(pods));
}

static void inflation_stops_below_target(void **state)
{
	struct gp_trace t;
	struct gp_replay_config cfg = { .policy = "fgd", .inflate = 1.3, .seed = 7 };
	struct gp_replay_result r;
	struct gp_workload *w;
	(void)state;

	tiny_trace(&t);
	assert_int_equal(gp_workload_from_requests(t.pod, t.pods, 0.95, &w), 0);
	assert_int_equal(gp_replay_run(&t, w, &cfg, &r), 0);
	/* Demand never passes 130 % of 8 GPUs, and the next copy would. */
	assert_true(r.arrived_pct <= 130.0 + 1e-9);
	assert_true(r.arrived_pct > 130.0 - 25.0);
	assert_int_equal(r.placed + r.failed, r.pods);
	assert_true(r.pods > 4);
	/* Allocation never exceeds capacity nor what arrived. */
	assert_true(r.alloc_pct_at_100 <= 100.0 && r.alloc_pct_at_target <= 100.0);
	assert_true(r.alloc_pct_at_100 <= r.alloc_pct_at_target);
	gp_workload_free(w);
	gp_trace_release(&t);
}

static void a_seed_gives_one_answer(void **state)
{
	struct gp_trace t;
	struct gp_replay_config cfg = { .policy = "default", .inflate = 2.0, .seed = 3 };
	struct gp_replay_result a, b;
	struct gp_workload *w;
	(void)state;

	tiny_trace(&t);
	assert_int_equal(gp_workload_from_requests(t.pod, t.pods, 0.95, &w), 0);
	assert_int_equal(gp_replay_run(&t, w, &cfg, &a), 0);
	assert_int_equal(gp_replay_run(&t, w, &cfg, &b), 0);
	assert_int_equal(a.pods, b.pods);
	assert_int_equal(a.failed, b.failed);
	assert_float_equal(a.alloc_pct_at_target, b.alloc_pct_at_target, 1e-9);
	cfg.policy = "nonsense";
	assert_true(gp_replay_run(&t, w, &cfg, &a) < 0);
	gp_workload_free(w);
	gp_trace_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inflation_stops_below_target),
		cmocka_unit_test(a_seed_gives_one_answer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
