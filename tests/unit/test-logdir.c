/* test-logdir.c — the logs as a whole (src/server/logdir.c): the names of
 * a task's log files; the total cap removes the logs of ended tasks,
 * oldest first (their newest file), all three files of each, until the
 * logs fit, never a live task's, never a file that is not a log's, and
 * says why; a floor no filesystem can meet removes the ended logs too;
 * room: a floor over the free space holds starts back with a reason, a
 * log that failed to open holds them back for a while (twice as long
 * after a second failure in a row), then until a probe file can be
 * written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/logfile.h"
#include "server/logdir.h"
#include "tree.h"

#define KIB 1024

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test-logdir-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree(f->dir);
	free(f);
	return 0;
}

/* A file of `bytes` (written, so that it has its blocks) named name in
 * the directory, last written `age` seconds ago. */
static void file_put(struct fixture *f, const char *name, size_t bytes, int age)
{
	char path[256], *data = malloc(bytes + 1);
	struct timespec times[2];
	FILE *out;

	assert_non_null(data);
	memset(data, 'x', bytes);
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(data, 1, bytes, out), bytes);
	assert_int_equal(fclose(out), 0);
	free(data);
	clock_gettime(CLOCK_REALTIME, &times[0]);
	times[0].tv_sec -= age;
	times[1] = times[0];
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* A task's log: task-ID.log (and .1 and .offset when `whole`). */
static void log_put(struct fixture *f, int64_t task, size_t bytes, int age, bool whole)
{
	char name[64];

	snprintf(name, sizeof(name), "task-%lld.log", (long long)task);
	file_put(f, name, bytes, age);
	if (!whole)
		return;
	snprintf(name, sizeof(name), "task-%lld.log.1", (long long)task);
	file_put(f, name, bytes, age + 10);
	snprintf(name, sizeof(name), "task-%lld.log.offset", (long long)task);
	file_put(f, name, 42, age + 10);
}

static bool exists(struct fixture *f, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	return access(path, F_OK) == 0;
}

/* Task 3 is live; the others have ended. */
static bool live_3(void *ctx, int64_t task)
{
	(void)ctx;
	return task == 3;
}

static void test_names(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(gp_logfile_task_of("task-12.log"), 12);
	assert_int_equal(gp_logfile_task_of("task-12.log.1"), 12);
	assert_int_equal(gp_logfile_task_of("task-12.log.offset"), 12);
	assert_int_equal(gp_logfile_task_of("task-12.log.2"), 0);
	assert_int_equal(gp_logfile_task_of("task-12.logx"), 0);
	assert_int_equal(gp_logfile_task_of("task-0.log"), 0);
	assert_int_equal(gp_logfile_task_of("task--1.log"), 0);
	assert_int_equal(gp_logfile_task_of("task-.log"), 0);
	assert_int_equal(gp_logfile_task_of("fill"), 0);
	assert_int_equal(gp_logfile_task_path("/l", 7, path, sizeof(path)), 0);
	assert_string_equal(path, "/l/task-7.log");
	assert_int_equal(gp_logfile_task_path("/l", 7, path, 8), -ENAMETOOLONG);
}

/* Over the cap: the oldest ended logs go, whole, until the rest fits; the
 * live one stays however old; a file not a log's is not counted. */
static void test_cap(void **state)
{
	struct fixture *f = *state;
	struct gp_logdir *d;
	struct gp_log_removal *rm;
	int n;

	log_put(f, 1, 100 * KIB, 500, true);  /* ended, the oldest: 200 KiB + */
	log_put(f, 2, 100 * KIB, 400, false); /* ended */
	log_put(f, 3, 100 * KIB, 900, false); /* live, older than all */
	log_put(f, 4, 100 * KIB, 300, false); /* ended */
	log_put(f, 5, 100 * KIB, 100, false); /* ended, the newest */
	file_put(f, "fill", 1024 * KIB, 1000); /* not a log */
	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir,
								     .total_max = 250 * KIB },
				       &d),
			 0);
	assert_int_equal(gp_logdir_trim(d, live_3, NULL, &rm, &n), 0);
	/* 1, 2 and 4 go (oldest first): 3 and 5 hold about 200 KiB. */
	assert_int_equal(n, 3);
	assert_int_equal(rm[0].task, 1);
	assert_int_equal(rm[1].task, 2);
	assert_int_equal(rm[2].task, 4);
	assert_true(rm[0].bytes >= 200 * KIB + 42);
	assert_true(rm[1].bytes >= 100 * KIB);
	assert_true(rm[0].removed > 0);
	assert_non_null(strstr(rm[0].why, "to keep the logs under the server's --log-total-max "
					  "of 250 KiB: the oldest logs of ended tasks go first"));
	free(rm);
	assert_false(exists(f, "task-1.log"));
	assert_false(exists(f, "task-1.log.1"));
	assert_false(exists(f, "task-1.log.offset"));
	assert_false(exists(f, "task-2.log"));
	assert_true(exists(f, "task-3.log"));
	assert_false(exists(f, "task-4.log"));
	assert_true(exists(f, "task-5.log"));
	assert_true(exists(f, "fill"));
	/* Within the cap now: nothing more. */
	assert_int_equal(gp_logdir_trim(d, live_3, NULL, &rm, &n), 0);
	assert_int_equal(n, 0);
	assert_null(rm);
	gp_logdir_free(d);
}

/* Under a floor no disk meets: every ended log goes, the live one stays. */
static void test_floor_trim(void **state)
{
	struct fixture *f = *state;
	struct gp_logdir *d;
	struct gp_log_removal *rm;
	int n;

	log_put(f, 2, 10 * KIB, 100, false);
	log_put(f, 3, 10 * KIB, 300, false);
	log_put(f, 4, 10 * KIB, 200, false);
	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir,
								     .free_min = UINT64_MAX },
				       &d),
			 0);
	assert_int_equal(gp_logdir_trim(d, live_3, NULL, &rm, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rm[0].task, 4);
	assert_int_equal(rm[1].task, 2);
	assert_non_null(strstr(rm[0].why, "free where the logs are (the server's "
					  "--log-free-min)"));
	free(rm);
	assert_true(exists(f, "task-3.log"));
	gp_logdir_free(d);
	/* With room above a floor and no cap, it does not even look. */
	log_put(f, 5, 10 * KIB, 100, false);
	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir,
								     .free_min = 1 },
				       &d),
			 0);
	assert_int_equal(gp_logdir_trim(d, live_3, NULL, &rm, &n), 0);
	assert_int_equal(n, 0);
	assert_true(exists(f, "task-5.log"));
	gp_logdir_free(d);
}

static void test_room(void **state)
{
	struct fixture *f = *state;
	struct gp_logdir *d;
	char why[512] = "";

	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir,
								     .free_min = UINT64_MAX },
				       &d),
			 0);
	assert_false(gp_logdir_room(d, 1000, why, sizeof(why)));
	assert_non_null(strstr(why, "waiting for room for its log: "));
	assert_non_null(strstr(why, "under the server's --log-free-min of"));
	gp_logdir_free(d);

	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir,
								     .free_min = 1 },
				       &d),
			 0);
	assert_true(gp_logdir_room(d, 1000, why, sizeof(why)));
	gp_logdir_open_failed(d, 1000, "cannot open its log /x/task-1.log: No space left on device");
	why[0] = '\0';
	assert_false(gp_logdir_room(d, 1000 + GP_LOGDIR_RETRY_MS - 1, why, sizeof(why)));
	assert_non_null(strstr(why, "waiting for room for its log: cannot open its log "
				    "/x/task-1.log: No space left on device; it starts once"));
	assert_true(gp_logdir_room(d, 1000 + GP_LOGDIR_RETRY_MS, why, sizeof(why)));
	/* A second failure in a row holds twice as long; a log opened ends it. */
	gp_logdir_opened(d);
	gp_logdir_open_failed(d, 10000, "again");
	gp_logdir_open_failed(d, 10000, "again");
	assert_false(gp_logdir_room(d, 10000 + 2 * GP_LOGDIR_RETRY_MS - 1, why, sizeof(why)));
	assert_true(gp_logdir_room(d, 10000 + 2 * GP_LOGDIR_RETRY_MS, why, sizeof(why)));
	gp_logdir_opened(d);
	gp_logdir_open_failed(d, 20000, "once more");
	assert_true(gp_logdir_room(d, 20000 + GP_LOGDIR_RETRY_MS, why, sizeof(why)));
	gp_logdir_free(d);
	/* After the hold, the probe must pass: not where it cannot be written. */
	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = "/nonexistent/logs" },
				       &d),
			 0);
	assert_true(gp_logdir_room(d, 1000, why, sizeof(why)));
	gp_logdir_open_failed(d, 1000, "cannot open its log");
	assert_false(gp_logdir_room(d, 1000 + 10 * GP_LOGDIR_RETRY_MS, why, sizeof(why)));
	assert_non_null(strstr(why, "waiting for room for its log: cannot open its log"));
	gp_logdir_free(d);
	/* No floor: always room (but after a failure). */
	assert_int_equal(gp_logdir_new(&(struct gp_logdir_options){ .dir = f->dir }, &d), 0);
	assert_true(gp_logdir_room(d, 5, why, sizeof(why)));
	gp_logdir_free(d);
	assert_null(gp_logdir_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_floor_trim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_room, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
