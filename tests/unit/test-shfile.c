/* test-shfile.c — shared, versioned, mapped files and their pid slot table
 * (src/base/shfile.c): a file is made once with its exact mode and found
 * complete by later openers; one half made, of another layout or for
 * another device is refused, or replaced when the opener may make it; a
 * link is never followed to make one; a slot changes hands by one
 * compare-and-swap, the dead's are given back, a live owner's never.
 *
 * Each test has its own directory (mkdtemp) and an alarm. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/pshared.h"
#include "base/shfile.h"

#define TEST_ALARM_S 20
#define SLOTS 4

struct tslot {
	struct gp_shfile_slot id;
	_Atomic uint64_t value;
};

/* The layout under test: a device name, a mutex, a slot table. */
struct tfile {
	struct gp_shfile_head head;
	char name[32];
	pthread_mutex_t lock;
	struct tslot slot[SLOTS];
};

struct fixture {
	char dir[64];
	char path[128];
};

static int init_calls;

static int tfile_init(void *map, const void *arg)
{
	struct tfile *t = map;

	init_calls++;
	snprintf(t->name, sizeof(t->name), "%s", (const char *)arg);
	return gp_pshared_mutex_init(&t->lock);
}

static int failing_init(void *map, const void *arg)
{
	(void)map;
	(void)arg;
	return -ENOMEM;
}

static bool tfile_matches(const void *map, const void *arg)
{
	return strcmp(((const struct tfile *)map)->name, arg) == 0;
}

static struct gp_shfile_layout layout(const char *name)
{
	return (struct gp_shfile_layout){
		0x7473657474736574ULL, 3, sizeof(struct tfile), 0640, tfile_init, tfile_matches, name,
	};
}

static int setup(void **state)
{
	static struct fixture f;

	alarm(TEST_ALARM_S);
	snprintf(f.dir, sizeof(f.dir), "/tmp/gp-shfile-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	snprintf(f.path, sizeof(f.path), "%s/test.shm", f.dir);
	init_calls = 0;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree(f->dir);
	alarm(0);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

/* ---- the file -------------------------------------------------------- */

static void made_once_then_found(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a");
	struct tfile *t = NULL, *again = NULL;
	struct stat st;
	mode_t old = umask(077);

	/* Missing, and not to be made: nothing is made. */
	assert_int_equal(gp_shfile_open(f->path, &l, 0, (void **)&t), -ENOENT);
	assert_null(t);
	assert_int_equal(access(f->path, F_OK), -1);
	/* Made, with exactly the layout's mode whatever the umask. */
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	umask(old);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_size, sizeof(struct tfile));
	assert_true(gp_shfile_is(t, &l));
	assert_int_equal(t->head.version, 3);
	assert_int_equal(t->head.size, sizeof(struct tfile));
	assert_string_equal(t->name, "gpu-a");
	/* Found again, by an opener that could make it and one that could not. */
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&again), 0);
	assert_int_equal(init_calls, 1);
	atomic_store(&t->slot[0].value, 42);
	assert_int_equal(atomic_load(&again->slot[0].value), 42);
	gp_shfile_unmap(again, &l);
	assert_int_equal(gp_shfile_open(f->path, &l, 0, (void **)&again), 0);
	assert_int_equal(atomic_load(&again->slot[0].value), 42);
	gp_shfile_unmap(again, &l);
	gp_shfile_unmap(t, &l);
	gp_shfile_unmap(NULL, &l);
}

static void other_layouts_are_refused_or_replaced(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a"), older = l, other = layout("gpu-b");
	struct tfile *t = NULL;

	/* Another version of the layout. */
	older.version = 2;
	assert_int_equal(gp_shfile_open(f->path, &older, GP_SHFILE_CREATE, (void **)&t), 0);
	gp_shfile_unmap(t, &older);
	assert_int_equal(gp_shfile_open(f->path, &l, 0, (void **)&t), -EPROTO);
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	assert_int_equal(t->head.version, 3);
	gp_shfile_unmap(t, &l);
	/* Another device's: the layout matches, the file does not. */
	assert_int_equal(gp_shfile_open(f->path, &other, 0, (void **)&t), -EPROTO);
	assert_int_equal(gp_shfile_open(f->path, &other, GP_SHFILE_CREATE, (void **)&t), 0);
	assert_string_equal(t->name, "gpu-b");
	gp_shfile_unmap(t, &other);
	/* Another file altogether: shorter than its head says. */
	write_file(f->path, &(uint64_t[2]){ l.magic, 3 | (uint64_t)sizeof(struct tfile) << 32 }, 16);
	assert_int_equal(gp_shfile_open(f->path, &l, 0, (void **)&t), -EPROTO);
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	gp_shfile_unmap(t, &l);
}

/* A maker that died before the magic: the file stays half made, and is
 * taken for that after GP_SHFILE_READY_WAIT_NS. */
static void half_made_files_are_replaced(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a");
	char zeros[sizeof(struct tfile)] = { 0 };
	struct tfile *t = NULL;
	double start;

	write_file(f->path, "", 0);                     /* died before its size */
	start = now_s();
	assert_int_equal(gp_shfile_open(f->path, &l, 0, (void **)&t), -EIO);
	assert_true(now_s() - start >= 1.9);
	start = now_s();
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	assert_true(now_s() - start >= 1.9 && now_s() - start < 6.0);
	gp_shfile_unmap(t, &l);

	write_file(f->path, zeros, sizeof(zeros));      /* died before its magic */
	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	assert_true(gp_shfile_is(t, &l));
	gp_shfile_unmap(t, &l);
}

static void making_never_follows_a_link_nor_leaves_a_half(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a"), failing = l;
	char target[160];
	struct tfile *t = NULL;

	snprintf(target, sizeof(target), "%s/target", f->dir);
	write_file(target, "mine", 4);
	assert_int_equal(symlink(target, f->path), 0);
	assert_int_equal(gp_shfile_make(f->path, &l, (void **)&t), -EEXIST);
	assert_null(t);
	assert_int_equal(unlink(f->path), 0);
	failing.init = failing_init;
	assert_int_equal(gp_shfile_make(f->path, &failing, (void **)&t), -ENOMEM);
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(gp_shfile_make(f->path, &l, (void **)&t), 0);
	assert_int_equal(gp_shfile_make(f->path, &l, (void **)&t), -EEXIST);
	gp_shfile_unmap(t, &l);
}

/* ---- the pid slot table ---------------------------------------------- */

static void fill(void *slot, void *arg)
{
	atomic_store(&((struct tslot *)slot)->value, *(uint64_t *)arg);
}

static struct gp_shfile_slots slots_of(struct tfile *t)
{
	return (struct gp_shfile_slots){ t->slot, sizeof(t->slot[0]), SLOTS };
}

static uint64_t claims(const struct tslot *s)
{
	return atomic_load(&s->id.owner) >> 32;
}

/* A child that claims slot `at` (-1: any) and then exits or waits. */
static pid_t child_claims(struct tfile *t, int at, bool stay)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct gp_shfile_slots table = slots_of(t);
		uint64_t value = 7, start = gp_proc_start_time(getpid());
		int i;

		pthread_mutex_lock(&t->lock);
		i = at < 0 ? gp_shfile_slot_claim(&table, getpid(), start, fill, &value)
			   : gp_shfile_slot_claim_at(&table, at, getpid(), start, fill, &value);
		pthread_mutex_unlock(&t->lock);
		if (i < 0)
			_exit(1);
		while (stay)
			pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid, int want)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), want);
}

static void slots_change_hands_by_one_swap(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a");
	uint64_t value = 5, start = gp_proc_start_time(getpid());
	struct gp_shfile_slots table;
	struct tfile *t = NULL;
	pid_t pid;
	int mine;

	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	table = slots_of(t);
	mine = gp_shfile_slot_claim(&table, getpid(), start, fill, &value);
	assert_int_equal(mine, 0);
	assert_int_equal(gp_shfile_slot_pid(&t->slot[0].id), getpid());
	assert_true(gp_shfile_slot_is_alive(&t->slot[0].id));
	assert_int_equal(atomic_load(&t->slot[0].value), 5);
	assert_int_equal(gp_shfile_slot_find(&table, getpid(), start), 0);
	assert_int_equal(gp_shfile_slot_find(&table, getpid(), start + 1), -1);
	/* A process that dies in its slot: given back by one reclaim, the
	 * claim count kept; the next claim counts one more. */
	pid = child_claims(t, -1, false);
	reap(pid, 0);
	assert_int_equal(gp_shfile_slot_pid(&t->slot[1].id), pid);
	assert_false(gp_shfile_slot_is_alive(&t->slot[1].id));
	assert_int_equal(claims(&t->slot[1]), 1);
	assert_int_equal(gp_shfile_slot_reclaim(&table, getpid()), 1);
	assert_int_equal(gp_shfile_slot_pid(&t->slot[1].id), 0);
	assert_int_equal(claims(&t->slot[1]), 1);
	assert_int_equal(gp_shfile_slot_reclaim(&table, 0), 0);       /* the living stay */
	assert_int_equal(gp_shfile_slot_claim(&table, getpid(), start, fill, &value), 1);
	assert_int_equal(claims(&t->slot[1]), 2);
	/* Full: none for the next claimer. */
	assert_int_equal(gp_shfile_slot_claim(&table, getpid(), start, fill, &value), 2);
	assert_int_equal(gp_shfile_slot_claim(&table, getpid(), start, fill, &value), 3);
	assert_int_equal(gp_shfile_slot_claim(&table, getpid(), start, fill, &value), -EUSERS);
	gp_shfile_unmap(t, &l);
}

static void a_slot_claimed_at_is_taken_from_the_dead_only(void **state)
{
	struct fixture *f = *state;
	struct gp_shfile_layout l = layout("gpu-a");
	uint64_t value = 9, start = gp_proc_start_time(getpid());
	struct gp_shfile_slots table;
	struct tfile *t = NULL;
	pid_t alive, dead;

	assert_int_equal(gp_shfile_open(f->path, &l, GP_SHFILE_CREATE, (void **)&t), 0);
	table = slots_of(t);
	alive = child_claims(t, 2, true);
	while (gp_shfile_slot_pid(&t->slot[2].id) != alive)
		usleep(1000);
	assert_int_equal(gp_shfile_slot_claim_at(&table, 2, getpid(), start, fill, &value), -EBUSY);
	kill(alive, SIGKILL);
	assert_int_equal(waitpid(alive, NULL, 0), alive);
	assert_int_equal(gp_shfile_slot_claim_at(&table, 2, getpid(), start, fill, &value), 2);
	assert_int_equal(gp_shfile_slot_pid(&t->slot[2].id), getpid());
	assert_int_equal(atomic_load(&t->slot[2].value), 9);
	assert_int_equal(claims(&t->slot[2]), 2);
	/* Ours already: filled afresh, the same claim. */
	value = 10;
	assert_int_equal(gp_shfile_slot_claim_at(&table, 2, getpid(), start, fill, &value), 2);
	assert_int_equal(atomic_load(&t->slot[2].value), 10);
	assert_int_equal(claims(&t->slot[2]), 2);
	/* A free slot, and one a dead process left. */
	assert_int_equal(gp_shfile_slot_claim_at(&table, 3, getpid(), start, NULL, NULL), 3);
	dead = child_claims(t, 0, false);
	reap(dead, 0);
	assert_int_equal(gp_shfile_slot_claim_at(&table, 0, getpid(), start, fill, &value), 0);
	gp_shfile_unmap(t, &l);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(made_once_then_found),
		TEST(other_layouts_are_refused_or_replaced),
		TEST(half_made_files_are_replaced),
		TEST(making_never_follows_a_link_nor_leaves_a_half),
		TEST(slots_change_hands_by_one_swap),
		TEST(a_slot_claimed_at_is_taken_from_the_dead_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
