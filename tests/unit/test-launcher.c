/* test-launcher.c — the agent's process groups (src/agent/launcher.c),
 * with real shells: output and exit codes, the task's environment (only
 * what it is given) and working directory, start-up errors and their
 * reasons, the agent's descriptors closed, a task run as another user
 * (as root), and stopping a group that obeys SIGTERM, one that ignores
 * it, and one whose children outlive the shell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tree.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/launcher.h"

#define TEST_ALARM_S 20

/* What every task here gets unless a test says otherwise. */
static const char *const plain_env[] = { "PATH=/usr/bin:/bin", NULL };

/* gp_launch_start with a reason buffer, and the plain environment when
 * the spec has none. */
static char why[512];

static int start(struct gp_launch *spec, pid_t *pgid)
{
	why[0] = '\0';
	if (!spec->env)
		spec->env = plain_env;
	return gp_launch_start(spec, pgid, why, sizeof(why));
}

struct fixture {
	char dir[64];
	char log[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/gp-launcher-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->log, sizeof(f->log), "%s/task.log", f->dir);
	alarm(TEST_ALARM_S);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree(f->dir);
	free(f);
	alarm(0);
	return 0;
}

/* Runs `command` to its end; returns its exit code. */
static int run(struct fixture *f, const char *command, const char *const *env)
{
	struct gp_launch spec = { .command = command, .log_path = f->log, .env = env };
	pid_t pgid;
	int code = -1;

	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	return code;
}

static void log_read(struct fixture *f, char *buf, size_t size)
{
	FILE *in = fopen(f->log, "r");
	size_t n;

	assert_non_null(in);
	n = fread(buf, 1, size - 1, in);
	buf[n] = '\0';
	fclose(in);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_output_and_exit_code(void **state)
{
	struct fixture *f = *state;
	char log[256];

	assert_int_equal(run(f, "echo to-stdout; echo to-stderr >&2; exit 3", NULL), 3);
	log_read(f, log, sizeof(log));
	assert_non_null(strstr(log, "to-stdout\n"));
	assert_non_null(strstr(log, "to-stderr\n"));
	/* The log is appended to, not replaced. */
	assert_int_equal(run(f, "echo again", NULL), 0);
	log_read(f, log, sizeof(log));
	assert_non_null(strstr(log, "to-stdout\n"));
	assert_non_null(strstr(log, "again\n"));
}

static void test_environment(void **state)
{
	struct fixture *f = *state;
	const char *env[] = { "PATH=/usr/bin:/bin", "GPUPOOL_COMPUTE=30", "HOME=/gp-test-home",
			      NULL };

	/* The task's environment is what it is given, nothing of ours. */
	assert_int_equal(setenv("GP_TEST_INHERITED", "yes", 1), 0);
	assert_int_equal(run(f, "test \"$GPUPOOL_COMPUTE\" = 30 && test \"$HOME\" = /gp-test-home"
				" && test -z \"$GP_TEST_INHERITED\"", env),
			 0);
	assert_int_equal(run(f, "test \"$(env | grep -vc '^PWD=')\" = 3", env), 0);
}

/* Signals the agent ignores or blocks are not the task's. */
static void test_signals_reset(void **state)
{
	struct fixture *f = *state;
	sigset_t block, old;

	signal(SIGINT, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	/* The masks of the task's own processes (sed reads its own): the
	 * SIGINT bit of the ignored ones and the SIGTERM bit of the blocked
	 * ones must be clear. */
	assert_int_equal(run(f, "ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status); "
				"blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' /proc/self/status); "
				"[ $((0x$ign & 0x2)) -eq 0 ] && [ $((0x$blk & 0x4000)) -eq 0 ]",
			     NULL),
			 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGINT, SIG_DFL);
}

static void test_workdir_and_limits(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "pwd; ulimit -n", .log_path = f->log,
				  .workdir = f->dir, .max_open_files = 64 };
	char log[256], want[128];
	pid_t pgid;
	int code;

	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_equal(code, 0);
	log_read(f, log, sizeof(log));
	snprintf(want, sizeof(want), "%s\n64\n", f->dir);
	assert_string_equal(log, want);
}

static void test_start_errors(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "true", .log_path = f->log,
				  .workdir = "/nonexistent/gp-dir" };
	pid_t pgid = 0;

	assert_int_equal(start(&spec, &pgid), -ENOENT);       /* no such workdir */
	assert_non_null(strstr(why, "cannot enter the working directory /nonexistent/gp-dir"));
	spec.workdir = NULL;
	spec.log_path = "/nonexistent/gp-dir/task.log";
	assert_int_equal(start(&spec, &pgid), -ENOENT);       /* log not writable */
	spec.log_path = f->log;
	spec.command = "";
	assert_int_equal(start(&spec, &pgid), -EINVAL);
	assert_int_equal(gp_launch_start(NULL, &pgid, why, sizeof(why)), -EINVAL);
	assert_int_equal(pgid, 0);
	/* A program that does not exist is the task's failure: the shell's 127. */
	assert_int_equal(run(f, "/nonexistent/gp-program", NULL), 127);
}

/* A descriptor the agent forgot to mark close-on-exec is not the task's. */
static void test_descriptors_closed(void **state)
{
	struct fixture *f = *state;
	char command[128];
	int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, on purpose */

	assert_true(fd > 2);
	snprintf(command, sizeof(command), "test ! -e /proc/self/fd/%d", fd);
	assert_int_equal(run(f, command, NULL), 0);
	close(fd);
}

/* As root: the task runs as the user it is given, with its groups, and
 * cannot gain privileges back; its working directory is entered as that
 * user, and a preload it cannot read is refused with the reason. */
static void test_user(void **state)
{
	struct fixture *f = *state;
	gid_t groups[] = { 4242 };
	struct gp_launch_user nobody = { .uid = 65534, .gid = 65534, .groups = groups,
					 .groups_n = 1 };
	struct gp_launch spec = { .command = "test \"$(id -u):$(id -g):$(id -G)\" = "
					     "'65534:65534:65534 4242' && "
					     "grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status",
				  .log_path = f->log, .user = &nobody };
	char secret[160], command[256];
	pid_t pgid;
	int code = -1, fd;

	if (geteuid() != 0) {
		skip();         /* switching users needs root */
		return;
	}
	assert_int_equal(chmod(f->dir, 0711), 0);
	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_equal(code, 0);
	/* Root's 0600 file is out of its reach. */
	snprintf(secret, sizeof(secret), "%s/secret", f->dir);
	fd = open(secret, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(command, sizeof(command), "cat %s", secret);
	spec.command = command;
	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_not_equal(code, 0);
	/* A directory it cannot enter, a preload it cannot read: refused. */
	spec.command = "true";
	assert_int_equal(chmod(f->dir, 0700), 0);
	spec.workdir = f->dir;
	assert_int_equal(start(&spec, &pgid), -EACCES);
	assert_non_null(strstr(why, "as uid 65534: cannot enter the working directory"));
	spec.workdir = NULL;
	spec.preload = secret;
	assert_int_equal(start(&spec, &pgid), -EACCES);
	assert_non_null(strstr(why, "as uid 65534: cannot read the interposer"));
}

/* As root, a task's own mounts: /tmp, /dev/shm and its home are tmpfs of
 * its own, empty at its start, full at their cap (ENOSPC), and nothing
 * it wrote there is on the machine, during or after; its /proc shows no
 * process of another user's (not even pid 1). */
static void test_own_mounts(void **state)
{
	struct fixture *f = *state;
	struct gp_launch_user nobody = { .uid = 65534, .gid = 65534 };
	char home[128], command[1024], out[256], path[160];
	struct gp_launch spec = { .command = command, .log_path = f->log, .user = &nobody,
				  .tmp_bytes = 1 << 20, .tmp_home = home, .private_proc = true };
	const char *const places[] = { "/tmp", "/dev/shm", home };
	bool tmp = false, proc = false;
	pid_t pgid;
	int code = -1;

	if (geteuid() != 0) {
		skip(); /* mounts need root */
		return;
	}
	assert_int_equal(gp_launch_mounts_probe(&tmp, &proc, why, sizeof(why)), 0);
	if (!tmp || !proc) {
		print_message("skipped: %s\n", why);
		skip();
		return;
	}
	/* Not under /tmp, which the task has of its own (as the agent's run
	 * directory must not be). */
	snprintf(home, sizeof(home), "/var/tmp/gp-launcher-home-XXXXXX");
	assert_non_null(mkdtemp(home));
	assert_int_equal(chown(home, 65534, 65534), 0);
	snprintf(command, sizeof(command),
		 "for d in /tmp /dev/shm %s; do ls -A $d | wc -l; echo x >$d/gp-own-%d; "
		 "dd if=/dev/zero of=$d/gp-own-%d.big bs=64k count=32 2>&1 | grep -c 'No space'; "
		 "done; ls /proc | grep -c '^1$'",
		 home, (int)getpid(), (int)getpid());
	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	log_read(f, out, sizeof(out));
	assert_string_equal(out, "0\n1\n0\n1\n0\n1\n0\n");
	assert_int_equal(code, 1); /* grep -c found no pid 1 */
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/gp-own-%d", places[i], (int)getpid());
		assert_int_equal(access(path, F_OK), -1);
	}
	assert_int_equal(rmdir(home), 0); /* empty: all it held was the task's */
}

/* A keeper leads the task: it bears its name, outlives a SIGTERM to the
 * group that ends the shell, and leaves the shell's code in its file. */
static void test_keeper(void **state)
{
	struct fixture *f = *state;
	char status[160], comm[64] = "", text[16] = "", path[64];
	struct gp_launch spec = { .command = "exit 3", .log_path = f->log,
				  .keeper_status = status, .keeper_name = "gp-t-test" };
	pid_t pgid;
	int code = -1;
	FILE *in;

	snprintf(status, sizeof(status), "%s/status", f->dir);
	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_equal(code, 3);
	in = fopen(status, "r");
	assert_non_null(in);
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "3\n");
	spec.command = "sleep 30";
	assert_int_equal(start(&spec, &pgid), 0);
	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pgid);
	in = fopen(path, "r");
	assert_non_null(in);
	assert_non_null(fgets(comm, sizeof(comm), in));
	fclose(in);
	assert_string_equal(comm, "gp-t-test\n");
	kill(-pgid, SIGTERM); /* the shell dies of it; the keeper does not */
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_equal(code, 128 + SIGTERM);
	in = fopen(status, "r");
	assert_non_null(in);
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "143\n");
}

/* The start mark: the keeper makes it, a link to its pid, before the
 * program runs; a name already taken (a later agent claimed it) starts
 * nothing. */
static void test_start_mark(void **state)
{
	struct fixture *f = *state;
	char status[160], mark[160], ran[160], command[400], target[32] = "", pid[32];
	struct gp_launch spec = { .command = command, .log_path = f->log,
				  .keeper_status = status, .keeper_name = "gp-t-test",
				  .start_mark = mark };
	pid_t pgid;
	int code = -1;

	snprintf(status, sizeof(status), "%s/status", f->dir);
	snprintf(mark, sizeof(mark), "%s/start", f->dir);
	snprintf(ran, sizeof(ran), "%s/ran", f->dir);
	snprintf(command, sizeof(command), "echo ran >>%s", ran);
	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, true, &code), 1);
	assert_int_equal(code, 0);
	assert_true(readlink(mark, target, sizeof(target) - 1) > 0);
	snprintf(pid, sizeof(pid), "%d", (int)pgid);
	assert_string_equal(target, pid);
	assert_int_equal(access(ran, F_OK), 0);

	unlink(ran);
	unlink(status);
	assert_int_equal(unlink(mark), 0);
	assert_int_equal(symlink("unstarted", mark), 0);
	assert_int_equal(start(&spec, &pgid), -EEXIST);
	assert_non_null(strstr(why, "cannot make its start mark"));
	usleep(100000);
	assert_int_equal(access(ran, F_OK), -1);
	assert_int_equal(access(status, F_OK), -1);
}

/* Once its mark is made, a keeper outlives the thread that launched it. */
static void *start_thread(void *arg)
{
	struct gp_launch *spec = arg;
	static pid_t pgid;

	return start(spec, &pgid) == 0 ? &pgid : NULL;
}

static void test_start_mark_outlives_thread(void **state)
{
	struct fixture *f = *state;
	char status[160], mark[160];
	struct gp_launch spec = { .command = "sleep 30", .log_path = f->log,
				  .keeper_status = status, .keeper_name = "gp-t-test",
				  .start_mark = mark };
	pthread_t thread;
	pid_t *pgid = NULL;
	int code = -1;

	snprintf(status, sizeof(status), "%s/status", f->dir);
	snprintf(mark, sizeof(mark), "%s/start", f->dir);
	assert_int_equal(pthread_create(&thread, NULL, start_thread, &spec), 0);
	assert_int_equal(pthread_join(thread, (void **)&pgid), 0);
	assert_non_null(pgid);
	usleep(200000);
	assert_int_equal(gp_launch_reap(*pgid, false, &code), 0); /* it runs */
	assert_int_equal(gp_launch_stop(*pgid, 1000, &code), 0);
	assert_int_equal(code, 128 + SIGTERM);
}

static void test_reap_while_running(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "sleep 30", .log_path = f->log };
	pid_t pgid;
	int code = -1;

	assert_int_equal(start(&spec, &pgid), 0);
	assert_int_equal(gp_launch_reap(pgid, false, &code), 0);
	assert_int_equal(gp_launch_stop(pgid, 1000, &code), 0);
	assert_int_equal(code, 128 + SIGTERM);
	assert_int_equal(gp_launch_reap(pgid, false, &code), -ECHILD);
}

static void test_stop_graceful(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "trap 'echo bye; exit 7' TERM; while :; do sleep 0.05; done",
				  .log_path = f->log };
	char log[256];
	double t0;
	pid_t pgid;
	int code = -1;

	assert_int_equal(start(&spec, &pgid), 0);
	usleep(200000);         /* let the shell set its trap */
	t0 = now_s();
	assert_int_equal(gp_launch_stop(pgid, 5000, &code), 0);
	assert_int_equal(code, 7);
	assert_true(now_s() - t0 < 2.5);        /* well before the grace ran out */
	log_read(f, log, sizeof(log));
	assert_non_null(strstr(log, "bye\n"));
}

static void test_stop_forced(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "trap '' TERM; sleep 30; sleep 30", .log_path = f->log };
	double t0;
	pid_t pgid;
	int code = -1;

	assert_int_equal(start(&spec, &pgid), 0);
	usleep(200000);
	t0 = now_s();
	assert_int_equal(gp_launch_stop(pgid, 300, &code), 0);
	assert_int_equal(code, 128 + SIGKILL);
	assert_true(now_s() - t0 >= 0.3);
	assert_true(now_s() - t0 < 3);
	assert_true(kill(-pgid, 0) < 0 && errno == ESRCH);
}

/* Children that outlive the shell are stopped with it. */
static void test_stop_whole_group(void **state)
{
	struct fixture *f = *state;
	struct gp_launch spec = { .command = "(trap '' TERM; sleep 30) & sleep 30 & wait",
				  .log_path = f->log };
	pid_t pgid;
	int code = -1;

	assert_int_equal(start(&spec, &pgid), 0);
	usleep(200000);
	assert_int_equal(gp_launch_stop(pgid, 300, &code), 0);
	assert_true(kill(-pgid, 0) < 0 && errno == ESRCH);
}

/* A group being stopped without blocking: when the shell dies of SIGTERM
 * first, the program under it still has its grace period. */
static void test_reap_group(void **state)
{
	struct fixture *f = *state;
	char command[256], log[256];
	struct gp_launch spec = { .command = command, .log_path = f->log };
	struct gp_launch_exit seen = { 0 };
	pid_t pgid;
	int done = 0;

	snprintf(command, sizeof(command),
		 "sh -c \"trap 'sleep 0.3; echo bye; exit 0' TERM; while :; do sleep 0.05; done\"");
	assert_int_equal(start(&spec, &pgid), 0);
	usleep(200000);
	assert_int_equal(gp_launch_reap_group(pgid, &seen), 0);
	kill(-pgid, SIGTERM);
	usleep(100000);
	assert_int_equal(gp_launch_reap_group(pgid, &seen), 0); /* the program still runs */
	assert_true(seen.leader_gone);
	assert_int_equal(seen.code, 128 + SIGTERM);
	for (int i = 0; i < 100 && !done; i++) {
		done = gp_launch_reap_group(pgid, &seen);
		usleep(20000);
	}
	assert_int_equal(done, 1);
	log_read(f, log, sizeof(log));
	assert_non_null(strstr(log, "bye\n"));
	assert_int_equal(gp_launch_reap_group(pgid, NULL), -EINVAL);
}

int main(void)
{
	/* As the agent is: orphans of a task's shell become ours to reap. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_output_and_exit_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signals_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workdir_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descriptors_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_mounts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keeper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_mark_outlives_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reap_while_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_graceful, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_whole_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reap_group, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
