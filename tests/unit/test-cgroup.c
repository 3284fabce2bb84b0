/* test-cgroup.c — a cgroup per task (src/agent/cgroup.c), with real
 * processes: a process that moves itself in is its task's, and so is
 * what it starts after setsid() and a double fork; cgroup.kill stops all
 * of it at once; a task's cgroup left by a previous agent is found, still
 * running, by the next one, which can stop and remove it; a task held to
 * pids.max cannot fork past it, and one held to memory.max is killed by
 * the kernel past it, which the cgroup counts (in cgroup v2 or, on a
 * machine whose controllers are v1's, there). Needs root and cgroup v2;
 * skips (with the reason) where they are not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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
	struct gp_cgroup_join join;
	pid_t child, grandchild;
	int64_t task = 0;

	(void)state;
	if (!c) {
		skip();
		return;
	}
	assert_int_equal(gp_cgroups_make(c, 7, &join), 0);
	child = start_escaper(join.fd[0], &grandchild);
	gp_cgroup_join_close(&join);
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
	struct gp_cgroup_join join;
	pid_t child, grandchild;
	int left = -1;
	int64_t ids[4];

	(void)state;
	if (!c) {
		skip();
		return;
	}
	assert_int_equal(gp_cgroups_make(c, 9, &join), 0);
	child = start_escaper(join.fd[0], &grandchild);
	gp_cgroup_join_close(&join);
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

/* A child in the task's cgroups that runs what(); its exit status. */
static int in_task(struct gp_cgroups *c, int64_t task, int (*what)(void))
{
	struct gp_cgroup_join join;
	int status;
	pid_t child;

	assert_int_equal(gp_cgroups_make(c, task, &join), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (int i = 0; i < join.n; i++)
			if (write(join.fd[i], "0", 1) != 1)
				_exit(100);
		_exit(what());
	}
	gp_cgroup_join_close(&join);
	assert_int_equal(waitpid(child, &status, 0), child);
	return status;
}

/* Forks children that wait, until a fork fails: 0 when one failed before
 * 64 were made (their count is 1 plus the ones made). */
static int fork_many(void)
{
	pid_t kids[64];
	int made = 0, e = 0;

	for (; made < 64; made++) {
		kids[made] = fork();
		if (kids[made] < 0) {
			e = errno;
			break;
		}
		if (kids[made] == 0) {
			pause();
			_exit(0);
		}
	}
	for (int i = 0; i < made; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	return made < 64 && e == EAGAIN ? 0 : 1;
}

/* Takes 128 MiB and touches every page. */
static int eat_memory(void)
{
	size_t size = 128 << 20;
	volatile char *p = malloc(size); /* volatile: not optimized away */

	if (!p)
		return 2;
	for (size_t i = 0; i < size; i += 4096)
		p[i] = 1;
	free((char *)p);
	return 0;
}

/* test_limits's cgroups, cleared even when it fails. */
static struct gp_cgroups *limited;

static int limits_teardown(void **state)
{
	(void)state;
	if (limited) {
		gp_cgroups_clear(limited, 11);
		gp_cgroups_clear(limited, 12);
		limited = gp_cgroups_free(limited);
	}
	return 0;
}

static void test_limits(void **state)
{
	struct gp_cgroups *c = limited = open_or_skip(NULL);
	int status;

	(void)state;
	if (!c) {
		skip();
		return;
	}
	gp_cgroups_limit(c, &(struct gp_cgroup_limits){ .memory_max = 32 << 20, .pids_max = 16 });
	if (strstr(gp_cgroups_limits_text(c), "no ")) {
		print_message("skipped: %s\n", gp_cgroups_limits_text(c));
		skip();
		return;
	}
	assert_non_null(strstr(gp_cgroups_limits_text(c), "memory.max 32 MiB per task"));
	assert_non_null(strstr(gp_cgroups_limits_text(c), "pids.max 16 per task"));
	status = in_task(c, 11, fork_many);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	gp_cgroups_clear(c, 11);
	status = in_task(c, 12, eat_memory);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_true(gp_cgroups_oom_kills(c, 12) >= 1);
	assert_int_equal(gp_cgroups_oom_kills(c, 11), 0);
	assert_int_equal(gp_cgroups_remove(c, 12), 0);
}

/* A server in a cgroup named "supervisor" (systemd's DelegateSubgroup=)
 * makes its subtree beside it, in the parent, which holds no process. */
static void test_supervisor(void **state)
{
	struct gp_cgroups *c = open_or_skip(NULL);
	char parent[PATH_MAX], sup[PATH_MAX + 16], procs[PATH_MAX + 32], want[PATH_MAX + 64];
	int status;
	pid_t child;

	(void)state;
	if (!c) {
		skip();
		return;
	}
	/* This test's own subtree is gpupool-TAG beside where it runs. */
	snprintf(parent, sizeof(parent), "%s", gp_cgroups_path(c));
	*strrchr(parent, '/') = '\0';
	gp_cgroups_free(c);
	snprintf(parent + strlen(parent), sizeof(parent) - strlen(parent), "/gp-sup-%s", tag);
	snprintf(sup, sizeof(sup), "%s/supervisor", parent);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sup);
	snprintf(want, sizeof(want), "%s/gpupool-%s", parent, tag);
	assert_int_equal(mkdir(parent, 0755), 0);
	assert_int_equal(mkdir(sup, 0755), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct gp_cgroups *in = NULL;
		char err[256];
		FILE *f = fopen(procs, "w");
		bool beside;

		if (!f || fprintf(f, "0") < 0 || fclose(f) != 0)
			_exit(2);
		if (gp_cgroups_open(NULL, tag, &in, NULL, err, sizeof(err)) < 0)
			_exit(3);
		beside = strcmp(gp_cgroups_path(in), want) == 0;
		gp_cgroups_free(in);
		_exit(beside ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	rmdir(want);
	assert_int_equal(rmdir(sup), 0);
	assert_int_equal(rmdir(parent), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
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
		cmocka_unit_test_teardown(test_limits, limits_teardown),
		cmocka_unit_test(test_supervisor),
		cmocka_unit_test(test_bad_place),
	};

	snprintf(tag, sizeof(tag), "test-%d", (int)getpid());
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(TEST_ALARM_S);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
