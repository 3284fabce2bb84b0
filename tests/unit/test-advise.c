/* test-advise.c — right-sizing from usage records (src/server/advise.c):
 * records of tasks made here, with what they held and used known, give
 * the proposals the rule says: peak memory plus headroom rounded up to
 * 256 MiB, the percentile of the used share over time rounded up, the
 * evidence, and what would have been freed; templates and task names
 * grouped apart, tenants apart, whole-device tasks left out; pages added
 * one after another give what one would; applied, a proposal is named
 * as the next version of its template. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/advise.h"

#define MS 1000

static struct gp_task task(int64_t id, int64_t tenant, const char *name, const char *tpl)
{
	struct gp_task t = {
		.id = id, .tenant = tenant, .mem_mib = 8192, .compute_pct = 50};

	snprintf(t.name, sizeof(t.name), "%s", name);
	snprintf(t.template_name, sizeof(t.template_name), "%s", tpl);
	return t;
}

/* A 10 s record of task id holding 8 GiB and 50 %, using `used_pct` of a
 * device and peaking at `peak_mib`. */
static struct gp_usage_record record(int64_t task_id, double used_pct, uint64_t peak_mib)
{
	return (struct gp_usage_record){.task = task_id,
					.start_ms = 0,
					.end_ms = 10 * MS,
					.mem_mib = 8192,
					.compute_pct = 50,
					.used_ms = (uint64_t)(used_pct * 100),
					.mem_peak_mib = peak_mib};
}

static const struct gp_advice *find(const struct gp_advice *a, int n, const char *name,
				    int64_t tenant)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].name, name) && a[i].tenant == tenant)
			return &a[i];
	return NULL;
}

static void run(const struct gp_task *tasks, int n_tasks,
		const struct gp_usage_record *recs, int n_recs, int page,
		struct gp_advice **ret, int *ret_n)
{
	struct gp_advise_options o = {.headroom_pct = 15, .percentile = 95};
	struct gp_advise *a;

	assert_int_equal(gp_advise_begin(tasks, n_tasks, &o, &a), 0);
	for (int at = 0; at < n_recs; at += page)
		assert_int_equal(gp_advise_add(a, recs + at,
					       n_recs - at < page ? n_recs - at : page),
				 0);
	assert_int_equal(gp_advise_end(a, ret, ret_n), 0);
}

static void a_templates_runs_are_sized_from_their_peak_and_percentile(void **state)
{
	/* Two runs of t4-half: 20 records at 10 %..29 % used, the peaks
	 * 1000 and 3000 MiB. */
	struct gp_task tasks[] = {task(1, 2, "infer", "t4-half"),
				  task(2, 3, "infer", "t4-half")};
	struct gp_usage_record recs[20];
	struct gp_advice *a;
	int n;

	(void)state;
	for (int i = 0; i < 20; i++)
		recs[i] = record(i % 2 ? 2 : 1, 10 + i, i % 2 ? 3000 : 1000);
	run(tasks, 2, recs, 20, 20, &a, &n);
	assert_int_equal(n, 1);
	assert_true(a[0].is_template);
	assert_string_equal(a[0].name, "t4-half");
	assert_int_equal(a[0].runs, 2);
	assert_int_equal(a[0].records, 20);
	assert_int_equal(a[0].mem_held_mib, 8192);
	assert_int_equal(a[0].mem_peak_mib, 3000);
	/* 3000 x 1.15 = 3450, up to 256 MiB steps: 3584. */
	assert_int_equal(a[0].mem_proposed_mib, 3584);
	/* 95 % of the time at or below 28 % (19 of 20 equal records). */
	assert_true(a[0].compute_percentile_pct > 27.9 &&
		    a[0].compute_percentile_pct < 28.1);
	assert_int_equal(a[0].compute_proposed_pct, 28);
	assert_true(a[0].compute_median_pct > 18.9 && a[0].compute_median_pct < 19.1);
	assert_true(a[0].compute_max_pct > 28.9 && a[0].compute_max_pct < 29.1);
	/* Freed over 200 s: (50 - 28) % x 200 s; (8192 - 3584) MiB x 200 s. */
	assert_true(a[0].freed_gpu_hours > 0.22 * 200 / 3600 - 1e-9 &&
		    a[0].freed_gpu_hours < 0.22 * 200 / 3600 + 1e-9);
	assert_true(a[0].freed_mem_gib_hours > 4.5 * 200 / 3600 - 1e-9 &&
		    a[0].freed_mem_gib_hours < 4.5 * 200 / 3600 + 1e-9);
	free(a);
}

static void task_names_group_per_tenant_and_whole_tasks_are_left_out(void **state)
{
	struct gp_task tasks[] = {task(1, 2, "train", ""), task(2, 3, "train", ""),
				  task(3, 2, "train", ""), task(4, 2, "big", "")};
	struct gp_usage_record recs[] = {record(1, 40, 2000), record(2, 90, 0),
					 record(3, 45, 2500), record(4, 100, 9000),
					 record(99, 10, 10)};
	struct gp_advice *a;
	const struct gp_advice *mine, *theirs;
	int n;

	(void)state;
	tasks[3].whole = true;
	run(tasks, 4, recs, 5, 2, &a, &n); /* pages of two */
	assert_int_equal(n, 2);
	mine = find(a, n, "train", 2);
	theirs = find(a, n, "train", 3);
	assert_non_null(mine);
	assert_non_null(theirs);
	assert_false(mine->is_template);
	assert_int_equal(mine->runs, 2);
	assert_int_equal(mine->compute_proposed_pct, 45);
	assert_int_equal(mine->mem_proposed_mib, 3072); /* 2500 x 1.15 = 2875 */
	/* No memory sampled: no memory proposal, nothing freed there. */
	assert_int_equal(theirs->mem_proposed_mib, 0);
	assert_true(theirs->freed_mem_gib_hours == 0);
	/* Used more than it held (borrowed): the proposal grows, freed < 0. */
	assert_int_equal(theirs->compute_proposed_pct, 90);
	assert_true(theirs->freed_gpu_hours < 0);
	free(a);
}

static void the_headroom_is_the_rules_to_the_mebibyte(void **state)
{
	/* 2000 MiB + 15 % is 2300: 2304 (9 x 256); 1 % more would give 2560. */
	struct gp_task tasks[] = {task(1, 2, "edge", "")};
	struct gp_usage_record recs[] = {record(1, 10, 2000)};
	struct gp_advice *a;
	int n;

	(void)state;
	run(tasks, 1, recs, 1, 1, &a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].mem_proposed_mib, 2304);
	free(a);
}

static void bad_options_are_refused(void **state)
{
	struct gp_advise_options o = {.headroom_pct = 15, .percentile = 40};
	struct gp_advise *a;

	(void)state;
	assert_int_equal(gp_advise_begin(NULL, 0, &o, &a), -EINVAL);
	o = (struct gp_advise_options){.headroom_pct = 101, .percentile = 95};
	assert_int_equal(gp_advise_begin(NULL, 0, &o, &a), -EINVAL);
}

/* Applying: the first NAME.vN free, or the version that has the slice. */
static void a_proposal_becomes_the_next_version(void **state)
{
	struct gp_template all[] = {
		{.name = "t4", .mem_mib = 4096, .compute_pct = 50},
		{.name = "t4.v2", .mem_mib = 2048, .compute_pct = 30},
	};
	char buf[GP_STORE_NAME_MAX];

	(void)state;
	assert_int_equal(gp_advise_version_name(all, 1, "t4", 1280, 25, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t4.v2");
	assert_int_equal(gp_advise_version_name(all, 2, "t4", 1280, 25, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "t4.v3");
	assert_int_equal(gp_advise_version_name(all, 2, "t4", 2048, 30, buf, sizeof(buf)),
			 -EEXIST);
	assert_string_equal(buf, "t4.v2");
	assert_int_equal(gp_advise_version_name(all, 2, "t4", 1, 1, buf, 4), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			a_templates_runs_are_sized_from_their_peak_and_percentile),
		cmocka_unit_test(
			task_names_group_per_tenant_and_whole_tasks_are_left_out),
		cmocka_unit_test(the_headroom_is_the_rules_to_the_mebibyte),
		cmocka_unit_test(bad_options_are_refused),
		cmocka_unit_test(a_proposal_becomes_the_next_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
