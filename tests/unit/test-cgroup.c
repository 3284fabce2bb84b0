/* test-cgroup.c — a cgroup per task (src/agent/cgroup.c), with real
 * processes: a process that moves itself in is its task's, and so is
 * what it starts after setsid() and a double fork; cgroup.kill stops all
 * of it at once; a task's cgroup left by a previous agent is found, still
 * running, by the next one, which can stop and remove it. Needs root and cgroup v2;
 * skips (with the reason) where they are not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup.h"

#define TEST_ALARM_S 20

static char tag[32];

static struct gp_cgroups *open_or_skip(int *left)
{
	struct gp_cgroups *c = NULL;
	char err[256] = "";

	if (geteuid() != 0) {
		print_message("skipped: cgroups need root\n");
		return NULL;
	}
	if (gp_cgroups_open(NULL, tag, &c, left, err, sizeof(err)) < 0) {
		print_message("skipped: no cgroup v2 here (%s)\n", err);
		return NULL;
	}
	return c;
}

/* A child that moves itself into the task's cgroup, then leaves its
 * session and forks a grandchild that outlives it; the grandchild's pid
 * comes back through the pipe. */
static pid_t start_escaper(int procs_fd, pid_t *ret_grandchild)
{
	int p[2];
	pid_t child;

	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t g;

		if (write(procs_fd, "0", 1) != 1)
			_exit(1);
		setsid();
		g = fork();
		if (g == 0) {
			setsid();
			for (;;)
				pause();
		}
		if (write(p[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], ret_grandchild, sizeof(*ret_grandchild)),
			 (ssize_t)sizeof(*ret_grandchild));
	close(p[0]);
	return child;
}

static bool gone_within(pid_t pid, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		/* The subreaper (this test) reaps what dies. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
		usleep(10000);
	}
	return false;
}

static void test_task_holds_what_it_starts(void **state)
{
	struct gp_cgroups *c = open_or_skip(NULL);
	pid_t child, grandchild;
	int64_t task = 0;
	int fd;

	(void)state;
	if (!c) {
		skip();
		return;
	}
	assert_int_equal(gp_cgroups_make(c, 7, &fd), 0);
	child = start_escaper(fd, &grandchild);
	close(fd);
	waitpid(child, NULL, 0);
	/* setsid and the double fork changed nothing: it is task 7's. */
	assert_int_equal(gp_cgroups_task_of(c, grandchild, &task), 0);
	assert_int_equal(task, 7);
	assert_int_equal(gp_cgroups_task_of(c, getpid(), &task), -ENOENT);
	assert_int_equal(gp_cgroups_populated(c, 7), 1);
	assert_int_equal(gp_cgroups_remove(c, 7), -EBUSY);
	assert_int_equal(gp_cgroups_signal(c, 7, 0), 1);
	assert_int_equal(gp_cgroups_kill(c, 7), 0);
	assert_true(gone_within(grandchild, 2000));
	for (int i = 0; i < 100 && gp_cgroups_populated(c, 7); i++)
		usleep(10000);
	assert_int_equal(gp_cgroups_populated(c, 7), 0);
	assert_int_equal(gp_cgroups_remove(c, 7), 0);
	gp_cgroups_free(c);
}

static void test_leftovers_stopped(void **state)
{
	struct gp_cgroups *c = open_or_skip(NULL);
	pid_t child, grandchild;
	int fd, left = -1;
	int64_t ids[4];

	(void)state;
	if (!c) {
		skip();
		return;
	}
	assert_int_equal(gp_cgroups_make(c, 9, &fd), 0);
	child = start_escaper(fd, &grandchild);
	close(fd);
	waitpid(child, NULL, 0);
	gp_cgroups_free(c);
	/* The next agent on the same subtree finds it, still running, and
	 * may clear it. */
	c = open_or_skip(&left);
	assert_non_null(c);
	assert_int_equal(left, 1);
	assert_int_equal(gp_cgroups_tasks(c, ids, 4), 1);
	assert_int_equal(ids[0], 9);
	assert_int_equal(gp_cgroups_populated(c, 9), 1);
	assert_true(kill(grandchild, 0) == 0);
	assert_int_equal(gp_cgroups_clear(c, 9), 0);
	assert_true(gone_within(grandchild, 2000));
	assert_int_equal(gp_cgroups_populated(c, 9), 0);
	gp_cgroups_free(c); /* and with it this test's subtree */
}

static void test_bad_place(void **state)
{
	struct gp_cgroups *c = NULL;
	char err[256] = "";

	(void)state;
	assert_true(gp_cgroups_open("/tmp/not-a-cgroup", tag, &c, NULL, err, sizeof(err)) < 0);
	assert_null(c);
	assert_true(strstr(err, "not under the cgroup v2 mount") ||
		    strstr(err, "no cgroup v2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_holds_what_it_starts),
		cmocka_unit_test(test_leftovers_stopped),
		cmocka_unit_test(test_bad_place),
	};

	snprintf(tag, sizeof(tag), "test-%d", (int)getpid());
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(TEST_ALARM_S);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
