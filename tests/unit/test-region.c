/* test-region.c — the shared region of a device (src/shim/region.c), with
 * real processes: tasks and limits, admission up to the limit, processes
 * racing for memory, and processes killed with SIGKILL at any point; and
 * managed devices (src/shim/limits-table.c): the files and their modes,
 * joining with the task's secret, the table's limits and their live
 * changes, and (as root) a task of another user that can change none.
 *
 * Each test has its own directory (mkdtemp) and an alarm, so that a hang
 * fails the run instead of stopping it. Forked children never use cmocka's
 * assertions: they report through their exit status or shared memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"
#include "shim/region.h"
#include "shim/limits-table.h"
#include "shim/taskfile.h"

#define MiB (1024ULL * 1024)
#define GiB (1024 * MiB)
#define UUID "GPU-5a1c0de2-0000-4000-8000-000000000001"
#define TEST_ALARM_S 10

struct fixture {
	char dir[64];
	struct gp_region *r;
};

static int setup(void **state)
{
	static struct fixture f;

	alarm(TEST_ALARM_S);
	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-region-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	assert_int_equal(gp_region_open(f.dir, UUID, 16 * GiB, &f.r), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gp_region_close(f->r);
	f->r = NULL;
	remove_tree(f->dir);
	alarm(0);
	return 0;
}

static struct gp_task_limits limits(uint64_t mem, unsigned compute, unsigned priority,
				    enum gp_isolation isolation)
{
	return (struct gp_task_limits){ mem, compute, priority, isolation };
}

static void assert_limits_equal(struct gp_task_limits a, struct gp_task_limits b)
{
	assert_int_equal(a.mem_bytes, b.mem_bytes);
	assert_int_equal(a.compute, b.compute);
	assert_int_equal(a.priority, b.priority);
	assert_int_equal(a.isolation, b.isolation);
}

static int join(struct gp_region *r, const char *id, uint64_t mem)
{
	struct gp_task_limits l = limits(mem, 50, 4, GP_ISOLATION_HARD);
	int slot = -1;

	assert_int_equal(gp_region_join(r, id, &l, &slot), 0);
	assert_in_range(slot, 0, GP_REGION_PROCS - 1);
	return slot;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* In a forked child: dies with the test, so that a failed test leaves no
 * process behind. */
static void child_init(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(9);
}

/* Exit status of a child that exited (not killed), or -1. */
static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A child that joins `id`, reserves `bytes` and waits to be killed. */
static pid_t holder_start(struct gp_region *r, const char *id, uint64_t mem, uint64_t bytes)
{
	struct gp_task_limits l = limits(mem, 50, 4, GP_ISOLATION_HARD);
	int fds[2];
	char ok = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int slot;

		child_init();
		close(fds[0]);
		ok = gp_region_join(r, id, &l, &slot) == 0 &&
		     gp_region_mem_reserve(r, slot, bytes) == 0;
		if (write(fds[1], &ok, 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &ok, 1), 1);
	close(fds[0]);
	assert_true(ok);
	return pid;
}

static void holder_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void open_creates_and_reopens(void **state)
{
	struct fixture *f = *state;
	struct gp_region *again = NULL, *other = NULL;
	char path[PATH_MAX], buf[PATH_MAX], sub[PATH_MAX];
	struct gp_task_info info[2];
	struct stat st;

	snprintf(path, sizeof(path), "%s/device-%s.region", f->dir, UUID);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(gp_region_total(f->r), 16 * GiB);
	join(f->r, "train", 4 * GiB);

	/* Total 0 opens the existing region; another total does not change it. */
	assert_int_equal(gp_region_open(f->dir, UUID, 0, &again), 0);
	assert_int_equal(gp_region_total(again), 16 * GiB);
	assert_int_equal(gp_region_tasks(again, info, 2), 1);
	assert_string_equal(info[0].id, "train");
	gp_region_close(again);
	assert_int_equal(gp_region_open(f->dir, UUID, 8 * GiB, &again), 0);
	assert_int_equal(gp_region_total(again), 16 * GiB);
	gp_region_close(again);

	assert_int_equal(gp_region_open(f->dir, "GPU-none", 0, &other), -ENOENT);
	snprintf(path, sizeof(path), "%s/device-GPU-none.region", f->dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_null(other);

	assert_int_equal(gp_region_open(f->dir, "", GiB, &other), -EINVAL);
	assert_int_equal(gp_region_open(f->dir, "../up", GiB, &other), -EINVAL);
	assert_int_equal(gp_region_open(f->dir, "a/b", GiB, &other), -EINVAL);
	assert_int_equal(gp_region_open(f->dir, ".hidden", GiB, &other), -EINVAL);
	assert_int_equal(gp_region_open(f->dir, NULL, GiB, &other), -EINVAL);
	memset(buf, 'x', GP_UUID_STR_MAX);
	buf[GP_UUID_STR_MAX] = '\0';
	assert_int_equal(gp_region_open(f->dir, buf, GiB, &other), -EINVAL);
	gp_region_close(NULL);

	/* $GPUPOOL_RUN_DIR stands in for the directory. */
	setenv("GPUPOOL_RUN_DIR", f->dir, 1);
	gp_region_dir(NULL, buf, sizeof(buf));
	assert_string_equal(buf, f->dir);
	assert_int_equal(gp_region_open(NULL, UUID, 0, &again), 0);
	gp_region_close(again);
	unsetenv("GPUPOOL_RUN_DIR");
	gp_region_dir("/elsewhere", buf, sizeof(buf));
	assert_string_equal(buf, "/elsewhere");

	/* A missing directory is made, private to its user. */
	snprintf(sub, sizeof(sub), "%s/run", f->dir);
	assert_int_equal(gp_region_open(sub, UUID, GiB, &again), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	gp_region_close(again);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void bad_files_are_replaced(void **state)
{
	struct fixture *f = *state;
	uint64_t foreign[8] = { 0x1234, 99 };
	struct gp_region *r = NULL;
	char path[PATH_MAX];
	double start;

	/* Another version: reported when opening, replaced when creating. */
	snprintf(path, sizeof(path), "%s/device-GPU-foreign.region", f->dir);
	write_file(path, foreign, sizeof(foreign));
	assert_int_equal(gp_region_open(f->dir, "GPU-foreign", 0, &r), -EPROTO);
	assert_int_equal(gp_region_open(f->dir, "GPU-foreign", 2 * GiB, &r), 0);
	assert_int_equal(gp_region_total(r), 2 * GiB);
	join(r, "a", 0);
	gp_region_close(r);

	/* Left half made by a creator that died: replaced after 2 s. */
	snprintf(path, sizeof(path), "%s/device-GPU-half.region", f->dir);
	write_file(path, "", 0);
	start = now_s();
	assert_int_equal(gp_region_open(f->dir, "GPU-half", 2 * GiB, &r), 0);
	assert_true(now_s() - start >= 1.9);
	assert_true(now_s() - start < 6.0);
	join(r, "a", 0);
	gp_region_close(r);
}

static void join_creates_task_and_keeps_limits(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits a = limits(4 * GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits b = limits(8 * GiB, 60, 1, GP_ISOLATION_SHARED);
	struct gp_task_limits got;
	struct gp_task_info info[1];
	int slot = -1, again = -1;
	pid_t pid;

	assert_int_equal(gp_region_join(f->r, "train", &a, &slot), 0);
	gp_region_limits(f->r, slot, &got);
	assert_limits_equal(got, a);
	assert_int_equal(gp_region_join(f->r, "train", &b, &again), 0);
	assert_int_equal(again, slot);
	gp_region_limits(f->r, slot, &got);
	assert_limits_equal(got, a);
	assert_int_equal(gp_region_join(f->r, "serve", &a, &again), -EEXIST);

	/* A second process joins with other limits: the task keeps its own. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int mine = -1;

		if (gp_region_join(f->r, "train", &b, &mine) != 0 || mine == slot)
			_exit(1);
		gp_region_limits(f->r, mine, &got);
		_exit(got.mem_bytes == a.mem_bytes && got.compute == a.compute &&
		      got.priority == a.priority && got.isolation == a.isolation ? 0 : 2);
	}
	assert_int_equal(reap(pid), 0);
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);      /* "serve" was not made */
	assert_string_equal(info[0].id, "train");
	assert_int_equal(info[0].processes, 1);                   /* the child is gone */
}

static void join_rejects_bad_input(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits bad[] = {
		limits(0, 0, 0, GP_ISOLATION_HARD),
		limits(0, 101, 0, GP_ISOLATION_HARD),
		limits(0, 50, 10, GP_ISOLATION_HARD),
		limits(0, 50, 0, (enum gp_isolation)2),
		limits(16 * GiB + 1, 50, 0, GP_ISOLATION_HARD),
	};
	struct gp_task_limits ok = limits(0, 50, 0, GP_ISOLATION_HARD);
	char long_id[GP_TASK_ID_MAX + 1];
	int slot = -1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(gp_region_join(f->r, "t", &bad[i], &slot), -EINVAL);
	memset(long_id, 'a', GP_TASK_ID_MAX);
	long_id[GP_TASK_ID_MAX] = '\0';
	assert_int_equal(gp_region_join(f->r, long_id, &ok, &slot), -EINVAL);
	assert_int_equal(gp_region_join(f->r, "", &ok, &slot), -EINVAL);
	assert_int_equal(gp_region_join(f->r, "a\nb", &ok, &slot), -EINVAL);
	assert_int_equal(gp_region_join(f->r, NULL, &ok, &slot), -EINVAL);
	assert_int_equal(gp_region_join(f->r, "t", NULL, &slot), -EINVAL);
	assert_int_equal(slot, -1);
	assert_int_equal(gp_region_tasks(f->r, NULL, 0), 0);
	long_id[GP_TASK_ID_MAX - 1] = '\0';                       /* the longest id */
	join(f->r, long_id, 0);
}

static void forked_child_gets_its_own_slot(void **state)
{
	struct fixture *f = *state;
	int slot = join(f->r, "train", GiB);
	pid_t pid;

	assert_int_equal(gp_region_mem_reserve(f->r, slot, 256 * MiB), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gp_task_limits l = limits(GiB, 50, 4, GP_ISOLATION_HARD);
		int mine = -1;

		if (gp_region_mem_reserve(f->r, slot, MiB) != -EINVAL)
			_exit(1);               /* the parent's slot is not ours */
		gp_region_mem_release(f->r, slot, 256 * MiB);   /* ignored */
		if (gp_region_join(f->r, "train", &l, &mine) != 0 || mine == slot)
			_exit(2);
		if (gp_region_mem_reserve(f->r, mine, 768 * MiB) != 0 ||
		    gp_region_mem_reserve(f->r, mine, 1) != -ENOMEM)
			_exit(3);
		_exit(gp_region_task_used(f->r, mine) == GiB ? 0 : 4);
	}
	assert_int_equal(reap(pid), 0);
	gp_region_reclaim(f->r);
	assert_int_equal(gp_region_task_used(f->r, slot), 256 * MiB);
}

static void reserve_stops_at_the_limit(void **state)
{
	struct fixture *f = *state;
	int slot = join(f->r, "train", GiB);
	int free_slot = (slot + 1) % GP_REGION_PROCS;

	assert_int_equal(gp_region_mem_reserve(f->r, slot, 512 * MiB), 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 512 * MiB), 0);
	assert_int_equal(gp_region_task_used(f->r, slot), GiB);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 1), -ENOMEM);
	gp_region_mem_release(f->r, slot, 512 * MiB);
	assert_int_equal(gp_region_task_used(f->r, slot), 512 * MiB);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 256 * MiB), 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 256 * MiB), 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 1), -ENOMEM);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 0), 0);

	/* Releasing more than is held stops at zero; it never wraps. */
	gp_region_mem_release(f->r, slot, 4 * GiB);
	assert_int_equal(gp_region_task_used(f->r, slot), 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 2 * GiB), -ENOMEM);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, UINT64_MAX), -ENOMEM);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, GiB), 0);

	assert_int_equal(gp_region_mem_reserve(f->r, -1, 1), -EINVAL);
	assert_int_equal(gp_region_mem_reserve(f->r, GP_REGION_PROCS, 1), -EINVAL);
	assert_int_equal(gp_region_mem_reserve(f->r, free_slot, 1), -EINVAL);
	assert_int_equal(gp_region_task_used(f->r, free_slot), 0);
}

static void limit_zero_is_the_whole_device(void **state)
{
	struct fixture *f = *state;
	struct gp_region *r = NULL;
	struct gp_task_limits got;
	int slot;

	assert_int_equal(gp_region_open(f->dir, "GPU-small", 4 * GiB, &r), 0);
	slot = join(r, "all", 0);
	gp_region_limits(r, slot, &got);
	assert_int_equal(got.mem_bytes, 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 3 * GiB), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, GiB), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 1), -ENOMEM);
	gp_region_close(r);
}

static void set_changes_limits_live(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits a = limits(4 * GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits b = limits(512 * MiB, 70, 9, GP_ISOLATION_SHARED);
	struct gp_task_limits bad[] = {
		limits(0, 0, 0, GP_ISOLATION_HARD),
		limits(0, 101, 0, GP_ISOLATION_HARD),
		limits(0, 50, 10, GP_ISOLATION_HARD),
		limits(0, 50, 0, (enum gp_isolation)7),
		limits(17 * GiB, 50, 0, GP_ISOLATION_HARD),
	};
	struct gp_task_limits got;
	struct gp_task_info info[1];
	uint64_t generation;
	int slot = -1;

	assert_int_equal(gp_region_join(f->r, "train", &a, &slot), 0);
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);
	generation = info[0].generation;
	assert_int_equal(gp_region_mem_reserve(f->r, slot, GiB), 0);

	assert_int_equal(gp_region_set(f->r, "train", &b), 0);
	gp_region_limits(f->r, slot, &got);
	assert_limits_equal(got, b);
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);
	assert_int_equal(info[0].generation, generation + 1);
	/* Lowered below what is held: nothing more fits, nothing is taken. */
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 1), -ENOMEM);
	assert_int_equal(gp_region_task_used(f->r, slot), GiB);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(gp_region_set(f->r, "train", &bad[i]), -EINVAL);
	assert_int_equal(gp_region_set(f->r, "nobody", &a), -ENOENT);
	assert_int_equal(gp_region_set(f->r, "train", NULL), -EINVAL);
	gp_region_limits(f->r, slot, &got);
	assert_limits_equal(got, b);
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);
	assert_int_equal(info[0].generation, generation + 1);

	assert_int_equal(gp_region_set(f->r, "train", &a), 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, GiB), 0);
	gp_region_limits(f->r, -1, &got);
	assert_int_equal(got.compute, 0);
}

static void tasks_report_use_and_processes(void **state)
{
	struct fixture *f = *state;
	struct gp_task_info info[4];
	int slot = join(f->r, "a", 4 * GiB);
	pid_t b, a2;

	assert_int_equal(gp_region_mem_reserve(f->r, slot, GiB), 0);
	b = holder_start(f->r, "b", 8 * GiB, 2 * GiB);
	a2 = holder_start(f->r, "a", 4 * GiB, 512 * MiB);

	assert_int_equal(gp_region_tasks(f->r, info, 4), 2);
	assert_string_equal(info[0].id, "a");
	assert_int_equal(info[0].limits.mem_bytes, 4 * GiB);
	assert_int_equal(info[0].mem_used, GiB + 512 * MiB);
	assert_int_equal(info[0].processes, 2);
	assert_string_equal(info[1].id, "b");
	assert_int_equal(info[1].limits.mem_bytes, 8 * GiB);
	assert_int_equal(info[1].mem_used, 2 * GiB);
	assert_int_equal(info[1].processes, 1);
	memset(info, 0, sizeof(info));
	assert_int_equal(gp_region_tasks(f->r, info, 1), 2);     /* fills one */
	assert_string_equal(info[1].id, "");

	/* Their processes gone, the tasks stay, with their limits. */
	holder_stop(b);
	holder_stop(a2);
	assert_int_equal(gp_region_tasks(f->r, info, 4), 2);
	assert_int_equal(info[0].mem_used, GiB);
	assert_int_equal(info[0].processes, 1);
	assert_string_equal(info[1].id, "b");
	assert_int_equal(info[1].limits.mem_bytes, 8 * GiB);
	assert_int_equal(info[1].mem_used, 0);
	assert_int_equal(info[1].processes, 0);
}

static void task_table_fills_up(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(0, 50, 0, GP_ISOLATION_HARD);
	struct gp_task_info info[GP_REGION_TASKS];
	pid_t pid[GP_REGION_TASKS];
	char id[16];
	int slot = -1;

	/* Every task has a live process: the table is full. */
	for (int i = 0; i < GP_REGION_TASKS; i++) {
		snprintf(id, sizeof(id), "task-%d", i);
		pid[i] = holder_start(f->r, id, 0, 0);
	}
	assert_int_equal(gp_region_tasks(f->r, NULL, 0), GP_REGION_TASKS);
	assert_int_equal(gp_region_join(f->r, "one-too-many", &l, &slot), -ENOSPC);
	assert_int_equal(slot, -1);

	/* Tasks whose processes are all gone make room; the others stay. */
	for (int i = 0; i < GP_REGION_TASKS; i++)
		if (i != 3)
			holder_stop(pid[i]);
	assert_int_equal(gp_region_join(f->r, "one-too-many", &l, &slot), 0);
	assert_int_equal(gp_region_tasks(f->r, info, GP_REGION_TASKS), 2);
	assert_string_equal(info[0].id, "one-too-many");        /* the first free entry */
	assert_int_equal(info[0].processes, 1);
	assert_string_equal(info[1].id, "task-3");
	assert_int_equal(info[1].processes, 1);
	holder_stop(pid[3]);
}

/* ---- processes racing and dying ------------------------------------- */

#define RACERS 8
#define ROUNDS 1000
#define KILL_TRIALS 200
#define RACE_LIMIT (256 * MiB)

struct race {
	atomic_int go;
	atomic_int joined;
	atomic_int violations;
	atomic_int errors;
	atomic_int granted;
	atomic_int refused;
};

/* Reserves and releases random chunks; counts what it sees in `race`. */
static void racer_loop(struct gp_region *r, int slot, struct race *race, uint64_t seed,
		       int rounds)
{
	struct gp_rng rng;

	gp_rng_init(&rng, seed);
	for (int i = 0; rounds < 0 || i < rounds; i++) {
		uint64_t bytes = 1 + gp_rng_below(&rng, 64 * MiB);
		int err = gp_region_mem_reserve(r, slot, bytes);

		if (err == -ENOMEM) {
			atomic_fetch_add(&race->refused, 1);
			continue;
		}
		if (err != 0) {
			atomic_fetch_add(&race->errors, 1);
			continue;
		}
		atomic_fetch_add(&race->granted, 1);
		if (gp_region_task_used(r, slot) > RACE_LIMIT)
			atomic_fetch_add(&race->violations, 1);
		sched_yield();          /* hold it while the others run */
		gp_region_mem_release(r, slot, bytes);
	}
}

static pid_t racer_start(struct gp_region *r, struct race *race, uint64_t seed, int rounds)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct gp_task_limits l = limits(RACE_LIMIT, 50, 4, GP_ISOLATION_HARD);
		int slot;

		child_init();
		if (gp_region_join(r, "race", &l, &slot) != 0)
			_exit(1);
		atomic_fetch_add(&race->joined, 1);
		while (!atomic_load(&race->go))
			sched_yield();
		racer_loop(r, slot, race, seed, rounds);
		_exit(0);
	}
	return pid;
}

static struct race *race_new(void)
{
	struct race *race = mmap(NULL, sizeof(*race), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(race != MAP_FAILED);
	memset(race, 0, sizeof(*race));
	return race;
}

static void racers_never_pass_the_limit(void **state)
{
	struct fixture *f = *state;
	struct race *race = race_new();
	int slot = join(f->r, "race", RACE_LIMIT), exited = 0;
	pid_t pid[RACERS];
	struct gp_task_info info[1];
	uint64_t most = 0;

	for (int i = 0; i < RACERS; i++)
		pid[i] = racer_start(f->r, race, 1000 + (uint64_t)i, ROUNDS);
	while (atomic_load(&race->joined) < RACERS)
		sched_yield();
	atomic_store(&race->go, 1);
	/* The parent watches too, while they run. */
	while (exited < RACERS) {
		uint64_t used = gp_region_task_used(f->r, slot);
		int status;

		most = used > most ? used : most;
		for (int i = 0; i < RACERS; i++) {
			if (pid[i] <= 0 || waitpid(pid[i], &status, WNOHANG) != pid[i])
				continue;
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			pid[i] = 0;
			exited++;
		}
	}
	assert_int_equal(atomic_load(&race->violations), 0);
	assert_int_equal(atomic_load(&race->errors), 0);
	assert_int_equal(atomic_load(&race->granted) + atomic_load(&race->refused),
			 RACERS * ROUNDS);
	assert_true(atomic_load(&race->granted) > 0);
	assert_true(most <= RACE_LIMIT);
	assert_int_equal(gp_region_task_used(f->r, slot), 0);
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);
	assert_int_equal(info[0].processes, 1);
	munmap(race, sizeof(*race));
}

static void killed_process_memory_is_reclaimed(void **state)
{
	struct fixture *f = *state;
	int slot = join(f->r, "train", GiB);
	pid_t pid = holder_start(f->r, "train", GiB, GiB);
	double start;

	assert_int_equal(gp_region_task_used(f->r, slot), GiB);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, 1), -ENOMEM);
	assert_int_equal(kill(pid, SIGKILL), 0);        /* not reaped: a zombie */
	start = now_s();
	while (gp_region_task_used(f->r, slot) != 0 && now_s() - start < 1.0) {
		usleep(1000);
		gp_region_reclaim(f->r);
	}
	assert_int_equal(gp_region_task_used(f->r, slot), 0);
	assert_true(now_s() - start < 1.0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, GiB), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* In a child: joins the race and takes the whole limit, within 1 s. Runs
 * in a process of its own so that a lock left held by the dead shows as a
 * failure, not as a hang. */
static pid_t checker_start(struct gp_region *r)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct gp_task_limits l = limits(RACE_LIMIT, 50, 4, GP_ISOLATION_HARD);
		double start = now_s();
		int slot, err;

		child_init();
		if (gp_region_join(r, "race", &l, &slot) != 0)
			_exit(1);
		while ((err = gp_region_mem_reserve(r, slot, RACE_LIMIT)) == -ENOMEM &&
		       now_s() - start < 1.0)
			usleep(1000);
		if (err != 0)
			_exit(2);
		gp_region_mem_release(r, slot, RACE_LIMIT);
		_exit(now_s() - start < 1.0 ? 0 : 3);
	}
	return pid;
}

/* Racers killed at random points, inside the task's mutex or not, must
 * never keep the others from their memory. */
static void killed_racers_block_no_one(void **state)
{
	struct fixture *f = *state;
	struct race *race = race_new();
	int slot = join(f->r, "race", RACE_LIMIT);
	struct gp_task_info info[1];
	struct gp_rng rng;

	gp_rng_init(&rng, 7);
	atomic_store(&race->go, 1);
	for (int trial = 0; trial < KILL_TRIALS; trial++) {
		pid_t pid = racer_start(f->r, race, (uint64_t)trial, -1), checker;
		double start;
		int status = -1;

		usleep((useconds_t)gp_rng_below(&rng, 5001));
		assert_int_equal(kill(pid, SIGKILL), 0);        /* left a zombie */
		checker = checker_start(f->r);
		start = now_s();
		while (waitpid(checker, &status, WNOHANG) == 0 && now_s() - start < 2.0)
			usleep(1000);
		if (now_s() - start >= 2.0) {
			kill(checker, SIGKILL);
			waitpid(checker, NULL, 0);
			fail_msg("trial %d: blocked by a racer killed in the mutex", trial);
		}
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	}
	assert_int_equal(atomic_load(&race->violations), 0);
	assert_int_equal(atomic_load(&race->errors), 0);
	/* No slot was left behind by a process killed while joining. */
	assert_int_equal(gp_region_tasks(f->r, info, 1), 1);
	assert_int_equal(info[0].processes, 1);
	assert_int_equal(info[0].mem_used, 0);
	assert_int_equal(gp_region_mem_reserve(f->r, slot, RACE_LIMIT), 0);
	munmap(race, sizeof(*race));
}

static void slot_table_fills_up_and_is_reclaimed(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(0, 50, 0, GP_ISOLATION_HARD);
	pid_t pid[GP_REGION_PROCS];
	int fds[2], slot = -1;
	char ok;

	assert_int_equal(pipe(fds), 0);
	for (int i = 0; i < GP_REGION_PROCS; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			int mine;

			child_init();
			ok = gp_region_join(f->r, "many", &l, &mine) == 0;
			if (write(fds[1], &ok, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		assert_int_equal(read(fds[0], &ok, 1), 1);
		assert_true(ok);
	}
	assert_int_equal(gp_region_join(f->r, "many", &l, &slot), -ENOSPC);
	kill(pid[17], SIGKILL);
	waitpid(pid[17], NULL, 0);
	assert_int_equal(gp_region_join(f->r, "many", &l, &slot), 0);
	for (int i = 0; i < GP_REGION_PROCS; i++)
		if (i != 17)
			holder_stop(pid[i]);
	close(fds[0]);
	close(fds[1]);
}

/* ---- managed devices: the limits table ------------------------------ */

#define MANAGED "GPU-5a1c0de2-0000-4000-8000-0000000000aa"
#define SECRET "00112233445566778899aabbccddeeff"
#define OTHER_SECRET "ffeeddccbbaa99887766554433221100"

/* Prepares the managed device in f->dir and opens it. */
static struct gp_region *managed_open(struct fixture *f)
{
	struct gp_region *r = NULL;

	assert_int_equal(gp_region_prepare(f->dir, MANAGED, 16 * GiB), 0);
	assert_int_equal(gp_region_open(f->dir, MANAGED, 0, &r), 0);
	assert_true(gp_region_is_managed(r));
	return r;
}

static void file_path(const struct fixture *f, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s/device-%s.%s", f->dir, MANAGED, suffix);
}

static void assert_mode(const char *path, mode_t mode, gid_t group)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
	assert_int_equal(st.st_uid, geteuid());
	if (group != (gid_t)-1)
		assert_int_equal(st.st_gid, group);
}

static void prepare_makes_the_files(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_owner owner = { geteuid(), getgid() };
	char region[PATH_MAX], sched[PATH_MAX], table[PATH_MAX], other[PATH_MAX];
	char task[PATH_MAX], stray[PATH_MAX];
	struct gp_task_info info[2];
	struct gp_region *r = NULL;
	int slot = join(f->r, "standalone", 0);

	/* The fixture's standalone device: 0600, not managed. */
	assert_false(gp_region_is_managed(f->r));
	assert_false(gp_region_is_managed_in(f->dir, UUID));
	assert_int_equal(gp_region_task_admit(f->r, "t", SECRET, &l, NULL), -EOPNOTSUPP);
	assert_int_equal(gp_region_task_forget(f->r, "t"), -EOPNOTSUPP);
	assert_int_equal(gp_region_set(f->r, "standalone", &l), 0);
	(void)slot;

	file_path(f, "region", region, sizeof(region));
	file_path(f, "sched", sched, sizeof(sched));
	file_path(f, "limits", table, sizeof(table));
	file_path(f, "tasks/task-0", task, sizeof(task));
	file_path(f, "tasks/task-5", stray, sizeof(stray));
	/* Files of the version before, which every task could write: gone. */
	write_file(region, "old", 3);
	write_file(sched, "old", 3);
	assert_int_equal(gp_region_prepare(f->dir, MANAGED, 0), -EINVAL);
	assert_int_equal(gp_region_prepare(f->dir, "../up", GiB), -EINVAL);
	r = managed_open(f);
	assert_true(gp_region_is_managed_in(f->dir, MANAGED));
	assert_mode(f->dir, 0755, (gid_t)-1);
	assert_mode(table, 0644, (gid_t)-1);
	assert_int_equal(access(region, F_OK), -1);
	assert_int_equal(access(sched, F_OK), -1);
	assert_int_equal(gp_region_total(r), 16 * GiB);
	/* A task's file: its user's, readable by all, written by it alone;
	 * with no user known, the task group's. */
	assert_int_equal(gp_region_task_admit(r, "kept", SECRET, &l, &owner), 0);
	assert_mode(task, 0644, getgid());
	assert_int_equal(gp_region_task_forget(r, "kept"), 0);
	assert_int_equal(access(task, F_OK), -1);
	assert_int_equal(gp_region_task_admit(r, "kept", SECRET, &l, NULL), 0);
	assert_mode(task, 0660, (gid_t)-1);
	gp_region_close(r);

	/* Again, with the modes spoilt and a task file of no task: the modes
	 * come back, the stray goes, the table and its task's file stay. */
	assert_int_equal(chmod(f->dir, 0777), 0);
	write_file(stray, "stray", 5);
	r = managed_open(f);
	assert_mode(f->dir, 0755, (gid_t)-1);
	assert_int_equal(access(stray, F_OK), -1);
	assert_int_equal(access(task, F_OK), 0);
	assert_int_equal(gp_region_tasks(r, info, 2), 1);
	assert_string_equal(info[0].id, "kept");
	assert_true(info[0].managed);
	assert_int_equal(info[0].processes, 0);
	gp_region_close(r);

	/* A table that others may write proves nothing: refused, made anew. */
	assert_int_equal(chmod(table, 0664), 0);
	assert_int_equal(gp_region_open(f->dir, MANAGED, 0, &r), -EPERM);
	r = managed_open(f);
	assert_mode(table, 0644, (gid_t)-1);
	assert_int_equal(gp_region_tasks(r, info, 2), 0);
	assert_int_equal(access(task, F_OK), -1);
	assert_int_equal(gp_region_task_admit(r, "kept", SECRET, &l, NULL), 0);
	gp_region_close(r);

	/* A table that is not one (another version, a link) is made anew. */
	snprintf(other, sizeof(other), "%s/elsewhere", f->dir);
	write_file(other, "precious", 8);
	assert_int_equal(unlink(table), 0);
	assert_int_equal(symlink(other, table), 0);
	assert_int_equal(gp_region_open(f->dir, MANAGED, 0, &r), -EPROTO);
	r = managed_open(f);
	assert_mode(table, 0644, (gid_t)-1);
	assert_mode(other, 0644, (gid_t)-1);
	assert_int_equal(gp_region_tasks(r, info, 2), 0);
	gp_region_close(r);
	assert_int_equal(unlink(table), 0);
	write_file(table, "not a table at all, but long enough to be mapped as one", 56);
	assert_int_equal(gp_region_open(f->dir, MANAGED, 0, &r), -EPROTO);
	r = managed_open(f);
	gp_region_close(r);
}

static void managed_join_takes_the_tables_limits(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits table = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits env = limits(8 * GiB, 100, 9, GP_ISOLATION_SHARED);
	struct gp_region *r = managed_open(f);
	struct gp_task_limits got;
	struct gp_task_info info[1];
	int slot = -1, again = -1;

	assert_int_equal(gp_region_task_admit(r, "task-x", SECRET, &table, NULL), 0);
	/* What the process asks for (its environment) is ignored. */
	assert_int_equal(gp_region_join_as(r, "task-x", SECRET, &env, &slot), 0);
	assert_int_equal(gp_region_limits(r, slot, &got), 0);
	assert_limits_equal(got, table);
	assert_int_equal(gp_region_join_as(r, "task-x", SECRET, NULL, &again), 0);
	assert_int_equal(again, slot);
	assert_int_equal(gp_region_mem_reserve(r, slot, 512 * MiB), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 512 * MiB), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 1), -ENOMEM);
	assert_int_equal(gp_region_tasks(r, info, 1), 1);
	assert_limits_equal(info[0].limits, table);
	assert_int_equal(info[0].mem_used, GiB);
	assert_int_equal(info[0].processes, 1);
	assert_int_equal(info[0].generation, 1);
	assert_true(info[0].managed);

	/* A limit of 0 is the whole device, the table's figure. */
	table.mem_bytes = 0;
	assert_int_equal(gp_region_set(r, "task-x", &table), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 15 * GiB), 0);
	assert_int_equal(gp_region_mem_reserve(r, slot, 1), -ENOMEM);
	gp_region_close(r);
}

static void managed_join_refuses(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_region *r = managed_open(f);
	struct gp_task_limits got = l;
	int slot = -1;

	assert_int_equal(gp_region_task_admit(r, "task-x", SECRET, &l, NULL), 0);
	assert_int_equal(gp_region_join_as(r, "task-x", OTHER_SECRET, &l, &slot), -EPERM);
	assert_int_equal(gp_region_join_as(r, "task-x", NULL, &l, &slot), -EPERM);
	assert_int_equal(gp_region_join_as(r, "task-x", "0011", &l, &slot), -EPERM);
	assert_int_equal(gp_region_join_as(r, "task-x", SECRET "zz", &l, &slot), -EPERM);
	assert_int_equal(gp_region_join(r, "task-x", &l, &slot), -EPERM);
	assert_int_equal(gp_region_join_as(r, "task-y", SECRET, &l, &slot), -ENOENT);
	assert_int_equal(gp_region_join_as(r, "task-", SECRET, &l, &slot), -ENOENT);
	assert_int_equal(slot, -1);
	assert_int_equal(gp_region_limits(r, 0, &got), -ENOENT);    /* no slot in use */
	assert_int_equal(got.compute, 0);
	assert_int_equal(gp_region_tasks(r, NULL, 0), 1);
	gp_region_close(r);
}

static void managed_admit_checks_its_input(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits big = limits(16 * GiB + 1, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits bad = limits(GiB, 0, 5, GP_ISOLATION_HARD);
	struct gp_region *r = managed_open(f);
	char secret[GP_TASK_SECRET_LEN + 1], again[GP_TASK_SECRET_LEN + 1];

	assert_int_equal(gp_region_task_admit(r, "t", "", &l, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", NULL, &l, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", "0123456789abcdef0123456789abcde", &l, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", "0123456789abcdef0123456789abcdeg", &l, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "", SECRET, &l, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", SECRET, &big, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", SECRET, &bad, NULL), -EINVAL);
	assert_int_equal(gp_region_task_admit(r, "t", SECRET, NULL, NULL), -EINVAL);
	assert_int_equal(gp_region_set(r, "t", &l), -ENOENT);
	assert_int_equal(gp_region_task_forget(r, "t"), -ENOENT);
	assert_int_equal(gp_region_tasks(r, NULL, 0), 0);
	assert_int_equal(gp_region_task_admit(r, "t", "0123456789ABCDEF0123456789abcdef", &l, NULL), 0);
	assert_int_equal(gp_region_set(r, "t", &big), -EINVAL);

	assert_int_equal(gp_task_secret_new(secret), 0);
	assert_int_equal(gp_task_secret_new(again), 0);
	assert_int_equal(strlen(secret), GP_TASK_SECRET_LEN);
	assert_true(gp_task_secret_is_valid(secret));
	assert_string_not_equal(secret, again);
	assert_false(gp_task_secret_is_valid("0123456789abcdef0123456789abcdef0"));
	gp_region_close(r);
}

/* A child joined task-x: tells the parent its slot, then for each byte
 * the parent sends, reports its limits and whether `bytes` more fit. */
struct probe {
	pid_t pid;
	int to, from;
};

struct probe_answer {
	int err;
	struct gp_task_limits limits;
	int reserve;
};

static struct probe probe_start(struct gp_region *r, const char *id, const char *secret,
				uint64_t bytes)
{
	int down[2], up[2];
	struct probe p;
	int slot;

	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	p.pid = fork();
	assert_true(p.pid >= 0);
	if (p.pid == 0) {
		struct probe_answer a = { 0 };
		char go;

		child_init();
		close(down[1]);
		close(up[0]);
		slot = -1;
		a.err = gp_region_join_as(r, id, secret, NULL, &slot);
		if (write(up[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		while (read(down[0], &go, 1) == 1) {
			a.err = gp_region_limits(r, slot, &a.limits);
			a.reserve = gp_region_mem_reserve(r, slot, bytes);
			if (a.reserve == 0)
				gp_region_mem_release(r, slot, bytes);
			if (write(up[1], &a, sizeof(a)) != sizeof(a))
				_exit(1);
		}
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	p.to = down[1];
	p.from = up[0];
	return p;
}

static struct probe_answer probe_read(struct probe *p)
{
	struct probe_answer a;

	assert_int_equal(read(p->from, &a, sizeof(a)), sizeof(a));
	return a;
}

static struct probe_answer probe_ask(struct probe *p)
{
	assert_int_equal(write(p->to, "?", 1), 1);
	return probe_read(p);
}

static void probe_stop(struct probe *p)
{
	close(p->to);
	close(p->from);
	assert_int_equal(reap(p->pid), 0);
}

static void managed_changes_apply_live(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits a = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_task_limits b = limits(2 * GiB, 70, 9, GP_ISOLATION_SHARED);
	struct gp_region *r = managed_open(f);
	struct probe_answer got;
	struct gp_task_info info[1];
	struct probe p;

	assert_int_equal(gp_region_task_admit(r, "task-x", SECRET, &a, NULL), 0);
	p = probe_start(r, "task-x", SECRET, 3 * GiB / 2);
	assert_int_equal(probe_read(&p).err, 0);
	got = probe_ask(&p);
	assert_int_equal(got.err, 0);
	assert_limits_equal(got.limits, a);
	assert_int_equal(got.reserve, -ENOMEM);

	/* Raised while it runs: its next check sees it. */
	assert_int_equal(gp_region_set(r, "task-x", &b), 0);
	got = probe_ask(&p);
	assert_limits_equal(got.limits, b);
	assert_int_equal(got.reserve, 0);
	assert_int_equal(gp_region_tasks(r, info, 1), 1);
	assert_int_equal(info[0].generation, 2);
	assert_limits_equal(info[0].limits, b);

	/* Admitted again with another secret: the running process's entry is
	 * no longer its own. */
	assert_int_equal(gp_region_task_admit(r, "task-x", OTHER_SECRET, &b, NULL), 0);
	got = probe_ask(&p);
	assert_int_equal(got.err, -EPERM);
	assert_int_equal(got.limits.compute, 0);
	assert_int_equal(got.reserve, -EPERM);
	probe_stop(&p);

	/* Forgotten: refused from then on; joining finds nothing. */
	assert_int_equal(gp_region_task_admit(r, "task-x", SECRET, &a, NULL), 0);
	p = probe_start(r, "task-x", SECRET, MiB);
	assert_int_equal(probe_read(&p).err, 0);
	assert_int_equal(probe_ask(&p).reserve, 0);
	assert_int_equal(gp_region_task_forget(r, "task-x"), 0);
	assert_int_equal(gp_region_task_forget(r, "task-x"), -ENOENT);
	got = probe_ask(&p);
	assert_int_equal(got.err, -EPERM);
	assert_int_equal(got.reserve, -EPERM);
	/* ... and a new task in its entry does not make it welcome again. */
	assert_int_equal(gp_region_task_admit(r, "task-z", SECRET, &b, NULL), 0);
	assert_int_equal(probe_ask(&p).reserve, -EPERM);
	probe_stop(&p);
	p = probe_start(r, "task-x", SECRET, MiB);
	assert_int_equal(probe_read(&p).err, -ENOENT);
	probe_stop(&p);
	gp_region_close(r);
}

static void managed_table_fills_up(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_region *r = managed_open(f);
	struct gp_task_info info[GP_REGION_TASKS];
	char id[16];

	for (int i = 0; i < GP_REGION_TASKS; i++) {
		snprintf(id, sizeof(id), "task-%d", i);
		assert_int_equal(gp_region_task_admit(r, id, SECRET, &l, NULL), 0);
	}
	assert_int_equal(gp_region_task_admit(r, "one-too-many", SECRET, &l, NULL), -ENOSPC);
	l.compute = 60;
	assert_int_equal(gp_region_task_admit(r, "task-7", OTHER_SECRET, &l, NULL), 0); /* replaces */
	assert_int_equal(gp_region_tasks(r, info, GP_REGION_TASKS), GP_REGION_TASKS);
	assert_string_equal(info[7].id, "task-7");
	assert_int_equal(info[7].limits.compute, 60);
	assert_int_equal(info[7].generation, 2);
	assert_int_equal(info[7].processes, 0);
	assert_int_equal(gp_region_task_forget(r, "task-3"), 0);
	assert_int_equal(gp_region_task_admit(r, "one-too-many", SECRET, &l, NULL), 0);
	assert_int_equal(gp_region_tasks(r, info, GP_REGION_TASKS), GP_REGION_TASKS);
	assert_string_equal(info[3].id, "one-too-many");
	assert_int_equal(info[3].generation, 1);
	gp_region_close(r);
}

/* Fills the file at path with zeros, then random bytes, over and over,
 * for `seconds` (a task spoiling its own file). */
static void vandal_run(const char *path, double seconds)
{
	double start = now_s();
	static unsigned char junk[GP_TASKFILE_SIZE];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int round = 0; now_s() - start < seconds; round++) {
		int fd = open(path, O_WRONLY);

		for (size_t i = 0; i < sizeof(junk); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			junk[i] = round % 2 ? (unsigned char)x : 0;
		}
		if (fd < 0 || pwrite(fd, junk, sizeof(junk), 0) != (ssize_t)sizeof(junk))
			_exit(1);
		close(fd);
	}
	_exit(0);
}

/* A task that writes anything into its own file harms no other task:
 * the victim's allocations within its slice all succeed, its limits read
 * true, the readers survive; the agent's check names the damaged file,
 * and it is made anew from the table. */
static void managed_damaged_file_harms_no_other_task(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits l = limits(GiB, 50, 5, GP_ISOLATION_HARD);
	struct gp_region *r = managed_open(f);
	struct gp_task_info info[2];
	struct gp_task_limits got;
	const struct gp_taskfile *old = NULL;
	char path[PATH_MAX], victim[PATH_MAX], why[256];
	uint64_t stamp;
	long allocs = 0;
	int slot, status;
	pid_t vandal;

	assert_int_equal(gp_region_task_admit(r, "vandal", SECRET, &l, NULL), 0);
	assert_int_equal(gp_region_task_admit(r, "victim", OTHER_SECRET, &l, NULL), 0);
	assert_int_equal(gp_region_join_as(r, "victim", OTHER_SECRET, NULL, &slot), 0);
	assert_int_equal(gp_region_task_check(r, "vandal", why, sizeof(why)), 0);
	file_path(f, "tasks/task-0", path, sizeof(path));
	vandal = fork();
	assert_true(vandal >= 0);
	if (vandal == 0) {
		child_init();
		vandal_run(path, 1.0);
	}
	while (waitpid(vandal, &status, WNOHANG) == 0) {
		assert_int_equal(gp_region_mem_reserve(r, slot, GiB / 2), 0);
		assert_int_equal(gp_region_mem_reserve(r, slot, GiB / 2), 0);
		assert_int_equal(gp_region_mem_reserve(r, slot, 1), -ENOMEM);
		gp_region_mem_release(r, slot, GiB);
		assert_int_equal(gp_region_limits(r, slot, &got), 0);
		assert_limits_equal(got, l);
		assert_int_equal(gp_region_tasks(r, info, 2), 2);
		assert_true(info[0].mem_used <= 16 * GiB * GP_REGION_PROCS);
		allocs++;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(allocs > 10);
	assert_int_equal(gp_region_task_check(r, "victim", why, sizeof(why)), 0);
	assert_int_equal(gp_region_task_check(r, "vandal", why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "overwritten"));
	/* Made anew: a reader that still maps the file replaced finds it no
	 * task's (its head spoilt) and opens the new one. */
	assert_int_equal(gp_taskfile_open_ro(path, MANAGED, "vandal", 0, &old), -ESTALE);
	file_path(f, "tasks/task-1", victim, sizeof(victim));
	assert_int_equal(gp_limits_secret_hash(MANAGED, "victim", OTHER_SECRET, &stamp), 0);
	assert_int_equal(gp_taskfile_open_ro(victim, MANAGED, "victim", stamp, &old), 0);
	assert_int_equal(gp_region_task_file_make(r, "victim", NULL), 0);
	assert_false(gp_taskfile_is_good(old, MANAGED, "victim", stamp));
	gp_taskfile_unmap(old);
	assert_int_equal(gp_region_task_file_make(r, "vandal", NULL), 0);
	assert_int_equal(gp_region_task_check(r, "vandal", why, sizeof(why)), 0);
	assert_int_equal(gp_region_tasks(r, info, 2), 2);
	assert_int_equal(info[0].processes, 0);
	assert_int_equal(info[1].processes, 1); /* this process, in the file it joined */
	gp_region_close(r);
}

/* A writer flips a task between two sets of limits as fast as it can for
 * a second; a reader of the table never sees a mixture. */
static void managed_readers_never_see_half_an_update(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits a = limits(GiB, 10, 1, GP_ISOLATION_HARD);
	struct gp_task_limits b = limits(2 * GiB, 90, 8, GP_ISOLATION_SHARED);
	struct gp_region *r = managed_open(f);
	struct race *race = race_new();
	long reads = 0, as = 0, bs = 0;
	int slot, status;
	pid_t writer;

	assert_int_equal(gp_region_task_admit(r, "flip", SECRET, &a, NULL), 0);
	assert_int_equal(gp_region_join_as(r, "flip", SECRET, NULL, &slot), 0);
	writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		double start = now_s();

		child_init();
		atomic_store(&race->go, 1);
		for (int i = 0; now_s() - start < 1.0; i++)
			if (gp_region_set(r, "flip", i % 2 ? &a : &b) != 0)
				_exit(1);
		_exit(0);
	}
	while (!atomic_load(&race->go))
		sched_yield();
	while (waitpid(writer, &status, WNOHANG) == 0) {
		struct gp_task_limits got;

		assert_int_equal(gp_region_limits(r, slot, &got), 0);
		if (got.mem_bytes == a.mem_bytes && got.compute == a.compute &&
		    got.priority == a.priority && got.isolation == a.isolation)
			as++;
		else if (got.mem_bytes == b.mem_bytes && got.compute == b.compute &&
			 got.priority == b.priority && got.isolation == b.isolation)
			bs++;
		else
			fail_msg("read %d: a mixture: %llu bytes, %u%%, priority %u, isolation %d",
				 (int)reads, (unsigned long long)got.mem_bytes, got.compute,
				 got.priority, got.isolation);
		reads++;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(as > 0 && bs > 0);
	munmap(race, sizeof(*race));
	gp_region_close(r);
}

/* As root: a process of a task's user joins and uses the device, and can
 * change no limits, nor write another task's file. */
static void managed_table_is_read_only_for_tasks(void **state)
{
	struct fixture *f = *state;
	const uid_t nobody = 65534;
	const gid_t nogroup = 65534;
	struct gp_task_limits l = limits(GiB, 30, 5, GP_ISOLATION_HARD);
	struct gp_region *r;
	char table[PATH_MAX], neighbour[PATH_MAX];
	pid_t pid;

	if (geteuid() != 0)
		skip();         /* cmocka says so: it needs root to change users */
	r = managed_open(f);
	assert_int_equal(gp_region_task_admit(r, "task-x", SECRET, &l,
					      &(struct gp_task_owner){ nobody, nogroup }), 0);
	assert_int_equal(gp_region_task_admit(r, "task-n", OTHER_SECRET, &l,
					      &(struct gp_task_owner){ nobody - 1, nogroup }), 0);
	file_path(f, "limits", table, sizeof(table));
	file_path(f, "tasks/task-1", neighbour, sizeof(neighbour));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gp_region *mine = NULL;
		int slot = -1, fd;

		child_init();
		if (setgroups(0, NULL) < 0 || setgid(nogroup) < 0 || setuid(nobody) < 0)
			_exit(1);
		fd = open(table, O_RDWR);
		if (fd >= 0 || errno != EACCES)
			_exit(2);
		fd = open(neighbour, O_RDWR); /* another task's turns and memory */
		if (fd >= 0 || errno != EACCES)
			_exit(6);
		/* As the interposer opens it: with the device's size. */
		if (gp_region_open(f->dir, MANAGED, 16 * GiB, &mine) != 0 ||
		    !gp_region_is_managed(mine))
			_exit(3);
		if (gp_region_set(mine, "task-x", &l) != -EACCES ||
		    gp_region_task_admit(mine, "task-y", SECRET, &l, NULL) != -EACCES ||
		    gp_region_task_forget(mine, "task-x") != -EACCES)
			_exit(4);
		if (gp_region_join_as(mine, "task-x", SECRET, NULL, &slot) != 0 ||
		    gp_region_mem_reserve(mine, slot, GiB) != 0 ||
		    gp_region_mem_reserve(mine, slot, 1) != -ENOMEM)
			_exit(5);
		_exit(0);
	}
	assert_int_equal(reap(pid), 0);
	gp_region_close(r);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(open_creates_and_reopens),
		TEST(bad_files_are_replaced),
		TEST(join_creates_task_and_keeps_limits),
		TEST(join_rejects_bad_input),
		TEST(forked_child_gets_its_own_slot),
		TEST(reserve_stops_at_the_limit),
		TEST(limit_zero_is_the_whole_device),
		TEST(set_changes_limits_live),
		TEST(tasks_report_use_and_processes),
		TEST(task_table_fills_up),
		TEST(slot_table_fills_up_and_is_reclaimed),
		TEST(racers_never_pass_the_limit),
		TEST(killed_process_memory_is_reclaimed),
		TEST(killed_racers_block_no_one),
		TEST(prepare_makes_the_files),
		TEST(managed_join_takes_the_tables_limits),
		TEST(managed_join_refuses),
		TEST(managed_admit_checks_its_input),
		TEST(managed_changes_apply_live),
		TEST(managed_table_fills_up),
		TEST(managed_damaged_file_harms_no_other_task),
		TEST(managed_readers_never_see_half_an_update),
		TEST(managed_table_is_read_only_for_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
