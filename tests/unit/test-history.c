/* test-history.c — the pool's own tasks replayed in time (src/sim/history.c):
 * small histories whose waits, durations and shares are worked out by hand
 * from history.h's model. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sim/history.h"

#define EPS 1e-9

/* A task of template "half" on one device: mem_mib 4096 at `pct` %, that
 * arrives at `arrival_s`, held its device for `run_s` and used `used_s`
 * of device time, its processes' peak 1024 MiB. */
static struct gp_history_task task(int64_t id, double arrival_s, double run_s,
				   double used_s, unsigned pct)
{
	struct gp_history_task t = {.id = id,
				    .arrival_ms = (int64_t)(arrival_s * 1000),
				    .run_ms = (int64_t)(run_s * 1000),
				    .used_ms = (int64_t)(used_s * 1000),
				    .mem_peak_mib = 1024,
				    .mem_mib = 4096,
				    .compute_pct = pct,
				    .devices = 1,
				    .priority = 5};

	snprintf(t.template_name, sizeof(t.template_name), "half");
	snprintf(t.name, sizeof(t.name), "infer");
	snprintf(t.tenant, sizeof(t.tenant), "vision");
	return t;
}

static const struct gp_history_card t4[] = {
	{.model = "Tesla T4", .mem_mib = 15360, .node = 0},
	{.model = "Tesla T4", .mem_mib = 15360, .node = 0},
};

static struct gp_history_setup on_cards(size_t cards)
{
	return (struct gp_history_setup){.policy = "default", .card = t4, .cards = cards};
}

static struct gp_history_override template_slice(uint32_t mem_mib, unsigned pct)
{
	struct gp_history_override o = {
		.is_template = true, .mem_mib = mem_mib, .compute_pct = pct};

	snprintf(o.name, sizeof(o.name), "half");
	return o;
}

/* Two tasks of 60 % arrive together on one card: the second waits
 * exactly the first's run. */
static void a_queue_forms_on_one_card(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[2];
	struct gp_history_result r;
	(void)state;

	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(r.placed, 2);
	assert_int_equal(r.never_placed, 0);
	assert_int_equal(out[0].start_ms, 0);
	assert_int_equal(out[1].start_ms, 10000);
	assert_float_equal(r.wait_max_s, 10.0, EPS);
	assert_float_equal(r.wait_p99_s, 10.0, EPS);
	assert_float_equal(r.wait_p50_s, 0.0, EPS); /* nearest rank: the smaller */
	assert_float_equal(r.wait_mean_s, 5.0, EPS);
	assert_float_equal(r.makespan_s, 20.0, EPS);
	/* 0.6 × 10 s twice over 1 card × 20 s; 3 s used twice over the same. */
	assert_float_equal(r.alloc_pct, 60.0, EPS);
	assert_float_equal(r.util_pct, 30.0, EPS);
	assert_float_equal(r.gpu_hours, 0.6 * 20 / 3600, EPS);
	assert_int_equal(r.models, 1);
	assert_string_equal(r.model[0].model, "Tesla T4");
	assert_int_equal(r.model[0].cards, 1);
	assert_int_equal(r.stretched, 0);
	assert_int_equal(r.would_fail, 0);
}

/* The same at 40 % (they used 30 %, so no stretch): both fit at once. */
static void a_smaller_share_removes_the_wait(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	struct gp_history_override o = template_slice(0, 40);
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[2];
	struct gp_history_result r;
	(void)state;

	s.override = &o;
	s.overrides = 1;
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(out[0].start_ms, 0);
	assert_int_equal(out[1].start_ms, 0);
	assert_int_equal(out[1].end_ms, 10000);
	assert_int_equal(out[1].compute_pct, 40);
	assert_int_equal(out[1].mem_mib, 4096); /* memory kept: 0 in the override */
	assert_float_equal(r.wait_max_s, 0.0, EPS);
	assert_float_equal(r.makespan_s, 10.0, EPS);
	assert_float_equal(r.alloc_pct, 80.0, EPS);
	assert_float_equal(r.util_pct, 60.0, EPS);
	assert_float_equal(r.gpu_hours, 0.4 * 20 / 3600, EPS);
	assert_int_equal(r.stretched, 0);
}

/* Below the share used (30 %): 3 s of work at 20 % takes 15 s. */
static void a_share_below_the_used_one_stretches_the_run(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	struct gp_history_override o = template_slice(0, 20);
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[2];
	struct gp_history_result r;
	(void)state;

	s.override = &o;
	s.overrides = 1;
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_true(out[0].stretched && out[1].stretched);
	assert_int_equal(r.stretched, 2);
	assert_int_equal(out[0].end_ms - out[0].start_ms, 15000);
	assert_int_equal(out[1].start_ms, 0);
	assert_float_equal(r.makespan_s, 15.0, EPS);
	assert_float_equal(r.gpu_hours, 0.2 * 30 / 3600, EPS);
	assert_float_equal(r.util_pct, 100.0 * 6 / 15, EPS);
}

/* A task on two devices that used 50 % of each: at 25 % its 10 s of
 * work (2 × 5 s) take 20 s; at 50 % it keeps its run. */
static void a_stretch_counts_every_device(void **state)
{
	struct gp_history_task t = task(1, 0, 10, 10, 80);
	struct gp_history_override o = template_slice(0, 25);
	struct gp_history_setup s = on_cards(2);
	struct gp_history_outcome out;
	struct gp_history_result r;
	(void)state;

	t.devices = 2;
	s.override = &o;
	s.overrides = 1;
	assert_int_equal(gp_history_run(&t, 1, &s, &r, &out), 0);
	assert_int_equal(out.end_ms, 20000);
	assert_float_equal(r.gpu_hours, 0.25 * 2 * 20 / 3600, EPS);
	o.compute_pct = 50;
	assert_int_equal(gp_history_run(&t, 1, &s, &r, &out), 0);
	assert_false(out.stretched);
	assert_int_equal(out.end_ms, 10000);
}

/* Memory below the recorded peak (1024 MiB): the task would have failed;
 * it is counted and replayed at its recorded slice, so the queue is the
 * recorded one. At the peak itself it would not. */
static void memory_below_the_peak_would_fail(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	struct gp_history_override o = template_slice(512, 40);
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[2];
	struct gp_history_result r;
	(void)state;

	s.override = &o;
	s.overrides = 1;
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(r.would_fail, 2);
	assert_true(out[0].would_fail);
	assert_int_equal(out[0].mem_mib, 4096);
	assert_int_equal(out[0].compute_pct, 60);
	assert_int_equal(out[1].start_ms, 10000);
	assert_float_equal(r.wait_max_s, 10.0, EPS);

	o.mem_mib = 1024;
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(r.would_fail, 0);
	assert_int_equal(out[0].mem_mib, 1024);
	assert_int_equal(out[1].start_ms, 0);
}

/* A second card takes the task that waited on one. */
static void an_added_card_removes_the_wait(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	struct gp_history_setup s = on_cards(2);
	struct gp_history_outcome out[2];
	struct gp_history_result r;
	(void)state;

	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(out[1].start_ms, 0);
	assert_float_equal(r.wait_max_s, 0.0, EPS);
	assert_float_equal(r.makespan_s, 10.0, EPS);
	assert_float_equal(r.alloc_pct, 60.0, EPS); /* 0.6 × 10 × 2 over 2 × 10 */
	assert_int_equal(r.model[0].cards, 2);
}

/* A holds the card from 0 to 10 s; B (priority 5) comes at 1 s, C
 * (priority 9) at 2 s: C starts when A ends, B when C does. */
static void priority_goes_first(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 1, 10, 3, 60),
					  task(3, 2, 10, 3, 60)};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[3];
	struct gp_history_result r;
	(void)state;

	tasks[2].priority = 9;
	assert_int_equal(gp_history_run(tasks, 3, &s, &r, out), 0);
	assert_int_equal(out[2].start_ms, 10000);
	assert_int_equal(out[1].start_ms, 20000);
	assert_float_equal(r.wait_max_s, 19.0, EPS);
	/* Without the priority, arrival order. */
	tasks[2].priority = 5;
	assert_int_equal(gp_history_run(tasks, 3, &s, &r, out), 0);
	assert_int_equal(out[1].start_ms, 10000);
	assert_int_equal(out[2].start_ms, 20000);
}

/* A task that does not fit passes; the next in the queue still goes. */
static void a_task_that_does_not_fit_is_passed_over(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 1, 10, 3, 80),
					  task(3, 2, 10, 3, 30)};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[3];
	struct gp_history_result r;
	(void)state;

	assert_int_equal(gp_history_run(tasks, 3, &s, &r, out), 0);
	assert_int_equal(out[2].start_ms, 2000);  /* beside task 1: 90 % */
	assert_int_equal(out[1].start_ms, 12000); /* when task 3 left room */
}

/* When B leaves, C (80 %) still does not fit beside A; D (30 %), queued
 * after it, does: it starts then, not after C (which, when A leaves, then
 * waits for D too). */
static void a_smaller_task_goes_past_one_that_does_not_fit(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 50), task(2, 0, 5, 3, 40),
					  task(3, 1, 10, 3, 80), task(4, 2, 10, 3, 30)};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[4];
	struct gp_history_result r;
	(void)state;

	assert_int_equal(gp_history_run(tasks, 4, &s, &r, out), 0);
	assert_int_equal(out[3].start_ms, 5000);
	assert_int_equal(out[2].start_ms, 15000);
}

/* Likewise on memory: when B leaves, C (40 %, 12 GiB) waits for memory;
 * D (45 %, 1 GiB) takes the compute. */
static void a_task_waiting_for_memory_holds_back_no_smaller_one(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 50), task(2, 0, 5, 3, 40),
					  task(3, 1, 10, 3, 40), task(4, 2, 10, 3, 45)};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_outcome out[4];
	struct gp_history_result r;
	(void)state;

	tasks[0].mem_mib = 8192;
	tasks[1].mem_mib = 1024;
	tasks[2].mem_mib = 12288;
	tasks[3].mem_mib = 1024;
	assert_int_equal(gp_history_run(tasks, 4, &s, &r, out), 0);
	assert_int_equal(out[3].start_ms, 5000);
	assert_int_equal(out[2].start_ms, 10000);
}

/* A task that does not fit holds back only what asks as much of the same
 * cards: on a T4 and an A100, C (T4, 60 %) waits for A; D (A100, 80 %),
 * queued after it, starts when B leaves the A100. */
static void a_larger_task_for_another_model_still_goes(void **state)
{
	static const struct gp_history_card two[] = {
		{.model = "Tesla T4", .mem_mib = 15360},
		{.model = "NVIDIA A100-SXM4-80GB", .mem_mib = 81920},
	};
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 5, 3, 60),
					  task(3, 1, 10, 3, 60), task(4, 2, 10, 3, 80)};
	struct gp_history_setup s = {.policy = "default", .card = two, .cards = 2};
	struct gp_history_outcome out[4];
	struct gp_history_result r;
	(void)state;

	snprintf(tasks[0].model, sizeof(tasks[0].model), "T4");
	snprintf(tasks[1].model, sizeof(tasks[1].model), "A100");
	snprintf(tasks[2].model, sizeof(tasks[2].model), "T4");
	snprintf(tasks[3].model, sizeof(tasks[3].model), "A100");
	assert_int_equal(gp_history_run(tasks, 4, &s, &r, out), 0);
	assert_int_equal(out[2].start_ms, 10000);
	assert_int_equal(out[3].start_ms, 5000);
}

/* A model the pool lacks, more memory than a card has, more devices than
 * a node: never placed, and the rest replayed. */
static void what_no_card_can_take_is_never_placed(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60),
					  task(3, 0, 10, 3, 60), task(4, 0, 10, 3, 60)};
	struct gp_history_setup s = on_cards(2);
	struct gp_history_outcome out[4];
	struct gp_history_result r;
	(void)state;

	snprintf(tasks[1].model, sizeof(tasks[1].model), "A100|H100");
	tasks[2].mem_mib = 20000;
	tasks[2].mem_peak_mib = 0;
	tasks[3].devices = 3;
	assert_int_equal(gp_history_run(tasks, 4, &s, &r, out), 0);
	assert_int_equal(r.placed, 1);
	assert_int_equal(r.never_placed, 3);
	assert_false(out[1].placed || out[2].placed || out[3].placed);
	assert_float_equal(r.makespan_s, 10.0, EPS);
	/* The vendor's name answers too. */
	snprintf(tasks[1].model, sizeof(tasks[1].model), "amd,nvidia");
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, out), 0);
	assert_int_equal(r.placed, 2);
}

/* GPU-hours go to the model of the card a task ran on. */
static void hours_go_to_the_model_the_task_ran_on(void **state)
{
	static const struct gp_history_card mixed[] = {
		{.model = "Tesla T4", .mem_mib = 15360},
		{.model = "NVIDIA A100-SXM4-80GB", .mem_mib = 81920},
	};
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 50), task(2, 0, 20, 3, 100)};
	struct gp_history_setup s = {.policy = "spread", .card = mixed, .cards = 2};
	struct gp_history_result r;
	(void)state;

	snprintf(tasks[0].model, sizeof(tasks[0].model), "A100");
	tasks[1].whole = true;
	snprintf(tasks[1].model, sizeof(tasks[1].model), "T4");
	assert_int_equal(gp_history_run(tasks, 2, &s, &r, NULL), 0);
	assert_int_equal(r.models, 2);
	assert_string_equal(r.model[0].model, "Tesla T4");
	assert_float_equal(r.model[0].gpu_hours, 20.0 / 3600, EPS);
	assert_string_equal(r.model[1].model, "NVIDIA A100-SXM4-80GB");
	assert_float_equal(r.model[1].gpu_hours, 0.5 * 10 / 3600, EPS);
	assert_float_equal(r.gpu_hours, 25.0 / 3600, EPS);
}

/* A task of a template takes its template's slice, a task of none its
 * name's (of its tenant, or of any tenant); whole tasks none. */
static void overrides_match_templates_then_names(void **state)
{
	struct gp_history_task a = task(1, 0, 1, 0, 60), b = task(2, 0, 1, 0, 60);
	struct gp_history_override o[] = {
		{.name = "infer", .tenant = "other", .compute_pct = 10},
		{.name = "infer", .compute_pct = 20},
		{.is_template = true, .name = "half", .compute_pct = 30}};
	struct gp_history_setup s = {.override = o, .overrides = 3};
	(void)state;

	b.template_name[0] = '\0';
	assert_ptr_equal(gp_history_override_of(&s, &a), &o[2]);
	assert_ptr_equal(gp_history_override_of(&s, &b), &o[1]);
	snprintf(b.tenant, sizeof(b.tenant), "other");
	assert_ptr_equal(gp_history_override_of(&s, &b), &o[0]);
	a.whole = true;
	assert_null(gp_history_override_of(&s, &a));
	s.overrides = 1;
	snprintf(b.tenant, sizeof(b.tenant), "vision");
	assert_null(gp_history_override_of(&s, &b));
}

static void bad_setups_are_refused(void **state)
{
	struct gp_history_task t = task(1, 0, 10, 3, 60);
	struct gp_history_setup s = on_cards(1);
	struct gp_history_card many[GP_NODE_DEVICES_MAX + 1];
	struct gp_history_result r;
	(void)state;

	s.policy = "nonsense";
	assert_int_equal(gp_history_run(&t, 1, &s, &r, NULL), -ENOENT);
	s = on_cards(0);
	assert_int_equal(gp_history_run(&t, 1, &s, &r, NULL), -EINVAL);
	for (size_t i = 0; i < GP_NODE_DEVICES_MAX + 1; i++)
		many[i] = t4[0];
	s = (struct gp_history_setup){
		.policy = "default", .card = many, .cards = GP_NODE_DEVICES_MAX + 1};
	assert_int_equal(gp_history_run(&t, 1, &s, &r, NULL), -EINVAL);
	many[GP_NODE_DEVICES_MAX].node = 1; /* a second node: fine */
	assert_int_equal(gp_history_run(&t, 1, &s, &r, NULL), 0);
	assert_int_equal(r.cards, GP_NODE_DEVICES_MAX + 1);
	t.devices = 0;
	assert_int_equal(gp_history_run(&t, 1, &s, &r, NULL), -EINVAL);
}

/* Every policy replays the same history to the same totals here (one
 * card: no choice to make), and an empty history to zeros. */
static void every_policy_replays(void **state)
{
	struct gp_history_task tasks[] = {task(1, 0, 10, 3, 60), task(2, 0, 10, 3, 60)};
	const char *names[] = {"random",     "dotprod", "gpuclustering",
			       "gpupacking", "bestfit", "fgd",
			       "binpack",    "spread",	"default"};
	struct gp_history_setup s = on_cards(1);
	struct gp_history_result r;
	(void)state;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		s.policy = names[i];
		assert_int_equal(gp_history_run(tasks, 2, &s, &r, NULL), 0);
		assert_float_equal(r.wait_max_s, 10.0, EPS);
	}
	assert_int_equal(gp_history_run(tasks, 0, &s, &r, NULL), 0);
	assert_int_equal(r.tasks, 0);
	assert_float_equal(r.makespan_s, 0.0, EPS);
	assert_float_equal(r.alloc_pct, 0.0, EPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_queue_forms_on_one_card),
		cmocka_unit_test(a_smaller_share_removes_the_wait),
		cmocka_unit_test(a_share_below_the_used_one_stretches_the_run),
		cmocka_unit_test(a_stretch_counts_every_device),
		cmocka_unit_test(memory_below_the_peak_would_fail),
		cmocka_unit_test(an_added_card_removes_the_wait),
		cmocka_unit_test(priority_goes_first),
		cmocka_unit_test(a_task_that_does_not_fit_is_passed_over),
		cmocka_unit_test(a_smaller_task_goes_past_one_that_does_not_fit),
		cmocka_unit_test(a_task_waiting_for_memory_holds_back_no_smaller_one),
		cmocka_unit_test(a_larger_task_for_another_model_still_goes),
		cmocka_unit_test(what_no_card_can_take_is_never_placed),
		cmocka_unit_test(hours_go_to_the_model_the_task_ran_on),
		cmocka_unit_test(overrides_match_templates_then_names),
		cmocka_unit_test(bad_setups_are_refused),
		cmocka_unit_test(every_policy_replays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
