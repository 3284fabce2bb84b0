/* test-arbiter.c — the compute arbiter's turns (src/shim/arbiter.c), in
 * one process: turn lengths follow the share, a live change of the share
 * applies at the next turn, a hard share is a cap even alone, eight
 * threads launching at once share the process's turns (each turn is
 * charged once), a .sched file left half made is replaced, and time a
 * holder spends idle is not charged to it. An alarm fails a run that
 * hangs. */
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/proc.h"
#include "shim/arbiter.h"
#include "shim/taskfile.h"
#include "shim/region.h"

#define MS 1000000ULL
#define TEST_ALARM_S 30

struct fixture {
	char dir[64];
	struct gp_region *region;
	struct gp_arbiter *arbiter;
};

static int setup(void **state)
{
	static struct fixture f;
	struct gp_task_limits limits = { .compute = 80, .priority = 5 };
	int slot;

	alarm(TEST_ALARM_S);
	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-arbiter-XXXXXX");
	if (!mkdtemp(f.dir) || gp_region_open(f.dir, "GPU-test", 1 << 30, &f.region) < 0 ||
	    gp_region_join(f.region, "t", &limits, &slot) < 0 ||
	    gp_arbiter_open(f.region, slot, 50, &f.arbiter) < 0)
		return -1;
	*state = &f;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Launches (without work) until the turn held now has ended and a new
 * one started (the time held grows at every turn's end); returns the new
 * turn's length. */
static uint64_t next_turn(struct gp_arbiter *a)
{
	uint64_t used = gp_arbiter_used_ns(a);

	do
		gp_arbiter_before_launch(a, NULL, NULL);
	while (gp_arbiter_used_ns(a) == used);
	return gp_arbiter_turn_ns(a);
}

static void turns_follow_the_share_and_its_live_changes(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits now = { .compute = 20, .priority = 5 };
	/* Taken before the turn starts: a busy host may pause the test
	 * between the launch and the change, and the turn's end is counted
	 * from its start. */
	uint64_t start = now_ns();

	gp_arbiter_before_launch(f->arbiter, NULL, NULL);
	assert_int_equal(gp_arbiter_turn_ns(f->arbiter), 40 * MS);     /* 80 % of 50 ms */
	assert_int_equal(gp_region_set(f->region, "t", &now), 0);
	/* The turn in progress keeps its length; the next one is 20 % of the
	 * slice. */
	assert_int_equal(next_turn(f->arbiter), 10 * MS);
	assert_true(now_ns() - start >= 40 * MS);
}

static void a_hard_share_is_a_cap_alone(void **state)
{
	struct fixture *f = *state;
	uint64_t start, took, turns = 0, used, elapsed;

	/* 20 %: turns of 10 ms, with 40 ms of waiting after each on average,
	 * once the bucket has spent what it held (up to two slices, left by
	 * the tests before): until a turn has to wait for it. */
	do {
		took = now_ns();
		next_turn(f->arbiter);
		took = now_ns() - took;
	} while (took < 20 * MS);
	start = now_ns();
	used = gp_arbiter_used_ns(f->arbiter);
	while (now_ns() - start < 500 * MS) {
		next_turn(f->arbiter);
		turns++;
	}
	/* 500 ms at 20 % in 10 ms turns: about 10 (fewer on a busy host,
	 * where a turn's launches come late and it is charged for them); the
	 * device time charged is 20 % of the time that passed, within about
	 * two turns either way. */
	elapsed = now_ns() - start;
	used = gp_arbiter_used_ns(f->arbiter) - used;
	assert_in_range(turns, 5, 12);
	assert_in_range(used / MS, elapsed / 5 / MS - 20, elapsed / 5 / MS + 20);
}

/* ---- threads ----------------------------------------------------------- */

#define THREADS 8
#define THREADS_RUN_NS (600 * MS)

struct launcher {
	struct gp_arbiter *arbiter;
	pthread_barrier_t *start;
	uint64_t until;
	unsigned long launches;
};

/* A thread of the program: launches (without work) until `until`,
 * sometimes waiting for "its work" as a program synchronizing would. */
static void *launcher_main(void *arg)
{
	struct launcher *l = arg;

	pthread_barrier_wait(l->start);
	while (now_ns() < l->until) {
		gp_arbiter_before_launch(l->arbiter, NULL, NULL);
		l->launches++;
		if (l->launches % 64 == 0)
			gp_arbiter_idle(l->arbiter);
		if (gp_arbiter_wanted(l->arbiter))
			gp_arbiter_yield(l->arbiter);
	}
	return NULL;
}

/* Eight threads of one process launch at once for 600 ms at a hard 50 %
 * share: every turn is charged once, so the device time the process is
 * charged is about half the time that passed, never more than all of it. */
static void threads_share_the_process_turns(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits half = { .compute = 50, .priority = 5 };
	struct launcher l[THREADS];
	pthread_t thread[THREADS];
	pthread_barrier_t start;
	uint64_t used, begin, elapsed;

	assert_int_equal(gp_region_set(f->region, "t", &half), 0);
	next_turn(f->arbiter);          /* a turn at 50 % */
	assert_int_equal(pthread_barrier_init(&start, NULL, THREADS + 1), 0);
	begin = now_ns();
	for (int i = 0; i < THREADS; i++) {
		l[i] = (struct launcher){ f->arbiter, &start, begin + THREADS_RUN_NS, 0 };
		assert_int_equal(pthread_create(&thread[i], NULL, launcher_main, &l[i]), 0);
	}
	used = gp_arbiter_used_ns(f->arbiter);
	pthread_barrier_wait(&start);
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(thread[i], NULL), 0);
		assert_true(l[i].launches > 0);
	}
	next_turn(f->arbiter);          /* the last turn is charged */
	elapsed = now_ns() - begin;
	used = gp_arbiter_used_ns(f->arbiter) - used;
	pthread_barrier_destroy(&start);
	print_message("charged %llu ms of %llu ms\n", (unsigned long long)(used / MS),
		      (unsigned long long)(elapsed / MS));
	/* 50 % of 600 ms, plus at most the turns' worth of the bucket (two
	 * slices) and the turn that ends it: well under all the time. */
	assert_true(used <= elapsed);
	assert_in_range(used / MS, 150, 450);
}

/* ---- the file ------------------------------------------------------------ */

/* A task file its maker left empty (killed before it set the size) is
 * replaced once the maker's time is up, never mapped past its end. */
static void a_half_made_file_is_replaced(void **state)
{
	static struct gp_region *region;
	static struct gp_arbiter *arbiter;
	struct fixture *f = *state;
	struct gp_task_limits limits = { .compute = 50, .priority = 5 };
	char path[128];
	uint64_t start;
	int slot, fd;

	snprintf(path, sizeof(path), "%s/device-GPU-half.tasks", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/device-GPU-half.tasks/task-0", f->dir);
	start = now_ns();       /* the maker's time runs from the file's making */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gp_region_open(f->dir, "GPU-half", 1 << 30, &region), 0);
	assert_int_equal(gp_region_join(region, "t", &limits, &slot), 0);
	assert_int_equal(gp_arbiter_open(region, slot, 50, &arbiter), 0);
	assert_true(now_ns() - start >= 1900 * MS);
	gp_arbiter_before_launch(arbiter, NULL, NULL);
	assert_int_equal(gp_arbiter_turn_ns(arbiter), 25 * MS);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	nanosleep(&ts, NULL);
}

/* A service at 20 %, hard, that works 0.2 ms in every 10 ms (2 % of the
 * device) and waits for its work in between: charged only while busy, it
 * is never held back by its cap. (Charged for the time it held the
 * device idle too, it would use up its 20 % and wait about 40 ms for
 * every 10 ms turn.) What it is charged is bounded by the busy time it
 * measured itself (from a launch to the wait that ends it, however long
 * a busy host makes the 0.2 ms), not by a fixed guess of it. */
static void idle_time_is_not_charged(void **state)
{
	struct fixture *f = *state;
	struct gp_task_limits fifth = { .compute = 20, .priority = 5 };
	uint64_t start, used, longest = 0, busy = 0, charged;

	assert_int_equal(gp_region_set(f->region, "t", &fifth), 0);
	next_turn(f->arbiter);          /* a turn at 20 % */
	gp_arbiter_idle(f->arbiter);
	start = now_ns();
	used = gp_arbiter_used_ns(f->arbiter);
	while (now_ns() - start < 500 * MS) {
		uint64_t before = now_ns(), began;

		gp_arbiter_before_launch(f->arbiter, NULL, NULL);
		began = now_ns();
		if (began - before > longest)
			longest = began - before;
		sleep_ns(MS / 5);
		gp_arbiter_idle(f->arbiter);
		busy += now_ns() - began;
		sleep_ns(10 * MS - MS / 5);
	}
	next_turn(f->arbiter);          /* the last turn is charged */
	charged = gp_arbiter_used_ns(f->arbiter) - used;
	print_message("charged %llu us, busy %llu us\n", (unsigned long long)(charged / 1000),
		      (unsigned long long)(busy / 1000));
	assert_in_range(longest / MS, 0, 19);
	/* Its busy stretches and each turn's taking (a look at every slot's
	 * owner): on a quiet host about 25 ms, where charging the turns whole
	 * would reach the 100 ms its share allows in 500 ms. */
	assert_true(charged <= 2 * busy + 10 * MS);
}

/* ---- a neighbour that spoils its own file ------------------------------------ */

#define FUZZ_NS (1500 * MS)

/* A child process: joins task `id` at `share` % (shared: it would take all
 * of an idle device) on f's device and
 * takes turns (launches without work) for FUZZ_NS; writes the device time
 * it was charged and the time that passed to fd. */
static void honest_main(const char *dir, const char *id, unsigned share, int fd)
{
	struct gp_task_limits l = { .compute = share, .priority = 5,
				    .isolation = GP_ISOLATION_SHARED };
	struct gp_region *r;
	struct gp_arbiter *a;
	uint64_t start, out[2];
	int slot;

	if (gp_region_open(dir, "GPU-fuzz", 1 << 30, &r) < 0 || gp_region_join(r, id, &l, &slot) < 0 ||
	    gp_arbiter_open(r, slot, 50, &a) < 0)
		_exit(1);
	start = now_ns();
	while (now_ns() - start < FUZZ_NS)
		gp_arbiter_before_launch(a, NULL, NULL);
	gp_arbiter_before_launch(a, NULL, NULL);
	out[0] = gp_arbiter_used_ns(a);
	out[1] = now_ns() - start;
	_exit(write(fd, out, sizeof(out)) == sizeof(out) ? 0 : 1);
}

/* Every slot of tf claims, as a live process (the vandal's own pid and
 * start time), to hold the device for 10 s, to be taking it, or to have
 * waited since the boot (by turns), with the least device time — under
 * the file's true head (`head`, its first bytes as the task got it), so
 * that readers take it for the task's. */
static void claims_craft(struct gp_taskfile *tf, const void *head, int round)
{
	static const uint32_t states[] = { GP_TURN_HOLDING, GP_TURN_TAKING, GP_TURN_WAITING };
	uint64_t start = gp_proc_start_time(getpid());

	memcpy((void *)tf, head, offsetof(struct gp_taskfile, slots_hi));
	atomic_store(&tf->slots_hi, GP_TASK_PROCS);
	atomic_store(&tf->vtime, 0);
	atomic_store(&tf->budget_ns, INT64_MAX / 4);
	for (int i = 0; i < GP_TASK_PROCS; i++) {
		struct gp_taskfile_slot *s = &tf->slot[i];

		atomic_store(&s->id.start_time, start);
		atomic_store(&s->id.owner, (uint64_t)(uint32_t)getpid());
		atomic_store(&s->state, states[(round + i) % 3]);
		atomic_store(&s->until_ns, now_ns() + 10000 * MS);
		atomic_store(&s->since_ns, 1);
		atomic_store(&s->idle, 0);
		atomic_store(&s->interactive, 1);
		atomic_fetch_add(&s->turns, 1);
	}
}

/* A child process: joins task "vandal" (priority 9), then by turns writes
 * zeros, random bytes and crafted claims (above) over its own task file,
 * until killed. */
static void vandal_main(const char *dir)
{
	struct gp_task_limits l = { .compute = 50, .priority = 9 };
	static unsigned char junk[1 << 16], head[offsetof(struct gp_taskfile, slots_hi)];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	struct gp_taskfile *tf;
	struct gp_region *r;
	char path[256];
	int slot, task, fd;

	if (gp_region_open(dir, "GPU-fuzz", 1 << 30, &r) < 0 ||
	    gp_region_join(r, "vandal", &l, &slot) < 0 || !(tf = gp_region_mine(r, &task)))
		_exit(1);
	memcpy(head, (void *)tf, sizeof(head));
	snprintf(path, sizeof(path), "%s/device-GPU-fuzz.tasks/task-%d", dir, task);
	for (int round = 0;; round++) {
		if (round % 3 == 2) {
			claims_craft(tf, head, round);
			usleep(1000);
			continue;
		}
		for (size_t i = 0; i < sizeof(junk); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			junk[i] = round % 3 ? (unsigned char)x : 0;
		}
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			if (pwrite(fd, junk, sizeof(junk), 0) < 0)
				_exit(2);
			close(fd);
		}
		usleep(1000);
	}
}

/* Two honest tasks at 50 % each, shared, beside a third that spoils its
 * own file all the while — zeros, random bytes, claims crafted to look
 * true: neither waits forever, and they take turns, not the device at
 * once (together they are charged no more than the time that passed; each
 * at least a third of it on a busy host: the vandal may take turns it is
 * not owed, as any task that bypasses the interposer can, but it stops
 * nobody). */
static void a_spoilt_file_stops_nobody(void **state)
{
	struct fixture *f = *state;
	uint64_t got[2][2];
	pid_t honest[2], vandal;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	vandal = fork();
	if (vandal == 0)
		vandal_main(f->dir);
	usleep(100000);
	for (int i = 0; i < 2; i++) {
		honest[i] = fork();
		if (honest[i] == 0)
			honest_main(f->dir, i ? "b" : "a", 50, fds[1]);
	}
	for (int i = 0; i < 2; i++) {
		int status;

		assert_int_equal(waitpid(honest[i], &status, 0), honest[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(read(fds[0], got[i], sizeof(got[i])), sizeof(got[i]));
	}
	kill(vandal, SIGKILL);
	waitpid(vandal, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	for (int i = 0; i < 2; i++) {
		print_message("honest %d: charged %llu ms in %llu ms\n", i,
			      (unsigned long long)(got[i][0] / MS), (unsigned long long)(got[i][1] / MS));
		assert_true(got[i][0] * 100 >= got[i][1] * 33);
	}
	assert_true(got[0][0] + got[1][0] <= (got[0][1] > got[1][1] ? got[0][1] : got[1][1]) + 60 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(turns_follow_the_share_and_its_live_changes),
		cmocka_unit_test(a_hard_share_is_a_cap_alone),
		cmocka_unit_test(threads_share_the_process_turns),
		cmocka_unit_test(a_half_made_file_is_replaced),
		cmocka_unit_test(idle_time_is_not_charged),
		cmocka_unit_test(a_spoilt_file_stops_nobody),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
