/* test-verifier.c — the verifier's decisions (src/agent/verifier.c): a
 * process of no task, one on a device not its task's, one of a sliced
 * task without the interposer, a task over its slice (and within it plus
 * the slack), whole-device tasks, the agent itself; and whether a real
 * process has a library mapped (its own executable stands in for the
 * interposer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/verifier.h"

#define MIB (1ULL << 20)

static struct gp_verifier *make(const char *shim, uint64_t slack_mib)
{
	struct gp_verifier_options o = { .shim_path = shim, .slack_mib = slack_mib,
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
	/* No interposer check here (shim NULL): every process has it. */
	struct gp_verifier *v = make(NULL, 256);
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

/* A child that has (or has not) the "interposer" mapped: this test's own
 * executable is the library looked for; `sleep` does not map it. */
static void test_interposer_seen(void **state)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct gp_verifier *v;
	struct gp_violation out[4];
	pid_t with, without;

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	v = make(self, 0);
	with = fork();
	if (with == 0) {
		pause();
		_exit(0);
	}
	without = fork();
	if (without == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	usleep(200000); /* let sleep exec */
	assert_true(gp_verifier_has_shim(v, with));
	assert_false(gp_verifier_has_shim(v, without));
	struct gp_verify_proc procs[] = {
		{ .pid = with, .mem_bytes = 10 * MIB, .task = 1 },
		{ .pid = without, .mem_bytes = 10 * MIB, .task = 1 },
	};
	assert_int_equal(gp_verifier_check(v, 0, "GPU-0", tasks, 3, procs, 2, out, 4), 1);
	assert_int_equal(out[0].kind, GP_VIOLATION_UNSLICED);
	assert_int_equal(out[0].pid, without);
	assert_non_null(strstr(out[0].text, "without the interposer"));
	kill(with, SIGKILL);
	kill(without, SIGKILL);
	waitpid(with, NULL, 0);
	waitpid(without, NULL, 0);
	/* Dead processes are not taken for anything. */
	assert_false(gp_verifier_has_shim(v, without));
	gp_verifier_free(v);
}

static void test_bad_shim(void **state)
{
	struct gp_verifier_options o = { .shim_path = "/nonexistent/libgpushare.so" };
	struct gp_verifier *v = NULL;

	(void)state;
	assert_int_equal(gp_verifier_new(&o, &v), -ENOENT);
	assert_null(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_interposer_seen),
		cmocka_unit_test(test_bad_shim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
