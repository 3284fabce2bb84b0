/* test-verifier.c — the verifier's decisions (src/agent/verifier.c): a
 * process of no task, one on a device not its task's, one of a sliced
 * task that uses the device without having joined its task there (and
 * one that has not used it yet), a task over its slice now or one of its
 * processes at some moment since its start (and within it plus the
 * slack), whole-device tasks, the agent itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/verifier.h"

#define MIB (1ULL << 20)

static struct gp_verifier *make(bool check_joined, uint64_t slack_mib)
{
	struct gp_verifier_options o = { .check_joined = check_joined, .slack_mib = slack_mib,
					 .self = 1 };
	struct gp_verifier *v = NULL;

	assert_int_equal(gp_verifier_new(&o, &v), 0);
	return v;
}

static const struct gp_verify_task tasks[] = {
	{ .id = 1, .sliced = true, .mem_mib = 1024, .devices = 1, .device = { 0 } },
	{ .id = 2, .sliced = false, .devices = 1, .device = { 1 } },
	{ .id = 3, .sliced = true, .mem_mib = 2048, .devices = 2, .device = { 0, 1 } },
};

static void test_decisions(void **state)
{
	/* No check of joining here: tasks run without the interposer. */
	struct gp_verifier *v = make(false, 256);
	struct gp_verify_proc on0[] = {
		{ .pid = 100, .mem_bytes = 900 * MIB, .task = 1 },  /* within */
		{ .pid = 101, .mem_bytes = 300 * MIB, .task = 1 },  /* 1200 > 1024, < 1280 */
		{ .pid = 200, .mem_bytes = 10 * MIB, .task = 2, .util_pct = -1 }, /* not its device */
		{ .pid = 300, .mem_bytes = 64 * MIB, .task = 0, .util_pct = 87 }, /* a stranger */
		{ .pid = 1, .mem_bytes = 64 * MIB, .task = 0 },     /* the agent */
		{ .pid = 400, .mem_bytes = 64 * MIB, .task = 99 },  /* task just ended */
	};
	struct gp_violation out[8];
	int n = gp_verifier_check(v, 0, "GPU-0", tasks, 3, on0, 6, out, 8);

	(void)state;
	assert_int_equal(n, 2);
	assert_int_equal(out[0].kind, GP_VIOLATION_DEVICE);
	assert_int_equal(out[0].task, 2);
	assert_int_equal(out[0].pid, 200);
	assert_non_null(strstr(out[0].text, "not one of its devices"));
	assert_int_equal(out[1].kind, GP_VIOLATION_STRANGER);
	assert_int_equal(out[1].pid, 300);
	assert_int_equal(out[1].task, 0);
	assert_non_null(strstr(out[1].text, "belongs to no task; it uses 87 % of the device"));
	assert_null(strstr(out[0].text, "% of the device")); /* utilization unknown */
	/* Past the slack: task 1 is over, and the largest process is named. */
	on0[1].mem_bytes = 500 * MIB;
	n = gp_verifier_check(v, 0, "GPU-0", tasks, 3, on0, 4, out, 8);
	assert_int_equal(n, 3);
	assert_int_equal(out[2].kind, GP_VIOLATION_OVER);
	assert_int_equal(out[2].task, 1);
	assert_int_equal(out[2].pid, 100);
	assert_int_equal(out[2].mem_mib, 1400);
	assert_non_null(strstr(out[2].text, "task 1 holds 1400 MiB on GPU-0 in 2 process(es)"));
	assert_non_null(strstr(out[2].text, "slice of 1024 MiB"));
	/* A whole-device task may hold all of its device. */
	struct gp_verify_proc on1[] = { { .pid = 201, .mem_bytes = 80000 * MIB, .task = 2 } };
	assert_int_equal(gp_verifier_check(v, 1, "GPU-1", tasks, 3, on1, 1, out, 8), 0);
	/* More found than room: all counted. */
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, on0, 4, out, 1), 3);
	gp_verifier_free(v);
}

/* A process that never joined its task's file on the device (mapping the
 * interposer's library proves nothing) is caught once it uses the device:
 * memory past the slack, or work; one that joined is not. */
static void test_joining(void **state)
{
	struct gp_verifier *v = make(true, 0);
	struct gp_verify_proc procs[] = {
		{ .pid = 10, .mem_bytes = 10 * MIB, .mem_max_bytes = 10 * MIB, .task = 1,
		  .registered = true, .util_pct = 50 },
		{ .pid = 11, .mem_bytes = 10 * MIB, .mem_max_bytes = 10 * MIB, .task = 1,
		  .util_pct = -1 },                               /* holds memory */
		{ .pid = 12, .task = 1, .util_pct = 30 },         /* runs work */
		{ .pid = 13, .task = 1, .util_pct = 0 },          /* a context, nothing yet */
		{ .pid = 14, .task = 2, .util_pct = 90 },         /* whole device: no slice */
	};
	struct gp_violation out[8];

	(void)state;
	assert_int_equal(gp_verifier_check(v, 1, "GPU-1", tasks, 3, procs + 4, 1, out, 8), 0);
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, procs, 4, out, 8), 2);
	assert_int_equal(out[0].kind, GP_VIOLATION_UNSLICED);
	assert_int_equal(out[0].pid, 11);
	assert_non_null(strstr(out[0].text, "without the interposer: it never joined its task"));
	assert_int_equal(out[1].kind, GP_VIOLATION_UNSLICED);
	assert_int_equal(out[1].pid, 12);
	assert_non_null(strstr(out[1].text, "it uses 30 % of the device"));
	/* Memory the driver takes for a context is within the slack. */
	gp_verifier_free(v);
	v = make(true, 512);
	procs[1].mem_bytes = procs[1].mem_max_bytes = 300 * MIB;
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, procs, 2, out, 8), 0);
	gp_verifier_free(v);
}

/* Memory taken and given back between two looks: the most a process held
 * since its start (NVML's accounting) past the slice and the slack is a
 * violation naming that process and figure, even when it holds little now
 * and its task together holds less than its slice. */
static void test_peak_between_looks(void **state)
{
	struct gp_verifier *v = make(true, 256);
	struct gp_verify_proc procs[] = {
		{ .pid = 20, .mem_bytes = 100 * MIB, .mem_max_bytes = 8192 * MIB, .task = 1,
		  .registered = true },
		{ .pid = 21, .mem_bytes = 200 * MIB, .mem_max_bytes = 1000 * MIB, .task = 1,
		  .registered = true },
	};
	struct gp_violation out[4];

	(void)state;
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, procs, 2, out, 4), 1);
	assert_int_equal(out[0].kind, GP_VIOLATION_OVER);
	assert_int_equal(out[0].pid, 20);
	assert_int_equal(out[0].mem_mib, 8192);
	assert_non_null(strstr(out[0].text, "process 20 of task 1 held 8192 MiB on GPU-0 at some "
					    "moment"));
	/* Each within the slice and the slack at its peak: nothing, though the
	 * peaks add up past it (they need not have been at once). */
	procs[0].mem_max_bytes = 1200 * MIB;
	procs[1].mem_max_bytes = 1200 * MIB;
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, procs, 2, out, 4), 0);
	gp_verifier_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_joining),
		cmocka_unit_test(test_peak_between_looks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
